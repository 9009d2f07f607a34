"""Battles inside the game (SoE 7.4–7.44): find them, build the resolver's inputs from the position,
apply the result to real blocks, retreat, encirclement, great victory and initiative.

The arithmetic of a battle is :func:`soe_sim.battle.nb.resolve_nb`, the same kernel as the odds
calculator; this module only connects it to the game state. Kernels take the
:class:`~soe_sim.engine.state.GameState` and :class:`~soe_sim.data.map.MapArrays` named tuples,
plain arrays and scalars, and fill caller-allocated ``out`` arrays.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from soe_sim._jit import njit
from soe_sim.battle import nb as bnb
from soe_sim.data.enums import ARM, SIDE
from soe_sim.engine.nb import (
    ENCIRCLED,
    UNLIMITED,
    restrict_retreat_nb,
    retreat_targets_nb,
    side_sign_nb,
    vp_add_nb,
)
from soe_sim.engine.state import STATUS

# --- per-battle record (out row of resolve_battle_in_state_nb) --------------------------------
B_AREA = 0
B_ATTACKER = 1  # side
B_DEFENDER = 2
B_ATT_BLOCKS = 3
B_DEF_BLOCKS = 4
B_ATT_CV = 5
B_DEF_CV = 6
B_ATT_LOSSES = 7
B_DEF_LOSSES = 8
B_WINNER = 9  # side
B_GREAT_VICTORY = 10  # 1 if the winner scored one (SoE 7.44)
B_ATT_DESTROYED = 11  # blocks destroyed in the battle (to the force pool, SoE 7.41.5)
B_DEF_DESTROYED = 12
B_ENCIRCLED = 13  # loser's blocks eliminated for want of a retreat (SoE 7.42)
B_LEADERS_KILLED = 14  # leaders destroyed in battle (SoE 9.0)
B_LEADERS_CAPTURED = 15  # leaders unable to retreat (SoE 9.0)
B_VP_DELTA = 16  # signed change of the VP track from this battle
B_FOUGHT = 17  # 0 when the defenders withdrew and no garrison stayed (SoE 7.2)
B_GARRISON_LOST = 18
N_B = 19

NO_BATTLE = -1


@njit(cache=True, _nrt=True)
def find_battles_nb(state, out_areas, out_sizes):
    """Areas where opposing blocks, or blocks and an enemy garrison, end up together (SoE 7.4),
    ordered smallest battle first (engaged blocks of both sides), ties by area index.

    The initiative holder orders battles of equal size (SoE 7.4) and northern battles come first in
    3–4 player scenarios (10.0): :func:`battle_candidates_nb` gives the round loop the choice (reading
    E-B1 in docs/rules.md).

    Returns
    -------
    int
        Number of battles; ``out_areas[:n]`` / ``out_sizes[:n]`` hold them in resolution order.
    """
    return find_battles_scratch_nb(state, out_areas, out_sizes, np.empty((2, state.control.shape[0]), dtype=np.int32))


@njit(cache=True, _nrt=False)
def find_battles_scratch_nb(state, out_areas, out_sizes, counts):
    """:func:`find_battles_nb` with the caller's ``counts`` int32 (2, n_areas) scratch (the round loop's
    ``BattleScratch.area_counts``): no allocation, no reference counting."""
    n_areas = state.control.shape[0]
    for i in range(n_areas):
        counts[0, i] = 0
        counts[1, i] = 0
    for b in range(state.block_side.shape[0]):
        a = state.block_area[b]
        if state.block_status[b] == STATUS.ON_MAP and a >= 0:
            counts[state.block_side[b], a] += 1
    k = 0
    for i in range(n_areas):
        g = state.garrison_side[i]
        contested = (counts[0, i] > 0 and counts[1, i] > 0) or (
            g >= 0 and counts[1 - g, i] > 0)
        if not contested:
            continue
        size = counts[0, i] + counts[1, i]
        j = k
        while j > 0 and out_sizes[j - 1] > size:
            out_areas[j] = out_areas[j - 1]
            out_sizes[j] = out_sizes[j - 1]
            j -= 1
        out_areas[j] = i
        out_sizes[j] = size
        k += 1
    return k


@njit(cache=True, _nrt=False)
def battle_candidates_nb(map_arrays, north_first, areas, sizes, k, out_areas):
    """SoE 7.4, 10.0: the battles that may be fought next among the ``k`` found by
    :func:`find_battles_nb` (``areas`` / ``sizes``, smallest first, ties by area index).

    With ``north_first`` (a 3–4 player scenario, SoE 10.0 "Northern front orders and battles are
    always placed and executed first") only the battles of the northern-most front that has one
    count. Among them the smallest; "If multiple battles are of the same scale, the player with
    initiative on that front determines the order" — when equal battles lie on both fronts (possible
    only without ``north_first``) the northern ones come first, as the round loop does for every
    other per-front step (G5). Returns ``(n, front)``: ``out_areas[:n]`` the equal battles in area
    order and the front whose initiative holder chooses among them (reading E-B1).
    """
    if k == 0:
        return 0, -1
    f0 = 1 << 30
    if north_first:
        for i in range(k):
            f0 = min(f0, map_arrays.front[areas[i]])
    smin = -1
    for i in range(k):
        if not north_first or map_arrays.front[areas[i]] == f0:
            smin = sizes[i]
            break
    fmin = 1 << 30
    for i in range(k):
        if sizes[i] == smin and (not north_first or map_arrays.front[areas[i]] == f0):
            fmin = min(fmin, map_arrays.front[areas[i]])
    n = 0
    for i in range(k):
        if sizes[i] == smin and map_arrays.front[areas[i]] == fmin:
            out_areas[n] = areas[i]
            n += 1
    return n, fmin


@njit(cache=True, _nrt=False)
def legal_advance_nb(state, map_arrays, involved, nation_ok, side, area, max_blocks, out_block):
    """SoE 7.43 Advancing after a Battle: "the winning attacking player may decide if any blocks that
    participated in the battle stay in the battle area or return to the area adjacent to the battle
    they came from. He must keep at least one block in the battle area."

    The blocks of ``side`` (the winning attacker) in ``area`` that fought there (``involved``, the
    battle's blocks taken before it) and may go back to ``block_prev_area`` now: only while two or
    more of its blocks stay, into an area with no enemy block or garrison, with room under
    ``max_blocks`` (Eastern Links unlimited) and allowed by ``nation_ok`` (the round loop's G15/G16
    mask; shape (0, 0): no restriction). Ascending block index; returns how many (reading E-B6).
    """
    nbk = state.block_side.shape[0]
    staying = 0
    for b in range(nbk):
        if state.block_status[b] == STATUS.ON_MAP and state.block_area[b] == area and state.block_side[b] == side:
            staying += 1
    if staying <= 1:
        return 0
    k = 0
    for b in range(nbk):
        if (state.block_status[b] != STATUS.ON_MAP or state.block_area[b] != area or state.block_side[b] != side
                or not involved[b]):
            continue
        back = state.block_prev_area[b]
        if back < 0 or back == area or _enemy_in_area_nb(state, side, back):
            continue
        if not map_arrays.eastern_link[back] and _count_side_in_area_nb(state, side, back) >= max_blocks:
            continue
        if nation_ok.shape[0] > 0 and not nation_ok[state.block_nation[b], back]:
            continue
        out_block[k] = b
        k += 1
    return k


@njit(cache=True, _nrt=False)
def apply_advance_nb(state, area, block):
    """SoE 7.43: ``block`` returns from the battle ``area`` to the area it came from (a row of
    :func:`legal_advance_nb`); its ``block_prev_area`` becomes the battle area. Returns the area."""
    back = state.block_prev_area[block]
    state.block_area[block] = back
    state.block_prev_area[block] = area
    return back


@njit(cache=True, _nrt=False)
def defender_side_nb(state, area):
    """SoE 7.32: a side with a block that began the phase in the area, or with a garrison there,
    defends; if the area was empty, the side whose block entered first defends."""
    g = state.garrison_side[area]
    first_side = -1
    first_arrival = 1 << 30
    for b in range(state.block_side.shape[0]):
        if state.block_status[b] != STATUS.ON_MAP or state.block_area[b] != area:
            continue
        if state.block_prev_area[b] < 0:
            return state.block_side[b]
        if state.block_arrival[b] < first_arrival:
            first_arrival = state.block_arrival[b]
            first_side = state.block_side[b]
    if g >= 0:
        return g
    return first_side


@njit(cache=True, _nrt=False)
def battle_inputs_nb(state, map_arrays, area, defender, block_half,
                     out_att_idx, out_def_idx, out_att_direction):
    """The participants of the battle in ``area`` and the facts the resolver needs.

    Attackers are grouped by the area they entered from (``block_prev_area``; SoE 7.31 "stop on
    the road/rail leading into the area", 7.34 directions). Defending blocks that moved in after
    the area was held (it had a defender block at the start, a garrison, or an earlier defender
    arrival) are supporting blocks; each distinct direction they came from negates one flank
    attack (SoE 7.34). The fortification applies only if every attack direction is a fortified
    link into the area (SoE 1.2).

    Parameters
    ----------
    block_half : (n_blocks,) bool
        Blocks fighting at half strength this phase (forced march, reorganizing; SoE 7.2).

    Returns
    -------
    (n_att, n_def, support_directions, fortified)
    """
    attacker = 1 - defender
    n_att = 0
    n_def = 0
    held_from_start = state.garrison_side[area] == defender
    first_def_arrival = 1 << 30
    for b in range(state.block_side.shape[0]):
        if state.block_status[b] != STATUS.ON_MAP or state.block_area[b] != area:
            continue
        if state.block_side[b] == defender:
            if state.block_prev_area[b] < 0:
                held_from_start = True
            elif state.block_arrival[b] < first_def_arrival:
                first_def_arrival = state.block_arrival[b]
    n_support = 0  # distinct support directions, at most 16 counted (no scratch: no allocation)
    for b in range(state.block_side.shape[0]):
        if state.block_status[b] != STATUS.ON_MAP or state.block_area[b] != area:
            continue
        if state.block_side[b] == attacker:
            out_att_idx[n_att] = b
            out_att_direction[n_att] = state.block_prev_area[b]
            n_att += 1
        else:
            out_def_idx[n_def] = b
            n_def += 1
            p = state.block_prev_area[b]
            supporting = p >= 0 and (held_from_start or state.block_arrival[b] > first_def_arrival)
            if supporting and n_support < 16:
                seen = False  # an earlier supporting defender from the same direction
                for q in range(n_def - 1):
                    d = out_def_idx[q]
                    later = held_from_start or state.block_arrival[d] > first_def_arrival
                    if state.block_prev_area[d] == p and later:
                        seen = True
                if not seen:
                    n_support += 1
    fortified = n_att > 0
    for k in range(n_att):
        j = out_att_direction[k]
        edge_fortified = False
        for e in range(map_arrays.adj_indptr[area], map_arrays.adj_indptr[area + 1]):
            if map_arrays.adj_indices[e] == j and map_arrays.adj_fortified[e]:
                edge_fortified = True
        if not edge_fortified:
            fortified = False
    return n_att, n_def, n_support, fortified


@njit(cache=True, inline="always")
def force_views_nb(state, att_idx, n_att, def_idx, n_def, block_half, force, fhalf):
    """Both sides' resolver arrays (:func:`force_arrays_into_nb`) written into rows of the caller's scratch
    ``force`` int64 (4, n_blocks) and ``fhalf`` bool (2, n_blocks); returns the views ``att_sp, att_half,
    att_arm, def_sp, def_half, def_arm`` (lengths ``n_att`` / ``n_def``)."""
    att_sp = force[0, :n_att]
    att_arm = force[1, :n_att]
    att_half = fhalf[0, :n_att]
    def_sp = force[2, :n_def]
    def_arm = force[3, :n_def]
    def_half = fhalf[1, :n_def]
    force_arrays_into_nb(state, att_idx, n_att, block_half, att_sp, att_half, att_arm)
    force_arrays_into_nb(state, def_idx, n_def, block_half, def_sp, def_half, def_arm)
    return att_sp, att_half, att_arm, def_sp, def_half, def_arm


@njit(cache=True, _nrt=False, internal=True)
def force_arrays_into_nb(state, idx, n, block_half, out_sp, out_half, out_arm):
    """The resolver's arrays of one side's blocks ``idx[:n]`` (:func:`soe_sim.battle.nb.prepare_battle_nb`)
    into the caller's ``out_sp`` (int64), ``out_half`` (bool: ``block_half``, SoE 7.2) and ``out_arm``
    (int64), their first ``n`` entries."""
    for k in range(n):
        b = idx[k]
        out_sp[k] = state.block_sp[b]
        out_half[k] = block_half[b]
        out_arm[k] = state.block_arm[b]


@njit(cache=True, _nrt=False, internal=True)
def take_losses_nb(state, idx, n, losses):
    """SoE 7.41.5: losses come off the strongest remaining block one SP at a time (ties: lowest
    block index, reading E-B2); a 1-SP block that takes a loss is destroyed.

    Returns the number of SP actually removed. Destroyed blocks have ``block_sp == 0`` and are
    still ``ON_MAP``: the caller decides where they go (force pool, or eliminated for leaders).
    """
    removed = 0
    for _ in range(losses):
        best = -1
        for k in range(n):
            b = idx[k]
            if state.block_sp[b] > 0 and (best < 0 or state.block_sp[b] > state.block_sp[best]):
                best = b
        if best < 0:
            break
        state.block_sp[best] -= 1
        removed += 1
    return removed


@njit(cache=True, _nrt=False, internal=True)
def _count_side_in_area_nb(state, side, area):
    c = 0
    for b in range(state.block_side.shape[0]):
        if state.block_status[b] == STATUS.ON_MAP and state.block_area[b] == area and state.block_side[b] == side:
            c += 1
    return c


@njit(cache=True, _nrt=False, internal=True)
def _enemy_in_area_nb(state, side, area):
    if state.garrison_side[area] == 1 - side:
        return True
    return _count_side_in_area_nb(state, 1 - side, area) > 0


@njit(cache=True, _nrt=True, internal=True)
def resolve_battle_in_state_nb(state, map_arrays, combat_rules, area, block_half, defend, withdraw,
                               att_modifier, def_modifier, att_effect, def_effect, max_blocks,
                               vp_encirclement, vp_leader_killed, vp_leader_captured, out):
    """:func:`resolve_battle_restricted_nb` with no restriction on where a defeated defender may
    retreat (every area :func:`~soe_sim.engine.nb.retreat_targets_nb` offers)."""
    resolve_battle_restricted_nb(state, map_arrays, combat_rules, area, block_half, defend, withdraw,
                                 att_modifier, def_modifier, att_effect, def_effect, max_blocks,
                                 vp_encirclement, vp_leader_killed, vp_leader_captured, out,
                                 np.zeros((0, 0), dtype=np.bool_))


class BattleScratch(NamedTuple):
    """Arrays of one battle's resolution and of the round loop's battle step, allocated once per thread
    (``work.new_game_scratch``) instead of at every battle. ``idx`` int64 (3, n_blocks): attacking blocks,
    defending blocks, attack directions; ``force`` int64 (4, n_blocks): attackers' SP and arm, defenders'
    SP and arm; ``fhalf`` bool (2, n_blocks); ``prep`` int64 (N_PREP,); ``res`` int64 (N_OUT,); ``blocks``
    int64 (2, n_blocks): retreating blocks and their targets; ``area_flags`` bool (3, n_areas): enemy
    areas, retreat goals, allowed areas; ``area_counts`` int32 (2, n_areas) (also :func:`find_battles_scratch_nb`'s
    counts, before each battle); ``edge_blocked`` bool
    (n_links,); ``cand`` int64 (2, n_links + 1): retreat candidates and their distances. For the loop's
    battle step (``game.nb.battles_nb``): ``area_rows`` int64 (4, n_areas) (battle areas, sizes, tied
    areas, the tied battles' size), ``adv`` int64 (n_blocks,), ``eff`` int64 (2, N_EFFECT), ``rec`` int64
    (N_B,), ``opts`` int64 (n_cards + 1,)."""

    idx: np.ndarray
    force: np.ndarray
    fhalf: np.ndarray
    prep: np.ndarray
    res: np.ndarray
    blocks: np.ndarray
    area_flags: np.ndarray
    area_counts: np.ndarray
    edge_blocked: np.ndarray
    cand: np.ndarray
    area_rows: np.ndarray
    adv: np.ndarray
    eff: np.ndarray
    rec: np.ndarray
    opts: np.ndarray


@njit(cache=True, _nrt=True)
def new_battle_scratch_nb(n_blocks, n_areas, n_links, n_cards):
    """A :class:`BattleScratch` for ``n_blocks`` blocks on a map of ``n_areas`` areas and ``n_links``
    adjacency entries, with decks of ``n_cards`` cards."""
    return BattleScratch(np.zeros((3, n_blocks), dtype=np.int64), np.zeros((4, n_blocks), dtype=np.int64),
                         np.zeros((2, n_blocks), dtype=np.bool_), np.zeros(bnb.N_PREP, dtype=np.int64),
                         np.zeros(bnb.N_OUT, dtype=np.int64), np.zeros((2, n_blocks), dtype=np.int64),
                         np.zeros((3, n_areas), dtype=np.bool_), np.zeros((2, n_areas), dtype=np.int32),
                         np.zeros(n_links, dtype=np.bool_), np.zeros((2, n_links + 1), dtype=np.int64),
                         np.zeros((4, n_areas), dtype=np.int64), np.zeros(n_blocks, dtype=np.int64),
                         np.zeros((2, bnb.N_EFFECT), dtype=np.int64), np.zeros(N_B, dtype=np.int64),
                         np.zeros(n_cards + 1, dtype=np.int64))


@njit(cache=True, _nrt=True)
def resolve_battle_restricted_nb(state, map_arrays, combat_rules, area, block_half, defend, withdraw,
                                 att_modifier, def_modifier, att_effect, def_effect, max_blocks,
                                 vp_encirclement, vp_leader_killed, vp_leader_captured, out, nation_ok):
    """Fight the battle in ``area`` and apply every consequence to ``state`` (SoE 7.41–7.44, 6.1, 9.0).

    Parameters
    ----------
    state : GameState
    map_arrays : MapArrays
    combat_rules : CombatRules
    area : int
    block_half : (n_blocks,) bool — forced march / reorganizing this phase (SoE 7.2)
    defend : bool — the defender has a Defend Area order here (SoE 7.2)
    withdraw : int — ``soe_sim.battle.nb.WITHDRAW_*`` for the defender's Withdraw order (SoE 7.2);
        the caller has already moved withdrawing blocks that could leave
    att_modifier, def_modifier : int — combat cards actually added (SoE 7.41.2)
    att_effect, def_effect : (N_EFFECT,) int64 — battle cards (SoE 7.41.1)
    max_blocks : int — stacking limit (SoE 7.33)
    vp_encirclement, vp_leader_killed, vp_leader_captured : int — SoE 7.42, 9.0
    out : (N_B,) int64 — the battle record
    nation_ok : (n_nations, n_areas) bool — where the blocks of each nation may end a retreat (the
        round loop's G15/G16 mask: neutral ground, a capital that cannot be seized, ``max_distance``,
        ``front_restriction``); the defeated defender retreats only into areas every retreating
        block may enter (7.42 "all blocks together"). Shape (0, 0): no restriction.

    The loser retreats (defender: all together towards the shortest clear path to a friendly key
    city, overflowing to the next area; attacker: each block back along its own link), blocks with
    nowhere to go are eliminated permanently with 1 VP each to the opponent (leaders captured: 2).
    Destroyed blocks go to the force pool, destroyed leaders are eliminated (+1 VP). A winning
    attacker keeps every surviving block in the area; sending some back (SoE 7.43) is the round
    loop's ADVANCE decision (:func:`legal_advance_nb`), and phase-end stacking pulls back any excess
    (SoE 7.33).
    """
    resolve_battle_scratch_nb(state, map_arrays, combat_rules, area, block_half, defend, withdraw, att_modifier,
                              def_modifier, att_effect, def_effect, max_blocks, vp_encirclement, vp_leader_killed,
                              vp_leader_captured, out, nation_ok,
                              new_battle_scratch_nb(state.block_side.shape[0], state.control.shape[0],
                                                    map_arrays.adj_indices.shape[0], 0))


@njit(cache=True, _nrt=False, internal=True)
def resolve_battle_scratch_nb(state, map_arrays, combat_rules, area, block_half, defend, withdraw,
                              att_modifier, def_modifier, att_effect, def_effect, max_blocks,
                              vp_encirclement, vp_leader_killed, vp_leader_captured, out, nation_ok, scr):
    """:func:`resolve_battle_restricted_nb` with the caller's :class:`BattleScratch` ``scr`` for its arrays
    (the round loop's: no allocation per battle)."""
    out[:] = 0
    out[B_AREA] = area
    defender = defender_side_nb(state, area)
    attacker = 1 - defender
    out[B_ATTACKER] = attacker
    out[B_DEFENDER] = defender
    nbk = state.block_side.shape[0]
    att_idx = scr.idx[0]
    def_idx = scr.idx[1]
    att_dir = scr.idx[2]
    n_att, n_def, n_support, fortified = battle_inputs_nb(
        state, map_arrays, area, defender, block_half, att_idx, def_idx, att_dir)
    out[B_ATT_BLOCKS] = n_att
    out[B_DEF_BLOCKS] = n_def

    att_sp, att_half, att_arm, def_sp, def_half, def_arm = force_views_nb(state, att_idx, n_att, def_idx, n_def,
                                                                          block_half, scr.force, scr.fhalf)
    garrison = state.garrison_side[area] == defender

    front = map_arrays.front[area]
    holder = 0 if state.initiative_side[front] == attacker else 1
    prep = scr.prep
    bnb.prepare_battle_nb(att_sp, att_half, att_arm, att_dir[:n_att], def_sp, def_half, def_arm,
                          n_support, garrison, defend, fortified, withdraw, att_effect, def_effect,
                          holder, state.initiative_level[front], combat_rules, prep)
    res = scr.res
    bnb.resolve_nb(prep, att_modifier, def_modifier, combat_rules, res)
    out[B_FOUGHT] = prep[bnb.P_FOUGHT]
    out[B_ATT_CV] = res[bnb.O_ATT_CV]
    out[B_DEF_CV] = res[bnb.O_DEF_CV]

    vp_before = state.vp[0]
    # --- losses on the real blocks (SoE 7.41.5; 3.0 garrison first) -----------------------------
    garrison_lost = res[bnb.O_GARRISON_LOST] > 0
    if garrison_lost:
        state.garrison_side[area] = -1
    out[B_GARRISON_LOST] = 1 if garrison_lost else 0
    att_removed = take_losses_nb(state, att_idx, n_att, res[bnb.O_ATT_LOSSES])
    def_removed = take_losses_nb(state, def_idx, n_def, res[bnb.O_DEF_BLOCK_LOSSES])
    out[B_ATT_LOSSES] = att_removed
    out[B_DEF_LOSSES] = def_removed + (1 if garrison_lost else 0)
    for side_k in range(2):
        idx = att_idx if side_k == 0 else def_idx
        n = n_att if side_k == 0 else n_def
        owner = attacker if side_k == 0 else defender
        for k in range(n):
            b = idx[k]
            if state.block_sp[b] > 0:
                continue
            state.block_area[b] = -1
            if state.block_arm[b] == ARM.LEADER:
                # SoE 9.0: leaders destroyed in battle are eliminated permanently, 1 VP.
                state.block_status[b] = STATUS.ELIMINATED_PERMANENT
                out[B_LEADERS_KILLED] += 1
                _score(state, 1 - owner, vp_leader_killed)
            else:
                state.block_status[b] = STATUS.DESTROYED_TO_POOL
            if side_k == 0:
                out[B_ATT_DESTROYED] += 1
            else:
                out[B_DEF_DESTROYED] += 1

    attacker_wins = res[bnb.O_ATTACKER_WINS] == 1
    winner = attacker if attacker_wins else defender
    out[B_WINNER] = winner
    if res[bnb.O_GREAT_VICTORY] != 0 and out[B_FOUGHT] == 1:
        # SoE 7.44: +1 VP to the winner.
        out[B_GREAT_VICTORY] = 1
        _score(state, winner, combat_rules.great_victory_vp)

    # --- initiative (SoE 6.1) ------------------------------------------------------------------
    new_holder = res[bnb.O_INIT_HOLDER]
    state.initiative_side[front] = attacker if new_holder == 0 else defender
    state.initiative_level[front] = res[bnb.O_INIT_LEVEL]

    # --- retreat of the loser (SoE 7.42) -------------------------------------------------------
    n_areas = state.control.shape[0]
    if attacker_wins and out[B_FOUGHT] == 1:
        survivors = scr.blocks[0, :n_def]
        m = 0
        for k in range(n_def):
            b = def_idx[k]
            if state.block_status[b] == STATUS.ON_MAP and state.block_area[b] == area:
                survivors[m] = b
                m += 1
        if m > 0:
            enemy_row = scr.area_flags[0]
            goal = scr.area_flags[1]
            friendly_row = scr.area_counts[0]
            enemy_cnt = scr.area_counts[1]
            enemy_row[:] = False
            goal[:] = False
            friendly_row[:] = 0
            enemy_cnt[:] = 0
            # one pass over the blocks: per area the defender's blocks (_count_side_in_area_nb) and the
            # attacker's (for _enemy_in_area_nb)
            for b in range(nbk):
                a = state.block_area[b]
                if state.block_status[b] == STATUS.ON_MAP and 0 <= a < n_areas:
                    if state.block_side[b] == defender:
                        friendly_row[a] += 1
                    elif state.block_side[b] == 1 - defender:
                        enemy_cnt[a] += 1
            for i in range(n_areas):
                enemy_row[i] = state.garrison_side[i] == 1 - defender or enemy_cnt[i] > 0
                # a friendly key city: one the defender controls now (SoE 1.3: its garrison and/or blocks
                # occupy it; a city both sides occupy keeps its controller, E5), not at the last phase end
                own = friendly_row[i] > 0 or state.garrison_side[i] == defender
                goal[i] = (map_arrays.vp[i] > 0 and i != area and own
                           and (not enemy_row[i] or state.control[i] == defender))
            # SoE 7.42: "may not retreat along a road or rail blocked by enemy blocks": the links
            # the attackers that are still on the map came along (a destroyed attacker blocks nothing)
            edge_blocked = scr.edge_blocked
            edge_blocked[:] = False
            for e in range(map_arrays.adj_indptr[area], map_arrays.adj_indptr[area + 1]):
                j = map_arrays.adj_indices[e]
                for k in range(n_att):
                    if att_dir[k] == j and state.block_status[att_idx[k]] == STATUS.ON_MAP:
                        edge_blocked[e] = True
            n_cand = map_arrays.adj_indptr[area + 1] - map_arrays.adj_indptr[area] + 1
            cand = scr.cand[0, :n_cand]
            cand_d = scr.cand[1, :n_cand]
            target = scr.blocks[1, :m]
            kc = retreat_targets_nb(map_arrays.adj_indptr, map_arrays.adj_indices, map_arrays.adj_bits, edge_blocked,
                                    map_arrays.eastern_link, goal, enemy_row, friendly_row, defender,
                                    area, max_blocks, m, cand, cand_d, target)
            if nation_ok.shape[0] > 0:  # G15, G16: where the retreating blocks may end
                allowed = scr.area_flags[2]
                allowed[:] = True
                for r in range(m):
                    nat = state.block_nation[survivors[r]]
                    for i in range(n_areas):
                        allowed[i] = allowed[i] and nation_ok[nat, i]
                restrict_retreat_nb(map_arrays.eastern_link, allowed, friendly_row, max_blocks, m, False, cand,
                                    kc, target)
            for r in range(m):
                b = survivors[r]
                if target[r] == ENCIRCLED:
                    _eliminate_no_retreat(state, b, out)
                    _score(state, attacker,
                           vp_leader_captured if state.block_arm[b] == ARM.LEADER else vp_encirclement)
                else:
                    state.block_area[b] = target[r]
                    state.block_prev_area[b] = area
    elif not attacker_wins:
        # The attacker goes back along the link each block came by (SoE 7.42).
        counts = scr.area_counts[0]
        counts[:] = 0
        for b in range(nbk):
            if state.block_status[b] == STATUS.ON_MAP and state.block_side[b] == attacker and state.block_area[b] >= 0:
                counts[state.block_area[b]] += 1
        for k in range(n_att):
            b = att_idx[k]
            if state.block_status[b] != STATUS.ON_MAP or state.block_area[b] != area:
                continue
            back = state.block_prev_area[b]
            room = (UNLIMITED if (back >= 0 and map_arrays.eastern_link[back])
                    else max_blocks - (counts[back] if back >= 0 else max_blocks))
            if back < 0 or _enemy_in_area_nb(state, attacker, back) or room <= 0:
                _eliminate_no_retreat(state, b, out)
                _score(state, defender,
                       vp_leader_captured if state.block_arm[b] == ARM.LEADER else vp_encirclement)
            else:
                counts[area] -= 1
                counts[back] += 1
                state.block_area[b] = back
                state.block_prev_area[b] = area

    out[B_VP_DELTA] = state.vp[0] - vp_before


@njit(cache=True, _nrt=False, internal=True)
def _score(state, side, vp):
    # Each VP award moves the single signed track on its own (SoE 7.8: no 0 space).
    for _ in range(vp):
        state.vp[0] = vp_add_nb(state.vp[0], side_sign_nb(side))


@njit(cache=True, _nrt=False, internal=True)
def _eliminate_no_retreat(state, b, out):
    # SoE 7.42 / 9.0: no route of retreat: eliminated permanently (leaders captured).
    if state.block_arm[b] == ARM.LEADER:
        out[B_LEADERS_CAPTURED] += 1
    else:
        out[B_ENCIRCLED] += 1
    state.block_status[b] = STATUS.ELIMINATED_PERMANENT
    state.block_area[b] = -1
    state.block_sp[b] = 0
