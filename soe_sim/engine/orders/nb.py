"""Numba kernels of orders: placement (SoE 7.2, 7.11, 7.71), execution of Forced March / Recon /
Move / Withdraw (7.3, 7.31, 7.32, 7.33), Defend (7.2), Reorganize (7.5), Rail Transport (7.6),
detachments (2.2), per-phase block flags and hidden information.

Readings of ambiguous text: docs/rules.md "Engine: orders and movement" (O1…).

Layout (like :mod:`soe_sim.engine.nb`): every kernel is ``@njit(cache=True)``, takes the
:class:`~soe_sim.engine.state.GameState` ``state``, the :class:`~soe_sim.engine.orders.OrderState`
``orders`` (both updated in place), the :class:`~soe_sim.data.map.MapArrays` ``map_arrays``, the
:class:`~soe_sim.engine.orders.OrderRules` ``orules`` and scalars, and fills caller-allocated
``out`` arrays. Decisions come as ``legal_*_nb`` (fill option rows, return how many) /
``apply_*_nb`` pairs (docs/engine-design.md "Decisions").

Option rows
-----------
* :func:`legal_orders_nb` → ``out_type[k]`` (an order type code, or :data:`NO_ORDER` = "place no
  more orders on this front") and ``out_area[k]`` (area index, ``-1`` for the pass row).
* :func:`legal_moves_nb` → ``out_block[k]``, ``out_dest[k]`` (destination area), ``out_via[k]``
  (the neighbour of the destination the block enters from: its attack direction / supporting
  direction, stored in ``block_prev_area``), ``out_detach[k]`` (SP left behind as a detached
  brigade, 0 = none; SoE 2.2).
* :func:`legal_rail_nb` → ``out_block[k]``, ``out_dest[k]``.
* :func:`legal_reorganize_nb` → ``out_block[k]``.
Rows are in ascending (block, destination, via, detach) order.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from soe_sim._jit import njit
from soe_sim.data.enums import ARM, LINK, UnitClass
from soe_sim.data.map import BITSET_WORDS
from soe_sim.engine.nb import (
    N_SUPPLY_SLOTS,
    UNREACHED,
    SupplySearchCache,
    _append_areas_nb,
    _lowest_bit_nb,
    area_set_nb,
    distances_across_nb,
    enemy_presence_nb,
    enterable_nb,
    reach_into_nb,
    reach_sets_into_nb,
    reachable_nb,
    new_supply_search_cache_nb,
    reverse_reach_sets_nb,
    restrict_retreat_nb,
    retreat_targets_into_nb,
    side_depots_into_nb,
    side_depots_nb,
    side_sign_nb,
    vias_sets_nb,
    vp_add_nb,
)
from soe_sim.engine.state import STATUS

# --- order types (SoE 7.2; execution order of 7.3) ---------------------------------------------
FORCED_MARCH_TO = 0
FORCED_MARCH_OUT = 1
RECON = 2
MOVE_TO = 3
MOVE_OUT = 4
WITHDRAW = 5
DEFEND = 6
REORGANIZE = 7
RAIL_TRANSPORT = 8
N_ORDER_TYPES = 9
NO_ORDER = -1  # legal_orders_nb pass row / place_order_nb result for a pass

# --- order status -------------------------------------------------------------------------------
PLACED = 0
EXECUTED = 1
REMOVED = 2  # unfulfilled (SoE 7.3), returned to the pool


class _OrderTypeC(NamedTuple):
    FORCED_MARCH_TO: int = FORCED_MARCH_TO
    FORCED_MARCH_OUT: int = FORCED_MARCH_OUT
    RECON: int = RECON
    MOVE_TO: int = MOVE_TO
    MOVE_OUT: int = MOVE_OUT
    WITHDRAW: int = WITHDRAW
    DEFEND: int = DEFEND
    REORGANIZE: int = REORGANIZE
    RAIL_TRANSPORT: int = RAIL_TRANSPORT


class _OrderStatusC(NamedTuple):
    PLACED: int = PLACED
    EXECUTED: int = EXECUTED
    REMOVED: int = REMOVED


ORDER = _OrderTypeC()
"""Numba mirror of :class:`~soe_sim.engine.orders.OrderType`."""
ORDER_STATUS = _OrderStatusC()
"""Numba mirror of :class:`~soe_sim.engine.orders.OrderStatus`."""

# apply_move_nb out_info columns
MI_PINNED = 0  # enemy block pinned by this move (-1 none; SoE 7.32)
MI_BRIGADE = 1  # brigade detached by this move (-1 none; SoE 2.2)
N_MOVE_INFO = 2

# execute_withdraw_nb out_info columns
WI_MOVED = 0  # blocks that withdrew
WI_LOSS_BLOCK = 1  # block that lost the withdrawal SP (-1 none)
WI_DESTROYED = 2  # 1 if that loss destroyed it
WI_VP = 3  # signed VP change (a leader destroyed; + Polish), already applied to state.vp
N_WITHDRAW_INFO = 4

# withdraw modes (same codes as soe_sim.battle.nb.WITHDRAW_*)
WD_NONE = 0
WD_OK = 1
WD_BLOCKED = 2

REACH_SET_DEPTH = 4  # PlacementTables.reach_bits: area sets of movement distances 1..4 (larger allowances walk)

_DIVISION = int(UnitClass.DIVISION)
_BRIGADE = int(UnitClass.BRIGADE)


# =================================================================================================
# small helpers


@njit(cache=True, _nrt=False, internal=True)
def is_move_type_nb(t):
    return t == FORCED_MARCH_TO or t == FORCED_MARCH_OUT or t == MOVE_TO or t == MOVE_OUT


@njit(cache=True, _nrt=False, internal=True)
def is_forced_nb(t):
    return t == FORCED_MARCH_TO or t == FORCED_MARCH_OUT


@njit(cache=True, _nrt=False, internal=True)
def is_to_type_nb(t):
    return t == FORCED_MARCH_TO or t == MOVE_TO


@njit(cache=True, _nrt=False, internal=True)
def is_area_bound_nb(t):
    """Orders that need a block to stay in their area until after the moves (O7)."""
    return t == WITHDRAW or t == DEFEND or t == REORGANIZE or t == RAIL_TRANSPORT


@njit(cache=True, _nrt=False)
def allowance_nb(orules, arm, forced):
    """Areas a block may move (SoE 2.0, 7.2, 7.31, 9.0: leaders move as cavalry)."""
    if arm == ARM.INFANTRY:
        return orules.forced_infantry if forced else orules.move_infantry
    if arm == ARM.CAVALRY:
        return orules.forced_cavalry if forced else orules.move_cavalry
    return orules.forced_leader if forced else orules.move_leader


@njit(cache=True, _nrt=False)
def presence_nb(state, out_cnt, out_enemy):
    enemy_presence_nb(state.block_side, state.block_area, state.block_status, state.garrison_side,
                      out_cnt, out_enemy)


@njit(cache=True, _nrt=False)
def edge_blocked_nb(state, map_arrays, side, cnt, out):
    """Links closed to ``side`` by incoming enemy blocks (SoE 7.31, 7.32; reading O5).

    An enemy block that entered an area ``u`` holding the garrison of ``side`` or a block of
    ``side`` that was there before it (began the phase there or arrived earlier: a smaller
    ``block_arrival``) stands on the road from ``block_prev_area``: that link is closed in both
    directions. A block that entered ``u`` while no block of ``side`` was there is inside the area,
    not on the road (7.31: only blocks moving into an *enemy occupied* area stop on the road), even
    when ``side`` arrives after it. ``out`` (n_edges,) bool, indexed like ``adj_indices``. Returns how
    many entries were set from the entered side (0: no link is closed).
    """
    ip = map_arrays.adj_indptr
    ix = map_arrays.adj_indices
    out[:] = False
    closed = 0
    prev = state.block_prev_area
    nbk = prev.shape[0]
    for b in range(nbk):
        v = prev[b]
        if v < 0:  # first: most blocks have not moved this phase
            continue
        if state.block_status[b] != STATUS.ON_MAP or state.block_side[b] != 1 - side:
            continue
        u = state.block_area[b]
        if u < 0 or u == v:
            continue
        if state.garrison_side[u] != side:
            if cnt[side, u] == 0:
                continue
            arrived = state.block_arrival[b]
            held = False
            for r in range(nbk):
                if (state.block_area[r] == u and state.block_side[r] == side and state.block_status[r] == STATUS.ON_MAP
                        and state.block_arrival[r] < arrived):
                    held = True
                    break
            if not held:
                continue
        for e in range(ip[u], ip[u + 1]):
            if ix[e] == v:
                closed += 1
                out[e] = True
        for e in range(ip[v], ip[v + 1]):
            if ix[e] == u:
                out[e] = True
    return closed


@njit(cache=True, _nrt=False, internal=True)
def _pool_brigade(state, b, sp):
    """A force-pool brigade of ``b``'s side, nation and arm that can hold ``sp`` (SoE 2.2; O10)."""
    for r in range(state.block_side.shape[0]):
        st = state.block_status[r]
        if st != STATUS.FORCE_POOL and st != STATUS.DESTROYED_TO_POOL:
            continue
        if (state.block_class[r] == _BRIGADE and state.block_side[r] == state.block_side[b]
                and state.block_nation[r] == state.block_nation[b] and state.block_arm[r] == state.block_arm[b]
                and state.block_max_sp[r] >= sp):
            return r
    return -1


@njit(cache=True, _nrt=True, internal=True)
def max_detach_nb(state, orules, b):
    """Largest detachment a block may leave behind (0: none; SoE 2.2)."""
    return _max_detach_arr(state.block_side, state.block_class, state.block_nation, state.block_arm,
                           state.block_status, state.block_sp, state.block_max_sp, orules.detachments,
                           orules.detachment_max_sp, b)


@njit(cache=True, _nrt=False, internal=True)
def _max_detach_arr(block_side, block_class, block_nation, block_arm, block_status, block_sp, block_max_sp,
                    detachments, detachment_max_sp, b):
    """:func:`max_detach_nb` on the state's arrays: one pass over the force pool for the largest
    brigade that fits (same result as trying ``m = max, max - 1, … 1`` with :func:`_pool_brigade`)."""
    m = _detach_cap_nb(block_class, block_sp, detachments, detachment_max_sp, b)
    if m <= 0:
        return 0
    return _pool_brigade_sp_nb(block_side, block_class, block_nation, block_arm, block_status, block_max_sp, m, b)


@njit(cache=True, _nrt=False, internal=True)
def _detach_cap_nb(block_class, block_sp, detachments, detachment_max_sp, b):
    """The most SP block ``b`` could leave behind as a detachment, whatever the force pool holds (SoE 2.2: a
    division keeps at least 1 SP; 0 when detachments are off or ``b`` is no division)."""
    if not detachments or block_class[b] != _DIVISION:
        return 0
    return min(detachment_max_sp, block_sp[b] - 1)


@njit(cache=True, _nrt=False, internal=True)
def _pool_brigade_sp_nb(block_side, block_class, block_nation, block_arm, block_status, block_max_sp, cap, b):
    """The largest ``min(cap, max SP)`` of a force-pool brigade of ``b``'s side, nation and arm (0: none). With
    ``cap`` = ``detachment_max_sp`` it depends on the side, nation and arm only, and :func:`_max_detach_arr` of a
    division of them is ``min(its SP - 1, this)`` (SoE 2.2)."""
    best = 0
    for r in range(block_side.shape[0]):
        st = block_status[r]
        if st != STATUS.FORCE_POOL and st != STATUS.DESTROYED_TO_POOL:
            continue
        if (block_class[r] == _BRIGADE and block_side[r] == block_side[b]
                and block_nation[r] == block_nation[b] and block_arm[r] == block_arm[b]):
            best = max(best, min(cap, block_max_sp[r]))
            if best >= cap:
                break
    return best


# =================================================================================================
# phase reset, hidden information, battle helpers


@njit(cache=True, _nrt=False)
def reset_phase_nb(state, orders, keep_seen):
    """Start of an operation phase (SoE 7.0): no orders, cleared block flags, every block's
    ``block_prev_area = -1`` and ``block_arrival = 0``. Each side sees its own blocks; enemy blocks
    stay seen only with ``keep_seen`` (reading O11)."""
    orders.n_orders[0] = 0
    orders.arrival[0] = 0
    orders.order_side[:] = -1
    orders.order_front[:] = -1
    orders.order_type[:] = NO_ORDER
    orders.order_area[:] = -1
    orders.order_status[:] = REMOVED
    orders.order_executed[:] = 0
    orders.order_block[:] = -1
    orders.pool_used[:, :] = 0
    orders.placed[:, :] = 0
    orders.recon_placed[:, :] = 0
    nbk = state.block_side.shape[0]
    for b in range(nbk):
        state.block_prev_area[b] = -1
        state.block_arrival[b] = 0
        orders.executed[b] = False
        orders.block_order[b] = -1
        orders.forced_march[b] = False
        orders.reorganizing[b] = False
        orders.pinned[b] = False
        orders.moved[b] = False
        orders.rail_moved[b] = False
        orders.fought[b] = False
        orders.detached[b] = False
        s = state.block_side[b]
        orders.seen[s, b] = True
        if not keep_seen:
            orders.seen[1 - s, b] = False


@njit(cache=True, _nrt=False, internal=True)
def mark_battle_nb(state, orders, area):
    """Call before resolving the battle in ``area``: its blocks have fought (no rail transport
    afterwards, SoE 7.6) and are revealed to both sides (SoE 7.41.3)."""
    for b in range(state.block_side.shape[0]):
        if state.block_status[b] == STATUS.ON_MAP and state.block_area[b] == area:
            orders.fought[b] = True
            orders.seen[0, b] = True
            orders.seen[1, b] = True


