"""Behaviour reference for engine optimisations: digests of seeded games, to build once and re-check.

Run: ``.venv/bin/python benchmarks/perf_reference.py build|check [--dir /tmp/perf-ref] [--games 100]``

For the rulesets soe and eats, every built-in scenario and the policy pairs random/random, balanced/balanced and
aggressive/defensive, ``--games`` seeded games are played three ways and digested:

* :func:`soe_sim.engine.game.play_game` one by one: SHA-256 of each game's event log (raw records),
  its result row and its final state, card state and order state;
* :func:`soe_sim.engine.game.play_games` (the parallel kernel) on all threads: SHA-256 of the result
  rows, which must also equal the rows of the one-by-one games;
* :func:`soe_sim.simulate` (the statistics kernel) on all threads: SHA-256 of the per-game frame.

``build`` writes ``digests.json`` to ``--dir``; ``check`` recomputes and names every (scenario, pair,
game) whose digest differs (exit status 1 when any does). An optimisation of the engine must leave
every digest unchanged: same games, same event logs, same results for the same seeds.
"""
from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

import click
import numpy as np

PAIRS = (("random", "random"), ("balanced", "balanced"), ("aggressive", "defensive"))
RULESETS = ("soe", "eats")
DETAIL_GAMES = 10  # games per key also played with ``log_detail=True`` (playtest detail events)
SEED = 20261122


def _h(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str(a.dtype).encode())
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:24]


def _named_tuple_arrays(nt):
    return [np.asarray(v) for v in nt if isinstance(v, np.ndarray)]


def digests(games: int, scenarios=None, rulesets=RULESETS) -> dict:
    from soe_sim.data.scenario import list_scenarios
    from soe_sim.engine.game import play_game, play_games
    from soe_sim.sim import simulate

    ids = list(scenarios) if scenarios else list_scenarios()["id"].tolist()
    out = {}
    for rs in rulesets:
      for sid in ids:
        for pol, sov in PAIRS:
            key = f"{sid}/{pol}-{sov}" if rs == "soe" else f"{rs}:{sid}/{pol}-{sov}"
            t0 = time.process_time()
            per_game = []
            rows = []
            for i in range(games):
                res = play_game(sid, seed=(SEED, i), polish=pol, soviet=sov, ruleset=rs)
                per_game.append(_h(res.log.used(), res.row, *_named_tuple_arrays(res.state),
                                   *_named_tuple_arrays(res.cards)))
                rows.append(res.row)
            for i in range(min(games, DETAIL_GAMES)):
                res = play_game(sid, seed=(SEED, i), polish=pol, soviet=sov, ruleset=rs, log_detail=True)
                per_game.append(_h(res.log.used(), res.row, *_named_tuple_arrays(res.state),
                                   *_named_tuple_arrays(res.cards)))
            rows = np.stack(rows)
            batch = play_games(sid, games, seed=SEED, polish=pol, soviet=sov, raw=True, ruleset=rs)
            df = simulate(sid, pol, sov, games=games, seed=SEED, trajectories=True, battles=True, ruleset=rs)
            sim_hash = _h(*[df.games[c].to_numpy().astype(str) for c in df.games.columns],
                          *[df.trajectories[c].to_numpy().astype(str) for c in df.trajectories.columns],
                          *[df.battles[c].to_numpy().astype(str) for c in df.battles.columns])
            out[key] = {"games": per_game, "rows": _h(rows), "play_games_rows": _h(batch),
                        "play_games_equals_play_game": bool(np.array_equal(rows, batch)), "simulate": sim_hash,
                        "mean_steps": float(rows[:, 4].mean())}
            click.echo(f"{key}: {time.process_time() - t0:.1f}s cpu, mean steps {rows[:, 4].mean():.0f}", err=True)
    return out


@click.command()
@click.argument("mode", type=click.Choice(["build", "check"]))
@click.option("--dir", "ref_dir", default="/tmp/perf-ref", show_default=True)
@click.option("--games", default=100, show_default=True)
@click.option("--scenario", "scenarios", multiple=True, help="Only these scenario ids (check: a subset).")
@click.option("--ruleset", "rulesets", multiple=True, help="Only these rulesets [soe, eats].")
def main(mode, ref_dir, games, scenarios, rulesets):
    rulesets = tuple(rulesets) or RULESETS
    path = Path(ref_dir) / "digests.json"
    if mode == "build":
        d = digests(games, scenarios, rulesets)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"games": games, "seed": SEED, "digests": d}, indent=1))
        click.echo(f"wrote {path}")
        return
    ref = json.loads(path.read_text())
    d = digests(ref["games"], scenarios, rulesets)
    bad = 0
    for key, new in d.items():
        old = ref["digests"].get(key)
        if old is None:
            click.echo(f"{key}: not in the reference")
            bad += 1
            continue
        diff_games = [i for i, (a, b) in enumerate(zip(old["games"], new["games"])) if a != b]
        for field in ("rows", "play_games_rows", "simulate"):
            if old[field] != new[field]:
                click.echo(f"{key}: {field} differs")
                bad += 1
        if not new["play_games_equals_play_game"]:
            click.echo(f"{key}: play_games rows differ from play_game rows")
            bad += 1
        if diff_games:
            click.echo(f"{key}: {len(diff_games)} game(s) differ, first {diff_games[:5]}")
            bad += 1
    click.echo("IDENTICAL" if bad == 0 else f"{bad} DIFFERENCES")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
