"""The balance report: win rates, balance metrics, VP trajectories, key cities, battles and cards.

:func:`balance_report` plays every pairing of the chosen policies with :func:`soe_sim.sim.simulate`
(one row per game, the VP track after every phase and one row per battle), replays a sample of the
headline pairing's games with :func:`soe_sim.engine.game.play_game` for what the per-game rows do
not hold (battle sizes and odds bands, card use, the leader / no-retreat split of battle
eliminations), and returns the metrics as a :class:`BalanceReport` (DataFrames and dicts). Given an
output directory it also writes the underlying CSV / parquet files and a self-contained
``index.html`` (:mod:`soe_sim.report.html`, plots embedded as base64 PNGs).

Vocabulary (after Ludii's and TAG's game metrics), for a set of games of one policy pairing:

* **balance** = 1 − |P(Polish win) − P(Soviet win)| (1 = both sides win equally often);
* **side advantage** = P(Polish win) − P(Soviet win) (positive: the Polish side is favoured);
* **drawishness** = P(draw) (games that finish without a winner; aborted games are reported apart);
* **game length** = phases played (mean, sd, quartiles) and rounds;
* **lead changes** = how often the leader on the VP track (positive = Polish, negative = Soviet,
  0 = nobody) switches from one side to the other, from the starting VP through the VP after every
  phase (phases with nobody leading are skipped);
* **decided at** = the fraction of the game (0 = before the first phase, 1 = only after the last)
  from which the eventual winner leads on the VP track for good; a winner who does not lead at the
  end (an immediate victory by capture) counts 1; **decisiveness** = 1 − mean(decided at) over the
  games with a winner.
"""
from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from soe_sim._paths import os_error_text
from soe_sim.errors import Problem, SoeInputError

__all__ = [
    "balance_report", "BalanceReport", "win_rates", "win_interval", "balance_metrics", "lead_changes",
    "decided_at", "game_leads", "vp_fan", "phase_label", "held_table", "battle_summary", "odds_bands",
    "elimination_table", "card_use_table", "event_sample", "summary_lines", "policy_matrix",
    "default_policies", "DEFAULT_SCENARIO", "ODDS_BANDS", "ELIMINATION_CAUSES",
]

DEFAULT_SCENARIO = "kiev-offensive"
DEFAULT_GAMES = 1000
DEFAULT_SAMPLE = 200
SIDES = ("polish", "soviet")
SIDE_NAMES = {"polish": "Polish", "soviet": "Soviet"}
SIDE_PLURALS = {"polish": "the Poles", "soviet": "the Soviets"}
Z95 = 1.959963984540054

#: (label, lower bound of attacker SP / defender SP, upper bound) of the odds bands; battles
#: against a garrison alone (no defending block) are the band "garrison only".
ODDS_BANDS = (
    ("below 1:1", 0.0, 1.0),
    ("1:1 to 3:2", 1.0, 1.5),
    ("3:2 to 2:1", 1.5, 2.0),
    ("2:1 to 3:1", 2.0, 3.0),
    ("3:1 and more", 3.0, math.inf),
)
GARRISON_ONLY = "garrison only"

#: (column stem of soe_sim.simulate, label) of the elimination causes, per side.
ELIMINATION_CAUSES = (
    ("destroyed_battle", "destroyed in battle (back to the force pool)"),
    ("eliminated_battle", "eliminated in battle (no retreat / leader lost)"),
    ("eliminated_supply", "out of supply"),
    ("eliminated_stacking", "over-stacking"),
    ("eliminated_other", "by orders (Withdraw) and other causes"),
)

CARD_USES = {2: "orders", 3: "reinforcement cubes", 4: "historical event", 5: "combat (drawn blind)",
             6: "combat (from the hand)", 7: "battle card", 8: "reaction"}

_PAIR = ["polish", "soviet"]


# --------------------------------------------------------------------------------------------------
# Win rates and balance


def _ruleset_name(rules) -> str:
    """The ruleset's name, plus the custom files read (``Strike of the Eagle + b_noloss.toml``)."""
    extra = rules.label.split("+")[1:]
    return " + ".join([str(rules.name), *extra])


def win_interval(k: int, n: int) -> tuple[float, float]:
    """95 % Wilson interval of ``k / n`` (:func:`soe_sim.battle.odds.wilson_interval`); (0, 1) for n = 0."""
    from soe_sim.battle.odds import wilson_interval

    if n <= 0:
        return 0.0, 1.0
    lo, hi = wilson_interval(int(k), int(n), Z95)
    return float(lo), float(hi)


def _rate(k: int, n: int) -> float:
    return k / n if n else float("nan")


def win_rates(games: pd.DataFrame) -> pd.DataFrame:
    """Per policy pairing: games, wins of each side, draws and aborts with rates and 95 % Wilson intervals.

    Columns ``polish, soviet, games, polish_wins, polish_win, polish_win_lo, polish_win_hi`` (and the
    same for ``soviet``, ``draw``), ``aborted``, ``aborted_rate``. A draw is a game that ended
    without a winner and was not aborted.
    """
    rows = []
    if len(games) == 0:
        return pd.DataFrame(columns=["polish", "soviet", "games"])
    for (pp, sp), g in games.groupby(_PAIR, sort=False):
        n = len(g)
        ab = int((g["outcome"] == "aborted").sum())
        counts = {"polish": int((g["winner"] == "polish").sum()), "soviet": int((g["winner"] == "soviet").sum())}
        counts["draw"] = n - counts["polish"] - counts["soviet"] - ab
        row = {"polish": pp, "soviet": sp, "games": n}
        for key, k in counts.items():
            lo, hi = win_interval(k, n)
            name, count = ("draw", "draws") if key == "draw" else (f"{key}_win", f"{key}_wins")
            row.update({count: k, name: _rate(k, n), f"{name}_lo": lo, f"{name}_hi": hi})
        row["aborted"] = ab
        row["aborted_rate"] = _rate(ab, n)
        rows.append(row)
    return pd.DataFrame(rows)


def _sign(x) -> np.ndarray:
    return np.sign(np.asarray(x, dtype=np.int64))


def lead_changes(vps, vp_start=None) -> int:
    """Times the leader on the VP track switches sides along ``[vp_start, *vps]`` (0 = nobody leads: skipped)."""
    seq = list(vps) if vp_start is None else [vp_start, *list(vps)]
    leaders = [s for s in _sign(seq) if s != 0]
    return int(sum(1 for a, b in zip(leaders, leaders[1:]) if a != b))


