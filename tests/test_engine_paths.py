"""Movement ranges, rail transport, retreat and overstack pull-back: kernels vs the oracle, and the
rulebook examples (SoE 7.31, 7.32, 7.33, 7.42, 7.6, 1.4)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from soe_sim.data.enums import ARM, SIDE
from soe_sim.data.map import load_map
from soe_sim.engine.nb import (
    ENCIRCLED,
    PULLBACK_ELIMINATED,
    PULLBACK_NONE,
    UNREACHED,
    overstack_pullback_nb,
    reachable_nb,
    restrict_retreat_nb,
    retreat_targets_nb,
)
from soe_sim.engine.state import STATUS, engine_constants
from tests import engine_naive as naive
from tests.test_engine_supply import Pos, dist_dict, polish_home, run_presence, supply_pipeline

SEEDS = st.integers(0, 2**32 - 1)
NO_EDGES = np.zeros(0, dtype=np.bool_)


@pytest.fixture(scope="module")
def game_map():
    return load_map()


@pytest.fixture(scope="module")
def board(game_map):
    return naive.Board.from_map(game_map)


def blocked_pairs(game_map, edge_blocked):
    """CSR edge mask → set of directed (from, to) id pairs for the oracle."""
    m = game_map
    out = set()
    for u in range(m.n_areas):
        for e in range(m.adj_indptr[u], m.adj_indptr[u + 1]):
            if edge_blocked[e]:
                out.add((m.ids[u], m.ids[m.adj_indices[e]]))
    return out


def reach(game_map, enemy_row, side, start, allowance, rail_only=False, depot_dist_row=None, rail_range=0,
          edge_blocked=NO_EDGES):
    m = game_map
    out = np.empty(m.n_areas, dtype=np.int32)
    if depot_dist_row is None:
        depot_dist_row = np.full(m.n_areas, UNREACHED, dtype=np.int32)
    reachable_nb(m.adj_indptr, m.adj_indices, m.adj_kind, edge_blocked, m.eastern_link, enemy_row, side,
                 m.index(start) if isinstance(start, str) else start, allowance, rail_only, depot_dist_row,
                 rail_range, out)
    return out


def retreat(game_map, arr, side, battle_area, n_retreating, max_blocks, goal=None, edge_blocked=NO_EDGES):
    m = game_map
    blocks, enemy = run_presence(m, arr)
    if goal is None:
        goal = m.garrison & (arr["control"] == side)
    areas = np.empty(16, dtype=np.int32)
    dists = np.empty(16, dtype=np.int32)
    target = np.empty(n_retreating, dtype=np.int32)
    k = retreat_targets_nb(m.adj_indptr, m.adj_indices, m.adj_bits, edge_blocked, m.eastern_link, goal, enemy[side],
                           blocks[side], side, battle_area, max_blocks, n_retreating, areas, dists, target)
    ids = m.ids
    return ([(ids[a], int(d)) for a, d in zip(areas[:k], dists[:k])],
            [ids[t] if t >= 0 else None for t in target])


def pullback(game_map, arr, side, consts, block_nation=None, nation_ok=None):
    m = game_map
    out = supply_pipeline(m, arr, consts)
    dest = np.empty(len(arr["block_side"]), dtype=np.int32)
    counts = np.zeros(2, dtype=np.int32)
    if nation_ok is None:  # no G16 limits
        block_nation = np.zeros(len(arr["block_side"]), dtype=np.int8)
        nation_ok = np.zeros((0, 0), dtype=np.bool_)
    overstack_pullback_nb(m.adj_indptr, m.adj_indices, m.eastern_link, out["enemy"][side], out["depot_dist"][side],
                          arr["block_side"], arr["block_area"], arr["block_status"], arr["block_sp"],
                          arr["block_prev_area"], arr["block_arrival"], side, consts.max_blocks, dest, counts,
                          block_nation, nation_ok)
    return dest, counts, out


# --- kernel vs oracle ---------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(seed=SEEDS, rail=st.booleans())
def test_reachable_matches_oracle(game_map, board, rules, seed, rail):
    rng = np.random.default_rng(seed)
    arr = naive.random_arrays(rng, game_map)
    consts = engine_constants(rules)
    out = supply_pipeline(game_map, arr, consts)
    pos = naive.position_of(board, arr)
    edge_blocked = rng.random(len(game_map.adj_indices)) < 0.1
    pairs = blocked_pairs(game_map, edge_blocked)
    for _ in range(4):
        side = int(rng.integers(0, 2))
        start = int(rng.integers(game_map.n_areas))
        if side == SIDE.POLISH and game_map.eastern_link[start]:
            continue
        allowance = consts.rail_max_areas if rail else int(rng.integers(1, 4))
        got = reach(game_map, out["enemy"][side], side, start, allowance, rail, out["depot_dist"][side],
                    consts.rail_depot_range, edge_blocked)
        want = naive.reachable(board, pos, naive.SIDES[side], game_map.ids[start], allowance, rail,
                               dist_dict(game_map, out["depot_dist"][side]), consts.rail_depot_range, pairs)
        assert dist_dict(game_map, got) == want


@settings(max_examples=60, deadline=None)
@given(seed=SEEDS)
def test_retreat_targets_match_oracle(game_map, board, rules, seed):
    rng = np.random.default_rng(seed)
    arr = naive.random_arrays(rng, game_map)
    consts = engine_constants(rules)
    pos = naive.position_of(board, arr)
    edge_blocked = rng.random(len(game_map.adj_indices)) < 0.15
    pairs = blocked_pairs(game_map, edge_blocked)
    for _ in range(4):
        side = int(rng.integers(0, 2))
        battle = int(rng.integers(game_map.n_areas))
        n = int(rng.integers(1, 7))
        got_c, got_t = retreat(game_map, arr, side, battle, n, consts.max_blocks, edge_blocked=edge_blocked)
        want_c, want_t = naive.retreat_targets(board, pos, naive.SIDES[side], game_map.ids[battle], n,
                                               consts.max_blocks, blocked=pairs)
        assert got_c == want_c
        assert got_t == want_t


@settings(max_examples=60, deadline=None)
@given(seed=SEEDS)
def test_restricted_retreat_matches_oracle(game_map, board, rules, seed):
    """G16 (SoE 7.42, 7.2 Withdraw with the round loop's area masks): ``restrict_retreat_nb`` after
    ``retreat_targets_nb`` keeps the allowed candidates in 7.42 order and refills them; blocks left
    over are encircled, or go to the first candidate for a Withdraw (O8)."""
    rng = np.random.default_rng(seed)
    arr = naive.random_arrays(rng, game_map)
    consts = engine_constants(rules)
    pos = naive.position_of(board, arr)
    m = game_map
    blocks, enemy = run_presence(m, arr)
    for _ in range(4):
        side = int(rng.integers(0, 2))
        battle = int(rng.integers(m.n_areas))
        n = int(rng.integers(1, 9))
        allowed = rng.random(m.n_areas) < 0.6
        overflow = bool(rng.integers(0, 2))
        goal = m.garrison & (arr["control"] == side)
        areas = np.empty(16, dtype=np.int64)
        dists = np.empty(16, dtype=np.int64)
        target = np.empty(n, dtype=np.int64)
        k = retreat_targets_nb(m.adj_indptr, m.adj_indices, m.adj_bits, NO_EDGES, m.eastern_link, goal, enemy[side],
                               blocks[side], side, battle, consts.max_blocks, n, areas, dists, target)
        k = restrict_retreat_nb(m.eastern_link, allowed, blocks[side], consts.max_blocks, n, overflow, areas, k,
                                target)
        want_c, want_t = naive.retreat_targets(board, pos, naive.SIDES[side], m.ids[battle], n, consts.max_blocks,
                                               allowed={m.ids[a] for a in np.flatnonzero(allowed)},
                                               overflow_to_first=overflow)
        assert [m.ids[a] for a in areas[:k]] == [a for a, _ in want_c]
        assert [m.ids[t] if t >= 0 else None for t in target] == want_t
        assert (target == ENCIRCLED).any() == (None in want_t)


@settings(max_examples=60, deadline=None)
@given(seed=SEEDS)
def test_overstack_pullback_matches_oracle(game_map, board, rules, seed):
    rng = np.random.default_rng(seed)
    # few hot areas: many overstacks
    arr = naive.random_arrays(rng, game_map, n_blocks=int(rng.integers(20, 60)),
                              hot=rng.choice(game_map.n_areas, size=int(rng.integers(4, 12)), replace=False))
    consts = engine_constants(rules)
    # G16: half the examples restrict each block's pull-back to its (random) nation's areas
    nat, ok, allowed = None, None, None
    if rng.random() < 0.5:
        nat = rng.integers(0, 3, len(arr["block_side"])).astype(np.int8)
        ok = rng.random((3, game_map.n_areas)) < 0.6
        allowed = lambda k, area: bool(ok[nat[k], game_map.index(area)])  # noqa: E731
    for side in (0, 1):
        a = {k: v.copy() for k, v in arr.items()}
        pos = naive.position_of(board, a)
        depot_dist = supply_pipeline(game_map, a, consts)["depot_dist"][side]
        want_pos, want_moves = naive.overstack_pullback(board, pos, naive.SIDES[side], consts.max_blocks,
                                                        dist_dict(game_map, depot_dist), allowed)
        dest, counts, _ = pullback(game_map, a, side, consts, nat, ok)
        got = naive.position_of(board, a)
        assert [(b.area, b.status, b.sp, b.prev) for b in got.blocks] == \
            [(b.area, b.status, b.sp, b.prev) for b in want_pos.blocks]
        moves = {k: (game_map.ids[d] if d >= 0 else "eliminated") for k, d in enumerate(dest)
                 if d != PULLBACK_NONE}
        assert moves == want_moves
        assert counts.tolist() == [sum(v != "eliminated" for v in moves.values()),
                                   sum(v == "eliminated" for v in moves.values())]
        # nobody of `side` is overstacked afterwards (outside Eastern Links)
        on = (a["block_status"] == STATUS.ON_MAP) & (a["block_side"] == side)
        per_area = np.bincount(a["block_area"][on], minlength=game_map.n_areas)
        assert (per_area[~game_map.eastern_link] <= consts.max_blocks).all()


def test_vp_track_matches_oracle():
    from soe_sim.engine.nb import vp_add_nb

    for track in range(-6, 7):
        for delta in range(-6, 7):
            assert vp_add_nb(track, delta) == naive.vp_add(track, delta), (track, delta)


# --- movement examples ---------------------------------------------------------------------------------


def test_soe_7_31_allowances_and_stop_in_enemy_area(game_map, rules):
    """SoE 7.31: infantry 1 area, cavalry 2, forced march 2 / 3; entering an enemy area stops."""
    m = game_map
    consts = engine_constants(rules)
    p = Pos(m).block(SIDE.SOVIET, "kalenkovichi")
    _, enemy = run_presence(m, p.arrays())
    inf = reach(m, enemy[SIDE.POLISH], SIDE.POLISH, "mazyr", consts.move_infantry)
    assert sorted(m.ids[i] for i in np.flatnonzero(inf == 1)) == sorted(m.neighbours("mazyr"))
    cav = reach(m, enemy[SIDE.POLISH], SIDE.POLISH, "mazyr", consts.move_cavalry)
    assert cav[m.index("kalenkovichi")] == 1  # may attack it
    # SoE 7.3 Zlobin example: Polish cavalry #7 cannot reach Zlobin through Soviet-held Kalenkovichi
    assert cav[m.index("zlobin")] == UNREACHED
    free = reach(m, np.zeros(m.n_areas, dtype=np.bool_), SIDE.POLISH, "mazyr", consts.move_cavalry)
    assert free[m.index("zlobin")] == 2
    fm = reach(m, enemy[SIDE.POLISH], SIDE.POLISH, "mazyr", consts.forced_cavalry)
    assert (fm >= 0).sum() > (cav >= 0).sum()


def test_soe_7_32_blocked_road(game_map):
    """SoE 7.32: unpinned blocks may not move along a road occupied by incoming enemy blocks —
    modelled as a blocked CSR edge."""
    m = game_map
    no_enemy = np.zeros(m.n_areas, dtype=np.bool_)
    blocked = np.zeros(len(m.adj_indices), dtype=np.bool_)
    u, v = m.index("lutsk"), m.index("sokal")
    for e in range(m.adj_indptr[u], m.adj_indptr[u + 1]):
        if m.adj_indices[e] == v:
            blocked[e] = True
    d = reach(m, no_enemy, SIDE.POLISH, "lutsk", 1, edge_blocked=blocked)
    assert d[v] == UNREACHED and d[m.index("kovel")] == 1


def test_soe_1_4_eastern_links_closed_to_poles(game_map):
    m = game_map
    no_enemy = np.zeros(m.n_areas, dtype=np.bool_)
    d = reach(m, no_enemy, SIDE.POLISH, "smolensk", 2)
    assert d[m.index("yartsevo")] == UNREACHED
    d = reach(m, no_enemy, SIDE.SOVIET, "smolensk", 2)
    assert d[m.index("yartsevo")] == 1


def test_soe_7_6_rail_transport(game_map, rules):
    """SoE 7.6: up to 8 areas along rails only, never into enemy blocks or garrisons, through and to
    areas within 3 clear areas of a friendly depot."""
    m = game_map
    consts = engine_constants(rules)
    p = polish_home(m)
    out = supply_pipeline(m, p.arrays(), consts)
    d = reach(m, out["enemy"][SIDE.POLISH], SIDE.POLISH, "warsaw", consts.rail_max_areas, True,
              out["depot_dist"][SIDE.POLISH], consts.rail_depot_range)
    reached = np.flatnonzero(d >= 0)
    assert (out["depot_dist"][SIDE.POLISH][reached] <= consts.rail_depot_range).all()
    assert d.max() <= consts.rail_max_areas
    # only rail links were used: every reached area is a rail neighbour of an area one step closer
    for i in reached:
        if d[i] == 0:
            continue
        rail_nb = m.rail_indices[m.rail_indptr[i]:m.rail_indptr[i + 1]]
        assert any(d[j] == d[i] - 1 for j in rail_nb)
    # a road-only neighbour of Warsaw? (all of Warsaw's links are rail: check a road link elsewhere)
    lublin_depot = polish_home(m).garrisoned(SIDE.POLISH, "lublin", "kovel", "lutsk", "rivne")
    out2 = supply_pipeline(m, lublin_depot.arrays(), consts)
    d2 = reach(m, out2["enemy"][SIDE.POLISH], SIDE.POLISH, "lutsk", consts.rail_max_areas, True,
               out2["depot_dist"][SIDE.POLISH], consts.rail_depot_range)
    assert d2[m.index("sokal")] == UNREACHED  # Lutsk–Sokal is a road
    assert d2[m.index("kovel")] == 1 and d2[m.index("rivne")] == 1
    # a Soviet garrison in Kovel closes it to rail transport
    lublin_depot.garrisoned(SIDE.SOVIET, "kovel")
    out3 = supply_pipeline(m, lublin_depot.arrays(), consts)
    d3 = reach(m, out3["enemy"][SIDE.POLISH], SIDE.POLISH, "lutsk", consts.rail_max_areas, True,
               out3["depot_dist"][SIDE.POLISH], consts.rail_depot_range)
    assert d3[m.index("kovel")] == UNREACHED


# --- retreat examples ----------------------------------------------------------------------------------


def _vilnius_battle(m):
    """Three defeated Polish blocks in Vilnius; Soviet attackers in Vilnius and every neighbour but
    Ukmerge; Minsk (4 areas from Ukmerge around the Soviet ring) is the only Polish key city."""
    p = Pos(m).garrisoned(SIDE.POLISH, "minsk")
    p.block(SIDE.POLISH, "vilnius", count=3)
    p.block(SIDE.SOVIET, "vilnius", count=2)
    for a in m.neighbours("vilnius"):
        if a != "ukmerge":
            p.block(SIDE.SOVIET, a)
    return p


def test_soe_7_42_retreat_example(game_map, rules):
    """SoE 7.42 example: only one adjacent empty area has a clear path to a friendly key city 4 areas
    away; the three defeated Polish infantry blocks retreat there and are out of supply. Without
    that path all three are eliminated."""
    m = game_map
    consts = engine_constants(rules)
    p = _vilnius_battle(m)
    arr = p.arrays()
    cands, targets = retreat(m, arr, SIDE.POLISH, m.index("vilnius"), 3, consts.max_blocks)
    assert cands == [("ukmerge", 4)]
    assert targets == ["ukmerge"] * 3
    # after the retreat the blocks are out of supply (Minsk, the only depot, is 4 areas away)
    arr["block_area"][:3] = m.index("ukmerge")
    out = supply_pipeline(m, arr, consts)
    assert out["depot"][SIDE.POLISH, m.index("minsk")]
    assert out["depot_dist"][SIDE.POLISH, m.index("ukmerge")] == 4
    assert not out["in_supply"][:3].any()
    # no friendly key city any more: encircled
    p2 = _vilnius_battle(m).controlled(SIDE.SOVIET, "minsk")
    p2.garrison[m.index("minsk")] = SIDE.SOVIET
    cands, targets = retreat(m, p2.arrays(), SIDE.POLISH, m.index("vilnius"), 3, consts.max_blocks)
    assert cands == [] and targets == [None, None, None]


def test_soe_7_42_overflow_and_blocked_road(game_map, rules):
    """7.42: excess blocks retreat to the next-best area; a road blocked by enemy blocks is unusable."""
    m = game_map
    consts = engine_constants(rules)
    p = Pos(m).garrisoned(SIDE.POLISH, "warsaw", "kovel")
    p.block(SIDE.POLISH, "lutsk", count=3).block(SIDE.SOVIET, "lutsk", count=3)
    p.block(SIDE.POLISH, "kovel", count=consts.max_blocks - 1)
    cands, targets = retreat(m, p.arrays(), SIDE.POLISH, m.index("lutsk"), 3, consts.max_blocks)
    assert cands[0] == ("kovel", 0)
    assert targets[0] == "kovel" and targets[1] == targets[2] == cands[1][0]
    # block the Lutsk→Kovel link
    blocked = np.zeros(len(m.adj_indices), dtype=np.bool_)
    u, v = m.index("lutsk"), m.index("kovel")
    blocked[m.adj_indptr[u] + list(m.adj_indices[m.adj_indptr[u]:m.adj_indptr[u + 1]]).index(v)] = True
    cands, targets = retreat(m, p.arrays(), SIDE.POLISH, u, 3, consts.max_blocks, edge_blocked=blocked)
    assert "kovel" not in [a for a, _ in cands]


def test_soe_7_42_path_cannot_run_back_through_the_battle_area(game_map, rules):
    """The clear path from a retreat area to a friendly key city may not pass through the battle
    area (E9): a cul-de-sac next to the battle is no refuge."""
    m = game_map
    consts = engine_constants(rules)
    # Kovel is the Poles' only key city; Lutsk (next to both Kovel and Sokal) is the battle area.
    p = Pos(m).garrisoned(SIDE.POLISH, "kovel")
    p.block(SIDE.POLISH, "lutsk", count=2).block(SIDE.SOVIET, "lutsk")
    cands, _ = retreat(m, p.arrays(), SIDE.POLISH, m.index("lutsk"), 2, consts.max_blocks)
    d = dict(cands)
    assert d["kovel"] == 0
    # via Lutsk, Sokal would be 2 from Kovel; around it (Hrubieszow …) it is further
    assert d["sokal"] > 2


# --- overstack examples ---------------------------------------------------------------------------------


def _lutsk(m, soviet_sokal=False, ring=False):
    """SoE 7.33 example: 2 Polish blocks in Lutsk, 3 more arrive from Sokal."""
    p = polish_home(m).garrisoned(SIDE.POLISH, "kovel")
    p.block(SIDE.POLISH, "lutsk", count=2)
    for k in (1, 2, 3):
        p.block(SIDE.POLISH, "lutsk", prev="sokal", arrival=k)
    if soviet_sokal:
        p.block(SIDE.SOVIET, "sokal")
    if ring:
        for a in m.neighbours("lutsk"):
            if a == "kovel":
                p.garrisoned(SIDE.SOVIET, a)
            else:
                p.block(SIDE.SOVIET, a)
    return p.arrays()


def test_soe_7_33_lutsk_stacking_example(game_map, rules):
    """SoE 7.33: the third block from Sokal overstacks Lutsk and goes back to Sokal; if Sokal is
    Soviet-occupied, to the area next to Lutsk with the shortest clear path to a supply depot; if
    there is none, it is eliminated."""
    m = game_map
    consts = engine_constants(rules)
    assert consts.max_blocks == 4
    arr = _lutsk(m)
    dest, counts, _ = pullback(m, arr, SIDE.POLISH, consts)
    assert dest.tolist() == [PULLBACK_NONE] * 4 + [m.index("sokal")]
    assert arr["block_area"][4] == m.index("sokal") and arr["block_prev_area"][4] == m.index("lutsk")
    assert counts.tolist() == [1, 0]

    arr = _lutsk(m, soviet_sokal=True)
    dest, counts, out = pullback(m, arr, SIDE.POLISH, consts)
    assert dest[4] == m.index("kovel")  # a Polish depot next to Lutsk: distance 0
    assert out["depot"][SIDE.POLISH, m.index("kovel")]

    arr = _lutsk(m, ring=True)
    dest, counts, _ = pullback(m, arr, SIDE.POLISH, consts)
    assert dest[4] == PULLBACK_ELIMINATED
    assert arr["block_status"][4] == STATUS.ELIMINATED_PERMANENT
    assert counts.tolist() == [0, 1]
    assert (arr["block_area"][:4] == m.index("lutsk")).all()


def test_soe_7_33_eastern_links_unlimited(game_map, rules):
    m = game_map
    consts = engine_constants(rules)
    p = Pos(m).block(SIDE.SOVIET, "yartsevo", count=consts.max_blocks + 3, arm=ARM.CAVALRY, prev="smolensk")
    arr = p.arrays()
    dest, counts, _ = pullback(m, arr, SIDE.SOVIET, consts)
    assert (dest == PULLBACK_NONE).all() and counts.tolist() == [0, 0]
    # and a retreat into an Eastern Link never runs out of room
    p = Pos(m).block(SIDE.SOVIET, "smolensk", count=6).block(SIDE.POLISH, "smolensk")
    p.block(SIDE.SOVIET, "yartsevo", count=10)
    for a in m.neighbours("smolensk"):
        if a != "yartsevo":
            p.block(SIDE.POLISH, a)
    cands, targets = retreat(m, p.arrays(), SIDE.SOVIET, m.index("smolensk"), 6, consts.max_blocks)
    assert cands == [("yartsevo", 0)] and targets == ["yartsevo"] * 6
    assert ENCIRCLED == -1


def _edges(m, pairs):
    """CSR edge mask blocking the directed links ``(from, to)`` (area ids)."""
    mask = np.zeros(len(m.adj_indices), dtype=np.bool_)
    for a, b in pairs:
        u, v = m.index(a), m.index(b)
        for e in range(m.adj_indptr[u], m.adj_indptr[u + 1]):
            if m.adj_indices[e] == v:
                mask[e] = True
    return mask


def test_soe_7_41_7_42_tutorial_zlobin_retreats(game_map, rules):
    """The rulebook's worked example on the tutorial scenario (SoE 7.3, 7.41, 7.42).

    Kalenkovichi (resolved first): Polish cavalry #7 from Mazyr beats Soviet block 5, which retreats
    to Rechitsa, "the closest area to a Soviet Supply Depot" (Zlobin is contested, Mazyr Polish).
    Zlobin: the Poles lose and "retreat all blocks to Charyshi, which is the shortest path to a
    friendly key city" — the roads from Rohachev and Gomel carry the Soviet attackers (blocked).
    """
    from soe_sim.data.blocks import load_blocks
    from soe_sim.data.scenario import load_scenario, scenario_paths
    from soe_sim.engine.state import new_game

    if "tutorial" not in [p.stem for p in scenario_paths()]:
        pytest.skip("data/scenarios/tutorial.toml not present")
    m = game_map
    roster = load_blocks()
    g = new_game(load_scenario("tutorial", game_map=m, roster=roster, decks={}), m, roster, rules)
    consts = engine_constants(rules)
    ids = list(roster.blocks["id"].to_numpy()[g.block_roster])

    def move(block, area):
        g.block_area[ids.index(block)] = m.index(area)

    for b in ("pl-9-id", "pl-14-id", "ru-10-id", "ru-2-id", "ru-57-id"):
        move(b, "zlobin")
    move("pl-cav-1", "kalenkovichi")
    arr = g._asdict()
    cands, targets = retreat(m, arr, SIDE.SOVIET, m.index("kalenkovichi"), 1, consts.max_blocks,
                             edge_blocked=_edges(m, [("kalenkovichi", "mazyr")]))
    assert targets == ["rechitsa"] and cands[0] == ("rechitsa", 1)
    assert "zlobin" not in dict(cands)  # Polish blocks there: enemy-occupied
    move("ru-inf-1", "rechitsa")
    arr = g._asdict()
    cands, targets = retreat(m, arr, SIDE.POLISH, m.index("zlobin"), 2, consts.max_blocks,
                             edge_blocked=_edges(m, [("zlobin", "rohachev"), ("zlobin", "gomel")]))
    assert targets == ["charyshi", "charyshi"]
    assert cands[0] == ("charyshi", 1)  # Charyshi–Bobruisk; Kalenkovichi–Mazyr ties (E9: lower index)
    # without the blocked roads Rohachev (next to Bobruisk, lower index) would tie too
    cands, _ = retreat(m, arr, SIDE.POLISH, m.index("zlobin"), 2, consts.max_blocks)
    assert ("rohachev", 1) in cands and ("gomel", 0) not in cands
