"""Battles inside the game (SoE 7.4–7.44) on the real map: the rulebook's Zlobin/Kalenkovichi
sequence, retreats, encirclement, attacker retreat, leaders, and the resolver shared with the odds
calculator."""
from __future__ import annotations

import numpy as np
import pytest

from soe_sim.battle import Battle, resolve
from soe_sim.battle import nb as bnb
from soe_sim.data import load_blocks, load_map, load_scenario
from soe_sim.data.enums import SIDE
from soe_sim.engine.battles import find_battles, resolve_battle
from soe_sim.engine.state import STATUS, new_game
from soe_sim.rules import load_rules


@pytest.fixture(scope="module")
def world():
    return load_map(), load_blocks(), load_rules()


def tutorial(world):
    game_map, roster, rules = world
    state = new_game(load_scenario("tutorial"), game_map, roster, rules)
    ids = {bid: i for i, bid in enumerate(roster.blocks["id"].to_numpy()[state.block_roster])}
    return state, ids


def move(state, game_map, block, to, arrival):
    """Move a block as an executed order would: remember the link it came along (SoE 7.31)."""
    state.block_prev_area[block] = state.block_area[block]
    state.block_area[block] = game_map.index(to)
    state.block_arrival[block] = arrival


def test_soe_7_41_zlobin_and_kalenkovichi_sequence(world):
    """SoE 7.3/7.41/7.42/7.44/6.1 worked example, battle by battle.

    Kalenkovichi (smaller, first): Polish cavalry (2) + 3 = 5 vs Soviet brigade (2) + 1 = 3; the
    Soviet loses 1 SP, retreats to Rechitsa (closest to a Soviet depot) and his initiative 1 flips
    to the Poles. Zlobin: Soviets 4 (north, from Rohachev) + 4 + 3 (east, from Gomel) + 2 = 13 vs
    Poles: block 1 (3 SP, force-marched in first from Charyshi, counts 1) + block 6 (4 SP,
    supporting, from the west) + hand card 4 (+1) = 10; no fortification because the northern side
    is unfortified; the flank attack is cancelled by the supporting block. Losses 3 and 4, great
    victory (+1 VP), the Poles retreat to Charyshi and the initiative flips back to the Soviets.
    """
    game_map, roster, rules = world
    state, ids = tutorial(world)
    north = int(game_map.front[game_map.index("zlobin")])  # the front index of Zlobin (SoE 1.1)
    state.initiative_side[north] = SIDE.SOVIET
    state.initiative_level[north] = 1
    vp_before = int(state.vp[0])
    half = np.zeros(state.n_blocks, dtype=bool)

    move(state, game_map, ids["pl-9-id"], "zlobin", 1)  # Forced March Out (SoE 7.2)
    half[ids["pl-9-id"]] = True
    move(state, game_map, ids["ru-10-id"], "zlobin", 2)  # Move To from the north
    move(state, game_map, ids["ru-2-id"], "zlobin", 3)  # ... and from the east
    move(state, game_map, ids["ru-57-id"], "zlobin", 4)
    move(state, game_map, ids["pl-14-id"], "zlobin", 5)  # Polish supporting block from the west
    move(state, game_map, ids["pl-cav-1"], "kalenkovichi", 6)

    battles = find_battles(state)
    assert [game_map.areas["id"][a] for a, _ in battles] == ["kalenkovichi", "zlobin"]  # SoE 7.4

    kal = resolve_battle(state, game_map, battles[0][0], 3, 1, block_half=half, rules=rules)
    assert (kal["attacker"], kal["defender"]) == (SIDE.POLISH, SIDE.SOVIET)
    assert (kal["attacker_cv"], kal["defender_cv"]) == (5, 3)
    assert (kal["attacker_losses"], kal["defender_losses"]) == (0, 1)
    assert kal["winner"] == SIDE.POLISH
    assert game_map.areas["id"][state.block_area[ids["ru-inf-1"]]] == "rechitsa"
    assert state.block_sp[ids["ru-inf-1"]] == 1
    assert (state.initiative_side[north], state.initiative_level[north]) == (SIDE.POLISH, 1)

    zl = resolve_battle(state, game_map, battles[1][0], 2, 4 + 1, block_half=half, rules=rules)
    assert (zl["attacker"], zl["defender"]) == (SIDE.SOVIET, SIDE.POLISH)
    assert (zl["attacker_cv"], zl["defender_cv"]) == (13, 10)
    assert (zl["attacker_losses"], zl["defender_losses"]) == (3, 4)
    assert zl["winner"] == SIDE.SOVIET and zl["great_victory"] == 1
    assert sorted(int(state.block_sp[ids[b]]) for b in ("pl-9-id", "pl-14-id")) == [1, 2]
    assert sorted(int(state.block_sp[ids[b]]) for b in ("ru-10-id", "ru-2-id", "ru-57-id")) == [2, 3, 3]
    for b in ("pl-9-id", "pl-14-id"):
        assert game_map.areas["id"][state.block_area[ids[b]]] == "charyshi"
    assert (state.initiative_side[north], state.initiative_level[north]) == (SIDE.SOVIET, 1)
    assert zl["vp_delta"] != 0 and int(state.vp[0]) != vp_before  # +1 VP to the Soviets


