"""Game-engine benchmark: complete games per second, per scenario and policy pair, 1 thread and all threads.

Run: ``.venv/bin/python benchmarks/bench_engine.py [--games 200] [--repeats 5] [--scenario ID ...]
[--pairs random/random,balanced/balanced,aggressive/defensive] [--threads N] [--out FILE]
[--balance-report [--balance-games 100000] [--balance-matrix-games 1000]]``

For every scenario (default: every built-in one) and policy pair: a warm-up batch (numba compilation
or cache load, thread start-up), then ``--repeats`` timed batches of ``--games`` games with
:func:`soe_sim.engine.game.play_games` (invariant checks off) on 1 thread and on ``--threads``
threads (default: every CPU this process may use); each batch uses a different seed, so the repeats
are different games. Reported per (scenario, pair): the median wall-clock games/s at 1 thread and at
all threads, their ratio (``speedup``), the median CPU time per game at 1 thread
(``time.process_time``: the figure least disturbed by other processes on the machine) and the mean
decisions per game.

``--balance-report`` (opt-in, long) also times :func:`soe_sim.report.balance_report` on
kiev-offensive with ``--balance-games`` headline games and ``--balance-matrix-games`` games per other
pairing of the policy matrix (the ``soe-sim report balance`` command), on all threads.

JSON on stdout (``--out FILE`` also writes it), with the load average at the start and the end:
other processes on the machine change the figures.
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

DEFAULT_PAIRS = "random/random,balanced/balanced,aggressive/defensive"


def _pairs(text: str) -> list[tuple[str, str]]:
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        pol, _, sov = item.partition("/")
        out.append((pol.strip(), (sov or pol).strip()))
    return out


def _batch(scenario, games, seed, threads, polish, soviet):
    from soe_sim.engine.game import play_games

    w0 = time.perf_counter()
    c0 = time.process_time()
    out = play_games(scenario, games, seed=seed, threads=threads, polish=polish, soviet=soviet, raw=True)
    return time.perf_counter() - w0, time.process_time() - c0, float(out[:, 4].mean())


def _measure(scenario, polish, soviet, games, repeats, threads, seed0):
    _batch(scenario, max(2, 2 * threads), seed0, threads, polish, soviet)  # warm-up
    walls, cpus, steps = [], [], []
    for r in range(repeats):
        w, c, s = _batch(scenario, games, seed0 + 1 + r, threads, polish, soviet)
        walls.append(w)
        cpus.append(c)
        steps.append(s)
    return {"games_per_s": games / statistics.median(walls), "cpu_ms_per_game": 1000 * statistics.median(cpus) / games,
            "wall_s": [round(w, 3) for w in walls], "mean_decisions": statistics.mean(steps)}


def _balance_report(games, matrix_games, threads):
    from soe_sim.report import balance_report

    with tempfile.TemporaryDirectory() as out_dir:
        w0 = time.perf_counter()
        c0 = time.process_time()
        rep = balance_report("kiev-offensive", games=games, matrix_games=matrix_games, seed=1, out_dir=out_dir,
                             threads=threads, progress=False)
        wall = time.perf_counter() - w0
        cpu = time.process_time() - c0
    m = rep.meta
    return {"command": f"soe-sim report balance --scenario kiev-offensive --games {games} "
                       f"--matrix-games {matrix_games} --seed 1 --threads {threads} --out DIR",
            "wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "total_games": int(m["total_games"]),
            "pairs": int(m["pairs"]), "simulation_s": round(float(m["simulation_seconds"]), 1),
            "sample_s": round(float(m["sample_seconds"]), 1)}


@click.command()
@click.option("--games", default=200, show_default=True, help="Games per timed batch.")
@click.option("--repeats", default=5, show_default=True)
@click.option("--scenario", "scenarios", multiple=True, help="Scenario id(s); default all built-in.")
@click.option("--pairs", default=DEFAULT_PAIRS, show_default=True, help="Comma-separated polish/soviet policy pairs.")
@click.option("--threads", default=None, type=int, help="'All threads' figure with this many [every CPU].")
@click.option("--balance-report", is_flag=True, help="Also time a balance report (long; opt-in).")
@click.option("--balance-games", default=100_000, show_default=True)
@click.option("--balance-matrix-games", default=1000, show_default=True)
@click.option("--out", default=None, help="Also write the JSON here.")
def main(games, repeats, scenarios, pairs, threads, balance_report, balance_games, balance_matrix_games, out):
    from soe_sim.data.scenario import list_scenarios

    ids = list(scenarios) or list_scenarios()["id"].tolist()
    n_threads = threads or len(os.sched_getaffinity(0))
    res = {"benchmark": "soe_sim.engine.game.play_games", "games_per_batch": games, "repeats": repeats,
           "threads": n_threads, "python": platform.python_version(), "numba": numba.__version__,
           "machine": platform.machine(), "cpus": os.cpu_count(), "load_average_at_start": os.getloadavg()[0],
           "scenarios": {}}
    for sid in ids:
        res["scenarios"][sid] = {}
        for polish, soviet in _pairs(pairs):
            one = _measure(sid, polish, soviet, games, repeats, 1, 1000)
            many = _measure(sid, polish, soviet, games, repeats, n_threads, 2000)
            res["scenarios"][sid][f"{polish}/{soviet}"] = {
                "games_per_s_1thread": round(one["games_per_s"], 1),
                "games_per_s_all_threads": round(many["games_per_s"], 1),
                "speedup": round(many["games_per_s"] / one["games_per_s"], 2),
                "cpu_ms_per_game_1thread": round(one["cpu_ms_per_game"], 3),
                "mean_decisions_per_game": round(one["mean_decisions"], 1),
                "wall_s_1thread": one["wall_s"], "wall_s_all_threads": many["wall_s"],
            }
            click.echo(f"{sid} {polish}/{soviet}: {res['scenarios'][sid][f'{polish}/{soviet}']}", err=True)
    if balance_report:
        res["balance_report"] = _balance_report(balance_games, balance_matrix_games, n_threads)
    res["load_average_at_end"] = os.getloadavg()[0]
    emit_json(res, out)


if __name__ == "__main__":
    main()
