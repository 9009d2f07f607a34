"""Numba kernels of the engine foundations: presence, supply, control, VP, movement and retreat paths.

Rules: SoE 1.3 (control, neutral cities), 1.31 (supply depots), 1.4 (Eastern Links), 3.0
(garrisons), 7.31–7.33 (movement, stopping, stacking), 7.42 (retreat), 7.6 (rail transport), 7.7
and 7.71 (supply), 7.8 (VP), 8.1 (garrison replacement), 9.0 (leaders always in supply). Readings
of ambiguous text are docs/rules.md E1–E14.

Layout (like :mod:`soe_sim.battle.nb`): every kernel is ``@njit(cache=True)``, takes only numpy
arrays, scalars and named tuples (fields of :class:`~soe_sim.engine.state.GameState` and of
:class:`~soe_sim.data.map.MapArrays`), and fills caller-allocated ``out`` arrays. Per-side area
arrays have shape ``(2, n_areas)`` indexed by :data:`~soe_sim.data.enums.SIDE`.

Vocabulary
----------
* *enemy area* for side ``s``: holds blocks or a garrison of side ``1 - s``
  (:func:`enemy_presence_nb`).
* *clear path* (SoE 1.31): a path whose areas hold no enemy blocks or garrisons. The areas at
  both ends are included; a BFS in this module assigns a distance to an enemy area it meets but never
  continues through it (E1).
* *enterable*: Polish blocks and paths never enter a Soviet Eastern Link (SoE 1.4, E3).
* distances count links crossed: the start area is 0, a neighbour 1 (E2).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import config
from numba.cpython.unsafe.numbers import trailing_zeros

from soe_sim._jit import njit
from soe_sim.data.enums import ARM, LINK, SIDE
from soe_sim.data.map import BITSET_WORDS
from soe_sim.engine.state import STATUS

UNREACHED = -1  # distance of an area no clear path reaches
PULLBACK_NONE = -1  # overstack_pullback_nb: block not moved
PULLBACK_ELIMINATED = -2  # overstack_pullback_nb: block eliminated (no area to go to)
ENCIRCLED = -1  # retreat_targets_nb: block has no area to retreat to (SoE 7.42)
UNLIMITED = 1 << 30  # stacking capacity of an Eastern Link (SoE 1.4, 7.33)
assert BITSET_WORDS == 4, "_clear_bfs_bits_nb keeps an area set in four words"

# the slots of a SupplySearchCache: per side, the search from the supply sources and the one from the depots
N_SUPPLY_SLOTS = 4
SLOT_SOURCE = 0  # + 2 * side
SLOT_DEPOT = 1  # + 2 * side
# a slot's key: the seed and enemy area sets of the search (BITSET_WORDS words each), then its side + 1 (0: empty)
SUPPLY_KEY_WORDS = 2 * BITSET_WORDS + 1


class SupplySearchCache(NamedTuple):
    """The last supply searches (whole-map clear-path searches, SoE 1.31, 7.7) and their scratch.

    A game computes the same supply search again and again on a position that has not changed in
    between: the order placement of each side, the leader windows and the supply phase all ask for the
    depots of the same blocks (docs/engine-design.md "Session 42"). A search's distances depend only
    on the map, its side and its seed and enemy area sets, so :func:`supply_search_nb` keeps, per slot,
    the last search's seed and enemy sets (``key``) and distances (``dist``) and copies them out when
    asked again for the same sets. One cache belongs to one map (its scratch is sized for it): the
    game loop shares one between its kernels (``work.new_game_scratch``).

    key : (n_slots, SUPPLY_KEY_WORDS) uint64 — per slot the seed set, the enemy set and ``side + 1``
        (``0``: empty); ``n_slots`` is ``N_SUPPLY_SLOTS`` (``0``: nothing is kept)
    dist : (n_slots, n_areas) int32 — the distances of the slot's search
    seeds : (n_areas,) bool — scratch of the source search's seeds
    queue : (n_areas,) int32 — scratch of the searches over the link lists (maps of over 256 areas)
    """

    key: np.ndarray
    dist: np.ndarray
    seeds: np.ndarray
    queue: np.ndarray


@njit(cache=True, _nrt=True)
def new_supply_search_cache_nb(n_areas, n_slots):
    """An empty :class:`SupplySearchCache` of ``n_slots`` slots (``N_SUPPLY_SLOTS``, or ``0``: scratch
    only, nothing kept) for a map of ``n_areas`` areas."""
    return SupplySearchCache(np.zeros((n_slots, SUPPLY_KEY_WORDS), dtype=np.uint64),
                             np.zeros((n_slots, n_areas), dtype=np.int32), np.zeros(n_areas, dtype=np.bool_),
                             np.zeros(n_areas, dtype=np.int32))


# out_counts columns of apply_out_of_supply_nb
OOS_SP_LOST = 0  # blocks that lost 1 SP (eliminated ones included)
OOS_ELIMINATED = 1  # blocks eliminated permanently
OOS_GARRISONS = 2  # garrisons removed
N_OOS = 3


@njit(cache=True, _nrt=False)
def side_sign_nb(side):
    """+1 for the Poles, -1 for the Soviets: the direction of the signed VP track (SoE 7.8)."""
    return 1 if side == SIDE.POLISH else -1


@njit(cache=True, _nrt=False)
def enterable_nb(eastern_link, side, area):
    """SoE 1.4, 7.33: Eastern Links "are accessible to Soviet blocks only"."""
    return side == SIDE.SOVIET or not eastern_link[area]


@njit(cache=True, _nrt=False)
def enemy_presence_nb(block_side, block_area, block_status, garrison_side, out_blocks, out_enemy):
    """Blocks per side and enemy presence per area (SoE 1.31 clear path, 7.31, 7.4).

    Parameters
    ----------
    block_side, block_area, block_status : (n_blocks,) arrays of the state
    garrison_side : (n_areas,) int8, ``-1`` none
    out_blocks : (2, n_areas) int — number of side ``s`` blocks on the map in each area
    out_enemy : (2, n_areas) bool — ``out_enemy[s, i]``: area ``i`` holds blocks or a garrison of
        side ``1 - s`` (an enemy area for ``s``)
    """
    n = out_blocks.shape[1]
    out_blocks[:, :] = 0
    for b in range(block_side.shape[0]):
        a = block_area[b]
        if block_status[b] == STATUS.ON_MAP and a >= 0:
            out_blocks[block_side[b], a] += 1
    # ``|`` where ``or`` branched per area and side: one branch-free pass per row
    for i in range(n):
        out_enemy[0, i] = (out_blocks[1, i] > 0) | (garrison_side[i] == 1)
    for i in range(n):
        out_enemy[1, i] = (out_blocks[0, i] > 0) | (garrison_side[i] == 0)


@njit(cache=True, _nrt=True, internal=True)
def clear_bfs_nb(adj_indptr, adj_indices, adj_bits, seeds, enemy_row, eastern_link, side, blocked_area, out_dist):
    """Shortest clear-path distance from any seed area, for ``side`` (SoE 1.31 "clear path").

    Seeds that are enemy areas or not enterable are ignored. An area is reached through areas that
    are not enemy areas; an enemy area gets a distance but the path never continues through it
    (E1). ``blocked_area`` (``-1`` none) is never entered (the battle area of a retreat, E9).
    ``out_dist`` (n_areas,) int: links crossed, ``UNREACHED`` when no clear path exists.
    ``adj_bits``: the map's area sets (:class:`~soe_sim.data.map.MapArrays`).
    """
    clear_bfs_into_nb(adj_indptr, adj_indices, adj_bits, seeds, enemy_row, eastern_link, side, blocked_area,
                      out_dist, np.empty(out_dist.shape[0], dtype=np.int32))


if config.DISABLE_JIT:  # the kernels as Python (docs/engine-design.md): no LLVM intrinsic
    def _lowest_bit_nb(x):
        """Index of the lowest set bit of ``x != 0`` (a uint64 word)."""
        x = int(x)
        return (x & -x).bit_length() - 1
else:
    @njit(cache=True, inline="always")
    def _lowest_bit_nb(x):
        """Index of the lowest set bit of ``x != 0`` (a uint64 word): one ``tzcnt``."""
        return np.int64(trailing_zeros(x))


@njit(cache=True, inline="always")
def _word_nb(row, w):
    """Entries ``64 w`` to ``64 w + 63`` of ``row`` (bool or int) as a 64-bit set of the non-zero ones
    (past its end: 0)."""
    x = np.uint64(0)
    lo = 64 * w
    hi = min(row.shape[0], lo + 64)
    for i in range(lo, hi):
        x |= np.uint64(row[i] != 0) << np.uint64(i - lo)
    return x


@njit(cache=True, inline="always")
def _write_layer_nb(x, w, d, out_dist):
    """``out_dist[a] = d`` for every area ``a`` of word ``w`` whose bit is set in ``x``."""
    while x != np.uint64(0):
        out_dist[64 * w + _lowest_bit_nb(x)] = d
        x &= x - np.uint64(1)


@njit(cache=True, inline="always")
def _expand_nb(adj_bits, x, w, n0, n1, n2, n3):
    """The union of ``n0..n3`` and the neighbour sets of the areas of word ``w`` set in ``x``."""
    while x != np.uint64(0):
        u = 64 * w + _lowest_bit_nb(x)
        n0 |= adj_bits[u, 0]
        n1 |= adj_bits[u, 1]
        n2 |= adj_bits[u, 2]
        n3 |= adj_bits[u, 3]
        x &= x - np.uint64(1)
    return n0, n1, n2, n3


@njit(cache=True, inline="always")
def _write_expand_nb(adj_bits, x, w, stop, d, out_dist, n0, n1, n2, n3):
    """One pass over the areas of word ``w`` set in ``x``: each gets the distance ``d`` in ``out_dist``,
    and the neighbour sets of those not in ``stop`` (a word) join ``n0..n3``, which it returns. One loop
    where :func:`_write_layer_nb` and :func:`_expand_nb` make two: a loop over a layer's few areas ends
    after a count that varies, a branch a predictor often misses (docs/engine-design.md "Session 41")."""
    zero = np.uint64(0)
    while x != zero:
        j = _lowest_bit_nb(x)
        u = 64 * w + j
        out_dist[u] = d
        if ((stop >> np.uint64(j)) & np.uint64(1)) == zero:  # most areas are not stop areas: predicted
            n0 |= adj_bits[u, 0]
            n1 |= adj_bits[u, 1]
            n2 |= adj_bits[u, 2]
            n3 |= adj_bits[u, 3]
        x &= x - np.uint64(1)
    return n0, n1, n2, n3


@njit(cache=True, inline="always")
def _queue_expand_nb(adj_bits, x, w, stop, d, out_dist, queue, k, n0, n1, n2, n3):
    """:func:`_write_expand_nb` that also appends each area to ``queue[k:]`` (ascending, as
    :func:`_queue_layer_nb`); returns ``n0..n3`` and the new length."""
    zero = np.uint64(0)
    while x != zero:
        j = _lowest_bit_nb(x)
        u = 64 * w + j
        out_dist[u] = d
        queue[k] = u
        k += 1
        if ((stop >> np.uint64(j)) & np.uint64(1)) == zero:  # most areas are not stop areas: predicted
            n0 |= adj_bits[u, 0]
            n1 |= adj_bits[u, 1]
            n2 |= adj_bits[u, 2]
            n3 |= adj_bits[u, 3]
        x &= x - np.uint64(1)
    return n0, n1, n2, n3, k


@njit(cache=True, inline="always")
def _next_layer_nb(adj_bits, x0, x1, x2, x3, r0, r1, r2, r3, a0, a1, a2, a3):
    """One step of a layered search: the neighbours of the areas ``x0..x3`` (the current layer's
    areas that may be passed through) that are allowed (``a0..a3``) and not reached yet
    (``r0..r3``). Returns that layer and the reached set with it."""
    zero = np.uint64(0)
    n0, n1, n2, n3 = _expand_nb(adj_bits, x0, 0, zero, zero, zero, zero)
    n0, n1, n2, n3 = _expand_nb(adj_bits, x1, 1, n0, n1, n2, n3)
    n0, n1, n2, n3 = _expand_nb(adj_bits, x2, 2, n0, n1, n2, n3)
    n0, n1, n2, n3 = _expand_nb(adj_bits, x3, 3, n0, n1, n2, n3)
    f0 = n0 & ~r0 & a0
    f1 = n1 & ~r1 & a1
    f2 = n2 & ~r2 & a2
    f3 = n3 & ~r3 & a3
    return f0, f1, f2, f3, r0 | f0, r1 | f1, r2 | f2, r3 | f3


@njit(cache=True, inline="always")
def _allowed_words_nb(adj_bits, side):
    """The areas ``side`` may enter as four words: all but, for the Poles, the Eastern Links (SoE 1.4)."""
    n = adj_bits.shape[0] - 1
    full = ~np.uint64(0)
    if side == SIDE.SOVIET:
        return full, full, full, full
    return ~adj_bits[n, 0], ~adj_bits[n, 1], ~adj_bits[n, 2], ~adj_bits[n, 3]


@njit(cache=True, inline="always")
def _layers_nb(adj_bits, f0, f1, f2, f3, s0, s1, s2, s3, a0, a1, a2, a3, max_depth, out_dist):
    """Breadth-first search on area sets, one distance layer at a time: from the seeds ``f0..f3``
    (distance 0), the next layer is the neighbours of the current layer's areas outside the stop set
    ``s0..s3`` that are in the allowed set ``a0..a3`` and not reached yet, up to ``max_depth``
    layers. Writes each reached area's distance into ``out_dist`` (the others are left as they are;
    an empty ``out_dist``: no distances) and returns the set of the areas reached.
    A shortest distance does not depend on the order of a search, so these are the distances of the
    queue search over the link lists."""
    zero = np.uint64(0)
    write = out_dist.shape[0] > 0
    r0, r1, r2, r3 = f0, f1, f2, f3
    d = 0
    while (f0 | f1 | f2 | f3) != zero:
        if d >= max_depth:
            if write:
                _write_layer_nb(f0, 0, d, out_dist)
                _write_layer_nb(f1, 1, d, out_dist)
                _write_layer_nb(f2, 2, d, out_dist)
                _write_layer_nb(f3, 3, d, out_dist)
            break
        if write:  # the layer's distances and its expansion in one pass per word
            n0, n1, n2, n3 = _write_expand_nb(adj_bits, f0, 0, s0, d, out_dist, zero, zero, zero, zero)
            n0, n1, n2, n3 = _write_expand_nb(adj_bits, f1, 1, s1, d, out_dist, n0, n1, n2, n3)
            n0, n1, n2, n3 = _write_expand_nb(adj_bits, f2, 2, s2, d, out_dist, n0, n1, n2, n3)
            n0, n1, n2, n3 = _write_expand_nb(adj_bits, f3, 3, s3, d, out_dist, n0, n1, n2, n3)
            f0 = n0 & ~r0 & a0
            f1 = n1 & ~r1 & a1
            f2 = n2 & ~r2 & a2
            f3 = n3 & ~r3 & a3
            r0 |= f0
            r1 |= f1
            r2 |= f2
            r3 |= f3
        else:
            f0, f1, f2, f3, r0, r1, r2, r3 = _next_layer_nb(adj_bits, f0 & ~s0, f1 & ~s1, f2 & ~s2, f3 & ~s3, r0, r1,
                                                            r2, r3, a0, a1, a2, a3)
        d += 1
    return r0, r1, r2, r3


@njit(cache=True, inline="always")
def _area_word_nb(area, w):
    """The set ``{area}`` (``-1``: empty) restricted to word ``w``."""
    if area >= 0 and (area >> 6) == w:
        return np.uint64(1) << np.uint64(area & 63)
    return np.uint64(0)


@njit(cache=True, _nrt=False)
def reverse_reach_sets_nb(adj_bits, enemy_bits, side, dest, depth, out_dist):
    """``_reverse_reach_nb`` of the orders module on the map's area sets (no closed link): the
    length of the shortest move of a ``side`` block from each area into ``dest``, up to ``depth``
    links (``out_dist`` (n_areas,), ``UNREACHED`` elsewhere). The areas a move passes through are
    enterable and not enemy areas (``enemy_bits`` (BITSET_WORDS,) uint64); ``dest`` is enterable;
    the starting area is free of conditions."""
    n = out_dist.shape[0]
    for i in range(n):
        out_dist[i] = UNREACHED
    if side != SIDE.SOVIET and (adj_bits[n, dest >> 6] & _area_word_nb(dest, dest >> 6)) != np.uint64(0):
        return  # SoE 1.4: no Eastern Link for the Poles
    full = ~np.uint64(0)
    a0, a1, a2, a3 = _allowed_words_nb(adj_bits, side)
    _layers_nb(adj_bits, _area_word_nb(dest, 0), _area_word_nb(dest, 1), _area_word_nb(dest, 2),
               _area_word_nb(dest, 3), (enemy_bits[0] | ~a0) & ~_area_word_nb(dest, 0),
               (enemy_bits[1] | ~a1) & ~_area_word_nb(dest, 1), (enemy_bits[2] | ~a2) & ~_area_word_nb(dest, 2),
               (enemy_bits[3] | ~a3) & ~_area_word_nb(dest, 3), full, full, full, full, depth, out_dist)


@njit(cache=True, _nrt=False)
def vias_sets_nb(adj_bits, enemy_bits, side, start, dest, allowance, out_via):
    """``_vias_nb`` of the orders module on the map's area sets (no closed link): the neighbours of
    ``dest`` a ``side`` block from ``start`` may enter it from — reached within ``allowance - 1``
    links along a path through neither ``dest`` nor an enemy area (the start apart), themselves the
    start or not an enemy area — into ``out_via`` in ascending order; returns how many."""
    a0, a1, a2, a3 = _allowed_words_nb(adj_bits, side)
    e0 = enemy_bits[0] & ~_area_word_nb(start, 0)
    e1 = enemy_bits[1] & ~_area_word_nb(start, 1)
    e2 = enemy_bits[2] & ~_area_word_nb(start, 2)
    e3 = enemy_bits[3] & ~_area_word_nb(start, 3)
    r0, r1, r2, r3 = _layers_nb(adj_bits, _area_word_nb(start, 0), _area_word_nb(start, 1), _area_word_nb(start, 2),
                                _area_word_nb(start, 3), e0 | _area_word_nb(dest, 0), e1 | _area_word_nb(dest, 1),
                                e2 | _area_word_nb(dest, 2), e3 | _area_word_nb(dest, 3), a0, a1, a2, a3,
                                allowance - 1, out_via[:0])
    k = _append_areas_nb(adj_bits[dest, 0] & r0 & ~e0 & ~_area_word_nb(dest, 0), 0, out_via, 0)
    k = _append_areas_nb(adj_bits[dest, 1] & r1 & ~e1 & ~_area_word_nb(dest, 1), 1, out_via, k)
    k = _append_areas_nb(adj_bits[dest, 2] & r2 & ~e2 & ~_area_word_nb(dest, 2), 2, out_via, k)
    return _append_areas_nb(adj_bits[dest, 3] & r3 & ~e3 & ~_area_word_nb(dest, 3), 3, out_via, k)


@njit(cache=True, inline="always")
def _append_areas_nb(x, w, out, k):
    """Append the areas of word ``w`` set in ``x`` (ascending) to ``out[k:]``; returns the new length."""
    while x != np.uint64(0):
        out[k] = 64 * w + _lowest_bit_nb(x)
        k += 1
        x &= x - np.uint64(1)
    return k


@njit(cache=True, inline="always")
def _clear_search_words_nb(adj_bits, seeds, enemy_row, side, blocked_area):
    """The area sets of a clear-path search as words: the seeds that can start a path (enterable, not
    enemy areas, not ``blocked_area``; ``-1``: none) ``f0..f3``, the enemy areas ``e0..e3`` (a path
    may end in one, never pass through it: E1) and the areas it may enter ``a0..a3`` (enterable, not
    the blocked area: E9)."""
    a0, a1, a2, a3 = _allowed_words_nb(adj_bits, side)
    a0 &= ~_area_word_nb(blocked_area, 0)
    a1 &= ~_area_word_nb(blocked_area, 1)
    a2 &= ~_area_word_nb(blocked_area, 2)
    a3 &= ~_area_word_nb(blocked_area, 3)
    e0 = _word_nb(enemy_row, 0)
    e1 = _word_nb(enemy_row, 1)
    e2 = _word_nb(enemy_row, 2)
    e3 = _word_nb(enemy_row, 3)
    return (_word_nb(seeds, 0) & ~e0 & a0, _word_nb(seeds, 1) & ~e1 & a1, _word_nb(seeds, 2) & ~e2 & a2,
            _word_nb(seeds, 3) & ~e3 & a3, e0, e1, e2, e3, a0, a1, a2, a3)


@njit(cache=True, _nrt=False, internal=True)
def _clear_bfs_bits_nb(adj_bits, seeds, enemy_row, side, blocked_area, out_dist):
    """:func:`clear_bfs_into_nb` on area sets (``adj_bits`` of four words, maps of up to 256 areas):
    :func:`_layers_nb` from the seeds that are enterable, not enemy areas and not the blocked area,
    never expanding an enemy area (E1), entering enterable areas other than the blocked one (E9)."""
    n = out_dist.shape[0]
    for i in range(n):
        out_dist[i] = UNREACHED
    f0, f1, f2, f3, e0, e1, e2, e3, a0, a1, a2, a3 = _clear_search_words_nb(adj_bits, seeds, enemy_row, side,
                                                                            blocked_area)
    _layers_nb(adj_bits, f0, f1, f2, f3, e0, e1, e2, e3, a0, a1, a2, a3, n, out_dist)


@njit(cache=True, _nrt=False, internal=True)
def supply_search_nb(adj_indptr, adj_indices, adj_bits, seeds, enemy_row, eastern_link, side, out_dist, cache, slot):
    """:func:`clear_bfs_into_nb` without a blocked area, kept in slot ``slot`` of ``cache``
    (:class:`SupplySearchCache`): when the seed and enemy sets (the seeds that can start a path) and
    the side are the slot's last, its distances are copied into ``out_dist``; else the search runs on
    the area sets and the slot keeps it. Without slots, or on a map of more than 256 areas, it
    searches every time (:func:`clear_bfs_into_nb` with ``cache.queue``)."""
    n = out_dist.shape[0]
    if adj_bits.shape[1] != BITSET_WORDS or slot >= cache.key.shape[0] or cache.dist.shape[1] != n:
        clear_bfs_into_nb(adj_indptr, adj_indices, adj_bits, seeds, enemy_row, eastern_link, side, -1, out_dist,
                          cache.queue)
        return
    f0, f1, f2, f3, e0, e1, e2, e3, a0, a1, a2, a3 = _clear_search_words_nb(adj_bits, seeds, enemy_row, side, -1)
    key = cache.key
    dist = cache.dist
    tag = np.uint64(side + 1)
    if (key[slot, 8] == tag and key[slot, 0] == f0 and key[slot, 1] == f1 and key[slot, 2] == f2
            and key[slot, 3] == f3 and key[slot, 4] == e0 and key[slot, 5] == e1 and key[slot, 6] == e2
            and key[slot, 7] == e3):
        for i in range(n):
            out_dist[i] = dist[slot, i]
        return
    for i in range(n):
        out_dist[i] = UNREACHED
    _layers_nb(adj_bits, f0, f1, f2, f3, e0, e1, e2, e3, a0, a1, a2, a3, n, out_dist)
    key[slot, 0] = f0
    key[slot, 1] = f1
    key[slot, 2] = f2
    key[slot, 3] = f3
    key[slot, 4] = e0
    key[slot, 5] = e1
    key[slot, 6] = e2
    key[slot, 7] = e3
    key[slot, 8] = tag
    for i in range(n):
        dist[slot, i] = out_dist[i]


@njit(cache=True, _nrt=False)
def distances_across_nb(adj_bits, seeds, side, max_depth, out_dist):
    """Distances (links) from the areas where ``seeds`` (n_areas,) is non-zero, through any area
    whatever it holds, entering only areas ``side`` may enter (SoE 1.4), up to ``max_depth`` links;
    ``UNREACHED`` beyond. On the map's area sets (``adj_bits`` of ``BITSET_WORDS`` words). Used for
    the Recon range (SoE 7.2: "within a range of 3 areas (even across enemy blocks)")."""
    n = out_dist.shape[0]
    for i in range(n):
        out_dist[i] = UNREACHED
    a0, a1, a2, a3 = _allowed_words_nb(adj_bits, side)
    zero = np.uint64(0)
    _layers_nb(adj_bits, _word_nb(seeds, 0), _word_nb(seeds, 1), _word_nb(seeds, 2), _word_nb(seeds, 3), zero, zero,
               zero, zero, a0, a1, a2, a3, max_depth, out_dist)


@njit(cache=True, _nrt=False, internal=True)
def clear_bfs_into_nb(adj_indptr, adj_indices, adj_bits, seeds, enemy_row, eastern_link, side, blocked_area,
                      out_dist, queue):
    """:func:`clear_bfs_nb` with the caller's ``queue`` (n_areas,) int32 scratch. On a map with area
    sets (``adj_bits`` of ``BITSET_WORDS`` words) the search runs on them (:func:`_clear_bfs_bits_nb`);
    else over the link lists."""
    if adj_bits.shape[1] == BITSET_WORDS:
        _clear_bfs_bits_nb(adj_bits, seeds, enemy_row, side, blocked_area, out_dist)
        return
    n = out_dist.shape[0]
    head = 0
    tail = 0
    for i in range(n):
        out_dist[i] = UNREACHED
    for i in range(n):
        if seeds[i] and not enemy_row[i] and i != blocked_area and enterable_nb(eastern_link, side, i):
            out_dist[i] = 0
            queue[tail] = i
            tail += 1
    while head < tail:
        u = queue[head]
        head += 1
        if enemy_row[u]:
            continue  # a clear path may end in, never pass through, an enemy area
        for e in range(adj_indptr[u], adj_indptr[u + 1]):
            v = adj_indices[e]
            if out_dist[v] != UNREACHED or v == blocked_area or not enterable_nb(eastern_link, side, v):
                continue
            out_dist[v] = out_dist[u] + 1
            queue[tail] = v
            tail += 1


@njit(cache=True, _nrt=True)
def supply_depots_nb(adj_indptr, adj_indices, adj_bits, eastern_link, supply_source, supply_base, key_city, enemy,
                     out_source_dist, out_depot):
    """Supply depots of both sides (SoE 1.31, 1.3, 1.4).

    A key city is a depot for side ``s`` when ``s`` controls it — its garrison and/or blocks occupy
    it and no enemy does (SoE 1.3, read from ``enemy``: the control recorded in the state is updated
    only at the end of a phase, E4) — and it has a clear path (of any length, through areas without
    enemy blocks or garrisons; neutral areas are passable, E4) to a supply source of ``s``: Warsaw
    (``supply_source == POLISH``) for the Poles, an Eastern Link (or ``supply_source == SOVIET``)
    for the Soviets. Neutral key cities are never depots (SoE 1.3). Eastern Links are always Soviet
    depots (E3). A supply base of ``s`` (``supply_base == s``: Kaunas once Lithuania has joined the
    Soviets, EatS II.3 "Kaunas ... is a supply base for Soviet units"; docs/rules.md G16) is both a
    supply source and a depot of ``s`` while no enemy block stands in it.

    Parameters
    ----------
    adj_indptr, adj_indices, adj_bits, eastern_link, supply_source : map arrays
    supply_base : (n_areas,) int8 — ``GameState.supply_base``: the side whose supply base the area is
        in this game, ``-1`` none
    key_city : (n_areas,) bool — areas that can hold a garrison (``GameMap.garrison``; SoE 1.3, 3.0)
    enemy : (2, n_areas) bool — from :func:`enemy_presence_nb` (``enemy[1 - s]`` is the presence of ``s``)
    out_source_dist : (2, n_areas) int — clear-path distance to the side's supply source
        (``>= 0``: the area "is in-supply" in the sense of 1.31; used for garrisons, 7.71 and 8.1)
    out_depot : (2, n_areas) bool
    """
    supply_depots_into_nb(adj_indptr, adj_indices, adj_bits, eastern_link, supply_source, supply_base, key_city,
                          enemy, out_source_dist, out_depot, new_supply_search_cache_nb(key_city.shape[0], 0))


@njit(cache=True, _nrt=False, internal=True)
def supply_depots_into_nb(adj_indptr, adj_indices, adj_bits, eastern_link, supply_source, supply_base, key_city,
                          enemy, out_source_dist, out_depot, cache):
    """:func:`supply_depots_nb` with the caller's :class:`SupplySearchCache` ``cache`` (its searches
    from the supply sources are kept in the slots ``SLOT_SOURCE + 2 * side``)."""
    for s in range(2):
        _source_seeds_nb(supply_source, supply_base, eastern_link, s, cache.seeds)
        supply_search_nb(adj_indptr, adj_indices, adj_bits, cache.seeds, enemy[s], eastern_link, s,
                         out_source_dist[s], cache, SLOT_SOURCE + 2 * s)
        _depot_row_nb(supply_base, key_city, eastern_link, enemy, s, out_source_dist[s], out_depot[s])


@njit(cache=True, inline="always")
def _source_seeds_nb(supply_source, supply_base, eastern_link, s, out_seeds):
    """The supply sources of side ``s`` (SoE 1.31: Warsaw for the Poles, the Eastern Links for the
    Soviets; a supply base of ``s``, EatS II.3, G16) as ``out_seeds`` (n_areas,) bool. ``|`` and ``&``
    where ``or`` / ``and`` branched per area (docs/engine-design.md "Session 42")."""
    sov = s == SIDE.SOVIET
    for i in range(out_seeds.shape[0]):
        out_seeds[i] = (supply_source[i] == s) | (supply_base[i] == s) | (sov & eastern_link[i])


@njit(cache=True, inline="always")
def _depot_row_nb(supply_base, key_city, eastern_link, enemy, s, source_dist_row, out_depot_row):
    """The supply depots of side ``s`` (SoE 1.3, 1.31, E3, G16) from its clear-path distances to its
    supply sources ``source_dist_row`` (n_areas,), as ``out_depot_row`` (n_areas,) bool, branch-free.

    An Eastern Link is always a Soviet depot (E3); else a supply base of ``s`` (EatS II.3, G16) is one
    while no enemy block is in it; else a key city is one when ``s`` controls it — its garrison and/or
    blocks occupy it (``enemy[1 - s]``: the presence of ``s``) and no enemy does, at once, not only
    when ``control_nb`` records it at the end of the phase (SoE 1.3) — with a clear path to a source."""
    sov = s == SIDE.SOVIET
    for i in range(out_depot_row.shape[0]):
        link = sov & eastern_link[i]
        base = supply_base[i] == s
        free = enemy[s, i] ^ True
        city = key_city[i] & enemy[1 - s, i] & free & (source_dist_row[i] >= 0)
        out_depot_row[i] = link | ((link ^ True) & ((base & free) | ((base ^ True) & city)))


@njit(cache=True, _nrt=True)
def block_supply_nb(adj_indptr, adj_indices, adj_bits, eastern_link, depot, enemy, block_side, block_arm, block_area,
                    block_status, infantry_range, cavalry_range, out_depot_dist, out_in_supply):
    """Supply of every block (SoE 7.7, 9.0).

    Infantry is in supply within ``infantry_range`` areas of a friendly depot along a clear path,
    cavalry within ``cavalry_range`` (``supply.*_range``); leaders are always in supply (SoE 9.0).
    Distances count links (E2): a block in a depot is at 0. Blocks that are not on the map are
    reported in supply (nothing to check).

    out_depot_dist : (2, n_areas) int — clear-path distance to the nearest friendly depot (also
        used by rail transport, SoE 7.6, and overstack pull-back, SoE 7.33)
    out_in_supply : (n_blocks,) bool
    """
    block_supply_into_nb(adj_indptr, adj_indices, adj_bits, eastern_link, depot, enemy, block_side, block_arm,
                         block_area, block_status, infantry_range, cavalry_range, out_depot_dist, out_in_supply,
                         new_supply_search_cache_nb(depot.shape[1], 0))


@njit(cache=True, _nrt=False, internal=True)
def block_supply_into_nb(adj_indptr, adj_indices, adj_bits, eastern_link, depot, enemy, block_side, block_arm,
                         block_area, block_status, infantry_range, cavalry_range, out_depot_dist, out_in_supply, cache):
    """:func:`block_supply_nb` with the caller's :class:`SupplySearchCache` ``cache`` (its searches
    from the depots are kept in the slots ``SLOT_DEPOT + 2 * side``)."""
    for s in range(2):
        supply_search_nb(adj_indptr, adj_indices, adj_bits, depot[s], enemy[s], eastern_link, s, out_depot_dist[s],
                         cache, SLOT_DEPOT + 2 * s)
    for b in range(block_side.shape[0]):
        a = block_area[b]
        if block_status[b] != STATUS.ON_MAP or a < 0 or block_arm[b] == ARM.LEADER:
            out_in_supply[b] = True
            continue
        d = out_depot_dist[block_side[b], a]
        rng = cavalry_range if block_arm[b] == ARM.CAVALRY else infantry_range
        out_in_supply[b] = d != UNREACHED and d <= rng


@njit(cache=True, _nrt=True)
def side_depots_nb(adj_indptr, adj_indices, adj_bits, eastern_link, supply_source, supply_base, key_city, enemy, side,
                   out_source_dist_row, out_depot_row, out_depot_dist_row):
    """Row ``side`` of :func:`supply_depots_nb` (``out_source_dist``, ``out_depot``) and of
    :func:`block_supply_nb` (``out_depot_dist``), without the other side's rows (same results)."""
    side_depots_into_nb(adj_indptr, adj_indices, adj_bits, eastern_link, supply_source, supply_base, key_city, enemy,
                        side, out_source_dist_row, out_depot_row, out_depot_dist_row,
                        new_supply_search_cache_nb(key_city.shape[0], 0))


