"""Orders and movement (SoE 7.2, 7.3, 7.31–7.33, 7.5, 7.6, 7.71, 2.2): the rulebook examples on the
tutorial map, a plain-Python oracle of ``legal_moves_nb`` on random positions, and invariants of
move sequences. Readings: docs/rules.md "Engine: orders and movement" (O1…)."""
from __future__ import annotations

import numpy as np
import pytest

from soe_sim.data import load_blocks, load_map, load_scenario
from soe_sim.data.enums import ARM, FRONT, SIDE, UnitClass
from soe_sim.engine.battles.nb import battle_inputs_nb, defender_side_nb
from soe_sim.engine.game import policies as pnb
from soe_sim.engine.nb import PULLBACK_NONE, check_supply, overstack_pullback_nb
from soe_sim.engine.orders import (
    N_MOVE_INFO,
    N_WITHDRAW_INFO,
    OrderStatus,
    OrderType,
    apply_move,
    legal_moves,
    legal_orders,
    legal_rail,
    move_capacity,
    nb,
    new_order_state,
    order_constants,
    place_order,
)
from soe_sim.engine.state import STATUS, engine_constants, new_game
from soe_sim.rules import load_rules

P, S = int(SIDE.POLISH), int(SIDE.SOVIET)
N, SO = int(FRONT.NORTH), int(FRONT.SOUTH)
T = OrderType


@pytest.fixture(scope="module")
def world():
    return load_map(), load_blocks(), load_rules()


@pytest.fixture(scope="module")
def orules(world):
    return order_constants(world[2])


def tutorial(world):
    game_map, roster, rules = world
    state = new_game(load_scenario("tutorial"), game_map, roster, rules)
    check_supply(state, game_map, engine_constants(rules), apply=False)
    ids = {bid: i for i, bid in enumerate(roster.blocks["id"].to_numpy()[state.block_roster])}
    return state, new_order_state(state), ids


def put(state, game_map, block, area, sp=None):
    """Place a (force-pool) block on the map for a test position."""
    state.block_status[block] = STATUS.ON_MAP
    state.block_area[block] = game_map.index(area)
    state.block_sp[block] = state.block_max_sp[block] if sp is None else sp
    state.block_in_supply[block] = True


def order(state, orders, game_map, side, otype, area):
    front = int(game_map.front[game_map.index(area)])
    return place_order(state, orders, game_map, side, front, otype, area)


def moves0(state, orders, game_map, orules, o):
    """Legal moves without detachments: {(block, dest, via)}."""
    return {(b, d, v) for b, d, v, x in legal_moves(state, orders, game_map, orules, o) if x == 0}


def finish(orders, o):
    return OrderStatus(int(nb.finish_order_nb(orders, o)))


# ---------------------------------------------------------------------------------------------------
# SoE 7.2 placement


def test_soe_7_2_order_placement_example(world, orules):
    """SoE 7.2 example: the Soviet (+1 orders card: 3 orders) places Recon, the Pole (2 orders) Move
    Out, the Soviet Defend, the Pole Recon (his last slot: only Recon is legal), the Soviet Move Out."""
    game_map, _, _ = world
    state, orders, ids = tutorial(world)
    sov = legal_orders(state, orders, game_map, orules, S, N, 3)
    assert (T.RECON, "zlobin") in sov and (None, None) not in sov  # Recon still owed: no pass
    order(state, orders, game_map, S, T.RECON, "zlobin")
    pol = legal_orders(state, orders, game_map, orules, P, N, 2)
    assert (T.MOVE_OUT, "charyshi") in pol
    order(state, orders, game_map, P, T.MOVE_OUT, "charyshi")
    sov = legal_orders(state, orders, game_map, orules, S, N, 3)
    assert (T.DEFEND, "gomel") in sov and (None, None) in sov
    order(state, orders, game_map, S, T.DEFEND, "gomel")
    pol = legal_orders(state, orders, game_map, orules, P, N, 2)
    assert pol and all(t == T.RECON for t, _ in pol)  # one slot left, Recon owed
    order(state, orders, game_map, P, T.RECON, "rohachev")
    sov = legal_orders(state, orders, game_map, orules, S, N, 3)
    assert (T.MOVE_OUT, "gomel") in sov  # the second Gomel block executes it
    order(state, orders, game_map, S, T.MOVE_OUT, "gomel")
    assert legal_orders(state, orders, game_map, orules, S, N, 3) == []
    assert legal_orders(state, orders, game_map, orules, P, N, 2) == []
    assert int(orders.pool_used[S, T.RECON]) == 1 and int(orders.placed[S, N]) == 3


def test_soe_7_2_same_type_limit_is_a_rule_constant(world, orules):
    """SoE 7.2 Multiple Orders ("orders.max_same_type_per_area"): a second Defend in Gomel (two
    Soviet blocks, each executing its own order, O2) is listed only when a variant allows two of a
    type per area; a limit of 0 allows no order at all."""
    game_map, _, _ = world
    state, orders, _ = tutorial(world)
    order(state, orders, game_map, S, T.RECON, "zlobin")
    order(state, orders, game_map, S, T.DEFEND, "gomel")
    assert (T.DEFEND, "gomel") not in legal_orders(state, orders, game_map, orules, S, N, 4)
    two = orules._replace(max_same_type_per_area=2)
    assert (T.DEFEND, "gomel") in legal_orders(state, orders, game_map, two, S, N, 4)
    order(state, orders, game_map, S, T.DEFEND, "gomel")
    assert (T.DEFEND, "gomel") not in legal_orders(state, orders, game_map, two, S, N, 4)  # two placed: the limit
    state0, orders0, _ = tutorial(world)
    assert legal_orders(state0, orders0, game_map, orules._replace(max_same_type_per_area=0), S, N, 3) == []


def test_soe_7_2_recon_range_pool_and_eastern_links(world, orules):
    game_map, _, _ = world
    state, orders, ids = tutorial(world)
    # Recon: within recon_range of a friendly block, "even across enemy blocks"; never an Eastern Link
    # for the Poles (Klintsy is next to Soviet Gomel, 3 links from Charyshi).
    pol = legal_orders(state, orders, game_map, orules, P, N, 2)
    assert (T.RECON, "gomel") in pol
    assert all(a != "klintsy" for _, a in pol)
    sov = legal_orders(state, orders, game_map, orules, S, N, 2)
    assert (T.RECON, "klintsy") in sov  # the Soviets may
    # at most one order of a type per area; the pool of a type runs out
    order(state, orders, game_map, P, T.DEFEND, "charyshi")
    pol = legal_orders(state, orders, game_map, orules, P, N, 5)
    assert (T.DEFEND, "charyshi") not in pol
    orders.pool_used[P, T.RECON] = orules.pool[T.RECON]
    pol = legal_orders(state, orders, game_map, orules, P, N, 5)
    assert all(t != T.RECON for t, _ in pol) and (None, None) in pol  # no Recon possible: not owed


def test_soe_7_2_multiple_orders_examples(world, orules):
    """SoE 7.2 "Multiple Orders": one block can carry one order; two blocks two."""
    game_map, _, _ = world
    state, orders, ids = tutorial(world)
    sov = legal_orders(state, orders, game_map, orules, S, N, 5)
    assert (T.MOVE_OUT, "rohachev") in sov and (T.MOVE_TO, "klichev") in sov
    order(state, orders, game_map, S, T.DEFEND, "rohachev")  # Rohachev holds one Soviet block
    sov = legal_orders(state, orders, game_map, orules, S, N, 5)
    assert (T.MOVE_OUT, "rohachev") not in sov  # "may not place a 'Move Out' order on that same area"
    assert (T.MOVE_TO, "klichev") not in sov  # only the Defend block reaches Klichev
    assert (T.MOVE_TO, "zlobin") in sov  # the Gomel blocks reach Zlobin
    # Gomel holds two blocks: Defend then Reorganization (ru-57-id is below its maximum)
    order(state, orders, game_map, S, T.DEFEND, "gomel")
    sov = legal_orders(state, orders, game_map, orules, S, N, 5)
    assert (T.REORGANIZE, "gomel") in sov
    order(state, orders, game_map, S, T.REORGANIZE, "gomel")
    sov = legal_orders(state, orders, game_map, orules, S, N, 5)
    assert (T.MOVE_OUT, "gomel") not in sov and (T.RAIL_TRANSPORT, "gomel") not in sov
    # Move To Zlobin now needs a block other than the three committed ones: Kalenkovichi's brigade
    assert (T.MOVE_TO, "zlobin") in sov


def test_soe_7_71_out_of_supply_orders(world, orules):
    """SoE 7.71: out-of-supply blocks only execute Move Out, Withdraw or Defend Area."""
    game_map, _, _ = world
    state, orders, ids = tutorial(world)
    state.block_in_supply[:] = False
    pol = {t for t, a in legal_orders(state, orders, game_map, orules, P, N, 5) if a == "charyshi"}
    assert pol == {T.RECON, T.MOVE_OUT, T.WITHDRAW, T.DEFEND}
    pol_to = {t for t, a in legal_orders(state, orders, game_map, orules, P, N, 5) if a == "zlobin"}
    assert pol_to == {T.RECON}


# ---------------------------------------------------------------------------------------------------
# SoE 7.3 execution examples


def test_soe_7_3_zlobin_movement_example(world, orules):
    """SoE 7.3 worked example on the tutorial scenario."""
    game_map, _, _ = world
    state, orders, ids = tutorial(world)
    ix = game_map.index
    fm = order(state, orders, game_map, P, T.FORCED_MARCH_OUT, "charyshi")
    sov_to = order(state, orders, game_map, S, T.MOVE_TO, "zlobin")
    pol_to = order(state, orders, game_map, P, T.MOVE_TO, "zlobin")
    recon = order(state, orders, game_map, S, T.RECON, "mazyr")

    # Forced marches: the Pole moves block 1 into Zlobin and will defend it.
    b1, b6, b7 = ids["pl-9-id"], ids["pl-14-id"], ids["pl-cav-1"]
    assert (b1, "zlobin", "charyshi") in moves0(state, orders, game_map, orules, fm)
    apply_move(state, orders, game_map, orules, fm, b1, "zlobin", "charyshi")
    assert finish(orders, fm) == OrderStatus.EXECUTED
    assert defender_side_nb(state, ix("zlobin")) == P
    assert orders.forced_march[b1] and state.block_prev_area[b1] == ix("charyshi")

    # Recon: the Soviet looks at block 7 in Mazyr.
    assert not orders.seen[S, b7]
    assert nb.execute_recon_nb(state, orders, recon) == 1
    assert orders.seen[S, b7] and not orders.seen[S, b1]

    # Moves: Soviet block 2 from the north, 3 and 4 from the east; block 5 stays.
    b2, b3, b4, b5 = ids["ru-10-id"], ids["ru-2-id"], ids["ru-57-id"], ids["ru-inf-1"]
    opts = moves0(state, orders, game_map, orules, sov_to)
    assert opts == {(b2, "zlobin", "rohachev"), (b3, "zlobin", "gomel"), (b4, "zlobin", "gomel"),
                    (b5, "zlobin", "kalenkovichi")}
    assert nb.min_moves_required_nb(state, orders, game_map.arrays, orules, sov_to) == 1
    info = apply_move(state, orders, game_map, orules, sov_to, b2, "zlobin", "rohachev")
    assert info["pinned"] == b1 and orders.pinned[b1]
    apply_move(state, orders, game_map, orules, sov_to, b3, "zlobin", "gomel")
    apply_move(state, orders, game_map, orules, sov_to, b4, "zlobin", "gomel")
    assert nb.min_moves_required_nb(state, orders, game_map.arrays, orules, sov_to) == 0
    assert finish(orders, sov_to) == OrderStatus.EXECUTED
    assert list(state.block_arrival[[b1, b2, b3, b4]]) == [1, 2, 3, 4]

    # The Pole moves block 6 from the west; cavalry 7 cannot pass Kalenkovichi (Soviet block 5).
    opts = moves0(state, orders, game_map, orules, pol_to)
    assert opts == {(b6, "zlobin", "charyshi")}
    apply_move(state, orders, game_map, orules, pol_to, b6, "zlobin", "charyshi")
    assert finish(orders, pol_to) == OrderStatus.EXECUTED
    assert not orders.forced_march[b6]

    # The battle sees: defender the Poles; attacks from the north and the east; one supporting
    # direction (block 6 from the west).
    nbk = state.n_blocks
    att, dfn, adir = (np.empty(nbk, np.int64) for _ in range(3))
    half = np.zeros(nbk, np.bool_)
    nb.block_half_nb(orders, half)
    assert half[b1] and not half[b6]
    n_att, n_def, n_support, _ = battle_inputs_nb(state, game_map.arrays, ix("zlobin"), P, half, att, dfn, adir)
    assert (n_att, n_def, n_support) == (3, 2, 1)
    assert set(adir[:n_att]) == {ix("rohachev"), ix("gomel")}


