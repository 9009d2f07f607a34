"""The card subsystem (SoE 3.4, 6.0, 7.1, 7.11–7.13, 7.41.1–2, 10.1): kernels vs a plain-Python
oracle, conservation of cards, reshuffles, legal plays, the hand bonus and reproducibility."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from soe_sim.battle.spec import BattleCard
from soe_sim.data import load_cards
from soe_sim.data.enums import CARD_FRONT, EVENT_KIND, FRONT, SIDE, CardFront, EventKind, Side
from soe_sim.engine.cards import (
    CardLocation,
    CardUse,
    card_constants,
    card_counts,
    check_conservation,
    draw_pile,
    hand,
    legal_card_plays,
    new_card_state,
    new_rng,
)
from soe_sim.engine.cards import nb

MASK = (1 << 64) - 1


# --- the oracle: one side's deck as Python lists and sets -------------------------------------------


class OracleRng:
    """SplitMix64 written out in Python integers (the same stream as ``splitmix64_nb``)."""

    def __init__(self, state: int):
        self.state = int(state)

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Uniform in [0, n): top 32 bits times n, shifted down by 32."""
        return ((self.next() >> 32) * n) >> 32


class OracleDeck:
    """One side's cards, the way a player handles them at the table.

    ``pile`` is a list, top card first; the hand, the discard pile, the removed cards and the cards
    on the table are sets (a card on the table remembers whether it was played as a battle card).
    """

    def __init__(self, cards, removed, pile, rng: OracleRng):
        self.cards = cards  # DataFrame indexed by id
        self.pile = list(pile)
        self.hand: set[int] = set()
        self.discard: set[int] = set()
        self.removed: set[int] = set(removed)
        self.table: dict[int, str] = {}  # card -> "battle" | "combat"
        self.rng = rng

    def shuffle(self):  # Fisher–Yates from the bottom of the pile up
        p = self.pile
        for i in range(len(p) - 1, 0, -1):
            j = self.rng.below(i + 1)
            p[i], p[j] = p[j], p[i]

    def take_top(self):  # SoE 7.1: an empty pile is refilled from the shuffled discard pile
        if not self.pile:
            self.pile = sorted(self.discard)
            self.discard.clear()
            self.shuffle()
        if not self.pile:
            return 0
        return self.pile.pop(0)

    def draw(self, n):
        drawn = 0
        for _ in range(n):
            c = self.take_top()
            if not c:
                break
            self.hand.add(c)
            drawn += 1
        return drawn

    def discard_card(self, card):
        if card not in self.hand:
            return False
        self.hand.remove(card)
        self.discard.add(card)
        return True

    def starred(self, card):
        return bool(self.cards.loc[card, "remove_after_event"])

    def play(self, card, use, cubes):
        """Start-of-phase card play (7.11 orders, 7.12 cubes, 7.13 event)."""
        if use == "pass":
            return 0, 0
        self.hand.remove(card)
        row = self.cards.loc[card]
        if use == "event":
            (self.removed if self.starred(card) else self.discard).add(card)
            return 0, card
        self.discard.add(card)
        if use == "orders":
            return int(row["orders"]), 0
        cubes[0] += int(row["infantry_cubes"])
        cubes[1] += int(row["cavalry_cubes"])
        cubes[2] += int(row["allied_cubes"])
        return 0, 0

    def combat_blind(self):
        c = self.take_top()
        if not c:
            return 0, 0
        self.table[c] = "combat"
        return c, int(self.cards.loc[c, "combat_modifier"])

    def combat_from_hand(self, card, bonus):
        self.hand.remove(card)
        self.table[card] = "combat"
        return int(self.cards.loc[card, "combat_modifier"]) + bonus

    def battle_card(self, card):
        self.hand.remove(card)
        self.table[card] = "battle"

    def reaction(self, card):
        self.hand.remove(card)
        (self.removed if self.starred(card) else self.discard).add(card)

    def end_battle(self):
        n = len(self.table)
        for c, how in self.table.items():
            (self.removed if how == "battle" and self.starred(c) else self.discard).add(c)
        self.table.clear()
        return n


