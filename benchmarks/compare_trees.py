"""Interleaved A/B timing of two source trees of soe_sim: the honest way to measure a small speed-up on a
machine whose speed drifts between runs.

Run: ``.venv/bin/python benchmarks/compare_trees.py --old /tmp/wt_old --new . [--scenario kiev-offensive]
[--pairs balanced,random] [--threads 1,2] [--games 1000] [--rounds 3] [--out FILE]``

``--old`` and ``--new`` are checkouts of the repository (e.g. ``git worktree add /tmp/wt_old COMMIT``);
each keeps its own numba cache, so compile each once first (the first round of each tree includes
no compilation: every measurement runs a warm-up call before it is timed). For every round, scenario,
policy pair (both sides) and thread count, a fresh interpreter of this virtualenv with the tree on
``PYTHONPATH`` plays one warm-up :func:`soe_sim.simulate` call of 4 games and then ``--games`` games
(``× threads``) with the round's seed, timed; the old tree and the new tree alternate, so both see the
same drift. Reports, per configuration and tree, every round's games/s and CPU ms per game and their
medians, and the new/old ratio of the medians. JSON on stdout.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
from pathlib import Path

import click

from _output import emit_json, tree_child_result  # benchmarks/_output.py, next to this script

_CHILD = r"""
import json, sys, time
from soe_sim.sim import simulate
import soe_sim
scenario, pair, threads, games, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
simulate(scenario, pair, pair, games=4, seed=1, threads=threads)
t = time.perf_counter()
c = time.process_time()
simulate(scenario, pair, pair, games=games, seed=seed, threads=threads)
w = time.perf_counter() - t
print(json.dumps({"file": soe_sim.__file__, "games_per_s": games / w,
                  "cpu_ms_per_game": 1000 * (time.process_time() - c) / games}))
"""


def _run(tree: Path, scenario, pair, threads, games, seed) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-c", _CHILD, scenario, pair, str(threads), str(games), str(seed)],
                         cwd=tree, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise click.ClickException(f"{tree}: the timed run failed:\n{out.stderr[-2000:]}")
    return tree_child_result(tree, out.stdout)


@click.command()
@click.option("--old", "old", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--new", "new", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--scenario", default="kiev-offensive", show_default=True)
@click.option("--pairs", default="balanced,random", show_default=True, help="Policies (both sides), comma-separated.")
@click.option("--threads", "threads_list", default="1,2", show_default=True, help="Thread counts, comma-separated.")
@click.option("--games", default=1000, show_default=True, help="Games per timed call (times the thread count).")
@click.option("--rounds", default=3, show_default=True)
@click.option("--out", default=None, help="Also write the JSON here.")
def main(old, new, scenario, pairs, threads_list, games, rounds, out):
    configs = [(p.strip(), int(t)) for p in pairs.split(",") if p.strip() for t in threads_list.split(",")]
    runs: dict = {}
    for r in range(rounds):
        for pair, threads in configs:
            for name, tree in (("old", old), ("new", new)):
                res = _run(tree, scenario, pair, threads, games * threads, 100 + r)
                runs.setdefault(f"{pair}/{threads}", {}).setdefault(name, []).append(res)
                click.echo(f"round {r + 1} {pair} {threads} thread(s) {name}: {res['games_per_s']:.1f} games/s",
                           err=True)
    report = {"benchmark": "compare_trees", "scenario": scenario, "old": str(old), "new": str(new),
              "games_per_thread": games, "rounds": rounds, "cpus": os.cpu_count(), "configs": {}}
    for key, by_tree in runs.items():
        row = {}
        for name, rs in by_tree.items():
            row[name] = {"games_per_s": [round(x["games_per_s"], 1) for x in rs],
                         "cpu_ms_per_game": [round(x["cpu_ms_per_game"], 3) for x in rs],
                         "median_games_per_s": round(statistics.median(x["games_per_s"] for x in rs), 1),
                         "median_cpu_ms_per_game": round(statistics.median(x["cpu_ms_per_game"] for x in rs), 3)}
        row["new_over_old"] = round(row["new"]["median_games_per_s"] / row["old"]["median_games_per_s"], 3)
        report["configs"][key] = row
    emit_json(report, out)


if __name__ == "__main__":
    main()
