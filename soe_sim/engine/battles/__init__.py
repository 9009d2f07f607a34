"""Battles inside the game (SoE 7.4–7.44): Python wrappers over :mod:`soe_sim.engine.battles.nb`."""
from __future__ import annotations

import numpy as np

from soe_sim.battle import nb as bnb
from soe_sim.battle.spec import BattleCard
from soe_sim.engine.battles import nb
from soe_sim.engine.state import engine_constants
from soe_sim.rules import load_rules

RECORD_FIELDS = (
    "area", "attacker", "defender", "attacker_blocks", "defender_blocks", "attacker_cv", "defender_cv",
    "attacker_losses", "defender_losses", "winner", "great_victory", "attacker_destroyed",
    "defender_destroyed", "encircled", "leaders_killed", "leaders_captured", "vp_delta", "fought",
    "garrison_lost",
)
assert len(RECORD_FIELDS) == nb.N_B


def find_battles(state) -> list[tuple[int, int]]:
    """``(area, engaged blocks)`` of every battle in resolution order (SoE 7.4)."""
    n = state.control.shape[0]
    areas = np.empty(n, dtype=np.int64)
    sizes = np.empty(n, dtype=np.int64)
    k = nb.find_battles_nb(state, areas, sizes)
    return [(int(areas[i]), int(sizes[i])) for i in range(k)]


def battle_candidates(state, game_map, north_first: bool = False) -> tuple[list[int], int]:
    """The equal-size battles that may be fought next and the front whose initiative holder chooses
    among them (SoE 7.4; ``north_first``: SoE 10.0 in a 3–4 player scenario; reading E-B1)."""
    n = state.control.shape[0]
    areas = np.empty(n, dtype=np.int64)
    sizes = np.empty(n, dtype=np.int64)
    out = np.empty(n, dtype=np.int64)
    k = nb.find_battles_nb(state, areas, sizes)
    m, front = nb.battle_candidates_nb(game_map.arrays, bool(north_first), areas, sizes, k, out)
    return [int(a) for a in out[:m]], int(front)


def battle_blocks(state, area: int) -> np.ndarray:
    """(n_blocks,) bool: the blocks on the map in ``area`` (take it before the battle)."""
    from soe_sim.engine.events.nb import battle_blocks_nb

    out = np.zeros(state.block_side.shape[0], dtype=np.bool_)
    battle_blocks_nb(state, int(area), out)
    return out


def legal_advance(state, game_map, involved, side: int, area: int, nation_ok=None, rules=None) -> list[int]:
    """Blocks of the winning attacker ``side`` that may go back from ``area`` to where they came
    from (SoE 7.43; reading E-B6). ``involved``: :func:`battle_blocks` taken before the battle."""
    rules = rules or load_rules()
    out = np.empty(state.block_side.shape[0], dtype=np.int64)
    ok = np.zeros((0, 0), dtype=np.bool_) if nation_ok is None else np.asarray(nation_ok, dtype=np.bool_)
    k = nb.legal_advance_nb(state, game_map.arrays, np.asarray(involved, dtype=np.bool_), ok, int(side), int(area),
                            engine_constants(rules).max_blocks, out)
    return [int(b) for b in out[:k]]


def apply_advance(state, area: int, block: int) -> int:
    """Send ``block`` back from the battle ``area`` (a row of :func:`legal_advance`); returns the area."""
    return int(nb.apply_advance_nb(state, int(area), int(block)))


def resolve_battle(state, game_map, area: int, attacker_modifier: int, defender_modifier: int, *,
                   block_half=None, defend: bool = False, withdraw: int = bnb.WITHDRAW_NONE,
                   attacker_card: BattleCard | None = None, defender_card: BattleCard | None = None,
                   rules=None, nation_ok=None) -> dict:
    """Fight the battle in ``area`` of ``state`` (modified in place) and return its record.

    Parameters
    ----------
    state : GameState
    game_map : GameMap
    area : int
        Area index.
    attacker_modifier, defender_modifier : int
        Combat-card values actually added (hand bonus included; SoE 7.41.2).
    block_half : (n_blocks,) bool, optional
        Blocks at half strength this phase (forced march, reorganizing; SoE 7.2).
    defend, withdraw
        The defender's Defend Area order and Withdraw mode here (SoE 7.2).
    attacker_card, defender_card : BattleCard, optional
    rules : Rules, optional
    nation_ok : (n_nations, n_areas) bool, optional
        Where each nation's blocks may end a retreat (the round loop's G15/G16 mask).
    """
    rules = rules or load_rules()
    consts = engine_constants(rules)
    if block_half is None:
        block_half = np.zeros(state.block_side.shape[0], dtype=np.bool_)
    out = np.zeros(nb.N_B, dtype=np.int64)
    ok = np.zeros((0, 0), dtype=np.bool_) if nation_ok is None else np.ascontiguousarray(nation_ok, dtype=np.bool_)
    nb.resolve_battle_restricted_nb(
        state, game_map.arrays, rules.combat_constants(), int(area), np.asarray(block_half, dtype=np.bool_),
        bool(defend), int(withdraw), int(attacker_modifier), int(defender_modifier),
        (attacker_card or BattleCard()).vector(), (defender_card or BattleCard()).vector(),
        consts.max_blocks, consts.vp_encirclement, int(rules["vp.leader_destroyed"]),
        int(rules["vp.leader_captured"]), out, ok)
    return dict(zip(RECORD_FIELDS, (int(v) for v in out)))
