"""The kernels run as plain Python (``NUMBA_DISABLE_JIT=1``) play the very games numba's machine code
plays: every scenario, both rulesets, three policy pairs.

This is the oracle of the compiled code's semantics as a whole (integer widths and wrap-around,
uninitialised scratch, caches that must hold pure values, reference counting): the same source run
by the interpreter and by LLVM must agree on every event. It is also what makes the Python mode
usable for debugging a game step by step and for counting calls per game
(``benchmarks/count_calls.py``), so a change that breaks it (an attribute write to a record, an
``int8`` shift) fails here. The Python side runs in a subprocess: numba reads ``NUMBA_DISABLE_JIT``
once, at import.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from soe_sim.engine.game import play_game, play_games
from soe_sim.sim import simulate

# plays games; its tests wait for the compiled game loop themselves, after the interpreted games (conftest.py)
pytestmark = pytest.mark.game_loop(own_wait=True)

SCENARIOS = ["tutorial", "kiev-offensive", "tukhachevsky-offensive", "battle-of-warsaw", "campaign-1920"]
RULESETS = ["soe", "eats"]
PAIRS = [("random", "random"), ("balanced", "balanced"), ("aggressive", "defensive")]
SEED = 11
GAMES = 1  # per pair, besides the detailed game; the slow tier plays 3 (test_python_and_numba_play_more_games)
GAMES_SLOW = 3

_SCRIPT = textwrap.dedent("""
    import json, sys
    import numba
    assert numba.config.DISABLE_JIT
    from soe_sim.engine.game import play_game, play_games
    from soe_sim.sim import simulate
    scenarios, rulesets, pairs, seed, games = json.loads(sys.argv[1])
    out = {}
    for sc in scenarios:
        for ruleset in rulesets:
            for polish, soviet in pairs:
                key = f"{sc}/{ruleset}/{polish}/{soviet}"
                rows = play_games(sc, games, seed=seed, threads=1, polish=polish, soviet=soviet, raw=True,
                                  ruleset=ruleset)
                g = play_game(sc, seed=seed + 1, polish=polish, soviet=soviet, log_detail=True,
                              log_capacity=20000, ruleset=ruleset)
                out[key] = {"rows": rows.tolist(), "text": g.text()}
        # the event-log reduction of simulate (reduce_game_nb): per-game stats, VP trajectories, battles
        r = simulate(sc, "balanced", "aggressive", games=games, seed=seed, threads=1, trajectories=True,
                     battles=True)
        out[f"{sc}/simulate"] = {k: getattr(r, k).to_json(orient="split") for k in ("games", "trajectories",
                                                                                  "battles")}
    json.dump(out, sys.stdout)
""")


def _python_games(games):
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONWARNINGS="ignore")
    args = json.dumps([SCENARIOS, RULESETS, PAIRS, SEED, games])
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, args], capture_output=True, text=True, env=env,
                          timeout=2400)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def python_games(request):
    # The interpreted games need no compiled code, so they are played first, while another pytest-xdist
    # worker may still be compiling the game loop (conftest.py); the compiled side then waits for it.
    games = _python_games(GAMES)
    request.getfixturevalue("game_loop_compiled")
    return games


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_python_and_numba_play_the_same_games(python_games, scenario):
    """SoE 5.0-10.2 as a whole: result rows of ``play_games``, the detailed narrated log of
    ``play_game`` and ``simulate``'s frames (the event-log reduction) are the same under the
    interpreter and the compiled kernels."""
    _compare(python_games, scenario, GAMES)


@pytest.mark.slow
def test_python_and_numba_play_more_games(request):
    """The same with more games per pair (slow tier)."""
    python_games = _python_games(GAMES_SLOW)
    request.getfixturevalue("game_loop_compiled")  # after the interpreted games, as in python_games
    for scenario in SCENARIOS:
        _compare(python_games, scenario, GAMES_SLOW)


def _compare(python_games, scenario, games):
    for ruleset in RULESETS:
        for polish, soviet in PAIRS:
            key = f"{scenario}/{ruleset}/{polish}/{soviet}"
            py = python_games[key]
            rows = play_games(scenario, games, seed=SEED, threads=1, polish=polish, soviet=soviet, raw=True,
                              ruleset=ruleset)
            np.testing.assert_array_equal(rows, np.array(py["rows"], dtype=np.int64), err_msg=key)
            g = play_game(scenario, seed=SEED + 1, polish=polish, soviet=soviet, log_detail=True,
                          log_capacity=20000, ruleset=ruleset)
            assert g.text() == py["text"], key
    r = simulate(scenario, "balanced", "aggressive", games=games, seed=SEED, threads=1, trajectories=True,
                 battles=True)
    for k in ("games", "trajectories", "battles"):
        assert getattr(r, k).to_json(orient="split") == python_games[f"{scenario}/simulate"][k], (scenario, k)
