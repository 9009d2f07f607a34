"""Numba kernels of the leaders' unique orders (SoE 9.0): which leader orders are legal, giving one
(countermanding the orders it replaces), Stalin's immediate reorganization and Budyonny's
full-strength forced march.

Readings of the rule: docs/rules.md "Engine: leader orders" (L1…). The round loop
(:mod:`soe_sim.engine.game.nb`) opens the leader windows, asks the policies (decision ``LEADER``) and
executes the orders with the orders module's kernels.

Layout (like :mod:`soe_sim.engine.orders.nb`): every kernel is ``@njit(cache=True)``, takes the
:class:`~soe_sim.engine.state.GameState` ``state``, the :class:`~soe_sim.engine.orders.OrderState`
``orders`` (both updated in place), the :class:`~soe_sim.data.map.MapArrays` ``m``, the
:class:`~soe_sim.engine.orders.OrderRules` ``orules``, the leader table ``leaders`` and scalars, and
fills caller-allocated ``out`` arrays.

Leader table (``leaders``, int64 ``(n_blocks, N_LT)``, built from ``data/blocks/leaders.toml`` by
:func:`soe_sim.engine.leaders.leader_table`; it travels in ``GameConfig.leaders``): ``LT_ABILITY``
(:data:`ABILITY` code, ``NO_ABILITY`` for every other block and for every block when the rule
``leaders.abilities`` is off), ``LT_RANGE`` (areas from the leader's position; 0 = his own area),
``LT_FRONT`` (``FRONT`` code, ``-1`` = any front).

Option rows (:func:`legal_leader_orders_nb`): ``out_leader[k]`` (the leader block), ``out_type[k]``
(an order type of :mod:`soe_sim.engine.orders.nb`; Sikorski ``RECON``, Haller ``DEFEND``,
Budyonny ``FORCED_MARCH_OUT``, Stalin ``REORGANIZE``), ``out_area[k]`` (the order's area),
``out_block[k]`` (Stalin: the block he reorganizes; -1 otherwise). Rows are in ascending (leader,
area, type, block) order.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from soe_sim._jit import njit
from soe_sim.data.enums import LINK
from soe_sim.engine.nb import (
    N_SUPPLY_SLOTS,
    UNREACHED,
    SupplySearchCache,
    enterable_nb,
    new_supply_search_cache_nb,
    reach_into_nb,
    side_depots_into_nb,
)
from soe_sim.engine.orders import nb as onb
from soe_sim.engine.state import STATUS

# --- leader table columns ----------------------------------------------------------------------
LT_ABILITY = 0
LT_RANGE = 1
LT_FRONT = 2
N_LT = 3
NO_ABILITY = -1
ANY_FRONT = -1


class _AbilityC(NamedTuple):
    """Numba mirror of :class:`~soe_sim.data.enums.LeaderAbility` (SoE 9.0)."""

    ANY_ORDER: int = 0  # Pilsudski, Tukhachevsky: any one order within 2 areas
    RECON: int = 1  # Sikorski: an immediate Recon of any area within 2 areas, at any time
    FORCED_MARCH_OUT_FULL_STRENGTH: int = 2  # Budyonny: Forced March Out in his area, full strength
    FREE_DEFEND: int = 3  # Haller: a free Defend Area order within 2 areas
    REORGANIZE: int = 4  # Stalin: reorganize a block of his area by 1 SP at once (southern front)


ABILITY = _AbilityC()

# --- windows: the moments of an operation phase at which leaders may give orders (reading L2) ----
LW_BEFORE_FORCED = 0  # after order placement, before the Forced March orders are executed
LW_BEFORE_MOVES = 1  # after the Recon orders, before the Move orders
LW_BEFORE_BATTLES = 2  # after the Withdraw orders, before Resolve Battles
LW_AFTER_BATTLES = 3  # after the battles: only Sikorski's Recon ("at any time during an Operation Phase")
N_WINDOWS = 4

# orders that are given to the blocks of their own area (reading L5: these countermand the side's
# unexecuted orders of the same kinds on that area)
_OUT_MASK = ((1 << onb.FORCED_MARCH_OUT) | (1 << onb.MOVE_OUT) | (1 << onb.WITHDRAW) | (1 << onb.DEFEND)
             | (1 << onb.REORGANIZE) | (1 << onb.RAIL_TRANSPORT))


@njit(cache=True, _nrt=False, internal=True)
def is_out_type_nb(t):
    """Order types given to the blocks of their own area (Forced March Out, Move Out, Withdraw,
    Defend, Reorganize, Rail Transport): a leader order of such a type countermands (L5)."""
    # np.int64: an int8 shift count would make the mask int8 when run as Python (NUMBA_DISABLE_JIT)
    return t >= 0 and ((_OUT_MASK >> np.int64(t)) & 1) != 0


@njit(cache=True, _nrt=False, internal=True)
def group_nb(t):
    """Position of an order type in the execution sequence of SoE 7.3: 0 forced marches, 1 Recon,
    2 moves, 3 Withdraw, 4 battles (Defend Area is revealed there), 5 Reorganize, 6 Rail Transport."""
    if t == onb.FORCED_MARCH_TO or t == onb.FORCED_MARCH_OUT:
        return 0
    if t == onb.RECON:
        return 1
    if t == onb.MOVE_TO or t == onb.MOVE_OUT:
        return 2
    if t == onb.WITHDRAW:
        return 3
    if t == onb.DEFEND:
        return 4
    if t == onb.REORGANIZE:
        return 5
    return 6


@njit(cache=True, _nrt=False, internal=True)
def groups_done_nb(window):
    """Execution groups (:func:`group_nb`) already over when ``window`` opens."""
    if window == LW_BEFORE_FORCED:
        return 0
    if window == LW_BEFORE_MOVES:
        return 2
    if window == LW_BEFORE_BATTLES:
        return 4
    return 5


@njit(cache=True, _nrt=False)
def executes_now_nb(ability, order_type, window):
    """Reading L3: a leader order is carried out at once when its type's group of SoE 7.3 is already
    over (it would never be executed otherwise) and always for Sikorski's Recon ("The Recon takes
    place immediately"); any other leader order is placed on the map and executed with its group.
    Stalin's reorganization is immediate too (:func:`reorganize_now_nb`)."""
    if ability == ABILITY.RECON or ability == ABILITY.REORGANIZE:
        return True
    return group_nb(order_type) < groups_done_nb(window)


