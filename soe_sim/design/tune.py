"""Tuning a knob to a target win rate (``soe-sim tune``): noisy root finding with intervals.

The win rate is modelled as ``logit P(win | x) = a + b x`` on the continuous relaxation of the knob
(integer knobs are only ever played at integers). ``x`` is the knob's *position*
(:meth:`soe_sim.design.variant.Knob.position`): its value, except for a knob that skips values —
``scenario.vp`` has no 0 (the VP track has no 0 space, SoE 7.8), so its positions are … -2, -1 for
the values -2, -1 and 0, 1 … for +1, +2 …, and -1 and +1 are neighbours. :func:`tune` searches on
positions and reports values. :func:`search_crossing`:

1. plays ``batch`` games at the low end, the middle and the high end of the range (``batch`` is
   reduced, and the result says so, when three rounds would not fit in the search's games);
2. fits the logistic curve to every game played so far (:func:`soe_sim.design.stats.fit_logistic`)
   and takes the crossing ``x*`` of the target with its 95 % Fieller interval
   (:func:`soe_sim.design.stats.crossing_interval`);
3. for an integer knob, once two consecutive integers ``k``, ``k + 1`` (each played ``batch`` games)
   bracket the target, takes ``x*`` and its interval from those two values alone (the logit
   interpolated between them), so that a curve which is not logistic over the whole range does not
   bias the answer;
4. plays the next ``batch`` games where they tell most about the crossing: at ``k`` and ``k + 1`` (or
   at ``floor(x*)`` and ``ceil(x*)``; at ``x* ± half the interval`` for a real knob); at the two ends
   while the slope is not yet significant; at the nearer end when ``x*`` lies outside the range. When
   the logistic fit to every value is rejected (goodness of fit p < :data:`GOF_ALPHA`), or when
   ``floor(x*)`` and ``ceil(x*)`` have both had ``batch`` games without bracketing the target, the
   fitted curve no longer steers: the games go between the two played values whose observed rates
   bracket the target (:func:`_observed_points`);
5. stops when the interval lies between ``k`` and ``k + 1`` (integer knob) or is narrower than
   ``tol`` (real knob, with a logistic fit that is not rejected), when the interval lies wholly
   outside the range (and the nearer end's own games agree), or when the game budget is spent. An
   integer knob keeps a quarter of the budget for step 6; when its search has found no bracketing
   pair by the time the rest is spent, the search goes on with that quarter (and if it then finds a
   pair, what is left confirms it);
6. for an integer knob whose search ends on a bracketing pair ``k``, ``k + 1``, plays a confirmation
   batch at both with every game left (at least the quarter kept back; fresh seed streams) and
   reports ``x*``, its interval and the fitted rates from those games alone. The search checks its
   stopping rule after every batch on the games it stops on, so its own interval is too narrow when
   the crossing sits at or next to an integer (optional stopping; audit J F1: 60 % coverage at 2.95,
   none at 3.00 exactly); the confirmation games are independent of that choice, so their interval
   has its nominal coverage whichever pair was chosen.

The **status** describes the interval reported: ``converged`` when it lies between two neighbouring
values ``k`` and ``k + 1`` (for a real knob: narrower than ``tol``), ``out_of_range`` when it lies
wholly outside the range, ``budget`` otherwise (the budget is spent and the interval is wider);
``search_status`` says how the search itself stopped. A search whose own interval converged can end
with ``budget`` when the confirmation games' interval is wider than one step.

When the search ends without a bracketing pair and the logistic fit to every value is rejected, its
Fieller interval would rest on a curve the data refute: the result then comes from the played values
(``mode`` ``bracket``, :func:`_bracket_estimate`) — ``x*`` interpolated between the two played values
whose rates bracket the target, and the interval from the nearest played value whose win rate is
significantly on one side of the target to the nearest one significantly on the other (wide, and
valid for any monotone curve).

Every batch has its own seed stream, so the batches are independent samples (the binomial
likelihood of the fit holds). The result reports ``x*`` and its interval, and for integer knobs
the two integers around it with their observed win rates (95 % Wilson intervals) and fitted rates;
the recommended value is the one whose fitted rate is closest to the target. ``notes`` says what the
search changed or left out (a reduced batch, the kept quarter played in the search, games not played
and why, a rejected fit).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from soe_sim.design.stats import crossing_interval, fit_logistic, p_relation, wilson
from soe_sim.design.variant import BASE, KNOB_DOMAINS, Knob, knob_value, load_variant
from soe_sim.errors import Problem, SoeInputError

__all__ = ["search_crossing", "tune", "Tuning", "DEFAULT_SPAN", "GOF_ALPHA"]

DEFAULT_SPAN = 3  # default range of an integer knob: its base position ± 3 …
#: … not below 0 when the base value is not, except for these signed knobs (KNOB_DOMAINS)
SIGNED_KNOBS = tuple(n for n, d in KNOB_DOMAINS.items() if d.get("signed"))
#: A logistic fit to every value with a goodness-of-fit p-value below this is rejected: it no longer
#: steers the search, and its interval is never the answer.
GOF_ALPHA = 0.05


def _clip(v, lo, hi):
    return min(max(v, lo), hi)


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def aggregate(evals: pd.DataFrame) -> pd.DataFrame:
    """Evaluations summed per knob value: ``value, games, wins, rate, ci_low, ci_high``."""
    agg = evals.groupby("value", as_index=False)[["games", "wins"]].sum().sort_values("value")
    agg["rate"] = agg["wins"] / agg["games"]
    cis = [wilson(int(w), int(n)) for w, n in zip(agg["wins"], agg["games"])]
    agg["ci_low"] = [c[0] for c in cis]
    agg["ci_high"] = [c[1] for c in cis]
    return agg.reset_index(drop=True)


def _rejected(fit) -> bool:
    """The logistic shape is refuted by the values played (deviance goodness of fit; needs 3 values)."""
    return fit.df > 0 and fit.fit_p_value < GOF_ALPHA


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


def _observed_brackets(table: pd.DataFrame, target: float, increasing: bool) -> list[int]:
    """Rows ``i`` of ``table`` whose observed rate lies before the crossing (below the target on a
    rising curve) while row ``i + 1``'s does not: the played neighbours that bracket the target."""
    r = table["rate"].to_numpy()
    before = (r < target) if increasing else (r > target)
    return [i for i in range(len(r) - 1) if before[i] and not before[i + 1]]


