"""Players' choices the rulebook leaves open, and where blocks may go (issue #4):

* SoE 7.4 / 10.0 — the order of battles: smallest first, northern front first in 3–4 player
  scenarios, the initiative holder choosing among equal ones (``BATTLE_ORDER``, reading E-B1);
* SoE 7.43 — advance after battle: the winning attacker may send blocks back (``ADVANCE``, E-B6);
* SoE 7.2 — the Withdraw loss "from any one block" (``WITHDRAW_LOSS``, O8);
* SoE 7.3 — orders of a group executed "in any order" (``EXEC_ORDER``, G8);
* SoE 7.1 — the face-down card play (G17);
* neutral nations, Kaunas, ``max_distance`` and ``front_restriction`` (G15, G16), the "in Warsaw"
  Events' Area cards (EV8), the Klintsy rivalry (10.2, RF12).

Kernel tests use the tutorial map positions of the rulebook examples; loop tests read the event logs
of seeded games (random policy, or a recording Python policy).
"""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest

from soe_sim.data import load_blocks, load_map, load_scenario
from soe_sim.data.enums import ARM, FRONT, SIDE, Nation
from soe_sim.engine.battles import (
    apply_advance,
    battle_blocks,
    battle_candidates,
    find_battles,
    legal_advance,
    resolve_battle,
)
from soe_sim.engine.cards.nb import HAND
from soe_sim.engine.events import card_play_context, legal_event_targets
from soe_sim.engine.game import Decision, game_setup, nb, play_game
from soe_sim.engine.game.step import StepGame, describe_options
from soe_sim.engine.nb import N_SUPPLY_SLOTS, check_supply, new_supply_search_cache_nb
from soe_sim.engine.orders import (N_WITHDRAW_INFO, OrderType, apply_move, move_capacity, new_order_state,
                                   order_constants, place_order)
from soe_sim.engine.orders import nb as onb
from soe_sim.engine.state import STATUS, engine_constants, new_game
from soe_sim.rules import load_rules

pytestmark = pytest.mark.game_loop  # plays games: compiled once for the session (conftest.py)

P, S = int(SIDE.POLISH), int(SIDE.SOVIET)
LIT = int(Nation.LITHUANIAN)


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


@functools.lru_cache(maxsize=8)
def _games(scenario, n, seed=21):
    return [play_game(scenario, (seed, i), check_invariants=True) for i in range(n)]


def _area_front(scenario):
    setup = game_setup(scenario)
    return {a: int(f) for a, f in zip(setup.area_ids, setup.game_map.front)}


# --- SoE 7.4, 10.0: the order of battles (E-B1) ----------------------------------------------------


def test_soe_7_4_battle_candidates_smallest_equal_north_first(world):
    """The next battle: the smallest; equal ones on one front are the initiative holder's choice;
    with 10.0 (3–4 player scenarios) the northern battles come first whatever their size."""
    game_map = world[0]
    ix = game_map.index
    n1, n2, s1 = ix("zlobin"), ix("kalenkovichi"), ix("lutsk")
    assert game_map.front[n1] == game_map.front[n2] == FRONT.NORTH and game_map.front[s1] == FRONT.SOUTH
    out = np.empty(8, np.int64)
    cases = [
        # (areas, sizes) smallest first, ties by index, as find_battles_nb gives them
        ((s1, n1, n2), (2, 2, 5), False, [n1, s1], FRONT.NORTH),  # equal on both fronts: north's
        ((s1, n1, n2), (2, 2, 5), True, [n1], FRONT.NORTH),
        ((s1, n2), (2, 6), False, [s1], FRONT.SOUTH),
        ((s1, n2), (2, 6), True, [n2], FRONT.NORTH),  # 10.0: the big northern battle first
        ((n1, n2, s1), (3, 3, 3), True, [n1, n2], FRONT.NORTH),
    ]
    for areas, sizes, north_first, want, want_front in cases:
        a = np.array(areas, np.int64)
        z = np.array(sizes, np.int64)
        k, f = nb.battle_candidates_nb(game_map.arrays, north_first, a, z, len(a), out)
        got = sorted(int(x) for x in out[:k])
        assert got == sorted(x for x in want if game_map.front[x] == want_front), (areas, sizes, north_first)
        assert f == want_front


def test_soe_7_41_example_battles_are_not_tied(world):
    """SoE 7.41 example: "There are two battles and the smaller southern one is resolved first" —
    Kalenkovichi (2 blocks) before Zlobin (5): no choice to make."""
    game_map = world[0]
    state, ids = tutorial(world)
    move(state, game_map, ids["pl-9-id"], "zlobin", 1)
    move(state, game_map, ids["ru-10-id"], "zlobin", 2)
    move(state, game_map, ids["ru-2-id"], "zlobin", 3)
    move(state, game_map, ids["ru-57-id"], "zlobin", 4)
    move(state, game_map, ids["pl-14-id"], "zlobin", 5)
    move(state, game_map, ids["pl-cav-1"], "kalenkovichi", 6)
    assert battle_candidates(state, game_map) == ([game_map.index("kalenkovichi")], FRONT.NORTH)


