"""How much of a profile is moving values between registers and the stack (mostly the flattened named
tuples passed to kernels that LLVM did not inline), and how much is reference counting.

numba passes a named tuple of arrays as its flattened fields (seven words for a 1-d array), so a call
that hands ``state``, ``orders``, the map, the config and the policy set to a kernel copies hundreds
of words into the outgoing argument area. This script attributes ``perf`` samples to the
instructions they hit and counts those that move a register to or from an ``%rsp``-relative slot,
and which call (the next ``call`` in the function) such moves precede.

Run (the profile of ``profile_games.py`` with its machine code dumped)::

    .venv/bin/python benchmarks/profile_games.py --games 3000 --ready /tmp/ready --dump-code /tmp/code &
    while [ ! -s /tmp/ready ]; do sleep 1; done
    perf record -F 2999 -p "$(cat /tmp/ready)" -o /tmp/perf.data -- sleep 8
    .venv/bin/python benchmarks/stack_traffic.py --perf-data /tmp/perf.data --code /tmp/code

Output: JSON with ``samples`` (all of the process), ``stack_move_share`` (samples on register/stack
moves in the package's functions), ``push_share`` (samples on ``push`` instructions there: the arguments
beyond the registers, pushed before a call; sessions 8–23 counted only the moves and missed these,
benchmarks/README.md "Session 24"), ``stack_move_before_call_share`` (moves and pushes followed, in the
same function, by a call before any other stack-free instruction run ends — an upper bound of argument
marshalling), ``nrt_share`` (``NRT_incref`` / ``NRT_decref``), ``functions`` (the largest, with their
sample share and the shares of it on stack moves and on pushes) and ``call_sites`` (caller → callee, by
the stack moves and pushes before the call). Needs ``perf`` and ``objdump``.
"""
from __future__ import annotations

import bisect
import collections
import json
import re
import subprocess
from pathlib import Path

import click

from _output import emit_json

_INSTR = re.compile(r"\s*([0-9a-f]+):\s+(?:[0-9a-f]{2} )+\s*(\S.*)")
_STACK_MOVE = re.compile(r"(v?mov\S*)\s.*\(%rsp\)")
_PUSH = re.compile(r"push\S*\s")
_CALL_TARGET = re.compile(r"movabs \$0x([0-9a-f]+),%\w+")


def short_name(mangled: str) -> str:
    """``engine.orders.nb.legal_orders_nb`` from numba's mangled symbol (length-prefixed parts)."""
    if not mangled.startswith("_ZN7soe_sim"):
        return mangled[:60]
    rest = mangled[len("_ZN7soe_sim"):]
    parts = []
    while (m := re.match(r"(\d+)", rest)) is not None:
        n = int(m.group(1))
        parts.append(rest[len(m.group(1)):len(m.group(1)) + n])
        rest = rest[len(m.group(1)) + n:]
    return ".".join(parts)


def disassemble(path: Path, addr: int) -> list[tuple[int, str]]:
    text = subprocess.run(["objdump", "-D", "-b", "binary", "-m", "i386:x86-64", f"--adjust-vma={addr:#x}",
                           str(path)], capture_output=True, text=True, check=True).stdout
    return [(int(m.group(1), 16), m.group(2).strip()) for m in map(_INSTR.match, text.splitlines()) if m]


@click.command()
@click.option("--perf-data", "perf_data", required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--code", "code_dir", required=True, type=click.Path(exists=True, file_okay=False),
              help="The --dump-code directory of profile_games.py.")
@click.option("--top", default=15, show_default=True)
@click.option("--out", default=None, help="Also write the JSON here.")
def main(perf_data, code_dir, top, out):
    index = sorted((a, s, n) for a, s, n in json.loads(Path(code_dir, "index.json").read_text()))
    starts = [a for a, _, _ in index]
    names = {a: n for a, _, n in index}
    script = subprocess.run(["perf", "script", "-G", "-i", perf_data, "-F", "ip"], capture_output=True, text=True,
                            check=True).stdout
    hits = collections.Counter(int(line, 16) for line in script.split() if line)
    total = sum(hits.values())
    per_function = collections.Counter()
    for ip, c in hits.items():
        i = bisect.bisect_right(starts, ip) - 1
        if i >= 0 and ip < index[i][0] + index[i][1]:
            per_function[i] += c
    nrt = sum(c for i, c in per_function.items() if index[i][2].startswith(("NRT_incref", "NRT_decref")))
    stack_total = 0
    push_total = 0
    before_call = 0
    functions = []
    sites = collections.Counter()
    for i, samples in per_function.most_common():
        addr, size, name = index[i]
        if not name.startswith("_ZN7soe_sim"):
            continue
        moves = 0
        push_samples = 0
        pending = 0
        last: list[str] = []  # the instructions before, where the callee's address is loaded
        for ad, ins in disassemble(Path(code_dir, f"{addr:x}.bin"), addr):
            c = hits.get(ad, 0)
            if _PUSH.match(ins):  # an argument pushed for the next call
                push_samples += c
                pending += c
            elif _STACK_MOVE.match(ins):
                moves += c
                pending += c
            elif ins.startswith("call"):
                target = "indirect"
                m = None
                for back in reversed(last):
                    m = _CALL_TARGET.match(back)
                    if m:
                        break
                if m:
                    target = short_name(names.get(int(m.group(1), 16), m.group(1)))
                if pending:
                    sites[(short_name(name), target)] += pending
                    before_call += pending
                pending = 0
            last = last[-19:] + [ins]
        stack_total += moves
        push_total += push_samples
        functions.append({"function": short_name(name), "share": round(samples / total, 4),
                          "stack_move_share_of_it": round(moves / samples, 3) if samples else 0.0,
                          "push_share_of_it": round(push_samples / samples, 3) if samples else 0.0})
    emit_json({
        "samples": total,
        "stack_move_share": round(stack_total / total, 4),
        "push_share": round(push_total / total, 4),
        "stack_move_before_call_share": round(before_call / total, 4),
        "nrt_share": round(nrt / total, 4),
        "functions": functions[:top],
        "call_sites": [{"caller": f, "callee": t, "share": round(c / total, 4)} for (f, t), c in sites.most_common(top)],
    }, out)


if __name__ == "__main__":
    main()
