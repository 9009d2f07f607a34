"""Game data: the theatre map, block rosters, card decks and scenarios, validated.

Everything under ``data/`` is plain CSV/TOML (``docs/data-format.md``). The loaders here read it,
check it — collecting every problem into one :class:`~soe_sim.errors.SoeInputError` — and return
pandas DataFrames for people plus numba-ready numpy arrays for the engine.

>>> from soe_sim.data import load_map, load_scenario
>>> game_map = load_map()                      # doctest: +SKIP
>>> scenario = load_scenario("kiev-offensive")  # doctest: +SKIP
"""
from __future__ import annotations

from soe_sim.data.blocks import Roster, load_blocks
from soe_sim.data.cards import load_cards, parse_effect
from soe_sim.data.enums import (
    ARM,
    FRONT,
    LINK,
    SIDE,
    TERRITORY,
    Arm,
    CardFront,
    EventKind,
    Front,
    LeaderAbility,
    LinkKind,
    Nation,
    Side,
    Territory,
    UnitClass,
)
from soe_sim.data.map import GameMap, GridCalibration, MapArrays, load_map
from soe_sim.data.scenario import RoundPhase, Scenario, list_scenarios, load_scenario
from soe_sim.data.validate import DataSet, load_dataset, validate

__all__ = [
    "ARM",
    "FRONT",
    "LINK",
    "SIDE",
    "TERRITORY",
    "Arm",
    "CardFront",
    "DataSet",
    "EventKind",
    "Front",
    "GameMap",
    "GridCalibration",
    "LeaderAbility",
    "LinkKind",
    "MapArrays",
    "Nation",
    "Roster",
    "RoundPhase",
    "Scenario",
    "Side",
    "Territory",
    "UnitClass",
    "list_scenarios",
    "load_blocks",
    "load_cards",
    "load_dataset",
    "load_map",
    "load_scenario",
    "parse_effect",
    "validate",
]
