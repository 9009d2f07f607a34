"""A process to profile with Linux ``perf``: plays games after a warm-up, with a perf map of numba's code.

Run (two shells, or in the background)::

    .venv/bin/python benchmarks/profile_games.py --games 2500 --ready /tmp/ready &
    while [ ! -s /tmp/ready ]; do sleep 1; done
    perf record -F 1999 -p "$(cat /tmp/ready)" -o /tmp/perf.data -- sleep 8
    perf report -i /tmp/perf.data --no-children --sort symbol --stdio

With ``--dump-code DIR`` it also copies the machine code of the package's functions out of the process
(after the warm-up) for ``benchmarks/stack_traffic.py``, which attributes the samples to instructions.
With ``--dump-objects DIR`` it writes the ELF objects numba loaded and where each sits in memory, for
``benchmarks/line_samples.py``, which attributes the samples to source lines (in a tree compiled with
``NUMBA_DEBUGINFO=1``).

numba's JIT code has no symbols that ``perf`` can see; after the warm-up (compilation or cache load,
scenario set-up: nothing of it is sampled) this script writes ``/tmp/perf-PID.map`` — every function
numba's JIT engine exports, and every internal function of the objects it loaded (the kernels linked into
their callers, made internal by ``soe_sim._jit``'s slim calls), named from the objects' symbol tables
(``nm``) — which ``perf report`` reads for the process. Then it writes its PID to ``--ready`` and plays
``--games`` games of ``--scenario`` with :func:`soe_sim.engine.game.play_games` on ``--threads`` threads,
and prints games/s and CPU ms per game.
The names in the report are numba's mangled ones (``_ZN7soe_sim6engine6orders2nb27legal_orders_...``);
LLVM inlines small callees into their callers, whose self time then includes them; since session 25 it also
inlines every package kernel that its library calls from one place only (``soe_sim._jit``, "Slim calls between
kernels", item 3), so card play, the reinforcement phase and other phase kernels count in the batch kernel.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import click


_OBJECTS: list[bytes] = []


def keep_object_code():
    """Keep a copy of the machine code (ELF object) of every library numba's JIT engine loads from here on,
    compiled or read from the cache, for :func:`write_perf_map`: the package's kernels linked into a caller
    are internal functions there (``soe_sim._jit``, "Slim calls between kernels"), which the engine does not
    export, so only the object's symbol table names them. Call before the first kernel is compiled or
    loaded."""
    from numba.core import codegen

    library = codegen.CPUCodeLibrary
    if getattr(library, "_soe_sim_keeps_objects", False):
        return
    compiled = library._object_compiled_hook.__func__
    getbuffer = library._object_getbuffer_hook.__func__

    def object_compiled(cls, ll_module, buf):
        _OBJECTS.append(bytes(buf))
        return compiled(cls, ll_module, buf)

    def object_getbuffer(cls, ll_module):
        buf = getbuffer(cls, ll_module)
        if buf:
            _OBJECTS.append(bytes(buf))
        return buf

    library._object_compiled_hook = classmethod(object_compiled)
    library._object_getbuffer_hook = classmethod(object_getbuffer)
    library._soe_sim_keeps_objects = True


def _object_functions(obj: bytes) -> list[tuple[int, int, str, bool]]:
    """The functions of an ELF object: (offset in its code section, size, name, exported), from ``nm``."""
    import subprocess
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".o") as f:
        f.write(obj)
        f.flush()
        text = subprocess.run(["nm", "-S", "--defined-only", f.name], capture_output=True, text=True).stdout
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in ("t", "T"):
            out.append((int(parts[0], 16), int(parts[1], 16), parts[3], parts[2] == "T"))
    return out


def _exported_addresses() -> dict[str, int]:
    """The address of every function numba's CPU JIT engine has defined so far, by symbol name."""
    from numba.core.registry import cpu_target

    engine = cpu_target.target_context.codegen()._engine
    exported = {}
    for name in list(engine._defined_symbols):
        try:
            addr = engine.get_function_address(name)
        except Exception:  # noqa: BLE001 - a data symbol or one the engine cannot resolve: not code
            continue
        if addr:
            exported[name] = addr
    return exported


def write_perf_map(path: str | None = None) -> tuple[str, int]:
    """Write the perf map of every function numba's CPU JIT engine has defined so far; returns the path
    and the number of symbols. With :func:`keep_object_code` called first, the functions each object
    holds but does not export (internal copies of kernels) are named too: placed by the exported
    function of the same object whose address the engine knows (one code section per object)."""
    exported = _exported_addresses()
    syms = {(addr, name): None for name, addr in exported.items()}
    for obj in _OBJECTS:
        functions = _object_functions(obj)
        base = next((exported[n] - off for off, _, n, ext in functions if ext and n in exported), None)
        if base is None:  # an object the engine did not load (or not yet)
            continue
        for off, size, name, ext in functions:
            syms[(base + off, name)] = size
    ordered = sorted(syms)
    path = path or f"/tmp/perf-{os.getpid()}.map"
    with open(path, "w") as f:
        for i, (addr, name) in enumerate(ordered):
            size = syms[(addr, name)] or min((ordered[i + 1][0] - addr) if i + 1 < len(ordered) else 4096, 1 << 20)
            f.write(f"{addr:x} {size:x} {name}\n")
    return path, len(ordered)


