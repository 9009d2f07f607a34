"""`soe-sim odds`: output formats, Monte Carlo block, plots and one-line errors with exit code 2."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from soe_sim.cli import main

EXAMPLE = ["odds", "--attacker", "4i,4i/3c", "--defender", "4i,3i", "--garrison", "--defend"]


def run_json(capsys, *args):
    assert main([*args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_has_required_keys(capsys):
    doc = run_json(capsys, *EXAMPLE, "--mc", "20000", "--seed", "3")
    for key in ("attacker_win", "defender_win", "attacker_losses_mean", "defender_losses_mean",
                "attacker_great_victory", "defender_great_victory", "initiative_shift",
                "loss_distribution", "mc"):
        assert key in doc
    assert doc["attacker_win"] + doc["defender_win"] == pytest.approx(1.0)
    assert sum(r["p"] for r in doc["loss_distribution"]) == pytest.approx(1.0)
    assert set(doc["loss_distribution"][0]) == {"attacker_losses", "defender_losses", "p"}
    assert sum(doc["initiative_shift"].values()) == pytest.approx(1.0)
    mc = doc["mc"]
    assert mc["n"] == 20000
    for key in ("attacker_win", "defender_win", "attacker_losses_mean", "defender_losses_mean",
                "attacker_great_victory", "defender_great_victory"):
        low, high = mc["intervals"][key]
        assert low <= mc[key] <= high
    assert doc["battle"]["attacker_side"] == "soviet" and doc["battle"]["defender_side"] == "polish"


def test_json_without_mc_has_no_mc_block(capsys):
    doc = run_json(capsys, *EXAMPLE)
    assert "mc" not in doc


def test_same_seed_same_mc(capsys):
    a = run_json(capsys, *EXAMPLE, "--mc", "5000", "--seed", "9")
    b = run_json(capsys, *EXAMPLE, "--mc", "5000", "--seed", "9")
    assert a["mc"] == b["mc"]


def test_deck_override_and_hand_card(capsys):
    doc = run_json(capsys, "odds", "--attacker", "4i", "--defender", "4i", "--deck-soviet", "3:1",
                   "--deck-polish", "0:1", "--attacker-side", "soviet")
    # Soviet always +3 -> 7 -> 2 losses; Pole always 0 -> 4 -> 1 loss: attacker wins surely.
    assert doc["attacker_win"] == 1.0
    assert doc["loss_distribution"] == [{"attacker_losses": 1, "defender_losses": 2, "p": 1.0}]
    doc = run_json(capsys, "odds", "--attacker", "4i", "--defender", "4i", "--attacker-card", "hand:4")
    assert doc["battle"]["attacker_card"] == "hand:4"


def test_polish_attacker_uses_polish_deck(capsys):
    doc = run_json(capsys, "odds", "--attacker", "3c", "--defender", "2i", "--attacker-side", "polish",
                   "--deck-polish", "2:1", "--deck-soviet", "0:1")
    assert doc["battle"]["attacker_deck"] == "2:1"
    assert doc["battle"]["defender_deck"] == "0:1"


def test_battle_card_by_name_and_effect(capsys):
    doc = run_json(capsys, "odds", "--attacker", "4i", "--defender", "4i",
                   "--defender-battle-card", "enemy_extra_loss:1", "--deck-soviet", "0:1", "--deck-polish", "0:1")
    assert doc["attacker_losses_mean"] == pytest.approx(2.0)


def test_table_and_csv_formats(capsys):
    assert main([*EXAMPLE, "--mc", "2000", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "P(attacker wins)" in out and "Joint distribution" in out and "95% interval" in out
    assert main([*EXAMPLE, "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("metric,description,exact")


def test_plot_file(tmp_path, capsys):
    path = tmp_path / "odds.png"
    assert main([*EXAMPLE, "--mc", "2000", "--seed", "1", "--plot", str(path)]) == 0
    assert path.stat().st_size > 10_000


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--attacker", "4x", "--defender", "3i"], "`x`"),
        (["--attacker", "5i", "--defender", "3i"], "5i"),
        (["--attacker", "0i", "--defender", "3i"], "0i"),
        (["--attacker", "4i,,3i", "--defender", "3i"], "empty block"),
        (["--attacker", "4i", "--defender", ""], "defender needs at least one block"),
        (["--attacker", "", "--defender", "3i"], "attacker needs at least one block"),
        (["--attacker", "4i", "--defender", "3i", "--deck-soviet", "0:5,1:x"], "1:x"),
        (["--attacker", "4i", "--defender", "3i", "--deck-polish", "0:0"], "at least one card"),
        (["--attacker", "4i", "--defender", "3i", "--attacker-card", "hand:9"], "hand:9"),
        (["--attacker", "4i", "--defender", "3i", "--defender-card", "hand"], "hand"),
        (["--attacker", "4i", "--defender", "3ir,2ir"], "only one block"),
        (["--attacker", "4ir", "--defender", "3i"], "`r`"),
        (["--attacker", "2l", "--defender", "3i"], "leader"),
        (["--attacker", "4i", "--defender", "3i", "--initiative", "attacker:0"], "attacker:0"),
        (["--attacker", "4i", "--defender", "3i", "--initiative", "attacker:9"], "at most 5"),  # SoE 6.1
        (["--attacker", "4i", "--defender", "3i", "--system", "soe81"], "soe81"),
        (["--attacker", "4i", "--defender", "3i", "--attacker-battle-card", "no such card"], "no such card"),
        # E-C11: the card's text limits its role (attacker Soviet by default: Polish 7 defends, Soviet 11 attacks)
        (["--attacker", "4i", "--defender", "3i", "--defender-battle-card", "renault tanks"], "Attacker only"),
        (["--attacker", "4i", "--defender", "3i", "--attacker-battle-card", "11"], "Defender only"),
        (["--attacker", "4i", "--defender", "3i", "--attacker-battle-card", "negate_flank:1;defender_only:1"],
         "Defender only"),
        # audit I D11: values no battle can have
        (["--attacker", "4i", "--defender", "3i", "--support", "99"], "support from 99 direction(s)"),
        (["--attacker", "4i", "--defender", "3i,2i", "--support", "3"], "2 given"),
        (["--attacker", "4i", "--defender", "3i", "--attacker-battle-card", "enemy_extra_loss:99"],
         "expected 0..20"),
        (["--attacker", "4i", "--defender", "3i", "--attacker-battle-card", "combat_value:-50"], "expected -20..20"),
        (["--attacker", "4i", "--defender", "3i", "--defender-battle-card", "own_loss_reduction:-1"],
         "expected 0..20"),
        (["--attacker", "4i,4i,4i,4i,3i", "--defender", "3i"], "5 blocks attack along one link"),  # SoE 7.33
        (["--attacker", "4i", "--defender", "1i,1i,1i,1i,1i"], "5 defending blocks"),
        # review: suggestions in the project's style for click choices and --initiative
        (["--attacker", "4i", "--defender", "3i", "--attacker-side", "polsh"],
         "--attacker-side: expected `polish` or `soviet` (got 'polsh'); did you mean `polish`?"),
        (["--attacker", "4i", "--defender", "3i", "--format", "jsn"], "(got 'jsn'); did you mean `json`?"),
        (["--attacker", "4i", "--defender", "3i", "--initiative", "atacker:1"], "did you mean `attacker:1`?"),
        (["--attacker", "4i", "--defender", "3i", "--initiative", "defender"], "did you mean `defender:1`?"),
        # review: an unknown option names the other combat systems that have it
        (["--attack", "26", "--defense", "7"], "it is an option of `--system soyuz81` and `--system rswe`"),
        (["--attacker", "4i", "--defender", "3i", "--charge", "2"], "add `--system rswe`"),
        (["--atacker", "4i", "--defender", "3i"], "--atacker: no such option of `soe-sim odds` (Strike of the Eagle); "
                                                   "did you mean `--attacker`?"),
        (["--system", "soyuz81", "--attack", "6", "--defense", "2", "--attacker-side", "polish"],
         "drop `--system soyuz81`"),
        (["--system", "rswe", "--attack", "6", "--defense", "2", "--concentric"], "use `--system soyuz81`"),
        (["--system", "rswe", "--attack", "6", "--defense", "2", "--atack", "1"], "did you mean `--attack`?"),
    ],
)
def test_bad_input_one_line_exit_2(capsys, args, needle):
    assert main(["odds", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("error: ")
    assert needle in lines[0]
    assert "Traceback" not in captured.err


@pytest.mark.parametrize("defender, support", [("2i/2i", "1"), ("2i/2i/1i", "1"), ("2i/2i", "2")])
def test_support_given_twice_is_refused(tmp_path, capsys, defender, support):
    """Review: `/` in --defender and --support both give the supporting directions; they used to be added
    (`2i/2i --support 1` printed "support from 2 direction(s)"). Refused, and nothing is written."""
    plot = tmp_path / "odds.png"
    assert main(["odds", "--attacker", "4i,4i,4i/4c", "--defender", defender, "--support", support,
                 "--plot", str(plot)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and not plot.exists()
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("error: --support: give support either with '/' in --defender")
    assert "or with --support, not both" in line and f"(got {support})" in line


def test_support_by_slash_or_by_option_is_the_same(capsys):
    by_slash = run_json(capsys, "odds", "--attacker", "4i,4i,4i/4c", "--defender", "2i/2i")
    by_option = run_json(capsys, "odds", "--attacker", "4i,4i,4i/4c", "--defender", "2i,2i", "--support", "1")
    assert by_slash["battle"]["support_directions"] == by_option["battle"]["support_directions"] == 1
    assert by_slash["attacker_win"] == by_option["attacker_win"]


def test_support_given_twice_is_refused_from_python():
    from soe_sim.battle.spec import Battle
    from soe_sim.errors import SoeInputError

    with pytest.raises(SoeInputError, match="not both"):
        Battle.from_spec("4i", "2i/2i", support=1)
    assert Battle.from_spec("4i", "2i/2i").support_directions == 1
    assert Battle.from_spec("4i", "2i,2i", support=1).support_directions == 1


@pytest.mark.parametrize("args, flag", [
    (["--attacker", "4i", "--defender", "3i", "--withdraw", "--withdraw-blocked"], "--withdraw-blocked"),
    (["--attacker", "4i", "--garrison", "--withdraw"], "--withdraw"),
    (["--attacker", "4i", "--garrison", "--withdraw-blocked"], "--withdraw-blocked"),
    (["--attacker", "4i"], "--defender"),
])
def test_flag_problems_have_no_empty_got(capsys, args, flag):
    """Review: a problem with flags (no value given) ended in "(got '')"."""
    assert main(["odds", *args]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"error: {flag}: ") and "(got" not in line
    if "--withdraw-blocked" in args and "--withdraw" in args:
        assert "cannot be combined with --withdraw" in line


def test_largest_battles_the_rules_allow(capsys):
    """SoE 7.33: four blocks along each link, and an area of four blocks joined by four supporting blocks
    per direction, are legal battles (the limits of audit I D11 reject only what the rules forbid)."""
    out = run_json(capsys, "odds", "--attacker", "4i,4i,4i,4i/4c,4c,4c,4c", "--defender", "1i,1i,1i,1i/1i,1i,1i,1i")
    assert 0 < out["attacker_win"] < 1
    assert out["battle"]["support_directions"] == 1


def test_console_script_no_traceback():
    """The installed `soe-sim` entry point maps bad input to exit code 2 with no traceback."""
    proc = subprocess.run([sys.executable, "-m", "soe_sim.cli", "odds", "--attacker", "4q", "--defender", "1i"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "`q`" in proc.stderr


def test_battle_card_from_deck_by_name(capsys):
    """A named battle card comes from the side's deck data (Polish HMG fire: +1 loss to the enemy)."""
    base = ["odds", "--attacker", "4i", "--defender", "4i", "--deck-soviet", "0:1", "--deck-polish", "0:1"]
    plain = run_json(capsys, *base)
    with_card = run_json(capsys, *base, "--defender-battle-card", "heavy machine gun fire")
    assert with_card["attacker_losses_mean"] == plain["attacker_losses_mean"] + 1


