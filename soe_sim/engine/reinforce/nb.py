"""Numba kernels of the Reinforcement Phase (SoE 8.0–8.5) and of scheduled arrivals (SoE 4.0).

Readings of ambiguous text are docs/rules.md RF1–RF14 ("Engine: reinforcement phase"); the
Python wrappers in :mod:`soe_sim.engine.reinforce` show the order in which a phase loop calls them.

Layout (like :mod:`soe_sim.engine.nb`): every kernel is ``@njit(cache=True)``, takes numpy arrays,
scalars and named tuples (fields of :class:`~soe_sim.engine.state.GameState`, of
:class:`~soe_sim.data.map.MapArrays` and :class:`ReinforceRules`), and fills caller-allocated
``out`` arrays. Per-side area arrays have shape ``(2, n_areas)`` indexed by
:data:`~soe_sim.data.enums.SIDE`.

Decisions are split into a *legality* kernel (``legal_*_nb``: a boolean mask of every legal
choice) and an *apply* kernel (``apply_*_nb``: performs one choice in place, re-checks it and
returns ``False`` without changing anything when it is illegal).

Cube pools (SoE 3.2, 8.3, 8.5). Strengthening and building spend cubes from a *pool*:

* the side's saved cubes (``pool_area = -1``, ``pool_nation = -1``): each front's pool
  ``state.cubes[side, front]`` with ``pool_front = front`` when
  ``ReinforceRules.saved_cubes_per_front`` (EatS X: "One front can't have more than 10
  Reinforcements Points", reading V8), else (SoE 8.3, RF14) both fronts' cubes as one pool with
  ``pool_front = -1`` (any front), or
* one strategic city's cubes of this phase (row of :func:`strategic_cubes_nb`;
  ``pool_area`` = the city: new blocks are placed there, 8.5; ``pool_front`` = the city's front:
  only blocks on that front are strengthened, 8.5; ``pool_nation`` = ``Nation.LITHUANIAN`` for
  Kaunas, else ``-1``). Unspent strategic cubes are simply dropped by the caller (8.5).

``pool_cubes`` is a ``(3,)`` int array (infantry / cavalry / allied, columns ``CUBE_*`` of
:mod:`soe_sim.engine.state`) updated in place.

Per-phase trackers (allocated by the caller at the start of the phase, zero/False):
``gained_area`` (2, n_areas) int — SP each side gained from cubes in each area this phase (8.31);
``built`` (n_blocks,) bool — block built this phase (8.4: may not be strengthened).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from soe_sim._jit import njit
from soe_sim.data.enums import ARM, SIDE, Nation, UnitClass
from soe_sim.engine.nb import UNREACHED, garrison_replacement_nb
from soe_sim.engine.state import CUBE_ALLIED, CUBE_CAVALRY, CUBE_INFANTRY, STATUS

NO_KIND = -1  # cube_kind_nb: the block cannot receive cubes (a leader, a foreign nation)
ARRIVE_NONE = -1  # arrive_reinforcements_nb: the block does not arrive now
ARRIVE_DELAYED = -2  # arrive_reinforcements_nb: due, but no area can take it (RF2)

DIVISION = int(UnitClass.DIVISION)
BRIGADE = int(UnitClass.BRIGADE)
LEADER_CLASS = int(UnitClass.LEADER)
N_NATIONS = len(Nation)

# RF5 — whose blocks are "own" (black/white cubes by arm) and "allied" (green cubes) per side.
# NATION_ROLE[side, nation]: 0 = not this side's nation, 1 = the side's own nation, 2 = allied nation.
ROLE_FOREIGN, ROLE_OWN, ROLE_ALLIED = 0, 1, 2
POLISH_ALLIED_NATIONS = (Nation.UKRAINIAN_UNR, Nation.LITHUANIAN_BELARUSIAN, Nation.BELARUSIAN,
                         Nation.COSSACK, Nation.RUSSIAN_VOLUNTEER)
SOVIET_ALLIED_NATIONS = (Nation.UKRAINIAN_UHA, Nation.LITHUANIAN, Nation.LATVIAN)


def _nation_roles() -> np.ndarray:
    t = np.zeros((2, N_NATIONS), dtype=np.int8)
    t[SIDE.POLISH, int(Nation.POLISH)] = ROLE_OWN
    t[SIDE.SOVIET, int(Nation.SOVIET)] = ROLE_OWN
    for n in POLISH_ALLIED_NATIONS:
        t[SIDE.POLISH, int(n)] = ROLE_ALLIED
    for n in SOVIET_ALLIED_NATIONS:
        t[SIDE.SOVIET, int(n)] = ROLE_ALLIED
    return t


NATION_ROLE = _nation_roles()  # a global array: frozen as a constant in @njit code


class ReinforceRules(NamedTuple):
    """Reinforcement constants in kernel-ready form (``data/rules/*.toml``)."""

    brigade_build_cost: int  # SoE 8.4 reinforcement.brigade_build_cost
    division_build_cost: int  # SoE 8.4 reinforcement.division_build_cost
    build_sp: int  # SoE 8.4 reinforcement.build_sp
    front_line_max_sp: int  # SoE 8.31 reinforcement.front_line_max_sp
    max_blocks: int  # SoE 1.0, 7.33 stacking.max_blocks
    # ruleset options applied by the round loop (SoE values in data/rules/soe.toml; EatS X, V8/V9)
    max_saved_cubes_per_front: int  # EatS X: 10 RP per front (0: no cap, SoE 8.4)
    saved_cubes_first: bool  # EatS X: operational RP "should be used first" (SoE: strategic first)
    saved_cubes_per_front: bool  # EatS X: a saved pool per front, spent there (SoE 8.3: one pool per side, RF14)
    built_brigade_may_strengthen: bool  # EatS X.4 (SoE 8.4: no)
    own_nation_builds_at_supply_source_only: bool  # EatS X.3, X.4: Warsaw / the Eastern Links (SoE 8.4: any depot)
    strategic_same_front: bool  # SoE 8.5: a strategic city's cubes only on its front (EatS X: Warsaw's anywhere)
    combine_same_arm: bool  # RF8: 8.2 absorbs only blocks of the absorbing division's arm (the engine's reading)


# --------------------------------------------------------------------------------------------------
# Helpers


@njit(cache=True, _nrt=False)
def cube_kind_nb(side, nation, arm):
    """The cube colour that strengthens / builds a block (SoE 2.0, 3.2; EatS X.2; RF5).

    A block of the side's own nation takes black (infantry) or white (cavalry) cubes by arm; a block
    of an allied nation takes green (allied) cubes whatever its arm ("Units can't be reinforced with
    recruits of a different nationality", EatS X.2). Leaders and blocks of a nation that is neither
    the side's own nor allied: :data:`NO_KIND`.
    """
    if arm == ARM.LEADER or side < 0 or nation < 0:
        return NO_KIND
    role = NATION_ROLE[side, nation]
    if role == ROLE_ALLIED:
        return CUBE_ALLIED
    if role == ROLE_OWN:
        if arm == ARM.CAVALRY:
            return CUBE_CAVALRY
        return CUBE_INFANTRY
    return NO_KIND


@njit(cache=True, _nrt=False)
def build_cost_nb(block_class, rr):
    """Cubes to build a block (SoE 8.4): a brigade ``brigade_build_cost``, a division
    ``division_build_cost``; leaders are never built (-1)."""
    if block_class == BRIGADE:
        return rr.brigade_build_cost
    if block_class == DIVISION:
        return rr.division_build_cost
    return -1


@njit(cache=True, _nrt=True, internal=True)
def _friendly_counts_nb(block_side, block_area, block_status, n_areas):
    cnt = np.zeros((2, n_areas), dtype=np.int32)
    for b in range(block_side.shape[0]):
        a = block_area[b]
        if block_status[b] == STATUS.ON_MAP and a >= 0:
            cnt[block_side[b], a] += 1
    return cnt


@njit(cache=True, _nrt=False, internal=True)
def _has_room_nb(eastern_link, count_row, area, max_blocks):
    """SoE 7.33 stacking (Eastern Links unlimited, 1.4)."""
    return eastern_link[area] or count_row[area] < max_blocks


@njit(cache=True, _nrt=False)
def front_line_nb(adj_indptr, adj_indices, enemy, control, out_front):
    """Front-line areas of both sides (SoE 8.31; RF7).

    ``out_front[s, i]``: area ``i`` is next to an area held by the enemy of ``s`` — one holding
    enemy blocks or an enemy garrison (``enemy`` from :func:`~soe_sim.engine.nb.enemy_presence_nb`)
    or controlled by the enemy (``control``; an Eastern Link is always Soviet-held, E3). An area
    that itself holds the enemy is a front-line area too.
    """
    n = out_front.shape[1]
    for s in range(2):
        e = 1 - s
        for i in range(n):
            f = enemy[s, i]
            if not f:
                for k in range(adj_indptr[i], adj_indptr[i + 1]):
                    j = adj_indices[k]
                    if enemy[s, j] or control[j] == e:
                        f = True
                        break
            out_front[s, i] = f


# --------------------------------------------------------------------------------------------------
# SoE 4.0: scheduled reinforcements


@njit(cache=True, _nrt=True)
def arrive_reinforcements_nb(adj_indptr, adj_indices, eastern_link, enemy, depot, max_blocks, round_, phase,
                             condition_met, block_side, block_status, block_area, block_sp, block_prev_area,
                             block_arrival, block_in_supply, block_arrive_round, block_arrive_phase,
                             block_arrive_area, block_arrive_sp, block_arrive_condition, out_area):
    """Place the scheduled reinforcements that are due (SoE 4.0, 1.4; RF1–RF3), in place.

    A ``SCHEDULED`` block is due when its ``(block_arrive_round, block_arrive_phase)`` is not after
    ``(round_, phase)`` (``phase`` uses the state's codes: 1..N, ``PHASE_REINFORCEMENT``), and, if it
    has an arrival condition (``block_arrive_condition >= 0``, an index into the scenario's special
    rules), ``condition_met[cond]`` is True (decided by the special-rule code, e.g. the 1st Cavalry
    Army's ``arrival_check``). Due blocks are placed in index order at ``block_arrive_sp`` SP:

    * on their arrival area if it holds no enemy blocks or garrison (``enemy[side]``), the side may
      enter it (1.4) and it has room (``max_blocks`` friendly blocks, Eastern Links unlimited);
    * else (RF2) on the friendly supply depot (``depot[side]``, from
      :func:`~soe_sim.engine.nb.supply_depots_nb`; Eastern Links for the Soviets) nearest to the
      arrival area by links (any links the side may enter, enemies ignored: the block comes from
      the track sheet), that holds no enemy and has room; ties by lower area index;
    * else the block stays ``SCHEDULED`` and is tried again at the next call (``ARRIVE_DELAYED``).

    An arriving block gets ``block_prev_area = -1``, ``block_arrival = 0`` (it begins the phase
    there) and ``block_in_supply = True`` until the next supply check.

    out_area : (n_blocks,) int — area where the block was placed, ``ARRIVE_NONE`` (not due) or
        ``ARRIVE_DELAYED``. Returns the number of blocks placed.
    """
    n = eastern_link.shape[0]
    nbk = block_side.shape[0]
    cnt = _friendly_counts_nb(block_side, block_area, block_status, n)
    dist = np.empty(n, dtype=np.int32)
    queue = np.empty(n, dtype=np.int32)
    placed = 0
    for b in range(nbk):
        out_area[b] = ARRIVE_NONE
        if block_status[b] != STATUS.SCHEDULED:
            continue
        r = block_arrive_round[b]
        if r < 0 or r > round_ or (r == round_ and block_arrive_phase[b] > phase):
            continue
        c = block_arrive_condition[b]
        if c >= 0 and (c >= condition_met.shape[0] or not condition_met[c]):
            continue
        s = block_side[b]
        a0 = block_arrive_area[b]
        dest = -1
        if (a0 >= 0 and not enemy[s, a0] and (s == SIDE.SOVIET or not eastern_link[a0])
                and _has_room_nb(eastern_link, cnt[s], a0, max_blocks)):
            dest = a0
        elif a0 >= 0:
            # RF2: nearest friendly depot with room, by links
            for i in range(n):
                dist[i] = UNREACHED
            head = 0
            tail = 0
            if s == SIDE.SOVIET or not eastern_link[a0]:
                dist[a0] = 0
                queue[tail] = a0
                tail += 1
            else:
                # a Polish block scheduled on an Eastern Link (never in valid data): search from its
                # neighbours
                for k in range(adj_indptr[a0], adj_indptr[a0 + 1]):
                    v = adj_indices[k]
                    if not eastern_link[v] and dist[v] == UNREACHED:
                        dist[v] = 1
                        queue[tail] = v
                        tail += 1
            while head < tail:
                u = queue[head]
                head += 1
                for k in range(adj_indptr[u], adj_indptr[u + 1]):
                    v = adj_indices[k]
                    if dist[v] != UNREACHED or (s == SIDE.POLISH and eastern_link[v]):
                        continue
                    dist[v] = dist[u] + 1
                    queue[tail] = v
                    tail += 1
            best = -1
            for i in range(n):
                if dist[i] == UNREACHED or not depot[s, i] or enemy[s, i]:
                    continue
                if not _has_room_nb(eastern_link, cnt[s], i, max_blocks):
                    continue
                if best < 0 or dist[i] < dist[best]:
                    best = i
            dest = best
        if dest < 0:
            out_area[b] = ARRIVE_DELAYED
            continue
        block_status[b] = STATUS.ON_MAP
        block_area[b] = dest
        block_sp[b] = block_arrive_sp[b]
        block_prev_area[b] = -1
        block_arrival[b] = 0
        block_in_supply[b] = True
        cnt[s, dest] += 1
        out_area[b] = dest
        placed += 1
    return placed


# --------------------------------------------------------------------------------------------------
# SoE 8.1: replace garrisons


@njit(cache=True, _nrt=False)
def replace_garrisons_nb(key_city, block_side, block_area, block_status, garrison_side, source_dist, want,
                         out_placed):
    """Place free garrisons (SoE 8.1, 3.0; E12), in place.

    Eligibility is :func:`soe_sim.engine.nb.garrison_replacement_nb` unchanged (it implements 8.1:
    a key city without a garrison, occupied by the side's blocks and no enemy, with a clear path to
    the side's supply source). 8.1 says "may": a garrison is placed where eligible and
    ``want[s, i]`` (pass all True to always place). Control does not change (the city is already
    the side's through its blocks, E5).

    out_placed : (2, n_areas) bool — garrisons placed. Returns the number placed.
    """
    garrison_replacement_nb(key_city, block_side, block_area, block_status, garrison_side, source_dist,
                            out_placed)
    k = 0
    for s in range(2):
        for i in range(key_city.shape[0]):
            if out_placed[s, i] and want[s, i]:
                garrison_side[i] = s
                k += 1
            else:
                out_placed[s, i] = False
    return k


# --------------------------------------------------------------------------------------------------
# SoE 8.2: combine blocks


@njit(cache=True, _nrt=False, internal=True)
def _combine_ok_nb(side, d, b, block_side, block_arm, block_class, block_nation, block_area, block_status,
                   block_sp, block_max_sp, nation_active, same_arm):
    if d == b:
        return False
    if block_side[d] != side or block_side[b] != side:
        return False
    if block_status[d] != STATUS.ON_MAP or block_status[b] != STATUS.ON_MAP:
        return False
    a = block_area[d]
    if a < 0 or block_area[b] != a:
        return False
    if block_class[d] != DIVISION or (block_class[b] != DIVISION and block_class[b] != BRIGADE):
        return False
    if block_arm[d] == ARM.LEADER or block_arm[b] == ARM.LEADER or (same_arm and block_arm[b] != block_arm[d]):
        return False  # RF8: infantry with infantry, cavalry with cavalry (reinforcement.combine_same_arm)
    if block_nation[b] != block_nation[d] or not nation_active[block_nation[d]]:
        return False  # RF8: EatS X.2 no recruits of a different nationality; RF6 neutral nations
    return block_sp[d] + block_sp[b] <= block_max_sp[d]  # RF8: no SP is lost


@njit(cache=True, _nrt=True)
def legal_combines_nb(side, block_side, block_arm, block_class, block_nation, block_area, block_status,
                      block_sp, block_max_sp, nation_active, same_arm, out):
    """Legal absorptions of the Reinforcement Phase (SoE 8.2; RF8).

    ``out[d, b]`` (n_blocks, n_blocks) bool: division ``d`` of ``side`` may absorb block ``b``:
    both on the map in the same area, ``d`` a division, ``b`` a brigade or a division, the same
    arm when ``same_arm`` (``reinforcement.combine_same_arm``, RF8) and the same nation (EatS X.2),
    the nation active (RF6), and ``sp[d] + sp[b] <= max_sp[d]`` (the
    combined SP fit the absorbing block, RF8). Returns the number of legal pairs.
    """
    nbk = block_side.shape[0]
    out[:, :] = False
    out_d = np.empty(nbk * nbk, dtype=np.int64)
    out_b = np.empty(nbk * nbk, dtype=np.int64)
    k = legal_combine_pairs_nb(side, block_side, block_arm, block_class, block_nation, block_area, block_status,
                               block_sp, block_max_sp, nation_active, same_arm, out_d, out_b)
    for i in range(k):
        out[out_d[i], out_b[i]] = True
    return k


@njit(cache=True, _nrt=False)
def legal_combine_pairs_nb(side, block_side, block_arm, block_class, block_nation, block_area, block_status,
                           block_sp, block_max_sp, nation_active, same_arm, out_d, out_b):
    """The pairs of :func:`legal_combines_nb` as lists, in (absorber, absorbed) index order: pair
    ``i`` is ``(out_d[i], out_b[i])`` (``out_*`` of at least ``n_blocks**2`` entries, or as many as
    there can be pairs). Returns the number of pairs."""
    # Same predicate as _combine_ok_nb, written inline with the absorbing division's tests hoisted
    # out of the inner loop (a helper call per pair costs ~10 ns per array argument in refcounts).
    nbk = block_side.shape[0]
    k = 0
    for d in range(nbk):
        if block_side[d] != side or block_status[d] != STATUS.ON_MAP:
            continue
        a = block_area[d]
        if a < 0 or block_class[d] != DIVISION or block_arm[d] == ARM.LEADER:
            continue
        if not nation_active[block_nation[d]]:
            continue
        for b in range(nbk):
            if b == d or block_area[b] != a or block_side[b] != side or block_status[b] != STATUS.ON_MAP:
                continue
            if block_class[b] != DIVISION and block_class[b] != BRIGADE:
                continue
            if block_arm[b] == ARM.LEADER or (same_arm and block_arm[b] != block_arm[d]):
                continue
            if block_nation[b] != block_nation[d]:
                continue
            if block_sp[d] + block_sp[b] <= block_max_sp[d]:  # RF8: no SP is lost
                if k < out_d.shape[0]:
                    out_d[k] = d
                    out_b[k] = b
                k += 1
    return k


@njit(cache=True, _nrt=False)
def combine_pairs_after_combine_nb(d, b, block_sp, block_max_sp, k, out_d, out_b):
    """The pairs of :func:`legal_combine_pairs_nb` after division ``d`` absorbed block ``b``
    (:func:`apply_combine_nb`), from the ``k`` pairs listed before it (``out_d[:k]`` /
    ``out_b[:k]``, filtered in place, the order kept; returns how many are left): the same pairs a
    fresh listing gives.

    A pair's legality reads only its own two blocks (SoE 8.2, RF8), and a combine changes only the
    two blocks it joins: ``b`` leaves the map, so every pair with ``b`` goes, and ``d`` has more SP,
    so a pair with ``d`` stays only while the SP still fit the absorbing division. No pair can
    appear. The game loop lists once per side and filters after each combine (8.2 is one decision
    per combine)."""
    j = 0
    for i in range(k):
        x = out_d[i]
        y = out_b[i]
        if x == b or y == b:
            continue
        if (x == d or y == d) and block_sp[x] + block_sp[y] > block_max_sp[x]:
            continue  # RF8: no SP is lost
        out_d[j] = x
        out_b[j] = y
        j += 1
    return j


@njit(cache=True, _nrt=False)
def apply_combine_nb(side, d, b, block_side, block_arm, block_class, block_nation, block_area, block_status,
                     block_sp, block_max_sp, block_prev_area, block_arrival, block_in_supply, nation_active,
                     same_arm):
    """Division ``d`` absorbs block ``b`` (SoE 8.2), in place; False (nothing done) when illegal.

    ``d`` gains ``b``'s SP; ``b`` goes back to the force pool (``FORCE_POOL``, off the map, 0 SP),
    where it may be built again (8.4) or used for a detachment (2.2).
    """
    if not _combine_ok_nb(side, d, b, block_side, block_arm, block_class, block_nation, block_area,
                          block_status, block_sp, block_max_sp, nation_active, same_arm):
        return False
    block_sp[d] += block_sp[b]
    block_sp[b] = 0
    block_status[b] = STATUS.FORCE_POOL
    block_area[b] = -1
    block_prev_area[b] = -1
    block_arrival[b] = 0
    block_in_supply[b] = True
    return True


# --------------------------------------------------------------------------------------------------
# SoE 8.3, 8.31: strengthen blocks


@njit(cache=True, _nrt=False, internal=True)
def _strengthen_ok_nb(side, b, block_side, block_arm, block_nation, block_area, block_status, block_sp,
                      block_max_sp, block_in_supply, built, nation_active, front, front_line, gained_area,
                      rr, pool_cubes, pool_front, pool_nation):
    if block_side[b] != side or block_status[b] != STATUS.ON_MAP:
        return False
    a = block_area[b]
    if a < 0 or not block_in_supply[b] or built[b]:
        return False
    if block_sp[b] >= block_max_sp[b]:
        return False
    nat = block_nation[b]
    if not nation_active[nat]:
        return False
    if pool_nation >= 0 and nat != pool_nation:
        return False
    if pool_front >= 0 and front[a] != pool_front:
        return False
    k = cube_kind_nb(side, nat, block_arm[b])
    if k < 0 or pool_cubes[k] < 1:
        return False
    if front_line[side, a] and gained_area[side, a] >= rr.front_line_max_sp:
        return False
    return True


@njit(cache=True, _nrt=False)
def legal_strengthen_nb(side, block_side, block_arm, block_nation, block_area, block_status, block_sp,
                        block_max_sp, block_in_supply, built, nation_active, front, front_line, gained_area,
                        rr, pool_cubes, pool_front, pool_nation, out):
    """Blocks that may gain 1 SP for 1 cube from the pool (SoE 8.3, 8.31, 8.4, 8.5; RF5–RF7, RF10).

    ``out[b]`` (n_blocks,) bool: ``b`` is a block of ``side`` on the map, in supply
    (``block_in_supply``, SoE 7.7 as computed at the start of the phase), below its ``max_sp``,
    not built this phase (``built``, 8.4), of an active nation (RF6), the pool holds a cube of its
    colour (:func:`cube_kind_nb`), it stands on ``pool_front`` and is of ``pool_nation`` when these
    are ``>= 0`` (8.5), and, in a front-line area of ``side`` (``front_line`` from
    :func:`front_line_nb`), fewer than ``rr.front_line_max_sp`` SP were gained in that area this
    phase (``gained_area[side]``, 8.31, from any pool). Returns the number of legal blocks.
    """
    # _strengthen_ok_nb written inline (a helper call per block costs refcount traffic per array)
    k = 0
    for b in range(block_side.shape[0]):
        out[b] = False
        if block_side[b] != side or block_status[b] != STATUS.ON_MAP:
            continue
        a = block_area[b]
        if a < 0 or not block_in_supply[b] or built[b]:
            continue
        if block_sp[b] >= block_max_sp[b]:
            continue
        nat = block_nation[b]
        if not nation_active[nat]:
            continue
        if pool_nation >= 0 and nat != pool_nation:
            continue
        if pool_front >= 0 and front[a] != pool_front:
            continue
        ck = cube_kind_nb(side, nat, block_arm[b])
        if ck < 0 or pool_cubes[ck] < 1:
            continue
        if front_line[side, a] and gained_area[side, a] >= rr.front_line_max_sp:
            continue
        out[b] = True
        k += 1
    return k


@njit(cache=True, _nrt=False)
def apply_strengthen_nb(side, b, block_side, block_arm, block_nation, block_area, block_status, block_sp,
                        block_max_sp, block_in_supply, built, nation_active, front, front_line, gained_area,
                        rr, pool_cubes, pool_front, pool_nation):
    """Spend one cube of ``b``'s colour from the pool for +1 SP (SoE 8.3), in place.

    Updates ``block_sp``, ``pool_cubes`` and ``gained_area`` (8.31). False (nothing done) when not
    legal (see :func:`legal_strengthen_nb`).
    """
    if not _strengthen_ok_nb(side, b, block_side, block_arm, block_nation, block_area, block_status, block_sp,
                             block_max_sp, block_in_supply, built, nation_active, front, front_line,
                             gained_area, rr, pool_cubes, pool_front, pool_nation):
        return False
    k = cube_kind_nb(side, block_nation[b], block_arm[b])
    pool_cubes[k] -= 1
    block_sp[b] += 1
    gained_area[side, block_area[b]] += 1
    return True


@njit(cache=True, _nrt=False)
def strengthen_after_spend_nb(side, block_arm, block_nation, block_area, block_sp, block_max_sp, front_line,
                              gained_area, rr, pool_cubes, out):
    """:func:`legal_strengthen_nb`'s mask after cubes of the same pool were spent by
    :func:`apply_strengthen_nb` or :func:`apply_build_nb`, from the mask listed before (``out``,
    (n_blocks,) bool, cleared in place where a block no longer qualifies; returns how many are
    left): the same mask a fresh listing gives, provided every block built since is still marked
    in ``built``.

    Within one pool the listing's inputs only move one way: the pool's cubes go down, SP and the
    SP gained per area (8.31) go up, and a built block is marked ``built`` (8.4) — so a block can
    leave the mask but never join it, and only the tests reading those values are made again. (A
    block built and then unmarked, EatS X.4 ``built_brigade_may_strengthen``, joins it: the caller
    lists afresh then.)"""
    k = 0
    for b in range(out.shape[0]):
        if not out[b]:
            continue
        a = block_area[b]
        ok = block_sp[b] < block_max_sp[b]
        if ok:
            ck = cube_kind_nb(side, block_nation[b], block_arm[b])
            ok = pool_cubes[ck] >= 1  # SoE 8.3: a cube of its colour
        if ok and front_line[side, a] and gained_area[side, a] >= rr.front_line_max_sp:
            ok = False  # SoE 8.31
        out[b] = ok
        if ok:
            k += 1
    return k


# --------------------------------------------------------------------------------------------------
# SoE 8.4: build new blocks


@njit(cache=True, _nrt=False, internal=True)
def _build_block_ok_nb(side, b, block_side, block_arm, block_class, block_nation, block_status, nation_active,
                       rr, pool_cubes, pool_nation):
    if block_side[b] != side:
        return False
    st = block_status[b]
    if st != STATUS.FORCE_POOL and st != STATUS.DESTROYED_TO_POOL:
        return False  # 8.4: permanently eliminated (7.42, 7.71, 9.0) and scheduled blocks never
    nat = block_nation[b]
    if not nation_active[nat]:
        return False
    if pool_nation >= 0 and nat != pool_nation:
        return False
    cost = build_cost_nb(block_class[b], rr)
    k = cube_kind_nb(side, nat, block_arm[b])
    if cost < 0 or k < 0:
        return False
    return pool_cubes[k] >= cost


@njit(cache=True, _nrt=False, internal=True)
def _build_area_ok_nb(side, a, eastern_link, depot, enemy, cnt_row, rr, pool_area):
    if pool_area >= 0 and a != pool_area:
        return False  # 8.5: built on the strategic city
    if not depot[side, a] or enemy[side, a]:
        return False  # 8.4: a friendly supply depot
    if side == SIDE.POLISH and eastern_link[a]:
        return False  # 1.4
    return _has_room_nb(eastern_link, cnt_row, a, rr.max_blocks)  # RF9: stacking


@njit(cache=True, _nrt=True)
def legal_builds_nb(side, block_side, block_arm, block_class, block_nation, block_area, block_status,
                    nation_active, nation_area_ok, eastern_link, depot, enemy, rr, pool_cubes, pool_area,
                    pool_nation, out):
    """Legal builds ``(block, area)`` (SoE 8.4, 8.5; RF6, RF9, RF10).

    ``out[b, a]`` (n_blocks, n_areas) bool: ``b`` is a block of ``side`` in the force pool
    (``FORCE_POOL`` or ``DESTROYED_TO_POOL``; never ``ELIMINATED_PERMANENT``), not a leader, of an
    active nation (RF6) and of ``pool_nation`` when ``>= 0``, and the pool holds its cost
    (``rr.brigade_build_cost`` / ``rr.division_build_cost``) in cubes of its colour; ``a`` is a
    friendly supply depot (``depot[side]``) free of the enemy, with room for one more block
    (``rr.max_blocks``, Eastern Links unlimited), allowed for the block's nation
    (``nation_area_ok[nation, a]``: scenario front restrictions, the Lithuanian radius) and equal to
    ``pool_area`` when ``>= 0`` (8.5). Returns the number of legal pairs.
    """
    nbk = block_side.shape[0]
    n = eastern_link.shape[0]
    out[:, :] = False
    out_b = np.empty(nbk * n, dtype=np.int64)
    out_a = np.empty(nbk * n, dtype=np.int64)
    k = legal_build_pairs_nb(side, block_side, block_arm, block_class, block_nation, block_area, block_status,
                             nation_active, nation_area_ok, eastern_link, depot, enemy, rr, pool_cubes, pool_area,
                             pool_nation, np.zeros(n, dtype=np.int32), np.zeros(n, dtype=np.bool_), out_b, out_a)
    for i in range(k):
        out[out_b[i], out_a[i]] = True
    return k


@njit(cache=True, _nrt=False)
def legal_build_pairs_nb(side, block_side, block_arm, block_class, block_nation, block_area, block_status,
                         nation_active, nation_area_ok, eastern_link, depot, enemy, rr, pool_cubes, pool_area,
                         pool_nation, cnt, area_ok, out_b, out_a):
    """The pairs of :func:`legal_builds_nb` as lists, in (block, area) index order: pair ``i`` is
    ``(out_b[i], out_a[i])`` (``out_*`` of at least ``n_blocks * n_areas`` entries, or as many as
    there can be pairs); ``cnt`` (n_areas,) int32 and ``area_ok`` (n_areas,) bool are scratch.
    Returns the number of pairs."""
    # _build_area_ok_nb / _build_block_ok_nb written inline: a helper with several exits called per
    # area / block keeps the refcount updates of its array arguments (~10 ns per array per call)
    nbk = block_side.shape[0]
    n = eastern_link.shape[0]
    for a in range(n):  # blocks of the side per area
        cnt[a] = 0
        area_ok[a] = False
    for b in range(nbk):
        a = block_area[b]
        if block_status[b] == STATUS.ON_MAP and a >= 0 and block_side[b] == side:
            cnt[a] += 1
    n_ok = 0
    for a in range(n):
        if pool_area >= 0 and a != pool_area:
            continue  # 8.5: built on the strategic city
        if not depot[side, a] or enemy[side, a]:
            continue  # 8.4: a friendly supply depot
        if side == SIDE.POLISH and eastern_link[a]:
            continue  # 1.4
        if eastern_link[a] or cnt[a] < rr.max_blocks:  # RF9: stacking
            area_ok[a] = True
            n_ok += 1
    k = 0
    for b in range(nbk):
        if n_ok == 0 or block_side[b] != side:
            continue
        st = block_status[b]
        if st != STATUS.FORCE_POOL and st != STATUS.DESTROYED_TO_POOL:
            continue  # 8.4: permanently eliminated (7.42, 7.71, 9.0) and scheduled blocks never
        nat = block_nation[b]
        if not nation_active[nat]:
            continue
        if pool_nation >= 0 and nat != pool_nation:
            continue
        cost = build_cost_nb(block_class[b], rr)
        ck = cube_kind_nb(side, nat, block_arm[b])
        if cost < 0 or ck < 0 or pool_cubes[ck] < cost:
            continue
        for a in range(n):
            if area_ok[a] and nation_area_ok[nat, a]:
                if k < out_b.shape[0]:
                    out_b[k] = b
                    out_a[k] = a
                k += 1
    return k


@njit(cache=True, _nrt=False)
def build_pairs_after_spend_nb(side, block_arm, block_class, block_nation, block_status, eastern_link, rr, pool_cubes,
                               built_area, cnt, k, out_b, out_a):
    """The pairs of :func:`legal_build_pairs_nb` after cubes of the same pool were spent, from the
    ``k`` pairs listed before (``out_b[:k]`` / ``out_a[:k]``, filtered in place, the order kept;
    returns how many are left): the same pairs a fresh listing gives, and the same pairs the
    caller's row filters (``front_build_pairs_only_nb``, ``home_build_pairs_only_nb``: each reads
    only its row and the map) left, if applied to the listing.

    ``built_area``: the area where :func:`apply_build_nb` has just put a block (-1 after a
    strengthen); ``cnt`` (n_areas,) the listing's count of the side's blocks per area, which this
    call keeps up to date. Within one pool, the listing's inputs only move one way — the cubes go
    down, a built block leaves the force pool, an area fills up (RF9) — so rows only disappear; the
    depots, the enemy and the nations' areas are those of the phase's start (8.4)."""
    if built_area >= 0:
        cnt[built_area] += 1
    j = 0
    for i in range(k):
        b = out_b[i]
        a = out_a[i]
        st = block_status[b]
        if st != STATUS.FORCE_POOL and st != STATUS.DESTROYED_TO_POOL:
            continue  # the block just built
        ck = cube_kind_nb(side, block_nation[b], block_arm[b])
        if pool_cubes[ck] < build_cost_nb(block_class[b], rr):
            continue  # SoE 8.4: its cost in cubes of its colour
        if not eastern_link[a] and cnt[a] >= rr.max_blocks:
            continue  # RF9: stacking
        out_b[j] = b
        out_a[j] = a
        j += 1
    return j


@njit(cache=True, _nrt=True)
def apply_build_nb(side, b, a, block_side, block_arm, block_class, block_nation, block_area, block_status,
                   block_sp, block_prev_area, block_arrival, block_in_supply, built, nation_active,
                   nation_area_ok, eastern_link, depot, enemy, rr, pool_cubes, pool_area, pool_nation):
    """Build block ``b`` at ``rr.build_sp`` SP in area ``a`` (SoE 8.4), in place.

    Pays the cost from ``pool_cubes``, puts the block ``ON_MAP`` in ``a`` and marks ``built[b]`` (it
    may not be strengthened this phase). False (nothing done) when not legal (see
    :func:`legal_builds_nb`).
    """
    n = eastern_link.shape[0]
    if a < 0 or a >= n:
        return False
    if not _build_block_ok_nb(side, b, block_side, block_arm, block_class, block_nation, block_status,
                              nation_active, rr, pool_cubes, pool_nation):
        return False
    if not nation_area_ok[block_nation[b], a]:
        return False
    cnt = _friendly_counts_nb(block_side, block_area, block_status, n)
    if not _build_area_ok_nb(side, a, eastern_link, depot, enemy, cnt[side], rr, pool_area):
        return False
    k = cube_kind_nb(side, block_nation[b], block_arm[b])
    pool_cubes[k] -= build_cost_nb(block_class[b], rr)
    block_status[b] = STATUS.ON_MAP
    block_area[b] = a
    block_sp[b] = rr.build_sp
    block_prev_area[b] = -1
    block_arrival[b] = 0
    block_in_supply[b] = True  # standing on a depot (7.7)
    built[b] = True
    return True


# --------------------------------------------------------------------------------------------------
# SoE 8.5: strategic reinforcements


@njit(cache=True, _nrt=False)
def strategic_cubes_nb(strategic_cubes, control, depot, side, kaunas, lithuania_allied, out):
    """Strategic cubes ``side`` may pull this phase, per city (SoE 8.5; RF11, RF12).

    ``out[i, :]`` (n_areas, 3) int = ``strategic_cubes[i, :]`` when ``side`` controls ``i`` and it
    is in supply — i.e. it is one of the side's supply depots (1.31: "A controlled key city acts
    as a Supply Depot if it is in-supply"; Eastern Links always, E3) — else 0. Kaunas (``kaunas``,
    ``-1`` none): only the Soviets, and only when ``lithuania_allied`` (Historical Event card 23);
    its cubes are then for Lithuanian blocks only (the caller's pool uses ``pool_nation``).
    Returns the total number of cubes.
    """
    n = control.shape[0]
    tot = 0
    for i in range(n):
        ok = control[i] == side and depot[side, i]
        if i == kaunas and not (side == SIDE.SOVIET and lithuania_allied):
            ok = False
        for c in range(out.shape[1]):
            v = strategic_cubes[i, c] if ok else 0
            out[i, c] = v
            tot += v
    return tot


@njit(cache=True, _nrt=True)
def nearest_leader_front_nb(adj_indptr, adj_indices, front, city, side, block_side, block_arm, block_area,
                            block_status, default_front):
    """SoE 10.2 Klintsy rivalry (RF12): the front of the ``side`` leader block nearest to ``city``.

    Distance in links over the whole map (enemies ignored); the leader's front is the map front of
    the area he stands in; equal distances on both fronts go to the northern front (10.2: "The
    northern commander receives the reinforcements in case of a tie"). ``default_front`` when no
    leader of ``side`` is on the map.
    """
    n = front.shape[0]
    dist = np.full(n, UNREACHED, dtype=np.int32)
    queue = np.empty(n, dtype=np.int32)
    dist[city] = 0
    queue[0] = city
    head = 0
    tail = 1
    while head < tail:
        u = queue[head]
        head += 1
        for k in range(adj_indptr[u], adj_indptr[u + 1]):
            v = adj_indices[k]
            if dist[v] == UNREACHED:
                dist[v] = dist[u] + 1
                queue[tail] = v
                tail += 1
    best_d = -1
    best_f = default_front
    for b in range(block_side.shape[0]):
        a = block_area[b]
        if block_side[b] != side or block_arm[b] != ARM.LEADER or block_status[b] != STATUS.ON_MAP or a < 0:
            continue
        d = dist[a]
        if d == UNREACHED:
            continue
        f = front[a]
        if best_d < 0 or d < best_d or (d == best_d and f < best_f):
            best_d = d
            best_f = f
    return best_f
