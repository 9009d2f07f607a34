"""Reinforcement Phase (SoE 8.0–8.5) and scheduled arrivals (SoE 4.0): rulebook examples, kernels
against a plain-Python oracle on perturbed built-in scenarios, and conservation checks.
Readings: docs/rules.md RF1–RF14."""
from __future__ import annotations

from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from soe_sim.data.blocks import load_blocks
from soe_sim.data.enums import ARM, FRONT, SIDE, Nation, UnitClass
from soe_sim.data.map import load_map
from soe_sim.data.scenario import load_scenario
from soe_sim.engine import reinforce as R
from soe_sim.engine.nb import enemy_presence_nb, supply_depots_nb
from soe_sim.engine.reinforce.nb import (
    ARRIVE_DELAYED,
    ARRIVE_NONE,
    arrive_reinforcements_nb,
    build_pairs_after_spend_nb,
    combine_pairs_after_combine_nb,
    front_line_nb,
    legal_build_pairs_nb,
    legal_combine_pairs_nb,
    strategic_cubes_nb,
    strengthen_after_spend_nb,
)
from soe_sim.engine.state import (
    CUBE_ALLIED,
    CUBE_CAVALRY,
    CUBE_INFANTRY,
    PHASE_REINFORCEMENT,
    STATUS,
    new_game,
)

pytestmark = pytest.mark.game_loop  # plays games: compiled once for the session (conftest.py)

SEEDS = st.integers(0, 2**32 - 1)
SCENARIOS = ["battle-of-warsaw", "campaign-1920", "kiev-offensive", "tukhachevsky-offensive", "tutorial"]
P, S = SIDE.POLISH, SIDE.SOVIET
N = FRONT.NORTH  # the saved pool the SoE tests fill (SoE 8.3: spent on either front, RF14)


@pytest.fixture(scope="module")
def game_map():
    return load_map()


@pytest.fixture(scope="module")
def roster():
    return load_blocks()


@pytest.fixture(scope="module")
def games(game_map, roster, rules):
    """(scenario, starting state) of every built-in scenario."""
    out = {}
    for sid in SCENARIOS:
        sc = load_scenario(sid)
        out[sid] = (sc, new_game(sc, game_map, roster, rules))
    return out


# --- hand-built positions -----------------------------------------------------------------------------


class Scene:
    """The kiev-offensive block universe with every block in the force pool, no garrisons except a
    Polish one in Warsaw; blocks are placed by hand."""

    def __init__(self, games, game_map, rules):
        self.sc, g = games["kiev-offensive"]
        self.m = game_map
        self.rules = rules
        g = g.copy()
        g.block_status[:] = STATUS.FORCE_POOL
        g.block_area[:] = -1
        g.block_sp[:] = 0
        g.garrison_side[:] = -1
        g.control[:] = -1
        g.control[game_map.eastern_link] = S
        g.cubes[:] = 0
        self.g = g
        self.used = set()
        self.garrison(P, "warsaw")

    def garrison(self, side, *areas):
        for a in areas:
            i = self.m.index(a)
            self.g.garrison_side[i] = side
            self.g.control[i] = side
        return self

    def pick(self, side, nation=None, arm=ARM.INFANTRY, cls=UnitClass.DIVISION, max_sp=None):
        g = self.g
        nation = nation or OWN[side]
        for b in range(g.n_blocks):
            if b in self.used:
                continue
            if (g.block_side[b] == side and g.block_nation[b] == int(Nation.from_slug(nation))
                    and g.block_arm[b] == arm and g.block_class[b] == int(cls)
                    and (max_sp is None or g.block_max_sp[b] == max_sp)):
                self.used.add(b)
                return b
        raise LookupError((side, nation, arm, cls, max_sp))

    def place(self, b, area, sp):
        g = self.g
        i = self.m.index(area)
        g.block_status[b] = STATUS.ON_MAP
        g.block_area[b] = i
        g.block_sp[b] = sp
        if g.control[i] < 0:
            g.control[i] = g.block_side[b]  # SoE 1.3: the occupying side controls the area
        return b

    def add(self, side, area, sp, **kw):
        return self.place(self.pick(side, **kw), area, sp)

    def ctx(self, active_nations=()):
        self.g.round[0] = 1
        self.g.phase[0] = PHASE_REINFORCEMENT
        return R.begin_reinforcement_phase(self.g, self.m, self.rules, self.sc, active_nations)


@pytest.fixture
def scene(games, game_map, rules):
    return Scene(games, game_map, rules)


# --- rulebook examples ----------------------------------------------------------------------------------


def test_soe_8_2_division_absorbs_brigade_and_division(scene):
    """SoE 8.2 example: a 2SP Division absorbs a 1SP Brigade and a 1SP Division: both go to the force
    pool and the Division is rotated to 4SP."""
    g = scene.g
    d = scene.add(P, "warsaw", 2, max_sp=4)
    brig = scene.add(P, "warsaw", 1, cls=UnitClass.BRIGADE)
    d2 = scene.add(P, "warsaw", 1, max_sp=4)
    ctx = scene.ctx()
    legal = R.legal_combines(g, ctx, P)
    assert legal[d, brig] and legal[d, d2] and legal[d2, d]
    assert not legal[brig, d] and not legal[brig, d2]  # a brigade never absorbs (8.2 "A Division block")
    assert not R.legal_combines(g, ctx, S).any()
    assert R.apply_combine(g, ctx, P, d, brig)
    assert R.apply_combine(g, ctx, P, d, d2)
    assert g.block_sp[d] == 4
    for b in (brig, d2):
        assert g.block_status[b] == STATUS.FORCE_POOL and g.block_area[b] == -1 and g.block_sp[b] == 0
    assert not R.legal_combines(g, ctx, P).any()


def test_soe_8_2_combine_limits(scene):
    """RF8: the combined SP must fit the absorbing division; same arm and nation; same area."""
    g = scene.g
    d = scene.add(P, "warsaw", 3, max_sp=4)
    b2 = scene.add(P, "warsaw", 2, cls=UnitClass.BRIGADE)
    cav = scene.add(P, "warsaw", 1, arm=ARM.CAVALRY, cls=UnitClass.BRIGADE)
    other = scene.add(P, "modlin", 1, cls=UnitClass.BRIGADE)
    unr = scene.add(P, "warsaw", 1, nation="ukrainian-unr")
    ctx = scene.ctx()
    legal = R.legal_combines(g, ctx, P)
    assert not legal[d, b2]  # 3 + 2 > 4
    assert not legal[d, cav] and not legal[d, other] and not legal[d, unr] and not legal[unr, d]
    assert not R.apply_combine(g, ctx, P, d, b2)
    assert g.block_sp[d] == 3 and g.block_status[b2] == STATUS.ON_MAP