def test_soe_7_3_forced_march_pins_forced_march_out(world, orules):
    """SoE 7.3 example: Soviet forced marches pin every Polish block; the Polish Forced March Out is
    removed and the Poles fight at full strength, the Soviets at half."""
    game_map, _, _ = world
    state, orders, ids = tutorial(world)
    pol = order(state, orders, game_map, P, T.FORCED_MARCH_OUT, "charyshi")
    sov = order(state, orders, game_map, S, T.FORCED_MARCH_OUT, "gomel")
    b3, b4 = ids["ru-2-id"], ids["ru-57-id"]
    opts = moves0(state, orders, game_map, orules, sov)
    assert (b3, "charyshi", "zlobin") in opts and (b4, "charyshi", "zlobin") in opts
    apply_move(state, orders, game_map, orules, sov, b3, "charyshi", "zlobin")
    apply_move(state, orders, game_map, orules, sov, b4, "charyshi", "zlobin")
    assert orders.pinned[ids["pl-9-id"]] and orders.pinned[ids["pl-14-id"]]
    assert legal_moves(state, orders, game_map, orules, pol) == []
    assert nb.min_moves_required_nb(state, orders, game_map.arrays, orules, pol) == 0
    used = int(orders.pool_used[P, T.FORCED_MARCH_OUT])
    assert finish(orders, pol) == OrderStatus.REMOVED
    assert int(orders.pool_used[P, T.FORCED_MARCH_OUT]) == used - 1  # back in the pool
    half = np.zeros(state.n_blocks, np.bool_)
    nb.block_half_nb(orders, half)
    assert half[b3] and half[b4] and not half[ids["pl-9-id"]] and not half[ids["pl-14-id"]]


def test_soe_7_32_pin_example(world, orules):
    """SoE 7.32: two Soviet blocks move into an area held by four Polish blocks with a Move Out
    order: two are pinned, at least one must move out (not along the road the Soviets came by),
    the last may stay."""
    game_map, _, _ = world
    state, orders, ids = tutorial(world)
    put(state, game_map, ids["pl-inf-1"], "charyshi")
    put(state, game_map, ids["pl-inf-2"], "charyshi")
    pol = order(state, orders, game_map, P, T.MOVE_OUT, "charyshi")
    sov = order(state, orders, game_map, S, T.FORCED_MARCH_OUT, "gomel")
    for b in (ids["ru-2-id"], ids["ru-57-id"]):
        apply_move(state, orders, game_map, orules, sov, b, "charyshi", "zlobin")
    polish = [ids[k] for k in ("pl-9-id", "pl-14-id", "pl-inf-1", "pl-inf-2")]
    pinned = [b for b in polish if orders.pinned[b]]
    free = [b for b in polish if not orders.pinned[b]]
    assert len(pinned) == 2
    opts = moves0(state, orders, game_map, orules, pol)
    assert {b for b, _, _ in opts} == set(free)
    assert {d for _, d, _ in opts} == {"bobruisk", "kopatkevichi"}  # not back along the Zlobin road
    assert nb.min_moves_required_nb(state, orders, game_map.arrays, orules, pol) == 1
    b, d, v = sorted(opts)[0]
    apply_move(state, orders, game_map, orules, pol, b, d, v)
    assert nb.min_moves_required_nb(state, orders, game_map.arrays, orules, pol) == 0
    assert len(moves0(state, orders, game_map, orules, pol)) == 2  # the last one may still go


def test_soe_7_3_move_to_may_not_come_up_short(world, orules):
    """SoE 7.3 cavalry example: an enemy block moves in between; the Move To cannot be executed,
    a Move Out could have entered the enemy area."""
    game_map, _, _ = world
    state, orders, ids = tutorial(world)
    b5, b7 = ids["ru-inf-1"], ids["pl-cav-1"]
    state.block_area[b5] = game_map.index("rechitsa")
    to = order(state, orders, game_map, P, T.MOVE_TO, "zlobin")
    fm = order(state, orders, game_map, S, T.FORCED_MARCH_OUT, "rechitsa")
    assert (b7, "zlobin", "kalenkovichi") in moves0(state, orders, game_map, orules, to)
    apply_move(state, orders, game_map, orules, fm, b5, "kalenkovichi", "rechitsa")
    assert all(b != b7 for b, _, _ in moves0(state, orders, game_map, orules, to))
    # the Move Out the block could have had instead (placed now: a placed Move Out keeps its block, O7)
    out = order(state, orders, game_map, P, T.MOVE_OUT, "mazyr")
    out_opts = moves0(state, orders, game_map, orules, out)
    assert (b7, "kalenkovichi", "mazyr") in out_opts
    assert all(d != "zlobin" for _, d, _ in out_opts)  # the move stops in Kalenkovichi


def test_soe_7_33_lutsk_and_link_limit(world, orules):
    """SoE 7.33: stacking is only enforced at the end of the phase (the third block from Sokal may
    move; the phase-end pull-back sends the last arrival back to Sokal); at most four blocks of a
    side along one road into a battle area."""
    game_map, _, _ = world
    state, orders, ids = tutorial(world)
    ix = game_map.index
    lutsk_defenders = [ids["pl-9-id"], ids["pl-14-id"]]
    movers = [ids["pl-inf-1"], ids["pl-inf-2"], ids["pl-cav-2"]]
    for b in lutsk_defenders:
        put(state, game_map, b, "lutsk")
    for b in movers:
        put(state, game_map, b, "sokal")
    to = order(state, orders, game_map, P, T.MOVE_TO, "lutsk")
    for b in movers:
        opts = moves0(state, orders, game_map, orules, to)
        assert (b, "lutsk", "sokal") in opts
        apply_move(state, orders, game_map, orules, to, b, "lutsk", "sokal")
    assert int((state.block_area == ix("lutsk")).sum()) == 5
    n = game_map.n_areas
    dest = np.empty(state.n_blocks, np.int64)
    counts = np.zeros(2, np.int64)
    overstack_pullback_nb(game_map.adj_indptr, game_map.adj_indices, game_map.eastern_link, np.zeros(n, bool),
                          np.zeros(n, np.int32), state.block_side, state.block_area, state.block_status,
                          state.block_sp, state.block_prev_area, state.block_arrival, P, orules.max_blocks,
                          dest, counts, state.block_nation, np.zeros((0, 0), bool))
    assert dest[movers[-1]] == ix("sokal") and all(dest[b] == PULLBACK_NONE for b in movers[:-1])

    # link limit: five Polish blocks attack a Soviet-held Lutsk from Sokal
    state, orders, ids = tutorial(world)
    put(state, game_map, ids["ru-inf-1"], "lutsk")
    attackers = [ids[k] for k in ("pl-9-id", "pl-14-id", "pl-inf-1", "pl-inf-2", "pl-cav-2")]
    for b in attackers:
        put(state, game_map, b, "sokal")
    to = order(state, orders, game_map, P, T.MOVE_TO, "lutsk")
    for b in attackers[:4]:
        apply_move(state, orders, game_map, orules, to, b, "lutsk", "sokal")
    opts = moves0(state, orders, game_map, orules, to)
    assert all(v != "sokal" for _, _, v in opts)
    assert (attackers[4], "lutsk", "berestechko") in opts  # cavalry: around, via Berestechko


# ---------------------------------------------------------------------------------------------------
# Withdraw, Defend, Reorganize, Rail, detachments


def withdraw_under_attack(world, orules, area, enemy_type, enemy_area, enemy_block, enemy_via):
    """Tutorial position: a Polish Withdraw on ``area``, then a Soviet ``enemy_type`` order from
    ``enemy_area`` moves ``enemy_block`` into it via ``enemy_via``; the Withdraw is executed.
    Returns (state, orders, ids, mode, dest, info)."""
    game_map = world[0]
    state, orders, ids = tutorial(world)
    wd = order(state, orders, game_map, P, T.WITHDRAW, area)
    sov = order(state, orders, game_map, S, enemy_type, enemy_area)
    apply_move(state, orders, game_map, orules, sov, ids[enemy_block], area, enemy_via)
    dest = np.empty(state.n_blocks, np.int64)
    info = np.empty(N_WITHDRAW_INFO, np.int64)
    mode = nb.execute_withdraw_nb(state, orders, game_map.arrays, orules, wd, dest, info)
    return state, orders, ids, mode, dest, info


def test_soe_7_2_a_slot_owed_to_recon_takes_no_other_order(world, orules):
    """SoE 7.2 "Each player may place 2 orders on each front ..., one of which must always be a Recon"
    (O1): with both Polish Recon markers spent on the north, the southern front's second slot stays a
    Recon slot — nothing else may fill it, and the side stops placing there."""
    game_map, _, _ = world
    state, orders, ids = tutorial(world)
    order(state, orders, game_map, P, T.RECON, "zlobin")
    order(state, orders, game_map, P, T.RECON, "gomel")
    assert orders.pool_used[P, T.RECON] == orules.pool[T.RECON]
    put(state, game_map, ids["pl-cav-2"], "mazyr")
    south = legal_orders(state, orders, game_map, orules, P, SO, 2)
    assert (T.DEFEND, "mazyr") in south and (None, None) in south  # the first slot is free
    order(state, orders, game_map, P, T.DEFEND, "mazyr")
    assert legal_orders(state, orders, game_map, orules, P, SO, 2) == []


def test_soe_7_3_a_forced_march_out_leaves_a_block_for_the_move_out_of_its_area(world, orules):
    """SoE 7.3 example (Charyshi, two blocks: 'Force March Out' one block, 'Move Out' the other) and 7.2
    (movement orders "may not be ignored once placed", O7): once the Forced March Out has moved one
    block, the other block stays for the Move Out, which it then executes."""
    game_map, _, _ = world
    state, orders, ids = tutorial(world)
    fm = order(state, orders, game_map, P, T.FORCED_MARCH_OUT, "charyshi")
    mo = order(state, orders, game_map, P, T.MOVE_OUT, "charyshi")
    b1, b6 = ids["pl-9-id"], ids["pl-14-id"]
    assert {b for b, _, _ in moves0(state, orders, game_map, orules, fm)} == {b1, b6}
    apply_move(state, orders, game_map, orules, fm, b1, "bobruisk", "charyshi")
    assert not moves0(state, orders, game_map, orules, fm)  # b6 is kept for the Move Out
    assert finish(orders, fm) == OrderStatus.EXECUTED
    assert {b for b, _, _ in moves0(state, orders, game_map, orules, mo)} == {b6}


def test_o11_a_detachment_hides_the_strength_the_enemy_saw(world, orules):
    """O11 (SoE 2.2): the Soviets saw the 4-SP division at Charyshi (a Recon); it then moves out and
    leaves a brigade behind, a choice the Soviets do not see — so they no longer know either block's
    SP (the features read the block's current SP through the flag)."""
    game_map, _, _ = world
    state, orders, ids = tutorial(world)
    b = ids["pl-14-id"]
    orders.seen[S, b] = True
    mo = order(state, orders, game_map, P, T.MOVE_OUT, "charyshi")
    info = apply_move(state, orders, game_map, orules, mo, b, "bobruisk", "charyshi", detach=1)
    assert info["brigade"] >= 0
    assert not orders.seen[S, b] and not orders.seen[S, info["brigade"]]
    assert orders.seen[P, b] and orders.seen[P, info["brigade"]]


def test_soe_7_2_withdraw(world, orules):
    game_map, _, _ = world
    ix = game_map.index
    # not triggered: nobody entered → removed
    state, orders, ids = tutorial(world)
    wd = order(state, orders, game_map, P, T.WITHDRAW, "charyshi")
    dest = np.empty(state.n_blocks, np.int64)
    info = np.empty(N_WITHDRAW_INFO, np.int64)
    assert nb.execute_withdraw_nb(state, orders, game_map.arrays, orules, wd, dest, info) == nb.WD_NONE
    assert orders.order_status[wd] == OrderStatus.REMOVED
    # triggered: the Soviets attack from Zlobin; the Poles go to Bobruisk (a Polish depot, not along
    # the Zlobin road) and the strongest block loses 1 SP
    state, orders, ids, mode, dest, info = withdraw_under_attack(world, orules, "charyshi", T.FORCED_MARCH_OUT,
                                                                 "gomel", "ru-2-id", "zlobin")
    assert mode == nb.WD_OK
    b1, b6 = ids["pl-9-id"], ids["pl-14-id"]
    assert state.block_area[b1] == ix("bobruisk") and state.block_area[b6] == ix("bobruisk")
    assert state.block_prev_area[b1] == ix("charyshi")
    assert info[nb.WI_LOSS_BLOCK] == b6 and state.block_sp[b6] == 3 and info[nb.WI_MOVED] == 2
    # blocked: every neighbour is enemy or cut → stand and fight (the battle adds the loss)
    state, orders, ids = tutorial(world)
    wd = order(state, orders, game_map, P, T.WITHDRAW, "charyshi")
    sov = order(state, orders, game_map, S, T.FORCED_MARCH_OUT, "gomel")
    state.garrison_side[ix("bobruisk")] = S
    state.garrison_side[ix("kopatkevichi")] = S
    apply_move(state, orders, game_map, orules, sov, ids["ru-2-id"], "charyshi", "zlobin")
    assert nb.execute_withdraw_nb(state, orders, game_map.arrays, orules, wd, dest, info) == nb.WD_BLOCKED
    assert state.block_area[ids["pl-9-id"]] == ix("charyshi") and state.block_sp[ids["pl-14-id"]] == 4