def kernel_view(cs, s):
    loc = cs.location[s]
    ids = lambda code: {int(i) + 1 for i in np.flatnonzero(loc == code)}  # noqa: E731
    return {
        "pile": draw_pile(cs, s),
        "hand": ids(nb.HAND),
        "discard": ids(nb.DISCARD),
        "removed": ids(nb.REMOVED),
        "table": ids(nb.IN_PLAY),
    }


def oracle_view(o: OracleDeck):
    return {"pile": list(o.pile), "hand": set(o.hand), "discard": set(o.discard), "removed": set(o.removed),
            "table": set(o.table)}


# --- fixtures ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cr(rules):
    return card_constants(rules)


@pytest.fixture(scope="module")
def decks():
    return {s.slug: load_cards(s.slug).set_index("id", drop=False) for s in Side}


def fresh(rules, seed, scenario=None):
    rng = new_rng(seed)
    cs = new_card_state(scenario, rules, rng)
    return cs, rng


def empty_hand_of(cs, s, cards):
    """Move ``cards`` of side ``s`` into the hand, straight out of the pile (test set-up only)."""
    for c in cards:
        cs.location[s, c - 1] = nb.HAND
    keep = [c for c in draw_pile(cs, s) if c not in set(cards)]
    cs.pile[s, :len(keep)] = keep
    cs.pile_top[s] = 0
    cs.pile_len[s] = len(keep)


# --- a random operation sequence, run on the kernels and on the oracle -------------------------------

OPS = ("draw", "replenish", "discard", "play", "blind", "hand_combat", "battle", "reaction", "end_battle",
       "extra", "discard_to_limit")


def run_sequence(rules, cr, decks, seed, n_ops, scenario=None, check_oracle=True):
    """Apply ``n_ops`` random operations to both sides; compare with the oracle after each one."""
    choose = np.random.default_rng(seed)
    cs, rng = fresh(rules, seed, scenario)
    cubes = np.zeros((2, 3), np.int16)
    oracles = {}
    if check_oracle:
        # The oracle replays the set-up shuffle from the same SplitMix64 state.
        o_rng = OracleRng(int(new_rng(seed)[0]))
        for s in Side:
            removed = [int(c) for c in np.flatnonzero(cs.location[s] == nb.REMOVED) + 1]
            pile = [c for c in range(1, cs.n_cards + 1) if c not in removed]
            oracles[int(s)] = OracleDeck(decks[s.slug], removed, pile, o_rng)
            oracles[int(s)].shuffle()
    o_cubes = np.zeros((2, 3), np.int64)
    effect = np.zeros(nb.N_EFFECT, np.int64)
    for _ in range(n_ops):
        s = int(choose.integers(2))
        op = OPS[int(choose.integers(len(OPS)))]
        o = oracles.get(s)
        h = hand(cs, s)
        if op == "draw":
            n = int(choose.integers(0, 12))
            got = nb.draw_cards_nb(cs, s, n, rng)
            if o:
                assert got == o.draw(n)
        elif op == "replenish":
            drawn, must = nb.replenish_nb(cs, s, cr, rng)
            if o:
                assert drawn == o.draw(cr.draw_per_round)
                assert must == max(0, len(o.hand) - cr.hand_limit)
        elif op == "extra":
            phase = int(choose.integers(1, 6))
            drawn, must = nb.two_front_extra_draw_nb(cs, s, phase, cr, rng)
            if o:
                expect = o.draw(cr.two_front_extra_draw) if phase in (2, 3, 4) else 0
                assert drawn == expect
        elif op == "discard":
            card = int(choose.integers(0, cs.n_cards + 2))  # sometimes not in hand, sometimes no card
            got = nb.discard_nb(cs, s, card)
            if o:
                assert got == o.discard_card(card)
        elif op == "discard_to_limit":
            must = nb.excess_cards_nb(cs, s, cr.hand_limit)
            for card in choose.permutation(h)[:must]:
                assert nb.discard_nb(cs, s, int(card))
                if o:
                    o.discard_card(int(card))
            assert nb.hand_size_nb(cs, s) <= cr.hand_limit
        elif op == "play":
            front = int(choose.integers(2))
            plays = legal_card_plays(cs, s, front)
            card, use = plays[int(choose.integers(len(plays)))]
            assert nb.is_legal_play_nb(cs, s, front, card, int(use))
            before = cubes[s].copy()
            orders, event = nb.apply_card_play_nb(cs, s, card, int(use), cubes)
            if o:
                name = {CardUse.PASS: "pass", CardUse.ORDERS: "orders", CardUse.CUBES: "cubes",
                        CardUse.EVENT: "event"}[use]
                assert (orders, event) == o.play(card, name, o_cubes[s])
                assert (cubes == o_cubes).all()
            elif use != CardUse.CUBES:
                assert (cubes[s] == before).all()
        elif op == "blind":
            card, mod = nb.draw_combat_card_nb(cs, s, rng)
            if o:
                assert (card, mod) == o.combat_blind()
        elif op == "hand_combat" and h:
            card = int(choose.choice(h))
            mod = nb.play_combat_card_from_hand_nb(cs, s, card, cr)
            if o:
                assert mod == o.combat_from_hand(card, cr.hand_card_bonus)
        elif op == "battle":
            battle = [c for c in h if cs.event_kind[s, c - 1] == EVENT_KIND.BATTLE]
            card = int(choose.choice(battle)) if battle else (h[0] if h else 1)
            ok = nb.play_battle_card_nb(cs, s, card, effect)
            assert ok == bool(battle)
            if o and ok:
                o.battle_card(card)
        elif op == "reaction":
            reactions = [c for c in h if cs.event_kind[s, c - 1] == EVENT_KIND.REACTION]
            if reactions:
                card = int(choose.choice(reactions))
                assert nb.play_reaction_card_nb(cs, s, card) == card
                if o:
                    o.reaction(card)
        elif op == "end_battle":
            n = nb.end_battle_nb(cs, s)
            if o:
                assert n == o.end_battle()
        check_conservation(cs)
        if o:
            for side, od in oracles.items():
                assert kernel_view(cs, side) == oracle_view(od), (seed, op)
    return cs, rng, cubes