@njit(cache=True, _nrt=False)
def side_depots_into_nb(adj_indptr, adj_indices, adj_bits, eastern_link, supply_source, supply_base, key_city, enemy,
                        side, out_source_dist_row, out_depot_row, out_depot_dist_row, cache):
    """:func:`side_depots_nb` with the caller's :class:`SupplySearchCache` ``cache`` (the same slots as
    :func:`supply_depots_into_nb` and :func:`block_supply_into_nb`: a search one of them made on the
    same position is not made again)."""
    s = side
    _source_seeds_nb(supply_source, supply_base, eastern_link, s, cache.seeds)
    supply_search_nb(adj_indptr, adj_indices, adj_bits, cache.seeds, enemy[s], eastern_link, s, out_source_dist_row,
                     cache, SLOT_SOURCE + 2 * s)
    _depot_row_nb(supply_base, key_city, eastern_link, enemy, s, out_source_dist_row, out_depot_row)
    supply_search_nb(adj_indptr, adj_indices, adj_bits, out_depot_row, enemy[s], eastern_link, s, out_depot_dist_row,
                     cache, SLOT_DEPOT + 2 * s)


@njit(cache=True, _nrt=False)
def apply_out_of_supply_nb(block_side, block_arm, block_area, block_status, block_sp, block_in_supply,
                           garrison_side, source_dist, vp_per_elimination, out_counts, out_vp):
    """Apply out-of-supply losses (SoE 7.71), in place.

    Every out-of-supply block on the map (leaders never, SoE 9.0) loses 1 SP; a 1-SP block is
    eliminated permanently (``ELIMINATED_PERMANENT``, off the map) and the opponent gains
    ``vp_per_elimination`` VP (``vp.out_of_supply_elimination``). A garrison whose key city has no
    clear path to its side's supply source (``source_dist < 0``, SoE 7.71 example) is removed. All
    decisions use the supply computed before any change (simultaneous, E7).

    out_counts : (2, N_OOS) int — per side: SP lost, blocks eliminated, garrisons removed
    out_vp : (1,) int — signed VP change (+ Polish); apply it with :func:`vp_add_nb`
    """
    out_counts[:, :] = 0
    out_vp[0] = 0
    for i in range(garrison_side.shape[0]):
        g = garrison_side[i]
        if g >= 0 and source_dist[g, i] == UNREACHED:
            garrison_side[i] = -1
            out_counts[g, OOS_GARRISONS] += 1
    for b in range(block_side.shape[0]):
        if block_status[b] != STATUS.ON_MAP or block_in_supply[b] or block_arm[b] == ARM.LEADER:
            continue
        s = block_side[b]
        out_counts[s, OOS_SP_LOST] += 1
        if block_sp[b] <= 1:
            block_sp[b] = 0
            block_status[b] = STATUS.ELIMINATED_PERMANENT
            block_area[b] = -1
            out_counts[s, OOS_ELIMINATED] += 1
            out_vp[0] -= side_sign_nb(s) * vp_per_elimination  # the opponent gains
        else:
            block_sp[b] -= 1


