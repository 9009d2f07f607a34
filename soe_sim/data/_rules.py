"""Rule constants the data validator needs, read straight from ``data/rules/soe.toml``.

The validator must work on a user's data directory even when the rules package is replaced, so it
reads the few keys it needs itself and falls back to the rulebook values when the file or a key is
missing.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

from soe_sim.data._io import load_toml

# Fallbacks when data/rules/soe.toml is absent (the rulebook values).
_DEFAULTS = {
    "stacking.max_blocks": 4,  # SoE 1.0, 7.33
    "initiative.min_level": 1,  # SoE 6.1
    "initiative.max_level": 5,
    "round.operation_phases": 5,  # SoE 5.0, 7.0
    "blocks.brigade_max_sp": 2,  # SoE 2.1
    "blocks.division_max_sp": 4,  # SoE 2.1
    "blocks.leader_sp": 1,  # SoE 9.0
    "cards.deck_size": 55,
}


def rule(root: Path | None, key: str):
    """Value of dotted ``key`` in ``<root>/rules/soe.toml``, else the built-in default."""
    from soe_sim._paths import data_dir

    roots = [Path(root)] if root is not None else []
    roots.append(data_dir())
    for base in roots:
        path = base / "rules" / "soe.toml"
        try:
            node = load_toml(path)
            for part in key.split("."):
                node = node[part]
            return node
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError, TypeError):
            continue
    return _DEFAULTS[key]
