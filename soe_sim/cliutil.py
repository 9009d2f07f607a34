"""Output helpers shared by the odds commands of every combat system."""
from __future__ import annotations

import json
from typing import Callable

import click

from soe_sim._paths import check_creatable, os_error_text
from soe_sim.errors import Problem, SoeInputError

# Ceilings of the integer options (a larger value is a one-line click error, not an OverflowError or a run
# that fills the memory): a seed is stored as int64; the games of one command are held in memory (use
# `soe-sim sweep`, which writes its chunks to disk, for more); a Monte Carlo's battles likewise.
SEED_MAX = 2**63 - 1
GAMES_MAX = 1_000_000
MC_MAX = 10_000_000
MAX_STEPS_MAX = 1_000_000_000

SEED = click.IntRange(min=0, max=SEED_MAX)


def games_range(min: int = 1) -> click.IntRange:  # noqa: A002 (click's name)
    """``click.IntRange(min, GAMES_MAX)`` for a count of games."""
    return click.IntRange(min=min, max=GAMES_MAX)


def check_figure_path(path: str, option: str = "--plot") -> str:
    """``path`` when matplotlib can write an image there, else a one-line input error naming
    ``option``: an extension matplotlib does not write (or none — it would silently add ``.png``), an
    existing directory, or a parent that is a file or not writable (missing directories are created by
    :func:`write_figure`). Checked before the work starts."""
    import os

    from matplotlib.backend_bases import FigureCanvasBase

    text = str(path)
    kinds = FigureCanvasBase.get_supported_filetypes()
    suffix = os.path.splitext(text)[1].lower().lstrip(".")
    if os.path.isdir(text):
        raise SoeInputError(Problem(option, "", "", text, "is a directory", f"give a file name such as "
                                    f"{os.path.join(text, 'figure.png')}"))
    if suffix not in kinds:
        raise SoeInputError(Problem(option, "", "", text,
                                    f"unsupported image type {'.' + suffix if suffix else '(no extension)'!r}",
                                    "use one of " + ", ".join("." + k for k in sorted(kinds))))
    # missing directories are created, as for every other output (--out of simulate, report, sweep)
    check_creatable(os.path.dirname(os.path.abspath(text)), option, text)
    return text


def write_figure(fig, path: str, option: str = "--plot", **savefig) -> None:
    """Save a matplotlib figure; a bad path or format is a one-line input error."""
    import os

    check_figure_path(path, option)
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        fig.savefig(path, **savefig)
    except (OSError, ValueError) as err:
        raise SoeInputError(Problem(option, "", "", path, f"cannot write plot: {os_error_text(err)}")) from None


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
