"""Step-by-step play (soe_sim.engine.game.step, docs/policies.md "Step-by-step play"): games played
decision by decision from Python equal the numba loop's games, errors are clear, nothing hangs and
no background thread survives a closed game."""
from __future__ import annotations

import gc
import threading
import time

import numpy as np
import pandas as pd
import pytest

from soe_sim.engine.game import Decision, JitPolicy, play_game
from soe_sim.engine.game.step import StepGame, StepTimeoutError
from soe_sim.errors import SoeInputError

pytestmark = pytest.mark.game_loop  # plays games: compiled once for the session (conftest.py)

SCEN = "tutorial"


def _step_threads():
    return [t for t in threading.enumerate() if t.name.startswith("soe-step-") and t.is_alive()]


def _wait_no_threads(limit=15.0):
    t0 = time.monotonic()
    while _step_threads() and time.monotonic() - t0 < limit:
        time.sleep(0.05)
    return _step_threads()


@pytest.fixture(autouse=True)
def _no_leftover_threads():
    yield
    gc.collect()
    assert not _wait_no_threads(), "a StepGame background thread is still running"


class _Zero:
    def choose(self, decision, options, view):
        return 0


def test_option_zero_to_the_end_equals_the_python_policy_path():
    with StepGame(SCEN, 3) as g:
        assert g.decision.side == "polish" and g.current_player == 0
        n = 0
        prev = 0
        while not g.is_terminal:
            d = g.decision
            assert isinstance(d.kind, Decision) and d.n_options >= 2 and d.index == n
            opts = g.legal_options
            assert len(opts) == d.n_options and list(opts.index) == list(range(d.n_options))
            assert opts["description"].map(lambda s: isinstance(s, str) and len(s) > 0).all()
            ev = g.events
            assert ev is not None and len(ev) >= prev  # the log so far only grows
            prev = len(ev)
            g.apply(0)
            n += 1
        res = g.result
        assert res is not None and res.outcome in ("finished", "immediate_victory")
        assert g.decision is None and g.history == [0] * n
        assert g.events is res.events
    ref = play_game(SCEN, 3, polish=_Zero())
    pd.testing.assert_frame_equal(res.events, ref.events)
    assert res.vp == ref.vp and res.steps == ref.steps


@pytest.mark.parametrize("seed", [0, 1, 2, 5])
def test_random_choices_reproduce_the_random_policy(seed):
    ref = play_game(SCEN, seed, polish="random", soviet="random")
    # both sides under step control, answered by hand from each side's own policy stream
    with StepGame(SCEN, seed, polish="step", soviet="step") as g:
        sides = set()
        while not g.is_terminal:
            sides.add(g.decision.side)
            g.apply(g.state_view.rand_below(len(g.legal_options)))
        assert sides == {"polish", "soviet"}
        pd.testing.assert_frame_equal(g.result.events, ref.events)
    # random_rollout from the middle of the game: the same game again
    with StepGame(SCEN, seed, soviet="random") as g:
        for _ in range(3):
            g.apply(g.state_view.rand_below(g.decision.n_options))
        res = g.random_rollout()
    pd.testing.assert_frame_equal(res.events, ref.events)
    assert res.row.tolist() == ref.row.tolist()


@pytest.mark.parametrize("seed", [4, 11])
def test_balanced_choices_reproduce_the_numba_balanced_policy(seed):
    ref = play_game(SCEN, seed, polish="balanced", soviet="defensive")
    jp = JitPolicy("balanced")
    with StepGame(SCEN, seed, polish="step", soviet="defensive") as g:
        while not g.is_terminal:  # by hand: features + the live view (its rng = the side's stream)
            g.apply(jp.choose(g.decision.kind, g.features, g.state_view.raw))
        pd.testing.assert_frame_equal(g.result.events, ref.events)
    with StepGame(SCEN, seed, polish="step", soviet="defensive") as g:
        res = g.play(JitPolicy("balanced"))
    pd.testing.assert_frame_equal(res.events, ref.events)


def test_bad_index_is_a_clear_input_error_and_the_game_goes_on():
    with StepGame(SCEN, 3) as g:
        d = g.decision
        n = d.n_options
        for bad in (n, -1, 10 ** 6):
            with pytest.raises(SoeInputError, match=rf"no such option.*choose 0\.\.{n - 1}"):
                g.apply(bad)
        for bad in ("1", 1.0, None, True):
            with pytest.raises(SoeInputError, match="must be an integer"):
                g.apply(bad)
        assert g.decision == d  # nothing was applied
        g.apply(np.int64(n - 1))
        assert g.history == [n - 1]
        g.random_rollout()
        assert g.is_terminal
        with pytest.raises(SoeInputError, match="finished"):
            g.apply(0)
        with pytest.raises(SoeInputError, match="finished"):
            g.legal_options


def test_no_step_side_and_bad_policy_are_input_errors():
    with pytest.raises(SoeInputError, match="no side under step control"):
        StepGame(SCEN, 1, polish="random", soviet="random")
    with pytest.raises(SoeInputError, match="balanced"):
        StepGame(SCEN, 1, soviet="balansed")


def test_closing_mid_game_stops_the_thread():
    g = StepGame(SCEN, 7, polish="step", soviet="step")
    for _ in range(4):
        g.apply(0)
    thread = g._thread
    assert thread.is_alive()
    g.close()
    assert not thread.is_alive() and not _step_threads()
    assert g.is_terminal and g.is_closed and g.result is None
    assert g.events is not None and len(g.events) > 0  # the log up to the close
    with pytest.raises(SoeInputError, match="closed"):
        g.apply(0)
    g.close()  # idempotent
    # the context manager and an abandoned game
    with StepGame(SCEN, 8) as g2:
        g2.apply(0)
        t2 = g2._thread
    assert not t2.is_alive()
    g3 = StepGame(SCEN, 9)
    t3 = g3._thread
    del g3
    gc.collect()
    t3.join(10)
    assert not t3.is_alive()


