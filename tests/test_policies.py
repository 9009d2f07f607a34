"""Scripted policies (docs/policies.md): each beats ``random`` on the same side, hidden information,
common random numbers, the Python policy interface and input errors.

Win-rate tests compare the side's win rate with the policy (opponent ``random``) against the same
side's win rate when it plays ``random`` too, over the same seeded games, and require the lower end
of a 99% Newcombe (Wilson hybrid) interval for the difference to be above 0.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import pytest

from soe_sim.engine.game import (
    FEATURES,
    PARAMS,
    POLICY_IDS,
    Decision,
    JitPolicy,
    Policy,
    game_setup,
    play_game,
    play_games,
    resolve_policy,
)
from soe_sim.engine.game import policies as pol
from soe_sim.engine.orders import OrderType
from soe_sim.errors import SoeInputError

pytestmark = pytest.mark.game_loop  # plays games: compiled once for the session (conftest.py)

SEED = 20240611
Z99 = 2.5758


def wilson(k: int, n: int, z: float = Z99) -> tuple[float, float]:
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return c - h, c + h


def newcombe_diff(k1: int, n1: int, k2: int, n2: int, z: float = Z99) -> tuple[float, float]:
    """Newcombe's hybrid score interval for p1 - p2 (method 10)."""
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson(k1, n1, z)
    l2, u2 = wilson(k2, n2, z)
    d = p1 - p2
    return (d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2))


@functools.lru_cache(maxsize=None)
def _wins(scenario: str, side: str, policy: str, games: int) -> int:
    kw = {side: policy}
    df = play_games(scenario, games, seed=SEED, **kw)
    assert (df["outcome"] != "aborted").all()
    return int((df["winner"] == side).sum())


def _check_beats_random(scenario, policy, side, games):
    k = _wins(scenario, side, policy, games)
    k0 = _wins(scenario, side, "random", games)
    lo, hi = newcombe_diff(k, games, k0, games)
    msg = f"{scenario} {side} {policy}: {k}/{games} vs random {k0}/{games}, 99% CI of the difference [{lo:.3f}, {hi:.3f}]"
    print(msg)
    assert lo > 0, msg


# --- each scripted policy beats random on the same side ----------------------------------------


@pytest.mark.parametrize("side", ["polish", "soviet"])
@pytest.mark.parametrize("policy", ["aggressive", "defensive", "balanced"])
def test_scripted_beats_random_tutorial(policy, side):
    _check_beats_random("tutorial", policy, side, 400)


@pytest.mark.slow
@pytest.mark.parametrize("side", ["polish", "soviet"])
@pytest.mark.parametrize("policy", ["aggressive", "defensive", "balanced"])
def test_scripted_beats_random_kiev_offensive(policy, side):
    _check_beats_random("kiev-offensive", policy, side, 400)


def test_scripted_games_keep_the_invariants():
    for sc in ("tutorial", "kiev-offensive", "battle-of-warsaw"):
        df = play_games(sc, 6, seed=3, polish="aggressive", soviet="defensive", check_invariants=True)
        assert df["violations"].sum() == 0 and (df["outcome"] != "aborted").all()
        df = play_games(sc, 6, seed=4, polish="balanced", soviet="aggressive", check_invariants=True)
        assert df["violations"].sum() == 0 and (df["outcome"] != "aborted").all()


@pytest.mark.parametrize("scenario", ["kiev-offensive", "campaign-1920"])
def test_scripted_pairs_never_abort(scenario):
    """Every pair of scripted policies plays its games to the end, invariants kept: 150 games per
    pair. Before the fix of reading O8 (a Withdraw applied to the battle's other side), 1–5 % of
    the aggressive v defensive / balanced games here ended ``aborted`` by the battle loop's cap."""
    for polish, soviet in (("aggressive", "defensive"), ("aggressive", "balanced"), ("balanced", "balanced"),
                           ("defensive", "aggressive")):
        df = play_games(scenario, 150, seed=77, polish=polish, soviet=soviet, check_invariants=True)
        assert (df["outcome"] != "aborted").all(), (polish, soviet, df["abort"].value_counts().to_dict())
        assert df["violations"].sum() == 0, (polish, soviet)


def test_batch_matches_single_games_with_params():
    spec = ("balanced", {"attack_threshold": 0.45, "keep_cards": 2})
    rows = play_games("tutorial", 4, seed=9, polish=spec, soviet="defensive", raw=True)
    for i in (0, 3):
        g = play_game("tutorial", (9, i), polish=spec, soviet="defensive")
        assert np.array_equal(g.row, rows[i])


# --- hidden information ------------------------------------------------------------------------


