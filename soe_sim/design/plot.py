"""Figures of the designer tools (project style, side colours of :mod:`soe_sim.plotting`)."""
from __future__ import annotations

import numpy as np

from soe_sim.plotting import SIDE_COLORS, SIDE_LIGHT_COLORS, use_style

__all__ = ["compare_figure", "tornado_figure", "curves_figure", "tune_figure"]


def _err(v, lo, hi):
    v, lo, hi = (np.asarray(a, dtype=float) for a in (v, lo, hi))
    return np.vstack([np.maximum(v - lo, 0), np.maximum(hi - v, 0)])


def compare_figure(cmp):
    """Left: Polish / Soviet win rates of both arms with 95 % intervals; right: the VP at the end of
    the games in each arm. The title gives the paired difference (B - A)."""
    import matplotlib.pyplot as plt

    s = cmp.summary
    with use_style():
        fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
        labels = [f"{a['label']}: {a['name']}" for a in s["arms"]]
        x = np.arange(len(labels))
        w = 0.38
        for k, side in enumerate(("polish", "soviet")):
            v = [a[f"{side}_win"] for a in s["arms"]]
            lo = [a[f"{side}_win_ci"][0] for a in s["arms"]]
            hi = [a[f"{side}_win_ci"][1] for a in s["arms"]]
            ax.bar(x + (k - 0.5) * w, v, w, color=SIDE_COLORS[side], label=f"{side.capitalize()} win",
                   yerr=_err(v, lo, hi), capsize=4)
        ax.set_xticks(x, [lab if len(lab) < 28 else lab[:26] + "…" for lab in labels])
        ax.set_ylim(0, 1)
        ax.set_ylabel("win rate (95 % CI)")
        ax.legend(loc="upper right", fontsize="small")
        games = cmp.games
        vmin, vmax = int(games["vp"].min()), int(games["vp"].max())
        bins = np.arange(vmin, vmax + 1)
        for k, (arm, color) in enumerate(((0, "#7f7f7f"), (1, "#2ca02c"))):
            g = games[games["arm"] == arm]["vp"].to_numpy()
            counts = np.array([(g == b).sum() for b in bins]) / max(len(g), 1)
            bx.bar(bins + (k - 0.5) * w, counts, w, color=color, label=labels[arm])
        bx.axvline(0, color="black", lw=0.8)
        bx.set_xlabel("VP at the end (+ Polish)")
        bx.set_ylabel("share of games")
        bx.legend(loc="upper left", fontsize="small")
        fig.suptitle(f"{s['scenario']}: Polish win B - A = {100 * s['difference']:+.1f} points "
                     f"[{100 * s['ci_low']:+.1f}, {100 * s['ci_high']:+.1f}], p = {s['p_value']:.3g}; "
                     f"VP shift {s['vp_shift']['mean']:+.2f} ({s['games']} paired games)", fontsize="medium")
    return fig


def tornado_figure(sens):
    """Effect of each knob's low and high value on the Polish win rate (vs the base, paired 95 %
    intervals), knobs with the largest spread on top."""
    import matplotlib.pyplot as plt

    t = sens.tornado.iloc[::-1].reset_index(drop=True)
    with use_style():
        fig, ax = plt.subplots(figsize=(8, 1.2 + 0.6 * len(t)), constrained_layout=True)
        y = np.arange(len(t))
        h = 0.36
        for end, color, off in (("low", SIDE_LIGHT_COLORS["polish"], -h / 2), ("high", SIDE_COLORS["polish"], h / 2)):
            v = 100 * t[f"effect_{end}"].to_numpy()
            lo = 100 * t[f"effect_{end}_ci_low"].to_numpy()
            hi = 100 * t[f"effect_{end}_ci_high"].to_numpy()
            ax.barh(y + off, v, h, color=color, xerr=_err(v, lo, hi), capsize=3, label=f"{end} value")
            for yi, vi, val in zip(y, v, t[end]):
                ax.annotate(_fmt(val), (vi, yi + off), xytext=(4 if vi >= 0 else -4, 0), textcoords="offset points",
                            ha="left" if vi >= 0 else "right", va="center", fontsize="x-small")
        ax.axvline(0, color="black", lw=0.8)
        ax.set_yticks(y, [f"{k} (base {_fmt(b)})" for k, b in zip(t["knob"], t["base_value"])])
        ax.set_xlabel("effect on the Polish win rate (points, paired 95 % CI)")
        s = sens.summary
        ax.set_title(f"{s['scenario']}: sensitivity around {s['base']}\n(Polish win {100 * s['base_polish_win']:.1f} %,"
                     f" {s['games']} games per value)", fontsize="medium")
        ax.legend(loc="best", fontsize="small")
    return fig


