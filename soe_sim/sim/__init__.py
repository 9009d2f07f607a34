"""Running many games: :func:`simulate`, per-game statistics, summaries and the adaptive mode.

:func:`simulate` plays ``games`` seeded games of a scenario with a policy per side and returns one
row per game (columns :data:`GAME_COLUMNS` plus one ``held_<city>`` column per key city). Game ``i``
of seed ``s`` is the engine's game ``play_game(scenario, seed=(s, i), polish=..., soviet=...)``
(:mod:`soe_sim.engine.game`), so every row can be replayed from its ``seed`` and ``game`` columns,
and the result is bit-identical at any thread count (each game depends only on its own seed).

The per-game statistics are reduced inside the kernel from the game's event log (event kinds:
:data:`soe_sim.engine.game.EVENT`) and from the final position, so no event log ever leaves numba.
On request the same pass records the VP track after every phase (``trajectories=True``) and one row
per battle (``battles=True``); :func:`simulate` then returns a :class:`Simulation`.

What the events cannot tell yet is listed in :data:`MISSING_COLUMNS`. VP events carry their cause,
a battle's split by sub-cause (great victory, encirclement, leader killed / captured), so
``vp_battle`` is broken down; ``LEADER_LOST`` and ``LEADER_ORDER`` events give the SoE 9.0 columns.

Adaptive mode (``ci_width=W``): games are played in batches until the widest of the 95 % Wilson
intervals of the Polish and the Soviet win rates is narrower than ``W`` (or ``games`` are played).
The batches are game-index ranges of the same seed, so the games played and the stopping point do
not depend on the thread count either.
"""
from __future__ import annotations

import json
import math
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from soe_sim.data.enums import Side
from soe_sim.engine.game import nb as gnb
from soe_sim.engine.game.nb import N_RES
from soe_sim.engine.game.nb import (  # the stats and battle-row layout of the batch kernel
    BT_AREA, BT_ATTACKER, BT_ATT_LOSSES, BT_DEF_LOSSES, BT_FOUGHT, BT_GREAT, BT_PHASE, BT_ROUND, BT_WINNER, N_BT,
    N_STATS, S_ATTACKS, S_BATTLES, S_BATTLES_FOUGHT, S_BATTLES_WON, S_BLOCKS_END, S_BUILDS, S_CITIES_CAPTURED,
    S_CITIES_END, S_CITY_VP_END, S_DESTROYED_BATTLE, S_ELIM_BATTLE, S_ELIM_OTHER, S_ELIM_STACKING, S_ELIM_SUPPLY,
    S_ENCIRCLED, S_GARRISONS_LOST, S_GREAT_VICTORIES, S_IMMEDIATE, S_LEADERS_CAPTURED, S_LEADERS_KILLED,
    S_LEADERS_LOST, S_LEADER_ORDERS, S_OBJECTIVES, S_REINFORCEMENTS, S_SP_END, S_SP_LOST_BATTLE, S_SP_LOST_OTHER,
    S_SP_LOST_SUPPLY, S_VP_BATTLE, S_VP_CONTROL, S_VP_ENCIRCLEMENT, S_VP_GREAT_VICTORY,
    S_VP_LEADER_CAPTURED, S_VP_LEADER_KILLED, S_VP_OBJECTIVES, S_VP_OTHER, S_VP_START, S_VP_SUPPLY,
)
from soe_sim._paths import check_creatable, os_error_text
from soe_sim.errors import Problem, SoeInputError, check_count, did_you_mean
from soe_sim.random import seed_int

__all__ = [
    "simulate", "Simulation", "summarize", "win_rates", "win_interval", "play_chunk", "chunk_workers", "resolve_policy",
    "policy_label",
    "key_city_ids", "GAME_COLUMNS", "TRAJECTORY_COLUMNS", "BATTLE_COLUMNS", "MISSING_COLUMNS",
    "DEFAULT_CI_MAX_GAMES", "write_frame", "write_frames", "check_output_path", "check_output_paths",
    "check_output_dir",
]

SIDES = ("polish", "soviet")
DEFAULT_GAMES = 1000
DEFAULT_CI_MAX_GAMES = 100_000
DEFAULT_CI_BATCH = 1000
DEFAULT_BATTLE_CAP = 64  # battles recorded per game in the first pass (games with more are replayed)



def _side_cols(prefix: str, base: int) -> list[tuple[str, int]]:
    return [(f"{prefix}_{s}", base + k) for k, s in enumerate(SIDES)]


