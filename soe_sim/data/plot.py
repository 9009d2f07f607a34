"""Draw the theatre map — and on it a scenario set-up, a game snapshot or a per-area heatmap.

:func:`plot_map` draws areas at their real coordinates (equirectangular, aspect ``1/cos(lat)``),
roads and railways, key-city VP badges, fortification ticks, the Eastern Links, the front line and
the Curzon line, the A–K / 1–8 grid, and optionally blocks (small squares in the side colours with
their SP) and garrisons. It returns the Axes so callers can add more.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from soe_sim.plotting import SIDE_COLORS

__all__ = ["plot_map", "TERRITORY_COLORS"]

TERRITORY_COLORS = {
    "poland": "#e9eef7",
    "lithuania": "#e8efcf",
    "germany": "#e2e2e2",
    "contested": "#f3e8cc",
    "russia": "#f6dcd8",
}
ROAD_COLOR = "#8c8c8c"
RAIL_COLOR = "#1a1a1a"
FORT_COLOR = "#6b3e1f"
EAST_COLOR = "#b0171f"
FRONT_COLOR = "#5a2d82"
CURZON_COLOR = "#2e7d32"
BADGE_COLOR = "#f7d417"


def _block_label(sp, arm) -> str:
    if arm == "leader":
        return "L"
    text = "" if sp is None or (isinstance(sp, float) and math.isnan(sp)) else str(int(sp))
    return text + ("c" if arm == "cavalry" else "")


def _roster_arms(scenario):
    """``block id → arm`` from the scenario's roster, or ``{}`` when unavailable."""
    try:
        from soe_sim.data.blocks import load_blocks
        from soe_sim.data.scenario import data_root_of

        roster = load_blocks(data_root_of(scenario.path) if scenario is not None and scenario.path else None)
        return dict(zip(roster.blocks["id"], roster.blocks["arm"]))
    except Exception:  # noqa: BLE001 - the arm is decoration only
        return {}


