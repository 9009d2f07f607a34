"""Data commands of ``soe-sim``: ``scenarios``, ``validate`` and ``map``.

:func:`register` adds them to the top-level click group (called by :mod:`soe_sim.cli`). Input
problems are raised as :class:`~soe_sim.errors.SoeInputError`; ``soe_sim.cli.main`` prints one
per line on stderr and exits with code 2.
"""
from __future__ import annotations

import json

import click

__all__ = ["register", "scenarios_command", "validate_command", "map_command"]


@click.command("scenarios")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="Output format; json is a list of {id, name, rounds}.")
def scenarios_command(fmt: str) -> None:
    """List the built-in scenarios."""
    from soe_sim.data.scenario import list_scenarios

    df = list_scenarios()
    if fmt == "json":
        click.echo(json.dumps([{"id": r.id, "name": r.name, "rounds": None if r.rounds is None else int(r.rounds)}
                               for r in df.itertuples()], indent=2))
        return
    if df.empty:
        click.echo("no scenarios")
        return
    w = max(len("id"), *(len(s) for s in df["id"]))
    n = max(len("name"), *(len(s) for s in df["name"]))
    click.echo(f"{'id':<{w}}  {'name':<{n}}  rounds")
    for r in df.itertuples():
        click.echo(f"{r.id:<{w}}  {r.name:<{n}}  {r.rounds}")


@click.command("validate")
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
def validate_command(paths: tuple[str, ...]) -> None:
    """Check data files; with no PATH, all built-in data.

    A PATH may be a data directory (holding map/, blocks/, cards/, scenarios/ and rules/), a scenario
    TOML, a ruleset (rules/*.toml), a design variant (variants/*.toml) or a single CSV (areas.csv,
    links.csv, blocks.csv, polish.csv, soviet.csv). Every problem is printed, one per line; the exit
    code is 2 when there is any.
    """
    from soe_sim.data.validate import validate

    for line in validate(list(paths)):
        click.echo(f"ok: {line}")


@click.command("map")
@click.option("--scenario", "-s", default=None, help="Scenario id or TOML path: draw its set-up.")
@click.option("-o", "--output", default="map.png", show_default=True, type=click.Path(dir_okay=False),
              help="Image file to write (format from the extension).")
@click.option("--dpi", default=110, show_default=True, type=click.IntRange(min=10, max=1200),
              help="Resolution of raster images (dots per inch).")
def map_command(scenario: str | None, output: str, dpi: int) -> None:
    """Draw the theatre map (optionally with a scenario's set-up) to an image file."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from soe_sim.cliutil import check_figure_path, write_figure
    from soe_sim.data.map import load_map
    from soe_sim.data.plot import plot_map
    from soe_sim.data.scenario import _resolve, data_root_of, load_scenario
    from soe_sim.plotting import use_style

    check_figure_path(output, "--output")

    sc = None
    if scenario:
        path = _resolve(scenario)
        game_map = load_map(data_root_of(path))
        sc = load_scenario(path)
    else:
        game_map = load_map()
    with use_style():
        ax = plot_map(game_map, scenario=sc)
        try:
            write_figure(ax.figure, output, "--output", dpi=dpi)
        finally:
            plt.close(ax.figure)
    click.echo(f"wrote {output}")


def register(cli: click.Group) -> None:
    """Add the data commands to the top-level ``soe-sim`` group."""
    for cmd in (scenarios_command, validate_command, map_command):
        cli.add_command(cmd)
