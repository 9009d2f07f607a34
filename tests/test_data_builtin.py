"""Integrity of the built-in data under data/: every check passes and the map matches the board."""
from __future__ import annotations

import numpy as np
import pytest

from soe_sim.data import list_scenarios, load_blocks, load_dataset, load_map, load_scenario


@pytest.fixture(scope="module")
def game_map():
    return load_map()  # raises SoeInputError listing every problem of the map


def test_all_builtin_data_valid():
    dataset = load_dataset()  # every check on every file, problems reported together
    assert dataset.game_map is not None and dataset.roster is not None
    assert set(dataset.decks) == {"polish", "soviet"}


def test_every_scenario_loads():
    listed = list_scenarios()
    assert len(listed) >= 1
    for sid in listed["id"]:
        sc = load_scenario(sid)
        assert sc.rounds >= 1
        assert len(sc.deployment) > 0
        assert set(sc.deployment["side"]) <= {"polish", "soviet"}


def test_area_count(game_map):
    assert 130 <= game_map.n_areas <= 175  # the SoE map has about 150 areas


def test_map_connected(game_map):
    n = game_map.n_areas
    seen = np.zeros(n, dtype=bool)
    stack = [0]
    seen[0] = True
    while stack:
        u = stack.pop()
        for v in game_map.adj_indices[game_map.adj_indptr[u]:game_map.adj_indptr[u + 1]]:
            if not seen[v]:
                seen[v] = True
                stack.append(int(v))
    assert seen.all(), [game_map.ids[i] for i in np.flatnonzero(~seen)]


@pytest.mark.parametrize("area,grid", [("warsaw", "B4"), ("kaunas", "E1"), ("polotsk", "I1"), ("mazyr", "I4")])
def test_fixed_grid_points(game_map, area, grid):
    # SoE 1.0 map grid: squares quoted in the rulebook and scenario set-ups
    row = game_map.areas.iloc[game_map.index(area)]
    assert row["grid"] == grid


@pytest.mark.parametrize("area", ["kiev", "mazyr"])
def test_two_vp_key_cities(game_map, area):
    assert game_map.vp[game_map.index(area)] == 2


@pytest.mark.parametrize("area", ["yartsevo", "klintsy", "elizavetgrad"])
def test_eastern_links(game_map, area):
    assert game_map.eastern_link[game_map.index(area)]


def test_warsaw_is_polish_supply_source(game_map):
    assert game_map.areas.iloc[game_map.index("warsaw")]["supply_source"] == "polish"


def test_every_row_has_provenance(game_map):
    gm = game_map
    assert (gm.areas["source"].str.strip() != "").all(), list(gm.areas.loc[gm.areas["source"].str.strip() == "", "id"])
    assert (gm.links["source"].str.strip() != "").all()
    assert (load_blocks().blocks["source"].str.strip() != "").all()


def test_every_rule_and_system_key_has_a_source():
    # user review: crt.above_highest / crt.below_lowest of systems/rswe.toml had a comment but no [sources] entry
    import tomllib
    from pathlib import Path

    def leaves(node, prefix=""):
        for key, value in node.items():
            yield from leaves(value, f"{prefix}{key}.") if isinstance(value, dict) else [f"{prefix}{key}"]

    data = Path(__file__).parent.parent / "data"
    for path in sorted([*(data / "rules").glob("*.toml"), *(data / "systems").glob("*.toml")]):
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
        sources = doc.pop("sources", {})

        def cited(key):  # a table's source covers its keys (drm.terrain)
            parts = key.split(".")
            return any(".".join(parts[:i]) in sources for i in range(1, len(parts) + 1))

        bare = [k for k in leaves(doc) if k not in ("meta.name", "meta.id", "meta.base", "meta.description")
                and not cited(k)]
        assert not bare, f"{path.name}: keys without a [sources] entry: {bare}"


def test_load_map_default_is_builtin(game_map):
    assert load_map().n_areas == game_map.n_areas
