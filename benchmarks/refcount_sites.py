"""numba's reference counting and allocations per game, by the compiled function that calls them (callgrind).

Run::

    .venv/bin/python benchmarks/refcount_sites.py --tree /tmp/wt_old --tree . --games 50

A kernel compiled with reference counting (``_nrt`` not ``False``) takes a reference to every array of every
named tuple it receives (``NRT_incref``) and drops it on the way out (``NRT_decref``), unless numba's pruning
pass proves the pair redundant — which it does not in a kernel that also allocates (docs/engine-design.md
"Session 39"). A sampled profile shows the time in ``NRT_incref`` / ``NRT_decref`` but not who calls them
(no branch records on this VM). This script counts every call exactly: it plays ``--games`` games of each
``--tree`` under ``valgrind --tool=callgrind`` (the builds and the instrumented region of
``benchmarks/instructions.py``: one thread, a fixed ``--cpu``), writes a perf map of numba's JIT code inside
the valgrind process after the warm-up (``profile_games.write_perf_map``: the kernels are unnamed JIT code to
valgrind), and reads the call edges of callgrind's output: per game, the calls of ``NRT_incref``,
``NRT_decref`` and ``NRT_MemInfo_alloc_aligned`` (with the instructions they run), and the callers that make
most of them. LLVM inlines most kernels into their callers, so a caller is the function holding the call
after inlining (the batch kernel for the phase kernels called from one place).
"""
from __future__ import annotations

import bisect
import collections
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import click

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import instructions  # noqa: E402  (benchmarks/instructions.py: the builds, the helper, the runner)
from _output import emit_json, game_options, tree_child_result  # noqa: E402
from stack_traffic import short_name  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
COUNTED = ("NRT_incref", "NRT_decref", "NRT_MemInfo_alloc_aligned")

_NAME = re.compile(r"\((\d+)\)(?:\s+(.*))?$")


def perf_map_lookup(text: str):
    """A function ``address -> name`` over a perf map's text (``ADDR SIZE NAME`` per line, hex); addresses
    outside every entry give ``None``."""
    rows = []
    for line in text.splitlines():
        parts = line.split(maxsplit=2)
        if len(parts) == 3:
            rows.append((int(parts[0], 16), int(parts[1], 16), parts[2].strip()))
    rows.sort()
    starts = [r[0] for r in rows]

    def name_of(address: int) -> str | None:
        i = bisect.bisect_right(starts, address) - 1
        if i >= 0 and address < rows[i][0] + rows[i][1]:
            return rows[i][2]
        return None

    return name_of


def call_edges(text: str, name_of) -> collections.Counter:
    """``(caller, callee) -> calls`` and ``("", callee) -> inclusive instructions`` from a callgrind output
    file's text (name compression ``(id) name`` resolved; a function callgrind names by its address —
    ``0x...``, JIT code — is named by ``name_of`` where it can be)."""
    names: dict[str, str] = {}

    def resolve(token: str) -> str:
        m = _NAME.match(token.strip())
        raw = token.strip()
        if m:
            if m.group(2):
                names[m.group(1)] = m.group(2).strip()
            raw = names.get(m.group(1), raw)
        if raw.startswith("0x"):
            address = int(raw.split("'")[0], 16)
            found = name_of(address)
            return short_name(found) if found else raw
        return raw

    edges: collections.Counter = collections.Counter()
    fn = cfn = None
    pending = None
    for line in text.splitlines():
        if pending is not None:
            parts = line.split()
            if len(parts) > 1 and parts[1].isdigit():
                edges[("", pending)] += int(parts[1])
            pending = None
            continue
        if line.startswith("fn="):
            fn = resolve(line[3:])
        elif line.startswith("cfn="):
            cfn = resolve(line[4:])
        elif line.startswith("calls=") and cfn is not None:
            edges[(fn, cfn)] += int(line[6:].split()[0])
            pending = cfn
    return edges


def summarize(edges: collections.Counter, games: int, top: int) -> dict:
    """Per game: the calls and instructions of each counted function, and the ``top`` callers of each."""
    out = {}
    for callee in COUNTED:
        calls = {caller: n for (caller, c), n in edges.items() if c == callee and caller}
        total = sum(calls.values())
        callers = sorted(calls.items(), key=lambda kv: -kv[1])[:top]
        out[callee] = {"calls_per_game": round(total / games, 1),
                       "instructions_per_game": round(edges[("", callee)] / games, 1),
                       "callers": [{"function": f, "calls_per_game": round(n / games, 1)} for f, n in callers]}
    return out


