"""One-at-a-time sensitivity of the win rate to numeric knobs (``soe-sim sensitivity``).

Each knob ``NAME=LOW:HIGH[:POINTS]`` is swept over ``POINTS`` values from ``LOW`` to ``HIGH``
(default 2: the two ends; integer knobs take integer values) while every other value stays as in
the base variant. Every arm — the base and each knob value — plays the same seeded games (common
random numbers), so each effect is a paired difference against the base
(:func:`soe_sim.design.stats.paired_difference`). The tornado table ranks the knobs by the spread
of their effects.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from soe_sim.design.compare import arm_summary, paired_arms, paired_effect
from soe_sim.design.stats import format_p, holm
from soe_sim.design.variant import BASE, Knob, Variant, knob_value, load_variant
from soe_sim.errors import Problem, SoeInputError

__all__ = ["KnobRange", "parse_knob_range", "knob_ranges", "sensitivity", "Sensitivity"]

_NUM = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_RANGE_RE = re.compile(rf"^\s*(?P<name>[^=\s]+)\s*=\s*(?P<lo>{_NUM})\s*:\s*(?P<hi>{_NUM})\s*(?::\s*(?P<n>\d+))?\s*$")


def _base_label(name: str) -> str:
    """How the table names the variant the knobs move from: "base" (the rules as they are), not "base base"."""
    return "base" if name == "base" else f"base {name}"


@dataclass
class KnobRange:
    """A knob swept from ``low`` to ``high`` over ``values`` (base value ``base``); ``skipped`` are the
    values in the range the knob never takes (``scenario.vp`` skips 0: :data:`~soe_sim.design.variant.KNOB_DOMAINS`)."""

    knob: Knob
    low: float
    high: float
    points: int
    base: float
    values: list = field(default_factory=list)
    skipped: list = field(default_factory=list)


def parse_knob_range(text: str, where: str = "--knob") -> tuple[str, float, float, int | None]:
    """``NAME=LOW:HIGH[:POINTS]`` → ``(name, low, high, points)``; a bad form is a SoeInputError."""
    m = _RANGE_RE.match(str(text))
    if not m:
        raise SoeInputError(Problem(where, "", "", text, "expected NAME=LOW:HIGH or NAME=LOW:HIGH:POINTS",
                                    "e.g. --knob rules.combat.flank_penalty=0:3"))
    lo, hi = float(m["lo"]), float(m["hi"])
    n = int(m["n"]) if m["n"] else None
    if not lo < hi:
        raise SoeInputError(Problem(where, "", "", text, "LOW must be below HIGH", f"e.g. {m['name']}={m['hi']}:{m['lo']}"
                                    if lo > hi else None))
    if n is not None and n < 2:
        raise SoeInputError(Problem(where, "", "", text, "POINTS must be at least 2"))
    return m["name"], lo, hi, n


def _values(knob: Knob, lo: float, hi: float, points: int, text: str, where: str) -> list:
    if knob.integer:
        if lo != int(lo) or hi != int(hi):
            a, b = math.ceil(lo), math.floor(hi)
            if a >= b:  # no two integers inside: the nearest range around it
                a, b = math.floor(lo), math.ceil(hi)
            raise SoeInputError(Problem(where, "", "", text, f"{knob.name} takes integers",
                                        f"e.g. {knob.name}={a}:{b}"))
        if knob.excluded:  # the points are spread over the values the knob takes (scenario.vp skips 0)
            a, b = math.ceil(knob.position(lo)), math.floor(knob.position(hi))
            if a > b:
                raise SoeInputError(Problem(where, "", "", text,
                                            f"no value of {knob.name} in the range: {knob.reason}"))
            return sorted({knob.value_at(int(round(float(p)))) for p in np.linspace(a, b, points)})
        vals = sorted({int(round(v)) for v in np.linspace(lo, hi, points)})
    else:
        vals = [float(v) for v in np.linspace(lo, hi, points)]
    return vals


def knob_ranges(scenario, specs, base: Variant = BASE, where: str = "--knob") -> list[KnobRange]:
    """Parse and check ``NAME=LOW:HIGH[:POINTS]`` specs (or ``(name, low, high[, points])`` tuples)
    against ``scenario`` under ``base``: unknown knobs, non-numeric values and bad ranges raise."""
    out = []
    seen = set()
    for spec in specs:
        if isinstance(spec, str):
            name, lo, hi, n = parse_knob_range(spec, where)
            text = spec
        else:
            name, lo, hi, *rest = spec
            n = rest[0] if rest else None
            text = f"{name}={lo}:{hi}"
            if not float(lo) < float(hi):
                raise SoeInputError(Problem(where, "", "", text, "LOW must be below HIGH"))
        knob, base_value = knob_value(scenario, base, name)
        if knob.name in seen:
            raise SoeInputError(Problem(where, "", "", text, "knob given twice"))
        seen.add(knob.name)
        points = int(n or 2)
        out.append(KnobRange(knob=knob, low=float(lo), high=float(hi), points=points, base=base_value,
                             values=_values(knob, float(lo), float(hi), points, text, where),
                             skipped=knob.skipped_between(float(lo), float(hi))))
    if not out:
        raise SoeInputError(Problem(where, "", "", "", "no knob given", "e.g. --knob rules.combat.flank_penalty=0:3"))
    return out


@dataclass
class Sensitivity:
    """What :func:`sensitivity` returns."""

    scenario: str
    base: Variant
    ranges: list
    table: pd.DataFrame  # one row per (knob, value)
    tornado: pd.DataFrame  # one row per knob, largest spread first
    games: pd.DataFrame  # every arm's games
    seed: int
    summary: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {**self.summary, "table": _records(self.table), "tornado": _records(self.tornado)}

    def plot(self):
        """The tornado plot (:func:`soe_sim.design.plot.tornado_figure`)."""
        from soe_sim.design.plot import tornado_figure

        return tornado_figure(self)

    def plot_curves(self):
        """Win rate against each knob's values (:func:`soe_sim.design.plot.curves_figure`)."""
        from soe_sim.design.plot import curves_figure

        return curves_figure(self)

    def format_table(self) -> str:
        s = self.summary
        lo, hi = s["base_polish_win_ci"]
        lines = [f"{s['scenario']}: {s['polish']} (Polish) vs {s['soviet']} (Soviet), {s['games']} games per value, "
                 f"seed {s['seed']}; {_base_label(s['base'])}: Polish win {100 * s['base_polish_win']:.1f} % "
                 f"[{100 * lo:.1f}, {100 * hi:.1f}] in {s['base_games']} games"]
        for k in s["knobs"]:
            if k.get("skipped"):
                lines.append(f"  {k['knob']} skips {', '.join(_fmt(v) for v in k['skipped'])}: {k['reason']}")
        lines.append(f"  {'knob':<40} {'value':>8} {'Polish win':>11} {'effect':>9}  {'95 % CI':<18} {'p':>8} "
                     f"{'p (Holm)':>8} {'VP shift':>9}")
        for r in self.table.itertuples(index=False):
            base = " (base)" if r.is_base else ""
            lines.append(f"  {r.knob:<40} {_fmt(r.value):>8} {100 * r.polish_win:10.1f}% {100 * r.difference:+8.2f}  "
                         f"[{100 * r.ci_low:+6.2f}, {100 * r.ci_high:+6.2f}] {format_p(r.p_value):>8} "
                         f"{'' if r.is_base else format_p(r.p_holm):>8} {r.vp_shift:+9.3f}{base}")
        lines.append("  tornado (effect on the Polish win rate, points):")
        for r in self.tornado.itertuples(index=False):
            lines.append(f"  {r.knob:<40} {_fmt(r.low)}: {100 * r.effect_low:+6.2f}   {_fmt(r.high)}: "
                         f"{100 * r.effect_high:+6.2f}   spread {100 * r.spread:.2f}"
                         + (f"   (no effect detectable: p (Holm) {format_p(r.p_holm)})" if r.p_holm >= 0.05 else ""))
        n_tests = int((~self.table["is_base"]).sum())
        lines.append(f"  {n_tests} values tested against the base: p (Holm) adjusts each p-value for all of them; "
                     f"read a row as an effect when its p (Holm) is below 0.05")
        return "\n".join(lines)


