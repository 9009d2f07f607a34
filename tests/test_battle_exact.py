"""Exact odds vs the plain-Python oracle, and Monte Carlo vs exact, on many random battles."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from soe_sim.battle import Battle, BattleCard, Block, CardChoice, Deck, Withdraw, battle_odds, simulate_battles
from soe_sim.battle.spec import Arm
from tests import naive

blocks = st.builds(
    Block,
    sp=st.integers(1, 4),
    arm=st.sampled_from([Arm.INFANTRY, Arm.CAVALRY]),
    forced_march=st.booleans(),
)
leader = st.just(Block(1, Arm.LEADER))
defender_blocks = st.builds(
    Block, sp=st.integers(1, 4), arm=st.sampled_from([Arm.INFANTRY, Arm.CAVALRY]),
    forced_march=st.booleans(),
)
battle_cards = st.one_of(
    st.none(),
    st.builds(BattleCard, combat_value=st.integers(0, 2), enemy_extra_loss=st.integers(0, 1),
              own_loss_reduction=st.integers(0, 1), negate_flank=st.integers(0, 1),
              cancel_fortification=st.integers(0, 1), cancel_enemy_battle_card=st.integers(0, 1)),
)
decks = st.dictionaries(st.integers(0, 5), st.integers(1, 12), min_size=1, max_size=5).map(Deck.from_mapping)


@st.composite
def battles(draw):
    directions = draw(st.lists(st.lists(st.one_of(blocks, leader), min_size=1, max_size=3), min_size=1, max_size=3))
    defenders = draw(st.lists(defender_blocks, min_size=0, max_size=4))
    garrison = draw(st.booleans()) or not defenders
    if defenders and draw(st.booleans()):
        i = draw(st.integers(0, len(defenders) - 1))
        d = defenders[i]
        defenders[i] = Block(d.sp, d.arm, False, True)
    withdraw = draw(st.sampled_from(list(Withdraw))) if defenders else Withdraw.NONE
    att_deck = draw(decks)
    def_deck = draw(decks)
    att_card = draw(st.one_of(st.just(CardChoice()), st.sampled_from([CardChoice(int(v)) for v in att_deck.values])))
    def_card = draw(st.one_of(st.just(CardChoice()), st.sampled_from([CardChoice(int(v)) for v in def_deck.values])))
    battle = Battle(
        tuple(tuple(g) for g in directions), tuple(defenders),
        support_directions=draw(st.integers(0, min(2, len(defenders)))), garrison=garrison, defend=draw(st.booleans()),
        fortified=draw(st.booleans()), withdraw=withdraw,
        attacker_side=draw(st.sampled_from(["polish", "soviet"])),
        attacker_card=att_card, defender_card=def_card,
        attacker_battle_card=draw(battle_cards), defender_battle_card=draw(battle_cards),
        initiative_holder=draw(st.sampled_from(["attacker", "defender"])),
        initiative_level=draw(st.integers(1, 5)),
    )
    side_decks = {battle.attacker_side: att_deck, battle.defender_side: def_deck}
    return battle, side_decks


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(battles())
def test_exact_matches_oracle(rules, case):
    """The kernel's value-grouped enumeration equals the oracle's card-by-card enumeration."""
    battle, side_decks = case
    result = battle_odds(battle, decks=side_decks)
    att_deck, def_deck = side_decks[battle.attacker_side], side_decks[battle.defender_side]
    oracle = naive.exact_outcomes(battle, att_deck, def_deck, rules)

    joint = {(int(r.attacker_losses), int(r.defender_losses)): r.p for r in result.joint.itertuples()}
    expected: dict = {}
    for o, w in oracle:
        expected[(o.attacker_losses, o.defender_losses)] = expected.get((o.attacker_losses, o.defender_losses), 0) + w
    assert set(joint) == set(expected)
    for key, p in expected.items():
        assert joint[key] == pytest.approx(float(p), abs=1e-12)

    m = result.metrics
    assert m["attacker_win"] == pytest.approx(float(sum(w for o, w in oracle if o.attacker_wins)), abs=1e-12)
    assert m["attacker_great_victory"] == pytest.approx(
        float(sum(w for o, w in oracle if o.great_victory == "attacker")), abs=1e-12)
    assert m["defender_great_victory"] == pytest.approx(
        float(sum(w for o, w in oracle if o.great_victory == "defender")), abs=1e-12)
    assert m["defender_blocks_destroyed_mean"] == pytest.approx(
        float(sum(w * o.defender_destroyed for o, w in oracle)), abs=1e-12)
    assert m["attacker_blocks_destroyed_mean"] == pytest.approx(
        float(sum(w * o.attacker_destroyed for o, w in oracle)), abs=1e-12)
    for name, p in result.initiative_shift.items():
        assert p == pytest.approx(float(sum(w for o, w in oracle if o.initiative_change == name)), abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(battles())
def test_probabilities_sum_to_one_and_losses_bounded(case):
    battle, side_decks = case
    result = battle_odds(battle, decks=side_decks)
    assert result.probabilities.sum() == pytest.approx(1.0, abs=1e-12)
    assert result.joint["p"].sum() == pytest.approx(1.0, abs=1e-12)
    assert sum(result.initiative_shift.values()) == pytest.approx(1.0, abs=1e-12)
    assert result.metrics["attacker_win"] + result.metrics["defender_win"] == pytest.approx(1.0)
    att_sp = sum(b.sp for g in battle.attacker for b in g)
    def_sp = sum(b.sp for b in battle.defender) + (1 if battle.garrison else 0)
    assert result.joint["attacker_losses"].max() <= att_sp
    assert result.joint["defender_losses"].max() <= def_sp
    assert (result.joint["attacker_losses"] >= 0).all() and (result.joint["defender_losses"] >= 0).all()


def test_monte_carlo_matches_exact_chi_square():
    """Monte Carlo joint loss counts vs the exact distribution (chi-square, fixed seed)."""
    battle = Battle.from_spec("4i,3c/2if", "4i,2i", garrison=True, defend=True, attacker_side="soviet")
    n = 200_000
    result = battle_odds(battle, mc=n, seed=20260)
    exact = result.joint.set_index(["attacker_losses", "defender_losses"])["p"]
    mc = result.mc.joint.set_index(["attacker_losses", "defender_losses"])["p"]
    assert set(mc.index) <= set(exact.index)
    observed = np.array([mc.get(k, 0.0) * n for k in exact.index])
    expected = exact.to_numpy() * n
    keep = expected >= 5
    # Pool tiny cells so the chi-square approximation holds.
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    chi2, p_value = stats.chisquare(obs, exp)
    assert p_value > 1e-3, (chi2, p_value)
    for key in ("attacker_win", "attacker_losses_mean", "defender_losses_mean"):
        assert result.mc.low[key] - 1e-9 <= result.metrics[key] <= result.mc.high[key] + 1e-9


@pytest.mark.slow
def test_monte_carlo_matches_exact_many_battles():
    """Slow: 40 random battles x 200k simulations each, every win probability inside a 99.9 % band."""
    rng = np.random.default_rng(7)
    specs = []
    for _ in range(40):
        att = ",".join(f"{rng.integers(1, 5)}{'ic'[rng.integers(0, 2)]}" for _ in range(rng.integers(1, 4)))
        dfd = ",".join(f"{rng.integers(1, 5)}i" for _ in range(rng.integers(1, 4)))
        specs.append(Battle.from_spec(att, dfd, defend=bool(rng.integers(0, 2))))
    n = 200_000
    sims = simulate_battles(specs, n=n, seed=11)
    wins = sims.groupby("battle")["attacker_wins"].mean()
    for i, b in enumerate(specs):
        p = battle_odds(b).metrics["attacker_win"]
        se = np.sqrt(max(p * (1 - p), 1e-12) / n)
        assert abs(wins[i] - p) <= 3.3 * se + 1e-9


def test_simulation_is_identical_at_any_thread_count():
    import numba

    battles_ = [Battle.from_spec("4i,4i/3c", "4i,3i", garrison=True),
                Battle.from_spec("2c", "2i", attacker_side="polish")]
    a = simulate_battles(battles_, n=[70_000, 50_000], seed=123, threads=1)
    b = simulate_battles(battles_, n=[70_000, 50_000], seed=123, threads=numba.config.NUMBA_NUM_THREADS)
    assert a.equals(b)
    c = simulate_battles(battles_, n=[70_000, 50_000], seed=124)
    assert not a.equals(c)


def test_simulation_progress_batches_do_not_change_results():
    battle = Battle.from_spec("4i", "3i")
    a = simulate_battles(battle, n=300_000, seed=5, progress=False)
    b = simulate_battles(battle, n=300_000, seed=5, progress=True)
    assert a.equals(b)


def test_simulated_losses_never_exceed_sp_present():
    battle = Battle.from_spec("1i/1c", "1i", garrison=True)
    sims = simulate_battles(battle, n=50_000, seed=1)
    assert sims["attacker_losses"].max() <= 2
    assert sims["defender_losses"].max() <= 2


def test_hand_card_is_fixed_value_plus_bonus():
    battle = Battle.from_spec("4i", "4i", attacker_card="hand:3", defender_card="hand:0")
    result = battle_odds(battle)
    assert len(result.probabilities) == 1
    cv = result.combat_values().set_index("side")["combat_value"]
    assert cv["attacker"] == 4 + 3 + 1 and cv["defender"] == 4 + 0 + 1


def test_card_choice_table_is_consistent_and_monotone():
    """Every cell equals a direct exact query, and a stronger hand card never hurts its player."""
    from soe_sim.battle.odds import card_choice_table

    battle = Battle.from_spec("4i,3c/2i", "4i,2i", defend=True)
    table = card_choice_table(battle)
    assert table.loc["draw", "draw"] == pytest.approx(battle_odds(battle).metrics["attacker_win"])
    hands = [c for c in table.index if c.startswith("hand:")]
    values = table.loc[hands].to_numpy()
    assert (np.diff(values, axis=0) >= -1e-12).all()  # attacker: higher card, higher P(win)
    def_hands = [c for c in table.columns if c.startswith("hand:")]
    assert (np.diff(table[def_hands].to_numpy(), axis=1) <= 1e-12).all()


def test_card_table_cli(capsys):
    import json

    from soe_sim.cli import main

    assert main(["odds", "--attacker", "4i", "--defender", "3i", "--card-table", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["card_table"]["draw"]["draw"] == pytest.approx(doc["attacker_win"])
    assert main(["odds", "--attacker", "4i", "--defender", "3i", "--card-table"]) == 0
    assert "combat-card choice" in capsys.readouterr().out