@njit(cache=True, _nrt=True)
def update_control_nb(key_city, eastern_link, vp, block_side, block_area, block_status, garrison_side,
                      control, out_vp):
    """Update area control and the VP it is worth (SoE 1.3, 1.4, 7.8), in place.

    A key city is controlled by the side whose garrison and/or blocks occupy it; an area holding
    both sides (a battle not yet resolved) keeps its controller; a key city left with neither
    becomes neutral (``-1``). Other areas are "held" by the only side with blocks there, else
    ``-1``. Eastern Links are always Soviet (E3).

    VP (E5): a side taking control of a key city gains its ``vp``; a key city becoming neutral
    costs its former controller its ``vp``. ``out_vp[0]``: signed VP change (+ Polish).
    """
    n = control.shape[0]
    cnt = np.zeros((2, n), dtype=np.int32)
    for b in range(block_side.shape[0]):
        a = block_area[b]
        if block_status[b] == STATUS.ON_MAP and a >= 0:
            cnt[block_side[b], a] += 1
    out_vp[0] = 0
    for i in range(n):
        old = control[i]
        if eastern_link[i]:
            new = SIDE.SOVIET
        else:
            g = garrison_side[i]
            pol = cnt[0, i] > 0 or g == SIDE.POLISH
            sov = cnt[1, i] > 0 or g == SIDE.SOVIET
            if pol and sov:
                new = old  # contested: the battle decides
            elif pol:
                new = SIDE.POLISH
            elif sov:
                new = SIDE.SOVIET
            else:
                new = -1  # SoE 1.3: owner left a key city with no garrison: neutral
        if new == old:
            continue
        control[i] = new
        if key_city[i] and vp[i] > 0:
            if new < 0:
                out_vp[0] -= side_sign_nb(old) * vp[i]  # SoE 1.3 "loses any VPs for the city"
            else:
                out_vp[0] += side_sign_nb(new) * vp[i]  # SoE 7.8 "taking control of key cities"