def test_known_areas_use_only_seen_enemy_strength():
    setup = game_setup("kiev-offensive")
    st, orders = setup.state0, setup.orders0
    na = st.control.shape[0]
    out = {}
    for omni in (0.0, 1.0):
        row = pol.DEFAULT_PARAMS[pol.POLICY_BALANCED].copy()
        row[pol.P_OMNISCIENT] = omni
        row[pol.P_UNKNOWN_SP] = 2.5
        arrs = [np.zeros(na) for _ in range(5)]
        pol.known_areas_nb(st, orders, 0, row, *arrs)
        out[omni] = arrs
    own_n, own_sp, en_n, en_sp, unseen = out[0.0]
    on = (st.block_status == pol.STATUS.ON_MAP) & (st.block_side == 1)
    gar = (st.garrison_side == 1).astype(float)
    # at the start nothing of the enemy is seen: every enemy block counts unknown_sp
    assert unseen.sum() == on.sum() and np.allclose(en_sp, 2.5 * en_n + gar)
    true_sp = np.bincount(st.block_area[on], weights=st.block_sp[on], minlength=na) + gar
    assert np.allclose(out[1.0][3], true_sp) and out[1.0][4].sum() == 0
    assert np.array_equal(own_n, out[1.0][0])  # own blocks are always known


def test_omniscient_and_limited_play_differently():
    differ = 0
    for seed in range(4):
        a = play_game("kiev-offensive", seed, polish="balanced")
        b = play_game("kiev-offensive", seed, polish=Policy("balanced", omniscient=True))
        differ += not (a.log.n == b.log.n and np.array_equal(a.log.used(), b.log.used()))
    assert differ >= 2


# --- common random numbers -----------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_changing_the_soviet_policy_keeps_the_chance_stream(seed):
    """The shuffled draw piles (hence the first hands, every replenish and every blind combat draw until
    a reshuffle) come from the chance stream alone; the Polish policy stream is untouched."""
    runs = [play_game("tutorial", seed, polish="balanced", soviet=s) for s in ("random", "aggressive", "defensive")]
    ref = runs[0]
    for r in runs[1:]:
        assert np.array_equal(r.cards.pile, ref.cards.pile)
        a = ref.events[ref.events["kind"] == "cards_drawn"].head(2).to_dict("records")
        b = r.events[r.events["kind"] == "cards_drawn"].head(2).to_dict("records")
        assert a == b
    # the Polish blind combat draws: same cards in the same order, as far as both games drew
    for r in runs[1:]:
        seq = []
        for x in (ref, r):
            ev = x.events
            sel = (ev["kind"] == "combat_card") & (ev["side"] == "polish") & (ev["block"].astype(str) == "5")
            seq.append(list(ev.loc[sel, "value"]))
        pile0 = list(ref.cards.pile[0])
        for s in seq:  # each blind draw is the next card of the same shuffled pile
            idx = [pile0.index(c) for c in s if c in pile0]
            assert idx == sorted(idx)


def test_random_policy_unchanged_by_the_plumbing():
    """``random`` consumes one draw per decision of its own stream, as before the policies: a random
    side's play does not depend on what the other side's stream does, only on the position."""
    a = play_game("tutorial", 5)
    b = play_game("tutorial", 5, polish="random", soviet=Policy("random", omniscient=True))  # another row
    assert np.array_equal(a.log.used(), b.log.used())
    with pytest.raises(SoeInputError, match="random policy takes no parameters"):  # they would change nothing
        play_game("tutorial", 5, soviet=("random", {"attack_threshold": 0.9}))


@pytest.mark.parametrize("params, needle", [
    ({"attack_threshold": float("nan")}, "finite number"), ({"attack_threshold": 2}, "from 0 to 1"),
    ({"keep_cards": 2.7}, "whole number"), ({"keep_cards": -3}, "at least 0"), ({"omniscient": 5}, "from 0 to 1"),
    ({"reserve": float("inf")}, "finite number"), ({"slot": 3}, "unknown policy parameter"),
])
def test_policy_parameters_out_of_range_are_refused(params, needle):
    with pytest.raises(SoeInputError, match=needle):
        resolve_policy(("balanced", params))
    assert resolve_policy(("balanced", {"attack_weight": -3, "keep_cards": 2})).row()[PARAMS.index("keep_cards")] == 2


# --- Python policies -----------------------------------------------------------------------------


def test_python_policy_matches_the_numba_policy():
    for sc, seed in (("tutorial", 7), ("kiev-offensive", 1)):
        a = play_game(sc, seed, polish="balanced", soviet="aggressive")
        b = play_game(sc, seed, polish=JitPolicy("balanced"), soviet="aggressive")
        assert a.log.n == b.log.n and np.array_equal(a.log.used(), b.log.used())