def decided_at(vps, vp_start, winner: str) -> float:
    """Fraction of the game from which ``winner`` leads the VP track for good.

    The track is ``[vp_start, *vps]`` (``vps`` = VP after each phase, the last one the final VP); its
    ``T = len(vps)`` steps are the phases. Returns ``t / T`` for the first index ``t`` after which
    every point has the winner ahead (0: led from the start; 1: only at the end, or never —
    e.g. an immediate victory while behind). NaN without a winner or without phases.
    """
    if winner not in SIDES:
        return float("nan")
    seq = _sign([vp_start, *list(vps)])
    T = len(seq) - 1
    if T <= 0:
        return float("nan")
    want = 1 if winner == "polish" else -1
    t = len(seq)
    while t > 0 and seq[t - 1] == want:
        t -= 1
    return min(t, T) / T


def _trajectory_groups(trajectories: pd.DataFrame):
    """{(polish, soviet, seed, game): vp array in step order}."""
    keys = ["polish", "soviet", "seed", "game"]
    t = trajectories.sort_values([*keys, "step"], kind="stable")
    vals = t["vp"].to_numpy(dtype=np.int64)
    out = {}
    if len(t) == 0:
        return out
    key_rows = t[keys].to_numpy()
    starts = np.flatnonzero(np.r_[True, ~(key_rows[1:] == key_rows[:-1]).all(axis=1)])
    ends = np.r_[starts[1:], len(t)]
    for a, b in zip(starts, ends):
        out[tuple(key_rows[a])] = vals[a:b]
    return out


def game_leads(games: pd.DataFrame, trajectories: pd.DataFrame | None) -> pd.DataFrame:
    """Per game: ``lead_changes``, ``decided_at``, ``trailed`` (the winner was behind at some point)
    and ``led_throughout`` from the VP track after every phase (NaN without trajectories)."""
    keys = ["polish", "soviet", "seed", "game"]
    out = games[keys].copy()
    n = len(games)
    lc = np.full(n, np.nan)
    da = np.full(n, np.nan)
    trailed = np.full(n, np.nan)
    if trajectories is not None and len(trajectories):
        groups = _trajectory_groups(trajectories)
        for i, (k, v0, w) in enumerate(zip(games[keys].itertuples(index=False, name=None), games["vp_start"],
                                           games["winner"])):
            vps = groups.get(tuple(k))
            if vps is None or len(vps) == 0:
                continue
            lc[i] = lead_changes(vps, v0)
            da[i] = decided_at(vps, v0, w)
            if w in SIDES:
                want = 1 if w == "polish" else -1
                trailed[i] = float(np.any(_sign([v0, *vps]) == -want))
    out["lead_changes"] = lc
    out["decided_at"] = da
    out["trailed"] = trailed
    return out


def _diff_interval(kp: int, ks: int, n: int) -> tuple[float, float]:
    """95 % interval of P(Polish) − P(Soviet) from one multinomial sample of n games, ``kp`` Polish and
    ``ks`` Soviet wins.

    Without draws the difference is 2·P(Polish) − 1, so the Wilson interval of P(Polish) maps onto it
    (it does not collapse to a point when one side wins every game, audit J F4). With draws: the normal
    interval of the difference, on counts with one game added to each of the three results (Agresti–Caffo
    style) so that it keeps a width at the extremes."""
    if n <= 0:
        return -1.0, 1.0
    if kp + ks >= n:
        lo, hi = win_interval(kp, n)
        return max(-1.0, 2.0 * lo - 1.0), min(1.0, 2.0 * hi - 1.0)
    d = (kp - ks) / n
    qp, qs = (kp + 1) / (n + 3), (ks + 1) / (n + 3)
    var = max(0.0, (qp + qs - (qp - qs) ** 2) / (n + 3))
    h = Z95 * math.sqrt(var)
    return max(-1.0, d - h), min(1.0, d + h)


def balance_metrics(games: pd.DataFrame, leads: pd.DataFrame | None = None) -> dict:
    """Balance metrics of one set of games (see the module docstring for the definitions).

    ``leads`` is :func:`game_leads` of the same games (lead changes and decisiveness are NaN without it).
    Keys: games, polish_win, soviet_win, draw (+ ``_ci``), aborted, balance, balance_ci,
    side_advantage, side_advantage_ci, favoured, drawishness, phases_mean, phases_sd, phases_q
    (25/50/75 %), phases_min, phases_max, rounds_mean, rounds_sd, immediate_victory, lead_changes_mean,
    lead_changes_sd, games_with_lead_change, decided_at_mean, decisiveness, winner_trailed,
    winner_led_throughout.
    """
    n = int(len(games))
    out: dict = {"games": n}
    pw = int((games["winner"] == "polish").sum())
    sw = int((games["winner"] == "soviet").sum())
    ab = int((games["outcome"] == "aborted").sum())
    dr = n - pw - sw - ab
    for key, k in (("polish_win", pw), ("soviet_win", sw), ("draw", dr)):
        out[key] = _rate(k, n)
        out[key + "_ci"] = list(win_interval(k, n))
    out["aborted"] = _rate(ab, n)
    pp, ps = out["polish_win"], out["soviet_win"]
    d_lo, d_hi = _diff_interval(pw, sw, n)
    out["side_advantage"] = pp - ps if n else float("nan")
    out["side_advantage_ci"] = [d_lo, d_hi]
    out["balance"] = 1 - abs(pp - ps) if n else float("nan")
    b_hi = 1.0 if d_lo <= 0 <= d_hi else 1 - min(abs(d_lo), abs(d_hi))
    out["balance_ci"] = [1 - max(abs(d_lo), abs(d_hi)), b_hi]
    out["favoured"] = ("polish" if d_lo > 0 else "soviet" if d_hi < 0 else "") if n else ""
    out["drawishness"] = out["draw"]
    ph = games["phases"].astype(float)
    out["phases_mean"] = float(ph.mean()) if n else float("nan")
    out["phases_sd"] = float(ph.std(ddof=1)) if n > 1 else float("nan")
    out["phases_q"] = [float(x) for x in ph.quantile([0.25, 0.5, 0.75])] if n else [float("nan")] * 3
    out["phases_min"] = float(ph.min()) if n else float("nan")
    out["phases_max"] = float(ph.max()) if n else float("nan")
    rd = games["rounds"].astype(float)
    out["rounds_mean"] = float(rd.mean()) if n else float("nan")
    out["rounds_sd"] = float(rd.std(ddof=1)) if n > 1 else float("nan")
    out["immediate_victory"] = _rate(int((games["outcome"] == "immediate_victory").sum()), n)
    nan = float("nan")
    if leads is not None and len(leads) and leads["lead_changes"].notna().any():
        lc = leads["lead_changes"].dropna()
        out["lead_changes_mean"] = float(lc.mean())
        out["lead_changes_sd"] = float(lc.std(ddof=1)) if len(lc) > 1 else nan
        out["games_with_lead_change"] = float((lc > 0).mean())
        da = leads["decided_at"].dropna()
        out["decided_at_mean"] = float(da.mean()) if len(da) else nan
        out["decisiveness"] = 1 - out["decided_at_mean"] if len(da) else nan
        out["winner_led_throughout"] = float((da == 0).mean()) if len(da) else nan
        tr = leads["trailed"].dropna()
        out["winner_trailed"] = float(tr.mean()) if len(tr) else nan
    else:
        for k in ("lead_changes_mean", "lead_changes_sd", "games_with_lead_change", "decided_at_mean",
                  "decisiveness", "winner_led_throughout", "winner_trailed"):
            out[k] = nan
    return out


