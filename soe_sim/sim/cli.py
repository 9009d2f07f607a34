"""Many-games commands of ``soe-sim``: ``simulate`` and ``sweep``.

:func:`register` adds them to the top-level click group (called by :mod:`soe_sim.cli`). Input
problems are :class:`~soe_sim.errors.SoeInputError` (one line each on stderr, exit code 2).
"""
from __future__ import annotations

import json
import math
import sys

import click

from soe_sim.cliutil import SEED, games_range

__all__ = ["register", "simulate_command", "sweep_command", "format_summary"]


def _pct(x: float) -> str:
    return "   n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:5.1f} %"


def format_summary(s: dict) -> str:
    """The ``--format table`` text of a :func:`soe_sim.sim.summarize` dict."""
    rs = f" under {s['ruleset']}" if s.get("ruleset", "soe") != "soe" else ""

    def who(side):  # the policy and, as compare prints them, its parameter overrides (JSON)
        params = s.get(f"{side}_params")
        return f"{s.get(side, '?')} {params}" if params else f"{s.get(side, '?')}"

    lines = [f"{s.get('scenario', '?')}{rs}: {who('polish')} (Polish) vs {who('soviet')} (Soviet), "
             f"{s['games']} games, seed {s.get('seed', '?')}"]
    for key, label in (("polish_win", "Polish win"), ("soviet_win", "Soviet win"), ("draw", "draw")):
        lo, hi = s[key + "_ci"]
        lines.append(f"  {label:<13}{_pct(s[key])}   95 % CI [{100 * lo:.1f}, {100 * hi:.1f}]")
    lines.append(f"  {'aborted':<13}{_pct(s['aborted'])}")
    lines.append(f"  {'VP mean':<13}{s['vp_mean']:+.2f} (sd {s['vp_sd']:.2f})")
    lines.append(f"  {'rounds':<13}{s['rounds_mean']:.2f}")
    lines.append(f"  {'battles':<13}{s['battles_mean']:.2f} per game, great victories {s['great_victories_mean']:.2f}")
    lines.append(f"  {'SP lost':<13}Polish {s['sp_lost_polish_mean']:.2f}, Soviet {s['sp_lost_soviet_mean']:.2f}; "
                 f"blocks eliminated Polish {s['eliminated_polish_mean']:.2f}, Soviet {s['eliminated_soviet_mean']:.2f}")
    for city, held in (s.get("held_at_end") or {}).items():
        if held["polish"] or held["soviet"]:
            lines.append(f"  {'held ' + city:<13}Polish {_pct(held['polish'])}, Soviet {_pct(held['soviet'])}")
    if "ci_target" in s:
        lines.append(f"  {'CI width':<13}{100 * s['ci_width']:.1f} points (target {100 * s['ci_target']:.1f}, "
                     f"{'reached' if s.get('ci_reached') else 'NOT reached: game cap hit'})")
    if "games_per_second" in s:
        threads = s.get("threads", "?")
        lines.append(f"  {s['games_per_second']:,.0f} games/s ({threads} thread{'' if threads == 1 else 's'}, "
                     f"{s['seconds']:.2f} s)")
    return "\n".join(lines)


def _with_params(name: str, pairs, option: str):
    from soe_sim.errors import Problem, SoeInputError

    if not pairs:
        return name
    params = {}
    for item in pairs:
        key, sep, value = item.partition("=")
        try:
            if not sep:
                raise ValueError
            number = float(value)
        except ValueError:
            raise SoeInputError(Problem(option, "", "", item, "expected KEY=NUMBER",
                                        "e.g. --polish-param attack_threshold=0.6")) from None
        key = key.strip().lower()  # as resolve_policy reads it: ATTACK_THRESHOLD is attack_threshold
        if key in params:  # not "the last one wins" in silence
            raise SoeInputError(Problem(option, "", "", item, f"parameter '{key}' given twice",
                                        "give each parameter once"))
        params[key] = number
    # checked here so that a problem with the parameters names their option, not the policy's
    from soe_sim.sim import resolve_policy

    resolve_policy(name, option.removesuffix("-param"))  # an unknown policy name: --polish
    resolve_policy((name, params), option)
    return (name, params)


@click.command("simulate")
@click.option("--scenario", "-s", required=True, help="Scenario id (soe-sim scenarios) or TOML path.")
@click.option("--polish", default="random", show_default=True, help="Polish policy.")
@click.option("--soviet", default="random", show_default=True, help="Soviet policy.")
@click.option("--polish-param", "polish_params", multiple=True, metavar="KEY=VALUE",
              help="Polish policy parameter override (repeatable; names: docs/policies.md).")
@click.option("--soviet-param", "soviet_params", multiple=True, metavar="KEY=VALUE",
              help="Soviet policy parameter override (repeatable).")
@click.option("--games", "-n", default=None, type=games_range(),
              help="Games to play [default 1000; with --ci-width the most games, default 100000].")
@click.option("--seed", default=0, show_default=True, type=SEED,
              help="Batch seed; game i is play_game(scenario, seed=(seed, i)).")
@click.option("--threads", default=None, type=click.IntRange(min=1),
              help="Threads, at most the CPUs this process may use [default: every CPU]; "
              "results do not depend on it.")
@click.option("--out", "out", default=None, type=click.Path(dir_okay=False),
              help="Write one row per game to this .parquet (or .csv) file.")
