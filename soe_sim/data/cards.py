"""The two 55-card decks (``cards/polish.csv``, ``cards/soviet.csv``) with parsed effect codes."""
from __future__ import annotations

import contextlib
import contextvars
import re
from pathlib import Path

import pandas as pd

from soe_sim._paths import data_dir
from soe_sim.data._io import Col, Problems, display_path, read_table
from soe_sim.data._rules import rule
from soe_sim.data.enums import CardFront, EventKind, Nation, Side
from soe_sim.errors import Problem, SoeInputError, did_you_mean

__all__ = ["BATTLE_LIMIT_KEYS", "EFFECT_KEYS", "NON_NEGATIVE_EFFECT_KEYS", "effect_value_range", "load_cards",
           "parse_effect", "card_schema", "deck_override"]

# Decks that replace the built-in ones inside a `deck_override` block (a rule variant's changed decks,
# soe_sim.design.variant). A context variable: other threads and tasks keep the built-in decks.
_DECK_OVERRIDE: contextvars.ContextVar = contextvars.ContextVar("soe_sim_deck_override", default=None)


@contextlib.contextmanager
def deck_override(decks: dict):
    """Within the block, :func:`load_cards` of a side without a ``path`` returns a copy of
    ``decks[side]`` (a DataFrame in the :func:`load_cards` format) instead of the built-in deck.

    This is how a variant's deck composition (``soe_sim.design``) reaches the set-up code that loads
    the built-in decks (card state, Events' Area, event table) without a decks argument.
    """
    token = _DECK_OVERRIDE.set(dict(decks))
    try:
        yield
    finally:
        _DECK_OVERRIDE.reset(token)

# Effect key → value type: "int" (signed integer), "nation", "block", "area", "condition".
EFFECT_KEYS: dict[str, str] = {
    # battle cards (battle model)
    "enemy_extra_loss": "int",
    "own_loss_reduction": "int",
    "combat_value": "int",
    "negate_flank": "int",
    "cancel_fortification": "int",
    "cancel_enemy_battle_card": "int",
    # battle cards: when the card may be played (its text; SoE 7.41.1)
    "attacker_only": "int",
    "defender_only": "int",
    "rail_line": "int",
    # historical / reaction events (engine)
    "enemy_sp_loss_initiative": "int",
    "enemy_sp_loss": "int",
    "cubes_infantry": "int",
    "cubes_cavalry": "int",
    "cubes_allied": "int",
    "draw_cards": "int",
    "condition": "condition",
    "initiative": "int",
    "vp": "int",
    "eliminate_nation_block": "nation",
    "activate_nation": "nation",
    "reinforce": "block",
    "at_area": "area",  # the card's reinforce places the block only in this area (EV8 "in Warsaw")
}
# battle-card keys that limit when the card may be played (its text; docs/rules.md E-C11), not what it does
BATTLE_LIMIT_KEYS = ("attacker_only", "defender_only", "rail_line")
# battle-card effects counted in SP, flanks or cards (SoE 7.41.1): a negative value has no meaning
# (only combat_value may lower a side's own combat value)
NON_NEGATIVE_EFFECT_KEYS = ("enemy_extra_loss", "own_loss_reduction", "negate_flank", "cancel_fortification",
                            "cancel_enemy_battle_card")
_CONDITION_RE = re.compile(r"^[a-z0-9]+([_-][a-z0-9]+)*$")
_INT_RE = re.compile(r"^[+-]?\d+$")


# Ceiling of a card's orders, combat modifier and cubes (SoE cards have 0..4; the engine keeps them in
# int8 arrays) and of an integer effect value (enemy_extra_loss:2, vp:-3, …).
CARD_VALUE_MAX = 20
EFFECT_VALUE_MAX = 100


