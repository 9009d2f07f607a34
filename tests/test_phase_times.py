"""benchmarks/phase_times.py: the cycle counters go around the calls it names, in the engine's current code."""
from __future__ import annotations

import ast
import sys
from pathlib import Path

import click
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
import phase_times  # noqa: E402


def test_every_region_is_found_in_the_engine_and_the_result_parses():
    files = sorted({phase_times.region_file(function)[0] for function, _callee, _label in phase_times.REGIONS})
    assert phase_times.LOOP in files and len(files) > 1
    counters = 0
    for path in files:
        out = phase_times.instrument((ROOT / path).read_text(), path)
        tree = ast.parse(out)
        starts = [n for n in ast.walk(tree) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                  and getattr(n.value.func, "id", "") == "tick_nb"]
        stops = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "acc_nb"]
        assert len(starts) == len(stops) > 0, path
        counters += len(starts)
        # every counted call sits between its own start and stop, at the call's indentation
        lines = out.split("\n")
        for i, line in enumerate(lines):
            if line.strip().startswith("_tick"):
                slot = line.strip().split(" ")[0][len("_tick"):]
                j = next(k for k in range(i + 1, len(lines)) if lines[k].strip().startswith(f"acc_nb({slot},"))
                assert len(line) - len(line.lstrip()) == len(lines[j]) - len(lines[j].lstrip())
                callee = phase_times.REGIONS[int(slot)][1]
                assert callee in "\n".join(lines[i + 1:j])
    assert counters >= len(phase_times.REGIONS)


def test_a_region_whose_call_is_gone_is_named():
    source = (ROOT / phase_times.LOOP).read_text()
    regions = phase_times.parse_regions(phase_times.REGION_TABLE + "\nbattles_nb  no_such_kernel_nb  battles / none")
    with pytest.raises(click.ClickException, match="no_such_kernel_nb in battles_nb"):
        phase_times.instrument(source, phase_times.LOOP, regions)