class _Recorder:
    """A Python policy recording its decisions; picks the last option (or a random one)."""

    def __init__(self, pick_last=(), check=None):
        self.calls: dict = {}
        self.pick_last = set(pick_last)
        self.check = check

    def choose(self, decision, options: pd.DataFrame, view) -> int:
        self.calls.setdefault(decision, []).append(options.copy())
        if self.check is not None:
            self.check(decision, options, view)
        if decision in self.pick_last:
            return len(options) - 1
        return view.rand_below(len(options))


def _check_battle_order(decision, options, view):
    if decision != Decision.BATTLE_ORDER:
        return
    # equal battles of one front, chosen by that front's initiative holder (SoE 7.4)
    assert options["size"].nunique() == 1 and options["front"].nunique() == 1
    f = int(options["front"].iloc[0])
    assert int(view.state.initiative_side[f]) == view.side
    fronts = view.setup.game_map.front
    for a in options["area"].astype(int):
        assert fronts[a] == f


@pytest.mark.parametrize("scenario,seed", [("tutorial", 32), ("kiev-offensive", 5)])  # seeds with ties
def test_soe_7_4_the_initiative_holder_chooses_among_equal_battles(scenario, seed):
    pl, so = _Recorder({Decision.BATTLE_ORDER}, _check_battle_order), _Recorder({Decision.BATTLE_ORDER},
                                                                                  _check_battle_order)
    res = play_game(scenario, seed, polish=pl, soviet=so, check_invariants=True)
    assert res.violations == 0
    n = len(pl.calls.get(Decision.BATTLE_ORDER, [])) + len(so.calls.get(Decision.BATTLE_ORDER, []))
    ev = res.events
    chosen = ev.index[ev["kind"] == "battle_chosen"]
    assert len(chosen) == n > 0
    for i in chosen:  # the chosen battle is the next one fought
        nxt = ev.loc[i + 1:]
        b = nxt[nxt["kind"] == "battle"].iloc[0]
        assert b["area"] == ev.loc[i, "area"]


@pytest.mark.parametrize("scenario", ["kiev-offensive", "campaign-1920"])
def test_soe_10_0_northern_battles_first(scenario):
    """SoE 10.0 "Northern front orders and battles are always placed and executed first" (3–4
    player scenarios): in every phase the battles of the northern front come before the southern."""
    front = _area_front(scenario)
    seen = 0
    for res in _games(scenario, 6):
        assert res.violations == 0
        ev = res.events
        bat = ev[ev["kind"] == "battle"]
        for _, g in bat.groupby(["round", "phase"]):
            fr = [front[a] for a in g["area"]]
            assert fr == sorted(fr), fr
            seen += len(set(fr)) > 1
    assert seen > 0  # phases with battles on both fronts happened


# --- SoE 7.43: advance after battle (E-B6) -----------------------------------------------------------


def test_soe_7_43_zlobin_advance(world):
    """SoE 7.43 example: "The Soviet player decides to occupy Zlobin with blocks 3 and 4. He moves
    block 2 back to Rohachev where it came from." At least one block stays."""
    game_map, roster, rules = world
    state, ids = tutorial(world)
    ix = game_map.index
    half = np.zeros(state.n_blocks, dtype=bool)
    move(state, game_map, ids["pl-9-id"], "zlobin", 1)
    half[ids["pl-9-id"]] = True
    move(state, game_map, ids["ru-10-id"], "zlobin", 2)  # block 2, from Rohachev
    move(state, game_map, ids["ru-2-id"], "zlobin", 3)  # blocks 3 and 4, from Gomel
    move(state, game_map, ids["ru-57-id"], "zlobin", 4)
    move(state, game_map, ids["pl-14-id"], "zlobin", 5)
    zl = ix("zlobin")
    involved = battle_blocks(state, zl)
    rec = resolve_battle(state, game_map, zl, 2, 4 + 1, block_half=half, rules=rules)
    assert rec["winner"] == S and rec["attacker"] == S
    soviets = [ids["ru-10-id"], ids["ru-2-id"], ids["ru-57-id"]]
    assert legal_advance(state, game_map, involved, S, zl) == sorted(soviets)
    assert legal_advance(state, game_map, involved, P, zl) == []  # the loser has left
    assert apply_advance(state, zl, ids["ru-10-id"]) == ix("rohachev")
    assert state.block_area[ids["ru-10-id"]] == ix("rohachev") and state.block_prev_area[ids["ru-10-id"]] == zl
    left = legal_advance(state, game_map, involved, S, zl)
    assert left == sorted([ids["ru-2-id"], ids["ru-57-id"]])
    apply_advance(state, zl, left[0])
    assert legal_advance(state, game_map, involved, S, zl) == []  # "He must keep at least one block"


