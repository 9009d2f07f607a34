"""Tuning a knob to a target win rate (``soe-sim tune``): noisy root finding with intervals.

The win rate is modelled as ``logit P(win | x) = a + b x`` on the continuous relaxation of the knob
(integer knobs are only ever played at integers). :func:`search_crossing`:

1. plays ``batch`` games at the low end, the middle and the high end of the range;
2. fits the logistic curve to every game played so far (:func:`soe_sim.design.stats.fit_logistic`)
   and takes the crossing ``x*`` of the target with its 95 % Fieller interval
   (:func:`soe_sim.design.stats.crossing_interval`);
3. for an integer knob, once two consecutive integers ``k``, ``k + 1`` (each played ``batch`` games)
   bracket the target, takes ``x*`` and its interval from those two values alone (the logit
   interpolated between them), so that a curve which is not logistic over the whole range does not
   bias the answer;
4. plays the next ``batch`` games where they tell most about the crossing: at ``k`` and ``k + 1`` (or
   at ``floor(x*)`` and ``ceil(x*)``; at ``x* ± half the interval`` for a real knob); at the two ends
   while the slope is not yet significant; at the nearer end when ``x*`` lies outside the range;
5. stops when the interval lies between ``k`` and ``k + 1`` (integer knob) or is narrower than
   ``tol``, when the interval lies wholly outside the range (and the nearer end's own games agree),
   or when the game budget is spent;
6. for an integer knob whose search ends on a bracketing pair ``k``, ``k + 1``, plays a confirmation
   batch at both (a quarter of the budget, kept back from the search, fresh seed streams) and reports
   ``x*``, its interval and the fitted rates from those games alone. The search checks its stopping
   rule after every batch on the games it stops on, so its own interval is too narrow when the
   crossing sits at or next to an integer (optional stopping; audit J F1: 60 % coverage at 2.95, none
   at 3.00 exactly); the confirmation games are independent of that choice, so their interval has its
   nominal coverage whichever pair was chosen.

Every batch has its own seed stream, so the batches are independent samples (the binomial
likelihood of the fit holds). The result reports ``x*`` and its interval, and for integer knobs
the two integers around it with their observed win rates (95 % Wilson intervals) and fitted rates;
the recommended value is the one whose fitted rate is closest to the target.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from soe_sim.design.stats import crossing_interval, fit_logistic, wilson
from soe_sim.design.variant import BASE, knob_value, load_variant
from soe_sim.errors import Problem, SoeInputError

__all__ = ["search_crossing", "tune", "Tuning", "DEFAULT_SPAN"]

DEFAULT_SPAN = 3  # default range of an integer knob: its base value ± 3 …
SIGNED_KNOBS = ("scenario.vp",)  # … not below 0 when the base value is not, except for these signed knobs


def _clip(v, lo, hi):
    return min(max(v, lo), hi)


def aggregate(evals: pd.DataFrame) -> pd.DataFrame:
    """Evaluations summed per knob value: ``value, games, wins, rate, ci_low, ci_high``."""
    agg = evals.groupby("value", as_index=False)[["games", "wins"]].sum().sort_values("value")
    agg["rate"] = agg["wins"] / agg["games"]
    cis = [wilson(int(w), int(n)) for w, n in zip(agg["wins"], agg["games"])]
    agg["ci_low"] = [c[0] for c in cis]
    agg["ci_high"] = [c[1] for c in cis]
    return agg.reset_index(drop=True)


def _local_bracket(table: pd.DataFrame, target: float, increasing: bool, near: float, min_games: int):
    """The pair of consecutive integers ``(k, k + 1)``, both played at least ``min_games`` times, whose
    observed rates bracket ``target`` (in the direction of the curve), nearest to ``near``; or None."""
    rate = {int(v): (r, n) for v, r, n in zip(table["value"], table["rate"], table["games"])}
    best = None
    for k in sorted(rate):
        if k + 1 not in rate or rate[k][1] < min_games or rate[k + 1][1] < min_games:
            continue
        r0, r1 = rate[k][0], rate[k + 1][0]
        ok = (r0 <= target <= r1) if increasing else (r0 >= target >= r1)
        if ok and r0 != r1 and (best is None or abs(k + 0.5 - near) < abs(best + 0.5 - near)):
            best = k
    return best


def search_crossing(evaluate, low, high, *, integer: bool, target: float = 0.5, budget: int = 4000,
                    batch: int = 250, tol: float | None = None, callback=None) -> dict:
    """Find where a noisy, monotone win rate crosses ``target`` on ``[low, high]``.

    ``evaluate(value, games, stream) -> wins`` plays ``games`` independent games at ``value``
    (``stream`` numbers the batches from 1). Returns a dict with ``evaluations`` (one row per
    batch), ``table`` (per value), ``fit`` (the fit the crossing comes from), ``global_fit`` (the
    logistic fit to every value), ``mode`` (``local`` | ``global``), ``value`` (x*), ``ci_low``,
    ``ci_high``, ``bounded``, ``status`` (``converged`` | ``budget`` | ``out_of_range``: how the
    search ended), ``games``, ``confirmation_games`` (0 when no confirmation batch was played) and
    ``search`` (the search's own ``value``, ``ci_low``, ``ci_high``, ``fit``). ``evaluations`` has a
    ``confirmation`` column.

    An integer knob is steered by the logistic fit to every value played; once two consecutive
    integers, each played ``batch`` times, bracket the target, the crossing and its interval come
    from those two alone (a two-point logistic fit: the logit interpolated between them), so a curve
    that is not logistic over the whole range does not bias the answer. For an integer knob a quarter
    of ``budget`` is kept for the confirmation batch (module docstring, step 6).
    """
    if not low < high:
        raise ValueError("low must be below high")
    reserve = max(2, int(budget) // 4) if integer else 0
    search_budget = int(budget) - reserve
    batch = max(1, min(int(batch), search_budget // 3))
    rows: list[dict] = []
    used = 0

    def run(v, n, confirmation=False):
        nonlocal used
        v = int(v) if integer else float(v)
        w = int(evaluate(v, int(n), len(rows) + 1))
        rows.append({"value": v, "stream": len(rows) + 1, "games": int(n), "wins": w, "confirmation": confirmation})
        used += int(n)
        if callback is not None:
            callback(int(n))

    mid = (low + high) / 2
    init = sorted({int(low), int(round(mid)), int(high)}) if integer else [float(low), float(mid), float(high)]
    for v in init:
        run(v, batch)
    status = "budget"
    while True:
        table = aggregate(pd.DataFrame(rows))
        gfit = fit_logistic(table["value"], table["wins"], table["games"])
        fit, mode = gfit, "global"
        x, lo, hi, bounded = crossing_interval(gfit, target)
        k = None
        if integer and math.isfinite(x):
            k = _local_bracket(table, target, gfit.b >= 0, x, batch)
            if k is not None:
                t2 = table[table["value"].isin([k, k + 1])]
                fit, mode = fit_logistic(t2["value"], t2["wins"], t2["games"]), "local"
                x, lo, hi, bounded = crossing_interval(fit, target)
        if mode == "global" and bounded and (hi < low or lo > high):
            # the whole interval is outside the range, and the nearer end's own games agree
            end = low if hi < low else high
            t_end = table[table["value"] == end]
            if len(t_end) and not (t_end["ci_low"].iloc[0] <= target <= t_end["ci_high"].iloc[0]):
                status = "out_of_range"
                break
        if mode == "local" and bounded and k <= lo and hi <= k + 1:
            status = "converged"  # the crossing lies between the two integers k and k + 1
            break
        if not integer and bounded and tol is not None and hi - lo <= tol and low <= lo and hi <= high:
            status = "converged"
            break
        if used + 1 > search_budget:
            break
        if mode == "local":
            pts = [k, k + 1]
        elif not bounded or not math.isfinite(x):
            pts = [low, high]  # slope not yet significant: the ends tell most about it
        elif x < low or x > high:
            pts = [low if x < low else high]
        elif integer:
            pts = sorted({int(_clip(math.floor(x), low, high)), int(_clip(math.ceil(x), low, high))})
        else:
            w = (hi - lo) / 2
            pts = sorted({_clip(x - w, low, high), _clip(x + w, low, high)})
        n_each = max(1, min(batch, search_budget - used) // len(pts))
        for p in pts:
            if used + n_each > search_budget:
                break
            run(p, n_each)
    search = {"value": x, "ci_low": lo, "ci_high": hi, "bounded": bounded, "fit": fit}
    confirmation_games = 0
    if integer and mode == "local":
        n_each = min(reserve, int(budget) - used) // 2
        if n_each >= 1:
            first = len(rows)
            run(k, n_each, True)
            run(k + 1, n_each, True)
            conf = pd.DataFrame(rows[first:])
            fit = fit_logistic(conf["value"], conf["wins"], conf["games"])
            x, lo, hi, bounded = crossing_interval(fit, target)
            confirmation_games = 2 * n_each
    evals = pd.DataFrame(rows)
    table = aggregate(evals)
    table["fitted"] = gfit.rate(table["value"])
    return {"evaluations": evals, "table": table, "fit": fit, "global_fit": gfit, "mode": mode, "value": x,
            "ci_low": lo, "ci_high": hi, "bounded": bounded, "status": status, "games": used,
            "confirmation_games": confirmation_games, "search": search}


@dataclass
class Tuning:
    """What :func:`tune` returns."""

    scenario: str
    knob: str
    target: float
    side: str
    base_value: float
    low: float
    high: float
    integer: bool
    result: dict
    candidates: pd.DataFrame
    recommended: float
    games: pd.DataFrame | None = None
    summary: dict = field(default_factory=dict)

    @property
    def value(self) -> float:
        """The fitted crossing x*."""
        return self.result["value"]

    @property
    def interval(self) -> tuple[float, float]:
        """95 % interval of the crossing."""
        return self.result["ci_low"], self.result["ci_high"]

    @property
    def evaluations(self) -> pd.DataFrame:
        return self.result["evaluations"]

    @property
    def table(self) -> pd.DataFrame:
        return self.result["table"]

    def to_dict(self) -> dict:
        return self.summary

    def plot(self):
        """Observed rates, the fitted curve and the crossing (:func:`soe_sim.design.plot.tune_figure`)."""
        from soe_sim.design.plot import tune_figure

        return tune_figure(self)

    def format_table(self) -> str:
        s = self.summary
        lo, hi = s["ci_low"], s["ci_high"]
        lines = [f"{s['scenario']}: tune {s['knob']} (base value {_fmt(s['base_value'])}, range {_fmt(s['low'])}.."
                 f"{_fmt(s['high'])}) for a {s['side']} win rate of {100 * s['target']:.1f} %; "
                 f"{s['games']} games, seed {s['seed']}, {s['polish']} (Polish) vs {s['soviet']} (Soviet)"]
        lines.append(f"  crossing {s['value']:.3f}, 95 % CI [{lo:.3f}, {hi:.3f}]"
                     + ("" if s["bounded"] else " (unbounded: the effect is not significant)")
                     + f"; status {s['status']}")
        if not (float(s["low"]) <= s["value"] <= float(s["high"])):
            lines.append(f"  warning: the crossing lies outside the range searched ({_fmt(s['low'])}.."
                         f"{_fmt(s['high'])}): it is an extrapolation of the fitted curve; widen the range "
                         f"(--knob NAME=LOW:HIGH) to play values around it")
        for c in s["candidates"]:
            obs = (f"observed {100 * c['rate']:.1f} % [{100 * c['ci_low']:.1f}, {100 * c['ci_high']:.1f}] "
                   f"in {c['games']} games" if c["games"] else "not played")
            star = "  <- recommended" if c["value"] == s["recommended"] else ""
            lines.append(f"  {s['knob']} = {_fmt(c['value'])}: fitted {100 * c['fitted']:.1f} % "
                         f"[{100 * c['fitted_low']:.1f}, {100 * c['fitted_high']:.1f}], {obs}{star}")
        f, g = s["fit"], s["global_fit"]
        if s.get("confirmation_games"):
            sl, sh = s["search_ci"]
            lines.append(f"  crossing and interval from {s['confirmation_games']} confirmation games at the two "
                         f"integers around it, played after the search: logit P = {f['a']:.3f} + {f['b']:.4f} x "
                         f"(the search's own estimate {s['search_value']:.3f} [{sl:.3f}, {sh:.3f}] is not adjusted "
                         f"for when it stopped)")
        elif s["mode"] == "local":
            lines.append(f"  crossing from the two integers around it: logit P = {f['a']:.3f} + {f['b']:.4f} x")
        lines.append(f"  logistic fit to every value: logit P = {g['a']:.3f} + {g['b']:.4f} x (slope z {g['slope_z']:.1f}; "
                     f"deviance {g['deviance']:.2f} on {g['df']} df"
                     + (f", p = {g['fit_p_value']:.3g}" if g["df"] > 0 else "") + ")")
        lines.append("  played: " + ", ".join(f"{_fmt(r['value'])}: {r['wins']}/{r['games']}" for r in s["table"]))
        return "\n".join(lines)


def _fmt(v) -> str:
    try:
        return str(int(v)) if float(v) == int(v) else f"{float(v):g}"
    except (OverflowError, ValueError):
        return str(v)


def _candidates(res: dict, low, high, integer: bool, target: float) -> tuple[pd.DataFrame, float]:
    fit, x = res["fit"], res["value"]
    table = res["table"]
    if not math.isfinite(x):
        vals = [table.iloc[int(np.argmin(np.abs(table["rate"] - target)))]["value"]]
    elif integer:
        vals = sorted({int(_clip(math.floor(x), low, high)), int(_clip(math.ceil(x), low, high))})
    else:
        vals = [float(_clip(x, low, high))]
    rows = []
    for v in vals:
        t = table[table["value"] == v]
        n = int(t["games"].sum()) if len(t) else 0
        w = int(t["wins"].sum()) if len(t) else 0
        ci = wilson(w, n) if n else (float("nan"), float("nan"))
        f_lo, f_hi = fit.rate_interval(v)
        rows.append({"value": v, "games": n, "wins": w, "rate": w / n if n else float("nan"),
                     "ci_low": ci[0], "ci_high": ci[1], "fitted": float(fit.rate(v)),
                     "fitted_low": float(f_lo), "fitted_high": float(f_hi)})
    cand = pd.DataFrame(rows)
    best = cand.iloc[int(np.argmin(np.abs(cand["fitted"] - target)))]["value"]
    return cand, (int(best) if integer else float(best))


def _fit_dict(fit) -> dict:
    return {"a": fit.a, "b": fit.b, "slope_z": fit.slope_z, "deviance": fit.deviance, "df": fit.df,
            "fit_p_value": fit.fit_p_value, "haldane_correction": fit.corrected}


def _records(df: pd.DataFrame) -> list:
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()} for r in df.to_dict("records")]


def tune(scenario, knob: str, target: float = 0.5, *, low=None, high=None, base=None, side: str = "polish",
         games: int = 4000, batch: int = 250, tol: float | None = None, seed: int = 0, polish="random",
         soviet="random", runner=None, threads: int | None = 1, chunk_size: int | None = None,
         progress: bool = False, dask: bool = False, scheduler: str | None = None, work_dir=None,
         keep_games: bool = True) -> Tuning:
    """The value of ``knob`` that brings ``side``'s win rate closest to ``target``.

    Parameters
    ----------
    knob : str
        A knob name (``rules.combat.flank_penalty``, ``scenario.vp``, …), optionally with its range
        ``NAME=LOW:HIGH``.
    low, high : number
        Search range (default: an integer knob's base value ± 3, not below 0 unless the base value is
        negative or the knob is signed (``scenario.vp``); a real knob's half to double).
    games : int
        Game budget over the whole search (for an integer knob a quarter of it is kept for the
        confirmation batch at the two integers around the crossing; :func:`search_crossing`).
    batch : int
        Games per evaluation round.
    tol : float
        Stop when the crossing's interval is narrower (real knobs; integer knobs stop once the
        interval lies between two consecutive integers).

    Returns
    -------
    Tuning
        ``value`` (x*) and ``interval``, ``candidates`` (the integers around x* with observed and
        fitted rates), ``recommended``, ``evaluations``, the per-game frame ``games``.
    """
    from tqdm.auto import tqdm

    from soe_sim.design.runner import Runner
    from soe_sim.design.sensitivity import parse_knob_range
    from soe_sim.sim import policy_label

    if isinstance(target, bool) or not isinstance(target, (int, float)) or not 0 < float(target) < 1:
        raise SoeInputError(Problem("--target", "", "", target, "the target win rate must be between 0 and 1",
                                    "e.g. --target 0.5"))
    if tol is not None and (isinstance(tol, bool) or not isinstance(tol, (int, float)) or not float(tol) > 0
                            or float(tol) != float(tol)):
        raise SoeInputError(Problem("--tol", "", "", tol, "the interval width to stop at must be a positive number",
                                    "e.g. --tol 0.1 (in the knob's units)"))
    if side not in ("polish", "soviet"):
        from soe_sim.errors import did_you_mean

        raise SoeInputError(Problem("--side", "", "", side, "unknown side", did_you_mean(str(side), ["polish", "soviet"])))
    if isinstance(games, bool) or int(games) < 3:
        raise SoeInputError(Problem("--games", "", "", games, "the game budget must be at least 3"))
    if int(batch) < 1:
        raise SoeInputError(Problem("--batch", "", "", batch, "expected at least 1 game per round"))
    name = str(knob)
    if "=" in name:
        name, low, high, _ = parse_knob_range(name)
    bv = load_variant(base) if base is not None else BASE
    k, base_value = knob_value(scenario, bv, name)
    explicit = low is not None or high is not None
    if low is None:
        low = base_value - DEFAULT_SPAN if k.integer else (base_value / 2 if base_value > 0 else base_value - 1)
        if k.integer and base_value >= 0 and k.name not in SIGNED_KNOBS:
            low = max(low, 0)
    if high is None:
        high = base_value + DEFAULT_SPAN if k.integer else (base_value * 2 if base_value > 0 else base_value + 1)
    if k.integer:
        if float(low) != int(low) or float(high) != int(high):
            raise SoeInputError(Problem("--knob", "", "", f"{name}={low}:{high}", f"{name} takes integers"))
        low, high = int(low), int(high)
    if not low < high:
        raise SoeInputError(Problem("--knob", "", "", f"{name}={low}:{high}", "LOW must be below HIGH"))
    own = runner is None
    if own:
        runner = Runner(scenario, polish, soviet, threads=threads, chunk_size=chunk_size, progress=False,
                        dask=dask, scheduler=scheduler, work_dir=work_dir)
    try:
        def check(v) -> SoeInputError | None:
            try:
                runner.setups([bv.with_knob(k, v)])
            except SoeInputError as err:
                return err
            return None

        if explicit or not k.integer:
            for v in (low, high):
                err = check(v)
                if err is not None:
                    p = err.problems[0]
                    raise SoeInputError(Problem("--knob", "", "", f"{name}={_fmt(v)}", f"not a playable value: "
                                                f"{getattr(p, 'message', p)}", "give a narrower range NAME=LOW:HIGH"))
        else:  # default range: pulled in towards the base value until both ends play
            while low < base_value and check(low) is not None:
                low += 1
            while high > base_value and check(high) is not None:
                high -= 1
            if not low < high:
                raise SoeInputError(Problem("--knob", "", "", name, "no playable range around the base value",
                                            "give one: NAME=LOW:HIGH"))
        parts: list[pd.DataFrame] = []

        def evaluate(v, n, stream):
            df = runner.play([bv.with_knob(k, v)], n, seed, stream=stream, tag=f"tune-{stream:03d}")
            df.insert(2, "stream", np.int64(stream))
            df.insert(3, "knob_value", v)
            if keep_games:
                parts.append(df)
            return int((df["winner"] == side).sum())

        with tqdm(total=int(games), unit="game", disable=not progress, desc=f"tune {name}", leave=False) as bar:
            res = search_crossing(evaluate, low, high, integer=k.integer, target=float(target), budget=int(games),
                                  batch=int(batch), tol=tol, callback=bar.update)
    finally:
        if own:
            runner.close()
    cand, best = _candidates(res, low, high, k.integer, float(target))
    fit = res["fit"]
    pn, pp = policy_label(runner.polish)
    sn, sp = policy_label(runner.soviet)
    best_row = cand[cand["value"] == best].iloc[0]
    summary = {
        "scenario": str(scenario), "knob": k.name, "target": float(target), "side": side, "base": bv.name,
        "base_value": base_value, "low": low, "high": high, "integer": k.integer, "seed": int(seed),
        "polish": pn + (f" {pp}" if pp else ""), "soviet": sn + (f" {sp}" if sp else ""),
        "value": float(res["value"]), "ci_low": float(res["ci_low"]), "ci_high": float(res["ci_high"]),
        "bounded": bool(res["bounded"]), "status": res["status"], "games": int(res["games"]),
        "recommended": best, "recommended_rate": float(best_row["fitted"]),
        "recommended_rate_ci": [float(best_row["fitted_low"]), float(best_row["fitted_high"])],
        "recommended_observed": None if not best_row["games"] else float(best_row["rate"]),
        "recommended_observed_ci": None if not best_row["games"] else [float(best_row["ci_low"]),
                                                                        float(best_row["ci_high"])],
        "candidates": _records(cand), "table": _records(res["table"]), "evaluations": _records(res["evaluations"]),
        "mode": res["mode"], "fit": _fit_dict(fit), "global_fit": _fit_dict(res["global_fit"]),
        "confirmation_games": int(res["confirmation_games"]),
        "search_value": float(res["search"]["value"]), "search_ci": [float(res["search"]["ci_low"]),
                                                                     float(res["search"]["ci_high"])],
    }
    games_df = pd.concat(parts, ignore_index=True) if parts else None
    return Tuning(scenario=str(scenario), knob=k.name, target=float(target), side=side, base_value=base_value,
                  low=low, high=high, integer=k.integer, result=res, candidates=cand, recommended=best,
                  games=games_df, summary=summary)
