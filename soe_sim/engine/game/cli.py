"""Game-engine commands of ``soe-sim``: ``fuzz``.

:func:`register` adds them to the top-level click group (called by :mod:`soe_sim.cli`).
Exit codes of ``fuzz``: 0 when no game violated an invariant or crashed, 1 otherwise, 2 for bad input.
"""
from __future__ import annotations

import json
import sys

import click

from soe_sim.cliutil import MAX_STEPS_MAX, SEED, games_range
from soe_sim.errors import SoeInputError, did_you_mean

__all__ = ["register", "fuzz_command"]


def _counts(counts: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"


def _with_all(err: SoeInputError, name: str) -> SoeInputError:
    """``err`` of an unknown scenario id, its suggestion counting ``all`` (which only this command
    takes) among the ids."""
    from dataclasses import replace

    from soe_sim.data.scenario import list_scenarios

    problems = list(err.problems)
    p = problems[0]
    if len(problems) == 1 and p.message == "unknown scenario":
        ids = list_scenarios()["id"].tolist()
        close = did_you_mean(name, ["all", *ids])
        problems = [replace(p, suggestion=close or f"'all' or one of: {', '.join(ids)}")]
    return SoeInputError(problems)


@click.command("fuzz")
@click.option("--scenario", "-s", "scenarios", multiple=True, required=True,
              help="Scenario id (repeat for several; 'all' for every built-in scenario).")
@click.option("--games", "-n", default=100, show_default=True, type=games_range(),
              help="Games per scenario.")
@click.option("--seed", default=0, show_default=True, type=SEED,
              help="Batch seed; game i uses SeedSequence(seed).spawn(n)[i].")
@click.option("--max-steps", default=None, type=click.IntRange(min=1, max=MAX_STEPS_MAX),
              help="Decision steps per game before a game is aborted.")
@click.option("--threads", default=None, type=click.IntRange(min=1), help="Numba threads (results do not depend on it).")
@click.option("--ruleset", default="soe", show_default=True,
              help="Ruleset: soe, eats (The Eagle and the Star) or a rules TOML path.")
@click.option("--every-step", is_flag=True,
              help="Also check before every decision (the same games, played one by one: slower).")
@click.option("--format", "fmt", type=click.Choice(["table", "text", "json"]), default="table", show_default=True,
              help="table (alias: text) or json, as in the other commands.")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar on stderr [default: when a terminal].")
def fuzz_command(scenarios, games, seed, max_steps, threads, ruleset, every_step, fmt, progress) -> None:
    """Play random games and check the engine's invariants after every phase (and, with
    --every-step, before every decision too).

    Checked: SP within 1..max for blocks on the map; a block is on the map iff it has an area;
    stacking within the limit at phase end (Eastern Links exempt); no unresolved battle at phase end;
    55 cards per side across locations, none left in play at phase end; the VP track equals the start
    VP plus the VP events; permanently eliminated blocks never return; no saved cube pool (side,
    front, colour) below 0. Before a decision, all but the three phase-end ones.
    """
    from soe_sim.data.scenario import list_scenarios, load_scenario
    from soe_sim.engine.game import DEFAULT_MAX_STEPS, fuzz
    from soe_sim.rules import load_rules

    load_rules(ruleset)  # an unknown ruleset: SoeInputError (exit 2) with a suggestion

    ids = []
    for s in scenarios:
        if s == "all":
            ids.extend(list_scenarios()["id"].tolist())
        else:
            try:
                load_scenario(s)  # raises SoeInputError (exit 2) for an unknown id
            except SoeInputError as err:
                raise _with_all(err, s) from None
            ids.append(s)
    ids = list(dict.fromkeys(ids))  # `-s all -s tutorial` plays the tutorial once
    kw = {"ruleset": ruleset} if ruleset != "soe" else {}
    bar = bool(sys.stderr.isatty() if progress is None else progress)
    reports = [fuzz(sid, games, seed, max_steps=max_steps or DEFAULT_MAX_STEPS, threads=threads,
                    every_step=every_step, progress=bar, **kw)
               for sid in ids]
    failed = any(r["violations"] or r["crashes"] for r in reports)
    if fmt == "json":
        click.echo(json.dumps(reports[0] if len(reports) == 1 else reports, indent=2))
    else:
        for r in reports:
            rs = f" under {r['ruleset']}" if r.get("ruleset", "soe") != "soe" else ""
            line = (f"{r['scenario']}{rs}: {r['games']} games (seed {r['seed']}, checked {r['checked']}): "
                    f"{r['violations']} with violations, "
                    f"{r['crashes']} crashes, {r['stalemates']} stalemates; outcomes {_counts(r['outcomes'])}; "
                    f"winners {_counts(r['winners'])}")
            click.echo(line)
            if r["first_violation"]:
                v = r["first_violation"]
                click.echo(f"  first violation: {v['code']} in game {v['game']} (seed {v['seed']}) "
                           f"at step {v['step']} ({v['when']}), round {v['round']} phase {v['phase']}")
            if r["first_crash"]:
                c = r["first_crash"]
                click.echo(f"  first crash: game {c['game']} (seed {c['seed']}): {c['error']}")
    if failed:
        bad = [f"{r['scenario']}: {r['violations']} game(s) with violations, {r['crashes']} crash(es)"
               for r in reports if r["violations"] or r["crashes"]]
        raise click.ClickException("; ".join(bad))  # exit code 1


def register(cli: click.Group) -> None:
    """Add the game-engine commands to the ``soe-sim`` group."""
    cli.add_command(fuzz_command)
