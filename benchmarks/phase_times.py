"""Where a game's time goes, inclusive: cycles spent in each phase and decision family of the game loop.

Run::

    .venv/bin/python benchmarks/phase_times.py --polish balanced --soviet balanced --games 2000

A sampling profile (``profile_games.py`` + ``perf``) gives self time per machine-code function, and LLVM
inlines most of the engine into the batch kernel, so it cannot say what a phase costs with everything it
calls. This script copies the package into a temporary directory and, with :mod:`ast`, puts a cycle
counter (LLVM's ``readcyclecounter``, the x86 TSC) around every call statement listed in ``REGIONS`` —
the phases of the game loop (``play_game_policies_nb``), the calls inside order placement, order
execution, leader windows, battles, card play and the reinforcement phase, and the searches inside the
placement tables, the move listing and the leader listing (a ``module:function`` in the table names a
function of another module; counters are kept off per-row calls, whose own cost would show). Each counter adds
the cycles and the calls of its region into one array. The copy compiles in a cache directory of its own (the
counters hold that array's address, so the compiled code is valid for one process only: about five
minutes of compilation per run), plays ``--games`` games after a warm-up of eight, and reports per region
its share of the game's cycles, calls per game, nanoseconds per call and microseconds per game.

Regions are inclusive and nested (a placement region is inside "order placement"). Each counter reads the TSC
twice; their cost did not show in session 27 (the instrumented games ran as fast as release builds measured the
same hour; ``games_per_second_instrumented`` is reported). A region whose call is not found in the source stops
the script with its name: the list follows the engine's code.
"""
from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import click

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _output import emit_json, game_options  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LOOP = "soe_sim/engine/game/nb.py"

