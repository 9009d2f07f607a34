"""Starting supply of the built-in scenarios (docs/rules.md D16).

A designed scenario does not start with blocks out of supply: at the start of every built-in scenario,
every block on the map that is not of a neutral nation (scenario special rule ``neutral_nation``) traces a
clear path to a friendly supply depot within its SoE 7.7 range (infantry 3, cavalry 5; leaders always), and
every garrison (SoE 4.0) stands on a key city (SoE 1.3) that its side controls and that has a clear path to
its side's supply source (SoE 1.31; else SoE 7.71 would remove it at once).
"""
from __future__ import annotations

import numpy as np
import pytest

from soe_sim.data import list_scenarios, load_blocks, load_map, load_scenario
from soe_sim.data.enums import Nation, Side
from soe_sim.engine.nb import UNREACHED, check_supply
from soe_sim.engine.state import STATUS, engine_constants, new_game

SCENARIOS = list(list_scenarios()["id"])


@pytest.fixture(scope="module")
def game_map():
    return load_map()


@pytest.fixture(scope="module")
def roster():
    return load_blocks()


@pytest.fixture(scope="module")
def start(game_map, roster, rules):
    """Scenario id → (scenario, starting state, check_supply arrays), computed once."""
    consts = engine_constants(rules)
    out = {}
    for sid in SCENARIOS:
        sc = load_scenario(sid, game_map=game_map, roster=roster)
        state = new_game(sc, game_map, roster, rules)
        out[sid] = (sc, state, check_supply(state, game_map, consts, apply=False))
    return out


def _neutral_nations(scenario) -> set[int]:
    return {int(Nation.from_slug(r["nation"])) for r in scenario.special_rules if r.get("kind") == "neutral_nation"}


def test_builtin_scenarios_listed():
    assert {"kiev-offensive", "tukhachevsky-offensive", "battle-of-warsaw", "campaign-1920"} <= set(SCENARIOS)


@pytest.mark.parametrize("sid", SCENARIOS)
def test_blocks_start_in_supply(sid, start, game_map, roster):
    """SoE 7.7: every non-neutral block on the map starts in supply."""
    sc, state, sup = start[sid]
    neutral = _neutral_nations(sc)
    ids = list(game_map.areas["id"])
    bad = []
    for k in range(len(state.block_side)):
        if state.block_status[k] != STATUS.ON_MAP or int(state.block_nation[k]) in neutral:
            continue
        if not sup["in_supply"][k]:
            side, area = int(state.block_side[k]), int(state.block_area[k])
            d = int(sup["depot_dist"][side, area])
            bad.append(f"{roster.blocks['id'].iat[int(state.block_roster[k])]} at {ids[area]} "
                       f"({'no clear path' if d == UNREACHED else f'{d} areas'} to a {Side(side).slug} depot)")
    assert not bad, f"{sid}: out of supply at start: " + "; ".join(bad)


@pytest.mark.parametrize("sid", SCENARIOS)
def test_garrisons_on_controlled_supplied_key_cities(sid, start, game_map):
    """SoE 4.0 / 1.3 / 1.31: a garrison stands on a key city its side controls, with a clear path to its
    side's supply source."""
    sc, state, sup = start[sid]
    ids = list(game_map.areas["id"])
    bad = []
    for i in np.flatnonzero(state.garrison_side >= 0):
        side = int(state.garrison_side[i])
        if not game_map.garrison[i]:
            bad.append(f"{ids[i]}: not a key city")
        elif int(state.control[i]) != side:
            bad.append(f"{ids[i]}: garrison {Side(side).slug}, control {int(state.control[i])}")
        elif sup["source_dist"][side, i] == UNREACHED:
            bad.append(f"{ids[i]}: no clear path to the {Side(side).slug} supply source")
    assert len(sc.garrisons) == int((state.garrison_side >= 0).sum())
    assert not bad, f"{sid}: " + "; ".join(bad)