@njit(cache=True, _nrt=False)
def any_leader_nb(leaders):
    """True when some block of the table has an ability (False: leaders off or none in the game)."""
    for b in range(leaders.shape[0]):
        if leaders[b, LT_ABILITY] != NO_ABILITY:
            return True
    return False


@njit(cache=True, _nrt=False, internal=True)
def _window_ok_nb(ability, window):
    # SoE 9.0: "None may be given once battles are being resolved (except for Sikorski's 'Recon')."
    return window < LW_AFTER_BATTLES or ability == ABILITY.RECON


@njit(cache=True, _nrt=False, internal=True)
def ready_leaders_nb(block_status, block_side, block_area, front, leaders, lids, used, side, window, out_ids):
    """The leaders who can give their order now, their block indices ascending into ``out_ids[:k]``;
    returns ``k``. A leader can: ``side``'s leader on the map with an ability, not used this round
    (SoE 9.0 "once per round"), on his ability's front (``front`` = the map's ``MapArrays.front``), in
    a window his ability allows. ``lids``: the blocks of ``leaders`` with an ability, ascending
    (:func:`leader_ids_nb`). (Plain arrays: this runs at every leader window.)"""
    k = 0
    for q in range(lids.shape[0]):
        b = lids[q]
        ab = leaders[b, LT_ABILITY]
        if not used[b] and block_status[b] == STATUS.ON_MAP and block_side[b] == side:
            a = block_area[b]
            if a >= 0 and _window_ok_nb(ab, window):
                f = leaders[b, LT_FRONT]
                if f == ANY_FRONT or front[a] == f:
                    out_ids[k] = b
                    k += 1
    return k


@njit(cache=True, _nrt=True)
def leader_ids_nb(leaders):
    """The blocks of the leader table ``leaders`` with an ability, ascending (int64): the windows and the
    listing look at these few blocks only."""
    k = 0
    for b in range(leaders.shape[0]):
        if leaders[b, LT_ABILITY] != NO_ABILITY:
            k += 1
    out = np.empty(k, dtype=np.int64)
    k = 0
    for b in range(leaders.shape[0]):
        if leaders[b, LT_ABILITY] != NO_ABILITY:
            out[k] = b
            k += 1
    return out