def run_named(tree: Path, root: Path, helper: Path, cpu: str, prefix: str, scenario, polish, soviet, games, seed,
              flags=()):
    """Play ``games`` games of ``tree`` under callgrind (with the extra valgrind ``flags``) after a warm-up that
    writes a perf map of numba's JIT code inside the valgrind process. Returns ``(result, name_of, texts)``: the
    child's result row, an ``address -> name`` lookup over that map and the text of each callgrind output file
    (the files, named ``<prefix>-<tree key>-<pid>.*`` under ``root``, are removed)."""
    stem = f"{prefix}-{instructions.tree_key(tree)}-{os.getpid()}"
    perf_map = root / f"{stem}.map"
    here = Path(__file__).resolve().parent
    setup = (f"sys.path.insert(0, {str(here)!r}); from profile_games import keep_object_code, write_perf_map; "
             "keep_object_code()")
    runner = instructions.runner_source(setup, f"extra['map'] = write_perf_map({str(perf_map)!r})[0]")
    args = [str(helper), scenario, polish, soviet, str(games), str(seed)]
    env = instructions.warm_tree(tree, root, cpu, runner, args)
    cg_out = root / f"{stem}.out"
    click.echo(f"{tree}: {games} games under callgrind...", err=True)
    out = subprocess.run(["valgrind", "--tool=callgrind", *flags, "--instr-atstart=no",
                          f"--callgrind-out-file={cg_out}", sys.executable, "-c", runner, *args, "measure"],
                         cwd=tree, env=env, capture_output=True, text=True)
    try:
        if out.returncode != 0:
            raise click.ClickException(f"{tree}: the run under valgrind failed:\n{out.stderr[-2000:]}")
        res = tree_child_result(tree, out.stdout)
        name_of = perf_map_lookup(perf_map.read_text())
        texts = [p.read_text(errors="replace") for p in sorted(root.glob(f"{stem}.out*"))]
    finally:
        for p in root.glob(f"{stem}.*"):
            p.unlink()
    return res, name_of, texts


def measure_tree(tree: Path, root: Path, helper: Path, cpu: str, scenario, polish, soviet, games, seed, top):
    res, name_of, texts = run_named(tree, root, helper, cpu, "refcount", scenario, polish, soviet, games, seed)
    total = max(instructions.callgrind_total(t) for t in texts)
    edges: collections.Counter = collections.Counter()
    for t in texts:
        edges.update(call_edges(t, name_of))
    fig = {"tree": str(tree), "instructions_per_game": total / games, "vp_sum": res["vp_sum"],
           "steps_sum": res["steps_sum"], **summarize(edges, games, top)}
    if fig["NRT_incref"]["calls_per_game"] == 0 and fig["NRT_decref"]["calls_per_game"] == 0:
        click.echo(f"{tree}: no reference counting found (were the JIT functions named?)", err=True)
    return fig


@click.command()
@click.option("--tree", "trees", multiple=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A checkout to measure (repeatable). Default: this repository.")
@game_options(games=50, seed=1)
@click.option("--cpu", default="haswell", show_default=True, help="NUMBA_CPU_NAME of the builds (instructions.py).")
@click.option("--cache-root", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where the builds' numba caches live (default: instructions.py's, <tmp>/soe_sim-instructions).")
@click.option("--top", default=15, show_default=True, type=click.IntRange(1), help="Callers listed per function.")
@click.option("--out", default=None, help="Also write the JSON here.")
def main(trees, scenario, polish, soviet, games, seed, cpu, cache_root, top, out):
    """Reference counting and allocations per game, by caller, under callgrind."""
    root = Path(cache_root or Path(tempfile.gettempdir()) / "soe_sim-instructions")
    root.mkdir(parents=True, exist_ok=True)
    helper = instructions.build_helper(root)
    results = [measure_tree(Path(t), root, helper, cpu, scenario, polish, soviet, games, seed, top)
               for t in (trees or (ROOT,))]
    emit_json({"benchmark": "refcount_sites", "scenario": scenario, "polish": polish, "soviet": soviet,
               "games": games, "seed": seed, "cpu": cpu, "trees": results}, out)


if __name__ == "__main__":
    main()