@njit(cache=True, _nrt=False)
def block_half_nb(orders, out):
    """``out[b]``: block fights at half strength (forced march or reorganizing, SoE 7.2)."""
    for b in range(out.shape[0]):
        out[b] = orders.forced_march[b] or orders.reorganizing[b]


# =================================================================================================
# placement (SoE 7.2, 7.11, 7.71)


@njit(cache=True, inline="always")
def use_sets_nb(map_arrays):
    """The map has area sets (``MapArrays.adj_bits``) for the searches (docs/engine-design.md "Area
    sets")."""
    return map_arrays.adj_bits.shape[1] == BITSET_WORDS


@njit(cache=True, inline="always")
def _cap_nb(b_area, b_row, b_allow, b_mask, dist_r, t, i, b):
    """Could block ``b`` execute an order of type ``t`` on area ``i`` (placement time)?

    Tables precomputed per block by :func:`legal_orders_nb`: ``b_area[b]`` its area; ``b_row[b]``
    the row of ``dist_r`` holding the movement distances from that area; ``b_allow[b, f]`` its Move
    To (``f`` = 0) / Forced March To (``f`` = 1) allowance, -1 when not in supply at the phase start
    (SoE 7.2); ``b_mask[b]`` bit ``t``: it could execute an order of type ``t`` placed on its own
    area (Forced March Out: in supply and a destination; Move Out: a destination; Withdraw, Defend;
    Reorganize: in supply and below its maximum SP; Rail Transport: in supply and a rail move).
    Written with a single exit: a helper with many exits and array arguments keeps its reference
    counting when inlined, which costs ~10 ns per array per call in the matching loops."""
    if t == FORCED_MARCH_TO or t == MOVE_TO:
        d = dist_r[b_row[b], i]
        ok = d > 0 and d <= b_allow[b, 1 if t == FORCED_MARCH_TO else 0]
    else:
        ok = b_area[b] == i and ((b_mask[b] >> t) & 1) != 0
    return ok


@njit(cache=True, inline="always")
def _free_capable_block_nb(b_area, b_row, b_allow, b_mask, dist_r, t, i, blocks, n_blocks_side, match_block):
    """The first of the side's blocks that no placed order holds and that could execute an order of type
    ``t`` on area ``i`` (:func:`_cap_nb`), or -1."""
    found = -1
    for q in range(n_blocks_side):
        b = blocks[q]
        if match_block[b] < 0 and _cap_nb(b_area, b_row, b_allow, b_mask, dist_r, t, i, b):
            found = b
            break
    return found


@njit(cache=True, _nrt=False, internal=True)
def _augment(b_area, b_row, b_allow, b_mask, dist_r, slot_type, slot_area, start_slot, match_block,
             match_slot, blocks, n_blocks_side, visited, from_slot, queue):
    """Find an augmenting path from order ``start_slot`` (bipartite matching orders ↔ blocks; each
    placed order needs its own executing block, SoE 7.2 "Multiple Orders", reading O2)."""
    # fast path: a capable free block
    b = _free_capable_block_nb(b_area, b_row, b_allow, b_mask, dist_r, slot_type[start_slot], slot_area[start_slot],
                               blocks, n_blocks_side, match_block)
    if b >= 0:
        match_block[b] = start_slot
        match_slot[start_slot] = b
        return True
    for q in range(n_blocks_side):
        visited[blocks[q]] = False
    queue[0] = start_slot
    head = 0
    tail = 1
    while head < tail:
        o = queue[head]
        head += 1
        to = slot_type[o]
        io = slot_area[o]
        for q in range(n_blocks_side):
            b = blocks[q]
            if visited[b]:
                continue
            if not _cap_nb(b_area, b_row, b_allow, b_mask, dist_r, to, io, b):
                continue
            visited[b] = True
            from_slot[b] = o
            if match_block[b] < 0:
                cur = b
                while True:
                    o2 = from_slot[cur]
                    prev = match_slot[o2]
                    match_slot[o2] = cur
                    match_block[cur] = o2
                    if o2 == start_slot:
                        return True
                    cur = prev
            elif tail < queue.shape[0]:
                queue[tail] = match_block[b]
                tail += 1
    return False


class PlacementTables(NamedTuple):
    """Scratch of :func:`legal_orders_nb` for one side (:func:`new_placement_tables_nb`).

    The *static* part (:func:`placement_tables_nb`) depends only on the position, which does not
    change while orders are placed (SoE 7.2 places markers only): block counts and enemy areas
    (``cnt``, ``enemy``), closed links ``eb``, the side's blocks (``blocks``, ``meta[M_NBS]``) and
    their tables ``b_area`` / ``b_row`` / ``b_allow`` / ``b_mask`` (see :func:`_cap_nb`), the
    areas holding them (``frow``, ``fareas``, ``meta[M_NF]``), movement distances ``dist_r`` /
    ``reach_r`` / ``reach_k`` from those areas, ``has_dest``, ``has_rail`` and the Recon distances
    ``recon_d``, and the areas of each front in index order (``front_areas[front_ptr[f]:front_ptr[f +
    1]]``: the rows of a front are listed from them) and the areas among them where a Recon may go
    (``recon_areas[recon_ptr[f]:recon_ptr[f + 1]]``: within range, enterable), and on a map with area sets
    (``MapArrays.adj_bits``) with no link closed to the side (``meta[M_SETS]``) ``reach_bits[r, d]``
    the areas within ``d`` links of row ``r``'s area (``d`` up to ``REACH_SET_DEPTH``; ``cap_bits``
    scratch), on a map with area sets each front's areas as a set (``front_bits[f]``; ``cand_bits`` and
    ``cand_areas`` scratch), the supply searches of the rail test (``supply``, a
    :class:`~soe_sim.engine.nb.SupplySearchCache`: in a game loop the one every kernel shares), and per
    distance row its blocks (``row_blocks[row_ptr[r]:row_ptr[r + 1]]``), their largest
    allowances ``row_allow_all`` and the union of their masks ``row_mask_all`` (``row_mask`` and ``row_allow``
    scratch). The game loop computes it once per side per
    placement step and then only runs the
    *dynamic* part (:func:`legal_orders_from_tables_nb`: the matching of the orders already placed
    and the rows), which uses the remaining arrays as scratch.
    """

    cnt: np.ndarray
    enemy: np.ndarray
    eb: np.ndarray
    frow: np.ndarray
    fareas: np.ndarray
    depth: np.ndarray
    blocks: np.ndarray
    b_area: np.ndarray
    b_row: np.ndarray
    b_allow: np.ndarray
    b_mask: np.ndarray
    dist_r: np.ndarray
    reach_r: np.ndarray
    reach_k: np.ndarray
    has_dest: np.ndarray
    has_rail: np.ndarray
    recon_d: np.ndarray
    queue: np.ndarray
    src_row: np.ndarray
    depot_row: np.ndarray
    depot_dist_row: np.ndarray
    supply: SupplySearchCache
    meta: np.ndarray
    slot_type: np.ndarray
    slot_area: np.ndarray
    visited: np.ndarray
    from_slot: np.ndarray
    aug_queue: np.ndarray
    match_block: np.ndarray
    match_slot: np.ndarray
    movable_slot: np.ndarray
    same: np.ndarray
    closed_mask: np.ndarray
    cap_mask: np.ndarray
    row_allow: np.ndarray
    front_areas: np.ndarray
    front_ptr: np.ndarray
    recon_areas: np.ndarray
    recon_ptr: np.ndarray
    reach_bits: np.ndarray
    cap_bits: np.ndarray
    row_allow_all: np.ndarray
    row_mask_all: np.ndarray
    row_mask: np.ndarray
    row_ptr: np.ndarray
    row_blocks: np.ndarray
    front_bits: np.ndarray
    cand_bits: np.ndarray
    cand_areas: np.ndarray


M_NF = 0  # PlacementTables.meta: areas holding the side's blocks
M_NBS = 1  # the side's blocks on the map
M_SETS = 2  # 1: reach_bits holds the rows' reach (area sets, no closed link), else the rows are walked
M_MATCHED = 3  # slots of legal_orders_from_tables_nb's matching kept from its last call on these tables
N_META = 4


@njit(cache=True, _nrt=True)
def new_placement_tables_nb(n_blocks, n_areas, n_edges, order_capacity):
    """An empty :class:`PlacementTables` (allocated once per game and reused)."""
    n = n_areas
    nbk = n_blocks
    return PlacementTables(
        np.zeros((2, n), dtype=np.int32), np.zeros((2, n), dtype=np.bool_), np.zeros(n_edges, dtype=np.bool_),
        np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64),
        np.zeros(nbk, dtype=np.int64), np.full(nbk, -1, dtype=np.int64), np.zeros(nbk, dtype=np.int64),
        np.full((nbk, 2), -1, dtype=np.int64), np.zeros(nbk, dtype=np.int64),
        np.full((n, n), UNREACHED, dtype=np.int32), np.zeros((n, n), dtype=np.int32), np.zeros(n, dtype=np.int64),
        np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.bool_), np.full(n, UNREACHED, dtype=np.int32),
        np.zeros(n, dtype=np.int32), np.zeros(n, dtype=np.int32), np.zeros(n, dtype=np.bool_),
        np.zeros(n, dtype=np.int32), new_supply_search_cache_nb(n, N_SUPPLY_SLOTS), np.zeros(N_META, dtype=np.int64),
        np.zeros(order_capacity + 1, dtype=np.int64), np.zeros(order_capacity + 1, dtype=np.int64),
        np.zeros(nbk, dtype=np.bool_), np.full(nbk, -1, dtype=np.int64), np.zeros(order_capacity + 2, dtype=np.int64),
        np.full(nbk, -1, dtype=np.int64), np.full(order_capacity + 1, -1, dtype=np.int64),
        np.zeros(order_capacity + 1, dtype=np.bool_), np.zeros((N_ORDER_TYPES, n), dtype=np.int32),
        np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), np.zeros((max(n, 1), 2), dtype=np.int64),
        np.zeros(n, dtype=np.int64), np.zeros(n + 2, dtype=np.int64),
        np.zeros(n, dtype=np.int64), np.zeros(n + 2, dtype=np.int64),
        np.zeros((n, REACH_SET_DEPTH + 1, BITSET_WORDS), dtype=np.uint64), np.zeros((2, BITSET_WORDS), dtype=np.uint64),
        np.zeros((max(n, 1), 2), dtype=np.int64), np.zeros(max(n, 1), dtype=np.int64),
        np.zeros(max(n, 1), dtype=np.int64), np.zeros(max(n, 1) + 1, dtype=np.int64), np.zeros(nbk, dtype=np.int64),
        np.zeros((n + 1, BITSET_WORDS), dtype=np.uint64), np.zeros(BITSET_WORDS, dtype=np.uint64),
        np.zeros(n, dtype=np.int64))