def test_soe_7_2_withdraw_mode_of_a_battle_belongs_to_the_withdrawing_side(world, orules):
    """Reading O8: the battle in an area applies the Withdraw of its defender only. The Poles withdraw
    from Charyshi (WD_OK), the Soviet block that entered stays; if the Soviets were then attacked
    there (they defend as the first to enter, E-B3), they did not withdraw and fight (WD_NONE) — the
    kiev-offensive fuzz game (12345, 4927) stalled on this until the battle loop's cap aborted it.
    New Polish blocks moving back in after a WD_OK did not withdraw either; a WD_BLOCKED Withdraw
    still applies to its own side's blocks, which stayed."""
    game_map, _, _ = world
    ix = game_map.index
    a = ix("charyshi")
    state, orders, ids, mode, _, _ = withdraw_under_attack(world, orules, "charyshi", T.FORCED_MARCH_OUT, "gomel",
                                                           "ru-2-id", "zlobin")
    assert mode == nb.WD_OK
    wd_mode = np.zeros(game_map.n_areas, np.int64)
    wd_mode[a] = nb.WD_OK
    assert nb.battle_withdraw_mode_nb(state, orders, wd_mode, P, a) == nb.WD_OK  # a garrison may fight alone
    assert nb.battle_withdraw_mode_nb(state, orders, wd_mode, S, a) == nb.WD_NONE
    back = ids["pl-9-id"]
    state.block_area[back] = a  # a Polish block comes back in: it did not withdraw
    assert nb.battle_withdraw_mode_nb(state, orders, wd_mode, P, a) == nb.WD_NONE
    wd_mode[a] = nb.WD_BLOCKED
    assert nb.battle_withdraw_mode_nb(state, orders, wd_mode, P, a) == nb.WD_BLOCKED
    assert nb.battle_withdraw_mode_nb(state, orders, wd_mode, S, a) == nb.WD_NONE
    wd_mode[a] = nb.WD_NONE
    assert nb.battle_withdraw_mode_nb(state, orders, wd_mode, P, a) == nb.WD_NONE


def test_soe_7_2_withdraw_cavalry_exempt(world, orules):
    state, orders, ids, mode, dest, info = withdraw_under_attack(world, orules, "mazyr", T.MOVE_OUT, "kalenkovichi",
                                                                 "ru-inf-1", "kalenkovichi")
    b7 = ids["pl-cav-1"]
    assert mode == nb.WD_OK
    assert info[nb.WI_LOSS_BLOCK] == -1 and state.block_sp[b7] == 2 and dest[b7] >= 0


def test_soe_7_2_withdraw_of_a_mixed_stack_attacked_by_infantry_costs_an_infantry_sp(world, orules):
    """SoE 7.2: "Cavalry withdraw and ignore the 1SP withdrawal penalty if attacked only by infantry
    blocks": in a mixed stack the SP "from any one block" comes off an infantry block — offered alone,
    and taken by default even though the cavalry block is the stronger."""
    game_map, _, _ = world
    state, orders, ids = tutorial(world)
    cav, inf = ids["pl-cav-2"], ids["pl-inf-1"]
    put(state, game_map, cav, "kopatkevichi")
    put(state, game_map, inf, "kopatkevichi", sp=1)
    assert state.block_sp[cav] > state.block_sp[inf]
    wd = order(state, orders, game_map, P, T.WITHDRAW, "kopatkevichi")
    sov = order(state, orders, game_map, S, T.MOVE_OUT, "kalenkovichi")
    apply_move(state, orders, game_map, orules, sov, ids["ru-inf-1"], "kopatkevichi", "kalenkovichi")
    out = np.empty(state.n_blocks, np.int64)
    n = nb.withdraw_loss_options_nb(state, orders, game_map.arrays, orules, wd, out)
    assert list(out[:n]) == [inf]
    cav_sp = int(state.block_sp[cav])
    dest = np.empty(state.n_blocks, np.int64)
    info = np.empty(N_WITHDRAW_INFO, np.int64)
    # the cavalry block named as the loss (not a legal row) is overruled: the infantry block pays
    mode = nb.execute_withdraw_choice_nb(state, orders, game_map.arrays, orules, wd, dest, info, cav,
                                         np.zeros((0, 0), np.bool_))
    assert mode == nb.WD_OK and info[nb.WI_LOSS_BLOCK] == inf
    assert state.block_sp[cav] == cav_sp and state.block_status[inf] == STATUS.DESTROYED_TO_POOL


def test_o5_a_block_that_entered_an_empty_area_first_closes_no_road(world, orules):
    """SoE 7.31 / 7.32 (O5): only a block entering an area the enemy already holds stops on the road and
    closes that link. A Polish block that forced-marched into an empty Zlobin is inside it: after a Soviet
    block came in from Gomel, the Polish block's link from Kalenkovichi stays open to the other Soviet
    blocks (the attack directions no longer depend on which Soviet block moved first); the Soviet block's
    own link from Gomel, entered while the Poles held Zlobin, is closed to the Poles."""
    game_map, _, _ = world
    m = game_map.arrays
    ix = game_map.index
    state, orders, ids = tutorial(world)
    pl = ids["pl-inf-1"]
    put(state, game_map, pl, "kopatkevichi")
    state.block_area[ids["ru-inf-1"]] = ix("rechitsa")
    pfm = order(state, orders, game_map, P, T.FORCED_MARCH_OUT, "kopatkevichi")
    sfm = order(state, orders, game_map, S, T.FORCED_MARCH_TO, "zlobin")
    apply_move(state, orders, game_map, orules, pfm, pl, "zlobin", "kalenkovichi")
    finish(orders, pfm)
    apply_move(state, orders, game_map, orules, sfm, ids["ru-2-id"], "zlobin", "gomel")

    def closed_links(side):
        cnt = np.zeros((2, game_map.n_areas), np.int32)
        enemy = np.zeros((2, game_map.n_areas), np.bool_)
        nb.presence_nb(state, cnt, enemy)
        out = np.zeros(len(m.adj_indices), np.bool_)
        nb.edge_blocked_nb(state, m, side, cnt, out)
        return {(game_map.ids[u], game_map.ids[m.adj_indices[e]]) for u in range(game_map.n_areas)
                for e in range(m.adj_indptr[u], m.adj_indptr[u + 1]) if out[e]}

    assert closed_links(S) == set()
    assert closed_links(P) == {("zlobin", "gomel"), ("gomel", "zlobin")}
    assert (ids["ru-inf-1"], "zlobin", "kalenkovichi") in moves0(state, orders, game_map, orules, sfm)


def test_soe_7_2_defend_and_7_5_reorganize(world, orules):
    game_map, _, _ = world
    state, orders, ids = tutorial(world)
    ix = game_map.index
    b1 = ids["pl-9-id"]
    order(state, orders, game_map, P, T.DEFEND, "charyshi")
    reo = order(state, orders, game_map, P, T.REORGANIZE, "charyshi")
    mo = order(state, orders, game_map, P, T.MOVE_OUT, "charyshi")
    # two blocks, Defend + Reorganize + Move Out: no block may leave (O7) — unless the division
    # leaves a detachment behind (SoE 2.2)
    opts = legal_moves(state, orders, game_map, orules, mo)
    assert opts and all(x > 0 for _, _, _, x in opts)
    out = np.empty(state.n_blocks, np.int64)
    k = nb.legal_reorganize_nb(state, orders, reo, out)
    assert list(out[:k]) == [b1]  # pl-14-id is at its maximum
    nb.designate_reorganize_nb(orders, reo, b1)
    half = np.zeros(state.n_blocks, np.bool_)
    nb.block_half_nb(orders, half)
    assert half[b1]
    # the side-effect-free lookup the policies read finds the order and leaves it placed; the engine's
    # flag reveals it (SoE 7.2, 7.3)
    dfd = nb.defend_benefit_order_nb(state, orders, P, ix("charyshi"))
    assert orders.order_type[dfd] == T.DEFEND and orders.order_status[dfd] != OrderStatus.EXECUTED
    assert nb.defend_benefit_order_nb(state, orders, S, ix("charyshi")) == -1
    assert nb.defend_flag_nb(state, orders, P, ix("charyshi"))
    assert orders.order_status[dfd] == OrderStatus.EXECUTED
    assert not nb.defend_flag_nb(state, orders, S, ix("charyshi"))
    assert nb.execute_reorganize_nb(state, orders, orules, reo) == 1 and state.block_sp[b1] == 4
    assert orders.order_status[reo] == OrderStatus.EXECUTED


def test_soe_2_2_detachment(world, orules):
    game_map, _, _ = world
    state, orders, ids = tutorial(world)
    ix = game_map.index
    b6 = ids["pl-14-id"]
    mo = order(state, orders, game_map, P, T.MOVE_OUT, "charyshi")
    rows = legal_moves(state, orders, game_map, orules, mo)
    assert {x for b, d, v, x in rows if b == b6 and d == "bobruisk"} == {0, 1, 2}
    info = apply_move(state, orders, game_map, orules, mo, b6, "bobruisk", "charyshi", 1)
    br = info["brigade"]
    assert br == ids["pl-inf-1"]
    assert state.block_status[br] == STATUS.ON_MAP and state.block_area[br] == ix("charyshi")
    assert state.block_sp[br] == 1 and state.block_sp[b6] == 3 and orders.detached[br]
    assert all(b != br for b, _, _, _ in legal_moves(state, orders, game_map, orules, mo))
    # no brigade left in the pool → no detachment rows
    state, orders, ids = tutorial(world)
    for k in ("pl-inf-1", "pl-inf-2"):
        state.block_status[ids[k]] = STATUS.ELIMINATED_PERMANENT
    mo = order(state, orders, game_map, P, T.MOVE_OUT, "charyshi")
    assert all(x == 0 for *_, x in legal_moves(state, orders, game_map, orules, mo))
    assert all(x == 0 for *_, x in legal_moves(state, orders, game_map, order_constants(world[2], False), mo))


def test_soe_7_6_rail_transport(world, orules):
    game_map, _, _ = world
    state, orders, ids = tutorial(world)
    ix = game_map.index
    rail = order(state, orders, game_map, P, T.RAIL_TRANSPORT, "charyshi")
    rows = legal_rail(state, orders, game_map, orules, rail)
    dests = {d for _, d in rows}
    assert "bobruisk" in dests and "zlobin" in dests and "charyshi" not in dests
    assert {b for b, _ in rows} == {ids["pl-9-id"], ids["pl-14-id"]}
    b1 = ids["pl-9-id"]
    via = nb.apply_rail_nb(state, orders, game_map.arrays, orules, rail, b1, ix("bobruisk"))
    assert via == ix("charyshi") and orders.rail_moved[b1]
    orders.fought[ids["pl-14-id"]] = True  # SoE 7.6: blocks that fought may not go
    assert legal_rail(state, orders, game_map, orules, rail) == []
    assert finish(orders, rail) == OrderStatus.EXECUTED


def test_reset_phase(world, orules):
    game_map, _, _ = world
    state, orders, ids = tutorial(world)
    o = order(state, orders, game_map, P, T.MOVE_OUT, "charyshi")
    apply_move(state, orders, game_map, orules, o, ids["pl-9-id"], "zlobin", "charyshi")
    orders.seen[S, ids["pl-14-id"]] = True
    nb.reset_phase_nb(state, orders, False)
    assert orders.n == 0 and not orders.executed.any() and not orders.moved.any()
    assert (state.block_prev_area == -1).all() and (state.block_arrival == 0).all()
    assert not orders.seen[S, ids["pl-14-id"]] and orders.seen[P, ids["pl-14-id"]]


# ---------------------------------------------------------------------------------------------------
# Oracle: legal moves in plain Python


MOVE_TYPES = (T.FORCED_MARCH_TO, T.FORCED_MARCH_OUT, T.MOVE_TO, T.MOVE_OUT)
AREA_BOUND = (T.WITHDRAW, T.DEFEND, T.REORGANIZE, T.RAIL_TRANSPORT)