def test_soe_7_43_no_advance_into_an_enemy_or_full_area(world):
    game_map, roster, rules = world
    state, ids = tutorial(world)
    ix = game_map.index
    zl = ix("zlobin")
    for k, b in enumerate(("ru-10-id", "ru-2-id", "ru-57-id")):
        move(state, game_map, ids[b], "zlobin", k + 1)
    involved = battle_blocks(state, zl)
    assert state.garrison_side[zl] != S
    assert legal_advance(state, game_map, involved, S, zl) == sorted(ids[b] for b in ("ru-10-id", "ru-2-id",
                                                                                      "ru-57-id"))
    state.garrison_side[ix("gomel")] = P  # Gomel taken by the enemy behind them
    assert legal_advance(state, game_map, involved, S, zl) == [ids["ru-10-id"]]
    state.garrison_side[ix("gomel")] = S
    nation_ok = np.ones((len(Nation), game_map.n_areas), dtype=bool)
    nation_ok[:, ix("rohachev")] = False  # G16: a nation may not go back there
    assert ids["ru-10-id"] not in legal_advance(state, game_map, involved, S, zl, nation_ok=nation_ok)


def test_advance_events_follow_won_attacks():
    """Loop: every ``advance`` follows a battle its side won as the attacker, and returns a block that
    moved into the battle area to an adjacent area (the link it came along, SoE 7.31)."""
    setup = game_setup("kiev-offensive")
    m = setup.game_map
    n = 0
    for res in _games("kiev-offensive", 6):
        ev = res.events.reset_index(drop=True)
        for i in ev.index[ev["kind"] == "advance"]:
            e = ev.loc[i]
            before = ev.loc[:i - 1]
            bat = before[(before["kind"] == "battle") & (before["area"] == e["area"])].iloc[-1]
            assert bat["side"] == e["side"] and bat["value"] == int(SIDE.POLISH if e["side"] == "polish"
                                                                      else SIDE.SOVIET)
            came = before[before["kind"].isin(["move", "block_moved"]) & (before["block"] == e["block"])
                          & (before["area2"] == e["area"])]
            assert len(came) > 0
            a, back = m.index(e["area"]), m.index(e["area2"])
            assert back in m.adj_indices[m.adj_indptr[a]:m.adj_indptr[a + 1]]
            n += 1
    assert n > 0


# --- SoE 7.2: the Withdraw loss (O8) --------------------------------------------------------------------


def test_soe_7_2_withdraw_loss_from_the_chosen_block(world):
    """SoE 7.2 Withdraw: "lose 1SP from any one block" — the player chooses (O8); the kernel's default
    is the strongest block (the EatS round example)."""
    game_map, roster, rules = world
    orules = order_constants(rules)
    for choice in ("pl-9-id", "pl-14-id", None):
        state, ids = tutorial(world)
        check_supply(state, game_map, engine_constants(rules), apply=False)
        orders = new_order_state(state)
        f = int(game_map.front[game_map.index("charyshi")])
        wd = place_order(state, orders, game_map, P, f, OrderType.WITHDRAW, "charyshi")
        assert onb.withdraw_loss_options_nb(state, orders, game_map.arrays, orules, wd,
                                            np.empty(state.n_blocks, np.int64)) == 0  # no enemy yet
        sov = place_order(state, orders, game_map, S, f, OrderType.FORCED_MARCH_OUT, "gomel")
        apply_move(state, orders, game_map, orules, sov, ids["ru-2-id"], "charyshi", "zlobin")
        rows = np.empty(state.n_blocks, np.int64)
        k = onb.withdraw_loss_options_nb(state, orders, game_map.arrays, orules, wd, rows)
        assert sorted(rows[:k]) == sorted([ids["pl-9-id"], ids["pl-14-id"]])
        b = -1 if choice is None else ids[choice]
        sp0 = state.block_sp.copy()
        dest = np.empty(state.n_blocks, np.int64)
        info = np.empty(N_WITHDRAW_INFO, np.int64)
        assert onb.execute_withdraw_choice_nb(state, orders, game_map.arrays, orules, wd, dest, info, b,
                                              np.zeros((0, 0), bool)) == onb.WD_OK
        lost = ids["pl-14-id"] if choice is None else b  # pl-14-id (4 SP) is the strongest
        assert info[onb.WI_LOSS_BLOCK] == lost and state.block_sp[lost] == sp0[lost] - 1
        assert (state.block_sp != sp0).sum() == 1