@pytest.mark.parametrize("override", [{"unknown_sp": 0}, {"unknown_sp": 8}, {"omniscient": 1}, {"cubes_weight": 3}])
def test_python_policy_matches_the_numba_policy_with_feature_parameters(override):
    """Audit K3: the parameters that shape the options' features (``unknown_sp``, ``omniscient``,
    ``cubes_weight``) reach the game through JitPolicy too, so it still plays the numba policy's games."""
    for sc, seeds in (("tutorial", range(4)), ("kiev-offensive", range(1))):
        for seed in seeds:
            a = play_game(sc, seed, polish=("balanced", override), soviet="aggressive")
            b = play_game(sc, seed, polish=JitPolicy("balanced", override), soviet="aggressive")
            assert a.log.n == b.log.n and np.array_equal(a.log.used(), b.log.used()), (sc, seed)


class _MoveOutTargets(JitPolicy):
    """balanced, checking each ORDER decision's Move Out rows: a row without a winnable attack
    (``p_win`` 0) names as ``target_vp`` only an undefended enemy-controlled neighbour's VP."""

    def __init__(self):
        super().__init__("balanced")
        self.beside_hopeless = 0  # Move Out rows with p_win 0 beside a defended enemy area worth VP

    def choose(self, decision, options, view):
        if decision == Decision.ORDER:
            st, m = view.state, view.setup.game_map
            enemy = 1 - view.side
            on = st.block_status == 0
            kinds = (int(OrderType.MOVE_OUT), int(OrderType.FORCED_MARCH_OUT))
            rows = options[options["type"].isin(kinds) & (options["p_win"] == 0)]
            for a, target_vp in zip(rows["area"].astype(int), rows["target_vp"]):
                near = m.adj_indices[m.adj_indptr[a]:m.adj_indptr[a + 1]]
                defended = [v for v in near if st.garrison_side[v] == enemy
                            or (on & (st.block_side == enemy) & (st.block_area == v)).any()]
                undefended = [v for v in near if st.control[v] == enemy and v not in defended]
                self.beside_hopeless += any(m.vp[v] > 0 for v in defended)
                if target_vp > 0:
                    assert target_vp in {float(m.vp[v]) for v in undefended}, (m.ids[a], target_vp)
        return super().choose(decision, options, view)


def test_move_out_scores_no_hopeless_attack_as_a_capture():
    """Audit K1: a Move Out whose only enemy neighbour is defended and unbeatable (exact p_win 0) used to
    take that neighbour's VP as an undefended capture's and score positively (docs/policies.md: the
    capture score is for "an undefended enemy area")."""
    policy = _MoveOutTargets()
    for seed in range(3):
        play_game("kiev-offensive", seed, polish=policy, soviet="balanced")
    assert policy.beside_hopeless > 0  # the case arose (the check itself is in choose)


class _CommitChecker(JitPolicy):
    """balanced, checking every ORDER decision: a Move To / Forced March To row's ``own_sp_adjacent``
    counts only own SP next to the target that no attack order of the side placed earlier in the same
    placement step has committed (audit K2, docs/policies.md ORDER)."""

    def __init__(self):
        super().__init__("balanced")
        self.step = None
        self.committed: set[int] = set()
        self.rows = 0
        self.reduced = 0  # rows whose count left out committed SP

    def choose(self, decision, options, view):
        k = super().choose(decision, options, view)
        if decision != Decision.ORDER:
            return k
        st, m = view.state, view.setup.game_map
        if (view.round, view.phase) != self.step:
            self.step, self.committed = (view.round, view.phase), set()
        on = (st.block_status == 0) & (st.block_area >= 0)
        own_sp = np.bincount(st.block_area[on & (st.block_side == view.side)],
                             weights=st.block_sp[on & (st.block_side == view.side)], minlength=len(m.ids))
        enemy_in = np.bincount(st.block_area[on & (st.block_side != view.side)], minlength=len(m.ids)) > 0
        to_kinds = (int(OrderType.MOVE_TO), int(OrderType.FORCED_MARCH_TO))
        out_kinds = (int(OrderType.MOVE_OUT), int(OrderType.FORCED_MARCH_OUT))

        def near(a):
            return [int(v) for v in m.adj_indices[m.adj_indptr[a]:m.adj_indptr[a + 1]] if v != a]

        for t, a, counted in zip(options["type"], options["area"].astype(int), options["own_sp_adjacent"]):
            if int(t) in to_kinds:
                free = sum(own_sp[v] for v in near(a) if v not in self.committed)
                assert counted == free, (m.ids[a], counted, free, sorted(self.committed))
                self.rows += 1
                self.reduced += free < sum(own_sp[v] for v in near(a))
        t, a = int(options["type"].iloc[k]), int(options["area"].iloc[k])
        if t in to_kinds and (enemy_in[a] or st.garrison_side[a] == 1 - view.side):
            self.committed.update(near(a))
        elif t in out_kinds:
            self.committed.add(a)
        return k


