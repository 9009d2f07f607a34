"""``soe_sim._jit.njit``: one compiled version of a kernel per argument *type* (docs/engine-design.md
"Compile time")."""
from __future__ import annotations

import ast
import importlib
import inspect
import os
import pkgutil
import shutil
import subprocess
import sys
import textwrap
from typing import NamedTuple

import numba
import numpy as np
import pytest
from numba.core.registry import CPUDispatcher

import soe_sim
from soe_sim._jit import njit

pytestmark = pytest.mark.game_loop  # plays games: compiled once for the session (conftest.py)


def _callers(jit):
    """A callee with a flag argument and two callers: one passes a constant, one a variable."""

    @jit(cache=False)
    def callee(x, flag):
        if flag < 0:
            return -x
        return x + flag

    @jit(cache=False)
    def with_constant(x):
        return callee(x, -1) + callee(x, 3)

    @jit(cache=False)
    def with_variable(x, f):
        return callee(x, f)

    return callee, with_constant, with_variable


def test_a_constant_argument_shares_the_compiled_version_of_a_variable():
    callee, with_constant, with_variable = _callers(njit)
    assert with_constant(5) == -5 + 8
    assert with_variable(5, 2) == 7
    assert with_variable(5, -1) == -5
    # numba alone types -1 and 3 as literals and compiles the callee once for each value
    assert len(callee.overloads) == 1
    (sig,) = callee.overloads
    assert all(not isinstance(t, numba.types.Literal) for t in sig)


def test_plain_numba_compiles_a_version_per_constant():
    """The behaviour the wrapper removes (so the test above can fail)."""
    callee, with_constant, with_variable = _callers(numba.njit)
    with_constant(5)
    with_variable(5, 2)
    assert len(callee.overloads) >= 2


def _narrow_callers(jit):
    """A callee called with values read from ``int8`` / ``int16`` arrays and with ``int64`` values."""

    @jit(cache=False)
    def callee(side, area):
        return (1 - side) * 100_000 + area

    @jit(cache=False)
    def caller(sides, areas):
        total = 0
        for i in range(sides.shape[0]):
            total += callee(sides[i], areas[i])  # int8, int16
            total += callee(1 - sides[i], np.int64(areas[i]) * 2)  # int64, int64
        return total

    return callee, caller


def test_a_narrow_integer_argument_shares_the_int64_version():
    callee, caller = _narrow_callers(njit)
    sides = np.array([0, 1, -1, 127, -128], dtype=np.int8)
    areas = np.array([5, -7, 32767, -32768, 3], dtype=np.int16)
    expected = sum((1 - int(s)) * 100_000 + int(a) + int(s) * 100_000 + 2 * int(a) for s, a in zip(sides, areas))
    assert caller(sides, areas) == expected  # the widening keeps every value, negative ones too
    assert [str(sig) for sig in callee.overloads] == ["(int64, int64)"]


def test_plain_numba_compiles_a_version_per_integer_width():
    """The behaviour the wrapper removes (so the test above can fail)."""
    callee, caller = _narrow_callers(numba.njit)
    caller(np.zeros(2, dtype=np.int8), np.zeros(2, dtype=np.int16))
    assert len(callee.overloads) == 2


def _package_kernels():
    """``(module name, name, dispatcher)`` of every kernel defined in the package (not re-exported)."""
    for info in pkgutil.walk_packages(soe_sim.__path__, "soe_sim."):
        module = importlib.import_module(info.name)
        for name, obj in inspect.getmembers(module, lambda o: isinstance(o, CPUDispatcher)):
            if obj.py_func.__module__ == module.__name__:
                yield module.__name__, name, obj


def test_an_internal_kernel_has_no_python_entry_point():
    """``internal=True``: callable from jitted code only; from Python a clear ``TypeError`` instead of
    a jump to the null entry point numba leaves without a wrapper."""
    from soe_sim._jit import InternalDispatcher

    @njit(cache=False, _nrt=False, internal=True)
    def first_plus(a, s):
        return a[0] + s

    @njit(cache=False)
    def caller(a):
        return first_plus(a, np.int8(2))

    assert caller(np.ones(3)) == 3.0
    assert isinstance(first_plus, InternalDispatcher) and isinstance(first_plus, CPUDispatcher)
    assert first_plus.targetoptions["no_cpython_wrapper"] is True
    with pytest.raises(TypeError, match="internal kernel"):
        first_plus(np.ones(3), 1)