def policy_matrix(rates: pd.DataFrame, policies: list[str], value: str = "polish_win") -> pd.DataFrame:
    """Polish policy (rows) × Soviet policy (columns) table of ``value`` from :func:`win_rates`."""
    m = pd.DataFrame(np.nan, index=pd.Index(policies, name="polish"), columns=pd.Index(policies, name="soviet"))
    for r in rates.itertuples(index=False):
        if r.polish in m.index and r.soviet in m.columns:
            m.loc[r.polish, r.soviet] = getattr(r, value)
    return m


# --------------------------------------------------------------------------------------------------
# VP over time


def phase_label(rnd: int, phase: int) -> str:
    """``R2 ops 3``-style label of a (round, phase): 0 = card replenishment, 99 = reinforcement."""
    if int(phase) == 0:
        return f"R{int(rnd)} cards"
    if int(phase) == 99:
        return f"R{int(rnd)} reinf."
    return f"R{int(rnd)} op {int(phase)}"


def _vp_matrix(games: pd.DataFrame, trajectories: pd.DataFrame):
    """(games × (1 + steps) VP matrix with the start in column 0 and ended games frozen at their
    final VP, steps frame (step, round, phase), games still playing per step)."""
    groups = _trajectory_groups(trajectories)
    keys = ["polish", "soviet", "seed", "game"]
    steps = (trajectories.drop_duplicates("step").sort_values("step")[["step", "round", "phase"]]
             .reset_index(drop=True))
    T = len(steps)
    mat = np.zeros((len(games), T + 1), dtype=float)
    playing = np.zeros(T, dtype=np.int64)
    for i, (k, v0, vf) in enumerate(zip(games[keys].itertuples(index=False, name=None), games["vp_start"],
                                        games["vp"])):
        vps = groups.get(tuple(k), np.zeros(0, np.int64))
        mat[i, 0] = v0
        m = len(vps)
        mat[i, 1:m + 1] = vps
        mat[i, m + 1:] = vps[-1] if m else vf
        playing[:m] += 1
    return mat, steps, playing


def vp_fan(games: pd.DataFrame, trajectories: pd.DataFrame | None,
           quantiles=(0.05, 0.25, 0.5, 0.75, 0.95)) -> pd.DataFrame:
    """VP quantiles at the start and after every phase (games that ended early keep their final VP).

    Columns ``step`` (0 = start), ``round``, ``phase``, ``label``, ``playing`` (games still being
    played after that phase), ``mean``, ``q05``…``q95``, ``polish_leads``, ``soviet_leads``.
    """
    cols = ["step", "round", "phase", "label", "playing", "mean", *[f"q{int(round(q * 100)):02d}" for q in quantiles],
            "polish_leads", "soviet_leads"]
    if trajectories is None or len(trajectories) == 0 or len(games) == 0:
        return pd.DataFrame(columns=cols)
    mat, steps, playing = _vp_matrix(games, trajectories)
    rows = []
    for j in range(mat.shape[1]):
        col = mat[:, j]
        if j == 0:
            rnd, ph, label, pl = 0, -1, "start", len(games)
        else:
            s = steps.iloc[j - 1]
            rnd, ph = int(s["round"]), int(s["phase"])
            label, pl = phase_label(rnd, ph), int(playing[j - 1])
        row = {"step": j, "round": rnd, "phase": ph, "label": label, "playing": pl, "mean": float(col.mean())}
        for q in quantiles:
            row[f"q{int(round(q * 100)):02d}"] = float(np.quantile(col, q, method="inverted_cdf"))
        row["polish_leads"] = float((col > 0).mean())
        row["soviet_leads"] = float((col < 0).mean())
        rows.append(row)
    return pd.DataFrame(rows, columns=cols)


# --------------------------------------------------------------------------------------------------
# Key cities, battles, eliminations


def held_table(games: pd.DataFrame, game_map=None, start: dict | None = None) -> pd.DataFrame:
    """Per key city (``held_<id>`` columns): share of games it ends Polish, Soviet, neutral (with the
    Wilson intervals of the first two), its name and VP when ``game_map`` is given, and who controls it
    at the start (column ``start``: polish, soviet or neutral) when ``start`` ({city id: side}) is given."""
    rows = []
    n = len(games)
    for c in [c for c in games.columns if c.startswith("held_")]:
        a = c[5:]
        row = {"city": a}
        if game_map is not None and a in game_map.area_index:
            r = game_map.areas.iloc[game_map.area_index[a]]
            row.update({"name": str(r["name"]), "vp": int(r["vp"])})
        if start is not None:
            row["start"] = start.get(a) if start.get(a) in SIDES else "neutral"
        for s in SIDES:
            k = int((games[c] == s).sum())
            lo, hi = win_interval(k, n)
            row.update({s: _rate(k, n), f"{s}_lo": lo, f"{s}_hi": hi})
        row["neutral"] = _rate(int((~games[c].isin(SIDES)).sum()), n)
        rows.append(row)
    return pd.DataFrame(rows)


