"""Which source lines of the package a profile's samples fall on: a line-level view inside the large kernels.

The release build inlines most kernels into a few large ones (the batch kernel holds a third of a game's
samples), and numba's code carries no line table, so ``perf report`` stops at the function. A checkout
compiled with ``NUMBA_DEBUGINFO=1`` carries DWARF line tables in its objects; this script maps each sample
to the file and line of the instruction it hit (``addr2line`` on the object that holds it).

Run, in a separate checkout (its own numba cache: the debug build compiles for about 12 minutes)::

    git worktree add /tmp/wt_dbg HEAD && cd /tmp/wt_dbg
    export NUMBA_DEBUGINFO=1 NUMBA_BOUNDSCHECK=0 PYTHONPATH=/tmp/wt_dbg
    /work/main/.venv/bin/python benchmarks/profile_games.py --games 8000 --ready /tmp/ready \\
        --dump-objects /tmp/objs &
    while [ ! -s /tmp/ready ]; do sleep 1; done
    perf record -F 2999 -p "$(cat /tmp/ready)" -o /tmp/perf.data -- sleep 12
    /work/main/.venv/bin/python benchmarks/line_samples.py --perf-data /tmp/perf.data --objects /tmp/objs

``NUMBA_BOUNDSCHECK=0`` is needed because numba turns bounds checks on with debug info. The debug build is
not the release build: it ran at 93–97 % of the release speed (session 26: 699 games/s against 717–755) and
LLVM inlined less (the single-call kernels stay functions of their own, so ``perf report`` names them), so read
it for the lines inside a kernel, not for the release build's split between kernels; it overstates the cost of
calls (two changes it pointed to measured 0.996 in the release build).

Output: JSON with ``samples`` (all of the process), ``selected`` (those in package functions whose name
contains ``--function``, every package function by default), ``lines`` (the hottest source lines, each with
its share of all samples) and ``functions`` (the selected functions by share). Needs ``perf`` and
``addr2line`` (binutils).
"""
from __future__ import annotations

import bisect
import collections
import json
import subprocess
from pathlib import Path

import click

from _output import emit_json
from stack_traffic import short_name


def _sample_addresses(perf_data: Path) -> collections.Counter:
    out = subprocess.run(["perf", "script", "-G", "-i", str(perf_data), "-F", "ip"], capture_output=True, text=True,
                         check=True).stdout
    return collections.Counter(int(word, 16) for word in out.split())


def _lines_of(obj: Path, offsets: list[int]) -> dict[int, str]:
    """``file:line`` of each offset of the object's code section (the innermost inlined frame)."""
    text = subprocess.run(["addr2line", "-a", "-e", str(obj)] + [hex(o) for o in offsets], capture_output=True,
                          text=True, check=True).stdout.splitlines()
    found = {}
    for address, where in zip(text[0::2], text[1::2]):
        where = where.split(" (")[0]
        found[int(address, 16)] = where
    return found


@click.command()
@click.option("--perf-data", "perf_data", required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--objects", "objects", required=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The directory profile_games.py --dump-objects wrote.")
@click.option("--function", "function", default="", help="Only functions whose (mangled) name contains this.")
@click.option("--top", default=40, show_default=True, help="How many lines and functions to list.")
@click.option("--out", default=None, help="Also write the JSON here.")
def main(perf_data, objects, function, top, out):
    meta = json.loads(Path(objects, "objects.json").read_text())
    spans = sorted((base + off, size, name, i, off) for i, base, functions in meta for off, size, name in functions
                   if "soe_sim" in name)
    starts = [s[0] for s in spans]
    hits = _sample_addresses(perf_data)
    total = sum(hits.values())
    per_object = collections.defaultdict(collections.Counter)
    per_function = collections.Counter()
    for ip, count in hits.items():
        k = bisect.bisect_right(starts, ip) - 1
        if k < 0:
            continue
        start, size, name, i, off = spans[k]
        if ip >= start + size or function not in name:
            continue
        per_object[i][ip - start + off] += count
        per_function[short_name(name)] += count
    lines = collections.Counter()
    for i, counts in per_object.items():
        found = _lines_of(Path(objects, f"{i}.o"), sorted(counts))
        for offset, count in counts.items():
            where = found.get(offset, "?")
            marker = where.find("soe_sim/")
            lines[where[marker:] if marker >= 0 else where] += count
    selected = sum(per_function.values())
    emit_json({
        "samples": total,
        "selected": selected,
        "selected_share": round(selected / total, 4) if total else 0.0,
        "lines": [{"line": where, "share": round(count / total, 4)} for where, count in lines.most_common(top)],
        "functions": [{"function": name, "share": round(count / total, 4)}
                      for name, count in per_function.most_common(top)],
    }, out)


if __name__ == "__main__":
    main()
