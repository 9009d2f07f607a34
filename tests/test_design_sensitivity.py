"""soe-sim sensitivity: one-at-a-time knob sweeps, the tornado table and plots."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from soe_sim.cli import main
from soe_sim.design import sensitivity
from soe_sim.design.sensitivity import knob_ranges, parse_knob_range
from soe_sim.errors import SoeInputError

pytestmark = pytest.mark.game_loop  # plays games: compiled once for the session (conftest.py)

SCENARIO = "tutorial"


def test_parse_knob_range():
    assert parse_knob_range("scenario.vp=-1:3") == ("scenario.vp", -1.0, 3.0, None)
    assert parse_knob_range("rules.combat.flank_penalty = 0:4:5") == ("rules.combat.flank_penalty", 0.0, 4.0, 5)
    for bad in ("scenario.vp", "scenario.vp=3:1", "scenario.vp=1:x", "scenario.vp=0:2:1"):
        with pytest.raises(SoeInputError):
            parse_knob_range(bad)


def test_table_and_tornado():
    res = sensitivity(SCENARIO, ["scenario.vp=-1:3:3", "rules.combat.flank_penalty=0:4"], games=150, seed=1)
    t = res.table
    assert list(t["knob"]) == ["scenario.vp"] * 3 + ["rules.combat.flank_penalty"] * 2
    assert list(t["value"]) == [-1, 1, 3, 0, 4]
    # the base value of a knob is the base arm itself: effect exactly 0
    base_row = t[(t["knob"] == "scenario.vp") & (t["value"] == 1)].iloc[0]
    assert base_row["is_base"] and base_row["difference"] == 0 and base_row["p_value"] == 1
    assert base_row["vp_shift"] == 0
    assert base_row["polish_win"] == pytest.approx(res.summary["base_polish_win"])
    # the signed starting VP (SoE 7.8) moves the Polish win rate the expected way
    vp = t[t["knob"] == "scenario.vp"].set_index("value")
    assert vp.loc[-1, "ci_high"] < 0 < vp.loc[3, "ci_low"]
    assert vp.loc[-1, "polish_win"] < vp.loc[1, "polish_win"] < vp.loc[3, "polish_win"]
    # the tornado ranks the knobs by the spread of their effects
    tor = res.tornado
    assert list(tor["knob"]) == ["scenario.vp", "rules.combat.flank_penalty"]
    r0 = tor.iloc[0]
    assert r0["low"] == -1 and r0["high"] == 3
    assert r0["spread"] == pytest.approx(vp.loc[3, "difference"] - vp.loc[-1, "difference"])
    assert tor["spread"].is_monotonic_decreasing
    # Holm's adjustment over the four values tested against the base (audit J F2); the base row is no test
    tested = t[~t["is_base"]]
    assert t.loc[t["is_base"], "p_holm"].isna().all()
    assert (tested["p_holm"] >= tested["p_value"]).all() and (tested["p_holm"] <= 1).all()
    assert tested["p_holm"].min() == pytest.approx(min(1.0, 4 * tested["p_value"].min()))
    assert tor.set_index("knob")["p_holm"].to_dict() == tested.groupby("knob")["p_holm"].min().to_dict()
    assert "4 values tested against the base" in res.format_table()
    header = res.format_table().splitlines()[0]  # user review: "base base: Polish win 51.0 %"
    assert "; base: Polish win" in header and "base base" not in header
    # user review: the base's win rate was printed without its interval
    lo, hi = res.summary["base_polish_win_ci"]
    assert header.endswith(f"Polish win {100 * res.summary['base_polish_win']:.1f} % [{100 * lo:.1f}, "
                           f"{100 * hi:.1f}] in 150 games")
    assert res.summary["base_games"] == 150
    # every arm played the same games (common random numbers)
    assert res.games.groupby("arm")["seed"].apply(tuple).nunique() == 1
    fig = res.plot()
    assert len(fig.axes[0].patches) >= 4
    assert res.plot_curves() is not None
    d = res.to_dict()
    json.dumps(d)
    assert len(d["table"]) == 5 and len(d["tornado"]) == 2


def test_integer_knob_takes_integer_ranges():
    with pytest.raises(SoeInputError) as e:
        sensitivity(SCENARIO, ["rules.combat.flank_penalty=0.5:3"], games=10)
    assert "takes integers" in str(e.value)


def test_cli_writes_table_tornado_and_html(tmp_path, capsys):
    out = tmp_path / "sens"
    code = main(["sensitivity", "-s", SCENARIO, "--knob", "rules.combat.great_victory_losses=2:6",
                 "--knob", "scenario.vp=0:2", "--base", "flank-1", "-n", "40", "--out", str(out), "--no-progress"])
    text = capsys.readouterr().out
    assert code == 0
    assert "tornado" in text and "rules.combat.great_victory_losses" in text
    for f in ("sensitivity.csv", "tornado.csv", "tornado.png", "games.parquet", "summary.json", "index.html"):
        assert (out / f).stat().st_size > 0, f
    tab = pd.read_csv(out / "sensitivity.csv")
    assert len(tab) == 4 and set(tab["knob"]) == {"rules.combat.great_victory_losses", "scenario.vp"}
    summ = json.loads((out / "summary.json").read_text())
    assert summ["base"] == "flank-1" and summ["base_changes"] == ["rules.combat.flank_penalty = 1"]


def test_starting_vp_skips_zero():
    # user review: scenario.vp=-1:3:5 played vp = 0, a space the VP track does not have (docs/rules.md E10):
    # that row had draws (48.2 % + 51.0 % != 100 %). -1 and +1 are neighbours; the points spread over the
    # values the knob takes, and the table says 0 was skipped
    res = sensitivity(SCENARIO, ["scenario.vp=-1:3:5"], games=60, seed=2)
    t = res.table
    assert list(t["value"]) == [-1, 1, 2, 3]
    assert ((t["polish_win"] + t["soviet_win"]) == 1).all()  # no draws: no game starts level
    assert res.summary["knobs"][0]["skipped"] == [0]
    assert "scenario.vp skips 0" in res.format_table()
    # POINTS counts the values the knob takes: -5..5 in three points keeps three
    assert [kr.values for kr in knob_ranges(SCENARIO, ["scenario.vp=-5:5:3"])] == [[-5, 1, 5]]
    assert [kr.values for kr in knob_ranges(SCENARIO, ["scenario.vp=0:2"])] == [[1, 2]]
