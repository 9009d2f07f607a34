"""Card events (SoE 3.4, 7.1 item 6, 7.13; EatS V, round example): the event table, historical events,
reaction windows and their resolution on real kiev-offensive positions. Readings: docs/rules.md
"Engine: card events" (EV1…)."""
from __future__ import annotations

import numpy as np
import pytest

from soe_sim.data import load_blocks, load_cards, load_map, load_scenario
from soe_sim.data.enums import ARM, EVENT_KIND, FRONT, SIDE, Nation
from soe_sim.engine import events as EV
from soe_sim.engine.battles.nb import (
    B_AREA,
    B_ATT_LOSSES,
    B_ATTACKER,
    B_DEF_LOSSES,
    B_FOUGHT,
    B_WINNER,
    N_B,
)
from soe_sim.engine.cards import BATTLE_EFFECT_KEYS, BATTLE_LIMIT_KEYS, card_counts, check_conservation, hand, new_card_state, new_rng
from soe_sim.engine.cards import nb as cnb
from soe_sim.engine.events import nb as enb
from soe_sim.engine.orders import new_order_state
from soe_sim.engine.orders import nb as onb
from soe_sim.engine.state import STATUS, new_game

P, S = SIDE.POLISH, SIDE.SOVIET
ENGINE_KEYS = {"enemy_sp_loss_initiative", "enemy_sp_loss", "draw_cards", "initiative", "vp", "cubes_infantry",
               "cubes_cavalry", "cubes_allied", "eliminate_nation_block", "activate_nation", "reinforce", "at_area"}


# --- fixtures ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def game_map():
    return load_map()


@pytest.fixture(scope="module")
def roster():
    return load_blocks()


@pytest.fixture(scope="module")
def kiev():
    return load_scenario("kiev-offensive")


@pytest.fixture(scope="module")
def decks():
    return {"polish": load_cards("polish"), "soviet": load_cards("soviet")}


class Game:
    """A kiev-offensive position with every module's state (cards, orders, events)."""

    def __init__(self, sc, game_map, roster, rules, events_area=False, seed=1):
        if events_area:
            self.state = EV.new_game_with_events_area(sc, game_map, roster, rules)
        else:
            self.state = new_game(sc, game_map, roster, rules)
        self.map = game_map
        self.m = game_map.arrays
        self.roster = roster
        self.rng = new_rng(seed)
        self.cs = new_card_state(sc, rules, self.rng)
        self.orders = new_order_state(self.state)
        self.table = EV.event_table(self.state, roster, rules)
        self.active = EV.new_active_nations(game_map, sc)
        self.ids = list(roster.blocks["id"].to_numpy()[self.state.block_roster])
        self.involved = np.zeros(self.state.n_blocks, dtype=np.bool_)

    def block(self, bid):
        return self.ids.index(bid)

    def area(self, aid):
        return self.map.area_index[aid]

    def to_hand(self, side, *cards):
        """Move cards from the draw pile (or anywhere) to the hand, keeping the pile consistent."""
        for card in cards:
            loc = self.cs.location[side, card - 1]
            if loc == cnb.DRAW_PILE:
                top, ln = int(self.cs.pile_top[side]), int(self.cs.pile_len[side])
                pile = [int(c) for c in self.cs.pile[side, top:ln] if int(c) != card]
                self.cs.pile[side, top:top + len(pile)] = pile
                self.cs.pile_len[side] = top + len(pile)
            self.cs.location[side, card - 1] = cnb.HAND
        check_conservation(self.cs)

    def play_event(self, side, card, front):
        """SoE 7.1/7.13: play ``card`` from the hand for its event (E-C1 disposal)."""
        assert enb.event_usable_nb(self.state, self.cs, self.orders, self.m, self.table, self.active, side, card,
                                   front)
        assert cnb.is_legal_play_nb(self.cs, side, front, card, cnb.USE_EVENT)
        extra, ev = cnb.apply_card_play_nb(self.cs, side, card, cnb.USE_EVENT, self.state.cubes[:, front])
        assert (extra, ev) == (0, card)
        return EV.card_play_context(front)

    def targets(self, side, card, ctx):
        return EV.legal_event_targets(self.state, self.cs, self.orders, self.map, self.table, self.active, side,
                                      card, ctx, self.involved)

    def apply(self, side, card, ctx, target):
        return EV.apply_event(self.state, self.cs, self.orders, self.map, self.table, self.active, side, card, ctx,
                              target, self.rng, self.involved)

    def recon(self, side, aid):
        """Place and execute a Recon order of ``side`` in ``aid`` (SoE 7.2, 7.31); the reaction context."""
        a = self.area(aid)
        o = onb.place_order_nb(self.state, self.orders, side, int(self.m.front[a]), onb.RECON, a)
        onb.execute_recon_nb(self.state, self.orders, o)
        ctx = np.empty(enb.N_X, dtype=np.int64)
        enb.recon_context_nb(ctx, self.state, self.m, side, a)
        return ctx

    def battle(self, aid, attacker, winner, att_losses, def_losses, fought=1):
        """A battle record for the after-battle window; ``involved`` = blocks now in ``aid``."""
        a = self.area(aid)
        rec = np.zeros(N_B, dtype=np.int64)
        rec[B_AREA], rec[B_ATTACKER], rec[B_WINNER] = a, attacker, winner
        rec[B_ATT_LOSSES], rec[B_DEF_LOSSES], rec[B_FOUGHT] = att_losses, def_losses, fought
        enb.battle_blocks_nb(self.state, a, self.involved)
        ctx = np.empty(enb.N_X, dtype=np.int64)
        enb.battle_context_nb(ctx, self.m, rec)
        return ctx

    def window(self, side, ctx):
        out = np.zeros(self.cs.n_cards, dtype=np.int64)
        k = enb.reaction_window_nb(self.state, self.cs, self.orders, self.m, self.table, self.active, side, ctx,
                                   self.involved, out)
        return [int(c) for c in out[:k]]

    def react(self, side, card, ctx, target):
        out = np.zeros(enb.N_EO, dtype=np.int64)
        ok = enb.play_reaction_nb(self.state, self.cs, self.orders, self.m, self.table, self.active, side, card,
                                  ctx, self.involved, target, self.rng, out)
        return out if ok else None

    def sp_in(self, side, aid):
        a = self.area(aid)
        st = self.state
        on = (st.block_status == STATUS.ON_MAP) & (st.block_area == a) & (st.block_side == side)
        return int(st.block_sp[on].sum())