# (column, stats index) in output order
_STAT_COLUMNS: list[tuple[str, int]] = [
    ("vp_start", S_VP_START),
    ("immediate_condition", S_IMMEDIATE),
    ("battles", S_BATTLES),
    ("battles_fought", S_BATTLES_FOUGHT),
    *_side_cols("attacks", S_ATTACKS),
    *_side_cols("battles_won", S_BATTLES_WON),
    *_side_cols("great_victories", S_GREAT_VICTORIES),
    *_side_cols("sp_lost_battle", S_SP_LOST_BATTLE),
    *_side_cols("sp_lost_supply", S_SP_LOST_SUPPLY),
    *_side_cols("sp_lost_other", S_SP_LOST_OTHER),
    *_side_cols("destroyed_battle", S_DESTROYED_BATTLE),
    *_side_cols("eliminated_battle", S_ELIM_BATTLE),
    *_side_cols("eliminated_supply", S_ELIM_SUPPLY),
    *_side_cols("eliminated_stacking", S_ELIM_STACKING),
    *_side_cols("eliminated_other", S_ELIM_OTHER),
    *_side_cols("leaders_lost", S_LEADERS_LOST),
    *_side_cols("leaders_killed", S_LEADERS_KILLED),
    *_side_cols("leaders_captured", S_LEADERS_CAPTURED),
    *_side_cols("encircled", S_ENCIRCLED),
    *_side_cols("garrisons_lost", S_GARRISONS_LOST),
    *_side_cols("cities_captured", S_CITIES_CAPTURED),
    ("vp_control", S_VP_CONTROL),
    ("vp_battle", S_VP_BATTLE),
    ("vp_great_victory", S_VP_GREAT_VICTORY),
    ("vp_encirclement", S_VP_ENCIRCLEMENT),
    ("vp_leader_killed", S_VP_LEADER_KILLED),
    ("vp_leader_captured", S_VP_LEADER_CAPTURED),
    ("vp_supply", S_VP_SUPPLY),
    ("vp_objectives", S_VP_OBJECTIVES),
    ("vp_other", S_VP_OTHER),
    *_side_cols("objectives", S_OBJECTIVES),
    *_side_cols("reinforcements", S_REINFORCEMENTS),
    *_side_cols("builds", S_BUILDS),
    *_side_cols("leader_orders", S_LEADER_ORDERS),
    *_side_cols("cities_end", S_CITIES_END),
    *_side_cols("city_vp_end", S_CITY_VP_END),
    *_side_cols("sp_end", S_SP_END),
    *_side_cols("blocks_end", S_BLOCKS_END),
]

#: Columns of :func:`simulate`'s per-game frame, in order (``held_<city>`` columns follow).
GAME_COLUMNS: tuple[str, ...] = (
    "scenario", "polish", "soviet", "polish_params", "soviet_params", "seed", "game",
    "outcome", "winner", "vp", "rounds", "last_round", "last_phase", "phases", "steps", "events", "abort",
    *(c for c, _ in _STAT_COLUMNS[:2]),
    "sp_lost_polish", "sp_lost_soviet",
    "eliminated_polish", "eliminated_soviet",
    *(c for c, _ in _STAT_COLUMNS[2:]),
)

#: Column meanings (README "Running many games" repeats them).
COLUMN_DOCS = {
    "polish_params": "JSON of the Polish policy's parameter overrides ('' = the policy's defaults)",
    "seed": "batch seed; the game is play_game(scenario, seed=(seed, game), polish=..., soviet=...)",
    "game": "game index within the batch seed",
    "outcome": "finished | immediate_victory | aborted",
    "winner": "polish | soviet | '' (draw or aborted)",
    "vp": "final signed VP track (+ Polish), objectives included",
    "rounds": "rounds played (partly or fully)",
    "abort": "hard cap that aborted the game ('' none)",
    "immediate_condition": "index of the [[victory.immediate]] condition met (-1 none)",
    "sp_lost_<side>": "block SP lost in battle, out of supply and otherwise (sum of the next three)",
    "sp_lost_battle_<side>": "block SP lost in battles, including blocks eliminated for want of a retreat",
    "eliminated_<side>": "blocks destroyed or eliminated, any cause",
    "destroyed_battle_<side>": "blocks destroyed in battle (back to the force pool)",
    "eliminated_battle_<side>": "blocks eliminated permanently in battle (no retreat, leaders)",
    "garrisons_lost_<side>": "garrisons removed (battle, supply, control)",
    "leaders_killed_<side>": "SoE 9.0 leaders destroyed in battle or by a Withdraw's SP loss (1 VP each)",
    "leaders_captured_<side>": "SoE 9.0 leaders that lost a battle and could not retreat (2 VP each)",
    "encircled_<side>": "blocks other than leaders eliminated in battle for want of a retreat (SoE 7.42)",
    "vp_<cause>": "signed VP track change by cause (control, battle, supply, objectives, other)",
    "vp_battle": "signed VP of battles: great victories, encirclements, leaders killed (also by a Withdraw's "
                 "loss) and captured; the sum of vp_great_victory, vp_encirclement, vp_leader_killed and "
                 "vp_leader_captured",
    "leader_orders_<side>": "SoE 9.0 leader orders given (Sikorski's Recon and Stalin's reorganization included)",
    "held_<city>": "controller of the key city at the end: polish | soviet | '' (neutral)",
}

#: Per-game quantities the engine's events and results cannot give yet (not filled with placeholders).
MISSING_COLUMNS = {
    "cards played / events by card": "derivable from CARD_PLAYED but not summarised yet",
    "policy decision statistics": "the policies do not report their choices",
    "python policies": "Python (objmode) policies run only in play_game; simulate takes numba policies",
}

TRAJECTORY_COLUMNS = ("scenario", "polish", "soviet", "polish_params", "soviet_params", "seed", "game", "step", "round", "phase", "vp")
BATTLE_COLUMNS = ("scenario", "polish", "soviet", "polish_params", "soviet_params", "seed", "game", "battle", "round", "phase", "area", "attacker",
                  "winner", "fought", "attacker_losses", "defender_losses", "great_victory")


# --------------------------------------------------------------------------------------------------
# Kernels


# --------------------------------------------------------------------------------------------------
# Inputs