@njit(cache=True, _nrt=False)
def vp_add_nb(track, delta):
    """The VP track after a signed change (SoE 7.8; E10).

    The track has no 0 space: "This advantage changes when a side's VPs drops below 1", so a change
    that crosses 0 skips it (Poles at 1, the Soviets gain 2 → Soviets at 2). A track at 0 (a scenario
    starting even) simply moves by ``delta``.
    """
    r = track + delta
    if track > 0 and r <= 0:
        r -= 1
    elif track < 0 and r >= 0:
        r += 1
    return r


@njit(cache=True, _nrt=True)
def reachable_nb(adj_indptr, adj_indices, adj_kind, edge_blocked, eastern_link, enemy_row, side, start,
                 allowance, rail_only, depot_dist_row, rail_depot_range, out_dist):
    """Areas a block of ``side`` in ``start`` can reach (SoE 7.31, 7.32, 7.6, 1.4).

    Normal movement (``rail_only`` False): along road and/or rail links, at most ``allowance``
    links; a block entering an enemy area (enemy blocks or garrison) stops there, so paths never
    pass through enemy areas; Polish blocks never enter an Eastern Link.

    Rail transport (``rail_only`` True, SoE 7.6, 7.2): along rail links only, at most ``allowance``
    (= ``rail.max_areas``) links, entering only areas that hold no enemy blocks or garrisons and are
    within ``rail_depot_range`` (``supply.depot_range_for_rail``) clear links of a friendly depot
    (``depot_dist_row`` from :func:`block_supply_nb`, E8); every reached area is a legal destination.

    ``edge_blocked`` (per CSR edge; may be empty): links the block may not use (e.g. a road occupied
    by incoming enemy blocks, SoE 7.32). ``out_dist`` (n_areas,) int: links moved, 0 at ``start``,
    ``UNREACHED`` elsewhere.
    """
    n = out_dist.shape[0]
    for i in range(n):
        out_dist[i] = UNREACHED
    queue = np.empty(n, dtype=np.int32)
    reach_into_nb(adj_indptr, adj_indices, adj_kind, edge_blocked, eastern_link, enemy_row, side, start, allowance,
                  rail_only, depot_dist_row, rail_depot_range, out_dist, queue)