@pytest.fixture
def game(kiev, game_map, roster, rules):
    return Game(kiev, game_map, roster, rules)


@pytest.fixture
def game_ea(kiev, game_map, roster, rules):
    return Game(kiev, game_map, roster, rules, events_area=True)


# --- the table -------------------------------------------------------------------------------------------


def test_table_encodes_every_effect_key(game, game_ea, decks):
    t = game.table
    seen = set()
    for s, side in ((P, "polish"), (S, "soviet")):
        for row in decks[side].itertuples(index=False):
            c = int(row.id) - 1
            eff = dict(row.effect or {})
            limit = 0
            for key, bit in BATTLE_LIMIT_KEYS.items():  # play limits: the card state, not the event table
                if eff.pop(key, 0):
                    limit |= bit
                    seen.add(key)
            assert game.cs.battle_limit[s, c] == limit
            assert t.kind[s, c] == getattr(EVENT_KIND, row.event_kind.upper())
            cond = eff.pop("condition", None)
            if cond is None:
                assert t.condition[s, c] == enb.COND_NONE
            elif cond.startswith("won_key_city_battle_min_losses_"):
                assert (t.condition[s, c], t.cond_value[s, c]) == (enb.COND_WON_KEY_CITY_BATTLE, 3)
            else:
                assert t.condition[s, c] == EV.CONDITION_CODES[cond]
            assert t.n_fx[s, c] == len(eff)
            for k, (key, value) in enumerate(eff.items()):
                seen.add(key)
                assert t.fx_code[s, c, k] == EV.EFFECT_CODES[key]
                v = int(t.fx_value[s, c, k])
                if key in ("eliminate_nation_block", "activate_nation"):
                    assert v == int(Nation.from_slug(value))
                elif key == "reinforce":
                    assert v == -1  # kiev-offensive: the block waits in the EatS Events' Area (not in new_game)
                    vea = int(game_ea.table.fx_value[s, c, k])
                    assert game_ea.ids[vea] == value and enb.in_events_area_nb(game_ea.state, vea)
                elif key == "at_area":  # EV8: the area index
                    assert v == game.map.index(value)
                else:
                    assert v == int(value)
                    if key in BATTLE_EFFECT_KEYS:
                        assert game.cs.battle_effect[s, c, BATTLE_EFFECT_KEYS[key]] == int(value)
    assert ENGINE_KEYS <= seen and set(BATTLE_EFFECT_KEYS) <= seen and set(BATTLE_LIMIT_KEYS) <= seen


def test_unknown_condition_is_rejected(game, decks, roster, rules):
    bad = decks["polish"].copy()
    bad.at[0, "effect"] = {"condition": "after_tea", "vp": 1}
    with pytest.raises(Exception, match="unknown condition"):
        EV.event_table(game.state, roster, rules, decks={"polish": bad})


