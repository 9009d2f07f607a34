"""Designer commands on bad input: one line on stderr, exit code 2, nothing written."""
from __future__ import annotations

import pytest

from soe_sim.cli import main


@pytest.fixture()
def bad_variant(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('name = "bad"\n[rules]\ncombat.flank_penalt = 1\n')
    return p


CASES = [
    (["compare", "-s", "tutorial", "-v", "{bad}"], ["bad.toml", "combat.flank_penalt", "`flank_penalty`"]),
    (["compare", "-s", "tutorial", "-v", "{tmp}/missing.toml"], ["missing.toml", "variant file not found"]),
    (["compare", "-s", "tutorial", "-v", "flank1"], ["did you mean `flank-1`?"]),
    (["compare", "-s", "tutorial", "-v", "base", "-v", "flank-1", "-v", "hmg-deck"], ["give one or two variants"]),
    (["compare", "-s", "tutorail", "-v", "flank-1"], ["unknown scenario", "`tutorial`"]),
    (["sensitivity", "-s", "tutorial", "--knob", "rules.combat.flank_penatly=0:3"],
     ["unknown knob", "`rules.combat.flank_penalty`"]),
    (["sensitivity", "-s", "tutorial", "--knob", "rules.combat.flank_penalty=3:0"], ["LOW must be below HIGH"]),
    (["sensitivity", "-s", "tutorial", "--knob", "rules.combat.flank_penalty=0.5:1.5"],
     ["takes integers", "e.g. rules.combat.flank_penalty=0:2"]),  # a suggestion that is itself accepted
    (["sensitivity", "-s", "tutorial", "--knob", "rules.combat.flank_penalty"], ["NAME=LOW:HIGH"]),
    (["sensitivity", "-s", "tutorial", "--knob", "scenario.initiative.north.level=1:9"],
     ["scenario", "level", "out of range"]),
    (["sensitivity", "-s", "tutorial", "--knob", "scenario.vp=0:2", "--base", "{bad}"], ["combat.flank_penalt"]),
    (["tune", "-s", "tutorial", "--knob", "combat.flank_penalty"], ["did you mean `rules.combat.flank_penalty`?"]),
    (["tune", "-s", "tutorial", "--knob", "scenario.vp", "--target", "1.5"], ["between 0 and 1"]),
    (["tune", "-s", "tutorial", "--knob", "rules.meta.name"], ["not a numeric value"]),
    # the VP track has no 0 space (docs/rules.md E10): a range holding only 0 and 1 has one value
    (["tune", "-s", "tutorial", "--knob", "scenario.vp=0:1"], ["fewer than two values of scenario.vp", "no 0 space"]),
    (["knobs", "-s", "tutorial", "--base", "{bad}"], ["combat.flank_penalt"]),
    (["knobs", "-s", "tutorial", "--base", "flank-2"], ["error: --base:", "did you mean `flank-1`?"]),
    (["knobs", "-s", "tutorial", "--match", "zzz"], ["--match", "no knob name contains"]),
    (["sensitivity", "-s", "tutorial", "--knob", "scenario.vp=0:2", "--base", "nope"], ["error: --base:", "not found"]),
    (["tune", "-s", "tutorial", "--knob", "scenario.vp", "--base", "flank-2"], ["error: --base:", "`flank-1`"]),
    (["compare", "-s", "tutorial", "-v", "flank-1", "--polish", "balanced", "--polish-param", "attack_threshold=2"],
     ["error: --polish-param:", "from 0 to 1"]),
    (["compare", "-s", "tutorial", "-v", "flank-1", "--polish-param", "attack_threshold=0.6"],
     ["error: --polish-param:", "random policy takes no"]),
    # user review: a parameter problem was reported under --polish
    (["compare", "-s", "tutorial", "-v", "flank-1", "--soviet", "aggressive", "--soviet-param", "x=1"],
     ["error: --soviet-param: aggressive: field 'x': unknown policy parameter"]),
    (["compare", "-s", "tutorial", "-v", "flank-1", "--soviet", "agressive", "--soviet-param", "x=1"],
     ["error: --soviet: unknown policy", "did you mean `aggressive`?"]),
]


@pytest.mark.parametrize("argv, expected", CASES)
def test_bad_input_exits_2_with_one_line(argv, expected, bad_variant, tmp_path, capsys):
    out = tmp_path / "out"
    argv = [a.replace("{bad}", str(bad_variant)).replace("{tmp}", str(tmp_path)) for a in argv]
    if argv[0] != "knobs":
        argv += ["-n", "5", "--out", str(out), "--no-progress"]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    for text in expected:
        assert text in lines[0]
    assert "Traceback" not in err
    assert not out.exists()  # nothing half-written


def test_knobs_lists_the_values(capsys):
    assert main(["knobs", "-s", "tutorial", "--match", "combat.flank"]) == 0
    out = capsys.readouterr().out
    assert "rules.combat.flank_penalty" in out and "2" in out


def test_study_commands_use_every_cpu_by_default():
    # user review: compare, sensitivity and tune defaulted to one thread while simulate uses every CPU
    import inspect

    from soe_sim.design import Runner, compare, sensitivity, tune
    from soe_sim.design.cli import compare_command, sensitivity_command, tune_command
    from soe_sim.sim import _cpus

    for f in (compare, sensitivity, tune, Runner):
        assert inspect.signature(f).parameters["threads"].default is None, f
    for cmd in (compare_command, sensitivity_command, tune_command):
        opt = next(p for p in cmd.params if p.name == "threads")
        assert opt.default is None and "every CPU" in opt.help
    assert Runner("tutorial").threads == _cpus()
    assert Runner("tutorial", threads=1).threads == 1