def test_placed_attack_orders_commit_their_blocks():
    """Audit K2: two attack orders placed in one step do not both count the same own blocks."""
    policy = _CommitChecker()
    for seed in range(3):
        play_game("kiev-offensive", seed, polish=policy, soviet="balanced")
    assert policy.rows > 0 and policy.reduced > 0  # the case arose (the check itself is in choose)


class _FirstOrderRows(JitPolicy):
    """Keeps the features of the side's first ORDER decision."""

    def __init__(self, params):
        super().__init__("balanced", params)
        self.first = None

    def choose(self, decision, options, view):
        if decision == Decision.ORDER and self.first is None:
            self.first = options.copy()
        return super().choose(decision, options, view)


def test_reinforce_risk_weighs_the_enemy_next_to_the_target():
    """An attack order's ``p_win`` is (1 - reinforce_risk)·p(known defenders) + reinforce_risk·p(with the
    known enemy SP next to the target moved in) (audit K2): linear in the parameter, lower where enemy
    blocks stand next to the target, and unchanged for every other row."""
    rows = {}
    for risk in (0.0, 0.5, 1.0):
        p = _FirstOrderRows({"reinforce_risk": risk})
        play_game("kiev-offensive", 2, polish="balanced", soviet=p)
        rows[risk] = p.first
    assert rows[0.0][["type", "area"]].equals(rows[1.0][["type", "area"]])  # the same decision
    p0, ph, p1 = (rows[r]["p_win"].to_numpy() for r in (0.0, 0.5, 1.0))
    # a Move Out takes the best of its neighbours, which may be another one at another risk: bounds only
    assert (p1 <= ph + 1e-12).all() and (ph <= p0 + 1e-12).all()
    to = rows[0.0]["type"].isin([int(OrderType.MOVE_TO), int(OrderType.FORCED_MARCH_TO)]).to_numpy()
    np.testing.assert_allclose(ph[to], (p0[to] + p1[to]) / 2, atol=1e-12)
    lower = p1 < p0 - 1e-9
    alone = (rows[0.0]["enemy_sp_adjacent"] == 0).to_numpy()
    assert (lower & to & (p0 > 0) & ~alone).any()
    assert not (lower & to & alone).any()
    others = ["own_sp_adjacent", "enemy_sp", "enemy_sp_adjacent"]
    assert rows[0.0][others].equals(rows[1.0][others])


class _FirstMarkedOrderRows(JitPolicy):
    """Keeps the side's first ORDER decision taken with an enemy order marker on the map, and where the
    enemy markers (face down, SoE 7.2) lie."""

    def __init__(self, params):
        super().__init__("balanced", params)
        self.first = None
        self.marked = None

    def choose(self, decision, options, view):
        if decision == Decision.ORDER and self.first is None:
            o = view.orders
            k = int(o.n_orders[0])
            enemy = (o.order_side[:k] == 1 - view.side) & (o.order_status[:k] == 0) & (o.order_area[:k] >= 0)
            if enemy.any():
                self.first = options.copy()
                self.marked = set(int(a) for a in o.order_area[:k][enemy])
        return super().choose(decision, options, view)


def test_marker_risk_weighs_an_enemy_marker_in_the_target_as_a_defend():
    """An attack order's ``p_win`` on an area holding a face-down enemy order marker is (1 - marker_risk)·p +
    marker_risk·p(with a Defend order) (SoE 7.2; audit K2: most hopeless Kiev attacks met a Defend); rows on
    areas without a marker are unchanged."""
    rows = {}
    for risk in (0.0, 1.0):
        found = None
        for seed in range(6):
            p = _FirstMarkedOrderRows({"marker_risk": risk, "reinforce_risk": 0.0})
            play_game("kiev-offensive", seed, polish=p, soviet="balanced")
            if p.first is not None and any(int(a) in p.marked for a in p.first["area"]):
                found = (seed, p.first, p.marked)
                break
        rows[risk] = found
    assert rows[0.0] is not None and rows[0.0][0] == rows[1.0][0]  # the same game and decision
    r0, marked = rows[0.0][1], rows[0.0][2]
    r1 = rows[1.0][1]
    assert r0[["type", "area"]].equals(r1[["type", "area"]])
    to = r0["type"].isin([int(OrderType.MOVE_TO), int(OrderType.FORCED_MARCH_TO)]).to_numpy()
    on_marker = r0["area"].astype(int).isin(marked).to_numpy()
    defended = (r0["enemy_blocks"] > 0).to_numpy()
    p0, p1 = r0["p_win"].to_numpy(), r1["p_win"].to_numpy()
    assert (p1 <= p0 + 1e-12).all()
    np.testing.assert_array_equal(p1[to & ~on_marker], p0[to & ~on_marker])
    assert (p1[to & on_marker & defended & (p0 > 0)] < p0[to & on_marker & defended & (p0 > 0)]).any()


