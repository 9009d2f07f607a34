"""Supply, depots, out-of-supply losses and garrisons: kernels vs the plain-Python oracle, and the
rulebook examples (SoE 1.3, 1.31, 7.7, 7.71, 8.1, 9.0)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from soe_sim.data.enums import ARM, SIDE
from soe_sim.data.map import load_map
from soe_sim.engine.nb import (
    N_OOS,
    N_SUPPLY_SLOTS,
    SLOT_DEPOT,
    SLOT_SOURCE,
    UNREACHED,
    apply_out_of_supply_nb,
    block_supply_nb,
    check_supply,
    enemy_presence_nb,
    garrison_replacement_nb,
    new_supply_search_cache_nb,
    retreat_targets_nb,
    side_depots_into_nb,
    side_depots_nb,
    supply_depots_nb,
)
from soe_sim.engine.state import STATUS, engine_constants
from tests import engine_naive as naive

SEEDS = st.integers(0, 2**32 - 1)


@pytest.fixture(scope="module")
def game_map():
    return load_map()


@pytest.fixture(scope="module")
def board(game_map):
    return naive.Board.from_map(game_map)


# --- running the kernels on a dict of arrays --------------------------------------------------------


def run_presence(game_map, arr):
    n = game_map.n_areas
    blocks = np.zeros((2, n), dtype=np.int32)
    enemy = np.zeros((2, n), dtype=np.bool_)
    enemy_presence_nb(arr["block_side"], arr["block_area"], arr["block_status"], arr["garrison_side"], blocks, enemy)
    return blocks, enemy


def run_depots(game_map, arr, enemy):
    n = game_map.n_areas
    src = np.empty((2, n), dtype=np.int32)
    depot = np.zeros((2, n), dtype=np.bool_)
    m = game_map
    supply_depots_nb(m.adj_indptr, m.adj_indices, m.adj_bits, m.eastern_link, m.supply_source,
                     arr.get("supply_base", np.full(n, -1, np.int8)), m.garrison, enemy, src, depot)
    return src, depot


def run_block_supply(game_map, arr, depot, enemy, consts):
    n = game_map.n_areas
    m = game_map
    dd = np.empty((2, n), dtype=np.int32)
    ok = np.zeros(len(arr["block_side"]), dtype=np.bool_)
    block_supply_nb(m.adj_indptr, m.adj_indices, m.adj_bits, m.eastern_link, depot, enemy, arr["block_side"],
                    arr["block_arm"], arr["block_area"], arr["block_status"], consts.infantry_supply_range,
                    consts.cavalry_supply_range, dd, ok)
    return dd, ok


def supply_pipeline(game_map, arr, consts):
    blocks, enemy = run_presence(game_map, arr)
    src, depot = run_depots(game_map, arr, enemy)
    dd, ok = run_block_supply(game_map, arr, depot, enemy, consts)
    return dict(blocks=blocks, enemy=enemy, source_dist=src, depot=depot, depot_dist=dd, in_supply=ok)


def ids_where(game_map, mask):
    return {game_map.ids[i] for i in np.flatnonzero(mask)}


def dist_dict(game_map, row):
    return {game_map.ids[i]: int(d) for i, d in enumerate(row) if d != UNREACHED}


class Pos:
    """Hand-built positions: blocks by area id, garrisons, control of key cities."""

    def __init__(self, game_map):
        self.m = game_map
        n = game_map.n_areas
        self.side, self.arm, self.area, self.sp = [], [], [], []
        self.prev, self.arrival = [], []
        self.garrison = np.full(n, -1, dtype=np.int8)
        self.control = np.full(n, -1, dtype=np.int8)
        self.control[game_map.eastern_link] = SIDE.SOVIET
        self.supply_base = np.full(n, -1, dtype=np.int8)

    def block(self, side, area, arm=ARM.INFANTRY, sp=2, prev=None, arrival=0, count=1):
        for _ in range(count):
            self.side.append(side)
            self.arm.append(arm)
            self.area.append(self.m.index(area))
            self.sp.append(sp)
            self.prev.append(self.m.index(prev) if prev else -1)
            self.arrival.append(arrival)
        return self

    def garrisoned(self, side, *areas):
        for a in areas:
            self.garrison[self.m.index(a)] = side
            self.control[self.m.index(a)] = side
        return self

    def based(self, side, *areas):
        """Supply bases of ``side`` (GameState.supply_base; EatS II.3, G16)."""
        for a in areas:
            self.supply_base[self.m.index(a)] = side
        return self

    def controlled(self, side, *areas):
        for a in areas:
            self.control[self.m.index(a)] = side
        return self

    def arrays(self):
        k = len(self.side)
        return dict(block_side=np.array(self.side, dtype=np.int8), block_arm=np.array(self.arm, dtype=np.int8),
                    block_area=np.array(self.area, dtype=np.int16), block_sp=np.array(self.sp, dtype=np.int8),
                    block_max_sp=np.full(k, 4, dtype=np.int8), block_status=np.zeros(k, dtype=np.int8),
                    block_prev_area=np.array(self.prev, dtype=np.int16),
                    block_arrival=np.array(self.arrival, dtype=np.int16),
                    garrison_side=self.garrison.copy(), control=self.control.copy(),
                    supply_base=self.supply_base.copy())


def polish_home(game_map):
    """Warsaw held by a Polish garrison: the Polish supply source is a depot."""
    return Pos(game_map).garrisoned(SIDE.POLISH, "warsaw")


# --- kernel vs oracle ---------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(seed=SEEDS)
def test_presence_depots_and_supply_match_oracle(game_map, board, rules, seed):
    arr = naive.random_arrays(np.random.default_rng(seed), game_map)
    consts = engine_constants(rules)
    out = supply_pipeline(game_map, arr, consts)
    pos = naive.position_of(board, arr)
    for s, name in enumerate(naive.SIDES):
        assert ids_where(game_map, out["enemy"][s]) == naive.enemy_areas(pos, name)
        for i, a in enumerate(game_map.ids):
            assert out["blocks"][s, i] == len(naive.blocks_in(pos, name, a))
        assert dist_dict(game_map, out["source_dist"][s]) == naive.source_distances(board, pos, name)
        assert ids_where(game_map, out["depot"][s]) == naive.depots(board, pos, name)
        assert dist_dict(game_map, out["depot_dist"][s]) == naive.depot_distances(board, pos, name)
    assert out["in_supply"].tolist() == naive.block_supply(board, pos, rules)


@settings(max_examples=60, deadline=None)
@given(seed=SEEDS)
def test_area_set_search_matches_the_link_list_search(game_map, seed):
    """The clear-path search on the map's area sets (``adj_bits``, the built-in map) gives the
    distances of the search over the link lists (a map without area sets: ``adj_bits`` with no
    words), for random seeds, enemy areas and blocked areas, both sides (SoE 1.31, 7.42, E1, E9)."""
    rng = np.random.default_rng(seed)
    m = game_map
    n = m.n_areas
    assert m.adj_bits.shape == (n + 1, 4)
    no_bits = np.zeros((n + 1, 0), dtype=np.uint64)
    for _ in range(8):
        seeds = rng.random(n) < rng.choice([0.02, 0.1, 0.5])
        enemy = rng.random((2, n)) < rng.choice([0.0, 0.2, 0.5])
        control = rng.integers(-1, 2, n).astype(np.int8)
        side = int(rng.integers(0, 2))
        battle = int(rng.integers(n))
        rows = []
        for bits in (m.adj_bits, no_bits):
            src = np.empty(n, dtype=np.int32)
            depot = np.zeros(n, dtype=np.bool_)
            depot_dist = np.empty(n, dtype=np.int32)
            side_depots_nb(m.adj_indptr, m.adj_indices, bits, m.eastern_link, seeds.astype(np.int8) - 1 + side,
                           np.full(n, -1, np.int8), m.garrison, enemy, side, src, depot, depot_dist)
            areas = np.empty(16, dtype=np.int64)
            dists = np.empty(16, dtype=np.int64)
            target = np.empty(3, dtype=np.int64)
            k = retreat_targets_nb(m.adj_indptr, m.adj_indices, bits, np.zeros(0, dtype=np.bool_), m.eastern_link,
                                   seeds, enemy[side], np.zeros(n, dtype=np.int32), side, battle, 4, 3, areas,
                                   dists, target)
            rows.append((src, depot, depot_dist, areas[:k].copy(), dists[:k].copy(), target))
        for got, want in zip(rows[0], rows[1]):
            np.testing.assert_array_equal(got, want)


def _side_depots(m, enemy, side, cache, supply_base=None):
    n = m.n_areas
    base = np.full(n, -1, np.int8) if supply_base is None else supply_base
    rows = (np.empty(n, np.int32), np.zeros(n, np.bool_), np.empty(n, np.int32))
    side_depots_into_nb(m.adj_indptr, m.adj_indices, m.adj_bits, m.eastern_link, m.supply_source, base, m.garrison,
                        enemy, side, *rows, cache)
    return rows


@settings(max_examples=30, deadline=None)
@given(seed=SEEDS)
def test_supply_search_cache_gives_the_searches_made_without_it(game_map, seed):
    """A game's supply searches kept in a SupplySearchCache (SoE 1.31, 7.7; docs/engine-design.md
    "Session 42") give the distances and depots of the searches made at every call, over a sequence
    of positions that come back (as a game's do between its phases), both sides, with and without a
    supply base (EatS II.3: it changes the seeds, so it must change the key)."""
    rng = np.random.default_rng(seed)
    m = game_map
    n = m.n_areas
    kept = new_supply_search_cache_nb(n, N_SUPPLY_SLOTS)
    none = new_supply_search_cache_nb(n, 0)
    positions = [rng.random((2, n)) < rng.choice([0.05, 0.2, 0.5]) for _ in range(3)]
    base = np.full(n, -1, np.int8)
    base[int(rng.integers(n))] = int(rng.integers(0, 2))
    for _ in range(12):
        enemy = positions[int(rng.integers(len(positions)))]
        side = int(rng.integers(0, 2))
        supply_base = base if rng.random() < 0.3 else None
        got = _side_depots(m, enemy, side, kept, supply_base)
        want = _side_depots(m, enemy, side, none, supply_base)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_supply_search_cache_copies_a_kept_search_and_replaces_it_on_a_new_position(game_map):
    """The cache answers a search it keeps from its slot (a marked slot shows in the result) and
    searches again when the enemy areas, the side or the seeds differ."""
    m = game_map
    n = m.n_areas
    POL, SOV = int(SIDE.POLISH), int(SIDE.SOVIET)
    cache = new_supply_search_cache_nb(n, N_SUPPLY_SLOTS)
    enemy = np.zeros((2, n), np.bool_)
    src, _, depot_dist = _side_depots(m, enemy, POL, cache)
    slot = SLOT_SOURCE + 2 * POL
    assert cache.key[slot, -1] == POL + 1  # kept: side + 1
    np.testing.assert_array_equal(cache.dist[slot], src)
    np.testing.assert_array_equal(cache.dist[SLOT_DEPOT + 2 * POL], depot_dist)
    cache.dist[slot] = 77  # mark the slot: the same search is now answered from it
    assert (_side_depots(m, enemy, POL, cache)[0] == 77).all()
    enemy2 = enemy.copy()
    enemy2[POL, int(np.flatnonzero(src > 0)[0])] = True  # one more enemy area: a new search
    src2 = _side_depots(m, enemy2, POL, cache)[0]
    np.testing.assert_array_equal(src2, _side_depots(m, enemy2, POL, new_supply_search_cache_nb(n, 0))[0])
    assert not (src2 == 77).any()
    cache.dist[SLOT_SOURCE + 2 * SOV] = 77  # the other side's slot is empty: not read
    assert not (_side_depots(m, enemy, SOV, cache)[0] == 77).any()


def test_the_game_loop_shares_one_supply_search_cache(game_map):
    """Every kernel of the game loop that searches supply holds the game work's cache (so a search one
    of them made on a position is not made again by another), with its slots."""
    from soe_sim.engine.game import game_setup
    from soe_sim.engine.game.work import new_game_scratch

    s = game_setup("kiev-offensive")
    scratch = new_game_scratch(s.state0, s.cards0, s.orders0, s.game_map.arrays, s.cfg)
    supply = scratch.work.supply
    assert supply.key.shape == (N_SUPPLY_SLOTS, 2 * 4 + 1)
    assert supply.dist.shape == (N_SUPPLY_SLOTS, s.game_map.n_areas)
    for holder in (scratch.ptabs0, scratch.ptabs1, scratch.mscr.wd, scratch.work.lw.scr):
        assert holder.supply.key is supply.key and holder.supply.dist is supply.dist


@settings(max_examples=60, deadline=None)
@given(seed=SEEDS)
def test_apply_out_of_supply_matches_oracle(game_map, board, rules, seed):
    arr = naive.random_arrays(np.random.default_rng(seed), game_map)
    consts = engine_constants(rules)
    out = supply_pipeline(game_map, arr, consts)
    pos = naive.position_of(board, arr)
    want_pos, want_counts, want_vp = naive.apply_out_of_supply(board, pos, out["in_supply"].tolist(), rules)
    counts = np.zeros((2, N_OOS), dtype=np.int32)
    vp = np.zeros(1, dtype=np.int32)
    a = {k: v.copy() for k, v in arr.items()}
    apply_out_of_supply_nb(a["block_side"], a["block_arm"], a["block_area"], a["block_status"], a["block_sp"],
                           out["in_supply"], a["garrison_side"], out["source_dist"], consts.vp_out_of_supply,
                           counts, vp)
    got = naive.position_of(board, a)
    assert [(b.area, b.status, b.sp) for b in got.blocks] == [(b.area, b.status, b.sp) for b in want_pos.blocks]
    assert got.garrison == want_pos.garrison
    assert counts.tolist() == [want_counts["polish"], want_counts["soviet"]]
    assert int(vp[0]) == want_vp


@settings(max_examples=40, deadline=None)
@given(seed=SEEDS)
def test_garrison_replacement_matches_oracle(game_map, board, seed):
    arr = naive.random_arrays(np.random.default_rng(seed), game_map)
    _, enemy = run_presence(game_map, arr)
    src, _ = run_depots(game_map, arr, enemy)
    m = game_map
    elig = np.zeros((2, m.n_areas), dtype=np.bool_)
    garrison_replacement_nb(m.garrison, arr["block_side"], arr["block_area"], arr["block_status"],
                            arr["garrison_side"], src, elig)
    want = naive.garrison_replacement(board, naive.position_of(board, arr))
    for s, name in enumerate(naive.SIDES):
        assert ids_where(game_map, elig[s]) == want[name]


# --- rulebook examples ------------------------------------------------------------------------------


def test_soe_1_31_depot_needs_control_and_clear_path(game_map, rules):
    """SoE 1.31: a controlled key city with a clear path to Warsaw is a depot; enemy blocks on every
    route cut it off; an Eastern Link is always a Soviet depot."""
    consts = engine_constants(rules)
    m = game_map
    p = polish_home(m).garrisoned(SIDE.POLISH, "lutsk")
    out = supply_pipeline(m, p.arrays(), consts)
    assert out["depot"][SIDE.POLISH, m.index("lutsk")]
    assert out["depot"][SIDE.POLISH, m.index("warsaw")]
    assert out["depot"][SIDE.SOVIET, m.index("yartsevo")] and out["depot"][SIDE.SOVIET, m.index("klintsy")]
    assert not out["depot"][SIDE.SOVIET, m.index("lutsk")]
    # Soviet blocks in every neighbour of Lutsk: no clear path any more.
    for a in m.neighbours("lutsk"):
        p.block(SIDE.SOVIET, a)
    out = supply_pipeline(m, p.arrays(), consts)
    assert not out["depot"][SIDE.POLISH, m.index("lutsk")]
    assert out["source_dist"][SIDE.POLISH, m.index("lutsk")] == UNREACHED


def test_soe_1_31_enemy_garrison_blocks_the_path(game_map, rules):
    """A "clear path" avoids areas with enemy garrisons too (SoE 1.31)."""
    m = game_map
    consts = engine_constants(rules)
    p = polish_home(m).garrisoned(SIDE.POLISH, "lutsk")
    # Soviet garrisons in the key-city neighbours, Soviet blocks in the others.
    for a in m.neighbours("lutsk"):
        if m.garrison[m.index(a)]:
            p.garrisoned(SIDE.SOVIET, a)
        else:
            p.block(SIDE.SOVIET, a)
    out = supply_pipeline(m, p.arrays(), consts)
    assert not out["depot"][SIDE.POLISH, m.index("lutsk")]


def test_soe_1_3_neutral_city_is_never_a_depot(game_map, rules):
    """SoE 1.3: a key city left with no garrison and no blocks becomes neutral; the player loses its
    VPs and neither side may trace supply to it."""
    from soe_sim.engine.nb import update_control_nb

    m = game_map
    consts = engine_constants(rules)
    # Poles hold Lutsk with one block and no garrison, then move the block to Dubno.
    p = polish_home(m).controlled(SIDE.POLISH, "lutsk").block(SIDE.POLISH, "dubno")
    arr = p.arrays()
    vp = np.zeros(1, dtype=np.int32)
    update_control_nb(m.garrison, m.eastern_link, m.vp, arr["block_side"], arr["block_area"], arr["block_status"],
                      arr["garrison_side"], arr["control"], vp)
    assert arr["control"][m.index("lutsk")] == -1
    assert int(vp[0]) == -int(m.vp[m.index("lutsk")])  # the Poles lose Lutsk's VP
    out = supply_pipeline(m, arr, consts)
    assert not out["depot"][:, m.index("lutsk")].any()
    # the clear path still exists: only control is missing
    assert out["source_dist"][SIDE.POLISH, m.index("lutsk")] >= 0
    # Neutral at once, before control_nb records it at the end of the phase: with the control still
    # recorded as Polish, the empty Lutsk is no depot either
    stale = supply_pipeline(m, p.arrays(), consts)
    assert not stale["depot"][:, m.index("lutsk")].any()
    # With a Polish block in Lutsk, a Polish block next to it is in supply through it; with Lutsk
    # neutral, the distance to a depot grows (Lutsk is no longer one).
    held = polish_home(m).controlled(SIDE.POLISH, "lutsk").block(SIDE.POLISH, "lutsk").block(SIDE.POLISH, "dubno")
    out2 = supply_pipeline(m, held.arrays(), consts)
    assert out2["depot_dist"][SIDE.POLISH, m.index("dubno")] == 1
    assert out["depot_dist"][SIDE.POLISH, m.index("dubno")] > 1


def test_soe_1_3_a_key_city_taken_this_phase_is_a_depot_at_once(game_map, rules):
    """SoE 1.3 / 1.31: a side controls a key city as soon as its blocks occupy it, so a city taken
    during the phase supplies the side at the 7.7 check of that phase — the recorded control
    (``control_nb``, after the supply check) still names the old owner then."""
    m = game_map
    consts = engine_constants(rules)
    p = polish_home(m).controlled(SIDE.POLISH, "lutsk").block(SIDE.SOVIET, "lutsk")
    out = supply_pipeline(m, p.arrays(), consts)
    lutsk = m.index("lutsk")
    assert not out["depot"][SIDE.POLISH, lutsk]
    assert out["depot"][SIDE.SOVIET, lutsk] == (out["source_dist"][SIDE.SOVIET, lutsk] >= 0)
    assert out["source_dist"][SIDE.SOVIET, lutsk] >= 0  # the Soviet path east is clear in this position


def test_soe_7_7_ranges_infantry_cavalry_leader(game_map, rules):
    """SoE 7.7: infantry within 3 links of a depot, cavalry within 5; leaders always (SoE 9.0)."""
    m = game_map
    consts = engine_constants(rules)
    p = polish_home(m)
    arr = p.arrays()
    out = supply_pipeline(m, arr, consts)
    dd = out["depot_dist"][SIDE.POLISH]
    # only Warsaw is a Polish depot here: pick areas at exact distances from it that are no key cities
    # (a Polish block in a key city would make it a Polish depot, SoE 1.3)
    by_d = {d: m.ids[int(np.flatnonzero((dd == d) & ~m.garrison)[0])] for d in range(1, 8)}
    p = polish_home(m)
    for d in (3, 4, 5, 6):
        p.block(SIDE.POLISH, by_d[d], ARM.INFANTRY)
        p.block(SIDE.POLISH, by_d[d], ARM.CAVALRY)
    p.block(SIDE.POLISH, by_d[7], ARM.LEADER, sp=1)
    out = supply_pipeline(m, p.arrays(), consts)
    assert out["in_supply"].tolist() == [True, True,  # 3
                                         False, True,  # 4
                                         False, True,  # 5
                                         False, False,  # 6
                                         True]  # leader
    assert consts.infantry_supply_range == 3 and consts.cavalry_supply_range == 5


def test_soe_7_71_garrison_removal_example(game_map, rules):
    """SoE 7.71 example: a Polish garrison in a key city that cannot trace a clear path to Warsaw —
    the city is no depot and the garrison is removed; the Polish block there loses 1 SP; a 1-SP
    block is eliminated for good and the Soviets score 1 VP; leaders lose nothing."""
    m = game_map
    consts = engine_constants(rules)
    city = "vilnius"
    p = polish_home(m).garrisoned(SIDE.POLISH, city)
    p.block(SIDE.POLISH, city, sp=3).block(SIDE.POLISH, city, sp=1)
    p.block(SIDE.POLISH, city, ARM.LEADER, sp=1)
    for a in m.neighbours(city):
        p.block(SIDE.SOVIET, a)
    arr = p.arrays()
    out = supply_pipeline(m, arr, consts)
    i = m.index(city)
    assert not out["depot"][SIDE.POLISH, i]
    assert out["in_supply"][:3].tolist() == [False, False, True]
    counts = np.zeros((2, N_OOS), dtype=np.int32)
    vp = np.zeros(1, dtype=np.int32)
    apply_out_of_supply_nb(arr["block_side"], arr["block_arm"], arr["block_area"], arr["block_status"],
                           arr["block_sp"], out["in_supply"], arr["garrison_side"], out["source_dist"],
                           consts.vp_out_of_supply, counts, vp)
    assert arr["garrison_side"][i] == -1  # garrison removed
    assert arr["garrison_side"][m.index("warsaw")] == SIDE.POLISH
    assert arr["block_sp"][:3].tolist() == [2, 0, 1]
    assert arr["block_status"][1] == STATUS.ELIMINATED_PERMANENT and arr["block_area"][1] == -1
    assert counts[SIDE.POLISH].tolist() == [2, 1, 1]
    assert int(vp[0]) == -consts.vp_out_of_supply  # Soviets gain


def test_soe_7_71_check_supply_sequence_on_state(game_map, rules):
    """check_supply runs presence → depots → supply → losses → control → VP on a GameState-like
    object; the city whose garrison was removed stays Polish while Polish blocks are there."""
    from soe_sim.engine.state import GameState

    m = game_map
    consts = engine_constants(rules)
    city = "vilnius"
    p = polish_home(m).garrisoned(SIDE.POLISH, city).block(SIDE.POLISH, city, sp=1)
    for a in m.neighbours(city):
        p.block(SIDE.SOVIET, a, sp=4).controlled(SIDE.SOVIET, a)
    arr = p.arrays()
    k = len(arr["block_side"])
    st_ = GameState(
        block_roster=np.arange(k, dtype=np.int16), block_side=arr["block_side"], block_arm=arr["block_arm"],
        block_class=np.zeros(k, dtype=np.int8), block_nation=np.zeros(k, dtype=np.int8),
        block_max_sp=arr["block_max_sp"], block_sp=arr["block_sp"], block_area=arr["block_area"],
        block_status=arr["block_status"], block_prev_area=arr["block_prev_area"],
        block_arrival=arr["block_arrival"], block_in_supply=np.ones(k, dtype=np.bool_),
        block_arrive_round=np.full(k, -1, np.int16), block_arrive_phase=np.full(k, -1, np.int8),
        block_arrive_area=np.full(k, -1, np.int16), block_arrive_sp=np.full(k, -1, np.int8),
        block_arrive_condition=np.full(k, -1, np.int8), garrison_side=arr["garrison_side"],
        control=arr["control"], round=np.array([1], np.int16), phase=np.array([1], np.int8),
        end=np.array([1, 5], np.int16), vp=np.array([1], np.int16),
        initiative_side=np.zeros(2, np.int8), initiative_level=np.ones(2, np.int8),
        cubes=np.zeros((2, 2, 3), np.int16), supply_base=np.full(m.n_areas, -1, np.int8))
    res = check_supply(st_, m, consts)
    # the 1-SP block is eliminated (+1 Soviet), the garrison removed, Vilnius becomes neutral (−1 Polish)
    assert st_.block_status[0] == STATUS.ELIMINATED_PERMANENT
    assert st_.garrison_side[m.index(city)] == -1
    assert st_.control[m.index(city)] == -1
    assert res["oos_vp"] == -1 and res["control_vp"] == -int(m.vp[m.index(city)])
    # Poles at 1, Soviets gain 2 → the marker flips and ends on Soviet 2 (SoE 7.8)
    assert int(st_.vp[0]) == -2


def test_eats_ii_3_a_supply_base_is_a_source_and_a_depot(game_map, rules):
    """EatS II.3 (G16): "Kaunas ... is a supply base for Soviet units". A supply base of a side
    (``GameState.supply_base``) is one of its supply sources (clear paths to a source make held key
    cities depots, 1.31, and keep garrisons, 7.71) and a depot itself while no enemy block stands in
    it; it is nothing to the other side."""
    m = game_map
    consts = engine_constants(rules)
    near = "alytus"  # next to Kaunas, far from every other Soviet depot
    assert near in m.neighbours("kaunas")
    p = polish_home(m).block(SIDE.SOVIET, near)
    k, a, v = m.index("kaunas"), m.index(near), m.index("vilnius")
    without = supply_pipeline(m, p.arrays(), consts)
    assert not without["depot"][SIDE.SOVIET, k] and not without["in_supply"][0]
    assert without["depot_dist"][SIDE.SOVIET, a] > consts.cavalry_supply_range
    assert without["source_dist"][SIDE.SOVIET, v] > 1
    based = supply_pipeline(m, p.based(SIDE.SOVIET, "kaunas").arrays(), consts)
    assert based["depot"][SIDE.SOVIET, k] and based["source_dist"][SIDE.SOVIET, k] == 0
    assert based["depot_dist"][SIDE.SOVIET, a] == 1 and based["in_supply"][0]
    assert based["source_dist"][SIDE.SOVIET, v] == 1  # Kaunas is a source: Vilnius is one clear link from it
    assert not based["depot"][SIDE.POLISH, k] and based["source_dist"][SIDE.POLISH, k] != 0
    taken = supply_pipeline(m, p.block(SIDE.POLISH, "kaunas").arrays(), consts)  # an enemy block stands in it
    assert not taken["depot"][SIDE.SOVIET, k] and taken["source_dist"][SIDE.SOVIET, k] != 0  # not a source
    assert not taken["in_supply"][0]


def test_soe_8_1_polotsk_garrison(game_map):
    """SoE 8.1 example: the Poles lost their garrison at Polotsk; the Soviets occupy it and trace a
    clear path to an Eastern Link, so they may place a garrison there. Unoccupied or cut-off key
    cities get none."""
    m = game_map
    p = polish_home(m).block(SIDE.SOVIET, "polotsk", sp=3)
    arr = p.arrays()
    _, enemy = run_presence(m, arr)
    src, _ = run_depots(m, arr, enemy)
    elig = np.zeros((2, m.n_areas), dtype=np.bool_)
    garrison_replacement_nb(m.garrison, arr["block_side"], arr["block_area"], arr["block_status"],
                            arr["garrison_side"], src, elig)
    i = m.index("polotsk")
    assert elig[SIDE.SOVIET, i] and not elig[SIDE.POLISH, i]
    assert not elig[SIDE.SOVIET, m.index("vitebsk")]  # unoccupied
    assert not elig[SIDE.POLISH, m.index("warsaw")]  # already garrisoned
    # Polish blocks in every neighbour of Polotsk: no clear path to an Eastern Link → no garrison.
    for a in m.neighbours("polotsk"):
        p.block(SIDE.POLISH, a)
    arr = p.arrays()
    _, enemy = run_presence(m, arr)
    src, _ = run_depots(m, arr, enemy)
    garrison_replacement_nb(m.garrison, arr["block_side"], arr["block_area"], arr["block_status"],
                            arr["garrison_side"], src, elig)
    assert not elig[SIDE.SOVIET, i]


def test_eastern_links_are_closed_to_polish_paths(game_map, rules):
    """SoE 1.4: a Polish clear path never runs through an Eastern Link."""
    m = game_map
    consts = engine_constants(rules)
    out = supply_pipeline(m, polish_home(m).arrays(), consts)
    for i in np.flatnonzero(m.eastern_link):
        assert out["source_dist"][SIDE.POLISH, i] == UNREACHED
        assert out["depot_dist"][SIDE.POLISH, i] == UNREACHED