# --- tests -----------------------------------------------------------------------------------------


def test_card_constants_come_from_the_rules(rules, cr):
    assert cr.draw_per_round == rules["cards.draw_per_round"] == 6  # SoE 6.0
    assert cr.hand_limit == rules["cards.hand_limit"] == 7  # SoE 6.0, 10.1
    assert cr.two_front_extra_draw == 2 and list(cr.two_front_extra_draw_phases) == [2, 3, 4]  # SoE 10.1
    assert cr.hand_card_bonus == rules["combat.hand_card_bonus"] == 1  # SoE 7.41.2
    assert cr.deck_size == 55


def test_new_card_state_removes_scenario_cards(rules, decks):
    cs, _ = fresh(rules, 3, "battle-of-warsaw")
    from soe_sim.data import load_scenario

    removed = load_scenario("battle-of-warsaw").removed_cards
    for s in Side:
        ids = set(removed[s.slug])
        assert ids, "the fixture scenario removes cards on both sides"
        assert {int(c) + 1 for c in np.flatnonzero(cs.location[s] == nb.REMOVED)} == ids
        pile = draw_pile(cs, s)
        assert sorted(pile) == sorted(set(range(1, 56)) - ids)
        assert card_counts(cs, s) == {"draw_pile": 55 - len(ids), "hand": 0, "discard": 0,
                                      "removed": len(ids), "in_play": 0}
        # static attributes are the CSV's, row id - 1
        d = decks[s.slug]
        assert cs.orders[s].tolist() == d.sort_index()["orders"].tolist()
        assert cs.combat_modifier[s].tolist() == d.sort_index()["combat_modifier"].tolist()
        assert cs.cubes[s, :, 1].tolist() == d.sort_index()["cavalry_cubes"].tolist()
        assert cs.front[s].tolist() == [int(CardFront.from_slug(f)) for f in d.sort_index()["front"]]
    check_conservation(cs)