@njit(cache=True, _nrt=False)
def placement_tables_nb(state, map_arrays, orules, side, tabs):
    """Fill the static part of ``tabs`` (:class:`PlacementTables`) for ``side`` from the position.

    Every table is computed in full (distances for Move To / Forced March To, rail, Recon), whatever
    the pool still allows: :func:`legal_orders_from_tables_nb` reads a table only for the types it
    may offer or that a placed order needs, so the rows are those of a computation restricted to them.
    """
    n = map_arrays.front.shape[0]
    ip = map_arrays.adj_indptr
    ix = map_arrays.adj_indices
    el = map_arrays.eastern_link
    nbk = state.block_side.shape[0]
    # the areas of each front, ascending (a counting sort on map_arrays.front; fronts >= n: none)
    fr = map_arrays.front
    front_ptr = tabs.front_ptr
    for f in range(front_ptr.shape[0]):
        front_ptr[f] = 0
    for a in range(n):
        if 0 <= fr[a] < n:
            front_ptr[fr[a] + 2] += 1
    for f in range(2, front_ptr.shape[0]):
        front_ptr[f] += front_ptr[f - 1]
    for a in range(n):
        if 0 <= fr[a] < n:
            tabs.front_areas[front_ptr[fr[a] + 1]] = a
            front_ptr[fr[a] + 1] += 1
    if use_sets_nb(map_arrays):
        front_bits = tabs.front_bits
        for f in range(n):
            if front_ptr[f + 1] > front_ptr[f]:
                for w in range(BITSET_WORDS):
                    front_bits[f, w] = 0
                for q in range(front_ptr[f], front_ptr[f + 1]):
                    a = tabs.front_areas[q]
                    front_bits[f, a >> 6] |= np.uint64(1) << np.uint64(a & 63)
    cnt = tabs.cnt
    enemy = tabs.enemy
    presence_nb(state, cnt, enemy)
    enemy_row = enemy[side]
    eb = tabs.eb
    n_closed = edge_blocked_nb(state, map_arrays, side, cnt, eb)

    # the side's blocks and the areas holding them (one distance row per area)
    frow = tabs.frow
    fareas = tabs.fareas
    nf = 0
    for a in range(n):
        frow[a] = -1
        if cnt[side, a] > 0:
            frow[a] = nf
            fareas[nf] = a
            nf += 1
    nr = max(nf, 1)
    depth = tabs.depth  # BFS depth per row: the largest allowance used there
    for r in range(nr):
        depth[r] = 0
    blocks = tabs.blocks
    nbs = 0
    b_area = tabs.b_area
    b_row = tabs.b_row
    b_allow = tabs.b_allow
    b_mask = tabs.b_mask
    any_sup = False
    for b in range(nbk):
        b_area[b] = -1
        b_row[b] = 0
        b_allow[b, 0] = -1
        b_allow[b, 1] = -1
        b_mask[b] = 0
        if state.block_status[b] == STATUS.ON_MAP and state.block_side[b] == side and state.block_area[b] >= 0:
            blocks[nbs] = b
            nbs += 1
            a = state.block_area[b]
            b_area[b] = a
            r = frow[a]
            b_row[b] = r
            if state.block_in_supply[b]:
                any_sup = True
                arm = state.block_arm[b]
                b_allow[b, 0] = allowance_nb(orules, arm, False)
                b_allow[b, 1] = allowance_nb(orules, arm, True)
                depth[r] = max(depth[r], b_allow[b, 0], b_allow[b, 1])
    tabs.meta[M_NF] = nf
    tabs.meta[M_NBS] = nbs
    tabs.meta[M_MATCHED] = 0  # new tables: no matching to extend

    # movement distances (SoE 7.31) from every area with blocks that may Move To / Forced March
    # To, up to their largest allowance (exact below it; reach_r[r, :reach_k[r]]: the areas
    # reached, BFS order, the start first)
    dist_r = tabs.dist_r
    reach_r = tabs.reach_r
    reach_k = tabs.reach_k
    for r in range(nr):
        for i in range(n):
            dist_r[r, i] = UNREACHED
        reach_k[r] = 0
    # (on a map with area sets and no closed link, the search runs on the sets and also leaves the
    # areas within each distance in reach_bits, which legal_orders_from_tables_nb then reads:
    # meta[M_SETS]; else it walks the rows)
    sets = use_sets_nb(map_arrays) and n_closed == 0
    tabs.meta[M_SETS] = 1 if sets else 0
    enemy_bits = tabs.cap_bits[0]  # scratch until legal_orders_from_tables_nb
    if sets:
        area_set_nb(enemy_row, enemy_bits)
    for r in range(nf):
        if depth[r] > 0:
            if sets:
                reach_k[r] = reach_sets_into_nb(map_arrays.adj_bits, enemy_bits, side, fareas[r], depth[r], dist_r[r],
                                                reach_r[r], tabs.reach_bits[r])
            else:
                reach_k[r] = reach_into_nb(ip, ix, map_arrays.adj_kind, eb, el, enemy_row, side, fareas[r], depth[r],
                                           False, dist_r[r], 0, dist_r[r], reach_r[r])
    # Move Out / Forced March Out need a destination: an open link to an enterable neighbour
    max_allow = max(orules.forced_infantry, orules.forced_cavalry, orules.forced_leader)
    has_dest = tabs.has_dest
    has_dest[:] = False
    if max_allow >= 1:
        for r in range(nf):
            a = fareas[r]
            for e in range(ip[a], ip[a + 1]):
                v = ix[e]
                if v != a and not eb[e] and enterable_nb(el, side, v):
                    has_dest[a] = True
                    break
    # rail transport (SoE 7.6): supply depots now; a rail move exists iff a first rail link can be taken
    has_rail = tabs.has_rail
    has_rail[:] = False
    if any_sup and orules.rail_max_areas >= 1:
        dd = tabs.depot_dist_row
        side_depots_into_nb(ip, ix, map_arrays.adj_bits, el, map_arrays.supply_source, state.supply_base,
                            map_arrays.garrison, enemy, side, tabs.src_row, tabs.depot_row, dd, tabs.supply)
        for r in range(nf):
            a = fareas[r]
            for e in range(ip[a], ip[a + 1]):
                v = ix[e]
                if v == a or not enterable_nb(el, side, v):
                    continue
                if (map_arrays.adj_kind[e] & LINK.RAIL) == 0 or enemy_row[v]:
                    continue
                d = dd[v]
                if d == UNREACHED or d > orules.rail_depot_range:
                    continue
                has_rail[a] = True
                break
    # recon range (SoE 7.2: "within a range of 3 areas (even across enemy blocks)")
    recon_d = tabs.recon_d
    if use_sets_nb(map_arrays):
        distances_across_nb(map_arrays.adj_bits, cnt[side], side, orules.recon_range, recon_d)
    else:
        recon_d[:] = UNREACHED
        queue = tabs.queue
        head = 0
        tail = 0
        for a in range(n):
            if cnt[side, a] > 0:
                recon_d[a] = 0
                queue[tail] = a
                tail += 1
        while head < tail:
            u = queue[head]
            head += 1
            if recon_d[u] >= orules.recon_range:
                continue
            for e in range(ip[u], ip[u + 1]):
                v = ix[e]
                if recon_d[v] == UNREACHED and enterable_nb(el, side, v):
                    recon_d[v] = recon_d[u] + 1
                    queue[tail] = v
                    tail += 1
    # the areas of each front where a Recon may go, in the order of front_areas (their Recon rows, whichever
    # are not closed when the rows are listed)
    recon_ptr = tabs.recon_ptr
    k = 0
    for f in range(front_ptr.shape[0] - 1):
        recon_ptr[f] = k
        for q in range(front_ptr[f], front_ptr[f + 1]):
            i = tabs.front_areas[q]
            if recon_d[i] != UNREACHED and recon_d[i] <= orules.recon_range and enterable_nb(el, side, i):
                tabs.recon_areas[k] = i
                k += 1
    recon_ptr[front_ptr.shape[0] - 1] = k

    # own-area capabilities per block (see _cap_nb)
    for q in range(nbs):
        b = blocks[q]
        a = b_area[b]
        sup = b_allow[b, 0] >= 0
        m = (1 << WITHDRAW) | (1 << DEFEND)
        if has_dest[a]:
            m |= 1 << MOVE_OUT
            if sup:
                m |= 1 << FORCED_MARCH_OUT
        if sup and state.block_sp[b] < state.block_max_sp[b]:
            m |= 1 << REORGANIZE
        if sup and has_rail[a]:
            m |= 1 << RAIL_TRANSPORT
        b_mask[b] = m
    # per distance row: the largest allowances and the union of the masks of all its blocks, and its blocks
    # (row_blocks[row_ptr[r]:row_ptr[r + 1]]), for legal_orders_from_tables_nb's rows of the free blocks
    row_allow_all = tabs.row_allow_all
    row_mask_all = tabs.row_mask_all
    row_ptr = tabs.row_ptr
    for r in range(nr + 1):
        row_ptr[r] = 0
    for r in range(nr):
        row_allow_all[r, 0] = -1
        row_allow_all[r, 1] = -1
        row_mask_all[r] = 0
    for q in range(nbs):
        b = blocks[q]
        r = b_row[b]
        row_allow_all[r, 0] = max(row_allow_all[r, 0], b_allow[b, 0])
        row_allow_all[r, 1] = max(row_allow_all[r, 1], b_allow[b, 1])
        row_mask_all[r] |= b_mask[b]
        row_ptr[r + 1] += 1
    for r in range(nr):
        row_ptr[r + 1] += row_ptr[r]
    for q in range(nbs):  # each row's blocks, ascending: row_ptr[r] runs ahead as they are placed, then back
        b = blocks[q]
        r = b_row[b]
        tabs.row_blocks[row_ptr[r]] = b
        row_ptr[r] += 1
    for r in range(nr, 0, -1):
        row_ptr[r] = row_ptr[r - 1]
    row_ptr[0] = 0