def test_withdraw_scratch_reuses_the_targets_of_the_loss_options(world):
    """The game loop's Withdraw path (SoE 7.2): ``withdraw_loss_options_scratch_nb`` leaves the
    retreat targets in its ``WithdrawScratch`` and ``execute_withdraw_choice_scratch_nb`` of the same
    order takes them instead of recomputing; the result must equal the allocating kernels' (which
    compute everything afresh), and targets left for another order must be ignored."""
    game_map, roster, rules = world
    orules = order_constants(rules)
    results = []
    for path in ("fresh", "reuse", "stale"):
        state, ids = tutorial(world)
        check_supply(state, game_map, engine_constants(rules), apply=False)
        orders = new_order_state(state)
        f = int(game_map.front[game_map.index("charyshi")])
        wd = place_order(state, orders, game_map, P, f, OrderType.WITHDRAW, "charyshi")
        sov = place_order(state, orders, game_map, S, f, OrderType.FORCED_MARCH_OUT, "gomel")
        apply_move(state, orders, game_map, orules, sov, ids["ru-2-id"], "charyshi", "zlobin")
        rows = np.empty(state.n_blocks, np.int64)
        dest = np.empty(state.n_blocks, np.int64)
        info = np.empty(N_WITHDRAW_INFO, np.int64)
        no_mask = np.zeros((0, 0), bool)
        if path == "fresh":
            k = onb.withdraw_loss_options_nb(state, orders, game_map.arrays, orules, wd, rows)
            mode = onb.execute_withdraw_choice_nb(state, orders, game_map.arrays, orules, wd, dest, info, -1, no_mask)
        else:
            ws = onb.new_withdraw_scratch_nb(state.n_blocks, game_map.arrays)
            k = onb.withdraw_loss_options_scratch_nb(state, orders, game_map.arrays, orules, wd, rows, ws)
            assert ws.ready[0] == wd and ws.ready[1] > 0
            if path == "stale":  # targets of another order: recomputed
                ws.ready[0] = wd + 1
                ws.cand[:] = -7
                ws.target[:] = -7
            mode = onb.execute_withdraw_choice_scratch_nb(state, orders, game_map.arrays, orules, wd, dest, info, -1,
                                                          no_mask, ws)
            assert ws.ready[0] == -1  # used once
        assert k == 2 and mode == onb.WD_OK
        results.append((dest.copy(), info.copy(), state.block_area.copy(), state.block_sp.copy()))
    for other in results[1:]:
        for x, y in zip(results[0], other):
            np.testing.assert_array_equal(x, y)


def test_withdraw_loss_decisions_in_the_loop():
    """Loop: a ``withdraw`` event with a loss names the block that lost it (``block``), and that block
    shows the loss (``block_loss`` with cause ORDERS)."""
    n = 0
    for i in range(16):  # the defensive policy withdraws a lot; a loss in a withdrawal is rarer
        if n >= 2:
            break
        res = play_game("kiev-offensive", (21, i), polish="defensive", soviet="defensive", check_invariants=True)
        assert res.violations == 0
        ev = res.events.reset_index(drop=True)
        for i in ev.index[(ev["kind"] == "withdraw") & (ev["block"] != "")]:
            nxt = ev.loc[i + 1:i + 12]
            loss = nxt[(nxt["kind"].isin(["block_loss", "block_removed"])) & (nxt["block"] == ev.loc[i, "block"])]
            assert len(loss) == 1 and loss.iloc[0]["value2"] == nb.CAUSE.ORDERS
            n += 1
    assert n > 0


# --- SoE 7.3: order of execution within a group (G8) ----------------------------------------------------


def test_soe_7_3_orders_executed_in_the_chosen_order():
    """SoE 7.3 "executed in any order": the side picks its next movement order; the next order done
    is the one chosen."""
    rec = _Recorder({Decision.EXEC_ORDER})
    res = play_game("kiev-offensive", 4, polish=rec, check_invariants=True)
    assert res.violations == 0
    calls = rec.calls.get(Decision.EXEC_ORDER, [])
    assert calls
    for opts in calls:  # options: the side's pending orders of one movement group
        kinds = {int(t) for t in opts["type"]}
        assert kinds <= {int(OrderType.FORCED_MARCH_TO), int(OrderType.FORCED_MARCH_OUT)} or \
            kinds <= {int(OrderType.MOVE_TO), int(OrderType.MOVE_OUT)}
        assert list(opts["rank"]) == list(range(len(opts)))
    ev = res.events.reset_index(drop=True)
    chosen = ev.index[(ev["kind"] == "order_chosen") & (ev["side"] == "polish")]
    assert len(chosen) == len(calls)
    for i in chosen:
        nxt = ev.loc[i + 1:]
        done = nxt[(nxt["kind"] == "order_done") & (nxt["side"] == "polish")].iloc[0]
        assert done["area"] == ev.loc[i, "area"] and done["value"] == ev.loc[i, "value"]


_MOVE_TYPES = {int(OrderType.MOVE_TO), int(OrderType.MOVE_OUT), int(OrderType.FORCED_MARCH_TO),
               int(OrderType.FORCED_MARCH_OUT)}


def test_soe_7_3_exec_order_movers_are_the_blocks_with_a_move_row():
    """SoE 7.3 / G8: the ``movers`` column of an EXEC_ORDER option (the balanced policy executes the most
    constrained order first) is the number of distinct blocks in ``legal_moves_nb``'s rows for that order on
    the position of the decision, for movement orders (0 for the others)."""
    checked = [0, 0]

    def check(decision, options, view):
        if decision != Decision.EXEC_ORDER:
            return
        st, od, setup = view.state, view.orders, view.setup
        cap = move_capacity(st, setup.game_map.arrays)
        rows = [np.empty(cap, np.int64) for _ in range(4)]
        for o, movers in zip(options["order"].astype(int), options["movers"].astype(int)):
            expected = 0
            if int(od.order_type[o]) in _MOVE_TYPES:
                k = onb.legal_moves_nb(st, od, setup.game_map.arrays, setup.orules, o, *rows)
                expected = len(set(rows[0][:k].tolist()))
                checked[1] += expected > 1
            assert movers == expected, (o, movers, expected)
            checked[0] += 1

    for seed in range(6):
        res = play_game("kiev-offensive", (40, seed), polish=_Recorder(check=check), soviet=_Recorder(check=check),
                        check_invariants=True)
        assert res.violations == 0
    assert checked[0] >= 20 and checked[1] >= 5, checked


