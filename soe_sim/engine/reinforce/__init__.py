"""The Reinforcement Phase (SoE 8.0–8.5) and the arrival of scheduled reinforcements (SoE 4.0).

Python wrappers around the kernels of :mod:`soe_sim.engine.reinforce.nb` working on a
:class:`~soe_sim.engine.state.GameState`. Readings: docs/rules.md RF1–RF14. A phase loop runs
the phase in this order (SoE 8.0: "first replace garrisons. They then may combine blocks,
followed by strengthening and building new blocks. Blocks may not be detached"):

1. :func:`arrive_reinforcements` — blocks scheduled for ``(round, "reinforcement")`` (also called at
   the start of every operation phase for the blocks scheduled then; SoE 4.0);
2. ``ctx = begin_reinforcement_phase(...)`` — enemy presence, depots, supply (7.7), front lines
   (8.31) and the per-phase trackers, once per phase (RF4);
3. :func:`replace_garrisons` (8.1);
4. :func:`legal_combines` / :func:`apply_combine` (8.2), any number of times;
5. per side, strategic pools (:func:`strategic_pools`, 8.5) and the saved pool
   (:func:`saved_pool`) with :func:`legal_strengthen` / :func:`apply_strengthen` (8.3, 8.31) and
   :func:`legal_builds` / :func:`apply_build` (8.4); strategic cubes left unspent are dropped,
   saved cubes stay in ``state.cubes[side, front]`` for the next round (8.4 "Unspent Reinforcement
   Cubes may be saved"; EatS X one pool per front, V8).

Every wrapper changes ``state`` in place (its arrays) and returns plain numpy arrays / bools.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from soe_sim.data.enums import Front, Nation, Side
from soe_sim.engine.nb import check_supply, enemy_presence_nb, supply_depots_nb
from soe_sim.engine.reinforce.nb import (
    ARRIVE_DELAYED,
    ARRIVE_NONE,
    N_NATIONS,
    NATION_ROLE,
    NO_KIND,
    POLISH_ALLIED_NATIONS,
    SOVIET_ALLIED_NATIONS,
    ReinforceRules,
    apply_build_nb,
    apply_combine_nb,
    apply_strengthen_nb,
    arrive_reinforcements_nb,
    build_cost_nb,
    cube_kind_nb,
    front_line_nb,
    legal_builds_nb,
    legal_combines_nb,
    legal_strengthen_nb,
    nearest_leader_front_nb,
    replace_garrisons_nb,
    strategic_cubes_nb,
)
from soe_sim.engine.state import engine_constants

__all__ = [
    "ARRIVE_DELAYED",
    "ARRIVE_NONE",
    "NATION_ROLE",
    "NO_KIND",
    "POLISH_ALLIED_NATIONS",
    "SOVIET_ALLIED_NATIONS",
    "Pool",
    "ReinforceContext",
    "ReinforceRules",
    "apply_build",
    "apply_combine",
    "apply_strengthen",
    "arrive_reinforcements",
    "begin_reinforcement_phase",
    "block_cube_kinds",
    "build_cost_nb",
    "cube_kind_nb",
    "legal_builds",
    "legal_combines",
    "legal_strengthen",
    "nation_rules",
    "nation_supply_bases",
    "reinforce_constants",
    "replace_garrisons",
    "saved_pool",
    "strategic_front",
    "strategic_pools",
]


def reinforce_constants(rules) -> ReinforceRules:
    """Kernel-ready reinforcement constants of a :class:`~soe_sim.rules.Rules`."""
    r = rules
    return ReinforceRules(
        brigade_build_cost=int(r["reinforcement.brigade_build_cost"]),
        division_build_cost=int(r["reinforcement.division_build_cost"]),
        build_sp=int(r["reinforcement.build_sp"]),
        front_line_max_sp=int(r["reinforcement.front_line_max_sp"]),
        max_blocks=int(r["stacking.max_blocks"]),
        max_saved_cubes_per_front=int(r["reinforcement.max_saved_cubes_per_front"]),
        saved_cubes_first=bool(r["reinforcement.saved_cubes_first"]),
        saved_cubes_per_front=bool(r["reinforcement.saved_cubes_per_front"]),
        built_brigade_may_strengthen=bool(r["reinforcement.built_brigade_may_strengthen"]),
        own_nation_builds_at_supply_source_only=bool(r["reinforcement.own_nation_builds_at_supply_source_only"]),
        strategic_same_front=bool(r["reinforcement.strategic_same_front"]),
        combine_same_arm=bool(r["reinforcement.combine_same_arm"]),
    )


class Pool(NamedTuple):
    """Where cubes come from (SoE 8.3–8.5). ``cubes`` is a (3,) view updated in place."""

    side: int
    cubes: np.ndarray  # (3,) int: infantry, cavalry, allied
    area: int = -1  # strategic city: builds go there (8.5); -1 saved cubes
    front: int = -1  # strategic city's front: only blocks there are strengthened (8.5)
    nation: int = -1  # Kaunas: Lithuanian blocks only (8.5)

    @property
    def strategic(self) -> bool:
        return self.area >= 0


class ReinforceContext(NamedTuple):
    """Arrays fixed for one Reinforcement Phase (RF4) plus its trackers (8.31, 8.4)."""

    rules: ReinforceRules
    blocks: np.ndarray  # (2, n_areas) blocks per side (at the start of the phase)
    enemy: np.ndarray  # (2, n_areas) bool, enemy_presence_nb
    source_dist: np.ndarray  # (2, n_areas) clear-path distance to the supply source (1.31)
    depot: np.ndarray  # (2, n_areas) bool supply depots (1.31)
    front_line: np.ndarray  # (2, n_areas) bool (8.31)
    nation_active: np.ndarray  # (n_nations,) bool (RF6)
    nation_area_ok: np.ndarray  # (n_nations, n_areas) bool: where a nation's blocks may be built (RF6)
    gained_area: np.ndarray  # (2, n_areas) int SP gained from cubes per side and area this phase (8.31)
    built: np.ndarray  # (n_blocks,) bool built this phase (8.4)
    front: np.ndarray  # map front per area
    eastern_link: np.ndarray
    key_city: np.ndarray
    strategic_cubes: np.ndarray  # map (n_areas, 3)
    kaunas: int  # area index of Kaunas, -1 if the map has none


def block_cube_kinds(state) -> np.ndarray:
    """Cube colour of every block (``CUBE_*`` column, ``NO_KIND`` for leaders; RF5)."""
    return np.array([cube_kind_nb(int(s), int(n), int(a)) for s, n, a in
                     zip(state.block_side, state.block_nation, state.block_arm)], dtype=np.int8)


def _plain_distances(game_map, start: int) -> np.ndarray:
    n = game_map.n_areas
    dist = np.full(n, -1, dtype=np.int64)
    dist[start] = 0
    frontier = [start]
    while frontier:
        nxt = []
        for u in frontier:
            for v in game_map.adj_indices[game_map.adj_indptr[u]:game_map.adj_indptr[u + 1]]:
                if dist[v] < 0:
                    dist[v] = dist[u] + 1
                    nxt.append(int(v))
        frontier = nxt
    return dist


def nation_rules(game_map, scenario=None, active_nations=()) -> tuple[np.ndarray, np.ndarray]:
    """``(nation_active, nation_area_ok)`` from a scenario's special rules (RF6).

    * ``neutral_nation`` (e.g. Lithuania, neutral until Soviet card 23): the nation's blocks are
      inactive — never combined, strengthened or built — unless its slug is in ``active_nations``;
      once active they are built only within ``max_distance`` links of ``max_distance_from`` when
      the rule says so.
    * ``front_restriction`` (UNR / UHA "south only"): the nation's blocks are built only on depots of
      that front.
    """
    n = game_map.n_areas
    active = np.ones(N_NATIONS, dtype=np.bool_)
    area_ok = np.ones((N_NATIONS, n), dtype=np.bool_)
    if scenario is None:
        return active, area_ok
    act = {str(a) for a in active_nations}
    for r in scenario.special_rules:
        kind = r.get("kind")
        try:
            nat = int(Nation.from_slug(r.get("nation", "")))
        except KeyError:
            continue
        if kind == "neutral_nation":
            if r["nation"] not in act:
                active[nat] = False
            center = r.get("max_distance_from")
            if center and r.get("max_distance") is not None and center in game_map.area_index:
                d = _plain_distances(game_map, game_map.area_index[center])
                area_ok[nat] &= (d >= 0) & (d <= int(r["max_distance"]))
        elif kind == "front_restriction":
            f = int(Front.from_slug(r["front"]))
            area_ok[nat] &= game_map.front == f
    return active, area_ok


def nation_supply_bases(game_map, scenario=None) -> tuple[np.ndarray, np.ndarray]:
    """``(area, side)`` (n_nations,) int64: the supply base a ``neutral_nation`` rule's ``supply_base``
    names (``-1`` none) and the side it serves once the nation is active (the rule's ``side``). EatS
    II.3: after "Alliance with Lithuania", "Kaunas ... is a supply base for Soviet units" (G16)."""
    area = np.full(N_NATIONS, -1, dtype=np.int64)
    side = np.full(N_NATIONS, -1, dtype=np.int64)
    for r in (scenario.special_rules if scenario is not None else []):
        if r.get("kind") != "neutral_nation" or not r.get("supply_base"):
            continue
        nat = int(Nation.from_slug(r["nation"]))  # validated by the scenario loader
        area[nat] = game_map.area_index[r["supply_base"]]
        side[nat] = int(Side.from_slug(r["side"]))
    return area, side


def begin_reinforcement_phase(state, game_map, rules, scenario=None, active_nations=()) -> ReinforceContext:
    """Compute the phase's fixed arrays (RF4): presence, depots, block supply (written to
    ``state.block_in_supply``, SoE 7.7), front lines (8.31), nation rules (RF6), empty trackers."""
    consts = engine_constants(rules)
    sup = check_supply(state, game_map, consts, apply=False)
    n = game_map.n_areas
    front_line = np.zeros((2, n), dtype=np.bool_)
    front_line_nb(game_map.adj_indptr, game_map.adj_indices, sup["enemy"], state.control, front_line)
    active, area_ok = nation_rules(game_map, scenario, active_nations)
    return ReinforceContext(
        rules=reinforce_constants(rules),
        blocks=sup["blocks"],
        enemy=sup["enemy"],
        source_dist=sup["source_dist"],
        depot=sup["depot"],
        front_line=front_line,
        nation_active=active,
        nation_area_ok=area_ok,
        gained_area=np.zeros((2, n), dtype=np.int32),
        built=np.zeros(state.n_blocks, dtype=np.bool_),
        front=game_map.front,
        eastern_link=game_map.eastern_link,
        key_city=game_map.garrison,
        strategic_cubes=game_map.strategic_cubes,
        kaunas=int(game_map.area_index.get("kaunas", -1)),
    )


# --- SoE 4.0 ------------------------------------------------------------------------------------------


def arrive_reinforcements(state, game_map, rules, condition_met=None) -> np.ndarray:
    """Place the due scheduled reinforcements (SoE 4.0; RF1–RF3) at the state's round/phase.

    ``condition_met``: bool per scenario special rule (index = ``block_arrive_condition``); blocks
    with a condition arrive only when it is True. Returns ``out_area`` (see
    :func:`~soe_sim.engine.reinforce.nb.arrive_reinforcements_nb`).
    """
    m = game_map
    n = m.n_areas
    blocks = np.zeros((2, n), dtype=np.int32)
    enemy = np.zeros((2, n), dtype=np.bool_)
    enemy_presence_nb(state.block_side, state.block_area, state.block_status, state.garrison_side, blocks, enemy)
    src = np.empty((2, n), dtype=np.int32)
    depot = np.zeros((2, n), dtype=np.bool_)
    supply_depots_nb(m.adj_indptr, m.adj_indices, m.adj_bits, m.eastern_link, m.supply_source, state.supply_base,
                     m.garrison, enemy, src, depot)
    if condition_met is None:
        condition_met = np.zeros(0, dtype=np.bool_)
    out = np.empty(state.n_blocks, dtype=np.int64)
    arrive_reinforcements_nb(m.adj_indptr, m.adj_indices, m.eastern_link, enemy, depot,
                             int(rules["stacking.max_blocks"]), int(state.round[0]), int(state.phase[0]),
                             np.asarray(condition_met, dtype=np.bool_), state.block_side, state.block_status,
                             state.block_area, state.block_sp, state.block_prev_area, state.block_arrival,
                             state.block_in_supply, state.block_arrive_round, state.block_arrive_phase,
                             state.block_arrive_area, state.block_arrive_sp, state.block_arrive_condition, out)
    return out


# --- SoE 8.1 ------------------------------------------------------------------------------------------


def replace_garrisons(state, ctx: ReinforceContext, want=None) -> np.ndarray:
    """Place the free garrisons of SoE 8.1 (all eligible ones unless ``want`` (2, n) says no)."""
    n = ctx.key_city.shape[0]
    if want is None:
        want = np.ones((2, n), dtype=np.bool_)
    out = np.zeros((2, n), dtype=np.bool_)
    replace_garrisons_nb(ctx.key_city, state.block_side, state.block_area, state.block_status,
                         state.garrison_side, ctx.source_dist, np.asarray(want, dtype=np.bool_), out)
    return out


# --- SoE 8.2 ------------------------------------------------------------------------------------------


def legal_combines(state, ctx: ReinforceContext, side: int) -> np.ndarray:
    """(n_blocks, n_blocks) bool: ``[d, b]`` division ``d`` may absorb ``b`` (SoE 8.2; RF8)."""
    out = np.zeros((state.n_blocks, state.n_blocks), dtype=np.bool_)
    legal_combines_nb(int(side), state.block_side, state.block_arm, state.block_class, state.block_nation,
                      state.block_area, state.block_status, state.block_sp, state.block_max_sp,
                      ctx.nation_active, ctx.rules.combine_same_arm, out)
    return out


def apply_combine(state, ctx: ReinforceContext, side: int, absorber: int, absorbed: int) -> bool:
    """Division ``absorber`` absorbs ``absorbed`` (SoE 8.2); False when illegal."""
    return bool(apply_combine_nb(int(side), int(absorber), int(absorbed), state.block_side, state.block_arm,
                                 state.block_class, state.block_nation, state.block_area, state.block_status,
                                 state.block_sp, state.block_max_sp, state.block_prev_area, state.block_arrival,
                                 state.block_in_supply, ctx.nation_active, ctx.rules.combine_same_arm))


# --- SoE 8.3 / 8.31 / 8.4 / 8.5 ----------------------------------------------------------------------------


def saved_pool(state, side: int, front: int = 0, per_front: bool = False) -> Pool:
    """The side's collected cubes of one front (SoE 3.2, 7.12): a view of ``state.cubes[side, front]``.

    Parameters
    ----------
    state : GameState
    side, front : int
        ``front`` indexes :data:`~soe_sim.data.enums.FRONT` (default north, where a scenario's
        starting cubes are).
    per_front : bool
        ``ReinforceRules.saved_cubes_per_front``: True (EatS X, reading V8) ties the pool to its
        front (``Pool.front = front``: only blocks there are strengthened); False (SoE 8.3, RF14)
        spends it on any front (``Pool.front = -1``; the round loop merges both fronts' cubes).
    """
    f = int(front) if per_front else -1
    return Pool(side=int(side), cubes=state.cubes[int(side), int(front)], front=f)


def strategic_front(state, game_map, city: int, rivalry: bool = False) -> int:
    """Front on which a strategic city's cubes are spent (SoE 8.5; RF12).

    The city's own map front, except Klintsy under 10.2 Player Rivalry (``rivalry``, 3–4 player
    scenarios): the front of the Soviet leader nearest to Klintsy (ties: north).
    """
    city = int(city)
    f = int(game_map.front[city])
    if rivalry and city == game_map.area_index.get("klintsy", -2):
        f = int(nearest_leader_front_nb(game_map.adj_indptr, game_map.adj_indices, game_map.front, city,
                                        int(Side.SOVIET), state.block_side, state.block_arm, state.block_area,
                                        state.block_status, f))
    return f


def strategic_pools(state, game_map, ctx: ReinforceContext, side: int, lithuania_allied: bool = False,
                    rivalry: bool = False) -> list[Pool]:
    """One :class:`Pool` per strategic city ``side`` may pull from this phase (SoE 8.5; RF11, RF12).

    Each pool owns a fresh (3,) array: spend it at once and drop it (8.5 "may not save them").
    """
    n = game_map.n_areas
    out = np.zeros((n, 3), dtype=np.int64)
    strategic_cubes_nb(ctx.strategic_cubes, state.control, ctx.depot, int(side), ctx.kaunas,
                       bool(lithuania_allied), out)
    pools = []
    for i in np.flatnonzero(out.sum(axis=1) > 0):
        nation = int(Nation.LITHUANIAN) if int(i) == ctx.kaunas else -1
        pools.append(Pool(side=int(side), cubes=out[i].copy(), area=int(i),
                          front=strategic_front(state, game_map, int(i), rivalry), nation=nation))
    return pools


def _strengthen_args(state, ctx, pool):
    return (state.block_side, state.block_arm, state.block_nation, state.block_area, state.block_status,
            state.block_sp, state.block_max_sp, state.block_in_supply, ctx.built, ctx.nation_active, ctx.front,
            ctx.front_line, ctx.gained_area, ctx.rules, pool.cubes, int(pool.front), int(pool.nation))


def legal_strengthen(state, ctx: ReinforceContext, pool: Pool) -> np.ndarray:
    """(n_blocks,) bool: blocks that may gain 1 SP for one cube of ``pool`` (SoE 8.3, 8.31)."""
    out = np.zeros(state.n_blocks, dtype=np.bool_)
    legal_strengthen_nb(int(pool.side), *_strengthen_args(state, ctx, pool), out)
    return out


def apply_strengthen(state, ctx: ReinforceContext, pool: Pool, block: int) -> bool:
    """+1 SP to ``block`` for one cube of ``pool`` (SoE 8.3); False when illegal."""
    return bool(apply_strengthen_nb(int(pool.side), int(block), *_strengthen_args(state, ctx, pool)))


def legal_builds(state, ctx: ReinforceContext, pool: Pool) -> np.ndarray:
    """(n_blocks, n_areas) bool: ``[b, a]`` block ``b`` may be built in ``a`` from ``pool`` (SoE 8.4)."""
    out = np.zeros((state.n_blocks, ctx.front.shape[0]), dtype=np.bool_)
    legal_builds_nb(int(pool.side), state.block_side, state.block_arm, state.block_class, state.block_nation,
                    state.block_area, state.block_status, ctx.nation_active, ctx.nation_area_ok,
                    ctx.eastern_link, ctx.depot, ctx.enemy, ctx.rules, pool.cubes, int(pool.area),
                    int(pool.nation), out)
    return out


def apply_build(state, ctx: ReinforceContext, pool: Pool, block: int, area: int) -> bool:
    """Build ``block`` at 1 SP in ``area`` paying from ``pool`` (SoE 8.4); False when illegal."""
    return bool(apply_build_nb(int(pool.side), int(block), int(area), state.block_side, state.block_arm,
                               state.block_class, state.block_nation, state.block_area, state.block_status,
                               state.block_sp, state.block_prev_area, state.block_arrival, state.block_in_supply,
                               ctx.built, ctx.nation_active, ctx.nation_area_ok, ctx.eastern_link, ctx.depot,
                               ctx.enemy, ctx.rules, pool.cubes, int(pool.area), int(pool.nation)))