@njit(cache=True, _nrt=False)
def legal_orders_from_tables_nb(orders, map_arrays, orules, side, front, orders_allowed, tabs, out_type, out_area,
                                closed_row=None):
    """The rows of :func:`legal_orders_nb` from ``tabs`` (:class:`PlacementTables` of ``side``, static
    part filled by :func:`placement_tables_nb` on the current position).

    ``closed_row`` (bool (n_areas,), optional): areas closed to the side (G15, G16; a row of the game
    loop's ``EventWork.closed``). Their Move To / Forced March To rows are left out, as if removed from the
    full listing: the pass row and the ``out_type.shape[0]`` cap depend on the rows before that removal."""
    n = map_arrays.front.shape[0]
    # EatS VI (reading V1): ``free_recon_per_front`` Recon-only slots on top of ``orders_allowed``,
    # filled by the side's Recons first (SoE: none, the Recon is one of the orders).
    free_used = min(orders.recon_placed[side, front], orules.free_recon_per_front)
    general_used = orders.placed[side, front] - free_used
    if ((general_used >= orders_allowed and free_used >= orules.free_recon_per_front)
            or orders.n_orders[0] >= orders.order_type.shape[0]):
        return 0
    fr = map_arrays.front
    nbk = tabs.b_area.shape[0]
    n_ord = orders.n_orders[0]
    nbs = tabs.meta[M_NBS]
    blocks = tabs.blocks
    b_area = tabs.b_area
    b_row = tabs.b_row
    b_allow = tabs.b_allow
    b_mask = tabs.b_mask
    dist_r = tabs.dist_r
    reach_r = tabs.reach_r
    reach_k = tabs.reach_k

    # matching of the orders already placed (each keeps its own executing block, O2). The slots are
    # matched one by one in order id order, so the matching of a list of slots is that of its first
    # ``meta[M_MATCHED]`` slots (kept from the last call on these tables) extended by the others: a
    # placement step's next call augments only the orders placed since (a slot changed or gone: all again)
    slot_type = tabs.slot_type
    slot_area = tabs.slot_area
    matched = tabs.meta[M_MATCHED]
    ns = 0
    for o in range(n_ord):
        if (orders.order_side[o] == side and orders.order_status[o] == PLACED
                and orders.order_type[o] != RECON):
            t = orders.order_type[o]
            a = orders.order_area[o]
            if ns < matched and (slot_type[ns] != t or slot_area[ns] != a):
                matched = 0
            slot_type[ns] = t
            slot_area[ns] = a
            ns += 1
    if ns < matched:
        matched = 0
    visited = tabs.visited
    from_slot = tabs.from_slot
    aug_queue = tabs.aug_queue[:n_ord + 2]
    match_block = tabs.match_block
    match_slot = tabs.match_slot
    movable_slot = tabs.movable_slot
    if matched == 0:
        for b in range(nbk):
            match_block[b] = -1
    for o in range(matched, n_ord + 1):
        match_slot[o] = -1
    for o in range(n_ord + 1):
        movable_slot[o] = False
    for o in range(matched, ns):
        _augment(b_area, b_row, b_allow, b_mask, dist_r, slot_type, slot_area, o, match_block, match_slot,
                 blocks, nbs, visited, from_slot, aug_queue)
    tabs.meta[M_MATCHED] = ns
    # slots that can hand their block over: an alternating path leads from them to a free block
    # (a new order can then be matched through a capable block they hold). The least set closed
    # under "a capable block other than its own is free or held by a movable slot": first the slots
    # with a capable free block, then, from each slot found (a stack in ``aug_queue``, free after
    # the matching), the slots capable of the block it holds — each slot's own block is the only
    # block a movable slot adds, so no slot scans the blocks twice.
    n_stack = 0
    for o in range(ns):
        if (match_slot[o] >= 0 and _free_capable_block_nb(b_area, b_row, b_allow, b_mask, dist_r, slot_type[o],
                                                          slot_area[o], blocks, nbs, match_block) >= 0):
            movable_slot[o] = True
            aug_queue[n_stack] = o
            n_stack += 1
    while n_stack > 0:
        n_stack -= 1
        held = match_slot[aug_queue[n_stack]]
        for o in range(ns):
            if (not movable_slot[o] and match_slot[o] >= 0
                    and _cap_nb(b_area, b_row, b_allow, b_mask, dist_r, slot_type[o], slot_area[o], held)):
                movable_slot[o] = True
                aug_queue[n_stack] = o
                n_stack += 1

    # the front's areas (ascending); per area, bit masks of order types: ``closed`` (the side's
    # orders there already fill ``max_same_type_per_area`` of the type, or EatS II.4.1 excludes it)
    # and ``cap_mask`` (a block could execute it while every placed order keeps an executing block:
    # free, or held by a slot that can hand it over). Only the areas of the side's orders and of its
    # reach are written; both masks are cleared whole (two short contiguous fills).
    fa = tabs.front_areas[tabs.front_ptr[front]:tabs.front_ptr[front + 1]] if 0 <= front < n else tabs.front_areas[:0]
    same = tabs.same
    closed = tabs.closed_mask
    cap_mask = tabs.cap_mask
    max_same = orules.max_same_type_per_area
    closed[:] = 0 if max_same > 0 else -1  # a limit of 0: no order of any type
    cap_mask[:] = 0
    for o in range(n_ord):  # the counts of the areas of the side's orders only (same is scratch)
        if orders.order_side[o] == side and orders.order_status[o] != REMOVED:
            same[orders.order_type[o], orders.order_area[o]] = 0
    for o in range(n_ord):
        if orders.order_side[o] == side and orders.order_status[o] != REMOVED and fr[orders.order_area[o]] == front:
            t = orders.order_type[o]
            a = orders.order_area[o]
            same[t, a] += 1
            if same[t, a] >= max_same:
                closed[a] |= np.int64(1) << t  # np.int64: t is int8 when run as Python
            if orules.withdraw_excludes_defend:  # EatS II.4.1: no Withdraw where a Defend order is, and back
                if t == DEFEND:
                    closed[a] |= 1 << WITHDRAW
                elif t == WITHDRAW:
                    closed[a] |= 1 << DEFEND

    # Move To / Forced March To: one pass over each distance row with the largest allowance of such
    # blocks in its area (``row_allow``) instead of one pass per block. The blocks counted are those free
    # or held by a slot that can hand them over: each row takes its whole-row values (placement_tables_nb)
    # unless a slot that cannot hand its block over holds one of its blocks (1.8 such slots a listing
    # in Kiev, at 79 % of the listings; count_calls.py): that row is computed again from its blocks.
    nf = tabs.meta[M_NF]
    row_allow = tabs.row_allow
    row_mask = tabs.row_mask
    for r in range(nf):
        row_allow[r, 0] = tabs.row_allow_all[r, 0]
        row_allow[r, 1] = tabs.row_allow_all[r, 1]
        row_mask[r] = tabs.row_mask_all[r]
    row_ptr = tabs.row_ptr
    row_blocks = tabs.row_blocks
    for o in range(ns):
        held = match_slot[o]
        if held < 0 or movable_slot[o]:
            continue
        r = b_row[held]
        allow0 = -1
        allow1 = -1
        mask = 0
        for q in range(row_ptr[r], row_ptr[r + 1]):
            b = row_blocks[q]
            mo = match_block[b]
            if mo < 0 or movable_slot[mo]:
                allow0 = max(allow0, b_allow[b, 0])
                allow1 = max(allow1, b_allow[b, 1])
                mask |= b_mask[b]
        row_allow[r, 0] = allow0
        row_allow[r, 1] = allow1
        row_mask[r] = mask
    # the areas that may have rows (on a map with area sets): those whose cap_mask is set (cand_bits) and
    # those a Move To / Forced March To may reach (cap_bits)
    cand_bits = tabs.cand_bits
    for w in range(BITSET_WORDS):
        cand_bits[w] = 0
    fareas = tabs.fareas
    for r in range(nf):
        a = fareas[r]
        if fr[a] == front:
            cap_mask[a] |= row_mask[r]
            if row_mask[r] != 0 and a < 64 * BITSET_WORDS:
                cand_bits[a >> 6] |= np.uint64(1) << np.uint64(a & 63)
    bit_mt = np.int64(1) << MOVE_TO
    bit_fmt = np.int64(1) << FORCED_MARCH_TO
    # the areas a Move To (cap_bits[0]) / Forced March To (cap_bits[1]) could reach: the union of the
    # rows' area sets (placement_tables_nb, when it left them); an allowance beyond the sets walks its
    # row instead
    use_sets = tabs.meta[M_SETS] != 0
    cap_bits = tabs.cap_bits
    reach_bits = tabs.reach_bits
    for f in range(2):
        for w in range(BITSET_WORDS):
            cap_bits[f, w] = 0
    for r in range(nf):
        allow0 = row_allow[r, 0]
        allow1 = row_allow[r, 1]
        if allow0 < 1 and allow1 < 1:
            continue
        if use_sets and allow0 <= REACH_SET_DEPTH and allow1 <= REACH_SET_DEPTH:
            for f in range(2):
                d = allow0 if f == 0 else allow1
                if d >= 1:
                    for w in range(BITSET_WORDS):
                        cap_bits[f, w] |= reach_bits[r, d, w]
            continue
        for p in range(1, reach_k[r]):  # Move To / Forced March To (only rows of blocks in supply)
            i = reach_r[r, p]
            if fr[i] != front:
                continue
            d = dist_r[r, i]
            if d <= allow0:
                cap_mask[i] |= bit_mt
            if d <= allow1:
                cap_mask[i] |= bit_fmt
            if (d <= allow0 or d <= allow1) and i < 64 * BITSET_WORDS:
                cand_bits[i >> 6] |= np.uint64(1) << np.uint64(i & 63)

    owed = orules.mandatory_recon - orders.recon_placed[side, front]
    remaining = orders_allowed - general_used
    recon_only = (owed > 0 and remaining <= owed) or remaining <= 0  # remaining <= 0: a free Recon slot only
    k = 0
    k_all = 0  # k and the Move To / Forced March To rows of closed areas (closed_row) left out
    n_recon = 0
    cap = out_type.shape[0]
    # Recon rows first, then the other types (skipped when only Recon is allowed: after a Recon row,
    # or whatever the Recon rows when only a free Recon slot is left)
    if orders.pool_used[side, RECON] < orules.pool[RECON] and 0 <= front < n:
        for q in range(tabs.recon_ptr[front], tabs.recon_ptr[front + 1]):
            i = tabs.recon_areas[q]
            if ((closed[i] >> RECON) & 1) != 0:
                continue
            n_recon += 1
            if k < cap:
                out_type[k] = RECON
                out_area[k] = i
                k += 1
                k_all += 1
    # SoE 7.2 "one of which must always be a Recon" (O1): slots owed to Recon take nothing else, even when no
    # Recon can be placed (the side then stops placing on this front)
    if not recon_only:
        pool_mask = np.int64(0)  # types whose pool is not used up (SoE 7.2), Recon apart
        for t in range(N_ORDER_TYPES):
            if t != RECON and orders.pool_used[side, t] < orules.pool[t]:
                pool_mask |= np.int64(1) << t
        # the front's areas in index order; on a map with area sets only those that may have rows (49.6 of
        # 82.8 front areas a listing in Kiev, count_calls.py): the others have none
        areas = fa
        if use_sets_nb(map_arrays) and 0 <= front < n:
            nc = 0
            for w in range(BITSET_WORDS):
                x = (cand_bits[w] | cap_bits[0, w] | cap_bits[1, w]) & tabs.front_bits[front, w]
                nc = _append_areas_nb(x, w, tabs.cand_areas, nc)
            areas = tabs.cand_areas[:nc]
        for q in range(areas.shape[0]):
            i = areas[q]
            c = cap_mask[i]
            if use_sets:
                w = i >> 6
                bit = np.uint64(1) << np.uint64(i & 63)
                if (cap_bits[0, w] & bit) != np.uint64(0):
                    c |= bit_mt
                if (cap_bits[1, w] & bit) != np.uint64(0):
                    c |= bit_fmt
            mm = np.uint64(c & pool_mask & ~closed[i])
            gone = np.uint64(0)  # G15, G16: the bits of the rows left out
            if closed_row is not None and closed_row[i]:
                gone = mm & np.uint64(bit_mt | bit_fmt)
            while mm != np.uint64(0) and k_all < cap:  # the types of the set bits, ascending
                low = mm & (np.uint64(0) - mm)
                if (low & gone) == np.uint64(0):
                    out_type[k] = _lowest_bit_nb(mm)
                    out_area[k] = i
                    k += 1
                k_all += 1
                mm &= mm - np.uint64(1)
    if k_all > 0 and (owed <= 0 or n_recon == 0) and k_all < out_type.shape[0]:
        out_type[k] = NO_ORDER
        out_area[k] = -1
        k += 1
    return k


@njit(cache=True, _nrt=True)
def legal_orders_nb(state, orders, map_arrays, orules, side, front, orders_allowed, out_type, out_area):
    """Orders ``side`` may place next on ``front`` (SoE 7.2, 7.11, 7.71).

    ``orders_allowed``: orders of this side on this front this phase (``base_orders_per_front`` +
    the card's orders, SoE 7.11). Rows ``(out_type[k], out_area[k])`` for every area of the front
    (``map_arrays.front == front``) and type that passes: the pool (``orules.pool``), at most
    ``max_same_type_per_area`` of a type per area, the Recon rules (within ``recon_range`` of a
    friendly block across anything; never an Eastern Link for the Poles) and "an order may only be
    placed if at least one block can execute it" — with every order already placed keeping its own
    executing block (reading O2). When the remaining slots are needed for the mandatory Recon(s),
    only Recon rows are returned (if any Recon is possible). A last row ``(NO_ORDER, -1)`` (stop
    placing on this front) is added when the mandatory Recon is placed or impossible.

    ``out_type``/``out_area`` need ``N_ORDER_TYPES * n_areas + 1`` rows. Returns the row count (0:
    nothing to decide). The game loop keeps the :class:`PlacementTables` of each side for the whole
    placement step (:func:`placement_tables_nb` once, then :func:`legal_orders_from_tables_nb`).

    Ruleset options (docs/rules.md "EatS variant"): ``orules.free_recon_per_front`` Recon-only slots
    on top of ``orders_allowed`` (EatS VI: "1 free order marker … and 1 Recon order marker"; the
    side's Recons fill them first, V1); ``orules.withdraw_excludes_defend``: no Withdraw on an area
    holding the side's Defend order and no Defend on one holding its Withdraw (EatS II.4.1).
    """
    free_used = min(orders.recon_placed[side, front], orules.free_recon_per_front)
    if ((orders.placed[side, front] - free_used >= orders_allowed and free_used >= orules.free_recon_per_front)
            or orders.n_orders[0] >= orders.order_type.shape[0]):
        return 0
    tabs = new_placement_tables_nb(state.block_side.shape[0], map_arrays.front.shape[0],
                                   map_arrays.adj_indices.shape[0], orders.order_type.shape[0])
    placement_tables_nb(state, map_arrays, orules, side, tabs)
    return legal_orders_from_tables_nb(orders, map_arrays, orules, side, front, orders_allowed, tabs, out_type,
                                       out_area)


@njit(cache=True, _nrt=False)
def place_order_nb(state, orders, side, front, order_type, area):
    """Place an order row from :func:`legal_orders_nb`; returns its id (``-1`` for the pass row or
    when the capacity is full)."""
    if order_type == NO_ORDER:
        return -1
    o = orders.n_orders[0]
    if o >= orders.order_type.shape[0]:
        return -1
    orders.order_side[o] = side
    orders.order_front[o] = front
    orders.order_type[o] = order_type
    orders.order_area[o] = area
    orders.order_status[o] = PLACED
    orders.order_executed[o] = 0
    orders.order_block[o] = -1
    orders.n_orders[0] = o + 1
    orders.pool_used[side, order_type] += 1
    orders.placed[side, front] += 1
    if order_type == RECON:
        orders.recon_placed[side, front] += 1
    return o


# =================================================================================================
# movement (SoE 7.3, 7.31, 7.32, 7.33, 2.2)


@njit(cache=True, _nrt=False, internal=True)
def _vias_nb(ip, ix, eb, el, enemy_row, side, start, dest, allowance, stamp, gen, sdist, queue, out_via):
    """Neighbours of ``dest`` a block from ``start`` may enter it from within ``allowance`` links,
    along a path that does not pass through ``dest`` and whose last link is open.

    The BFS of :func:`~soe_sim.engine.nb.reachable_nb` (``allowance - 1`` links, ``dest`` counted as
    an enemy area) with areas marked visited by ``stamp[v] == gen`` (no per-call reset); ``sdist``
    and ``queue`` (n_areas,) are scratch. ``out_via`` in ascending order; returns its length."""
    lim = allowance - 1
    stamp[start] = gen
    sdist[start] = 0
    queue[0] = start
    head = 0
    tail = 1
    while head < tail:
        u = queue[head]
        head += 1
        if sdist[u] >= lim:
            continue
        if u != start and (enemy_row[u] or u == dest):
            continue  # SoE 7.31: entering an enemy area ends the move
        for e in range(ip[u], ip[u + 1]):
            v = ix[e]
            if stamp[v] == gen or eb[e] or not enterable_nb(el, side, v):
                continue
            stamp[v] = gen
            sdist[v] = sdist[u] + 1
            queue[tail] = v
            tail += 1
    k = 0
    for e in range(ip[dest], ip[dest + 1]):
        v = ix[e]
        if v == dest or stamp[v] != gen:
            continue
        if v != start and enemy_row[v]:
            continue  # SoE 7.31: a move ends in the first enemy area
        r = -1
        for e2 in range(ip[v], ip[v + 1]):
            if ix[e2] == dest:
                r = e2
                break
        if r >= 0 and eb[r]:
            continue
        out_via[k] = v
        k += 1
    # ascending order
    for p in range(1, k):
        x = out_via[p]
        q = p
        while q > 0 and out_via[q - 1] > x:
            out_via[q] = out_via[q - 1]
            q -= 1
        out_via[q] = x
    return k


class MoveScratch(NamedTuple):
    """Scratch arrays of :func:`legal_moves_nb` (:func:`new_move_scratch_nb`; the game loop keeps one
    per game): candidate blocks, presence, closed links, BFS distances (``dist`` is ``UNREACHED``
    everywhere between calls), queue, visit stamps, via distances, destinations and vias, ``bits``
    (2, BITSET_WORDS) uint64 the enemy areas as a set and a set scratch; ``wd`` the
    :class:`WithdrawScratch` of the Withdraw kernels; ``link_to`` / ``link_from`` int64 (n_blocks,)
    the area and previous area of the side's blocks that entered an enemy area (SoE 7.33, listed once
    per listing: :func:`_entered_enemy_areas_nb`)."""

    cand: np.ndarray
    cnt: np.ndarray
    enemy: np.ndarray
    eb: np.ndarray
    dist: np.ndarray
    queue: np.ndarray
    stamp: np.ndarray
    sdist: np.ndarray
    dests: np.ndarray
    vias: np.ndarray
    rdist: np.ndarray
    bits: np.ndarray
    wd: WithdrawScratch
    link_to: np.ndarray
    link_from: np.ndarray


@njit(cache=True, _nrt=False, internal=True)
def max_degree_nb(adj_indptr):
    """The most links of any area (the size of per-neighbour scratch such as retreat candidates)."""
    max_deg = 0
    for i in range(adj_indptr.shape[0] - 1):
        max_deg = max(max_deg, adj_indptr[i + 1] - adj_indptr[i])
    return max_deg


