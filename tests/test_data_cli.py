"""CLI: ``soe-sim scenarios``, ``soe-sim validate`` and ``soe-sim map``."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from soe_sim.cli import main

FIXTURE = Path(__file__).parent / "fixtures" / "data"


def test_scenarios_json(capsys, monkeypatch):
    monkeypatch.setenv("SOE_SIM_DATA", str(FIXTURE))
    assert main(["scenarios", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data == [{"id": "test-offensive", "name": "Test Offensive", "rounds": 2}]


def test_scenarios_table(capsys, monkeypatch):
    monkeypatch.setenv("SOE_SIM_DATA", str(FIXTURE))
    assert main(["scenarios"]) == 0
    out = capsys.readouterr().out
    assert "test-offensive" in out and "Test Offensive" in out


def test_builtin_scenarios_json(capsys):
    assert main(["scenarios", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert isinstance(data, list)
    for item in data:
        assert set(item) == {"id", "name", "rounds"}


def test_validate_ok(capsys):
    assert main(["validate", str(FIXTURE)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: ") and "10 areas" in out


def test_validate_single_scenario_ok(capsys):
    assert main(["validate", str(FIXTURE / "scenarios" / "test-offensive.toml")]) == 0
    assert "scenario test-offensive" in capsys.readouterr().out


def test_validate_errors_exit_2(tmp_path, capsys):
    root = tmp_path / "data"
    shutil.copytree(FIXTURE, root)
    scen = root / "scenarios" / "test-offensive.toml"
    scen.write_text(scen.read_text().replace('area = "lublin"', 'area = "Zlobn"'))
    links = root / "map" / "links.csv"
    links.write_text(links.read_text().replace("lublin,kovel,road", "lublin,lublin,road"))
    assert main(["validate", str(root)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) >= 2
    assert all(line.startswith("error: ") for line in err)
    assert any("test-offensive.toml" in l and "field 'area'" in l and "did you mean `zlobin`?" in l for l in err)
    assert any("links.csv" in l and "self-link" in l for l in err)


def test_validate_missing_path(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nope.toml")]) == 2
    assert "not found" in capsys.readouterr().err


def test_map_command(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SOE_SIM_DATA", str(FIXTURE))
    out = tmp_path / "m.png"
    assert main(["map", "--scenario", "test-offensive", "-o", str(out)]) == 0
    assert out.stat().st_size > 20_000


def test_map_unknown_scenario(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SOE_SIM_DATA", str(FIXTURE))
    assert main(["map", "--scenario", "test-ofensive", "-o", str(tmp_path / "m.png")]) == 2
    assert "did you mean `test-offensive`?" in capsys.readouterr().err