def test_soe_8_2_combining_across_arms_is_a_rules_switch(scene, tmp_path):
    """RF8: ``reinforcement.combine_same_arm`` (true in soe.toml, the engine's reading: 8.2 itself sets
    no arm condition). Overlaid to false, an infantry division may absorb a cavalry brigade; a leader is
    never absorbed."""
    from soe_sim.rules import load_rules

    g = scene.g
    d = scene.add(P, "warsaw", 2, max_sp=4)
    cav = scene.add(P, "warsaw", 1, arm=ARM.CAVALRY, cls=UnitClass.BRIGADE)
    assert scene.rules["reinforcement.combine_same_arm"] is True
    assert not R.legal_combines(g, scene.ctx(), P)[d, cav]
    overlay = tmp_path / "any_arm.toml"
    overlay.write_text("[reinforcement]\ncombine_same_arm = false\n")
    scene.rules = load_rules("soe", [overlay])
    ctx = scene.ctx()
    assert R.legal_combines(g, ctx, P)[d, cav]
    assert R.apply_combine(g, ctx, P, d, cav) and g.block_sp[d] == 3 and g.block_status[cav] == STATUS.FORCE_POOL


def test_soe_8_3_one_sp_division_to_four_with_three_black_cubes(scene):
    g = scene.g
    d = scene.add(P, "warsaw", 1, max_sp=4)
    g.cubes[P, N] = (3, 0, 0)
    ctx = scene.ctx()
    pool = R.saved_pool(g, P)
    for _ in range(3):
        assert R.legal_strengthen(g, ctx, pool)[d]
        assert R.apply_strengthen(g, ctx, pool, d)
    assert g.block_sp[d] == 4 and g.cubes[P, N].tolist() == [0, 0, 0]
    assert not R.legal_strengthen(g, ctx, pool)[d]
    assert not R.apply_strengthen(g, ctx, pool, d)


def test_soe_8_3_five_black_cubes_on_three_2sp_divisions(scene):
    """SoE 8.3 example: two divisions to full strength for 4 cubes, the last to 3SP with the fifth."""
    g = scene.g
    ds = [scene.add(P, "warsaw", 2, max_sp=4) for _ in range(3)]
    g.cubes[P, N] = (5, 0, 0)
    ctx = scene.ctx()
    pool = R.saved_pool(g, P)
    for d in ds:
        while R.legal_strengthen(g, ctx, pool)[d]:
            assert R.apply_strengthen(g, ctx, pool, d)
    assert g.block_sp[ds].tolist() == [4, 4, 3]
    assert g.cubes[P, N].tolist() == [0, 0, 0]


def test_soe_8_31_front_line_area_gains_one_sp_in_total(scene):
    """SoE 8.31 example: 3 infantry and 1 cavalry block in a front-line area: the player strengthens
    the cavalry by 1SP for 1 white cube and nothing else there."""
    g = scene.g
    inf = [scene.add(P, "warsaw", 2, max_sp=4) for _ in range(3)]
    cav = scene.add(P, "warsaw", 1, arm=ARM.CAVALRY, max_sp=3)
    scene.add(S, "radzymin", 2)  # an enemy-held area next to Warsaw
    back = scene.add(P, "kutno", 2, max_sp=4)  # Kutno is not next to Radzymin
    g.cubes[P, N] = (3, 1, 0)
    ctx = scene.ctx()
    w = scene.m.index("warsaw")
    assert ctx.front_line[P, w] and not ctx.front_line[P, scene.m.index("kutno")]
    pool = R.saved_pool(g, P)
    legal = R.legal_strengthen(g, ctx, pool)
    assert all(legal[inf]) and legal[cav] and legal[back]
    assert R.apply_strengthen(g, ctx, pool, cav)
    assert g.cubes[P, N].tolist() == [3, 0, 0] and g.block_sp[cav] == 2
    legal = R.legal_strengthen(g, ctx, pool)
    assert not any(legal[inf]) and not legal[cav] and legal[back]
    assert not R.apply_strengthen(g, ctx, pool, inf[0])
    assert R.apply_strengthen(g, ctx, pool, back) and R.apply_strengthen(g, ctx, pool, back)
    assert g.block_sp[back] == 4 and g.cubes[P, N].tolist() == [1, 0, 0]


def test_soe_8_3_cube_colours_and_supply(scene):
    """SoE 3.2 / 8.3 (RF5): black for own infantry, white for own cavalry, green for allied nations
    (EatS X.2), leaders never; out-of-supply blocks are not strengthened."""
    g = scene.g
    inf = scene.add(P, "warsaw", 1, max_sp=4)
    cav = scene.add(P, "kutno", 1, arm=ARM.CAVALRY, max_sp=3)
    lb = scene.add(P, "modlin", 1, nation="lithuanian-belarusian")
    bel = scene.add(P, "karczew", 1, nation="belarusian", arm=ARM.CAVALRY, cls=UnitClass.BRIGADE)
    far = scene.add(P, "suwalki", 1, max_sp=4)  # no key city, 6 links from Warsaw
    ctx = scene.ctx()
    assert not g.block_in_supply[far]
    kinds = R.block_cube_kinds(g)
    assert kinds[inf] == CUBE_INFANTRY and kinds[cav] == CUBE_CAVALRY
    assert kinds[lb] == CUBE_ALLIED and kinds[bel] == CUBE_ALLIED
    for cubes, ok in (((1, 0, 0), {inf}), ((0, 1, 0), {cav}), ((0, 0, 1), {lb, bel}), ((5, 5, 5), {inf, cav, lb, bel})):
        g.cubes[P, N] = cubes
        legal = R.legal_strengthen(g, ctx, R.saved_pool(g, P))
        assert set(np.flatnonzero(legal)) == ok


def test_soe_8_4_build_costs_and_no_strengthening_when_built(scene, rules):
    """SoE 8.4: 1 cube builds a 1SP brigade, 2 cubes a 1SP division, on a friendly supply depot; a
    newly built block is not strengthened in the same phase."""
    g = scene.g
    g.cubes[P, N] = (1, 0, 0)
    ctx = scene.ctx()
    pool = R.saved_pool(g, P)
    legal = R.legal_builds(g, ctx, pool)
    w = scene.m.index("warsaw")
    pol_inf = (g.block_side == P) & (g.block_nation == int(Nation.POLISH)) & (g.block_arm == ARM.INFANTRY)
    brig = np.flatnonzero(pol_inf & (g.block_class == int(UnitClass.BRIGADE)))
    div = np.flatnonzero(pol_inf & (g.block_class == int(UnitClass.DIVISION)))
    assert legal[brig, w].all() and not legal[div, w].any()
    assert set(np.flatnonzero(legal.any(axis=0))) == {w}  # Warsaw is the only Polish depot
    g.cubes[P, N] = (2, 0, 0)
    legal = R.legal_builds(g, ctx, pool)
    assert legal[div, w].all()
    d = int(div[0])
    assert R.apply_build(g, ctx, pool, d, w)
    assert g.cubes[P, N].tolist() == [2 - rules["reinforcement.division_build_cost"], 0, 0]
    assert g.block_status[d] == STATUS.ON_MAP and g.block_area[d] == w
    assert g.block_sp[d] == rules["reinforcement.build_sp"] and ctx.built[d]
    g.cubes[P, N] = (3, 0, 0)
    assert not R.legal_strengthen(g, ctx, pool)[d]
    assert not R.apply_strengthen(g, ctx, pool, d)
    assert not R.apply_build(g, ctx, pool, d, w)  # already on the map


