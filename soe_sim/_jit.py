"""``njit`` for the package's kernels: one compiled version per argument *type*, not per constant.

When a jitted function calls another with a constant argument (``log_event_nb(..., -1, 0)``,
``fill_battle_features_nb(..., True)``), numba types the constant as a literal (``Literal[int](-1)``)
and compiles the callee once more for that exact value, and every copy is linked into and
re-optimised with each of its callers. The kernels never need a constant's value at compile time — a
flag is an ordinary run-time branch — so this ``njit`` makes each dispatcher forget the literal values
of its arguments before it compiles or looks up a version: a call with ``-1`` and a call with a
variable share one machine-code function. On the cold compile of ``soe_sim.simulate`` (Kiev,
balanced v balanced) this took the compilations from 529 (``log_event_nb`` alone 55 times) to 424,
and the first call from 731 to 588 s with both trees compiling side by side (benchmarks/README.md
"Session 7", docs/engine-design.md "Compile time").

For the same reason a call from another kernel is resolved with every signed integer scalar narrower
than 64 bits taken as ``int64``: a side or an area read from an ``int8`` / ``int16`` array
(``orders.order_side[o]``) and the same value computed in ``int64`` (``1 - s``) share one version,
and numba converts the narrow value at the call (a widening that keeps every value). Without it,
about fifty kernels were compiled twice or more (``log_event_nb`` 18 times, the event kernels twice
each), every copy linked into its callers. Arrays keep their dtype: an ``int8`` array and an
``int64`` array are different code.

``internal=True`` marks a kernel that only other kernels call: numba then builds no Python entry
point for it (``no_cpython_wrapper``, ``no_cfunc_wrapper``). That wrapper unboxes every argument
from Python objects, and for the loop's kernels, which take the state, the configuration and the
scratch as named tuples of hundreds of arrays, it was a large share of the cold compile (numba's
``create_cpython_wrapper`` alone: 70 of 496 profiled seconds, before LLVM optimised and generated
the wrappers). Calling an internal kernel from Python raises ``TypeError`` (numba would jump to a
null entry point); ``tests/test_jit.py`` checks that no Python code of the package, the tests, the
benchmarks, ``analysis`` or the notebooks names one.

The other options are numba's (``cache``, ``_nrt``, ``parallel``, ``inline``...), passed through
unchanged.

**No negative-index wraparound in the package's kernels.** numba compiles ``a[i]`` with a signed
``i`` as ``a[i + len(a)] if i < 0 else a[i]`` (Python's meaning of a negative index): three more
instructions at every array access, and one more register — the array's length, often reloaded from
the stack in the large game-loop kernels. The kernels never index with a negative value: ``-1`` means
"none" (no area, no block) and is tested before it is used, which ``tests/test_jit.py`` checks by
playing seeded games of every scenario compiled with ``NUMBA_BOUNDSCHECK=1``, where any negative
index raises ``IndexError`` (a slow test). So importing this module replaces numba's
``numba.np.arrayobj.fix_integer_index`` by a version that leaves a signed index as it is in the
functions of the ``soe_sim`` package — those whose compiled name starts with ``_ZN7soe_sim``; every
other function (numba's own implementations, the user's and the tests' kernels) keeps numba's
wraparound. Measured on Kiev, one thread: +5 % games/s for balanced v balanced, +7 % for random v
random, the same games (benchmarks/README.md "Session 13"). Should numba's internals not be as
expected (another version), nothing is replaced and the kernels are compiled as numba does by default.
Under ``NUMBA_DISABLE_JIT=1`` the kernels run as Python, where a negative index does wrap: the reason
the kernels must not rely on either behaviour.

**Slim calls between kernels.** numba passes a named tuple as its flattened fields (seven words per 1-d
array), so a call that hands the state, the orders, the map and the policy set to a kernel LLVM did not
inline pushes hundreds of words on the stack — the game loop's call of the scripted ORDER scores, 811 —
although the callee reads a few dozen of them. A sampled profile of balanced Kiev games put 19 % of the
samples on ``push`` instructions, most of them before such calls (benchmarks/README.md "Session 24").
LLVM removes the arguments a function never reads (dead-argument elimination), but only from a function
no other module can call, and numba links each callee into its caller's module as a ``linkonce_odr``
copy, visible outside. So importing this module makes numba, once it has optimised a library as usual,
(1) keep that module as the one callers link (numba's own recipe: its functions as ``linkonce_odr``
copies, which the callers merge and inline as before), then (2) in the module that becomes the
library's machine code, give the package's linked-in copies internal linkage — the library's own
functions keep theirs, so every entry point, cache and Python wrapper is as before — and run
dead-argument elimination, the fast calling convention and dead-code elimination
(:func:`_slim_calls`). Only the calls change, not what a kernel computes: the games are identical
(``benchmarks/perf_reference.py``). Should numba's internals not be as expected, nothing is replaced.
A profile's symbols then come from the objects' symbol tables (``benchmarks/profile_games.py``): the
engine exports only the libraries' own functions. (3) An internal copy that the module calls from one
place only is then inlined there (:func:`mark_single_call_copies`; LLVM's own inliner gives such a
function a large bonus, since the copy disappears, but it ran before the copies became internal): a
call that still passed hundreds of words becomes straight-line code. Kiev balanced v balanced +2 %,
random play unchanged, the cold compile 22 s longer (278.9 s against 256.6 s: the inlined code is compiled
in its caller; benchmarks/README.md "Session 25"); inlining the
large kernels called from two or three places as well made the games 3–7 % slower and the cold compile
70 % longer.

**One cache stamp for all the package's kernels.** numba keeps each kernel's compiled code in its cache
(``__pycache__``, or ``NUMBA_CACHE_DIR``) with a stamp of the kernel's *own* source file, and reuses it
while that file is unchanged. But the game loop inlines kernels from a dozen files: after an edit of
``policies.py`` alone (a new policy, docs/policies.md), the loop in ``game/nb.py`` would still be loaded
with the old policies compiled into it, and the game would silently play the old code. So importing this
module gives every kernel of the package the same stamp: a SHA-256 of all the package's source files that
define kernels (:func:`kernel_sources_stamp`). Any edit of one of them makes the next run compile the
whole engine again (several minutes, once); edits of other files (the CLI, reports) and of the data
files do not. Kernels outside the package keep numba's own stamps.
"""
from __future__ import annotations