def test_battle_effect_vector_matches_the_battle_model(rules, decks):
    cs, _ = fresh(rules, 0)
    for s in Side:
        for row in decks[s.slug].itertuples():
            v = cs.battle_effect[s, row.id - 1]
            if row.event_kind == "battle":
                assert v.tolist() == BattleCard.from_effect(row.effect_code).vector().tolist(), row.name
            else:
                assert not v.any()


@pytest.mark.parametrize("seed", range(40))
def test_kernels_match_oracle(rules, cr, decks, seed):
    run_sequence(rules, cr, decks, seed, 120, scenario="battle-of-warsaw" if seed % 2 else None)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_ops=st.integers(0, 250))
def test_cards_are_conserved(rules, cr, decks, seed, n_ops):
    cs, _, _ = run_sequence(rules, cr, decks, seed, n_ops, scenario="battle-of-warsaw", check_oracle=False)
    for s in Side:
        counts = card_counts(cs, s)
        assert sum(counts.values()) == 55
        assert counts["removed"] >= (3 if s == Side.POLISH else 2)


def test_card_counts_detects_an_inconsistent_state(rules):
    cs, _ = fresh(rules, 1)
    out = np.zeros(nb.N_LOCATIONS, np.int64)
    assert nb.card_counts_nb(cs, 0, out)
    bad = cs.copy()
    bad.location[0, bad.pile[0, 0] - 1] = nb.HAND  # in the hand and still in the pile
    assert not nb.card_counts_nb(bad, 0, out)
    bad = cs.copy()
    bad.pile[0, 1] = bad.pile[0, 0]  # one card twice in the pile
    assert not nb.card_counts_nb(bad, 0, out)
    with pytest.raises(AssertionError):
        check_conservation(bad)


def test_soe_7_1_reshuffle_when_the_pile_is_empty(rules):
    cs, rng = fresh(rules, 11, "battle-of-warsaw")
    s = SIDE.POLISH
    assert nb.draw_cards_nb(cs, s, 100, rng) == 52  # the whole pile: 55 - 3 removed
    assert nb.draw_pile_size_nb(cs, s) == 0
    full_hand = set(hand(cs, s))
    discarded = set(hand(cs, s)[:20])
    for c in discarded:
        assert nb.discard_nb(cs, s, c)
    # The next draw reshuffles the 20 discards into a new pile; removed cards never come back.
    assert nb.draw_cards_nb(cs, s, 1, rng) == 1
    assert card_counts(cs, s) == {"draw_pile": 19, "hand": 33, "discard": 0, "removed": 3, "in_play": 0}
    new_card = set(hand(cs, s)) - (full_hand - discarded)
    assert len(new_card) == 1 and set(draw_pile(cs, s)) | new_card == discarded


def test_soe_7_1_draws_stop_when_pile_and_discard_are_empty(rules, cr):
    cs, rng = fresh(rules, 5)
    s = SIDE.SOVIET
    assert nb.draw_cards_nb(cs, s, 60, rng) == 55
    assert nb.draw_cards_nb(cs, s, 3, rng) == 0
    assert nb.replenish_nb(cs, s, cr, rng) == (0, 55 - cr.hand_limit)
    assert nb.draw_combat_card_nb(cs, s, rng) == (nb.NO_CARD, 0)
    check_conservation(cs)