def test_events_area_blocks_of_the_scenarios(game, roster, game_map, rules):
    assert EV.events_area_blocks(game.state, roster) == [
        "pl-22-id", "pl-2-cd", "pl-siberian-bde", "pl-jakowlew", "pl-salnikow", "ru-3-id", "ru-48-id"]
    war = load_scenario("battle-of-warsaw")
    st = EV.new_game_with_events_area(war, game_map, roster, rules)
    base = new_game(war, game_map, roster, rules)
    ids = list(roster.blocks["id"].to_numpy()[st.block_roster])
    # the Polish cards 14, 30, 34 are removed and 22 Div, 2 CDiv, BSyber, Jakowlew deployed (EatS XIV
    # Scenario III): only Salnikow and the Soviet 3rd and 48th wait in the Events' Area
    added = set(ids) - set(roster.blocks["id"].to_numpy()[base.block_roster])
    assert sorted(added) == ["pl-salnikow", "ru-3-id", "ru-48-id"]
    for bid in added:
        assert enb.in_events_area_nb(st, ids.index(bid))
    assert list(st.block_roster) == sorted(st.block_roster)
    for k, b in enumerate(base.block_roster):  # every original row kept unchanged
        j = list(st.block_roster).index(b)
        assert st.block_status[j] == base.block_status[k] and st.block_area[j] == base.block_area[k]


# --- every effect key resolved at least once -----------------------------------------------------------


def _enemy_area(g, side, front):
    """First area of ``front`` with an enemy non-leader block (ascending area index)."""
    st = g.state
    for a in range(st.n_areas):
        if g.m.front[a] != front:
            continue
        on = ((st.block_status == STATUS.ON_MAP) & (st.block_area == a) & (st.block_side == 1 - side)
              & (st.block_arm != ARM.LEADER))
        if on.any():
            return g.map.ids[a]
    return None


def _context_for(g, side, card):
    """A context where ``card``'s event is usable (or None)."""
    c = card - 1
    t = g.table
    fronts = [FRONT.NORTH, FRONT.SOUTH] if t.front[side, c] == FRONT.ANY else [int(t.front[side, c])]
    kind = t.kind[side, c]
    cond = t.condition[side, c]
    for f in fronts:
        if kind == EVENT_KIND.HISTORICAL:
            if enb.event_usable_nb(g.state, g.cs, g.orders, g.m, t, g.active, side, card, f):
                return "play", EV.card_play_context(f)
        elif cond == enb.COND_AFTER_OWN_RECON:
            aid = _enemy_area(g, side, f)
            if card == 2 and side == P:
                aid = "vinnytsia"
            if aid is not None:
                return "react", g.recon(side, aid)
        elif kind == EVENT_KIND.REACTION:
            key_cities = [g.map.ids[a] for a in range(g.state.n_areas) if g.m.garrison[a] and g.m.front[a] == f]
            for aid in key_cities:
                if g.sp_in(1 - side, aid) == 0:
                    continue
                if cond == enb.COND_LOST_BATTLE:
                    ctx = g.battle(aid, side, 1 - side, 3, 1)
                elif cond == enb.COND_WON_BATTLE_AS_DEFENDER:
                    ctx = g.battle(aid, 1 - side, side, 3, 1)
                else:
                    ctx = g.battle(aid, side, side, 1, 3)
                if card in g.window(side, ctx):
                    return "react", ctx
    return None


