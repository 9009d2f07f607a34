"""Exact instructions per game (valgrind's callgrind): compare trees whose speed differs by less than the noise.

Run::

    .venv/bin/python benchmarks/instructions.py --tree /tmp/wt_old --tree . --games 200

This VM's speed drifts by several percent between runs and code layout moves a whole game's time by a few
percent either way (benchmarks/README.md, sessions 25-27), so an exact change worth 1-3 % cannot be seen in
games per second, not even interleaved (``compare_trees.py``). The number of instructions a game executes does
not drift: for each ``--tree`` (a checkout; default this repository) the script compiles the engine once for a
fixed processor (``--cpu``, default ``haswell``: valgrind 3.19 does not know AVX-512, which numba would use on
such a machine) into a numba cache of its own (kept under ``--cache-root`` between runs; numba recompiles what
changed), plays a warm-up natively, then plays ``--games`` games (one thread, :func:`soe_sim.sim.play_chunk`: the
per-game frame included) under ``valgrind --tool=callgrind`` with instrumentation switched on only around them
(a small C helper built with ``gcc`` from ``valgrind/callgrind.h``: a Debian package ``valgrind``). It reports
the instructions per game of each tree and each tree's ratio to the first. Two runs of one tree give the same
count; the same code in another checkout differs by a few parts in 100,000 (its path's strings); a tree that
changes what the games do (``perf_reference.py`` says) changes the count for that reason too. It measures work,
not time: a change that saves instructions but stalls on memory would show here and not in games per second; and
LLVM inlines most of the engine into one kernel, so any edit moves the count by a few tenths of a percent
(benchmarks/README.md "Session 28"). A run of 200 Kiev games took about 30 s per tree once the tree was built
(session 28).

With ``--branch-sim`` callgrind also simulates a branch predictor (``--branch-sim=yes``: events ``Bc``/``Bcm``
conditional branches executed / mispredicted, ``Bi``/``Bim`` indirect ones) and the figures per game come with
the instructions. The simulated predictor is not the processor's (a table of 2-bit counters indexed by the
branch's address), so it says which way a change moves the mispredictions, not how many the machine has: for a
change that trades instructions for fewer unpredictable branches (branch-free code) the instruction count alone
reads the wrong way.

With ``--cache-sim`` callgrind also simulates a two-level data and instruction cache (``--cache-sim=yes``, its
geometry fixed by ``--d1`` / ``--ll`` so that it does not depend on the host: by default a 32 KiB first level and a
512 KiB last level, the size of one core's L2 on the EPYC hosts of benchmarks/README.md): events ``Dr`` / ``Dw``
data reads / writes, ``D1mr`` / ``D1mw`` their first-level misses, ``DLmr`` / ``DLmw`` their last-level misses (and
``I1mr`` / ``ILmr`` for instructions), reported per game. Like the branch predictor it is a model (LRU, no
prefetcher, no L3): it shows which way a change moves the misses — for a change of data layout, which the
instruction count does not see — not how long they take.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import click

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _output import emit_json, game_options, tree_child_result  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

HELPER_C = r"""
#include <valgrind/callgrind.h>
void soe_instr_start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void soe_instr_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; CALLGRIND_DUMP_STATS_AT("games"); }
int soe_instr_running(void) { return RUNNING_ON_VALGRIND; }
"""

RUNNER_TEMPLATE = r"""
import ctypes, json, sys
#SETUP
import soe_sim
from soe_sim.sim import chunk_workers, play_chunk
helper, scenario, polish, soviet, games, seed, mode = sys.argv[1:8]
extra = {}
with chunk_workers(scenario, polish, soviet, threads=1) as workers:
    play_chunk(scenario, polish, soviet, seed=1, games=4, workers=workers)  # compile or load the cache
    if mode == "measure":
        #BEFORE_MEASURE
        lib = ctypes.CDLL(helper)
        if not lib.soe_instr_running():
            sys.exit("not running under valgrind")
        lib.soe_instr_start()
        df = play_chunk(scenario, polish, soviet, seed=int(seed), games=int(games), workers=workers)[0]
        lib.soe_instr_stop()
        print(json.dumps({"file": soe_sim.__file__, "vp_sum": int(df["vp"].sum()),
                          "steps_sum": int(df["steps"].sum()), **extra}))
    else:
        print(json.dumps({"file": soe_sim.__file__}))
