"""The balance report: metrics on hand-made tables, the HTML page, the CLI and a headless Chromium load."""
from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from soe_sim.battle.odds import wilson_interval
from soe_sim.report import (
    GARRISON_ONLY,
    balance_metrics,
    balance_report,
    decided_at,
    default_policies,
    game_leads,
    lead_changes,
    odds_bands,
    vp_fan,
    win_rates,
)
from soe_sim.report import _band  # noqa: PLC2701 - the odds-band rule itself
from soe_sim.report.html import SECTIONS

pytestmark = pytest.mark.game_loop  # plays games: compiled once for the session (conftest.py)

CHROMIUM = "/usr/bin/chromium"


# --------------------------------------------------------------------------------------------------
# Metrics on hand-made tables


def _games(winners, vps=None, phases=None, outcome=None, pair=("random", "random"), vp_start=3):
    n = len(winners)
    return pd.DataFrame({
        "polish": pair[0], "soviet": pair[1], "seed": 7, "game": np.arange(n),
        "winner": winners, "outcome": outcome or ["finished"] * n,
        "vp": vps if vps is not None else [1 if w == "polish" else -1 for w in winners],
        "vp_start": vp_start, "phases": phases or [12] * n, "rounds": 2,
    })


def _traj(games, tracks):
    rows = []
    for (g, vps) in zip(games.itertuples(index=False), tracks):
        for k, v in enumerate(vps):
            rows.append({"polish": g.polish, "soviet": g.soviet, "seed": g.seed, "game": g.game, "step": k,
                         "round": 1 + k // 3, "phase": 1 + k % 3, "vp": v})
    return pd.DataFrame(rows)


def test_lead_changes_counts_side_switches():
    assert lead_changes([2, -1, -2, 1], vp_start=3) == 2  # + + - - +
    assert lead_changes([1, 0, -1]) == 1  # nobody leading is skipped, not a change
    assert lead_changes([0, 0, 0], vp_start=0) == 0
    assert lead_changes([5, 6, 7], vp_start=3) == 0
    assert lead_changes([-1, 1, -1, 1], vp_start=1) == 4


def test_decided_at_on_known_tracks():
    assert decided_at([2, -1, 4, 5], 3, "polish") == pytest.approx(3 / 4)  # leads for good from the 3rd phase
    assert decided_at([4, 5, 6, 7], 3, "polish") == 0.0  # led throughout
    assert decided_at([4, 5, 6, -1], 3, "soviet") == 1.0  # took the lead at the very end
    assert decided_at([-1, -2, -3, 2], 3, "soviet") == 1.0  # won while behind (immediate victory): 1
    assert decided_at([-1, -2, 0, -3], 3, "soviet") == 1.0  # a tie breaks the streak
    assert decided_at([-1, 0, -2, -3], 3, "soviet") == pytest.approx(3 / 4)  # from phase 3 of 4
    assert math.isnan(decided_at([1, 2], 3, ""))
    assert math.isnan(decided_at([], 3, "polish"))


def test_balance_metrics_on_a_known_table():
    g = _games(["polish"] * 6 + ["soviet"] * 3 + [""], phases=[12] * 8 + [6, 12],
               outcome=["finished"] * 8 + ["immediate_victory", "finished"])
    m = balance_metrics(g)
    assert m["games"] == 10
    assert m["polish_win"] == pytest.approx(0.6) and m["soviet_win"] == pytest.approx(0.3)
    assert m["balance"] == pytest.approx(0.7)
    assert m["side_advantage"] == pytest.approx(0.3)
    assert m["drawishness"] == pytest.approx(0.1)
    lo, hi = wilson_interval(6, 10)
    assert m["polish_win_ci"] == [pytest.approx(float(lo)), pytest.approx(float(hi))]
    # with a draw: the normal interval of the difference on counts with one game added to each result
    qp, qs = 7 / 13, 4 / 13
    h = 1.959963984540054 * math.sqrt((qp + qs - (qp - qs) ** 2) / 13)
    assert m["side_advantage_ci"] == [pytest.approx(0.3 - h), pytest.approx(0.3 + h)]
    assert m["balance_ci"][1] == 1.0  # the difference's interval contains 0
    assert m["favoured"] == ""
    assert m["phases_mean"] == pytest.approx(11.4) and m["phases_min"] == 6 and m["phases_max"] == 12
    assert m["immediate_victory"] == pytest.approx(0.1)
    assert math.isnan(m["lead_changes_mean"])  # no trajectories given
    # a lopsided table names the favoured side
    m2 = balance_metrics(_games(["soviet"] * 95 + ["polish"] * 5))
    assert m2["favoured"] == "soviet" and m2["balance"] == pytest.approx(0.1)
    assert m2["side_advantage"] == pytest.approx(-0.9)
    # without draws: 2·P(Polish) − 1 through the Wilson interval of P(Polish); never a point (audit J F4)
    lo, hi = wilson_interval(5, 100)
    assert m2["side_advantage_ci"] == [pytest.approx(2 * lo - 1), pytest.approx(2 * hi - 1)]
    m3 = balance_metrics(_games(["soviet"] * 30))
    assert m3["side_advantage_ci"][0] == -1.0 and m3["side_advantage_ci"][1] > -0.9
    assert m3["balance_ci"][0] == 0.0 and m3["balance_ci"][1] > 0.1


def test_lead_changes_and_decisiveness_from_trajectories():
    g = _games(["polish", "soviet", "polish", "soviet"], vps=[5, -2, 2, 1], vp_start=3)
    tracks = [
        [4, 5, 5],  # Polish leads throughout: 0 changes, decided at 0
        [2, -1, -2],  # Soviet takes the lead after phase 2 of 3: 1 change, decided at 2/3
        [-1, 1, 2],  # + - + +: 2 changes, decided at 2/3
        [2, 1, 1],  # Soviet wins while behind (immediate victory): 0 changes, decided at 1
    ]
    t = _traj(g, tracks)
    leads = game_leads(g, t)
    assert leads["lead_changes"].tolist() == [0, 1, 2, 0]
    assert leads["decided_at"].tolist() == pytest.approx([0, 2 / 3, 2 / 3, 1])
    assert leads["trailed"].tolist() == [0, 1, 1, 1]
    m = balance_metrics(g, leads)
    assert m["lead_changes_mean"] == pytest.approx(0.75)
    assert m["games_with_lead_change"] == pytest.approx(0.5)
    assert m["decided_at_mean"] == pytest.approx((0 + 2 / 3 + 2 / 3 + 1) / 4)
    assert m["decisiveness"] == pytest.approx(1 - (0 + 2 / 3 + 2 / 3 + 1) / 4)
    assert m["winner_led_throughout"] == pytest.approx(0.25)
    assert m["winner_trailed"] == pytest.approx(0.75)


def test_vp_fan_freezes_games_that_ended_early():
    g = _games(["polish", "soviet"], vps=[6, -4], vp_start=1)
    t = _traj(g, [[2, 4, 6], [-4]])  # game 1 ended after the first phase
    f = vp_fan(g, t, quantiles=(0.5,))
    assert f["label"].tolist() == ["start", "R1 op 1", "R1 op 2", "R1 op 3"]
    assert f["playing"].tolist() == [2, 2, 1, 1]
    assert f["mean"].tolist() == pytest.approx([1, -1, 0, 1])
    assert f["polish_leads"].tolist() == pytest.approx([1, 0.5, 0.5, 0.5])


def test_win_rates_per_pairing():
    g = pd.concat([_games(["polish"] * 3 + ["soviet"], pair=("a", "b")),
                   _games(["soviet"] * 2 + ["", ""], outcome=["finished"] * 3 + ["aborted"], pair=("b", "a"))],
                  ignore_index=True)
    w = win_rates(g).set_index(["polish", "soviet"])
    assert w.loc[("a", "b"), "polish_win"] == pytest.approx(0.75) and w.loc[("a", "b"), "games"] == 4
    assert w.loc[("b", "a"), "soviet_win"] == pytest.approx(0.5)
    assert w.loc[("b", "a"), "draws"] == 1 and w.loc[("b", "a"), "aborted"] == 1
    lo, hi = wilson_interval(3, 4)
    assert w.loc[("a", "b"), "polish_win_lo"] == pytest.approx(float(lo))
    assert w.loc[("a", "b"), "polish_win_hi"] == pytest.approx(float(hi))


def test_odds_bands():
    assert _band(1, 2) == "below 1:1"
    assert _band(3, 3) == "1:1 to 3:2"
    assert _band(3, 2) == "3:2 to 2:1"
    assert _band(4, 2) == "2:1 to 3:1"
    assert _band(9, 3) == "3:1 and more"
    assert _band(5, 0) == GARRISON_ONLY
    sb = pd.DataFrame({"fought": [True, True, True, False], "attacker": ["polish", "soviet", "polish", "polish"],
                       "winner": ["polish", "polish", "soviet", "polish"], "odds_band": ["below 1:1"] * 4,
                       "great_victory": [True, False, False, False], "attacker_sp": [1, 2, 3, 4],
                       "defender_sp": [4, 4, 4, 4], "attacker_losses": [0, 1, 2, 0], "defender_losses": [1] * 4})
    t = odds_bands(sb).set_index("odds_band")
    assert t.loc["below 1:1", "battles"] == 3  # the unfought battle is left out
    assert t.loc["below 1:1", "attacker_win"] == pytest.approx(1 / 3)
    assert t.loc["below 1:1", "great_share"] == pytest.approx(1 / 3)
    # equal losses (the defender wins them, R9): the third battle, 2 v 1 is not one; the unfought one is left out
    sb["attacker_losses"] = [1, 1, 2, 1]
    t = odds_bands(sb).set_index("odds_band")
    assert t.loc["below 1:1", "ties"] == 2 and t.loc["below 1:1", "tie_share"] == pytest.approx(2 / 3)
    assert t.loc[GARRISON_ONLY, "ties"] == 0


def test_plural():
    from soe_sim.report import _plural

    assert _plural(1, "pairing") == "1 pairing" and _plural(4, "pairing") == "4 pairings"
    assert _plural(0, "game") == "0 games" and _plural(1000, "game") == "1,000 games"
    assert _plural(1, "VP city", "VP cities") == "1 VP city" and _plural(29, "VP city", "VP cities") == "29 VP cities"


# --------------------------------------------------------------------------------------------------
# A small real report


SC = "tutorial"


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    pols = ["random"] + [p for p in ("balanced",) if p in default_policies()]
    out = tmp_path_factory.mktemp("balance")
    rep = balance_report(SC, games=40, policies=pols, seed=3, out_dir=out, threads=2, matrix_games=12,
                         sample_games=10)
    return rep, out


def test_report_metrics_and_files(report):
    rep, out = report
    pols = rep.meta["policies"]
    assert rep.meta["registry"] == default_policies()
    assert len(rep.win_rates) == len(pols) ** 2
    h = tuple(rep.meta["headline"])
    assert rep.metrics["games"] == 40
    assert rep.win_rates.set_index(["polish", "soviet"]).loc[h, "games"] == 40
    assert (rep.win_rates["games"] == 12).sum() == len(pols) ** 2 - 1
    assert 0 <= rep.metrics["balance"] <= 1
    assert rep.summary and rep.summary[0].split()[2] == "win" and "40 games" in rep.summary[0]
    # the last VP of every trajectory is the game's final VP
    last = rep.trajectories.sort_values("step").groupby(["polish", "soviet", "game"])["vp"].last()
    fin = rep.games.set_index(["polish", "soviet", "game"])["vp"]
    assert (last.sort_index() == fin.loc[last.sort_index().index]).all()
    # the event sample replays the simulation's own first games
    assert rep.meta["sample"]["replay_mismatches"] == 0
    assert rep.meta["sample"]["battles_match_simulation"]
    assert rep.sample_battles["game"].max() < 10
    for name in ("index.html", "games.parquet", "trajectories.parquet", "battles.parquet", "win_rates.csv",
                 "pair_metrics.csv", "vp_fan.csv", "held_cities.csv", "odds_bands.csv", "eliminations.csv",
                 "card_use.csv", "metrics.json", "sample_battles.csv"):
        assert (out / name).is_file(), name
    assert len(pd.read_parquet(out / "games.parquet")) == 40 + 12 * (len(pols) ** 2 - 1)


def test_html_sections_and_embedded_images(report):
    _, out = report
    page = (out / "index.html").read_text(encoding="utf-8")
    for sid, title in SECTIONS:
        assert f'<section id="{sid}">' in page, sid
        assert f'href="#{sid}"' in page
    srcs = re.findall(r'<img[^>]*\ssrc="([^"]*)"', page)
    assert len(srcs) >= 7
    assert all(s.startswith("data:image/png;base64,") for s in srcs)
    assert len(srcs) == page.count("<img")
    # self-contained: no external script, style sheet, font or image
    assert not re.search(r'(src|href)="(https?:)?//', page)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert "event sample" in page.lower() and "seed 3" in page


def test_cli_report_balance(tmp_path, capsys):
    from soe_sim.cli import main

    out = tmp_path / "r"
    assert main(["report", "balance", "--scenario", SC, "--games", "8", "--policies", "random", "--sample-games",
                 "0", "--seed", "1", "--threads", "1", "--out", str(out), "--no-progress"]) == 0
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "Only one policy was played" in page
    # "50 games (1 pairings)": singular and plural as counted
    said = capsys.readouterr().out
    assert "balance report: 8 games (1 pairing), event sample 0 games," in said and "pairings" not in said
    assert "One pairing played (8 games)" in page and "Every pairing played: 1" not in page
    assert "games 0–-1" not in page and "Event sample: none" in page
    assert main(["report", "balance", "--scenario", SC, "--policies", "nope", "--out", str(out)]) == 2
    assert main(["report", "balance", "--scenario", "nope", "--out", str(out)]) == 2


# --------------------------------------------------------------------------------------------------
# Headless Chromium


@pytest.mark.skipif(not os.path.exists(CHROMIUM),
                    reason=f"{CHROMIUM} not installed (Debian package 'chromium'; CI installs it with "
                           ".ci/setup-chromium.sh)")
def test_html_renders_in_headless_chromium(report, tmp_path):
    _, out = report
    page = out / "index.html"
    n_img = page.read_text(encoding="utf-8").count("<img")
    base = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=10000"]
    res = subprocess.run([*base, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    body = re.search(r"<body[^>]*>", res.stdout)
    assert body, res.stdout[:500]
    tag = body.group(0)
    assert 'data-images-ok="true"' in tag, tag
    assert f'data-images="{n_img}"' in tag and f'data-images-decoded="{n_img}"' in tag, tag
    shot = tmp_path / "page.png"
    res = subprocess.run([*base, "--hide-scrollbars", "--window-size=1280,2400", f"--screenshot={shot}",
                          page.as_uri()], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and shot.is_file() and shot.stat().st_size > 20_000, res.stderr[-2000:]
    from PIL import Image

    im = np.asarray(Image.open(shot).convert("RGB"))
    assert im.shape[1] == 1280 and im.std() > 10  # not a blank page


def test_chromium_setup_script_exists():
    script = Path(__file__).resolve().parent.parent / ".ci" / "setup-chromium.sh"
    assert script.is_file() and os.access(script, os.X_OK)
    assert "apt-get install -y chromium" in script.read_text()
    assert shutil.which("bash")


def test_report_under_another_ruleset(tmp_path, capsys):
    """Every game of the report is played under --ruleset, and the page and summary say so."""
    from soe_sim.cli import main
    from soe_sim.sim import simulate

    out = tmp_path / "eats"
    assert main(["report", "balance", "-s", SC, "-n", "12", "-p", "random", "--ruleset", "eats", "--sample-games",
                 "4", "--threads", "1", "--no-progress", "--out", str(out)]) == 0
    assert "under The Eagle and the Star" in capsys.readouterr().out
    html = (out / "index.html").read_text()
    assert "rules The Eagle and the Star" in html and "--ruleset eats" in html
    games = pd.read_parquet(out / "games.parquet")
    ref = simulate(SC, "random", "random", games=12, seed=0, threads=1, ruleset="eats")
    assert games["vp"].tolist() == ref["vp"].tolist() and games["winner"].tolist() == ref["winner"].tolist()
    assert main(["report", "balance", "-s", SC, "-n", "4", "--ruleset", "eat", "--out", str(tmp_path / "x")]) == 2
    assert "did you mean `eats`" in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_summary_names_the_commonest_end_of_each_key_city(report):
    """Audit J F3: the summary sentence took the larger of the Polish and Soviet shares even when the
    city ended neutral in most games ("Warsaw Polish in 0 %")."""
    import dataclasses

    from soe_sim.report import summary_lines

    rep, _ = report
    held = pd.DataFrame([{"city": "warsaw", "name": "Warsaw", "vp": 3, "polish": 0.0, "soviet": 0.0, "neutral": 1.0},
                         {"city": "kiev", "name": "Kiev", "vp": 2, "polish": 0.05, "soviet": 0.23, "neutral": 0.72},
                         {"city": "minsk", "name": "Minsk", "vp": 2, "polish": 0.6, "soviet": 0.3, "neutral": 0.1}])
    (line,) = [x for x in summary_lines(dataclasses.replace(rep, held=held)) if x.startswith("At the end")]
    assert "Kiev neutral in" in line and "Minsk Polish in" in line
    # a city neutral in every game (and at the start) plays no part in the scenario: not named
    assert "Warsaw" not in line


def test_summary_names_only_the_key_cities_in_play(report):
    """Review: a tutorial report said "Warsaw neutral in 100 %; Minsk neutral in 100 %; … Kiev neutral in 100 %",
    cities that play no part in the scenario. Only cities held by a side at the start or at the end of some game
    are named."""
    import dataclasses

    from soe_sim.report import summary_lines

    rep, _ = report
    row = {"vp": 2, "polish": 0.0, "soviet": 0.0, "neutral": 1.0}
    held = pd.DataFrame([{**row, "city": "warsaw", "name": "Warsaw", "start": "neutral"},
                         {**row, "city": "lviv", "name": "Lviv", "start": "polish"},  # lost its garrison every time
                         {**row, "city": "kiev", "name": "Kiev", "start": "neutral", "polish": 0.01, "neutral": 0.99},
                         {**row, "city": "minsk", "name": "Minsk", "start": "neutral"}])
    (line,) = [x for x in summary_lines(dataclasses.replace(rep, held=held)) if x.startswith("At the end")]
    assert "Lviv neutral in 100 %" in line and "Kiev neutral in 99 %" in line
    assert "Warsaw" not in line and "Minsk" not in line
    # nothing in play: no sentence at all
    none = held[held["city"].isin(["warsaw", "minsk"])]
    assert not [x for x in summary_lines(dataclasses.replace(rep, held=none)) if x.startswith("At the end")]
    # the real report: the start column comes from the scenario, and every city named is held at some point
    assert set(rep.held["start"]) <= {"polish", "soviet", "neutral"}
    assert rep.held.set_index("city").loc["mazyr", "start"] == "polish"  # the tutorial's Polish key city
    text = " ".join(rep.summary)
    for r in rep.held.itertuples(index=False):
        if r.vp >= 2 and r.neutral == 1.0 and r.start == "neutral":
            assert f"{r.name} " not in text, r.name
        elif r.vp >= 2:
            assert f"{r.name} " in text, r.name


def test_win_rates_are_quoted_with_the_interval_not_a_symmetric_plus_minus(report):
    """Review: "95 % ± 1 %" beside the Wilson interval 93.6–96.3 % (really −1.5 / +1.2) and "91 % ± 6 %" beside
    [83.8, 95.2]: the report prints the (asymmetric) interval itself, never a "±"."""
    import dataclasses

    from soe_sim.report import summary_lines
    from soe_sim.report.html import fig_matrix

    rep, out = report
    assert not any("±" in x for x in rep.summary)
    lo, hi = rep.metrics["polish_win_ci" if rep.metrics["polish_win"] > rep.metrics["soviet_win"] else "soviet_win_ci"]
    assert f"(95 % Wilson interval {100 * lo:.1f}–{100 * hi:.1f} %;" in rep.summary[0]
    metrics = dict(rep.metrics, games=400, polish_win=0.951, soviet_win=0.049, polish_win_ci=[0.936, 0.963])
    first = summary_lines(dataclasses.replace(rep, metrics=metrics))[0]
    assert first.startswith("The Poles win 95 % with ") and "93.6–96.3 %" in first and "±" not in first
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "±" not in page
    fig = fig_matrix(rep)
    texts = [t.get_text() for t in fig.axes[0].texts]
    import matplotlib.pyplot as plt

    plt.close(fig)
    assert texts and not any("±" in t for t in texts)
    wr = rep.win_rates.iloc[0]
    assert any(f"[{math.floor(100 * wr['polish_win_lo'])}, {math.ceil(100 * wr['polish_win_hi'])}]" in t for t in texts)


def test_page_wording_is_current(report):
    """Review: stale sentences on the page (card use, "Not available yet"), a missing note on ties in the
    odds-band table and "1 pairings"."""
    rep, out = report
    page = (out / "index.html").read_text(encoding="utf-8")
    flat = " ".join(page.split())
    # card use: the engine plays historical events and reactions (G3, EV9–EV11); no "they stay at 0"
    assert "not offered by the engine's card phase yet" not in flat and "stay at 0" not in flat
    assert "reaction cards played in the windows after a side's own Recon and after each battle" in flat
    assert "historical event" in set(rep.card_use["use"]) and "reaction" in set(rep.card_use["use"])
    # the odds bands: ties go to the defender (R9), a lone garrison's lost SP counts (R3)
    note = re.search(r'<p class="note">Ties go to the defender.*?</p>', flat)
    assert note and "R9" in note.group(0) and "R3" in note.group(0) and "garrison only" in note.group(0)
    assert "If there is a draw, the attacker loses the battle" in note.group(0)
    assert "<th class=\"\">equal losses</th>" in flat
    # "Not available yet" lists only what is missing; what the per-game rows hold is said apart
    dd = re.search(r"<dt>Not available yet</dt><dd>(.*?)</dd>", flat).group(1)
    assert "decision statistics" in dd and "Leaders" not in dd and "encircled" not in dd
    assert re.search(r"<dt>In the data files only</dt><dd>[^<]*Leaders killed and captured", flat)
    # counted nouns agree with their counts
    n = len(rep.meta["policies"]) ** 2
    if n > 1:
        assert f"Every pairing played: {n} pairings (40 games for the headline pairing, 12 games for each" in flat
    assert "1 pairings" not in flat and " 1 games" not in flat


def test_rare_shares_are_not_printed_as_zero(report):
    """Audit J F8: one immediate victory in 400 games was printed "0 % end early"; and a table with aborted
    games said "every game runs to the last phase"."""
    import dataclasses

    from soe_sim.report import _pct, summary_lines

    assert _pct(1 / 400) == "<1 %" and _pct(0.0004, 1) == "<0.1 %"
    assert _pct(0.3) == "30 %" and _pct(0.006) == "1 %"
    rep, _ = report
    metrics = dict(rep.metrics, immediate_victory=1 / 400, aborted=0.0)
    text = " ".join(summary_lines(dataclasses.replace(rep, metrics=metrics)))
    assert "<1 % end by an immediate victory" in text
    metrics = dict(rep.metrics, immediate_victory=0.0, aborted=0.01)
    text = " ".join(summary_lines(dataclasses.replace(rep, metrics=metrics)))
    assert "no game ends by an immediate victory, 1.0 % were aborted by a hard cap" in text


def test_pct_never_rounds_a_near_total_to_all_or_nothing():
    # 1,999 of 2,000 games held is not "100 %" (user review of the notebooks' summary sentences)
    from soe_sim.report import _pct

    assert _pct(1999 / 2000) == ">99 %" and _pct(1.0) == "100 %" and _pct(0.0) == "0 %"
    assert _pct(1 / 2000) == "<1 %" and _pct(0.5) == "50 %" and _pct(0.9996, 1) == ">99.9 %"
