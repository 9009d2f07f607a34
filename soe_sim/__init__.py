"""soe_sim: exact combat odds and Monte Carlo analysis for *Strike of the Eagle* (1920)."""
from __future__ import annotations

__version__ = "0.1.0"

from soe_sim.battle import Battle, BattleOdds, battle_odds, simulate_battles  # noqa: E402
from soe_sim.rules import Rules, load_rules  # noqa: E402

__all__ = [
    "Battle",
    "BattleOdds",
    "Rules",
    "battle_odds",
    "load_rules",
    "simulate_battles",
]

try:  # data loaders (map, rosters, scenarios)
    from soe_sim.data import load_map, load_scenario  # noqa: F401

    __all__ += ["load_map", "load_scenario"]
except ImportError:  # pragma: no cover - present once the data subpackage lands
    pass
