"""Every notebook in notebooks/ runs top to bottom with small sizes (SOE_SIM_SMALL=1, read through
analysis.notebook_size), and the committed notebooks follow the house rules: outputs stripped, a
seed in the first code cell, imports only from soe_sim / analysis (plus the standard tools)."""
from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from analysis import SMALL_ENV, is_small, notebook_size

pytestmark = pytest.mark.game_loop  # plays games: compiled once for the session (conftest.py)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# Third-party modules a notebook may import besides soe_sim / analysis (display and plotting only).
ALLOWED_IMPORTS = {"soe_sim", "analysis", "numpy", "pandas", "matplotlib", "ipywidgets", "IPython",
                   "__future__", "os", "pathlib", "json", "math"}
EXECUTE_TIMEOUT = 900  # seconds per cell: a cold numba cache compiles the game loop


def _code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def test_notebook_size_switch(monkeypatch):
    monkeypatch.delenv(SMALL_ENV, raising=False)
    assert not is_small()
    assert notebook_size(1000, 10) == 1000
    for on in ("1", "yes", "true"):
        monkeypatch.setenv(SMALL_ENV, on)
        assert is_small()
        assert notebook_size(1000, 10) == 10
    for off in ("0", "", "false", "off"):
        monkeypatch.setenv(SMALL_ENV, off)
        assert notebook_size(1000, 10) == 1000


def test_there_are_notebooks():
    names = {p.name for p in NOTEBOOKS}
    assert {"01_combat_odds.ipynb", "02_scenario_balance.ipynb"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_house_rules(path):
    import nbformat

    nb = nbformat.read(path, as_version=4)
    cells = _code_cells(nb)
    assert cells, f"{path.name} has no code cell"
    for c in cells:
        assert not c.get("outputs"), f"{path.name}: outputs must be stripped before committing"
        assert c.get("execution_count") is None, f"{path.name}: execution counts must be stripped"
    assert "seed" in cells[0].source.lower(), f"{path.name}: the first code cell must set a seed"
    assert "notebook_size" in "\n".join(c.source for c in cells), f"{path.name}: sizes via analysis.notebook_size"
    for c in cells:
        src = "\n".join(line for line in c.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(src)):
            mods = []
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                mods = [node.module or ""]
            for m in mods:
                assert m.split(".")[0] in ALLOWED_IMPORTS, f"{path.name}: imports {m}; use soe_sim / analysis"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path, tmp_path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv(SMALL_ENV, "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("NUMBA_NUM_THREADS", os.environ.get("NUMBA_NUM_THREADS", "1"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=EXECUTE_TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError naming the failing cell
    errors = [o for c in _code_cells(nb) for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
