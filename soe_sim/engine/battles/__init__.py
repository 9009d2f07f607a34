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


def resolve_battle(state, game_map, area: int, attacker_modifier: int, defender_modifier: int, *,
                   block_half=None, defend: bool = False, withdraw: int = bnb.WITHDRAW_NONE,
                   attacker_card: BattleCard | None = None, defender_card: BattleCard | None = None,
                   rules=None) -> dict:
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
    """
    rules = rules or load_rules()
    consts = engine_constants(rules)
    if block_half is None:
        block_half = np.zeros(state.block_side.shape[0], dtype=np.bool_)
    out = np.zeros(nb.N_B, dtype=np.int64)
    nb.resolve_battle_in_state_nb(
        state, game_map.arrays, rules.combat_constants(), int(area), np.asarray(block_half, dtype=np.bool_),
        bool(defend), int(withdraw), int(attacker_modifier), int(defender_modifier),
        (attacker_card or BattleCard()).vector(), (defender_card or BattleCard()).vector(),
        consts.max_blocks, consts.vp_encirclement, int(rules["vp.leader_destroyed"]),
        int(rules["vp.leader_captured"]), out)
    return dict(zip(RECORD_FIELDS, (int(v) for v in out)))
