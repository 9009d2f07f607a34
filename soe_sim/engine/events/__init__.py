"""Card events in the game: historical events (SoE 7.13) and reaction cards (SoE 3.4, 7.1 item 6).

:func:`event_table` encodes the ``effect`` of every card of both decks (``soe_sim.data.load_cards``)
into an :class:`EventTable` of kernel-ready arrays for one game state (block ids become indices of
the state's block universe). The kernels in :mod:`soe_sim.engine.events.nb` list the choices an
event needs and resolve it on the :class:`~soe_sim.engine.state.GameState`; the reaction-window
kernels say when a reaction card is playable. Readings: docs/rules.md "Engine: card events" (EV1…).

The Events' Area (EatS III "place certain units in the Events' Area"): blocks that only a card
brings into play are not in a scenario's block universe (``new_game`` uses the deployment, the
reinforcements and the force pools). :func:`add_events_area` adds the blocks named by the decks'
``reinforce:<block>`` effects as ``SCHEDULED`` rows with no arrival round
(``nb.EVENTS_AREA_ROUND``): they never arrive by schedule, only by their card (EV8).
:func:`new_game_with_events_area` is ``new_game`` followed by it.

Example::

    state = new_game_with_events_area(scenario, game_map, roster, rules)
    table = event_table(state, roster, rules)
    active = new_active_nations(game_map, scenario)          # Lithuania inactive until card 23
    ctx = np.empty(nb.N_X, np.int64); nb.card_play_context_nb(ctx, FRONT.NORTH)
    rows = legal_event_targets(state, cs, orders, game_map, table, active, SIDE.SOVIET, 23, ctx)
    out = apply_event(state, cs, orders, game_map, table, active, SIDE.SOVIET, 23, ctx, rows[0], rng)
"""
from __future__ import annotations

import re
from typing import NamedTuple

import numpy as np

from soe_sim.data.enums import Arm, CardFront, EventKind, Nation, Side, UnitClass
from soe_sim.engine.events import nb
from soe_sim.engine.events.nb import (
    COND_AFTER_OWN_RECON,
    COND_LOST_BATTLE,
    COND_WON_BATTLE,
    COND_WON_BATTLE_AS_DEFENDER,
    COND_WON_KEY_CITY_BATTLE,
    EVENTS_AREA_ROUND,
    FX_ACTIVATE_NATION,
    FX_AT_AREA,
    FX_BATTLE_CANCEL_ENEMY_BATTLE_CARD,
    FX_BATTLE_CANCEL_FORTIFICATION,
    FX_BATTLE_COMBAT_VALUE,
    FX_BATTLE_ENEMY_EXTRA_LOSS,
    FX_BATTLE_NEGATE_FLANK,
    FX_BATTLE_OWN_LOSS_REDUCTION,
    FX_CUBES_ALLIED,
    FX_CUBES_CAVALRY,
    FX_CUBES_INFANTRY,
    FX_DRAW_CARDS,
    FX_ELIMINATE_NATION_BLOCK,
    FX_ENEMY_SP_LOSS,
    FX_ENEMY_SP_LOSS_INITIATIVE,
    FX_INITIATIVE,
    FX_REINFORCE,
    FX_VP,
    N_EO,
    N_X,
    TK_AREA,
    TK_BLOCK,
    TK_NONE,
)
from soe_sim.engine.cards import BATTLE_LIMIT_KEYS
from soe_sim.engine.state import NO_AREA, STATUS, GameState
from soe_sim.errors import Problem, SoeInputError

__all__ = [
    "EFFECT_CODES",
    "CONDITION_CODES",
    "EventTable",
    "event_table",
    "events_area_blocks",
    "add_events_area",
    "new_game_with_events_area",
    "new_active_nations",
    "card_play_context",
    "legal_event_targets",
    "apply_event",
    "nb",
]