def test_soe_7_41_2_blind_draw_reshuffles_and_waits_for_the_end_of_the_battle(rules):
    cs, rng = fresh(rules, 8)
    s = SIDE.POLISH
    nb.draw_cards_nb(cs, s, 54, rng)
    for c in hand(cs, s)[:4]:
        nb.discard_nb(cs, s, c)
    last = draw_pile(cs, s)[0]
    assert nb.draw_combat_card_nb(cs, s, rng)[0] == last  # the last card of the pile
    assert cs.location[s, last - 1] == nb.IN_PLAY
    card, mod = nb.draw_combat_card_nb(cs, s, rng)  # the pile is empty: the 4 discards are reshuffled
    assert card in set(range(1, 56)) - set(hand(cs, s)) - {last}
    assert mod == cs.combat_modifier[s, card - 1]
    assert nb.draw_pile_size_nb(cs, s) == 3
    assert nb.end_battle_nb(cs, s) == 2
    assert card_counts(cs, s) == {"draw_pile": 3, "hand": 50, "discard": 2, "removed": 0, "in_play": 0}


def test_soe_6_0_replenish_then_discard_down_to_the_hand_limit(rules, cr):
    cs, rng = fresh(rules, 2)
    s = SIDE.POLISH
    assert nb.replenish_nb(cs, s, cr, rng) == (6, 0)
    for c in hand(cs, s)[:1]:
        nb.discard_nb(cs, s, c)
    drawn, must = nb.replenish_nb(cs, s, cr, rng)
    assert (drawn, must, nb.hand_size_nb(cs, s)) == (6, 4, 11)
    for c in hand(cs, s)[:must]:
        assert nb.discard_nb(cs, s, c)
    assert nb.hand_size_nb(cs, s) == cr.hand_limit
    assert not nb.discard_nb(cs, s, draw_pile(cs, s)[0])  # only cards in hand can be discarded
    assert not nb.discard_nb(cs, s, 0) and not nb.discard_nb(cs, s, 56)
    assert nb.draw_cards_to_limit_nb(cs, s, 3, cr.hand_limit, rng) == 0  # "up to your 7 card hand limit"
    nb.discard_nb(cs, s, hand(cs, s)[0])
    assert nb.draw_cards_to_limit_nb(cs, s, 3, cr.hand_limit, rng) == 1


def test_soe_10_1_two_front_extra_draw_in_phases_2_to_4(rules, cr):
    cs, rng = fresh(rules, 4)
    s = SIDE.SOVIET
    nb.replenish_nb(cs, s, cr, rng)
    assert nb.two_front_extra_draw_nb(cs, s, 1, cr, rng) == (0, 0)
    assert nb.two_front_extra_draw_nb(cs, s, 2, cr, rng) == (2, 1)  # 8 cards: discard one
    nb.discard_nb(cs, s, hand(cs, s)[0])
    assert nb.two_front_extra_draw_nb(cs, s, 3, cr, rng) == (2, 2)
    assert nb.two_front_extra_draw_nb(cs, s, 5, cr, rng) == (0, 0)
    assert nb.hand_size_nb(cs, s) == 9


@pytest.mark.parametrize("side", list(Side))
def test_soe_7_1_legal_plays_respect_fronts_and_event_kinds(rules, decks, side):
    """Every card alone in hand: orders and cubes always; the event only if historical and on the
    card's front or ``any`` (SoE 7.13, 10.0); battle and reaction events never at phase start."""
    base, _ = fresh(rules, 0)
    for row in decks[side.slug].itertuples():
        cs = base.copy()
        empty_hand_of(cs, side, [row.id])
        for front in (FRONT.NORTH, FRONT.SOUTH):
            plays = legal_card_plays(cs, side, front)
            assert plays[0] == (nb.NO_CARD, CardUse.PASS)
            uses = {u for c, u in plays[1:]}
            assert {c for c, u in plays[1:]} <= {row.id}
            assert (CardUse.ORDERS in uses) == (row.orders > 0)
            assert (CardUse.CUBES in uses) == (row.infantry_cubes + row.cavalry_cubes + row.allied_cubes > 0)
            event_ok = row.event_kind == "historical" and row.front in ("any", Front_slug(front))
            assert (CardUse.EVENT in uses) == event_ok, (row.name, front)
            assert nb.is_legal_play_nb(cs, side, front, row.id, nb.USE_EVENT) == event_ok
    # the real decks have front-restricted historical events on both sides and fronts
    for s in Side:
        d = decks[s.slug]
        hist = d[d["event_kind"] == "historical"]
        assert {"north", "south", "any"} <= set(hist["front"])


