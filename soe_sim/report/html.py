"""The balance report as one self-contained HTML page: figures are base64 PNGs in ``data:`` URIs,
the style sheet and the small image check are inline, nothing is fetched from anywhere.

:func:`render_html` returns the page of a :class:`soe_sim.report.BalanceReport`. After loading, a
tiny script writes ``data-images``, ``data-images-decoded`` and ``data-images-ok`` ("true" when
every ``<img>`` is complete with a natural width) on ``<body>`` so a headless browser can check
that the figures decode.
"""
from __future__ import annotations

import base64
import html
import io
import math

import numpy as np
import pandas as pd

from soe_sim.plotting import SIDE_COLORS, SIDE_LIGHT_COLORS, use_style
from soe_sim.report import _plural

__all__ = ["render_html", "SECTIONS", "figure_uri"]

#: (id, title) of the page's sections, in order.
SECTIONS = (
    ("summary", "Summary"),
    ("win-rates", "Win rates"),
    ("matrix", "Policy × policy matrix"),
    ("balance", "Balance metrics"),
    ("vp", "Victory points"),
    ("map", "Key cities at the end"),
    ("battles", "Battles"),
    ("eliminations", "Eliminations by cause"),
    ("cards", "Card use"),
    ("data", "Data files"),
    ("method", "Method and definitions"),
)

DRAW_COLOR = "#9e9e9e"
ABORT_COLOR = "#e0c060"
INK = "#2b2b2b"