EFFECT_CODES: dict[str, int] = {
    "enemy_sp_loss_initiative": FX_ENEMY_SP_LOSS_INITIATIVE,
    "enemy_sp_loss": FX_ENEMY_SP_LOSS,
    "draw_cards": FX_DRAW_CARDS,
    "initiative": FX_INITIATIVE,
    "vp": FX_VP,
    "cubes_infantry": FX_CUBES_INFANTRY,
    "cubes_cavalry": FX_CUBES_CAVALRY,
    "cubes_allied": FX_CUBES_ALLIED,
    "eliminate_nation_block": FX_ELIMINATE_NATION_BLOCK,
    "activate_nation": FX_ACTIVATE_NATION,
    "reinforce": FX_REINFORCE,
    "at_area": FX_AT_AREA,
    "combat_value": FX_BATTLE_COMBAT_VALUE,
    "enemy_extra_loss": FX_BATTLE_ENEMY_EXTRA_LOSS,
    "own_loss_reduction": FX_BATTLE_OWN_LOSS_REDUCTION,
    "negate_flank": FX_BATTLE_NEGATE_FLANK,
    "cancel_fortification": FX_BATTLE_CANCEL_FORTIFICATION,
    "cancel_enemy_battle_card": FX_BATTLE_CANCEL_ENEMY_BATTLE_CARD,
}
"""Effect key of ``data/cards/*.csv`` → ``nb.FX_*`` code (``condition`` is kept apart)."""

CONDITION_CODES: dict[str, int] = {
    "after_own_recon": COND_AFTER_OWN_RECON,
    "won_battle": COND_WON_BATTLE,
    "lost_battle": COND_LOST_BATTLE,
    "won_battle_as_defender": COND_WON_BATTLE_AS_DEFENDER,
}
_KEY_CITY_RE = re.compile(r"^won_key_city_battle_min_losses_(\d+)$")
_BATTLE_CONDITIONS = (COND_WON_BATTLE, COND_LOST_BATTLE, COND_WON_BATTLE_AS_DEFENDER, COND_WON_KEY_CITY_BATTLE)


class EventTable(NamedTuple):
    """Card events of both decks, kernel-ready (first axis :data:`~soe_sim.data.enums.SIDE`, second
    card ``id - 1``).

    ``kind`` int8 (:data:`~soe_sim.data.enums.EVENT_KIND`) · ``front`` int8
    (:data:`~soe_sim.data.enums.CARD_FRONT`) · ``condition`` int8 (``nb.COND_*``) · ``cond_value``
    int16 (the N of ``won_key_city_battle_min_losses_N``) · ``target_kind`` int8 (``nb.TK_*``: the
    choice the event needs) · ``n_fx`` int8 effects per card · ``fx_code`` int8 (2, n, max_fx)
    (``nb.FX_*``, data order) · ``fx_value`` int32 (2, n, max_fx): the integer, the
    :class:`~soe_sim.data.enums.Nation` code, the block's index in the state's universe (``-1``
    when the block is not in this scenario's universe) or the area index (``at_area``). Constants: ``hand_limit`` (SoE 6.0),
    ``ini_min``, ``ini_max`` (SoE 6.1), ``max_blocks`` (SoE 7.33).
    """

    kind: np.ndarray
    front: np.ndarray
    condition: np.ndarray
    cond_value: np.ndarray
    target_kind: np.ndarray
    n_fx: np.ndarray
    fx_code: np.ndarray
    fx_value: np.ndarray
    hand_limit: int
    ini_min: int
    ini_max: int
    max_blocks: int


def _choice_kind(code: int, cond: int) -> int:
    if code in (FX_ENEMY_SP_LOSS_INITIATIVE, FX_REINFORCE):
        return TK_AREA
    if code == FX_ELIMINATE_NATION_BLOCK:
        return TK_BLOCK
    if code == FX_ENEMY_SP_LOSS:
        return TK_NONE if cond in _BATTLE_CONDITIONS else TK_BLOCK
    return TK_NONE