def test_soe_8_4_eliminated_blocks_are_never_built(scene):
    """SoE 8.4: blocks eliminated by 'no retreat' (7.42) or 'out of supply' (7.71) may not be rebuilt;
    blocks destroyed in battle (7.41.5) may."""
    g = scene.g
    gone = scene.pick(P, cls=UnitClass.BRIGADE)
    destroyed = scene.pick(P, cls=UnitClass.BRIGADE)
    g.block_status[gone] = STATUS.ELIMINATED_PERMANENT
    g.block_status[destroyed] = STATUS.DESTROYED_TO_POOL
    g.cubes[P, N] = (4, 4, 4)
    ctx = scene.ctx()
    pool = R.saved_pool(g, P)
    legal = R.legal_builds(g, ctx, pool)
    w = scene.m.index("warsaw")
    assert not legal[gone].any() and legal[destroyed, w]
    assert not R.apply_build(g, ctx, pool, gone, w)
    assert g.block_status[gone] == STATUS.ELIMINATED_PERMANENT and g.cubes[P, N].tolist() == [4, 4, 4]


def test_soe_8_4_stacking_depot_and_enemy(scene):
    """RF9: builds only on friendly in-supply depots with room for one more block."""
    g = scene.g
    for _ in range(4):
        scene.add(P, "warsaw", 1, cls=UnitClass.BRIGADE)
    scene.garrison(P, "lutsk")  # a south-front Polish depot (clear path to Warsaw)
    scene.garrison(P, "lida")
    for a in ("radun", "vilnius", "molodechno", "volkovysk", "baranovichi"):  # Lida cut off
        scene.add(S, a, 1)
    g.cubes[P, N] = (4, 4, 4)
    ctx = scene.ctx()
    legal = R.legal_builds(g, ctx, R.saved_pool(g, P))
    areas = {scene.m.ids[a] for a in np.flatnonzero(legal.any(axis=0))}
    assert areas == {"lutsk"}
    # front restriction (scenario special rule): UNR blocks built on the southern front only
    unr = np.flatnonzero((g.block_nation == int(Nation.UKRAINIAN_UNR)) & (g.block_status == STATUS.FORCE_POOL))
    assert len(unr) and legal[unr, scene.m.index("lutsk")].all()


def test_soe_8_5_warsaw_strategic_cubes(scene):
    """SoE 8.5: a controlled, in-supply strategic city gives its printed cubes; they reinforce blocks
    on its front only and new blocks are placed on the city."""
    g = scene.g
    north = scene.add(P, "kutno", 1, max_sp=4)
    scene.garrison(P, "lutsk")
    south = scene.add(P, "lutsk", 1, max_sp=4)
    ctx = scene.ctx()
    pools = R.strategic_pools(g, scene.m, ctx, P)
    assert [scene.m.ids[p.area] for p in pools] == ["warsaw"]
    pool = pools[0]
    assert pool.cubes.tolist() == scene.m.strategic_cubes[scene.m.index("warsaw")].tolist()
    assert pool.front == FRONT.NORTH
    legal = R.legal_strengthen(g, ctx, pool)
    assert legal[north] and not legal[south]
    builds = R.legal_builds(g, ctx, pool)
    assert set(np.flatnonzero(builds.any(axis=0))) == {scene.m.index("warsaw")}
    # saved cubes are not restricted to a front (RF14); EatS X: a front's RP stay on it (V8)
    g.cubes[P, N] = (1, 0, 0)
    assert R.legal_strengthen(g, ctx, R.saved_pool(g, P))[south]
    per_front = R.legal_strengthen(g, ctx, R.saved_pool(g, P, N, per_front=True))
    assert per_front[north] and not per_front[south]
    # a Polish Warsaw that the Soviets hold gives nothing to the Poles
    g.garrison_side[scene.m.index("warsaw")] = -1
    scene.add(S, "warsaw", 1)
    g.control[scene.m.index("warsaw")] = S
    ctx = scene.ctx()
    assert R.strategic_pools(g, scene.m, ctx, P) == []


def test_soe_8_5_soviet_eastern_links_and_kaunas(scene):
    """SoE 8.5: the Soviets always pull the Eastern Links' cubes (always Soviet depots, E3). Kaunas:
    only for the Soviets, only when Lithuania is allied (card 23), for Lithuanian blocks only."""
    g = scene.g
    m = scene.m
    k = m.index("kaunas")
    lit = scene.add(S, "kaunas", 1, nation="lithuanian")
    sov = scene.add(S, "kaunas", 1)
    scene.garrison(S, "kaunas")
    ctx = scene.ctx(active_nations=("lithuanian",))
    names = lambda pools: sorted(m.ids[p.area] for p in pools)  # noqa: E731
    if not ctx.depot[S, k]:
        pytest.skip("Kaunas has no clear path to an Eastern Link on this map")
    assert names(R.strategic_pools(g, m, ctx, S)) == ["elizavetgrad", "klintsy", "yartsevo"]
    pools = R.strategic_pools(g, m, ctx, S, lithuania_allied=True)
    assert names(pools) == ["elizavetgrad", "kaunas", "klintsy", "yartsevo"]
    kp = next(p for p in pools if p.area == k)
    assert kp.nation == int(Nation.LITHUANIAN)
    legal = R.legal_strengthen(g, ctx, kp)
    assert legal[lit] and not legal[sov]
    builds = R.legal_builds(g, ctx, kp)
    built_nations = set(g.block_nation[np.flatnonzero(builds.any(axis=1))])
    assert built_nations <= {int(Nation.LITHUANIAN)}
    # the Poles never pull Kaunas
    out = np.zeros((m.n_areas, 3), dtype=np.int64)
    ctrl = g.control.copy()
    ctrl[k] = P
    depot = ctx.depot.copy()
    depot[P, k] = True
    strategic_cubes_nb(m.strategic_cubes, ctrl, depot, P, k, True, out)
    assert out[k].sum() == 0


