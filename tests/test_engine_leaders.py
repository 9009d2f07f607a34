"""SoE 9.0 leader orders: the leader table and its rule switch, what each ability may do (range, once
per round, front, timing), the rulebook's Kiev example (Budyonny's Forced March Out, Haller's Defend),
countermanding, Stalin's immediate reorganization, Budyonny's full strength, a plain-Python oracle of
the legal rows on random positions, and the leader orders and losses of whole games.
Readings: docs/rules.md "Engine: leader orders" (L1…)."""
from __future__ import annotations

import functools

import numpy as np
import pytest

from soe_sim.data import load_blocks, load_map, load_scenario
from soe_sim.data.enums import ARM, FRONT, SIDE, LeaderAbility
from soe_sim.engine.game import game_setup, play_game
from soe_sim.engine.game import nb as gnb
from soe_sim.engine.leaders import (
    ABILITY,
    ANY_FRONT,
    LT_ABILITY,
    LT_FRONT,
    LT_RANGE,
    NO_ABILITY,
    Window,
    leader_table,
    legal_leader_orders,
)
from soe_sim.engine.leaders import nb as lnb
from soe_sim.engine.orders import (
    OrderStatus,
    OrderType,
    apply_move,
    legal_moves,
    new_order_state,
    order_constants,
)
from soe_sim.engine.orders import nb as onb
from soe_sim.engine.state import STATUS, new_game
from soe_sim.errors import SoeInputError
from soe_sim.rules import load_rules
from tests import engine_naive as naive

pytestmark = pytest.mark.game_loop  # plays games: compiled once for the session (conftest.py)

P, S = int(SIDE.POLISH), int(SIDE.SOVIET)
T = OrderType


@pytest.fixture(scope="module")
def kiev():
    return game_setup("kiev-offensive")


def blank(setup):
    """The scenario's block universe with nothing on the map (no garrison), orders reset."""
    st = setup.state0.copy()
    on = st.block_status == STATUS.ON_MAP
    st.block_status[on] = STATUS.FORCE_POOL
    st.block_area[:] = -1
    st.block_sp[on] = 0
    st.garrison_side[:] = -1
    orders = setup.orders0.copy()
    onb.reset_phase_nb(st, orders, False)
    return st, orders, {b: i for i, b in enumerate(setup.block_ids)}


def put(st, gm, b, area, sp=None, supply=True):
    st.block_status[b] = STATUS.ON_MAP
    st.block_area[b] = gm.index(area)
    st.block_sp[b] = st.block_max_sp[b] if sp is None else sp
    st.block_in_supply[b] = supply
    st.block_prev_area[b] = -1


def first_block(st, side, arm, skip=()):
    return next(int(b) for b in range(st.n_blocks) if st.block_side[b] == side and st.block_arm[b] == arm
                and st.block_max_sp[b] >= 3 and b not in skip)


def rows_of(rows, leader):
    return {(t, a, b) for L, t, a, b in rows if L == leader}


# --- the leader table and the rule switch ---------------------------------------------------------


def test_leader_table_from_leaders_toml(kiev):
    table, ids = kiev.cfg.leaders, {b: i for i, b in enumerate(kiev.block_ids)}
    want = {"pl-pilsudski": (ABILITY.ANY_ORDER, 2, ANY_FRONT), "ru-tukhachevsky": (ABILITY.ANY_ORDER, 2, ANY_FRONT),
            "pl-sikorski": (ABILITY.RECON, 2, ANY_FRONT), "pl-haller": (ABILITY.FREE_DEFEND, 2, ANY_FRONT),
            "ru-budyonny": (ABILITY.FORCED_MARCH_OUT_FULL_STRENGTH, 0, ANY_FRONT),
            "ru-stalin": (ABILITY.REORGANIZE, 0, int(FRONT.SOUTH))}
    for bid, row in want.items():
        assert tuple(table[ids[bid]]) == row, bid
    others = [i for b, i in ids.items() if b not in want]
    assert (table[others, LT_ABILITY] == NO_ABILITY).all()
    assert (table[:, LT_FRONT][others] == ANY_FRONT).all() and (table[:, LT_RANGE][others] == 0).all()