@njit(cache=True, _nrt=False)
def reach_into_nb(adj_indptr, adj_indices, adj_kind, edge_blocked, eastern_link, enemy_row, side, start,
                  allowance, rail_only, depot_dist_row, rail_depot_range, out_dist, queue):
    """The BFS of :func:`reachable_nb` without its set-up: ``out_dist`` must hold ``UNREACHED``
    everywhere on entry, ``queue`` (>= n_areas,) is scratch. Returns the number ``k`` of areas
    reached; they are ``queue[:k]`` in BFS order (``queue[0] == start``, distances non-decreasing).
    """
    has_blocked = edge_blocked.shape[0] > 0
    out_dist[start] = 0
    queue[0] = start
    head = 0
    tail = 1
    while head < tail:
        u = queue[head]
        head += 1
        if out_dist[u] >= allowance:
            continue
        if u != start and enemy_row[u]:
            continue  # SoE 7.31: entering an enemy area ends the move
        for e in range(adj_indptr[u], adj_indptr[u + 1]):
            v = adj_indices[e]
            if out_dist[v] != UNREACHED:
                continue
            if has_blocked and edge_blocked[e]:
                continue
            if not enterable_nb(eastern_link, side, v):
                continue
            if rail_only:
                if (adj_kind[e] & LINK.RAIL) == 0:
                    continue
                if enemy_row[v]:
                    continue
                d = depot_dist_row[v]
                if d == UNREACHED or d > rail_depot_range:
                    continue
            out_dist[v] = out_dist[u] + 1
            queue[tail] = v
            tail += 1
    return tail