def _python_names(root):
    """Every identifier that Python code (not a jitted function's body) of the package, the tests,
    the benchmarks or ``analysis`` names — as a name, an attribute, an import or a string that is
    just an identifier (``getattr(nb, "...")``), not in prose — and every word of the notebooks'
    code: the kernels these may call from Python."""
    import json
    import re
    from pathlib import Path

    names = set()
    files = [p for folder in ("soe_sim", "tests", "benchmarks", "analysis") for p in (root / folder).rglob("*.py")]
    for path in files:
        if path.resolve() == Path(__file__).resolve():
            continue  # this file names a few internal kernels to check that they are internal
        tree = ast.parse(path.read_text())
        jitted = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and any("njit" in ast.unparse(d) for d in node.decorator_list):
                jitted.update(id(n) for n in ast.walk(node))
        for node in ast.walk(tree):
            if id(node) in jitted:
                continue
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.alias):
                names.update({node.name.split(".")[-1], node.asname or ""})
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
                names.add(node.value)
    for path in (root / "notebooks").rglob("*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                names.update(re.findall(r"\w+", "".join(cell["source"])))
    return names


def test_no_python_code_names_an_internal_kernel():
    """The internal kernels (no Python entry point) are called only from jitted code: no Python code
    of the package, the tests, the benchmarks, ``analysis`` or the notebooks names one."""
    from pathlib import Path

    from soe_sim._jit import InternalDispatcher

    internal = {name for _, name, obj in _package_kernels() if isinstance(obj, InternalDispatcher)}
    assert len(internal) > 100  # the loop's kernels are among them (docs/engine-design.md "Compile time")
    assert {"battles_nb", "_execute_order_nb", "leader_window_nb"} <= internal
    named = internal & _python_names(Path(soe_sim.__file__).resolve().parent.parent)
    assert named == set(), f"called from Python, so they need their entry point back: {sorted(named)}"


def test_options_pass_through_and_explicit_signatures_are_refused():
    @njit(cache=False, _nrt=False)
    def add_one(a):
        for i in range(a.shape[0]):
            a[i] += 1

    x = np.zeros(3)
    add_one(x)
    assert x.tolist() == [1.0, 1.0, 1.0]
    assert add_one.targetoptions["_nrt"] is False
    with pytest.raises(TypeError, match="keyword options only"):
        njit("void(float64[:])")


def test_every_package_kernel_uses_the_wrapper():
    """Every dispatcher defined in the package resolves calls by type only (a plain ``numba.njit``
    kernel called with constants would bring the per-value compilations back)."""
    plain, seen = [], 0
    for module_name, name, obj in _package_kernels():
        seen += 1
        if "get_call_template" not in vars(obj):
            plain.append(f"{module_name}.{name}")
    assert seen > 200  # the engine's kernels were found
    assert plain == []


def test_play_game_and_the_batches_share_one_compiled_game_loop():
    """``play_game``, ``play_games`` and ``simulate`` play through one batch kernel with the game loop
    inlined: one compiled version serves all three, under both rulesets, with a Python policy and
    with ``log_detail`` (docs/engine-design.md "Compile time")."""
    from soe_sim.engine.game import nb as gnb
    from soe_sim.engine.game import play_game, play_games

    class FirstOption:
        def choose(self, decision, options, state_view):
            return 0

    batch = gnb.play_games_serial_nb
    play_game("tutorial", seed=1, polish="balanced", soviet="random")
    compiled = len(batch.signatures)
    assert compiled >= 1
    play_game("tutorial", seed=2, polish=FirstOption(), soviet="aggressive", ruleset="eats")
    play_game("tutorial", seed=3, log_detail=True)
    play_games("tutorial", 2, seed=1, threads=1)
    play_games("tutorial", 3, seed=1, threads=2)
    soe_sim.simulate("tutorial", games=2, seed=1, threads=1)
    assert len(batch.signatures) == compiled  # nothing compiled after the first game
    # the loop is inlined into the batch kernel: no library of its own
    assert gnb.play_game_policies_nb.targetoptions["inline"] == "always"
    assert gnb.play_game_policies_nb.signatures == []
    # so are the phase kernels without reference counting that only the loop calls (session 10)
    for kernel in (gnb.place_orders_nb, gnb.execute_orders_nb):
        assert kernel.targetoptions["inline"] == "always"
        assert kernel.signatures == []


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cold_compile_notice_is_given_once_and_only_without_a_compiled_version(tmp_path):
    """``play_games`` / ``simulate`` / ``play_game`` announce a cold compile of the game loop (minutes
    with a progress bar at zero) — once, and not when numba's cache holds a fresh version."""
    import io

    from soe_sim._jit import cold_compile_notice, has_compiled_version

    src = tmp_path / "cold_kernel.py"
    src.write_text("from soe_sim._jit import njit\n\n\n@njit(cache=True)\ndef add_one(x):\n    return x + 1\n")
    first = _load(src, "cold_kernel_a")
    assert not has_compiled_version(first.add_one)
    out = io.StringIO()
    assert cold_compile_notice(first.add_one, "the test kernel", stream=out)
    assert "compiling the test kernel" in out.getvalue() and "first run only" in out.getvalue()
    assert not cold_compile_notice(first.add_one, stream=out)  # once per process
    assert first.add_one(1) == 2  # compiles and writes the on-disk cache
    assert has_compiled_version(first.add_one)
    # a fresh dispatcher of the same source: nothing in memory, a fresh index on disk
    second = _load(src, "cold_kernel_b")
    assert not second.add_one.overloads
    assert has_compiled_version(second.add_one)
    assert not cold_compile_notice(second.add_one, stream=out)
    # the source changed: numba's index is stale, a compile is due
    src.write_text(src.read_text().replace("x + 1", "x + 10"))  # another size: a new source stamp
    third = _load(src, "cold_kernel_c")
    assert not has_compiled_version(third.add_one)


def test_every_package_kernel_is_stamped_with_all_kernel_sources(tmp_path):
    """A kernel of the package is cached under one stamp of all the package's kernel sources, so an edit
    of any of them (a new policy in policies.py) makes the game loop in game/nb.py stale too; a kernel
    outside the package keeps numba's stamp of its own file (soe_sim._jit "One cache stamp")."""
    from numba.core import caching

    from soe_sim._jit import PACKAGE_CACHE_STAMP, kernel_sources_stamp
    from soe_sim.engine.game import nb as game_nb
    from soe_sim.engine.game import policies as game_policies

    assert PACKAGE_CACHE_STAMP
    stamps = set()
    for kernel in (game_nb.decide_nb, game_policies.choose_option_nb):
        py_file = inspect.getfile(kernel.py_func)
        locator = caching.InTreeCacheLocator.from_function(kernel.py_func, py_file)
        stamps.add(locator.get_source_stamp())
    assert stamps == {("soe_sim kernel sources", kernel_sources_stamp())}
    src = tmp_path / "outside_kernel.py"
    src.write_text("from soe_sim._jit import njit\n\n\n@njit(cache=True)\ndef f(x):\n    return x\n")
    outside = _load(src, "outside_kernel")
    locator = caching.InTreeCacheLocator.from_function(outside.f.py_func, str(src))
    assert locator.get_source_stamp() != ("soe_sim kernel sources", kernel_sources_stamp())


def test_the_sources_stamp_follows_kernel_files_only(tmp_path):
    from soe_sim._jit import sources_stamp

    (tmp_path / "engine").mkdir()
    kernels = tmp_path / "engine" / "nb.py"
    kernels.write_text("from soe_sim._jit import njit\n")
    other = tmp_path / "cli.py"
    other.write_text("print('hello')\n")
    first = sources_stamp(tmp_path)
    other.write_text("print('hello, world')\n")  # no kernel in it: the compiled code is the same
    assert sources_stamp(tmp_path) == first
    kernels.write_text("from soe_sim._jit import njit  # edited\n")
    assert sources_stamp(tmp_path) != first


def test_the_game_loop_has_a_compiled_version_after_a_game():
    from soe_sim._jit import has_compiled_version
    from soe_sim.engine.game import nb as gnb
    from soe_sim.engine.game import play_games

    play_games("tutorial", 1, seed=1, threads=1)
    assert has_compiled_version(gnb.play_games_serial_nb)


def _indexing_kernel(module):
    """``a[i]`` compiled with plain numba as a function of ``module`` (its compiled name starts with it)."""

    def get(a, i):
        return a[i]

    get.__module__ = module
    return numba.njit(cache=False)(get)


def _function_ir(dispatcher, prefix):
    """The LLVM IR of the body of ``dispatcher``'s only version (the function, not its Python wrapper)."""
    ir = next(iter(dispatcher.inspect_llvm().values()))
    body, inside = [], False
    for line in ir.splitlines():
        if line.startswith("define") and f"@{prefix}" in line:
            inside = True
        if inside:
            body.append(line)
            if line.startswith("}"):
                break
    assert body, f"no function named {prefix}... in the IR"
    return "\n".join(body)


def test_package_kernels_index_without_wraparound_and_other_kernels_keep_it():
    """soe_sim._jit (module docstring, "No negative-index wraparound"): a function of the package
    indexes with a signed integer as it is; any other keeps numba's ``i + len(a) if i < 0`` (a select)."""
    from numba.np import arrayobj

    from soe_sim import _jit

    assert _jit.NO_WRAPAROUND
    assert getattr(arrayobj.fix_integer_index, "soe_sim_no_wraparound", False)
    a = np.arange(5, dtype=np.int64)
    package = _indexing_kernel("soe_sim.probe")
    other = _indexing_kernel("tests.probe")
    assert package(a, 3) == 3 and other(a, 3) == 3
    assert other(a, -1) == 4  # numba's (Python's) meaning kept outside the package
    assert "select" not in _function_ir(package, "_ZN7soe_sim5probe")
    assert "select" in _function_ir(other, "_ZN5tests5probe")
    assert _jit._install_no_wraparound()  # installing again keeps the one replacement


def _negative_constant_indices(func):
    """The source lines of ``func`` where a subscript holds a negative constant (``a[-1]``, ``a[i, -2]``);
    slices (``a[:-1]``) are left out: numba bounds a slice itself."""
    source = textwrap.dedent(inspect.getsource(func))
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Subscript):
            continue
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for part in parts:
            if (isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.USub)
                    and isinstance(part.operand, ast.Constant)):
                found.append(source.splitlines()[node.lineno - 1].strip())
    return found


