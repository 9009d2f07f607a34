"""soe-sim sweep: config validation, dask LocalCluster runs, atomic chunks, resume after interruption."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from soe_sim.errors import SoeInputError
from soe_sim.sim import sweep as sw

pytestmark = pytest.mark.game_loop  # plays games: compiled once for the session (conftest.py)

CONFIG = """\
scenarios = ["tutorial"]
games_per_chunk = 6
chunks = 4
seed = 7
trajectories = true

[[pairs]]
polish = "random"
soviet = "random"

[[overlays]]
name = "base"

[[overlays]]
name = "gv3"
[overlays.rules]
combat.great_victory_losses = 3
"""


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture()
def config(tmp_path):
    p = tmp_path / "sweep.toml"
    p.write_text(CONFIG)
    return p


@pytest.fixture(scope="module")
def reference(client, tmp_path_factory):
    d = tmp_path_factory.mktemp("ref")
    p = d / "sweep.toml"
    p.write_text(CONFIG)
    man = sw.run_sweep(p, d / "out", client=client)
    return d / "out", man


def _read_all(out):
    return sw.read_sweep(out), sw.read_sweep(out, "trajectories")


def test_config_errors(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('scenarios = ["tutorial"]\ngames_per_chunk = 200\nchunks = 8\nseed = 7\nchunk = 3\n'
                   '[[pairs]]\npolish = "cautious"\nsoviet = "bold"\n'
                   '[[pairs]]\npolish = "random"\nsoviet = "randm"\nbeta = 1\n'
                   '[[overlays]]\nname = "v"\n[overlays.rules]\ncombat.great_victory_loses = 3\n')
    with pytest.raises(SoeInputError) as e:
        sw.load_config(bad)
    msgs = [str(p) for p in e.value.problems]
    text = "\n".join(msgs)
    assert all(m.startswith(str(bad)) for m in msgs)
    assert "field 'chunk': unknown key (got 3); did you mean `chunks`?" in text
    assert "pairs[0]: field 'polish': unknown policy (got 'cautious'); known policies: " in text
    assert "pairs[0]: field 'soviet': unknown policy (got 'bold')" in text
    assert "pairs[1]: field 'soviet': unknown policy (got 'randm'); did you mean `random`?" in text
    assert "pairs[1]: field 'beta': unknown key" in text
    assert "field 'combat.great_victory_loses': unknown rule key (got 3); did you mean `great_victory_losses`?" in text
    with pytest.raises(SoeInputError, match="missing required key"):
        sw.load_config({"scenarios": ["tutorial"], "chunks": 1, "seed": 1, "pairs": [{"polish": "random",
                                                                                       "soviet": "random"}]})
    with pytest.raises(SoeInputError, match="did you mean `tutorial`"):
        sw.load_config({"scenarios": ["tutorail"], "games_per_chunk": 1, "chunks": 1, "seed": 1,
                        "pairs": [{"polish": "random", "soviet": "random"}]})
    with pytest.raises(SoeInputError, match="sweep config not found"):
        sw.load_config(tmp_path / "nope.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text('scenarios = ["tutorial"]\nchunks = \n')
    with pytest.raises(SoeInputError, match=r"broken\.toml: line 2: TOML syntax error: ") as e:
        sw.load_config(broken)
    assert "(got" not in str(e.value)


def test_plan_and_seeds(config):
    cfg = sw.load_config(config)
    tasks = sw.plan(cfg)
    assert len(tasks) == 1 * 1 * 2 * 4
    assert len({t.seed for t in tasks}) == len(tasks)
    assert [t.seed for t in sw.plan(sw.load_config(config))] == [t.seed for t in tasks]
    assert tasks[0].seed == sw.chunk_seed(7, "tutorial", "random", "random", "base", 0)
    crn = sw.load_config({**cfg.to_dict(), "common_random_numbers": True})
    by = {(t.overlay, t.chunk): t.seed for t in sw.plan(crn)}
    assert by[("base", 2)] == by[("gv3", 2)]


def test_policy_parameter_grid(client, tmp_path):
    from soe_sim.engine.game import play_game
    from soe_sim.engine.game.policies import POLICY_IDS

    if "balanced" not in POLICY_IDS:
        pytest.skip("no parameterised policy yet")
    raw = {"scenarios": ["tutorial"], "games_per_chunk": 3, "chunks": 1, "seed": 1,
           "pairs": [{"polish": "balanced", "soviet": "random", "polish_params": {"attack_threshold": [0.5, 0.7]}}]}
    cfg = sw.load_config(raw)
    tasks = sw.plan(cfg)
    assert len(tasks) == 2 and len({t.relpath() for t in tasks}) == 2 and len({t.seed for t in tasks}) == 2
    assert tasks[0].relpath().startswith("games/tutorial/balanced__random__p")
    with pytest.raises(SoeInputError, match="polish_params.atack_threshold.*did you mean `attack_threshold`"):
        sw.load_config({**raw, "pairs": [{"polish": "balanced", "soviet": "random",
                                          "polish_params": {"atack_threshold": 0.5}}]})
    man = sw.run_sweep(cfg, tmp_path / "out", client=client)
    assert man["status"] == "complete"
    games = sw.read_sweep(tmp_path / "out")
    assert sorted(set(games["polish_params"])) == ['{"attack_threshold": 0.5}', '{"attack_threshold": 0.7}']
    row = games.iloc[4]
    params = json.loads(row["polish_params"])
    r = play_game("tutorial", seed=(int(row["seed"]), int(row["game"])), polish=("balanced", params))
    assert (r.winner or "") == row["winner"] and r.vp == row["vp"] and r.steps == row["steps"]


def test_sweep_runs_and_rows_replay(reference):
    from soe_sim.engine.game import play_game

    out, man = reference
    assert man["status"] == "complete" and man["tasks_done"] == man["tasks_total"] == 8
    assert man["games_done"] == 48
    games, traj = _read_all(out)
    assert len(games) == 48
    assert not games.duplicated(["overlay", "chunk", "game"]).any()
    for c in ("scenario", "polish", "soviet", "seed", "game", "overlay", "chunk"):
        assert c in games
    assert set(traj["game"]) == set(range(6))
    files = sorted(p.relative_to(out).as_posix() for p in (out / "games").rglob("*.parquet"))
    assert files[0] == "games/tutorial/random__random/base/chunk-00000.parquet" and len(files) == 8
    m = json.loads((out / "manifest.json").read_text())
    assert all(t["done"] for t in m["tasks"]) and m["config"]["seed"] == 7
    # every row is its own seeded game
    cfg = sw.load_config({k: v for k, v in m["config"].items()})
    row = games[(games["overlay"] == "gv3") & (games["chunk"] == 2)].iloc[3]
    task = next(t for t in sw.plan(cfg) if t.overlay == "gv3" and t.chunk == 2)
    assert row["seed"] == task.seed
    setup = sw.overlay_setup("tutorial", next(o for o in cfg.overlays if o.name == "gv3"))
    r = play_game(setup, seed=(int(row["seed"]), int(row["game"])), polish=row["polish"], soviet=row["soviet"])
    assert (r.winner or "") == row["winner"] and r.vp == row["vp"] and r.steps == row["steps"]
    # the overlay changed the rules: its setup's great-victory threshold is 3
    assert setup.cr.great_victory_losses == 3
    assert sw.overlay_setup("tutorial").cr.great_victory_losses == 4


def test_interrupted_sweep_resumes_exactly(config, client, reference, monkeypatch, tmp_path):
    out = tmp_path / "out"
    real = sw._write_chunk
    calls = {"n": 0}

    def crash_after_three(o, task, result):
        if calls["n"] == 3:
            raise KeyboardInterrupt  # the user pressed ^C while chunk 4 arrived
        calls["n"] += 1
        real(o, task, result)

    monkeypatch.setattr(sw, "_write_chunk", crash_after_three)
    with pytest.raises(KeyboardInterrupt):
        sw.run_sweep(config, out, client=client)
    monkeypatch.setattr(sw, "_write_chunk", real)
    man = json.loads((out / "manifest.json").read_text())
    assert man["status"] == "interrupted" and man["tasks_done"] == 3
    assert len(list((out / "games").rglob("chunk-*.parquet"))) == 3
    # a half-written file of a crashed writer is ignored and cleaned up
    stale = out / "games" / "tutorial" / "random__random" / "base" / ".chunk-00003.parquet.999.tmp"
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_bytes(b"garbage")
    before = {p: p.stat().st_mtime_ns for p in (out / "games").rglob("chunk-*.parquet")}
    man = sw.run_sweep(config, out, client=client)
    assert man["status"] == "complete" and man["last_run"] == {**man["last_run"], "computed": 5, "skipped": 3}
    assert not stale.exists()
    for p, t in before.items():  # finished chunks were not recomputed
        assert p.stat().st_mtime_ns == t
    games, traj = _read_all(out)
    ref_games, ref_traj = _read_all(reference[0])
    pd.testing.assert_frame_equal(games, ref_games)
    pd.testing.assert_frame_equal(traj, ref_traj)
    # nothing left: a third run computes nothing
    man = sw.run_sweep(config, out, client=client)
    assert man["last_run"]["computed"] == 0 and man["status"] == "complete"


def test_partial_runs_grid_growth_and_fingerprint(config, client, reference, tmp_path):
    out = tmp_path / "out"
    man = sw.run_sweep(config, out, client=client, max_tasks=5)
    assert man["status"] == "partial" and man["tasks_done"] == 5
    grown = config.read_text().replace("chunks = 4", "chunks = 5")
    config.write_text(grown)
    man = sw.run_sweep(config, out, client=client)
    assert man["status"] == "complete" and man["tasks_done"] == 10 and man["last_run"]["computed"] == 5
    games = sw.read_sweep(out)
    ref = sw.read_sweep(reference[0])
    pd.testing.assert_frame_equal(games[games["chunk"] < 4].reset_index(drop=True), ref)
    config.write_text(grown.replace("seed = 7", "seed = 8"))
    with pytest.raises(SoeInputError, match="different settings \\(seed 7 → 8\\)"):
        sw.run_sweep(config, out, client=client)
    (out / "manifest.json").unlink()  # without the manifest, the chunk files themselves are checked
    with pytest.raises(SoeInputError, match="not written by this sweep"):
        sw.run_sweep(config, out, client=client)


def test_cli_sweep_with_scheduler_address(config, client, reference, tmp_path, capsys):
    from soe_sim.cli import main

    out = tmp_path / "cli"
    rc = main(["sweep", str(config), "--out", str(out), "--scheduler", client.scheduler.address, "--no-progress",
               "--format", "json"])
    assert rc == 0
    man = json.loads(capsys.readouterr().out)
    assert man["status"] == "complete" and man["tasks_done"] == 8
    pd.testing.assert_frame_equal(sw.read_sweep(out), sw.read_sweep(reference[0]))
    # one summary per cell (user review: the table format printed only the status line)
    games = sw.read_sweep(out)
    cells = {c["overlay"]: c for c in man["cells"]}
    assert sorted(cells) == ["base", "gv3"]
    for name, c in cells.items():
        g = games[games["overlay"] == name]
        assert c["games"] == len(g) == 24 and c["polish_win"] == pytest.approx((g["winner"] == "polish").mean())
        assert c["polish_win_lo"] <= c["polish_win"] <= c["polish_win_hi"]
        assert c["vp_mean"] == pytest.approx(g["vp"].mean())
    assert main(["sweep", str(config), "--out", str(out), "--scheduler", client.scheduler.address,
                 "--no-progress"]) == 0  # resumed: nothing to compute, the same table
    text = capsys.readouterr().out
    assert "complete: 8/8 chunks, 48 games (0 computed, 8 already done" in text
    line = next(ln for ln in text.splitlines() if " gv3 " in ln)
    pw = cells["gv3"]["polish_win"]
    assert "tutorial" in line and f"{100 * pw:.1f} % [" in line and line.split()[1:3] == ["random", "random"]
    bad = tmp_path / "bad.toml"
    bad.write_text(CONFIG.replace('polish = "random"', 'polish = "cautious"'))
    rc = main(["sweep", str(bad), "--out", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert rc == 2 and "unknown policy (got 'cautious')" in err and "known policies: " in err and "random" in err


def test_killed_sweep_process_resumes(client, tmp_path):
    """A real crash: SIGKILL the whole `soe-sim sweep` process group (client, LocalCluster, workers)."""
    cfg = tmp_path / "kill.toml"
    cfg.write_text('scenarios = ["tutorial"]\ngames_per_chunk = 8\nchunks = 40\nseed = 3\n'
                   '[[pairs]]\npolish = "random"\nsoviet = "random"\n')
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "soe_sim.cli", "sweep", str(cfg), "--out", str(out),
                             "--workers", "1", "--no-progress"], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and proc.poll() is None:
            if len(list(out.glob("games/**/chunk-*.parquet"))) >= 3:
                break
            time.sleep(0.02)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    n_before = len(list(out.glob("games/**/chunk-*.parquet")))
    assert 3 <= n_before < 40  # killed mid-sweep
    man = sw.run_sweep(cfg, out, client=client)
    assert man["status"] == "complete" and man["last_run"]["skipped"] == n_before
    games = sw.read_sweep(out)
    assert len(games) == 40 * 8 and not games.duplicated(["chunk", "game"]).any()
    ref = sw.run_sweep(cfg, tmp_path / "ref", client=client)
    assert ref["last_run"]["computed"] == 40
    pd.testing.assert_frame_equal(games, sw.read_sweep(tmp_path / "ref"))


def test_an_unrelated_non_empty_directory_is_refused(config, tmp_path):
    out = tmp_path / "home"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(SoeInputError, match="not empty and holds no sweep.*notes.txt"):
        sw.run_sweep(config, out)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]  # nothing written into it