@njit(cache=True, _nrt=False)
def reach_sets_into_nb(adj_bits, enemy_bits, side, start, allowance, out_dist, queue, out_sets):
    """:func:`reach_into_nb` for normal movement with no closed link, on the map's area sets
    (``adj_bits`` of ``BITSET_WORDS`` words; ``enemy_bits`` (BITSET_WORDS,) uint64 the side's enemy
    areas): one distance layer at a time. ``out_dist`` must hold ``UNREACHED`` everywhere on entry;
    returns the number ``k`` of areas reached, ``queue[:k]`` (``queue[0] == start``, then layer by
    layer, each in ascending area order: the order of :func:`reach_into_nb` within a layer may
    differ). ``out_sets`` (>= 1, BITSET_WORDS) uint64: row ``d`` the areas within ``d`` links other
    than ``start`` (rows past the allowance repeat its set)."""
    zero = np.uint64(0)
    a0, a1, a2, a3 = _allowed_words_nb(adj_bits, side)  # SoE 1.4: no Eastern Link for the Poles
    out_dist[start] = 0
    queue[0] = start
    k = 1
    s0, s1, s2, s3 = _area_word_nb(start, 0), _area_word_nb(start, 1), _area_word_nb(start, 2), _area_word_nb(start, 3)
    f0, f1, f2, f3 = s0, s1, s2, s3
    r0, r1, r2, r3 = s0, s1, s2, s3
    for w in range(out_sets.shape[1]):
        out_sets[0, w] = zero
    d = 0
    if allowance > 0:
        # the start is left whatever it holds; each later layer is queued and (SoE 7.31: entering an enemy
        # area ends the move) its areas other than enemy ones expanded in one pass per word; the last
        # layer is only queued
        f0, f1, f2, f3, r0, r1, r2, r3 = _next_layer_nb(adj_bits, f0, f1, f2, f3, r0, r1, r2, r3, a0, a1, a2, a3)
        d = 1
        if d < out_sets.shape[0]:
            out_sets[d, 0] = r0 & ~s0
            out_sets[d, 1] = r1 & ~s1
            out_sets[d, 2] = r2 & ~s2
            out_sets[d, 3] = r3 & ~s3
        while d < allowance and (f0 | f1 | f2 | f3) != zero:
            n0, n1, n2, n3, k = _queue_expand_nb(adj_bits, f0, 0, enemy_bits[0], d, out_dist, queue, k, zero, zero,
                                                 zero, zero)
            n0, n1, n2, n3, k = _queue_expand_nb(adj_bits, f1, 1, enemy_bits[1], d, out_dist, queue, k, n0, n1, n2, n3)
            n0, n1, n2, n3, k = _queue_expand_nb(adj_bits, f2, 2, enemy_bits[2], d, out_dist, queue, k, n0, n1, n2, n3)
            n0, n1, n2, n3, k = _queue_expand_nb(adj_bits, f3, 3, enemy_bits[3], d, out_dist, queue, k, n0, n1, n2, n3)
            f0 = n0 & ~r0 & a0
            f1 = n1 & ~r1 & a1
            f2 = n2 & ~r2 & a2
            f3 = n3 & ~r3 & a3
            r0 |= f0
            r1 |= f1
            r2 |= f2
            r3 |= f3
            d += 1
            if d < out_sets.shape[0]:
                out_sets[d, 0] = r0 & ~s0
                out_sets[d, 1] = r1 & ~s1
                out_sets[d, 2] = r2 & ~s2
                out_sets[d, 3] = r3 & ~s3
        k = _queue_layer_nb(f0, 0, d, out_dist, queue, k)
        k = _queue_layer_nb(f1, 1, d, out_dist, queue, k)
        k = _queue_layer_nb(f2, 2, d, out_dist, queue, k)
        k = _queue_layer_nb(f3, 3, d, out_dist, queue, k)
    for e in range(d + 1, out_sets.shape[0]):
        for w in range(out_sets.shape[1]):
            out_sets[e, w] = out_sets[d, w]
    return k