def test_no_package_kernel_indexes_with_a_negative_constant():
    """Compiled without wraparound (soe_sim._jit), ``a[-1]`` in a kernel would read before the array:
    no kernel of the package writes one (the slow test below catches computed negative indices)."""
    found = {f"{module}.{name}": lines for module, name, obj in _package_kernels()
             if (lines := _negative_constant_indices(obj.py_func))}
    assert found == {}

    def last(a):
        return a[-1] + a[1:-1].sum()

    assert _negative_constant_indices(last) == ["return a[-1] + a[1:-1].sum()"]


_BOUNDSCHECK_GAMES = r"""
import sys
from soe_sim import Battle, battle_odds
from soe_sim.data import list_scenarios
from soe_sim.engine.game import play_game
from soe_sim.sim import simulate

games = int(sys.argv[1])
played = 0
for ruleset in ("soe", "eats"):
    for scenario in list_scenarios()["id"]:
        for polish, soviet in (("random", "random"), ("balanced", "balanced"), ("aggressive", "defensive")):
            for i in range(games):
                play_game(scenario, seed=(5, i), polish=polish, soviet=soviet, ruleset=ruleset,
                          check_invariants=True, log_detail=i == 0)
                played += 1
            simulate(scenario, polish, soviet, games=games, seed=11, threads=1, trajectories=True,
                     battles=True, ruleset=ruleset)
battle_odds(Battle(attacker=[[4, 3], [2]], defender=[3, 2]))
print(played)
"""


