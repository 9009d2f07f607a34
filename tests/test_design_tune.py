"""soe-sim tune on real games: the crossing's interval covers the win-rate crossing."""
from __future__ import annotations

import json
import math

import pytest

from soe_sim.cli import main
from soe_sim.design import BASE, Runner, tune

pytestmark = pytest.mark.game_loop  # plays games: compiled once for the session (conftest.py)

SCENARIO = "tutorial"
TARGET = 0.6


def test_tune_starting_vp_covers_the_crossing():
    # The starting VP (SoE 7.8, signed: + Polish) has a monotone effect on the Polish win rate. An
    # independent reference run locates the integers around the 60 % crossing; the tuned interval
    # must reach into that unit interval and recommend one of its ends.
    runner = Runner(SCENARIO)
    ref = runner.play([BASE.with_knob("scenario.vp", v) for v in range(-1, 5)], 500, seed=99)
    rate = ref.groupby("arm")["winner"].apply(lambda w: (w == "polish").mean()).to_numpy()
    assert all(rate[i] <= rate[i + 2] for i in range(len(rate) - 2))  # monotone (two steps apart)
    k = -1 + int(next(i for i in range(len(rate) - 1) if rate[i] < TARGET <= rate[i + 1]))
    res = tune(SCENARIO, "scenario.vp", TARGET, low=-2, high=5, games=1500, batch=250, seed=7, runner=runner)
    lo, hi = res.interval
    assert res.summary["bounded"]
    assert lo <= k + 1 and hi >= k, (k, lo, hi, rate)
    assert res.recommended in (k, k + 1)
    assert res.summary["games"] <= 1500
    assert set(res.evaluations["value"]) <= set(range(-2, 6))
    assert res.games is not None and len(res.games) == res.summary["games"]
    # the rounds are independent samples: each has its own seeds
    assert res.games.groupby("stream")["seed"].first().nunique() == res.evaluations["stream"].nunique()
    c = res.candidates
    assert list(c["value"]) == sorted({math.floor(res.value), math.ceil(res.value)})
    assert res.plot() is not None


def test_tune_cli_json(tmp_path, capsys):
    out = tmp_path / "tune"
    code = main(["tune", "-s", SCENARIO, "--knob", "scenario.vp=-2:4", "--target", "0.5", "-n", "600",
                 "--batch", "150", "--format", "json", "--out", str(out), "--no-progress"])
    assert code == 0
    d = json.loads(capsys.readouterr().out)
    assert {"value", "ci_low", "ci_high", "recommended", "candidates", "evaluations", "status", "fit"} <= set(d)
    assert d["knob"] == "scenario.vp" and d["integer"] and isinstance(d["recommended"], int)
    assert d["games"] <= 600
    for f in ("tune.csv", "evaluations.csv", "candidates.csv", "tune.png", "summary.json", "index.html"):
        assert (out / f).stat().st_size > 0, f
