"""The loaders' public API and the numba-ready arrays, on the small fixture data directory."""
from __future__ import annotations

import shutil
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest

from soe_sim.data import (
    FRONT,
    LINK,
    SIDE,
    Front,
    LinkKind,
    Side,
    list_scenarios,
    load_blocks,
    load_cards,
    load_map,
    load_scenario,
    parse_effect,
)
from soe_sim.errors import SoeInputError

FIXTURE = Path(__file__).parent / "fixtures" / "data"


@pytest.fixture(scope="module")
def game_map():
    return load_map(FIXTURE)


def test_map_frames_and_index(game_map):
    assert {"id", "name", "grid", "front", "vp", "eastern_link", "lon", "lat", "territory"} <= set(game_map.areas.columns)
    assert game_map.area_index["warsaw"] == 0
    assert game_map.ids[game_map.area_index["zlobin"]] == "zlobin"
    assert len(game_map.links) == 14
    assert game_map.n_areas == 10
    # accepts the map dir itself as well as the data root
    assert load_map(FIXTURE / "map").n_areas == 10


def test_csr_adjacency_is_symmetric_and_sorted(game_map):
    ptr, ind = game_map.adj_indptr, game_map.adj_indices
    assert ptr.dtype == np.int32 and ind.dtype == np.int32
    assert ptr[-1] == 2 * len(game_map.links)
    n = game_map.n_areas
    edges = {(i, int(j)) for i in range(n) for j in ind[ptr[i]:ptr[i + 1]]}
    assert all((j, i) in edges for i, j in edges)
    for i in range(n):
        row = ind[ptr[i]:ptr[i + 1]]
        assert np.all(np.diff(row) > 0)
    assert sorted(game_map.neighbours("warsaw")) == ["bialystok", "brest", "lublin"]


def test_rail_csr(game_map):
    assert sorted(game_map.neighbours("warsaw", rail_only=True)) == ["bialystok", "brest"]  # brest is 'both'
    assert game_map.neighbours("lublin", rail_only=True) == []
    assert game_map.link_kind("warsaw", "brest") is LinkKind.BOTH
    assert game_map.link_kind("warsaw", "minsk") is None
    assert game_map.rail_indptr[-1] == 2 * int(((game_map.links["kind_code"] & LINK.RAIL) != 0).sum())


def test_fortification_is_directed(game_map):
    # SoE 1.2: warsaw is fortified toward brest: a defender in warsaw attacked from brest
    assert game_map.is_fortified("warsaw", "brest")
    assert not game_map.is_fortified("brest", "warsaw")
    assert int(game_map.adj_fortified.sum()) == 1


def test_attribute_arrays(game_map):
    i = game_map.area_index
    assert game_map.vp.dtype == np.int8 and game_map.vp[i["warsaw"]] == 2
    assert game_map.front[i["lublin"]] == Front.SOUTH == FRONT.SOUTH
    assert game_map.eastern_link.dtype == np.bool_ and game_map.eastern_link[i["zlobin"]]
    assert game_map.garrison[i["warsaw"]] and not game_map.garrison[i["lublin"]]
    assert game_map.supply_source[i["warsaw"]] == Side.POLISH
    assert game_map.supply_source[i["zlobin"]] == SIDE.SOVIET
    assert game_map.supply_source[i["lublin"]] == SIDE.NONE
    assert game_map.strategic_cubes.shape == (10, 3)
    assert list(game_map.strategic_cubes[i["minsk"]]) == [0, 1, 0]


def test_arrays_usable_in_numba(game_map):
    @numba.njit(cache=False)
    def north_key_city_vp(a):
        total = 0
        for k in range(a.vp.shape[0]):
            if a.front[k] == FRONT.NORTH and not a.eastern_link[k]:
                total += a.vp[k]
        return total

    @numba.njit(cache=False)
    def degree(indptr, i):
        return indptr[i + 1] - indptr[i]

    arr = game_map.arrays
    expected = int(sum(v for v, f, e in zip(game_map.vp, game_map.front, game_map.eastern_link)
                       if f == FRONT.NORTH and not e))
    assert north_key_city_vp(arr) == expected
    assert degree(arr.adj_indptr, 0) == 3


def test_blocks_and_leaders():
    roster = load_blocks(FIXTURE)
    blocks, leaders = roster
    assert isinstance(blocks, pd.DataFrame) and "pl-1-id" in roster.block_index
    assert set(leaders["block"]) == {"pl-pilsudski", "ru-budyonny"}
    assert roster.side_of("ru-4-cd") == "soviet"
    assert roster.max_sp.dtype == np.int8


def test_cards_effects_parsed():
    deck = load_cards("polish", FIXTURE)
    assert len(deck) == 55
    row = deck.set_index("id").loc[3]
    assert row["effect"] == {"condition": "won_key_city_battle_min_losses_3", "initiative": 1}
    assert deck.set_index("id").loc[10, "effect"] == {}
    assert parse_effect("enemy_extra_loss:1;cancel_fortification:1") == {
        "enemy_extra_loss": 1, "cancel_fortification": 1}
    with pytest.raises(SoeInputError) as info:
        parse_effect("enemy_extra_los:1")
    assert "did you mean `enemy_extra_loss`?" in str(info.value)
    with pytest.raises(SoeInputError):
        load_cards("polsh", FIXTURE)


def test_scenario_api():
    sc = load_scenario(FIXTURE / "scenarios" / "test-offensive.toml")
    assert sc.id == "test-offensive" and sc.name == "Test Offensive"
    assert sc.rounds == 2
    assert sc.start.round == 1 and sc.end.phase == "reinforcement"
    assert list(sc.deployment.columns) == ["block", "side", "area", "sp"]
    assert sc.deployment.set_index("block").loc["ru-1-id", "side"] == "soviet"
    assert set(sc.garrisons["area"]) == {"warsaw", "minsk"}
    assert {"block", "side", "round", "phase", "area", "sp", "condition"} <= set(sc.reinforcements.columns)
    assert sc.force_pool["polish"] == ["pl-4-id", "pl-5-id"]
    assert sc.removed_cards == {"polish": [], "soviet": [23]}
    assert sc.special_rule("arrival_check")[0]["id"] == "first-cavalry-army"
    assert sc.objectives[0]["kind"] == "hold_area"
    assert sc.victory["kind"] == "vp"
    assert sc.vp == {"side": "polish", "value": 1} and sc.vp_signed == 1
    assert sc.initiative["south"] == {"side": "polish", "level": 2}
    assert sc.cubes["soviet"]["cavalry"] == 1


def test_scenario_objective_areas(tmp_path):
    # single `area` is normalised to `areas = [area]`; `areas` (all-of) is kept as given
    sc = load_scenario(FIXTURE / "scenarios" / "test-offensive.toml")
    assert sc.objectives[0]["area"] == "warsaw" and sc.objectives[0]["areas"] == ["warsaw"]
    root = tmp_path / "data"
    shutil.copytree(FIXTURE, root)
    path = root / "scenarios" / "test-offensive.toml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('area = "warsaw"\nvp = 1', 'areas = ["warsaw", "lublin"]\nvp = 3', 1),
                    encoding="utf-8")
    obj = load_scenario(path).objectives[0]
    assert obj["areas"] == ["warsaw", "lublin"] and "area" not in obj and obj["vp"] == 3


def test_list_scenarios_fixture():
    df = list_scenarios(FIXTURE)
    assert list(df.columns[:3]) == ["id", "name", "rounds"]
    assert df.iloc[0].to_dict()["rounds"] == 2