def test_rule_switch_and_no_leaders_scenario(kiev):
    off = load_rules(overlays=["no-leader-abilities"])
    assert off["leaders.abilities"] is False and "leaders.abilities" in off.sources
    t = leader_table(kiev.state0, kiev.roster, off)
    assert (t[:, LT_ABILITY] == NO_ABILITY).all()
    assert not lnb.any_leader_nb(t) and lnb.any_leader_nb(kiev.cfg.leaders)
    tut = game_setup("tutorial")  # `no_leaders` special rule
    assert (tut.cfg.leaders[:, LT_ABILITY] == NO_ABILITY).all()


def test_bad_leader_data_is_a_clear_error(kiev, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[leaders]\nabilities = "yes"\n')
    with pytest.raises(SoeInputError) as e:
        leader_table(kiev.state0, kiev.roster, load_rules(overlays=[str(bad)]))
    msg = str(e.value)  # the overlay loader checks the type against the base file
    assert "bad.toml" in msg and "abilities" in msg and "'yes'" in msg
    rules = load_rules()
    rules.values["leaders"]["abilities"] = "yes"  # a base file with a bad value
    with pytest.raises(SoeInputError) as e:
        leader_table(kiev.state0, kiev.roster, rules)
    msg = str(e.value)
    assert "soe.toml" in msg and "field 'abilities'" in msg and "'yes'" in msg and "true or false" in msg
    roster = load_blocks()
    roster.leaders.loc[roster.leaders["block"] == "pl-haller", "ability"] = "free_defnd"
    with pytest.raises(SoeInputError) as e:
        leader_table(kiev.state0, roster, load_rules())
    msg = str(e.value)
    assert "leaders.toml" in msg and "pl-haller" in msg and "field 'ability'" in msg and "free_defnd" in msg


# --- SoE 9.0 example: Budyonny and Haller at Kiev -------------------------------------------------


def test_soe_9_0_kiev_example_budyonny_and_haller(kiev):
    """SoE 9.0 example: all Move orders executed, Budyonny gives a Forced March Out to two cavalry
    blocks that executed no order; they move three areas into Kiev, held by one Polish block that
    just moved there. Haller, one area away, cannot give Kiev a Defend Area: its only block executed
    a Move order. Budyonny's blocks fight at full strength."""
    gm, orules, table = kiev.game_map, kiev.orules, kiev.cfg.leaders
    st, orders, ids = blank(kiev)
    bud, hal = ids["ru-budyonny"], ids["pl-haller"]
    cav = [ids["ru-4-cd"], ids["ru-6-cd"]]
    pol = first_block(st, P, ARM.INFANTRY)
    for b in (bud, *cav):
        put(st, gm, b, "uman")
    put(st, gm, hal, "zhytomyr")
    put(st, gm, pol, "kiev")
    st.block_prev_area[pol] = gm.index("zhytomyr")  # it executed a Move order into Kiev this phase
    st.block_arrival[pol] = 1
    orders.executed[pol] = orders.moved[pol] = True
    used = np.zeros(st.n_blocks, bool)
    assert naive.command_range(naive.Board.from_map(gm), "soviet", "uman", 3).get("kiev") == 3

    rows = legal_leader_orders(st, orders, gm, orules, table, used, S, Window.BEFORE_BATTLES)
    assert rows_of(rows, bud) == {(T.FORCED_MARCH_OUT, "uman", None)}  # range 0: his own area
    # given after the forced marches: carried out at once (L3)
    assert lnb.executes_now_nb(ABILITY.FORCED_MARCH_OUT_FULL_STRENGTH, onb.FORCED_MARCH_OUT, Window.BEFORE_BATTLES)
    lnb.mark_used_nb(orders, used, S, bud)
    assert orders.seen[P, bud]  # revealed to the opponent
    o = lnb.place_leader_order_nb(orders, gm.arrays, S, onb.FORCED_MARCH_OUT, gm.index("uman"))
    order_leader = np.full(orders.order_type.shape[0], -1, np.int64)
    order_leader[o] = bud
    assert int(orders.placed[S].sum()) == 0  # no order slot of the front is used (L1)
    for c in cav:
        into_kiev = [r for r in legal_moves(st, orders, gm, orules, o) if r[0] == c and r[1] == "kiev" and r[3] == 0]
        assert into_kiev, "a cavalry forced march reaches three areas"
        apply_move(st, orders, gm, orules, o, c, "kiev", into_kiev[0][2])
    assert OrderStatus(int(onb.finish_order_nb(orders, o))) == OrderStatus.EXECUTED
    assert all(st.block_area[c] == gm.index("kiev") for c in cav)

    prows = legal_leader_orders(st, orders, gm, orules, table, np.zeros(st.n_blocks, bool), P, Window.BEFORE_BATTLES)
    assert (T.DEFEND, "zhytomyr", None) in rows_of(prows, hal)  # Haller's own block began the phase there
    assert not any(a == "kiev" for _, a, _ in rows_of(prows, hal))
    # had the Polish block stayed in Kiev since the phase began, the free Defend would be legal
    st2, orders2 = st.copy(), orders.copy()
    st2.block_prev_area[pol] = -1
    orders2.executed[pol] = orders2.moved[pol] = False
    assert (T.DEFEND, "kiev", None) in rows_of(
        legal_leader_orders(st2, orders2, gm, orules, table, np.zeros(st.n_blocks, bool), P,
                            Window.BEFORE_BATTLES), hal)

    # "These blocks fight at full strength": the ordinary forced march halves them, Budyonny's does not
    assert orders.forced_march[cav].all()
    plain = orders.copy()
    lnb.full_strength_nb(plain, table, np.full_like(order_leader, -1))
    half = np.zeros(st.n_blocks, bool)
    onb.block_half_nb(plain, half)
    assert half[cav].all()
    lnb.full_strength_nb(orders, table, order_leader)
    onb.block_half_nb(orders, half)
    assert not half[cav].any()
    # once per round: Budyonny has nothing more to give, in any window
    for w in Window:
        assert not rows_of(legal_leader_orders(st, orders, gm, orules, table, used, S, w), bud)



def test_soe_9_0_leader_killed_and_captured_vp_in_the_log(kiev):
    """SoE 9.0 with 7.44 and 7.8: a defender with two leaders and a division is beaten (5 losses, a
    great victory) and cannot retreat: the division and one leader are destroyed (that leader is
    killed: 1 VP), the other leader is captured (2 VP). The log has one LEADER_LOST per leader and one
    VP event per award in the resolver's order, with the track's actual changes across the missing 0
    (G19)."""
    from soe_sim.engine.battles import RECORD_FIELDS, resolve_battle
    from soe_sim.engine.game import new_event_log

    gm = kiev.game_map
    st, orders, ids = blank(kiev)
    pil, hal = ids["pl-pilsudski"], ids["pl-haller"]
    inf = first_block(st, P, ARM.INFANTRY)
    for b in (pil, hal, inf):
        put(st, gm, b, "zhytomyr")
    att = [b for b in range(st.n_blocks) if st.block_side[b] == S and st.block_arm[b] == ARM.INFANTRY
           and st.block_max_sp[b] == 4][:4]
    assert len(att) == 4
    for b in att:
        put(st, gm, b, "zhytomyr")
        st.block_prev_area[b] = gm.index("berdychiv")
        st.block_arrival[b] = 1
    st.control[:] = S  # no Polish key city anywhere: no retreat (SoE 7.42)
    st.vp[0] = 2
    snap_status, snap_area = st.block_status.copy(), st.block_area.copy()
    rec = resolve_battle(st, gm, gm.index("zhytomyr"), 10, 0)
    assert rec["winner"] == S and rec["defender_losses"] == 5 and rec["great_victory"] == 1
    assert rec["leaders_killed"] == 1 and rec["leaders_captured"] == 1
    killed, captured = min(pil, hal), max(pil, hal)  # the losses reach the lower index first (E-B2)
    log = new_event_log(64)
    raw = np.array([rec[k] for k in RECORD_FIELDS], np.int64)
    gnb.log_battle_vp_nb(st, log.records, log.ctr, kiev.cr, kiev.er, kiev.cfg, raw, 2, gm.index("zhytomyr"),
                         snap_status, snap_area)
    ev = log.used()
    got = [(int(e["kind"]), int(e["block"]), int(e["value"]), int(e["value2"])) for e in ev]
    E, C = gnb.EVENT, gnb.CAUSE
    assert got == [(E.LEADER_LOST, killed, gnb.LEADER_KILLED, C.BATTLE), (E.VP, killed, -1, C.LEADER_KILLED),
                   (E.VP, -1, -2, C.GREAT_VICTORY), (E.LEADER_LOST, captured, gnb.LEADER_CAPTURED, C.BATTLE),
                   (E.VP, captured, -2, C.LEADER_CAPTURED)]
    assert int(st.vp[0]) == 2 + sum(v for k, _, v, _ in got if k == E.VP) == -3


# --- each ability's limits --------------------------------------------------------------------------


def test_soe_9_0_ranges_windows_and_eastern_links(kiev):
    gm, orules, table = kiev.game_map, kiev.orules, kiev.cfg.leaders
    board = naive.Board.from_map(gm)
    st, orders, ids = blank(kiev)
    sik, pil, hal, tuk = ids["pl-sikorski"], ids["pl-pilsudski"], ids["pl-haller"], ids["ru-tukhachevsky"]
    for b in (sik, pil, hal):
        put(st, gm, b, "gomel")  # next to the Eastern Link Klintsy
    put(st, gm, tuk, "gomel")
    used = np.zeros(st.n_blocks, bool)
    within = set(naive.command_range(board, "polish", "gomel", 2))
    assert "klintsy" not in within  # SoE 1.4: the Poles never count into an Eastern Link
    for w in Window:
        rows = legal_leader_orders(st, orders, gm, orules, table, used, P, w)
        assert rows_of(rows, sik) == {(T.RECON, a, None) for a in within}  # any area within 2, any time
        if w == Window.AFTER_BATTLES:  # "None may be given once battles are being resolved"
            assert not rows_of(rows, pil) and not rows_of(rows, hal)
        else:
            assert {(T.RECON, a, None) for a in within} <= rows_of(rows, pil)
            assert rows_of(rows, hal) == {(T.DEFEND, "gomel", None)}  # the only area with a block
            assert all(a in within for _, a, _ in rows_of(rows, pil))
    sov = rows_of(legal_leader_orders(st, orders, gm, orules, table, used, S, Window.BEFORE_FORCED), tuk)
    assert (T.RECON, "klintsy", None) in sov  # Soviet leaders may
    used[sik] = True
    assert not rows_of(legal_leader_orders(st, orders, gm, orules, table, used, P, Window.BEFORE_MOVES), sik)


def test_soe_9_0_stalin_reorganizes_at_once_on_the_southern_front_only(kiev):
    gm, orules, table = kiev.game_map, kiev.orules, kiev.cfg.leaders
    st, orders, ids = blank(kiev)
    sta = ids["ru-stalin"]
    inf = first_block(st, S, ARM.INFANTRY)
    full = first_block(st, S, ARM.INFANTRY, skip=(inf,))
    for b, sp in ((sta, None), (inf, 1), (full, None)):
        put(st, gm, b, "kiev", sp)  # Kiev is on the southern front
    used = np.zeros(st.n_blocks, bool)
    assert rows_of(legal_leader_orders(st, orders, gm, orules, table, used, S, Window.BEFORE_FORCED), sta) == {
        (T.REORGANIZE, "kiev", inf)}  # the full block and Stalin himself (1 SP) cannot gain
    assert lnb.executes_now_nb(ABILITY.REORGANIZE, onb.REORGANIZE, Window.BEFORE_FORCED)
    gain = lnb.reorganize_now_nb(st, orders, orules, inf)
    assert gain == orules.reorganize_gain and st.block_sp[inf] == 1 + gain
    assert orders.executed[inf]  # it executed the leader's order: it may not move this phase
    st.block_in_supply[inf] = False
    assert not rows_of(legal_leader_orders(st, orders, gm, orules, table, used, S, Window.BEFORE_FORCED), sta)
    # on the northern front Stalin gives nothing
    st2, orders2, _ = blank(kiev)
    put(st2, gm, sta, "gomel")
    put(st2, gm, inf, "gomel", 1)
    assert gm.front[gm.index("gomel")] == 0
    assert not legal_leader_orders(st2, orders2, gm, orules, table, used, S, Window.BEFORE_FORCED)


def test_soe_9_0_leader_order_countermands_the_orders_it_replaces(kiev):
    gm, orules, table = kiev.game_map, kiev.orules, kiev.cfg.leaders
    st, orders, ids = blank(kiev)
    pil = ids["pl-pilsudski"]
    a, b = first_block(st, P, ARM.INFANTRY), first_block(st, P, ARM.CAVALRY)
    for x in (pil, a, b):
        put(st, gm, x, "rivne")
    ri = gm.index("rivne")
    front = int(gm.front[ri])
    o_def = onb.place_order_nb(st, orders, P, front, onb.DEFEND, ri)
    o_rail = onb.place_order_nb(st, orders, P, front, onb.RAIL_TRANSPORT, ri)
    o_to = onb.place_order_nb(st, orders, P, front, onb.MOVE_TO, ri)
    used = np.zeros(st.n_blocks, bool)
    mine = rows_of(legal_leader_orders(st, orders, gm, orules, table, used, P, Window.BEFORE_FORCED), pil)
    assert (T.MOVE_OUT, "rivne", None) in mine and (T.RAIL_TRANSPORT, "rivne", None) in mine
    assert (T.DEFEND, "rivne", None) not in mine and (T.MOVE_TO, "rivne", None) not in mine  # never two of a type
    pool = orders.pool_used.copy()
    removed = np.empty(8, np.int64)
    k = lnb.countermand_nb(orders, P, ri, onb.MOVE_OUT, removed)
    assert k == 2 and set(removed[:k]) == {o_def, o_rail}
    assert orders.order_status[o_def] == onb.REMOVED and orders.order_status[o_rail] == onb.REMOVED
    assert orders.order_status[o_to] == onb.PLACED  # not an order of the area's blocks
    assert orders.pool_used[P, onb.DEFEND] == pool[P, onb.DEFEND] - 1
    placed = orders.placed.copy()
    o = lnb.place_leader_order_nb(orders, gm.arrays, P, onb.MOVE_OUT, ri)
    assert orders.order_type[o] == onb.MOVE_OUT and orders.order_status[o] == onb.PLACED
    assert orders.order_front[o] == front and np.array_equal(orders.placed, placed)
    assert lnb.countermand_nb(orders, P, ri, onb.RECON, removed) == 0  # a Recon is given to no block


def test_executes_now_reading_L3():
    A, W = ABILITY, Window
    now = lnb.executes_now_nb
    assert not now(A.ANY_ORDER, onb.FORCED_MARCH_OUT, W.BEFORE_FORCED)
    assert now(A.ANY_ORDER, onb.FORCED_MARCH_TO, W.BEFORE_MOVES)
    assert not now(A.ANY_ORDER, onb.RECON, W.BEFORE_FORCED) and now(A.ANY_ORDER, onb.RECON, W.BEFORE_MOVES)
    assert not now(A.ANY_ORDER, onb.MOVE_TO, W.BEFORE_MOVES) and now(A.ANY_ORDER, onb.MOVE_OUT, W.BEFORE_BATTLES)
    assert not now(A.ANY_ORDER, onb.WITHDRAW, W.BEFORE_MOVES) and now(A.ANY_ORDER, onb.WITHDRAW, W.BEFORE_BATTLES)
    for w in (W.BEFORE_FORCED, W.BEFORE_MOVES, W.BEFORE_BATTLES):
        for t in (onb.DEFEND, onb.REORGANIZE, onb.RAIL_TRANSPORT):
            assert not now(A.ANY_ORDER, t, w)
        assert not now(A.FREE_DEFEND, onb.DEFEND, w)
    for w in W:
        assert now(A.RECON, onb.RECON, w)  # "The Recon takes place immediately"


# --- oracle -----------------------------------------------------------------------------------------


def _random_leader_position(m, roster, rules, rng):
    state = new_game(load_scenario("campaign-1920"), m, roster, rules)
    orders = new_order_state(state)
    table = leader_table(state, roster, rules)
    leaders = np.flatnonzero(table[:, LT_ABILITY] != NO_ABILITY)
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
    chosen = list(leaders) + [int(b) for b in rng.permutation(state.n_blocks)[:34] if b not in leaders]
    for b in chosen:
        s = int(state.block_side[b])
        a = int(rng.choice([a for a in ball if s == S or not m.eastern_link[a]]))
        state.block_status[b] = STATUS.ON_MAP
        state.block_area[b] = a
        state.block_sp[b] = rng.integers(1, int(state.block_max_sp[b]) + 1)
        state.block_in_supply[b] = rng.random() < 0.85
        u = rng.random()
        if u < 0.15:  # moved earlier this phase
            nbrs = m.adj_indices[m.adj_indptr[a]:m.adj_indptr[a + 1]]
            state.block_prev_area[b] = int(rng.choice(nbrs))
            state.block_arrival[b] = rng.integers(1, 20)
            orders.executed[b] = orders.moved[b] = True
        elif u < 0.25:
            orders.pinned[b] = True
        elif u < 0.32:
            orders.executed[b] = True
        elif u < 0.36:
            orders.fought[b] = True
    for _ in range(int(rng.integers(4, 14))):
        t = int(rng.integers(9))
        a = int(rng.choice(ball))
        o = onb.place_order_nb(state, orders, int(rng.integers(2)), int(m.front[a]), t, a)
        if rng.random() < 0.3:
            orders.order_status[o] = rng.choice([onb.EXECUTED, onb.REMOVED])
    used = rng.random(state.n_blocks) < 0.2
    return state, orders, table, used


def _oracle_rows(board, m, state, orders, table, used, side, window, orules):
    arr = dict(block_side=state.block_side, block_arm=state.block_arm, block_area=state.block_area,
               block_status=state.block_status, block_sp=state.block_sp, garrison_side=state.garrison_side,
               control=state.control, block_prev_area=state.block_prev_area, block_arrival=state.block_arrival)
    pos = naive.position_of(board, arr)
    flags = [dict(executed=bool(orders.executed[b]), pinned=bool(orders.pinned[b]), moved=bool(orders.moved[b]),
                  detached=bool(orders.detached[b]), rail_moved=bool(orders.rail_moved[b]),
                  fought=bool(orders.fought[b]), in_supply=bool(state.block_in_supply[b]),
                  max_sp=int(state.block_max_sp[b])) for b in range(state.n_blocks)]
    status = {onb.PLACED: "placed", onb.EXECUTED: "executed", onb.REMOVED: "removed"}
    olist = [(naive.SIDES[int(orders.order_side[o])], naive.ORDER_NAMES[int(orders.order_type[o])],
              board.ids[int(orders.order_area[o])], status[int(orders.order_status[o])]) for o in range(orders.n)]
    abil = {int(a): a.slug for a in LeaderAbility}
    leaders = {int(b): (abil[int(table[b, LT_ABILITY])], int(table[b, LT_RANGE]),
                        None if table[b, LT_FRONT] < 0 else ("north", "south")[int(table[b, LT_FRONT])])
               for b in np.flatnonzero(table[:, LT_ABILITY] != NO_ABILITY)}
    arms = {"infantry": ARM.INFANTRY, "cavalry": ARM.CAVALRY, "leader": ARM.LEADER}
    rules = {"move": {k: onb.allowance_nb(orules, v, False) for k, v in arms.items()},
             "forced": {k: onb.allowance_nb(orules, v, True) for k, v in arms.items()},
             "rail_depot_range": orules.rail_depot_range, "order_room": orders.n < orders.order_type.shape[0]}
    return naive.leader_orders(board, pos, flags, olist, leaders, set(np.flatnonzero(used).tolist()),
                               naive.SIDES[side], naive.WINDOWS[window], rules)


def test_legal_leader_orders_match_oracle():
    m, roster, rules = load_map(), load_blocks(), load_rules()
    orules = order_constants(rules)
    board = naive.Board.from_map(m)
    rng = np.random.default_rng(20240901)
    checked = nonempty = 0
    kinds = set()
    for _ in range(40):
        state, orders, table, used = _random_leader_position(m, roster, rules, rng)
        for side in (P, S):
            window = int(rng.integers(4))
            kern = legal_leader_orders(state, orders, m, orules, table, used, side, window)
            assert len(kern) == len(set(kern))
            got = {(L, t.slug, a, b) for L, t, a, b in kern}
            assert got == _oracle_rows(board, m, state, orders, table, used, side, window, orules), (side, window)
            checked += 1
            nonempty += bool(got)
            kinds |= {t for _, t, _, _ in got}
    assert checked == 80 and nonempty > 40
    assert {"recon", "defend", "move_out", "move_to", "forced_march_out", "reorganize"} <= kinds


def test_legal_leader_orders_with_one_leader_ready_match_oracle():
    """One leader ready at a time (every other one used this round): the kernel then computes only what that
    leader's ability reads (no enemy presence or closed links for a Defend, Recon or Reorganize leader, no block
    counts for Recon or Reorganize); the rows must still be the oracle's."""
    m, roster, rules = load_map(), load_blocks(), load_rules()
    orules = order_constants(rules)
    board = naive.Board.from_map(m)
    rng = np.random.default_rng(20261127)
    abilities_seen = set()
    for _ in range(10):
        state, orders, table, _ = _random_leader_position(m, roster, rules, rng)
        for leader in np.flatnonzero(table[:, LT_ABILITY] != NO_ABILITY):
            used = np.ones(state.n_blocks, dtype=bool)
            used[leader] = False
            side = int(state.block_side[leader])
            window = int(rng.integers(4))
            kern = legal_leader_orders(state, orders, m, orules, table, used, side, window)
            got = {(L, t.slug, a, b) for L, t, a, b in kern}
            assert got == _oracle_rows(board, m, state, orders, table, used, side, window, orules), (leader, window)
            if got:
                abilities_seen.add(int(table[leader, LT_ABILITY]))
    assert len(abilities_seen) == len({int(a) for a in LeaderAbility})


def test_legal_leader_orders_on_a_reused_scratch_equal_a_fresh_listing():
    """The game loop lists with one ``LeaderScratch`` for the whole game, whose per-area tables are written
    and read only in the ready leaders' command ranges: along random positions, sides, windows and
    leaders used, the rows on the reused scratch equal those of a fresh scratch, in the same order."""
    m, roster, rules = load_map(), load_blocks(), load_rules()
    orules = order_constants(rules)
    rng = np.random.default_rng(20261128)
    lw = None
    rows_seen = 0
    for _ in range(60):
        state, orders, table, used = _random_leader_position(m, roster, rules, rng)
        if lw is None:
            lw = lnb.new_leader_work_nb(table, m.n_areas, state.n_blocks, orders.order_type.shape[0],
                                        m.arrays.adj_indices.shape[0])
        cap = lw.r_leader.shape[0]
        for _ in range(4):
            side = int(rng.integers(2))
            window = int(rng.integers(4))
            if rng.random() < 0.5:  # one leader ready at a time, as in most windows of a game
                used = np.ones(state.n_blocks, dtype=bool)
                used[int(rng.choice(np.flatnonzero(table[:, LT_ABILITY] != NO_ABILITY)))] = False
            fresh = [np.empty(cap, np.int64) for _ in range(4)]
            k = lnb.legal_leader_orders_nb(state, orders, m.arrays, orules, table, used, side, window, *fresh)
            got = lnb.legal_leader_orders_scratch_nb(state, orders, m.arrays, orules, table, used, side, window,
                                                     lw.r_leader, lw.r_type, lw.r_area, lw.r_block, lw.scr)
            assert got == k
            for a, b in zip((lw.r_leader, lw.r_type, lw.r_area, lw.r_block), fresh):
                assert a[:k].tolist() == b[:k].tolist()
            rows_seen += k
    assert rows_seen > 500


# --- whole games --------------------------------------------------------------------------------------

GAME_SEED = 31
N_GAMES = 6


@functools.lru_cache(maxsize=8)
def _games(scenario, polish="random", soviet="random"):
    return [play_game(scenario, (GAME_SEED, i), polish, soviet, check_invariants=True) for i in range(N_GAMES)]


@pytest.mark.parametrize("scenario", ["battle-of-warsaw", "kiev-offensive"])
def test_leader_orders_in_games_respect_the_limits(scenario):
    """Every LEADER_ORDER of random games: once per round per leader (SoE 9.0), within the leader's
    range of his position, on his front, before the battles except Sikorski's Recon, and followed by
    what it does (Sikorski's RECON at once, Stalin's REORGANIZED)."""
    setup = game_setup(scenario)
    board = naive.Board.from_map(setup.game_map)
    ids = {b: i for i, b in enumerate(setup.block_ids)}
    table = setup.cfg.leaders
    seen = set()
    for res in _games(scenario):
        assert res.violations == 0, res.first_violation
        ev = res.events
        lo = ev[ev["kind"] == "leader_order"]
        assert not lo.duplicated(["round", "block"]).any()
        for i, e in lo.iterrows():
            L = ids[e["block"]]
            ab = int(table[L, LT_ABILITY])
            seen.add(ab)
            assert e["area"] in naive.command_range(board, e["side"], e["area2"], int(table[L, LT_RANGE]))
            if table[L, LT_FRONT] >= 0:
                assert board.front[e["area2"]] == ("north", "south")[int(table[L, LT_FRONT])]
            phase = ev[(ev["round"] == e["round"]) & (ev["phase"] == e["phase"])]
            battles = phase.index[phase["kind"] == "battle"]
            if e["value2"] == Window.AFTER_BATTLES:
                assert ab == ABILITY.RECON and (not len(battles) or i > battles[-1])
            elif len(battles):
                assert i < battles[0]
            nxt = ev.loc[i + 1]
            if ab == ABILITY.RECON:
                assert nxt["kind"] == "recon" and nxt["area"] == e["area"] and nxt["side"] == e["side"]
            elif ab == ABILITY.REORGANIZE:
                assert nxt["kind"] == "reorganized" and nxt["area"] == e["area"] and nxt["value"] >= 0
    assert len(seen) >= 3


def test_battle_vp_by_sub_cause_and_leader_losses():
    """G19: the VP of battles are logged by sub-cause (never the plain BATTLE cause); every leader
    eliminated in a battle has its LEADER_LOST (killed 1 / captured 2) and each LEADER_LOST its VP
    event; the track is still the start plus the VP events."""
    sub = 0
    for sc in ("battle-of-warsaw", "kiev-offensive"):
        setup = game_setup(sc)
        start = int(setup.state0.vp[0])
        leaders = set(setup.block_ids[setup.state0.block_arm == ARM.LEADER])
        for res in _games(sc):
            ev = res.events
            vp = ev[ev["kind"] == "vp"]
            assert res.vp == start + int(vp["value"].sum())
            assert not (vp["value2"] == gnb.CAUSE.BATTLE).any()
            sub += int(vp["value2"].isin([gnb.CAUSE.GREAT_VICTORY, gnb.CAUSE.ENCIRCLEMENT, gnb.CAUSE.LEADER_KILLED,
                                          gnb.CAUSE.LEADER_CAPTURED]).sum())
            ll = ev[ev["kind"] == "leader_lost"]
            for _, e in ll.iterrows():
                cause = gnb.CAUSE.LEADER_KILLED if e["value"] == gnb.LEADER_KILLED else gnb.CAUSE.LEADER_CAPTURED
                assert ((vp["block"] == e["block"]) & (vp["value2"] == cause)).sum() == 1
            elim = ev[(ev["kind"] == "block_removed") & (ev["value"] == int(STATUS.ELIMINATED_PERMANENT))
                      & (ev["value2"] == gnb.CAUSE.BATTLE) & ev["block"].isin(leaders)]
            assert set(elim["block"]) <= set(ll["block"])
    assert sub > 0


def test_rule_switch_off_means_no_leader_orders_in_games():
    """`leaders.abilities = false` (overlay no-leader-abilities): the same game gives no leader order
    and still keeps every invariant; with the rule on, the first game gives some."""
    from soe_sim.engine.game import _build_setup

    off = _build_setup(load_scenario("battle-of-warsaw"), load_map(), load_blocks(),
                       load_rules(overlays=["no-leader-abilities"]))
    res = play_game(off, (GAME_SEED, 0), check_invariants=True)
    assert res.violations == 0 and not (res.events["kind"] == "leader_order").any()
    assert (_games("battle-of-warsaw")[0].events["kind"] == "leader_order").any()


def test_scripted_policies_give_leader_orders():
    """The scripted scorer values leader orders (decision LEADER) and uses some of them."""
    n = {"polish": 0, "soviet": 0}
    for res in _games("battle-of-warsaw", "balanced", "aggressive"):
        assert res.violations == 0, res.first_violation
        lo = res.events[res.events["kind"] == "leader_order"]
        for s in n:
            n[s] += int((lo["side"] == s).sum())
    assert n["polish"] > 0 and n["soviet"] > 0
