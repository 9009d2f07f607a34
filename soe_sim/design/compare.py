"""Comparing two variants with common random numbers (``soe-sim compare``).

Both arms play the same seeded games (:mod:`soe_sim.design.runner`); the difference of the Polish
win rates (B minus A) is estimated from the paired games with Tango's score interval and an exact
McNemar test (:func:`soe_sim.design.stats.paired_difference`), the VP shift with a paired t interval.
Identical arms play identical games: their difference is exactly 0 and p = 1.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from soe_sim.design.stats import p_relation, paired_difference, paired_mean_difference, wilson
from soe_sim.design.variant import BASE, Variant, load_variant
from soe_sim.errors import Problem, SoeInputError

__all__ = ["compare", "Comparison", "arm_summary", "paired_arms", "METHOD"]

METHOD = ("paired games (common random numbers); difference = B - A of the Polish win rate; "
          "95 % Tango score interval; exact McNemar test")


def arm_summary(df: pd.DataFrame, variant: Variant | None = None) -> dict:
    """Win rates (with 95 % Wilson intervals), VP and game length of one arm's games."""
    n = int(len(df))
    pw = int((df["winner"] == "polish").sum())
    sw = int((df["winner"] == "soviet").sum())
    ab = int((df["outcome"] == "aborted").sum())
    out = {}
    if variant is not None:
        out.update({"name": variant.name, "description": variant.description, "files": list(variant.files),
                    "changes": variant.changes()})
    out.update({
        "games": n,
        "polish_win": pw / n if n else float("nan"), "polish_win_ci": list(wilson(pw, n)),
        "soviet_win": sw / n if n else float("nan"), "soviet_win_ci": list(wilson(sw, n)),
        "draw": (n - pw - sw - ab) / n if n else float("nan"), "aborted": ab / n if n else float("nan"),
        "vp_mean": float(df["vp"].mean()) if n else float("nan"),
        "vp_sd": float(df["vp"].std(ddof=1)) if n > 1 else float("nan"),
        "rounds_mean": float(df["rounds"].mean()) if n else float("nan"),
        "battles_mean": float(df["battles"].mean()) if n else float("nan"),
    })
    return out