def _condition_code(text: str, where: str) -> tuple[int, int]:
    if text in CONDITION_CODES:
        return CONDITION_CODES[text], 0
    m = _KEY_CITY_RE.match(text)
    if m:
        return COND_WON_KEY_CITY_BATTLE, int(m.group(1))
    raise SoeInputError(Problem(where, "", "effect", f"condition:{text}",
                                "unknown condition for the engine (known: "
                                + ", ".join(list(CONDITION_CODES) + ["won_key_city_battle_min_losses_<N>"]) + ")"))


def event_table(state: GameState, roster, rules=None, decks: dict | None = None, game_map=None) -> EventTable:
    """Encode both decks' effects for ``state``'s block universe.

    ``roster``: :class:`~soe_sim.data.blocks.Roster` (block ids of the universe); ``rules``: a
    :class:`~soe_sim.rules.Rules` (default ``load_rules()``); ``decks``: side slug → DataFrame in the
    :func:`soe_sim.data.load_cards` format (default: the built-in decks); ``game_map`` (default
    ``load_map()``): the area ids of ``at_area``. Unknown effect keys are rejected by the loader; an
    unknown ``condition`` or ``at_area`` area raises :class:`SoeInputError`.
    """
    from soe_sim.data import load_cards
    from soe_sim.rules import load_rules

    rules = load_rules() if rules is None else rules
    if game_map is None:
        from soe_sim.data import load_map

        game_map = load_map()
    n = int(rules["cards.deck_size"])
    ids = roster.blocks["id"].to_numpy()[state.block_roster]
    pos = {str(b): k for k, b in enumerate(ids)}
    tables = {}
    max_fx = 1
    for s in Side:
        df = (decks or {}).get(s.slug)
        tables[s] = load_cards(s.slug) if df is None else df
        for eff in tables[s]["effect"]:
            max_fx = max(max_fx, len([k for k in (eff or {}) if k != "condition" and k not in BATTLE_LIMIT_KEYS]))
    kind = np.zeros((2, n), np.int8)
    front = np.full((2, n), int(CardFront.ANY), np.int8)
    cond = np.zeros((2, n), np.int8)
    cond_value = np.zeros((2, n), np.int16)
    target_kind = np.zeros((2, n), np.int8)
    n_fx = np.zeros((2, n), np.int8)
    fx_code = np.zeros((2, n, max_fx), np.int8)
    fx_value = np.zeros((2, n, max_fx), np.int32)
    for s in Side:
        for row in tables[s].itertuples(index=False):
            c = int(row.id) - 1
            if not 0 <= c < n:
                raise SoeInputError(Problem(f"data/cards/{s.slug}.csv", str(row.id), "id", row.id,
                                            f"expected 1..{n}"))
            kind[s, c] = int(EventKind.from_slug(row.event_kind))
            front[s, c] = int(CardFront.from_slug(row.front))
            eff = {k: v for k, v in (row.effect or {}).items() if k not in BATTLE_LIMIT_KEYS}  # play limits: cards
            if "condition" in eff:
                cond[s, c], cond_value[s, c] = _condition_code(str(eff.pop("condition")),
                                                               f"data/cards/{s.slug}.csv card {row.id}")
            k = 0
            for key, value in eff.items():
                code = EFFECT_CODES[key]
                if code in (FX_ELIMINATE_NATION_BLOCK, FX_ACTIVATE_NATION):
                    v = int(Nation.from_slug(value))
                elif code == FX_REINFORCE:
                    v = pos.get(str(value), -1)
                elif code == FX_AT_AREA:
                    if str(value) not in game_map.area_index:
                        raise SoeInputError(Problem(f"data/cards/{s.slug}.csv", str(row.id), "effect",
                                                    f"at_area:{value}", "unknown area"))
                    v = int(game_map.area_index[str(value)])
                else:
                    v = int(value)
                fx_code[s, c, k] = code
                fx_value[s, c, k] = v
                if target_kind[s, c] == TK_NONE:
                    target_kind[s, c] = _choice_kind(code, int(cond[s, c]))
                k += 1
            n_fx[s, c] = k
    return EventTable(kind=kind, front=front, condition=cond, cond_value=cond_value, target_kind=target_kind,
                      n_fx=n_fx, fx_code=fx_code, fx_value=fx_value, hand_limit=int(rules["cards.hand_limit"]),
                      ini_min=int(rules["initiative.min_level"]), ini_max=int(rules["initiative.max_level"]),
                      max_blocks=int(rules["stacking.max_blocks"]))