def _interpolate(table: pd.DataFrame, i: int, target: float) -> float:
    """Where the logit of the observed rates (½-corrected) between rows ``i`` and ``i + 1`` meets the target."""
    v = table["value"].to_numpy(float)
    lg = [_logit((table["wins"].iloc[j] + 0.5) / (table["games"].iloc[j] + 1.0)) for j in (i, i + 1)]
    t = 0.5 if lg[1] == lg[0] else _clip((_logit(target) - lg[0]) / (lg[1] - lg[0]), 0.0, 1.0)
    return float(v[i] + t * (v[i + 1] - v[i]))


def _observed_points(table: pd.DataFrame, target: float, increasing: bool, low, high, integer: bool, near: float):
    """Where to play next from the observed rates alone: between the two played values nearest ``near``
    whose rates bracket the target (both, when they are consecutive integers, until each has its
    ``batch`` games; else the integer, or for a real knob the point, where the logit interpolated
    between them meets the target); the nearer end when every rate lies on one side; or None."""
    pairs = _observed_brackets(table, target, increasing)
    v = table["value"].to_numpy(float)
    if not pairs:
        r = table["rate"].to_numpy()
        before = (r < target) if increasing else (r > target)
        if before.all():
            return [high]
        if not before.any():
            return [low]
        return None
    i = min(pairs, key=lambda j: abs((v[j] + v[j + 1]) / 2 - near) if math.isfinite(near) else 0.0)
    u, w = v[i], v[i + 1]
    xi = _interpolate(table, i, target)
    if not integer:
        return [xi]
    if w - u <= 1:
        return [int(u), int(w)]
    return [int(_clip(round(xi), u + 1, w - 1))]