def test_soe_8_5_neutral_lithuania_is_inactive(scene):
    """RF6: while Lithuania is neutral its blocks are not strengthened, combined or built."""
    g = scene.g
    lit = scene.add(S, "kaunas", 1, nation="lithuanian")
    g.cubes[S, N] = (5, 5, 5)
    ctx = scene.ctx()
    g.block_in_supply[lit] = True
    assert not R.legal_strengthen(g, ctx, R.saved_pool(g, S))[lit]
    legal = R.legal_builds(g, ctx, R.saved_pool(g, S))
    assert not legal[g.block_nation == int(Nation.LITHUANIAN)].any()


def test_soe_10_2_klintsy_rivalry(scene):
    """SoE 10.2 (RF12): Klintsy's cubes go to the front of the nearest Soviet leader; north on ties."""
    g = scene.g
    m = scene.m
    k = m.index("klintsy")
    assert R.strategic_front(g, m, k) == m.front[k]
    assert R.strategic_front(g, m, k, rivalry=True) == m.front[k]  # no leader on the map
    stalin = scene.pick(S, nation="soviet", arm=ARM.LEADER, cls=UnitClass.LEADER)
    scene.place(stalin, "gomel", 1)
    gomel_front = m.front[m.index("gomel")]
    assert R.strategic_front(g, m, k, rivalry=True) == gomel_front


def test_soe_8_1_replace_garrisons(scene):
    """SoE 8.1: an occupied, in-supply key city without a garrison gets a free garrison."""
    g = scene.g
    m = scene.m
    scene.add(P, "lutsk", 2)
    scene.add(P, "lida", 2)
    for a in ("radun", "vilnius", "molodechno", "volkovysk", "baranovichi"):  # Lida cut off
        scene.add(S, a, 1)
    ctx = scene.ctx()
    placed = R.replace_garrisons(g, ctx)
    assert g.garrison_side[m.index("lutsk")] == P and placed[P, m.index("lutsk")]
    assert g.garrison_side[m.index("lida")] == -1
    assert g.garrison_side[m.index("vilnius")] == S  # Soviet blocks in Vilnius, clear path east
    before = g.garrison_side.copy()
    assert not R.replace_garrisons(g, ctx).any() and (g.garrison_side == before).all()


def test_replace_garrisons_want_mask(scene):
    g = scene.g
    scene.add(P, "lutsk", 2)
    ctx = scene.ctx()
    placed = R.replace_garrisons(g, ctx, want=np.zeros((2, scene.m.n_areas), dtype=bool))
    assert not placed.any() and g.garrison_side[scene.m.index("lutsk")] == -1


# --- SoE 4.0 arrivals ---------------------------------------------------------------------------------------


def test_soe_4_0_scheduled_blocks_arrive(games, game_map, rules):
    """SoE 4.0: blocks on the track sheet enter at their phase on their area at their SP; conditioned
    ones (1st Cavalry Army) only when the condition holds."""
    sc, g0 = games["kiev-offensive"]
    g = g0.copy()
    m = game_map
    due = (g.block_status == STATUS.SCHEDULED) & (g.block_arrive_round == 1) & (g.block_arrive_phase <= 2)
    cond = due & (g.block_arrive_condition >= 0)
    g.round[0], g.phase[0] = 1, 2
    out = R.arrive_reinforcements(g, m, rules)
    plain = due & ~cond
    assert plain.any()
    assert (g.block_status[plain] == STATUS.ON_MAP).all()
    assert (g.block_area[plain] == g.block_arrive_area[plain]).all()
    assert (g.block_sp[plain] == g.block_arrive_sp[plain]).all()
    assert (out[~due] == ARRIVE_NONE).all()
    # the 1st Cavalry Army (round 1 phase 4, condition) waits for its check
    g.round[0], g.phase[0] = 1, 4
    cav = (g.block_status == STATUS.SCHEDULED) & (g.block_arrive_condition >= 0)
    assert cav.any()
    R.arrive_reinforcements(g, m, rules)
    assert (g.block_status[cav] == STATUS.SCHEDULED).all()
    met = np.zeros(len(sc.special_rules), dtype=bool)
    met[int(g.block_arrive_condition[cav][0])] = True
    R.arrive_reinforcements(g, m, rules, condition_met=met)
    assert (g.block_status[cav] == STATUS.ON_MAP).all()
    assert (g.block_area[cav] == m.index("elizavetgrad")).all()


def test_soe_4_0_arrival_area_taken_or_full(scene, rules):
    """RF2: an arrival area held by the enemy or full sends the block to the nearest friendly depot."""
    g = scene.g
    m = scene.m
    scene.garrison(P, "lutsk")
    # a Polish block scheduled for Kutno, occupied by the Soviets -> nearest Polish depot (Warsaw)
    b1 = scene.pick(P, cls=UnitClass.BRIGADE)
    scene.add(S, "kutno", 1)
    # a Polish block scheduled for a full Lutsk -> Warsaw is the only other depot
    b2 = scene.pick(P, cls=UnitClass.BRIGADE)
    for _ in range(4):
        scene.add(P, "lutsk", 1, cls=UnitClass.BRIGADE)
    for b, a in ((b1, "kutno"), (b2, "lutsk")):
        g.block_status[b] = STATUS.SCHEDULED
        g.block_arrive_round[b] = 1
        g.block_arrive_phase[b] = 3
        g.block_arrive_area[b] = m.index(a)
        g.block_arrive_sp[b] = 2
        g.block_arrive_condition[b] = -1
    g.round[0], g.phase[0] = 1, 2
    out = R.arrive_reinforcements(g, m, rules)
    assert out[b1] == ARRIVE_NONE and out[b2] == ARRIVE_NONE
    g.phase[0] = 3
    out = R.arrive_reinforcements(g, m, rules)
    assert out[b1] == m.index("warsaw") and out[b2] == m.index("warsaw")
    assert g.block_sp[b1] == 2 and g.block_status[b2] == STATUS.ON_MAP
    # Warsaw now full too: no depot with room -> delayed
    for _ in range(2):
        scene.add(P, "warsaw", 1, cls=UnitClass.BRIGADE)
    b3 = scene.pick(P, cls=UnitClass.BRIGADE)
    g.block_status[b3] = STATUS.SCHEDULED
    g.block_arrive_round[b3], g.block_arrive_phase[b3] = 1, 3
    g.block_arrive_area[b3], g.block_arrive_sp[b3], g.block_arrive_condition[b3] = m.index("lutsk"), 1, -1
    out = R.arrive_reinforcements(g, m, rules)
    assert out[b3] == ARRIVE_DELAYED and g.block_status[b3] == STATUS.SCHEDULED


