"""Statistics of the designer tools: paired differences under common random numbers and the
logistic fit of win rate against a knob.

Paired win-rate difference (:func:`paired_difference`). Game ``i`` of both arms is played with the
same seeds, so the outcomes come in pairs. Only the *discordant* pairs tell the arms apart: ``b``
games won by the side in arm B only and ``c`` games won in arm A only, so ``difference = (b - c) / n``.
The p-value is the exact McNemar test (given ``m = b + c``, ``b ~ Binomial(m, 1/2)`` under no
difference). The 95 % interval is Tango's score interval (Stat. Med. 17:891, 1998): every ``Δ`` whose
score statistic ``(b - c - nΔ) / sqrt(n (2 q̃ + Δ - Δ²))`` is within ±1.96, ``q̃`` being the maximum-
likelihood probability of an A-only game under ``Δ``. It accounts for the uncertainty of ``m`` too and
stays sensible when every discordant game goes one way. Identical arms have ``m = 0``: the
difference is exactly 0 and the p-value 1; the interval is then ``±z²/(n + z²)``, what ``n`` games
without a single differing result can rule out.

Paired VP shift (:func:`paired_mean_difference`): the mean of the per-game differences with a
Student-t interval and the paired t-test (0, [0, 0] and p = 1 when every difference is 0).

Logistic fit (:func:`fit_logistic`): ``logit P(win | x) = a + b x`` by maximum likelihood on binomial
counts (Newton–Raphson; a Haldane ½ correction when the data separate). The crossing of a target
rate ``t`` is ``x* = (logit t - a) / b``; its 95 % interval (:func:`crossing_interval`) is Fieller's:
every ``x`` whose fitted logit is not significantly different from ``logit t``, i.e. the solutions of
``(a + b x - logit t)² ≤ z² Var(a + b x)`` — bounded only when the slope is significant.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["paired_difference", "tango_score", "paired_mean_difference", "wilson", "LogisticFit", "fit_logistic",
           "crossing_interval", "Z95"]

Z95 = 1.959963984540054


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjustment of ``p_values`` (any shape, NaN left as NaN): each adjusted value is
    the smallest family-wise level at which its hypothesis would be rejected among all of them
    (Holm 1979). Written out here because it is a few lines and the package has no statsmodels."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    flat = p.ravel()
    ok = np.flatnonzero(~np.isnan(flat))
    m = len(ok)
    if m:
        order = ok[np.argsort(flat[ok], kind="stable")]
        adj = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * flat[order]))
        out.ravel()[order] = adj
    return out


def format_p(p: float) -> str:
    """A p-value for a table: ``"< 1e-15"``, ``"1"``, 3 significant digits, or ``"1.2e-05"``."""
    if p < 1e-15:
        return "< 1e-15"
    return "1" if p >= 1 else (f"{p:.3g}" if p >= 1e-4 else f"{p:.1e}")


def p_relation(p: float) -> str:
    """``"= 0.031"`` or ``"< 1e-15"``: a p-value after "p " in running text."""
    text = format_p(p)
    return text if text.startswith("<") else f"= {text}"


def wilson(k: int, n: int) -> tuple[float, float]:
    """95 % Wilson interval of ``k / n`` (``(0, 1)`` when ``n = 0``)."""
    from soe_sim.sim import win_interval

    return win_interval(int(k), int(n))


def tango_score(delta: float, b: int, c: int, n: int) -> float:
    """Tango's score statistic of a paired difference ``Δ = P(B only) - P(A only)`` given ``b`` B-only
    and ``c`` A-only pairs among ``n`` (decreasing in ``Δ``; 0 at ``Δ = (b - c) / n``)."""
    # q = P(A only) maximising the multinomial likelihood under P(B only) - q = delta:
    # 2n q² - B q - C = 0 with B = b + c + delta (b - c - 2n), C = c delta (1 - delta)
    bb = b + c + delta * (b - c - 2 * n)
    cc = c * delta * (1 - delta)
    q = (bb + math.sqrt(max(bb * bb + 8 * n * cc, 0.0))) / (4 * n)
    var = n * (2 * q + delta - delta * delta)
    num = b - c - n * delta
    if var <= 0:
        return 0.0 if num == 0 else math.copysign(float("inf"), num)
    return num / math.sqrt(var)


def paired_difference(a, b, z: float = Z95) -> dict:
    """Difference of the rates of two paired boolean outcomes, ``mean(b) - mean(a)``.

    Returns ``difference``, ``ci_low``, ``ci_high`` (95 % Tango score interval), ``p_value`` (exact
    McNemar), ``n``, ``b_only`` (true in ``b`` only) and ``a_only``.
    """
    from scipy.optimize import brentq
    from scipy.stats import binomtest

    a = np.asarray(a, dtype=bool)
    b = np.asarray(b, dtype=bool)
    if a.shape != b.shape:
        raise ValueError("paired outcomes need the same number of games")
    n = int(a.size)
    b_only = int(np.sum(b & ~a))
    a_only = int(np.sum(a & ~b))
    m = b_only + a_only
    out = {"n": n, "b_only": b_only, "a_only": a_only}
    if n == 0:
        return {**out, "difference": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"), "p_value": 1.0}
    diff = (b_only - a_only) / n
    eps = 1e-12

    def f(d):
        return tango_score(d, b_only, a_only, n)

    lo = -1.0 if f(-1 + eps) <= z else brentq(lambda d: f(d) - z, -1 + eps, diff)
    hi = 1.0 if f(1 - eps) >= -z else brentq(lambda d: f(d) + z, diff, 1 - eps)
    p = 1.0 if m == 0 else float(min(1.0, binomtest(b_only, m, 0.5).pvalue))
    return {**out, "difference": float(diff), "ci_low": float(min(lo, diff)), "ci_high": float(max(hi, diff)),
            "p_value": p}


def paired_mean_difference(x, y) -> dict:
    """Mean of ``y - x`` (paired) with a 95 % Student-t interval and the paired t-test p-value."""
    from scipy import stats

    d = np.asarray(y, dtype=float) - np.asarray(x, dtype=float)
    n = int(d.size)
    if n == 0:
        return {"mean": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"), "p_value": 1.0}
    mean = float(d.mean())
    sd = float(d.std(ddof=1)) if n > 1 else 0.0
    if sd == 0.0:
        return {"mean": mean, "ci_low": mean, "ci_high": mean, "p_value": 1.0 if mean == 0 else 0.0}
    se = sd / math.sqrt(n)
    t = stats.t.ppf(0.975, n - 1)
    p = float(2 * stats.t.sf(abs(mean / se), n - 1))
    return {"mean": mean, "ci_low": mean - t * se, "ci_high": mean + t * se, "p_value": p}


@dataclass
class LogisticFit:
    """``logit P = a + b x``: coefficients, their covariance and fit diagnostics."""

    a: float
    b: float
    cov: np.ndarray  # 2 × 2 covariance of (a, b)
    deviance: float
    df: int  # residual degrees of freedom (distinct x values - 2)
    corrected: bool  # Haldane ½ correction used (separated data)

    def rate(self, x) -> np.ndarray:
        """Fitted rate at ``x``."""
        return 1.0 / (1.0 + np.exp(-(self.a + self.b * np.asarray(x, dtype=float))))

    def rate_interval(self, x) -> tuple[np.ndarray, np.ndarray]:
        """Pointwise 95 % interval of the fitted rate (on the logit scale, transformed)."""
        x = np.asarray(x, dtype=float)
        eta = self.a + self.b * x
        var = self.cov[0, 0] + 2 * x * self.cov[0, 1] + x * x * self.cov[1, 1]
        se = np.sqrt(np.maximum(var, 0))
        f = lambda e: 1.0 / (1.0 + np.exp(-e))  # noqa: E731
        return f(eta - Z95 * se), f(eta + Z95 * se)

    @property
    def slope_z(self) -> float:
        """Wald z of the slope."""
        v = self.cov[1, 1]
        return float(self.b / math.sqrt(v)) if v > 0 else float("inf") * np.sign(self.b)

    @property
    def fit_p_value(self) -> float:
        """Deviance goodness-of-fit p-value (NaN with fewer than 3 distinct x values)."""
        from scipy.stats import chi2

        return float(chi2.sf(self.deviance, self.df)) if self.df > 0 else float("nan")


def _newton(x, k, n, iters=100):
    a, b = 0.0, 0.0
    p0 = k.sum() / n.sum()
    if 0 < p0 < 1:
        a = math.log(p0 / (1 - p0))
    for _ in range(iters):
        eta = a + b * x
        p = 1 / (1 + np.exp(-eta))
        w = n * p * (1 - p)
        g = np.array([np.sum(k - n * p), np.sum((k - n * p) * x)])
        h = np.array([[w.sum(), (w * x).sum()], [(w * x).sum(), (w * x * x).sum()]])
        try:
            step = np.linalg.solve(h, g)
        except np.linalg.LinAlgError:
            return None
        a, b = a + step[0], b + step[1]
        if not (math.isfinite(a) and math.isfinite(b)) or abs(b) > 1e6:
            return None
        if np.max(np.abs(step)) < 1e-10:
            return a, b, np.linalg.inv(h)
    return None


def fit_logistic(x, k, n) -> LogisticFit:
    """Maximum-likelihood logistic fit of ``k`` successes out of ``n`` at each ``x`` (aggregated
    per distinct ``x``). Needs at least two distinct ``x`` values."""
    x = np.asarray(x, dtype=float)
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    xs = np.unique(x)
    if xs.size < 2:
        raise ValueError("a logistic fit needs at least two distinct knob values")
    kk = np.array([k[x == v].sum() for v in xs])
    nn = np.array([n[x == v].sum() for v in xs])
    # centre x for a well-conditioned Newton step; the coefficients are mapped back below
    c = float(np.average(xs, weights=nn))
    s = float(np.ptp(xs)) or 1.0
    u = (xs - c) / s
    res = _newton(u, kk, nn)
    corrected = False
    if res is None or abs(res[1]) > 50:  # separated (or nearly): Haldane ½ correction
        corrected = True
        res = _newton(u, kk + 0.5, nn + 1.0)
        if res is None:
            raise ValueError("the logistic fit did not converge")
    a_u, b_u, cov_u = res
    # eta = a_u + b_u (x - c) / s = (a_u - b_u c / s) + (b_u / s) x
    t = np.array([[1.0, -c / s], [0.0, 1.0 / s]])
    a = a_u - b_u * c / s
    b = b_u / s
    cov = t @ cov_u @ t.T
    p = 1 / (1 + np.exp(-(a + b * xs)))
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(kk > 0, kk * np.log(kk / (nn * p)), 0.0)
        t2 = np.where(nn - kk > 0, (nn - kk) * np.log((nn - kk) / (nn * (1 - p))), 0.0)
    dev = float(2 * np.sum(t1 + t2))
    return LogisticFit(a=float(a), b=float(b), cov=cov, deviance=dev, df=int(xs.size - 2), corrected=corrected)


def crossing_interval(fit: LogisticFit, target: float, z: float = Z95) -> tuple[float, float, float, bool]:
    """``(x*, low, high, bounded)``: where the fitted rate equals ``target`` and its Fieller interval.

    When the slope is not significant the set is unbounded: ``low``/``high`` are ``-inf``/``inf``
    (or the set is the complement of an interval, also reported as unbounded).
    """
    L = math.log(target / (1 - target))
    a, b = fit.a, fit.b
    vaa, vab, vbb = fit.cov[0, 0], fit.cov[0, 1], fit.cov[1, 1]
    x_star = (L - a) / b if b != 0 else float("nan")
    # (a - L + b x)^2 - z^2 (vaa + 2 x vab + x^2 vbb) <= 0
    A = b * b - z * z * vbb
    B = 2 * ((a - L) * b - z * z * vab)
    C = (a - L) ** 2 - z * z * vaa
    if A <= 0:
        return float(x_star), float("-inf"), float("inf"), False
    disc = B * B - 4 * A * C
    if disc < 0:  # cannot happen with A > 0 at the point estimate; guard rounding
        disc = 0.0
    r = math.sqrt(disc)
    lo, hi = (-B - r) / (2 * A), (-B + r) / (2 * A)
    return float(x_star), float(min(lo, hi)), float(max(lo, hi)), True
