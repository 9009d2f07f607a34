"""Which source lines of the package miss the caches: callgrind's cache model, line by line.

Run (a checkout of its own is not needed: the debug build goes into a numba cache of its own)::

    .venv/bin/python benchmarks/cache_lines.py --tree . --games 50 --out /tmp/cache_lines.json

``instructions.py --cache-sim`` counts a game's simulated cache misses (a 32 KiB first level and a 512 KiB last
level by default: one core of the EPYC hosts of benchmarks/README.md); this script says where they happen. It
compiles ``--tree`` with ``NUMBA_DEBUGINFO=1`` (DWARF line tables; ``NUMBA_BOUNDSCHECK=0``, which debug info
would turn on) for a fixed processor (``--cpu``, as instructions.py) into a numba cache of its own under
``--cache-root`` (a cold debug compile took about 30 minutes in session 37, beside other work), then runs
``--games`` games under ``valgrind --tool=callgrind --cache-sim=yes --dump-instr=yes`` with instrumentation only
around the games. Inside that
process, after the warm-up, it writes the ELF objects numba loaded and where each sits
(``profile_games.dump_objects``); each instruction address of callgrind's output is then mapped to the object
that holds it and, with ``addr2line``, to the file and line of its innermost inlined frame (as
``line_samples.py`` does for perf samples).

Output: JSON with the totals per game and, for each of four events (:data:`EVENT_SUMS`: the first-level data
misses ``D1mr``+``D1mw`` as ``d1``, the last-level data misses ``DLmr``+``DLmw`` as ``ll``, the last-level
instruction misses ``ILmr`` as ``il`` and the instructions ``Ir`` as ``ir``), the ``--top`` source lines and
package functions with their share of that event over the games. A debug build is not the release build (LLVM
inlines less; session 26 measured it at 93-97 % of the release speed), and the cache model is LRU with no
prefetcher: read it for where the misses come from, and measure a change with ``instructions.py --cache-sim`` on
release builds.
Needs valgrind, gcc (the helper of instructions.py), nm and addr2line (binutils).
"""
from __future__ import annotations

import bisect
import collections
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import click

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _output import emit_json, game_options  # noqa: E402
from instructions import build_helper, cache_geometry, runner_source  # noqa: E402
from line_samples import _lines_of  # noqa: E402
from stack_traffic import short_name  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

# the debug build's objects: kept from the first kernel on (before soe_sim is imported), dumped with their
# addresses after the warm-up, inside the process callgrind runs (its addresses are not a native run's)
RUNNER = runner_source(
    setup="sys.path.insert(0, sys.argv[8])\nfrom profile_games import dump_objects, keep_object_code\n"
          "keep_object_code()",
    before_measure='extra["objects"] = dump_objects(sys.argv[9])')

# the events reported, each a sum of callgrind events
EVENT_SUMS = {"d1": ("D1mr", "D1mw"), "ll": ("DLmr", "DLmw"), "il": ("ILmr",), "ir": ("Ir",)}


def _position(token: str, last: int) -> int:
    """A callgrind position (absolute, ``+n`` / ``-n`` relative to the last one, or ``*`` the same)."""
    if token == "*":
        return last
    if token[0] in "+-":
        return last + int(token, 0)
    return int(token, 0)


def instruction_costs(text: str) -> tuple[list[str], dict[int, list[int]]]:
    """The events of a callgrind output file written with ``--dump-instr=yes`` (``positions: instr line``) and
    the self cost of each instruction address of code outside any file (``ob=`` not a path: numba's JIT code;
    a file's addresses are offsets in it). The lines after ``calls=`` are inclusive costs of a call: skipped.
    Name compression (``ob=(1) name`` or ``cob=(1) name``, later ``ob=(1)``) and relative positions are understood."""
    events: list[str] = []
    costs: dict[int, list[int]] = collections.defaultdict(lambda: [0] * len(events))
    n_pos = 1
    last = [0, 0]
    skip_next = False
    objects: dict[str, str] = {}
    in_jit = True
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        if line.startswith("events:"):
            events = line.split()[1:]
            continue
        if line.startswith("positions:"):
            n_pos = len(line.split()) - 1
            continue
        if line.startswith("ob=") or line.startswith("cob="):  # one table of names for both
            ref = line.split("=", 1)[1].strip()
            m = re.match(r"^(\(\d+\))\s*(.*)$", ref)
            if m:
                if m.group(2):
                    objects[m.group(1)] = m.group(2)
                ref = objects.get(m.group(1), "")
            if line[0] == "o":
                in_jit = not ref.startswith("/")
            continue
        if line.startswith("calls="):
            skip_next = True
            continue
        c = line[0]
        if not (c.isdigit() or c in "+-*"):
            continue  # fn=, fl=, cob=, totals: ...
        parts = line.split()
        pos = [_position(parts[i], last[i]) for i in range(min(n_pos, 2))]
        last[:len(pos)] = pos
        if skip_next:
            skip_next = False
            continue
        if not in_jit:
            continue
        row = costs[pos[0]]
        for k, v in enumerate(parts[n_pos:n_pos + len(events)]):
            row[k] += int(v)
    return events, dict(costs)