def test_every_scheduled_block_arrives_over_a_scenario(games, game_map, rules):
    """Walking each built-in scenario's track (no battles): every reinforcement arrives at its time,
    conditioned ones when their condition is met; stacking respected outside Eastern Links."""
    m = game_map
    for sid, (sc, g0) in games.items():
        g = g0.copy()
        met = np.ones(len(sc.special_rules), dtype=bool)
        phases = list(range(1, rules["round.operation_phases"] + 1)) + [PHASE_REINFORCEMENT]
        for rnd in range(sc.start.round, sc.end.round + 1):
            for ph in phases:
                g.round[0], g.phase[0] = rnd, ph
                R.arrive_reinforcements(g, m, rules, condition_met=met)
                late = (g.block_status == STATUS.SCHEDULED) & (
                    (g.block_arrive_round < rnd) | ((g.block_arrive_round == rnd) & (g.block_arrive_phase <= ph)))
                assert not late.any(), (sid, rnd, ph)
        on = g.block_status == STATUS.ON_MAP
        cnt = np.bincount(g.block_area[on].astype(int) * 2 + g.block_side[on], minlength=2 * m.n_areas)
        cnt = cnt.reshape(m.n_areas, 2)
        start_cnt = np.zeros_like(cnt)
        on0 = g0.block_status == STATUS.ON_MAP
        np.add.at(start_cnt, (g0.block_area[on0].astype(int), g0.block_side[on0].astype(int)), 1)
        over = (cnt > rules["stacking.max_blocks"]) & (cnt > start_cnt) & ~m.eastern_link[:, None]
        assert not over.any(), sid


# --- plain-Python oracle --------------------------------------------------------------------------------------

OWN = {P: "polish", S: "soviet"}
ALLIED = {P: {"ukrainian-unr", "lithuanian-belarusian", "belarusian", "cossack", "russian-volunteer"},
          S: {"ukrainian-uha", "lithuanian", "latvian"}}


def o_kind(side, nation, arm):
    if arm == ARM.LEADER:
        return None
    slug = Nation(int(nation)).slug
    if slug in ALLIED[side]:
        return CUBE_ALLIED
    if slug == OWN[side]:
        return CUBE_CAVALRY if arm == ARM.CAVALRY else CUBE_INFANTRY
    return None


def o_counts(g, n):
    c = np.zeros((2, n), dtype=int)
    for b in range(g.n_blocks):
        if g.block_status[b] == STATUS.ON_MAP and g.block_area[b] >= 0:
            c[g.block_side[b], g.block_area[b]] += 1
    return c


def o_combines(g, ctx, side):
    out = set()
    div, brig = int(UnitClass.DIVISION), int(UnitClass.BRIGADE)
    on = [b for b in range(g.n_blocks) if g.block_status[b] == STATUS.ON_MAP and g.block_side[b] == side]
    for d in on:
        for b in on:
            if d == b or g.block_area[d] != g.block_area[b] or g.block_area[d] < 0:
                continue
            if g.block_class[d] != div or g.block_class[b] not in (div, brig):
                continue
            if g.block_arm[d] != g.block_arm[b] or g.block_arm[d] == ARM.LEADER:
                continue
            if g.block_nation[d] != g.block_nation[b] or not ctx.nation_active[g.block_nation[d]]:
                continue
            if int(g.block_sp[d]) + int(g.block_sp[b]) > int(g.block_max_sp[d]):
                continue
            out.add((d, b))
    return out


def o_front_line(m, enemy, control):
    n = m.n_areas
    out = np.zeros((2, n), dtype=bool)
    for s in (P, S):
        for i in range(n):
            nbrs = m.adj_indices[m.adj_indptr[i]:m.adj_indptr[i + 1]]
            out[s, i] = enemy[s, i] or any(enemy[s, j] or control[j] == 1 - s for j in nbrs)
    return out


def o_strengthen(g, ctx, pool):
    side = pool.side
    out = set()
    for b in range(g.n_blocks):
        a = int(g.block_area[b])
        if g.block_side[b] != side or g.block_status[b] != STATUS.ON_MAP or a < 0:
            continue
        if not g.block_in_supply[b] or ctx.built[b] or g.block_sp[b] >= g.block_max_sp[b]:
            continue
        if not ctx.nation_active[g.block_nation[b]]:
            continue
        if pool.nation >= 0 and g.block_nation[b] != pool.nation:
            continue
        if pool.front >= 0 and ctx.front[a] != pool.front:
            continue
        k = o_kind(side, g.block_nation[b], g.block_arm[b])
        if k is None or pool.cubes[k] < 1:
            continue
        if ctx.front_line[side, a] and ctx.gained_area[side, a] >= ctx.rules.front_line_max_sp:
            continue
        out.add(b)
    return out


def o_builds(g, ctx, pool, rules):
    side = pool.side
    n = ctx.front.shape[0]
    cnt = o_counts(g, n)
    cost = {int(UnitClass.BRIGADE): rules["reinforcement.brigade_build_cost"],
            int(UnitClass.DIVISION): rules["reinforcement.division_build_cost"]}
    out = set()
    for b in range(g.n_blocks):
        if g.block_side[b] != side or g.block_status[b] not in (STATUS.FORCE_POOL, STATUS.DESTROYED_TO_POOL):
            continue
        if int(g.block_class[b]) not in cost or not ctx.nation_active[g.block_nation[b]]:
            continue
        if pool.nation >= 0 and g.block_nation[b] != pool.nation:
            continue
        k = o_kind(side, g.block_nation[b], g.block_arm[b])
        if k is None or pool.cubes[k] < cost[int(g.block_class[b])]:
            continue
        for a in range(n):
            if pool.area >= 0 and a != pool.area:
                continue
            if not ctx.depot[side, a] or ctx.enemy[side, a]:
                continue
            if side == P and ctx.eastern_link[a]:
                continue
            if not ctx.eastern_link[a] and cnt[side, a] >= rules["stacking.max_blocks"]:
                continue
            if not ctx.nation_area_ok[g.block_nation[b], a]:
                continue
            out.add((b, a))
    return out


def o_strategic(m, control, depot, side, kaunas, allied):
    out = np.zeros((m.n_areas, 3), dtype=int)
    for i in range(m.n_areas):
        if control[i] != side or not depot[side, i]:
            continue
        if i == kaunas and not (side == S and allied):
            continue
        out[i] = m.strategic_cubes[i]
    return out


