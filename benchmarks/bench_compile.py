"""Cold compile time of the game loop, with the time each kernel costs (docs/engine-design.md "Compile
time").

Most of a fresh clone's test run, and of every engine edit (numba's on-disk cache does not notice
edits to callees in other files, so kernel work means clearing the caches), is numba compiling the
game loop. This script measures it: a child process with an empty ``NUMBA_CACHE_DIR`` imports the
package from ``--tree`` and plays ``--games`` games of ``soe_sim.simulate`` (``--scenario``,
balanced v balanced, 1 thread), which compiles everything ``simulate`` needs. numba's
``numba:compile`` events give each compilation's duration; the time of the kernels compiled *during*
a compilation (its callees) is subtracted, so each kernel is charged its own typing, lowering,
linking, optimisation and code generation (``exclusive_s``; ``inclusive_s`` the largest
including callees). A kernel compiled for several argument types appears once with ``versions``.

One run takes minutes (about 8–11 on the project's 2-core VM) and uses one core; compare two trees by
running them at the same time, each on its own core, so that both see the VM's drift::

    .venv/bin/python benchmarks/bench_compile.py --tree /tmp/wt_old --out old.json &
    .venv/bin/python benchmarks/bench_compile.py --tree . --out new.json

JSON on stdout: ``total_s`` (wall time of the child's import and first ``simulate``),
``compilations``, ``kernels`` (the ``--top`` largest by exclusive time).
"""
from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import click

from _output import emit_json  # benchmarks/_output.py

_CHILD = r"""
import json, sys, time
from collections import defaultdict
from numba.core import event

stack, records = [], []


class Recorder(event.Listener):
    def on_start(self, ev):
        stack.append([ev.data.get("dispatcher"), time.perf_counter(), 0.0])

    def on_end(self, ev):
        dispatcher, t0, callees = stack.pop()
        dt = time.perf_counter() - t0
        if stack:
            stack[-1][2] += dt
        func = getattr(dispatcher, "py_func", None)
        name = f"{func.__module__}.{func.__qualname__}" if func is not None else str(dispatcher)
        records.append((name, dt, dt - callees))


event.register("numba:compile", Recorder())
scenario, games = sys.argv[1], int(sys.argv[2])
t0 = time.perf_counter()
import soe_sim

soe_sim.simulate(scenario, polish="balanced", soviet="balanced", games=games, seed=1, threads=1)
total = time.perf_counter() - t0
per = defaultdict(lambda: [0, 0.0, 0.0])
for name, inclusive, exclusive in records:
    row = per[name]
    row[0] += 1
    row[1] = max(row[1], inclusive)
    row[2] += exclusive
print(json.dumps({"total_s": total, "compilations": len(records), "module": soe_sim.__file__,
                  "kernels": [{"kernel": k, "versions": v[0], "inclusive_s": round(v[1], 2),
                               "exclusive_s": round(v[2], 2)} for k, v in per.items()]}))
"""


@click.command()
@click.option("--tree", default=".", show_default=True, type=click.Path(exists=True, file_okay=False),
              help="Checkout whose soe_sim is compiled.")
@click.option("--scenario", default="kiev-offensive", show_default=True)
@click.option("--games", default=4, show_default=True, help="Games of the compiling simulate call.")
@click.option("--top", default=25, show_default=True, help="How many kernels to list.")
@click.option("--out", default=None, help="Also write the JSON here.")
def main(tree, scenario, games, top, out):
    tree = Path(tree).resolve()
    if not (tree / "soe_sim" / "__init__.py").is_file():
        raise click.BadParameter(f"{tree} has no soe_sim package", param_hint="--tree")
    with tempfile.TemporaryDirectory(prefix="soe-compile-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(tree))
        proc = subprocess.run([sys.executable, "-c", _CHILD, scenario, str(games)], env=env, cwd=cache,
                              capture_output=True, text=True)
    if proc.returncode != 0:
        raise click.ClickException(f"the compiling process failed:\n{proc.stderr[-3000:]}")
    child = json.loads(proc.stdout.strip().splitlines()[-1])
    kernels = sorted(child["kernels"], key=lambda k: -k["exclusive_s"])
    emit_json({
        "benchmark": "bench_compile", "tree": str(tree), "module": child["module"], "scenario": scenario,
        "games": games, "python": platform.python_version(), "cpus": os.cpu_count(),
        "total_s": round(child["total_s"], 1), "compilations": child["compilations"],
        "exclusive_sum_s": round(sum(k["exclusive_s"] for k in kernels), 1), "kernels": kernels[:top],
    }, out)


if __name__ == "__main__":
    main()
