"""Game-engine benchmark: complete games per second with random decisions, per scenario.

Run: ``.venv/bin/python benchmarks/bench_engine.py [--games 200] [--repeats 5] [--out FILE]``

For every built-in scenario: a warm-up batch (numba compilation or cache load), then ``--repeats``
timed batches of ``--games`` games with :func:`soe_sim.engine.game.play_games` (random policy for
both sides, invariant checks off), on 1 thread and on all numba threads; the median is reported.
Each batch uses a different seed so that the repeats are different games. JSON on stdout.
"""
from __future__ import annotations

import json
import platform
import statistics
import time

import click
import numba


def _rate(scenario, games, repeats, threads, seed0):
    from soe_sim.engine.game import play_games

    play_games(scenario, max(2, threads), seed=seed0, threads=threads, raw=True)  # warm-up
    times = []
    steps = []
    for r in range(repeats):
        t0 = time.perf_counter()
        out = play_games(scenario, games, seed=seed0 + 1 + r, threads=threads, raw=True)
        times.append(time.perf_counter() - t0)
        steps.append(float(out[:, 4].mean()))
    med = statistics.median(times)
    return games / med, statistics.mean(steps)


@click.command()
@click.option("--games", default=200, show_default=True, help="Games per timed batch.")
@click.option("--repeats", default=5, show_default=True)
@click.option("--scenario", "scenarios", multiple=True, help="Scenario id(s); default all built-in.")
@click.option("--out", default=None, help="Also write the JSON here.")
def main(games, repeats, scenarios, out):
    from soe_sim.data.scenario import list_scenarios

    ids = list(scenarios) or list_scenarios()["id"].tolist()
    n_threads = numba.config.NUMBA_NUM_THREADS
    res = {"games_per_batch": games, "repeats": repeats, "threads": n_threads, "python": platform.python_version(),
           "numba": numba.__version__, "machine": platform.machine(), "scenarios": {}}
    for sid in ids:
        one, steps = _rate(sid, games, repeats, 1, 1000)
        many, _ = _rate(sid, games, repeats, n_threads, 2000)
        res["scenarios"][sid] = {"games_per_s_1thread": round(one, 2), "games_per_s_all_threads": round(many, 2),
                                 "mean_decisions_per_game": round(steps, 1)}
    text = json.dumps(res, indent=2)
    click.echo(text)
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