# One region per line: the function whose body holds the call, the called kernel, the region's label; a
# label's parts before " / " name the enclosing region, so the report reads as a tree. (A table of text, not
# Python names: tests/test_jit.py checks that no Python code names an internal kernel.)
REGION_TABLE = """
play_games_serial_nb    play_game_policies_nb               game
play_games_serial_nb    copy_state_into_nb                  game start: copy of the start position
play_games_serial_nb    reduce_game_nb                      reduce the game's log (simulate)
play_game_policies_nb   replenish_phase_nb                  replenish (SoE 6.0)
play_game_policies_nb   reinforcement_phase_nb              reinforcement phase (SoE 8.0)
play_game_policies_nb   arrivals_nb                         scheduled arrivals
play_game_policies_nb   card_play_nb                        card play (SoE 7.1)
play_game_policies_nb   update_access_nb                    access masks (G15, G16)
play_game_policies_nb   place_orders_nb                     order placement (SoE 7.2)
play_game_policies_nb   leader_window_nb                    leader windows (SoE 9.0)
play_game_policies_nb   execute_orders_nb                   order execution (SoE 7.3, 7.5, 7.6)
play_game_policies_nb   battles_nb                          battles (SoE 7.4)
play_game_policies_nb   supply_nb                           supply (SoE 7.7)
play_game_policies_nb   stacking_nb                         stacking (SoE 7.33)
play_game_policies_nb   control_nb                          control (SoE 7.8)
place_orders_nb         placement_tables_nb                 order placement / placement tables
place_orders_nb         legal_orders_from_tables_nb         order placement / ORDER listing
place_orders_nb         order_scores_cached_nb              order placement / scripted ORDER scores
place_orders_nb         decide_scores_nb                    order placement / scripted choice
place_orders_nb         fill_order_features_cached_nb       order placement / ORDER features (other policies)
place_orders_nb         decide_nb                           order placement / choice (other policies)
_execute_order_nb       legal_moves_scratch_nb              order execution / move listing
_execute_order_nb       moves_after_move_nb                 order execution / move rows after a move
_execute_order_nb       legal_rail_nb                       order execution / rail listing
_execute_order_nb       fill_move_features_scratch_nb       order execution / move features
_execute_order_nb       apply_move_nb                       order execution / move applied
_execute_order_nb       execute_recon_nb                    order execution / Recon
_execute_order_nb       withdraw_loss_options_scratch_nb    order execution / Withdraw loss options
_execute_order_nb       execute_withdraw_choice_scratch_nb  order execution / Withdraw
leader_window_nb        legal_leader_orders_scratch_nb      leader windows / leader listing
leader_window_nb        fill_leader_features_cached_nb      leader windows / leader features
leader_window_nb        _use_leader_nb                      leader windows / leader order given
battles_nb              find_battles_scratch_nb             battles / find battles
battles_nb              _soe_battle_cards_nb                battles / battle and combat card choices
battles_nb              _battle_cards_after_draw_nb         battles / battle and combat card choices (EatS)
battles_nb              resolve_battle_scratch_nb           battles / resolution, losses, retreats
battles_nb              advance_nb                          battles / advance after battle
card_play_nb            legal_card_plays_nb                 card play / card listing
card_play_nb            fill_card_play_features_nb          card play / card features
card_play_nb            fill_card_play_event_features_nb    card play / event features
card_play_nb            resolve_event_nb                    card play / events resolved
reinforcement_phase_nb  legal_combine_pairs_nb              reinforcement phase / combine listing
reinforcement_phase_nb  legal_strengthen_nb                 reinforcement phase / strengthen listing
reinforcement_phase_nb  legal_build_pairs_nb                reinforcement phase / build listing
reinforcement_phase_nb  fill_reinforce_pair_features_nb     reinforcement phase / features
engine.orders.nb:placement_tables_nb  presence_nb             order placement / placement tables / presence
engine.orders.nb:placement_tables_nb  edge_blocked_nb         order placement / placement tables / closed links
engine.orders.nb:placement_tables_nb  side_depots_into_nb     order placement / placement tables / depots
engine.orders.nb:placement_tables_nb  distances_across_nb     order placement / placement tables / Recon range
engine.orders.nb:placement_tables_nb  reach_sets_into_nb      order placement / placement tables / movement (area sets)
engine.orders.nb:placement_tables_nb  reach_into_nb           order placement / placement tables / movement (links)
engine.orders.nb:_moves_impl  presence_nb                     order execution / move listing / presence
engine.orders.nb:_moves_impl  edge_blocked_nb                 order execution / move listing / closed links
engine.orders.nb:_moves_impl  reverse_reach_sets_nb           order execution / move listing / reach to the order's area
engine.orders.nb:_moves_impl  reach_sets_into_nb              order execution / move listing / reach from a block
engine.orders.nb:_moves_impl  vias_sets_nb                    order execution / move listing / entry links
engine.leaders.nb:legal_leader_orders_scratch_nb  presence_nb       leader windows / leader listing / presence
engine.leaders.nb:legal_leader_orders_scratch_nb  edge_blocked_nb   leader windows / leader listing / closed links
engine.leaders.nb:legal_leader_orders_scratch_nb  command_range_nb  leader windows / leader listing / command range
engine.leaders.nb:legal_leader_orders_scratch_nb  reach_into_nb     leader windows / leader listing / movement
engine.leaders.nb:legal_leader_orders_scratch_nb  side_depots_into_nb  leader windows / leader listing / depots
engine.game.policies:order_scores_cached_nb  _order_cache_side_nb  order placement / scripted ORDER scores / known
card_play_nb            decide_nb                           card play / choice
card_play_nb            choose_event_target_nb              card play / event target
card_play_nb            apply_card_play_nb                  card play / card applied
execute_orders_nb       _first_side_nb                      order execution / first side
execute_orders_nb       fill_exec_order_features_scratch_nb order execution / exec-order features
execute_orders_nb       _execute_order_nb                   order execution / one order
_execute_order_nb       decide_nb                           order execution / choices within an order
_execute_order_nb       reaction_loop_nb                    order execution / Recon reactions
_execute_order_nb       filter_moves_ok_nb                  order execution / nation filter
_execute_order_nb       log_event_nb                        order execution / log events
_execute_order_nb       recon_context_nb                    order execution / recon context
_execute_order_nb       log_diff_nb                         order execution / log diff
_execute_order_nb       snapshot_nb                         order execution / snapshot
battles_nb              battle_candidates_nb                battles / candidates
battles_nb              designate_reorganizers_nb           battles / reorganizers
battles_nb              snapshot_nb                         battles / snapshot
battles_nb              battle_blocks_nb                    battles / battle blocks
battles_nb              log_diff_nb                         battles / log diff
battles_nb              log_event_nb                        battles / log events
battles_nb              log_battle_prep_nb                  battles / log prep
battles_nb              mark_battle_nb                      battles / mark
battles_nb              log_battle_vp_nb                    battles / VP log
battles_nb              reaction_loop_nb                    battles / reactions
place_orders_nb         _first_side_nb                      order placement / first side
place_orders_nb         place_order_nb                      order placement / order placed
place_orders_nb         commit_order_nb                     order placement / commit
place_orders_nb         log_event_nb                        order placement / log events
place_orders_nb         hide_inactive_nb                    order placement / hide
"""


