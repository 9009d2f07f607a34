"""Allocations a game, by the compiled kernel that makes them: numba's allocator probed with Linux ``perf``.

Run (``perf probe`` needs root or ``perf_event_paranoid`` permitting uprobes)::

    .venv/bin/python benchmarks/alloc_sites.py --games 1000 [--polish balanced --soviet balanced]

Every ``np.zeros`` / ``np.empty`` of a kernel compiled with reference counting goes through numba's
``NRT_MemInfo_alloc_aligned`` (and a ``malloc``, then a ``free`` and reference counting when the array dies).
This script adds a ``perf`` uprobe on that function which records its return address (the word at the stack
pointer on entry), starts ``profile_games.py`` (warm-up and perf map first; it waits for this script before it
plays), records the probe's events for the whole run of ``--games`` games, and looks each return address up in
the child's perf map: the function holding the call is the kernel that allocates (after LLVM's inlining: a
kernel inlined into its caller counts as the caller). JSON on stdout: ``games``, ``allocations``,
``per_game`` and ``sites`` (per function: ``per_game``, ``share``), largest first. The per-chunk work arrays
that ``play_games`` makes once per thread are counted too (a few dozen per run, not per game).
"""
from __future__ import annotations

import bisect
import collections
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import click

from _output import emit_json  # benchmarks/_output.py, next to this script
from stack_traffic import short_name

_EVENT = "probe__nrt_python:NRT_MemInfo_alloc_aligned"


def _nrt_library() -> str:
    import numba.core.runtime._nrt_python as nrt

    return nrt.__file__


def _perf(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    out = subprocess.run(["perf", *args], capture_output=True, text=True)
    if check and out.returncode != 0:
        raise click.ClickException(f"perf {' '.join(args)} failed:\n{out.stderr.strip()[-1500:]}")
    return out


def _lookup(perf_map: Path):
    rows = []
    for line in perf_map.read_text().splitlines():
        addr, size, name = line.split(maxsplit=2)
        rows.append((int(addr, 16), int(size, 16), name.strip()))
    rows.sort()
    starts = [r[0] for r in rows]

    def name_of(address: int) -> str:
        i = bisect.bisect_right(starts, address) - 1
        if i >= 0 and address < rows[i][0] + rows[i][1]:
            return short_name(rows[i][2])
        return "(not numba's JIT code)"

    return name_of


@click.command()
@click.option("--scenario", default="kiev-offensive", show_default=True)
@click.option("--polish", default="balanced", show_default=True)
@click.option("--soviet", default="balanced", show_default=True)
@click.option("--games", default=1000, show_default=True, type=click.IntRange(min=1))
@click.option("--seed", default=2, show_default=True)
@click.option("--top", default=20, show_default=True)
@click.option("--out", default=None, help="Also write the JSON here.")
def main(scenario, polish, soviet, games, seed, top, out):
    library = _nrt_library()
    _perf("probe", "-d", _EVENT, check=False)  # a probe left by an interrupted run
    _perf("probe", "-x", library, "--add", "NRT_MemInfo_alloc_aligned ret=+0(%sp):u64")
    here = Path(__file__).resolve().parent
    with tempfile.TemporaryDirectory() as tmp:
        ready, go, data = Path(tmp, "ready"), Path(tmp, "go"), Path(tmp, "alloc.data")
        child = subprocess.Popen([sys.executable, str(here / "profile_games.py"), "--scenario", scenario, "--polish",
                                  polish, "--soviet", soviet, "--games", str(games), "--seed", str(seed),
                                  "--ready", str(ready), "--start-after", str(go)],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            while not ready.exists() or not ready.read_text():
                if child.poll() is not None:
                    errors = child.stderr.read()[-1500:]
                    raise click.ClickException(f"profile_games.py ended before its games:\n{errors}")
                time.sleep(0.2)
            pid = int(ready.read_text())
            perf_map = Path(f"/tmp/perf-{pid}.map")
            recorder = subprocess.Popen(["perf", "record", "-q", "-e", _EVENT, "-p", str(pid), "-o", str(data)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(2.0)  # perf attaches before the games start
            go.write_text("go")
            played, errors = child.communicate()
            recorder.wait(timeout=120)
            if child.returncode != 0:
                raise click.ClickException(f"profile_games.py failed:\n{errors[-1500:]}")
            name_of = _lookup(perf_map)
            trace = _perf("script", "-i", str(data), "-F", "trace").stdout
        finally:
            if child.poll() is None:
                child.kill()
            _perf("probe", "-d", _EVENT, check=False)
    counts = collections.Counter()
    for line in trace.splitlines():
        if "ret=" in line:
            counts[name_of(int(line.rsplit("ret=", 1)[1].split()[0], 0))] += 1
    total = sum(counts.values())
    sites = [{"function": name, "per_game": round(n / games, 2), "share": round(n / total, 4)}
             for name, n in counts.most_common(top)]
    emit_json({"benchmark": "alloc_sites", "scenario": scenario, "polish": polish, "soviet": soviet,
               "games": games, "seed": seed, "speed_while_probed": played.strip(), "allocations": total,
               "per_game": round(total / games, 1), "sites": sites}, out)


if __name__ == "__main__":
    main()