def paired_arms(games: pd.DataFrame, a: int, b: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The games of arms ``a`` and ``b`` aligned game by game on ``(chunk, game)``."""
    ga = games[games["arm"] == a].sort_values(["chunk", "game"]).reset_index(drop=True)
    gb = games[games["arm"] == b].sort_values(["chunk", "game"]).reset_index(drop=True)
    if len(ga) != len(gb) or not (ga[["chunk", "game", "seed"]].to_numpy() == gb[["chunk", "game", "seed"]].to_numpy()).all():
        raise ValueError("the arms did not play the same seeded games")
    return ga, gb


def paired_effect(ga: pd.DataFrame, gb: pd.DataFrame, side: str = "polish") -> dict:
    """Paired difference of ``side``'s win rate (B - A) and the VP shift."""
    d = paired_difference(ga["winner"].to_numpy() == side, gb["winner"].to_numpy() == side)
    v = paired_mean_difference(ga["vp"].to_numpy(), gb["vp"].to_numpy())
    return {**d, "vp_shift": v}


@dataclass
class Comparison:
    """What :func:`compare` returns: the per-game frame of both arms and the summary."""

    scenario: str
    variants: list
    games: pd.DataFrame
    seed: int
    summary: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The JSON summary (``soe-sim compare --format json``)."""
        return self.summary

    def table(self) -> pd.DataFrame:
        """One row per arm: win rates with intervals, VP, game length."""
        rows = []
        for arm in self.summary["arms"]:
            rows.append({"arm": arm["label"], "variant": arm["name"], "games": arm["games"],
                         "polish_win": arm["polish_win"], "polish_win_low": arm["polish_win_ci"][0],
                         "polish_win_high": arm["polish_win_ci"][1], "soviet_win": arm["soviet_win"],
                         "soviet_win_low": arm["soviet_win_ci"][0], "soviet_win_high": arm["soviet_win_ci"][1],
                         "draw": arm["draw"], "aborted": arm["aborted"], "vp_mean": arm["vp_mean"],
                         "vp_sd": arm["vp_sd"], "rounds_mean": arm["rounds_mean"], "battles_mean": arm["battles_mean"]})
        return pd.DataFrame(rows)

    def plot(self):
        """Win rates per arm and the two VP distributions (:func:`soe_sim.design.plot.compare_figure`)."""
        from soe_sim.design.plot import compare_figure

        return compare_figure(self)

    def format_table(self) -> str:
        """The ``--format table`` text."""
        s = self.summary
        pct = _pct
        lines = [f"{s['scenario']}: {s['polish']} (Polish) vs {s['soviet']} (Soviet), {s['games']} paired games, "
                 f"seed {s['seed']} (common random numbers)"]
        for arm in s["arms"]:
            lo, hi = arm["polish_win_ci"]
            lines.append(f"  {arm['label']}: {arm['name']:<24} Polish win {pct(arm['polish_win'])} "
                         f"[{100 * lo:.1f}, {100 * hi:.1f}]  Soviet win {pct(arm['soviet_win'])}  "
                         f"VP {arm['vp_mean']:+.2f}")
            for c in arm["changes"][:8]:
                lines.append(f"       {c}")
            if len(arm["changes"]) > 8:
                lines.append(f"       … {len(arm['changes']) - 8} more changes")
        lines.append(f"  difference B - A (Polish win): {100 * s['difference']:+.2f} points, 95 % CI "
                     f"[{100 * s['ci_low']:+.2f}, {100 * s['ci_high']:+.2f}], p {p_relation(s['p_value'])}")
        v = s["vp_shift"]
        lines.append(f"  VP shift B - A: {v['mean']:+.3f}, 95 % CI [{v['ci_low']:+.3f}, {v['ci_high']:+.3f}], "
                     f"p {p_relation(v['p_value'])}")
        lines.append(f"  games that differ between the arms: {s['games_differing']} of {s['games']} "
                     f"(won by Polish in B only: {s['discordant']['b_only']}, in A only: {s['discordant']['a_only']})")
        return "\n".join(lines)


def _pct(x) -> str:
    return "  n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:5.1f} %"


def compare(scenario, a=None, b=None, *, games: int = 2000, seed: int = 0, polish="random", soviet="random",
            runner=None, threads: int | None = None, chunk_size: int | None = None, progress: bool = False,
            dask: bool = False, scheduler: str | None = None, work_dir=None) -> Comparison:
    """Play variant ``a`` and variant ``b`` of ``scenario`` on the same seeded games and compare them.

    Parameters
    ----------
    scenario : str
        Scenario id or TOML path.
    a, b : Variant, path, built-in variant name, ``"base"`` or ``"A+B"``
        The two arms (``b`` None: ``a`` is compared with the base rules).
    games : int
        Games per arm.
    seed : int
        Run seed: chunk ``c`` uses :func:`soe_sim.sim.sweep.chunk_seed` of it, the same in both arms.
    polish, soviet : policy spec
        The policies of the two sides: a name (``"random"``, ``"balanced"``, …), ``(name, {param:
        value})`` or a Policy, as in :func:`soe_sim.simulate`.
    runner : soe_sim.design.runner.Runner, optional
        Plays the games (default: a runner made from the arguments below, closed afterwards; a
        runner given here is used as it is and the arguments below are ignored).
    threads : int, optional
        Threads of the local backend (default: every CPU this process may use, as
        :func:`soe_sim.simulate`; the results do not depend on it).
    chunk_size : int, optional
        Games per chunk, the unit of work on Dask (default 250). Each chunk has its own seed, so the
        games played depend on it: keep it (and ``seed``) to reproduce a run.
    progress : bool
        A progress bar on stderr.
    dask : bool
        Play the chunks on a ``dask.distributed`` LocalCluster (one worker process per CPU).
    scheduler : str, optional
        Address of a running dask scheduler (``tcp://HOST:PORT``); implies ``dask``.
    work_dir : path, optional
        Where a Dask run writes its chunk files (``<work_dir>/<tag>/``; an interrupted run resumes
        there); default a temporary directory removed afterwards.

    Returns
    -------
    Comparison
        ``summary`` keys: ``arms`` (each with ``polish_win``, ``soviet_win``, ``games`` and their
        intervals), ``difference`` (Polish win rate of B minus A), ``ci_low``, ``ci_high``,
        ``p_value``, ``soviet_difference``, ``vp_shift``, ``discordant``, ``games_differing``.
    """
    from soe_sim.design.runner import Runner
    from soe_sim.sim import policy_label

    va = load_variant(a) if a is not None else BASE
    vb = load_variant(b) if b is not None else None
    if vb is None:
        va, vb = BASE, va
    own = runner is None
    if own:
        runner = Runner(scenario, polish, soviet, threads=threads, chunk_size=chunk_size, progress=progress,
                        dask=dask, scheduler=scheduler, work_dir=work_dir)
    try:
        df = runner.play([va, vb], games, seed, tag="compare", desc=f"compare {va.name} / {vb.name}")
    finally:
        if own:
            runner.close()
    ga, gb = paired_arms(df, 0, 1)
    pol = paired_effect(ga, gb, "polish")
    sov = paired_difference(ga["winner"].to_numpy() == "soviet", gb["winner"].to_numpy() == "soviet")
    same = ((ga["winner"] == gb["winner"]) & (ga["vp"] == gb["vp"]) & (ga["steps"] == gb["steps"])
            & (ga["events"] == gb["events"]))
    arms = []
    for label, v, g in (("A", va, ga), ("B", vb, gb)):
        arms.append({"label": label, **arm_summary(g, v)})
    pn, pp = policy_label(runner.polish)
    sn, sp = policy_label(runner.soviet)
    summary = {
        "scenario": str(scenario), "seed": int(seed), "games": int(len(ga)),
        "polish": pn + (f" {pp}" if pp else ""), "soviet": sn + (f" {sp}" if sp else ""),
        "common_random_numbers": True, "arms": arms,
        "difference": pol["difference"], "ci_low": pol["ci_low"], "ci_high": pol["ci_high"],
        "p_value": pol["p_value"], "method": METHOD,
        "discordant": {"b_only": pol["b_only"], "a_only": pol["a_only"]},
        "soviet_difference": {k: sov[k] for k in ("difference", "ci_low", "ci_high", "p_value")},
        "vp_shift": pol["vp_shift"],
        "games_differing": int((~same).sum()),
    }
    return Comparison(scenario=str(scenario), variants=[va, vb], games=df, seed=int(seed), summary=summary)


def check_arms(variants) -> list:
    """The ``--variant`` values of ``soe-sim compare``: one (compared with the base) or two."""
    if not 1 <= len(variants) <= 2:
        raise SoeInputError(Problem("--variant", "", "", len(variants), "give one or two variants",
                                    "--variant A.toml --variant B.toml (one variant is compared with `base`)"))
    return [load_variant(v) for v in variants]