def battle_summary(battles: pd.DataFrame | None, games: pd.DataFrame) -> pd.DataFrame:
    """Per attacking side (and ``all``): battles per game, share fought, attacker win rate (Wilson),
    great victories per game and share of fought battles, mean losses of attacker and defender."""
    n = max(1, len(games))
    rows = []
    if battles is None:
        return pd.DataFrame()
    for who in ("polish", "soviet", "all"):
        b = battles if who == "all" else battles[battles["attacker"] == who]
        f = b[b["fought"]]
        k = int((f["winner"] == f["attacker"]).sum())
        lo, hi = win_interval(k, len(f))
        rows.append({
            "attacker": who, "battles": len(b), "per_game": len(b) / n, "fought": len(f),
            "fought_share": _rate(len(f), len(b)), "attacker_wins": k, "attacker_win": _rate(k, len(f)),
            "attacker_win_lo": lo, "attacker_win_hi": hi,
            "great_victories": int(f["great_victory"].sum()), "great_per_game": float(f["great_victory"].sum()) / n,
            "great_share": _rate(int(f["great_victory"].sum()), len(f)),
            "attacker_losses_mean": float(f["attacker_losses"].mean()) if len(f) else float("nan"),
            "defender_losses_mean": float(f["defender_losses"].mean()) if len(f) else float("nan"),
        })
    return pd.DataFrame(rows)


def _band(att: float, dfn: float) -> str:
    if dfn <= 0:
        return GARRISON_ONLY
    r = att / dfn
    for label, lo, hi in ODDS_BANDS:
        if lo <= r < hi:
            return label
    return ODDS_BANDS[-1][0]


def odds_bands(sample_battles: pd.DataFrame) -> pd.DataFrame:
    """Fought battles of the event sample by odds band (attacker SP : defender block SP): battles,
    attacker wins with the Wilson interval, great-victory share, mean losses and sizes, and the battles
    with equal losses on both sides (``ties``, ``tie_share``), which the defender wins (docs/rules.md R9)."""
    labels = [b[0] for b in ODDS_BANDS] + [GARRISON_ONLY]
    rows = []
    f = sample_battles[sample_battles["fought"]] if len(sample_battles) else sample_battles
    for label in labels:
        b = f[f["odds_band"] == label] if len(f) else f
        k = int((b["winner"] == b["attacker"]).sum()) if len(b) else 0
        ties = int((b["attacker_losses"] == b["defender_losses"]).sum()) if len(b) else 0
        lo, hi = win_interval(k, len(b))
        rows.append({"odds_band": label, "battles": len(b), "attacker_wins": k, "attacker_win": _rate(k, len(b)),
                     "attacker_win_lo": lo, "attacker_win_hi": hi, "ties": ties, "tie_share": _rate(ties, len(b)),
                     "great_share": _rate(int(b["great_victory"].sum()), len(b)) if len(b) else float("nan"),
                     "attacker_sp_mean": float(b["attacker_sp"].mean()) if len(b) else float("nan"),
                     "defender_sp_mean": float(b["defender_sp"].mean()) if len(b) else float("nan"),
                     "attacker_losses_mean": float(b["attacker_losses"].mean()) if len(b) else float("nan"),
                     "defender_losses_mean": float(b["defender_losses"].mean()) if len(b) else float("nan")})
    return pd.DataFrame(rows)


def elimination_table(games: pd.DataFrame) -> pd.DataFrame:
    """Blocks lost per game by cause and side (means over games; every game of the frame)."""
    rows = []
    n = max(1, len(games))
    for stem, label in ELIMINATION_CAUSES:
        row = {"cause": stem, "label": label}
        for s in SIDES:
            col = f"{stem}_{s}"
            row[s] = float(games[col].sum()) / n if col in games else float("nan")
        rows.append(row)
    row = {"cause": "total", "label": "all causes"}
    for s in SIDES:
        row[s] = float(games[f"eliminated_{s}"].sum()) / n if f"eliminated_{s}" in games else float("nan")
    rows.append(row)
    return pd.DataFrame(rows)


def card_use_table(sample_cards: pd.DataFrame, n_games: int) -> pd.DataFrame:
    """Cards played per game by use and side in the event sample."""
    rows = []
    n = max(1, int(n_games))
    for code, label in CARD_USES.items():
        row = {"use": label}
        for s in SIDES:
            row[s] = (int(((sample_cards["use"] == code) & (sample_cards["side"] == s)).sum()) / n
                      if len(sample_cards) else 0.0)
        rows.append(row)
    row = {"use": "all"}
    for s in SIDES:
        row[s] = (int((sample_cards["side"] == s).sum()) / n) if len(sample_cards) else 0.0
    rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------------
# The event sample


