"""``soe-sim playtest``: a narrated game with map snapshots and a GIF.

Exit codes: 0 written; 1 no game matched ``--find``; 2 bad input (unknown scenario, bad seed, bad
policy, a ``--find`` condition not understood) — one line on stderr, nothing written.
"""
from __future__ import annotations

import sys

import click

from soe_sim.cliutil import SEED, games_range

__all__ = ["register", "playtest_command"]


@click.command("playtest")
@click.option("--scenario", "-s", required=True, help="Scenario id (soe-sim scenarios) or TOML path.")
@click.option("--seed", required=True, type=SEED,
              help="Batch seed: the game narrated is play_game(scenario, seed=(seed, game)).")
@click.option("--game", default=None, type=games_range(0),
              help="Game index within the batch seed [default 0]; --find picks it instead.")
@click.option("--polish", default="random", show_default=True, help="Polish policy (docs/policies.md).")
@click.option("--soviet", default="random", show_default=True, help="Soviet policy.")
@click.option("--polish-param", "polish_params", multiple=True, metavar="KEY=VALUE",
              help="Polish policy parameter override (repeatable).")
@click.option("--soviet-param", "soviet_params", multiple=True, metavar="KEY=VALUE",
              help="Soviet policy parameter override (repeatable).")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Output directory: game.md, events.csv, battles.csv, snapshots/, game.gif.")
@click.option("--find", "find", default=None, metavar="CONDITION",
              help="Narrate the first of --search-games simulated games matching CONDITION, e.g. "
                   "\"soviet wins and warsaw falls\", \"polish wins\", \"vp >= 5\", \"rounds <= 3\", "
                   "\"kiev held by polish\" (language: soe_sim.playtest.find).")
@click.option("--search-games", default=500, show_default=True, type=games_range(),
              help="Games simulated for --find.")
@click.option("--no-snapshots", is_flag=True, help="Do not draw the PNG map snapshots.")
@click.option("--no-gif", is_flag=True, help="Do not write the animated GIF.")
@click.option("--dpi", default=80, show_default=True, type=click.IntRange(30, 300), help="Snapshot resolution.")
@click.option("--fps", default=1.0, show_default=True, type=click.FloatRange(0.1, 30), help="GIF frames per second.")
@click.option("--threads", default=None, type=click.IntRange(min=1),
              help="Threads of the --find batch [default: every CPU]; results do not depend on it.")
@click.option("--ruleset", default="soe", show_default=True,
              help="Ruleset: soe, eats (The Eagle and the Star, docs/rules.md 'EatS variant') or a rules TOML path.")
@click.option("--quiet", "-q", is_flag=True, help="No progress messages.")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar of the --find search on stderr [default: when a terminal, unless --quiet].")
def playtest_command(scenario, seed, game, polish, soviet, polish_params, soviet_params, out_dir, find,
                     search_games, no_snapshots, no_gif, dpi, fps, threads, ruleset, quiet, progress) -> None:
    """Play one game and write a narrated report a human can follow.

    Per phase: cards played and why, orders placed, moves, Recon results, battles with both combat
    values, the exact odds before the draw and the result, retreats, supply losses, control and VP;
    plus a map snapshot per phase and an animated GIF. The same seed gives the same report.
    """
    from soe_sim.playtest import playtest
    from soe_sim.sim.cli import _with_params

    def echo(msg: str) -> None:
        if not quiet:
            click.echo(msg, err=True)

    pol = _with_params(polish, polish_params, "--polish-param")
    sov = _with_params(soviet, soviet_params, "--soviet-param")
    try:
        pt = playtest(scenario, seed, game=game, polish=pol, soviet=sov, out_dir=out_dir, find=find,
                      search_games=search_games, snapshots=not no_snapshots, gif=not no_gif, dpi=dpi, fps=fps,
                      threads=threads, echo=echo,
                      progress=(not quiet and sys.stderr.isatty()) if progress is None else progress, ruleset=ruleset)
    except LookupError as err:
        raise click.ClickException(str(err)) from None  # exit code 1
    res = pt.story.result
    winner = res.winner or ("nobody (aborted)" if res.outcome == "aborted" else "nobody (draw)")
    n_battles, n_files = len(pt.story.battles), len(pt.files)
    click.echo(f"{pt.out_dir}/game.md: {pt.story.setup.scenario.id} seed {pt.seed} game {pt.game}: winner {winner}, "
               f"VP {res.vp:+d}, {res.rounds} round{'s' if res.rounds != 1 else ''}, {n_battles} "
               f"battle{'s' if n_battles != 1 else ''}; {n_files} file{'s' if n_files != 1 else ''}")


def register(cli: click.Group) -> None:
    """Add ``playtest`` to the ``soe-sim`` group."""
    cli.add_command(playtest_command)
