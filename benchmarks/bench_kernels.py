"""Per-call cost of the ORDER-placement kernels on a real position, for engine work whose effect on a
whole game is below the VM's noise (a Kiev game is ~3 ms; a kernel change worth 2 % of it cannot be
seen in games/s on a shared VM, but it can in the kernel's own time).

The position: the start of ``--scenario`` (supply checked), ``--orders`` orders placed by the first
side on its front (rows drawn with a fixed seed from the listing). Timed, each inside one numba loop
of ``--calls`` calls (so no Python call overhead is measured), after a warm-up:

* ``placement_tables_us``: ``placement_tables_nb`` (the static part, once per side and placement
  step in a game), its supply searches made at every call (since session 42 a game keeps its last
  ones, ``SupplySearchCache``: calls on one position would otherwise time copies of them);
* ``legal_orders_us``: ``legal_orders_from_tables_nb`` (the rows, at every ORDER decision), with the
  matching of all the placed orders built at each call: since session 29 a call extends the matching of its
  last call on the same tables (``PlacementTables.meta[M_MATCHED]``), so calls repeated on one position would
  otherwise time no matching at all, and the figure would not compare with older trees (which have no
  ``M_MATCHED``: nothing is reset there);
* ``rows``: how many rows that listing has (a check that two trees time the same work);
* ``side_depots_us``: ``side_depots_into_nb`` for the side (two whole-map clear-path searches: to the
  supply sources, then to the depots), and the same three on a copy of the map without area sets
  (``*_link_lists``: ``adj_bits`` with no words, the searches walk the link lists), so that one run
  compares the two ways of searching (docs/engine-design.md "Area sets").

Median of ``--repeats``; JSON on stdout. Compare two checkouts by running it under each
(``PYTHONPATH=/tmp/wt_old .venv/bin/python benchmarks/bench_kernels.py``), alternating.

Run: ``.venv/bin/python benchmarks/bench_kernels.py [--scenario kiev-offensive] [--calls 20000]``
"""
from __future__ import annotations

import platform
import statistics
import time

import click
import numpy as np
from numba import njit

from soe_sim.data import load_blocks, load_map, load_scenario
from soe_sim.engine import nb as enb
from soe_sim.engine.nb import check_supply, side_depots_into_nb
from soe_sim.engine.orders import nb, new_order_state, order_constants
from soe_sim.engine.state import engine_constants, new_game
from soe_sim.rules import load_rules
from _output import emit_json  # benchmarks/_output.py


@njit(cache=False)
def _loop_legal_orders(calls, orders, map_arrays, orules, side, front, allowed, tabs, out_type, out_area, matched):
    total = 0
    for _ in range(calls):
        if matched >= 0:  # the matching of every placed order built at each call (see the module docstring)
            tabs.meta[matched] = 0
        total += nb.legal_orders_from_tables_nb(orders, map_arrays, orules, side, front, allowed, tabs, out_type,
                                                out_area)
    return total


@njit(cache=False)
def _loop_placement_tables(calls, state, map_arrays, orules, side, tabs):
    for _ in range(calls):
        nb.placement_tables_nb(state, map_arrays, orules, side, tabs)


@njit(cache=False)
def _loop_side_depots(calls, m, supply_base, enemy, side, src, depot, depot_dist, scratch):
    for _ in range(calls):
        side_depots_into_nb(m.adj_indptr, m.adj_indices, m.adj_bits, m.eastern_link, m.supply_source, supply_base,
                            m.garrison, enemy, side, src, depot, depot_dist, scratch)


@njit(cache=False)
def _loop_side_depots_old(calls, m, supply_base, enemy, side, src, depot, depot_dist, seeds, queue):
    for _ in range(calls):  # a tree before session 42 (no SupplySearchCache: seeds and queue scratch)
        side_depots_into_nb(m.adj_indptr, m.adj_indices, m.adj_bits, m.eastern_link, m.supply_source, supply_base,
                            m.garrison, enemy, side, src, depot, depot_dist, seeds, queue)


def _uncached(tabs, n):
    """``tabs`` whose supply searches are made at every call (a SupplySearchCache without slots, since
    session 42): calls repeated on one position time the searches, as in older trees."""
    if hasattr(enb, "new_supply_search_cache_nb"):
        return tabs._replace(supply=enb.new_supply_search_cache_nb(n, 0))
    return tabs


def _median_us(fn, calls: int, repeats: int) -> float:
    fn(10)  # warm-up: compilation and caches
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn(calls)
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return round(statistics.median(times), 3)


