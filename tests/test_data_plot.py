"""Rendering smoke tests for the map plot (Agg backend)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from soe_sim.data import load_map, load_scenario  # noqa: E402
from soe_sim.data.plot import plot_map  # noqa: E402
from soe_sim.plotting import SIDE_COLORS, use_style  # noqa: E402

FIXTURE = Path(__file__).parent / "fixtures" / "data"


@pytest.fixture(scope="module")
def game_map():
    return load_map(FIXTURE)


def _save(ax, path):
    ax.figure.savefig(path, dpi=60)
    plt.close(ax.figure)
    assert path.stat().st_size > 10_000


def test_plot_map_plain(game_map, tmp_path):
    with use_style():
        ax = plot_map(game_map)
    assert ax.get_title()
    _save(ax, tmp_path / "plain.png")


def test_plot_map_with_scenario(game_map, tmp_path):
    sc = load_scenario(FIXTURE / "scenarios" / "test-offensive.toml")
    ax = plot_map(game_map, scenario=sc)
    assert "Test Offensive" in ax.get_title()
    texts = {t.get_text() for t in ax.texts}
    assert {"Warsaw", "Zlobin", "EL", "4", "L", "2c"} <= texts
    _save(ax, tmp_path / "scenario.png")


def test_plot_map_values_heatmap(game_map, tmp_path):
    values = np.linspace(0, 1, game_map.n_areas)
    values[3] = np.nan
    fig, ax = plt.subplots(figsize=(8, 6))
    out = plot_map(game_map, ax=ax, values=values, value_label="P(held)", names=False, legend=False)
    assert out is ax
    _save(ax, tmp_path / "heat.png")
    with pytest.raises(ValueError):
        plot_map(game_map, values=np.zeros(3))
    plt.close("all")


def test_side_colors():
    assert set(SIDE_COLORS) == {"polish", "soviet"}


def test_plot_builtin_map_and_scenarios(tmp_path):
    from soe_sim.data import list_scenarios

    gm = load_map()
    with use_style():
        ax = plot_map(gm)
        _save(ax, tmp_path / "builtin.png")
        for sid in list_scenarios()["id"][:1]:
            ax = plot_map(gm, scenario=load_scenario(sid))
            _save(ax, tmp_path / f"{sid}.png")