def test_engine_battle_matches_the_odds_resolver(world):
    """The game-state battle and the stand-alone resolver agree for random card pairs."""
    game_map, roster, rules = world
    rng = np.random.default_rng(4)
    for _ in range(40):
        state, ids = tutorial(world)
        move(state, game_map, ids["ru-10-id"], "zlobin", 1)
        move(state, game_map, ids["pl-9-id"], "zlobin", 2)
        move(state, game_map, ids["ru-2-id"], "zlobin", 3)
        a, d = int(rng.integers(0, 6)), int(rng.integers(0, 6))
        sp = {b: int(state.block_sp[ids[b]]) for b in ("ru-10-id", "ru-2-id", "pl-9-id")}
        rec = resolve_battle(state, game_map, game_map.index("zlobin"), d, a, rules=rules)
        # ru-10 entered first: the Soviets defend (SoE 7.32), ru-2 supports from Gomel; the Pole
        # attacks only along Zlobin's fortified link from Charyshi (SoE 1.2).
        battle = Battle.from_spec(f"{sp['pl-9-id']}i", f"{sp['ru-10-id']}i/{sp['ru-2-id']}i",
                                  attacker_side="polish", fortified=True)
        ref = resolve(battle, d, a)
        assert rec["attacker_cv"] == ref["attacker_cv"] and rec["defender_cv"] == ref["defender_cv"]
        assert rec["attacker_losses"] == ref["attacker_losses"]
        assert rec["defender_losses"] == ref["defender_losses"]
        assert (rec["winner"] == SIDE.POLISH) == ref["attacker_wins"]


def test_soe_7_42_defender_encircled(world):
    """SoE 7.42: a defeated defender with no area to retreat to is eliminated permanently, +1 VP
    per block to the winner."""
    game_map, roster, rules = world
    state, ids = tutorial(world)
    # Polish block alone in Rechitsa (neighbours Kalenkovichi and Gomel), attacked from both.
    pl = ids["pl-cav-1"]
    state.block_area[pl] = game_map.index("rechitsa")
    move(state, game_map, ids["ru-inf-1"], "rechitsa", 1)  # from Kalenkovichi
    move(state, game_map, ids["ru-2-id"], "rechitsa", 2)  # from Gomel
    vp = int(state.vp[0])
    rec = resolve_battle(state, game_map, game_map.index("rechitsa"), 4, 0, rules=rules)
    assert rec["winner"] == SIDE.SOVIET
    assert state.block_status[pl] in (STATUS.ELIMINATED_PERMANENT, STATUS.DESTROYED_TO_POOL)
    if state.block_status[pl] == STATUS.ELIMINATED_PERMANENT:
        assert rec["encircled"] == 1 and int(state.vp[0]) < vp


def test_soe_7_42_attacker_retreats_along_its_link(world):
    """SoE 7.42: a defeated attacker goes back to the area each block came from."""
    game_map, roster, rules = world
    state, ids = tutorial(world)
    move(state, game_map, ids["ru-inf-1"], "mazyr", 1)  # 2-SP brigade attacks the Polish cavalry
    rec = resolve_battle(state, game_map, game_map.index("mazyr"), 0, 4, rules=rules)
    assert rec["winner"] == SIDE.POLISH
    b = ids["ru-inf-1"]
    if state.block_status[b] == STATUS.ON_MAP:
        assert game_map.areas["id"][state.block_area[b]] == "kalenkovichi"


def test_attacker_retreat_into_enemy_area_is_elimination(world):
    """SoE 7.42: if the area it came from is now enemy-occupied, the attacker block is eliminated."""
    game_map, roster, rules = world
    state, ids = tutorial(world)
    move(state, game_map, ids["ru-inf-1"], "mazyr", 1)
    state.block_area[ids["pl-cav-2"]] = game_map.index("kalenkovichi")
    state.block_status[ids["pl-cav-2"]] = STATUS.ON_MAP
    state.block_sp[ids["pl-cav-2"]] = 1
    rec = resolve_battle(state, game_map, game_map.index("mazyr"), 0, 4, rules=rules)
    assert rec["winner"] == SIDE.POLISH
    b = ids["ru-inf-1"]
    assert state.block_status[b] in (STATUS.ELIMINATED_PERMANENT, STATUS.DESTROYED_TO_POOL)


