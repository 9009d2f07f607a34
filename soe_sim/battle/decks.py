"""Decks as the battle model sees them: combat-modifier compositions and battle cards, read
through :func:`soe_sim.data.load_cards` from ``data/cards/<side>.csv``."""
from __future__ import annotations

from collections import Counter
from functools import lru_cache

from soe_sim._paths import data_files_stamp
from soe_sim.battle.spec import SIDES, BattleCard, Deck
from soe_sim.data import load_cards
from soe_sim.errors import Problem, SoeInputError, did_you_mean


def _check_side(side: str) -> None:
    if side not in SIDES:
        raise SoeInputError(Problem("deck", "", "side", side, "expected `polish` or `soviet`"))


def default_deck(side: str) -> Deck:
    """Combat-modifier composition of ``side``'s full deck (SoE 7.41.2 draws from it), read again when
    a deck or rules file of the data directory (``$SOE_SIM_DATA`` or the built-in data) has changed."""
    _check_side(side)
    return _default_deck(side, data_files_stamp("cards", "rules"))


@lru_cache(maxsize=8)
def _default_deck(side: str, key: tuple) -> Deck:
    # keyed on the data root and the stamps of its deck and rules files (cards.deck_size checks the deck)
    cards = load_cards(side)
    return Deck.from_mapping(Counter(int(v) for v in cards["combat_modifier"]), f"data/cards/{side}.csv")


def battle_card(side: str, id_or_name: str | int, option: str = "--battle-card") -> BattleCard:
    """A battle card of ``side``'s deck (SoE 7.41.1) by card id or name (case-insensitive)."""
    _check_side(side)
    cards = load_cards(side)
    battle = cards[cards["event_kind"] == "battle"]
    wanted = str(id_or_name).strip().lower()
    for row in battle.itertuples():
        if wanted in (str(row.id), row.name.strip().lower()):
            return BattleCard.from_effect(row.effect_code, name=row.name, source=f"data/cards/{side}.csv")
    listing = "; ".join(f"{r.id} {r.name}" for r in battle.itertuples())
    hint = did_you_mean(str(id_or_name), list(battle["name"])) or f"{side} battle cards: {listing}"
    raise SoeInputError(Problem(option, "", "", id_or_name,
                                f"no battle card with that id or name in the {side} deck", hint))