# --- SoE 7.1: the face-down card play (G17) ---------------------------------------------------------------


def test_soe_7_1_second_card_chosen_before_the_first_is_revealed():
    """SoE 7.1 items 1–4: the initiative player chooses his card before the non-initiative card is
    revealed: at every CARD_PLAY decision no card of the other side has been played on that front in
    this phase yet, and the other side's chosen card is still in its hand."""
    checks = 0
    with StepGame("tutorial", 5, polish="step", soviet="step") as g:
        pending = {}
        while not g.is_terminal:
            d = g.decision
            if d.kind == Decision.CARD_PLAY:
                f = int(g.features["front"].iloc[0])
                ev = g.events
                here = ev[(ev["round"] == d.round) & (ev["phase"] == d.phase) & (ev["kind"] == "card_played")
                          & (ev["area"].astype(str) == str(f))]
                assert here.empty, here
                view = g.state_view.raw
                other = 1 - d.side_index
                pending[(d.round, d.phase, f, other)] = view.cards.location[other].copy()
                checks += 1
            g.apply(g.state_view.rand_below(len(g.legal_actions)))
        ev = g.result.events
    played = ev[ev["kind"] == "card_played"]
    for (r, p, f, other), loc in pending.items():
        mine = played[(played["round"] == r) & (played["phase"] == p) & (played["area"].astype(str) == str(f))
                      & (played["side"] == ("polish" if other == 0 else "soviet"))]
        for c in mine["value"]:
            assert loc[int(c) - 1] == HAND  # still in the hand while the other side chose
    assert checks > 0


def test_soe_7_41_battle_choices_are_made_before_any_is_played():
    """SoE 7.41 items 1–2 (E-B8): attacker then defender choose a battle card face down, then attacker then
    defender a combat card, revealed together: at every BATTLE_CARD / COMBAT_CARD decision the other side
    has no card in play, and the log holds no battle or combat card of the battle being prepared."""
    from soe_sim.engine.cards.nb import IN_PLAY

    checks = 0
    for seed in (3, 4):
        with StepGame("kiev-offensive", seed, polish="step", soviet="step") as g:
            while not g.is_terminal:
                d = g.decision
                if d.kind in (Decision.BATTLE_CARD, Decision.COMBAT_CARD):
                    other = 1 - d.side_index
                    assert not (g.state_view.raw.cards.location[other] == IN_PLAY).any(), d
                    # every battle resolved so far logged its two combat cards, this one none yet
                    assert int((g.events["kind"] == "combat_card").sum()) % 2 == 0, d
                    checks += 1
                g.apply(g.state_view.rand_below(len(g.legal_actions)))
    assert checks > 20


def test_soe_7_41_3_blocks_are_revealed_after_the_card_choices():
    """SoE 7.41 item 3 "Both players now reveal their blocks" comes after the battle and combat cards (items
    1–2; reading O11): at a COMBAT_CARD decision the enemy blocks of the battle the side had not seen are still
    hidden from it (their SP NaN in the step view), and once the battle is resolved both sides have seen every
    block that fought."""
    hidden = checks = 0
    for seed in (3, 4, 5):
        with StepGame("kiev-offensive", seed, polish="step", soviet="step") as g:
            while not g.is_terminal:
                d = g.decision
                if d.kind == Decision.COMBAT_CARD:
                    area = int(g.features["area"].iloc[0])
                    raw = g.state_view.raw
                    st = raw.state
                    foe = np.flatnonzero((st.block_status == 0) & (st.block_area == area)
                                         & (st.block_side == 1 - d.side_index))
                    unseen = [b for b in foe if not raw.orders.seen[d.side_index, b]]
                    hidden += len(unseen)
                    blocks = g.state_view.blocks
                    ids = set(raw.setup.block_ids[unseen])
                    assert blocks[blocks["block"].isin(ids)]["sp"].isna().all()
                    fighting = np.flatnonzero((st.block_status == 0) & (st.block_area == area))
                    g.apply(g.state_view.rand_below(len(g.legal_actions)))
                    # the defender's combat card may come next; then the battle is resolved
                    while not g.is_terminal and g.decision.kind == Decision.COMBAT_CARD:
                        g.apply(g.state_view.rand_below(len(g.legal_actions)))
                    if g.is_terminal or (g.decision.round, g.decision.phase) != (d.round, d.phase):
                        continue  # a new phase starts with its own knowledge (O11)
                    seen = g.state_view.raw.orders.seen
                    alive = fighting[g.state_view.raw.state.block_status[fighting] == 0]
                    assert seen[0, alive].all() and seen[1, alive].all()
                    checks += 1
                    continue
                g.apply(g.state_view.rand_below(len(g.legal_actions)))
    assert checks > 10 and hidden > 0


# --- neutral nations, Kaunas, nation limits (G15, G16) ---------------------------------------------------