@njit(cache=True, _nrt=True)
def new_move_scratch_nb(n_blocks, map_arrays):
    n = map_arrays.front.shape[0]
    max_deg = max_degree_nb(map_arrays.adj_indptr)
    return MoveScratch(np.empty(n_blocks, dtype=np.int64), np.zeros((2, n), dtype=np.int32),
                       np.zeros((2, n), dtype=np.bool_), np.zeros(map_arrays.adj_indices.shape[0], dtype=np.bool_),
                       np.full(n, UNREACHED, dtype=np.int32), np.empty(n, dtype=np.int32),
                       np.zeros(n, dtype=np.int64), np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int64),
                       np.empty(max_deg + 1, dtype=np.int64), np.empty(n, dtype=np.int32),
                       np.zeros((2, BITSET_WORDS), dtype=np.uint64), new_withdraw_scratch_nb(n_blocks, map_arrays),
                       np.empty(n_blocks, dtype=np.int64), np.empty(n_blocks, dtype=np.int64))


@njit(cache=True, _nrt=False)
def _reverse_reach_nb(ip, ix, eb, el, enemy_row, side, dest, depth, rdist, queue):
    """``rdist[x]``: the length of the shortest move of a ``side`` block from ``x`` into ``dest``
    (the distance :func:`~soe_sim.engine.nb.reach_into_nb` from ``x`` finds for ``dest``), up to
    ``depth`` links, ``UNREACHED`` otherwise: a BFS from ``dest`` backwards. A move enters only
    enterable areas, never continues from an enemy area and never uses a closed link (``eb`` is
    symmetric, :func:`edge_blocked_nb`), so the areas it passes through are enterable non-enemy areas
    and ``dest`` is enterable; the starting area is free of conditions."""
    for i in range(rdist.shape[0]):
        rdist[i] = UNREACHED
    if not enterable_nb(el, side, dest):
        return
    rdist[dest] = 0
    queue[0] = dest
    head = 0
    tail = 1
    while head < tail:
        u = queue[head]
        head += 1
        if rdist[u] >= depth:
            continue
        if u != dest and (enemy_row[u] or not enterable_nb(el, side, u)):
            continue  # u would be passed through: it must be enterable and not an enemy area
        for e in range(ip[u], ip[u + 1]):
            v = ix[e]
            if rdist[v] != UNREACHED or eb[e]:
                continue
            rdist[v] = rdist[u] + 1
            queue[tail] = v
            tail += 1


@njit(cache=True, inline="always")
def _orders_needing_a_block_nb(order_side, order_area, order_status, order_type, n_orders, order_id, side, x):
    """O7: the side's placed orders on ``x`` other than ``order_id`` that need a block of ``x`` to stay
    (SoE 7.2: movement orders "may not be ignored once placed"). Arrays only: inlined in loops."""
    need = 0
    for o in range(n_orders):
        if o != order_id and order_side[o] == side and order_area[o] == x and order_status[o] == PLACED:
            ot = order_type[o]
            if is_area_bound_nb(ot) or ot == MOVE_OUT or ot == FORCED_MARCH_OUT:
                need += 1
    return need


@njit(cache=True, inline="always")
def _unmoved_count_nb(bst, bs, ba, bprev, side, x):
    """The side's blocks on the map in ``x`` that have not moved this phase (O7)."""
    k = 0
    for q in range(bs.shape[0]):
        if bst[q] == STATUS.ON_MAP and bs[q] == side and ba[q] == x and bprev[q] < 0:
            k += 1
    return k


@njit(cache=True, inline="always")
def _link_count_nb(bst, bs, ba, bprev, side, d, v):
    """The side's blocks on the map in ``d`` that entered it from ``v`` (SoE 7.33: at most
    ``max_blocks_per_link`` along one link into a battle)."""
    k = 0
    for q in range(bs.shape[0]):
        if bst[q] == STATUS.ON_MAP and bs[q] == side and ba[q] == d and bprev[q] == v:
            k += 1
    return k


@njit(cache=True, inline="always")
def _entered_enemy_areas_nb(bst, bs, ba, bprev, side, enemy_row, link_to, link_from):
    """The side's blocks on the map that entered an enemy area this phase: their areas and previous
    areas into ``link_to`` / ``link_from``; returns their count. :func:`_link_count_nb` of an enemy
    area counts among them only (arrays only: inlined)."""
    k = 0
    for q in range(bs.shape[0]):
        x = ba[q]
        if bst[q] == STATUS.ON_MAP and bs[q] == side and x >= 0 and bprev[q] >= 0 and enemy_row[x]:
            link_to[k] = x
            link_from[k] = bprev[q]
            k += 1
    return k


@njit(cache=True, _nrt=False, internal=True)
def _moves_impl(state, orders, map_arrays, orules, order_id, out_block, out_dest, out_via, out_detach,
                write, first_only, scr):
    # The named tuples are unpacked into local arrays once: helpers taking ``state`` / ``orders``
    # inside the per-block loops cost refcount updates for every array of the tuples per call.
    if order_id < 0 or order_id >= orders.n_orders[0] or orders.order_status[order_id] != PLACED:
        return 0
    t = orders.order_type[order_id]
    if not is_move_type_nb(t):
        return 0
    side = orders.order_side[order_id]
    a = orders.order_area[order_id]
    forced = is_forced_nb(t)
    to_type = is_to_type_nb(t)
    needs_supply = forced or t == MOVE_TO  # SoE 7.2, 7.71
    bs = state.block_side
    ba = state.block_area
    bst = state.block_status
    bprev = state.block_prev_area
    nbk = bs.shape[0]
    # blocks that may execute the order (_movable_nb and the area condition)
    # (one condition per block, evaluated whole and appended without a branch: the blocks of the
    # universe pass or fail in no predictable pattern, so branches on each test mispredict)
    cand = scr.cand
    executed = orders.executed
    pinned = orders.pinned
    moved = orders.moved
    detached = orders.detached
    rail_moved = orders.rail_moved
    insup = state.block_in_supply
    # two passes: the conditions of every block into ``cand`` (a loop LLVM vectorizes: the same loads for all
    # the blocks), then the passing blocks compacted in place (the write index never passes the read one)
    no_supply_needed = not needs_supply
    for b in range(nbk):
        x = ba[b]
        cand[b] = ((bst[b] == STATUS.ON_MAP) & (bs[b] == side) & (x >= 0) & (executed[b] == False)  # noqa: E712
                   & (pinned[b] == False) & (moved[b] == False) & (detached[b] == False)  # noqa: E712
                   & (rail_moved[b] == False) & (insup[b] | no_supply_needed)  # noqa: E712
                   & ((x != a) == to_type))
    nc = 0
    for b in range(nbk):
        ok = cand[b]
        cand[nc] = b
        nc += ok
    if nc == 0:
        return 0
    ip = map_arrays.adj_indptr
    ix = map_arrays.adj_indices
    el = map_arrays.eastern_link
    cnt = scr.cnt
    enemy = scr.enemy
    presence_nb(state, cnt, enemy)
    eb = scr.eb
    n_closed = edge_blocked_nb(state, map_arrays, side, cnt, eb)
    enemy_row = enemy[side]
    # with no closed link, the searches below run on the map's area sets (same results)
    sets = use_sets_nb(map_arrays) and n_closed == 0
    adj_bits = map_arrays.adj_bits
    enemy_bits = scr.bits[0]
    if sets:
        area_set_nb(enemy_row, enemy_bits)
    dist = scr.dist  # UNREACHED everywhere (reset after every BFS below)
    queue = scr.queue
    stamp = scr.stamp
    if not sets:
        stamp[:] = 0
    sdist = scr.sdist
    dests = scr.dests
    gen = 0
    vias = scr.vias
    # Move To / Forced March To: the only destination is the order's area; which blocks reach it
    # comes from one backward BFS instead of a BFS from every candidate
    rdist = scr.rdist
    if to_type:
        max_allow = 0
        for c in range(nc):
            max_allow = max(max_allow, allowance_nb(orules, state.block_arm[cand[c]], forced))
        if sets:
            reverse_reach_sets_nb(adj_bits, enemy_bits, side, a, max_allow, rdist)
        else:
            _reverse_reach_nb(ip, ix, eb, el, enemy_row, side, a, max_allow, rdist, queue)
    # rows per candidate block: destinations, vias, detachments (ascending)
    n_ord = orders.n_orders[0]
    k = 0
    # ``need`` and ``stays_area`` depend on the candidate's area only: kept while the area repeats (every
    # candidate of a Move Out / Forced March Out stands in the order's area)
    last_x = -1
    need = 0
    stays_area = 0
    last_pool_key = np.int64(-1)
    pool_sp = 0
    # SoE 7.33: the blocks already along a link into an enemy area, listed at the first enemy destination
    # (a count over the blocks per destination and via otherwise)
    link_to = scr.link_to
    link_from = scr.link_from
    n_link = -1
    for c in range(nc):
        b = cand[c]
        x = ba[b]
        allow = allowance_nb(orules, state.block_arm[b], forced)
        nd = 0
        if to_type:
            if rdist[x] == UNREACHED or rdist[x] > allow:
                continue  # SoE 7.3: a Move To / Forced March To must be fully executed
            dests[0] = a
            nd = 1
        else:
            if sets:
                nq = reach_sets_into_nb(adj_bits, enemy_bits, side, x, allow, dist, queue, scr.bits[1:])
            else:
                nq = reach_into_nb(ip, ix, map_arrays.adj_kind, eb, el, enemy_row, side, x, allow, False, dist, 0,
                                   dist, queue)
            # the destinations in ascending order; dist reset for the next block
            for p in range(1, nq):
                d = queue[p]
                j = nd
                while j > 0 and dests[j - 1] > d:
                    dests[j] = dests[j - 1]
                    j -= 1
                dests[j] = d
                nd += 1
            for p in range(nq):
                dist[queue[p]] = UNREACHED
        if x != last_x:
            last_x = x
            need = _orders_needing_a_block_nb(orders.order_side, orders.order_area, orders.order_status,
                                              orders.order_type, n_ord, order_id, side, x)
            stays_area = 0
            if need > 0:
                stays_area = _unmoved_count_nb(bst, bs, ba, bprev, side, x)
        stays = 0
        if need > 0:
            stays = stays_area - (1 if bprev[b] < 0 else 0)
        # _max_detach_arr, its pass over the force pool done once per nation and arm of the candidates
        det_max = 0
        det_m = _detach_cap_nb(state.block_class, state.block_sp, orules.detachments, orules.detachment_max_sp, b)
        if det_m > 0:
            pool_key = np.int64(state.block_nation[b]) * 64 + state.block_arm[b]
            if pool_key != last_pool_key:
                last_pool_key = pool_key
                pool_sp = _pool_brigade_sp_nb(bs, state.block_class, state.block_nation, state.block_arm, bst,
                                              state.block_max_sp, orules.detachment_max_sp, b)
            det_max = min(det_m, pool_sp)
        for p in range(nd):
            d = dests[p]
            if to_type and d != a:
                continue
            if sets:
                nv = vias_sets_nb(adj_bits, enemy_bits, side, x, d, allow, vias)
            else:
                gen += 1
                nv = _vias_nb(ip, ix, eb, el, enemy_row, side, x, d, allow, stamp, gen, sdist, queue, vias)
            for q in range(nv):
                v = vias[q]
                if enemy_row[d]:
                    if n_link < 0:
                        n_link = _entered_enemy_areas_nb(bst, bs, ba, bprev, side, enemy_row, link_to, link_from)
                    along = 0
                    for i in range(n_link):
                        along += (link_to[i] == d) & (link_from[i] == v)
                    if along >= orules.max_blocks_per_link:
                        continue  # SoE 7.33: at most 4 blocks per side along one link into a battle
                for det in range(det_max + 1):
                    if need > 0 and stays + (1 if det > 0 else 0) < need:
                        continue  # SoE 7.3: a block must remain for Defend / Withdraw / … (O7)
                    if write:
                        if k >= out_block.shape[0]:
                            return k
                        out_block[k] = b
                        out_dest[k] = d
                        out_via[k] = v
                        out_detach[k] = det
                    k += 1
                    if first_only:
                        return k
    return k


@njit(cache=True, _nrt=True)
def legal_moves_nb(state, orders, map_arrays, orules, order_id, out_block, out_dest, out_via, out_detach):
    """Moves that may execute order ``order_id`` now (SoE 7.2, 7.3, 7.31–7.33, 7.71, 2.2).

    Move Out / Forced March Out: blocks of the order's side in its area; Move To / Forced March
    To: blocks elsewhere whose allowance reaches the area (the destination is then the area
    itself: no coming up short). Blocks must be on the map, not yet executed an order, not pinned,
    not moved, not a brigade detached this phase; in supply at the phase start for Move To and both
    forced marches. Destinations: within the allowance (infantry ``move_infantry`` /
    ``forced_infantry``, cavalry, leaders), every shorter distance allowed (Out orders); a move
    ends in the first enemy area; Poles never enter Eastern Links; no link closed by incoming enemy
    blocks (:func:`edge_blocked_nb`); at most ``max_blocks_per_link`` blocks of a side along one
    link into an enemy area. One row per (block, destination, via, detach) — see the module
    docstring. A block may not leave an area whose pending Withdraw / Defend / Reorganize / Rail
    orders of its side would be left without enough unmoved blocks (O7). Returns the row count
    (rows beyond the capacity of the out arrays are dropped; :func:`move_capacity` is enough).
    """
    return _moves_impl(state, orders, map_arrays, orules, order_id, out_block, out_dest, out_via, out_detach,
                       True, False, new_move_scratch_nb(state.block_side.shape[0], map_arrays))


