"""Exact calls per game of every engine kernel, and who calls them: the kernels run as Python.

Run::

    .venv/bin/python benchmarks/count_calls.py --polish random --soviet random --games 3 \\
        --callers clear_bfs_into_nb --callers presence_nb

A sampling profile (``profile_games.py`` + ``perf``) says where the compiled games spend their time,
but numba's code keeps no frame pointers, so it cannot say how often a kernel runs or who called it.
This script re-executes itself with ``NUMBA_DISABLE_JIT=1`` — the same kernels run by the interpreter,
which plays the very games the machine code plays (``tests/test_pure_python.py``) — plays ``--games``
games of ``--scenario`` with :func:`soe_sim.engine.game.play_games` under :mod:`cProfile`, and prints
JSON: for each kernel of ``soe_sim.engine`` and ``soe_sim.battle``, its calls per game (exact) and its
interpreter time per game (``python_ms_per_game``: a rough measure of the work it does, not of its
compiled time), and for each ``--callers`` name the calls per game from each caller. Kernels that
LLVM inlines still count here: these are calls in the source, not in the machine code.

``decisions`` lists, per decision kind (``soe_sim.engine.game.Decision``), the decisions a game asks
(``per_game``), those with a choice (``with_choice_per_game``: more than one option) and their mean number
of options (``mean_options``): the calls of ``decide_nb`` and, for a scripted side's ORDER decisions, of the
kernel that chooses from already known scores, counted by wrapping them (the interpreted loop looks them up
at each call). ``order_listing`` sums, over the ORDER listings that offer rows, what the listing works on: the
side's blocks and distance rows, the listings where a placed order holds a block it cannot hand over and how many
such blocks, the front's areas and those with a capability (the areas its rows come from), and the rows.
"""
from __future__ import annotations

import cProfile
import os
import pstats
import subprocess
import sys
import time

import click

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _output import emit_json, game_options  # noqa: E402

_PACKAGES = ("soe_sim/engine/", "soe_sim/battle/")