def _bracket_estimate(table: pd.DataFrame, gfit, target: float):
    """``(x*, low, high, bounded, fit)`` from the played values alone, for when the logistic fit to every
    value is rejected: ``x*`` from the two-point fit between the played neighbours whose rates bracket
    the target; the interval from the nearest played value whose 95 % Wilson interval lies wholly before
    the target (in the direction of the curve) to the nearest one wholly past it — for any monotone
    curve the crossing lies between them. An end with no such value is unbounded."""
    increasing = gfit.b >= 0
    v = table["value"].to_numpy(float)
    lo_ci, hi_ci = table["ci_low"].to_numpy(), table["ci_high"].to_numpy()
    sure_before = (hi_ci < target) if increasing else (lo_ci > target)
    sure_past = (lo_ci > target) if increasing else (hi_ci < target)
    left = float(v[sure_before].max()) if sure_before.any() else float("-inf")
    right = float(v[sure_past].min()) if sure_past.any() else float("inf")
    gx = crossing_interval(gfit, target)[0]
    pairs = _observed_brackets(table, target, increasing)
    fit, x = gfit, gx
    if pairs:
        mid = (left + right) / 2 if math.isfinite(left) and math.isfinite(right) else gx
        i = min(pairs, key=lambda j: abs((v[j] + v[j + 1]) / 2 - mid) if math.isfinite(mid) else 0.0)
        t2 = table.iloc[[i, i + 1]]
        fit = fit_logistic(t2["value"], t2["wins"], t2["games"])
        x = crossing_interval(fit, target)[0]
        if not (v[i] <= x <= v[i + 1]):
            x = _interpolate(table, i, target)
    if not math.isfinite(x):
        x = float(v[int(np.argmin(np.abs(table["rate"].to_numpy() - target)))])
    lo, hi = min(left, right, x), max(left, right, x)
    return float(x), float(lo), float(hi), bool(math.isfinite(lo) and math.isfinite(hi)), fit


def _next_points(table, gfit, x, lo, hi, bounded, low, high, integer: bool, target: float, batch: int) -> list:
    """Where the next round is played when no bracketing pair steers the search (step 4)."""
    if not bounded or not math.isfinite(x):
        pts = [low, high]  # slope not yet significant: the ends tell most about it
    elif x < low or x > high:
        pts = [low if x < low else high]
    elif integer:
        pts = sorted({int(_clip(math.floor(x), low, high)), int(_clip(math.ceil(x), low, high))})
    else:
        w = (hi - lo) / 2
        pts = sorted({_clip(x - w, low, high), _clip(x + w, low, high)})
    games = dict(zip(table["value"], table["games"]))
    stale = integer and len(pts) == 2 and all(games.get(p, 0) >= batch for p in pts)  # played, no bracket
    if _rejected(gfit) or stale:
        obs = _observed_points(table, target, gfit.b >= 0, low, high, integer, x)
        if obs:
            pts = obs
    return pts