def card_schema(deck_size: int = 55) -> list[Col]:
    """Column schema of a deck CSV (``id`` bounded by ``deck_size``)."""
    return [
        Col("id", "int", lo=1, hi=deck_size),
        Col("name", "str"),
        Col("orders", "int", lo=0, hi=CARD_VALUE_MAX),
        Col("combat_modifier", "int", lo=0, hi=CARD_VALUE_MAX),
        Col("infantry_cubes", "int", lo=0, hi=CARD_VALUE_MAX, default=0),
        Col("cavalry_cubes", "int", lo=0, hi=CARD_VALUE_MAX, default=0),
        Col("allied_cubes", "int", lo=0, hi=CARD_VALUE_MAX, default=0),
        Col("event_kind", "enum", choices=tuple(EventKind.slugs())),
        Col("front", "enum", choices=tuple(CardFront.slugs()), default="any"),
        Col("remove_after_event", "bool", default=False),
        Col("effect", "str", required=False, default=""),
        Col("text", "str"),
        Col("source", "str"),
    ]


def effect_value_range(key: str) -> tuple[int, int]:
    """The allowed values of an integer effect key. A battle card's effect (SoE 7.41.1) is bounded like a
    card's printed values: ``0..CARD_VALUE_MAX`` for the keys of :data:`NON_NEGATIVE_EFFECT_KEYS`,
    ``-CARD_VALUE_MAX..CARD_VALUE_MAX`` for ``combat_value``; every other key
    ``-EFFECT_VALUE_MAX..EFFECT_VALUE_MAX``."""
    if key in NON_NEGATIVE_EFFECT_KEYS:
        return 0, CARD_VALUE_MAX
    if key == "combat_value":
        return -CARD_VALUE_MAX, CARD_VALUE_MAX
    return -EFFECT_VALUE_MAX, EFFECT_VALUE_MAX


def parse_effect(code: str, *, file: str = "", entry: str = "", problems: Problems | None = None,
                 block_ids=None, area_ids=None) -> dict:
    """Parse an effect code ``"key:value;key:value"`` into a dict.

    Integers become ``int`` (``initiative:+1`` → ``{"initiative": 1}``); nations and block ids
    stay strings. Unknown keys and bad values are appended to ``problems`` (or raised as
    :class:`SoeInputError` when ``problems`` is None). ``block_ids`` / ``area_ids`` (optional) check
    ``reinforce:<block>`` / ``at_area:<area>``.
    """
    own = problems is None
    problems = Problems() if own else problems
    out: dict = {}
    for item in (s.strip() for s in str(code or "").split(";")):
        if not item:
            continue
        key, sep, value = (p.strip() for p in item.partition(":"))
        if not sep or not value:
            problems.add(file, entry, "effect", item, "expected key:value")
            continue
        kind = EFFECT_KEYS.get(key)
        if kind is None:
            problems.add(file, entry, "effect", key, "unknown effect key", did_you_mean(key, EFFECT_KEYS))
            continue
        if key in out:
            problems.add(file, entry, "effect", key, "effect key given twice")
        if kind == "int":
            if not _INT_RE.match(value):
                problems.add(file, entry, "effect", item, f"'{key}' needs an integer value")
                continue
            lo, hi = effect_value_range(key)
            if not lo <= int(value) <= hi:
                problems.add(file, entry, "effect", item, f"'{key}' out of range; expected {lo}..{hi}")
                continue
            out[key] = int(value)
        elif kind == "nation":
            if value not in Nation.slugs():
                problems.add(file, entry, "effect", value, f"unknown nation in '{key}'",
                             did_you_mean(value, Nation.slugs()))
                continue
            out[key] = value
        elif kind == "block":
            if block_ids is not None and value not in block_ids:
                problems.add(file, entry, "effect", value, f"unknown block in '{key}'",
                             did_you_mean(value, block_ids))
                continue
            out[key] = value
        elif kind == "area":
            if area_ids is not None and value not in area_ids:
                problems.add(file, entry, "effect", value, f"unknown area in '{key}'",
                             did_you_mean(value, area_ids))
                continue
            out[key] = value
        else:
            if not _CONDITION_RE.match(value):
                problems.add(file, entry, "effect", value, "condition must be a lowercase identifier")
                continue
            out[key] = value
    if own and problems:
        raise SoeInputError(problems)
    return out


