"""soe_sim: exact combat odds and Monte Carlo analysis for *Strike of the Eagle* (1920)."""
from __future__ import annotations

__version__ = "0.1.0"

from soe_sim.battle import Battle, BattleOdds, battle_odds, resolve, simulate_battles  # noqa: E402
from soe_sim.data import list_scenarios, load_blocks, load_cards, load_map, load_scenario  # noqa: E402
from soe_sim.rules import Rules, load_rules  # noqa: E402
from soe_sim.sim import simulate  # noqa: E402

__all__ = [
    "Battle",
    "BattleOdds",
    "Rules",
    "battle_odds",
    "list_scenarios",
    "load_blocks",
    "load_cards",
    "load_map",
    "load_rules",
    "load_scenario",
    "resolve",
    "simulate",
    "simulate_battles",
]
