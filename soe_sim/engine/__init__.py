"""Game engine foundations: the game state (:mod:`.state`) and its numba kernels (:mod:`.nb`).

The full phase loop (SoE 5.0–8.5) is built on these; see docs/rules-coverage.md for what is wired.
"""
from __future__ import annotations

from soe_sim.engine.state import (  # noqa: F401
    STATUS,
    BlockStatus,
    EngineRules,
    GameState,
    engine_constants,
    initial_control,
    new_game,
)

__all__ = ["STATUS", "BlockStatus", "EngineRules", "GameState", "engine_constants", "initial_control",
           "new_game"]
