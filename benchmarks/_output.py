"""What every benchmark script does with its result: JSON on stdout, and also to ``--out`` when given."""
from __future__ import annotations

import json
import os
import platform
from pathlib import Path

import click


def cpu_model(cpuinfo: str | Path = "/proc/cpuinfo") -> str:
    """The processor's model name (the first ``model name`` line of ``cpuinfo`` on Linux; else what
    :func:`platform.processor` says; ``"unknown"`` when neither tells)."""
    try:
        for line in Path(cpuinfo).read_text(errors="replace").splitlines():
            key, sep, value = line.partition(":")
            if sep and key.strip() == "model name" and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def host_info() -> dict:
    """The machine a figure was measured on: the same 2-core machine kind has come with different
    processors from one session to the next (benchmarks/README.md "Session 28": an AMD EPYC, then an
    Intel Xeon about a third slower), so every result names its processor and library versions."""
    import numba
    import numpy

    return {"cpu_model": cpu_model(), "cpus": os.cpu_count(), "machine": platform.machine(),
            "python": platform.python_version(), "numpy": numpy.__version__, "numba": numba.__version__}


def tree_child_result(tree: Path, stdout: str) -> dict:
    """The JSON a child process run on ``tree`` (``PYTHONPATH=tree``) printed last, checked to come from that
    tree: its ``file`` (``soe_sim.__file__``) must lie inside ``tree``, else a ``click.ClickException`` (the
    child imported another checkout, and its figures would be that checkout's)."""
    res = json.loads(stdout.strip().splitlines()[-1])
    if not Path(res["file"]).resolve().is_relative_to(Path(tree).resolve()):
        raise click.ClickException(f"{tree}: imported soe_sim from {res['file']}, not from the tree")
    return res


def emit_json(result: dict, out: str | None) -> None:
    """Print ``result`` as indented JSON, with a ``host`` entry (:func:`host_info`) unless it has one,
    and, when ``out`` is set, write the same text there."""
    if isinstance(result, dict) and "host" not in result:
        result = {**result, "host": host_info()}
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