@njit(cache=True, _nrt=False, internal=True)
def legal_moves_scratch_nb(state, orders, map_arrays, orules, order_id, out_block, out_dest, out_via, out_detach,
                           scr):
    """:func:`legal_moves_nb` with the caller's :class:`MoveScratch` ``scr`` (same rows)."""
    return _moves_impl(state, orders, map_arrays, orules, order_id, out_block, out_dest, out_via, out_detach,
                       True, False, scr)


@njit(cache=True, _nrt=False)
def moves_after_move_nb(state, orders, orules, order_id, block, origin, dest, via, brigade, n, out_block, out_dest,
                        out_via, out_detach):
    """The rows of :func:`legal_moves_nb` for ``order_id`` after :func:`apply_move_nb` executed one of
    them, from the ``n`` rows listed before it, filtered in place: the same rows in the same order as a
    fresh listing. Returns their count, or ``-1`` when the rows must be listed afresh.

    ``block`` moved from ``origin`` into ``dest`` along ``via``; ``brigade`` is the brigade it detached
    (``MI_BRIGADE`` of the move's info, ``-1`` none). A move of the order's side leaves everything a
    listing reads as it was except: ``block`` (moved now), the side's blocks in ``origin`` that stay
    for its other orders (O7), and the side's blocks along ``via`` into ``dest`` (SoE 7.33, when
    ``dest`` is an enemy area). The enemy areas are the same (only the other side's blocks and
    garrisons make them), the movement searches then too, and the closed links (SoE 7.31,
    :func:`edge_blocked_nb`) as well — ``block`` arrived after every block on the map (the phase's
    arrival counter, as in play), so it holds no road in ``dest`` — unless an enemy block stands in
    ``origin``, where ``block`` may have been what held the road: then ``-1``. A detachment changes the
    force pool and the blocks of ``origin`` (``-1``), and so does a listing cut at the capacity of the
    out arrays (``n`` equal to it).

    Each condition is one row's own, so the rows of a listing filtered further by the caller (the game
    loop's G15 / G16 nations) come out filtered in the same way.
    """
    if n < 0 or n >= out_block.shape[0] or brigade >= 0:
        return -1
    side = orders.order_side[order_id]
    enemy = 1 - side
    bs = state.block_side
    ba = state.block_area
    bst = state.block_status
    bprev = state.block_prev_area
    nbk = bs.shape[0]
    if state.garrison_side[origin] == enemy:
        return -1
    enemy_dest = state.garrison_side[dest] == enemy
    for q in range(nbk):
        if bst[q] == STATUS.ON_MAP and bs[q] == enemy:
            if ba[q] == origin:
                return -1
            if ba[q] == dest:
                enemy_dest = True
    # O7 in origin: the side's other placed orders there that need a block of it (as _moves_impl)
    need = _orders_needing_a_block_nb(orders.order_side, orders.order_area, orders.order_status, orders.order_type,
                                      orders.n_orders[0], order_id, side, origin)
    stays_area = 0
    if need > 0:
        stays_area = _unmoved_count_nb(bst, bs, ba, bprev, side, origin)
    # SoE 7.33: the link via -> dest may have reached its limit of blocks
    link_full = enemy_dest and _link_count_nb(bst, bs, ba, bprev, side, dest, via) >= orules.max_blocks_per_link
    k = 0
    for i in range(n):
        b = out_block[i]
        if b == block:
            continue
        if link_full and out_dest[i] == dest and out_via[i] == via:
            continue
        if need > 0 and ba[b] == origin:
            stays = stays_area - (1 if bprev[b] < 0 else 0)
            if stays + (1 if out_detach[i] > 0 else 0) < need:
                continue
        out_block[k] = b
        out_dest[k] = out_dest[i]
        out_via[k] = out_via[i]
        out_detach[k] = out_detach[i]
        k += 1
    return k


@njit(cache=True, _nrt=True)
def count_moves_nb(state, orders, map_arrays, orules, order_id):
    """Number of rows :func:`legal_moves_nb` would return (nothing written)."""
    e = np.zeros(0, dtype=np.int64)
    return _moves_impl(state, orders, map_arrays, orules, order_id, e, e, e, e, False, False,
                       new_move_scratch_nb(state.block_side.shape[0], map_arrays))


@njit(cache=True, _nrt=False)
def apply_move_nb(state, orders, map_arrays, orules, order_id, block, dest, via, detach, out_info):
    """Execute one option row of :func:`legal_moves_nb` (SoE 7.31, 7.32, 2.2).

    The block enters ``dest`` from ``via``: ``block_prev_area = via``, ``block_arrival`` = the next
    value of the phase's arrival counter, flags ``executed``, ``moved`` (``forced_march`` for forced
    marches), ``block_order``; the order counts one more executing block. With ``detach > 0`` a
    force-pool brigade of the same side, nation and arm is placed in the origin area with
    ``detach`` SP (taken from the block) and may not move this phase. Entering an area with enemy
    blocks pins one of them that is not yet pinned (preferring blocks that have not executed an
    order, then the lowest index; reading O4). ``out_info`` (N_MOVE_INFO,): MI_PINNED, MI_BRIGADE.
    """
    side = state.block_side[block]
    origin = state.block_area[block]
    out_info[MI_PINNED] = -1
    out_info[MI_BRIGADE] = -1
    if detach > 0:
        r = _pool_brigade(state, block, detach)
        if r >= 0:
            state.block_status[r] = STATUS.ON_MAP
            state.block_area[r] = origin
            state.block_sp[r] = detach
            state.block_prev_area[r] = -1
            state.block_arrival[r] = 0
            state.block_in_supply[r] = state.block_in_supply[block]
            state.block_sp[block] -= detach
            orders.detached[r] = True
            orders.seen[side, r] = True
            orders.seen[1 - side, r] = False
            orders.seen[1 - side, block] = False  # O11: the enemy saw the SP before the (hidden) detachment
            out_info[MI_BRIGADE] = r
    # pin before moving in (counts enemy blocks of dest)
    best = -1
    best_exec = True
    for b in range(state.block_side.shape[0]):
        if (state.block_status[b] != STATUS.ON_MAP or state.block_area[b] != dest
                or state.block_side[b] != 1 - side or orders.pinned[b]):
            continue
        ex = orders.executed[b]
        if best < 0 or (best_exec and not ex):
            best = b
            best_exec = ex
    if best >= 0:
        orders.pinned[best] = True
        out_info[MI_PINNED] = best
    orders.arrival[0] += 1
    state.block_prev_area[block] = via
    state.block_area[block] = dest
    state.block_arrival[block] = orders.arrival[0]
    orders.executed[block] = True
    orders.moved[block] = True
    orders.block_order[block] = order_id
    if is_forced_nb(orders.order_type[order_id]):
        orders.forced_march[block] = True
    orders.order_executed[order_id] += 1


@njit(cache=True, _nrt=False)
def finish_order_nb(orders, order_id):
    """End the execution of an order: executed by at least one block → EXECUTED, else REMOVED and
    back in the pool (SoE 7.3 "unfulfilled"). Returns the new status."""
    if orders.order_status[order_id] != PLACED:
        return orders.order_status[order_id]
    if orders.order_executed[order_id] > 0:
        orders.order_status[order_id] = EXECUTED
    else:
        orders.order_status[order_id] = REMOVED
        t = orders.order_type[order_id]
        s = orders.order_side[order_id]
        if orders.pool_used[s, t] > 0:
            orders.pool_used[s, t] -= 1
    return orders.order_status[order_id]


@njit(cache=True, _nrt=True)
def min_moves_required_nb(state, orders, map_arrays, orules, order_id):
    """1 when the order (move or rail) has no executing block yet and one could execute it now
    (SoE 7.3 "At least one block must execute a placed order, if possible"), else 0: the loop may
    offer "stop executing this order" only when this is 0."""
    if order_id < 0 or order_id >= orders.n_orders[0] or orders.order_status[order_id] != PLACED:
        return 0
    if orders.order_executed[order_id] > 0:
        return 0
    t = orders.order_type[order_id]
    e = np.zeros(0, dtype=np.int64)
    if is_move_type_nb(t):
        return 1 if _moves_impl(state, orders, map_arrays, orules, order_id, e, e, e, e, False, True,
                                new_move_scratch_nb(state.block_side.shape[0], map_arrays)) > 0 else 0
    if t == RAIL_TRANSPORT:
        return 1 if _rail_impl(state, orders, map_arrays, orules, order_id, e, e, False, True) > 0 else 0
    return 0


# =================================================================================================
# Recon, Withdraw, Defend (SoE 7.2, 7.31)


@njit(cache=True, _nrt=False)
def execute_recon_nb(state, orders, order_id):
    """Reveal the enemy blocks in the Recon area to the order's side (SoE 7.2, 7.31). Returns how
    many were revealed; the order becomes EXECUTED."""
    if orders.order_status[order_id] != PLACED or orders.order_type[order_id] != RECON:
        return 0
    s = orders.order_side[order_id]
    a = orders.order_area[order_id]
    k = 0
    for b in range(state.block_side.shape[0]):
        if state.block_status[b] == STATUS.ON_MAP and state.block_area[b] == a and state.block_side[b] == 1 - s:
            orders.seen[s, b] = True
            k += 1
    orders.order_status[order_id] = EXECUTED
    return k


@njit(cache=True, _nrt=True)
def execute_withdraw_nb(state, orders, map_arrays, orules, order_id, out_dest, out_info):
    """:func:`execute_withdraw_choice_nb` with the withdrawal SP taken from the strongest block
    (lowest index on ties) and no restriction on the withdrawal areas."""
    return execute_withdraw_choice_nb(state, orders, map_arrays, orules, order_id, out_dest, out_info, -1,
                                      np.zeros((0, 0), dtype=np.bool_))


class WithdrawScratch(NamedTuple):
    """Scratch of the Withdraw kernels (:func:`new_withdraw_scratch_nb`; every array written before
    it is read): presence ``cnt`` int32 / ``enemy`` bool (2, n_areas), the side's supply rows
    ``src_row`` / ``depot_dist_row`` int32 and ``goal`` bool (n_areas,), the closed links ``eb``
    bool (n_links,), the retreat candidates ``cand`` / ``cand_d`` int64 (max degree + 1,), ``target``
    / ``members`` int64 (n_blocks,), ``allowed`` bool and ``queue`` / ``dist`` int32 (n_areas,), the
    supply searches ``supply`` (:class:`~soe_sim.engine.nb.SupplySearchCache`, shared with the game's other
    kernels in a game loop); ``ready`` int64 (2,): the order whose targets :func:`withdraw_loss_options_scratch_nb`
    left in ``cand`` / ``target`` and their count (-1: none), which
    :func:`execute_withdraw_choice_scratch_nb` then takes instead of recomputing them — the player's
    loss choice in between changes nothing on the map."""

    cnt: np.ndarray
    enemy: np.ndarray
    src_row: np.ndarray
    goal: np.ndarray
    depot_dist_row: np.ndarray
    eb: np.ndarray
    cand: np.ndarray
    cand_d: np.ndarray
    target: np.ndarray
    members: np.ndarray
    allowed: np.ndarray
    supply: SupplySearchCache
    queue: np.ndarray
    dist: np.ndarray
    ready: np.ndarray


@njit(cache=True, _nrt=True)
def new_withdraw_scratch_nb(n_blocks, map_arrays):
    n = map_arrays.front.shape[0]
    max_deg = max_degree_nb(map_arrays.adj_indptr)
    return WithdrawScratch(np.zeros((2, n), dtype=np.int32), np.zeros((2, n), dtype=np.bool_),
                           np.zeros(n, dtype=np.int32), np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.int32),
                           np.zeros(map_arrays.adj_indices.shape[0], dtype=np.bool_),
                           np.zeros(max_deg + 1, dtype=np.int64), np.zeros(max_deg + 1, dtype=np.int64),
                           np.zeros(n_blocks, dtype=np.int64), np.zeros(n_blocks, dtype=np.int64),
                           np.zeros(n, dtype=np.bool_), new_supply_search_cache_nb(n, N_SUPPLY_SLOTS),
                           np.zeros(n, dtype=np.int32), np.zeros(n, dtype=np.int32), np.full(2, -1, dtype=np.int64))


@njit(cache=True, _nrt=False, internal=True)
def _withdraw_targets_nb(state, map_arrays, orules, s, a, m, ws):
    """SoE 7.2 Withdraw: the retreat candidates (``ws.cand``, returns how many) and the area of each
    of the ``m`` withdrawing blocks (``ws.target``) of ``s``'s blocks leaving ``a``, toward the
    side's supply depots (:func:`~soe_sim.engine.nb.retreat_targets_nb`); ``ws.cnt`` / ``ws.enemy``
    hold the presence."""
    cnt = ws.cnt
    enemy = ws.enemy
    presence_nb(state, cnt, enemy)
    goal = ws.goal  # the friendly supply depots
    side_depots_into_nb(map_arrays.adj_indptr, map_arrays.adj_indices, map_arrays.adj_bits, map_arrays.eastern_link,
                        map_arrays.supply_source, state.supply_base, map_arrays.garrison, enemy, s, ws.src_row, goal,
                        ws.depot_dist_row, ws.supply)
    eb = ws.eb
    edge_blocked_nb(state, map_arrays, s, cnt, eb)
    return retreat_targets_into_nb(map_arrays.adj_indptr, map_arrays.adj_indices, map_arrays.adj_bits, eb,
                                   map_arrays.eastern_link, goal, enemy[s], cnt[s], s, a, orules.max_blocks, m,
                                   ws.cand, ws.cand_d, ws.target, ws.dist, ws.queue)