def test_odds_tables_script(tmp_path):
    """analysis/odds_tables.py (run by `make run`) writes the CSV and the heatmaps."""
    from click.testing import CliRunner

    from analysis.odds_tables import main as odds_tables_main

    result = CliRunner().invoke(odds_tables_main, ["--out", str(tmp_path), "--max-sp", "4"])
    assert result.exit_code == 0, result.output
    import pandas as pd

    table = pd.read_csv(tmp_path / "odds_tables.csv")
    assert set(table["condition"]) >= {"open", "defend", "fortified", "one-flank", "two-flanks"}
    assert table["attacker_win"].dropna().between(0, 1).all()
    assert len(list(tmp_path.glob("odds_attacker_win_*.png"))) == 7
    # Defend can only help the defender.
    pivot = table.pivot_table(index=["attacker_sp", "defender_sp"], columns="condition", values="attacker_win")
    assert (pivot["defend"] <= pivot["open"] + 1e-12).all()


def test_system_help_is_the_systems_own(capsys):
    assert main(["odds", "--system", "soyuz81", "--help"]) == 0
    out = capsys.readouterr().out
    assert "Soyuz 81" in out and "--attacker-side" not in out
    assert main(["odds", "--help"]) == 0
    assert "--attacker-side" in capsys.readouterr().out


def _commands(group, path=()):
    import click

    for name, command in group.commands.items():
        yield path + (name,), command
        if isinstance(command, click.Group):
            yield from _commands(command, path + (name,))


def test_every_command_help_renders_without_format_escapes(capsys):
    # click prints help text as written (no %-formatting, unlike argparse): a "%%" meant as an
    # escaped percent sign would reach the user literally.
    from soe_sim.cli import _register, cli

    _register()
    paths = list(_commands(cli))
    assert len(paths) >= 12
    for path, _command in paths:
        assert main([*path, "--help"]) == 0, path
        out = capsys.readouterr().out
        assert "Usage: soe-sim " + " ".join(path) in out, path
        assert "%%" not in out, (path, [line for line in out.splitlines() if "%%" in line])
