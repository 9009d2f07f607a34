"""Balance-report benchmark: wall time of ``soe-sim report balance`` at a given total of games.

Run: ``.venv/bin/python benchmarks/bench_report.py [--games 100000] [--policies balanced] [--repeats 1]``

A warm-up report of a few games first (numba compilation or cache load, matplotlib and the scenario
set-up), then ``--repeats`` timed calls of :func:`soe_sim.report.balance_report` with ``--games``
games in total: with one policy that is one pairing of ``--games`` games; with ``k`` policies the
``k * k`` pairings share the total (the headline pairing gets the remainder). Each timed call writes
the whole report (``index.html`` and its CSV / parquet files) into a temporary directory, which is
part of the time. The median over repeats is reported with the split into simulation, event sample
and writing, and the load average (other processes change the figures). JSON on stdout.
"""
from __future__ import annotations

import os
import platform
import statistics
import tempfile
import time

import click
import numba
from _output import emit_json  # benchmarks/_output.py


def _one(scenario, games, matrix_games, policies, seed, threads, sample_games):
    from soe_sim.report import balance_report

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        rep = balance_report(scenario, games=games, matrix_games=matrix_games, policies=policies, seed=seed,
                             out_dir=tmp, threads=threads, sample_games=sample_games)
        total = time.perf_counter() - t0
        size = sum(os.path.getsize(os.path.join(tmp, f)) for f in os.listdir(tmp))
    m = rep.meta
    return {"seconds": total, "simulation_seconds": m["simulation_seconds"], "sample_seconds": m["sample_seconds"],
            "write_and_analysis_seconds": total - m["simulation_seconds"] - m["sample_seconds"],
            "total_games": m["total_games"], "output_bytes": size}


@click.command()
@click.option("--scenario", default="kiev-offensive", show_default=True)
@click.option("--games", default=100_000, show_default=True, help="Games in total over every pairing.")
@click.option("--policies", default="balanced", show_default=True, help="Comma-separated policies of the matrix.")
@click.option("--sample-games", default=200, show_default=True, help="Headline games replayed for the event sample.")
@click.option("--repeats", default=1, show_default=True)
@click.option("--threads", default=None, type=int, help="Threads [default: every CPU].")
@click.option("--out", default=None, help="Also write the JSON here.")
def main(scenario, games, policies, sample_games, repeats, threads, out):
    pols = [p.strip() for p in policies.split(",") if p.strip()]
    pairs = len(pols) ** 2
    matrix_games = games // pairs
    headline_games = games - matrix_games * (pairs - 1)
    n_threads = threads or len(os.sched_getaffinity(0))
    _one(scenario, 4, 2, pols, 999, n_threads, 2)  # warm-up: compile / load caches, import the plotting
    runs = []
    load0 = os.getloadavg()[0]
    for r in range(repeats):
        runs.append(_one(scenario, headline_games, matrix_games, pols, r, n_threads, min(sample_games, headline_games)))
    med = statistics.median(x["seconds"] for x in runs)
    res = {"benchmark": "soe_sim.report.balance_report (soe-sim report balance)", "scenario": scenario,
           "policies": pols, "pairings": pairs, "games_total": runs[0]["total_games"],
           "headline_games": headline_games, "matrix_games": matrix_games, "sample_games": min(sample_games, headline_games),
           "repeats": repeats, "threads": n_threads, "seconds_median": round(med, 1),
           "minutes_median": round(med / 60, 2), "games_per_s": round(runs[0]["total_games"] / med, 1),
           "runs": [{k: (round(v, 2) if isinstance(v, float) else v) for k, v in x.items()} for x in runs],
           "python": platform.python_version(), "numba": numba.__version__, "machine": platform.machine(),
           "cpus": os.cpu_count(), "load_average_at_start": load0, "load_average_at_end": os.getloadavg()[0]}
    emit_json(res, out)


if __name__ == "__main__":
    main()