@njit(cache=True, _nrt=True)
def withdraw_loss_options_nb(state, orders, map_arrays, orules, order_id, out_block):
    """SoE 7.2 Withdraw ("lose 1SP from any one block"; O8): the blocks that may take the
    withdrawal loss if the order were executed now, ascending index; returns how many (0 when no
    loss is due: the order would be removed, the blocks cannot withdraw, or the cavalry exemption
    applies; only the infantry blocks when every enemy block there is infantry, since cavalry and
    leaders then ignore the penalty). The player chooses one (decision ``WITHDRAW_LOSS``); pass it to
    :func:`execute_withdraw_choice_nb`. Whether the blocks can leave is checked without the round
    loop's area restrictions (the rare case where only those forbid every area makes the choice
    moot: nothing is lost here then)."""
    return withdraw_loss_options_scratch_nb(state, orders, map_arrays, orules, order_id, out_block,
                                            new_withdraw_scratch_nb(state.block_side.shape[0], map_arrays))


@njit(cache=True, _nrt=False)
def withdraw_loss_options_scratch_nb(state, orders, map_arrays, orules, order_id, out_block, ws):
    """:func:`withdraw_loss_options_nb` with the caller's :class:`WithdrawScratch` ``ws`` (which then
    holds the retreat targets for :func:`execute_withdraw_choice_scratch_nb` of the same order on
    the same position)."""
    ws.ready[0] = -1
    if orders.order_status[order_id] != PLACED or orders.order_type[order_id] != WITHDRAW:
        return 0
    s = orders.order_side[order_id]
    a = orders.order_area[order_id]
    nbk = state.block_side.shape[0]
    n_enemy = 0
    all_enemy_inf = True
    all_cav = True
    m = 0
    for b in range(nbk):
        if state.block_status[b] != STATUS.ON_MAP or state.block_area[b] != a:
            continue
        if state.block_side[b] == 1 - s:
            n_enemy += 1
            if state.block_arm[b] != ARM.INFANTRY:
                all_enemy_inf = False
        else:
            out_block[m] = b
            m += 1
            if state.block_arm[b] == ARM.INFANTRY:
                all_cav = False
    if n_enemy == 0 or m == 0 or orules.withdraw_loss <= 0:
        return 0
    cav_exempt = orules.withdraw_cavalry_exempt and all_enemy_inf
    if cav_exempt and all_cav:
        return 0
    kc = _withdraw_targets_nb(state, map_arrays, orules, s, a, m, ws)
    ws.ready[0] = order_id
    ws.ready[1] = kc
    if kc == 0:
        return 0
    if cav_exempt:  # SoE 7.2: cavalry ignore the penalty when attacked only by infantry: an infantry block pays
        k = 0
        for q in range(m):
            if state.block_arm[out_block[q]] == ARM.INFANTRY:
                out_block[k] = out_block[q]
                k += 1
        return k
    return m


@njit(cache=True, _nrt=True)
def execute_withdraw_choice_nb(state, orders, map_arrays, orules, order_id, out_dest, out_info, loss_block,
                               nation_ok):
    """Execute a Withdraw order (SoE 7.2; readings R6, O8). Returns the withdraw mode for the
    battle (``WD_NONE`` / ``WD_OK`` / ``WD_BLOCKED`` = ``soe_sim.battle.nb.WITHDRAW_*``).

    ``loss_block``: the withdrawing block the player chose to lose the withdrawal SP (a row of
    :func:`withdraw_loss_options_nb`); ``-1`` (or a block not withdrawing) takes it from the
    strongest block, lowest index on ties. ``nation_ok`` (n_nations, n_areas) bool: where the blocks
    of each nation may end a move (the round loop's G15/G16 mask); the blocks withdraw only into
    areas every one of them may enter. Shape (0, 0): no restriction.

    Only if enemy blocks are in the area (they entered it): every friendly block there moves to an
    adjacent area without enemy blocks or garrison, reached by a link not closed by the incoming
    enemy, with a clear path to a friendly supply depot (:func:`~soe_sim.engine.nb.retreat_targets_nb`
    with the depots as goal: shortest path first, overflow by stacking to the next, left-overs to
    the first). One block (``loss_block``, else the strongest) loses ``withdraw_loss`` SP; when every
    enemy block there is infantry, only an infantry block can (none if every withdrawing block is
    cavalry/leader). With nowhere
    to go nothing moves, no SP is lost here and ``WD_BLOCKED`` is returned: the battle adds the extra
    loss. No enemy block: the order is removed, ``WD_NONE``.

    out_dest : (n_blocks,) int — new area of each withdrawn block, -1 otherwise
    out_info : (N_WITHDRAW_INFO,) int — WI_MOVED, WI_LOSS_BLOCK, WI_DESTROYED, WI_VP
    """
    return execute_withdraw_choice_scratch_nb(state, orders, map_arrays, orules, order_id, out_dest, out_info,
                                              loss_block, nation_ok,
                                              new_withdraw_scratch_nb(state.block_side.shape[0], map_arrays))


@njit(cache=True, _nrt=False)
def execute_withdraw_choice_scratch_nb(state, orders, map_arrays, orules, order_id, out_dest, out_info, loss_block,
                                       nation_ok, ws):
    """:func:`execute_withdraw_choice_nb` with the caller's :class:`WithdrawScratch` ``ws``."""
    pre = ws.ready[0] == order_id  # the targets of withdraw_loss_options_scratch_nb on this position
    pre_kc = ws.ready[1]
    ws.ready[0] = -1
    nbk = state.block_side.shape[0]
    n = map_arrays.front.shape[0]
    for b in range(out_dest.shape[0]):
        out_dest[b] = -1
    out_info[WI_MOVED] = 0
    out_info[WI_LOSS_BLOCK] = -1
    out_info[WI_DESTROYED] = 0
    out_info[WI_VP] = 0
    if orders.order_status[order_id] != PLACED or orders.order_type[order_id] != WITHDRAW:
        return WD_NONE
    s = orders.order_side[order_id]
    a = orders.order_area[order_id]
    n_enemy = 0
    all_enemy_inf = True
    members = ws.members
    m = 0
    all_cav = True
    for b in range(nbk):
        if state.block_status[b] != STATUS.ON_MAP or state.block_area[b] != a:
            continue
        if state.block_side[b] == 1 - s:
            n_enemy += 1
            if state.block_arm[b] != ARM.INFANTRY:
                all_enemy_inf = False
        else:
            members[m] = b
            m += 1
            if state.block_arm[b] == ARM.INFANTRY:
                all_cav = False
    if n_enemy == 0 or m == 0:
        orders.order_status[order_id] = REMOVED
        if orders.pool_used[s, WITHDRAW] > 0:
            orders.pool_used[s, WITHDRAW] -= 1
        return WD_NONE
    orders.order_status[order_id] = EXECUTED
    orders.order_executed[order_id] = m
    kc = pre_kc if pre else _withdraw_targets_nb(state, map_arrays, orules, s, a, m, ws)
    cnt = ws.cnt
    cand = ws.cand
    target = ws.target
    if nation_ok.shape[0] > 0 and kc > 0:  # G15, G16: only areas every withdrawing block may enter
        allowed = ws.allowed
        for i in range(n):
            allowed[i] = True
        for q in range(m):
            nat = state.block_nation[members[q]]
            for i in range(n):
                allowed[i] = allowed[i] and nation_ok[nat, i]
        kc = restrict_retreat_nb(map_arrays.eastern_link, allowed, cnt[s], orules.max_blocks, m, True, cand, kc,
                                 target)
    for b in range(m):
        orders.executed[members[b]] = True
        orders.block_order[members[b]] = order_id
    if kc == 0:
        return WD_BLOCKED
    # the withdrawal loss (R6, O8: the player's choice, else the strongest block; SoE 7.2: when every
    # enemy block is infantry, cavalry and leaders ignore it, so an infantry block pays, none if there is none)
    cav_exempt = orules.withdraw_cavalry_exempt and all_enemy_inf
    if not (cav_exempt and all_cav) and orules.withdraw_loss > 0:
        best = -1
        for q in range(m):
            b = members[q]
            if cav_exempt and state.block_arm[b] != ARM.INFANTRY:
                continue
            if best < 0 or state.block_sp[b] > state.block_sp[best]:
                best = b
        for q in range(m):
            if members[q] == loss_block and (not cav_exempt or state.block_arm[loss_block] == ARM.INFANTRY):
                best = loss_block
        out_info[WI_LOSS_BLOCK] = best
        state.block_sp[best] = max(state.block_sp[best] - orules.withdraw_loss, 0)
        if state.block_sp[best] == 0:
            out_info[WI_DESTROYED] = 1
            state.block_area[best] = -1
            if state.block_arm[best] == ARM.LEADER:
                state.block_status[best] = STATUS.ELIMINATED_PERMANENT
                before = state.vp[0]
                for _ in range(orules.vp_leader_destroyed):
                    state.vp[0] = vp_add_nb(state.vp[0], side_sign_nb(1 - s))
                out_info[WI_VP] = state.vp[0] - before
            else:
                state.block_status[best] = STATUS.DESTROYED_TO_POOL
    for q in range(m):
        b = members[q]
        if state.block_status[b] != STATUS.ON_MAP:
            continue
        dest = target[q] if target[q] >= 0 else cand[0]
        orders.arrival[0] += 1
        state.block_prev_area[b] = a
        state.block_area[b] = dest
        state.block_arrival[b] = orders.arrival[0]
        orders.moved[b] = True
        orders.pinned[b] = False
        out_dest[b] = dest
        out_info[WI_MOVED] += 1
    return WD_OK


@njit(cache=True, _nrt=False)
def battle_withdraw_mode_nb(state, orders, wd_mode, defender, area):
    """The Withdraw mode (``WD_*`` = ``soe_sim.battle.nb.WITHDRAW_*``) of the battle in ``area`` for
    its ``defender`` (SoE 7.2 Withdraw, reading O8): ``wd_mode[area]`` (what the executed Withdraw
    order there returned) only when that order is ``defender``'s, and — for ``WD_OK``, whose blocks
    all left — only when no ``defender`` block stands in the area now: blocks that came in after the
    withdrawal did not withdraw and fight. Otherwise ``WD_NONE``. (A side that withdrew and whose
    enemy is then attacked in the same area by it, or that moved fresh blocks back in, must not make
    the battle's defender "withdraw": the battle would never be fought and never end.)"""
    mode = wd_mode[area]
    if mode == WD_NONE:
        return WD_NONE
    own = False
    for o in range(orders.n_orders[0]):
        if (orders.order_type[o] == WITHDRAW and orders.order_area[o] == area and orders.order_side[o] == defender
                and orders.order_status[o] == EXECUTED):
            own = True
    if not own:
        return WD_NONE
    if mode == WD_OK:
        for b in range(state.block_side.shape[0]):
            if (state.block_status[b] == STATUS.ON_MAP and state.block_area[b] == area
                    and state.block_side[b] == defender):
                return WD_NONE
    return mode


@njit(cache=True, _nrt=False)
def defend_benefit_order_nb(state, orders, side, area):
    """The Defend order that gives ``side``'s force in ``area`` the Defend Area benefit (SoE 7.2), -1 when
    none does: a placed Defend order of ``side`` there (the last placed) and at least one of its blocks
    began the phase in the area (``block_prev_area < 0``). No side effect, so the policies read it at the
    combat card as the engine will apply it (:func:`defend_flag_nb`)."""
    o_found = -1
    for o in range(orders.n_orders[0]):
        if (orders.order_side[o] == side and orders.order_area[o] == area and orders.order_type[o] == DEFEND
                and orders.order_status[o] != REMOVED):
            o_found = o
    if o_found < 0:
        return -1
    for b in range(state.block_side.shape[0]):
        if (state.block_status[b] == STATUS.ON_MAP and state.block_area[b] == area
                and state.block_side[b] == side and state.block_prev_area[b] < 0):
            return o_found
    return -1


@njit(cache=True, _nrt=False)
def defend_flag_nb(state, orders, side, area):
    """The Defend Area benefit for ``side``'s force in ``area`` (SoE 7.2, :func:`defend_benefit_order_nb`).
    The order becomes EXECUTED (revealed) when the benefit applies."""
    o = defend_benefit_order_nb(state, orders, side, area)
    if o < 0:
        return False
    orders.order_status[o] = EXECUTED
    return True


# =================================================================================================
# Reorganize (SoE 7.2, 7.5)


@njit(cache=True, _nrt=False, internal=True)
def _reorg_ok(state, orders, o, b):
    return _reorg_ok_arr(state.block_status, state.block_side, state.block_area, state.block_prev_area,
                         state.block_in_supply, state.block_sp, state.block_max_sp, orders.moved, orders.detached,
                         orders.executed, orders.order_side[o], orders.order_area[o], orders.order_block[o], b)


@njit(cache=True, inline="always")
def _reorg_ok_arr(block_status, block_side, block_area, block_prev_area, block_in_supply, block_sp, block_max_sp,
                  moved, detached, executed, s, a, designated, b):
    """Block ``b`` may execute a Reorganize order of side ``s`` in area ``a`` whose designated block
    is ``designated`` (-1 none) (arrays only: inlined in the loops over blocks)."""
    return (block_status[b] == STATUS.ON_MAP and block_side[b] == s and block_area[b] == a
            and block_prev_area[b] < 0 and not moved[b] and not detached[b]
            and (not executed[b] or designated == b)
            and block_in_supply[b] and block_sp[b] < block_max_sp[b])