@pytest.mark.slow
def test_no_kernel_indexes_with_a_negative_value(tmp_path):
    """The premise of compiling without wraparound: compiled with ``NUMBA_BOUNDSCHECK=1`` (a separate
    cache: everything compiled afresh, several minutes), where a negative index raises ``IndexError``,
    seeded games of every scenario, ruleset and built-in policy pair play to the end."""
    cache = tmp_path / "cache"  # the kernels compiled with bounds checks (about 60 MB): not kept
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(cache))
    env.pop("NUMBA_DISABLE_JIT", None)
    try:
        run = subprocess.run([sys.executable, "-c", _BOUNDSCHECK_GAMES, "6"], env=env, capture_output=True,
                             text=True, timeout=3600)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    assert run.returncode == 0, run.stderr[-4000:]
    assert int(run.stdout.split()[-1]) > 0


class _Probe(NamedTuple):
    a: np.ndarray
    b: np.ndarray
    c: np.ndarray


def _calling_kernels(module, sites=2):
    """A caller and a callee (too large to inline) compiled with plain numba as functions of ``module``;
    the callee takes a named tuple of three arrays and reads one. The caller calls it from ``sites`` (1 or 2)
    places (a package copy called from one place is inlined: "Slim calls between kernels", item 3)."""

    def callee(t, n):
        acc = 0.0
        for k in range(n):
            x = t.b[k]
            acc += np.sin(x) * np.cos(x + k) + np.sqrt(abs(x - k)) + np.exp(-x * k) + np.tanh(x * acc)
            acc += np.arctan2(x, acc + 1.0) * np.cosh(x / (k + 1.0)) - np.log1p(abs(acc)) * np.sinh(x)
            acc += np.arcsin(x / (abs(x) + 1.0)) + np.expm1(-abs(acc)) * np.cbrt(x + k) - np.hypot(acc, x)
            if acc > 1e9:
                acc -= np.log1p(x) + np.arccos(1.0 / (abs(acc) + 1.0)) * np.exp2(-x)
            elif acc < -1e9:
                acc += np.log2(abs(x) + 1.0) * np.arctanh(0.5 / (abs(acc) + 1.0)) + np.log10(x * x + 1.0)
        return acc

    callee.__module__ = module
    callee_nb = numba.njit(cache=False)(callee)

    def caller(t, n):
        total = 0.0
        for i in range(n):
            total += callee_nb(t, i % 5)
        return total

    def caller2(t, n):
        total = 0.0
        for i in range(n):
            total += callee_nb(t, i % 5)
            if i % 7 == 3:
                total -= 0.5 * callee_nb(t, i % 3)
        return total

    if sites == 2:
        caller = caller2

    caller.__module__ = module
    return numba.njit(cache=False)(caller)