def o_arrivals(m, g, enemy, depot, max_blocks, met):
    """Returns {block: area or ARRIVE_DELAYED} for every due block, placing them in index order."""
    cnt = o_counts(g, m.n_areas)
    rnd, ph = int(g.round[0]), int(g.phase[0])
    res = {}
    for b in range(g.n_blocks):
        if g.block_status[b] != STATUS.SCHEDULED:
            continue
        key = (int(g.block_arrive_round[b]), int(g.block_arrive_phase[b]))
        if key[0] < 0 or key > (rnd, ph):
            continue
        c = int(g.block_arrive_condition[b])
        if c >= 0 and not (c < len(met) and met[c]):
            continue
        s = int(g.block_side[b])
        a0 = int(g.block_arrive_area[b])

        def ok(a, need_depot):
            if enemy[s, a] or (s == P and m.eastern_link[a]):
                return False
            if need_depot and not depot[s, a]:
                return False
            return bool(m.eastern_link[a]) or cnt[s, a] < max_blocks

        if ok(a0, False):
            dest = a0
        else:
            dist = {}
            q = deque()
            if s == S or not m.eastern_link[a0]:
                dist[a0] = 0
                q.append(a0)
            else:
                for v in m.adj_indices[m.adj_indptr[a0]:m.adj_indptr[a0 + 1]]:
                    if not m.eastern_link[v] and int(v) not in dist:
                        dist[int(v)] = 1
                        q.append(int(v))
            while q:
                u = q.popleft()
                for v in m.adj_indices[m.adj_indptr[u]:m.adj_indptr[u + 1]]:
                    v = int(v)
                    if v in dist or (s == P and m.eastern_link[v]):
                        continue
                    dist[v] = dist[u] + 1
                    q.append(v)
            cands = sorted((d, a) for a, d in dist.items() if ok(a, True))
            dest = cands[0][1] if cands else None
        if dest is None:
            res[b] = ARRIVE_DELAYED
            continue
        res[b] = dest
        cnt[s, dest] += 1
    return res


# --- random positions built from the scenarios ------------------------------------------------------------------


def random_state(rng, games, m):
    """A built-in scenario's starting state with random statuses, areas, SP, garrisons, control,
    supply flags and cubes (not necessarily reachable in play)."""
    sid = SCENARIOS[int(rng.integers(len(SCENARIOS)))]
    sc, g0 = games[sid]
    g = g0.copy()
    n = m.n_areas
    hot = rng.choice(n, size=int(rng.integers(4, 30)), replace=False)
    west = np.array([a for a in hot if not m.eastern_link[a]] or [m.index("warsaw")])
    for b in range(g.n_blocks):
        if rng.random() < 0.3:
            continue
        choices = [STATUS.ON_MAP, STATUS.FORCE_POOL, STATUS.DESTROYED_TO_POOL, STATUS.ELIMINATED_PERMANENT]
        if g0.block_status[b] == STATUS.SCHEDULED:
            choices.append(STATUS.SCHEDULED)
        st_ = choices[int(rng.integers(len(choices)))]
        g.block_status[b] = st_
        if st_ == STATUS.ON_MAP:
            pool = west if g.block_side[b] == P else hot
            g.block_area[b] = int(rng.choice(pool))
            g.block_sp[b] = int(rng.integers(1, int(g.block_max_sp[b]) + 1))
        else:
            g.block_area[b] = -1
            g.block_sp[b] = 0
    key = np.flatnonzero(m.garrison)
    for i in key:
        u = rng.random()
        g.garrison_side[i] = -1 if u < 0.5 else (P if u < 0.75 else S)
    g.garrison_side[m.eastern_link] = np.where(rng.random(m.eastern_link.sum()) < 0.5, S, -1)
    g.control[:] = rng.integers(-1, 2, n)
    g.control[m.eastern_link] = S
    g.cubes[:] = rng.integers(0, 5, (2, 2, 3))
    g.round[0] = int(rng.integers(1, 6))
    g.phase[0] = int(rng.choice([1, 2, 3, 4, 5, PHASE_REINFORCEMENT]))
    return sc, g


def random_ctx(rng, g, sc, m, rules):
    ctx = R.begin_reinforcement_phase(g, m, rules, sc, active_nations=("lithuanian",) if rng.random() < 0.5 else ())
    n = m.n_areas
    if rng.random() < 0.5:  # random depots (any input works for the legality comparison)
        depot = rng.random((2, n)) < 0.15
        depot[S, m.eastern_link] = True
        depot[P, m.eastern_link] = False
        ctx = ctx._replace(depot=depot)
    g.block_in_supply[:] = rng.random(g.n_blocks) < 0.8
    on = g.block_status == STATUS.ON_MAP
    active = ctx.nation_active.copy()
    active[rng.random(active.shape[0]) < 0.1] = False
    area_ok = ctx.nation_area_ok & (rng.random(ctx.nation_area_ok.shape) < 0.9)
    return ctx._replace(
        built=on & (rng.random(g.n_blocks) < 0.1),
        gained_area=rng.integers(0, 2, (2, n)).astype(np.int32),
        front_line=rng.random((2, n)) < 0.3 if rng.random() < 0.3 else ctx.front_line,
        nation_active=active,
        nation_area_ok=area_ok,
    )


def random_pool(rng, g, ctx, m, side):
    if rng.random() < 0.5:
        return R.saved_pool(g, side)
    cities = np.flatnonzero(m.strategic_cubes.sum(axis=1) > 0)
    city = int(rng.choice(cities))
    nation = int(Nation.LITHUANIAN) if city == ctx.kaunas else (-1 if rng.random() < 0.8 else int(rng.integers(10)))
    return R.Pool(side=side, cubes=rng.integers(0, 4, 3).astype(np.int64), area=city,
                  front=int(m.front[city]), nation=nation)


@settings(max_examples=40, deadline=None)
@given(seed=SEEDS)
def test_legality_kernels_match_oracle(games, game_map, rules, seed):
    rng = np.random.default_rng(seed)
    m = game_map
    sc, g = random_state(rng, games, m)
    ctx = random_ctx(rng, g, sc, m, rules)
    assert (o_front_line(m, ctx.enemy, g.control) == R.begin_reinforcement_phase(
        g.copy(), m, rules, sc).front_line).all()
    for side in (P, S):
        legal = R.legal_combines(g, ctx, side)
        assert set(zip(*map(lambda x: x.tolist(), np.nonzero(legal)))) == o_combines(g, ctx, side)
        for _ in range(3):
            pool = random_pool(rng, g, ctx, m, side)
            assert set(np.flatnonzero(R.legal_strengthen(g, ctx, pool)).tolist()) == o_strengthen(g, ctx, pool)
            got = R.legal_builds(g, ctx, pool)
            assert set(zip(*map(lambda x: x.tolist(), np.nonzero(got)))) == o_builds(g, ctx, pool, rules)
        for allied in (False, True):
            out = np.zeros((m.n_areas, 3), dtype=np.int64)
            tot = strategic_cubes_nb(m.strategic_cubes, g.control, ctx.depot, side, ctx.kaunas, allied, out)
            want = o_strategic(m, g.control, ctx.depot, side, ctx.kaunas, allied)
            assert (out == want).all() and tot == want.sum()


@settings(max_examples=40, deadline=None)
@given(seed=SEEDS)
def test_front_line_matches_oracle(game_map, seed):
    rng = np.random.default_rng(seed)
    m = game_map
    n = m.n_areas
    enemy = rng.random((2, n)) < 0.15
    control = rng.integers(-1, 2, n).astype(np.int8)
    out = np.zeros((2, n), dtype=bool)
    front_line_nb(m.adj_indptr, m.adj_indices, enemy, control, out)
    assert (out == o_front_line(m, enemy, control)).all()


