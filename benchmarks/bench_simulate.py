"""``soe_sim.simulate`` benchmark: complete games per second with per-game statistics, per scenario.

Run: ``.venv/bin/python benchmarks/bench_simulate.py [--games 200] [--repeats 5] [--scenario ID ...]
[--pairs random/random,balanced/balanced,aggressive/defensive | --polish P --soviet S] [--threads N]
[--out FILE]``

For every scenario (default: every built-in one) and policy pair (``--pairs``, else ``--polish`` v
``--soviet``, random v random by default): a warm-up call (numba compilation or cache load, scenario
set-up), then ``--repeats`` timed calls of :func:`soe_sim.simulate` with ``--games`` games (the
per-game row with its event-log reduction and key cities, no trajectories or battle table), on 1
thread and on ``--threads`` threads (default: every CPU); the median wall-clock games/s is reported,
with the median CPU time per game at 1 thread and per decision (all the game's work divided by its
decisions: the figure the ≥ 5,000 games/s target is checked against in benchmarks/README.md). Each
repeat uses a different seed so that the repeats are different games. JSON on stdout (with the
load average, since other processes on the machine change the figures).
"""
from __future__ import annotations

import os
import platform
import statistics
import time

import click
import numba
from _output import emit_json  # benchmarks/_output.py


def _pairs(text: str) -> list[tuple[str, str]]:
    out = []
    for item in text.split(","):
        item = item.strip()
        if item:
            pol, _, sov = item.partition("/")
            out.append((pol.strip(), (sov or pol).strip()))
    return out


def _rate(scenario, polish, soviet, games, repeats, threads, seed0):
    from soe_sim.sim import simulate

    simulate(scenario, polish, soviet, games=max(2, 2 * threads), seed=seed0, threads=threads)  # warm-up
    times = []
    cpus = []
    steps = []
    for r in range(repeats):
        t0 = time.perf_counter()
        c0 = time.process_time()
        df = simulate(scenario, polish, soviet, games=games, seed=seed0 + 1 + r, threads=threads)
        times.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
        steps.append(float(df["steps"].mean()))
    med = statistics.median(times)
    return games / med, statistics.mean(steps), times, 1000 * statistics.median(cpus) / games


@click.command()
@click.option("--games", default=200, show_default=True, help="Games per timed call.")
@click.option("--repeats", default=5, show_default=True)
@click.option("--scenario", "scenarios", multiple=True, help="Scenario id(s); default all built-in.")
@click.option("--pairs", default=None,
              help="Comma-separated polish/soviet policy pairs, e.g. random/random,balanced/balanced "
                   "[--polish/--soviet].")
@click.option("--threads", default=None, type=int, help="'All threads' figure with this many [every CPU].")
@click.option("--polish", default="random", show_default=True, help="Polish policy (soe-sim simulate --polish).")
@click.option("--soviet", default="random", show_default=True, help="Soviet policy.")
@click.option("--out", default=None, help="Also write the JSON here.")
def main(games, repeats, scenarios, pairs, threads, polish, soviet, out):
    from soe_sim.data.scenario import list_scenarios

    ids = list(scenarios) or list_scenarios()["id"].tolist()
    n_threads = threads or len(os.sched_getaffinity(0))
    pair_list = _pairs(pairs) if pairs else [(polish, soviet)]
    res = {"benchmark": "soe_sim.simulate", "games_per_call": games, "repeats": repeats,
           "threads": n_threads, "python": platform.python_version(), "numba": numba.__version__,
           "machine": platform.machine(), "cpus": os.cpu_count(), "load_average_at_start": os.getloadavg()[0],
           "scenarios": {}}
    for sid in ids:
        res["scenarios"][sid] = {}
        for polish, soviet in pair_list:
            # the same seeds at both thread counts: the speed-up compares the same games (audit J F9)
            one, steps, t1, cpu1 = _rate(sid, polish, soviet, games, repeats, 1, 1000)
            many, _, tn, _ = _rate(sid, polish, soviet, games, repeats, n_threads, 1000)
            res["scenarios"][sid][f"{polish}/{soviet}"] = {
                "games_per_s_1thread": round(one, 2), "games_per_s_all_threads": round(many, 2),
                "speedup": round(many / one, 2), "cpu_ms_per_game_1thread": round(cpu1, 3),
                "mean_decisions_per_game": round(steps, 1),
                "cpu_us_per_decision_1thread": round(1000 * cpu1 / steps, 2) if steps else None,
                "seconds_1thread": [round(t, 3) for t in t1], "seconds_all_threads": [round(t, 3) for t in tn],
            }
    res["load_average_at_end"] = os.getloadavg()[0]
    emit_json(res, out)


if __name__ == "__main__":
    main()