def oracle_moves(state, orders, m, orules, o):
    """Every (block, dest, via, detach) that may execute order ``o``, by enumerating simple paths."""
    if o >= orders.n or orders.order_status[o] != OrderStatus.PLACED:
        return set()
    t = OrderType(int(orders.order_type[o]))
    if t not in MOVE_TYPES:
        return set()
    side, area = int(orders.order_side[o]), int(orders.order_area[o])
    forced = t in (T.FORCED_MARCH_TO, T.FORCED_MARCH_OUT)
    to_type = t in (T.FORCED_MARCH_TO, T.MOVE_TO)
    on = [b for b in range(state.n_blocks) if state.block_status[b] == STATUS.ON_MAP and state.block_area[b] >= 0]
    nbrs = {u: [int(v) for v in m.adj_indices[m.adj_indptr[u]:m.adj_indptr[u + 1]]] for u in range(m.n_areas)}

    def has(s, x):
        return any(state.block_side[b] == s and state.block_area[b] == x for b in on)

    def enemy(x):
        return has(1 - side, x) or state.garrison_side[x] == 1 - side

    def enterable(x):
        return side == S or not m.eastern_link[x]

    def held_before(x, b):  # O5: a block of the side was in x before b entered it
        return any(state.block_side[c] == side and state.block_area[c] == x
                   and state.block_arrival[c] < state.block_arrival[b] for c in on)

    closed = set()  # SoE 7.31, 7.32: links with incoming enemy blocks standing on them
    for b in on:
        u, v = int(state.block_area[b]), int(state.block_prev_area[b])
        if (state.block_side[b] == 1 - side and v >= 0 and v != u
                and (held_before(u, b) or state.garrison_side[u] == side)):
            closed.add(frozenset((u, v)))

    def paths(start, allowance):
        out = set()  # (dest, via)

        def walk(path):
            u = path[-1]
            if len(path) > 1:
                out.add((u, path[-2]))
                if enemy(u):
                    return
            if len(path) - 1 >= allowance:
                return
            for v in nbrs[u]:
                if v in path or not enterable(v) or frozenset((u, v)) in closed:
                    continue
                walk(path + [v])

        walk([start])
        return out

    def allowance(b):
        arm = int(state.block_arm[b])
        if arm == ARM.INFANTRY:
            return orules.forced_infantry if forced else orules.move_infantry
        if arm == ARM.CAVALRY:
            return orules.forced_cavalry if forced else orules.move_cavalry
        return orules.forced_leader if forced else orules.move_leader

    def max_detach(b):
        if not orules.detachments or state.block_class[b] != UnitClass.DIVISION:
            return 0
        best = 0
        for r in range(state.n_blocks):
            if (state.block_status[r] in (STATUS.FORCE_POOL, STATUS.DESTROYED_TO_POOL)
                    and state.block_class[r] == UnitClass.BRIGADE and state.block_side[r] == side
                    and state.block_nation[r] == state.block_nation[b] and state.block_arm[r] == state.block_arm[b]):
                best = max(best, int(state.block_max_sp[r]))
        return max(0, min(best, orules.detachment_max_sp, int(state.block_sp[b]) - 1))

    rows = set()
    for b in on:
        if state.block_side[b] != side:
            continue
        if orders.executed[b] or orders.pinned[b] or orders.moved[b] or orders.detached[b] or orders.rail_moved[b]:
            continue
        if (forced or t == T.MOVE_TO) and not state.block_in_supply[b]:
            continue
        x = int(state.block_area[b])
        if (x == area) == to_type:
            continue
        need = sum(1 for q in range(orders.n) if q != o and orders.order_side[q] == side
                   and orders.order_area[q] == x and orders.order_status[q] == OrderStatus.PLACED
                   and orders.order_type[q] in AREA_BOUND + (T.MOVE_OUT, T.FORCED_MARCH_OUT))
        stays = sum(1 for c in on if state.block_side[c] == side and state.block_area[c] == x
                    and state.block_prev_area[c] < 0 and c != b)
        for d, v in paths(x, allowance(b)):
            if to_type and d != area:
                continue
            if enemy(d):
                on_link = sum(1 for c in on if state.block_side[c] == side and state.block_area[c] == d
                              and state.block_prev_area[c] == v)
                if on_link >= orules.max_blocks_per_link:
                    continue
            for det in range(max_detach(b) + 1):
                if need and stays + (det > 0) < need:
                    continue
                rows.add((b, d, v, det))
    return rows


def kernel_moves(state, orders, m, orules, o, cap):
    bb, dd, vv, xx = (np.empty(cap, np.int64) for _ in range(4))
    k = nb.legal_moves_nb(state, orders, m.arrays, orules, o, bb, dd, vv, xx)
    rows = list(zip(bb[:k].tolist(), dd[:k].tolist(), vv[:k].tolist(), xx[:k].tolist()))
    assert rows == sorted(rows), "rows are in ascending order"
    assert nb.count_moves_nb(state, orders, m.arrays, orules, o) == k
    return rows


def presence(state, n):
    """Blocks per side and enemy areas per side of ``state`` (``presence_nb``)."""
    cnt = np.zeros((2, n), np.int32)
    enemy = np.zeros((2, n), np.bool_)
    nb.presence_nb(state, cnt, enemy)
    return cnt, enemy


_STARTS = {}


def campaign_start(world):
    """A copy of the campaign's starting state (loaded once per world: loading takes a tenth of a second)."""
    key = id(world)
    if key not in _STARTS:
        m, roster, rules = world
        _STARTS[key] = (world, new_game(load_scenario("campaign-1920"), m, roster, rules))
    return _STARTS[key][1].copy()


def random_position(world, rng):
    """A dense random position around a random area of the campaign universe, with random flags,
    earlier moves and orders (placed without legality checks)."""
    m = world[0]
    state = campaign_start(world)
    orders = new_order_state(state)
    n = m.n_areas
    centre = int(rng.integers(n))
    ball = {centre}
    frontier = [centre]
    for _ in range(3):
        frontier = [int(v) for u in frontier for v in m.adj_indices[m.adj_indptr[u]:m.adj_indptr[u + 1]]]
        ball.update(frontier)
    ball = sorted(ball)
    state.block_status[:] = STATUS.FORCE_POOL
    state.block_area[:] = -1
    state.garrison_side[:] = -1
    for a in ball:
        if m.garrison[a] and rng.random() < 0.4:
            state.garrison_side[a] = rng.integers(2)
    for b in rng.permutation(state.n_blocks)[:40]:
        s = int(state.block_side[b])
        choices = [a for a in ball if s == S or not m.eastern_link[a]]
        a = int(rng.choice(choices))
        state.block_status[b] = STATUS.ON_MAP
        state.block_area[b] = a
        state.block_sp[b] = rng.integers(1, int(state.block_max_sp[b]) + 1)
        state.block_in_supply[b] = rng.random() < 0.85
        if rng.random() < 0.15:  # moved earlier this phase
            nbrs = m.adj_indices[m.adj_indptr[a]:m.adj_indptr[a + 1]]
            state.block_prev_area[b] = int(rng.choice(nbrs))
            state.block_arrival[b] = rng.integers(1, 20)
            orders.executed[b] = orders.moved[b] = True
        elif rng.random() < 0.1:
            orders.pinned[b] = True
    for _ in range(int(rng.integers(4, 14))):
        t = int(rng.integers(9))
        a = int(rng.choice(ball))
        nb.place_order_nb(state, orders, int(rng.integers(2)), int(m.front[a]), t, a)
    orders.arrival[0] = state.block_arrival.max()  # as in play: the next block to move arrives after them all
    return state, orders


def _known_areas_oracle(state, orders, side, omniscient, unknown_sp):
    """What ``side`` knows per area, block by block (the policies' hidden information): own blocks and SP,
    enemy blocks, their SP where seen (or all with ``omniscient``) and ``unknown_sp`` for each unseen one,
    the unseen ones, an enemy garrison as 1 SP; then 1.0 where every own block is in supply (else 0.0) and
    the largest SP deficit (max SP - SP) of the own blocks (the ORDER features' supply and Reorganization
    columns)."""
    rows = np.zeros((7, state.control.shape[0]))
    own_n, own_sp, en_n, en_sp, unseen, insup, deficit = rows
    insup[:] = 1.0
    for b in range(state.n_blocks):
        a = int(state.block_area[b])
        if state.block_status[b] != STATUS.ON_MAP or a < 0:
            continue
        if state.block_side[b] == side:
            own_n[a] += 1
            own_sp[a] += float(state.block_sp[b])
            if not state.block_in_supply[b]:
                insup[a] = 0.0
            deficit[a] = max(deficit[a], float(state.block_max_sp[b] - state.block_sp[b]))
        else:
            en_n[a] += 1
            if omniscient or orders.seen[side, b]:
                en_sp[a] += float(state.block_sp[b])
            else:
                en_sp[a] += unknown_sp
                unseen[a] += 1
    for a in range(state.control.shape[0]):
        if state.garrison_side[a] == 1 - side:
            en_sp[a] += 1.0
    return rows


def test_known_areas_equal_their_oracle_to_the_last_bit(world):
    """The per-area knowledge of the scripted policies (known_areas_nb) equals the block-by-block oracle
    exactly (the same sums in the same order: a fractional ``unknown_sp`` shows an order change) on random
    positions, random seen blocks, both sides, limited and omniscient; with its two optional rows (all own
    blocks in supply, largest own SP deficit: the ORDER features' pass, ``_order_known_nb``) and without
    them (the first five rows the same)."""
    rng = np.random.default_rng(35)
    params = np.zeros(pnb.N_PARAMS)
    out_of_supply = deficits = 0
    for _ in range(60):
        state, orders = random_position(world, rng)
        orders.seen[:] = rng.random(orders.seen.shape) < 0.5
        params[pnb.P_UNKNOWN_SP] = float(rng.choice([2.0, 2.3, 0.7]))
        params[pnb.P_OMNISCIENT] = float(rng.random() < 0.25)
        for side in (0, 1):
            want = _known_areas_oracle(state, orders, side, params[pnb.P_OMNISCIENT] > 0.5, params[pnb.P_UNKNOWN_SP])
            rows = np.full((7, state.control.shape[0]), np.nan)
            pnb.known_areas_nb(state, orders, side, params, *(rows[q] for q in range(5)))
            np.testing.assert_array_equal(rows[:5], want[:5])
            assert np.isnan(rows[5:]).all()  # not asked: not written
            pnb.known_areas_nb(state, orders, side, params, *(rows[q] for q in range(7)))
            np.testing.assert_array_equal(rows, want)
            out_of_supply += int((want[5] == 0.0).sum())
            deficits += int((want[6] > 0.0).sum())
    assert out_of_supply > 30 and deficits > 100, (out_of_supply, deficits)


def test_legal_moves_match_oracle(world, orules):
    m = world[0]
    rng = np.random.default_rng(20240607)
    checked = nonempty = 0
    for _ in range(60):
        state, orders = random_position(world, rng)
        cap = move_capacity(state, m.arrays)
        for o in range(orders.n):
            kern = kernel_moves(state, orders, m, orules, o, cap)
            assert set(kern) == oracle_moves(state, orders, m, orules, o), (o, OrderType(int(orders.order_type[o])))
            assert len(kern) == len(set(kern))
            checked += 1
            nonempty += bool(kern)
    assert checked > 300 and nonempty > 60


def test_move_sequences_invariants(world, orules):
    """Random move sequences: one area per block, arrivals strictly increasing, every block moves at
    most once, pins never exceed the blocks that came in, kernel still agrees with the oracle."""
    m = world[0]
    rng = np.random.default_rng(7)
    for _ in range(25):
        state, orders = random_position(world, rng)
        cap = move_capacity(state, m.arrays)
        on_before = int((state.block_status == STATUS.ON_MAP).sum())
        last_arrival = int(orders.arrival[0])
        moved_now = set()
        entered = np.zeros((2, m.n_areas), np.int64)
        pinned_in = np.zeros((2, m.n_areas), np.int64)
        detachments = 0
        for _step in range(30):
            movable = [o for o in range(orders.n) if orders.order_type[o] in MOVE_TYPES
                       and orders.order_status[o] == OrderStatus.PLACED]
            if not movable:
                break
            o = int(rng.choice(movable))
            rows = kernel_moves(state, orders, m, orules, o, cap)
            if nb.min_moves_required_nb(state, orders, m.arrays, orules, o) == 0 and (not rows or rng.random() < 0.3):
                nb.finish_order_nb(orders, o)
                continue
            assert rows
            assert set(rows) == oracle_moves(state, orders, m, orules, o)
            b, d, v, x = rows[int(rng.integers(len(rows)))]
            assert b not in moved_now
            info = np.empty(N_MOVE_INFO, np.int64)
            nb.apply_move_nb(state, orders, m.arrays, orules, o, b, d, v, x, info)
            moved_now.add(b)
            detachments += info[nb.MI_BRIGADE] >= 0
            s = int(state.block_side[b])
            entered[s, d] += 1
            if info[nb.MI_PINNED] >= 0:
                p = int(info[nb.MI_PINNED])
                assert state.block_side[p] == 1 - s and state.block_area[p] == d
                pinned_in[1 - s, d] += 1
            assert state.block_area[b] == d and state.block_prev_area[b] == v
            assert int(state.block_arrival[b]) == last_arrival + 1
            last_arrival += 1
            assert s == S or not m.eastern_link[d]
        assert (pinned_in[0] <= entered[1]).all() and (pinned_in[1] <= entered[0]).all()
        assert int((state.block_status == STATUS.ON_MAP).sum()) == on_before + detachments
        on = state.block_status == STATUS.ON_MAP
        assert (state.block_area[on] >= 0).all() and (state.block_area[~on] == -1).all()
        assert (state.block_sp[on] >= 1).all()