@njit(cache=True, _nrt=False, internal=True)
def command_range_nb(m, side, start, rng, out_dist, queue):
    """Areas within ``rng`` links of ``start`` (SoE 9.0 "within 2 areas of his position"; reading L4):
    links are counted across anything (friendly, empty or enemy areas, as for a Recon, SoE 7.2),
    except that the Poles never count into or through an Eastern Link (SoE 1.4). ``out_dist``
    (n_areas,) must be ``UNREACHED`` on entry; returns ``k``, the areas being ``queue[:k]`` (start
    first)."""
    ip = m.adj_indptr
    ix = m.adj_indices
    out_dist[start] = 0
    queue[0] = start
    head = 0
    tail = 1
    while head < tail:
        u = queue[head]
        head += 1
        if out_dist[u] >= rng:
            continue
        for e in range(ip[u], ip[u + 1]):
            v = ix[e]
            if out_dist[v] != UNREACHED or not enterable_nb(m.eastern_link, side, v):
                continue
            out_dist[v] = out_dist[u] + 1
            queue[tail] = v
            tail += 1
    return tail


@njit(cache=True, _nrt=False, internal=True)
def _same_type_blocks_nb(order_side, order_area, order_type, order_status, n_ord, side, t, area, ability):
    """SoE 7.2 "never two of the same type of order" in an area (reading L5): a leader order of type
    ``t`` is refused where the side has a non-removed order of that type, unless it countermands it
    (a placed order of an out type other than Defend, which it would replace by an identical one).
    Sikorski's immediate Recon is no marker and is never refused."""
    if ability == ABILITY.RECON or ability == ABILITY.REORGANIZE:
        return False
    for o in range(n_ord):
        if order_side[o] != side or order_area[o] != area or order_type[o] != t or order_status[o] == onb.REMOVED:
            continue
        if order_status[o] == onb.PLACED and is_out_type_nb(t) and t != onb.DEFEND:
            continue  # countermanded and replaced
        return True
    return False


@njit(cache=True, _nrt=True)
def legal_leader_orders_nb(state, orders, m, orules, leaders, used, side, window, out_leader, out_type, out_area,
                           out_block):
    """The leader orders ``side`` may give now (SoE 9.0; readings L1–L7), one row per (leader, type,
    area, block).

    A leader is ready (:func:`ready_leaders_nb`); the order's area is within his range
    (:func:`command_range_nb`); an order row needs room in the OrderState. Per ability:

    * ``ANY_ORDER`` — every type that at least one block could execute now (the placement test of
      SoE 7.2 / reading O2, with the countermanded orders gone): Recon any area; Forced March Out /
      Move Out a block of the area that has executed nothing, is not pinned (in supply for a forced
      march) and has an open link to an enterable neighbour; Forced March To / Move To a block
      elsewhere, in supply, that executed nothing and reaches the area within its allowance; Withdraw
      a block of the area that executed nothing (in the window before the battles, when enemy blocks
      are there: the order is then carried out at once); Defend a block that began the phase there
      and executed nothing; Reorganize a block there that could reorganize (in supply, below its
      maximum, did not move, executed nothing); Rail Transport a block there that could go by rail.
    * ``RECON`` — every area in range (no marker needed: never refused by an earlier Recon).
    * ``FREE_DEFEND`` — Defend as above.
    * ``FORCED_MARCH_OUT_FULL_STRENGTH`` — Forced March Out as above, in range (0: his own area).
    * ``REORGANIZE`` — each block in range below its maximum SP, in supply at the phase start, that
      has executed no order and is not a detachment (``out_block``).

    No row of a type the side already has on that area (:func:`_same_type_blocks_nb`). Windows: only
    Sikorski after the battles. Returns the row count (rows beyond the out arrays are dropped).
    """
    return legal_leader_orders_scratch_nb(state, orders, m, orules, leaders, used, side, window, out_leader, out_type,
                                          out_area, out_block,
                                          new_leader_scratch_nb(leaders, state.block_side.shape[0], m.front.shape[0],
                                                                m.adj_indices.shape[0]))