class _Recorder:
    """A Python policy: the first option of every decision except moves/orders (last option)."""

    def __init__(self):
        self.calls = {}

    def choose(self, decision, options: pd.DataFrame, view) -> int:
        assert isinstance(decision, Decision)
        assert list(options.columns) == list(FEATURES[int(decision)])
        assert view.side == 1 and len(options) >= 2
        blocks = view.blocks()
        enemy = blocks[blocks["side"] != view.side]
        assert enemy["sp"].isna().sum() == (~enemy["seen"]).sum()
        self.calls[decision.name] = self.calls.get(decision.name, 0) + 1
        if decision in (Decision.MOVE, Decision.ORDER):
            return view.rand_below(len(options))
        return 0


def test_python_policy_is_called_with_features_and_view():
    rec = _Recorder()
    res = play_game("tutorial", 3, soviet=rec, check_invariants=True)
    assert res.outcome == "finished" and res.violations == 0
    assert rec.calls.get("ORDER", 0) > 0 and rec.calls.get("MOVE", 0) > 0
    assert not pol._PYTHON_POLICIES  # the registry is cleaned up


def test_python_policy_bad_index_raises():
    class Bad:
        def choose(self, decision, options, view):
            return len(options)

    with pytest.raises(Exception, match="returned"):
        play_game("tutorial", 1, polish=Bad())
    assert not pol._PYTHON_POLICIES


def test_python_policy_only_on_the_slow_path():
    with pytest.raises(SoeInputError, match="Python policies"):
        play_games("tutorial", 2, seed=1, polish=JitPolicy())


# --- inputs --------------------------------------------------------------------------------------


def test_unknown_policy_and_param_errors():
    with pytest.raises(SoeInputError, match="did you mean `aggressive`"):
        play_game("tutorial", 1, polish="agressive")
    with pytest.raises(SoeInputError, match="did you mean `attack_threshold`"):
        play_game("tutorial", 1, soviet=("balanced", {"atack_threshold": 0.5}))
    with pytest.raises(SoeInputError, match="must be a finite number"):
        resolve_policy(("balanced", {"keep_cards": "many"}))
    with pytest.raises(SoeInputError, match="unknown policy"):
        play_games("tutorial", 2, seed=1, soviet=Policy("cautious"))
    with pytest.raises(ValueError):
        pol.policy_id(17)


def test_wrong_kinds_of_policy_objects_are_named():
    """A function, a class, parameters that are not a dict and a non-callable ``choose`` each get a
    message saying what a policy is, not "unknown policy" with the object's text."""
    with pytest.raises(SoeInputError, match=r"not a policy \(got 'a function'\); a policy is a name"):
        resolve_policy(lambda d, o, v: 0)
    with pytest.raises(SoeInputError, match=r"a class, not a policy \(got 'JitPolicy'\); pass an instance"):
        resolve_policy(JitPolicy)
    with pytest.raises(SoeInputError, match=r"params must be a dict .*\('balanced', \{'attack_threshold'"):
        resolve_policy(("balanced", 0.5))

    class NotCallable:
        choose = 3

    with pytest.raises(SoeInputError, match=r"not a policy \(got 'NotCallable'\)"):
        play_game("tutorial", 1, polish=NotCallable())


@pytest.mark.parametrize("answer", [1.7, "0", None, True])
def test_python_policy_answers_must_be_integers(answer):
    """The rule of StepGame.apply for a Python policy's answer in play_game: an integer index, so a float
    is not truncated, nor a string parsed, and None is named with the policy and the decision."""

    class Answers:
        def choose(self, decision, options, view):
            return answer

    with pytest.raises(ValueError, match=rf"Answers.choose returned {answer!r:.4} .* expected an integer 0\.\."):
        play_game("tutorial", 1, soviet=Answers())


def test_registry_and_parameter_table():
    assert set(POLICY_IDS) == {"random", "aggressive", "defensive", "balanced"}
    assert pol.DEFAULT_PARAMS.shape == (len(POLICY_IDS), len(PARAMS))
    assert set(pol.PARAM_DOCS) == set(PARAMS)
    p = resolve_policy(("defensive", {"attack_threshold": 0.9}))
    row = p.row()
    assert row[PARAMS.index("attack_threshold")] == 0.9
    assert row[PARAMS.index("hold_weight")] == pol.DEFAULT_PARAMS[pol.POLICY_DEFENSIVE, PARAMS.index("hold_weight")]
    assert resolve_policy(2).name == "defensive"
    for kind in Decision:  # every decision kind has its feature columns (docs/policies.md)
        assert int(kind) in FEATURES