def test_moves_after_a_move_are_those_listed_afresh(world, orules):
    """``moves_after_move_nb`` (the game loop's rows after a move: the last rows filtered) against a fresh
    ``legal_moves_nb`` listing after every move of random move sequences, order by order, on rows first
    filtered by nation and destination as the loop's G15 / G16 filter does (every row kept in a third of the
    positions). The same rows in the same order, or -1 (list afresh) only where the kernel says it must;
    where it filters, the move features' known rows updated for the move equal those counted afresh."""
    m = world[0]
    rng = np.random.default_rng(31)
    cases = {"filtered": 0, "others dropped": 0, "listed again": 0}
    params = np.zeros(pnb.N_PARAMS)
    params[pnb.P_UNKNOWN_SP] = 2.0

    def known(state, orders, side):
        rows = np.zeros((pnb.N_KNOWN, m.n_areas))
        pnb.known_areas_nb(state, orders, side, params, *(rows[q] for q in range(5)))
        return rows

    for pos in range(240):
        state, orders = random_position(world, rng)
        cap = move_capacity(state, m.arrays)
        n_nations = int(state.block_nation.max()) + 1
        nation_ok = rng.random((n_nations, m.n_areas)) < (1.0 if pos % 3 == 0 else 0.85)

        def allowed(rows):
            return [r for r in rows if nation_ok[state.block_nation[r[0]], r[1]]]

        for o in range(orders.n):
            if orders.order_type[o] not in MOVE_TYPES:
                continue
            kept = allowed(kernel_moves(state, orders, m, orules, o, cap))
            while kept:
                whole = [r for r in kept if r[3] == 0]  # mostly without a detachment: longer sequences
                pick = whole if whole and rng.random() < 0.8 else kept
                b, d, v, x = pick[int(rng.integers(len(pick)))]
                origin = int(state.block_area[b])
                side = int(state.block_side[b])
                known_before = known(state, orders, side)
                info = np.empty(N_MOVE_INFO, np.int64)
                nb.apply_move_nb(state, orders, m.arrays, orules, o, b, d, v, x, info)
                fresh = allowed(kernel_moves(state, orders, m, orules, o, cap))
                rows = [np.zeros(cap, np.int64) for _ in range(4)]
                for i, row in enumerate(kept):
                    for arr, value in zip(rows, row):
                        arr[i] = value
                k = nb.moves_after_move_nb(state, orders, orules, o, b, origin, d, v, int(info[nb.MI_BRIGADE]),
                                           len(kept), *rows)
                if k < 0:
                    cases["listed again"] += 1
                else:
                    assert list(zip(*(arr[:k].tolist() for arr in rows))) == fresh, (pos, o, (b, d, v, x))
                    # the move features' known rows carried over the move (policies.known_after_move_nb)
                    pnb.known_after_move_nb(known_before, float(state.block_sp[b]), origin, d)
                    np.testing.assert_array_equal(known_before, known(state, orders, side))
                    cases["filtered"] += 1
                    cases["others dropped"] += len(fresh) < sum(1 for r in kept if r[0] != b)
                kept = fresh
    assert cases["filtered"] > 300 and cases["others dropped"] >= 8 and cases["listed again"] > 100, cases


def test_moves_after_a_move_list_afresh_a_listing_cut_at_the_capacity(world, orules):
    state, orders = random_position(world, np.random.default_rng(5))
    rows = [np.zeros(4, np.int64) for _ in range(4)]
    assert nb.moves_after_move_nb(state, orders, orules, 0, 0, 0, 1, 0, -1, 4, *rows) == -1
    assert nb.moves_after_move_nb(state, orders, orules, 0, 0, 0, 1, 0, 7, 2, *rows) == -1  # a detachment


def test_rail_rows_after_a_rail_move_are_those_listed_afresh(world, orules):
    """``rails_after_rail_nb`` (the game loop's rail rows after a rail move, SoE 7.6: the last rows filtered)
    against a fresh ``legal_rail_nb`` listing after every move of random rail sequences, on Rail Transport
    orders given to random areas holding blocks of random positions: the same rows in the same order, or -1
    (list afresh) where the move changed whether the side is present in a key city (its depots, SoE 1.31)."""
    m = world[0]
    rng = np.random.default_rng(37)
    cases = {"filtered": 0, "listed again": 0, "max blocks": 0}
    cap = 4 * m.n_areas * 60
    ob, od = np.empty(cap, np.int64), np.empty(cap, np.int64)

    def listing(state, orders, o):
        k = nb.legal_rail_nb(state, orders, m.arrays, orules, o, ob, od)
        return list(zip(ob[:k].tolist(), od[:k].tolist()))

    for _ in range(600):
        state, orders = random_position(world, rng)
        on = np.flatnonzero((state.block_status == STATUS.ON_MAP) & (state.block_prev_area < 0))
        if len(on) == 0:
            continue
        b0 = int(rng.choice(on))
        area = int(state.block_area[b0])
        side = int(state.block_side[b0])
        o = nb.place_order_nb(state, orders, side, int(m.front[area]), T.RAIL_TRANSPORT, area)
        if o < 0:
            continue
        kept = listing(state, orders, o)
        while kept:
            b, d = kept[int(rng.integers(len(kept)))]
            origin = int(state.block_area[b])
            nb.apply_rail_nb(state, orders, m.arrays, orules, o, b, d)
            fresh = listing(state, orders, o)
            for i, (x, y) in enumerate(kept):
                ob[i], od[i] = x, y
            k = nb.rails_after_rail_nb(state, orders, m.arrays, orules, o, b, origin, d, len(kept), ob, od)
            if k < 0:
                key = m.arrays.garrison
                assert (key[origin] or key[d]), (origin, d)
                cases["listed again"] += 1
            else:
                assert list(zip(ob[:k].tolist(), od[:k].tolist())) == fresh
                cases["filtered"] += 1
                cases["max blocks"] += int(k == 0 and orders.order_executed[o] >= orules.rail_max_blocks)
            kept = fresh
    assert cases["filtered"] > 120 and cases["listed again"] > 20 and cases["max blocks"] >= 4, cases


def test_move_scores_equal_the_scorer_on_the_move_features(world, orules):
    """The game loop scores a scripted policy's MOVE / RAIL decisions (SoE 7.3, 7.6) with ``move_scores_nb``,
    without a feature matrix. On the move rows of the move orders and the rail rows of Rail Transport orders of
    random positions, with and without the "stop" row, the known rows counted or given, for the three scripted
    policies with the parameters the score reads varied (omniscience too), its scores equal bit for bit the
    scorer's (``score_options_nb``) on ``fill_move_features_scratch_nb``'s features — attacks, captures, holds,
    advances, a threatened own key city left and overstacking moves all among the rows."""
    from soe_sim.engine.game import game_setup
    from soe_sim.engine.game.work import policy_set

    m = world[0]
    setup = game_setup("campaign-1920")
    rng = np.random.default_rng(43)
    cap = 4 * m.n_areas * 60
    mb, md, mv, mx = (np.zeros(cap, np.int64) for _ in range(4))
    scripted = [pnb.POLICY_IDS[name] for name in ("balanced", "aggressive", "defensive")]
    varied = [pnb.P_ATTACK_WEIGHT, pnb.P_ATTACK_THRESHOLD, pnb.P_HOLD_WEIGHT, pnb.P_ADVANCE_WEIGHT,
              pnb.P_CAPTURE_WEIGHT]
    cases = dict.fromkeys(("move", "rail", "stop", "attack", "capture", "hold", "leaving", "overstack"), 0)
    for pos in range(120):
        state, orders = random_position(world, rng)
        on = np.flatnonzero((state.block_status == STATUS.ON_MAP) & (state.block_prev_area < 0))
        if len(on):  # a Rail Transport order too (SoE 7.6)
            area = int(state.block_area[int(rng.choice(on))])
            side = int(state.block_side[int(rng.choice(on))])
            nb.place_order_nb(state, orders, side, int(m.front[area]), T.RAIL_TRANSPORT, area)
        ids = np.array([int(rng.choice(scripted)) for _ in range(2)], np.int64)
        params = np.array([pnb.DEFAULT_PARAMS[i] for i in ids], np.float64)
        if pos % 2:
            for q in varied:
                params[:, q] *= rng.uniform(0.3, 2.0, 2)
            params[:, pnb.P_RESERVE] = rng.integers(0, 4, 2)
            params[:, pnb.P_OMNISCIENT] = rng.integers(0, 2, 2)
        pset = policy_set(setup, ids, params)
        for o in range(orders.n):
            t = int(orders.order_type[o])
            rail = t == T.RAIL_TRANSPORT
            if not rail and t not in MOVE_TYPES:
                continue
            if rail:
                k = nb.legal_rail_nb(state, orders, m.arrays, orules, o, mb, md)
                mv[:k], mx[:k] = -1, 0
            else:
                k = nb.legal_moves_nb(state, orders, m.arrays, orules, o, mb, md, mv, mx)
            side = int(orders.order_side[o])
            kind = pnb.DECISION.RAIL if rail else pnb.DECISION.MOVE
            for off in (0, 1):
                n = k + off
                if n < 2:
                    continue
                feat = np.zeros((n, pnb.N_FEAT))
                pnb.fill_move_features_nb(state, orders, m.arrays, pset, side, o, mb, md, mv, mx, n, off, rail, feat)
                want = np.empty(n)
                pnb.score_options_nb(pset.params[side], kind, feat, n, want)
                got = np.full(n, np.nan)
                scr = pnb.new_feat_scratch_nb(m.n_areas, state.n_blocks)
                pnb.move_scores_nb(state, orders, m.arrays, pset, side, o, mb, md, mv, mx, n, off, rail, scr, False,
                                   got)
                assert np.array_equal(got, want), (pos, o, off)
                got[:] = np.nan  # the known rows given (the loop's decisions after a move of the order)
                scr = pnb.new_feat_scratch_nb(m.n_areas, state.n_blocks)
                pnb.known_areas_nb(state, orders, side, pset.params[side], scr.known[pnb.K_OWN_N],
                                   scr.known[pnb.K_OWN_SP], scr.known[pnb.K_EN_N], scr.known[pnb.K_EN_SP],
                                   scr.known[pnb.K_UNSEEN])
                pnb.move_scores_nb(state, orders, m.arrays, pset, side, o, mb, md, mv, mx, n, off, rail, scr, True,
                                   got)
                assert np.array_equal(got, want), (pos, o, off)
                rows = feat[off:]
                cases["rail" if rail else "move"] += 1
                cases["stop"] += off
                cases["attack"] += int((rows[:, 3] > 0).sum())
                cases["capture"] += int(((rows[:, 3] == 0) & (rows[:, 6] < 0)).sum())
                hold = (rows[:, 3] == 0) & (rows[:, 6] > 0) & (rows[:, 5] > 0) & (rows[:, 13] > 0)
                cases["hold"] += int(hold.sum())
                cases["leaving"] += int(((rows[:, 10] > 0) & (rows[:, 12] > 0)
                                         & (rows[:, 11] < pset.params[side, pnb.P_RESERVE])).sum())
                cases["overstack"] += int((rows[:, 7] <= 0).sum())
    assert all(v >= 20 for v in cases.values()) and cases["move"] > 200, cases


def test_rail_rows_after_a_rail_move_are_listed_afresh_where_a_rail_move_may_join_a_battle(world):
    """EatS II.4.1 (V5): the battle areas a rail move may end in read the side's unmoved blocks, so after a
    rail move the rows are listed afresh."""
    state, orders = random_position(world, np.random.default_rng(3))
    eats = order_constants(load_rules("eats"))
    assert eats.rail_may_join_defended_battle
    rows = [np.zeros(4, np.int64) for _ in range(2)]
    assert nb.rails_after_rail_nb(state, orders, world[0].arrays, eats, 0, 0, 0, 1, 2, *rows) == -1


def test_placement_sequences_invariants(world, orules):
    """Random placements from legal rows (start of a phase): fronts, pools, one order of a type per
    area, the Recon obligation, and every placed order still executable by some block (O2)."""
    m = world[0]
    rng = np.random.default_rng(11)
    size = 9 * m.n_areas + 1
    ot, oa = np.empty(size, np.int64), np.empty(size, np.int64)
    for _ in range(25):
        state, _ = random_position(world, rng)
        state.block_prev_area[:] = -1
        state.block_arrival[:] = 0
        orders = new_order_state(state)
        allowed = rng.integers(2, 6, size=(2, 2))
        done = np.zeros((2, 2), bool)
        while not done.all():
            s, f = (int(v) for v in np.argwhere(~done)[rng.integers((~done).sum())])
            k = nb.legal_orders_nb(state, orders, m.arrays, orules, s, f, int(allowed[s, f]), ot, oa)
            if k == 0:
                done[s, f] = True
                continue
            rows = list(zip(ot[:k].tolist(), oa[:k].tolist()))
            left = int(allowed[s, f] - orders.placed[s, f])
            owed = orules.mandatory_recon - int(orders.recon_placed[s, f])
            if owed > 0 and left <= owed and any(t == T.RECON for t, _ in rows):
                assert all(t == T.RECON for t, _ in rows)
            assert ((nb.NO_ORDER, -1) in rows) == (owed <= 0 or not any(t == T.RECON for t, _ in rows))
            for t, a in rows:
                if t != nb.NO_ORDER:
                    assert m.front[a] == f and orders.pool_used[s, t] < orules.pool[t]
            t, a = rows[int(rng.integers(k))]
            if t == nb.NO_ORDER:
                done[s, f] = True
                continue
            assert nb.place_order_nb(state, orders, s, f, t, a) >= 0
        placed = [(int(orders.order_side[o]), int(orders.order_type[o]), int(orders.order_area[o]))
                  for o in range(orders.n)]
        assert len(placed) == len(set(placed))  # never two of a type in an area
        assert (orders.placed <= allowed).all()
        for s in (0, 1):
            assert all(int((orders.order_side[:orders.n] == s)[orders.order_type[:orders.n] == t].sum())
                       <= orules.pool[t] for t in range(9))
        out = np.empty(state.n_blocks * m.n_areas, np.int64)
        out2 = np.empty_like(out)
        for o in range(orders.n):
            t = int(orders.order_type[o])
            if t in MOVE_TYPES:
                assert nb.count_moves_nb(state, orders, m.arrays, orules, o) > 0, OrderType(t)
            elif t == T.REORGANIZE:
                assert nb.legal_reorganize_nb(state, orders, o, out) > 0
            elif t == T.RAIL_TRANSPORT:
                assert nb.legal_rail_nb(state, orders, m.arrays, orules, o, out, out2) > 0