def parse_regions(table: str) -> tuple[tuple[str, str, str], ...]:
    """``(function, callee, label)`` for each line of ``table`` (see ``REGION_TABLE``)."""
    regions = []
    for line in table.splitlines():
        if not line.strip():
            continue
        function, callee, label = line.split(None, 2)
        regions.append((function, callee, label))
    return tuple(regions)


REGIONS = parse_regions(REGION_TABLE)

TIMING_MODULE = '''"""Cycle counters of benchmarks/phase_times.py (written into a temporary copy of the package)."""
import numpy as np
from llvmlite import ir
from numba import njit
from numba.core import cgutils, types
from numba.extending import intrinsic

SLOTS = 256
TIMING = np.zeros(2 * SLOTS, np.int64)  # cycles per region, then calls per region
_ADDR = TIMING.ctypes.data


def _cycles(builder):
    fnty = ir.FunctionType(ir.IntType(64), [])
    return builder.call(cgutils.get_or_insert_function(builder.module, fnty, "llvm.readcyclecounter"), [])


@intrinsic
def tick_nb(typingctx):
    def codegen(context, builder, signature, args):
        return _cycles(builder)
    return types.int64(), codegen


@intrinsic
def acc_nb(typingctx, slot, start):
    def codegen(context, builder, signature, args):
        i, t0 = args
        now = _cycles(builder)
        i64 = ir.IntType(64)
        base = ir.Constant(i64, _ADDR).inttoptr(ir.PointerType(i64))
        p = builder.gep(base, [i])
        builder.store(builder.add(builder.load(p), builder.sub(now, t0)), p)
        p2 = builder.gep(base, [builder.add(i, ir.Constant(i64, SLOTS))])
        builder.store(builder.add(builder.load(p2), ir.Constant(i64, 1)), p2)
        return context.get_dummy_value()
    return types.void(types.int64, types.int64), codegen


@njit
def tick_py():
    return tick_nb()
'''

RUNNER = '''
import json, sys, time
from soe_sim._timing import TIMING, SLOTS, tick_py
from soe_sim.engine.game import play_games
scenario, polish, soviet, games, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
play_games(scenario, polish=polish, soviet=soviet, games=8, seed=seed + 1, threads=1)
c0 = tick_py(); t0 = time.perf_counter(); time.sleep(0.5); c1 = tick_py(); t1 = time.perf_counter()
TIMING[:] = 0
t = time.perf_counter()
play_games(scenario, polish=polish, soviet=soviet, games=games, seed=seed, threads=1)
wall = time.perf_counter() - t
json.dump({"wall_seconds": wall, "ns_per_cycle": (t1 - t0) * 1e9 / (c1 - c0),
           "cycles": TIMING[:SLOTS].tolist(), "calls": TIMING[SLOTS:].tolist()}, sys.stdout)
'''


def _call_name(node: ast.AST) -> str | None:
    """The called kernel's name when ``node`` is a statement whose value is a call (``f(...)``, ``x = m.f(...)``)."""
    value = node.value if isinstance(node, (ast.Expr, ast.Assign)) else None
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def region_file(function: str) -> tuple[str, str]:
    """The source file (relative to the checkout) and the function name of a region's ``function`` column:
    ``module:function`` (``engine.orders.nb:placement_tables_nb``) or a function of the game loop's module."""
    if ":" in function:
        module, name = function.split(":", 1)
        return "soe_sim/" + module.replace(".", "/") + ".py", name
    return LOOP, function