def test_scorer_picks_the_best_option_with_random_ties():
    rng = np.array([5], dtype=np.uint64)
    p = pol.DEFAULT_PARAMS[pol.POLICY_BALANCED].copy()
    p[pol.P_CARD_MIN_GAIN] = 0.0  # the card-value rule of COMBAT_CARD
    feat = np.zeros((3, pol.N_FEAT))
    feat[:, 0] = [1, 2, 3]  # COMBAT_CARD: blind, two hand cards
    feat[:, 1] = [0.2, 3.0, 1.0]  # value
    feat[:, 2] = 0.2  # expected blind draw
    assert pol.choose_option_nb(pol.POLICY_BALANCED, p, int(Decision.COMBAT_CARD), feat, 3, rng, 0) == 1
    feat[0, 0] = 0
    feat[:, 1] = [0.2, 0.3, 0.3]  # hand cards worse than the margin: draw blind
    assert pol.choose_option_nb(pol.POLICY_BALANCED, p, int(Decision.COMBAT_CARD), feat, 3, rng, 0) == 0
    ties = [pol.argmax_tie_nb(np.array([1.0, 0.0, 1.0, 1.0]), 4, rng) for _ in range(300)]
    assert set(ties) == {0, 2, 3}


def _argmax_tie_oracle(scores, n, rng):
    """argmax_tie_nb as the readable rule: the options within 1e-9 of the best, in index order, one
    of them drawn (one draw of ``rng``) only when there are several."""
    best = max(scores[:n])
    tied = [i for i in range(n) if scores[i] >= best - 1e-9]
    if len(tied) == 1:
        return tied[0]
    return tied[int(pol.rand_below_nb(rng, len(tied)))]


def test_argmax_tie_matches_its_oracle_and_draws_the_same_numbers():
    gen = np.random.default_rng(20261127)
    for case in range(3000):
        n = int(gen.integers(1, 200))
        scores = gen.integers(-3, 4, size=n + 3).astype(np.float64) * 0.5  # many exact ties
        if case % 3 == 1:
            scores = gen.normal(size=n + 3)  # almost never a tie
        elif case % 3 == 2:  # near-ties: inside and just outside the 1e-9 band
            scores[gen.integers(0, n)] = scores[:n].max() + gen.choice([5e-10, 2e-9, -5e-10, -2e-9])
        rng_nb = np.array([case + 1], dtype=np.uint64)
        rng_py = rng_nb.copy()
        got = pol.argmax_tie_nb(scores, n, rng_nb)
        assert got == _argmax_tie_oracle(scores, n, rng_py), (case, n)
        assert rng_nb[0] == rng_py[0], case  # the same draws: games stay identical