@click.command()
@click.option("--scenario", default="kiev-offensive", show_default=True)
@click.option("--orders", "n_orders", default=3, show_default=True, help="Orders placed before the listing is timed.")
@click.option("--calls", default=20_000, show_default=True, help="Kernel calls per timed loop.")
@click.option("--repeats", default=5, show_default=True)
@click.option("--seed", default=1, show_default=True)
@click.option("--out", default=None, help="Also write the JSON here.")
def main(scenario, n_orders, calls, repeats, seed, out):
    game_map, roster, rules = load_map(), load_blocks(), load_rules()
    orules = order_constants(rules)
    state = new_game(load_scenario(scenario), game_map, roster, rules)
    check_supply(state, game_map, engine_constants(rules), apply=False)
    orders = new_order_state(state)
    size = nb.N_ORDER_TYPES * game_map.n_areas + 1
    out_type, out_area = np.empty(size, np.int64), np.empty(size, np.int64)
    tabs = _uncached(nb.new_placement_tables_nb(state.n_blocks, game_map.n_areas, game_map.adj_indices.shape[0],
                                                orders.order_type.shape[0]), game_map.n_areas)
    side = 0
    on_map = (state.block_side == side) & (state.block_area >= 0)
    front = int(game_map.front[int(state.block_area[on_map][0])])
    allowed = n_orders + 2
    nb.placement_tables_nb(state, game_map.arrays, orules, side, tabs)
    rng = np.random.default_rng(seed)
    for _ in range(n_orders):
        k = nb.legal_orders_from_tables_nb(orders, game_map.arrays, orules, side, front, allowed, tabs, out_type,
                                           out_area)
        real = [j for j in range(k) if out_type[j] != nb.NO_ORDER]
        if not real:
            break
        j = real[int(rng.integers(len(real)))]
        nb.place_order_nb(state, orders, side, front, out_type[j], out_area[j])
    rows = int(nb.legal_orders_from_tables_nb(orders, game_map.arrays, orules, side, front, allowed, tabs, out_type,
                                              out_area))
    result = {
        "benchmark": "kernels",
        "scenario": scenario,
        "side": side,
        "front": front,
        "orders_placed": int(orders.n_orders[0]),
        "rows": rows,
        "calls": calls,
        "repeats": repeats,
        "placement_tables_us": _median_us(
            lambda c: _loop_placement_tables(c, state, game_map.arrays, orules, side, tabs), calls, repeats),
        "legal_orders_us": _median_us(
            lambda c: _loop_legal_orders(c, orders, game_map.arrays, orules, side, front, allowed, tabs, out_type,
                                         out_area, getattr(nb, "M_MATCHED", -1)), calls, repeats),
        "python": platform.python_version(),
    }
    # the same kernels on the map without area sets (the link-list searches)
    n = game_map.n_areas
    lists = game_map.arrays._replace(adj_bits=np.zeros((n + 1, 0), dtype=np.uint64))
    tabs2 = _uncached(nb.new_placement_tables_nb(state.n_blocks, n, game_map.adj_indices.shape[0],
                                                 orders.order_type.shape[0]), n)
    nb.placement_tables_nb(state, lists, orules, side, tabs2)
    check = int(nb.legal_orders_from_tables_nb(orders, lists, orules, side, front, allowed, tabs2, out_type, out_area))
    if check != rows:
        raise click.ClickException(f"the link-list tables list {check} rows, the area sets {rows}")
    cnt = np.zeros((2, n), dtype=np.int32)
    enemy = np.zeros((2, n), dtype=np.bool_)
    nb.presence_nb(state, cnt, enemy)
    rows_out = (np.empty(n, np.int32), np.zeros(n, np.bool_), np.empty(n, np.int32))
    if hasattr(enb, "new_supply_search_cache_nb"):  # no slots: every call searches
        loop, scratch = _loop_side_depots, (enb.new_supply_search_cache_nb(n, 0),)
    else:
        loop, scratch = _loop_side_depots_old, (np.zeros(n, np.bool_), np.empty(n, np.int32))
    for key, arrays in (("", game_map.arrays), ("_link_lists", lists)):
        result["side_depots_us" + key] = _median_us(
            lambda c: loop(c, arrays, state.supply_base, enemy, side, *rows_out, *scratch), calls, repeats)
    result["placement_tables_us_link_lists"] = _median_us(
        lambda c: _loop_placement_tables(c, state, lists, orules, side, tabs2), calls, repeats)
    result["legal_orders_us_link_lists"] = _median_us(
        lambda c: _loop_legal_orders(c, orders, lists, orules, side, front, allowed, tabs2, out_type, out_area,
                                     getattr(nb, "M_MATCHED", -1)),
        calls, repeats)
    emit_json(result, out)


if __name__ == "__main__":
    main()