def Front_slug(front):
    return "north" if front == FRONT.NORTH else "south"


def test_soe_7_1_only_cards_in_hand_are_legal(rules):
    cs, rng = fresh(rules, 9)
    assert legal_card_plays(cs, 0, 0) == [(nb.NO_CARD, CardUse.PASS)]  # empty hand: pass only
    top = draw_pile(cs, 0)[0]
    assert not nb.is_legal_play_nb(cs, 0, 0, top, nb.USE_ORDERS)
    with pytest.raises(ValueError):
        nb.apply_card_play_nb(cs, 0, top, nb.USE_ORDERS, np.zeros((2, 3), np.int16))


def test_soe_7_11_7_12_7_13_apply_card_play(rules):
    """Orders (7.11) return the card's order number; cubes (7.12) go to the GameState cube array;
    a starred historical event (7.13) leaves the game and returns its id for the engine."""
    from soe_sim.data import load_blocks, load_map, load_scenario
    from soe_sim.engine.state import CUBE_ALLIED, CUBE_INFANTRY, new_game

    game = new_game(load_scenario("tutorial"), load_map(), load_blocks(), rules)
    cubes = game.cubes[:, FRONT.NORTH]  # the pools of the front the cards are played on (7.12; EatS X)
    start = cubes.copy()
    cs, _ = fresh(rules, 0)
    s = SIDE.SOVIET
    # Soviet 14 Red Guards: 3 orders; 22 UHA Galician Riflemen: 1 allied cube;
    # 19 Conscription of Volunteers: historical, any front, starred; 2 infantry cubes
    empty_hand_of(cs, s, [14, 22, 19, 33])
    assert nb.apply_card_play_nb(cs, s, 14, nb.USE_ORDERS, cubes) == (3, nb.NO_CARD)
    assert nb.apply_card_play_nb(cs, s, 22, nb.USE_CUBES, cubes) == (0, nb.NO_CARD)
    assert cubes[s, CUBE_ALLIED] == start[s, CUBE_ALLIED] + 1
    assert nb.apply_card_play_nb(cs, s, 33, nb.USE_CUBES, cubes) == (0, nb.NO_CARD)
    assert cubes[s, CUBE_INFANTRY] == start[s, CUBE_INFANTRY] + 3
    assert (cubes[1 - s] == start[1 - s]).all() and not game.cubes[:, FRONT.SOUTH].any()
    assert nb.apply_card_play_nb(cs, s, 19, nb.USE_EVENT, cubes) == (0, 19)
    assert cs.location[s, 19 - 1] == nb.REMOVED
    assert cs.location[s, 14 - 1] == cs.location[s, 22 - 1] == nb.DISCARD
    assert nb.apply_card_play_nb(cs, s, nb.NO_CARD, nb.USE_PASS, cubes) == (0, nb.NO_CARD)
    # a starred card played for orders or cubes is discarded, not removed (7.13 is about events)
    empty_hand_of(cs, s, [12])
    nb.apply_card_play_nb(cs, s, 12, nb.USE_ORDERS, cubes)
    assert cs.location[s, 12 - 1] == nb.DISCARD
    check_conservation(cs)


def test_soe_7_41_2_hand_card_bonus(rules, cr, decks):
    cs, rng = fresh(rules, 6)
    s = SIDE.POLISH
    nb.draw_cards_nb(cs, s, 10, rng)
    for card in hand(cs, s):
        assert nb.play_combat_card_from_hand_nb(cs, s, card, cr) == decks["polish"].loc[card, "combat_modifier"] + 1
    for _ in range(10):
        card, mod = nb.draw_combat_card_nb(cs, s, rng)
        assert mod == decks["polish"].loc[card, "combat_modifier"]  # blind: no bonus
    assert card_counts(cs, s)["in_play"] == 20
    assert nb.end_battle_nb(cs, s) == 20
    assert card_counts(cs, s)["discard"] == 20
    with pytest.raises(ValueError):
        nb.play_combat_card_from_hand_nb(cs, s, draw_pile(cs, s)[0], cr)