@njit(cache=True, _nrt=False)
def legal_reorganize_nb(state, orders, order_id, out_block):
    """Blocks that may execute Reorganize order ``order_id`` (SoE 7.2, 7.5): in the area, did not
    move (a retreat counts), in supply, below their maximum SP, not detached this phase; only the
    designated block once one is designated. Returns the row count."""
    if orders.order_status[order_id] != PLACED or orders.order_type[order_id] != REORGANIZE:
        return 0
    k = 0
    d = orders.order_block[order_id]
    s = orders.order_side[order_id]
    a = orders.order_area[order_id]
    bst = state.block_status
    bs = state.block_side
    ba = state.block_area
    bprev = state.block_prev_area
    insup = state.block_in_supply
    bsp = state.block_sp
    bmax = state.block_max_sp
    moved = orders.moved
    detached = orders.detached
    executed = orders.executed
    for b in range(bs.shape[0]):
        if d >= 0 and b != d:
            continue
        if (_reorg_ok_arr(bst, bs, ba, bprev, insup, bsp, bmax, moved, detached, executed, s, a, d, b)
                and k < out_block.shape[0]):
            out_block[k] = b
            k += 1
    return k


@njit(cache=True, _nrt=False)
def designate_reorganize_nb(orders, order_id, block):
    """Name the block that will reorganize (SoE 7.2 "the block specified to reorganize at the
    beginning of the battle"): it fights at half strength if attacked."""
    orders.order_block[order_id] = block
    orders.reorganizing[block] = True
    orders.executed[block] = True
    orders.block_order[block] = order_id


@njit(cache=True, _nrt=False)
def execute_reorganize_nb(state, orders, orules, order_id):
    """Execute Reorganize order ``order_id`` (SoE 7.5) after the battles: the designated block
    (else the first legal one) gains ``reorganize_gain`` SP up to its maximum if it is still
    eligible — a block that lost its battle has retreated or is gone, so "if the player wins" is
    implied. Returns the SP gained, or -1 when the order is removed (no block)."""
    if orders.order_status[order_id] != PLACED or orders.order_type[order_id] != REORGANIZE:
        return -1
    b = orders.order_block[order_id]
    if b < 0:
        s = orders.order_side[order_id]
        a = orders.order_area[order_id]
        bst = state.block_status
        bs = state.block_side
        ba = state.block_area
        bprev = state.block_prev_area
        insup = state.block_in_supply
        bsp = state.block_sp
        bmax = state.block_max_sp
        moved = orders.moved
        detached = orders.detached
        executed = orders.executed
        for c in range(bs.shape[0]):
            if _reorg_ok_arr(bst, bs, ba, bprev, insup, bsp, bmax, moved, detached, executed, s, a, -1, c):
                b = c
                break
    if b < 0 or not _reorg_ok(state, orders, order_id, b):
        orders.order_status[order_id] = REMOVED
        s = orders.order_side[order_id]
        if orders.pool_used[s, REORGANIZE] > 0:
            orders.pool_used[s, REORGANIZE] -= 1
        return -1
    gain = min(orules.reorganize_gain, state.block_max_sp[b] - state.block_sp[b])
    state.block_sp[b] += gain
    orders.executed[b] = True
    orders.block_order[b] = order_id
    orders.order_block[order_id] = b
    orders.order_executed[order_id] = 1
    orders.order_status[order_id] = EXECUTED
    return gain


# =================================================================================================
# Rail transport (SoE 7.2, 7.6)


@njit(cache=True, _nrt=True, internal=True)
def _rail_dist_nb(state, map_arrays, orules, side, start, out_dist):
    n = map_arrays.front.shape[0]
    cnt = np.zeros((2, n), dtype=np.int32)
    enemy = np.zeros((2, n), dtype=np.bool_)
    presence_nb(state, cnt, enemy)
    src_row = np.empty(n, dtype=np.int32)
    depot_row = np.zeros(n, dtype=np.bool_)
    depot_dist_row = np.empty(n, dtype=np.int32)
    side_depots_nb(map_arrays.adj_indptr, map_arrays.adj_indices, map_arrays.adj_bits, map_arrays.eastern_link,
                   map_arrays.supply_source, state.supply_base, map_arrays.garrison, enemy, side, src_row, depot_row,
                   depot_dist_row)
    reachable_nb(map_arrays.adj_indptr, map_arrays.adj_indices, map_arrays.adj_kind, np.zeros(0, dtype=np.bool_),
                 map_arrays.eastern_link, enemy[side], side, start, orules.rail_max_areas, True, depot_dist_row,
                 orules.rail_depot_range, out_dist)


@njit(cache=True, _nrt=True, internal=True)
def _rail_battle_dests_nb(state, map_arrays, orules, side, dist, out):
    """EatS II.4.1 Railway transport (reading V5; ``orules.rail_may_join_defended_battle``): the
    battle areas a rail move may end in, as ``out`` (n_areas,) bool: an area with enemy blocks (a
    battle to come) that ``side`` holds from the start of the phase (a block of it that has not
    moved, or its garrison), entered along a rail link from an area the rail move reaches
    (``dist``, :func:`_rail_dist_nb`) with fewer than ``rail_max_areas`` links, and within
    ``rail_depot_range`` clear links of a friendly depot ("must end their movement at the supplied
    space"). It is a last area: the move never continues from it. Returns how many."""
    n = map_arrays.front.shape[0]
    cnt = np.zeros((2, n), dtype=np.int32)
    enemy = np.zeros((2, n), dtype=np.bool_)
    presence_nb(state, cnt, enemy)
    src_row = np.empty(n, dtype=np.int32)
    depot_row = np.zeros(n, dtype=np.bool_)
    depot_dist_row = np.empty(n, dtype=np.int32)
    side_depots_nb(map_arrays.adj_indptr, map_arrays.adj_indices, map_arrays.adj_bits, map_arrays.eastern_link,
                   map_arrays.supply_source, state.supply_base, map_arrays.garrison, enemy, side, src_row, depot_row,
                   depot_dist_row)
    held = np.zeros(n, dtype=np.bool_)
    for b in range(state.block_side.shape[0]):
        if (state.block_status[b] == STATUS.ON_MAP and state.block_side[b] == side and state.block_area[b] >= 0
                and state.block_prev_area[b] < 0):
            held[state.block_area[b]] = True
    k = 0
    for d in range(n):
        out[d] = False
        if cnt[1 - side, d] == 0 or not (held[d] or state.garrison_side[d] == side):
            continue
        if not enterable_nb(map_arrays.eastern_link, side, d):
            continue
        dd = depot_dist_row[d]
        if dd == UNREACHED or dd > orules.rail_depot_range:
            continue
        for e in range(map_arrays.adj_indptr[d], map_arrays.adj_indptr[d + 1]):
            u = map_arrays.adj_indices[e]
            if (map_arrays.adj_kind[e] & LINK.RAIL) != 0 and dist[u] != UNREACHED and dist[u] < orules.rail_max_areas:
                out[d] = True
                k += 1
                break
    return k


@njit(cache=True, _nrt=True, internal=True)
def _rail_impl(state, orders, map_arrays, orules, order_id, out_block, out_dest, write, first_only):
    if order_id < 0 or order_id >= orders.n_orders[0] or orders.order_status[order_id] != PLACED:
        return 0
    if orders.order_type[order_id] != RAIL_TRANSPORT or orders.order_executed[order_id] >= orules.rail_max_blocks:
        return 0
    n = map_arrays.front.shape[0]
    a = orders.order_area[order_id]
    dist = np.empty(n, dtype=np.int32)
    join = np.zeros(n, dtype=np.bool_)  # EatS: battle areas the rail move may end in (V5)
    have = False
    k = 0
    s = orders.order_side[order_id]
    bst = state.block_status
    bs = state.block_side
    ba = state.block_area
    bprev = state.block_prev_area
    insup = state.block_in_supply
    for b in range(bs.shape[0]):
        # in the area since the phase start, in supply, not moved, fought or executed (SoE 7.6); local
        # arrays: a helper taking the named tuples would cost refcount updates per block
        if bst[b] != STATUS.ON_MAP or bs[b] != s or ba[b] != a or bprev[b] >= 0 or not insup[b]:
            continue
        if (orders.moved[b] or orders.fought[b] or orders.executed[b] or orders.detached[b]
                or orders.rail_moved[b]):
            continue
        if not have:
            _rail_dist_nb(state, map_arrays, orules, orders.order_side[order_id], a, dist)
            if orules.rail_may_join_defended_battle:
                _rail_battle_dests_nb(state, map_arrays, orules, s, dist, join)
            have = True
        for d in range(n):
            if d == a or (dist[d] == UNREACHED and not join[d]):
                continue
            if write:
                if k >= out_block.shape[0]:
                    return k
                out_block[k] = b
                out_dest[k] = d
            k += 1
            if first_only:
                return k
    return k


@njit(cache=True, _nrt=False)
def legal_rail_nb(state, orders, map_arrays, orules, order_id, out_block, out_dest):
    """Rail Transport options of order ``order_id`` (SoE 7.2, 7.6; E8): blocks of the area that
    began the phase in supply, have not moved, fought or executed an order, while fewer than
    ``rail_max_blocks`` have gone; destinations every area :func:`~soe_sim.engine.nb.reachable_nb`
    reaches in rail mode (``rail_max_areas`` rail links, no enemy blocks or garrisons, within
    ``rail_depot_range`` clear links of a friendly depot, as of now), and with
    ``orules.rail_may_join_defended_battle`` (EatS II.4.1, V5) the battle areas of
    :func:`_rail_battle_dests_nb`. Rows ``(block, dest)``."""
    return _rail_impl(state, orders, map_arrays, orules, order_id, out_block, out_dest, True, False)


@njit(cache=True, _nrt=False)
def rails_after_rail_nb(state, orders, map_arrays, orules, order_id, block, origin, dest, n, out_block, out_dest):
    """The rows of :func:`legal_rail_nb` for order ``order_id`` after ``block`` of the order went by
    rail from ``origin`` to ``dest`` (:func:`apply_rail_nb`), from the ``n`` rows listed before it
    (``out_block[:n]`` / ``out_dest[:n]``, filtered in place, the order kept): the rows a fresh
    listing gives, or -1 when they must be listed afresh.

    A listing reads the blocks of the order's area that may still go (SoE 7.6) and one rail search
    from that area, which reads the enemy areas (the other side's blocks and garrisons: unchanged by
    this side's move) and the side's depots. A depot is a key city the side holds (SoE 1.3, 1.31),
    so the depots can change only where the move changed whether the side is present in a key city:
    the last of its blocks leaving an ungarrisoned one, or the first entering one. Then, and with
    ``orules.rail_may_join_defended_battle`` (EatS II.4.1, V5: the battle areas it may join read the
    unmoved blocks), this returns -1. Otherwise the rows are the last ones less the moved block's,
    or none once ``rail_max_blocks`` have gone. Each test is the row's own, so the rows may have been
    filtered by nation first (G15, G16)."""
    if orules.rail_may_join_defended_battle:
        return -1
    if orders.order_executed[order_id] >= orules.rail_max_blocks:
        return 0
    bst = state.block_status
    bs = state.block_side
    ba = state.block_area
    s = bs[block]
    key = map_arrays.garrison
    if key[origin] and state.garrison_side[origin] != s and not _own_block_in_nb(bst, bs, ba, s, origin, block):
        return -1  # the side's last block left the key city
    if key[dest] and state.garrison_side[dest] != s and not _own_block_in_nb(bst, bs, ba, s, dest, block):
        return -1  # the side's first block entered the key city
    j = 0
    for i in range(n):
        b = out_block[i]
        if b == block:
            continue
        out_block[j] = b
        out_dest[j] = out_dest[i]
        j += 1
    return j


@njit(cache=True, inline="always")
def _own_block_in_nb(bst, bs, ba, side, area, other_than):
    """Is a block of ``side`` other than ``other_than`` on the map in ``area``? (Arrays only: inlined.)"""
    for b in range(bs.shape[0]):
        if b != other_than and ba[b] == area and bs[b] == side and bst[b] == STATUS.ON_MAP:
            return True
    return False


@njit(cache=True, _nrt=True)
def apply_rail_nb(state, orders, map_arrays, orules, order_id, block, dest):
    """Rail-transport ``block`` to ``dest``. ``block_prev_area`` becomes the rail neighbour of
    ``dest`` on a shortest rail path (lowest index), so a phase-end pull-back (SoE 7.33) goes back
    along the line. Returns that neighbour."""
    n = map_arrays.front.shape[0]
    a = state.block_area[block]
    dist = np.empty(n, dtype=np.int32)
    _rail_dist_nb(state, map_arrays, orules, state.block_side[block], a, dist)
    via = a
    best = -1
    for e in range(map_arrays.adj_indptr[dest], map_arrays.adj_indptr[dest + 1]):
        v = map_arrays.adj_indices[e]
        if (map_arrays.adj_kind[e] & LINK.RAIL) == 0 or dist[v] == UNREACHED:
            continue
        if dist[dest] == UNREACHED:
            # a battle area joined by rail (EatS II.4.1, V5): enter from the nearest reached rail
            # neighbour (lowest index on ties); it is a supporting direction (SoE 7.34)
            if dist[v] >= orules.rail_max_areas:
                continue
            if best < 0 or dist[v] < dist[best] or (dist[v] == dist[best] and v < best):
                best = v
            continue
        if dist[v] != dist[dest] - 1:
            continue
        if best < 0 or v < best:
            best = v
    if best >= 0:
        via = best
    orders.arrival[0] += 1
    state.block_prev_area[block] = via
    state.block_area[block] = dest
    state.block_arrival[block] = orders.arrival[0]
    orders.executed[block] = True
    orders.moved[block] = True
    orders.rail_moved[block] = True
    orders.block_order[block] = order_id
    orders.order_executed[order_id] += 1
    return via