def summarize(events, costs, meta, objects_dir: Path, games: int, top: int) -> dict:
    """Per event of :data:`EVENT_SUMS`: the ``top`` source lines and package functions by their share."""
    index = {name: i for i, name in enumerate(events)}
    missing = [e for names in EVENT_SUMS.values() for e in names if e not in index]
    if missing:
        raise click.ClickException(f"callgrind's output has no {', '.join(missing)} event (--cache-sim=yes)")
    spans = sorted((base + off, size, name, i, off) for i, base, functions in meta for off, size, name in functions
                   if "soe_sim" in name)
    starts = [s[0] for s in spans]
    totals = {key: sum(sum(row[index[e]] for e in names) for row in costs.values())
              for key, names in EVENT_SUMS.items()}
    per_object = collections.defaultdict(dict)  # object -> offset -> row
    per_function = {key: collections.Counter() for key in EVENT_SUMS}
    for ip, row in costs.items():
        k = bisect.bisect_right(starts, ip) - 1
        if k < 0 or ip >= spans[k][0] + spans[k][1]:
            continue
        start, size, name, i, off = spans[k]
        per_object[i][ip - start + off] = row
        for key, names in EVENT_SUMS.items():
            per_function[key][short_name(name)] += sum(row[index[e]] for e in names)
    per_line = {key: collections.Counter() for key in EVENT_SUMS}
    for i, rows in per_object.items():
        found = _lines_of(Path(objects_dir, f"{i}.o"), sorted(rows))
        for offset, row in rows.items():
            where = found.get(offset, "?")
            marker = where.find("soe_sim/")
            where = where[marker:] if marker >= 0 else where
            for key, names in EVENT_SUMS.items():
                per_line[key][where] += sum(row[index[e]] for e in names)
    out = {"per_game": {key: totals[key] / games for key in EVENT_SUMS}}
    for key in EVENT_SUMS:
        t = totals[key] or 1
        out[key] = {
            "in_package": round(sum(per_function[key].values()) / t, 4),
            "lines": [{"line": w, "share": round(v / t, 4), "per_game": round(v / games, 1)}
                      for w, v in per_line[key].most_common(top)],
            "functions": [{"function": w, "share": round(v / t, 4), "per_game": round(v / games, 1)}
                          for w, v in per_function[key].most_common(top)],
        }
    return out


@click.command()
@click.option("--tree", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="The checkout to measure (default: this repository).")
@game_options(games=50, seed=1)
@click.option("--cpu", default="haswell", show_default=True, help="NUMBA_CPU_NAME of the debug build.")
@click.option("--d1", default="32768,8,64", show_default=True, help="First-level cache: SIZE,ASSOC,LINE in bytes.")
@click.option("--ll", default="524288,8,64", show_default=True, help="Last-level cache: SIZE,ASSOC,LINE in bytes.")
@click.option("--cache-root", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where the debug build's numba cache lives (default: <tmp>/soe_sim-cache-lines).")
@click.option("--top", default=30, show_default=True, help="How many lines and functions to list per event.")
@click.option("--out", default=None, help="Also write the JSON here.")
def main(tree, scenario, polish, soviet, games, seed, cpu, d1, ll, cache_root, top, out):
    """Simulated cache misses of a debug build, by source line."""
    d1 = cache_geometry(d1, "--d1")
    ll = cache_geometry(ll, "--ll")
    tree = (tree or ROOT).resolve()
    root = Path(cache_root or Path(tempfile.gettempdir()) / "soe_sim-cache-lines")
    root.mkdir(parents=True, exist_ok=True)
    helper = build_helper(root)
    key = hashlib.sha256(str(tree).encode()).hexdigest()[:12]
    env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_CACHE_DIR=str(root / f"cache-{key}-{cpu}-debug"),
               NUMBA_CPU_NAME=cpu, NUMBA_CPU_FEATURES="", NUMBA_DEBUGINFO="1", NUMBA_BOUNDSCHECK="0",
               PYTHONHASHSEED="0")
    env.pop("NUMBA_DISABLE_JIT", None)
    bench = str(Path(__file__).resolve().parent)
    with tempfile.TemporaryDirectory(dir=root) as work:
        objects = Path(work, "objects")
        args = [str(helper), scenario, polish, soviet, str(games), str(seed)]
        click.echo(f"{tree}: compiling or loading the debug build for {cpu} (a cold compile takes 15-30 min)...",
                   err=True)
        run = subprocess.run([sys.executable, "-c", RUNNER, *args, "warm", bench, str(objects)], cwd=tree, env=env,
                             capture_output=True, text=True)
        if run.returncode != 0:
            raise click.ClickException(f"{tree}: the warm-up failed:\n{run.stderr[-2000:]}")
        cg_out = Path(work, "callgrind.out")
        click.echo(f"{tree}: {games} games under callgrind with its cache model...", err=True)
        run = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", "--cache-sim=yes",
                              "--dump-instr=yes", f"--I1={d1}", f"--D1={d1}", f"--LL={ll}",
                              f"--callgrind-out-file={cg_out}", sys.executable, "-c", RUNNER, *args, "measure",
                              bench, str(objects)], cwd=tree, env=env, capture_output=True, text=True)
        if run.returncode != 0:
            raise click.ClickException(f"{tree}: the run under valgrind failed:\n{run.stderr[-2000:]}")
        result = json.loads(run.stdout.strip().splitlines()[-1])
        if not result["file"].startswith(str(tree)):
            raise click.ClickException(f"{tree}: the child imported soe_sim from {result['file']}, not from the tree")
        dumps = sorted(Path(work).glob("callgrind.out*"))
        texts = [p.read_text(errors="replace") for p in dumps]
        if not texts:
            raise click.ClickException(f"{tree}: callgrind wrote no output file")
        # the dump at the end of the games (the largest), not the one at exit
        events, costs = max((instruction_costs(t) for t in texts), key=lambda ec: len(ec[1]))
        meta = json.loads(Path(objects, "objects.json").read_text())
        summary = summarize(events, costs, meta, objects, games, top)
    emit_json({"benchmark": "cache_lines", "tree": str(tree), "scenario": scenario, "polish": polish,
               "soviet": soviet, "games": games, "seed": seed, "cpu": cpu, "d1": d1, "ll": ll, **summary}, out)


if __name__ == "__main__":
    main()
