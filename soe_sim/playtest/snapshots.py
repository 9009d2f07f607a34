"""Map snapshots of a narrated game: one PNG per phase and an animated GIF of the whole game.

The theatre map (:func:`soe_sim.data.plot.plot_map`: areas, roads, railways, fortifications, key
cities, names, legend) is drawn once; each frame adds the position at the end of a phase on top of
it: the blocks (squares in the side colours with their SP, as ``plot_map`` draws them), garrisons
(rings), the controller of every key city (a small square under its VP badge), the phase's moves as
arrows (dashed: retreats and pull-backs) and its battles as stars. Every frame is zoomed on the same
part of the map (the areas the game touched) and has the same layout, so the GIF does not jump. The
GIF is written with matplotlib's ``PillowWriter``.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from soe_sim.data.enums import Side
from soe_sim.plotting import SIDE_COLORS, use_style
from soe_sim.playtest.story import PhaseStory, Story

__all__ = ["SnapshotCanvas", "map_limits", "write_snapshots"]

FIGSIZE = (13.0, 9.5)
AXES_RECT = (0.03, 0.04, 0.70, 0.89)  # fixed, so every frame has the same layout
BATTLE_COLOR = "#f39c12"


def _slug(s: int) -> str:
    return Side(int(s)).slug


def map_limits(story: Story, pad: float = 0.6, min_size=(5.0, 3.5)):
    """``(xlim, ylim)`` around every area the game's blocks and garrisons stood in or moved through
    (``pad`` degrees around them, at least ``min_size`` degrees of longitude and latitude), or None
    when that is most of the map anyway."""
    m = story.setup.game_map
    lon = m.areas["lon"].to_numpy(dtype=float)
    lat = m.areas["lat"].to_numpy(dtype=float)
    used = set()
    for ph in story.phases:
        used.update(a for _b, _s, a, _sp in ph.blocks)
        for _s, a, a2, _k in ph.moves:
            used.update(x for x in (a, a2) if x >= 0)
        if ph.garrison is not None:
            used.update(np.flatnonzero(ph.garrison >= 0).tolist())
    if not used:
        return None
    idx = np.array(sorted(used))
    x0, x1 = lon[idx].min() - pad, lon[idx].max() + pad
    y0, y1 = lat[idx].min() - pad, lat[idx].max() + pad
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    half_w, half_h = max((x1 - x0) / 2, min_size[0] / 2), max((y1 - y0) / 2, min_size[1] / 2)
    x0, x1, y0, y1 = cx - half_w, cx + half_w, cy - half_h, cy + half_h
    full_w, full_h = np.nanmax(lon) - np.nanmin(lon), np.nanmax(lat) - np.nanmin(lat)
    if (x1 - x0) > 0.85 * full_w and (y1 - y0) > 0.85 * full_h:
        return None
    # the axes' shape (the map is drawn with aspect 1/cos(lat))
    w_screen = (x1 - x0) * np.cos(np.radians(cy))
    h = y1 - y0
    target = (AXES_RECT[2] * FIGSIZE[0]) / (AXES_RECT[3] * FIGSIZE[1])
    if w_screen / h < target:
        grow = (target * h / np.cos(np.radians(cy)) - (x1 - x0)) / 2
        x0, x1 = x0 - grow, x1 + grow
    else:
        grow = (w_screen / target - h) / 2
        y0, y1 = y0 - grow, y1 + grow
    return (float(x0), float(x1)), (float(y0), float(y1))


class SnapshotCanvas:
    """A figure holding the static map of a story's scenario; :meth:`show` puts a phase on it.

    Parameters
    ----------
    story : Story
    limits : ((x0, x1), (y0, y1)) or None or "auto"
        Map extent; ``"auto"`` = :func:`map_limits`.
    """

    def __init__(self, story: Story, limits="auto"):
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch

        from soe_sim.data.plot import plot_map

        self.story = story
        m = story.setup.game_map
        self.lon = m.areas["lon"].to_numpy(dtype=float)
        self.lat = m.areas["lat"].to_numpy(dtype=float)
        self.east = m.eastern_link.astype(bool)
        self.fig = plt.figure(figsize=FIGSIZE)
        self.ax = self.fig.add_axes(AXES_RECT)
        self.limits = map_limits(story) if limits == "auto" else limits
        plot_map(m, ax=self.ax, legend=True, names=True, title=story.setup.scenario.name)
        if self.limits is not None:
            self.ax.set_xlim(*self.limits[0])
            self.ax.set_ylim(*self.limits[1])
        first = self.ax.get_legend()
        handles, labels = [], []
        for s in ("polish", "soviet"):
            handles.append(Patch(fc=SIDE_COLORS[s], ec="white"))
            labels.append(f"{s.title()} block (SP; c = cavalry, L = leader)")
        for s in ("polish", "soviet"):
            handles.append(Line2D([], [], color="none", marker="o", markersize=13, markerfacecolor="none",
                                  markeredgecolor=SIDE_COLORS[s], markeredgewidth=2.4))
            labels.append(f"{s.title()} garrison")
        for s in ("polish", "soviet"):
            handles.append(Line2D([], [], color="none", marker="s", markersize=6, markerfacecolor=SIDE_COLORS[s],
                                  markeredgecolor="white"))
            labels.append(f"key city controlled by the {s.title()} side")
        handles += [Line2D([], [], color="#555555", lw=1.8), Line2D([], [], color="#555555", lw=1.8, ls="--"),
                    Line2D([], [], color="none", marker="*", markersize=15, markerfacecolor=BATTLE_COLOR,
                           markeredgecolor="#222222")]
        labels += ["move this phase (side colour)", "retreat / pull-back this phase", "battle this phase"]
        self.ax.legend(handles, labels, loc="lower left", bbox_to_anchor=(1.035, 0.0), fontsize=8.5,
                       framealpha=0.92, title="This phase", title_fontsize=9)
        if first is not None:
            self.ax.add_artist(first)
        self._dynamic: list = []

    def clear(self) -> None:
        """Remove the previous phase's layer."""
        for a in self._dynamic:
            a.remove()
        self._dynamic = []

    def show(self, ph: PhaseStory) -> None:
        """Draw the position at the end of ``ph`` (replacing the previous one)."""
        from soe_sim.data.plot import _block_label
        from soe_sim.playtest.narrate import signed_vp

        self.clear()
        ax, lon, lat, dyn = self.ax, self.lon, self.lat, self._dynamic
        n = self.story.names
        m = self.story.setup.game_map
        # garrisons (rings) and key-city controllers (SoE 1.3, 3.0)
        if ph.garrison is not None:
            for a in np.flatnonzero(ph.garrison >= 0):
                dyn.append(ax.scatter([lon[a]], [lat[a]], s=420, facecolors="none",
                                      edgecolors=SIDE_COLORS[_slug(ph.garrison[a])], linewidths=2.6, zorder=4.9))
        if ph.control is not None:
            for a in np.flatnonzero((m.vp > 0) & (ph.control >= 0)):
                dyn.append(ax.scatter([lon[a]], [lat[a] - 0.075], s=22, marker="s",
                                      c=SIDE_COLORS[_slug(ph.control[a])], edgecolors="white", linewidths=0.5,
                                      zorder=5.2))
        # blocks: squares above the area, as plot_map draws them
        per_area: dict = {}
        for b, s, a, sp in ph.blocks:
            per_area.setdefault(a, []).append((s, n.block_id[b], b, sp))
        for a, rows in per_area.items():
            rows.sort()
            k = len(rows)
            per_row = 6 if self.east[a] else 4
            for j, (s, _bid, b, sp) in enumerate(rows):
                col, row = j % per_row, j // per_row
                in_row = min(per_row, k - row * per_row)
                dx = (col - (in_row - 1) / 2) * 11.5
                dy = 13 + row * 11.5
                dyn.append(ax.annotate(_block_label(sp, n.block_arm[b]), (lon[a], lat[a]), xytext=(dx, dy),
                                       textcoords="offset points", ha="center", va="center", fontsize=6.3,
                                       fontweight="bold", color="white", zorder=7,
                                       bbox=dict(boxstyle="square,pad=0.22", fc=SIDE_COLORS[_slug(s)], ec="white",
                                                 lw=0.6)))
        # the phase's moves and battles
        seen = set()
        for s, a, a2, kind in ph.moves:
            if a < 0 or a2 < 0 or (s, a, a2, kind) in seen:
                continue
            seen.add((s, a, a2, kind))
            dashed = kind in ("retreat", "other")
            dyn.append(ax.annotate("", xy=(lon[a2], lat[a2]), xytext=(lon[a], lat[a]), zorder=6.5,
                                   arrowprops=dict(arrowstyle="-|>", color=SIDE_COLORS[_slug(s)], lw=1.8, alpha=0.8,
                                                   ls="--" if dashed else "-", shrinkA=6, shrinkB=6,
                                                   mutation_scale=13)))
        for bt in ph.battles:
            dyn.append(ax.scatter([lon[bt.area]], [lat[bt.area]], s=520, marker="*", c=BATTLE_COLOR,
                                  edgecolors="#222222", linewidths=0.8, alpha=0.75, zorder=4.8))
        dyn.append(ax.set_title(f"{self.story.setup.scenario.name} — {ph.title} — VP {signed_vp(ph.vp_end)}"))
        self._dynamic = [d for d in dyn if d is not ax.title]  # the title is replaced, not removed

    def close(self) -> None:
        import matplotlib.pyplot as plt

        plt.close(self.fig)