def test_soe_7_41_1_battle_card_effect_and_disposal(rules, decks):
    cs, _ = fresh(rules, 0)
    s = SIDE.POLISH
    eff = np.zeros(nb.N_EFFECT, np.int64)
    empty_hand_of(cs, s, [7, 8, 2, 23, 51])  # 7 Renault Tanks (battle); 8 no event; reactions 2*, 23, 51*
    assert not nb.play_battle_card_nb(cs, s, 8, eff) and not eff.any()
    assert nb.play_battle_card_nb(cs, s, 7, eff)
    assert eff[nb.E_CANCEL_FORTIFICATION] == 1 and eff[nb.E_COMBAT_VALUE] == 1
    assert cs.location[s, 6] == nb.IN_PLAY and cs.use[s, 6] == CardUse.BATTLE
    assert nb.end_battle_nb(cs, s) == 1
    assert cs.location[s, 6] == nb.DISCARD  # not starred
    # No battle card of the built-in decks is starred; a starred one would leave the game (E-C1).
    starred = cs.copy()
    starred.remove_after_event[s, 6] = True
    starred.location[s, 6] = nb.HAND
    assert nb.play_battle_card_nb(starred, s, 7, eff)
    nb.end_battle_nb(starred, s)
    assert starred.location[s, 6] == nb.REMOVED
    # Reactions: starred ones leave the game, the others are discarded (docs/rules.md E-C1).
    assert nb.play_reaction_card_nb(cs, s, 8) == nb.NO_CARD  # not a reaction card
    assert nb.play_reaction_card_nb(cs, s, 23) == 23 and cs.location[s, 22] == nb.DISCARD
    assert nb.play_reaction_card_nb(cs, s, 51) == 51 and cs.location[s, 50] == nb.REMOVED
    assert nb.play_reaction_card_nb(cs, s, 2) == 2 and cs.location[s, 1] == nb.REMOVED
    # A starred card drawn blind as a combat card is discarded after the battle (E-C5).
    cs2, rng = fresh(rules, 0)
    starred = [c for c in range(1, 56) if cs2.remove_after_event[s, c - 1]]
    while True:
        card, _ = nb.draw_combat_card_nb(cs2, s, rng)
        if card in starred:
            break
    nb.end_battle_nb(cs2, s)
    assert cs2.location[s, card - 1] == nb.DISCARD
    check_conservation(cs2)


def test_same_seed_same_order_and_different_seed_different_order(rules, cr, decks):
    a, _, ca = run_sequence(rules, cr, decks, 1234, 150, check_oracle=False)
    b, _, cb = run_sequence(rules, cr, decks, 1234, 150, check_oracle=False)
    for x, y in zip(a, b):
        assert np.array_equal(x, y)
    assert np.array_equal(ca, cb)
    s1, _ = fresh(rules, np.array([42], np.uint64))
    s2, _ = fresh(rules, np.array([42], np.uint64))
    s3, _ = fresh(rules, np.array([43], np.uint64))
    assert draw_pile(s1, 0) == draw_pile(s2, 0) != draw_pile(s3, 0)
    # the seed array is the stream: it is advanced in place by the set-up shuffles
    rng = np.array([42], np.uint64)
    new_card_state(None, rules, rng)
    assert rng[0] != 42


def test_fisher_yates_is_uniform(rules):
    """All 120 orders of a 5-card pile appear equally often (chi-square, 60 000 shuffles)."""
    cs, _ = fresh(rules, 0)
    s = 0
    cs.pile_top[s] = 50  # a 5-card pile: the last 5 slots
    base = cs.pile[s, 50:55].copy()
    rng = new_rng(99)
    counts: dict[tuple, int] = {}
    n = 60_000
    for _ in range(n):
        cs.pile[s, 50:55] = base
        nb.shuffle_draw_pile_nb(cs, s, rng)
        key = tuple(cs.pile[s, 50:55].tolist())
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 120
    expected = n / 120
    chi2 = sum((v - expected) ** 2 / expected for v in counts.values())
    assert chi2 < 180  # 119 degrees of freedom: p ≈ 0.0003


