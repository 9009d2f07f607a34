"""Bad input caught up front: one line per problem naming the option or file, exit code 2, no traceback,
nothing written — for the outputs of ``simulate`` and ``map``, seeds, dask scheduler addresses, and
rules files (a partial overlay loaded as a ruleset, wrong types, out-of-range values) wherever they
are read: ``--ruleset``, a data directory's ``rules/``, design variants and ``soe-sim validate``."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from soe_sim.cli import main
from soe_sim.errors import SoeInputError

pytestmark = pytest.mark.game_loop  # plays games: compiled once for the session (conftest.py)

DATA = Path(__file__).resolve().parent.parent / "data"


def _error_lines(capsys) -> list[str]:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines and all(line.startswith("error: ") for line in lines), err
    return lines


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


# --- simulate outputs -------------------------------------------------------------------------------

@pytest.mark.parametrize("args, needle", [
    (["--out", "x.txt"], "unsupported file type '.txt'"),
    (["--out", "x"], "unsupported file type '(none)'"),
    (["--battles", "afile/b.parquet"], "is a file, not a directory"),
    (["--out", "a.csv", "--trajectories", "a.csv"], "the same file as --out"),
])
def test_simulate_bad_outputs_fail_before_playing_and_write_nothing(tmp_path, capsys, monkeypatch, args, needle):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("")
    played = []
    import soe_sim.sim as sim

    monkeypatch.setattr(sim, "chunk_workers", lambda *a, **k: played.append(1))  # no game may start
    full = ["simulate", "-s", "tutorial", "-n", "5", "--threads", "1", "--no-progress", "--out", "ok.parquet", *args]
    if args[0] == "--out":
        full = ["simulate", "-s", "tutorial", "-n", "5", "--threads", "1", "--no-progress", *args]
    assert main(full) == 2
    lines = _error_lines(capsys)
    assert len(lines) == 1 and needle in lines[0]
    assert not played
    assert _files(tmp_path) == ["afile"]


def test_simulate_writes_every_output_with_its_format(tmp_path, capsys):
    out, traj, bats = tmp_path / "sub" / "games.csv", tmp_path / "t.parquet", tmp_path / "b.CSV"
    assert main(["simulate", "-s", "tutorial", "-n", "6", "--threads", "1", "--no-progress", "--out", str(out),
                 "--trajectories", str(traj), "--battles", str(bats), "--format", "json"]) == 0
    capsys.readouterr()
    assert len(pd.read_csv(out)) == 6
    assert set(pd.read_parquet(traj)["game"]) == set(range(6))
    from soe_sim.sim import BATTLE_COLUMNS

    assert list(pd.read_csv(bats).columns) == list(BATTLE_COLUMNS)
    mode = out.stat().st_mode & 0o777
    umask = os.umask(0)
    os.umask(umask)
    assert mode == 0o666 & ~umask  # written by the usual means (no private temporary-file mode)
    assert not [p for p in tmp_path.rglob("*.part")]


def test_write_frames_is_all_or_nothing(tmp_path, monkeypatch):
    from soe_sim.sim import write_frames

    df = pd.DataFrame({"a": [1, 2]})
    calls = []
    real = pd.DataFrame.to_csv

    def failing_to_csv(self, path, *a, **k):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return real(self, path, *a, **k)

    monkeypatch.setattr(pd.DataFrame, "to_csv", failing_to_csv)
    with pytest.raises(SoeInputError, match="--battles.*No space left"):
        write_frames([(df, tmp_path / "one.csv", "--out"), (df, tmp_path / "two.csv", "--battles")])
    assert _files(tmp_path) == []  # the first file was complete, but it is not left alone


def test_simulate_api_checks_out_before_playing(monkeypatch):
    import soe_sim.sim as sim

    monkeypatch.setattr(sim, "chunk_workers", lambda *a, **k: pytest.fail("a game was started"))
    with pytest.raises(SoeInputError, match="^out: .*unsupported file type '.json'"):
        sim.simulate("tutorial", games=3, seed=1, threads=1, out="games.json")


# --- map and odds images -----------------------------------------------------------------------------

@pytest.mark.parametrize("args, needle", [
    (["-o", "m.txt"], "unsupported image type '.txt'"),
    (["-o", "mapx"], "unsupported image type '(no extension)'"),
    (["-o", "m.png", "--dpi", "0"], "--dpi"),
])
def test_map_bad_output(tmp_path, capsys, monkeypatch, args, needle):
    monkeypatch.chdir(tmp_path)
    assert main(["map", *args]) == 2
    lines = _error_lines(capsys)
    assert len(lines) == 1 and needle in lines[0]
    assert _files(tmp_path) == []


def test_map_creates_missing_directories_like_every_output(tmp_path, capsys):
    # user review: `map -o nodir/x.png` refused while `simulate --out nodir/x.parquet` created nodir
    out = tmp_path / "new" / "dir" / "m.png"
    assert main(["map", "-o", str(out)]) == 0
    assert out.is_file() and out.read_bytes().startswith(b"\x89PNG")


def test_map_writes_the_file_it_names(tmp_path, capsys):
    out = tmp_path / "theatre.svg"
    assert main(["map", "-o", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    assert out.read_text().lstrip().startswith("<?xml")


def test_odds_plot_into_a_directory_is_refused(tmp_path, capsys):
    assert main(["odds", "--attacker", "4i", "--defender", "3i", "--plot", str(tmp_path)]) == 2
    assert "is a directory" in _error_lines(capsys)[0]
    assert _files(tmp_path) == []


# --- seeds and scheduler addresses ----------------------------------------------------------------------

def test_negative_seeds_are_input_errors(capsys):
    from soe_sim.engine.game import fuzz
    from soe_sim.random import as_generator, check_seed

    with pytest.raises(SoeInputError, match="non-negative"):
        fuzz("tutorial", 2, seed=-1)  # not "2 crashes"
    with pytest.raises(SoeInputError, match="non-negative"):
        as_generator(-3)
    with pytest.raises(SoeInputError):
        check_seed((1, -2))
    assert check_seed((1, 2)) == (1, 2) and check_seed(None) is None
    for cmd in (["fuzz", "-s", "tutorial", "-n", "1"], ["odds", "--attacker", "4i", "--defender", "4i", "--mc", "10"]):
        assert main([*cmd, "--seed", "-1"]) == 2
        assert "--seed" in _error_lines(capsys)[0]


@pytest.mark.parametrize("address, needle", [
    ("nonsense", "missing port"), ("localhost", "missing port"), ("tcp://host:notaport", "notaport"),
    ("tcp://h:99999", "outside 1..65535"), ("foo://h:1", "unknown protocol"),
])
def test_malformed_scheduler_address(tmp_path, address, needle):
    from soe_sim._dask import check_scheduler_address
    from soe_sim.design.runner import Runner
    from soe_sim.sim.sweep import run_sweep

    with pytest.raises(SoeInputError, match=needle):
        check_scheduler_address(address)
    config = tmp_path / "sweep.toml"
    config.write_text('scenarios = ["tutorial"]\ngames_per_chunk = 5\nchunks = 2\nseed = 7\n'
                      '[[pairs]]\npolish = "random"\nsoviet = "random"\n')
    with pytest.raises(SoeInputError, match="--scheduler"):
        run_sweep(config, tmp_path / "out", scheduler=address)
    assert not (tmp_path / "out").exists()  # no manifest of a sweep that never started
    with pytest.raises(SoeInputError, match="--scheduler"):
        Runner("tutorial", scheduler=address)
    assert check_scheduler_address("tcp://127.0.0.1:8786") == "tcp://127.0.0.1:8786"


def test_malformed_scheduler_on_the_command_line(tmp_path, capsys):
    config = tmp_path / "sweep.toml"
    config.write_text('scenarios = ["tutorial"]\ngames_per_chunk = 5\nchunks = 2\nseed = 7\n'
                      '[[pairs]]\npolish = "random"\nsoviet = "random"\n')
    assert main(["sweep", str(config), "--out", str(tmp_path / "o"), "--scheduler", "localhost"]) == 2
    assert "not a dask scheduler address" in _error_lines(capsys)[0]
    assert main(["compare", "-v", "flank-1", "-s", "tutorial", "-n", "4", "--scheduler", "localhost"]) == 2
    assert "--scheduler" in _error_lines(capsys)[0]


# --- rules files --------------------------------------------------------------------------------------

def test_partial_file_as_a_ruleset_is_one_clear_problem(tmp_path, capsys):
    partial = tmp_path / "mine.toml"
    partial.write_text("[combat]\nflank_penalti = 1\n")
    assert main(["simulate", "-s", "tutorial", "-n", "2", "--threads", "1", "--ruleset", str(partial)]) == 2
    lines = _error_lines(capsys)
    assert len(lines) == 2, lines
    assert "not a complete ruleset" in lines[0] and 'base = "soe"' in lines[0] and "mine.toml" in lines[0]
    assert "combat.flank_penalti" in lines[1] and "did you mean `flank_penalty`" in lines[1]
    for cmd in (["fuzz", "-s", "tutorial", "-n", "1"], ["playtest", "-s", "tutorial", "--seed", "1",
                                                         "--out", str(tmp_path / "p")]):
        assert main([*cmd, "--ruleset", str(partial)]) == 2
        assert "not a complete ruleset" in _error_lines(capsys)[0]
    assert not (tmp_path / "p").exists()


def test_complete_ruleset_with_bad_values(tmp_path):
    from soe_sim.rules import load_rules

    text = (DATA / "rules" / "soe.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace("\nflank_penalty = 2\n", '\nflank_penalty = "two"\n', 1)
                   .replace("\nhand_limit = 7\n", "\nhand_limt = 7\n", 1)
                   .replace("\nmax_level = 5\n", "\nmax_level = 0\n", 1)
                   .replace("\ncavalry_range = 5\n", "\ncavalry_range = -1\n", 1)
                   .replace("\nhalf_strength_divisor = 2\n", "\nhalf_strength_divisor = 0\n", 1))
    with pytest.raises(SoeInputError) as err:
        load_rules(bad)
    text = "\n".join(str(p) for p in err.value.problems)
    assert "'combat.flank_penalty': expected integer (got 'two')" in text
    assert "'cards.hand_limt': unknown rule key" in text and "did you mean `hand_limit`" in text
    assert "'cards.hand_limit': missing rule key (integer)" in text and "the SoE value is 7" in text
    assert "'supply.cavalry_range': must be at least 0 (got -1)" in text
    assert "'combat.half_strength_divisor': must be at least 1 (got 0)" in text
    assert "'initiative.max_level': must be at least initiative.min_level (1) (got 0)" in text
    assert all("bad.toml" in p.file for p in err.value.problems)


def test_overlay_values_are_range_checked_and_blamed_on_the_overlay(tmp_path):
    from soe_sim.rules import load_rules

    overlay = tmp_path / "neg.toml"
    overlay.write_text("[combat]\nflank_penalty = -4\n")
    with pytest.raises(SoeInputError) as err:
        load_rules("soe", [overlay])
    (problem,) = err.value.problems
    assert problem.file == str(overlay) and problem.field == "combat.flank_penalty" and problem.value == -4
    assert load_rules("eats")["meta.id"] == "eats"  # the built-in rulesets pass their own checks


def test_variant_with_out_of_range_rules(tmp_path, capsys):
    variant = tmp_path / "v.toml"
    variant.write_text('name = "v"\ndescription = "x"\n[rules]\ninitiative.max_level = 0\n')
    assert main(["compare", "-v", str(variant), "-s", "tutorial", "-n", "4"]) == 2
    assert "initiative.max_level" in _error_lines(capsys)[0]
    assert main(["validate", str(variant)]) == 2
    assert "must be at least initiative.min_level" in _error_lines(capsys)[0]


def test_validate_checks_rules_and_variants(tmp_path, capsys):
    variants = [str(p) for p in sorted((DATA / "variants").glob("*.toml"))]
    assert main(["validate", str(DATA / "rules" / "eats.toml"), *variants]) == 0
    out = capsys.readouterr().out
    assert "ruleset eats" in out and "variant hmg-deck" in out
    assert main(["validate"]) == 0
    assert "rulesets (eats, no-leader-abilities, soe)" in capsys.readouterr().out
    mine = tmp_path / "mydata"
    shutil.copytree(DATA, mine)
    rules = mine / "rules" / "soe.toml"
    rules.write_text(rules.read_text().replace("\nflank_penalty = 2\n", '\nflank_penalty = "two"\n', 1))
    assert main(["validate", str(mine)]) == 2
    lines = _error_lines(capsys)
    assert len(lines) == 1 and "rules/soe.toml" in lines[0] and "flank_penalty" in lines[0]
    assert main(["simulate", "-s", str(mine / "scenarios" / "tutorial.toml"), "-n", "2", "--threads", "1"]) == 2
    assert "flank_penalty" in _error_lines(capsys)[0]


def test_playtest_out_under_a_file_fails_before_playing(tmp_path, capsys, monkeypatch):
    import soe_sim.playtest as pt

    (tmp_path / "afile").write_text("")
    monkeypatch.setattr(pt, "play_story", lambda *a, **k: pytest.fail("the game was played"))
    assert main(["playtest", "-s", "tutorial", "--seed", "1", "--out", str(tmp_path / "afile" / "sub")]) == 2
    assert "is a file, not a directory" in _error_lines(capsys)[0]


def test_playtest_header_names_the_simulate_run_of_the_same_game():
    from soe_sim.playtest import playtest

    text = playtest("tutorial", 1, polish=("balanced", {"attack_threshold": 0.6}), snapshots=False, gif=False).text
    assert ("row 0 of `soe-sim simulate --scenario tutorial --seed 1 --polish balanced --polish-param "
            "attack_threshold=0.6 --soviet random`") in text


def test_validate_a_map_without_its_link_table_is_one_problem(tmp_path, capsys):
    shutil.copy(DATA / "map" / "areas.csv", tmp_path / "areas.csv")
    assert main(["validate", str(tmp_path / "areas.csv")]) == 2
    lines = _error_lines(capsys)
    assert len(lines) == 1 and "links.csv: file not found" in lines[0]  # no "not a neighbour", no "disconnected"


def test_scenario_option_given_a_non_toml_file(capsys):
    assert main(["simulate", "-s", str(DATA / "map" / "areas.csv"), "-n", "2"]) == 2
    (line,) = _error_lines(capsys)
    assert "a scenario is a .toml file" in line and "soe-sim scenarios" in line


def test_a_scenario_named_in_part_gets_the_full_names(capsys):
    assert main(["simulate", "-s", "kiev", "-n", "2"]) == 2
    (line,) = _error_lines(capsys)
    assert "unknown scenario (got 'kiev')" in line and "did you mean `kiev-offensive`?" in line
    assert main(["simulate", "-s", "offensive", "-n", "2"]) == 2
    (line,) = _error_lines(capsys)
    assert "did you mean `kiev-offensive` or `tukhachevsky-offensive`?" in line


def test_did_you_mean_prefers_a_typo_then_a_part_of_a_name():
    from soe_sim.errors import did_you_mean

    assert did_you_mean("balancd", ["aggressive", "balanced"]) == "did you mean `balanced`?"
    assert did_you_mean("chunk", ["games_per_chunk", "chunks"]) == "did you mean `chunks`?"  # the near typo
    assert did_you_mean("Warsaw", ["battle-of-warsaw", "tutorial"]) == "did you mean `battle-of-warsaw`?"
    assert did_you_mean("of", ["battle-of-warsaw", "tutorial"]) is None  # too short to be a name's part
    assert did_you_mean("xyz", ["aggressive", "balanced"]) is None
    assert did_you_mean("a", []) is None
    assert did_you_mean("BALANCED", ["balanced", "random"]) == "did you mean `balanced`?"
    # in more than three names: the closest by difflib
    assert did_you_mean("ing", ["a-ing", "b-ing", "c-ing", "d-ing"]) in {f"did you mean `{c}-ing`?" for c in "abcd"}


def test_problem_without_a_value_shows_no_python_repr(tmp_path):
    from soe_sim.rules import load_rules

    text = (DATA / "rules" / "soe.toml").read_text().replace("\nhand_limit = 7\n", "\n", 1)
    (tmp_path / "r.toml").write_text(text)
    with pytest.raises(SoeInputError) as err:
        load_rules(tmp_path / "r.toml")
    text = str(err.value)
    assert "None" not in text and "'cards.hand_limit': missing rule key (integer); the SoE value is 7" in text


def test_a_design_variant_where_rules_are_expected(capsys):
    variant = str(DATA / "variants" / "flank-1.toml")
    for cmd in (["odds", "--attacker", "4i", "--defender", "3i", "--rules", variant],
                ["odds", "--attacker", "4i", "--defender", "3i", "--rules", "flank-1"],
                ["simulate", "-s", "tutorial", "-n", "2", "--ruleset", variant]):
        assert main(cmd) == 2
        (line,) = _error_lines(capsys)
        assert "a design variant, not a ruleset or rules overlay" in line and "compare" in line, line


def test_odds_rules_overlay_changes_the_odds(tmp_path, capsys):
    overlay = tmp_path / "flank.toml"
    overlay.write_text("[combat]\nflank_penalty = 0\n")
    args = ["odds", "--attacker", "2i/2i", "--defender", "4i", "--format", "json"]
    import json

    assert main(args) == 0
    base = json.loads(capsys.readouterr().out)["attacker_win"]
    assert main([*args, "--rules", str(overlay)]) == 0
    # SoE 7.34: the flank penalty is the defender's, so without it a two-direction attack wins less often
    assert json.loads(capsys.readouterr().out)["attacker_win"] < base - 0.2


def test_one_bad_roster_value_is_one_problem(tmp_path, capsys):
    mine = tmp_path / "d"
    shutil.copytree(DATA, mine)
    roster = mine / "blocks" / "blocks.csv"
    lines = roster.read_text().splitlines(keepends=True)
    row = next(i for i, line in enumerate(lines) if line.startswith("pl-1-legion-id,"))
    lines[row] = lines[row].replace(",division,4,", ",division,x,", 1)
    roster.write_text("".join(lines))
    assert main(["validate", str(mine)]) == 2
    (line,) = _error_lines(capsys)  # not also "SP above the block's maximum of 0" in every scenario using it
    assert "max_sp" in line and "'x'" in line


def test_variant_changing_an_entry_of_a_list_the_scenario_lacks(tmp_path, capsys):
    variant = tmp_path / "obj.toml"
    variant.write_text('name = "o"\ndescription = "x"\n[scenario]\nobjective.0.vp = 3\n')
    assert main(["compare", "-v", str(variant), "-s", "tutorial", "-n", "4"]) == 2  # tutorial has no objective
    (line,) = _error_lines(capsys)
    assert "no objective list here" in line and "[[scenario.objective]]" in line
    assert main(["compare", "-v", str(variant), "-s", "kiev-offensive", "-n", "2", "--format", "json"]) == 0
    capsys.readouterr()


def test_list_rule_items_are_type_checked_even_when_the_soe_list_is_empty(tmp_path, capsys):
    # audit H F6: soe.toml's internment lists are empty, so their items were never checked and
    # return_delays = ["x"] crashed game set-up with a bare ValueError
    from soe_sim.rules import _LIST_ITEM, _schema

    empty = [f"{t}.{k}" for t, tab in _schema().items() if isinstance(tab, dict)
             for k, v in tab.items() if isinstance(v, list) and not v]
    assert sorted(empty) == sorted(_LIST_ITEM)  # every empty SoE list has its item type
    overlay = tmp_path / "delay.toml"
    overlay.write_text('[meta]\nbase = "eats"\n[internment]\nreturn_areas = ["grodno"]\nreturn_delays = ["x"]\n')
    assert main(["simulate", "-s", "tutorial", "-n", "1", "--threads", "1", "--ruleset", str(overlay)]) == 2
    (line,) = _error_lines(capsys)
    assert "delay.toml" in line and "'internment.return_delays': expected a list of integers (got ['x'])" in line
    overlay.write_text('[meta]\nbase = "eats"\n[internment]\nreturn_areas = [3]\nreturn_delays = [3]\n')
    assert main(["validate", str(overlay)]) == 2
    (line,) = _error_lines(capsys)
    assert "'internment.return_areas': expected a list of strings (got [3])" in line
    variant = tmp_path / "v.toml"
    variant.write_text('name = "v"\ndescription = "x"\nruleset = "eats"\n[rules]\ninternment.return_delays = ["x"]\n')
    assert main(["validate", str(variant)]) == 2
    assert "expected a list of integers" in _error_lines(capsys)[0]  # not "a list of an integers"


@pytest.mark.parametrize("value", [0, 2, 99])
def test_initiative_change_other_than_one_is_rejected(tmp_path, value):
    # audit H F11: the battle kernel moves the initiative by min(1, value) levels and still flips at the
    # minimum, so only 1 is honoured
    from soe_sim.rules import load_rules

    overlay = tmp_path / "ini.toml"
    overlay.write_text(f'[meta]\nbase = "eats"\n[initiative]\nmax_change_per_battle = {value}\n')
    with pytest.raises(SoeInputError) as err:
        load_rules(overlay)
    (problem,) = err.value.problems
    assert problem.field == "initiative.max_change_per_battle" and problem.value == value
    assert "must be 1" in problem.message and "not implemented" in problem.message
    overlay.write_text('[meta]\nbase = "eats"\n[initiative]\nmax_change_per_battle = 1\n')
    assert load_rules(overlay)["initiative.max_change_per_battle"] == 1


# audit H F5: `validate` runs the checks game set-up runs on a ruleset (engine.game.ruleset_problems)
_SETUP_ONLY = [
    ("badgroup", '[orders]\nexecute_before_battles = ["forced_march", "move", "recon", "reorganize", '
     '"rail_transport", "withdrw"]\n', "unknown order execution group", "did you mean `withdraw`?"),
    ("dupgroup", '[orders]\nexecute_before_battles = ["forced_march", "move", "move", "withdraw"]\n'
     "execute_after_battles = []\n", "every order execution group must be listed exactly once", "groups:"),
    ("territory", '[internment]\nterritory = "atlantis"\n', "unknown territory", None),
    ("return-area", '[internment]\nreturn_areas = ["grodno", "narnia"]\nreturn_delays = [1, 2]\n',
     "unknown area", None),
    ("side", '[victory]\nimmediate_capture_side = "martians"\n', "expected a side", "one of polish, soviet"),
    ("closed", '[internment]\nclosed_to = "nobody"\n', "expected a side", None),
    ("chart", "[combat]\nchart_min_value = [0, 4, 7]\n", "must have one entry per chart_min_value entry", None),
    ("deck-size", "[cards]\ndeck_size = 54\n", "expected the ids 1..54 (cards.deck_size)", None),
]


@pytest.mark.parametrize("name, body, needle, hint", _SETUP_ONLY, ids=[c[0] for c in _SETUP_ONLY])
def test_validate_runs_the_set_up_checks_of_a_ruleset(tmp_path, capsys, name, body, needle, hint):
    overlay = tmp_path / f"{name}.toml"
    overlay.write_text('[meta]\nbase = "eats"\n' + body)
    assert main(["validate", str(overlay)]) == 2
    lines = _error_lines(capsys)
    assert len(lines) == (2 if name == "deck-size" else 1), lines  # deck-size: both decks, each named
    line = lines[0]
    assert needle in line and (hint is None or hint in line), line
    assert ("cards/polish.csv" if name == "deck-size" else f"{name}.toml") in line
    assert main(["simulate", "-s", "tutorial", "-n", "1", "--threads", "1", "--ruleset", str(overlay)]) == 2
    assert needle in _error_lines(capsys)[0]  # the same check, the same message


def test_validate_a_data_copy_runs_the_set_up_checks_of_its_rules(tmp_path, capsys):
    mine = tmp_path / "mydata"
    shutil.copytree(DATA, mine)
    (mine / "rules" / "odd.toml").write_text('[meta]\nbase = "soe"\n[victory]\nimmediate_capture_area = "warsw"\n')
    assert main(["validate", str(mine)]) == 2
    (line,) = _error_lines(capsys)
    assert "odd.toml" in line and "immediate_capture_area" in line and "did you mean `warsaw`?" in line


def test_an_overlays_base_is_honoured(tmp_path, capsys):
    # audit H F7: `[meta] base = "eats"` in an overlay was dropped, so `odds --rules` gave SoE + the change
    import json

    from soe_sim.rules import load_rules

    overlay = tmp_path / "eats_gv3.toml"
    overlay.write_text('[meta]\nbase = "eats"\n[combat]\ngreat_victory_losses = 3\n')
    rules, eats = load_rules("soe", [overlay]), load_rules("eats")
    assert rules["meta.id"] == "eats" and rules["combat.great_victory_losses"] == 3
    assert [Path(f).name for f in rules.files] == ["soe.toml", "eats.toml", "eats_gv3.toml"]
    rules.values["combat"]["great_victory_losses"] = eats["combat.great_victory_losses"]
    assert rules.values == eats.values  # EatS plus the one change
    assert load_rules("eats", ["no-leader-abilities"])["meta.id"] == "eats"  # an SoE overlay applies over EatS
    other = tmp_path / "nla_based.toml"
    other.write_text('[meta]\nbase = "no-leader-abilities"\n[combat]\nflank_penalty = 1\n')
    with pytest.raises(SoeInputError) as err:
        load_rules("eats", [other])  # no-leader-abilities is SoE's, not EatS's: refused, not silently mixed
    (problem,) = err.value.problems
    assert problem.file.endswith("nla_based.toml") and problem.field == "base"
    assert problem.value == "no-leader-abilities" and "applied over soe + eats" in problem.message
    # SoE 7.34 / EatS: a fortified defender negates the flank penalty only under SoE
    args = ["odds", "--attacker", "4i/4i", "--defender", "4i", "--fortified", "--attacker-card", "hand:3",
            "--defender-card", "hand:0", "--format", "json"]
    losses = {}
    for name, extra in (("soe", []), ("eats", ["--rules", str(DATA / "rules" / "eats.toml")]),
                        ("overlay", ["--rules", str(overlay)])):
        assert main([*args, *extra]) == 0
        losses[name] = json.loads(capsys.readouterr().out)["attacker_losses_mean"]
    assert losses["soe"] != losses["eats"] and losses["overlay"] == losses["eats"]


# --- audit I ------------------------------------------------------------------------------------------

def test_variant_with_a_misspelt_card_effect_is_one_problem(tmp_path, capsys):
    # audit I D1: the variant's card check handed a plain list to parse_effect (AttributeError)
    variant = tmp_path / "v11.toml"
    variant.write_text('name = "v11"\ndescription = "x"\n[cards.soviet.change.38]\neffect = "enemy_extra_los:1"\n')
    assert main(["validate", str(variant)]) == 2
    (line,) = _error_lines(capsys)
    assert "v11.toml" in line and "[cards.soviet] change.38" in line and "field 'effect'" in line
    assert "'enemy_extra_los'" in line and "did you mean `enemy_extra_loss`?" in line


@pytest.mark.parametrize("body, field", [
    ("[combat]\nflank_penalty = 99999999999999999999\n", "combat.flank_penalty"),  # above int64
    ("[combat]\nchart_min_value = [0, 4, 7, 10, 13, 1000]\n", "combat.chart_min_value"),
    ("[stacking]\nmax_blocks = 200\n", "stacking.max_blocks"),  # int8 in the engine
])
def test_rule_values_have_a_ceiling(tmp_path, capsys, body, field):
    # audit I D2: a huge rule value passed every check and crashed numba typing or an int8 array
    overlay = tmp_path / "huge.toml"
    overlay.write_text(body)
    assert main(["odds", "--attacker", "4i,4i", "--defender", "3i", "--rules", str(overlay)]) == 2
    (line,) = _error_lines(capsys)
    assert "huge.toml" in line and f"'{field}'" in line and "must be at most 100" in line
    variant = tmp_path / "hugev.toml"
    variant.write_text('name = "hugev"\ndescription = "x"\n[rules]\n' + body.replace("[combat]\n", "combat.")
                       .replace("[stacking]\n", "stacking."))
    assert main(["validate", str(variant)]) == 2
    assert "must be at most 100" in _error_lines(capsys)[0]


def test_variant_card_and_scenario_values_have_a_ceiling(tmp_path, capsys):
    # audit I D2: validate said ok, compare crashed with OverflowError (int8 card arrays, int16 VP track)
    cards = tmp_path / "c.toml"
    cards.write_text('name = "c"\ndescription = "x"\n[cards.soviet.change.38]\ncombat_modifier = 100000\n')
    assert main(["validate", str(cards)]) == 2
    (line,) = _error_lines(capsys)
    assert "[cards.soviet] change.38" in line and "'combat_modifier'" in line and "0..20 (got 100000)" in line
    from soe_sim.design.variant import resolve

    scen = tmp_path / "s.toml"
    scen.write_text('name = "s"\ndescription = "x"\n[scenario]\nvp = 1000000\n')
    with pytest.raises(SoeInputError) as err:
        resolve("tutorial", str(scen))
    (problem,) = err.value.problems
    assert "s.toml" in problem.file and problem.field == "value" and problem.value == 1000000
    assert "out of range; expected 0..100" in problem.message


@pytest.mark.parametrize("cmd, option", [
    (["simulate", "-s", "tutorial", "-n", "5", "--seed", str(2**63)], "--seed"),
    (["report", "balance", "-s", "tutorial", "-n", "10", "--seed", "99999999999999999999", "--out", "r"], "--seed"),
    (["playtest", "-s", "tutorial", "--seed", "99999999999999999999", "--find", "soviet wins", "--out", "p"],
     "--seed"),
    (["compare", "-v", "flank-1", "-s", "tutorial", "-n", "4", "--seed", str(2**63)], "--seed"),
    (["odds", "--attacker", "4i", "--defender", "3i", "--mc", "100000000000000000000"], "--mc"),
    (["odds", "--attacker", "4i", "--defender", "3i", "--mc", "10000001"], "--mc"),
    (["fuzz", "-s", "tutorial", "-n", "99999999999999999999999"], "--games"),
    (["fuzz", "-s", "tutorial", "-n", "2", "--max-steps", "99999999999999999999"], "--max-steps"),
    (["simulate", "-s", "tutorial", "-n", "1000001"], "--games"),
    (["playtest", "-s", "tutorial", "--seed", "1", "--find", "soviet wins", "--search-games", "10000000"],
     "--search-games"),
])
def test_huge_integer_options_are_input_errors(tmp_path, capsys, monkeypatch, cmd, option):
    # audit I D3: OverflowError tracebacks (after the games, for simulate), or "2 crashes" of the engine
    monkeypatch.chdir(tmp_path)
    assert main(cmd) == 2
    (line,) = _error_lines(capsys)
    assert f"Invalid value for '{option}'" in line and "is not in the range" in line
    assert _files(tmp_path) == []


def test_simulate_api_refuses_a_seed_its_int64_column_cannot_hold(monkeypatch):
    import soe_sim.sim as sim

    monkeypatch.setattr(sim, "chunk_workers", lambda *a, **k: pytest.fail("a game was played"))
    with pytest.raises(SoeInputError, match="at most 2\\*\\*63 - 1"):
        sim.simulate("tutorial", 2, seed=2**63)


def test_a_custom_rules_file_is_named_not_labelled_soe(tmp_path, capsys):
    # audit I D5: a ruleset file with base = "soe" was labelled plain "soe" in every output
    import json

    from soe_sim.playtest import _replay_command
    from soe_sim.rules import load_rules

    noloss = tmp_path / "b_noloss.toml"
    noloss.write_text('[meta]\nbase = "soe"\n[combat]\nchart_losses = [0, 0, 0, 0, 0, 0]\n')
    assert load_rules("soe").label == "soe" and load_rules("eats").label == "eats"
    assert load_rules(noloss).label == "soe+b_noloss.toml"
    assert load_rules("eats", [DATA / "rules" / "no-leader-abilities.toml"]).label == "eats"
    assert load_rules("soe", [noloss]).label == "soe+b_noloss.toml"
    args = ["odds", "--attacker", "4i,4i", "--defender", "3i"]
    assert main([*args, "--rules", str(noloss)]) == 0
    assert "Rules: soe+b_noloss.toml" in capsys.readouterr().out
    assert main([*args, "--rules", str(noloss), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["rules"] == "soe+b_noloss.toml"
    assert main([*args, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["rules"] == "soe"

    class Pol:
        name, params = "random", {}

    spaced = str(tmp_path / "my rules.toml")
    assert _replay_command("tutorial", 1, 0, [Pol(), Pol()], spaced) == (
        f"soe-sim playtest --scenario tutorial --seed 1 --game 0 --ruleset '{spaced}' --polish random "
        "--soviet random --out DIR")


def test_playtest_names_and_replays_a_custom_ruleset(tmp_path):
    # audit I D5: game.md said "Ruleset: `soe`" and its Replay command had no --ruleset (another game)
    from soe_sim.playtest import playtest

    noloss = tmp_path / "b_noloss.toml"
    noloss.write_text('[meta]\nbase = "soe"\n[combat]\nchart_losses = [0, 0, 0, 0, 0, 0]\n')
    text = playtest("tutorial", 1, ruleset=str(noloss), snapshots=False, gif=False).text
    assert "Ruleset: `soe+b_noloss.toml`" in text
    assert f"Replay: `soe-sim playtest --scenario tutorial --seed 1 --game 0 --ruleset {noloss} " in text
    assert f"`soe-sim simulate --scenario tutorial --seed 1 --ruleset {noloss} " in text
    from soe_sim.sim import simulate, summarize
    from soe_sim.sim.cli import format_summary

    df = simulate("tutorial", games=2, seed=1, threads=1, ruleset=str(noloss))
    assert df.attrs["soe_sim"]["ruleset"] == "soe+b_noloss.toml"
    summary = summarize(df)
    summary.update(df.attrs["soe_sim"])
    assert format_summary(summary).startswith("tutorial under soe+b_noloss.toml: random (Polish)")


def test_sweep_inline_overlay_rules_are_range_checked(tmp_path):
    # audit I D12: [overlays.rules] combat.flank_penalty = -7 was played; every other path refuses it
    from soe_sim.sim.sweep import load_config, run_sweep

    config = tmp_path / "sweep.toml"
    config.write_text('scenarios = ["tutorial"]\ngames_per_chunk = 5\nchunks = 2\nseed = 7\n'
                      '[[pairs]]\npolish = "random"\nsoviet = "random"\n'
                      '[[overlays]]\nname = "x"\n[overlays.rules]\ncombat.flank_penalty = -7\n')
    with pytest.raises(SoeInputError) as err:
        load_config(config)
    (problem,) = err.value.problems
    assert "sweep.toml" in problem.file and "overlays 'x'" in problem.file
    assert problem.field == "combat.flank_penalty" and problem.value == -7 and "must be at least 0" in problem.message
    with pytest.raises(SoeInputError):
        run_sweep(config, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_more_threads_than_cpus_is_an_input_error(capsys, monkeypatch):
    # audit I D7: simulate --threads 100000 started one thread (with its own game state) per game
    import soe_sim.sim as sim

    monkeypatch.setattr(sim, "_cpus", lambda: 2)
    monkeypatch.setattr(sim, "_workers", lambda *a, **k: pytest.fail("workers were started"))
    assert main(["simulate", "-s", "tutorial", "-n", "300", "--threads", "100000"]) == 2
    (line,) = _error_lines(capsys)
    assert "--threads" in line and "must be 1..2" in line and "(got 100000)" in line
    with pytest.raises(SoeInputError, match="must be 1..2"):
        sim.chunk_workers("tutorial", threads=3)
    assert sim._threads(2) == 2 and sim._threads(None) == 2


def test_sweep_with_an_unreachable_scheduler_leaves_nothing(tmp_path, monkeypatch):
    # audit I D9: the manifest was written before the connection failed
    import distributed

    from soe_sim.sim.sweep import run_sweep

    def refuse(*a, **k):
        raise OSError("Timed out trying to connect to tcp://127.0.0.1:1")

    monkeypatch.setattr(distributed, "Client", refuse)
    config = tmp_path / "sweep.toml"
    config.write_text('scenarios = ["tutorial"]\ngames_per_chunk = 5\nchunks = 2\nseed = 7\n'
                      '[[pairs]]\npolish = "random"\nsoviet = "random"\n')
    with pytest.raises(SoeInputError, match="cannot connect to the dask scheduler"):
        run_sweep(config, tmp_path / "outZ", scheduler="tcp://127.0.0.1:1")
    assert not (tmp_path / "outZ").exists()


def test_playtest_rerun_removes_the_outputs_of_an_earlier_run(tmp_path):
    # audit I D8: snapshots/ and game.gif of an earlier seed stayed next to the new game.md and were counted
    from soe_sim.playtest import playtest

    out = tmp_path / "pt"
    (out / "snapshots").mkdir(parents=True)
    (out / "snapshots" / "phase-001.png").write_bytes(b"old")
    for name in ("game.gif", "search.csv"):
        (out / name).write_text("old")
    (out / "notes.txt").write_text("mine")  # not a playtest output: kept
    pt = playtest("tutorial", 2, out_dir=out, snapshots=False, gif=False)
    assert [p.name for p in pt.files] == ["battles.csv", "events.csv", "game.md"]
    assert _files(out) == ["battles.csv", "events.csv", "game.md", "notes.txt"]


@pytest.mark.parametrize("marker, needle", [("manifest.json", "a sweep's output"), ("game.md", "a playtest's output")])
def test_a_study_is_not_written_into_another_commands_output(tmp_path, capsys, monkeypatch, marker, needle):
    # audit I D8: compare --out into a sweep directory mixed its files with manifest.json and games/
    import soe_sim.design.runner as runner

    monkeypatch.setattr(runner.Runner, "__init__", lambda *a, **k: pytest.fail("a runner was started"))
    out = tmp_path / "out0"
    out.mkdir()
    (out / marker).write_text("{}")
    for cmd in (["compare", "-v", "flank-1"], ["sensitivity", "-k", "rules.combat.flank_penalty=0:2"],
                ["tune", "-k", "rules.combat.flank_penalty"]):
        assert main([*cmd, "-s", "tutorial", "-n", "10", "--out", str(out)]) == 2
        (line,) = _error_lines(capsys)
        assert "--out" in line and needle in line and "give a new or empty directory" in line
    assert _files(out) == [marker]


@pytest.mark.parametrize("cmd, needle", [
    (["tune", "-k", "rules.combat.flank_penalty", "-k", "rules.combat.hand_card_bonus"], "tune tunes one knob"),
    (["tune", "-k", "rules.combat.flank_penalty=0:3:5"], "expected NAME or NAME=LOW:HIGH"),
    (["simulate", "--polish", "balanced", "--polish-param", "attack_threshold=0.5", "--polish-param",
      "attack_threshold=0.7"], "parameter 'attack_threshold' given twice"),
    (["simulate", "--polish", "balanced", "--polish-param", "attack_threshold=0.9", "--polish-param",
      "ATTACK_THRESHOLD=0.1"], "parameter 'attack_threshold' given twice"),  # audit K9: keys read lower-case
])
def test_options_given_twice_or_with_ignored_parts(capsys, monkeypatch, cmd, needle):
    # audit I D11: tune -k A -k B tuned only B, tune ignored :POINTS, a repeated --polish-param: the last won
    import soe_sim.design.runner as runner
    import soe_sim.sim as sim

    monkeypatch.setattr(runner.Runner, "__init__", lambda *a, **k: pytest.fail("a runner was started"))
    monkeypatch.setattr(sim, "_workers", lambda *a, **k: pytest.fail("workers were started"))
    assert main([*cmd, "-s", "tutorial", "-n", "10"]) == 2
    (line,) = _error_lines(capsys)
    assert needle in line


def test_fuzz_plays_a_scenario_named_twice_once(monkeypatch, capsys):
    import soe_sim.engine.game as game

    played = []
    monkeypatch.setattr(game, "fuzz", lambda sid, *a, **k: played.append(sid) or {
        "scenario": sid, "ruleset": "soe", "games": 1, "seed": 0, "checked": "phase", "violations": 0,
        "crashes": 0, "stalemates": 0, "outcomes": {}, "winners": {}, "first_violation": None,
        "first_crash": None})
    main(["fuzz", "-s", "tutorial", "-s", "all", "-s", "tutorial", "-n", "1"])
    capsys.readouterr()
    assert played.count("tutorial") == 1 and len(played) == len(set(played)) > 1


def test_map_output_under_a_file(tmp_path, capsys, monkeypatch):
    # audit I D10: "directory …/afile does not exist", although it exists (as a file)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("")
    assert main(["map", "-o", "afile/m.png"]) == 2
    (line,) = _error_lines(capsys)
    assert "afile is a file, not a directory" in line


@pytest.mark.parametrize("where, needle", [("nonexist", "no such directory"), ("empty", "not a data directory")])
def test_a_bad_soe_sim_data_names_the_variable(tmp_path, capsys, monkeypatch, where, needle):
    # audit I D10: "unknown ruleset (got 'soe'); built-in rulesets: " and `scenarios` printing "no scenarios", rc 0
    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("SOE_SIM_DATA", str(tmp_path / where))
    for cmd in (["simulate", "-s", "tutorial", "-n", "5"], ["scenarios"], ["odds", "--attacker", "4i",
                                                                           "--defender", "3i"]):
        assert main(cmd) == 2
        (line,) = _error_lines(capsys)
        assert line.startswith("error: SOE_SIM_DATA:") and needle in line and where in line


def test_an_unknown_base_or_ruleset_names_the_file_and_key(tmp_path, capsys):
    # audit I D10/D11: "ruleset: unknown ruleset (got 'soee')" named neither file nor key, and odds --rules
    # ignored the typo
    overlay = tmp_path / "ovb.toml"
    overlay.write_text('[meta]\nbase = "soee"\n[combat]\nflank_penalty = 1\n')
    variant = tmp_path / "v12.toml"
    variant.write_text('name = "v12"\ndescription = "x"\nruleset = "eat"\n')
    for cmd, file, field in ((["validate", str(overlay)], "ovb.toml", "meta: field 'base'"),
                             (["odds", "--attacker", "4i", "--defender", "3i", "--rules", str(overlay)], "ovb.toml",
                              "meta: field 'base'"),
                             (["validate", str(variant)], "v12.toml", "field 'ruleset'")):
        assert main(cmd) == 2
        (line,) = _error_lines(capsys)
        assert file in line and field in line and "unknown ruleset" in line and "did you mean `" in line, line


def test_validate_reads_the_variants_and_combat_systems_of_a_data_directory(tmp_path, capsys):
    # audit I D4/D10: a data copy's variants/ and systems/ were not validated; the shipped soyuz81.toml gave six
    # spurious errors (read as a ruleset); die_faces = 0 was "crt.1:3: expected a list of 0 results"
    assert main(["validate", str(DATA / "systems" / "soyuz81.toml"), str(DATA / "systems" / "rswe.toml")]) == 0
    assert "combat system soyuz81" in capsys.readouterr().out
    mine = tmp_path / "mydata"
    shutil.copytree(DATA, mine)
    flank = mine / "variants" / "flank-1.toml"
    flank.write_text(flank.read_text().replace("combat.flank_penalty = 1", "combat.flank_penlty = 1", 1))
    s81 = mine / "systems" / "soyuz81.toml"
    s81.write_text(s81.read_text().replace("die_faces = 6", "die_faces = 0", 1))
    assert main(["validate", str(mine)]) == 2
    lines = _error_lines(capsys)
    assert len(lines) == 2, lines
    assert "flank-1.toml" in lines[0] and "flank_penlty" in lines[0] and "did you mean `flank_penalty`" in lines[0]
    assert "soyuz81.toml: meta: field 'die_faces': expected an integer 1..100 (got 0)" in lines[1]


def test_simulate_table_names_the_policy_parameter_overrides():
    # audit I D6: the table header showed "balanced (Polish)" for a run with --polish-param overrides
    from soe_sim.sim.cli import format_summary

    base = {"scenario": "tutorial", "polish": "balanced", "soviet": "random", "games": 5, "seed": 1,
            "polish_win": 0.4, "soviet_win": 0.6, "draw": 0.0, "polish_win_ci": (0.1, 0.8),
            "soviet_win_ci": (0.2, 0.9), "draw_ci": (0.0, 0.4), "aborted": 0.0, "vp_mean": 0.0, "vp_sd": 1.0,
            "rounds_mean": 1.0, "battles_mean": 1.0, "great_victories_mean": 0.0, "sp_lost_polish_mean": 1.0,
            "sp_lost_soviet_mean": 1.0, "eliminated_polish_mean": 0.0, "eliminated_soviet_mean": 0.0}
    assert format_summary(base).startswith("tutorial: balanced (Polish) vs random (Soviet), 5 games")
    text = format_summary({**base, "polish_params": '{"attack_threshold": 0.9}'})
    assert text.startswith('tutorial: balanced {"attack_threshold": 0.9} (Polish) vs random (Soviet)')


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc, where no file can be created")
@pytest.mark.parametrize("name", ["x.parquet", "x.csv"])
def test_a_failed_write_names_the_target_in_the_os_words(name):
    # user review: "cannot write: Failed to open local file '/proc/.x.parquet.879d3907.part'. Detail: [errno 2] …"
    from soe_sim.sim import write_frames

    with pytest.raises(SoeInputError) as info:
        write_frames([(pd.DataFrame({"a": [1]}), f"/proc/{name}", "--out")])
    (problem,) = info.value.problems
    assert problem.message == "cannot write: No such file or directory" and problem.value == f"/proc/{name}"
    assert ".part" not in str(problem) and "Detail" not in str(problem) and f"/proc/{name}" in str(problem)
    assert not any(n.startswith(f".{name}") for n in os.listdir("/proc"))


@pytest.mark.parametrize("name, needle", [("al", "did you mean `all`?"), ("xyzzy", "'all' or one of: "),
                                          ("kiev", "did you mean `kiev-offensive`?")])
def test_fuzz_suggests_all_among_the_scenarios(capsys, name, needle):
    # user review: `fuzz -s al` listed the built-in scenarios but not `all`
    assert main(["fuzz", "-s", name, "-n", "1"]) == 2
    (line,) = _error_lines(capsys)
    assert needle in line and f"(got '{name}')" in line


# --- the Python API: one SoeInputError naming the argument (user review) ---------------------------

def _battle():
    from soe_sim import Battle

    return Battle.from_spec("4i,4i", "3i")


@pytest.mark.parametrize("call, needle", [
    (lambda s: s.simulate(3, games=2), "scenario: expected a scenario id"),
    (lambda s: s.simulate("tutorial", games=2.5), "games: expected an integer ≥ 0, not float"),
    (lambda s: s.simulate("tutorial", games="10"), "games: expected an integer ≥ 0, not str"),
    (lambda s: s.simulate("tutorial", games=2, threads=0), "threads: must be ≥ 1"),
    (lambda s: s.simulate("tutorial", games=2, batch_size=-5), "batch_size: must be ≥ 1"),
    (lambda s: s.simulate("tutorial", games=2, log_capacity=-1), "log_capacity: must be ≥ 1"),
    (lambda s: s.simulate("tutorial", games=2, seed=-1), "seed: the seed must be a non-negative integer"),
    (lambda s: s.simulate("tutorial", polish="cautious", games=2), "polish: unknown policy"),
    (lambda s: s.engine.game.play_game("tutorial", (1, -1)), "seed: field 'game': must be ≥ 0"),
    (lambda s: s.engine.game.play_games("tutorial", -1), "games: must be ≥ 0"),
    (lambda s: s.engine.game.Policy("balancd"), "did you mean `balanced`?"),
    (lambda s: s.engine.game.Policy("balanced", {"keep_card": 2}), "did you mean `keep_cards`?"),
    (lambda s: s.battle_odds("4i vs 3i"), "battle_odds: field 'battle': expected a Battle, not str"),
    (lambda s: s.battle_odds(_battle(), decks={"polsh": "0:5"}), "field 'decks': unknown side"),
    (lambda s: s.battle_odds(_battle(), mc=2.5), "field 'mc': expected an integer"),
    (lambda s: s.battle_odds(_battle(), mc=-1), "battle_odds: field 'mc': must be ≥ 0"),
    (lambda s: s.simulate_battles("4i"), "simulate_battles: field 'battle': expected a Battle"),
    (lambda s: s.simulate_battles([_battle()] * 2, n=[10, 20, 30]), "3 counts for 2 battles"),
    (lambda s: s.Battle.from_spec("4i", "3i", withdraw="yes"), "withdraw: expected one of none, withdraw, blocked"),
])
def test_python_api_bad_arguments(call, needle):
    import soe_sim
    import soe_sim.engine.game  # noqa: F401 (soe_sim.engine.game.play_game in the calls)

    with pytest.raises(SoeInputError) as info:
        call(soe_sim)
    text = str(info.value)
    assert needle in text and "\n" not in text


def test_python_api_battle_card_by_name_effect_or_id():
    # user review: the README documents id / name / effect lookup for battle cards, but only the CLI had it
    from soe_sim import Battle, battle_odds

    by_effect = Battle.from_spec("4i,4i", "3i", attacker_battle_card="enemy_extra_loss:1")
    plain = Battle.from_spec("4i,4i", "3i")
    assert battle_odds(by_effect).metrics["defender_losses_mean"] > battle_odds(plain).metrics["defender_losses_mean"]
    with pytest.raises(SoeInputError, match="--attacker-battle-card"):
        Battle.from_spec("4i", "3i", attacker_battle_card="no such card at all")


def test_simulation_repr_is_short():
    from soe_sim import simulate

    res = simulate("tutorial", games=3, seed=1, threads=1, trajectories=True)
    assert repr(res).startswith("Simulation(games=3 rows, trajectories=") and "\n" not in repr(res)