"""


def runner_source(setup: str = "", before_measure: str = "") -> str:
    """The child's program: warm-up, then (mode ``measure``) the games with callgrind's instrumentation on only
    around them. ``setup`` runs before soe_sim is imported, ``before_measure`` (one line; it may put entries in
    the dict ``extra``, printed with the result) after the warm-up."""
    return RUNNER_TEMPLATE.replace("#SETUP", setup).replace("#BEFORE_MEASURE", before_measure)


RUNNER = runner_source()

_TOTALS = re.compile(r"^(?:totals|summary):((?:\s+\d+)+)", re.MULTILINE)
_EVENTS = re.compile(r"^events:\s+(.+)$", re.MULTILINE)


def callgrind_total(text: str) -> int:
    """The instruction count (``Ir``) of a callgrind output file's text: its ``totals:`` line (else
    ``summary:``)."""
    found = _TOTALS.findall(text)
    if not found:
        raise click.ClickException("the callgrind output has no 'totals:' or 'summary:' line")
    return int(found[-1].split()[0])


def callgrind_events(text: str) -> dict:
    """Every event of a callgrind output file's ``totals:`` line (else ``summary:``) by its name in the
    ``events:`` line (``Ir``, and ``Bc``, ``Bcm``, ``Bi``, ``Bim`` with ``--branch-sim=yes``)."""
    names = _EVENTS.findall(text)
    found = _TOTALS.findall(text)
    if not names or not found:
        raise click.ClickException("the callgrind output has no 'events:' line or no 'totals:' / 'summary:' line")
    values = [int(v) for v in found[-1].split()]
    return dict(zip(names[-1].split(), values))


def build_helper(root: Path) -> Path:
    """The shared library with the callgrind switches, built once into ``root``."""
    if shutil.which("valgrind") is None:
        raise click.ClickException("valgrind is not installed (Debian: apt-get install valgrind)")
    lib = root / "soe_instr.so"
    if lib.exists():
        return lib
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        raise click.ClickException("no C compiler (gcc or cc) on PATH: it builds the callgrind helper")
    src = root / "soe_instr.c"
    src.write_text(HELPER_C)
    out = subprocess.run([gcc, "-O1", "-shared", "-fPIC", "-o", str(lib), str(src)], capture_output=True, text=True)
    if out.returncode != 0:
        raise click.ClickException(f"building the callgrind helper failed (is valgrind/callgrind.h installed?):\n"
                                   f"{out.stderr[-1500:]}")
    return lib


def _tree_env(tree: Path, cache: Path, cpu: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_CACHE_DIR=str(cache), NUMBA_CPU_NAME=cpu,
               NUMBA_CPU_FEATURES="", PYTHONHASHSEED="0")
    env.pop("NUMBA_DISABLE_JIT", None)
    return env


CACHE_EVENTS = (("Dr", "data_reads"), ("Dw", "data_writes"), ("D1mr", "d1_read_misses"),
                ("D1mw", "d1_write_misses"), ("DLmr", "ll_read_misses"), ("DLmw", "ll_write_misses"),
                ("I1mr", "i1_misses"), ("ILmr", "il_misses"))
BRANCH_EVENTS = (("Bc", "conditional_branches"), ("Bcm", "conditional_mispredicts"),
                 ("Bi", "indirect_branches"), ("Bim", "indirect_mispredicts"))


def cache_geometry(text: str, name: str) -> str:
    """``SIZE,ASSOC,LINE`` in bytes (callgrind's ``--D1`` / ``--LL`` form) checked: three positive integers, the
    size a multiple of ``ASSOC * LINE``, the line a power of two."""
    parts = text.split(",")
    try:
        size, assoc, line = (int(p) for p in parts)
    except ValueError:
        raise click.BadParameter(f"{name} {text!r}: expected SIZE,ASSOC,LINE in bytes, e.g. 32768,8,64") from None
    if min(size, assoc, line) <= 0 or line & (line - 1) or size % (assoc * line):
        raise click.BadParameter(f"{name} {text!r}: the size must be a multiple of ASSOC * LINE and the line a "
                                 "power of 2")
    return f"{size},{assoc},{line}"


def valgrind_sim_flags(branch_sim: bool, cache_model: tuple | None) -> list:
    """callgrind's simulation switches: ``cache_model`` (``D1``, ``LL`` geometries) or None for no cache model."""
    flags = ["--branch-sim=yes"] if branch_sim else []
    if cache_model is not None:
        d1, ll = cache_model
        flags += ["--cache-sim=yes", f"--I1={d1}", f"--D1={d1}", f"--LL={ll}"]
    return flags


def sim_figures(ev: dict, tree, games: int, branch_sim: bool, cache_sim: bool) -> dict:
    """The per-game figures of the simulated events in ``ev`` (:func:`callgrind_events`)."""
    wanted = (BRANCH_EVENTS if branch_sim else ()) + (CACHE_EVENTS if cache_sim else ())
    fig = {}
    for name, key in wanted:
        if name not in ev:
            flag = "--branch-sim=yes" if (name, key) in BRANCH_EVENTS else "--cache-sim=yes"
            raise click.ClickException(f"{tree}: callgrind's output has no {name} event ({flag})")
        fig[f"{key}_per_game"] = ev[name] / games
    return fig


def tree_key(tree: Path) -> str:
    """The name of ``tree``'s build under the cache root (its resolved path, hashed)."""
    return hashlib.sha256(str(tree.resolve()).encode()).hexdigest()[:12]


def warm_tree(tree: Path, root: Path, cpu: str, runner: str, args: list[str]) -> dict:
    """The environment of ``tree``'s build for ``cpu`` (its own numba cache under ``root``), after a native warm-up
    run of ``runner`` that compiles the engine or loads it from that cache."""
    env = _tree_env(tree, root / f"cache-{tree_key(tree)}-{cpu}", cpu)
    click.echo(f"{tree}: compiling or loading the engine for {cpu} (a cold compile takes minutes)...", err=True)
    out = subprocess.run([sys.executable, "-c", runner, *args, "warm"], cwd=tree, env=env, capture_output=True,
                         text=True)
    if out.returncode != 0:
        raise click.ClickException(f"{tree}: the warm-up failed:\n{out.stderr[-2000:]}")
    tree_child_result(tree, out.stdout)
    return env


def measure_tree(tree: Path, root: Path, helper: Path, cpu: str, scenario, polish, soviet, games, seed,
                 branch_sim: bool = False, cache_model: tuple | None = None) -> dict:
    """Compile (natively) and measure (under callgrind) one tree; returns its figures."""
    key = tree_key(tree)
    args = [str(helper), scenario, polish, soviet, str(games), str(seed)]
    env = warm_tree(tree, root, cpu, RUNNER, args)
    # the run's own file (the process id in its name): two runs on one tree at a time must not read each other's
    cg_out = root / f"callgrind-{key}-{os.getpid()}.out"
    if cg_out.exists():
        cg_out.unlink()
    click.echo(f"{tree}: {games} games under callgrind...", err=True)
    sim = valgrind_sim_flags(branch_sim, cache_model)
    out = subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no", *sim, f"--callgrind-out-file={cg_out}",
                          sys.executable, "-c", RUNNER, *args, "measure"], cwd=tree, env=env, capture_output=True,
                         text=True)
    if out.returncode != 0:
        raise click.ClickException(f"{tree}: the run under valgrind failed:\n{out.stderr[-2000:]}")
    res = tree_child_result(tree, out.stdout)
    dumps = sorted(root.glob(f"callgrind-{key}-{os.getpid()}.out*"))
    if not dumps:
        raise click.ClickException(f"{tree}: callgrind wrote no output file")
    texts = [p.read_text(errors="replace") for p in dumps]
    for p in dumps:
        p.unlink()
    total = max(callgrind_total(t) for t in texts)
    if total <= 0:
        raise click.ClickException(f"{tree}: callgrind counted no instruction (was the instrumentation switched on?)")
    fig = {"tree": str(tree), "instructions": total, "instructions_per_game": total / games,
           "vp_sum": res["vp_sum"], "steps_sum": res["steps_sum"]}
    if branch_sim or cache_model is not None:
        ev = max((callgrind_events(t) for t in texts), key=lambda e: e.get("Ir", 0))
        fig.update(sim_figures(ev, tree, games, branch_sim, cache_model is not None))
    return fig