def _count(scenario: str, polish: str, soviet: str, games: int, seed: int, ruleset: str, callers: tuple,
           top: int) -> dict:
    from soe_sim.engine.game import Decision, nb, play_games

    asked: dict[int, list[int]] = {}  # kind -> [decisions, with a choice, options of those with a choice]

    def count(kind, n):
        row = asked.setdefault(int(kind), [0, 0, 0])
        row[0] += 1
        if n > 1:
            row[1] += 1
            row[2] += int(n)

    # decide_nb, and the scripted ORDER choice of game.nb.place_orders_nb (an internal kernel: Python code
    # does not name one, tests/test_jit.py, so it is found by its prefix; here it runs as Python anyway)
    originals = {name: getattr(nb, name) for name in vars(nb) if name.startswith("decide_") and name.endswith("_nb")}
    assert len(originals) == 2, sorted(originals)
    decide = nb.decide_nb
    (scores_name,) = [name for name in originals if name != "decide_nb"]
    decide_scores = originals[scores_name]

    def counted_decide(policies, side, kind, n, *rest):
        count(kind, n)
        return decide(policies, side, kind, n, *rest)

    def counted_decide_scores(policies, side, n, *rest):
        count(Decision.ORDER, n)
        return decide_scores(policies, side, n, *rest)

    # the ORDER listing (orders.nb.legal_orders_from_tables_nb, called through its module): what a decision
    # works on — the side's blocks and distance rows, the slots holding a block they cannot hand over (their
    # rows are computed again), the front's areas and those with a capability (the areas the rows come from)
    from soe_sim.engine.orders import nb as onb

    listing = dict.fromkeys(("decisions", "blocks", "distance_rows", "with_held_block", "held_blocks",
                             "front_areas", "areas_with_capability", "rows"), 0)
    list_orders = onb.legal_orders_from_tables_nb

    def counted_listing(orders, m, orules, side, front, allowed, tabs, out_type, out_area, closed_row=None):
        k = list_orders(orders, m, orules, side, front, allowed, tabs, out_type, out_area, closed_row)
        if k > 0:
            held = sum(1 for o in range(int(tabs.meta[onb.M_MATCHED]))
                       if tabs.match_slot[o] >= 0 and not tabs.movable_slot[o])
            areas = [int(a) for a in tabs.front_areas[tabs.front_ptr[front]:tabs.front_ptr[front + 1]]]
            reach = [int(w) for w in tabs.cap_bits[0] | tabs.cap_bits[1]]
            listing["decisions"] += 1
            listing["blocks"] += int(tabs.meta[onb.M_NBS])
            listing["distance_rows"] += int(tabs.meta[onb.M_NF])
            listing["with_held_block"] += held > 0
            listing["held_blocks"] += held
            listing["front_areas"] += len(areas)
            listing["areas_with_capability"] += sum(1 for a in areas
                                                    if tabs.cap_mask[a] != 0 or (reach[a >> 6] >> (a & 63)) & 1)
            listing["rows"] += k
        return k

    nb.decide_nb = counted_decide
    setattr(nb, scores_name, counted_decide_scores)
    onb.legal_orders_from_tables_nb = counted_listing
    profile = cProfile.Profile()
    start = time.perf_counter()
    profile.enable()
    rows = play_games(scenario, games, seed=seed, threads=1, polish=polish, soviet=soviet, raw=True,
                      ruleset=ruleset)
    profile.disable()
    for name, fn in originals.items():
        setattr(nb, name, fn)
    onb.legal_orders_from_tables_nb = list_orders
    elapsed = time.perf_counter() - start
    stats = pstats.Stats(profile).stats
    kernels = []
    by_name: dict[str, list] = {}
    for (path, _line, name), (_cc, calls, self_time, _cum, who) in stats.items():
        path = path.replace(os.sep, "/")
        if not any(p in path for p in _PACKAGES):
            continue
        module = path[path.rindex("soe_sim/"):].removesuffix(".py").replace("/", ".")
        kernels.append({"kernel": f"{module}.{name}", "calls_per_game": round(calls / games, 2),
                        "python_ms_per_game": round(1000 * self_time / games, 3)})
        by_name.setdefault(name, []).append(who)
    kernels.sort(key=lambda k: -k["python_ms_per_game"])
    caller_table = {}
    for name in callers:
        if name not in by_name:
            raise click.BadParameter(f"no engine kernel named {name!r} ran in these games", param_hint="--callers")
        rows_by_caller: dict[str, float] = {}
        for who in by_name[name]:
            for (_path, _line, caller), (_cc, calls, _tt, _ct) in who.items():
                rows_by_caller[caller] = rows_by_caller.get(caller, 0.0) + calls / games
        caller_table[name] = {k: round(v, 2) for k, v in sorted(rows_by_caller.items(), key=lambda kv: -kv[1])}
    return {
        "scenario": scenario, "polish": polish, "soviet": soviet, "ruleset": ruleset, "games": games, "seed": seed,
        "mean_steps_per_game": float(rows[:, nb.R_STEPS].mean()),
        "python_seconds": round(elapsed, 2),
        "decisions": {Decision(k).name: {"per_game": round(c[0] / games, 2),
                                         "with_choice_per_game": round(c[1] / games, 2),
                                         "mean_options": round(c[2] / c[1], 2) if c[1] else 0.0}
                      for k, c in sorted(asked.items(), key=lambda kv: -kv[1][0])},
        "order_listing": listing,
        "kernels": kernels[:top] if top else kernels,
        "callers": caller_table,
    }


@click.command()
@game_options(games=3, seed=2)
@click.option("--ruleset", default="soe", show_default=True)
@click.option("--callers", multiple=True, help="Also list the callers of this kernel (repeatable).")
@click.option("--top", default=40, show_default=True, help="Kernels listed (0: all).")
@click.option("--out", default=None, help="Also write the JSON here.")
def main(scenario, polish, soviet, games, seed, ruleset, callers, top, out):
    if os.environ.get("NUMBA_DISABLE_JIT") != "1":
        # numba reads the switch once, at import: run again in a fresh interpreter with it set
        env = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONWARNINGS="ignore")
        sys.exit(subprocess.call([sys.executable, *sys.argv], env=env))
    emit_json(_count(scenario, polish, soviet, games, seed, ruleset, callers, top), out)


if __name__ == "__main__":
    main()
