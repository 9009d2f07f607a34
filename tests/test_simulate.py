"""soe_sim.simulate: per-game rows, replayability, thread independence, adaptive mode, CLI."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from soe_sim.engine.game.nb import S_SP_TRACK_ERRORS
from soe_sim.errors import SoeInputError
from soe_sim.sim import (
    GAME_COLUMNS,
    Simulation,
    play_chunk,
    simulate,
    summarize,
)

pytestmark = pytest.mark.game_loop  # plays games: compiled once for the session (conftest.py)

SC = "tutorial"


@pytest.fixture(scope="module")
def sim():
    return simulate(SC, games=60, seed=11, threads=2, trajectories=True, battles=True)


def test_columns_and_rows(sim):
    df = sim.games
    assert isinstance(sim, Simulation)
    assert len(df) == 60
    assert list(df.columns[: len(GAME_COLUMNS)]) == list(GAME_COLUMNS)
    assert [c for c in df.columns if c.startswith("held_")] == ["held_warsaw", "held_minsk", "held_mazyr",
                                                               "held_kiev"]
    assert (df["seed"] == 11).all() and df["game"].tolist() == list(range(60))
    assert set(df["scenario"]) == {SC} and set(df["polish"]) == {"random"} and set(df["soviet"]) == {"random"}
    assert set(df["outcome"]) <= {"finished", "immediate_victory", "aborted"}
    assert set(df["winner"]) <= {"polish", "soviet", ""}
    assert ((df["winner"] == "polish") == (df["vp"] > 0)).all()  # tutorial: finished games decide on VP
    for s in ("polish", "soviet"):
        parts = df[f"sp_lost_battle_{s}"] + df[f"sp_lost_supply_{s}"] + df[f"sp_lost_other_{s}"]
        assert (df[f"sp_lost_{s}"] == parts).all()
        assert (df[f"sp_lost_{s}"] >= 0).all()
    assert (df["battles_won_polish"] + df["battles_won_soviet"] <= df["battles"]).all()
    assert (df["vp_start"] + df[["vp_control", "vp_battle", "vp_supply", "vp_objectives", "vp_other"]].sum(axis=1)
            == df["vp"]).all()
    assert df["battles"].sum() > 0
    assert df.attrs["soe_sim"]["games"] == 60


def test_rows_replay_with_play_game(sim):
    from soe_sim.engine.game import play_game

    df, bats, traj = sim.games, sim.battles, sim.trajectories
    for g in (0, 7, 33):
        r = play_game(SC, seed=(11, g))
        row = df.iloc[g]
        ev = r.events
        assert row["winner"] == (r.winner or "") and row["vp"] == r.vp and row["outcome"] == r.outcome
        assert row["rounds"] == r.rounds and row["steps"] == r.steps and row["events"] == len(ev)
        b = ev[ev["kind"] == "battle"]
        assert row["battles"] == len(b)
        mine = bats[bats["game"] == g]
        assert mine["area"].tolist() == b["area"].tolist()
        assert mine["attacker"].tolist() == b["side"].tolist()
        removed = ev[(ev["kind"] == "block_removed") & ev["value"].isin([3, 4])]
        for s in ("polish", "soviet"):
            assert row[f"eliminated_{s}"] == (removed["side"] == s).sum()
            assert row[f"held_mazyr"] in ("polish", "soviet", "")
        vps = ev[ev["kind"] == "vp"]
        t = traj[traj["game"] == g]
        assert len(t) == (ev["kind"] == "phase_start").sum()
        assert t["vp"].iloc[-1] == r.vp == row["vp_start"] + vps["value"].sum()


def test_thread_count_and_batching_do_not_change_results(sim):
    one = simulate(SC, games=60, seed=11, threads=1, trajectories=True, battles=True, batch_size=7)
    pd.testing.assert_frame_equal(one.games, sim.games)
    pd.testing.assert_frame_equal(one.trajectories, sim.trajectories)
    pd.testing.assert_frame_equal(one.battles, sim.battles)
    other = simulate(SC, games=20, seed=12, threads=1)
    assert not other["vp"].equals(sim.games["vp"].iloc[:20].reset_index(drop=True))


def test_batches_share_their_workers_and_still_play_the_same_games(monkeypatch):
    """``simulate`` keeps one set of worker threads, input copies and per-thread work (scratch,
    event log, the scripted policies' win-probability memo) for all its batches
    (``ChunkWorkers``): the work is made once per thread, not once per batch, and a memo filled in an
    earlier batch gives the games of a later batch the very values they would compute afresh."""
    import soe_sim.engine.game.work as work

    made = []
    real = work.batch_work
    monkeypatch.setattr(work, "batch_work", lambda *a, **k: made.append(1) or real(*a, **k))
    kw = dict(polish="balanced", soviet="aggressive", seed=5)
    small_batches = simulate(SC, games=36, threads=1, batch_size=4, **kw)
    assert len(made) == 1  # nine batches, one thread: one work
    made.clear()
    two_threads = simulate(SC, games=36, threads=2, batch_size=12, **kw)
    assert 1 <= len(made) <= 2
    one_batch = play_chunk(SC, seed=5, games=36, polish="balanced", soviet="aggressive")[0]
    pd.testing.assert_frame_equal(small_batches, two_threads)
    pd.testing.assert_frame_equal(small_batches.reset_index(drop=True), one_batch.reset_index(drop=True),
                                  check_names=False)


def test_chunk_workers_keep_their_work_across_play_chunk_calls(monkeypatch):
    """``chunk_workers`` (what the designer tools hold per arm): play_chunk calls that share it make
    the per-thread work once, and their chunks are the games of one call."""
    import soe_sim.engine.game.work as work
    from soe_sim.sim import chunk_workers

    made = []
    real = work.batch_work
    monkeypatch.setattr(work, "batch_work", lambda *a, **k: made.append(1) or real(*a, **k))
    with chunk_workers(SC, "balanced", "aggressive", threads=1) as w:
        parts = [play_chunk(SC, "balanced", "aggressive", seed=5, start=s, games=6, workers=w)[0] for s in (0, 6, 12)]
    assert len(made) == 1
    whole = play_chunk(SC, "balanced", "aggressive", seed=5, games=18)[0]
    pd.testing.assert_frame_equal(pd.concat(parts, ignore_index=True), whole.reset_index(drop=True))


def test_plain_frame_and_battle_overflow_replay(sim):
    df = simulate(SC, games=60, seed=11, threads=2)
    assert isinstance(df, pd.DataFrame)
    pd.testing.assert_frame_equal(df, sim.games)
    # a 1-battle buffer: games with more battles are replayed with a bigger one, same rows
    g, _, b = play_chunk(SC, seed=11, games=60, battles=True, battle_cap=1, threads=2)
    pd.testing.assert_frame_equal(b, sim.battles)


@pytest.mark.parametrize("scenario", ["tutorial", "battle-of-warsaw"])
def test_sp_replay_matches_final_position(scenario):
    g, _, _, raw = play_chunk(scenario, seed=5, games=12, threads=2, _check=True)
    assert raw.stats[:, S_SP_TRACK_ERRORS].sum() == 0
    assert (g["sp_end_polish"] > 0).all() or scenario == "tutorial"


def test_adaptive_ci_width():
    target = 0.25
    a = simulate(SC, seed=3, ci_width=target, batch_size=16, threads=2)
    meta = a.attrs["soe_sim"]
    assert meta["ci_reached"] and meta["ci_width"] < target
    assert len(a) % 16 == 0
    # the batch before the last was not narrow enough
    prev = summarize(a.iloc[: len(a) - 16])
    assert prev["ci_width"] >= target
    # the same games as a fixed run, at any thread count
    fixed = simulate(SC, seed=3, games=len(a), threads=1)
    pd.testing.assert_frame_equal(a, fixed)
    capped = simulate(SC, seed=3, ci_width=0.001, games=32, batch_size=16, threads=1)
    assert len(capped) == 32 and not capped.attrs["soe_sim"]["ci_reached"]


def test_summary(sim):
    s = summarize(sim.games, 2.0)
    assert s["games"] == 60
    assert s["polish_win"] + s["soviet_win"] + s["draw"] + s["aborted"] == pytest.approx(1)
    lo, hi = s["polish_win_ci"]
    assert lo <= s["polish_win"] <= hi
    assert s["vp_mean"] == pytest.approx(sim.games["vp"].mean())
    assert s["games_per_second"] == pytest.approx(30)


def test_input_errors():
    with pytest.raises(SoeInputError, match="^polish: unknown policy .*'cautious'.*known policies: .*random"):
        simulate(SC, polish="cautious", games=2)
    with pytest.raises(SoeInputError, match="did you mean `attack_threshold`"):
        simulate(SC, polish=("balanced", {"atack_threshold": 0.5}), games=2)
    with pytest.raises(SoeInputError, match="did you mean `random`"):
        simulate(SC, soviet="randm", games=2)
    with pytest.raises(SoeInputError, match="tutorial"):
        simulate("tutorail", games=2)
    with pytest.raises(SoeInputError, match="seed"):
        simulate(SC, games=2, seed=-1)
    with pytest.raises(SoeInputError, match="^ci_width: "):
        simulate(SC, ci_width=2)
    with pytest.raises(SoeInputError, match="did you mean `warsaw`"):
        simulate(SC, games=2, key_cities=["warsow"])


def test_key_cities_and_zero_games():
    df = simulate(SC, games=3, seed=1, key_cities=["mazyr", "gomel"], threads=1)
    assert [c for c in df.columns if c.startswith("held_")] == ["held_mazyr", "held_gomel"]
    empty = simulate(SC, games=0, seed=1)
    assert len(empty) == 0 and list(empty.columns) == list(simulate(SC, games=1, seed=1).columns)


def test_cli_simulate(tmp_path, capsys):
    from soe_sim.cli import main

    out = tmp_path / "results.parquet"
    rc = main(["simulate", "--scenario", SC, "--polish", "random", "--soviet", "random", "--games", "40",
               "--seed", "11", "--threads", "2", "--out", str(out), "--format", "json", "--no-progress"])
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    for k in ("games", "polish_win", "soviet_win", "draw", "vp_mean", "games_per_second", "load_seconds"):
        assert k in data
    assert data["games"] == 40
    # audit J F5: the warm-up game (the kernel's cache load) is timed apart from the 40 games
    assert data["load_seconds"] > 0 and data["games_per_second"] == pytest.approx(40 / data["seconds"])
    df = pd.read_parquet(out)
    ref = simulate(SC, games=40, seed=11, threads=1)
    pd.testing.assert_frame_equal(df, ref, check_dtype=False)
    assert data["polish_win"] == pytest.approx((ref["winner"] == "polish").mean())

    rc = main(["simulate", "--scenario", SC, "--games", "20", "--seed", "1", "--no-progress",
               "--battles", str(tmp_path / "b.csv"), "--trajectories", str(tmp_path / "t.parquet")])
    text = capsys.readouterr().out
    assert rc == 0 and "Polish win" in text and "games/s" in text
    assert len(pd.read_parquet(tmp_path / "t.parquet")) >= 20
    assert set(pd.read_csv(tmp_path / "b.csv")["game"]) <= set(range(20))

    rc = main(["simulate", "--scenario", SC, "--polish", "cautious", "--games", "2"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "unknown policy" in err and "'cautious'" in err

    rc = main(["simulate", "--scenario", SC, "--ci-width", "0.3", "--batch", "16", "--seed", "3", "--no-progress",
               "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["ci_reached"] and data["ci_width"] < 0.3 and data["games"] % 16 == 0


def test_policy_names_and_parameters_from_the_engine_registry():
    from soe_sim.engine.game import play_game
    from soe_sim.engine.game.policies import POLICY_IDS

    names = [n for n in POLICY_IDS if n != "random"]
    if not names:
        pytest.skip("only the random policy exists")
    name = "balanced" if "balanced" in POLICY_IDS else names[0]
    spec = (name, {"attack_threshold": 0.7}) if name == "balanced" else name
    df = simulate(SC, spec, "random", games=6, seed=2, threads=2)
    assert set(df["polish"]) == {name} and set(df["soviet"]) == {"random"}
    if name == "balanced":
        assert set(df["polish_params"]) == {'{"attack_threshold": 0.7}'}
    assert set(df["soviet_params"]) == {""}
    r = play_game(SC, seed=(2, 4), polish=spec)
    assert (r.winner or "") == df["winner"][4] and r.vp == df["vp"][4] and r.steps == df["steps"][4]


def test_leader_and_battle_sub_cause_columns_match_event_logs():
    """The SoE 9.0 columns (leaders killed / captured, leader orders), the encircled blocks and the VP
    of battles by sub-cause, against the event logs of the same games (G19)."""
    from soe_sim.data.enums import ARM
    from soe_sim.engine.game import CAUSE, game_setup, play_game
    from soe_sim.engine.state import STATUS

    sc, n = "battle-of-warsaw", 6
    df = simulate(sc, games=n, seed=21, threads=1)
    setup = game_setup(sc)
    leaders = set(setup.block_ids[setup.state0.block_arm == ARM.LEADER])
    sub = {"vp_great_victory": CAUSE.GREAT_VICTORY, "vp_encirclement": CAUSE.ENCIRCLEMENT,
           "vp_leader_killed": CAUSE.LEADER_KILLED, "vp_leader_captured": CAUSE.LEADER_CAPTURED}
    for g in range(n):
        row = df.iloc[g]
        ev = play_game(sc, seed=(21, g)).events
        vp = ev[ev["kind"] == "vp"]
        for col, cause in sub.items():
            assert row[col] == vp.loc[vp["value2"] == int(cause), "value"].sum(), col
        battle = vp["value2"].isin([int(CAUSE.BATTLE), *(int(c) for c in sub.values())])
        assert row["vp_battle"] == vp.loc[battle, "value"].sum() == sum(row[c] for c in sub)
        assert (row["vp_start"] + row[["vp_control", "vp_battle", "vp_supply", "vp_objectives", "vp_other"]].sum()
                == row["vp"])
        ll = ev[ev["kind"] == "leader_lost"]
        enc = ev[(ev["kind"] == "block_removed") & (ev["value"] == int(STATUS.ELIMINATED_PERMANENT))
                 & (ev["value2"] == int(CAUSE.BATTLE)) & ~ev["block"].isin(leaders)]
        lo = ev[ev["kind"] == "leader_order"]
        for s in ("polish", "soviet"):
            assert row[f"leaders_killed_{s}"] == ((ll["side"] == s) & (ll["value"] == 1)).sum()
            assert row[f"leaders_captured_{s}"] == ((ll["side"] == s) & (ll["value"] == 2)).sum()
            assert row[f"leaders_killed_{s}"] + row[f"leaders_captured_{s}"] <= row[f"leaders_lost_{s}"]
            assert row[f"encircled_{s}"] == (enc["side"] == s).sum()
            assert row[f"leader_orders_{s}"] == (lo["side"] == s).sum()
    assert df["leader_orders_polish"].sum() > 0 and df["leader_orders_soviet"].sum() > 0


def test_missing_columns_no_longer_list_the_leader_and_vp_breakdowns():
    from soe_sim.sim import MISSING_COLUMNS

    text = " ".join(MISSING_COLUMNS).lower()
    assert "leader" not in text and "encircle" not in text and "great victory" not in text
    for c in ("leaders_killed_polish", "leaders_captured_soviet", "encircled_polish", "vp_great_victory",
              "vp_encirclement", "vp_leader_killed", "vp_leader_captured", "leader_orders_soviet"):
        assert c in GAME_COLUMNS