def test_location_codes_and_enums_agree():
    assert [int(x) for x in CardLocation] == list(range(nb.N_LOCATIONS))
    assert CardUse.BATTLE == nb.USE_BATTLE and len(CardUse) == nb.N_USES
    assert CARD_FRONT.ANY == int(CardFront.ANY) and EVENT_KIND.HISTORICAL == int(EventKind.HISTORICAL)


def test_battle_card_play_limits(rules, decks):
    """SoE 7.41.1 "the text on the card describes how the battle will be influenced" — the card's play
    limits (E-C11: ``attacker_only``, ``defender_only``, ``rail_line``) — and EatS V where SoE is
    silent: a card designated for a front is played as an event, a battle card included, only on that
    front (E-C9). Every card of both built-in decks against every (front, role, rail) combination."""
    cs, _ = fresh(rules, 0)
    for s in Side:
        for row in decks[s.slug].itertuples():
            c = int(row.id) - 1
            eff = row.effect or {}
            for front in (FRONT.NORTH, FRONT.SOUTH):
                for attacker in (True, False):
                    for on_rail in (True, False):
                        want = (row.event_kind == "battle"
                                and row.front in ("any", ("north", "south")[front])
                                and not (eff.get("attacker_only") and not attacker)
                                and not (eff.get("defender_only") and attacker)
                                and not (eff.get("rail_line") and not on_rail))
                        got = nb.battle_card_playable_nb(cs, s, c, front, attacker, on_rail)
                        assert got == want, (s.slug, row.id, row.name, front, attacker, on_rail)
    # the built-in texts: Renault Tanks (Polish 7) "Attacker only", Hold the Line (Polish 17) "Defender
    # only", Armoured Trains (Polish 13) "on a rail line", Kosciuszko Squadron (Polish 11) "southern front"
    P = SIDE.POLISH
    assert nb.battle_card_playable_nb(cs, P, 6, FRONT.NORTH, True, False)
    assert not nb.battle_card_playable_nb(cs, P, 6, FRONT.NORTH, False, True)
    assert nb.battle_card_playable_nb(cs, P, 16, FRONT.SOUTH, False, False)
    assert not nb.battle_card_playable_nb(cs, P, 16, FRONT.SOUTH, True, True)
    assert nb.battle_card_playable_nb(cs, P, 12, FRONT.NORTH, True, True)
    assert not nb.battle_card_playable_nb(cs, P, 12, FRONT.NORTH, True, False)
    assert nb.battle_card_playable_nb(cs, P, 10, FRONT.SOUTH, False, False)
    assert not nb.battle_card_playable_nb(cs, P, 10, FRONT.NORTH, True, True)


def test_battle_card_limit_keys_only_on_battle_cards(tmp_path):
    """The play-limit keys belong to battle cards; a card cannot be both attacker and defender only."""
    from soe_sim._paths import data_dir
    from soe_sim.data._io import Problems
    from soe_sim.data.cards import read_deck

    src = (data_dir() / "cards" / "polish.csv").read_text().splitlines()
    lines = []
    for line in src:
        if line.startswith("7,"):  # Renault Tanks: both limits
            line = line.replace("attacker_only:1", "attacker_only:1;defender_only:1")
        elif line.startswith("6,"):  # Desertions, a historical event: a battle-card limit
            line = line.replace('"enemy_sp_loss_initiative:1', '"enemy_sp_loss_initiative:1;rail_line:1')
        lines.append(line)
    (tmp_path / "cards").mkdir()
    (tmp_path / "cards" / "polish.csv").write_text("\n".join(lines) + "\n")
    problems = Problems()
    read_deck(tmp_path / "cards" / "polish.csv", problems)
    text = "\n".join(str(p) for p in problems)
    assert "cannot be both attacker_only and defender_only" in text
    assert "only a battle card has play limits" in text and "rail_line" in text
