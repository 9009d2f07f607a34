"""How sensible are the attacks a policy pair makes? The share of fought battles each side started at
hopeless odds.

Run: ``.venv/bin/python benchmarks/policy_attacks.py --scenario kiev-offensive --polish balanced
--soviet balanced [--games 100] [--seed 12] [--out FILE]``

Games ``(seed, 0..games-1)`` are played with the detail log (:func:`soe_sim.playtest.play_story`);
for every battle fought, the exact probability that the attacker wins is computed from the recorded
battle with *both* sides drawing their combat card blind from their piles (so the figure judges the
decision to attack, not the card choices made afterwards). JSON on stdout: per side, the attacks,
the share below 10 % and below 30 %, how many of the hopeless ones were single-block attacks, and the
mean win probability (under ``polish`` / ``soviet``: the side as attacker). Audit K2 (docs/policies.md
"Known weaknesses") used this measure.
"""
from __future__ import annotations

import time

import click
import numpy as np
from _output import emit_json  # benchmarks/_output.py


def blind_win_probability(battle, crules) -> float | None:
    """Exact P(attacker wins) of a recorded battle with both combat cards drawn blind."""
    from soe_sim.battle import nb as bnb
    from soe_sim.playtest.story import card_distribution

    if battle.prep is None:
        return None
    av, ap = card_distribution(battle, battle.attacker, blind=True)
    dv, dp = card_distribution(battle, battle.defender, blind=True)
    out = np.empty((len(av) * len(dv), bnb.N_OUT), dtype=np.int64)
    probs = np.empty(len(av) * len(dv), dtype=np.float64)
    bnb.exact_nb(battle.prep, av, ap, dv, dp, crules, out, probs)
    return float(probs @ (out[:, bnb.O_ATTACKER_WINS] == 1))


@click.command()
@click.option("--scenario", default="kiev-offensive", show_default=True)
@click.option("--polish", default="balanced", show_default=True)
@click.option("--soviet", default="balanced", show_default=True)
@click.option("--games", default=100, show_default=True, type=click.IntRange(1))
@click.option("--seed", default=12, show_default=True, type=click.IntRange(0))
@click.option("--out", default=None, help="also write the JSON here")
def main(scenario, polish, soviet, games, seed, out):
    from soe_sim.engine.game import game_setup
    from soe_sim.playtest import play_story

    crules = game_setup(scenario).cr
    probs = {0: [], 1: []}
    single = {0: [], 1: []}
    t0 = time.perf_counter()
    for g in range(games):
        story, _setup, _res = play_story(scenario, seed, g, polish, soviet)
        for b in story.battles:
            if not b.fought:
                continue
            p = blind_win_probability(b, crules)
            if p is not None:
                probs[b.attacker].append(p)
                single[b.attacker].append(len(b.attackers) == 1)
    result = {"scenario": scenario, "policies": {"polish": polish, "soviet": soviet}, "games": games, "seed": seed,
              "seconds": round(time.perf_counter() - t0, 1)}
    for side, name in ((0, "polish"), (1, "soviet")):
        p = np.array(probs[side])
        lone = np.array(single[side], dtype=bool)
        n = len(p)
        result[name] = {
            "attacks": n,
            "attacks_per_game": round(n / games, 2),
            "share_below_0_1": round(float((p < 0.1).mean()), 4) if n else None,
            "share_below_0_3": round(float((p < 0.3).mean()), 4) if n else None,
            "single_block_below_0_1": int(((p < 0.1) & lone).sum()),
            "mean_win_probability": round(float(p.mean()), 4) if n else None,
        }
    emit_json(result, out)


if __name__ == "__main__":
    main()