def resolve_policy(spec, where: str = "--polish", entry: str = ""):
    """The engine :class:`~soe_sim.engine.game.Policy` of a numba policy spec (a name from the
    engine's registry, ``(name, {param: value})`` or a Policy); problems are a SoeInputError naming
    ``where`` (an option or a file) and ``entry``, with a suggestion."""
    from soe_sim.engine.game import Policy
    from soe_sim.engine.game import resolve_policy as engine_resolve

    try:
        pol = engine_resolve(spec)
    except SoeInputError as err:
        raise SoeInputError([Problem(where, entry or p.entry, p.field, p.value, p.message, p.suggestion)
                             for p in err.problems]) from None
    if not isinstance(pol, Policy):
        raise SoeInputError(Problem(where, entry, "", type(spec).__name__,
                                    "Python policies run only in soe_sim.engine.game.play_game (the slow path)",
                                    "use a numba policy name"))
    return pol


def policy_label(pol) -> tuple[str, str]:
    """``(name, params)`` of a Policy for the result columns: ``params`` is the JSON of the parameter
    overrides (sorted keys; ``""`` for the policy's defaults)."""
    params = {str(k).strip().lower(): float(v) for k, v in dict(pol.params or {}).items()}
    if getattr(pol, "omniscient", False):
        params["omniscient"] = 1.0
    return pol.name, (json.dumps(params, sort_keys=True) if params else "")


def _policy_arrays(pols) -> tuple[np.ndarray, np.ndarray]:
    return (np.array([p.id for p in pols], dtype=np.int64), np.stack([p.row() for p in pols]).astype(np.float64))


def _check_seed(seed, where="seed"):
    if seed is None:
        return seed_int()
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or int(seed) < 0:
        raise SoeInputError(Problem(where, "", "", seed, "the seed must be a non-negative integer"))
    if int(seed) > 2**63 - 1:  # the seed column is int64
        raise SoeInputError(Problem(where, "", "", seed, "the seed must be at most 2**63 - 1"))
    return int(seed)


def _setup_of(scenario, ruleset=None):
    """(GameSetup, scenario id) of an id, a Scenario or a GameSetup under ``ruleset`` (None: "soe",
    or the GameSetup's own); unknown ids and rulesets raise SoeInputError with a suggestion."""
    from soe_sim.engine.game import GameSetup, game_setup

    if isinstance(scenario, GameSetup):
        return game_setup(scenario, ruleset), str(scenario.scenario.id)
    setup = game_setup(scenario, ruleset)  # an unknown id: SoeInputError with a suggestion
    return setup, str(setup.scenario.id)


def key_city_ids(setup_or_map, key_cities=None) -> list[str]:
    """Area ids of the key cities reported as ``held_<id>``: by default every city worth 2 VP or
    more on the map (the same list for every scenario, so sweep partitions share one schema)."""
    game_map = getattr(setup_or_map, "game_map", setup_or_map)
    areas = game_map.areas
    if key_cities is None:
        return [str(a) for a in areas.loc[areas["vp"] >= 2, "id"]]
    if isinstance(key_cities, str):
        key_cities = [k for k in key_cities.split(",") if k.strip()]
    out = []
    for k in key_cities:
        k = str(k).strip()
        if k not in game_map.area_index:
            raise SoeInputError(Problem("key_cities", "", "", k, "unknown area id",
                                        did_you_mean(k, game_map.area_index.keys())))
        out.append(k)
    return out


# --------------------------------------------------------------------------------------------------
# Playing a range of games


@dataclass
class _Raw:
    res: np.ndarray
    stats: np.ndarray
    key_ctrl: np.ndarray
    traj_round: np.ndarray
    traj_phase: np.ndarray
    traj_vp: np.ndarray
    bat: np.ndarray
    counts: np.ndarray


def _seeds(seed: int, start: int, stop: int) -> np.ndarray:
    from soe_sim.engine.game import game_stream_seeds

    return game_stream_seeds(np.random.SeedSequence(int(seed)), int(start), int(stop))


def _workers(setup, policies, threads, log_capacity):
    """The :class:`~soe_sim.engine.game.ChunkWorkers` that play ``setup``'s games with ``policies``
    (ids, params) on ``threads`` threads: :func:`simulate` keeps one for all its batches."""
    from soe_sim.engine.game import ChunkWorkers
    from soe_sim.engine.game.work import batch_work

    state = (setup.state0, setup.cards0, setup.orders0, setup.game_map.arrays, setup.cr, setup.er, setup.kr,
             setup.rr, setup.orules, setup.cfg)
    ids, params = policies
    return ChunkWorkers(state, max(1, int(threads or 1)),
                        lambda a: batch_work(*a[:7], a[9], ids.copy(), params.copy(), int(log_capacity)))


def _run(setup, policies, seeds, key_areas, *, threads, trajectories, battle_cap, log_capacity):
    raw, _futures = _start_run(setup, policies, seeds, key_areas, threads=threads, trajectories=trajectories,
                               battle_cap=battle_cap, log_capacity=log_capacity)  # no workers: played already
    return raw