class LeaderScratch(NamedTuple):
    """Scratch of :func:`legal_leader_orders_scratch_nb` for one leader table (each array but ``lids``
    reset by it before it reads it): int64 ``lids`` the table's leader blocks (:func:`leader_ids_nb`),
    bool ``free`` (n_blocks,), int32 ``cnt`` (2, n_areas), bool ``enemy`` (2, n_areas),
    bool ``eb`` (n_links,), int64 ``counts`` (6, n_areas) (free blocks, free in supply, executed
    nothing, began there, could reorganize, could go by rail), bool ``flags`` (4, n_areas) (has a
    destination, Move To / Forced March To reachable, rail), int32 ``dist`` / ``queue`` /
    ``src_row`` / ``depot_dist`` / ``rdist`` / ``rqueue`` (n_areas,), int64 ``max_move`` (2,
    n_areas), bool ``depot_row`` (n_areas,), ``supply`` the supply searches
    (:class:`~soe_sim.engine.nb.SupplySearchCache`, shared with the game's other kernels in a game loop),
    int64 ``rareas`` (n_areas,), bool ``rel``
    (n_areas,) the areas in range of a ready ANY_ORDER leader, int32 ``hop`` (n_areas,) links to
    them, int64 ``ids`` (n_blocks,) the ready leaders, bool ``inr`` (n_areas,) the areas in a ready
    leader's range (all False between calls), int64 ``alist`` (n_areas,) those areas."""

    lids: np.ndarray
    free: np.ndarray
    cnt: np.ndarray
    enemy: np.ndarray
    eb: np.ndarray
    counts: np.ndarray
    flags: np.ndarray
    dist: np.ndarray
    queue: np.ndarray
    src_row: np.ndarray
    depot_dist: np.ndarray
    rdist: np.ndarray
    rqueue: np.ndarray
    max_move: np.ndarray
    depot_row: np.ndarray
    supply: SupplySearchCache
    rareas: np.ndarray
    rel: np.ndarray
    hop: np.ndarray
    ids: np.ndarray
    inr: np.ndarray
    alist: np.ndarray


@njit(cache=True, _nrt=True, internal=True)
def new_leader_scratch_nb(leaders, n_blocks, n_areas, n_links):
    n = n_areas
    return LeaderScratch(leader_ids_nb(leaders), np.zeros(n_blocks, dtype=np.bool_),
                         np.zeros((2, n), dtype=np.int32), np.zeros((2, n), dtype=np.bool_),
                         np.zeros(n_links, dtype=np.bool_), np.zeros((6, n), dtype=np.int64),
                         np.zeros((4, n), dtype=np.bool_), np.zeros(n, dtype=np.int32), np.zeros(n, dtype=np.int32),
                         np.zeros(n, dtype=np.int32), np.zeros(n, dtype=np.int32), np.zeros(n, dtype=np.int32),
                         np.zeros(n, dtype=np.int32), np.zeros((2, n), dtype=np.int64), np.zeros(n, dtype=np.bool_),
                         new_supply_search_cache_nb(n, N_SUPPLY_SLOTS), np.zeros(n, dtype=np.int64),
                         np.zeros(n, dtype=np.bool_),
                         np.zeros(n, dtype=np.int32), np.zeros(n_blocks, dtype=np.int64), np.zeros(n, dtype=np.bool_),
                         np.zeros(n, dtype=np.int64))


