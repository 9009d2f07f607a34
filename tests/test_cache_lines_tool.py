"""benchmarks/cache_lines.py: how it reads callgrind's per-instruction output and maps it to source lines.

The measurement itself (a debug build under valgrind) takes many minutes and is run by hand
(benchmarks/README.md "Session 37"); here the parts that decide what it reports, on a made-up callgrind file
and a small object compiled with line tables."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import cache_lines  # noqa: E402  (benchmarks/cache_lines.py)

EVENTS = "Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw"

CALLGRIND_OUT = f"""# callgrind format
version: 1
positions: instr line
events: {EVENTS}
summary: 999

ob=(1) /usr/lib/libc.so.6
fl=(1) memcpy.c
fn=(1) memcpy
0x1000 5 9 9 9 9 9 9 9 9 9

ob=(2) ???
fl=(2) ???
fn=(2) 0x5000
0x5000 0 10 4 0 1 2
+4 * 20 6 2 0 1 1 0 1
cfn=(1)
calls=1 0x1000 0
* * 500 500 500 500 500 500 500 500 500
+3 * 7
ob=(1)
0x5000 3 1000
cob=(3) /opt/other.so
ob=(3)
0x6000 0 50
ob=(2)
-4 * 1 0 0 0 0 0 0 0 1
totals: 999
"""


def test_instruction_costs_keep_self_costs_of_code_outside_files():
    events, costs = cache_lines.instruction_costs(CALLGRIND_OUT)
    assert events == EVENTS.split()
    # 0x5004 is +4 from 0x5000; the call's inclusive line (at 0x5004 again) is skipped; 0x5007 is +3 from it;
    # the positions in the files' code (libc, /opt/other.so named through cob=) move the position but are
    # left out: back in ob (2), -4 is from 0x6000
    assert set(costs) == {0x5000, 0x5004, 0x5007, 0x5FFC}
    assert costs[0x5000] == [10, 4, 0, 1, 2, 0, 0, 0, 0]
    assert costs[0x5004] == [20, 6, 2, 0, 1, 1, 0, 1, 0]
    assert costs[0x5007][0] == 7 and costs[0x5FFC] == [1, 0, 0, 0, 0, 0, 0, 0, 1]


def test_a_position_may_be_absolute_relative_or_the_same():
    assert cache_lines._position("0x10", 5) == 16
    assert cache_lines._position("+3", 16) == 19
    assert cache_lines._position("-2", 16) == 14
    assert cache_lines._position("*", 16) == 16
    assert cache_lines._position("42", 16) == 42


@pytest.mark.skipif(not (shutil.which("gcc") and shutil.which("nm") and shutil.which("addr2line")),
                    reason="needs gcc, nm and addr2line")
def test_summarize_puts_each_miss_on_its_function_and_line(tmp_path):
    src = tmp_path / "soe_sim_probe.c"
    src.write_text("int soe_sim_hot(int *a, int n) {\n"
                   "    int s = 0;\n"
                   "    for (int i = 0; i < n; i++)\n"
                   "        s += a[i];\n"
                   "    return s;\n"
                   "}\n")
    obj_dir = tmp_path / "objects"
    obj_dir.mkdir()
    subprocess.run(["gcc", "-g", "-O0", "-c", "-o", str(obj_dir / "0.o"), str(src)], check=True)
    nm = subprocess.run(["nm", "-S", "--defined-only", str(obj_dir / "0.o")], capture_output=True, text=True,
                        check=True).stdout
    off, size = next((int(p[0], 16), int(p[1], 16)) for p in (ln.split() for ln in nm.splitlines())
                     if len(p) == 4 and p[3] == "soe_sim_hot")
    base = 0x7F0000000000
    meta = [[0, base, [[off, size, "soe_sim_hot"]]]]
    (obj_dir / "objects.json").write_text(json.dumps(meta))
    events = EVENTS.split()
    row = [100, 10, 0, 0, 4, 0, 0, 2, 0]  # Ir, Dr, Dw, I1mr, D1mr, D1mw, ILmr, DLmr, DLmw
    costs = {base + off: row, base + off + size + 64: [50, 0, 0, 0, 0, 0, 0, 0, 0]}  # the second: no function
    out = cache_lines.summarize(events, costs, meta, obj_dir, games=2, top=5)
    assert out["per_game"] == {"d1": 2.0, "ll": 1.0, "il": 0.0, "ir": 75.0}
    assert out["d1"]["in_package"] == 1.0 and out["ir"]["in_package"] == pytest.approx(100 / 150, abs=1e-4)
    assert out["d1"]["functions"] == [{"function": "soe_sim_hot", "share": 1.0, "per_game": 2.0}]
    (line,) = out["ll"]["lines"]
    assert line["line"].endswith("soe_sim_probe.c:1") and line["per_game"] == 1.0


def test_summarize_without_the_cache_events_is_a_clear_error(tmp_path):
    with pytest.raises(click.ClickException, match="--cache-sim=yes"):
        cache_lines.summarize(["Ir"], {}, [], tmp_path, games=1, top=5)