def _start_run(setup, policies, seeds, key_areas, *, threads, trajectories, battle_cap, log_capacity, workers=None):
    """:func:`_run` that returns ``(raw, futures)`` as soon as ``workers`` have the games (the raw
    arrays are filled once every future is done; no futures: already played)."""
    n = seeds.shape[0]
    cfg = setup.cfg
    n_ph = cfg.max_phases + 1 if trajectories else 0
    raw = _Raw(
        res=np.zeros((n, N_RES), dtype=np.int64), stats=np.zeros((n, N_STATS), dtype=np.int64),
        key_ctrl=np.zeros((n, len(key_areas)), dtype=np.int64),
        traj_round=np.zeros((n, n_ph), dtype=np.int64), traj_phase=np.zeros((n, n_ph), dtype=np.int64),
        traj_vp=np.zeros((n, n_ph), dtype=np.int64), bat=np.zeros((n, battle_cap, N_BT), dtype=np.int64),
        counts=np.zeros((n, 2), dtype=np.int64),
    )
    if n == 0:
        return raw, []
    # The kernel releases the GIL: threads play disjoint slices of games, each thread with its own
    # copy of the inputs (each game depends only on its own seed row, so the slicing never changes a
    # result).
    outs = (raw.res, raw.stats, raw.key_ctrl, raw.traj_round, raw.traj_phase, raw.traj_vp, raw.bat, raw.counts)
    if workers is None:
        with _workers(setup, policies, threads, log_capacity) as w:
            w.run(gnb.play_games_serial_nb, seeds, outs, (True, key_areas))
        return raw, []
    return raw, workers.submit(gnb.play_games_serial_nb, seeds, outs, (True, key_areas))


def _battle_overflow(setup, policies, seeds, key_areas, raw, log_capacity):
    """Replay the games that fought more battles than the buffer held (same seed: same game)."""
    cap = raw.bat.shape[1]
    over = np.flatnonzero(raw.counts[:, 1] > cap)
    extra = {}
    for g in over:
        r = _run(setup, policies, seeds[g:g + 1], key_areas, threads=1, trajectories=False,
                 battle_cap=int(raw.counts[g, 1]), log_capacity=log_capacity)
        extra[int(g)] = r.bat[0]
    return extra


def _side_name(v: int) -> str:
    return "" if v < 0 else Side(int(v)).slug


def _frames(setup, scenario_id, pols, seed, game0, raw, key_ids, extra_battles, *, trajectories, battles):
    from soe_sim.engine.game import AbortReason, Outcome

    n = raw.res.shape[0]
    res = raw.res
    (polish, polish_params), (soviet, soviet_params) = (policy_label(p) for p in pols)
    cols: dict[str, object] = {
        "scenario": np.full(n, scenario_id, dtype=object), "polish": np.full(n, polish, dtype=object),
        "soviet": np.full(n, soviet, dtype=object), "polish_params": np.full(n, polish_params, dtype=object),
        "soviet_params": np.full(n, soviet_params, dtype=object), "seed": np.full(n, seed, dtype=np.int64),
        "game": np.arange(game0, game0 + n, dtype=np.int64),
    }
    outcome_names = {int(o): o.name.lower() for o in Outcome}
    abort_names = {int(a): (a.name.lower() if int(a) else "") for a in AbortReason}
    cols["outcome"] = np.array([outcome_names[int(v)] for v in res[:, gnb.R_OUTCOME]], dtype=object)
    cols["winner"] = np.array([_side_name(v) for v in res[:, gnb.R_WINNER]], dtype=object)
    for c, r in (("vp", gnb.R_VP), ("rounds", gnb.R_ROUNDS), ("last_round", gnb.R_LAST_ROUND),
                 ("last_phase", gnb.R_LAST_PHASE), ("phases", gnb.R_PHASES), ("steps", gnb.R_STEPS),
                 ("events", gnb.R_EVENTS)):
        cols[c] = res[:, r].copy()
    cols["abort"] = np.array([abort_names.get(int(v), str(int(v))) for v in res[:, gnb.R_ABORT]], dtype=object)
    st = raw.stats
    for c, j in _STAT_COLUMNS[:2]:
        cols[c] = st[:, j].copy()
    for k, s in enumerate(SIDES):
        cols[f"sp_lost_{s}"] = st[:, S_SP_LOST_BATTLE + k] + st[:, S_SP_LOST_SUPPLY + k] + st[:, S_SP_LOST_OTHER + k]
    for k, s in enumerate(SIDES):
        cols[f"eliminated_{s}"] = sum(st[:, base + k] for base in (S_DESTROYED_BATTLE, S_ELIM_BATTLE, S_ELIM_SUPPLY,
                                                                   S_ELIM_STACKING, S_ELIM_OTHER))
    for c, j in _STAT_COLUMNS[2:]:
        cols[c] = st[:, j].copy()
    for j, a in enumerate(key_ids):
        cols[f"held_{a}"] = np.array([_side_name(v) for v in raw.key_ctrl[:, j]], dtype=object)
    games = pd.DataFrame(cols)
    for c in ("scenario", "polish", "soviet", "polish_params", "soviet_params", "outcome", "winner", "abort",
              *(f"held_{a}" for a in key_ids)):
        games[c] = games[c].astype(str)
    traj = bats = None
    ident = games[["scenario", "polish", "soviet", "polish_params", "soviet_params", "seed", "game"]]
    if trajectories:
        nph = np.minimum(raw.counts[:, 0], raw.traj_vp.shape[1])
        gi = np.repeat(np.arange(n), nph)
        step = np.concatenate([np.arange(k) for k in nph]) if n else np.zeros(0, np.int64)
        traj = ident.iloc[gi].reset_index(drop=True)
        traj["step"] = step.astype(np.int64)
        traj["round"] = raw.traj_round[gi, step]
        traj["phase"] = raw.traj_phase[gi, step]
        traj["vp"] = raw.traj_vp[gi, step]
    if battles:
        rows = []
        gids = []
        for g in range(n):
            b = extra_battles.get(g, raw.bat[g, : raw.counts[g, 1]])
            rows.append(b)
            gids.append(np.full(b.shape[0], g))
        arr = np.concatenate(rows) if rows else np.zeros((0, N_BT), np.int64)
        gi = np.concatenate(gids) if gids else np.zeros(0, np.int64)
        bats = ident.iloc[gi].reset_index(drop=True)
        bats["battle"] = np.concatenate([np.arange(len(r)) for r in rows]) if rows else np.zeros(0, np.int64)
        bats["round"] = arr[:, BT_ROUND]
        bats["phase"] = arr[:, BT_PHASE]
        area_ids = setup.area_ids
        bats["area"] = pd.array([str(area_ids[a]) if a >= 0 else "" for a in arr[:, BT_AREA]], dtype=str)
        bats["attacker"] = pd.array([_side_name(v) for v in arr[:, BT_ATTACKER]], dtype=str)
        bats["winner"] = pd.array([_side_name(v) for v in arr[:, BT_WINNER]], dtype=str)
        bats["fought"] = arr[:, BT_FOUGHT].astype(bool)
        bats["attacker_losses"] = arr[:, BT_ATT_LOSSES]
        bats["defender_losses"] = arr[:, BT_DEF_LOSSES]
        bats["great_victory"] = arr[:, BT_GREAT].astype(bool)
    return games, traj, bats


