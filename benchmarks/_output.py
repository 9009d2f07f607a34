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