@pytest.mark.parametrize("side", [P, S])
def test_every_engine_effect_resolved(kiev, game_map, roster, rules, decks, side):
    """Every historical and reaction card of the deck, resolved once on a fresh kiev-offensive state
    (with the Events' Area), checking each effect's bookkeeping."""
    resolved = set()
    slug = "polish" if side == P else "soviet"
    for row in decks[slug].itertuples(index=False):
        if row.event_kind not in ("historical", "reaction"):
            continue
        card = int(row.id)
        g = Game(kiev, game_map, roster, rules, events_area=True, seed=card)
        g.to_hand(side, card)
        found = _context_for(g, side, card)
        assert found is not None, f"{slug} card {card} {row.name} never usable"
        how, ctx = found
        rows = g.targets(side, card, ctx)
        assert rows
        before = g.state.copy()
        hand0 = len(hand(g.cs, side))
        active0 = g.active.copy()
        if how == "play":
            g.play_event(side, card, int(ctx[enb.X_FRONT]))
            out = g.apply(side, card, ctx, rows[-1])
        else:
            out = g.react(side, card, ctx, rows[-1])
        assert out is not None and out[enb.EO_APPLIED] == 1
        st = g.state
        # the card left the hand: removed if starred, else discarded (E-C1)
        want = cnb.REMOVED if bool(row.remove_after_event) else cnb.DISCARD
        assert g.cs.location[side, card - 1] == want
        check_conservation(g.cs)
        assert sum(card_counts(g.cs, side).values()) == 55
        # VP bookkeeping: the reported change is the track's change
        assert int(st.vp[0]) - int(before.vp[0]) == out[enb.EO_VP_DELTA]
        # SP bookkeeping: SP lost on the map = reported
        on0 = before.block_status == STATUS.ON_MAP
        lost = int(before.block_sp[on0].sum()) - int(st.block_sp[on0].sum())
        placed = out[enb.EO_BLOCK_PLACED]
        assert lost == out[enb.EO_SP_LOST]
        assert int(((before.block_status == STATUS.ON_MAP) & (st.block_status == STATUS.DESTROYED_TO_POOL)).sum()) \
            == out[enb.EO_DESTROYED]
        for key, value in (row.effect or {}).items():
            if key == "condition":
                continue
            resolved.add(key)
            if key in ("enemy_sp_loss", "enemy_sp_loss_initiative"):
                assert out[enb.EO_SP_LOST] >= 1
            elif key == "draw_cards":
                assert out[enb.EO_CARDS_DRAWN] == min(value, 7 - (hand0 - 1))
                assert len(hand(g.cs, side)) == hand0 - 1 + out[enb.EO_CARDS_DRAWN]
            elif key == "initiative":
                f = int(out[enb.EO_INI_FRONT])
                assert f >= 0
                signed = lambda s_, l_: int(l_) if s_ == side else -int(l_)  # noqa: E731
                assert signed(st.initiative_side[f], st.initiative_level[f]) > signed(
                    before.initiative_side[f], before.initiative_level[f])
            elif key == "vp":
                assert out[enb.EO_VP_DELTA] * (1 if side == P else -1) >= value
            elif key.startswith("cubes_"):
                q = ("cubes_infantry", "cubes_cavalry", "cubes_allied").index(key)
                assert st.cubes[side, :, q].sum() - before.cubes[side, :, q].sum() == value == out[enb.EO_CUBES_INFANTRY + q]
            elif key == "eliminate_nation_block":
                b = int(out[enb.EO_BLOCK_ELIMINATED])
                assert st.block_nation[b] == int(Nation.from_slug(value))
                assert st.block_status[b] == STATUS.DESTROYED_TO_POOL and st.block_area[b] == -1
            elif key == "activate_nation":
                n = int(Nation.from_slug(value))
                assert not active0[n] and g.active[n] and out[enb.EO_NATION] == n
            elif key == "reinforce":
                assert g.ids[placed] == value
                assert st.block_status[placed] == STATUS.ON_MAP and st.block_area[placed] == rows[-1]
                assert st.block_sp[placed] == st.block_max_sp[placed]
                assert not enb.in_events_area_nb(st, placed)
    deck_keys = {k for eff in decks[slug]["effect"] for k in (eff or {}) if k in ENGINE_KEYS}
    assert resolved == deck_keys


def test_both_decks_cover_every_engine_key(decks):
    keys = {k for d in decks.values() for eff in d["effect"] for k in (eff or {}) if k != "condition"}
    assert ENGINE_KEYS <= keys


# --- SoE texts -------------------------------------------------------------------------------------------


def test_soe_desertions(game):
    """SoE 1.1 sidebar, Polish card 6: "Choose one area. The Soviets in this area immediately lose as many
    SPs as the Poles have initiative points on that front. Destroyed blocks return to their Force Pool.
    *Remove this card from the game." """
    g = game
    st = g.state
    south = FRONT.SOUTH
    st.initiative_side[south], st.initiative_level[south] = P, 2
    g.to_hand(P, 6)
    ctx = g.play_event(P, 6, south)
    assert g.cs.location[P, 5] == cnb.REMOVED  # starred: out of the game
    rows = g.targets(P, 6, ctx)
    vin = g.area("vinnytsia")
    assert vin in rows
    assert all(g.m.front[a] == south for a in rows)  # EV2: the front of the card play
    for a in rows:  # every row holds Soviet blocks
        assert g.sp_in(S, g.map.ids[a]) > 0
    # an illegal target (a northern area) changes nothing
    north_area = _enemy_area(g, P, FRONT.NORTH)
    snap = st.copy()
    assert g.apply(P, 6, ctx, g.area(north_area)) is None
    assert all(np.array_equal(a, b) for a, b in zip(snap, st))
    u41, uha3 = g.block("ru-41-id"), g.block("ru-uha-3")
    assert (st.block_sp[u41], st.block_sp[uha3]) == (2, 1)
    out = g.apply(P, 6, ctx, vin)
    assert out[enb.EO_SP_LOST] == 2 and out[enb.EO_AREA] == vin  # = the Poles' initiative (2)
    assert g.sp_in(S, "vinnytsia") == 1
    # strongest first (7.41.5): 41 (2 → 1), then the lowest index of the 1-SP blocks
    dead = [b for b in (u41, uha3) if st.block_status[b] == STATUS.DESTROYED_TO_POOL]
    assert len(dead) == 1 == out[enb.EO_DESTROYED]
    assert st.block_area[dead[0]] == -1 and st.block_sp[dead[0]] == 0
    check_conservation(g.cs)