def _fmt(v) -> str:
    return str(int(v)) if float(v) == int(v) else f"{v:g}"


def _records(df: pd.DataFrame) -> list:
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()} for r in df.to_dict("records")]


def sensitivity(scenario, knobs, *, base=None, games: int = 1000, seed: int = 0, polish="random", soviet="random",
                runner=None, threads: int | None = None, chunk_size: int | None = None, progress: bool = False,
                dask: bool = False, scheduler: str | None = None, work_dir=None) -> Sensitivity:
    """One-at-a-time sweeps of ``knobs`` around ``base`` with common random numbers.

    Parameters
    ----------
    scenario : str
        Scenario id or TOML path.
    knobs : list of str or tuple
        ``"NAME=LOW:HIGH[:POINTS]"`` or ``(name, low, high[, points])``: each knob is swept over
        ``POINTS`` values (default 2, the two ends) from ``LOW`` to ``HIGH``. Integer knobs take
        integers; a knob's excluded values are skipped (``scenario.vp`` skips 0, the VP track has no
        0 space) and its points spread over the values it takes.
    base : Variant, path, built-in variant name or ``"A+B"``, optional
        The variant the knobs are varied around (default: the rules and the scenario as they are).
    games : int
        Games per arm (the base and every knob value).
    seed : int
        Run seed: every arm plays the same seeded games.
    polish, soviet : policy spec
        The policies of the two sides (names, ``(name, {param: value})`` or Policy; as in
        :func:`soe_sim.simulate`).
    runner : soe_sim.design.runner.Runner, optional
        Plays the games (default: a runner made from the arguments below, closed afterwards).
    threads : int, optional
        Threads of the local backend (default: every CPU, as :func:`soe_sim.simulate`; the results
        do not depend on it).
    chunk_size : int, optional
        Games per chunk (default 250): each chunk has its own seed, so the games depend on it.
    progress : bool
        A progress bar on stderr.
    dask : bool
        Play the chunks on a ``dask.distributed`` LocalCluster.
    scheduler : str, optional
        Address of a running dask scheduler (``tcp://HOST:PORT``; implies ``dask``).
    work_dir : path, optional
        Where a Dask run writes its chunk files (resumable); default a temporary directory.

    Returns
    -------
    Sensitivity
        ``table``: one row per knob value with ``knob``, ``value``, ``base_value``, ``is_base``,
        ``variant``, ``games``, ``polish_win`` (+ ``polish_win_low``, ``polish_win_high``: 95 %
        Wilson interval), ``soviet_win``, ``difference`` (vs the base, paired) with ``ci_low``,
        ``ci_high``, ``p_value`` (exact McNemar, for its own row), ``p_holm`` (Holm's adjustment of
        the p-values of every value tested against the base; NaN on the base rows, which are no
        test), ``vp_mean``, ``vp_shift`` (+ ``vp_shift_low``, ``vp_shift_high``);
        ``tornado``: one row per knob with ``knob``, ``base_value``, ``low``, ``high``,
        ``effect_low``, ``effect_high`` (+ intervals), ``p_holm`` (the knob's smallest) and
        ``spread``, the largest spread first; ``games``: every arm's games; ``summary``: the
        base's win rate with its interval and game count, and each knob's values and skipped values.
    """
    from soe_sim.design.runner import Runner
    from soe_sim.sim import policy_label

    bv = load_variant(base) if base is not None else BASE
    ranges = knob_ranges(scenario, knobs, bv)
    arms = [bv]
    index = []  # (knob range, value, arm)
    for kr in ranges:
        for v in kr.values:
            if v == kr.base:
                index.append((kr, v, 0))
            else:
                arms.append(bv.with_knob(kr.knob, v))
                index.append((kr, v, len(arms) - 1))
    own = runner is None
    if own:
        runner = Runner(scenario, polish, soviet, threads=threads, chunk_size=chunk_size, progress=progress,
                        dask=dask, scheduler=scheduler, work_dir=work_dir)
    try:
        for kr, v, arm in index:  # every value checked before a game is played
            try:
                runner.setups([arms[arm]])
            except SoeInputError as err:
                p = err.problems[0]
                raise SoeInputError(Problem("--knob", "", "", f"{kr.knob.name}={_fmt(v)}",
                                            f"not a playable value: {getattr(p, 'message', p)}",
                                            "give a narrower range NAME=LOW:HIGH")) from None
        df = runner.play(arms, games, seed, tag="sensitivity", desc="sensitivity")
    finally:
        if own:
            runner.close()
    g0 = df[df["arm"] == 0].sort_values(["chunk", "game"]).reset_index(drop=True)
    base_sum = arm_summary(g0, bv)
    rows = []
    for kr, v, arm in index:
        ga, gb = paired_arms(df, 0, arm)
        eff = paired_effect(ga, gb, "polish")
        s = arm_summary(gb)
        rows.append({"knob": kr.knob.name, "value": v, "base_value": kr.base, "is_base": arm == 0,
                     "variant": arms[arm].name, "games": s["games"], "polish_win": s["polish_win"],
                     "polish_win_low": s["polish_win_ci"][0], "polish_win_high": s["polish_win_ci"][1],
                     "soviet_win": s["soviet_win"], "difference": eff["difference"], "ci_low": eff["ci_low"],
                     "ci_high": eff["ci_high"], "p_value": eff["p_value"], "vp_mean": s["vp_mean"],
                     "vp_shift": eff["vp_shift"]["mean"], "vp_shift_low": eff["vp_shift"]["ci_low"],
                     "vp_shift_high": eff["vp_shift"]["ci_high"]})
    table = pd.DataFrame(rows)
    # one family of tests: every knob value against the base (audit J F2: with 10 rows and no effect at all,
    # some row shows p < 0.05 in about a third of studies); the base rows are no test
    table.insert(table.columns.get_loc("p_value") + 1, "p_holm",
                 holm(table["p_value"].where(~table["is_base"])))
    trows = []
    for kr in ranges:
        t = table[table["knob"] == kr.knob.name]
        lo, hi = t.iloc[0], t.iloc[-1]
        effects = t["difference"].to_numpy()
        trows.append({"knob": kr.knob.name, "base_value": kr.base, "low": lo["value"], "high": hi["value"],
                      "effect_low": lo["difference"], "effect_low_ci_low": lo["ci_low"],
                      "effect_low_ci_high": lo["ci_high"], "effect_high": hi["difference"],
                      "effect_high_ci_low": hi["ci_low"], "effect_high_ci_high": hi["ci_high"],
                      "p_holm": float(t["p_holm"].min()) if t["p_holm"].notna().any() else float("nan"),
                      "spread": float(max(effects.max(), 0.0) - min(effects.min(), 0.0))})
    tornado = pd.DataFrame(trows).sort_values("spread", ascending=False, kind="stable").reset_index(drop=True)
    pn, pp = policy_label(runner.polish)
    sn, sp = policy_label(runner.soviet)
    summary = {"scenario": str(scenario), "seed": int(seed), "games": int(games), "base": bv.name,
               "base_changes": bv.changes(), "polish": pn + (f" {pp}" if pp else ""),
               "soviet": sn + (f" {sp}" if sp else ""), "common_random_numbers": True,
               "base_polish_win": base_sum["polish_win"], "base_polish_win_ci": base_sum["polish_win_ci"],
               "base_vp_mean": base_sum["vp_mean"], "arms": len(arms),
               "base_games": base_sum["games"],
               "knobs": [{"knob": kr.knob.name, "base_value": kr.base, "values": kr.values, "skipped": kr.skipped,
                          "reason": kr.knob.reason if kr.skipped else ""} for kr in ranges]}
    return Sensitivity(scenario=str(scenario), base=bv, ranges=ranges, table=table, tornado=tornado, games=df,
                       seed=int(seed), summary=summary)