def play_chunk(scenario, polish="random", soviet="random", *, seed: int, start: int = 0, games: int,
               threads: int | None = 1, key_cities=None, trajectories: bool = False, battles: bool = False,
               battle_cap: int = DEFAULT_BATTLE_CAP, log_capacity: int | None = None, workers=None,
               _check: bool = False):
    """Games ``start .. start + games - 1`` of ``seed`` as ``(games, trajectories, battles)`` frames
    (the last two None unless asked). The building block of :func:`simulate` and of the sweep.

    ``workers``: a :func:`chunk_workers` of the same scenario set-up, policies and log capacity, to
    keep the threads and their work from one call to the next (``threads`` is then theirs)."""
    out = _finish_chunk(_start_chunk(scenario, polish, soviet, seed=seed, start=start, games=games, threads=threads,
                                     key_cities=key_cities, trajectories=trajectories, battles=battles,
                                     battle_cap=battle_cap, log_capacity=log_capacity, workers=workers))
    return out if _check else out[:3]


def chunk_workers(scenario, polish="random", soviet="random", *, threads: int | None = 1,
                  log_capacity: int | None = None, ruleset=None):
    """The :class:`~soe_sim.engine.game.ChunkWorkers` for many :func:`play_chunk` calls of one
    scenario and policy pair: the threads, their copies of the inputs and their work (scratch, event
    log, the scripted policies' win-probability memo) are made once instead of at every call. Use it
    as a context manager and pass it as ``play_chunk(..., workers=...)`` with the same scenario set-up
    (a GameSetup, or an id / Scenario and ``ruleset``), policies and ``log_capacity``."""
    from soe_sim.engine.game import DEFAULT_LOG_CAPACITY

    setup, _sid = _setup_of(scenario, ruleset)
    pols = (resolve_policy(polish, "polish"), resolve_policy(soviet, "soviet"))
    threads = _threads(threads) if threads is not None else threads  # 0 or above the CPUs: an input error
    return _workers(setup, _policy_arrays(pols), threads, int(log_capacity or DEFAULT_LOG_CAPACITY))


@dataclass
class _Chunk:
    """A batch of :func:`play_chunk` handed to the workers (:func:`_start_chunk`), read by
    :func:`_finish_chunk` once its futures are done."""

    setup: object
    sid: str
    pols: tuple
    policies: tuple
    seed: int
    start: int
    seeds: np.ndarray
    key_ids: list
    key_areas: np.ndarray
    raw: _Raw
    futures: list
    trajectories: bool
    battles: bool
    log_capacity: int


def _start_chunk(scenario, polish, soviet, *, seed, start, games, threads, key_cities, trajectories, battles,
                 battle_cap, log_capacity, workers) -> _Chunk:
    from soe_sim.engine.game import DEFAULT_LOG_CAPACITY

    setup, sid = _setup_of(scenario)
    pols = (resolve_policy(polish, "polish"), resolve_policy(soviet, "soviet"))
    log_capacity = int(log_capacity or DEFAULT_LOG_CAPACITY)
    key_ids = key_city_ids(setup, key_cities)
    key_areas = np.array([setup.game_map.area_index[a] for a in key_ids], dtype=np.int64)
    policies = _policy_arrays(pols)
    seeds = _seeds(seed, int(start), int(start) + int(games))
    raw, futures = _start_run(setup, policies, seeds, key_areas, threads=threads, trajectories=trajectories,
                              battle_cap=int(battle_cap) if battles else 0, log_capacity=log_capacity,
                              workers=workers)
    return _Chunk(setup, sid, pols, policies, int(seed), int(start), seeds, key_ids, key_areas, raw, futures,
                  bool(trajectories), bool(battles), log_capacity)


def _finish_chunk(c: _Chunk) -> tuple:
    """``(games, trajectories, battles, raw)`` of a started chunk (waits for its games)."""
    for f in c.futures:
        f.result()
    extra = _battle_overflow(c.setup, c.policies, c.seeds, c.key_areas, c.raw, c.log_capacity) if c.battles else {}
    out = _frames(c.setup, c.sid, c.pols, c.seed, c.start, c.raw, c.key_ids, extra,
                  trajectories=c.trajectories, battles=c.battles)
    return (*out, c.raw)


# --------------------------------------------------------------------------------------------------
# Summaries