def write_snapshots(story: Story, out_dir, *, png: bool = True, gif_path=None, dpi: int = 80,
                    gif_dpi: int = 60, fps: float = 1.0, progress=None) -> list[Path]:
    """Write ``out_dir/<slug>.png`` for every phase (and the set-up) and, with ``gif_path``, the GIF.

    Parameters
    ----------
    story : Story
    out_dir : path
        Directory of the PNG snapshots (created when ``png``).
    png : bool
        Write the PNG snapshots.
    gif_path : path, optional
        Also write an animated GIF of all the frames (matplotlib ``PillowWriter``).
    dpi, gif_dpi : int
        Resolution of the PNGs and of the GIF frames.
    fps : float
        GIF frames per second (the last frame is held three times as long).
    progress : callable, optional
        Called as ``progress(i, n, phase)`` before each frame.

    Returns
    -------
    list of Path
        The PNG files written, in playing order.
    """
    import matplotlib as mpl
    from matplotlib.animation import PillowWriter

    out = Path(out_dir)
    if png:
        out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with use_style(), mpl.rc_context({"savefig.bbox": "standard"}):  # same frame size every phase
        canvas = SnapshotCanvas(story)
        try:
            writer = None
            if gif_path is not None:
                writer = PillowWriter(fps=fps)
                writer.setup(canvas.fig, str(gif_path), dpi=gif_dpi)
            n = len(story.phases)
            for i, ph in enumerate(story.phases):
                if progress is not None:
                    progress(i, n, ph)
                canvas.show(ph)
                if png:
                    path = out / f"{ph.slug}.png"
                    canvas.fig.savefig(path, dpi=dpi)
                    written.append(path)
                if writer is not None:
                    for _ in range(3 if i == n - 1 else 1):
                        writer.grab_frame()
            if writer is not None:
                writer.finish()
        finally:
            canvas.close()
    return written