import functools
import hashlib
import re
import sys
from pathlib import Path

import numba
from numba.core import types
from numba.core.registry import CPUDispatcher


def _call_type(t):
    """The type a call from another kernel is compiled and resolved for: no literal value, and a
    signed integer scalar narrower than 64 bits widened to ``int64`` (module docstring)."""
    t = types.unliteral(t)
    if isinstance(t, types.Integer) and t.signed and t.bitwidth < 64:
        return types.int64
    return t


def _unliteral_args(args):
    return tuple(_call_type(a) for a in args)


def _typed_by_type_only(dispatcher):
    """Make ``dispatcher`` compile and resolve calls from other kernels on :func:`_call_type` argument
    types (no literals, narrow signed integers as ``int64``). Under ``NUMBA_DISABLE_JIT=1`` numba
    returns the plain Python function, which is returned as it is (the kernels then run as Python:
    slow, but steppable in a debugger and countable by a profiler)."""
    if not isinstance(dispatcher, CPUDispatcher):
        return dispatcher
    resolve = dispatcher.get_call_template

    def get_call_template(args, kws):
        return resolve(_unliteral_args(args), {k: _call_type(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher


PACKAGE_SYMBOL_PREFIX = "_ZN7soe_sim"
"""The start of the compiled (mangled) name of every function of the ``soe_sim`` package."""


def _install_no_wraparound():
    """Replace ``numba.np.arrayobj.fix_integer_index`` by one that does not wrap a negative signed index
    in the package's functions (module docstring). Returns whether it is (now) installed."""
    try:
        from numba.np import arrayobj
    except ImportError:  # pragma: no cover - a numba without the module: default code
        return False
    numba_fix = getattr(arrayobj, "fix_integer_index", None)
    if numba_fix is None:  # pragma: no cover - another numba: default code
        return False
    if getattr(numba_fix, "soe_sim_no_wraparound", False):
        return True

    def fix_integer_index(context, builder, idxty, idx, size):
        if idxty.signed and builder.function.name.startswith(PACKAGE_SYMBOL_PREFIX):
            return context.cast(builder, idx, idxty, types.intp)
        return numba_fix(context, builder, idxty, idx, size)

    fix_integer_index.soe_sim_no_wraparound = True
    arrayobj.fix_integer_index = fix_integer_index
    return True


NO_WRAPAROUND = _install_no_wraparound()
"""Whether the package's kernels are compiled without negative-index wraparound (module docstring)."""


_PACKAGE_DIR = Path(__file__).resolve().parent


def sources_stamp(root: Path) -> str:
    """SHA-256 of every ``*.py`` file below ``root`` that defines kernels (its text names ``njit``), with
    their paths relative to ``root``."""
    digest = hashlib.sha256()
    for path in sorted(Path(root).rglob("*.py")):
        data = path.read_bytes()
        if b"njit" in data:
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + data + b"\0")
    return digest.hexdigest()


@functools.lru_cache(maxsize=1)
def kernel_sources_stamp() -> str:
    """:func:`sources_stamp` of the package, read once per process: the freshness stamp of each of its
    kernels' numba cache (module docstring)."""
    return sources_stamp(_PACKAGE_DIR)


def _install_package_cache_stamp():
    """Make the numba cache of a kernel of this package stale whenever any kernel source of the package
    changes, not only its own file (module docstring). Returns whether it is (now) installed."""
    try:
        from numba.core import caching
    except ImportError:  # pragma: no cover - a numba without the module: numba's own stamps
        return False
    mixin = getattr(caching, "_SourceFileBackedLocatorMixin", None)
    numba_stamp = getattr(mixin, "get_source_stamp", None)
    if numba_stamp is None:  # pragma: no cover - another numba: numba's own stamps
        return False
    if getattr(numba_stamp, "soe_sim_package_stamp", False):
        return True

    def get_source_stamp(self):
        py_file = getattr(self, "_py_file", None)
        if py_file is not None and not getattr(sys, "frozen", False):
            try:
                inside = Path(py_file).resolve().is_relative_to(_PACKAGE_DIR)
            except OSError:  # pragma: no cover - an unreadable path: numba's stamp
                inside = False
            if inside:
                return ("soe_sim kernel sources", kernel_sources_stamp())
        return numba_stamp(self)

    get_source_stamp.soe_sim_package_stamp = True
    mixin.get_source_stamp = get_source_stamp
    return True


PACKAGE_CACHE_STAMP = _install_package_cache_stamp()
"""Whether a change to any kernel source of the package makes every cached kernel of it stale (module
docstring)."""


def internalize_package_copies(module) -> int:
    """Give every package function that ``module`` holds as a linked-in copy (``linkonce_odr``: a
    callee's library linked into its caller's) internal linkage; returns how many (module docstring,
    "Slim calls between kernels"). The module's own functions (external linkage) keep theirs."""
    import llvmlite.binding as ll

    n = 0
    for fn in module.functions:
        if (not fn.is_declaration and fn.linkage == ll.Linkage.linkonce_odr
                and fn.name.startswith(PACKAGE_SYMBOL_PREFIX)):
            fn.linkage = ll.Linkage.internal
            n += 1
    return n


def _slim_calls(library) -> int:
    """After numba's optimisation of ``library``'s final module: keep the module as numba would link it
    into callers, then internalize the package's linked-in copies in the module that becomes machine code
    and let LLVM drop the arguments they do not read (module docstring). Returns the number of functions
    internalized."""
    import llvmlite.binding as ll

    module = library._final_module
    if library._shared_module is None:
        # What numba's _get_module_for_linking makes of the module: its own functions as linkonce_odr
        # copies, which the callers' modules merge (one copy each) and may inline as before.
        shared = module.clone()
        for fn in shared.functions:
            if not fn.is_declaration and fn.linkage == ll.Linkage.external:
                fn.linkage = ll.Linkage.linkonce_odr
        library._shared_module = shared
    n = internalize_package_copies(module)
    if n:
        pass_builder = library._codegen._pass_builder()
        passes = ll.create_new_module_pass_manager()
        passes.add_global_opt_pass()  # internal functions called directly: the fast calling convention
        passes.add_dead_arg_elimination_pass()  # arguments (fields of named tuples) the callee never reads
        passes.add_aggressive_dce_pass()  # the loads that only fed the removed arguments
        passes.add_global_dead_code_eliminate_pass()
        passes.run(module, pass_builder)
        if mark_single_call_copies(module):
            passes = ll.create_new_module_pass_manager()
            passes.add_always_inliner_pass()
            passes.add_global_dead_code_eliminate_pass()  # the inlined copies, now without a caller
            passes.run(module, pass_builder)
    return n


_CALLEE = re.compile(r'\bcall [^@\n]*@"?(' + PACKAGE_SYMBOL_PREFIX + r'[^"\s(]+)"?\(')


def mark_single_call_copies(module) -> int:
    """Mark ``alwaysinline`` every internal package function of ``module`` that exactly one call
    instruction of the module calls (module docstring, "Slim calls between kernels", item 3); returns how
    many. Functions marked ``noinline`` and functions without a call are left alone. (Counting the calls
    in the module's text: llvmlite has no use lists, and a walk over every instruction from Python is
    slower.)"""
    import llvmlite.binding as ll

    calls: dict[str, int] = {}
    for name in _CALLEE.findall(str(module)):
        calls[name] = calls.get(name, 0) + 1
    n = 0
    for fn in module.functions:
        if (fn.is_declaration or fn.linkage != ll.Linkage.internal or calls.get(fn.name, 0) != 1
                or any(b"noinline" in attr for attr in fn.attributes)):
            continue
        fn.add_function_attribute("alwaysinline")
        n += 1
    return n


def _install_slim_calls():
    """Run :func:`_slim_calls` at the end of numba's optimisation of every library (module docstring).
    Returns whether it is (now) installed."""
    try:
        import llvmlite.binding as ll
        from numba.core import codegen
    except ImportError:  # pragma: no cover - a numba without the module: numba's code as it is
        return False
    library_class = getattr(codegen, "CPUCodeLibrary", None)
    numba_optimize = getattr(library_class, "_optimize_final_module", None)
    passes = getattr(ll, "create_new_module_pass_manager", None)  # llvmlite's new pass manager
    needed = ("add_global_opt_pass", "add_dead_arg_elimination_pass", "add_aggressive_dce_pass",
              "add_global_dead_code_eliminate_pass", "add_always_inliner_pass")
    if (numba_optimize is None or passes is None or not hasattr(library_class, "_get_module_for_linking")
            or not hasattr(getattr(codegen, "JITCPUCodegen", None), "_pass_builder")
            or not all(hasattr(ll.ModulePassManager, name) for name in needed)):  # pragma: no cover
        return False  # another numba or llvmlite: numba's code as it is
    if getattr(numba_optimize, "soe_sim_slim_calls", False):
        return True

    def _optimize_final_module(self):
        numba_optimize(self)
        _slim_calls(self)

    _optimize_final_module.soe_sim_slim_calls = True
    library_class._optimize_final_module = _optimize_final_module
    return True


SLIM_CALLS = _install_slim_calls()
"""Whether calls between the package's kernels pass only the arguments the callee reads (module
docstring)."""


class InternalDispatcher(CPUDispatcher):
    """The dispatcher of an ``internal=True`` kernel: compiled without a Python entry point, so it
    may only be called from jitted code (module docstring)."""

    def __call__(self, *args, **kwargs):
        name = f"{self.py_func.__module__}.{self.py_func.__qualname__}"
        raise TypeError(f"{name} is an internal kernel (njit(internal=True): compiled without a Python "
                        f"entry point); call it from a jitted function, or remove internal=True")


def njit(*args, **options):
    """:func:`numba.njit` whose dispatcher ignores literal argument values (module docstring).

    Used as ``@njit(cache=True, _nrt=False)``; a bare ``@njit`` works too. ``internal=True``: no
    Python entry point (module docstring).
    """
    if args and callable(args[0]) and not options:
        return _typed_by_type_only(numba.njit(args[0]))
    if args:
        raise TypeError("soe_sim._jit.njit takes keyword options only (no explicit signatures)")
    internal = options.pop("internal", False)
    if internal:
        options.update(no_cpython_wrapper=True, no_cfunc_wrapper=True)

    def decorate(func):
        dispatcher = numba.njit(**options)(func)
        if internal and isinstance(dispatcher, CPUDispatcher):
            dispatcher.__class__ = InternalDispatcher
        return _typed_by_type_only(dispatcher)

    return decorate


_NOTIFIED: set[int] = set()


def has_compiled_version(dispatcher) -> bool:
    """Whether ``dispatcher`` has a version in memory or a fresh index in numba's on-disk cache (a
    cache written for this source file and numba version; ``False`` when numba's cache internals are
    not as expected; ``True`` for a plain function, under ``NUMBA_DISABLE_JIT=1``: nothing to compile)."""
    if not isinstance(dispatcher, CPUDispatcher):
        return True
    if dispatcher.overloads:
        return True
    try:
        return bool(dispatcher._cache._cache_file._load_index())
    except (AttributeError, OSError, EOFError, ValueError):
        return False


def cold_compile_notice(dispatcher, what: str = "the game engine", stream=None) -> bool:
    """Tell the user on ``stream`` (stderr) that ``dispatcher`` is about to be compiled from scratch,
    once per process: the cold compile of the game loop takes minutes (about 4–5 on the project's
    2-core machine, benchmarks/README.md "Session 24"), and a progress bar that stays at zero for that
    long looks like a hang. Returns whether the notice was given."""
    if id(dispatcher) in _NOTIFIED or has_compiled_version(dispatcher):
        return False
    _NOTIFIED.add(id(dispatcher))
    print(f"soe_sim: compiling {what} for this machine (first run only: several minutes; later runs load "
          f"it from numba's cache)...", file=stream or sys.stderr, flush=True)
    return True