def _callee_definition(dispatcher, prefix):
    """The ``define`` line of the linked-in copy of the callee (named ``prefix``...callee) in ``dispatcher``'s IR."""
    ir = next(iter(dispatcher.inspect_llvm().values()))
    lines = [ln for ln in ir.splitlines() if ln.startswith("define") and f"@{prefix}" in ln and "6callee" in ln]
    assert len(lines) == 1, lines
    return lines[0]


def test_calls_between_package_kernels_pass_only_what_the_callee_reads():
    """soe_sim._jit (module docstring, "Slim calls between kernels"): a package kernel's linked-in callee
    becomes internal, with the fast calling convention and without the named-tuple fields it never reads;
    outside the package numba's linkage and arguments stay. Both compute the same."""
    import llvmlite.binding as ll
    from numba.core import codegen

    from soe_sim import _jit

    assert _jit.SLIM_CALLS
    assert getattr(codegen.CPUCodeLibrary._optimize_final_module, "soe_sim_slim_calls", False)
    probe = _Probe(np.linspace(0.0, 1.0, 5), np.linspace(1.0, 2.0, 5), np.zeros(5))
    package = _calling_kernels("soe_sim.probe_slim")
    other = _calling_kernels("tests.probe_slim")
    assert package(probe, 50) == other(probe, 50)
    slim = _callee_definition(package, "_ZN7soe_sim10probe_slim")
    wide = _callee_definition(other, "_ZN5tests10probe_slim")
    assert "internal fastcc" in slim and "linkonce_odr" not in slim
    assert "linkonce_odr" in wide
    # numba's callee takes a return pointer, an exception pointer, then 3 arrays x 7 fields and n (22 names
    # "%arg."); the slim one keeps the return pointer, the data pointer of t.b and n
    assert wide.count("%arg.") == 22
    assert slim.count("%arg.") == 2 and "%arg.t.1.4" in slim and "%arg.n" in slim
    # the module callers link keeps numba's copies (merged and inlined in the callers as before)
    library = next(iter(package.overloads.values())).library
    shared = [fn for fn in library._get_module_for_linking().functions
              if fn.name.startswith("_ZN7soe_sim10probe_slim") and "6callee" in fn.name]
    assert len(shared) == 1 and not shared[0].is_declaration
    assert shared[0].linkage == ll.Linkage.linkonce_odr and len(list(shared[0].arguments)) == 24
    assert _jit._install_slim_calls()  # installing again keeps the one replacement