def event_sample(scenario, polish: str, soviet: str, seed: int, games: int, progress: bool = False) -> dict:
    """Replay games ``0 .. games-1`` of ``seed`` (the same games as :func:`soe_sim.simulate`'s first
    rows) with :func:`play_game` and read their event logs.

    Each block's area and SP are replayed from the events (moves, retreats, advances, rail moves, placements,
    builds, combines, losses, removals), so every battle gets the SP and blocks of both sides in the
    area when it is fought (garrisons are flagged, not counted in the SP). The replay is checked
    against the final position of every game (``meta["replay_mismatches"]`` = blocks whose replayed
    area or SP differs from the engine's; 0 expected).

    Returns ``{"battles", "cards", "removals", "meta"}``: battles (game, battle, round, phase, area,
    attacker, winner, fought, attacker_sp, defender_sp, attacker_blocks, defender_blocks,
    defender_garrison, attacker_losses, defender_losses, great_victory, odds_band), cards (game,
    side, use, card), removals (game, side, block, status, cause, leader).
    """
    from tqdm.auto import tqdm

    from soe_sim.engine.game import CAUSE, EVENT, game_setup, play_game
    from soe_sim.engine.state import STATUS

    setup = game_setup(scenario)
    st0 = setup.state0
    side_of = st0.block_side.astype(np.int64)
    is_leader = (st0.block_arm.astype(np.int64) == 2)
    area_ids = [str(a) for a in setup.area_ids]
    block_ids = [str(b) for b in setup.block_ids]
    bat_rows, card_rows, rem_rows = [], [], []
    mismatches = 0
    for g in tqdm(range(int(games)), disable=not progress, desc="event sample", leave=False, unit="game"):
        r = play_game(setup, seed=(int(seed), g), polish=polish, soviet=soviet)
        rec = r.log.used()
        cols = {k: rec[k].astype(np.int64).tolist() for k in ("round", "phase", "kind", "side", "area", "area2",
                                                               "block", "value", "value2")}
        on = st0.block_status == STATUS.ON_MAP
        area = np.where(on, st0.block_area, -1).astype(np.int64)
        sp = np.where(on, st0.block_sp, 0).astype(np.int64)
        garrison = st0.garrison_side.astype(np.int64).copy()
        nb = 0
        last = None
        for i in range(len(cols["kind"])):
            k = cols["kind"][i]
            b = cols["block"][i]
            if k == EVENT.MOVE:
                if cols["value2"][i] > 0:
                    sp[b] -= cols["value2"][i]
                area[b] = cols["area2"][i]
            elif k == EVENT.BLOCK_MOVED or k == EVENT.RAIL or k == EVENT.ADVANCE:
                area[b] = cols["area2"][i]
            elif k == EVENT.BLOCK_PLACED or k == EVENT.REINFORCEMENT_ARRIVED or k == EVENT.BUILD:
                area[b] = cols["area"][i]
                sp[b] = cols["value"][i]
            elif k == EVENT.STRENGTHEN:
                sp[b] = cols["value"][i]
            elif k == EVENT.REORGANIZED:
                sp[b] += cols["value"][i]
            elif k == EVENT.BLOCK_LOSS:
                sp[b] -= cols["value"][i]
            elif k == EVENT.BLOCK_REMOVED:
                if cols["value"][i] in (STATUS.DESTROYED_TO_POOL, STATUS.ELIMINATED_PERMANENT):
                    rem_rows.append((g, _side(cols["side"][i]), block_ids[b], int(cols["value"][i]),
                                     int(cols["value2"][i]), bool(is_leader[b])))
                area[b] = -1
                sp[b] = 0
            elif k == EVENT.COMBINE:
                sp[b] = cols["value2"][i]
                a = cols["value"][i]
                if 0 <= a < len(area):
                    area[a] = -1
                    sp[a] = 0
            elif k == EVENT.GARRISON_PLACED:
                garrison[cols["area"][i]] = cols["side"][i]
            elif k == EVENT.GARRISON_REMOVED:
                garrison[cols["area"][i]] = -1
            elif k == EVENT.BATTLE:
                a = cols["area"][i]
                att = cols["side"][i]
                here = area == a
                att_m = here & (side_of == att)
                def_m = here & (side_of == 1 - att)
                last = [g, nb, cols["round"][i], cols["phase"][i], area_ids[a] if a >= 0 else "", _side(att),
                        _side(cols["value"][i]), bool(cols["value2"][i]), int(sp[att_m].sum()), int(sp[def_m].sum()),
                        int(att_m.sum()), int(def_m.sum()), bool(garrison[a] == 1 - att) if a >= 0 else False,
                        0, 0, False]
                bat_rows.append(last)
                nb += 1
            elif k == EVENT.BATTLE_LOSSES:
                if last is not None:
                    last[13], last[14], last[15] = int(cols["value"][i]), int(cols["value2"][i]), bool(b != 0)
            elif k == EVENT.CARD_PLAYED:
                card_rows.append((g, _side(cols["side"][i]), int(cols["value2"][i]), int(cols["value"][i])))
            elif k == EVENT.COMBAT_CARD:
                if cols["value"][i] > 0:
                    card_rows.append((g, _side(cols["side"][i]), int(b), int(cols["value"][i])))
            elif k == EVENT.BATTLE_CARD:
                card_rows.append((g, _side(cols["side"][i]), 7, int(cols["value"][i])))
        s = r.state
        fin_on = s.block_status == STATUS.ON_MAP
        bad = (area != np.where(fin_on, s.block_area, -1)) | (sp != np.where(fin_on, s.block_sp, 0))
        mismatches += int(bad.sum())
    battles = pd.DataFrame(bat_rows, columns=["game", "battle", "round", "phase", "area", "attacker", "winner",
                                              "fought", "attacker_sp", "defender_sp", "attacker_blocks",
                                              "defender_blocks", "defender_garrison", "attacker_losses",
                                              "defender_losses", "great_victory"])
    battles["odds_band"] = [_band(a, d) for a, d in zip(battles["attacker_sp"], battles["defender_sp"])]
    cards = pd.DataFrame(card_rows, columns=["game", "side", "use", "card"])
    cards["use_name"] = [CARD_USES.get(u, str(u)) for u in cards["use"]]
    removals = pd.DataFrame(rem_rows, columns=["game", "side", "block", "status", "cause", "leader"])
    cause_names = {CAUSE.BATTLE: "battle", CAUSE.SUPPLY: "supply", CAUSE.STACKING: "stacking", CAUSE.ORDERS: "orders"}
    removals["cause_name"] = [cause_names.get(c, "other") for c in removals["cause"]]
    meta = {"games": int(games), "seed": int(seed), "polish": polish, "soviet": soviet,
            "replay_mismatches": mismatches}
    return {"battles": battles, "cards": cards, "removals": removals, "meta": meta}


def _side(v: int) -> str:
    return SIDES[v] if v in (0, 1) else ""


def _battle_elimination_split(removals: pd.DataFrame, n_games: int) -> pd.DataFrame:
    """Permanent eliminations in battle of the sample split into leaders and no-retreat (encircled) blocks."""
    from soe_sim.engine.state import STATUS

    n = max(1, int(n_games))
    perm = removals[(removals["status"] == STATUS.ELIMINATED_PERMANENT) & (removals["cause_name"] == "battle")]
    rows = []
    for label, mask in (("no retreat (encircled) blocks", ~perm["leader"]), ("leaders", perm["leader"])):
        row = {"label": label}
        for s in SIDES:
            row[s] = int((mask & (perm["side"] == s)).sum()) / n
        rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------------
# The report