def plot_map(game_map, scenario=None, ax=None, *, blocks: pd.DataFrame | None = None,
             garrisons: pd.DataFrame | None = None, values=None, cmap: str = "viridis", vmin=None, vmax=None,
             value_label: str | None = None, title: str | None = None, names: bool = True,
             legend: bool = True, figsize=(14, 11)):
    """Draw the map.

    Parameters
    ----------
    game_map : GameMap
        From :func:`soe_sim.data.load_map`.
    scenario : Scenario, optional
        Draws its deployment and garrisons (unless ``blocks`` / ``garrisons`` are given) and uses
        its name as the title.
    ax : matplotlib.axes.Axes, optional
        Axes to draw into; a new ``figsize`` figure otherwise.
    blocks : pandas.DataFrame, optional
        Blocks to draw: columns ``side, area, sp`` and optionally ``block``, ``arm`` (a game
        snapshot). Cavalry SP is suffixed ``c``, leaders show ``L``.
    garrisons : pandas.DataFrame, optional
        Columns ``area, side``.
    values : array-like of float, optional
        One value per area (index order) colouring the area discs — a heatmap; NaN = uncoloured.
    cmap, vmin, vmax, value_label
        Colour map, limits and colour-bar label for ``values``.
    title : str, optional
    names : bool
        Draw area names.
    legend : bool
        Draw the legend.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    areas = game_map.areas
    lon = areas["lon"].to_numpy(dtype=float)
    lat = areas["lat"].to_numpy(dtype=float)
    n = len(areas)
    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
    fig = ax.figure
    lat0 = float(np.nanmean(lat)) if n else 52.0
    ax.set_aspect(1.0 / math.cos(math.radians(lat0)))

    grid = game_map.grid
    pad = 0.35
    if grid.defined:
        x0, x1 = grid.column_edges_lon[0], grid.column_edges_lon[-1]
        y0, y1 = grid.row_edges_lat[-1], grid.row_edges_lat[0]
    else:
        x0, x1 = float(np.nanmin(lon)) - pad, float(np.nanmax(lon)) + pad
        y0, y1 = float(np.nanmin(lat)) - pad, float(np.nanmax(lat)) + pad
    x0, x1 = min(x0, np.nanmin(lon) - pad), max(x1, np.nanmax(lon) + pad)
    y0, y1 = min(y0, np.nanmin(lat) - pad), max(y1, np.nanmax(lat) + pad)
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_facecolor("#fbfaf5")

    # --- grid A–K × 1–8 (SoE 1.0) --------------------------------------------------------------
    if grid.defined:
        for xe in grid.column_edges_lon:
            ax.axvline(xe, color="#d8d4c8", lw=0.6, zorder=0)
        for ye in grid.row_edges_lat:
            ax.axhline(ye, color="#d8d4c8", lw=0.6, zorder=0)
        cx = [(a + b) / 2 for a, b in zip(grid.column_edges_lon, grid.column_edges_lon[1:])]
        ry = [(a + b) / 2 for a, b in zip(grid.row_edges_lat, grid.row_edges_lat[1:])]
        ax.set_xticks(cx, list("ABCDEFGHIJK"))
        ax.set_yticks(ry, [str(i) for i in range(1, 9)])
        ax.tick_params(length=0, labelsize=11, labeltop=True, labelright=True, labelcolor="#555555")
        for spine in ax.spines.values():
            spine.set_visible(True)
            spine.set_color("#999999")
    else:
        ax.set_xticks([])
        ax.set_yticks([])

    # --- front line (SoE 1.1) and the Curzon line ---------------------------------------------------
    if grid.curzon_line:
        pts = np.asarray(grid.curzon_line)
        ax.plot(pts[:, 0], pts[:, 1], color=CURZON_COLOR, lw=2.2, ls=(0, (1, 1.6)), alpha=0.8, zorder=1,
                solid_capstyle="round")
    if grid.front_line:
        pts = np.asarray(grid.front_line)
        ax.plot(pts[:, 0], pts[:, 1], color=FRONT_COLOR, lw=2.4, ls=(0, (7, 3)), alpha=0.75, zorder=1)

    # --- links: roads thin grey, railways black with white dashes (SoE 1.0, 7.6) -------------------
    links = game_map.links
    ia, ib = links["ia"].to_numpy(), links["ib"].to_numpy()
    is_rail = (links["kind_code"].to_numpy() & 2) != 0
    for a, b, rail in zip(ia, ib, is_rail):
        xs, ys = [lon[a], lon[b]], [lat[a], lat[b]]
        if rail:
            ax.plot(xs, ys, color=RAIL_COLOR, lw=2.6, zorder=2, solid_capstyle="butt")
            ax.plot(xs, ys, color="white", lw=1.3, ls=(0, (3, 3)), zorder=2.1, solid_capstyle="butt")
        else:
            ax.plot(xs, ys, color=ROAD_COLOR, lw=1.0, zorder=1.5)

    # --- fortification ticks on the fortified side of a link (SoE 1.2) ----------------------------
    aspect = 1.0 / math.cos(math.radians(lat0))
    ptr, ind, fort = game_map.adj_indptr, game_map.adj_indices, game_map.adj_fortified
    for i in range(n):
        for e in range(ptr[i], ptr[i + 1]):
            if not fort[e]:
                continue
            j = ind[e]
            # work in "screen-square" units (x scaled by cos(lat)) so the tick is perpendicular
            dx, dy = (lon[j] - lon[i]) / aspect, lat[j] - lat[i]
            length = math.hypot(dx, dy) or 1.0
            ux, uy = dx / length, dy / length
            # comb placed a short way out from the defended area (at most 0.3 screen-degrees)
            frac = min(0.3, 0.3 / length)
            cx_, cy_ = lon[i] + frac * (lon[j] - lon[i]), lat[i] + frac * (lat[j] - lat[i])
            h = 0.065
            for s in (-0.035, 0.0, 0.035):  # a short comb of three teeth across the link
                bx, by = cx_ + s * ux * aspect, cy_ + s * uy
                ax.plot([bx - h * uy * aspect, bx + h * uy * aspect], [by + h * ux, by - h * ux],
                        color=FORT_COLOR, lw=1.3, zorder=3, solid_capstyle="butt")

    # --- area discs ------------------------------------------------------------------------------
    vp = game_map.vp.astype(int)
    east = game_map.eastern_link.astype(bool)
    key = vp > 0
    terr_fc = [TERRITORY_COLORS.get(t, "#ffffff") for t in areas["territory"]]
    sc_values = None
    if values is not None:
        values = np.asarray(values, dtype=float)
        if values.shape != (n,):
            raise ValueError(f"values must have one entry per area ({n}), got shape {values.shape}")
        ok = ~np.isnan(values)
        sc_values = ax.scatter(lon[ok], lat[ok], c=values[ok], cmap=cmap, vmin=vmin, vmax=vmax, s=330,
                               edgecolors="none", alpha=0.85, zorder=3.5)
        cb = fig.colorbar(sc_values, ax=ax, orientation="horizontal", shrink=0.5, pad=0.05, aspect=40)
        if value_label:
            cb.set_label(value_label)
    plain = ~key & ~east
    ax.scatter(lon[plain], lat[plain], s=46, c=[terr_fc[i] for i in np.flatnonzero(plain)],
               edgecolors="#444444", linewidths=0.9, zorder=4)
    if east.any():
        ax.scatter(lon[east], lat[east], s=300, marker="h", c="#fbe3e0", edgecolors=EAST_COLOR,
                   linewidths=2.2, zorder=4)
        for i in np.flatnonzero(east):
            ax.annotate("EL", (lon[i], lat[i]), ha="center", va="center", fontsize=6.5, fontweight="bold",
                        color=EAST_COLOR, zorder=4.1)
    # key cities: yellow VP badge (SoE 1.3)
    key_only = key & ~east
    ax.scatter(lon[key_only], lat[key_only], s=190, c=BADGE_COLOR, edgecolors="#222222", linewidths=1.1,
               zorder=5)
    for i in np.flatnonzero(key_only):
        ax.annotate(str(vp[i]), (lon[i], lat[i]), ha="center", va="center", fontsize=8, fontweight="bold",
                    color="#222222", zorder=5.1)

    # --- scenario: garrisons and blocks ----------------------------------------------------------
    if scenario is not None:
        if blocks is None:
            blocks = scenario.deployment
        if garrisons is None:
            garrisons = scenario.garrisons
        if title is None:
            title = f"{scenario.name} — set-up ({scenario.start} to {scenario.end})"
    idx = game_map.area_index
    if garrisons is not None and len(garrisons):
        for area, side in zip(garrisons["area"], garrisons["side"]):
            if area in idx and side in SIDE_COLORS:
                i = idx[area]
                ax.scatter([lon[i]], [lat[i]], s=420, facecolors="none", edgecolors=SIDE_COLORS[side],
                           linewidths=2.6, zorder=4.9)
    block_boxes = []
    if blocks is not None and len(blocks):
        arms = dict(zip(blocks["block"], blocks["arm"])) if "arm" in blocks.columns else (
            _roster_arms(scenario) if "block" in blocks.columns else {})
        per_area: dict[str, list] = {}
        for r in blocks.itertuples(index=False):
            per_area.setdefault(r.area, []).append(r)
        for area, rows in per_area.items():
            if area not in idx:
                continue
            i = idx[area]
            rows = sorted(rows, key=lambda r: (r.side, str(getattr(r, "block", ""))))
            k = len(rows)
            per_row = 4 if not east[i] else 6
            for m, r in enumerate(rows):
                col, row = m % per_row, m // per_row
                in_row = min(per_row, k - row * per_row)
                dx = (col - (in_row - 1) / 2) * 11.5
                dy = 13 + row * 11.5
                label = _block_label(r.sp, arms.get(getattr(r, "block", None)))
                t = ax.annotate(label, (lon[i], lat[i]), xytext=(dx, dy), textcoords="offset points",
                                ha="center", va="center", fontsize=6.3, fontweight="bold", color="white",
                                zorder=7,
                                bbox=dict(boxstyle="square,pad=0.22", fc=SIDE_COLORS.get(r.side, "#555555"),
                                          ec="white", lw=0.6))
                block_boxes.append(t)

    # --- names, placed greedily to avoid overlaps --------------------------------------------------
    if names:
        _place_names(ax, areas, lon, lat, key | east, block_boxes)

    # --- legend ------------------------------------------------------------------------------------
    if legend:
        from matplotlib.legend_handler import HandlerTuple

        rail = (Line2D([], [], color=RAIL_COLOR, lw=2.6), Line2D([], [], color="white", lw=1.3, ls=(0, (3, 3))))
        handles = [
            Line2D([], [], color=ROAD_COLOR, lw=1.0), rail,
            Line2D([], [], color=FORT_COLOR, lw=0, marker="$\u2261$", markersize=9),
            Line2D([], [], color="none", marker="o", markersize=10, markerfacecolor=BADGE_COLOR,
                   markeredgecolor="#222222"),
            Line2D([], [], color="none", marker="h", markersize=11, markerfacecolor="#fbe3e0",
                   markeredgecolor=EAST_COLOR, markeredgewidth=2),
            Line2D([], [], color=FRONT_COLOR, lw=2.4, ls=(0, (7, 3))),
            Line2D([], [], color=CURZON_COLOR, lw=2.2, ls=(0, (1, 1.6))),
        ]
        labels = ["road", "railway", "fortified link (ticks on the defender's side)", "key city (VP)",
                  "Eastern Link", "front line (north / south)", "Curzon line"]
        if blocks is not None and len(blocks):
            for side in ("polish", "soviet"):
                handles.append(Patch(fc=SIDE_COLORS[side], ec="white"))
                labels.append(f"{side.title()} block (SP; c = cavalry, L = leader)")
        if garrisons is not None and len(garrisons):
            for side in ("polish", "soviet"):
                handles.append(Line2D([], [], color="none", marker="o", markersize=13, markerfacecolor="none",
                                      markeredgecolor=SIDE_COLORS[side], markeredgewidth=2.4))
                labels.append(f"{side.title()} garrison")
        for t, c in TERRITORY_COLORS.items():
            if t in set(areas["territory"]):
                handles.append(Line2D([], [], color="none", marker="o", markersize=7, markerfacecolor=c,
                                      markeredgecolor="#444444"))
                labels.append(t.title())
        ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.035, 1.0), fontsize=8.5,
                  handler_map={tuple: HandlerTuple(ndivide=1)}, framealpha=0.92, borderpad=0.8,
                  title="Legend", title_fontsize=9)
    ax.set_title(title or "Strike of the Eagle — theatre map (1920)")
    return ax


def _place_names(ax, areas, lon, lat, big, obstacles) -> None:
    """Put each area name beside its disc, trying several offsets to avoid overlapping labels."""
    from matplotlib.transforms import Bbox

    fig = ax.figure
    fig.canvas.draw()  # fixes the transforms for extent checks
    renderer = fig.canvas.get_renderer()
    trans = ax.transData
    placed = [t.get_window_extent(renderer).expanded(1.02, 1.05) for t in obstacles]
    pts = trans.transform(np.column_stack([lon, lat]))
    # discs are obstacles too
    for (px, py), b in zip(pts, big):
        r = 8 if b else 4
        placed.append(Bbox([[px - r, py - r], [px + r, py + r]]))
    # key cities first: they matter most
    order = sorted(range(len(areas)), key=lambda i: (not big[i], -lat[i]))
    offsets = [(7, -1, "left", "center"), (-7, -1, "right", "center"), (0, -9, "center", "top"),
               (0, 8, "center", "bottom"), (6, -7, "left", "top"), (-6, -7, "right", "top"),
               (6, 6, "left", "bottom"), (-6, 6, "right", "bottom"), (0, -17, "center", "top"),
               (13, -1, "left", "center"), (-13, -1, "right", "center")]
    for i in order:
        name = str(areas["name"].iat[i])
        size = 7.4 if big[i] else 6.4
        weight = "bold" if big[i] else "normal"
        best = None
        for dx, dy, ha, va in offsets:
            ddx = dx + (np.sign(dx) * 4 if big[i] else 0)
            ddy = dy + (np.sign(dy) * 4 if big[i] else 0)
            t = ax.annotate(name, (lon[i], lat[i]), xytext=(ddx, ddy), textcoords="offset points", ha=ha,
                            va=va, fontsize=size, fontweight=weight, color="#1b1b1b", zorder=6)
            bb = t.get_window_extent(renderer)
            hits = sum(bb.overlaps(p) for p in placed)
            if best is None or hits < best[0]:
                if best is not None:
                    best[1].remove()
                best = (hits, t, bb)
            else:
                t.remove()
            if hits == 0:
                break
        _, t, bb = best
        t.set_path_effects(_halo())
        placed.append(bb)


def _halo():
    import matplotlib.patheffects as pe

    return [pe.withStroke(linewidth=2.2, foreground="#fbfaf5", alpha=0.9)]