def test_desertions_needs_polish_initiative(game):
    g = game
    st = g.state
    st.initiative_side[FRONT.SOUTH], st.initiative_level[FRONT.SOUTH] = S, 2
    g.to_hand(P, 6)
    assert not enb.event_usable_nb(st, g.cs, g.orders, g.m, g.table, g.active, P, 6, FRONT.SOUTH)
    assert enb.event_usable_nb(st, g.cs, g.orders, g.m, g.table, g.active, P, 6, FRONT.NORTH)  # Poles hold 1


def test_soe_spoils_of_war(game):
    """SoE 3.4 sidebar, Polish card 51: "Play after a battle in a key city. If you won the battle and
    inflicted at least 3SP losses on the enemy, immediately draw 3 cards up to your 7 card hand limit.
    *Remove this card from the game." """
    g = game
    g.to_hand(P, 51, 1, 4, 5)  # 4 cards
    ctx = g.battle("vinnytsia", P, P, 1, 3)  # Vinnytsia is a key city
    assert g.m.garrison[g.area("vinnytsia")]
    assert g.window(P, ctx) == [51]
    assert g.targets(P, 51, ctx) == [-1]
    out = g.react(P, 51, ctx, -1)
    assert out[enb.EO_CARDS_DRAWN] == 3
    assert len(hand(g.cs, P)) == 6  # 4 - 1 + 3
    assert g.cs.location[P, 50] == cnb.REMOVED
    check_conservation(g.cs)


def test_spoils_of_war_hand_limit_and_conditions(game):
    g = game
    g.to_hand(P, 51, 1, 4, 5, 8, 10, 12)  # 7 cards: 6 after playing 51, draws 1 up to 7
    assert g.window(P, g.battle("vinnytsia", P, P, 0, 2)) == []  # only 2 SP inflicted
    assert g.window(P, g.battle("vinnytsia", P, S, 3, 3)) == []  # lost
    assert g.window(P, g.battle("vinnytsia", P, P, 0, 3, fought=0)) == []  # no battle fought
    nonkey = next(g.map.ids[a] for a in range(g.state.n_areas) if not g.m.garrison[a])
    assert g.window(P, g.battle(nonkey, P, P, 0, 5)) == []
    # won as the defender, 3 SP inflicted on the attacker
    ctx = g.battle("vinnytsia", S, P, 3, 0)
    assert 51 in g.window(P, ctx)
    out = g.react(P, 51, ctx, -1)
    assert out[enb.EO_CARDS_DRAWN] == 1 and len(hand(g.cs, P)) == 7


def test_a_drawing_reaction_does_not_draw_itself_back(game):
    """SoE 7.13 "Cards are placed in the discard pile after use" (E-C10): Soviet card 24 Captured
    Supplies (not starred, draw_cards:2) played with an empty draw pile and card 10 alone in the
    discard pile: the reshuffle of its own draw takes card 10, not card 24, which ends discarded."""
    g = game
    g.cs.location[S, :] = cnb.REMOVED
    g.cs.location[S, 23] = cnb.HAND
    g.cs.location[S, 9] = cnb.DISCARD
    g.cs.pile_top[S] = 0
    g.cs.pile_len[S] = 0
    ctx = g.battle("vinnytsia", P, S, 3, 1)  # the Soviets won in a key city, inflicting 3 SP
    assert g.window(S, ctx) == [24]
    out = g.react(S, 24, ctx, -1)
    assert out[enb.EO_CARDS_DRAWN] == 1
    assert hand(g.cs, S) == [10]
    assert g.cs.location[S, 23] == cnb.DISCARD
    check_conservation(g.cs)