@dataclass
class BalanceReport:
    """What :func:`balance_report` returns (``report["metrics"]`` works too)."""

    meta: dict
    summary: list[str]
    win_rates: pd.DataFrame
    matrix: pd.DataFrame  # Polish policy × Soviet policy: Polish win rate
    matrix_soviet: pd.DataFrame  # Soviet win rate
    metrics: dict  # the headline pairing
    pair_metrics: pd.DataFrame
    games: pd.DataFrame
    trajectories: pd.DataFrame | None
    battles: pd.DataFrame | None
    leads: pd.DataFrame
    vp_fan: pd.DataFrame
    vp_final: pd.DataFrame
    held: pd.DataFrame
    battle_summary: pd.DataFrame
    odds_bands: pd.DataFrame
    sample_battles: pd.DataFrame
    eliminations: pd.DataFrame
    battle_elimination_split: pd.DataFrame
    card_use: pd.DataFrame
    sample: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)

    def __getitem__(self, key):
        return getattr(self, key)

    def to_dict(self) -> dict:
        """Plain dict of every field (DataFrames kept as DataFrames)."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def default_policies() -> list[str]:
    """Every policy of the engine's registry, in id order."""
    from soe_sim.engine.game.policies import POLICY_IDS

    return [k for k, _ in sorted(POLICY_IDS.items(), key=lambda kv: kv[1])]


def _resolve_policies(policies) -> list[str]:
    """Canonical registry names of ``policies`` (a list or a comma-separated string; None = all)."""
    from soe_sim.engine.game.policies import POLICY_IDS, policy_id

    if policies is None:
        return default_policies()
    if isinstance(policies, str):
        policies = [p for p in policies.replace(" ", ",").split(",") if p.strip()]
    names = {v: k for k, v in POLICY_IDS.items()}
    out = []
    for p in policies:
        try:
            q = names[policy_id(p)]
        except (SoeInputError, ValueError, TypeError) as err:
            probs = getattr(err, "problems", None) or [Problem("", "", "", p, "unknown policy")]
            raise SoeInputError([Problem("--policies", "", "", p, pr.message, pr.suggestion) for pr in probs]) from None
        if q not in out:
            out.append(q)
    if not out:
        raise SoeInputError(Problem("--policies", "", "", policies, "no policy given",
                                    f"known policies: {', '.join(default_policies())}"))
    return out


