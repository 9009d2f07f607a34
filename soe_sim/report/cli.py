"""Report commands of ``soe-sim``: ``report balance``.

:func:`register` adds the ``report`` group to the top-level click group (called by :mod:`soe_sim.cli`).
Input problems are :class:`~soe_sim.errors.SoeInputError` (one line each on stderr, exit code 2).
"""
from __future__ import annotations

import sys

import click

from soe_sim.cliutil import SEED, games_range

__all__ = ["register", "report_group", "balance_command"]


@click.group("report")
def report_group() -> None:
    """Self-contained HTML reports (plots embedded) with their CSV / parquet data."""


@report_group.command("balance")
@click.option("--scenario", "-s", default="kiev-offensive", show_default=True,
              help="Scenario id (soe-sim scenarios) or TOML path.")
@click.option("--games", "-n", default=1000, show_default=True, type=games_range(),
              help="Games of the headline pairing (and of every pairing unless --matrix-games).")
@click.option("--matrix-games", default=None, type=games_range(),
              help="Games of each other pairing of the policy matrix [default: --games].")
@click.option("--policies", "-p", default=None,
              help="Comma-separated policies of the matrix [default: every policy in the registry].")
@click.option("--headline", default=None,
              help="Policy of the headline pairing (both sides) [default: balanced if played, else the first].")
@click.option("--sample-games", default=None, type=games_range(0),
              help="Headline games replayed from their event logs (battle sizes, odds bands, card use) "
                   "[default: min(games, 200)].")
@click.option("--seed", default=0, show_default=True, type=SEED,
              help="Batch seed; game i of a pairing is play_game(scenario, seed=(seed, i)).")
@click.option("--threads", default=None, type=click.IntRange(min=1),
              help="Threads [default: every CPU]; results do not depend on it.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Output directory: index.html and the CSV / parquet files.")
@click.option("--ruleset", default=None,
              help="Ruleset: soe [default], eats (The Eagle and the Star, docs/rules.md 'EatS variant') or a rules "
                   "TOML path; every game of the report is played under it.")
@click.option("--progress/--no-progress", default=None, help="Progress bars on stderr [default: when a terminal].")
def balance_command(scenario, games, matrix_games, policies, headline, sample_games, seed, threads, out_dir,
                    ruleset, progress) -> None:
    """Balance report: win rates with 95 % Wilson intervals, the policy × policy matrix, balance metrics
    (balance, side advantage, drawishness, length, lead changes, decisiveness), VP distribution and fan
    chart, key cities held at the end on the map, battles, eliminations by cause and card use.

    Writes OUT/index.html (self-contained) and the data behind it.
    """
    from soe_sim.report import _plural, balance_report

    if progress is None:
        progress = sys.stderr.isatty()
    rep = balance_report(scenario, games=games, policies=policies, seed=seed, out_dir=out_dir, threads=threads,
                         progress=progress, matrix_games=matrix_games, sample_games=sample_games, headline=headline,
                         ruleset=ruleset)
    for line in rep.summary:
        click.echo(line)
    m = rep.meta
    click.echo(f"balance report: {_plural(m['total_games'], 'game')} ({_plural(m['pairs'], 'pairing')}), event "
               f"sample {_plural(m['sample_games'], 'game')}, {m['simulation_seconds'] + m['sample_seconds']:.0f} s -> "
               f"{rep.files.get('index.html', out_dir)}")


def register(cli: click.Group) -> None:
    """Add the ``report`` group to the ``soe-sim`` group."""
    cli.add_command(report_group)
