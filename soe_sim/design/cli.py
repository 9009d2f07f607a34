"""Designer commands of ``soe-sim``: ``compare``, ``sensitivity``, ``tune`` and ``knobs``.

:func:`register` adds them to the top-level click group (called by :mod:`soe_sim.cli`). Every input
is checked before a game is played: a problem is one line on stderr with exit code 2 and nothing
is written.
"""
from __future__ import annotations

import json
import sys

import click

from soe_sim.cliutil import SEED, games_range

__all__ = ["register", "compare_command", "sensitivity_command", "tune_command", "knobs_command"]


def _run_options(f):
    """Options shared by the three study commands (policies, seeds, backend, outputs)."""
    opts = [
        click.option("--scenario", "-s", required=True, help="Scenario id (soe-sim scenarios) or TOML path."),
        click.option("--polish", default="random", show_default=True, help="Polish policy."),
        click.option("--soviet", default="random", show_default=True, help="Soviet policy."),
        click.option("--polish-param", "polish_params", multiple=True, metavar="KEY=VALUE",
                     help="Polish policy parameter override (repeatable; docs/policies.md)."),
        click.option("--soviet-param", "soviet_params", multiple=True, metavar="KEY=VALUE",
                     help="Soviet policy parameter override (repeatable)."),
        click.option("--seed", default=0, show_default=True, type=SEED,
                     help="Run seed (the same games in every arm: common random numbers)."),
        click.option("--threads", default=None, type=click.IntRange(min=1),
                     help="Threads of the local backend [every CPU] (results do not depend on it)."),
        click.option("--chunk-size", default=None, type=click.IntRange(min=1),
                     help="Games per chunk, the unit of work on Dask [250]. Each chunk has its own seed, so "
                          "the games played depend on it: keep it (and --seed) to reproduce a run."),
        click.option("--dask", is_flag=True, help="Play the chunks on a dask.distributed LocalCluster."),
        click.option("--scheduler", default=None, metavar="ADDRESS",
                     help="Play the chunks on a running dask scheduler (tcp://HOST:PORT)."),
        click.option("--workers", default=None, type=click.IntRange(min=1), help="LocalCluster workers [one per CPU]."),
        click.option("--out", "out_dir", default=None, type=click.Path(file_okay=False),
                     help="Write CSV tables, games.parquet, PNG plots, summary.json and index.html here."),
        click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True),
        click.option("--progress/--no-progress", default=None, help="Progress bar on stderr [default: when a terminal]."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _runner(o: dict):
    from soe_sim.design.output import check_study_dir
    from soe_sim.design.runner import Runner
    from soe_sim.sim.cli import _with_params

    check_study_dir(o["out_dir"])  # before any game
    progress = sys.stderr.isatty() if o["progress"] is None else o["progress"]
    work_dir = None
    if o["out_dir"] and (o["dask"] or o["scheduler"]):
        from pathlib import Path

        work_dir = Path(o["out_dir"]) / "sweep"  # chunk files: an interrupted Dask run resumes here
    return Runner(o["scenario"], _with_params(o["polish"], o["polish_params"], "--polish-param"),
                  _with_params(o["soviet"], o["soviet_params"], "--soviet-param"), threads=o["threads"],
                  chunk_size=o["chunk_size"], progress=progress, dask=o["dask"], scheduler=o["scheduler"],
                  workers=o["workers"], work_dir=work_dir)


def _emit(result, o: dict, *, title: str, tables: dict, figures, games) -> None:
    from soe_sim.design.output import json_default, strict_json, write_study

    text = result.format_table()
    summary = strict_json(result.to_dict())
    if o["out_dir"]:
        written = write_study(o["out_dir"], title=title, text=text, summary=summary, tables=tables,
                              figures=figures(), games=games)
    if o["fmt"] == "json":
        click.echo(json.dumps(summary, indent=2, default=json_default))
    else:
        click.echo(text)
        if o["out_dir"]:
            click.echo(f"wrote {len(written)} files to {o['out_dir']} (index.html)")


@click.command("compare")
@click.option("--variant", "-v", "variants", multiple=True, required=True, metavar="VARIANT",
              help="A variant TOML, a built-in name (data/variants), `base`, or A.toml+B.toml composed; "
                   "give it twice for arms A and B (once: compared with `base`).")
@click.option("--games", "-n", default=2000, show_default=True, type=games_range(), help="Games per arm.")
@_run_options
def compare_command(variants, games, **o) -> None:
    """Compare two rule variants on the same seeded games (common random numbers).

    Reports both arms' win rates, the difference of the Polish win rate (B minus A) with a 95 %
    interval and an exact McNemar p-value, and the VP shift. The JSON has arms (each with
    polish_win, soviet_win, games), difference, ci_low, ci_high and p_value.
    """
    from soe_sim.design.compare import check_arms, compare

    arms = check_arms(variants)
    a, b = (arms[0], arms[1]) if len(arms) == 2 else (None, arms[0])
    with _runner(o) as runner:
        runner.setups([v for v in (a, b) if v is not None])  # every value checked before any game
        res = compare(o["scenario"], a, b, games=games, seed=o["seed"], runner=runner)
    _emit(res, o, title=f"compare: {res.variants[0].name} vs {res.variants[1].name} ({o['scenario']})",
          tables={"arms": res.table()}, figures=lambda: {"compare": res.plot()}, games=res.games)


@click.command("sensitivity")
@click.option("--knob", "-k", "knobs", multiple=True, required=True, metavar="NAME=LOW:HIGH[:POINTS]",
              help="A numeric knob (rules.…, scenario.…, cards.<side>.change.<id>.<column>) and its range; "
                   "repeatable. `soe-sim knobs` lists them.")
@click.option("--base", default="base", show_default=True, metavar="VARIANT",
              help="Variant the knobs are varied around.")
@click.option("--games", "-n", default=1000, show_default=True, type=games_range(),
              help="Games per arm (the base and every knob value).")
@_run_options
def sensitivity_command(knobs, base, games, **o) -> None:
    """One-at-a-time sweeps of numeric knobs: table of win-rate effects and a tornado plot.

    Every arm plays the same seeded games, so each effect is a paired difference against the base.
    """
    from soe_sim.design.sensitivity import sensitivity
    from soe_sim.design.variant import load_variant

    base = load_variant(base, _where=("--base", ""))  # its problems name the option
    with _runner(o) as runner:
        res = sensitivity(o["scenario"], list(knobs), base=base, games=games, seed=o["seed"], runner=runner)

    def figures():
        figs = {"tornado": res.plot()}
        if res.table.groupby("knob").size().max() >= 3:
            figs["curves"] = res.plot_curves()
        return figs

    _emit(res, o, title=f"sensitivity around {res.base.name} ({o['scenario']})",
          tables={"sensitivity": res.table, "tornado": res.tornado}, figures=figures, games=res.games)


@click.command("tune")
@click.option("--knob", "-k", "knobs", multiple=True, required=True, metavar="NAME[=LOW:HIGH]",
              help="The numeric knob to tune and optionally its range [integer knobs: base ± 3]; one knob.")
@click.option("--target", default=0.5, show_default=True, type=float, help="Target win rate of --side.")
@click.option("--side", type=click.Choice(["polish", "soviet"]), default="polish", show_default=True)
@click.option("--base", default="base", show_default=True, metavar="VARIANT", help="Variant the knob is set in.")
@click.option("--games", "-n", default=4000, show_default=True, type=games_range(3),
              help="Game budget of the whole search, all of it played unless the crossing lies outside the range "
                   "(an integer knob keeps at least a quarter for the confirmation batch).")
@click.option("--batch", default=250, show_default=True, type=games_range(),
              help="Games per round (reduced, with a note, when three rounds do not fit in the budget).")
@click.option("--tol", default=None, type=float, help="Stop when the crossing's interval is narrower (real knobs).")
@_run_options
def tune_command(knobs, target, side, base, games, batch, tol, **o) -> None:
    """Find the knob value whose win rate is closest to --target (adaptive logistic fit).

    Reports the crossing of the fitted win-rate curve with its 95 % interval and, for integer
    knobs, the two values around it with their observed and fitted win rates. The status is
    converged when the interval lies between two neighbouring values, budget when the budget is
    spent first, out_of_range when the interval lies outside the range. scenario.vp skips 0 (the
    VP track has no 0 space): -1 and +1 are neighbours.
    """
    from soe_sim.design.tune import tune
    from soe_sim.design.variant import load_variant
    from soe_sim.errors import Problem, SoeInputError

    if len(knobs) > 1:  # a second -k silently replaced the first
        raise SoeInputError(Problem("--knob", "", "", ", ".join(knobs), "tune tunes one knob",
                                    "run tune once per knob, or use `soe-sim sensitivity -k A -k B`"))
    knob = knobs[0]
    name, sep, rng = knob.partition("=")
    if sep and rng.count(":") > 1:  # NAME=LOW:HIGH:POINTS is sensitivity's form; tune picks its points
        raise SoeInputError(Problem("--knob", "", "", knob, "expected NAME or NAME=LOW:HIGH",
                                    f"tune chooses the values it plays: -k {name}={':'.join(rng.split(':')[:2])}"))

    base = load_variant(base, _where=("--base", ""))  # its problems name the option
    progress = sys.stderr.isatty() if o["progress"] is None else o["progress"]
    with _runner({**o, "progress": False}) as runner:
        res = tune(o["scenario"], knob, target, base=base, side=side, games=games, batch=batch, tol=tol,
                   seed=o["seed"], runner=runner, progress=progress)
    _emit(res, o, title=f"tune {res.knob} ({o['scenario']})",
          tables={"tune": res.table, "evaluations": res.evaluations, "candidates": res.candidates},
          figures=lambda: {"tune": res.plot()}, games=res.games)


@click.command("knobs")
@click.option("--scenario", "-s", required=True, help="Scenario id or TOML path.")
@click.option("--base", default="base", show_default=True, metavar="VARIANT", help="Variant applied first.")
@click.option("--match", default=None, help="Only knobs whose name contains this text.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def knobs_command(scenario, base, match, fmt) -> None:
    """List the numeric knobs of a scenario (rules and scenario values) with their values.

    Card knobs follow the pattern cards.<side>.change.<id>.<column> (orders, combat_modifier,
    infantry_cubes, cavalry_cubes, allied_cubes).
    """
    from soe_sim.design.variant import list_knobs, load_variant

    rows = [(n, v) for n, v in list_knobs(scenario, load_variant(base, _where=("--base", "")))
            if not match or match in n]
    if not rows:
        from soe_sim.errors import Problem, SoeInputError

        raise SoeInputError(Problem("--match", "", "", match, "no knob name contains this text",
                                    "run `soe-sim knobs -s SCENARIO` for the full list"))
    if fmt == "json":
        click.echo(json.dumps([{"knob": n, "value": v} for n, v in rows], indent=2))
        return
    width = max((len(n) for n, _ in rows), default=10)
    click.echo(f"{'knob':<{width}}  value")
    for n, v in rows:
        click.echo(f"{n:<{width}}  {v}")


def register(cli: click.Group) -> None:
    """Add the designer commands to the ``soe-sim`` group."""
    for cmd in (compare_command, sensitivity_command, tune_command, knobs_command):
        cli.add_command(cmd)