def test_eats_alliance_with_lithuania(game):
    """EatS II.3 / V, Soviet card 23 (starred, north): Lithuania stays neutral until the Soviet player
    uses "Alliance with Lithuania"; then the Soviet player can activate Lithuanian units."""
    g = game
    lit = int(Nation.LITHUANIAN)
    assert not g.active[lit]  # neutral_nation rule of kiev-offensive
    lt = [g.block("ru-lt-1-id"), g.block("ru-lt-2-id")]
    assert all(g.state.block_side[b] == S for b in lt)  # Soviet-controlled blocks once active
    g.to_hand(S, 23)
    assert not enb.event_usable_nb(g.state, g.cs, g.orders, g.m, g.table, g.active, S, 23, FRONT.SOUTH)
    ctx = g.play_event(S, 23, FRONT.NORTH)
    assert g.targets(S, 23, ctx) == [-1]
    out = g.apply(S, 23, ctx, -1)
    assert g.active[lit] and out[enb.EO_NATION] == lit
    assert g.cs.location[S, 22] == cnb.REMOVED
    # nothing left to do: a second play would not be offered
    assert g.targets(S, 23, ctx) == []
    # the flag is what the reinforcement kernels read (RF6): Lithuanian blocks may now be strengthened
    from soe_sim.engine.reinforce.nb import strategic_cubes_nb
    kaunas = g.area("kaunas")
    strat = np.zeros((g.state.n_areas, 3), dtype=np.int64)
    depot = np.zeros((2, g.state.n_areas), dtype=np.bool_)
    depot[S, kaunas] = True
    ctrl = g.state.control.copy()
    ctrl[kaunas] = S
    strategic_cubes_nb(g.m.strategic_cubes, ctrl, depot, S, kaunas, bool(g.active[lit]), strat)
    assert strat[kaunas].sum() == g.m.strategic_cubes[kaunas].sum()


def test_eats_desertions_in_uha_round_example(game):
    """EatS round example, Action 1: the Soviet Recon in Derazhnia finds nothing; the Polish Recon
    reveals the Soviet units in Vinnytsia and the Poles play the Reaction "Desertions in UHA" (card No
    2): UHA III is eliminated and goes to the Destroyed Units' Area (the SoE force pool)."""
    g = game
    g.to_hand(P, 2)
    g.to_hand(S, 21)
    # order VI has moved the Polish blocks out of Derazhnia (towards Khmilnyk) before the Recons
    for bid in ("pl-5-id", "pl-12-id"):
        g.state.block_area[g.block(bid)] = g.area("ploskirov")
    ctx_s = g.recon(S, "derazhnia")
    assert ctx_s[enb.X_REVEALED] == 0
    assert g.window(S, ctx_s) == []  # Partisans in the Rear: nothing revealed
    ctx_p = g.recon(P, "vinnytsia")
    assert ctx_p[enb.X_REVEALED] == 2
    assert g.window(S, ctx_p) == []  # not the Soviets' Recon
    assert g.window(P, ctx_p) == [2]
    uha3 = g.block("ru-uha-3")
    assert g.targets(P, 2, ctx_p) == [uha3]  # only the UHA block; 41st Division is Russian
    out = g.react(P, 2, ctx_p, uha3)
    assert out[enb.EO_BLOCK_ELIMINATED] == uha3 and out[enb.EO_AREA] == g.area("vinnytsia")
    assert g.state.block_status[uha3] == STATUS.DESTROYED_TO_POOL
    assert g.state.block_area[uha3] == -1 and g.state.block_sp[uha3] == 0
    assert g.cs.location[P, 1] == cnb.REMOVED  # starred
    assert g.state.block_status[g.block("ru-41-id")] == STATUS.ON_MAP
    check_conservation(g.cs)


def test_desertions_in_uha_other_areas(game):
    """The reaction needs a UHA block in the reconned area (Khmilnyk: UHA I and II)."""
    g = game
    g.to_hand(P, 2)
    ctx = g.recon(P, "khmilnyk")
    rows = g.targets(P, 2, ctx)
    assert sorted(g.ids[b] for b in rows) == ["ru-uha-1", "ru-uha-2"]
    # a reconned area without UHA blocks offers nothing
    g2_area = next(a for a in range(g.state.n_areas)
                   if g.m.front[a] == FRONT.SOUTH and g.sp_in(S, g.map.ids[a]) > 0
                   and not ((g.state.block_area == a) & (g.state.block_nation == int(Nation.UKRAINIAN_UHA))).any())
    assert g.window(P, g.recon(P, g.map.ids[g2_area])) == []


# --- other effects -----------------------------------------------------------------------------------------


def test_vp_bookkeeping_skips_zero(game):
    """SoE 7.8 (E10): the VP change reported equals the track's change, also across the missing 0."""
    g = game
    st = g.state
    g.to_hand(S, 54)  # Polrevkom: Soviet +1 VP (north)
    st.vp[0] = 1
    ctx = g.play_event(S, 54, FRONT.NORTH)
    out = g.apply(S, 54, ctx, -1)
    assert st.vp[0] == -1 and out[enb.EO_VP_DELTA] == -2
    g.to_hand(P, 54)  # Council of National Defence: Polish +1
    ctx = g.play_event(P, 54, FRONT.SOUTH)
    out = g.apply(P, 54, ctx, -1)
    assert st.vp[0] == 1 and out[enb.EO_VP_DELTA] == 2


