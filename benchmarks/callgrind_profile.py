"""Exact self cost per compiled function (callgrind): instructions and, with ``--branch-sim``, simulated mispredictions.

Run::

    .venv/bin/python benchmarks/callgrind_profile.py --tree /work/main --tree /tmp/wt_x --games 50 --branch-sim

A sampled profile (``profile_games.py`` + ``perf``) moves by several percent from run to run on a shared VM and
cannot count branch mispredictions where the VM has no hardware counters. This script plays ``--games`` games of
each ``--tree`` under ``valgrind --tool=callgrind`` (the builds and the instrumented region of
``benchmarks/instructions.py``: one thread, a fixed ``--cpu``), names numba's JIT code from a perf map written
inside the valgrind process after the warm-up (as ``refcount_sites.py``), and sums each function's *self* cost:
the cost lines of its ``fn=`` blocks, less the inclusive costs that follow its ``calls=`` lines. Per game and
per function: instructions (``Ir``) and, with ``--branch-sim``, conditional branches (``Bc``) and their
mispredictions under callgrind's predictor (``Bcm``: an array of 2-bit counters, far simpler than a modern
processor's; read its changes, not its level). LLVM inlines most kernels into their callers, so a function
here is one after inlining (the batch kernel holds the phase kernels called from one place).

Output: JSON with, per tree, the totals per game and the ``--top`` functions by instructions (and by
mispredictions with ``--branch-sim``), each with its share of the tree's total.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import click

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import instructions  # noqa: E402  (benchmarks/instructions.py: the builds, the helper, the runner)
from _output import emit_json, game_options  # noqa: E402
from refcount_sites import _NAME, run_named  # noqa: E402
from stack_traffic import short_name  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
EVENTS = ("Ir", "Bc", "Bcm")


def self_costs(text: str, name_of) -> tuple[list[str], dict[str, list[int]]]:
    """``(events, {function: [self cost per event]})`` from a callgrind output file's text: name compression
    ``(id) name`` resolved (a name may first appear on a ``cfn=`` line), a function callgrind names by its
    address (``0x...``, JIT code) named by ``name_of`` where it can be, and the cost line after each
    ``calls=`` line (the callee's inclusive cost) left out."""
    names: dict[str, str] = {}

    def resolve(token: str) -> str:
        raw = token.strip()
        m = _NAME.match(raw)
        if m:
            if m.group(2):
                names[m.group(1)] = m.group(2).strip()
            raw = names.get(m.group(1), raw)
        if raw.startswith("0x"):
            found = name_of(int(raw.split("'")[0], 16))
            return short_name(found) if found else raw
        return raw

    events: list[str] = []
    cost: dict[str, list[int]] = {}
    fn = None
    after_call = False
    for line in text.splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("fn="):
            fn = resolve(line[3:])
        elif line.startswith("cfn="):
            resolve(line[4:])  # only to learn a compressed name
        elif line.startswith("calls="):
            after_call = True
        elif line[:1].isdigit() or line[:1] in "+-*":
            if after_call:
                after_call = False
                continue
            if fn is None:
                continue
            row = cost.setdefault(fn, [0] * len(events))
            for i, value in enumerate(line.split()[1:len(events) + 1]):
                row[i] += int(value)
    return events, cost


def summarize(events: list[str], cost: dict[str, list[int]], games: int, top: int) -> dict:
    """Per game: the totals of ``EVENTS`` present and the ``top`` functions by ``Ir`` (and by ``Bcm``)."""
    present = [e for e in EVENTS if e in events]
    index = {e: events.index(e) for e in present}
    totals = {e: sum(row[index[e]] for row in cost.values()) for e in present}

    def listing(by: str) -> list[dict]:
        rows = sorted(cost.items(), key=lambda kv: -kv[1][index[by]])[:top]
        return [{"function": name, **{f"{e}_per_game": round(row[index[e]] / games, 1) for e in present},
                 **{f"{e}_share": round(row[index[e]] / totals[e], 4) if totals[e] else 0.0 for e in present}}
                for name, row in rows]

    out = {"totals_per_game": {e: round(totals[e] / games, 1) for e in present}, "by_instructions": listing("Ir")}
    if "Bcm" in index:
        out["by_mispredictions"] = listing("Bcm")
    return out


def measure_tree(tree: Path, root: Path, helper: Path, cpu: str, scenario, polish, soviet, games, seed, top,
                 branch_sim):
    flags = ["--branch-sim=yes"] if branch_sim else []
    res, name_of, texts = run_named(tree, root, helper, cpu, "cgprofile", scenario, polish, soviet, games, seed, flags)
    events: list[str] = []
    cost: dict[str, list[int]] = {}
    for text in texts:
        events, part = self_costs(text, name_of)
        for name, row in part.items():
            acc = cost.get(name) or [0] * len(row)
            cost[name] = [a + b for a, b in zip(acc, row)]
    return {"tree": str(tree), "vp_sum": res["vp_sum"], "steps_sum": res["steps_sum"],
            **summarize(events, cost, games, top)}


@click.command()
@click.option("--tree", "trees", multiple=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A checkout to measure (repeatable). Default: this repository.")
@game_options(games=50, seed=1)
@click.option("--cpu", default="haswell", show_default=True, help="NUMBA_CPU_NAME of the builds (instructions.py).")
@click.option("--cache-root", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where the builds' numba caches live (default: instructions.py's, <tmp>/soe_sim-instructions).")
@click.option("--branch-sim", is_flag=True, help="Also simulate a branch predictor (mispredictions per function).")
@click.option("--top", default=25, show_default=True, type=click.IntRange(1), help="Functions listed per ranking.")
@click.option("--out", default=None, help="Also write the JSON here.")
def main(trees, scenario, polish, soviet, games, seed, cpu, cache_root, branch_sim, top, out):
    """Self instructions (and simulated branch mispredictions) per compiled function, under callgrind."""
    root = Path(cache_root or Path(tempfile.gettempdir()) / "soe_sim-instructions")
    root.mkdir(parents=True, exist_ok=True)
    helper = instructions.build_helper(root)
    results = [measure_tree(Path(t), root, helper, cpu, scenario, polish, soviet, games, seed, top, branch_sim)
               for t in (trees or (ROOT,))]
    emit_json({"benchmark": "callgrind_profile", "scenario": scenario, "polish": polish, "soviet": soviet,
               "games": games, "seed": seed, "cpu": cpu, "branch_sim": branch_sim, "trees": results}, out)


if __name__ == "__main__":
    main()