@njit(cache=True, _nrt=False)
def legal_leader_orders_scratch_nb(state, orders, m, orules, leaders, used, side, window, out_leader, out_type,
                                   out_area, out_block, scr):
    """:func:`legal_leader_orders_nb` with the caller's :class:`LeaderScratch` ``scr`` (no
    allocation, so the game loop calls it without reference counting). ``scr`` belongs to the table
    ``leaders`` (``LeaderWork.scr`` of :func:`new_leader_work_nb`) and is reused from call to call: only
    the ready leaders' command ranges of its per-area tables are written and read."""
    # the named tuples are unpacked into local arrays: a helper taking ``state`` / ``orders`` costs a
    # refcount update per array of the tuple at every call (see orders.nb)
    nbk = state.block_side.shape[0]
    bst = state.block_status
    bs = state.block_side
    ba = state.block_area
    ids = scr.ids
    n_ready = ready_leaders_nb(bst, bs, ba, m.front, leaders, scr.lids, used, side, window, ids)
    if n_ready == 0:
        return 0
    executed = orders.executed
    pinned = orders.pinned
    moved = orders.moved
    detached = orders.detached
    rail_moved = orders.rail_moved
    fought = orders.fought
    insup = state.block_in_supply
    n = m.front.shape[0]
    ip = m.adj_indptr
    ix = m.adj_indices
    el = m.eastern_link
    # what the ready leaders' abilities read: the counts per area and the movement tables below are
    # computed only when some ready leader's rows read them (most windows have a Defend-only, Forced
    # March Out-only or Reorganize-only leader ready; Sikorski's Recon and Reorganize read none of them)
    any_order = False
    moves = False  # ANY_ORDER or FORCED_MARCH_OUT_FULL_STRENGTH: enemy presence, closed links, has_dest
    counts = False  # those or FREE_DEFEND: the per-area block counts
    for q in range(n_ready):
        ab = leaders[ids[q], LT_ABILITY]
        any_order |= ab == ABILITY.ANY_ORDER
        moves |= ab == ABILITY.ANY_ORDER or ab == ABILITY.FORCED_MARCH_OUT_FULL_STRENGTH
        counts |= moves or ab == ABILITY.FREE_DEFEND
    cnt = scr.cnt
    enemy = scr.enemy
    eb = scr.eb
    if moves:
        onb.presence_nb(state, cnt, enemy)
        eb[:] = False
        onb.edge_blocked_nb(state, m, side, cnt, eb)
    room = orders.n_orders[0] < orders.order_type.shape[0]
    # the rows are all in the command ranges of the ready leaders (``inr``, listed in ``alist``): the counts
    # per area and ``has_dest`` are read, so computed and reset, there only
    rdist = scr.rdist
    rdist[:] = UNREACHED
    rqueue = scr.rqueue
    inr = scr.inr
    alist = scr.alist
    n_in = 0
    if counts:
        for q in range(n_ready):
            L = ids[q]
            nr = command_range_nb(m, side, ba[L], leaders[L, LT_RANGE], rdist, rqueue)
            for p in range(nr):
                x = rqueue[p]
                rdist[x] = UNREACHED
                if not inr[x]:
                    inr[x] = True
                    alist[n_in] = x
                    n_in += 1

    # per area: blocks that could execute an order given to their own area
    out_n = scr.counts[0]  # free blocks (Move Out)
    fmo_n = scr.counts[1]  # free blocks in supply (Forced March Out)
    wd_n = scr.counts[2]  # blocks that executed nothing (Withdraw)
    def_n = scr.counts[3]  # began the phase there, executed nothing (Defend)
    reorg_n = scr.counts[4]  # could reorganize (Reorganize order)
    rail_n = scr.counts[5]  # could go by rail (Rail Transport)
    for p in range(n_in):
        x = alist[p]
        for r in range(6):
            scr.counts[r, x] = 0
    # "The order may only be executed by blocks that have not executed any other order already this
    # phase" (SoE 9.0), with the orders module's conditions for a move (pinned, detached; O3, O4);
    # ``free`` of every block only for an ANY_ORDER leader (Move To reads the blocks outside his range)
    free = scr.free
    if any_order:
        free[:] = False
    for b in range(nbk if counts else 0):
        if bst[b] != STATUS.ON_MAP or bs[b] != side:
            continue
        a = ba[b]
        if a < 0 or not (any_order or inr[a]):
            continue
        ex = executed[b]
        sup = insup[b]
        fr = not (ex or pinned[b] or moved[b] or detached[b] or rail_moved[b])
        free[b] = fr
        if not inr[a]:
            continue
        if fr:
            out_n[a] += 1
            if sup:
                fmo_n[a] += 1
        if not ex:
            wd_n[a] += 1
            if state.block_prev_area[b] < 0:
                def_n[a] += 1
                if sup and not moved[b] and not detached[b] and state.block_sp[b] < state.block_max_sp[b]:
                    reorg_n[a] += 1
                if sup and not moved[b] and not fought[b] and not detached[b] and not rail_moved[b]:
                    rail_n[a] += 1
    has_dest = scr.flags[0]
    for p in range(n_in if moves else 0):
        a = alist[p]
        has_dest[a] = False
        if out_n[a] == 0:
            continue
        for e in range(ip[a], ip[a + 1]):
            v = ix[e]
            if v != a and not eb[e] and enterable_nb(el, side, v):
                has_dest[a] = True
                break
    for p in range(n_in):  # ``inr`` back to all False for the next call
        inr[alist[p]] = False
    # Move To / Forced March To: movement distances from every area holding free blocks in supply
    # (SoE 7.31: a move ends in the first enemy area; links closed by incoming enemy blocks, O5)
    to_mt = scr.flags[1]
    to_fmt = scr.flags[2]
    has_rail = scr.flags[3]
    if any_order:
        to_mt[:] = False
        to_fmt[:] = False
        has_rail[:] = False
        dist = scr.dist
        dist[:] = UNREACHED
        queue = scr.queue
        scr.max_move[:, :] = 0
        max_mt = scr.max_move[0]
        max_fm = scr.max_move[1]
        for b in range(nbk):
            if free[b] and insup[b]:
                a = ba[b]
                max_mt[a] = max(max_mt[a], onb.allowance_nb(orules, state.block_arm[b], False))
                max_fm[a] = max(max_fm[a], onb.allowance_nb(orules, state.block_arm[b], True))
        # Move To / Forced March To and Rail rows are listed only in the command range of a ready
        # ANY_ORDER leader (``rel``): a search starts only from an area whose link count to ``rel``
        # (``hop``, over every link: no move is shorter) is within its blocks' allowance, and the
        # depots are computed only when an area of ``rel`` could go by rail. The rows are those of
        # a search from every area.
        rel = scr.rel
        rel[:] = False
        for q in range(n_ready):  # rdist is all UNREACHED here (reset after each command range above)
            L = ids[q]
            if leaders[L, LT_ABILITY] == ABILITY.ANY_ORDER:
                nr = command_range_nb(m, side, ba[L], leaders[L, LT_RANGE], scr.rdist, scr.rqueue)
                for p in range(nr):
                    x = scr.rqueue[p]
                    scr.rdist[x] = UNREACHED
                    rel[x] = True
        max_depth = 0
        for a in range(n):
            max_depth = max(max_depth, max_mt[a], max_fm[a])
        hop = scr.hop
        hop[:] = UNREACHED
        tail = 0
        for i in range(n):
            if rel[i]:
                hop[i] = 0
                queue[tail] = i
                tail += 1
        head = 0
        while head < tail:  # the map's links are symmetric (data.map): distance to = distance from
            u = queue[head]
            head += 1
            if hop[u] >= max_depth:
                continue
            for e in range(ip[u], ip[u + 1]):
                v = ix[e]
                if hop[v] == UNREACHED:
                    hop[v] = hop[u] + 1
                    queue[tail] = v
                    tail += 1
        for a in range(n):
            depth = max(max_mt[a], max_fm[a])
            if depth <= 0 or hop[a] == UNREACHED or hop[a] > depth:
                continue
            k = reach_into_nb(ip, ix, m.adj_kind, eb, el, enemy[side], side, a, depth, False, dist, 0, dist, queue)
            for p in range(1, k):
                v = queue[p]
                if dist[v] <= max_mt[a]:
                    to_mt[v] = True
                if dist[v] <= max_fm[a]:
                    to_fmt[v] = True
            for p in range(k):
                dist[queue[p]] = UNREACHED
        # Rail Transport (SoE 7.6): a first rail link into an in-supply area clear of the enemy (O2)
        need_rail = False
        for a in range(n):
            if rail_n[a] > 0 and rel[a]:
                need_rail = True
        if need_rail and orules.rail_max_areas >= 1:
            src_row = scr.src_row
            depot_row = scr.depot_row
            depot_row[:] = False
            dd = scr.depot_dist
            side_depots_into_nb(ip, ix, m.adj_bits, el, m.supply_source, state.supply_base, m.garrison, enemy, side,
                                src_row, depot_row, dd, scr.supply)
            for a in range(n):
                if rail_n[a] == 0 or not rel[a]:
                    continue
                for e in range(ip[a], ip[a + 1]):
                    v = ix[e]
                    if v == a or not enterable_nb(el, side, v) or (m.adj_kind[e] & LINK.RAIL) == 0 or enemy[side, v]:
                        continue
                    if dd[v] != UNREACHED and dd[v] <= orules.rail_depot_range:
                        has_rail[a] = True
                        break

    rareas = scr.rareas
    k = 0
    cap = out_leader.shape[0]
    o_side = orders.order_side
    o_area = orders.order_area
    o_type = orders.order_type
    o_status = orders.order_status
    n_ord = orders.n_orders[0]
    for q in range(n_ready):
        L = ids[q]
        ab = leaders[L, LT_ABILITY]
        if ab != ABILITY.REORGANIZE and not room:
            continue
        la = ba[L]
        nr = command_range_nb(m, side, la, leaders[L, LT_RANGE], rdist, rqueue)
        for p in range(nr):  # the areas in ascending order; rdist reset for the next leader
            x = rqueue[p]
            rdist[x] = UNREACHED
            q = p
            while q > 0 and rareas[q - 1] > x:
                rareas[q] = rareas[q - 1]
                q -= 1
            rareas[q] = x
        for p in range(nr):
            x = rareas[p]
            if ab == ABILITY.REORGANIZE:
                for b in range(nbk):
                    if (bst[b] == STATUS.ON_MAP and bs[b] == side and ba[b] == x and not executed[b]
                            and not detached[b] and insup[b] and state.block_sp[b] < state.block_max_sp[b]):
                        if k < cap:
                            out_leader[k] = L
                            out_type[k] = onb.REORGANIZE
                            out_area[k] = x
                            out_block[k] = b
                            k += 1
                continue
            # one type for the other abilities (``t_lo`` .. ``t_hi``), every type for ANY_ORDER
            t_lo = 0
            t_hi = onb.N_ORDER_TYPES
            if ab == ABILITY.RECON:
                t_lo = onb.RECON
            elif ab == ABILITY.FREE_DEFEND:
                t_lo = onb.DEFEND
            elif ab == ABILITY.FORCED_MARCH_OUT_FULL_STRENGTH:
                t_lo = onb.FORCED_MARCH_OUT
            if ab != ABILITY.ANY_ORDER:
                t_hi = t_lo + 1
            for t in range(t_lo, t_hi):
                ok = False
                if ab == ABILITY.RECON:
                    ok = True
                elif ab == ABILITY.FREE_DEFEND:
                    ok = def_n[x] > 0
                elif ab == ABILITY.FORCED_MARCH_OUT_FULL_STRENGTH:
                    ok = fmo_n[x] > 0 and has_dest[x]
                elif ab == ABILITY.ANY_ORDER:
                    if t == onb.RECON:
                        ok = True
                    elif t == onb.FORCED_MARCH_OUT:
                        ok = fmo_n[x] > 0 and has_dest[x]
                    elif t == onb.MOVE_OUT:
                        ok = out_n[x] > 0 and has_dest[x]
                    elif t == onb.FORCED_MARCH_TO:
                        ok = to_fmt[x]
                    elif t == onb.MOVE_TO:
                        ok = to_mt[x]
                    elif t == onb.WITHDRAW:
                        ok = wd_n[x] > 0 and (window < LW_BEFORE_BATTLES or cnt[1 - side, x] > 0)
                    elif t == onb.DEFEND:
                        ok = def_n[x] > 0
                    elif t == onb.REORGANIZE:
                        ok = reorg_n[x] > 0
                    elif t == onb.RAIL_TRANSPORT:
                        ok = rail_n[x] > 0 and has_rail[x]
                if not ok or _same_type_blocks_nb(o_side, o_area, o_type, o_status, n_ord, side, t, x, ab):
                    continue
                if k < cap:
                    out_leader[k] = L
                    out_type[k] = t
                    out_area[k] = x
                    out_block[k] = -1
                    k += 1
    return k