def _check_int(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or int(value) < minimum:
        raise SoeInputError(Problem(name, "", "", value, f"must be an integer of at least {minimum}"))
    return int(value)


def _pct(x: float, digits: int = 0) -> str:
    """A share in per cent; a share short of all (or above none) never rounds to "100 %" (or "0 %")."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    step = 10.0 ** -digits
    if 0 < x < 1 and 100 * x > 100 - step / 2:  # 1,999 of 2,000 games is not "100 %"
        return f">{100 - step:.{digits}f} %"
    if 0 < x < 1 and 100 * x < step / 2:
        return f"<{step:.{digits}f} %"
    return f"{100 * x:.{digits}f} %"


def _plural(n: int, word: str, plural: str | None = None) -> str:
    """``1 game``, ``2 games``, ``1,000 games`` (``plural`` for irregular words)."""
    n = int(n)
    return f"{n:,} {word if n == 1 else plural or word + 's'}"


def _city_in_play(r) -> bool:
    """A key city worth naming in the summary: some side holds it at the start or at the end of some game
    (a city neutral from start to end in every game plays no part in the scenario)."""
    return (r.polish + r.soviet) > 0 or getattr(r, "start", "neutral") in SIDES


def summary_lines(report: BalanceReport) -> list[str]:
    """The plain-language summary at the top of the report (a list of sentences)."""
    m = report.metrics
    meta = report.meta
    h = meta["headline"]
    n = m["games"]
    lines = []
    pw, sw = m["polish_win"], m["soviet_win"]
    lead = "soviet" if sw >= pw else "polish"
    lo, hi = m[f"{lead}_win_ci"]
    play = f"{h[0]} play on both sides" if h[0] == h[1] else f"{h[0]} Polish and {h[1]} Soviet play"
    who = SIDE_PLURALS[lead]
    # the win rate and its Wilson interval, no "±": the interval is asymmetric (93.6–96.3 % around 95.1 %);
    # one decimal when the interval is narrower than 2 points
    digits = 1 if hi - lo < 0.02 else 0
    first = (f"{who[0].upper() + who[1:]} win {_pct(m[lead + '_win'], digits)} with {play} "
             f"(95 % Wilson interval {100 * lo:.1f}–{100 * hi:.1f} %; {_plural(n, 'game')} of {meta['scenario']}"
             f"{'' if meta.get('ruleset', 'soe') == 'soe' else ' under ' + meta.get('ruleset_name', '')}, seed "
             f"{meta['seed']}).")
    lines.append(first)
    if m["favoured"]:
        fav = m["favoured"]
        a_lo, a_hi = m["side_advantage_ci"]
        lines.append(f"Balance {m['balance']:.2f} (1 = both sides win equally often): the {SIDE_NAMES[fav]} side is "
                     f"favoured by {100 * abs(m['side_advantage']):.0f} percentage points "
                     f"(95 % interval {100 * min(abs(a_lo), abs(a_hi)):.0f}–{100 * max(abs(a_lo), abs(a_hi)):.0f}); "
                     f"draws {_pct(m['drawishness'], 1)}.")
    else:
        lines.append(f"Balance {m['balance']:.2f} (1 = both sides win equally often): neither side is favoured beyond "
                     f"the 95 % interval; draws {_pct(m['drawishness'], 1)}.")
    # audit J F8: "0 % end early" for 1 game in 400, and "every game runs to the last phase" beside aborted games
    ends = (f"{_pct(m['immediate_victory'])} end by an immediate victory" if m["immediate_victory"] > 0
            else "no game ends by an immediate victory")
    if m["aborted"] > 0:
        ends += f", {_pct(m['aborted'], 1)} were aborted by a hard cap"
    lines.append(f"Games last {m['phases_mean']:.1f} phases on average (sd {m['phases_sd']:.1f}; "
                 f"{m['rounds_mean']:.1f} rounds); {ends}.")
    if not math.isnan(m["lead_changes_mean"]):
        lines.append(f"The VP lead changes hands {m['lead_changes_mean']:.1f} times per game "
                     f"({_pct(m['games_with_lead_change'])} of games see at least one change); the eventual winner "
                     f"leads for good from {_pct(m['decided_at_mean'])} of the way through on average "
                     f"(decisiveness {m['decisiveness']:.2f}), and {_pct(m['winner_trailed'])} of winners trailed "
                     f"at some point.")
    pols = meta["policies"]
    if len(pols) > 1 and len(report.win_rates) > 1:
        wr = report.win_rates
        i_lo, i_hi = wr["soviet_win"].idxmin(), wr["soviet_win"].idxmax()
        lines.append(f"Across the {len(pols)} × {len(pols)} policy matrix the Soviet win rate ranges from "
                     f"{_pct(wr.loc[i_lo, 'soviet_win'])} ({wr.loc[i_lo, 'polish']} Poles v {wr.loc[i_lo, 'soviet']} "
                     f"Soviets) to {_pct(wr.loc[i_hi, 'soviet_win'])} ({wr.loc[i_hi, 'polish']} Poles v "
                     f"{wr.loc[i_hi, 'soviet']} Soviets).")
    else:
        lines.append(f"Only the {pols[0]} policy was played (policies in the registry: "
                     f"{', '.join(meta['registry'])}).")
    bs = report.battle_summary
    if len(bs):
        a = bs[bs["attacker"] == "all"].iloc[0]
        lines.append(f"{a['per_game']:.1f} battles per game; attackers win {_pct(a['attacker_win'])} of the "
                     f"battles fought, with {a['great_per_game']:.2f} great victories per game.")
    held = report.held
    if len(held):
        key = held[held.get("vp", pd.Series(2, index=held.index)) >= 2] if "vp" in held else held
        parts = []
        for r in key.itertuples(index=False):
            if not _city_in_play(r):  # neutral from start to end in every game: not part of the scenario
                continue
            # the commonest end state, neutral included (audit J F3: "Warsaw Polish in 0 %" when it ended neutral)
            shares = {"polish": r.polish, "soviet": r.soviet, "neutral": r.neutral}
            s = max(shares, key=shares.get)
            who = "neutral" if s == "neutral" else SIDE_NAMES[s]
            parts.append(f"{getattr(r, 'name', r.city)} {who} in {_pct(shares[s])}")
        if parts:
            lines.append("At the end the key cities are held: " + "; ".join(parts) + ".")
    return lines


def _start_control(setup) -> dict:
    """{area id: "polish" / "soviet" / ""} of the control at the start of the scenario (SoE 1.3)."""
    return {str(a): _side(int(c)) for a, c in zip(setup.area_ids, setup.state0.control)}


def _final_vp(games: pd.DataFrame) -> pd.DataFrame:
    c = games.groupby([*_PAIR, "vp"]).size().rename("games").reset_index()
    c["share"] = c["games"] / c.groupby(_PAIR)["games"].transform("sum")
    return c


def balance_report(scenario=DEFAULT_SCENARIO, games: int = DEFAULT_GAMES, policies=None, seed: int = 0,
                   out_dir=None, threads: int | None = None, progress: bool = False, *,
                   matrix_games: int | None = None, sample_games: int | None = None, headline=None,
                   key_cities="vp", ruleset=None) -> BalanceReport:
    """Play the policy matrix of ``scenario`` and compute the balance report.

    Parameters
    ----------
    scenario : str
        Scenario id (``soe-sim scenarios``).
    games : int
        Games of the headline pairing (and of every other pairing unless ``matrix_games``).
    policies : list of str or comma-separated str
        Policies of the matrix (default: every policy of the registry). Every Polish × Soviet
        pairing is played.
    seed : int
        Batch seed of every pairing (game ``i`` of a pairing is ``play_game(scenario, seed=(seed, i), ...)``).
    out_dir : path, optional
        Write ``index.html`` and the CSV / parquet files there.
    threads : int, optional
        Threads of :func:`soe_sim.simulate` (default: every CPU; results do not depend on it).
    progress : bool
        Progress bars on stderr.
    matrix_games : int, optional
        Games of each pairing other than the headline one (default ``games``).
    sample_games : int, optional
        Games of the headline pairing replayed from their event logs for battle sizes, odds bands,
        card use and the elimination split (default ``min(games, 200)``).
    headline : str or (polish, soviet), optional
        The pairing of the summary, metrics, fan chart, map and battle sections (default: ``balanced``
        against itself when played, else the first policy against itself).
    key_cities : "vp", "key" or list of area ids
        Cities tracked at the end: every VP city (``"vp"``, default) or the 2-VP key cities (``"key"``).
    ruleset : str or path, optional
        ``"soe"`` (default), ``"eats"`` (The Eagle and the Star) or a rules TOML path: every game of the
        report is played under it, and the page names it.
    """
    from soe_sim.engine.game import game_setup
    from soe_sim.sim import key_city_ids, simulate

    if not isinstance(scenario, str):
        raise SoeInputError(Problem("--scenario", "", "", scenario, "a scenario id is expected"))
    setup = game_setup(scenario, ruleset)  # unknown id or ruleset: SoeInputError with a suggestion
    games = _check_int(games, "--games", 1)
    seed = _check_int(seed, "--seed", 0)
    matrix_games = games if matrix_games is None else _check_int(matrix_games, "--matrix-games", 1)
    sample_games = min(games, DEFAULT_SAMPLE) if sample_games is None else _check_int(sample_games,
                                                                                      "--sample-games", 0)
    if sample_games > games:
        raise SoeInputError(Problem("--sample-games", "", "", sample_games,
                                    f"the event sample cannot exceed the headline games ({games})"))
    pols = _resolve_policies(policies)
    if headline is None:
        hp = "balanced" if "balanced" in pols else pols[0]
        headline = (hp, hp)
    elif isinstance(headline, str):
        headline = (headline, headline)
    headline = tuple(str(h) for h in headline)
    for h in headline:
        if h not in pols:
            raise SoeInputError(Problem("--headline", "", "", h, "the headline policy is not among --policies",
                                        f"policies: {', '.join(pols)}"))
    if key_cities == "vp":
        kc = [str(a) for a in setup.game_map.areas.loc[setup.game_map.areas["vp"] > 0, "id"]]
    elif key_cities == "key":
        kc = None
    else:
        kc = key_city_ids(setup, key_cities)

    t0 = time.perf_counter()
    parts, trajs, bats = [], [], []
    pairs = [(p, s) for p in pols for s in pols]
    pairs.sort(key=lambda ps: ps != headline)  # headline first
    for p, s in pairs:
        n = games if (p, s) == headline else matrix_games
        res = simulate(setup, p, s, games=n, seed=seed, threads=threads, trajectories=True, battles=True,
                       key_cities=kc, progress=progress)
        parts.append(res.games)
        trajs.append(res.trajectories)
        bats.append(res.battles)
    sim_seconds = time.perf_counter() - t0
    all_games = pd.concat(parts, ignore_index=True)
    all_games.attrs = {}
    traj = pd.concat([t for t in trajs if t is not None], ignore_index=True)
    battles = pd.concat([b for b in bats if b is not None], ignore_index=True)

    rates = win_rates(all_games)
    leads = game_leads(all_games, traj)
    pm_rows = []
    for (p, s), g in all_games.groupby(_PAIR, sort=False):
        lg = leads.loc[g.index]
        mm = balance_metrics(g, lg)
        pm_rows.append({"polish": p, "soviet": s, **{k: v for k, v in mm.items() if not isinstance(v, list)},
                        **{f"{k.removesuffix('_ci')}_lo": v[0] for k, v in mm.items() if k.endswith("_ci")},
                        **{f"{k.removesuffix('_ci')}_hi": v[1] for k, v in mm.items() if k.endswith("_ci")}})
    pair_metrics = pd.DataFrame(pm_rows)
    hmask = (all_games["polish"] == headline[0]) & (all_games["soviet"] == headline[1])
    hg = all_games[hmask]
    ht = traj[(traj["polish"] == headline[0]) & (traj["soviet"] == headline[1])]
    hb = battles[(battles["polish"] == headline[0]) & (battles["soviet"] == headline[1])]
    metrics = balance_metrics(hg, leads[hmask])

    t1 = time.perf_counter()
    sample = event_sample(setup, headline[0], headline[1], seed, sample_games, progress=progress)
    sample_seconds = time.perf_counter() - t1
    sb = sample["battles"]
    # the sample's battles are the simulation's first games: a cross-check of the two readings
    sim_first = hb[hb["game"] < sample_games]
    same = len(sim_first) == len(sb)
    if same and len(sb):
        same = bool((sim_first["winner"].to_numpy() == sb["winner"].to_numpy()).all()
                    and (sim_first["area"].to_numpy() == sb["area"].to_numpy()).all())
    sample["meta"]["battles_match_simulation"] = bool(same)

    meta = {
        "scenario": scenario, "scenario_name": str(getattr(setup.scenario, "name", scenario)),
        "ruleset": setup.rules.label, "ruleset_name": _ruleset_name(setup.rules),
        "ruleset_arg": None if ruleset is None else str(ruleset),
        "games": games, "matrix_games": matrix_games, "sample_games": sample_games, "seed": seed,
        "policies": pols, "registry": default_policies(),
        "headline": list(headline), "pairs": len(pairs), "total_games": int(len(all_games)),
        "threads": threads, "simulation_seconds": sim_seconds, "sample_seconds": sample_seconds,
        "key_cities": [c[5:] for c in all_games.columns if c.startswith("held_")],
        "sample": sample["meta"], "created": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    try:
        from importlib.metadata import version

        meta["soe_sim_version"] = version("soe_sim")
    except Exception:  # noqa: BLE001 - decoration only
        meta["soe_sim_version"] = "?"
    rep = BalanceReport(
        meta=meta, summary=[], win_rates=rates, matrix=policy_matrix(rates, pols, "polish_win"),
        matrix_soviet=policy_matrix(rates, pols, "soviet_win"), metrics=metrics, pair_metrics=pair_metrics,
        games=all_games, trajectories=traj, battles=battles, leads=leads, vp_fan=vp_fan(hg, ht),
        vp_final=_final_vp(all_games), held=held_table(hg, setup.game_map, _start_control(setup)),
        battle_summary=battle_summary(hb, hg),
        odds_bands=odds_bands(sb), sample_battles=sb, eliminations=elimination_table(hg),
        battle_elimination_split=_battle_elimination_split(sample["removals"], sample_games),
        card_use=card_use_table(sample["cards"], sample_games), sample=sample,
    )
    rep.summary = summary_lines(rep)
    if out_dir is not None:
        write_report(rep, out_dir, game_map=setup.game_map)
    return rep


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (np.floating, float)):
        return None if math.isnan(float(x)) else float(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def write_report(rep: BalanceReport, out_dir, game_map=None) -> dict:
    """Write ``index.html`` and the data files of ``rep`` into ``out_dir``; returns {name: path}."""
    from soe_sim.report.html import render_html

    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        files = {}

        def put(name, df, kind="csv"):
            p = out / name
            if kind == "parquet":
                f = df.copy()
                f.attrs = {}
                f.to_parquet(p, index=False)
            else:
                df.to_csv(p, index=False, float_format="%.6g")
            files[name] = str(p)

        put("games.parquet", rep.games, "parquet")
        if rep.trajectories is not None:
            put("trajectories.parquet", rep.trajectories, "parquet")
        if rep.battles is not None:
            put("battles.parquet", rep.battles, "parquet")
        put("win_rates.csv", rep.win_rates)
        put("pair_metrics.csv", rep.pair_metrics)
        put("matrix_polish_win.csv", rep.matrix.reset_index())
        put("vp_fan.csv", rep.vp_fan)
        put("vp_final.csv", rep.vp_final)
        put("held_cities.csv", rep.held)
        put("battle_summary.csv", rep.battle_summary)
        put("odds_bands.csv", rep.odds_bands)
        put("sample_battles.csv", rep.sample_battles)
        put("eliminations.csv", rep.eliminations)
        put("card_use.csv", rep.card_use)
        if rep.sample:
            put("sample_cards.csv", rep.sample["cards"])
            put("sample_removals.csv", rep.sample["removals"])
        metrics_path = out / "metrics.json"
        files["metrics.json"] = str(metrics_path)
        files["index.html"] = str(out / "index.html")
        rep.files = files
        metrics_path.write_text(json.dumps(_jsonable({"meta": rep.meta, "summary": rep.summary,
                                                      "metrics": rep.metrics}), indent=2) + "\n")
        (out / "index.html").write_text(render_html(rep, game_map=game_map), encoding="utf-8")
    except OSError as err:
        raise SoeInputError(Problem("--out", "", "", str(out_dir), f"cannot write: {os_error_text(err)}")) from None
    return files
