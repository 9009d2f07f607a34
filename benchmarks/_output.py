"""What every benchmark script does with its result: JSON on stdout, and also to ``--out`` when given."""
from __future__ import annotations

import json
from pathlib import Path

import click


def emit_json(result: dict, out: str | None) -> None:
    """Print ``result`` as indented JSON and, when ``out`` is set, write the same text there."""
    text = json.dumps(result, indent=2)
    click.echo(text)
    if out:
        Path(out).write_text(text + "\n")


def game_options(games: int, seed: int, policy: str = "balanced"):
    """The ``--scenario``, ``--polish``, ``--soviet``, ``--games`` and ``--seed`` options of a script that plays
    games (defaults: Kiev Offensive, ``policy`` on both sides, ``games`` games from ``seed``)."""
    options = (
        click.option("--scenario", default="kiev-offensive", show_default=True),
        click.option("--polish", default=policy, show_default=True),
        click.option("--soviet", default=policy, show_default=True),
        click.option("--games", default=games, show_default=True, type=click.IntRange(1)),
        click.option("--seed", default=seed, show_default=True),
    )

    def decorate(f):
        for option in reversed(options):
            f = option(f)
        return f

    return decorate