@njit(cache=True, _nrt=False)
def mark_used_nb(orders, used, side, leader):
    """SoE 9.0: the leader's ability is used for this round (the block is rotated 1/4 turn) and he is
    revealed to the opponent."""
    used[leader] = True
    orders.seen[1 - side, leader] = True


@njit(cache=True, _nrt=False)
def countermand_nb(orders, side, area, order_type, out_ids):
    """SoE 9.0 "a Leader Order can be given to a block(s) that already has an order, which is
    countermanded and taken off of the map" (reading L5): a leader order of an out type on ``area``
    removes the side's placed, unexecuted orders of the out types there (their markers go back to
    the pool). ``out_ids`` receives the removed order ids; returns how many."""
    if not is_out_type_nb(order_type):
        return 0
    k = 0
    for o in range(orders.n_orders[0]):
        if (orders.order_side[o] == side and orders.order_area[o] == area and orders.order_status[o] == onb.PLACED
                and is_out_type_nb(orders.order_type[o])):
            orders.order_status[o] = onb.REMOVED
            t = orders.order_type[o]
            if orders.pool_used[side, t] > 0:
                orders.pool_used[side, t] -= 1
            if k < out_ids.shape[0]:
                out_ids[k] = o
            k += 1
    return k


@njit(cache=True, _nrt=False)
def place_leader_order_nb(orders, m, side, order_type, area):
    """Put a leader's order on the map (reading L1): a new order row of ``side`` on ``area``'s front,
    placed and unexecuted, its marker counted in ``pool_used`` (it goes back like any other when
    unfulfilled); it uses none of the front's order allotment (``placed``, ``recon_placed``: SoE
    7.2, 7.11). Returns the order id, -1 when the OrderState is full."""
    o = orders.n_orders[0]
    if o >= orders.order_type.shape[0]:
        return -1
    orders.order_side[o] = side
    orders.order_front[o] = m.front[area]
    orders.order_type[o] = order_type
    orders.order_area[o] = area
    orders.order_status[o] = onb.PLACED
    orders.order_executed[o] = 0
    orders.order_block[o] = -1
    orders.n_orders[0] = o + 1
    orders.pool_used[side, order_type] += 1
    return o