@settings(max_examples=40, deadline=None)
@given(seed=SEEDS)
def test_arrivals_match_oracle(games, game_map, rules, seed):
    rng = np.random.default_rng(seed)
    m = game_map
    sc, g = random_state(rng, games, m)
    n = m.n_areas
    for b in np.flatnonzero(g.block_status == STATUS.SCHEDULED):  # take some arrival areas (RF2)
        a = g.block_arrive_area[b]
        if rng.random() < 0.3 and not m.eastern_link[a] and m.garrison[a]:
            g.garrison_side[a] = 1 - g.block_side[b]
    blocks = np.zeros((2, n), dtype=np.int32)
    enemy = np.zeros((2, n), dtype=np.bool_)
    enemy_presence_nb(g.block_side, g.block_area, g.block_status, g.garrison_side, blocks, enemy)
    src = np.empty((2, n), dtype=np.int32)
    depot = np.zeros((2, n), dtype=np.bool_)
    supply_depots_nb(m.adj_indptr, m.adj_indices, m.adj_bits, m.eastern_link, m.supply_source, g.supply_base,
                     m.garrison, enemy, src, depot)
    met = rng.random(len(sc.special_rules)) < 0.5
    max_blocks = int(rules["stacking.max_blocks"]) if rng.random() < 0.7 else int(rng.integers(1, 3))
    want = o_arrivals(m, g, enemy, depot, max_blocks, met)
    before = g.copy()
    out = np.empty(g.n_blocks, dtype=np.int64)
    k = arrive_reinforcements_nb(m.adj_indptr, m.adj_indices, m.eastern_link, enemy, depot, max_blocks,
                                 int(g.round[0]), int(g.phase[0]), met, g.block_side, g.block_status, g.block_area,
                                 g.block_sp, g.block_prev_area, g.block_arrival, g.block_in_supply,
                                 g.block_arrive_round, g.block_arrive_phase, g.block_arrive_area,
                                 g.block_arrive_sp, g.block_arrive_condition, out)
    got = {b: int(out[b]) for b in range(g.n_blocks) if out[b] != ARRIVE_NONE}
    assert got == want
    assert k == sum(1 for v in want.values() if v >= 0)
    for b in range(g.n_blocks):
        if want.get(b, ARRIVE_NONE) >= 0:
            assert g.block_status[b] == STATUS.ON_MAP and g.block_area[b] == want[b]
            assert g.block_sp[b] == before.block_arrive_sp[b]
        else:
            assert g.block_status[b] == before.block_status[b] and g.block_area[b] == before.block_area[b]


# --- conservation under random play --------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(seed=SEEDS)
def test_random_reinforcement_phases_conserve(games, game_map, rules, seed):
    """Random legal play of whole phases from the scenario starts: cubes never negative, SP within
    1..max on the map and 0 off it, SP gained = cubes spent on strengthening + build_sp per build,
    combining conserves SP, front-line areas gain at most ``front_line_max_sp``, stacking holds."""
    rng = np.random.default_rng(seed)
    m = game_map
    sid = SCENARIOS[int(rng.integers(len(SCENARIOS)))]
    sc, g0 = games[sid]
    g = g0.copy()
    g.round[0], g.phase[0] = g.end[0], PHASE_REINFORCEMENT
    R.arrive_reinforcements(g, m, rules, condition_met=np.ones(len(sc.special_rules), dtype=bool))
    # some damage, some destroyed blocks back in the pool
    on = np.flatnonzero(g.block_status == STATUS.ON_MAP)
    for b in on:
        u = rng.random()
        if u < 0.15 and g.block_arm[b] != ARM.LEADER:
            g.block_status[b], g.block_area[b], g.block_sp[b] = STATUS.DESTROYED_TO_POOL, -1, 0
        elif u < 0.6:
            g.block_sp[b] = int(rng.integers(1, int(g.block_max_sp[b]) + 1))
    g.cubes[:] = rng.integers(0, 8, (2, 2, 3))
    ctx = R.begin_reinforcement_phase(g, m, rules, sc, active_nations=("lithuanian",) if rng.random() < 0.5 else ())
    R.replace_garrisons(g, ctx)
    rr = ctx.rules
    cnt0 = o_counts(g, m.n_areas)
    for side in (P, S):
        sp_before = int(g.block_sp[g.block_side == side].sum())
        spent_strengthen = 0
        builds = 0
        cubes_spent = 0
        build_cost = 0
        cost = {int(UnitClass.BRIGADE): rr.brigade_build_cost, int(UnitClass.DIVISION): rr.division_build_cost}
        # 8.2 combine
        while True:
            legal = np.argwhere(R.legal_combines(g, ctx, side))
            if len(legal) == 0 or rng.random() < 0.3:
                break
            d, b = legal[int(rng.integers(len(legal)))]
            assert R.apply_combine(g, ctx, side, int(d), int(b))
        assert int(g.block_sp[g.block_side == side].sum()) == sp_before
        pools = R.strategic_pools(g, m, ctx, side, lithuania_allied=True) + [R.saved_pool(g, side)]
        for pool in pools:
            for _ in range(60):
                st_ = R.legal_strengthen(g, ctx, pool)
                bu = np.argwhere(R.legal_builds(g, ctx, pool))
                if not st_.any() and len(bu) == 0:
                    break
                before = int(pool.cubes.sum())
                if st_.any() and (len(bu) == 0 or rng.random() < 0.6):
                    b = int(rng.choice(np.flatnonzero(st_)))
                    assert R.apply_strengthen(g, ctx, pool, b)
                    spent_strengthen += 1
                else:
                    b, a = bu[int(rng.integers(len(bu)))]
                    assert R.apply_build(g, ctx, pool, int(b), int(a))
                    builds += 1
                    build_cost += cost[int(g.block_class[b])]
                    assert g.block_area[b] == a and ctx.built[b]
                cubes_spent += before - int(pool.cubes.sum())
                assert (pool.cubes >= 0).all()
        assert (g.cubes >= 0).all()
        sp_after = int(g.block_sp[g.block_side == side].sum())
        assert sp_after - sp_before == spent_strengthen + builds * rr.build_sp
        assert cubes_spent == spent_strengthen + build_cost
    on = g.block_status == STATUS.ON_MAP
    assert ((g.block_sp[on] >= 1) & (g.block_sp[on] <= g.block_max_sp[on])).all()
    assert (g.block_sp[~on] == 0).all() and (g.block_area[~on] == -1).all()
    for s in (P, S):
        assert (ctx.gained_area[s][ctx.front_line[s]] <= rr.front_line_max_sp).all()
    cnt = o_counts(g, m.n_areas)
    over = (cnt > rr.max_blocks) & (cnt > cnt0) & ~m.eastern_link[None, :]
    assert not over.any()