def test_withdrawn_defenders_leave_no_battle(world):
    """SoE 7.2: with every defender gone and no garrison, the attacker takes the area unopposed."""
    game_map, roster, rules = world
    state, ids = tutorial(world)
    move(state, game_map, ids["ru-10-id"], "zlobin", 1)
    move(state, game_map, ids["pl-9-id"], "zlobin", 2)
    rec = resolve_battle(state, game_map, game_map.index("zlobin"), 0, 0, withdraw=bnb.WITHDRAW_OK, rules=rules)
    assert rec["fought"] == 0 and rec["winner"] == rec["attacker"]


def _rechitsa_battle(world, first_from):
    """Tutorial map: a Polish 4-SP block alone in Rechitsa (neighbours Kalenkovichi and Gomel) attacked
    by two 1-SP Soviet blocks, the lower-index one from ``first_from``, the other from Gomel."""
    game_map, roster, rules = world
    state, ids = tutorial(world)
    ix = game_map.index
    pl = ids["pl-14-id"]
    state.block_area[pl] = ix("rechitsa")
    state.block_sp[pl] = 4
    first, second = sorted([ids["ru-inf-1"], ids["ru-2-id"]])
    state.block_area[first] = ix(first_from)
    state.block_area[second] = ix("gomel")
    state.block_sp[first] = state.block_sp[second] = 1
    move(state, game_map, first, "rechitsa", 1)
    move(state, game_map, second, "rechitsa", 2)
    for b in range(state.n_blocks):  # nothing else in Rechitsa or Kalenkovichi
        if b not in (pl, first, second) and state.block_status[b] == STATUS.ON_MAP \
                and state.block_area[b] in (ix("rechitsa"), ix("kalenkovichi")):
            state.block_area[b] = ix("slutsk") if state.block_side[b] == SIDE.POLISH else ix("gomel")
    state.garrison_side[ix("rechitsa")] = -1
    return state, pl, first


def test_soe_7_42_a_destroyed_attacker_blocks_no_retreat_road(world):
    """SoE 7.42 "may not retreat along a road or rail blocked by enemy blocks": the attacker from
    Kalenkovichi is destroyed by the battle's losses (7.41.5), so that road is free again and the
    defeated Poles retreat along it instead of being encircled (they were, with 2 VP to the Soviets)."""
    game_map, _, rules = world
    state, pl, first = _rechitsa_battle(world, "kalenkovichi")
    vp = int(state.vp[0])
    rec = resolve_battle(state, game_map, game_map.index("rechitsa"), 5, 2, rules=rules)
    assert rec["winner"] == SIDE.SOVIET and state.block_status[first] == STATUS.DESTROYED_TO_POOL
    assert rec["encircled"] == 0
    assert state.block_status[pl] == STATUS.ON_MAP and state.block_area[pl] == game_map.index("kalenkovichi")
    assert int(state.vp[0]) == vp


def test_soe_7_42_retreat_goal_is_a_key_city_the_defender_occupies_now(world):
    """SoE 7.42 / 1.3: a defeated defender retreats toward a friendly key city — one its garrison or
    blocks occupy now. A key city the side has emptied is neutral at once, whatever control the state
    still records until the phase end (``control_nb``). Plonsk, attacked from Bielsk: with a Polish
    garrison in Ciechanow the Poles retreat there; with Ciechanow empty they head for Warsaw (via
    Modlin), and so they do when the recorded control of the empty city is still Polish."""
    game_map, roster, rules = world
    ix = game_map.index
    ids = {bid: i for i, bid in enumerate(roster.blocks["id"].to_numpy()[tutorial(world)[0].block_roster])}
    pl, ru = ids["pl-14-id"], ids["ru-2-id"]
    ciechanow = ix("ciechanow")

    def retreat(ciechanow_garrison, ciechanow_control):
        state, _ = tutorial(world)
        for b in range(state.n_blocks):  # an empty board but for the two blocks
            if b not in (pl, ru) and state.block_status[b] == STATUS.ON_MAP:
                state.block_status[b] = STATUS.FORCE_POOL
                state.block_area[b] = -1
        state.garrison_side[:] = -1
        state.control[game_map.arrays.vp > 0] = -1
        state.garrison_side[ix("warsaw")] = state.control[ix("warsaw")] = SIDE.POLISH
        state.garrison_side[ciechanow] = ciechanow_garrison
        state.control[ciechanow] = ciechanow_control
        for b, area, sp in ((pl, "plonsk", 4), (ru, "bielsk", 4)):
            state.block_status[b] = STATUS.ON_MAP
            state.block_area[b] = ix(area)
            state.block_sp[b] = sp
        move(state, game_map, ru, "plonsk", 1)
        rec = resolve_battle(state, game_map, ix("plonsk"), 9, 0, rules=rules)
        assert rec["winner"] == SIDE.SOVIET and state.block_status[pl] == STATUS.ON_MAP
        return game_map.ids[state.block_area[pl]]

    assert retreat(SIDE.POLISH, SIDE.POLISH) == "ciechanow"
    assert retreat(-1, -1) == "modlin"
    assert retreat(-1, SIDE.POLISH) == "modlin"
