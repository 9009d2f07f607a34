"""Shared plotting helpers: the project style and the side colours.

All figures (maps, odds tables, heatmaps) use ``analysis/soe.mplstyle`` through :func:`use_style`
and colour the two sides with :data:`SIDE_COLORS`.
"""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Iterator

__all__ = ["SIDE_COLORS", "SIDE_LIGHT_COLORS", "STYLE_PATH", "use_style"]

#: Polish blue and Soviet red (block faces, bars, curves).
SIDE_COLORS = {"polish": "#1f4e9c", "soviet": "#c0392b"}
#: Lighter tints for fills behind the main colours.
SIDE_LIGHT_COLORS = {"polish": "#a9c4ec", "soviet": "#f1b3aa"}

STYLE_PATH = Path(__file__).resolve().parent.parent / "analysis" / "soe.mplstyle"


@contextlib.contextmanager
def use_style() -> Iterator[None]:
    """Context manager applying ``analysis/soe.mplstyle`` (when present) to the enclosed plots.

    Examples
    --------
    >>> with use_style():            # doctest: +SKIP
    ...     ax = plot_map(load_map())
    """
    import matplotlib.pyplot as plt

    if STYLE_PATH.exists():
        with plt.style.context(str(STYLE_PATH)):
            yield
    else:
        yield