def test_soe_8_31_neutral_blocks_make_no_front_line():
    """SoE 8.31 (RF7, G15): the front line is next to an *enemy held* area. In the Kiev Offensive
    the Lithuanian blocks stay neutral until card 23, so Radun, held by a Lithuanian block alone, is
    no enemy area: Grodno and Lida, whose only other non-Polish neighbour it is, are not on the front
    line at the first Polish REINFORCE decision (control counts the neutral block, so the front line
    once took Radun as Soviet-held and capped those cities at 1 SP)."""
    from soe_sim.engine.game import Decision, game_setup
    from soe_sim.engine.game.step import StepGame, describe_options
    from soe_sim.engine.state import STATUS

    setup = game_setup("kiev-offensive")
    ids = list(setup.game_map.ids)
    radun = ids.index("radun")
    with StepGame("kiev-offensive", 3, polish="step", soviet="random") as g:
        while not g.is_terminal and not (g.decision.kind == Decision.REINFORCE and g.decision.side == "polish"):
            d = g.decision
            g.apply(0 if d.side == "polish" else g.state_view.rand_below(d.n_options))
        st = g.state_view.raw.state
        there = [b for b in range(st.n_blocks) if st.block_status[b] == STATUS.ON_MAP and st.block_area[b] == radun]
        assert there and all(int(st.block_nation[b]) == int(Nation.LITHUANIAN) for b in there)
        opts = g.legal_options
        rows = describe_options(g.decision.kind, opts, setup, 0, st)
        front = {city: [int(opts.loc[i, "front_line"]) for i, t in enumerate(rows)
                        if t.startswith("strengthen") and f" in {city} " in t] for city in ("grodno", "lida")}
    assert front["grodno"] == [0] and front["lida"] == [0], front


# --- rows carried across the decisions of the phase --------------------------------------------------------------


def _combine_rows(g, ctx, side):
    nbk = g.n_blocks
    out_d = np.empty(nbk * nbk, dtype=np.int64)
    out_b = np.empty(nbk * nbk, dtype=np.int64)
    k = legal_combine_pairs_nb(side, g.block_side, g.block_arm, g.block_class, g.block_nation, g.block_area,
                               g.block_status, g.block_sp, g.block_max_sp, ctx.nation_active,
                               ctx.rules.combine_same_arm, out_d, out_b)
    return k, out_d, out_b


def _build_rows(g, ctx, pool, keep):
    """legal_build_pairs_nb's rows, then a row filter (``keep[b, a]``) standing for the game loop's EatS
    filters, which read only the row."""
    nbk, n = g.n_blocks, ctx.front.shape[0]
    cnt = np.zeros(n, dtype=np.int32)
    out_b = np.empty(nbk * n, dtype=np.int64)
    out_a = np.empty(nbk * n, dtype=np.int64)
    k = legal_build_pairs_nb(int(pool.side), g.block_side, g.block_arm, g.block_class, g.block_nation, g.block_area,
                             g.block_status, ctx.nation_active, ctx.nation_area_ok, ctx.eastern_link, ctx.depot,
                             ctx.enemy, ctx.rules, pool.cubes, int(pool.area), int(pool.nation), cnt,
                             np.zeros(n, dtype=np.bool_), out_b, out_a)
    rows = [i for i in range(k) if keep[out_b[i], out_a[i]]]
    k = len(rows)
    out_b[:k] = out_b[rows]
    out_a[:k] = out_a[rows]
    return k, out_b, out_a, cnt


@settings(max_examples=60, deadline=None)
@given(seed=SEEDS)
def test_reinforcement_rows_filtered_after_each_decision_equal_fresh_ones(games, game_map, rules, seed):
    """The game loop lists the combines once per side (SoE 8.2) and the strengthens and builds once per
    pool (8.3–8.5), then filters the rows after each decision (``combine_pairs_after_combine_nb``,
    ``strengthen_after_spend_nb``, ``build_pairs_after_spend_nb``): along random decision sequences from
    random positions, the filtered rows equal a fresh listing after every decision, in the same order."""
    rng = np.random.default_rng(seed)
    m = game_map
    sc, g = random_state(rng, games, m)
    ctx = random_ctx(rng, g, sc, m, rules)
    rr = ctx.rules._replace(max_blocks=int(rng.integers(1, ctx.rules.max_blocks + 2)),
                            front_line_max_sp=int(rng.integers(1, 3)), combine_same_arm=bool(rng.random() < 0.5))
    ctx = ctx._replace(rules=rr)
    for side in (P, S):
        k, out_d, out_b = _combine_rows(g, ctx, side)
        while k > 0 and rng.random() < 0.9:
            i = int(rng.integers(k))
            d, b = int(out_d[i]), int(out_b[i])
            assert R.apply_combine(g, ctx, side, d, b)
            k = combine_pairs_after_combine_nb(d, b, g.block_sp, g.block_max_sp, k, out_d, out_b)
            kf, fd, fb = _combine_rows(g, ctx, side)
            assert (k, out_d[:k].tolist(), out_b[:k].tolist()) == (kf, fd[:kf].tolist(), fb[:kf].tolist())
        for _ in range(2):
            pool = random_pool(rng, g, ctx, m, side)
            pool.cubes[:] += rng.integers(0, 6, 3)
            keep = rng.random((g.n_blocks, m.n_areas)) < 0.8
            smask = R.legal_strengthen(g, ctx, pool)
            k1 = int(smask.sum())
            k2, bb, ba, cnt = _build_rows(g, ctx, pool, keep)
            while k1 + k2 > 0 and rng.random() < 0.95:
                j = int(rng.integers(k1 + k2))
                built_area = -1
                if j < k1:
                    assert R.apply_strengthen(g, ctx, pool, int(np.flatnonzero(smask)[j]))
                else:
                    b, a = int(bb[j - k1]), int(ba[j - k1])
                    assert R.apply_build(g, ctx, pool, b, a)
                    built_area = a
                k1 = strengthen_after_spend_nb(side, g.block_arm, g.block_nation, g.block_area, g.block_sp,
                                               g.block_max_sp, ctx.front_line, ctx.gained_area, rr, pool.cubes, smask)
                k2 = build_pairs_after_spend_nb(side, g.block_arm, g.block_class, g.block_nation, g.block_status,
                                                ctx.eastern_link, rr, pool.cubes, built_area, cnt, k2, bb, ba)
                fresh = R.legal_strengthen(g, ctx, pool)
                assert k1 == int(fresh.sum()) and (smask == fresh).all()
                kf, fb, fa, fcnt = _build_rows(g, ctx, pool, keep)
                assert (k2, bb[:k2].tolist(), ba[:k2].tolist()) == (kf, fb[:kf].tolist(), fa[:kf].tolist())
                assert (cnt == fcnt).all()