def test_initiative_event_limits(game):
    """SoE 6.1: no 0 on the track (a point taken at level 1 flips the marker); the level stays within
    initiative.min_level..max_level."""
    g = game
    st = g.state
    n = FRONT.NORTH
    st.initiative_side[n], st.initiative_level[n] = P, 1
    g.to_hand(S, 47)  # To the West!: Soviet +1 north
    ctx = g.play_event(S, 47, n)
    out = g.apply(S, 47, ctx, -1)
    assert (st.initiative_side[n], st.initiative_level[n]) == (S, 1)
    assert (out[enb.EO_INI_FRONT], out[enb.EO_INI_OLD_SIDE], out[enb.EO_INI_OLD_LEVEL]) == (n, P, 1)
    assert enb.initiative_step_nb(st, n, S, 1, 1, 5) and st.initiative_level[n] == 2
    st.initiative_level[n] = 5
    g.to_hand(S, 12)  # Former Tsar Officers: any front, "on the front where this card is played"
    assert not enb.event_usable_nb(st, g.cs, g.orders, g.m, g.table, g.active, S, 12, n)  # already at max
    ctx = g.play_event(S, 12, FRONT.SOUTH)
    s0 = st.initiative_side[FRONT.SOUTH]
    g.apply(S, 12, ctx, -1)
    assert s0 == P and (st.initiative_side[FRONT.SOUTH], st.initiative_level[FRONT.SOUTH]) == (S, 1)
    assert st.initiative_level[n] == 5
    assert not enb.initiative_step_nb(st, n, P, -1, 1, 5)  # the Poles lose a point: the Soviets gain, capped
    assert (st.initiative_side[n], st.initiative_level[n]) == (S, 5)
    st.initiative_level[n] = 3
    enb.initiative_step_nb(st, n, P, -1, 1, 5)
    assert st.initiative_level[n] == 4


def test_reinforce_from_events_area(game_ea, game):
    """Polish card 30 New Units: the 2nd Cavalry Division leaves the Events' Area at full strength for a
    friendly supply depot of the front (EV8); without the Events' Area the card's event is not offered."""
    g = game_ea
    st = g.state
    g.to_hand(P, 30)
    g.state.initiative_side[:] = P
    ctx = EV.card_play_context(FRONT.NORTH)
    rows = g.targets(P, 30, ctx)
    warsaw = g.area("warsaw")
    assert warsaw in rows
    for a in rows:
        assert g.m.front[a] == FRONT.NORTH and g.m.garrison[a] and st.control[a] == P
    ctx = g.play_event(P, 30, FRONT.NORTH)
    b = g.block("pl-2-cd")
    out = g.apply(P, 30, ctx, warsaw)
    assert out[enb.EO_BLOCK_PLACED] == b
    assert st.block_status[b] == STATUS.ON_MAP and st.block_area[b] == warsaw
    assert st.block_sp[b] == st.block_max_sp[b] and g.orders.seen[P, b]
    # the plain scenario state has no such block: the event does nothing and is not offered
    game.to_hand(P, 30)
    assert not enb.event_usable_nb(game.state, game.cs, game.orders, game.m, game.table, game.active, P, 30,
                                   FRONT.NORTH)
    # Soviet card 37 (3rd Rifle Division): Eastern Links are Soviet depots
    g.to_hand(S, 37)
    rows = g.targets(S, 37, EV.card_play_context(FRONT.SOUTH))
    assert any(g.m.eastern_link[a] for a in rows)


def test_reinforce_respects_stacking(game_ea):
    g = game_ea
    st = g.state
    warsaw = g.area("warsaw")
    pool = [b for b in range(st.n_blocks) if st.block_side[b] == P and st.block_status[b] == STATUS.FORCE_POOL]
    for b in pool[:4]:
        st.block_status[b], st.block_area[b], st.block_sp[b] = STATUS.ON_MAP, warsaw, 1
    g.to_hand(P, 34)
    rows = g.targets(P, 34, EV.card_play_context(FRONT.NORTH))
    assert warsaw not in rows