def resolve_cards_dir(path: Path | str | None) -> Path:
    """The ``cards`` directory for ``path`` (a cards dir, a data root or the default)."""
    if path is None:
        return data_dir() / "cards"
    p = Path(path)
    if p.is_file():
        return p.parent
    if (p / "cards").is_dir():
        return p / "cards"
    return p


def load_cards(side: str | Side, path: Path | str | None = None, block_ids=None, area_ids=None) -> pd.DataFrame:
    """Load and validate one side's deck.

    Parameters
    ----------
    side : {"polish", "soviet"} or Side
    path : path-like, optional
        A deck CSV, a ``cards`` directory or a data root; default: built-in data.
    block_ids : collection of str, optional
        Known block ids, to check ``reinforce:<block>`` effects.
    area_ids : collection of str, optional
        Known area ids, to check ``at_area:<area>`` effects.

    Returns
    -------
    pandas.DataFrame
        One row per card in file order; ``effect`` holds the parsed dict and ``effect_code`` the
        original string.

    Raises
    ------
    SoeInputError
        With every problem found.
    """
    side_name = side.slug if isinstance(side, Side) else str(side)
    if side_name not in Side.slugs():
        raise SoeInputError(Problem("load_cards", "", "side", side_name, "unknown side",
                                    did_you_mean(side_name, Side.slugs())))
    override = _DECK_OVERRIDE.get() if path is None else None
    if override and side_name in override:
        return override[side_name].copy()
    p = Path(path) if path is not None else None
    csv_path = p if p is not None and p.suffix == ".csv" else resolve_cards_dir(p) / f"{side_name}.csv"
    problems = Problems()
    deck = read_deck(csv_path, problems, block_ids=block_ids, area_ids=area_ids)
    if problems:
        raise SoeInputError(problems)
    return deck


def read_deck(path: Path, problems: Problems, block_ids=None, area_ids=None) -> pd.DataFrame | None:
    """Read and check one deck CSV, appending problems; ``None`` when unreadable."""
    path = Path(path)
    root = path.parent.parent
    deck_size = int(rule(root, "cards.deck_size"))
    t = read_table(path, card_schema(deck_size), problems)
    if not t.ok:
        return None
    df = t.frame.copy()
    seen: dict[int, int] = {}
    parsed = []
    fname = display_path(path)
    for i in range(len(df)):
        cid, where = df["id"].iat[i], t.entry(i)
        if cid is not None:
            if cid in seen:
                problems.add(path, where, "id", cid, f"duplicate card id (first on line {t.lines[seen[cid]]})")
            else:
                seen[cid] = i
        eff = parse_effect(df["effect"].iat[i], file=fname, entry=where, problems=problems, block_ids=block_ids,
                           area_ids=area_ids)
        if df["event_kind"].iat[i] == "none" and eff:
            problems.add(path, where, "effect", df["effect"].iat[i], "a card without an event has no effect")
        limits = [k for k in BATTLE_LIMIT_KEYS if eff.get(k)]
        if limits and df["event_kind"].iat[i] != "battle":
            problems.add(path, where, "effect", limits[0],
                         "only a battle card has play limits (attacker_only, defender_only, rail_line)")
        if eff.get("attacker_only") and eff.get("defender_only"):
            problems.add(path, where, "effect", df["effect"].iat[i],
                         "a card cannot be both attacker_only and defender_only")
        parsed.append(eff)
    missing = sorted(set(range(1, deck_size + 1)) - set(seen))
    if missing and len(df):
        shown = ", ".join(map(str, missing[:10])) + (" …" if len(missing) > 10 else "")
        problems.add(path, "", "id", len(seen), f"the deck should have {deck_size} cards; missing ids {shown}")
    df["effect_code"] = df["effect"]
    df["effect"] = pd.Series(parsed, dtype=object)
    df.attrs["path"] = str(path)  # the file a later check of the deck (cards.deck_size at set-up) names
    for c in ("id", "orders", "combat_modifier", "infantry_cubes", "cavalry_cubes", "allied_cubes"):
        df[c] = [int(v) if v is not None else 0 for v in df[c]]
    df["remove_after_event"] = df["remove_after_event"].astype(bool)
    return df