@njit(cache=True, _nrt=False)
def reorganize_now_nb(state, orders, orules, block):
    """Stalin (SoE 9.0 "May immediately reorganize a block by 1SP in his area"; reading L6): the block
    gains ``reorganize_gain`` SP up to its maximum at once and counts as having executed an order
    this phase (it may not move afterwards). Returns the SP gained."""
    gain = min(orules.reorganize_gain, state.block_max_sp[block] - state.block_sp[block])
    if gain < 0:
        gain = 0
    state.block_sp[block] += gain
    orders.executed[block] = True
    return gain


@njit(cache=True, _nrt=False)
def full_strength_nb(orders, leaders, order_leader):
    """Budyonny (SoE 9.0 "These blocks fight at full strength"): the blocks that executed a Forced
    March order given by a leader with the ``FORCED_MARCH_OUT_FULL_STRENGTH`` ability lose their
    half-strength flag. Call after the last move and before the battles (``block_half_nb``)."""
    for b in range(orders.block_order.shape[0]):
        o = orders.block_order[b]
        if o < 0 or o >= order_leader.shape[0]:
            continue
        L = order_leader[o]
        if L >= 0 and leaders[L, LT_ABILITY] == ABILITY.FORCED_MARCH_OUT_FULL_STRENGTH:
            orders.forced_march[b] = False