def test_battle_reactions(game):
    """Polish 23 Uhlan Pursuit (won: the losing enemy blocks lose 1 more SP), 29 Counterattack of the
    Reserves (lost: the winning enemy blocks lose 1 SP), 26 Defence of Lwow (won as defender, south: +1
    VP); Soviet 29 Mobile Reserves (lost: 1 infantry cube)."""
    g = game
    st = g.state
    g.to_hand(P, 23, 26, 29)
    g.to_hand(S, 29, 31, 24, 27)
    pl = g.block("pl-1-cd") if "pl-1-cd" in g.ids else next(
        b for b in range(st.n_blocks) if st.block_side[b] == P and st.block_status[b] == STATUS.ON_MAP
        and st.block_arm[b] != ARM.LEADER and st.block_sp[b] >= 3)
    st.block_area[pl] = g.area("vinnytsia")  # a Polish block in the battle too
    ctx = g.battle("vinnytsia", P, P, 0, 1)
    assert g.window(P, ctx) == [23]
    assert g.window(S, ctx) == [29]
    sp0 = g.sp_in(S, "vinnytsia")
    out = g.react(P, 23, ctx, -1)
    assert out[enb.EO_SP_LOST] == 1 and g.sp_in(S, "vinnytsia") == sp0 - 1
    assert st.block_sp[g.block("ru-41-id")] == 1  # the strongest block (7.41.5)
    assert g.cs.location[P, 22] == cnb.DISCARD  # not starred
    cubes0 = st.cubes[S].sum(axis=0)
    out = g.react(S, 29, ctx, -1)
    assert st.cubes[S, :, 0].sum() == cubes0[0] + 1 and out[enb.EO_CUBES_INFANTRY] == 1
    # Poles defend in the south and win: Defence of Lwow; Counterattack only after a lost battle
    ctx = g.battle("vinnytsia", S, P, 1, 0)
    assert 26 in g.window(P, ctx) and 29 not in g.window(P, ctx)
    vp0 = int(st.vp[0])
    out = g.react(P, 26, ctx, -1)
    assert int(st.vp[0]) - vp0 == out[enb.EO_VP_DELTA] == 1
    # Soviet Stubborn Defence (31) and Konarmia Pursuit (27, south) as the winning defender
    ctx = g.battle("vinnytsia", P, S, 2, 0)
    w = g.window(S, ctx)
    assert 31 in w and 27 in w and 24 not in w  # Captured Supplies: 0 SP inflicted on the attacker
    assert 29 in g.window(P, ctx)
    sp_pl = int(st.block_sp[pl])
    out = g.react(S, 27, ctx, -1)  # the losing Polish blocks lose 1 more SP
    assert out[enb.EO_SP_LOST] == 1 and st.block_sp[pl] == sp_pl - 1
    out = g.react(P, 29, ctx, -1)  # the winning Soviet blocks lose 1 SP
    assert out[enb.EO_SP_LOST] == 1
    # a reaction that is not playable now is refused without changing anything
    assert g.react(S, 24, ctx, -1) is None and g.cs.location[S, 23] == cnb.HAND
    check_conservation(g.cs)


def test_partisans_in_the_rear(game):
    """Soviet card 21: after the Soviet Recon reveals Polish blocks, one revealed block loses 1 SP."""
    g = game
    st = g.state
    g.to_hand(S, 21)
    aid = _enemy_area(g, S, FRONT.NORTH)
    ctx = g.recon(S, aid)
    rows = g.targets(S, 21, ctx)
    a = g.area(aid)
    assert rows and all(st.block_area[b] == a and st.block_side[b] == P and g.orders.seen[S, b] for b in rows)
    b = rows[0]
    sp = int(st.block_sp[b])
    out = g.react(S, 21, ctx, b)
    assert out[enb.EO_SP_LOST] == 1 and st.block_sp[b] == sp - 1 or st.block_status[b] == STATUS.DESTROYED_TO_POOL
    assert g.cs.location[S, 20] == cnb.DISCARD


def test_draw_cards_historical(game):
    """Polish card 45 French Military Mission: draw 2 cards up to the hand limit (E-C3)."""
    g = game
    g.to_hand(P, 45, 1, 3, 4, 5, 7, 8)  # 7 in hand, 6 after playing 45
    ctx = g.play_event(P, 45, FRONT.NORTH)
    out = g.apply(P, 45, ctx, -1)
    assert out[enb.EO_CARDS_DRAWN] == 1 and len(hand(g.cs, P)) == 7
    check_conservation(g.cs)


def test_no_events_area_in_a_scenario_without_reinforcements():
    """SoE 7.9 Scenario 1: "Reinforcements and leaders are not used in this scenario" (D14): the tutorial
    (``no_reinforcement_phase``) has no Events' Area, so no ``reinforce:`` card brings a block; the
    Kiev Offensive has one."""
    from soe_sim.engine.game import game_setup

    def universe(scenario):
        s = game_setup(scenario)
        return set(s.roster.blocks["id"].to_numpy()[s.state0.block_roster])

    card_blocks = {"pl-jakowlew", "pl-salnikow", "ru-3-id", "ru-48-id"}
    assert not universe("tutorial") & card_blocks
    assert card_blocks <= universe("kiev-offensive")
