"""Writing a design study to ``--out DIR``: tables (CSV), games (parquet), plots (PNG), the JSON
summary and one self-contained ``index.html`` (plots embedded as base64 PNGs).

Each file is written to a temporary name and renamed into place, so a failure leaves no file
half-written.
"""
from __future__ import annotations

import base64
import html
import io
import json
import math
import os
from pathlib import Path

import pandas as pd

from soe_sim._paths import os_error_text
from soe_sim.errors import Problem, SoeInputError

__all__ = ["write_study", "check_study_dir", "json_default", "strict_json"]


def strict_json(obj):
    """``obj`` with NaN and infinite floats (and numpy scalars) as JSON-safe values: None for NaN and
    the infinite ends of an unbounded interval (the documents say when an interval is unbounded)."""
    if isinstance(obj, dict):
        return {str(k): strict_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [strict_json(v) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, (str, bytes)):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def json_default(o):
    """JSON for numpy scalars and the like (NaN stays NaN: ``json.dumps`` writes it as NaN)."""
    if hasattr(o, "item"):
        return o.item()
    if isinstance(o, Path):
        return str(o)
    return str(o)


def _png(fig) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def _atomic(path: Path, data: bytes) -> None:
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _fmt_cell(v) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        return f"{v:.4g}"
    return str(v)


def _html(title: str, lines: list[str], tables: dict[str, pd.DataFrame], images: dict[str, bytes],
          summary: dict) -> str:
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             "<style>body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
             "table{border-collapse:collapse;font-size:0.85em;margin:0.5em 0 1.5em}td,th{border:1px solid #ccc;"
             "padding:2px 6px;text-align:right}th{background:#f2f2f2}pre{background:#f7f7f7;padding:0.8em;"
             "overflow-x:auto;font-size:0.85em}img{max-width:100%}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>", "<pre>" + html.escape("\n".join(lines)) + "</pre>"]
    for name, png in images.items():
        uri = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
        parts.append(f"<h2>{html.escape(name)}</h2><img src='{uri}' alt='{html.escape(name)}'>")
    for name, df in tables.items():
        parts.append(f"<h2>{html.escape(name)}</h2>")
        parts.append(df.to_html(index=False, border=0, formatters={c: _fmt_cell for c in df.columns}, escape=True))
    parts.append("<h2>summary.json</h2><pre>" + html.escape(json.dumps(summary, indent=1, default=json_default))
                 + "</pre></body></html>")
    return "\n".join(parts)


# Files that mark a directory as another command's output: a study is not mixed into it.
_FOREIGN = {"manifest.json": "a sweep's output (manifest.json)", "game.md": "a playtest's output (game.md)"}


def check_study_dir(out) -> None:
    """Refuse ``out`` (before any game) when it is a file or holds another command's outputs (a sweep's
    ``manifest.json``, a playtest's ``game.md``): the study's files would be mixed with them."""
    from soe_sim.sim import check_output_dir

    if out is None:
        return
    out = check_output_dir(out, "--out")
    for name, what in _FOREIGN.items():
        if (out / name).is_file():
            raise SoeInputError(Problem("--out", "", "", str(out), f"the directory holds {what}",
                                        "give a new or empty directory"))


def write_study(out, *, title: str, text: str, summary: dict, tables: dict[str, pd.DataFrame],
                figures: dict, games: pd.DataFrame | None = None) -> list[Path]:
    """Write the study into directory ``out``: ``summary.json``, ``<table>.csv``, ``<figure>.png``,
    ``games.parquet`` and ``index.html``; returns the paths written."""
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise SoeInputError(Problem("--out", "", "", str(out), f"cannot create directory: {err.strerror}")) from None
    images = {name: _png(fig) for name, fig in figures.items() if fig is not None}
    written = []
    try:
        for name, png in images.items():
            p = out / f"{name}.png"
            _atomic(p, png)
            written.append(p)
        for name, df in tables.items():
            p = out / f"{name}.csv"
            _atomic(p, df.to_csv(index=False).encode())
            written.append(p)
        if games is not None:
            p = out / "games.parquet"
            buf = io.BytesIO()
            frame = games.copy()
            frame.attrs = {}
            frame.to_parquet(buf, index=False)
            _atomic(p, buf.getvalue())
            written.append(p)
        p = out / "summary.json"
        _atomic(p, (json.dumps(summary, indent=2, default=json_default) + "\n").encode())
        written.append(p)
        p = out / "index.html"
        _atomic(p, _html(title, text.splitlines(), tables, images, summary).encode())
        written.append(p)
    except OSError as err:
        raise SoeInputError(Problem("--out", "", "", str(out), f"cannot write: {os_error_text(err)}")) from None
    return written