def curves_figure(sens):
    """Polish win rate (95 % Wilson interval) against the values of each knob."""
    import matplotlib.pyplot as plt

    knobs = list(dict.fromkeys(sens.table["knob"]))
    n = len(knobs)
    cols = min(3, n)
    rows = (n + cols - 1) // cols
    with use_style():
        fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3 * rows), squeeze=False, constrained_layout=True)
        for ax, k in zip(axes.flat, knobs):
            t = sens.table[sens.table["knob"] == k]
            ax.errorbar(t["value"], t["polish_win"], yerr=_err(t["polish_win"], t["polish_win_low"],
                                                                t["polish_win_high"]),
                        color=SIDE_COLORS["polish"], marker="o", capsize=3)
            b = t[t["is_base"]]
            ax.axhline(sens.summary["base_polish_win"], color="#7f7f7f", lw=0.8, ls="--")
            if len(b):
                ax.plot(b["value"], b["polish_win"], "s", color="black")
            ax.set_title(k, fontsize="small")
            ax.set_ylim(0, 1)
            ax.set_ylabel("Polish win")
        for ax in list(axes.flat)[n:]:
            ax.set_visible(False)
    return fig


def tune_figure(tun):
    """Observed win rates (95 % Wilson intervals, marker size ~ games), the fitted logistic curve
    with its band, the target and the crossing with its interval (the fits are drawn against the
    knob's values through its positions: ``scenario.vp`` skips 0)."""
    import matplotlib.pyplot as plt

    s = tun.summary
    table = tun.table
    fit, gfit = tun.result["fit"], tun.result["global_fit"]
    color = SIDE_COLORS[s["side"]]
    with use_style():
        fig, ax = plt.subplots(figsize=(7, 4), constrained_layout=True)
        x = np.linspace(s["low"], s["high"], 200)
        pos = tun.position  # the fits are on the knob's positions (scenario.vp skips 0)
        label = "logistic fit"
        if s["mode"] in ("local", "bracket"):
            ax.plot(x, gfit.rate(pos(x)), color=color, lw=1, ls="--", label="logistic fit, every value"
                    + (" (rejected)" if s.get("global_fit_rejected") else ""))
            if s["mode"] == "local":
                a, b = s.get("bracket") or (int(np.floor(s["value"])), int(np.floor(s["value"])) + 1)
                label = "fit between the two values"
            else:
                a, b = max(s["ci_low"], s["low"]), min(s["ci_high"], s["high"])
                label = "fit between the played values around it"
                if not (np.isfinite(a) and np.isfinite(b) and a < b):
                    a, b = s["low"], s["high"]
            x = np.linspace(a, b, 50)
        lo, hi = fit.rate_interval(pos(x))
        ax.fill_between(x, lo, hi, color=SIDE_LIGHT_COLORS[s["side"]], alpha=0.6, lw=0, label="fit, 95 % band")
        ax.plot(x, fit.rate(pos(x)), color=color, lw=1.5, label=label)
        size = 20 + 200 * table["games"] / table["games"].max()
        ax.errorbar(table["value"], table["rate"], yerr=_err(table["rate"], table["ci_low"], table["ci_high"]),
                    fmt="none", ecolor="black", capsize=3, lw=0.8)
        ax.scatter(table["value"], table["rate"], s=size, color="black", zorder=3, label="played (95 % CI)")
        ax.axhline(s["target"], color="#7f7f7f", ls="--", lw=0.8, label=f"target {100 * s['target']:.0f} %")
        if np.isfinite(s["value"]):
            a, b = max(s["ci_low"], s["low"]), min(s["ci_high"], s["high"])
            if a < b:
                ax.axvspan(a, b, color="#ffcc00", alpha=0.25, lw=0, label="crossing, 95 % CI")
            if s["low"] <= s["value"] <= s["high"]:
                ax.axvline(s["value"], color="#b8860b", lw=1.2)
        ax.plot([s["recommended"]], [s["recommended_rate"]], "*", ms=14, color="#b8860b", zorder=4,
                label=f"recommended {_fmt(s['recommended'])}")
        ax.set_ylim(0, 1)
        ax.set_xlabel(s["knob"])
        ax.set_ylabel(f"{s['side'].capitalize()} win rate")
        ax.set_title(f"{s['scenario']}: {s['knob']} crossing {s['value']:.2f} [{s['ci_low']:.2f}, {s['ci_high']:.2f}]"
                     f" ({s['games']} games)", fontsize="medium")
        ax.legend(loc="best", fontsize="x-small")
    return fig


def _fmt(v) -> str:
    v = float(v)
    return str(int(v)) if v == int(v) else f"{v:g}"