@click.option("--trajectories", "traj_out", default=None, type=click.Path(dir_okay=False),
              help="Write the VP track after every phase to this .parquet (or .csv) file.")
@click.option("--battles", "battles_out", default=None, type=click.Path(dir_okay=False),
              help="Write one row per battle to this .parquet (or .csv) file.")
@click.option("--ci-width", default=None, type=float,
              help="Adaptive: play batches until the 95 % intervals of both win rates are narrower than this.")
@click.option("--batch", default=None, type=games_range(), help="Games per batch in adaptive mode [1000].")
@click.option("--ruleset", default="soe", show_default=True,
              help="Ruleset: soe, eats (The Eagle and the Star, docs/rules.md 'EatS variant') or a rules TOML path.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr [default: when a terminal].")
def simulate_command(scenario, polish, soviet, polish_params, soviet_params, games, seed, threads, out, traj_out,
                     battles_out, ci_width, batch, ruleset, fmt, progress) -> None:
    """Play many seeded games and summarise them (win rates with 95 % Wilson intervals, VP, losses).

    The JSON has games, polish_win, soviet_win, draw (rates), their *_ci intervals, aborted, vp_mean,
    vp_sd, battles_mean, games_per_second and more.
    """
    from soe_sim.sim import Simulation, check_output_paths, simulate, summarize, write_frames

    if progress is None:
        progress = sys.stderr.isatty()
    outputs = ((out, "--out"), (traj_out, "--trajectories"), (battles_out, "--battles"))
    check_output_paths(outputs)  # before any game is played
    polish = _with_params(polish, polish_params, "--polish-param")
    soviet = _with_params(soviet, soviet_params, "--soviet-param")
    res = simulate(scenario, polish, soviet, games=games, seed=seed, threads=threads, ci_width=ci_width,
                   batch_size=batch, trajectories=bool(traj_out), battles=bool(battles_out), progress=progress,
                   ruleset=ruleset)
    df = res.games if isinstance(res, Simulation) else res
    meta = df.attrs.get("soe_sim", {})
    summary = summarize(df, meta.get("seconds"))
    summary["threads"] = meta.get("threads")
    summary["ruleset"] = meta.get("ruleset", "soe")
    for k in ("load_seconds", "ci_target", "ci_reached"):
        if k in meta:
            summary[k] = meta[k]
    frames = {"--out": df}
    if isinstance(res, Simulation):
        frames["--trajectories"] = res.trajectories
        frames["--battles"] = res.battles
    write_frames([(frames[option], path, option) for path, option in outputs if path])  # all or nothing
    if fmt == "json":
        click.echo(json.dumps(summary, indent=2))
    else:
        click.echo(format_summary(summary))
        for path in (out, traj_out, battles_out):
            if path:
                click.echo(f"wrote {path}")


@click.command("sweep")
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--out", "out", required=True, type=click.Path(file_okay=False),
              help="Output directory (partitioned parquet + manifest.json); an existing one is resumed.")
@click.option("--scheduler", default=None, help="Address of a dask.distributed scheduler [default: a LocalCluster].")
@click.option("--workers", default=None, type=click.IntRange(min=1), help="LocalCluster workers [one per CPU].")
@click.option("--threads-per-worker", default=1, show_default=True, type=click.IntRange(min=1),
              help="Threads of each LocalCluster worker (each plays one chunk at a time).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr [default: when a terminal].")
def sweep_command(config, out, scheduler, workers, threads_per_worker, fmt, progress) -> None:
    """Run the grid CONFIG names (scenarios × policy pairs × rule overlays × seed chunks) on dask.

    Finished chunks are written atomically as they arrive; rerunning the same command resumes an
    interrupted sweep without recomputing or duplicating any chunk.

    \b
    CONFIG (TOML), the least it needs:
        scenarios = ["tutorial"]
        games_per_chunk = 200
        chunks = 8
        seed = 7
        [[pairs]]
        polish = "balanced"
        soviet = "balanced"

    Prints the status and one line per cell (scenario, policies, overlay) with its win rates; the JSON has
    the manifest and the same cells under "cells".

    Optional keys (ruleset, key_cities, trajectories, battles, common_random_numbers, policy
    parameter grids, [[overlays]] of rule files, inline rules or design variants): the docstring of
    soe_sim/sim/sweep.py and docs/designer.md.
    """
    from soe_sim.sim.sweep import format_sweep_summary, load_config, run_sweep, sweep_summary

    if progress is None:
        progress = sys.stderr.isatty()
    cfg = load_config(config)
    man = run_sweep(cfg, out, scheduler, n_workers=workers, threads_per_worker=threads_per_worker, progress=progress)
    cells = sweep_summary(out)
    if fmt == "json":
        click.echo(json.dumps({**man, "cells": cells.to_dict(orient="records")}, indent=2, default=str))
    else:
        last = man.get("last_run", {})
        click.echo(f"{man['status']}: {man['tasks_done']}/{man['tasks_total']} chunks, {man['games_done']} games "
                   f"({last.get('computed', 0)} computed, {last.get('skipped', 0)} already done, "
                   f"{last.get('seconds', 0):.1f} s) in {out}")
        click.echo(format_sweep_summary(cells))


def register(cli: click.Group) -> None:
    """Add the many-games commands to the ``soe-sim`` group."""
    for cmd in (simulate_command, sweep_command):
        cli.add_command(cmd)