def search_crossing(evaluate, low, high, *, integer: bool, target: float = 0.5, budget: int = 4000,
                    batch: int = 250, tol: float | None = None, callback=None) -> dict:
    """Find where a noisy, monotone win rate crosses ``target`` on ``[low, high]`` (module docstring).

    Parameters
    ----------
    evaluate : callable
        ``evaluate(value, games, stream) -> wins`` plays ``games`` independent games at ``value``
        (``stream`` numbers the batches from 1).
    low, high : number
        The range searched (for an integer knob, integers: the positions of :func:`tune`).
    integer : bool
        Integer knob: played at integers only, with a confirmation batch (step 6).
    target : float
        The win rate sought.
    budget : int
        Games in all. Every game is played unless the search stops early because the crossing lies
        outside the range, or a real knob's interval is narrower than ``tol`` (``notes`` says so).
    batch : int
        Games per round (reduced, with a note, when three rounds do not fit in the search's games).
    tol : float, optional
        A real knob's search stops when the interval is narrower.
    callback : callable, optional
        Called with the number of games after every batch (a progress bar).

    Returns
    -------
    dict
        ``evaluations`` (one row per batch, with a ``confirmation`` column), ``table`` (per value, with
        the global fit's ``fitted`` rate), ``fit`` (the fit the crossing comes from), ``global_fit``
        (the logistic fit to every value), ``global_fit_rejected``, ``mode`` (``local``: from two
        neighbouring integers | ``global``: from the logistic fit to every value | ``bracket``: from
        the played values, the global fit being rejected), ``value`` (x*), ``ci_low``, ``ci_high``,
        ``bounded``, ``status`` (``converged`` | ``budget`` | ``out_of_range``: what the interval
        reported achieves), ``search_status`` (how the search stopped), ``bracket`` (``[k, k + 1]`` in
        local mode, else None), ``games``, ``budget``, ``batch`` (games per round used),
        ``confirmation_games`` (0 when no confirmation batch was played), ``search`` (the search's own
        ``value``, ``ci_low``, ``ci_high``, ``bounded``, ``fit``, ``mode``, ``games``) and ``notes``.
    """
    if not low < high:
        raise ValueError("low must be below high")
    budget = int(budget)
    reserve = max(2, budget // 4) if integer else 0
    search_budget = budget - reserve
    asked = int(batch)
    batch = max(1, min(asked, search_budget // 3))
    notes: list[str] = []
    if batch < asked:
        notes.append(f"{batch} games per round instead of {asked}: three opening rounds must fit in the search's "
                     f"{search_budget} games" + (f" (the budget of {budget} less the {reserve} kept for the "
                                                 f"confirmation batch)" if reserve else ""))
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
    limit, released, search_status = search_budget, False, "budget"
    while True:
        table = aggregate(pd.DataFrame(rows))
        gfit = fit_logistic(table["value"], table["wins"], table["games"])
        rejected = _rejected(gfit)
        fit, mode, k = gfit, "global", None
        x, lo, hi, bounded = crossing_interval(gfit, target)
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
                search_status = "out_of_range"
                break
        if mode == "local" and bounded and k <= lo and hi <= k + 1:
            search_status = "converged"  # the crossing lies between the two integers k and k + 1
            break
        if (not integer and not rejected and bounded and tol is not None and hi - lo <= tol
                and low <= lo and hi <= high):
            search_status = "converged"
            break
        if integer and (used >= limit or released):
            if mode != "local":  # at the end, any two played neighbours around the target will do: the
                near = x if math.isfinite(x) else (low + high) / 2  # confirmation batch is what is reported
                k = _local_bracket(table, target, gfit.b >= 0, near, 1)
                if k is not None:
                    t2 = table[table["value"].isin([k, k + 1])]
                    fit, mode = fit_logistic(t2["value"], t2["wins"], t2["games"]), "local"
                    x, lo, hi, bounded = crossing_interval(fit, target)
            if mode == "local":
                break  # what is left confirms the pair
            if used >= limit and limit < budget:
                limit, released = budget, True  # no bracketing pair yet: search on with the kept quarter
        if used >= limit:
            break
        pts = [k, k + 1] if mode == "local" else _next_points(table, gfit, x, lo, hi, bounded, low, high, integer,
                                                              target, batch)
        left = limit - used
        n = left if left - batch < max(2, batch // 4) else batch  # no round of a few games left over
        for i, p in enumerate(pts):
            m = n // len(pts) + (i < n % len(pts))
            if m:
                run(p, m)
    if mode == "global" and rejected:  # never report the interval of a fit the data refute
        x, lo, hi, bounded, fit = _bracket_estimate(table, gfit, target)
        mode = "bracket"
        notes.append(f"the logistic fit to every value is rejected (goodness of fit p {p_relation(gfit.fit_p_value)}): "
                     f"the crossing is interpolated between the played values around it, and its interval runs "
                     f"from the nearest played value whose win rate is significantly on one side of the target to "
                     f"the nearest one significantly on the other")
    if released:
        notes.append(f"no two neighbouring values bracketed the target within the search's {search_budget} games, "
                     f"so the search went on with the {reserve} games kept for the confirmation batch"
                     + (f"; it found them after {used} games" if mode == "local" else ""))
    search_games = used
    search = {"value": x, "ci_low": lo, "ci_high": hi, "bounded": bounded, "fit": fit, "mode": mode,
              "games": search_games}
    status = search_status
    confirmation_games = 0
    if integer and mode == "local":
        n = budget - used
        if n >= 2:
            first = len(rows)
            run(k, n // 2, True)
            run(k + 1, n - n // 2, True)
            conf = pd.DataFrame(rows[first:])
            fit = fit_logistic(conf["value"], conf["wins"], conf["games"])
            x, lo, hi, bounded = crossing_interval(fit, target)
            confirmation_games = n
            status = "converged" if bounded and k <= lo and hi <= k + 1 else "budget"
            if search_status == "converged" and status != "converged":
                notes.append("the search's own interval lay between the two values, but the confirmation games' "
                             "interval does not: the crossing may lie at or beyond one of them; more games "
                             "(--games) narrow it")
        else:
            notes.append("too few games were left for a confirmation batch: the interval is the search's own, not "
                         "adjusted for when the search stopped")
    if used < budget:
        why = {"out_of_range": "the crossing lies outside the range and the nearer end's own games agree (widen "
                               "the range to find it)",
               "converged": "the interval is narrower than the tolerance"}.get(search_status, "too few were left "
                                                                                          "for another round")
        notes.append(f"{budget - used} of the {budget} games were not played: {why}")
    evals = pd.DataFrame(rows)
    table = aggregate(evals)
    table["fitted"] = gfit.rate(table["value"])
    return {"evaluations": evals, "table": table, "fit": fit, "global_fit": gfit, "global_fit_rejected": rejected,
            "mode": mode, "value": x, "ci_low": lo, "ci_high": hi, "bounded": bounded, "status": status,
            "search_status": search_status, "bracket": [k, k + 1] if mode == "local" else None, "games": used,
            "budget": budget, "batch": batch, "confirmation_games": confirmation_games, "search": search,
            "notes": notes}


@dataclass
class Tuning:
    """What :func:`tune` returns (knob values throughout; the fits are on the knob's positions)."""

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
    domain: Knob | None = None  # the knob, for its positions (scenario.vp skips 0)

    @property
    def value(self) -> float:
        """The fitted crossing x*."""
        return self.result["value"]

    @property
    def interval(self) -> tuple[float, float]:
        """95 % interval of the crossing."""
        return self.result["ci_low"], self.result["ci_high"]

    @property
    def status(self) -> str:
        """``converged`` | ``budget`` | ``out_of_range`` (:func:`search_crossing`)."""
        return self.result["status"]

    @property
    def evaluations(self) -> pd.DataFrame:
        return self.result["evaluations"]

    @property
    def table(self) -> pd.DataFrame:
        return self.result["table"]

    def position(self, value):
        """The position of a knob value, the ``x`` of the fits (the value itself unless the knob skips values)."""
        return self.domain.position(value) if self.domain is not None else value

    def to_dict(self) -> dict:
        return self.summary

    def plot(self):
        """Observed rates, the fitted curve and the crossing (:func:`soe_sim.design.plot.tune_figure`)."""
        from soe_sim.design.plot import tune_figure

        return tune_figure(self)

    def format_table(self) -> str:
        s = self.summary
        lo, hi = s["ci_low"], s["ci_high"]
        played = f"{s['games']} games" if s["games"] == s["budget"] else f"{s['games']} of {s['budget']} games"
        lines = [f"{s['scenario']}: tune {s['knob']} (base value {_fmt(s['base_value'])}, range {_fmt(s['low'])}.."
                 f"{_fmt(s['high'])}) for a {s['side']} win rate of {100 * s['target']:.1f} %; "
                 f"{played}, seed {s['seed']}, {s['polish']} (Polish) vs {s['soviet']} (Soviet)"]
        source = {"bracket": " between the played values around it (the logistic fit to every value is rejected)",
                  "global": " from the logistic fit to every value"}.get(s["mode"], "")
        lines.append(f"  crossing {s['value']:.3f}, 95 % CI [{lo:.3f}, {hi:.3f}]{source}"
                     + ("" if s["bounded"] else " (unbounded: the effect is not significant)" if math.isinf(lo)
                        and math.isinf(hi) else " (unbounded on one side)")
                     + f"; status {s['status']}" + _STATUS_TEXT.get(s["status"], ""))
        if s.get("skipped"):
            lines.append(f"  {s['knob']} skips {', '.join(_fmt(v) for v in s['skipped'])}: {s['skip_reason']}; "
                         f"the fits are on its positions x, in which they are neighbours (" + ", ".join(
                             f"{_fmt(v)} is x = {_fmt(p)}" for v, p in s["positions"]) + ")")
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
                         f"values around it, played after the search: logit P = {f['a']:.3f} + {f['b']:.4f} x "
                         f"(the search stopped with status {s['search_status']} after {s['search_games']} games; its "
                         f"own estimate {s['search_value']:.3f} [{sl:.3f}, {sh:.3f}] is not adjusted for when it "
                         f"stopped)")
        elif s["mode"] == "local":
            lines.append(f"  crossing from the two values around it: logit P = {f['a']:.3f} + {f['b']:.4f} x")
        elif s["mode"] == "bracket":
            lines.append(f"  crossing from the two played values around it: logit P = {f['a']:.3f} + {f['b']:.4f} x")
        lines.append(f"  logistic fit to every value: logit P = {g['a']:.3f} + {g['b']:.4f} x "
                     f"(slope z {g['slope_z']:.1f}; deviance {g['deviance']:.2f} on {g['df']} df"
                     + (f", p = {g['fit_p_value']:.3g}" if g["df"] > 0 else "") + ")"
                     + ("; rejected: the logistic shape does not fit the values played" if s["global_fit_rejected"]
                        else ""))
        for note in s["notes"]:
            lines.append(f"  note: {note}")
        lines.append("  played: " + ", ".join(f"{_fmt(r['value'])}: {r['wins']}/{r['games']}" for r in s["table"]))
        return "\n".join(lines)


_STATUS_TEXT = {"converged": " (the interval lies between two neighbouring values)",
                "budget": " (the budget is spent; the interval does not lie between two neighbouring values)",
                "out_of_range": " (the interval lies outside the range)"}


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


def _to_values(res: dict, k: Knob) -> dict:
    """``res`` of a search on positions with knob values in place of positions (the fits stay on positions;
    ``table`` and ``evaluations`` keep the positions in a ``position`` column)."""
    if not k.excluded:
        return res
    out = dict(res)
    for key in ("evaluations", "table"):
        df = res[key].copy()
        df.insert(df.columns.get_loc("value") + 1, "position", df["value"])
        df["value"] = [k.value_at(p) for p in df["position"]]
        out[key] = df
    for key in ("value", "ci_low", "ci_high"):
        out[key] = float(k.value_at(res[key]))
    out["search"] = {**res["search"], **{key: float(k.value_at(res["search"][key]))
                                         for key in ("value", "ci_low", "ci_high")}}
    if res.get("bracket"):
        out["bracket"] = [k.value_at(p) for p in res["bracket"]]
    return out


def _fit_dict(fit) -> dict:
    return {"a": fit.a, "b": fit.b, "slope_z": fit.slope_z, "deviance": fit.deviance, "df": fit.df,
            "fit_p_value": fit.fit_p_value, "haldane_correction": fit.corrected}


def _records(df: pd.DataFrame) -> list:
    return [{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()} for r in df.to_dict("records")]


def tune(scenario, knob: str, target: float = 0.5, *, low=None, high=None, base=None, side: str = "polish",
         games: int = 4000, batch: int = 250, tol: float | None = None, seed: int = 0, polish="random",
         soviet="random", runner=None, threads: int | None = None, chunk_size: int | None = None,
         progress: bool = False, dask: bool = False, scheduler: str | None = None, work_dir=None,
         keep_games: bool = True) -> Tuning:
    """The value of ``knob`` that brings ``side``'s win rate closest to ``target``.

    The search and its statuses are described in the module docstring and docs/designer.md.

    Parameters
    ----------
    scenario : str
        Scenario id or TOML path.
    knob : str
        A knob name (``rules.combat.flank_penalty``, ``scenario.vp``, …), optionally with its range
        ``NAME=LOW:HIGH``.
    target : float
        The win rate of ``side`` sought, strictly between 0 and 1.
    low, high : number, optional
        Search range (default: an integer knob's base value ± 3 positions, not below 0 unless the base
        value is negative or the knob is signed (``scenario.vp``); a real knob's half to double).
        ``scenario.vp`` skips 0 (the VP track has no 0 space): a range over it plays the values on
        either side, and -1 and +1 count as neighbours.
    base : Variant, path, built-in variant name or ``"A+B"``, optional
        The variant the knob is set in (default: the rules and the scenario as they are).
    side : str
        ``"polish"`` or ``"soviet"``: whose win rate is tuned.
    games : int
        Game budget over the whole search (at least 3). An integer knob keeps a quarter for the
        confirmation batch at the two values around the crossing; every game is played unless the
        search stops because the crossing lies outside the range or a real knob reached ``tol``
        (``summary["notes"]`` says why; :func:`search_crossing`).
    batch : int
        Games per evaluation round (reduced, with a note, when three rounds do not fit in the search's
        share of ``games``).
    tol : float, optional
        Stop when the crossing's interval is narrower (real knobs; integer knobs stop once the
        interval lies between two neighbouring values).
    seed : int
        Run seed; round ``i`` plays with the independent seed stream ``i`` of it
        (:func:`soe_sim.design.runner.stream_seed`).
    polish, soviet : policy spec
        The policies of the two sides (as in :func:`soe_sim.simulate`).
    runner : soe_sim.design.runner.Runner, optional
        Plays the games (default: a runner made from the arguments below, closed afterwards).
    threads : int, optional
        Threads of the local backend (default: every CPU, as :func:`soe_sim.simulate`; the results
        do not depend on it).
    chunk_size : int, optional
        Games per chunk (default 250).
    progress : bool
        A progress bar on stderr.
    dask : bool
        Play the chunks on a ``dask.distributed`` LocalCluster.
    scheduler : str, optional
        Address of a running dask scheduler (``tcp://HOST:PORT``; implies ``dask``).
    work_dir : path, optional
        Where a Dask run writes its chunk files; default a temporary directory.
    keep_games : bool
        Keep every game in ``Tuning.games``.

    Returns
    -------
    Tuning
        ``value`` (x*) and ``interval``, ``status`` (``converged``: the interval lies between two
        neighbouring values; ``budget``: the budget is spent and it is wider; ``out_of_range``),
        ``candidates`` (the values around x* with observed and fitted rates), ``recommended``,
        ``evaluations``, the per-game frame ``games``, and ``summary`` (the JSON document, with
        ``mode``, ``search_status``, ``notes`` and both fits).
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

        raise SoeInputError(Problem("--side", "", "", side, "unknown side",
                                    did_you_mean(str(side), ["polish", "soviet"])))
    if isinstance(games, bool) or int(games) < 3:
        raise SoeInputError(Problem("--games", "", "", games, "the game budget must be at least 3"))
    if int(batch) < 1:
        raise SoeInputError(Problem("--batch", "", "", batch, "expected at least 1 game per round"))
    name = str(knob)
    if "=" in name:
        name, low, high, _ = parse_knob_range(name)
    bv = load_variant(base) if base is not None else BASE
    k, base_value = knob_value(scenario, bv, name)
    pos, val = k.position, k.value_at
    explicit = low is not None or high is not None
    if low is None:
        if k.integer:
            low = val(math.floor(pos(base_value)) - DEFAULT_SPAN)
            if base_value >= 0 and not k.signed:
                low = max(low, 0)
        else:
            low = base_value / 2 if base_value > 0 else base_value - 1
    if high is None:
        if k.integer:
            high = val(math.ceil(pos(base_value)) + DEFAULT_SPAN)
        else:
            high = base_value * 2 if base_value > 0 else base_value + 1
    if k.integer:
        if float(low) != int(low) or float(high) != int(high):
            raise SoeInputError(Problem("--knob", "", "", f"{name}={low}:{high}", f"{name} takes integers"))
        low, high = int(low), int(high)
    if not low < high:
        raise SoeInputError(Problem("--knob", "", "", f"{name}={low}:{high}", "LOW must be below HIGH"))
    skipped = k.skipped_between(low, high)
    # the search runs on positions: integers for an integer knob (-1 and +1 are neighbours on scenario.vp)
    p_low, p_high = (math.ceil(pos(low)), math.floor(pos(high))) if k.integer else (low, high)
    if not p_low < p_high:
        raise SoeInputError(Problem("--knob", "", "", f"{name}={_fmt(low)}:{_fmt(high)}",
                                    f"the range holds fewer than two values of {name}: {k.reason}"))
    own = runner is None
    if own:
        runner = Runner(scenario, polish, soviet, threads=threads, chunk_size=chunk_size, progress=False,
                        dask=dask, scheduler=scheduler, work_dir=work_dir)
    try:
        def check(p) -> SoeInputError | None:
            try:
                runner.setups([bv.with_knob(k, val(p))])
            except SoeInputError as err:
                return err
            return None

        if explicit or not k.integer:
            for p in (p_low, p_high):
                err = check(p)
                if err is not None:
                    pr = err.problems[0]
                    raise SoeInputError(Problem("--knob", "", "", f"{name}={_fmt(val(p))}", f"not a playable value: "
                                                f"{getattr(pr, 'message', pr)}", "give a narrower range NAME=LOW:HIGH"))
        else:  # default range: pulled in towards the base value until both ends play
            while p_low < pos(base_value) and check(p_low) is not None:
                p_low += 1
            while p_high > pos(base_value) and check(p_high) is not None:
                p_high -= 1
            if not p_low < p_high:
                raise SoeInputError(Problem("--knob", "", "", name, "no playable range around the base value",
                                            "give one: NAME=LOW:HIGH"))
        low, high = val(p_low), val(p_high)
        parts: list[pd.DataFrame] = []

        def evaluate(p, n, stream):
            v = val(p)
            df = runner.play([bv.with_knob(k, v)], n, seed, stream=stream, tag=f"tune-{stream:03d}")
            df.insert(2, "stream", np.int64(stream))
            df.insert(3, "knob_value", v)
            if keep_games:
                parts.append(df)
            return int((df["winner"] == side).sum())

        with tqdm(total=int(games), unit="game", disable=not progress, desc=f"tune {name}", leave=False) as bar:
            res = search_crossing(evaluate, p_low, p_high, integer=k.integer, target=float(target), budget=int(games),
                                  batch=int(batch), tol=tol, callback=bar.update)
    finally:
        if own:
            runner.close()
    cand, best = _candidates(res, p_low, p_high, k.integer, float(target))
    if k.excluded:
        cand.insert(1, "position", cand["value"])
        cand["value"] = [val(p) for p in cand["position"]]
        best = val(best)
    res = _to_values(res, k)
    fit = res["fit"]
    pn, pp = policy_label(runner.polish)
    sn, sp = policy_label(runner.soviet)
    best_row = cand[cand["value"] == best].iloc[0]
    shown = sorted({v for e in skipped for v in (e - 1, e + 1)})  # the neighbours across each gap
    summary = {
        "scenario": str(scenario), "knob": k.name, "target": float(target), "side": side, "base": bv.name,
        "base_value": base_value, "low": low, "high": high, "integer": k.integer, "seed": int(seed),
        "polish": pn + (f" {pp}" if pp else ""), "soviet": sn + (f" {sp}" if sp else ""),
        "value": float(res["value"]), "ci_low": float(res["ci_low"]), "ci_high": float(res["ci_high"]),
        "bounded": bool(res["bounded"]), "status": res["status"], "search_status": res["search_status"],
        "games": int(res["games"]), "budget": int(res["budget"]), "batch": int(res["batch"]),
        "recommended": best, "recommended_rate": float(best_row["fitted"]),
        "recommended_rate_ci": [float(best_row["fitted_low"]), float(best_row["fitted_high"])],
        "recommended_observed": None if not best_row["games"] else float(best_row["rate"]),
        "recommended_observed_ci": None if not best_row["games"] else [float(best_row["ci_low"]),
                                                                        float(best_row["ci_high"])],
        "candidates": _records(cand), "table": _records(res["table"]), "evaluations": _records(res["evaluations"]),
        "mode": res["mode"], "bracket": res["bracket"], "fit": _fit_dict(fit),
        "global_fit": _fit_dict(res["global_fit"]),
        "global_fit_rejected": bool(res["global_fit_rejected"]),
        "confirmation_games": int(res["confirmation_games"]), "search_games": int(res["search"]["games"]),
        "search_value": float(res["search"]["value"]), "search_ci": [float(res["search"]["ci_low"]),
                                                                     float(res["search"]["ci_high"])],
        "skipped": skipped, "skip_reason": k.reason if skipped else "",
        "positions": [[v, int(pos(v))] for v in shown],
        "notes": list(res["notes"]),
    }
    games_df = pd.concat(parts, ignore_index=True) if parts else None
    return Tuning(scenario=str(scenario), knob=k.name, target=float(target), side=side, base_value=base_value,
                  low=low, high=high, integer=k.integer, result=res, candidates=cand, recommended=best,
                  games=games_df, summary=summary, domain=k)