def test_reverse_reach_matches_forward_bfs(world):
    """The backward BFS of Move To / Forced March To (_reverse_reach_nb) gives every start area the
    distance the forward movement BFS from that area finds for the destination (SoE 7.31: moves end
    in the first enemy area, Poles never enter Eastern Links, closed links), up to the depth."""
    from soe_sim.engine.nb import UNREACHED, reach_into_nb

    m = world[0]
    ma = m.arrays
    n = m.n_areas
    rng = np.random.default_rng(99)
    dist = np.full(n, UNREACHED, np.int32)
    queue = np.empty(n, np.int32)
    rdist = np.empty(n, np.int32)
    reached = 0
    for _ in range(12):
        state, orders = random_position(world, rng)
        cnt, enemy = presence(state, n)
        for side in (P, S):
            eb = np.zeros(ma.adj_indices.shape[0], np.bool_)
            nb.edge_blocked_nb(state, ma, side, cnt, eb)
            for dest in rng.choice(n, size=25, replace=False):
                depth = int(rng.integers(1, 5))
                nb._reverse_reach_nb(ma.adj_indptr, ma.adj_indices, eb, ma.eastern_link, enemy[side], side, int(dest),
                                     depth, rdist, queue)
                for x in range(n):
                    if x == dest:
                        continue
                    k = reach_into_nb(ma.adj_indptr, ma.adj_indices, ma.adj_kind, eb, ma.eastern_link, enemy[side],
                                      side, x, depth, False, dist, 0, dist, queue)
                    fwd = dist[dest]
                    dist[queue[:k]] = UNREACHED
                    assert rdist[x] == fwd, (side, int(dest), x, depth)
                    reached += fwd != UNREACHED
    assert reached > 500


def test_reach_on_area_sets_matches_the_link_list_search(world):
    """SoE 7.31, 1.4: the movement search on the map's area sets (``reach_sets_into_nb``, used by the
    placement tables when no link is closed) reaches the areas of ``reach_into_nb`` at the same
    distances, and its sets hold the areas within each distance."""
    from soe_sim.engine.nb import UNREACHED, area_set_nb, reach_into_nb, reach_sets_into_nb

    m = world[0]
    ma = m.arrays
    n = m.n_areas
    rng = np.random.default_rng(12)
    no_links = np.zeros(0, np.bool_)
    d1, d2 = np.full(n, UNREACHED, np.int32), np.full(n, UNREACHED, np.int32)
    q1, q2 = np.empty(n, np.int32), np.empty(n, np.int32)
    sets = np.zeros((5, 4), np.uint64)
    ebits = np.zeros(4, np.uint64)
    compared = 0
    for _ in range(12):
        state, _ = random_position(world, rng)
        _, enemy = presence(state, n)
        for side in (P, S):
            area_set_nb(enemy[side], ebits)
            for start in rng.choice(n, size=20, replace=False):
                depth = int(rng.integers(1, 6))
                k1 = reach_into_nb(ma.adj_indptr, ma.adj_indices, ma.adj_kind, no_links, ma.eastern_link, enemy[side],
                                   side, int(start), depth, False, d1, 0, d1, q1)
                k2 = reach_sets_into_nb(ma.adj_bits, ebits, side, int(start), depth, d2, q2, sets)
                assert k1 == k2 and q2[0] == start and sorted(q1[:k1]) == sorted(q2[:k2])
                np.testing.assert_array_equal(d1, d2)
                assert (np.diff(d2[q2[:k2]]) >= 0).all()
                for d in range(5):
                    within = [int(a) for a in q1[1:k1] if d1[a] <= d]
                    got = [a for a in range(n) if (int(sets[d, a >> 6]) >> (a & 63)) & 1]
                    assert got == sorted(within), (side, int(start), depth, d)
                d1[q1[:k1]] = UNREACHED
                d2[q2[:k2]] = UNREACHED
                compared += k1 > 1
    assert compared > 200


def test_placement_on_area_sets_lists_the_rows_of_the_link_list_search(world, orules):
    """SoE 7.2: the ORDER rows from placement tables on the map's area sets are those of a map without
    them (``adj_bits`` with no words: the searches walk the link lists), on random positions with
    random orders placed, both sides, every front."""
    m = world[0]
    with_sets = m.arrays
    without = with_sets._replace(adj_bits=np.zeros((m.n_areas + 1, 0), np.uint64))
    rng = np.random.default_rng(8)
    size = 9 * m.n_areas + 1
    ot, oa = np.empty(size, np.int64), np.empty(size, np.int64)
    ot2, oa2 = np.empty(size, np.int64), np.empty(size, np.int64)
    compared = 0
    for _ in range(20):
        state, _ = random_position(world, rng)
        if rng.random() < 0.5:
            state.block_prev_area[:] = -1  # no link closed: the placement search runs on the sets
        orders = new_order_state(state)
        tabs = nb.new_placement_tables_nb(state.n_blocks, m.n_areas, m.adj_indices.shape[0], orders.order_type.shape[0])
        tabs2 = nb.new_placement_tables_nb(state.n_blocks, m.n_areas, m.adj_indices.shape[0],
                                           orders.order_type.shape[0])
        for s in (0, 1):
            nb.placement_tables_nb(state, with_sets, orules, s, tabs)
            nb.placement_tables_nb(state, without, orules, s, tabs2)
            for f in (0, 1):
                for _ in range(4):
                    k = nb.legal_orders_from_tables_nb(orders, with_sets, orules, s, f, 4, tabs, ot, oa)
                    k2 = nb.legal_orders_from_tables_nb(orders, without, orules, s, f, 4, tabs2, ot2, oa2)
                    assert k == k2 and (ot[:k] == ot2[:k]).all() and (oa[:k] == oa2[:k]).all()
                    real = [j for j in range(k) if ot[j] != nb.NO_ORDER]
                    compared += sum(ot[j] in (nb.MOVE_TO, nb.FORCED_MARCH_TO) for j in real)
                    if not real:
                        break
                    j = real[int(rng.integers(len(real)))]
                    nb.place_order_nb(state, orders, s, f, ot[j], oa[j])
    assert compared > 200


def _closed_filter(closed, k, ot, oa):
    """G15, G16 read as a filter of the full listing (the game loop's way until session 35): the rows
    ``(type, area)`` left once the Move To / Forced March To rows aimed at a closed area are dropped."""
    moves = (int(nb.MOVE_TO), int(nb.FORCED_MARCH_TO))
    return [(int(ot[j]), int(oa[j])) for j in range(k) if not (oa[j] >= 0 and closed[oa[j]] and ot[j] in moves)]


def test_order_rows_of_closed_areas_left_out_as_by_a_filter_of_the_full_listing(world, orules):
    """G15, G16: the ORDER rows listed with a side's closed areas (``closed_row``) are the full listing
    without its Move To / Forced March To rows into those areas — the pass row included, which the full
    listing decides (also when the closed areas take every other row) — on random positions, random
    closed areas, random orders placed, both sides, every front."""
    m = world[0]
    rng = np.random.default_rng(21)
    size = 9 * m.n_areas + 1
    ot, oa = np.empty(size, np.int64), np.empty(size, np.int64)
    ot2, oa2 = np.empty(size, np.int64), np.empty(size, np.int64)
    dropped = 0
    pass_only = 0
    for it in range(24):
        state, _ = random_position(world, rng)
        orders = new_order_state(state)
        if it % 3 == 0:  # only Move To / Forced March To left in the pools: closed areas can take every row
            for t in range(nb.N_ORDER_TYPES):
                if t not in (nb.MOVE_TO, nb.FORCED_MARCH_TO):
                    orders.pool_used[:, t] = orules.pool[t]
        tabs = nb.new_placement_tables_nb(state.n_blocks, m.n_areas, m.adj_indices.shape[0], orders.order_type.shape[0])
        for s in (0, 1):
            nb.placement_tables_nb(state, m.arrays, orules, s, tabs)
            for f in (0, 1):
                for _ in range(4):
                    closed = rng.random(m.n_areas) < rng.choice([0.0, 0.3, 1.0])
                    k = nb.legal_orders_from_tables_nb(orders, m.arrays, orules, s, f, 4, tabs, ot, oa)
                    k2 = nb.legal_orders_from_tables_nb(orders, m.arrays, orules, s, f, 4, tabs, ot2, oa2, closed)
                    got = [(int(t), int(a)) for t, a in zip(ot2[:k2], oa2[:k2])]
                    assert got == _closed_filter(closed, k, ot, oa), (it, s, f)
                    dropped += k - k2
                    pass_only += k > 1 and got == [(int(nb.NO_ORDER), -1)]
                    real = [j for j in range(k2) if ot2[j] != nb.NO_ORDER]
                    if not real:
                        break
                    j = real[int(rng.integers(len(real)))]
                    nb.place_order_nb(state, orders, s, f, ot2[j], oa2[j])
    assert dropped > 200 and pass_only > 0


def test_moves_on_area_sets_list_the_rows_of_the_link_list_search(world, orules):
    """SoE 7.3, 7.31, 7.32: the move rows of ``legal_moves_nb`` on the map's area sets (the searches
    of a listing with no closed link: reverse reach, destinations, vias) are those of a map without
    them, for every placed movement order of random positions, with and without earlier moves."""
    m = world[0]
    with_sets = m.arrays
    without = with_sets._replace(adj_bits=np.zeros((m.n_areas + 1, 0), np.uint64))
    rng = np.random.default_rng(21)
    compared = 0
    for it in range(40):
        state, orders = random_position(world, rng)
        cap = move_capacity(state, with_sets)
        if it % 2:
            state.block_prev_area[:] = -1  # nobody moved yet: no closed link, the sets are used
        for o in range(int(orders.n_orders[0])):
            if orders.order_type[o] not in MOVE_TYPES:
                continue
            rows = []
            for ma in (with_sets, without):
                bb, dd, vv, xx = (np.empty(cap, np.int64) for _ in range(4))
                k = nb.legal_moves_nb(state, orders, ma, orules, o, bb, dd, vv, xx)
                rows.append(list(zip(bb[:k].tolist(), dd[:k].tolist(), vv[:k].tolist(), xx[:k].tolist())))
            assert rows[0] == rows[1], (it, o)
            compared += len(rows[0])
    assert compared > 300


def test_placement_tables_reused_across_positions_equal_fresh_ones(world, orules):
    """The game loop keeps one PlacementTables per side for every placement step of every game of a
    thread; nothing of a previous position may leak into the next. On a sequence of random positions
    (both sides, every front), the reused tables give the distance rows in use and the ORDER rows
    (``legal_orders_from_tables_nb``) of fresh ones (``legal_orders_nb``)."""
    m = world[0]
    rng = np.random.default_rng(5)
    size = 9 * m.n_areas + 1
    ot, oa = np.empty(size, np.int64), np.empty(size, np.int64)
    ot2, oa2 = np.empty(size, np.int64), np.empty(size, np.int64)
    reused = None
    compared = 0
    for _ in range(20):
        state, _ = random_position(world, rng)
        state.block_prev_area[:] = -1
        orders = new_order_state(state)
        if reused is None:  # every position is of the campaign universe: the same sizes
            reused = nb.new_placement_tables_nb(state.n_blocks, m.n_areas, m.adj_indices.shape[0],
                                                orders.order_type.shape[0])
        tabs = reused
        for s in (0, 1):
            nb.placement_tables_nb(state, m.arrays, orules, s, tabs)
            fresh = nb.new_placement_tables_nb(state.n_blocks, m.n_areas, m.adj_indices.shape[0],
                                               orders.order_type.shape[0])
            nb.placement_tables_nb(state, m.arrays, orules, s, fresh)
            nf = int(fresh.meta[nb.M_NF])
            assert int(tabs.meta[nb.M_NF]) == nf
            assert (tabs.dist_r[:nf] == fresh.dist_r[:nf]).all()
            for f in (0, 1):
                k = nb.legal_orders_from_tables_nb(orders, m.arrays, orules, s, f, 3, tabs, ot, oa)
                k2 = nb.legal_orders_nb(state, orders, m.arrays, orules, s, f, 3, ot2, oa2)
                assert k == k2 and (ot[:k] == ot2[:k]).all() and (oa[:k] == oa2[:k]).all()
                compared += k > 0
    assert compared > 40


def _both_sides_tables(state, orders, m, orules):
    """Each side's ``PlacementTables`` of the position, as the game loop computes them once per placement step."""
    tables = []
    for s in (0, 1):
        tables.append(nb.new_placement_tables_nb(state.n_blocks, m.n_areas, m.adj_indices.shape[0],
                                                 orders.order_type.shape[0]))
        nb.placement_tables_nb(state, m.arrays, orules, s, tables[s])
    return tables


