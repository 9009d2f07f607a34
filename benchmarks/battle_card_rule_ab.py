"""What does scoring battle cards by the stakes change, on one side only? Paired games through the Python path.

Run: ``.venv/bin/python benchmarks/battle_card_rule_ab.py --scenario kiev-offensive --side soviet --games 3000
[--seed 77]``

``card_min_gain`` scores both the combat and the battle cards, so :mod:`policy_param_ab` cannot tell the two
apart. Here game ``(seed, i)`` is played twice with :func:`soe_sim.engine.game.play_game`, the ``--side`` played
by ``balanced`` through :class:`~soe_sim.engine.game.JitPolicy` (the numba policy's very choices), once as it is
and once with BATTLE_CARD decisions taken by the former rule (any battle card, scored ``battle_card`` × (1 + 0.1 ×
(own + enemy SP) + area VP); the first best on a tie); the other side plays the numba ``balanced``. JSON on
stdout: the mean VP per game the side gains with the stakes rule, its 95 % interval and how many games changed.
"""
from __future__ import annotations

import time

import click
import numpy as np
from _output import emit_json  # benchmarks/_output.py


@click.command()
@click.option("--scenario", default="kiev-offensive", show_default=True)
@click.option("--side", type=click.Choice(["polish", "soviet"]), default="polish", show_default=True)
@click.option("--games", default=1000, show_default=True, type=click.IntRange(2))
@click.option("--seed", default=77, show_default=True, type=click.IntRange(0))
@click.option("--out", default=None, help="also write the JSON here")
def main(scenario, side, games, seed, out):
    from soe_sim.engine.game import PARAMS, Decision, JitPolicy, play_game

    class FormerBattleCardRule(JitPolicy):
        def choose(self, decision, options, view):
            if decision == Decision.BATTLE_CARD:
                f = options.to_numpy()
                weight = self.params_row()[PARAMS.index("battle_card")]
                s = np.where(f[:, 0] > 0, weight * (1.0 + 0.1 * (f[:, 2] + f[:, 3]) + f[:, 4]), 0.0)
                return int(np.argmax(s))
            return super().choose(decision, options, view)

    t0 = time.perf_counter()
    gained = np.empty(games)
    for g in range(games):
        vp = []
        for policy in (FormerBattleCardRule("balanced"), JitPolicy("balanced")):
            pair = {"polish": policy, "soviet": "balanced"} if side == "polish" else {"polish": "balanced",
                                                                                         "soviet": policy}
            vp.append(play_game(scenario, (seed, g), **pair).vp)
        gained[g] = (vp[1] - vp[0]) * (1 if side == "polish" else -1)
    se = gained.std(ddof=1) / np.sqrt(games)
    emit_json({"scenario": scenario, "side": side, "games": games, "seed": seed,
               "vp_gained": round(float(gained.mean()), 3),
               "vp_gained_ci95": [round(float(gained.mean() - 1.96 * se), 3),
                                  round(float(gained.mean() + 1.96 * se), 3)],
               "games_changed": int((gained != 0).sum()), "seconds": round(time.perf_counter() - t0, 1)}, out)


if __name__ == "__main__":
    main()
