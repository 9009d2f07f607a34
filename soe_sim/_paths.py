"""Where the built-in data lives.

The project ships its data as plain TOML/CSV under ``data/`` at the repository root. Users can point
``SOE_SIM_DATA`` at their own copy to replace any of it.
"""
from __future__ import annotations

import os
from pathlib import Path

_REPO_DATA = Path(__file__).resolve().parent.parent / "data"


def data_dir() -> Path:
    """Root of the data directory (``$SOE_SIM_DATA`` or the repository's ``data/``)."""
    env = os.environ.get("SOE_SIM_DATA")
    return Path(env) if env else _REPO_DATA


def file_stamps(files) -> tuple:
    """``(resolved path, mtime_ns, size)`` of each existing file of ``files``, sorted: a cache key
    part that changes when one of them is edited (the set-up and rules caches)."""
    out = []
    for p in sorted({Path(f).resolve() for f in files}):
        if p.is_file():
            st = p.stat()
            out.append((str(p), st.st_mtime_ns, st.st_size))
    return tuple(out)
