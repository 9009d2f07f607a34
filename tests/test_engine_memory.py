"""Reference counting of the game loop: every array numba allocates while games are played is freed.

Many engine kernels are compiled without numba's reference counting (``_nrt=False``) because the
increments and decrements cost a fifth of a game's time (docs/engine-design.md). Such a kernel must
neither keep an array it was handed back from an allocating callee (a leak: the array is never freed)
nor hand a borrowed array to a counting caller (a double free). Both show in numba's allocation
statistics, which exist only when ``NUMBA_NRT_STATS=1`` is set before numba starts: hence the
subprocess. Its games load the kernels from numba's cache (same signatures as the suite's).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.game_loop  # plays games: compiled once for the session (conftest.py)

_SCRIPT = textwrap.dedent(
    """
    import gc, json, sys
    from numba.core.runtime import rtsys
    from soe_sim.engine.game import play_games
    from soe_sim.sim import simulate

    def live():
        gc.collect()
        s = rtsys.get_allocation_stats()
        return s.alloc - s.free, s.mi_alloc - s.mi_free

    allocs0 = None

    out = {}
    for ruleset in ("soe", "eats"):
        for pol in ("random", "balanced", "aggressive", "defensive"):
            opp = "defensive" if pol == "aggressive" else pol
            # the first call builds the per-process caches (memo tables, ...): not counted
            play_games("kiev-offensive", 2, seed=1, threads=1, polish=pol, soviet=opp, raw=True, ruleset=ruleset)
            before = live()
            if allocs0 is None:
                allocs0 = rtsys.get_allocation_stats().alloc
            res = play_games("kiev-offensive", int(sys.argv[1]), seed=5, threads=2, polish=pol, soviet=opp,
                             raw=True, ruleset=ruleset)
            del res
            after = live()
            out[f"{ruleset}/{pol}-{opp}"] = [after[0] - before[0], after[1] - before[1]]
    before = live()
    df = simulate("kiev-offensive", polish="balanced", soviet="aggressive", games=int(sys.argv[1]), seed=3,
                  threads=2, progress=False)
    del df
    after = live()
    out["simulate"] = [after[0] - before[0], after[1] - before[1]]
    out["allocations"] = rtsys.get_allocation_stats().alloc - allocs0
    print(json.dumps(out))
    """
)


@pytest.mark.parametrize("games", [6])
def test_games_free_every_array_they_allocate(games):
    env = dict(os.environ, NUMBA_NRT_STATS="1")
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, str(games)], env=env, capture_output=True, text=True,
                          timeout=3000)
    assert proc.returncode == 0, proc.stderr[-4000:]
    deltas = json.loads(proc.stdout.strip().splitlines()[-1])
    assert deltas.pop("allocations") > 1000  # the statistics are on (numba counts nothing without the variable)
    assert len(deltas) == 9
    # a leak leaves positive counts, a double free negative ones (or a crash above)
    assert all(d == [0, 0] for d in deltas.values()), deltas


_ALLOCATING = {"empty", "zeros", "ones", "full", "array", "copy", "empty_like", "zeros_like", "ones_like",
               "full_like", "arange", "concatenate", "unique", "argsort", "sort", "nonzero", "cumsum", "repeat",
               "hstack", "vstack", "asarray", "ascontiguousarray", "List", "Dict"}


def _njit_functions():
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "soe_sim"
    files = sorted(p for p in root.rglob("*.py") if p.name in ("nb.py", "policies.py")) + [root / "sim" / "__init__.py"]
    for path in files:
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.FunctionDef):
                continue
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and getattr(dec.func, "id", getattr(dec.func, "attr", "")) == "njit":
                    yield path.relative_to(root.parent), node, {k.arg: ast.unparse(k.value) for k in dec.keywords}


def test_every_kernel_states_its_reference_counting():
    """numba compiles a callee without an explicit ``_nrt`` with its caller's setting, so the same
    function would count references in one caller and not in another (and an allocating callee of a
    counting-free kernel would fail to compile or leak). Every kernel says which it is; inlined
    helpers take their caller's."""
    missing = [f"{p}:{node.lineno} {node.name}" for p, node, kw in _njit_functions()
               if "_nrt" not in kw and kw.get("inline") != "'always'"]
    assert not missing, missing


def test_kernels_without_reference_counting_allocate_nothing():
    import ast

    bad = []
    n_free = 0
    for p, node, kw in _njit_functions():
        if kw.get("_nrt") != "False":
            continue
        n_free += 1
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call):
                name = sub.func.attr if isinstance(sub.func, ast.Attribute) else getattr(sub.func, "id", "")
                if name in _ALLOCATING:
                    bad.append(f"{p}:{sub.lineno} {node.name} calls {name}")
    assert n_free >= 150  # the game loop's kernels (docs/engine-design.md)
    assert not bad, bad


def test_feature_buffer_is_a_view_and_an_oversized_decision_aborts_the_game():
    """``feat_buffer_nb`` never allocates (the loop runs without reference counting): a decision with
    more options than ``PolicySet.feat_buf`` has rows ends the game as aborted (reason ``features``,
    docs/rules.md G13) and the decision that follows returns option 0."""
    import numpy as np

    from soe_sim.engine.game import AbortReason, game_setup, nb
    from soe_sim.engine.game import policies as pnb
    from soe_sim.engine.game.work import policy_set

    s = game_setup("tutorial")
    ids = np.array([pnb.POLICY_BALANCED, pnb.POLICY_RANDOM], np.int64)
    pol = policy_set(s, ids, nb.default_params_nb(ids))
    assert pol.feat_buf.shape == (pnb.FEAT_ROWS, pnb.N_FEAT) and pol.score_buf.shape == (pnb.FEAT_ROWS,)
    small = pol._replace(feat_buf=np.full((3, pnb.N_FEAT), 7.0), score_buf=np.zeros(3))
    ctr = np.zeros(16, np.int64)
    feat = nb.feat_buffer_nb(small, 0, 3, ctr)
    assert feat.shape == (3, pnb.N_FEAT) and not feat.any() and ctr[nb.C_ABORT] == 0
    assert np.shares_memory(feat, small.feat_buf)
    assert nb.feat_buffer_nb(small, 1, 3, ctr).shape[0] == 0  # random reads no features
    assert nb.feat_buffer_nb(small, 0, 4, ctr).shape[0] == 0
    assert AbortReason(int(ctr[nb.C_ABORT])).name == "FEATURES"
    rng = np.array([1, 2], np.uint64)
    assert nb.decide_nb(small, 0, 0, 4, small.feat_buf[:0], rng, ctr, s.cfg) == 0
