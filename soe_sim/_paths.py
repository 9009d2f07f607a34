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