@njit(cache=True, inline="always")
def _queue_layer_nb(x, w, d, out_dist, queue, k):
    """Give every area of word ``w`` set in ``x`` the distance ``d`` and append it to ``queue[k:]``;
    returns the new length."""
    while x != np.uint64(0):
        a = 64 * w + _lowest_bit_nb(x)
        out_dist[a] = d
        queue[k] = a
        k += 1
        x &= x - np.uint64(1)
    return k


@njit(cache=True, _nrt=False)
def area_set_nb(row, out):
    """``out`` (BITSET_WORDS,) uint64: the areas where the bool ``row`` is True, as an area set."""
    for w in range(out.shape[0]):
        out[w] = _word_nb(row, w)


@njit(cache=True, _nrt=True)
def retreat_targets_nb(adj_indptr, adj_indices, adj_bits, edge_blocked, eastern_link, goal, enemy_row,
                       friendly_blocks_row, side, battle_area, max_blocks, n_retreating,
                       out_areas, out_area_dist, out_target):
    """Where a defeated defender retreats (SoE 7.42), with stacking overflow.

    Candidates are the areas adjacent to ``battle_area`` that are not enemy areas, are enterable,
    are reached by a link not marked in ``edge_blocked`` ("may not retreat along a road or rail
    blocked by enemy blocks"), and have a clear path to a ``goal`` area (for 7.42: the key cities
    ``side`` controls, E9) that does not go back through the battle area. They are ordered by that
    path's length, ties by area index (E9). The ``n_retreating`` blocks fill the first candidate up
    to ``max_blocks`` minus the friendly blocks already there (``friendly_blocks_row``; Eastern Links
    unlimited), the excess the next, and so on; blocks left over are encircled (SoE 7.42:
    eliminated permanently, 1 VP each to the opponent — applied by the caller).

    out_areas, out_area_dist : (≥ max degree,) int — the ordered candidates and their distances
    out_target : (≥ n_retreating,) int — area of each retreating block in order, ``ENCIRCLED``
    Returns the number of candidates.
    """
    n = enemy_row.shape[0]
    return retreat_targets_into_nb(adj_indptr, adj_indices, adj_bits, edge_blocked, eastern_link, goal, enemy_row,
                                   friendly_blocks_row, side, battle_area, max_blocks, n_retreating, out_areas,
                                   out_area_dist, out_target, np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int32))


@njit(cache=True, _nrt=False)
def retreat_targets_into_nb(adj_indptr, adj_indices, adj_bits, edge_blocked, eastern_link, goal, enemy_row,
                            friendly_blocks_row, side, battle_area, max_blocks, n_retreating,
                            out_areas, out_area_dist, out_target, dist, queue):
    """:func:`retreat_targets_nb` with the caller's scratch ``dist`` and ``queue`` (n_areas,) int32."""
    clear_bfs_into_nb(adj_indptr, adj_indices, adj_bits, goal, enemy_row, eastern_link, side, battle_area, dist, queue)
    has_blocked = edge_blocked.shape[0] > 0
    k = 0
    for e in range(adj_indptr[battle_area], adj_indptr[battle_area + 1]):
        a = adj_indices[e]
        if has_blocked and edge_blocked[e]:
            continue
        if enemy_row[a] or not enterable_nb(eastern_link, side, a) or dist[a] == UNREACHED:
            continue
        # insertion by (distance, index)
        j = k
        while j > 0 and (out_area_dist[j - 1] > dist[a]
                         or (out_area_dist[j - 1] == dist[a] and out_areas[j - 1] > a)):
            out_areas[j] = out_areas[j - 1]
            out_area_dist[j] = out_area_dist[j - 1]
            j -= 1
        out_areas[j] = a
        out_area_dist[j] = dist[a]
        k += 1
    c = 0
    room = 0
    if k > 0:
        room = _capacity_nb(eastern_link, friendly_blocks_row, out_areas[0], max_blocks)
    for r in range(n_retreating):
        while c < k and room <= 0:
            c += 1
            if c < k:
                room = _capacity_nb(eastern_link, friendly_blocks_row, out_areas[c], max_blocks)
        if c < k:
            out_target[r] = out_areas[c]
            room -= 1
        else:
            out_target[r] = ENCIRCLED
    return k


@njit(cache=True, _nrt=False, internal=True)
def _capacity_nb(eastern_link, count_row, area, max_blocks):
    """Blocks that may still end the phase in ``area`` (SoE 7.33; Eastern Links unlimited, 1.4)."""
    if eastern_link[area]:
        return UNLIMITED
    return max_blocks - count_row[area]


@njit(cache=True, _nrt=False)
def restrict_retreat_nb(eastern_link, allowed_row, friendly_blocks_row, max_blocks, n_retreating, overflow_to_first,
                        areas, n_areas_in, out_target):
    """Keep only the retreat candidates ``areas[:n_areas_in]`` (the ordered output of
    :func:`retreat_targets_nb`) that ``allowed_row`` allows, in the same order, and assign the
    ``n_retreating`` blocks to them again: each fills the first remaining candidate with room
    (``max_blocks`` minus ``friendly_blocks_row``; Eastern Links unlimited), as retreat_targets_nb
    does. Blocks left without room are ``ENCIRCLED``, or go to the first candidate when
    ``overflow_to_first`` (a Withdraw, O8: stacking is enforced at the end of the phase).

    The candidates' *paths* are untouched: ``allowed_row`` only says where the blocks may end. It is
    the round loop's per-side / per-nation mask (G15, G16: an inactive neutral nation's areas, a
    capital that "cannot be seized", a ``neutral_nation`` ``max_distance`` or a
    ``front_restriction``). An empty ``allowed_row`` (shape (0,)) allows every area.

    Returns the number of candidates kept (``areas[:k]``).
    """
    k = 0
    for i in range(n_areas_in):
        a = areas[i]
        if allowed_row.shape[0] == 0 or allowed_row[a]:
            areas[k] = a
            k += 1
    c = 0
    room = 0
    if k > 0:
        room = _capacity_nb(eastern_link, friendly_blocks_row, areas[0], max_blocks)
    for r in range(n_retreating):
        while c < k and room <= 0:
            c += 1
            if c < k:
                room = _capacity_nb(eastern_link, friendly_blocks_row, areas[c], max_blocks)
        if c < k:
            out_target[r] = areas[c]
            room -= 1
        elif overflow_to_first and k > 0:
            out_target[r] = areas[0]
        else:
            out_target[r] = ENCIRCLED
    return k