def test_order_rows_with_the_matching_kept_across_a_placement_step_equal_fresh_ones(world, orules):
    """``legal_orders_from_tables_nb`` extends the matching of its last call on the same tables by the
    orders placed since (``meta[M_MATCHED]``). Along random placement sequences (both sides, both
    fronts, tables computed once per side per position as in the game loop, now and then an earlier
    order removed as a leader's countermand does), its rows equal those of fresh tables
    (``legal_orders_nb``) at every step."""
    m = world[0]
    rng = np.random.default_rng(23)
    size = 9 * m.n_areas + 1
    ot, oa = np.empty(size, np.int64), np.empty(size, np.int64)
    ot2, oa2 = np.empty(size, np.int64), np.empty(size, np.int64)
    steps = extended = removed = 0
    for _ in range(40):
        state, _ = random_position(world, rng)
        state.block_prev_area[:] = -1
        orders = new_order_state(state)
        tables = _both_sides_tables(state, orders, m, orules)
        for _step in range(16):
            s, f = int(rng.integers(2)), int(rng.integers(2))
            if orders.n > 0 and rng.random() < 0.1:
                orders.order_status[int(rng.integers(orders.n))] = OrderStatus.REMOVED
                removed += 1
            before = int(tables[s].meta[nb.M_MATCHED])
            k = nb.legal_orders_from_tables_nb(orders, m.arrays, orules, s, f, 4, tables[s], ot, oa)
            k2 = nb.legal_orders_nb(state, orders, m.arrays, orules, s, f, 4, ot2, oa2)
            assert k == k2 and (ot[:k] == ot2[:k]).all() and (oa[:k] == oa2[:k]).all()
            steps += 1
            extended += before > 0
            if k > 0:
                j = int(rng.integers(k))
                nb.place_order_nb(state, orders, s, f, int(ot[j]), int(oa[j]))
    assert steps == 640 and extended > 150 and removed > 30, (extended, removed)


def _able(tabs, t, a, b):
    """Could block ``b`` execute an order of type ``t`` on area ``a``, from the placement tables (SoE 7.2:
    Move To / Forced March To within its allowance, the other types on its own area by its mask)."""
    if t in (T.MOVE_TO, T.FORCED_MARCH_TO):
        d = int(tabs.dist_r[tabs.b_row[b], a])
        return 0 < d <= int(tabs.b_allow[b, 1 if t == T.FORCED_MARCH_TO else 0])
    return int(tabs.b_area[b]) == a and (int(tabs.b_mask[b]) >> int(t)) & 1 == 1


def _order_rows_oracle(orders, m, orules, side, front, allowed, tabs):
    """The non-Recon ORDER rows of ``side`` on ``front`` by their definition (SoE 7.2, reading O2): the pool
    and the per-area limit allow the type, and the orders placed (Recon apart) with the new one can each
    have a block of their own — a maximum bipartite matching (Kuhn's augmenting paths) grows by one."""
    blocks = [int(b) for b in tabs.blocks[:int(tabs.meta[nb.M_NBS])]]
    placed = [(int(orders.order_type[o]), int(orders.order_area[o])) for o in range(orders.n)
              if orders.order_side[o] == side and orders.order_status[o] == OrderStatus.PLACED
              and orders.order_type[o] != T.RECON]

    def augment(slots, owner, i, seen):
        t, a = slots[i]
        for b in blocks:
            if b not in seen and _able(tabs, t, a, b):
                seen.add(b)
                if b not in owner or augment(slots, owner, owner[b], seen):
                    owner[b] = i
                    return True
        return False

    owner = {}
    for i in range(len(placed)):
        augment(placed, owner, i, set())
    free_used = min(int(orders.recon_placed[side, front]), orules.free_recon_per_front)
    general_used = int(orders.placed[side, front]) - free_used
    owed = orules.mandatory_recon - int(orders.recon_placed[side, front])
    remaining = allowed - general_used
    if (owed > 0 and remaining <= owed) or remaining <= 0:
        return set()
    same = {}
    for o in range(orders.n):
        if orders.order_side[o] == side and orders.order_status[o] != OrderStatus.REMOVED:
            key = (int(orders.order_type[o]), int(orders.order_area[o]))
            same[key] = same.get(key, 0) + 1
    rows = set()
    for a in np.flatnonzero(m.front == front).tolist():
        for t in range(nb.N_ORDER_TYPES):
            if t == T.RECON or orders.pool_used[side, t] >= orules.pool[t]:
                continue
            if same.get((t, a), 0) >= orules.max_same_type_per_area:
                continue
            if orules.withdraw_excludes_defend and (
                    (t == T.WITHDRAW and same.get((int(T.DEFEND), a), 0) > 0)
                    or (t == T.DEFEND and same.get((int(T.WITHDRAW), a), 0) > 0)):
                continue
            if augment(placed + [(t, a)], dict(owner), len(placed), set()):
                rows.add((t, a))
    return rows


def test_order_rows_equal_their_matching_oracle(world, orules):
    """Every non-Recon ORDER row of ``legal_orders_from_tables_nb`` (its incremental matching, the slots that
    can hand their block over, the per-row allowances and masks of the blocks left free) is one whose
    order, with those already placed, can each have a block of their own, and every such order is a row:
    random placement sequences on random positions, compared with ``_order_rows_oracle`` at every step,
    many of them with a placed order that holds a block it cannot hand over, and with links closed to the side
    (the rows' reach walked instead of read from area sets)."""
    m = world[0]
    rng = np.random.default_rng(37)
    size = 9 * m.n_areas + 1
    ot, oa = np.empty(size, np.int64), np.empty(size, np.int64)
    steps = held = walked = 0
    for position in range(16):
        state, _ = random_position(world, rng)
        if position % 2 == 0:
            state.block_prev_area[:] = -1  # else the earlier moves close links: the rows are walked (M_SETS 0)
        orders = new_order_state(state)
        tables = _both_sides_tables(state, orders, m, orules)
        for _step in range(12):
            s, f = int(rng.integers(2)), int(rng.integers(2))
            allowed = 6
            k = nb.legal_orders_from_tables_nb(orders, m.arrays, orules, s, f, allowed, tables[s], ot, oa)
            rows = {(int(t), int(a)) for t, a in zip(ot[:k], oa[:k]) if t not in (T.RECON, nb.NO_ORDER)}
            assert rows == _order_rows_oracle(orders, m, orules, s, f, allowed, tables[s])
            ns = int(tables[s].meta[nb.M_MATCHED])
            held += any(tables[s].match_slot[o] >= 0 and not tables[s].movable_slot[o] for o in range(ns))
            walked += int(tables[s].meta[nb.M_SETS]) == 0
            steps += 1
            if k > 0:
                j = int(rng.integers(k))
                nb.place_order_nb(state, orders, s, f, int(ot[j]), int(oa[j]))
    assert steps == 192 and held > 40 and walked > 20, (held, walked)


def _fresh_cache(state, orders, m, pset, side, commits):
    """A new ``OrderFeatureCache`` with ``side``'s part started on the position and ``commits`` (the
    side's placed (type, area), in order) replayed: what a cache kept along the step should equal."""
    fresh = pnb.new_order_feature_cache_nb(m.n_areas)
    none = np.empty(0, np.int64)
    pnb.order_scores_cached_nb(state, orders, m.arrays, pset, side, none, none, 0, fresh, np.empty(0))
    for t, a in commits:
        pnb.commit_order_nb(state, m.arrays, side, t, a, fresh)
    return fresh


def test_order_scores_and_features_cached_across_a_placement_step_equal_fresh_ones(world, orules):
    """The game loop keeps each side's ORDER rows and scores (``OrderFeatureCache``) for a whole placement
    step (SoE 7.2), and forgets only those a placed order changes: an own attack order commits the SP it
    counts (audit K2, ``commit_order_nb`` → ``_release_rows_nb``), an enemy marker raises the known markers
    (``enemy_marker_nb``). Along random placement sequences on dense random positions (a scripted policy on
    each side, ``marker_risk`` > 0), the carried scores and features equal, bit for bit, those of a fresh
    cache for the same position with the same commits replayed, and the scores equal the scorer's
    (``score_options_nb``) on those features — the Recon rows too, which ``order_scores_cached_nb`` scores
    without their area columns."""
    from soe_sim.engine.game import game_setup
    from soe_sim.engine.game.work import policy_set

    m = world[0]
    setup = game_setup("campaign-1920")
    ids = np.array([pnb.POLICY_IDS["balanced"], pnb.POLICY_IDS["aggressive"]], np.int64)
    params = np.array([pnb.DEFAULT_PARAMS[i] for i in ids], np.float64)
    params[0, pnb.P_MARKER_RISK], params[1, pnb.P_MARKER_RISK] = 0.4, 0.7
    pset = policy_set(setup, ids, params)
    rng = np.random.default_rng(31)
    size = 9 * m.n_areas + 1
    ot, oa = np.empty(size, np.int64), np.empty(size, np.int64)
    out, out2 = np.empty(size), np.empty(size)
    steps = attacks = committed = recon = 0
    for _ in range(30):
        state, _ = random_position(world, rng)
        state.block_prev_area[:] = -1
        orders = new_order_state(state)
        cache = pnb.new_order_feature_cache_nb(m.n_areas)
        placed = [[], []]  # each side's placed (type, area), in order: the commits to replay
        for _step in range(24):
            s, f = int(rng.integers(2)), int(rng.integers(2))
            k = nb.legal_orders_nb(state, orders, m.arrays, orules, s, f, 6, ot, oa)
            if k == 0:
                continue
            fresh = _fresh_cache(state, orders, m, pset, s, placed[s])
            pnb.order_scores_cached_nb(state, orders, m.arrays, pset, s, ot, oa, k, cache, out)
            pnb.order_scores_cached_nb(state, orders, m.arrays, pset, s, ot, oa, k, fresh, out2)
            assert np.array_equal(out[:k], out2[:k]), (steps, s)
            feat, feat2 = np.zeros((k, pnb.N_FEAT)), np.zeros((k, pnb.N_FEAT))  # a no-order row: type and area only
            pnb.fill_order_features_cached_nb(state, orders, m.arrays, pset, s, ot, oa, k, feat, cache)
            pnb.fill_order_features_cached_nb(state, orders, m.arrays, pset, s, ot, oa, k, feat2, fresh)
            assert np.array_equal(feat, feat2), (steps, s)
            pnb.score_options_nb(pset.params[s], pnb.DECISION.ORDER, feat2, k, out2)  # the scorer on the features
            assert np.array_equal(out[:k], out2[:k]), (steps, s)
            steps += 1
            recon += int((ot[:k] == nb.RECON).sum())
            real = [j for j in range(k) if ot[j] != nb.NO_ORDER]
            if not real:
                continue
            # mostly the attacks (the orders that commit SP), else any order
            att = [j for j in real if feat[j, 13] > 0 and ot[j] in (nb.MOVE_TO, nb.FORCED_MARCH_TO,
                                                                        nb.MOVE_OUT, nb.FORCED_MARCH_OUT)]
            j = int(rng.choice(att)) if att and rng.random() < 0.7 else int(rng.choice(real))
            t, a = int(ot[j]), int(oa[j])
            if nb.place_order_nb(state, orders, s, f, t, a) < 0:
                continue
            attacks += j in att
            free_before = cache.known[s, pnb.K_FREE_SP].sum()
            pnb.commit_order_nb(state, m.arrays, s, t, a, cache)
            committed += bool(cache.known[s, pnb.K_FREE_SP].sum() < free_before)
            pnb.enemy_marker_nb(m.arrays, 1 - s, a, cache, params[1 - s, pnb.P_MARKER_RISK])
            placed[s].append((t, a))
    assert steps > 400 and attacks > 150 and committed > 150 and recon > 5000, (steps, attacks, committed, recon)


def _between_steps(world, state, orders, rng):
    """What a phase may change between two placement steps, a few times over: a block moves to a
    neighbour, loses or regains SP, leaves or regains supply, is seen or hidden again; an area changes
    control or garrison (also with the same known SP); a front's initiative changes. Returns the next
    step's orders: the placed ones gone (SoE 7.5; what each side has seen kept), a few random ones."""
    m = world[0]
    on = np.flatnonzero(state.block_status == STATUS.ON_MAP)
    for _ in range(int(rng.integers(0, 3))):
        b = int(rng.choice(on))
        a = int(state.block_area[b])
        kind = int(rng.choice(10, p=[0.3, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05, 0.1, 0.1]))
        if kind == 0:
            nbrs = [int(v) for v in m.adj_indices[m.adj_indptr[a]:m.adj_indptr[a + 1]]
                    if state.block_side[b] == S or not m.eastern_link[v]]
            state.block_area[b] = rng.choice(nbrs)
        elif kind == 1:
            state.block_sp[b] = rng.integers(1, int(state.block_max_sp[b]) + 1)
        elif kind == 2:
            state.block_in_supply[b] = not state.block_in_supply[b]
        elif kind == 3:
            orders.seen[1 - state.block_side[b], b] = not orders.seen[1 - state.block_side[b], b]
        elif kind == 4:
            state.control[a] = rng.integers(-1, 2)
        elif kind == 5:
            state.garrison_side[a] = rng.integers(-1, 2) if m.garrison[a] else -1
        elif kind >= 8:  # a garrison goes and a seen block of its side there gains the SP: known SP unchanged
            held = [int(c) for c in on if state.garrison_side[state.block_area[c]] == state.block_side[c]
                    and state.block_sp[c] < state.block_max_sp[c] and orders.seen[1 - state.block_side[c], c]]
            if held:
                c = int(rng.choice(held))
                state.garrison_side[state.block_area[c]] = -1
                state.block_sp[c] += 1
        elif kind >= 6:
            f = int(rng.integers(2))
            state.initiative_side[f] = rng.integers(2)
            state.initiative_level[f] = rng.integers(0, 4)
    fresh = new_order_state(state)  # the next phase's orders: none placed, a few random ones
    fresh.seen[:] = orders.seen
    for _ in range(int(rng.integers(0, 3)) if rng.random() < 0.3 else 0):
        a = int(rng.choice(np.flatnonzero(state.block_status == STATUS.ON_MAP)))
        a = int(state.block_area[a])
        nb.place_order_nb(state, fresh, int(rng.integers(2)), int(m.front[a]), int(rng.integers(9)), a)
    return fresh


