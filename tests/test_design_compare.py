"""soe-sim compare: common random numbers, paired statistics, outputs, the Dask backend."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from soe_sim.cli import main
from soe_sim.design import BASE, Runner, compare, load_variant
from soe_sim.design.variant import Variant

pytestmark = pytest.mark.game_loop  # plays games: compiled once for the session (conftest.py)

SCENARIO = "tutorial"  # one round, the quickest scenario to compile and play


def test_identical_arms_differ_by_exactly_zero():
    res = compare(SCENARIO, "flank-1", "flank-1", games=60, seed=5)
    s = res.summary
    assert s["difference"] == 0.0 and s["p_value"] == 1.0 and s["ci_low"] < 0 < s["ci_high"]
    assert s["discordant"] == {"b_only": 0, "a_only": 0}
    assert s["vp_shift"]["mean"] == 0.0 and s["games_differing"] == 0
    a, b = (res.games[res.games["arm"] == i].reset_index(drop=True) for i in (0, 1))
    cols = [c for c in a.columns if c not in ("arm", "variant")]
    pd.testing.assert_frame_equal(a[cols], b[cols])  # the very same games, row for row


def test_arms_share_the_seeds_of_plain_simulate():
    """Common random numbers: every arm plays game i of a chunk with the chunk's seed, as simulate does."""
    from soe_sim.sim import simulate

    runner = Runner(SCENARIO, chunk_size=25)
    df = runner.play([BASE, load_variant("great-victory-3")], 40, seed=3)
    assert set(df["chunk"]) == {0, 1}
    for arm in (0, 1):
        g = df[df["arm"] == arm]
        assert list(g["game"]) == list(range(25)) + list(range(15))
    # the base arm's chunk 1 is simulate() of that chunk's seed
    c1 = df[(df["arm"] == 0) & (df["chunk"] == 1)].reset_index(drop=True)
    ref = simulate(SCENARIO, games=15, seed=int(c1["seed"].iloc[0]), threads=1)
    assert list(ref["vp"]) == list(c1["vp"]) and list(ref["winner"]) == list(c1["winner"])


def test_arms_share_card_draws_and_policy_draws_until_the_rule_matters():
    """Two arms differing in a battle rule (SoE 7.44 great victory) play game i with the same streams:
    their event logs agree up to the first battle's losses, and every row replays with play_game."""
    from soe_sim.design import variant_setup
    from soe_sim.engine.game import EVENT, play_game

    arms = [BASE, load_variant("great-victory-3")]
    df = Runner(SCENARIO).play(arms, 6, seed=8)
    same_prefix = 0
    for g in range(6):
        row = [df[(df["arm"] == a) & (df["game"] == g)].iloc[0] for a in (0, 1)]
        assert row[0]["seed"] == row[1]["seed"]
        res = [play_game(variant_setup(SCENARIO, v), seed=(int(r["seed"]), g)) for v, r in zip(arms, row)]
        for r, got in zip(row, res):
            assert (got.vp, got.winner or "") == (r["vp"], r["winner"])  # the row replays
        logs = [x.log.used() for x in res]
        kinds = logs[0]["kind"]
        cut = int(np.argmax(kinds == EVENT.BATTLE_LOSSES)) if (kinds == EVENT.BATTLE_LOSSES).any() else len(kinds)
        assert cut > 0 and (logs[0][:cut] == logs[1][:cut]).all()
        same_prefix += cut
    assert same_prefix > 100


def test_a_real_rule_change_moves_the_outcome_in_the_expected_direction():
    # SoE 7.41.6 / docs/rules.md R9: equal losses are a defender victory. With a chart that inflicts
    # no losses every attack fails, so the Soviets cannot take back the Poles' 1 VP lead of the
    # tutorial (SoE 7.8 example): the Polish win rate must go up.
    no_losses = Variant("no-losses", rules={"combat": {"chart_losses": [0, 0, 0, 0, 0, 0]}})
    res = compare(SCENARIO, BASE, no_losses, games=300, seed=11)
    assert res.summary["difference"] > 0 and res.summary["ci_low"] > 0 and res.summary["p_value"] < 0.05
    assert res.summary["discordant"]["b_only"] > res.summary["discordant"]["a_only"]
    # a larger starting lead for the Poles (scenario value) also helps them
    lead = BASE.with_knob("scenario.vp", 3)
    res2 = compare(SCENARIO, BASE, lead, games=300, seed=11)
    assert res2.summary["ci_low"] > 0 and res2.summary["vp_shift"]["ci_low"] > 0


def test_cli_json_fields_and_outputs(tmp_path, capsys):
    out = tmp_path / "cmp"
    code = main(["compare", "-s", SCENARIO, "--variant", "base", "--variant", "polish-lead-2", "-n", "80",
                 "--seed", "2", "--format", "json", "--out", str(out), "--no-progress"])
    assert code == 0
    d = json.loads(capsys.readouterr().out)
    assert {"arms", "difference", "ci_low", "ci_high", "p_value", "vp_shift", "games"} <= set(d)
    assert len(d["arms"]) == 2
    for arm in d["arms"]:
        assert {"polish_win", "soviet_win", "games"} <= set(arm) and arm["games"] == 80
    assert d["difference"] == pytest.approx(d["arms"][1]["polish_win"] - d["arms"][0]["polish_win"])
    assert d["ci_low"] <= d["difference"] <= d["ci_high"] and 0 <= d["p_value"] <= 1
    for f in ("summary.json", "arms.csv", "games.parquet", "compare.png", "index.html"):
        assert (out / f).stat().st_size > 0, f
    assert len(pd.read_parquet(out / "games.parquet")) == 160
    html = (out / "index.html").read_text()
    assert "data:image/png;base64," in html and "polish-lead-2" in html
    # a single --variant is compared with the base rules; the table format names both arms
    code = main(["compare", "-s", SCENARIO, "-v", "flank-1", "-n", "20", "--no-progress"])
    text = capsys.readouterr().out
    assert code == 0 and "A: base" in text and "B: flank-1" in text and "difference B - A" in text


def test_dask_backend_plays_the_same_games(tmp_path):
    from distributed import Client, LocalCluster

    arms = [BASE, load_variant("hmg-deck")]
    local = Runner(SCENARIO, chunk_size=15).play(arms, 35, seed=4)
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        with Runner(SCENARIO, chunk_size=15, client=client, work_dir=tmp_path) as r:
            remote = r.play(arms, 35, seed=4, tag="cmp")
    assert (tmp_path / "cmp" / "manifest.json").exists()
    cols = [c for c in local.columns if c in remote.columns]
    assert len(cols) == len(local.columns)
    pd.testing.assert_frame_equal(local[cols].reset_index(drop=True), remote[cols].reset_index(drop=True),
                                  check_dtype=False)