@njit(cache=True, _nrt=True)
def overstack_pullback_nb(adj_indptr, adj_indices, eastern_link, enemy_row, depot_dist_row, block_side,
                          block_area, block_status, block_sp, block_prev_area, block_arrival, side,
                          max_blocks, out_dest, out_counts, block_nation, nation_ok):
    """Resolve phase-end overstacking of ``side`` (SoE 7.33, 7.43), in place.

    In every area except Eastern Links (SoE 1.4) holding more than ``max_blocks`` blocks of
    ``side``, the blocks that arrived last (highest ``block_arrival``, then highest index; E11)
    leave, the last arrival first. Each goes back to the area it came from (``block_prev_area``) if
    that is not an enemy area, has room and is allowed to the block's nation; else to the area
    adjacent to the overstacked one with the shortest clear path to a friendly supply depot
    (``depot_dist_row``, ties by index) that is not an enemy area, has room and is allowed to the
    block's nation; else it is eliminated permanently (E11; no VP), as a retreating block with no
    allowed area is (E-B4, G16).

    Parameters
    ----------
    block_nation : (n_blocks,) int
        Nation of each block (:data:`~soe_sim.data.enums.NATION`).
    nation_ok : (n_nations, n_areas) bool
        Where each nation's blocks may end a pull-back — the round loop's ``EventWork.nation_ok``,
        the mask of retreats and withdrawals (G15, G16: neutral ground, Kaunas, a nation's
        ``max_distance`` / ``front_restriction``; EatS II.3 German territory for the Poles, V11).
        An empty array (shape (0, 0)) allows every area.
    out_dest : (n_blocks,) int
        New area, ``PULLBACK_NONE`` or ``PULLBACK_ELIMINATED``.
    out_counts : (2,) int
        Blocks moved, blocks eliminated.
    """
    n = enemy_row.shape[0]
    nbk = block_side.shape[0]
    cnt = np.zeros(n, dtype=np.int32)
    for b in range(nbk):
        out_dest[b] = PULLBACK_NONE
        if block_side[b] == side and block_status[b] == STATUS.ON_MAP and block_area[b] >= 0:
            cnt[block_area[b]] += 1
    out_counts[0] = 0
    out_counts[1] = 0
    members = np.empty(nbk, dtype=np.int64)
    for i in range(n):
        if eastern_link[i] or cnt[i] <= max_blocks:
            continue
        m = 0
        for b in range(nbk):
            if block_side[b] == side and block_status[b] == STATUS.ON_MAP and block_area[b] == i:
                # insertion by (arrival, index)
                j = m
                while j > 0 and (block_arrival[members[j - 1]] > block_arrival[b]):
                    members[j] = members[j - 1]
                    j -= 1
                members[j] = b
                m += 1
        excess = m - max_blocks
        for q in range(m - 1, m - 1 - excess, -1):
            b = members[q]
            dest = -1
            p = block_prev_area[b]
            restrict = nation_ok.shape[0] > 0  # G16: the block's nation limits (as retreats, E-B4)
            nat = block_nation[b]
            if (p >= 0 and p != i and not enemy_row[p] and enterable_nb(eastern_link, side, p)
                    and _capacity_nb(eastern_link, cnt, p, max_blocks) > 0
                    and (not restrict or nation_ok[nat, p])):
                dest = p
            else:
                best_d = 0
                for e in range(adj_indptr[i], adj_indptr[i + 1]):
                    a = adj_indices[e]
                    d = depot_dist_row[a]
                    if enemy_row[a] or d == UNREACHED or not enterable_nb(eastern_link, side, a):
                        continue
                    if restrict and not nation_ok[nat, a]:
                        continue
                    if _capacity_nb(eastern_link, cnt, a, max_blocks) <= 0:
                        continue
                    if dest < 0 or d < best_d or (d == best_d and a < dest):
                        dest = a
                        best_d = d
            cnt[i] -= 1
            if dest >= 0:
                block_area[b] = dest
                block_prev_area[b] = i
                cnt[dest] += 1
                out_dest[b] = dest
                out_counts[0] += 1
            else:
                block_area[b] = -1
                block_status[b] = STATUS.ELIMINATED_PERMANENT
                block_sp[b] = 0
                out_dest[b] = PULLBACK_ELIMINATED
                out_counts[1] += 1


@njit(cache=True, _nrt=True)
def garrison_replacement_nb(key_city, block_side, block_area, block_status, garrison_side, source_dist,
                            out_eligible):
    """Key cities where a side may place a garrison at no cost (SoE 8.1).

    ``out_eligible[s, i]``: ``i`` is a key city without a garrison, occupied by blocks of ``s`` and
    none of the enemy, and in supply for ``s`` in the 1.31 sense (clear path to its supply source:
    ``source_dist[s, i] >= 0`` from :func:`supply_depots_nb`; E12).
    """
    n = key_city.shape[0]
    cnt = np.zeros((2, n), dtype=np.int32)
    for b in range(block_side.shape[0]):
        a = block_area[b]
        if block_status[b] == STATUS.ON_MAP and a >= 0:
            cnt[block_side[b], a] += 1
    for s in range(2):
        for i in range(n):
            out_eligible[s, i] = (key_city[i] and garrison_side[i] < 0 and cnt[s, i] > 0
                                  and cnt[1 - s, i] == 0 and source_dist[s, i] != UNREACHED)


# --------------------------------------------------------------------------------------------------
# Plain-Python convenience (not a kernel): the end-of-phase supply sequence on a GameState.


def check_supply(state, game_map, consts, apply=True) -> dict:
    """Run the SoE 7.7 / 7.71 sequence on ``state`` (in place when ``apply``) and return the arrays.

    enemy presence → depots (1.31) → block supply (7.7) → out-of-supply losses and garrison removal
    (7.71) → control and key-city VP (1.3, 7.8). The VP track ``state.vp`` is updated with
    :func:`vp_add_nb`. Returns a dict with ``blocks``, ``enemy``, ``source_dist``, ``depot``,
    ``depot_dist``, ``in_supply``, ``oos_counts``, ``oos_vp``, ``control_vp``.
    """
    m = game_map
    n = m.n_areas
    blocks = np.zeros((2, n), dtype=np.int32)
    enemy = np.zeros((2, n), dtype=np.bool_)
    enemy_presence_nb(state.block_side, state.block_area, state.block_status, state.garrison_side, blocks, enemy)
    source_dist = np.empty((2, n), dtype=np.int32)
    depot = np.zeros((2, n), dtype=np.bool_)
    supply_depots_nb(m.adj_indptr, m.adj_indices, m.adj_bits, m.eastern_link, m.supply_source, state.supply_base,
                     m.garrison, enemy, source_dist, depot)
    depot_dist = np.empty((2, n), dtype=np.int32)
    block_supply_nb(m.adj_indptr, m.adj_indices, m.adj_bits, m.eastern_link, depot, enemy, state.block_side,
                    state.block_arm, state.block_area, state.block_status, consts.infantry_supply_range,
                    consts.cavalry_supply_range, depot_dist, state.block_in_supply)
    out = {"blocks": blocks, "enemy": enemy, "source_dist": source_dist, "depot": depot,
           "depot_dist": depot_dist, "in_supply": state.block_in_supply.copy()}
    if not apply:
        return out
    counts = np.zeros((2, N_OOS), dtype=np.int32)
    oos_vp = np.zeros(1, dtype=np.int32)
    apply_out_of_supply_nb(state.block_side, state.block_arm, state.block_area, state.block_status,
                           state.block_sp, state.block_in_supply, state.garrison_side, source_dist,
                           consts.vp_out_of_supply, counts, oos_vp)
    control_vp = np.zeros(1, dtype=np.int32)
    update_control_nb(m.garrison, m.eastern_link, m.vp, state.block_side, state.block_area, state.block_status,
                      state.garrison_side, state.control, control_vp)
    state.vp[0] = vp_add_nb(int(state.vp[0]), int(oos_vp[0]) + int(control_vp[0]))
    out.update(oos_counts=counts, oos_vp=int(oos_vp[0]), control_vp=int(control_vp[0]))
    return out