def figure_uri(fig, dpi: int = 110) -> str:
    """``data:image/png;base64,…`` of a matplotlib figure (closed afterwards)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", facecolor="white")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _side_cmap():
    from matplotlib.colors import LinearSegmentedColormap

    return LinearSegmentedColormap.from_list(
        "soviet_polish", [SIDE_COLORS["soviet"], SIDE_LIGHT_COLORS["soviet"], "#f7f7f7",
                          SIDE_LIGHT_COLORS["polish"], SIDE_COLORS["polish"]])


def _fig(w, h, ncols=1, **kw):
    import matplotlib.pyplot as plt

    return plt.subplots(1, ncols, figsize=(w, h), **kw)


def _nan(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _pct(x, d: int = 1) -> str:
    return "–" if _nan(x) else f"{100 * x:.{d}f} %"


def _ci(lo, hi, d: int = 1) -> str:
    return "" if _nan(lo) or _nan(hi) else f"[{100 * lo:.{d}f}, {100 * hi:.{d}f}]"


def _num(x, d: int = 2) -> str:
    return "–" if _nan(x) else f"{x:,.{d}f}"


def _e(x) -> str:
    return html.escape(str(x))


def _pair(p, s) -> str:
    return f"{p} v {s}"


# --------------------------------------------------------------------------------------------------
# Figures


def _int_ticks(*axes):
    from matplotlib.ticker import MaxNLocator

    for ax in axes:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def _err(v, lo, hi):
    """Error-bar lengths (non-negative) of an interval around ``v``."""
    v, lo, hi = (np.asarray(a, dtype=float) for a in (v, lo, hi))
    return [np.clip(v - lo, 0, None), np.clip(hi - v, 0, None)]


def fig_win_rates(rep):
    wr = rep.win_rates
    n = len(wr)
    fig, ax = _fig(9.5, 0.55 * n + 1.3)
    y = np.arange(n)[::-1]
    left = np.zeros(n)
    for key, label, color in (("polish_win", "Polish win", SIDE_COLORS["polish"]), ("draw", "draw", DRAW_COLOR),
                              ("aborted_rate", "aborted", ABORT_COLOR), ("soviet_win", "Soviet win",
                                                                         SIDE_COLORS["soviet"])):
        v = wr[key].to_numpy(dtype=float)
        ax.barh(y, v, left=left, color=color, height=0.62, label=label, edgecolor="white", linewidth=0.6)
        for yi, l0, vi in zip(y, left, v):
            if vi >= 0.07 and key in ("polish_win", "soviet_win"):
                ax.text(l0 + vi / 2, yi, f"{100 * vi:.0f} %", ha="center", va="center", color="white",
                        fontsize=9, fontweight="bold")
        left = left + v
    # the Polish win rate's 95 % interval at the Polish / rest boundary
    ax.errorbar(wr["polish_win"], y, xerr=_err(wr["polish_win"], wr["polish_win_lo"], wr["polish_win_hi"]),
                fmt="none", ecolor=INK, elinewidth=1.2, capsize=4)
    ax.axvline(0.5, color=INK, lw=0.8, ls=":")
    ax.set_yticks(y, [f"{p} v {s}  (n={g:,})" for p, s, g in zip(wr["polish"], wr["soviet"], wr["games"])])
    ax.set_xlim(0, 1)
    ax.set_xticks(np.linspace(0, 1, 6), [f"{int(100 * t)} %" for t in np.linspace(0, 1, 6)])
    ax.set_xlabel("share of games (error bar: 95 % Wilson interval of the Polish win rate)")
    ax.legend(ncol=4, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    ax.set_ylabel("Polish policy v Soviet policy")
    return fig


def fig_matrix(rep):
    m = rep.matrix
    pols = list(m.index)
    k = len(pols)
    fig, ax = _fig(1.7 * k + 2.6, 1.3 * k + 1.4)
    im = ax.imshow(m.to_numpy(dtype=float), cmap=_side_cmap(), vmin=0, vmax=1)
    wr = rep.win_rates.set_index(["polish", "soviet"])
    for i, p in enumerate(pols):
        for j, s in enumerate(pols):
            if (p, s) not in wr.index:
                continue
            r = wr.loc[(p, s)]
            v = r["polish_win"]
            # the Wilson interval itself (rounded outwards), not a "±" that hides its asymmetry
            lo, hi = math.floor(100 * r["polish_win_lo"]), math.ceil(100 * r["polish_win_hi"])
            ax.text(j, i, f"{100 * v:.0f} %\n[{lo}, {hi}]\nn={int(r['games']):,}",
                    ha="center", va="center", fontsize=9, color="white" if abs(v - 0.5) > 0.3 else INK)
    ax.set_xticks(range(k), pols)
    ax.set_yticks(range(k), pols)
    ax.set_xlabel("Soviet policy")
    ax.set_ylabel("Polish policy")
    ax.tick_params(length=0)
    for sp in ax.spines.values():
        sp.set_visible(False)
    cb = fig.colorbar(im, ax=ax, shrink=0.8)
    cb.set_label("Polish win rate")
    ax.set_title("Polish win rate by pairing [95 % Wilson interval]", fontsize=11)
    return fig


def fig_length(rep):
    hg, lg = _headline(rep)
    fig, axes = _fig(12, 3.2, 3)
    ph = hg["phases"].to_numpy()
    bins = np.arange(ph.min() - 0.5, ph.max() + 1.5) if len(ph) else 10
    axes[0].hist(ph, bins=bins, color="#5d6d7e", edgecolor="white")
    axes[0].set_xlabel("phases played")
    axes[0].set_ylabel("games")
    axes[0].set_title("Game length", fontsize=11)
    lc = lg["lead_changes"].dropna().to_numpy()
    if len(lc):
        axes[1].hist(lc, bins=np.arange(-0.5, lc.max() + 1.5), color="#7d5ba6", edgecolor="white")
    axes[1].set_xlabel("lead changes in the game")
    axes[1].set_title("Lead changes", fontsize=11)
    da = lg.assign(w=hg["winner"].to_numpy())
    for s in ("polish", "soviet"):
        v = da.loc[da["w"] == s, "decided_at"].dropna().to_numpy()
        if len(v):
            axes[2].hist(v, bins=np.linspace(0, 1, 11), color=SIDE_COLORS[s], alpha=0.75, edgecolor="white",
                         label=f"{s} wins")
    axes[2].set_xlabel("winner leads for good from (fraction of game)")
    axes[2].set_title("When the game is decided", fontsize=11)
    axes[2].legend(frameon=False)
    _int_ticks(axes[0], axes[1])
    fig.tight_layout()
    return fig


def fig_vp_final(rep):
    hg, _ = _headline(rep)
    fig, ax = _fig(6, 3.6)
    vc = hg["vp"].value_counts().sort_index()
    colors = [SIDE_COLORS["polish"] if v > 0 else SIDE_COLORS["soviet"] if v < 0 else DRAW_COLOR for v in vc.index]
    ax.bar(vc.index, vc.to_numpy() / max(1, len(hg)), color=colors, width=0.85)
    ax.axvline(0, color=INK, lw=0.8, ls=":")
    mean = hg["vp"].mean()
    ax.axvline(mean, color="#e69f00", lw=1.6, ls="--")
    top = ax.get_ylim()[1]
    ax.set_ylim(0, top * 1.12)
    ax.text(mean, top * 1.1, f" mean {mean:+.1f}", va="top", fontsize=9, color="#b07800")
    _int_ticks(ax)
    ax.set_xlabel("final VP (positive = Polish, negative = Soviet)")
    ax.set_ylabel("share of games")
    ax.set_title("Final VP", fontsize=11)
    return fig


def fig_vp_fan(rep):
    import matplotlib.pyplot as plt

    f = rep.vp_fan
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(10, 5.6), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    x = f["step"].to_numpy()
    ax.fill_between(x, f["q05"], f["q95"], color="#b9c4d0", alpha=0.55, lw=0, label="5–95 %")
    ax.fill_between(x, f["q25"], f["q75"], color="#7f93a8", alpha=0.65, lw=0, label="25–75 %")
    ax.plot(x, f["q50"], color=INK, lw=2, label="median")
    ax.plot(x, f["mean"], color="#e69f00", lw=1.6, ls="--", label="mean")
    ax.axhline(0, color=INK, lw=0.8, ls=":")
    lo, hi = ax.get_ylim()
    ax.text(x[-1] + 0.3, max(hi * 0.9, 0.5), "Polish\nahead", color=SIDE_COLORS["polish"], fontsize=9, va="top")
    ax.text(x[-1] + 0.3, min(lo * 0.9, -0.5), "Soviet\nahead", color=SIDE_COLORS["soviet"], fontsize=9,
            va="bottom")
    for r in sorted(set(f["round"]) - {0}):
        first = f.loc[f["round"] == r, "step"].min()
        for a in (ax, ax2):
            a.axvline(first - 0.5, color="#cccccc", lw=0.8)
        ax.text(first - 0.4, hi, f"round {r}", fontsize=8, color="#777777", va="top")
    ax.set_xlim(x[0] - 0.3, x[-1] + 1.6)
    ax.set_ylabel("VP track (+ Polish)")
    ax.set_title("VP after every phase (games that ended early keep their final VP)", fontsize=11)
    ax.legend(loc="lower left", ncol=4, frameon=False, fontsize=8)
    pl = f["polish_leads"].to_numpy(dtype=float)
    so = f["soviet_leads"].to_numpy(dtype=float)
    ax2.stackplot(x, pl, 1 - pl - so, so, colors=[SIDE_COLORS["polish"], "#dddddd", SIDE_COLORS["soviet"]],
                  alpha=0.85)
    ax2.set_ylim(0, 1)
    ax2.set_yticks([0, 0.5, 1], ["0", "50 %", "100 %"])
    ax2.set_ylabel("who leads")
    ax2.set_xticks(x, f["label"], rotation=55, ha="right", fontsize=8)
    fig.tight_layout()
    return fig


def fig_map(rep, game_map):
    from soe_sim.data.plot import plot_map

    held = rep.held
    values = np.full(len(game_map.areas), np.nan)
    for r in held.itertuples(index=False):
        if r.city in game_map.area_index:
            values[game_map.area_index[r.city]] = r.polish - r.soviet
    fig, ax = _fig(11, 8.6)
    plot_map(game_map, ax=ax, values=values, cmap=_side_cmap(), vmin=-1, vmax=1,
             value_label="held at the end: share Polish − share Soviet (−1 always Soviet, +1 always Polish)",
             legend=False, title="")
    ax.set_title("")
    return fig


def fig_battles(rep):
    ob = rep.odds_bands
    sb = rep.sample_battles
    fig, axes = _fig(12.5, 3.6, 3)
    ax = axes[0]
    ok = ob["battles"] > 0
    x = np.arange(len(ob))
    ax.bar(x[ok], ob.loc[ok, "attacker_win"], color="#5d6d7e", width=0.65)
    ax.errorbar(x[ok], ob.loc[ok, "attacker_win"], yerr=_err(ob.loc[ok, "attacker_win"], ob.loc[ok, "attacker_win_lo"],
                                                             ob.loc[ok, "attacker_win_hi"]),
                fmt="none", ecolor=INK, capsize=3, lw=1)
    for xi, n in zip(x, ob["battles"]):
        ax.text(xi, 0.02, f"n={n}", ha="center", fontsize=7.5, color="white" if n else INK, rotation=90, va="bottom")
    ax.set_xticks(x, ob["odds_band"], rotation=35, ha="right", fontsize=8)
    ax.set_ylim(0, 1)
    ax.set_ylabel("attacker win rate (95 % CI)")
    ax.set_title("By odds band (attacker : defender SP)", fontsize=11)
    ax = axes[1]
    f = sb[sb["fought"]] if len(sb) else sb
    if len(f):
        size = (f["attacker_sp"] + f["defender_sp"]).to_numpy()
        ax.hist(size, bins=np.arange(-0.5, size.max() + 1.5), color="#7d5ba6", edgecolor="white")
    ax.set_xlabel("SP in the battle (both sides)")
    ax.set_ylabel("battles")
    ax.set_title("Battle size (event sample)", fontsize=11)
    _int_ticks(ax)
    ax = axes[2]
    hg, _ = _headline(rep)
    b = hg["battles"].to_numpy()
    if len(b):
        ax.hist(b, bins=np.arange(-0.5, b.max() + 1.5), color="#5d6d7e", edgecolor="white")
    ax.set_xlabel("battles in the game")
    ax.set_ylabel("games")
    ax.set_title("Battles per game", fontsize=11)
    _int_ticks(ax)
    fig.tight_layout()
    return fig


def _side_bars(df, label_col, title, xlabel):
    fig, ax = _fig(5.4, 0.42 * len(df) + 1.1)
    y = np.arange(len(df))[::-1]
    h = 0.38
    for k, s in enumerate(("polish", "soviet")):
        v = df[s].to_numpy(dtype=float)
        ax.barh(y + (h / 2 if k == 0 else -h / 2), v, height=h, color=SIDE_COLORS[s], label=s.capitalize())
        for yi, vi in zip(y, v):
            ax.text(vi, yi + (h / 2 if k == 0 else -h / 2), f" {vi:.2f}", va="center", fontsize=8)
    ax.set_yticks(y, df[label_col])
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=11)
    ax.legend(frameon=False, loc="lower right")
    ax.set_xlim(0, max(0.5, float(np.nanmax(df[["polish", "soviet"]].to_numpy(dtype=float)))) * 1.18)
    return fig


def fig_eliminations(rep):
    e = rep.eliminations
    e = e[e["cause"] != "total"]
    return _side_bars(e, "label", "Blocks lost per game, by cause", "blocks per game")


def fig_cards(rep):
    c = rep.card_use
    c = c[c["use"] != "all"]
    return _side_bars(c, "use", "Cards played per game, by use", "cards per game")


def _headline(rep):
    h = rep.meta["headline"]
    mask = (rep.games["polish"] == h[0]) & (rep.games["soviet"] == h[1])
    return rep.games[mask], rep.leads[mask.to_numpy()]


# --------------------------------------------------------------------------------------------------
# HTML


CSS = """
:root { --ink:#222; --muted:#666; --line:#e3e1da; --pl:%(pl)s; --so:%(so)s; --bg:#faf9f6; }
* { box-sizing: border-box; }
body { margin:0; font:15px/1.5 -apple-system, "Segoe UI", "DejaVu Sans", Helvetica, Arial, sans-serif;
       color:var(--ink); background:var(--bg); }
header { background:linear-gradient(90deg, var(--so) 0%%, #5b2a52 50%%, var(--pl) 100%%); color:white;
         padding:26px 40px 20px; }
header h1 { margin:0 0 4px; font-size:27px; letter-spacing:.2px; }
header .meta { opacity:.92; font-size:13.5px; }
nav { position:sticky; top:0; background:white; border-bottom:1px solid var(--line); padding:8px 40px;
      font-size:13px; z-index:2; }
nav a { color:#444; text-decoration:none; margin-right:14px; white-space:nowrap; }
nav a:hover { color:var(--pl); }
main { max-width:1180px; margin:0 auto; padding:10px 40px 60px; }
section { background:white; border:1px solid var(--line); border-radius:8px; padding:18px 26px 20px;
          margin:22px 0; }
h2 { margin:0 0 6px; font-size:21px; }
h3 { margin:18px 0 6px; font-size:16px; }
p.src { color:var(--muted); font-size:12.5px; margin:0 0 12px; }
ul.summary { font-size:16px; padding-left:22px; margin:6px 0; }
ul.summary li { margin:6px 0; }
ul.summary li:first-child { font-size:18px; font-weight:600; }
.cards { display:grid; grid-template-columns:repeat(auto-fill, minmax(165px, 1fr)); gap:12px; margin:14px 0 4px; }
.card { border:1px solid var(--line); border-radius:7px; padding:10px 12px; background:#fcfcfa; }
.card .v { font-size:22px; font-weight:700; }
.card .k { font-size:12px; color:var(--muted); text-transform:uppercase; letter-spacing:.4px; }
.card .ci { font-size:12px; color:var(--muted); }
img { max-width:100%%; height:auto; display:block; margin:10px auto; }
table { border-collapse:collapse; font-size:13px; margin:8px 0 6px; width:100%%; }
th, td { border-bottom:1px solid var(--line); padding:5px 8px; text-align:right; }
td { white-space:nowrap; } td.l { white-space:normal; }
table.matrix td { text-align:center; }
th { background:#f3f2ee; font-weight:600; }
th:first-child, td:first-child { text-align:left; }
td.l, th.l { text-align:left; }
tr:hover td { background:#fafaf5; }
.pl { color:var(--pl); font-weight:600; } .so { color:var(--so); font-weight:600; }
.note { background:#fff8e6; border-left:4px solid #e6b800; padding:8px 12px; font-size:13px; margin:10px 0; }
.two { display:grid; grid-template-columns: 1fr 1fr; gap:18px; align-items:start; }
@media (max-width: 900px) { .two { grid-template-columns: 1fr; } main, header, nav { padding-left:14px;
  padding-right:14px; } }
dl { font-size:13.5px; } dt { font-weight:600; margin-top:8px; } dd { margin:2px 0 0 18px; color:#333; }
ul.files { columns:3; font-size:13px; } ul.files a { text-decoration:none; }
details { margin:6px 0; font-size:13px; } summary { cursor:pointer; color:#444; }
code { background:#f1f0ec; padding:1px 4px; border-radius:3px; font-size:12.5px; }
footer { color:var(--muted); font-size:12px; text-align:center; margin:20px 0 40px; }
""" % {"pl": SIDE_COLORS["polish"], "so": SIDE_COLORS["soviet"]}

CHECK_JS = """
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  document.body.setAttribute('data-images', String(imgs.length));
  document.body.setAttribute('data-images-decoded', String(ok));
  document.body.setAttribute('data-images-ok', ok === imgs.length ? 'true' : 'false');
});
"""


def _running(vf) -> str:
    if not len(vf):
        return ""
    n0 = int(vf["playing"].iloc[0])
    ended = vf[vf["playing"] < n0]
    if not len(ended):
        return "The game is played to the last phase." if n0 == 1 else f"All {n0:,} games are played to the last phase."
    until = vf["label"].iloc[len(vf) - len(ended) - 1]
    return (f"Games still running: {'all ' if n0 > 1 else ''}{n0:,} until {until}, then "
            + ", ".join(f"{lab} {n:,}" for lab, n in zip(ended["label"], ended["playing"])) + ".")


def _attacker_win(r) -> str:
    return f'{_pct(r["attacker_win"])} {_ci(r["attacker_win_lo"], r["attacker_win_hi"])}'


def _img(uri: str, alt: str, width: int | None = None) -> str:
    w = f' style="max-width:{width}px"' if width else ""
    return f'<img src="{uri}" alt="{_e(alt)}"{w}>'


def _table(df: pd.DataFrame, cols: list[tuple[str, str, object]], left: tuple = ()) -> str:
    """``cols`` = (column, header, formatter)."""
    head = "".join(f'<th class="{"l" if c in left else ""}">{_e(h)}</th>' for c, h, _ in cols)
    body = []
    for _, r in df.iterrows():
        cells = []
        for c, _h, fmt in cols:
            v = fmt(r) if callable(fmt) else r[c]
            cells.append(f'<td class="{"l" if c in left else ""}">{v if callable(fmt) else _e(v)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _card(k: str, v: str, ci: str = "") -> str:
    return f'<div class="card"><div class="k">{_e(k)}</div><div class="v">{v}</div><div class="ci">{ci}</div></div>'


def _side_span(s: str) -> str:
    cls = {"polish": "pl", "soviet": "so"}.get(s, "")
    return f'<span class="{cls}">{_e(s)}</span>'


def render_html(rep, game_map=None) -> str:
    """The whole page of a :class:`~soe_sim.report.BalanceReport` as a string."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    meta = rep.meta
    m = rep.metrics
    h = meta["headline"]
    hname = _pair(*h)
    ngh = m["games"]
    sample_n = meta["sample_games"]
    pols = meta["policies"]
    src_all = (f"{'The only game' if ngh == 1 else f'All {ngh:,} games'} of the headline pairing ({hname}), "
               f"seed {meta['seed']}.")
    if sample_n <= 0:
        src_sample = "Event sample: none (--sample-games 0), so the tables from it are empty."
    else:
        which = "game 0" if sample_n == 1 else f"games 0–{sample_n - 1}"
        share = (("the only game" if ngh == 1 else f"all {ngh:,} games") if sample_n == ngh
                 else f"{sample_n:,} of the {ngh:,} games")
        src_sample = (f"Event sample: {which} of the headline pairing ({hname}, seed {meta['seed']}) replayed from "
                      f"their event logs — {share}.")
    parts = []
    with use_style():
        figs = {
            "win": figure_uri(fig_win_rates(rep)),
            "matrix": figure_uri(fig_matrix(rep)) if len(pols) > 1 else None,
            "length": figure_uri(fig_length(rep)),
            "vp_final": figure_uri(fig_vp_final(rep)),
            "fan": figure_uri(fig_vp_fan(rep)) if len(rep.vp_fan) else None,
            "map": figure_uri(fig_map(rep, game_map), dpi=95) if game_map is not None and len(rep.held) else None,
            "battles": figure_uri(fig_battles(rep)),
            "elims": figure_uri(fig_eliminations(rep)),
            "cards": figure_uri(fig_cards(rep)),
        }

    # --- summary -------------------------------------------------------------------------------
    items = "".join(f"<li>{_e(s)}</li>" for s in rep.summary)
    a_lo, a_hi = m["side_advantage_ci"]
    b_lo, b_hi = m["balance_ci"]
    cards = "".join([
        _card("Polish win", _pct(m["polish_win"]), "95 % CI " + _ci(*m["polish_win_ci"])),
        _card("Soviet win", _pct(m["soviet_win"]), "95 % CI " + _ci(*m["soviet_win_ci"])),
        _card("Balance", _num(m["balance"]), f"95 % CI [{b_lo:.2f}, {b_hi:.2f}]; 1 = even"),
        _card("Side advantage", f"{100 * m['side_advantage']:+.1f} pts",
              f"[{100 * a_lo:+.1f}, {100 * a_hi:+.1f}]; + = Polish"),
        _card("Drawishness", _pct(m["drawishness"]), "95 % CI " + _ci(*m["draw_ci"])),
        _card("Game length", f"{_num(m['phases_mean'], 1)} ph", f"sd {_num(m['phases_sd'], 1)}; "
              f"{_num(m['rounds_mean'], 1)} rounds"),
        _card("Lead changes", _num(m["lead_changes_mean"], 2), f"per game; sd {_num(m['lead_changes_sd'], 2)}"),
        _card("Decisiveness", _num(m["decisiveness"], 2),
              f"winner leads for good from {_pct(m['decided_at_mean'], 0)}"),
    ])
    parts.append(f"""<section id="summary"><h2>Summary</h2>
<p class="src">Headline pairing: Polish <b>{_e(h[0])}</b> v Soviet <b>{_e(h[1])}</b>, {_plural(ngh, 'game')}, seed
{meta['seed']}. Intervals are 95 % Wilson score intervals (win rates) or normal intervals (differences).</p>
<ul class="summary">{items}</ul><div class="cards">{cards}</div></section>""")

    # --- win rates ---------------------------------------------------------------------------------
    wr = rep.win_rates
    wr_table = _table(wr, [
        ("polish", "Polish policy", lambda r: _e(r["polish"])),
        ("soviet", "Soviet policy", lambda r: _e(r["soviet"])),
        ("games", "games", lambda r: f"{int(r['games']):,}"),
        ("polish_win", "Polish win", lambda r: f'<span class="pl">{_pct(r["polish_win"])}</span> '
                                               f'{_ci(r["polish_win_lo"], r["polish_win_hi"])}'),
        ("soviet_win", "Soviet win", lambda r: f'<span class="so">{_pct(r["soviet_win"])}</span> '
                                               f'{_ci(r["soviet_win_lo"], r["soviet_win_hi"])}'),
        ("draw", "draw", lambda r: f'{_pct(r["draw"])} {_ci(r["draw_lo"], r["draw_hi"])}'),
        ("aborted", "aborted", lambda r: _pct(r["aborted_rate"])),
    ], left=("polish", "soviet"))
    if len(wr) == 1:
        played = f"One pairing played ({_plural(meta['games'], 'game')})"
    else:
        played = (f"Every pairing played: {len(wr)} pairings ({_plural(meta['games'], 'game')} for the headline "
                  f"pairing, {_plural(meta['matrix_games'], 'game')} for each other pairing)")
    parts.append(f"""<section id="win-rates"><h2>Win rates</h2>
<p class="src">{played}, seed {meta['seed']}; brackets: 95 % Wilson intervals.</p>
{_img(figs['win'], 'win rates by pairing', 900)}{wr_table}</section>""")

    # --- matrix -------------------------------------------------------------------------------------
    reg = ", ".join(meta["registry"])
    if len(pols) > 1:
        mat = rep.matrix
        rows = []
        wri = wr.set_index(["polish", "soviet"])
        for p in mat.index:
            tds = []
            for s in mat.columns:
                if (p, s) in wri.index:
                    r = wri.loc[(p, s)]
                    tds.append(f'<td><span class="pl">{_pct(r["polish_win"], 0)}</span> / '
                               f'<span class="so">{_pct(r["soviet_win"], 0)}</span><br><small>n={int(r["games"]):,}'
                               f'</small></td>')
                else:
                    tds.append("<td>–</td>")
            rows.append(f'<tr><th class="l">{_e(p)}</th>{"".join(tds)}</tr>')
        head = "".join(f'<th style="text-align:center">{_e(s)}</th>' for s in mat.columns)
        body = (f'{_img(figs["matrix"], "policy matrix", 640)}<table class="matrix"><thead><tr>'
                f'<th class="l">Polish \\ Soviet</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
                f'<p class="src">Cells: Polish win / Soviet win, rows = Polish policy, columns = Soviet policy.</p>')
    else:
        body = (f'<div class="note">Only one policy was played (<b>{_e(pols[0])}</b>), so the matrix is a single '
                f'cell (see Win rates). Policies in the registry: {_e(reg)}. Pass <code>--policies</code> with '
                f'several names to fill it.</div>')
    parts.append(f"""<section id="matrix"><h2>Policy × policy matrix</h2>
<p class="src">Policies played: {_e(', '.join(pols))} (registry: {_e(reg)}).</p>{body}</section>""")

    # --- balance -------------------------------------------------------------------------------------
    pm = rep.pair_metrics
    pm_table = _table(pm, [
        ("polish", "Polish", lambda r: _e(r["polish"])), ("soviet", "Soviet", lambda r: _e(r["soviet"])),
        ("games", "games", lambda r: f"{int(r['games']):,}"),
        ("balance", "balance", lambda r: f"{r['balance']:.2f} [{r['balance_lo']:.2f}, {r['balance_hi']:.2f}]"),
        ("side_advantage", "side advantage", lambda r: f"{100 * r['side_advantage']:+.1f} pts"),
        ("drawishness", "drawishness", lambda r: _pct(r["drawishness"])),
        ("phases_mean", "phases (sd)", lambda r: f"{r['phases_mean']:.1f} ({_num(r['phases_sd'], 1)})"),
        ("immediate_victory", "immediate win", lambda r: _pct(r["immediate_victory"])),
        ("lead_changes_mean", "lead changes", lambda r: _num(r["lead_changes_mean"], 2)),
        ("decisiveness", "decisiveness", lambda r: _num(r["decisiveness"], 2)),
        ("winner_trailed", "winner trailed", lambda r: _pct(r["winner_trailed"], 0)),
    ], left=("polish", "soviet"))
    q = m["phases_q"]
    parts.append(f"""<section id="balance"><h2>Balance metrics</h2>
<p class="src">{_e(src_all)} Definitions under <a href="#method">Method</a>.</p>
{_img(figs['length'], 'game length, lead changes and decisiveness')}
<p>Headline pairing: phases played {m['phases_mean']:.1f} on average (sd {_num(m['phases_sd'], 1)}; quartiles
{q[0]:.0f} / {q[1]:.0f} / {q[2]:.0f}, range {m['phases_min']:.0f}–{m['phases_max']:.0f}); the winner led from the
start to the end in {_pct(m['winner_led_throughout'], 0)} of the decided games and trailed at some point in
{_pct(m['winner_trailed'], 0)}.</p>
<h3>Every pairing</h3>{pm_table}</section>""")

    # --- VP -------------------------------------------------------------------------------------------
    vf = rep.vp_fan
    fan = _img(figs["fan"], "VP fan chart") if figs["fan"] else "<p>No trajectories.</p>"
    vp_mean = rep.games.loc[_headline(rep)[0].index, "vp"]
    parts.append(f"""<section id="vp"><h2>Victory points</h2>
<p class="src">{_e(src_all)} The VP track is signed: positive = Polish lead, negative = Soviet lead.</p>
<div class="two"><div>{_img(figs['vp_final'], 'final VP distribution')}</div>
<div><table><thead><tr><th class="l">final VP</th><th>value</th></tr></thead><tbody>
<tr><td class="l">mean (sd)</td><td>{vp_mean.mean():+.2f} ({_num(vp_mean.std(ddof=1), 2)})</td></tr>
<tr><td class="l">median</td><td>{vp_mean.median():+.0f}</td></tr>
<tr><td class="l">5 % / 95 % quantile</td><td>{vp_mean.quantile(0.05):+.0f} / {vp_mean.quantile(0.95):+.0f}</td></tr>
<tr><td class="l">start VP</td><td>{_headline(rep)[0]['vp_start'].iloc[0] if ngh else 0:+d}</td></tr>
</tbody></table></div></div>
{fan}
<p class="src">Lower panel: share of games in which each side leads the VP track after the phase (grey: nobody).
{_e(_running(vf))}</p>
</section>""")

    # --- map ------------------------------------------------------------------------------------------
    held = rep.held.sort_values("vp", ascending=False, kind="stable") if "vp" in rep.held else rep.held
    held_cols = [
        ("name", "city", lambda r: _e(r.get("name", r["city"]))),
        ("vp", "VP", lambda r: str(int(r["vp"])) if "vp" in r else ""),
        ("polish", "held by Poles", lambda r: f'<span class="pl">{_pct(r["polish"], 1)}</span> '
                                              f'{_ci(r["polish_lo"], r["polish_hi"])}'),
        ("soviet", "held by Soviets", lambda r: f'<span class="so">{_pct(r["soviet"], 1)}</span> '
                                                f'{_ci(r["soviet_lo"], r["soviet_hi"])}'),
        ("neutral", "neutral", lambda r: _pct(r["neutral"], 1)),
    ]
    if "start" in held:
        held_cols.append(("start", "at the start", lambda r: _side_span(r["start"])))
    if "vp" in held and (held["vp"] >= 2).any() and (held["vp"] < 2).any():
        big, small = held[held["vp"] >= 2], held[held["vp"] < 2]
        held_table = (_table(big, held_cols, left=("name",)) +
                      f"<details><summary>The other {_plural(len(small), 'VP city', 'VP cities')}</summary>"
                      f"{_table(small, held_cols, left=('name',))}</details>")
    else:
        held_table = _table(held, held_cols, left=("name",))
    mp = _img(figs["map"], "key cities held at the end") if figs["map"] else "<p>No map.</p>"
    parts.append(f"""<section id="map"><h2>Key cities at the end</h2>
<p class="src">{_e(src_all)} Disc colour behind each VP city: share of games it ends Polish minus share it ends
Soviet (blue = Polish, red = Soviet, white = even or neutral).</p>{mp}{held_table}</section>""")

    # --- battles --------------------------------------------------------------------------------------
    bs = rep.battle_summary
    bs_table = _table(bs, [
        ("attacker", "attacker", lambda r: _side_span(r["attacker"])),
        ("per_game", "battles / game", lambda r: _num(r["per_game"], 2)),
        ("fought_share", "fought", lambda r: _pct(r["fought_share"], 0)),
        ("attacker_win", "attacker wins", _attacker_win),
        ("great_per_game", "great victories / game", lambda r: _num(r["great_per_game"], 3)),
        ("great_share", "great victory share", lambda r: _pct(r["great_share"], 1)),
        ("attacker_losses_mean", "attacker loses (SP)", lambda r: _num(r["attacker_losses_mean"], 2)),
        ("defender_losses_mean", "defender loses (SP)", lambda r: _num(r["defender_losses_mean"], 2)),
    ], left=("attacker",))
    ob_table = _table(rep.odds_bands, [
        ("odds_band", "odds band", lambda r: _e(r["odds_band"])),
        ("battles", "battles", lambda r: f"{int(r['battles']):,}"),
        ("attacker_win", "attacker wins", lambda r: _attacker_win(r) if r["battles"] else "–"),
        ("tie_share", "equal losses", lambda r: _pct(r["tie_share"], 1) if r["battles"] else "–"),
        ("great_share", "great victories", lambda r: _pct(r["great_share"], 1)),
        ("attacker_sp_mean", "attacker SP", lambda r: _num(r["attacker_sp_mean"], 1)),
        ("defender_sp_mean", "defender SP", lambda r: _num(r["defender_sp_mean"], 1)),
        ("attacker_losses_mean", "attacker loses", lambda r: _num(r["attacker_losses_mean"], 2)),
        ("defender_losses_mean", "defender loses", lambda r: _num(r["defender_losses_mean"], 2)),
    ], left=("odds_band",))
    smeta = meta["sample"]
    check = (f"Replay check: {smeta['replay_mismatches']} block positions / strengths differ from the engine's final "
             f"positions; the sample's battles {'match' if smeta.get('battles_match_simulation') else 'DO NOT match'} "
             f"the simulation's battle rows for the same games.")
    parts.append(f"""<section id="battles"><h2>Battles</h2>
<p class="src">Counts, win rates, losses and great victories: {_e(src_all)}<br>
Sizes and odds bands: {_e(src_sample)}</p>
{_img(figs['battles'], 'battle statistics')}
<h3>By attacking side (all games)</h3>{bs_table}
<h3>By odds band (event sample, fought battles)</h3>
<p class="src">Odds = attacker block SP : defender block SP in the area when the battle is fought (garrisons not
counted in the SP; battles against a garrison alone are “garrison only”). Exact odds for given forces: the
<code>soe-sim odds</code> command and the odds tables of <code>make run</code>.</p>{ob_table}
<p class="note">Ties go to the defender: equal losses, 0–0 included, are a defender victory (docs/rules.md R9;
SoE 7.41.6: “If there is a draw, the attacker loses the battle”); the “equal losses” column counts them. A lone
garrison fights as 1 SP and can lose only that 1 SP, which counts as a loss when deciding the battle (R3), so in
the “garrison only” band the attacker wins only if it loses no SP at all: one SP lost is a draw, and a defender
victory, however many SP attack.</p>
<p class="src">{_e(check)}</p></section>""")

    # --- eliminations ---------------------------------------------------------------------------------
    el_table = _table(rep.eliminations, [
        ("label", "cause", lambda r: _e(r["label"])),
        ("polish", "Polish blocks / game", lambda r: _num(r["polish"], 3)),
        ("soviet", "Soviet blocks / game", lambda r: _num(r["soviet"], 3)),
    ], left=("label",))
    split = _table(rep.battle_elimination_split, [
        ("label", "permanent elimination in battle", lambda r: _e(r["label"])),
        ("polish", "Polish / game", lambda r: _num(r["polish"], 3)),
        ("soviet", "Soviet / game", lambda r: _num(r["soviet"], 3)),
    ], left=("label",))
    parts.append(f"""<section id="eliminations"><h2>Eliminations by cause</h2>
<p class="src">{_e(src_all)}</p>
<div class="two"><div>{_img(figs['elims'], 'eliminations by cause')}</div><div>{el_table}
<h3>Encirclement (event sample)</h3><p class="src">{_e(src_sample)} Blocks eliminated permanently in battle split
into blocks with no retreat (encircled, SoE 7.42) and leaders (SoE 9.0).</p>{split}</div></div></section>""")

    # --- cards ------------------------------------------------------------------------------------------
    cu_table = _table(rep.card_use, [
        ("use", "use", lambda r: _e(r["use"])),
        ("polish", "Polish / game", lambda r: _num(r["polish"], 2)),
        ("soviet", "Soviet / game", lambda r: _num(r["soviet"], 2)),
    ], left=("use",))
    parts.append(f"""<section id="cards"><h2>Card use</h2>
<p class="src">{_e(src_sample)} Cards played in the card phase of every operation phase for orders, reinforcement
cubes or their historical event (an event is offered only when it would act on that front; docs/rules.md G3, EV2),
reaction cards played in the windows after a side's own Recon and after each battle (EV9–EV11), and combat cards
(drawn blind or from the hand) and battle cards in battles.</p>
<div class="two"><div>{_img(figs['cards'], 'card use by type')}</div><div>{cu_table}</div></div></section>""")

    # --- data ------------------------------------------------------------------------------------------
    files = sorted(f for f in (rep.files or {}) if f != "index.html")
    flist = "".join(f'<li><a href="{_e(f)}"><code>{_e(f)}</code></a></li>' for f in files) or "<li>(not written)</li>"
    rs_opt = f" --ruleset {_e(meta['ruleset_arg'])}" if meta.get("ruleset_arg") else ""
    parts.append(f"""<section id="data"><h2>Data files</h2>
<p class="src">Next to this page. <code>games.parquet</code>: one row per game of every pairing (soe_sim.simulate
columns); <code>trajectories.parquet</code>: VP after every phase; <code>battles.parquet</code>: one row per battle;
<code>sample_*.csv</code>: the event sample; the other CSV files are the tables of this page; <code>metrics.json</code>:
the headline metrics and the run's settings.</p><ul class="files">{flist}</ul>
<p class="src">Reproduce: <code>soe-sim report balance --scenario {_e(meta['scenario'])}{rs_opt} --games {meta['games']}
--matrix-games {meta['matrix_games']} --sample-games {sample_n} --policies {_e(','.join(pols))} --seed {meta['seed']}
--out DIR</code>. Game <i>i</i> of a pairing is <code>play_game("{_e(meta['scenario'])}", seed=({meta['seed']}, i),
polish=…, soviet=…)</code>; results do not depend on the thread count.</p></section>""")

    # --- method --------------------------------------------------------------------------------------
    parts.append("""<section id="method"><h2>Method and definitions</h2><dl>
<dt>Win rate</dt><dd>Wins / games of a pairing, with the 95 % Wilson score interval. A draw is a game that ends
without a winner; games aborted by a hard cap are counted apart.</dd>
<dt>Balance</dt><dd>1 − |P(Polish win) − P(Soviet win)| (Ludii's balance for two players): 1 when both sides win
equally often, 0 when one side always wins. Interval from the normal interval of the difference.</dd>
<dt>Side advantage</dt><dd>P(Polish win) − P(Soviet win), in percentage points (+ = Polish). A side is called
favoured only when the 95 % interval excludes 0.</dd>
<dt>Drawishness</dt><dd>Share of drawn games.</dd>
<dt>Game length</dt><dd>Phases played (card replenishment, operation and reinforcement phases) and rounds; their
spread as standard deviation and quartiles.</dd>
<dt>Lead changes</dt><dd>Along the VP track from the starting VP through the VP after every phase, the number of
times the leader (positive VP = Polish, negative = Soviet) switches sides; points where nobody leads are skipped.</dd>
<dt>Decisiveness</dt><dd>For a game with a winner, <i>decided at</i> = t / T, where T = phases played and t = the
first point (0 = the start) from which the winner leads the VP track at every later point; a winner who does not
lead at the end (an immediate victory by capture) counts 1. Decisiveness = 1 − mean(decided at): near 1 the eventual
winner is ahead from the start, near 0 the game is decided at the very end.</dd>
<dt>Event sample</dt><dd>Some statistics need the event log of a game (battle sizes and odds, card use, the split of
eliminations in battle); they come from replaying the first games of the headline pairing with
<code>play_game</code> — the same games as the simulation's rows, labelled “event sample” wherever used.</dd>
<dt>Not available yet</dt><dd>The policies' decision statistics (the policies do not report their choices) and a
summary of the cards played card by card (each card the event sample plays is listed in <code>sample_cards.csv</code>);
see <code>soe_sim.sim.MISSING_COLUMNS</code>.</dd>
<dt>In the data files only</dt><dd>Leaders killed and captured (<code>leaders_killed_*</code>,
<code>leaders_captured_*</code>), encircled blocks (<code>encircled_*</code>), the VP by cause (<code>vp_battle</code>,
<code>vp_great_victory</code>, <code>vp_encirclement</code>, <code>vp_leader_killed</code>,
<code>vp_leader_captured</code>, …) and the SoE 9.0 leader orders given (<code>leader_orders_*</code>) are columns of
<code>games.parquet</code>, one row per game, but have no table on this page.</dd></dl></section>""")

    nav = "".join(f'<a href="#{sid}">{_e(title)}</a>' for sid, title in SECTIONS)
    hdr_meta = (f"Scenario <b>{_e(meta['scenario_name'])}</b> (<code style='background:none;color:white'>"
                f"{_e(meta['scenario'])}</code>) · rules {_e(meta.get('ruleset_name', 'Strike of the Eagle'))} · "
                f"policies {_e(', '.join(pols))} · headline {_e(hname)} · "
                f"{_plural(meta['total_games'], 'game')} in all · seed {meta['seed']} · event sample "
                f"{_plural(sample_n, 'game')} · "
                f"soe_sim {_e(meta.get('soe_sim_version', '?'))} · {_e(meta.get('created', ''))}")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Balance report: {_e(meta['scenario_name'])}</title>
<style>{CSS}</style></head>
<body data-images-ok="pending">
<header><h1>Balance report — {_e(meta['scenario_name'])}</h1><div class="meta">{hdr_meta}</div></header>
<nav>{nav}</nav>
<main>
{''.join(parts)}
</main>
<footer>Generated by <code>soe-sim report balance</code> · Strike of the Eagle Monte Carlo toolkit · simulation
{meta['simulation_seconds']:.0f} s, event sample {meta['sample_seconds']:.0f} s</footer>
<script>{CHECK_JS}</script>
</body></html>
"""