def _event_work(setup):
    st = setup.state0
    nbk, na = st.n_blocks, setup.game_map.n_areas
    z = lambda dt, n: np.zeros(n, dt)  # noqa: E731
    return nb.new_event_work_nb(setup.cfg, nbk, na, setup.cards0.location.shape[1], z(st.block_status.dtype, nbk),
                                z(st.block_area.dtype, nbk), z(st.block_sp.dtype, nbk),
                                z(st.garrison_side.dtype, na), z(bool, nbk), z(bool, nbk),
                                setup.orders0.order_type.shape[0])


def test_update_access_neutral_ground_kaunas_and_fronts():
    """G16: areas of inactive Lithuanian blocks are closed to both sides; Kaunas "cannot be seized":
    closed to the Poles always, to the Soviets until card 23; UHA / UNR blocks may not go north."""
    setup = game_setup("campaign-1920")
    st, m, ix = setup.state0.copy(), setup.game_map, setup.game_map.index  # card 23 sets st.supply_base
    ew = _event_work(setup)
    nb.update_access_nb(st, setup.cfg, ew)
    lit_areas = {int(st.block_area[b]) for b in np.flatnonzero(st.block_nation == LIT)}
    assert lit_areas == {ix("nemencine"), ix("radun")}
    for a in lit_areas | {ix("kaunas")}:
        assert ew.closed[P, a] and ew.closed[S, a]
    assert ew.closed.sum() == 2 * len(lit_areas | {ix("kaunas")})
    assert not ew.nation_ok[int(Nation.POLISH), ix("kaunas")] and not ew.nation_ok[int(Nation.SOVIET), ix("radun")]
    north = m.front == FRONT.NORTH
    for nat in (Nation.UKRAINIAN_UHA, Nation.UKRAINIAN_UNR):
        assert not ew.nation_ok[int(nat), north].any() and ew.nation_ok[int(nat), ~north].any()
    ew.active[LIT] = True  # Soviet card 23
    nb.update_access_nb(st, setup.cfg, ew)
    assert ew.closed[P, ix("kaunas")] and not ew.closed[S, ix("kaunas")]
    assert not ew.closed[:, ix("nemencine")].any()
    assert ew.nation_ok[LIT, ix("kaunas")] and not ew.nation_ok[LIT].all()  # max_distance 3 from Kaunas
    tut = game_setup("tutorial")  # no neutral nation: nothing closed
    ew = _event_work(tut)
    nb.update_access_nb(tut.state0, tut.cfg, ew)
    assert not ew.closed.any()


def test_kaunas_becomes_a_soviet_supply_base_with_lithuania():
    """EatS II.3 (G16): "Kaunas ... is a supply base for Soviet units" once Soviet card 23 has made
    Lithuania a Soviet ally. ``update_access_nb`` (run after every card play) marks it in the game's
    own state, never in the setup's. The Lithuanian divisions at Nemencine and Radun are out of supply
    without it (no Soviet depot within their range: audit G F2); with it, the one at Radun is supplied
    from Kaunas, two links away, while the one at Nemencine stays cut off: both its neighbours, Vilnius
    and Svencionys, hold Polish blocks at the start (no clear path, 1.31)."""
    setup = game_setup("campaign-1920")
    m, ix = setup.game_map, setup.game_map.index
    k = ix("kaunas")
    assert setup.cfg.nation_supply_base[LIT] == k and setup.cfg.nation_supply_side[LIT] == S
    consts = engine_constants(load_rules())
    st = setup.state0.copy()
    lits = np.flatnonzero(st.block_nation == LIT)
    ew = _event_work(setup)
    nb.update_access_nb(st, setup.cfg, ew)
    assert (st.supply_base == -1).all()
    before = check_supply(st.copy(), m, consts, apply=False)
    assert not before["in_supply"][lits].any() and not before["depot"][S, k]
    ew.active[LIT] = True  # Soviet card 23
    nb.update_access_nb(st, setup.cfg, ew)
    assert st.supply_base[k] == S and np.count_nonzero(st.supply_base >= 0) == 1
    assert (setup.state0.supply_base == -1).all()
    after = check_supply(st.copy(), m, consts, apply=False)
    assert after["depot"][S, k] and after["source_dist"][S, k] == 0
    at = {m.ids[st.block_area[b]]: b for b in lits}
    assert set(at) == {"radun", "nemencine"}
    assert after["in_supply"][at["radun"]] and after["depot_dist"][S, ix("radun")] == 2
    assert not after["in_supply"][at["nemencine"]] and after["depot_dist"][S, ix("nemencine")] == -1
    tut = game_setup("tutorial")  # no neutral nation, no base
    assert (tut.cfg.nation_supply_base == -1).all()