@click.command()
@click.option("--tree", "trees", multiple=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A checkout to measure (repeatable; the first is the reference). Default: this repository.")
@game_options(games=200, seed=1)
@click.option("--cpu", default="haswell", show_default=True,
              help="NUMBA_CPU_NAME for the measured builds (one valgrind can run: no AVX-512).")
@click.option("--cache-root", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where the builds' numba caches and the helper live (default: <tmp>/soe_sim-instructions).")
@click.option("--branch-sim", is_flag=True, help="Also simulate a branch predictor (mispredictions per game).")
@click.option("--cache-sim", is_flag=True, help="Also simulate a data/instruction cache (misses per game).")
@click.option("--d1", default="32768,8,64", show_default=True,
              help="First-level cache of --cache-sim: SIZE,ASSOC,LINE in bytes (data and instructions).")
@click.option("--ll", default="524288,8,64", show_default=True,
              help="Last-level cache of --cache-sim: SIZE,ASSOC,LINE in bytes.")
@click.option("--out", default=None, help="Also write the JSON here.")
def main(trees, scenario, polish, soviet, games, seed, cpu, cache_root, branch_sim, cache_sim, d1, ll, out):
    """Instructions per game of each tree, under callgrind."""
    cache_model = (cache_geometry(d1, "--d1"), cache_geometry(ll, "--ll")) if cache_sim else None
    root = Path(cache_root or Path(tempfile.gettempdir()) / "soe_sim-instructions")
    root.mkdir(parents=True, exist_ok=True)
    helper = build_helper(root)
    results = [measure_tree(Path(t), root, helper, cpu, scenario, polish, soviet, games, seed, branch_sim,
                            cache_model) for t in (trees or (ROOT,))]
    base = results[0]["instructions"]
    for r in results:
        r["ratio_to_first"] = r["instructions"] / base
        if branch_sim:
            r["mispredict_ratio_to_first"] = (r["conditional_mispredicts_per_game"]
                                              / results[0]["conditional_mispredicts_per_game"])
        if cache_model is not None:
            for key in ("d1_read_misses", "ll_read_misses"):
                r[f"{key}_ratio_to_first"] = (r[f"{key}_per_game"] / results[0][f"{key}_per_game"]
                                              if results[0][f"{key}_per_game"] else float("nan"))
        r["same_games_as_first"] = (r["vp_sum"], r["steps_sum"]) == (results[0]["vp_sum"], results[0]["steps_sum"])
    emit_json({"benchmark": "instructions", "scenario": scenario, "polish": polish, "soviet": soviet,
               "games": games, "seed": seed, "cpu": cpu, "branch_sim": branch_sim,
               "cache_sim": {"d1": cache_model[0], "ll": cache_model[1]} if cache_model else None,
               "trees": results}, out)


if __name__ == "__main__":
    main()