def instrument(source: str, path: str = LOOP, regions=REGIONS) -> str:
    """``source`` (the file ``path``) with a cycle counter around each call statement of the ``regions`` in that
    file (slot = the region's index in ``regions``). Raises ``click.ClickException`` naming a region whose call is
    not in its function."""
    tree = ast.parse(source)
    functions = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    inserts: list[tuple[int, int, int, int]] = []  # (first line, last line, column, slot)
    for slot, (qualified, callee, label) in enumerate(regions):
        file, function = region_file(qualified)
        if file != path:
            continue
        fn = functions.get(function)
        found = 0
        if fn is not None:
            for node in ast.walk(fn):
                if isinstance(node, ast.stmt) and _call_name(node) == callee:
                    inserts.append((node.lineno, node.end_lineno, node.col_offset, slot))
                    found += 1
        if not found:
            raise click.ClickException(f"{path}: no call of {callee} in {function} (region {label!r}); "
                                       "update REGION_TABLE in benchmarks/phase_times.py to the engine's code")
    lines = source.split("\n")
    for first, last, col, slot in sorted(inserts, reverse=True):
        pad = " " * col
        lines.insert(last, f"{pad}acc_nb({slot}, _tick{slot})")
        lines.insert(first - 1, f"{pad}_tick{slot} = tick_nb()")
    text = "\n".join(lines)
    # the import after the module's own imports (before its first decorated function)
    head, sep, rest = text.partition("\n@njit")
    return head + "\nfrom soe_sim._timing import acc_nb, tick_nb  # benchmarks/phase_times.py\n" + sep + rest


def _report(raw: dict, games: int, regions=REGIONS) -> dict:
    ns = raw["ns_per_cycle"]
    game_cycles = raw["cycles"][0]
    rows = []
    for slot, (_function, _callee, label) in enumerate(regions):
        calls = raw["calls"][slot]
        if calls == 0:
            continue
        cycles = raw["cycles"][slot]
        rows.append({"region": label, "share": round(cycles / game_cycles, 4),
                     "calls_per_game": round(calls / games, 2), "ns_per_call": round(cycles * ns / calls, 1),
                     "us_per_game": round(cycles * ns / games / 1e3, 2)})
    return {"games_per_second_instrumented": round(games / raw["wall_seconds"], 1),
            "us_per_game": round(game_cycles * ns / games / 1e3, 1), "ns_per_cycle": round(ns, 4),
            "regions": rows}


@click.command()
@game_options(games=2000, seed=5)
@click.option("--keep", default=None, help="Keep the instrumented copy in this (new) directory.")
@click.option("--out", default=None, help="Also write the JSON here.")
def main(scenario, polish, soviet, games, seed, keep, out):
    """Inclusive cycles per phase and decision family of ``--games`` games on one thread (JSON)."""
    work = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="soe_phase_times_"))
    try:
        shutil.copytree(ROOT / "soe_sim", work / "soe_sim", ignore=shutil.ignore_patterns("__pycache__"))
        (work / "data").symlink_to(ROOT / "data", target_is_directory=True)  # the package reads ../data
        for path in sorted({region_file(function)[0] for function, _callee, _label in REGIONS}):
            (work / path).write_text(instrument((work / path).read_text(), path))
        (work / "soe_sim" / "_timing.py").write_text(TIMING_MODULE)
        env = dict(os.environ, PYTHONPATH=str(work), NUMBA_CACHE_DIR=str(work / "numba_cache"))
        click.echo(f"compiling the instrumented copy in {work} (about five minutes) ...", err=True)
        proc = subprocess.run([sys.executable, "-c", RUNNER, scenario, polish, soviet, str(games), str(seed)],
                              env=env, cwd=work, capture_output=True, text=True)  # cwd: no other soe_sim first
        if proc.returncode != 0:
            raise click.ClickException(f"the instrumented run failed:\n{proc.stderr[-3000:]}")
        raw = json.loads(proc.stdout.strip().splitlines()[-1])
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    result = {"scenario": scenario, "polish": polish, "soviet": soviet, "games": games, "seed": seed,
              **_report(raw, games)}
    emit_json(result, out)


if __name__ == "__main__":
    main()
