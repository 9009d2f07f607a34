"""No reference counting in the engine's loops from an IR-inlined helper (docs/engine-design.md "Session 33").

A kernel marked ``inline="always"`` is inlined by numba into its caller's IR, and in a caller compiled with
reference counting (``_nrt`` not ``False``) each inlined call takes a reference to each array it reads (the
fields of ``state`` it indexes, for one) and drops it afterwards. Called once per block in a loop,
that was 3.4 % of the instructions of a balanced Kiev game (session 32's ``log_battle_vp_nb``, found by
``line_samples.py`` and measured by ``instructions.py``). This static check finds such calls, the helpers
inlined into inlined helpers included, in every package kernel compiled with reference counting; the few
left are listed with the reason they may stay.
"""
from __future__ import annotations

import ast
from pathlib import Path

import soe_sim

PACKAGE = Path(soe_sim.__file__).parent

# "caller -> inlined helper": calls in a loop that stay, and why (arrows, not bare names: tests/test_jit.py
# reads a string that is just an identifier as a kernel called from Python)
ALLOWED = {
    # one feature matrix per decision (a view of the policies' buffer, inlined so that kernels without reference
    # counting may hold it); this caller allocates its scratch once per call, so it keeps reference counting
    "reinforcement_phase_nb -> feat_buffer_nb",
    # the battle Monte Carlo kernel (soe_sim.battle, not the game loop; measured by bench_battles.py): the
    # resolver and its loss helpers take the battle's few small arrays
    "simulate_nb -> draw_modifier_nb",
    "simulate_nb -> resolve_nb",
    "simulate_nb -> defender_losses_nb",
    "simulate_nb -> attacker_losses_nb",
    "simulate_nb -> defender_outcome_losses_nb",
    "simulate_nb -> chart_losses_nb",
}


def _call_name(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _flags(deco: ast.Call) -> tuple[bool, bool]:
    """(compiled with reference counting, inlined into the caller's IR) from an ``njit(...)`` decorator."""
    kw = {k.arg: k.value for k in deco.keywords}
    nrt = not (isinstance(kw.get("_nrt"), ast.Constant) and kw["_nrt"].value is False)
    inline = isinstance(kw.get("inline"), ast.Constant) and kw["inline"].value == "always"
    return nrt, inline


def _kernels() -> dict[str, tuple[Path, ast.FunctionDef, bool, bool]]:
    """Every package function decorated with ``njit(...)``: name -> (file, node, reference counting, inline)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef):
                continue
            for deco in node.decorator_list:
                if isinstance(deco, ast.Call) and _call_name(deco) == "njit":
                    found[node.name] = (path, node, *_flags(deco))
    return found


def _calls(node: ast.AST, in_loop: bool, out: list[tuple[str, bool, int]]) -> None:
    """(callee name, inside a for/while loop, line) of every call under ``node``."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Call):
            name = _call_name(child)
            if name is not None:
                out.append((name, in_loop, child.lineno))
        _calls(child, in_loop or isinstance(child, (ast.For, ast.While)), out)


def _takes_arrays(kernels, name, seen=None):
    """Does helper ``name`` take an array or a named tuple: a parameter it indexes, reads a field of, or hands
    to a package kernel that does? (A helper of scalars only costs no reference counting.)"""
    seen = set() if seen is None else seen
    seen.add(name)
    node = kernels[name][1]
    params = {a.arg for a in node.args.args}
    for sub in ast.walk(node):
        if isinstance(sub, (ast.Subscript, ast.Attribute)) and isinstance(sub.value, ast.Name):
            if sub.value.id in params:
                return True
        if isinstance(sub, ast.Call):
            callee = _call_name(sub)
            if (callee in kernels and callee not in seen
                    and any(isinstance(a, ast.Name) and a.id in params for a in sub.args)
                    and _takes_arrays(kernels, callee, seen)):
                return True
    return False


def _inlined_in_loops(kernels, name, in_loop, seen, out):
    """The inlined helpers ``name``'s body puts inside a loop of its caller (``in_loop``: the call itself is)."""
    calls: list[tuple[str, bool, int]] = []
    _calls(kernels[name][1], False, calls)
    for callee, loop, line in calls:
        entry = kernels.get(callee)
        if entry is None or not entry[3] or (callee, in_loop or loop) in seen:
            continue
        seen.add((callee, in_loop or loop))
        if (in_loop or loop) and _takes_arrays(kernels, callee):
            out.append((callee, f"{entry[0].relative_to(PACKAGE.parent)}:{line}"))
        _inlined_in_loops(kernels, callee, in_loop or loop, seen, out)


def test_no_kernel_with_reference_counting_inlines_a_helper_into_a_loop():
    kernels = _kernels()
    assert len(kernels) > 300 and "log_battle_vp_nb" in kernels and "feat_buffer_nb" in kernels
    found = []
    allowed_seen: set[str] = set()
    for name, (_path, _node, nrt, inline) in kernels.items():
        if not nrt or inline:
            continue
        hits: list[tuple[str, str]] = []
        _inlined_in_loops(kernels, name, False, set(), hits)
        found += [f"{name} -> {callee} ({where})" for callee, where in hits if f"{name} -> {callee}" not in ALLOWED]
        allowed_seen |= {f"{name} -> {callee}" for callee, _ in hits}
    assert ALLOWED <= allowed_seen, f"no longer found, drop from ALLOWED: {sorted(ALLOWED - allowed_seen)}"
    assert not found, "reference counting at every iteration: make the caller _nrt=False or the helper a " \
                      "plain kernel:\n" + "\n".join(found)


def test_the_check_sees_a_helper_inlined_into_a_loop():
    """The check itself: session 32's form of ``log_battle_vp_nb`` (an inlined helper taking ``state``,
    called per block in a kernel compiled with reference counting) is found, directly and through a
    second inlined helper; the same kernel without reference counting is not."""
    src = '''
@njit(cache=True, inline="always")
def _gone(state, b):
    return state.block_status[b] == 3

@njit(cache=True, inline="always")
def _outer(state, b):
    return _gone(state, b)

@njit(cache=True, _nrt=True)
def counted(state):
    k = 0
    for b in range(9):
        k += _gone(state, b)
    return k

@njit(cache=True)
def counted_through(state):
    for b in range(9):
        _outer(state, b)

@njit(cache=True, _nrt=False)
def uncounted(state):
    for b in range(9):
        _gone(state, b)
'''
    tree = ast.parse(src)
    kernels = {}
    for node in tree.body:
        kernels[node.name] = (PACKAGE / "probe.py", node, *_flags(node.decorator_list[0]))
    found = {}
    for name in ("counted", "counted_through", "uncounted"):
        hits: list[tuple[str, str]] = []
        if kernels[name][2]:
            _inlined_in_loops(kernels, name, False, set(), hits)
        found[name] = sorted(callee for callee, _ in hits)
    assert found == {"counted": ["_gone"], "counted_through": ["_gone", "_outer"], "uncounted": []}