def test_argmax_tie_nan_scores_keep_the_single_chain_reading():
    """argmax_tie_nb's four running maxima read a NaN as the single running maximum did: a NaN after the
    first score is never the best (``>`` is False), a NaN first score stays the maximum, nothing is within
    1e-9 of it, the tie draw is still made (one draw over no row) and index 0 returned."""
    for n, expected in ((2, 0), (5, 4), (9, 8), (11, 10)):
        scores = np.arange(n, dtype=np.float64)
        scores[n // 2 if n > 2 else 1] = np.nan
        rng = np.array([7], dtype=np.uint64)
        assert pol.argmax_tie_nb(scores, n, rng) == expected, n
        assert rng[0] == 7  # one best: no draw
        scores[0] = np.nan
        assert pol.argmax_tie_nb(scores, n, rng) == 0, n
        after_one_draw = np.array([7], dtype=np.uint64)
        pol.rand_below_nb(after_one_draw, 0)
        assert rng[0] == after_one_draw[0], n


class _CombatCardOracle(JitPolicy):
    """balanced (with ``params``), checking at every COMBAT_CARD and BATTLE_CARD decision the ``p_win`` /
    ``net_sp`` columns against :func:`soe_sim.battle.battle_odds` of the battle the side knows (SoE 7.41:
    blocks are revealed only after the cards are chosen), built here in plain Python from the position."""

    def __init__(self, params=None):
        super().__init__("balanced", params)
        self.checked = 0
        self.checked_battle_cards = 0
        self.rows = []

    def choose(self, decision, options, view):
        if decision in (Decision.COMBAT_CARD, Decision.BATTLE_CARD):
            self._check(decision, options, view)
            self.rows.append(options.copy())
        return super().choose(decision, options, view)

    def _check(self, decision, options, view):
        from soe_sim.battle import Battle, BattleCard, Block, battle_odds
        from soe_sim.engine.cards.nb import DISCARD, DRAW_PILE, IN_PLAY, REMOVED

        st, orders, cards, setup = view.state, view.orders, view.cards, view.setup
        side, enemy = view.side, 1 - view.side
        combat = decision == Decision.COMBAT_CARD
        area = int(options["area"].iloc[0])
        table = np.flatnonzero(cards.location[side] == IN_PLAY)  # an own battle card face down (SoE 7.41.1)

        def card_of(c):
            return BattleCard(**dict(zip(BattleCard.KEYS, (int(v) for v in cards.battle_effect[side, c - 1]))))
        attacker = bool(options["attacker"].iloc[0])
        defender = enemy if attacker else side
        on = (st.block_status == 0) & (st.block_area == area)
        names = ("polish", "soviet")

        def sp(b):  # SoE 7.41.3: the enemy's blocks are revealed after the cards: unknown_sp for unseen ones
            return int(st.block_sp[b]) if st.block_side[b] == side or orders.seen[side, b] else 3

        def block(b):
            return Block(sp(b), int(st.block_arm[b]), forced_march=bool(orders.forced_march[b]),
                         reorganizing=bool(orders.reorganizing[b]))

        att = {}
        for b in np.flatnonzero(on & (st.block_side == 1 - defender)):  # SoE 7.34: grouped by entry link
            att.setdefault(int(st.block_prev_area[b]), []).append(block(b))
        dfd = np.flatnonzero(on & (st.block_side == defender))
        held = st.garrison_side[area] == defender or (st.block_prev_area[dfd] < 0).any()
        moved = [b for b in dfd if st.block_prev_area[b] >= 0]
        first = min((st.block_arrival[b] for b in moved), default=None)
        support = {int(st.block_prev_area[b]) for b in moved if held or st.block_arrival[b] > first}
        gm = setup.game_map
        edges = slice(gm.adj_indptr[area], gm.adj_indptr[area + 1])
        links = dict(zip(gm.adj_indices[edges], gm.adj_fortified[edges]))  # SoE 1.2: fortified links into the area
        fortified = bool(att) and all(links.get(d, False) for d in att)
        k = int(orders.n_orders[0])
        defend = bool(((orders.order_side[:k] == defender) & (orders.order_area[:k] == area)
                       & (orders.order_type[:k] == int(OrderType.DEFEND)) & (orders.order_status[:k] != 2)).any()
                      and (st.block_prev_area[dfd] < 0).any())  # SoE 7.2
        front = setup.game_map.front[area]
        att_side = 1 - defender
        spec = dict(attacker=tuple(tuple(v) for v in att.values()), defender=tuple(block(b) for b in dfd),
                    support_directions=len(support), garrison=bool(st.garrison_side[area] == defender),
                    defend=defend, fortified=fortified, attacker_side=names[att_side],
                    initiative_holder="attacker" if st.initiative_side[front] == att_side else "defender",
                    initiative_level=int(st.initiative_level[front]))
        own_key = "attacker_battle_card" if attacker else "defender_battle_card"

        def battle_with(card):
            try:
                return Battle(**spec, **({own_key: card_of(card)} if card > 0 else {}))
            except SoeInputError:
                return None  # beyond the calculator's limits (e.g. an unseen block estimated above its SP)
        start = setup.cards0
        enemy_deck = {}
        for c in np.flatnonzero(start.location[enemy] != REMOVED):
            v = int(start.combat_modifier[enemy, c])
            enemy_deck[v] = enemy_deck.get(v, 0) + 1
        pile = np.flatnonzero(cards.location[side] == DRAW_PILE)
        if len(pile) == 0:
            pile = np.flatnonzero(cards.location[side] == DISCARD)
        draw = {}
        for c in pile:
            v = int(cards.combat_modifier[side, c])
            draw[v] = draw.get(v, 0) + 1
        draw = draw or {0: 1}
        base = ("p_win_draw", "net_sp_draw") if combat else ("p_win_none", "net_sp_none")
        for i, row in options.iterrows():
            if combat:
                battle = battle_with(int(table[0]) + 1 if len(table) else 0)
                own_deck = draw if i == 0 else {int(row["value"]): 1}
            else:
                battle = battle_with(int(row["card"]))
                own_deck = draw
            if battle is None:
                return
            mt = battle_odds(battle, decks={names[side]: own_deck, names[enemy]: enemy_deck}).metrics
            p = mt["attacker_win"] if attacker else mt["defender_win"]
            net = mt["defender_losses_mean"] - mt["attacker_losses_mean"]
            net = net if attacker else -net
            assert row["p_win"] == pytest.approx(p, abs=1e-9), (view.round, view.phase, i)
            assert row["net_sp"] == pytest.approx(net, abs=1e-9), (view.round, view.phase, i)
            assert row[base[0]] == options["p_win"].iloc[0] and row[base[1]] == options["net_sp"].iloc[0]
        self.checked += 1
        self.checked_battle_cards += 0 if combat else 1


def test_combat_and_battle_card_odds_are_the_exact_odds_of_the_battle_the_side_knows():
    """COMBAT_CARD and BATTLE_CARD ``p_win`` / ``net_sp`` (and row 0's, in every row) equal the exact odds
    calculator's for the battle as the choosing side knows it: the blocks by entry link (SoE 7.34), supporting
    directions, fortification, half strength, seen enemy SP and ``unknown_sp`` for the rest (SoE 7.41.3), the
    garrison, a revealed Defend order (SoE 7.2, 7.3), the initiative, the own battle card (7.41.1: the row's,
    or the one on the table); own combat card fixed (a hand card: its value + 1, SoE 7.41.2) or drawn from the
    own draw pile, the enemy's drawn from its deck."""
    checked = battle_cards = 0
    for seed in range(4):
        pl, so = _CombatCardOracle(), _CombatCardOracle()
        play_game("kiev-offensive", seed, polish=pl, soviet=so)
        checked += pl.checked + so.checked
        battle_cards += pl.checked_battle_cards + so.checked_battle_cards
    assert checked >= 30 and battle_cards >= 3


def test_card_min_gain_plays_a_hand_card_only_for_what_it_changes():
    """``card_min_gain`` > 0: a hand card is played only when its gain in the battle's odds, (p_win - p_win_draw)
    x (1 + area VP / 2) + 0.1 x (net_sp - net_sp_draw), beats the threshold plus the card's value for orders
    and cubes; the best such card is played. At 0 the card-value rule (hand_margin) decides alone."""
    rng = np.array([5], dtype=np.uint64)
    p = pol.DEFAULT_PARAMS[pol.POLICY_BALANCED].copy()
    assert p[pol.P_CARD_MIN_GAIN] > 0  # on by default
    p[pol.P_CARD_MIN_GAIN] = 0.0
    cols = FEATURES[int(Decision.COMBAT_CARD)]
    c = {name: cols.index(name) for name in cols}
    feat = np.zeros((3, pol.N_FEAT))
    feat[:, c["card"]] = [0, 2, 3]  # the draw, two hand cards
    feat[:, c["value"]] = [0.8, 3.0, 2.0]
    feat[:, c["expected_blind"]] = 0.8
    feat[:, c["p_win"]] = [0.50, 0.53, 0.58]
    feat[:, c["p_win_draw"]] = 0.50
    kind = int(Decision.COMBAT_CARD)
    assert pol.choose_option_nb(pol.POLICY_BALANCED, p, kind, feat, 3, rng, 0) == 1  # value rule: the best value
    p[pol.P_CARD_MIN_GAIN] = 0.05
    assert pol.choose_option_nb(pol.POLICY_BALANCED, p, kind, feat, 3, rng, 0) == 2  # the best gain (0.08)
    p[pol.P_CARD_MIN_GAIN] = 0.1
    assert pol.choose_option_nb(pol.POLICY_BALANCED, p, kind, feat, 3, rng, 0) == 0  # no card gains enough
    feat[:, c["area_vp"]] = 2.0  # a key city: the gain doubles (0.16)
    assert pol.choose_option_nb(pol.POLICY_BALANCED, p, kind, feat, 3, rng, 0) == 2


class _CombatCardChoices(JitPolicy):
    """balanced with ``card_min_gain`` 0.05, keeping each COMBAT_CARD decision's rows and the row chosen."""

    def __init__(self):
        super().__init__("balanced", {"card_min_gain": 0.05})
        self.seen = []

    def choose(self, decision, options, view):
        j = super().choose(decision, options, view)
        if decision == Decision.COMBAT_CARD:
            self.seen.append((options.copy(), j))
        return j


def test_card_min_gain_keeps_hand_cards_for_battles_where_they_matter():
    """In games with ``card_min_gain`` on, a hand card is played exactly when one gains more than the threshold
    (plus its card value) in its battle's exact odds, and it is the best one; hand cards the value rule
    (hand_margin) would have spent on battles they hardly change stay in hand."""
    played = kept_by_stakes = 0
    for seed in range(4):
        for side in ("polish", "soviet"):
            p = _CombatCardChoices()
            play_game("kiev-offensive", seed, **{side: p, ("soviet" if side == "polish" else "polish"): "balanced"})
            for r, j in p.seen:
                after = r["after_draw"] > 0
                alt = r["drawn"] if after.iloc[0] else r["expected_blind"]
                keep = 0.01 * (r["orders"] + 0.5 * r["cubes"])
                net = (r["p_win"] - r["p_win_draw"]) * (1 + 0.5 * r["area_vp"]) + 0.1 * (r["net_sp"] - r["net_sp_draw"])
                score = (net - 0.05 - keep).to_numpy()[1:]
                if j > 0:
                    played += 1
                    assert score[j - 1] > 0 and score[j - 1] >= score.max() - 1e-9
                else:
                    assert len(score) == 0 or score.max() <= 1e-9
                    value_rule = (r["value"] - alt - 0.5 - keep).to_numpy()[1:]
                    kept_by_stakes += bool(len(value_rule) and value_rule.max() > 0)
    assert played > 0 and kept_by_stakes > 0