def dump_machine_code(perf_map: str, out_dir: str) -> int:
    """Copy the bytes of every ``soe_sim`` function of the perf map out of this process into
    ``out_dir/<address>.bin``, with ``out_dir/index.json`` = [[address, size, name], ...] (what
    ``stack_traffic.py`` disassembles). Returns the number of functions."""
    import ctypes
    import json

    import bisect

    os.makedirs(out_dir, exist_ok=True)
    # a function's size in the perf map runs to the next symbol, which may lie in another mapping:
    # clamp each read to the end of the readable mapping holding its start (reading past it faults)
    ranges = []
    with open("/proc/self/maps") as f:
        for line in f:
            span, perms = line.split()[:2]
            if perms.startswith("r"):
                lo, hi = (int(x, 16) for x in span.split("-"))
                ranges.append((lo, hi))
    starts = [lo for lo, _ in ranges]
    index = []
    with open(perf_map) as f:
        for line in f:
            addr, size, name = line.split(maxsplit=2)
            if "soe_sim" not in name and not name.startswith("NRT_"):
                continue
            a, s = int(addr, 16), int(size, 16)
            r = bisect.bisect_right(starts, a) - 1
            if r < 0 or a >= ranges[r][1]:
                continue
            s = min(s, ranges[r][1] - a)
            Path(out_dir, f"{a:x}.bin").write_bytes(ctypes.string_at(a, s))
            index.append((a, s, name.strip()))
    Path(out_dir, "index.json").write_text(json.dumps(index))
    return len(index)


def dump_objects(out_dir: str) -> int:
    """Write every object kept by :func:`keep_object_code` that the JIT engine loaded as ``out_dir/<i>.o``,
    with ``out_dir/objects.json`` = [[i, load address of its code section, [[offset, size, name], ...]], ...]
    (what ``line_samples.py`` reads). Returns the number of objects written."""
    import json

    exported = _exported_addresses()
    os.makedirs(out_dir, exist_ok=True)
    meta = []
    for i, obj in enumerate(_OBJECTS):
        functions = _object_functions(obj)
        base = next((exported[n] - off for off, _, n, ext in functions if ext and n in exported), None)
        if base is None:  # not loaded
            continue
        Path(out_dir, f"{i}.o").write_bytes(obj)
        meta.append([i, base, [[off, size, name] for off, size, name, _ in functions]])
    Path(out_dir, "objects.json").write_text(json.dumps(meta))
    return len(meta)


@click.command()
@click.option("--scenario", default="kiev-offensive", show_default=True)
@click.option("--polish", default="balanced", show_default=True)
@click.option("--soviet", default="balanced", show_default=True)
@click.option("--games", default=2500, show_default=True)
@click.option("--threads", default=1, show_default=True)
@click.option("--seed", default=2, show_default=True)
@click.option("--ready", default=None, help="Write the PID here once the warm-up and the perf map are done.")
@click.option("--dump-code", "dump_code", default=None,
              help="Also write the machine code of every soe_sim function here (for stack_traffic.py).")
@click.option("--dump-objects", "dump_objs", default=None,
              help="Also write the loaded ELF objects and their addresses here (for line_samples.py).")
@click.option("--start-after", "start_after", default=None,
              help="After --ready, wait until this file exists before the games (alloc_sites.py attaches perf first).")
def main(scenario, polish, soviet, games, threads, seed, ready, dump_code, dump_objs, start_after):
    keep_object_code()
    from soe_sim.engine.game import play_games

    t = time.perf_counter()
    play_games(scenario, 20, seed=1, threads=threads, polish=polish, soviet=soviet)
    path, n = write_perf_map()
    click.echo(f"warm-up {time.perf_counter() - t:.1f} s; perf map {path} ({n} symbols); pid {os.getpid()}", err=True)
    if dump_code:
        click.echo(f"machine code of {dump_machine_code(path, dump_code)} functions in {dump_code}", err=True)
    if dump_objs:
        click.echo(f"{dump_objects(dump_objs)} objects in {dump_objs}", err=True)
    if ready:
        Path(ready).write_text(str(os.getpid()))
    while start_after and not Path(start_after).exists():
        time.sleep(0.05)
    t = time.perf_counter()
    c = time.process_time()
    play_games(scenario, games, seed=seed, threads=threads, polish=polish, soviet=soviet)
    wall = time.perf_counter() - t
    click.echo(f"{games / wall:.1f} games/s, {1000 * (time.process_time() - c) / games:.3f} CPU ms/game")


if __name__ == "__main__":
    main()
