"""Output helpers shared by the odds commands of every combat system."""
from __future__ import annotations

import json
from typing import Callable

import click

from soe_sim.errors import Problem, SoeInputError


def write_figure(fig, path: str) -> None:
    """Save a matplotlib figure; a bad path or format is a one-line input error."""
    try:
        fig.savefig(path)
    except (OSError, ValueError) as err:
        raise SoeInputError(Problem("--plot", "", "", path, f"cannot write plot: {err}")) from None


def emit_odds(result, fmt: str, plot_file: str | None, format_table: Callable[[object], str]) -> None:
    """Print an odds result as ``table`` / ``json`` / ``csv`` and write its plot if asked.

    ``result`` needs ``to_dict()``, ``summary`` (DataFrame) and ``plot()``.
    """
    if plot_file:
        write_figure(result.plot(), plot_file)
    if fmt == "json":
        click.echo(json.dumps(result.to_dict(), indent=2))
    elif fmt == "csv":
        click.echo(result.summary.to_csv(), nl=False)
    else:
        click.echo(format_table(result))