class LeaderWork(NamedTuple):
    """Per-game leader scratch (:func:`new_leader_work_nb`): ``used`` (n_blocks,) the leaders whose
    ability is spent this round; ``order_leader`` (order capacity,) the leader who gave each order
    of the phase (-1: a placed order); option rows ``r_leader``, ``r_type``, ``r_area``,
    ``r_block``; ``removed`` (order capacity,) countermanded order ids; ``scr`` the
    :class:`LeaderScratch` of :func:`legal_leader_orders_scratch_nb`."""

    used: np.ndarray
    order_leader: np.ndarray
    r_leader: np.ndarray
    r_type: np.ndarray
    r_area: np.ndarray
    r_block: np.ndarray
    removed: np.ndarray
    scr: LeaderScratch


@njit(cache=True, _nrt=False)
def leader_rows_capacity_nb(leaders, n_areas, n_blocks):
    """Rows that always suffice for :func:`legal_leader_orders_nb` with this table."""
    k = 0
    for b in range(leaders.shape[0]):
        if leaders[b, LT_ABILITY] != NO_ABILITY:
            k += 1
    return max(k, 1) * (onb.N_ORDER_TYPES * n_areas + n_blocks) + 1


@njit(cache=True, _nrt=True)
def new_leader_work_nb(leaders, n_areas, n_blocks, order_capacity, n_links):
    cap = leader_rows_capacity_nb(leaders, n_areas, n_blocks)
    return LeaderWork(np.zeros(n_blocks, dtype=np.bool_), np.full(order_capacity, -1, dtype=np.int64),
                      np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64),
                      np.empty(cap, dtype=np.int64), np.empty(order_capacity, dtype=np.int64),
                      new_leader_scratch_nb(leaders, n_blocks, n_areas, n_links))