def test_inactive_neutral_blocks_do_not_cut_supply():
    """G15, E14: before card 23 the Lithuanian blocks are out of play: a Polish block whose only ways
    out pass the Lithuanians is still supplied; once they are Soviet allies they cut its paths like
    any enemy block (1.31). Positions: a Polish infantry block in an area of at most two links, the
    two Lithuanian divisions on its neighbours."""
    from soe_sim.engine.game import new_event_log

    setup = game_setup("campaign-1920")
    m = setup.game_map
    st0 = setup.state0
    na, nbk = m.n_areas, st0.n_blocks
    lits = [int(b) for b in np.flatnonzero(st0.block_nation == LIT)]
    pl = int(np.flatnonzero((st0.block_side == P) & (st0.block_arm == ARM.INFANTRY)
                            & (st0.block_status == STATUS.ON_MAP))[0])
    occupied = {int(st0.block_area[b]) for b in range(nbk) if st0.block_status[b] == STATUS.ON_MAP}
    differ = tried = 0
    for a in range(na):
        nbrs = [int(v) for v in m.adj_indices[m.adj_indptr[a]:m.adj_indptr[a + 1]]]
        if (len(nbrs) > len(lits) or m.garrison[a] or m.eastern_link[a] or a in occupied
                or any(v in occupied or m.eastern_link[v] or st0.garrison_side[v] >= 0 for v in nbrs)):
            continue
        got = []
        for lit_active in (False, True):
            st = st0.copy()
            st.block_area[pl] = a
            for b, v in zip(lits, nbrs + nbrs[:1]):
                st.block_area[b] = v
            active = setup.cfg.nation_active.copy()
            active[LIT] = lit_active
            log = new_event_log(4096)
            z = lambda dt: np.zeros((2, na), dt)  # noqa: E731
            nb.supply_nb(st, m.arrays, setup.er, log.records, log.ctr, z(np.int32), z(np.bool_), z(np.int32),
                         z(np.bool_), z(np.int32), new_supply_search_cache_nb(na, N_SUPPLY_SLOTS),
                         st.block_status.copy(), st.block_area.copy(), st.block_sp.copy(),
                         st.garrison_side.copy(), np.zeros(nbk, bool), np.zeros(nbk, bool), active,
                         np.zeros(nbk, bool), np.zeros((2, nb.N_OOS), np.int64), np.zeros(1, np.int64))
            got.append(bool(st.block_in_supply[pl]))
        tried += 1
        assert not got[1], m.ids[a]  # surrounded by enemy blocks: cut off (E1)
        differ += got[0]
    assert tried > 0 and differ > 0


def _ends(ev):
    """The events of every move, rail transport, retreat, withdrawal, pull-back and advance
    (``area2`` = the area reached)."""
    return ev[ev["kind"].isin(["move", "rail", "block_moved", "advance"])]


@pytest.mark.parametrize("scenario", ["campaign-1920", "battle-of-warsaw"])
def test_neutral_ground_and_kaunas_in_random_games(scenario):
    """G15, G16 in the loop: before card 23 no block ends a move, retreat or withdrawal in Kaunas or
    beside the neutral Lithuanians (who never fight, are never pinned and never withdraw); the
    Poles never enter Kaunas; UHA / UNR blocks never reach the northern front; activated Lithuanians
    stay within 3 areas of Kaunas."""
    setup = game_setup(scenario)
    st, ix = setup.state0, setup.game_map.index
    lit_areas = {str(setup.area_ids[st.block_area[b]]) for b in np.flatnonzero(st.block_nation == LIT)
                 if st.block_area[b] >= 0}
    front = _area_front(scenario)
    ukr = {str(setup.block_ids[b]) for b in np.flatnonzero(np.isin(st.block_nation, [int(Nation.UKRAINIAN_UHA),
                                                                                       int(Nation.UKRAINIAN_UNR)]))}
    lit = {str(setup.block_ids[b]) for b in np.flatnonzero(st.block_nation == LIT)}
    ok = setup.cfg.nation_move_ok[LIT]
    for res in _games(scenario, 8, seed=5):
        assert res.violations == 0
        ev = res.events.reset_index(drop=True)
        act = ev.index[(ev["kind"] == "card_event") & (ev["side"] == "soviet") & (ev["value"] == 23)]
        start = act[0] if len(act) else len(ev)
        ends = _ends(ev)
        before = ends[ends.index < start]
        assert not before["area2"].isin(lit_areas | {"kaunas"}).any()
        assert ends[(ends["side"] == "polish") & (ends["area2"] == "kaunas")].empty
        assert all(front[a] == FRONT.SOUTH for a in ends.loc[ends["block"].isin(ukr), "area2"])
        assert all(ok[ix(a)] for a in ends.loc[ends["block"].isin(lit), "area2"])
        pre = ev[ev.index < start]
        assert pre[pre["kind"].isin(["battle", "pinned"]) & pre["area"].isin(lit_areas)].empty
        assert pre[(pre["kind"] == "pinned") & pre["block"].isin(lit)].empty


def test_restricted_retreat_in_a_battle(world):
    """G16 / E-B4: a defeated defender retreats only where its nation may go: forbid the area the
    Kalenkovichi defender (SoE 7.41 example) retreats to, and it goes to the next candidate or is
    encircled; other nations' limits do not matter."""
    game_map, roster, rules = world

    def fight(forbid_area=None, nation=None):
        state, ids = tutorial(world)
        move(state, game_map, ids["pl-cav-1"], "kalenkovichi", 1)
        b = ids["ru-inf-1"]
        ok = np.ones((len(Nation), game_map.n_areas), dtype=bool)
        if forbid_area is not None:
            ok[int(state.block_nation[b]) if nation is None else nation, forbid_area] = False
        rec = resolve_battle(state, game_map, game_map.index("kalenkovichi"), 3, 1, rules=rules, nation_ok=ok)
        assert rec["winner"] == P and rec["attacker"] == P
        return int(state.block_area[b]) if state.block_status[b] == STATUS.ON_MAP else -1

    first = fight()
    assert first >= 0
    assert fight(first) != first
    assert fight(first, nation=int(Nation.LITHUANIAN)) == first


