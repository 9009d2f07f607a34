"""How often does ``soe-sim tune``'s interval cover the true crossing? Synthetic searches, no games.

Run: ``.venv/bin/python benchmarks/tune_coverage.py [--reps 400] [--seed0 5000] [--out FILE]``

For three logistic win-rate curves — a crossing exactly on an integer (3.00), next to one (2.95), both
with a shallow slope of 0.45 per unit, and between two integers (2.17, slope 0.6) — runs
:func:`soe_sim.design.tune.search_crossing` ``--reps`` times on binomial draws (knob range 0..6, budget
4,000, batch 250, target 0.5) and reports the share of intervals that contain the true crossing, over all
searches and over those whose status is ``converged`` (audit J F1: the stopping rule used to make the
converged ones miss a crossing on an integer), and by how the search stopped (``search_status``). JSON on stdout.
"""
from __future__ import annotations

import math

import click
import numpy as np
from _output import emit_json  # benchmarks/_output.py

CURVES = ((3.0, 0.45), (2.95, 0.45), (1.3 / 0.6, 0.6))


def _synthetic(a, b, seed):
    rng = np.random.default_rng(seed)

    def evaluate(v, n, stream):
        return int(rng.binomial(n, 1 / (1 + math.exp(-(a + b * v)))))

    return evaluate


@click.command()
@click.option("--reps", default=400, show_default=True, type=click.IntRange(1))
@click.option("--seed0", default=5000, show_default=True, type=click.IntRange(0))
@click.option("--out", default=None, help="also write the JSON here")
def main(reps, seed0, out):
    from soe_sim.design.tune import search_crossing

    result = {"reps": reps, "seed0": seed0, "budget": 4000, "batch": 250, "curves": []}
    for x_true, b in CURVES:
        covered = converged = covered_converged = 0
        by_search: dict[str, list[int]] = {}  # how the search stopped: [searches, intervals covering]
        for i in range(reps):
            res = search_crossing(_synthetic(-b * x_true, b, seed0 + i), 0, 6, integer=True, target=0.5,
                                  budget=4000, batch=250)
            hit = res["ci_low"] <= x_true <= res["ci_high"]
            covered += hit
            if res["status"] == "converged":  # the interval lies between two neighbouring values
                converged += 1
                covered_converged += hit
            tally = by_search.setdefault(str(res.get("search_status", res["status"])), [0, 0])
            tally[0] += 1
            tally[1] += hit
        result["curves"].append({"crossing": round(x_true, 4), "slope": b, "coverage": covered / reps,
                                 "converged": converged,
                                 "coverage_when_converged": covered_converged / converged if converged else None,
                                 "coverage_by_search_status": {k: {"searches": n, "coverage": h / n}
                                                               for k, (n, h) in sorted(by_search.items())}})
    emit_json(result, out)


if __name__ == "__main__":
    main()
