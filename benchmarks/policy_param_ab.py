"""What does one policy parameter do to the games? Paired games, the parameter changed on one side only.

Run: ``.venv/bin/python benchmarks/policy_param_ab.py --policy balanced --param card_min_gain=0 \\
--param card_min_gain=0.03 [--scenario tutorial --scenario kiev-offensive] [--games 4000] [--seed 11]``

For each scenario, each side and each opponent (``--opponent``, default ``balanced`` and ``random``), the
side plays ``--policy`` with every ``--param`` value against the same opponent on the same seeds (common random
numbers: :func:`soe_sim.simulate` with one seed, so game ``i`` of every arm starts from the same shuffle). The
first ``--param`` is the reference arm. JSON on stdout: per arm, the side's win rate and, against the
reference, the mean VP the side gained per game with its 95 % interval (normal approximation of the paired
differences) and how many games changed at all. Against ``random`` half of ``--games`` are played. Session
19 chose ``card_min_gain``'s default with it (docs/policies.md "Combat cards and the stakes").
"""
from __future__ import annotations

import time

import click
import numpy as np
from _output import emit_json  # benchmarks/_output.py


def _value(text: str) -> tuple[str, float]:
    key, _, value = text.partition("=")
    try:
        return key.strip(), float(value)
    except ValueError:
        raise click.BadParameter(f"expected KEY=NUMBER, got {text!r}", param_hint="--param") from None


@click.command()
@click.option("--policy", default="balanced", show_default=True)
@click.option("--param", "params", multiple=True, required=True,
              help="KEY=VALUE, repeated: the arms; the first is the reference")
@click.option("--scenario", "scenarios", multiple=True, default=("tutorial", "kiev-offensive"), show_default=True)
@click.option("--opponent", "opponents", multiple=True, default=("balanced", "random"), show_default=True)
@click.option("--games", default=4000, show_default=True, type=click.IntRange(2))
@click.option("--seed", default=11, show_default=True, type=click.IntRange(0))
@click.option("--threads", default=None, type=click.IntRange(1), help="[all cores]")
@click.option("--out", default=None, help="also write the JSON here")
def main(policy, params, scenarios, opponents, games, seed, threads, out):
    import soe_sim

    arms = [_value(p) for p in params]
    t0 = time.perf_counter()
    rows = []
    for scenario in scenarios:
        for side in ("polish", "soviet"):
            for opponent in opponents:
                n = games if opponent != "random" else max(games // 2, 2)
                frames = []
                for key, value in arms:
                    me = (policy, {key: value})
                    pair = ({"polish": me, "soviet": opponent} if side == "polish"
                            else {"polish": opponent, "soviet": me})
                    frames.append(soe_sim.simulate(scenario, games=n, seed=seed, threads=threads, **pair))
                sign = 1 if side == "polish" else -1
                ref = frames[0]
                for (key, value), df in zip(arms, frames):
                    d = sign * (df["vp"].to_numpy(float) - ref["vp"].to_numpy(float))
                    se = d.std(ddof=1) / np.sqrt(len(d))
                    rows.append({
                        "scenario": scenario, "side": side, "opponent": opponent, "param": key, "value": value,
                        "games": n, "win": round(float((df["winner"] == side).mean()), 4),
                        "vp_gained": round(float(d.mean()), 3),
                        "vp_gained_ci95": [round(float(d.mean() - 1.96 * se), 3),
                                           round(float(d.mean() + 1.96 * se), 3)],
                        "games_changed": int((d != 0).sum()),
                    })
    emit_json({"policy": policy, "reference": f"{arms[0][0]}={arms[0][1]:g}", "seed": seed,
               "seconds": round(time.perf_counter() - t0, 1), "arms": rows}, out)


if __name__ == "__main__":
    main()