# --- EV8: "in Warsaw" ---------------------------------------------------------------------------------------


def test_ev8_warsaw_only_cards():
    """Polish 34 (Volunteer Army) and 36 (Siberian Brigade) place their block "in Warsaw": the only
    target is Warsaw (``at_area``); Polish 30 (2 CDiv, "Warsaw or any …") may use any depot."""
    setup = game_setup("campaign-1920")
    st = setup.state0.copy()
    ix = setup.game_map.index
    warsaw = ix("warsaw")
    f = int(setup.game_map.front[warsaw])
    check_supply(st, setup.game_map, setup.er, apply=False)
    active = setup.cfg.nation_active.copy()
    orders = setup.orders0.copy()
    ctx = card_play_context(f)
    for card in (34, 36):
        rows = legal_event_targets(st, setup.cards0, orders, setup.game_map, setup.etable, active, P, card, ctx)
        assert rows == [warsaw], (card, rows)
    rows = legal_event_targets(st, setup.cards0, orders, setup.game_map, setup.etable, active, P, 30, ctx)
    assert warsaw in rows and len(rows) > 1
    # Warsaw lost (a Soviet garrison there, no Polish block: SoE 1.3): the two events have nowhere to go
    st.control[warsaw] = st.garrison_side[warsaw] = S
    st.block_area[(st.block_area == warsaw) & (st.block_side == P)] = ix("radzymin")
    for card in (34, 36):
        assert legal_event_targets(st, setup.cards0, orders, setup.game_map, setup.etable, active, P, card,
                                   ctx) == []


def test_at_area_effect_is_validated():
    from soe_sim.data.cards import parse_effect
    from soe_sim.errors import SoeInputError

    assert parse_effect("reinforce:pl-22-id;at_area:warsaw", area_ids={"warsaw"}) == {
        "reinforce": "pl-22-id", "at_area": "warsaw"}
    with pytest.raises(SoeInputError, match="unknown area"):
        parse_effect("reinforce:pl-22-id;at_area:warsw", area_ids={"warsaw"})


# --- SoE 10.2: Klintsy rivalry (RF12) -------------------------------------------------------------------


def test_soe_10_2_klintsy_cubes_follow_the_nearest_soviet_leader():
    """Every ``rivalry`` event gives Klintsy's cubes to the front of the Soviet leader nearest to
    Klintsy, and Klintsy's cubes then strengthen only blocks of that front (and build nothing at
    Klintsy, a northern city, when they went to the southern commander)."""
    setup = game_setup("campaign-1920")
    front = _area_front("campaign-1920")
    n = 0
    for res in _games("campaign-1920", 4):
        ev = res.events.reset_index(drop=True)
        for i in ev.index[ev["kind"] == "rivalry"]:
            e = ev.loc[i]
            assert e["area"] == "klintsy" and e["side"] == "soviet" and e["value"] in (0, 1)
            nxt = ev.loc[i + 1:]
            stop = nxt.index[nxt["kind"].isin(["cubes_dropped", "phase_start"])]
            seg = nxt.loc[: stop[0]] if len(stop) else nxt
            kl = setup.game_map.index("klintsy")
            for _, r in seg[(seg["kind"] == "strengthen") & (seg["value2"] == kl)].iterrows():
                assert front[r["area"]] == e["value"]
            if e["value"] != front["klintsy"]:  # "for use on his front": no block built at Klintsy then
                assert not ((seg["kind"] == "build") & (seg["value2"] == kl)).any()
            n += 1
    assert n > 0
    assert not (_games("tutorial", 2)[0].events["kind"] == "rivalry").any()


# --- the step interface names every decision ------------------------------------------------------------


def test_describe_options_covers_every_decision():
    """docs/policies.md: every decision kind has its description text (no "option N" fallback)."""
    setup = game_setup("kiev-offensive")
    from soe_sim.engine.game import FEATURES

    for kind in Decision:
        cols = FEATURES[int(kind)]
        df = pd.DataFrame(np.zeros((2, len(cols))), columns=list(cols))
        df.iloc[1] = 1.0
        text = describe_options(kind, df, setup, 0)
        assert len(text) == 2 and not any(t.startswith("option ") for t in text), (kind, text)


def test_event_log_replays_advances_and_withdrawals():
    """The event record is complete: replaying every game's events (``soe_sim.report.event_sample``:
    moves, retreats, advances, withdrawals, placements, losses …) gives the engine's final position."""
    from soe_sim.report import event_sample

    for pol in ("aggressive", "defensive"):
        out = event_sample("kiev-offensive", pol, pol, 21, 4)
        assert out["meta"]["replay_mismatches"] == 0
