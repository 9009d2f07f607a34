"""benchmarks/instructions.py: how it reads callgrind's output and the environment it measures a tree in.

The measurement itself (a haswell build of the engine under valgrind) takes minutes and is run by hand
(benchmarks/README.md "Session 28"); here the parts that decide what it reports."""
from __future__ import annotations

import sys
from pathlib import Path

import click
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import instructions  # noqa: E402  (benchmarks/instructions.py)

CALLGRIND_OUT = """# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 4242
cmd:  python -c ...
part: 1

desc: Trigger: Client Request: games

positions: line
events: Ir
summary: 2440262563

fn=(1) 0x000000000abc
0 12
totals: 2440262563
"""


def test_callgrind_total_reads_the_totals_line():
    assert instructions.callgrind_total(CALLGRIND_OUT) == 2440262563
    assert instructions.callgrind_total("events: Ir\nsummary: 17\n") == 17


def test_callgrind_total_without_a_total_is_an_error():
    with pytest.raises(click.ClickException, match="totals"):
        instructions.callgrind_total("events: Ir\nfn=(1) x\n0 12\n")


def test_tree_env_fixes_the_processor_cache_and_hash_seed(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_DISABLE_JIT", "1")
    env = instructions._tree_env(tmp_path / "tree", tmp_path / "cache", "haswell")
    assert env["PYTHONPATH"] == str(tmp_path / "tree")
    assert env["NUMBA_CACHE_DIR"] == str(tmp_path / "cache")
    assert env["NUMBA_CPU_NAME"] == "haswell" and env["NUMBA_CPU_FEATURES"] == ""
    assert env["PYTHONHASHSEED"] == "0"
    assert "NUMBA_DISABLE_JIT" not in env  # the kernels must be compiled to be measured


def test_child_result_rejects_a_package_from_elsewhere(tmp_path):
    tree = tmp_path / "tree"
    (tree / "soe_sim").mkdir(parents=True)
    inside = '{"file": "%s"}' % (tree / "soe_sim" / "__init__.py")
    assert instructions.tree_child_result(tree, "noise\n" + inside)["file"].endswith("__init__.py")
    with pytest.raises(click.ClickException, match="not from the tree"):
        instructions.tree_child_result(tree, '{"file": "/elsewhere/soe_sim/__init__.py"}')


def test_the_runner_switches_instrumentation_only_around_the_games():
    runner = instructions.RUNNER
    start, stop = runner.index("lib.soe_instr_start()"), runner.index("lib.soe_instr_stop()")
    games = runner.index("df = play_chunk(")
    assert start < games < stop
    assert runner.index("games=4, workers=workers)") < start  # the warm-up is not counted
    compile(runner, "<runner>", "exec")
    assert "CALLGRIND_START_INSTRUMENTATION" in instructions.HELPER_C


def test_without_valgrind_the_tool_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(instructions.shutil, "which", lambda name: None)
    (tmp_path / "soe_instr.so").write_bytes(b"")  # a helper built earlier does not hide the missing valgrind
    with pytest.raises(click.ClickException, match="valgrind is not installed"):
        instructions.build_helper(tmp_path)


CACHE_SIM_OUT = """events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
summary: 1000 400 200 3 40 20 1 10 5
totals: 1000 400 200 3 40 20 1 10 5
"""


def test_cache_sim_figures_per_game():
    ev = instructions.callgrind_events(CACHE_SIM_OUT)
    fig = instructions.sim_figures(ev, "tree", 10, branch_sim=False, cache_sim=True)
    assert fig["data_reads_per_game"] == 40 and fig["d1_read_misses_per_game"] == 4
    assert fig["ll_read_misses_per_game"] == 1 and fig["ll_write_misses_per_game"] == 0.5
    assert "conditional_branches_per_game" not in fig
    with pytest.raises(click.ClickException, match="no Bc event"):
        instructions.sim_figures(ev, "tree", 10, branch_sim=True, cache_sim=True)


def test_cache_sim_flags_fix_the_geometry():
    flags = instructions.valgrind_sim_flags(False, ("32768,8,64", "524288,8,64"))
    assert flags == ["--cache-sim=yes", "--I1=32768,8,64", "--D1=32768,8,64", "--LL=524288,8,64"]
    assert instructions.valgrind_sim_flags(True, None) == ["--branch-sim=yes"]


@pytest.mark.parametrize("text", ["32768,8", "32768,8,48", "1000,8,64", "a,b,c", "0,8,64"])
def test_a_bad_cache_geometry_is_a_clear_error(text):
    with pytest.raises(click.BadParameter, match="--d1"):
        instructions.cache_geometry(text, "--d1")
    assert instructions.cache_geometry(" 32768, 8 ,64", "--d1") == "32768,8,64"