# --- the Events' Area ---------------------------------------------------------------------------------


def events_area_blocks(state: GameState, roster, decks: dict | None = None, removed_cards=None) -> list[str]:
    """Ids of the blocks named by ``reinforce:<block>`` effects of the decks that are not in
    ``state``'s universe (roster order). Cards in ``removed_cards`` (side slug → ids, e.g. a
    scenario's ``removed_cards``) are skipped."""
    from soe_sim.data import load_cards

    have = {str(b) for b in roster.blocks["id"].to_numpy()[state.block_roster]}
    want = set()
    for s in Side:
        df = (decks or {}).get(s.slug)
        df = load_cards(s.slug) if df is None else df
        gone = {int(c) for c in ((removed_cards or {}).get(s.slug) or [])}
        for cid, eff in zip(df["id"], df["effect"]):
            b = (eff or {}).get("reinforce")
            if b and int(cid) not in gone and str(b) not in have:
                want.add(str(b))
    idx = roster.block_index
    return sorted(want, key=lambda b: idx[b])


def add_events_area(state: GameState, roster, block_ids) -> GameState:
    """A new :class:`GameState` whose universe also holds ``block_ids`` (roster order is kept), each
    waiting in the Events' Area: ``SCHEDULED`` with ``block_arrive_round = EVENTS_AREA_ROUND`` (-1),
    no arrival area, arrival SP = its maximum. Block indices of ``state`` shift: build the other
    modules' state (cards, orders, game config, event table) from the result."""
    idx = roster.block_index
    old_rows = [int(r) for r in state.block_roster]
    new_rows = sorted({int(idx[b]) for b in block_ids} - set(old_rows))
    if not new_rows:
        return state.copy()
    blocks = roster.blocks
    rows = sorted(old_rows + new_rows)
    where_old = {r: k for k, r in enumerate(old_rows)}
    nb_ = len(rows)

    def col(name, dtype, fill):
        a = getattr(state, name)
        out = np.empty(nb_, dtype=a.dtype if dtype is None else dtype)
        for k, r in enumerate(rows):
            out[k] = a[where_old[r]] if r in where_old else fill(r)
        return out

    def code(column, enum_cls):
        return lambda r: int(enum_cls.from_slug(blocks[column].iat[r]))

    def max_sp(r):
        return int(blocks["max_sp"].iat[r])

    fields = dict(state._asdict())
    fields["block_roster"] = np.array(rows, dtype=state.block_roster.dtype)
    fields["block_side"] = col("block_side", None, code("side", Side))
    fields["block_arm"] = col("block_arm", None, code("arm", Arm))
    fields["block_class"] = col("block_class", None, code("class", UnitClass))
    fields["block_nation"] = col("block_nation", None, code("nation", Nation))
    fields["block_max_sp"] = col("block_max_sp", None, max_sp)
    fields["block_sp"] = col("block_sp", None, lambda r: 0)
    fields["block_area"] = col("block_area", None, lambda r: NO_AREA)
    fields["block_status"] = col("block_status", None, lambda r: STATUS.SCHEDULED)
    fields["block_prev_area"] = col("block_prev_area", None, lambda r: NO_AREA)
    fields["block_arrival"] = col("block_arrival", None, lambda r: 0)
    fields["block_in_supply"] = col("block_in_supply", None, lambda r: True)
    fields["block_arrive_round"] = col("block_arrive_round", None, lambda r: EVENTS_AREA_ROUND)
    fields["block_arrive_phase"] = col("block_arrive_phase", None, lambda r: -1)
    fields["block_arrive_area"] = col("block_arrive_area", None, lambda r: NO_AREA)
    fields["block_arrive_sp"] = col("block_arrive_sp", None, max_sp)
    fields["block_arrive_condition"] = col("block_arrive_condition", None, lambda r: -1)
    for k in ("garrison_side", "control", "round", "phase", "end", "vp", "initiative_side", "initiative_level",
              "cubes", "supply_base"):
        fields[k] = np.array(fields[k], copy=True)
    return GameState(**fields)


