"""Battle-resolver throughput: numba Monte Carlo (all threads, 1 thread), the Python reference, and
the exact query latency. Warm-up first, then timed; median of repeats; JSON on stdout.

Run: ``.venv/bin/python benchmarks/bench_battles.py [--sims 8000000] [--repeats 5]``
"""
from __future__ import annotations

import platform
import random
import statistics
import sys
import time
from pathlib import Path

import click
import numba
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests/naive.py, the plain-Python reference

from soe_sim.battle import Battle, battle_odds, default_deck, simulate_battles  # noqa: E402
from soe_sim.battle.odds import numba_threads  # noqa: E402
from soe_sim.rules import load_rules  # noqa: E402
from tests import naive  # noqa: E402
from _output import emit_json  # noqa: E402 (benchmarks/_output.py)


def random_battles(n: int, seed: int) -> list[Battle]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        directions = []
        for _ in range(rng.integers(1, 4)):
            directions.append(",".join(
                f"{rng.integers(1, 5)}{'ic'[rng.integers(0, 2)]}{'f' if rng.random() < 0.2 else ''}"
                for _ in range(rng.integers(1, 3))))
        defender = ",".join(f"{rng.integers(1, 5)}{'ic'[rng.integers(0, 2)]}" for _ in range(rng.integers(1, 4)))
        out.append(Battle.from_spec("/".join(directions), defender, garrison=bool(rng.random() < 0.3),
                                    defend=bool(rng.random() < 0.3), fortified=bool(rng.random() < 0.2),
                                    attacker_side=("polish", "soviet")[rng.integers(0, 2)]))
    return out


def timed(fn, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


@click.command()
@click.option("--sims", default=8_000_000, show_default=True, help="Monte Carlo battles per timed call.")
@click.option("--battles", "n_battles", default=1000, show_default=True, help="Distinct battle specs.")
@click.option("--python-sims", default=20_000, show_default=True, help="Battles for the Python reference.")
@click.option("--repeats", default=5, show_default=True)
@click.option("--out", default=None, help="Also write the JSON here.")
def main(sims, n_battles, python_sims, repeats, out):
    battles = random_battles(n_battles, seed=1)
    per = max(sims // n_battles, 1)
    total = per * n_battles

    def run_mc():
        simulate_battles(battles, n=per, seed=2, as_frame=False, progress=False)

    with numba_threads(numba.config.NUMBA_NUM_THREADS):
        run_mc()  # warm-up (compilation / cache load)
        mc_all = timed(run_mc, repeats)
    with numba_threads(1):
        run_mc()
        mc_one = timed(run_mc, repeats)

    rules = load_rules()
    decks = {s: naive.card_list(default_deck(s)) for s in ("polish", "soviet")}
    rnd = random.Random(3)
    py_cases = [battles[i % n_battles] for i in range(python_sims)]

    def run_python():
        for b in py_cases:
            naive.resolve(b, rnd.choice(decks[b.attacker_side]), rnd.choice(decks[b.defender_side]), rules)

    run_python()
    py = timed(run_python, max(3, repeats // 2))

    query_battle = Battle.from_spec("4i,4i/3c", "4i,3i", garrison=True, defend=True)
    battle_odds(query_battle)
    n_queries = 2000

    def run_queries():
        for _ in range(n_queries):
            battle_odds(query_battle)

    def run_queries_with_parse():
        for _ in range(n_queries):
            battle_odds(Battle.from_spec("4i,4i/3c", "4i,3i", garrison=True, defend=True))

    def run_queries_with_metrics():  # what a user's query costs: the probabilities are computed on access
        for _ in range(n_queries):
            battle_odds(query_battle).metrics["attacker_win"]

    q = timed(run_queries, repeats)
    qp = timed(run_queries_with_parse, repeats)
    qm = timed(run_queries_with_metrics, repeats)

    result = {
        "numba_battles_per_s": total / statistics.median(mc_all),
        "numba_battles_per_s_1thread": total / statistics.median(mc_one),
        "python_battles_per_s": python_sims / statistics.median(py),
        "exact_query_us": statistics.median(q) / n_queries * 1e6,
        "exact_query_with_parse_us": statistics.median(qp) / n_queries * 1e6,
        "exact_query_with_metrics_us": statistics.median(qm) / n_queries * 1e6,
        "threads": numba.config.NUMBA_NUM_THREADS,
        "sims_per_call": total,
        "distinct_battles": n_battles,
        "repeats": repeats,
        "machine": platform.machine(),
        "python": platform.python_version(),
        "numba": numba.__version__,
    }
    result["speedup_vs_python_1thread"] = result["numba_battles_per_s_1thread"] / result["python_battles_per_s"]
    result["speedup_vs_python"] = result["numba_battles_per_s"] / result["python_battles_per_s"]
    emit_json(result, out)


if __name__ == "__main__":
    main()