def _every_order_row(m):
    """Every (type, area) ORDER row of the map, legal or not: int64 type and area arrays."""
    types, areas = np.meshgrid(np.arange(nb.N_ORDER_TYPES), np.arange(m.n_areas))
    return types.ravel().astype(np.int64), areas.ravel().astype(np.int64)


def test_order_scores_carried_from_step_to_step_equal_fresh_ones(world, orules):
    """The game loop keeps each side's ORDER rows and scores from one placement step to its next
    (``OrderFeatureCache.carry``) and forgets those near an area whose inputs changed: its known
    counts and strengths, control or garrison (the initiative is no input: the next test); an area's
    columns within one link, its rows and scores within one link too, or two with a
    ``reinforce_risk`` (the attack orders' ``p_win`` then reads the neighbours' neighbours). Along random sequences of steps on one
    evolving position per sequence (a few changes between steps; placements, commits and enemy
    markers within each, as in the test above), the carried scores and features equal, bit for bit,
    those of a fresh cache for the same position with the step's commits replayed: at each side's
    first decision of a step the scores of every (type, area) row, legal or not, then the legal
    rows' scores and features at every decision."""
    from soe_sim.engine.game import game_setup
    from soe_sim.engine.game.work import policy_set

    m = world[0]
    setup = game_setup("campaign-1920")
    ids = np.array([pnb.POLICY_IDS["balanced"], pnb.POLICY_IDS["aggressive"]], np.int64)
    params = np.array([pnb.DEFAULT_PARAMS[i] for i in ids], np.float64)
    params[0, pnb.P_MARKER_RISK], params[1, pnb.P_MARKER_RISK] = 0.4, 0.7
    params[0, pnb.P_REINFORCE_RISK] = 0.5  # the Poles' p_win reads two links away, the Soviets' one
    pset = policy_set(setup, ids, params)
    rng = np.random.default_rng(34)
    size = 9 * m.n_areas + 1
    ot, oa = np.empty(size, np.int64), np.empty(size, np.int64)
    out, out2 = np.empty(size), np.empty(size)
    all_t, all_a = _every_order_row(m)
    n_all = all_t.shape[0]
    decisions = carried = forgotten = 0
    for _ in range(12):
        state, orders = random_position(world, rng)
        state.block_prev_area[:] = -1
        orders.seen[:] |= rng.random(orders.seen.shape) < 0.6  # known strengths, which a change may leave equal
        cache = pnb.new_order_feature_cache_nb(m.n_areas)
        for _step in range(10):
            orders = _between_steps(world, state, orders, rng)
            cache.valid[:] = False  # a new placement step (game.nb.place_orders_nb)
            placed = [[], []]
            for _decision in range(6):
                s, f = int(rng.integers(2)), int(rng.integers(2))
                k = nb.legal_orders_nb(state, orders, m.arrays, orules, s, f, 6, ot, oa)
                if k == 0:
                    continue
                if not cache.valid[s]:  # the side's first decision of the step: every row, legal or not
                    before = cache.score_done[s].sum()
                    pnb.order_scores_cached_nb(state, orders, m.arrays, pset, s, all_t, all_a, 0, cache, out)
                    carried += cache.score_done[s].sum()
                    forgotten += before - cache.score_done[s].sum()
                    pnb.order_scores_cached_nb(state, orders, m.arrays, pset, s, all_t, all_a, n_all, cache, out)
                    fresh = _fresh_cache(state, orders, m, pset, s, [])
                    pnb.order_scores_cached_nb(state, orders, m.arrays, pset, s, all_t, all_a, n_all, fresh, out2)
                    assert np.array_equal(out[:n_all], out2[:n_all]), (decisions, s)
                fresh = _fresh_cache(state, orders, m, pset, s, placed[s])
                pnb.order_scores_cached_nb(state, orders, m.arrays, pset, s, ot, oa, k, cache, out)
                pnb.order_scores_cached_nb(state, orders, m.arrays, pset, s, ot, oa, k, fresh, out2)
                assert np.array_equal(out[:k], out2[:k]), (decisions, s)
                feat, feat2 = np.zeros((k, pnb.N_FEAT)), np.zeros((k, pnb.N_FEAT))
                pnb.fill_order_features_cached_nb(state, orders, m.arrays, pset, s, ot, oa, k, feat, cache)
                pnb.fill_order_features_cached_nb(state, orders, m.arrays, pset, s, ot, oa, k, feat2, fresh)
                assert np.array_equal(feat, feat2), (decisions, s)
                decisions += 1
                real = [j for j in range(k) if ot[j] != nb.NO_ORDER]
                if not real or rng.random() < 0.6:  # few placements: most of a step's rows carry to the next
                    continue
                att = [j for j in real if feat[j, 13] > 0]
                j = int(rng.choice(att)) if att and rng.random() < 0.7 else int(rng.choice(real))
                t, a = int(ot[j]), int(oa[j])
                if nb.place_order_nb(state, orders, s, f, t, a) < 0:
                    continue
                pnb.commit_order_nb(state, m.arrays, s, t, a, cache)
                pnb.enemy_marker_nb(m.arrays, 1 - s, a, cache, params[1 - s, pnb.P_MARKER_RISK])
                placed[s].append((t, a))
    assert decisions > 500 and carried > 100_000 and forgotten > 10_000, (decisions, carried, forgotten)


def test_order_scores_do_not_read_the_initiative(world, orules):
    """The ORDER rows carried from step to step (``OrderFeatureCache.carry``) are not forgotten when a
    front's initiative changes: an attack's ``p_win`` hands the initiative to the battle kernel, but a
    battle's winner does not depend on it (SoE 6.1: the initiative changes after the battle, by its
    result). On random positions every (type, area) row has the same score and features whoever holds
    each front's initiative at whatever level; were a rule to make the winner depend on it, this test
    fails and ``_order_cache_side_nb`` must compare the initiative too."""
    from soe_sim.engine.game import game_setup
    from soe_sim.engine.game.work import policy_set

    m = world[0]
    setup = game_setup("campaign-1920")
    ids = np.array([pnb.POLICY_IDS["balanced"], pnb.POLICY_IDS["aggressive"]], np.int64)
    params = np.array([pnb.DEFAULT_PARAMS[i] for i in ids], np.float64)
    params[:, pnb.P_MARKER_RISK] = 0.5
    params[:, pnb.P_REINFORCE_RISK] = 0.5
    rng = np.random.default_rng(61)
    all_t, all_a = _every_order_row(m)
    n_all = all_t.shape[0]
    out = np.empty(n_all)
    uncertain = 0
    for _ in range(10):
        state, orders = random_position(world, rng)
        for s in range(2):
            ref = ref_feat = None
            for holder, level in ((0, 1), (1, 1), (0, 3), (1, 2), (0, 0)):
                state.initiative_side[:] = (s, 1 - s)[holder]
                state.initiative_level[:] = level
                pset = policy_set(setup, ids, params)  # an empty win-probability memo
                cache = pnb.new_order_feature_cache_nb(m.n_areas)
                pnb.order_scores_cached_nb(state, orders, m.arrays, pset, s, all_t, all_a, n_all, cache, out)
                feat = np.zeros((n_all, pnb.N_FEAT))
                pnb.fill_order_features_cached_nb(state, orders, m.arrays, pset, s, all_t, all_a, n_all, feat, cache)
                if ref is None:
                    ref, ref_feat = out.copy(), feat
                    uncertain += int(((feat[:, 13] > 0) & (feat[:, 13] < 1)).sum())
                assert np.array_equal(out, ref) and np.array_equal(feat, ref_feat), (s, holder, level)
    assert uncertain > 300, uncertain


def test_win_probability_memo_keeps_each_value_next_to_its_key(world, orules):
    """The scripted policies' win-probability memo (``PolicySet.wp_key`` / ``wp_val``) is one buffer
    seen as int64 and as float64: slot ``s``'s key at ``2 * s`` and its value at ``2 * s + 1`` (one
    cache line a hit). After the ORDER scores of random positions each value beside a key is a
    probability and there is none beside an empty slot, and scores with the memo filled, with a fresh memo
    and with a copy whose two views are separate arrays (``private_copy``) are all the same."""
    from soe_sim.engine.game import game_setup, private_copy
    from soe_sim.engine.game.work import policy_set

    m = world[0]
    setup = game_setup("campaign-1920")
    ids = np.array([pnb.POLICY_IDS["balanced"], pnb.POLICY_IDS["aggressive"]], np.int64)
    params = np.array([pnb.DEFAULT_PARAMS[i] for i in ids], np.float64)
    pset = policy_set(setup, ids, params)
    assert np.shares_memory(pset.wp_key, pset.wp_val) and pset.wp_key.shape == pset.wp_val.shape
    rng = np.random.default_rng(67)
    all_t, all_a = _every_order_row(m)
    n_all = all_t.shape[0]
    out, again, fresh, copied = (np.empty(n_all) for _ in range(4))
    for _ in range(6):
        state, orders = random_position(world, rng)
        for s in range(2):
            runs = ((pset, out), (pset, again), (policy_set(setup, ids, params), fresh), (private_copy(pset), copied))
            for ps, dest in runs:
                cache = pnb.new_order_feature_cache_nb(m.n_areas)
                pnb.order_scores_cached_nb(state, orders, m.arrays, ps, s, all_t, all_a, n_all, cache, dest)
            assert np.array_equal(out, again) and np.array_equal(out, fresh) and np.array_equal(out, copied)
    keys, values = pset.wp_key[0::2], pset.wp_val[1::2]
    used = keys != 0
    assert used.sum() > 50
    assert np.all((values[used] >= 0.0) & (values[used] <= 1.0)) and np.any((values > 0.0) & (values < 1.0))
    assert np.all(values[~used] == 0.0)  # a value only beside a key


def test_order_scores_carried_forget_two_links_away_with_a_reinforce_risk(world, orules):
    """With a ``reinforce_risk`` > 0 a Move Out's ``p_win`` counts the enemy next to the attacked
    neighbour (``_reinforced_win_prob_nb``), two links from the order's area: a change there makes
    the carried score of the Move Out go (``_order_cache_side_nb``). Own blocks in ``a``, a weak enemy
    block in its neighbour ``v``, a strong one in ``x`` next to ``v`` but not to ``a``; between two steps
    ``x``'s block loses SP. The Move Out from ``a`` carried to the second step has the fresh score, which
    differs from the first step's (the change reached it) for most such triples of the campaign map."""
    from soe_sim.engine.game import game_setup
    from soe_sim.engine.game.work import policy_set

    m = world[0]
    setup = game_setup("campaign-1920")
    ids = np.array([pnb.POLICY_IDS["balanced"], pnb.POLICY_IDS["balanced"]], np.int64)
    params = np.array([pnb.DEFAULT_PARAMS[i] for i in ids], np.float64)
    params[:, pnb.P_REINFORCE_RISK] = 0.5
    pset = policy_set(setup, ids, params)
    start = campaign_start(world)
    start.block_status[:] = STATUS.FORCE_POOL
    start.block_area[:] = -1
    start.garrison_side[:] = -1
    own = np.flatnonzero(start.block_side == P)[:2]
    enemy = np.flatnonzero(start.block_side == S)[:2]
    ip, ix, area_ids = m.adj_indptr, m.adj_indices, m.ids
    ot, oa = np.array([nb.MOVE_OUT], np.int64), np.empty(1, np.int64)
    out, out2 = np.empty(1), np.empty(1)
    triples = changed = 0
    for a in range(0, m.n_areas, 7):
        if m.eastern_link[a]:
            continue
        near_a = set(ix[ip[a]:ip[a + 1]].tolist()) | {a}
        paths = [(int(v), int(x)) for v in ix[ip[a]:ip[a + 1]] if v != a for x in ix[ip[v]:ip[v + 1]]
                 if x not in near_a]
        if not paths:
            continue
        v, x = paths[0]
        state = start.copy()
        for b, area, sp in ((own[0], a, 3), (own[1], a, 3), (enemy[0], v, 1), (enemy[1], x, 4)):
            put(state, m, int(b), area_ids[area], min(sp, int(state.block_max_sp[b])))
        orders = new_order_state(state)
        orders.seen[:] = True
        oa[0] = a
        cache = pnb.new_order_feature_cache_nb(m.n_areas)
        pnb.order_scores_cached_nb(state, orders, m.arrays, pset, P, ot, oa, 1, cache, out)
        first = out[0]
        state.block_sp[enemy[1]] = 1  # between the steps
        cache.valid[:] = False
        pnb.order_scores_cached_nb(state, orders, m.arrays, pset, P, ot, oa, 1, cache, out)
        fresh = pnb.new_order_feature_cache_nb(m.n_areas)
        pnb.order_scores_cached_nb(state, orders, m.arrays, pset, P, ot, oa, 1, fresh, out2)
        assert out[0] == out2[0], (a, v, x)
        triples += 1
        changed += out2[0] != first
    assert triples > 10 and changed > triples // 2, (triples, changed)