def test_state_view_hides_unseen_enemy_sp():
    hidden = revealed = 0
    with StepGame(SCEN, 2, polish="step", soviet="step") as g:
        while not g.is_terminal:
            v = g.state_view
            st = v.raw.state
            assert v.side_index == g.current_player and v.round == g.decision.round
            b = v.blocks
            own = b[b["side"] == v.side_index]
            enemy = b[b["side"] != v.side_index]
            assert own["sp"].notna().all() and own["seen"].all()
            assert enemy.loc[~enemy["seen"], "sp"].isna().all()  # unseen enemy SP is not shown
            hidden += int((~enemy["seen"]).sum())
            ids = list(g.setup.block_ids)
            for blk, sp in enemy.loc[enemy["seen"], ["block", "sp"]].itertuples(index=False):
                assert sp == st.block_sp[ids.index(blk)]
                revealed += 1
            g.apply(v.rand_below(g.decision.n_options))
    assert hidden > 0
    with StepGame(SCEN, 2, omniscient=True) as g:
        b = g.state_view.blocks
        assert b["sp"].notna().all() and b["seen"].all()


def test_background_error_is_raised_in_the_foreground():
    class Boom:
        def choose(self, decision, options, view):
            raise KeyError("boom in the Soviet policy")

    with pytest.raises(KeyError, match="boom"):
        with StepGame(SCEN, 3, soviet=Boom()) as g:
            while not g.is_terminal:
                g.apply(0)


def test_a_stuck_game_times_out_instead_of_hanging():
    class Slow:
        def choose(self, decision, options, view):
            time.sleep(0.6)
            return 0

    with pytest.raises(StepTimeoutError, match="did not reach its next decision"):
        g = StepGame(SCEN, 3, soviet=Slow(), timeout=0.2)
        while not g.is_terminal:
            g.apply(0)
    # the background game stops at its next step decision (or ends): checked by the fixture


def test_leader_options_are_described_in_words():
    """SoE 9.0: the LEADER decision's options name the leader, the order and its area (or a pass)."""
    seen = []
    with StepGame("battle-of-warsaw", 4, polish="step", soviet="random") as g:
        for _ in range(400):
            if g.is_terminal:
                break
            if g.decision.kind == Decision.LEADER:
                opts = g.legal_options
                desc = opts["description"].tolist()
                assert desc[0] == "give no leader order (pass)"
                assert all(d.startswith("pl-") for d in desc[1:])
                seen += desc[1:]
            g.apply(0)
    assert any(d.startswith("pl-sikorski: recon ") and d.endswith(" at once") for d in seen)
    assert any(d.startswith("pl-pilsudski: ") for d in seen)
    assert any(d.startswith("pl-haller: free defend in ") for d in seen)


def test_descriptions_name_the_front_the_phase_and_count_in_words():
    """Two-front scenarios ask for a card and for who goes first once per front (SoE 10.0, 10.1): the
    options say which front; the Reinforcement Phase (SoE 8.0) is named, not shown as its phase number; one
    order, cube or block is not plural; order types are spelled as in the playtest report."""
    import re

    from soe_sim.engine.game.step import StepDecision
    from soe_sim.engine.state import PHASE_REINFORCEMENT

    fronts, phases, texts = [], set(), []
    with StepGame(SCEN, 3) as g:
        for _ in range(600):
            if g.is_terminal:
                break
            desc = g.legal_options["description"].tolist()
            texts += desc
            phases.add(str(g.decision).split(": ")[0].split(" ", 3)[-1])
            if g.decision.kind == Decision.CARD_PLAY and len(fronts) < 2:
                fronts.append(desc[0])
            g.apply(0)
    assert fronts == ["pass (play no card) (north front)", "pass (play no card) (south front)"]
    assert phases >= {"phase 1", "phase 2"}
    pending = StepDecision(Decision.GARRISON, "garrison", "polish", 0, 1, PHASE_REINFORCEMENT, 2, 40)
    assert str(pending) == "#40 round 1 reinforcement phase: polish garrison (2 options)"
    assert not [s for s in texts if re.search(r"\b1 (orders|cubes|reinforcement cubes|blocks)\b", s)]
    assert any(re.match(r"(Move To|Recon|Defend|Forced March To|Move Out) \S", s) for s in texts)
    assert not any(slug in s for s in texts for slug in ("move_to", "move_out", "forced_march", "rail_transport"))


@pytest.mark.parametrize("seed", [0, 3])
def test_card_play_better_in_hand_counts_the_stronger_hand_cards(seed):
    """CARD_PLAY column ``better_in_hand``: the other hand cards with a larger combat modifier, or an equal one and
    a lower id — one count per card, the same on each of its rows (its uses share it: session 33 computes it once
    per card)."""
    checked = 0
    with StepGame("kiev-offensive", seed, polish="step", soviet="step") as g:
        while not g.is_terminal and checked < 60:
            d = g.decision
            if d.kind == Decision.CARD_PLAY:
                feats = g.features
                hand = g.state_view.hand
                mods = dict(zip(hand["card"].astype(int), hand["combat_modifier"].astype(int)))
                for _, row in feats.iterrows():
                    c = int(row["card"])
                    if c <= 0:
                        continue
                    want = sum(1 for k, w in mods.items() if k != c and (w > mods[c] or (w == mods[c] and k < c)))
                    assert row["better_in_hand"] == want, (c, mods)
                    checked += 1
            g.apply(g.state_view.rand_below(d.n_options))
    assert checked >= 20