def win_interval(wins: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """95 % Wilson interval of ``wins / n`` (:func:`soe_sim.battle.odds.wilson_interval`)."""
    from soe_sim.battle.odds import wilson_interval

    if n <= 0:
        return 0.0, 1.0
    lo, hi = wilson_interval(wins, int(n), z)
    return float(lo), float(hi)


def _ci_width(df: pd.DataFrame) -> float:
    n = len(df)
    if n == 0:
        return 1.0
    w = 0.0
    for s in SIDES:
        lo, hi = win_interval(int((df["winner"] == s).sum()), n)
        w = max(w, hi - lo)
    return w


def win_rates(games: pd.DataFrame) -> dict:
    """``polish_win``, ``soviet_win``, ``draw`` (finished or ended games without a winner; aborted games
    excluded) and ``aborted`` as rates of the games of a frame with ``winner`` and ``outcome`` columns, the
    first three with ``*_ci`` (95 % Wilson intervals); NaN rates for no game."""
    n = int(len(games))
    pw = int((games["winner"] == "polish").sum()) if n else 0
    sw = int((games["winner"] == "soviet").sum()) if n else 0
    ab = int((games["outcome"] == "aborted").sum()) if n else 0
    out: dict = {}
    for key, k in (("polish_win", pw), ("soviet_win", sw), ("draw", n - pw - sw - ab)):
        out[key] = k / n if n else float("nan")
        out[key + "_ci"] = list(win_interval(k, n))
    out["aborted"] = ab / n if n else float("nan")
    return out


def summarize(games: pd.DataFrame, elapsed: float | None = None) -> dict:
    """Summary of a per-game frame: counts, win rates with 95 % Wilson intervals, VP and more.

    Keys: ``games``, ``polish_win``, ``soviet_win``, ``draw`` (rates; ``draw`` = finished or ended
    games without a winner, aborted games excluded), ``aborted``, ``polish_win_ci``, ``soviet_win_ci``,
    ``draw_ci``, ``vp_mean``, ``vp_sd``, ``rounds_mean``, ``battles_mean``, ``great_victories_mean``,
    ``sp_lost_polish_mean``, ``sp_lost_soviet_mean``, ``outcomes``, ``ci_width`` and, given
    ``elapsed`` seconds, ``seconds`` and ``games_per_second``.
    """
    n = int(len(games))
    out: dict = {"games": n}
    if "scenario" in games and n:
        for c in ("scenario", "polish", "soviet", "polish_params", "soviet_params"):
            if c not in games:
                continue
            vals = games[c].unique().tolist()
            if c.endswith("_params") and vals == [""]:
                continue
            out[c] = vals[0] if len(vals) == 1 else vals
    if "seed" in games and n:
        seeds = games["seed"].unique().tolist()
        out["seed"] = int(seeds[0]) if len(seeds) == 1 else [int(s) for s in seeds]
    out.update(win_rates(games))
    out["ci_width"] = _ci_width(games)

    def mean(c):
        return float(games[c].mean()) if n else float("nan")

    out["vp_mean"] = mean("vp")
    out["vp_sd"] = float(games["vp"].std(ddof=1)) if n > 1 else float("nan")
    out["rounds_mean"] = mean("rounds")
    out["battles_mean"] = mean("battles")
    out["great_victories_mean"] = (float((games["great_victories_polish"] + games["great_victories_soviet"]).mean())
                                   if n else float("nan"))
    for s in SIDES:
        out[f"sp_lost_{s}_mean"] = mean(f"sp_lost_{s}")
        out[f"eliminated_{s}_mean"] = mean(f"eliminated_{s}")
    out["outcomes"] = {str(k): int(v) for k, v in games["outcome"].value_counts().sort_index().items()} if n else {}
    held = [c for c in games.columns if c.startswith("held_")]
    if held and n:
        out["held_at_end"] = {c[5:]: {s: float((games[c] == s).mean()) for s in SIDES} for c in held}
    if elapsed is not None:
        out["seconds"] = float(elapsed)
        out["games_per_second"] = n / elapsed if elapsed > 0 else float("inf")
    return out


# --------------------------------------------------------------------------------------------------
# simulate


@dataclass
class Simulation:
    """What :func:`simulate` returns when trajectories or battles are asked for."""

    games: pd.DataFrame
    trajectories: pd.DataFrame | None = None
    battles: pd.DataFrame | None = None
    elapsed: float = 0.0
    meta: dict = field(default_factory=dict)

    def summary(self) -> dict:
        """:func:`summarize` of the games (win rates with 95 % Wilson intervals, VP, losses, speed)."""
        return summarize(self.games, self.elapsed)

    def __repr__(self) -> str:  # the frames themselves would fill the screen
        def rows(df):
            return "none" if df is None else f"{len(df):,} rows"

        return (f"Simulation(games={rows(self.games)}, trajectories={rows(self.trajectories)}, "
                f"battles={rows(self.battles)}, elapsed={self.elapsed:.2f} s)")


def _cpus() -> int:
    """The CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _threads(threads) -> int:
    """Worker threads: ``threads`` (1..the CPUs this process may use, as ``odds --threads``: each thread
    holds a copy of the game state, so more threads than CPUs only cost memory) or, for None, every CPU."""
    if threads is not None:
        cpus = _cpus()
        threads = check_count(threads, "threads", 1)
        if int(threads) > cpus:
            raise SoeInputError(Problem("--threads", "", "", threads, f"must be 1..{cpus}",
                                        f"this machine lets the process use {cpus} CPU(s)"))
        return int(threads)
    return _cpus()


def _batch_size(games: int, threads: int) -> int:
    return int(max(64 * threads, min(4096, math.ceil(games / 20))))


def simulate(scenario, polish="random", soviet="random", *, games: int | None = None, seed: int | None = None,
             threads: int | None = None, trajectories: bool = False, battles: bool = False,
             ci_width: float | None = None, batch_size: int | None = None, key_cities=None,
             progress: bool = False, out: str | None = None, log_capacity: int | None = None, ruleset=None):
    """Play many games of ``scenario`` and return one row per game.

    Parameters
    ----------
    scenario : str, Scenario or GameSetup
        A scenario id (``soe-sim scenarios``), a loaded Scenario or an engine GameSetup (for rule overlays).
    ruleset : str, path or soe_sim.rules.Rules
        ``"soe"`` (default), ``"eats"`` (The Eagle and the Star, docs/rules.md "EatS variant"), a
        rules TOML or a Rules object (:func:`soe_sim.engine.game.game_setup`).
    polish, soviet : str, (name, {param: value}) or soe_sim.engine.game.Policy
        Numba policies from the engine's registry (:data:`soe_sim.engine.game.policies.POLICY_IDS`),
        with optional parameter overrides (:data:`soe_sim.engine.game.PARAMS`).
    games : int
        Games to play (≥ 0; default 1000; 0 gives an empty frame with every column); with ``ci_width`` the
        most games to play (default 100 000).
    seed : int
        Batch seed; game ``i`` is ``play_game(scenario, seed=(seed, i), ...)``. None: a fresh random
        seed (recorded in the ``seed`` column).
    threads : int
        Threads playing games at once (default: every CPU); the kernel releases the GIL, and the
        result does not depend on the thread count.
    trajectories, battles : bool
        Also return the VP track after every phase (columns :data:`TRAJECTORY_COLUMNS`) and one row
        per battle (:data:`BATTLE_COLUMNS`); the result is then a :class:`Simulation`.
    ci_width : float
        Adaptive mode: play batches of ``batch_size`` games (default 1000) until the widest 95 %
        Wilson interval of the Polish and Soviet win rates is narrower than ``ci_width``.
    key_cities : list of area ids
        Cities reported as ``held_<id>`` (default: the map's cities worth 2 VP or more).
    progress : bool
        Show a tqdm progress bar on stderr.
    out : str
        Also write the per-game frame to this parquet (or ``.csv``) file.
    batch_size : int
        Games per batch (≥ 1; default: sized to the games and threads, 1000 in adaptive mode); the
        result does not depend on it.
    log_capacity : int
        Rows of each game's event log (≥ 1; default 65,536): a game whose log fills up ends ``aborted``.

    Returns
    -------
    pandas.DataFrame (columns :data:`GAME_COLUMNS` + ``held_<city>``), or a :class:`Simulation` when
    ``trajectories`` or ``battles`` is set. ``df.attrs["soe_sim"]`` holds the run's metadata
    (elapsed seconds, games per second, threads, ci width reached).
    """
    from tqdm.auto import tqdm

    setup, sid = _setup_of(scenario, ruleset)
    polish = resolve_policy(polish, "polish")  # the CLI says --polish (soe_sim.cli: argument names to flags)
    soviet = resolve_policy(soviet, "soviet")
    seed = _check_seed(seed)
    if out:
        check_output_path(out, "out")
    if ci_width is not None and not (0 < float(ci_width) < 1):
        raise SoeInputError(Problem("ci_width", "", "", ci_width, "the interval width must be between 0 and 1",
                                    "e.g. 0.02 for a win rate within about ±1 percentage point"))
    if games is None:
        games = DEFAULT_CI_MAX_GAMES if ci_width is not None else DEFAULT_GAMES
    games = check_count(games, "games")
    if batch_size is not None:
        batch_size = check_count(batch_size, "batch_size", 1)
    if log_capacity is not None:
        log_capacity = check_count(log_capacity, "log_capacity", 1)
    nthreads = _threads(threads)
    if ci_width is not None:
        batch = int(batch_size or DEFAULT_CI_BATCH)
    else:
        batch = int(batch_size or _batch_size(games, nthreads))
    batch = max(1, batch)
    # one set of worker threads, input copies and per-thread work for every batch (ChunkWorkers)
    workers = chunk_workers(setup, polish, soviet, threads=nthreads, log_capacity=log_capacity)
    ckw = dict(threads=nthreads, key_cities=key_cities, trajectories=trajectories, battles=battles,
               battle_cap=DEFAULT_BATTLE_CAP, log_capacity=log_capacity, workers=workers)
    parts, trajs, bats = [], [], []
    played = 0
    width = 1.0
    t_load = t0 = time.perf_counter()

    def finish(chunk):
        g, t, b, _raw = _finish_chunk(chunk)
        parts.append(g)
        if t is not None:
            trajs.append(t)
        if b is not None:
            bats.append(b)
        bar.update(len(g))

    with workers, tqdm(total=games, unit="game", disable=not progress,
                       desc=f"{sid} {polish.name} v {soviet.name}", leave=False) as bar:
        if games > 0:
            # the first games (one per thread, on the threads that play the batches) played once and dropped
            # before the clock starts: loading the kernel from numba's cache (or compiling it) and making
            # each thread's work are not games per second (audit J F5: a short CLI run reported 2.6 times
            # too few)
            _finish_chunk(_start_chunk(setup, polish, soviet, seed=seed, start=0, games=min(games, nthreads),
                                       **dict(ckw, trajectories=False, battles=False)))
            t0 = time.perf_counter()
        pending = None
        while played < games:
            k = min(batch, games - played)
            chunk = _start_chunk(setup, polish, soviet, seed=seed, start=played, games=k, **ckw)
            played += k
            if ci_width is not None:  # the stopping rule reads every batch before the next starts
                finish(chunk)
                width = _ci_width(pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0])
                bar.set_postfix(ci=f"{width:.4f}")
                if width < float(ci_width):
                    break
                continue
            # the threads play this batch while the previous one is turned into frames
            if pending is not None:
                finish(pending)
            pending = chunk
        if pending is not None:
            finish(pending)
    elapsed = time.perf_counter() - t0
    if not parts:
        df, t, b, _raw = _finish_chunk(_start_chunk(setup, polish, soviet, seed=seed, start=0, games=0, **ckw))
        trajs, bats = [x for x in (t,) if x is not None], [x for x in (b,) if x is not None]
    else:
        df = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    df.index.name = None
    meta = {"scenario": sid, "polish": policy_label(polish)[0], "soviet": policy_label(soviet)[0],
            "polish_params": policy_label(polish)[1], "soviet_params": policy_label(soviet)[1], "seed": seed, "games": int(len(df)),
            "ruleset": setup.rules.label, "threads": nthreads, "seconds": elapsed, "load_seconds": t0 - t_load,
            "games_per_second": len(df) / elapsed if elapsed > 0 else None,
            "ci_width": _ci_width(df)}
    if ci_width is not None:
        meta["ci_target"] = float(ci_width)
        meta["ci_reached"] = bool(meta["ci_width"] < float(ci_width))
    df.attrs["soe_sim"] = meta
    if out:
        write_frame(df, out, "--out")
    if not (trajectories or battles):
        return df
    cat = (lambda xs: pd.concat(xs, ignore_index=True) if xs else None)
    return Simulation(games=df, trajectories=cat(trajs), battles=cat(bats), elapsed=elapsed, meta=meta)


FRAME_SUFFIXES = (".parquet", ".csv")


def check_output_path(path, option: str = "--out", suffixes=FRAME_SUFFIXES) -> str:
    """``path`` as a string when a file could be written there, else a
    :class:`~soe_sim.errors.SoeInputError` naming the option: a suffix other than ``suffixes``, an
    existing directory, or a parent that is a file or not writable. Checked before any game is
    played, so a long run never ends in a write error."""
    text = str(path)
    suffix = os.path.splitext(text)[1].lower()
    if suffix not in suffixes:
        raise SoeInputError(Problem(option, "", "", text, f"unsupported file type {suffix or '(none)'!r}",
                                    "use " + " or ".join(suffixes)))
    target = os.path.abspath(text)
    if os.path.isdir(target):
        raise SoeInputError(Problem(option, "", "", text, "is a directory", f"give a file name such as "
                                    f"{os.path.join(text, 'games' + suffixes[0])}"))
    check_creatable(os.path.dirname(target), option, text)  # the directories write_frame would create
    return text


def check_output_dir(path, option: str = "--out") -> Path:
    """``path`` when a directory exists or could be created there, else a
    :class:`~soe_sim.errors.SoeInputError` naming the option: an existing file, a parent that is a
    file, or a parent that is not writable. Checked before the work starts."""
    path = Path(path)
    target = os.path.abspath(path)
    if os.path.exists(target) and not os.path.isdir(target):
        raise SoeInputError(Problem(option, "", "", str(path), "exists and is not a directory"))
    check_creatable(target, option, str(path))
    return path


def check_output_paths(outputs) -> None:
    """:func:`check_output_path` of every ``(path, option)`` of ``outputs`` whose path is set, and no
    two options naming the same file."""
    seen: dict[str, str] = {}
    for path, option in outputs:
        if not path:
            continue
        check_output_path(path, option)
        key = os.path.normcase(os.path.abspath(str(path)))
        if key in seen:
            raise SoeInputError(Problem(option, "", "", str(path), f"the same file as {seen[key]}",
                                        "give each output its own file"))
        seen[key] = option


def write_frames(frames) -> None:
    """Write ``(frame, path, option)`` triples all or nothing: each goes to a temporary file beside its
    target, and only when every one is written are they renamed into place (a failure removes the
    temporary files and leaves no output). ``.csv`` paths get CSV, the others parquet; a bad path is
    a one-line input error."""
    done: list[tuple[str, str]] = []
    try:
        for df, path, option in frames:
            check_output_path(path, option)
            target = os.path.abspath(str(path))
            try:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                # a fresh name beside the target (created by the writer, so with the usual permissions)
                tmp = os.path.join(os.path.dirname(target),
                                   f".{os.path.basename(target)}.{uuid.uuid4().hex[:8]}.part")
                done.append((tmp, target))
                if target.lower().endswith(".csv"):
                    df.to_csv(tmp, index=False)
                else:
                    frame = df.copy()
                    frame.attrs = {}
                    frame.to_parquet(tmp, index=False)
            except OSError as err:
                raise SoeInputError(Problem(option, "", "", str(path),
                                            f"cannot write: {os_error_text(err)}")) from None
        for tmp, target in done:
            os.replace(tmp, target)
        done = []
    finally:
        for tmp, _target in done:
            try:
                os.remove(tmp)
            except OSError:
                pass


def write_frame(df: pd.DataFrame, path: str, option: str = "--out") -> None:
    """Write a frame to ``.parquet`` or ``.csv`` (the file appears only once complete); a bad path is
    a one-line input error."""
    write_frames([(df, path, option)])
