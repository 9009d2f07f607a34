"""Rules an overlay or variant cannot change, and the start positions under a changed stacking limit.

* ``blocks.division_max_sp``, ``brigade_max_sp`` and ``leader_sp`` only bound the roster file: an overlay,
  a ruleset with a base, a variant or a design knob setting one is an error, and ``knobs`` hides them.
* ``stacking.max_blocks`` lowered by an overlay or variant is checked against the scenarios' start
  positions, as the same value in a data copy's ``rules/soe.toml`` is.
"""
from __future__ import annotations

import shutil

import pytest

from soe_sim._paths import data_dir
from soe_sim.cli import main
from soe_sim.errors import SoeInputError
from tests.test_design_variant import _problems, _write

STACK1 = '[meta]\nbase = "soe"\n[stacking]\nmax_blocks = 1\n'


def _error_lines(capsys) -> list[str]:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()


# --------------------------------------------------------------------------------------------------
# Roster bounds (review finding 4)


@pytest.mark.parametrize("key", ["division_max_sp", "brigade_max_sp", "leader_sp"])
def test_an_overlay_setting_a_roster_bound_is_an_error(tmp_path, key):
    from soe_sim.rules import load_rules

    ov = _write(tmp_path, "bound.toml", f'[meta]\nbase = "soe"\n[blocks]\n{key} = 3\n')
    for call in (lambda: load_rules(ov), lambda: load_rules("soe", [ov]), lambda: load_rules("eats", [ov])):
        with pytest.raises(SoeInputError) as e:
            call()
        (line,) = _problems(e)
        assert "bound.toml" in line and f"blocks.{key}" in line and "only bounds the roster" in line
        assert "blocks/blocks.csv" in line and "SOE_SIM_DATA" in line


def test_validate_and_odds_reject_a_roster_bound_overlay(tmp_path, capsys):
    # review finding 4: `validate ov/div3.toml` said ok and the overlay changed nothing
    ov = _write(tmp_path, "div3.toml", '[meta]\nbase = "soe"\n[blocks]\ndivision_max_sp = 3\nbrigade_max_sp = 1\n')
    for cmd in (["validate", str(ov)], ["odds", "--attacker", "4i", "--defender", "3i", "--rules", str(ov)]):
        assert main(cmd) == 2
        lines = _error_lines(capsys)
        assert len(lines) == 2 and all("div3.toml" in x and "only bounds the roster" in x for x in lines)


def test_a_variant_or_knob_setting_a_roster_bound_is_an_error(tmp_path):
    from soe_sim.design.variant import Variant, list_knobs, load_variant, parse_knob, resolve

    v = _write(tmp_path, "lead.toml", 'name = "lead"\ndescription = "x"\n[rules]\nblocks.leader_sp = 2\n')
    with pytest.raises(SoeInputError) as e:
        load_variant(str(v))
    (line,) = _problems(e)
    assert "lead.toml" in line and "[rules]" in line and "blocks.leader_sp" in line and "only bounds" in line
    with pytest.raises(SoeInputError, match="a knob cannot change it"):
        parse_knob("rules.blocks.division_max_sp")
    with pytest.raises(SoeInputError, match="only bounds the roster"):  # a variant built in memory
        resolve("tutorial", Variant.from_spec({"name": "x", "rules": {"blocks": {"brigade_max_sp": 1}}}))
    names = [n for n, _ in list_knobs("tutorial")]
    assert "rules.blocks.detachment_max_sp" in names
    assert not [n for n in names if n.endswith(("division_max_sp", "brigade_max_sp", "leader_sp"))]


def test_a_sweep_overlay_setting_a_roster_bound_is_an_error():
    from soe_sim.sim.sweep import Overlay, _overlay_rules

    with pytest.raises(SoeInputError, match="only bounds the roster"):
        _overlay_rules("soe", Overlay("div3", rules={"blocks": {"division_max_sp": 3}}), "sweep.toml")


def test_the_roster_bounds_still_come_from_a_data_copys_own_rules():
    # the keys stay in the complete rulesets (the roster check reads them there), and the bases still load
    from soe_sim.rules import load_rules

    assert load_rules("soe")["blocks.division_max_sp"] == 4
    assert load_rules("eats")["blocks.leader_sp"] == 1


# --------------------------------------------------------------------------------------------------
# Start positions under another stacking limit (review finding 7)


def test_validate_names_the_scenarios_an_overlay_overstacks(tmp_path, capsys):
    ov = _write(tmp_path, "stack1.toml", STACK1)
    assert main(["validate", str(ov)]) == 2
    lines = _error_lines(capsys)
    assert any("tutorial.toml" in x for x in lines) and all("stack1.toml" in x for x in lines)
    tut = next(x for x in lines if "tutorial.toml" in x)
    assert "stacking.max_blocks = 1" in tut and "gomel (2)" in tut and "charyshi (2)" in tut
    # the same limit as soe.toml: nothing to say
    ok = _write(tmp_path, "stack4.toml", STACK1.replace("= 1", "= 4"))
    assert main(["validate", str(ok)]) == 0


def test_validate_checks_a_data_copys_overlay_against_its_scenarios(tmp_path, capsys):
    root = tmp_path / "copy"
    shutil.copytree(data_dir(), root, ignore=shutil.ignore_patterns("README.md"))
    _write(root / "rules", "stack1.toml", STACK1)
    assert main(["validate", str(root)]) == 2
    lines = _error_lines(capsys)
    assert lines and all("stack1.toml" in x and "overstacked" in x for x in lines)


def test_a_variant_lowering_the_stacking_limit_is_checked_against_the_start(tmp_path):
    from soe_sim.design.variant import resolve

    v = _write(tmp_path, "s1.toml", 'name = "s1"\ndescription = "x"\n[rules]\nstacking.max_blocks = 1\n')
    with pytest.raises(SoeInputError) as e:
        resolve("tutorial", str(v))
    (line,) = _problems(e)
    assert "tutorial.toml" in line and "s1.toml" in line and "gomel (2)" in line
    assert "stacking.max_blocks = 1" in line and "at least 2" in line


def test_a_ruleset_file_lowering_the_stacking_limit_fails_at_set_up(tmp_path):
    # review finding 7: `simulate --ruleset stack1.toml` and `fuzz` started every game overstacked
    from soe_sim.engine.game import game_setup

    ov = _write(tmp_path, "stack1.toml", STACK1)
    with pytest.raises(SoeInputError) as e:
        game_setup("tutorial", ruleset=str(ov))
    (line,) = _problems(e)
    assert "tutorial.toml" in line and "stack1.toml" in line and "gomel (2)" in line


@pytest.mark.parametrize("ruleset", ["soe", "eats", "no-leader-abilities"])
def test_no_builtin_scenario_is_overstacked_under_a_builtin_ruleset(ruleset):
    from soe_sim.data import load_blocks, load_map, load_scenario
    from soe_sim.data.scenario import scenario_paths, start_stacking_problems
    from soe_sim.rules import load_rules

    game_map, roster, rules = load_map(), load_blocks(), load_rules(ruleset)
    for p in scenario_paths():
        assert start_stacking_problems(load_scenario(str(p)), game_map, rules, ruleset, roster) == []
