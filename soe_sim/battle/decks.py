"""Default combat-modifier compositions of the two decks, read from ``data/cards/<side>.csv``."""
from __future__ import annotations

import csv
from collections import Counter
from functools import lru_cache
from pathlib import Path

from soe_sim._paths import data_dir
from soe_sim.battle.spec import SIDES, Deck
from soe_sim.errors import Problem, SoeInputError


def _rows(path: Path):
    with open(path, newline="", encoding="utf-8") as fh:
        lines = [line for line in fh if not line.lstrip().startswith("#")]
    return list(csv.DictReader(lines))


@lru_cache(maxsize=8)
def _deck_from_file(path_str: str) -> Deck:
    path = Path(path_str)
    if not path.exists():
        raise SoeInputError(Problem(str(path), "", "", str(path), "card file not found"))
    counts: Counter[int] = Counter()
    for i, row in enumerate(_rows(path), start=1):
        raw = row.get("combat_modifier")
        try:
            counts[int(raw)] += 1
        except (TypeError, ValueError):
            raise SoeInputError(
                Problem(str(path), f"card {row.get('id', i)}", "combat_modifier", raw,
                        "must be an integer")
            ) from None
    return Deck.from_mapping(counts, str(path))


def default_deck(side: str) -> Deck:
    """Combat-modifier composition of ``side``'s full deck (SoE 7.41.2 draws from it)."""
    if side not in SIDES:
        raise SoeInputError(Problem("deck", "", "side", side, "expected `polish` or `soviet`"))
    return _deck_from_file(str(data_dir() / "cards" / f"{side}.csv"))
