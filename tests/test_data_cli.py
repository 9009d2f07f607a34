"""CLI: ``soe-sim scenarios``, ``soe-sim validate`` and ``soe-sim map``."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from soe_sim.cli import main

FIXTURE = Path(__file__).parent / "fixtures" / "data"
BUILTIN = Path(__file__).parent.parent / "data"


def fixture_data_dir(tmp_path: Path) -> Path:
    """The fixture with the built-in SoE rules: a whole data directory, as ``$SOE_SIM_DATA`` must name."""
    root = tmp_path / "data"
    shutil.copytree(FIXTURE, root)
    (root / "rules").mkdir()
    shutil.copy(BUILTIN / "rules" / "soe.toml", root / "rules")
    return root


def test_scenarios_json(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SOE_SIM_DATA", str(fixture_data_dir(tmp_path)))
    assert main(["scenarios", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data == [{"id": "test-offensive", "name": "Test Offensive", "rounds": 2}]


def test_scenarios_table(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SOE_SIM_DATA", str(fixture_data_dir(tmp_path)))
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
    monkeypatch.setenv("SOE_SIM_DATA", str(fixture_data_dir(tmp_path)))
    out = tmp_path / "m.png"
    assert main(["map", "--scenario", "test-offensive", "-o", str(out)]) == 0
    assert out.stat().st_size > 20_000


def test_map_unknown_scenario(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("SOE_SIM_DATA", str(fixture_data_dir(tmp_path)))
    assert main(["map", "--scenario", "test-ofensive", "-o", str(tmp_path / "m.png")]) == 2
    assert "did you mean `test-offensive`?" in capsys.readouterr().err


def test_a_partial_soe_sim_data_names_the_missing_subdirectories(tmp_path, capsys, monkeypatch):
    # user review: only map/ gave "unknown ruleset (got 'soe'); built-in rulesets: " (odds) or "no scenarios"
    # with exit 0 (scenarios): $SOE_SIM_DATA replaces the whole data/, so every subdirectory must be there
    root = tmp_path / "partial"
    shutil.copytree(FIXTURE / "map", root / "map")
    monkeypatch.setenv("SOE_SIM_DATA", str(root))
    for cmd in (["scenarios"], ["odds", "--attacker", "4i", "--defender", "3i"], ["validate"]):
        assert main(cmd) == 2
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert line.startswith("error: SOE_SIM_DATA: not a data directory: it lacks blocks/, cards/, rules/, "
                               "scenarios/") and str(root) in line and "whole copy of the data/ directory" in line


def test_errors_name_files_relative_to_the_working_directory(tmp_path, capsys, monkeypatch):
    # user review: "/tmp/rd/e2/rules/eats.toml: …" among relative paths (a file read by its absolute path)
    monkeypatch.chdir(tmp_path)
    overlay = tmp_path / "ov.toml"
    overlay.write_text("[combat]\nflank_penalti = 1\n")
    assert main(["odds", "--attacker", "4i", "--defender", "3i", "--rules", str(overlay)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: ov.toml: field 'combat.flank_penalti': unknown rule key")