def test_internalize_leaves_the_module_s_own_functions_and_other_packages():
    """Only the package's linked-in copies (``linkonce_odr``) become internal; a definition the module exports
    and a copy from outside the package keep their linkage."""
    import llvmlite.binding as ll

    from soe_sim._jit import internalize_package_copies

    module = ll.parse_assembly(
        "define i64 @_ZN7soe_sim3own(i64 %x) {\n  ret i64 %x\n}\n"
        "define linkonce_odr i64 @_ZN7soe_sim4copy(i64 %x) {\n  ret i64 %x\n}\n"
        "define linkonce_odr i64 @_ZN5numba4copy(i64 %x) {\n  ret i64 %x\n}\n"
        "declare i64 @_ZN7soe_sim8declared(i64)\n")
    assert internalize_package_copies(module) == 1
    linkage = {fn.name: fn.linkage for fn in module.functions}
    assert linkage["_ZN7soe_sim3own"] == ll.Linkage.external
    assert linkage["_ZN7soe_sim4copy"] == ll.Linkage.internal
    assert linkage["_ZN5numba4copy"] == ll.Linkage.linkonce_odr
    assert linkage["_ZN7soe_sim8declared"] == ll.Linkage.external


def test_a_package_copy_called_from_one_place_is_marked_for_inlining_and_inlined():
    """Item 3 of "Slim calls between kernels": an internal package copy with exactly one call in the module is
    marked ``alwaysinline``; one called twice, one marked ``noinline``, the module's own (external) functions
    and copies from outside the package are not. The always-inliner then removes the marked copy."""
    import llvmlite.binding as ll

    from soe_sim._jit import mark_single_call_copies

    module = ll.parse_assembly(
        'define internal fastcc i64 @_ZN7soe_sim4once(i64 %x) {\n  %y = add i64 %x, 1\n  ret i64 %y\n}\n'
        'define internal fastcc i64 @_ZN7soe_sim5twice(i64 %x) {\n  ret i64 %x\n}\n'
        'define internal fastcc i64 @_ZN7soe_sim6pinned(i64 %x) noinline {\n  ret i64 %x\n}\n'
        'define internal fastcc i64 @_ZN5numba4once(i64 %x) {\n  ret i64 %x\n}\n'
        'define i64 @_ZN7soe_sim3own(i64 %x) {\n  ret i64 %x\n}\n'
        'define i64 @_ZN7soe_sim6caller(i64 %x) {\n'
        '  %a = call fastcc i64 @_ZN7soe_sim4once(i64 %x)\n'
        '  %b = tail call fastcc i64 @_ZN7soe_sim5twice(i64 %a)\n'
        '  %c = call fastcc i64 @_ZN7soe_sim5twice(i64 %b)\n'
        '  %d = call fastcc i64 @_ZN7soe_sim6pinned(i64 %c)\n'
        '  %e = call fastcc i64 @_ZN5numba4once(i64 %d)\n'
        '  %f = call i64 @_ZN7soe_sim3own(i64 %e)\n'
        '  ret i64 %f\n}\n')
    assert mark_single_call_copies(module) == 1
    marked = {fn.name for fn in module.functions if any(b"alwaysinline" in a for a in fn.attributes)}
    assert marked == {"_ZN7soe_sim4once"}
    passes = ll.create_new_module_pass_manager()
    passes.add_always_inliner_pass()
    passes.add_global_dead_code_eliminate_pass()
    passes.run(module, ll.create_pass_builder(ll.Target.from_default_triple().create_target_machine(),
                                              ll.create_pipeline_tuning_options()))
    names = {fn.name for fn in module.functions}
    assert "_ZN7soe_sim4once" not in names  # inlined into its caller, then removed
    assert {"_ZN7soe_sim5twice", "_ZN7soe_sim6pinned", "_ZN5numba4once", "_ZN7soe_sim3own"} <= names
    # through numba: the same probe called from one place is inlined in the package, not outside it
    probe = _Probe(np.linspace(0.0, 1.0, 5), np.linspace(1.0, 2.0, 5), np.zeros(5))
    package = _calling_kernels("soe_sim.probe_once", sites=1)
    other = _calling_kernels("tests.probe_once", sites=1)
    assert package(probe, 50) == other(probe, 50)

    def callee_defined(dispatcher, prefix):
        ir = next(iter(dispatcher.inspect_llvm().values()))
        return any(ln.startswith("define") and f"@{prefix}" in ln and "6callee" in ln for ln in ir.splitlines())

    assert not callee_defined(package, "_ZN7soe_sim10probe_once")
    assert callee_defined(other, "_ZN5tests10probe_once")