def new_game_with_events_area(scenario, game_map, roster, rules, decks: dict | None = None) -> GameState:
    """:func:`~soe_sim.engine.state.new_game` plus the Events' Area blocks the (not removed) event
    cards can bring in (:func:`events_area_blocks`, :func:`add_events_area`) — none in a scenario with
    the ``no_reinforcement_phase`` rule: "Reinforcements and leaders are not used in this scenario" (SoE
    7.9, Scenario 1), so a ``reinforce:`` card has no block to bring and its event is not offered (EV2,
    reading D14)."""
    from soe_sim.engine.state import new_game

    state = new_game(scenario, game_map, roster, rules)
    if any(r.get("kind") == "no_reinforcement_phase" for r in (getattr(scenario, "special_rules", None) or [])):
        return state
    ids = events_area_blocks(state, roster, decks, getattr(scenario, "removed_cards", None))
    return add_events_area(state, roster, ids)


def new_active_nations(game_map, scenario=None) -> np.ndarray:
    """A per-game ``active_nations`` bool array (n_nations,): the nations whose blocks are active at
    the start (``reinforce.nation_rules``: a ``neutral_nation`` stays inactive until its card). The
    ``activate_nation`` event sets its entry; the round loop passes it wherever it passed
    ``GameConfig.nation_active``."""
    from soe_sim.engine.reinforce import nation_rules

    active, _ = nation_rules(game_map, scenario)
    return np.array(active, dtype=np.bool_, copy=True)


# --- Python conveniences (tests, the step-by-step interface) -----------------------------------------


def card_play_context(front) -> np.ndarray:
    ctx = np.empty(N_X, dtype=np.int64)
    nb.card_play_context_nb(ctx, int(front))
    return ctx


def _arrays(game_map):
    return game_map.arrays if hasattr(game_map, "arrays") else game_map


def legal_event_targets(state, cs, orders, game_map, table, active_nations, side, card, ctx,
                        involved=None) -> list[int]:
    """:func:`~soe_sim.engine.events.nb.legal_event_targets_nb` as a list (``[-1]``: no choice)."""
    if involved is None:
        involved = np.zeros(state.n_blocks, dtype=np.bool_)
    out = np.empty(max(state.n_areas, state.n_blocks), dtype=np.int64)
    k = nb.legal_event_targets_nb(state, cs, orders, _arrays(game_map), table, active_nations, int(side), int(card),
                                  ctx, involved, out)
    return [int(v) for v in out[:k]]


def apply_event(state, cs, orders, game_map, table, active_nations, side, card, ctx, target, rng,
                involved=None) -> np.ndarray | None:
    """:func:`~soe_sim.engine.events.nb.apply_event_nb`; returns its ``out`` row, or None if refused."""
    if involved is None:
        involved = np.zeros(state.n_blocks, dtype=np.bool_)
    out = np.zeros(N_EO, dtype=np.int64)
    ok = nb.apply_event_nb(state, cs, orders, _arrays(game_map), table, active_nations, int(side), int(card), ctx,
                           involved, int(target), rng, out)
    return out if ok else None
