"""The round loop of Strike of the Eagle (SoE 5.0, 6.0, 7.0–7.9, 8.0, 10.1), its decisions, event
record, terminal conditions and the fuzzer.

Python wrappers around :mod:`soe_sim.engine.game.nb`:

* :func:`play_game` — one seeded game, with its event log as a DataFrame;
* :func:`play_games` — many games in parallel (``numba.prange``); game ``i`` of seed ``s`` is the
  same game as ``play_game(scenario, seed=(s, i))`` whatever the thread count;
* :func:`fuzz` — random decisions over many seeded games with the invariants checked after every
  phase (``soe-sim fuzz``).

Seeds: a game's three SplitMix64 streams (chance, Polish policy, Soviet policy) are
:func:`soe_sim.random.chunk_seeds` of the game's ``SeedSequence``; game ``i`` of a batch seeded
``s`` uses ``SeedSequence(s, spawn_key=(i,))`` (= ``SeedSequence(s).spawn(n)[i]``).

Readings of the loop: docs/rules.md "Engine: the round loop" (G1…).
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import os
from dataclasses import dataclass, field
from enum import IntEnum
from typing import NamedTuple

import numba
import numpy as np
import pandas as pd

from soe_sim._jit import cold_compile_notice
from soe_sim.data._io import is_int
from soe_sim.data.enums import Front, Nation, Side, Territory
from soe_sim.data.scenario import Scenario
from soe_sim.errors import Problem, SoeInputError, check_count, did_you_mean
from soe_sim.engine.game import nb
from soe_sim.engine.game.nb import (
    ABORT,
    CAUSE,
    DECISION,
    EVENT,
    EVENT_DTYPE,
    N_CTR,
    N_RES,
    OUTCOME,
    VIOLATION,
    GameConfig,
)
from soe_sim.engine.game import policies as _pol
from soe_sim.engine.game.work import batch_scratch, batch_work, game_buffers
from soe_sim.engine.game.policies import (
    DEFAULT_PARAMS,
    FEATURES,
    N_FEAT,
    N_PARAMS,
    PARAM_DOCS,
    PARAMS,
    POLICY_IDS,
    POLICY_PYTHON,
    POLICY_RANDOM,
    choose_nb,
    choose_option_nb,
    policy_id,
)
from soe_sim.random import SeedLike, as_seed_sequence, check_seed, chunk_seeds

__all__ = [
    "Decision", "Event", "Outcome", "Cause", "AbortReason", "Violation",
    "DECISION", "EVENT", "OUTCOME", "CAUSE", "VIOLATION", "EVENT_DTYPE",
    "POLICY_RANDOM", "POLICY_IDS", "POLICY_PYTHON", "PARAMS", "PARAM_DOCS", "FEATURES", "choose_nb",
    "choose_option_nb", "policy_id", "Policy", "resolve_policy", "policy_arrays", "StateView", "JitPolicy",
    "EventLog", "new_event_log", "append_event",
    "GameSetup", "GameResult", "game_setup", "game_config", "game_streams", "game_stream_seeds", "game_seed_sequence",
    "private_copy", "run_chunks", "ChunkWorkers",
    "play_game", "play_games", "events_frame", "format_events", "fuzz",
]

Decision = IntEnum("Decision", DECISION._asdict())
Decision.__doc__ = "Decision kinds of the loop (numba mirror :data:`DECISION`)."
Event = IntEnum("Event", EVENT._asdict())
Event.__doc__ = "Event kinds of the log (numba mirror :data:`EVENT`); fields per kind: soe_sim.engine.game.nb._EventC."
Outcome = IntEnum("Outcome", OUTCOME._asdict())
Cause = IntEnum("Cause", CAUSE._asdict())
AbortReason = IntEnum("AbortReason", ABORT._asdict())
Violation = IntEnum("Violation", VIOLATION._asdict())

DEFAULT_MAX_STEPS = 200_000
DEFAULT_MAX_PHASE_STEPS = 50_000
DEFAULT_LOG_CAPACITY = 1 << 16


# --------------------------------------------------------------------------------------------------
# Event log


class EventLog(NamedTuple):
    """The event record: ``records`` a structured array of :data:`EVENT_DTYPE` (fields ``round i2,
    phase i1, kind i2, side i1, area i2, area2 i2, block i2, value i4, value2 i4``) and ``ctr`` the
    loop's counters (``ctr[0]`` = events used)."""

    records: np.ndarray
    ctr: np.ndarray

    @property
    def n(self) -> int:
        return int(self.ctr[nb.C_EVENTS])

    def used(self) -> np.ndarray:
        return self.records[: self.n]


def new_event_log(capacity: int = DEFAULT_LOG_CAPACITY) -> EventLog:
    return EventLog(np.zeros(int(capacity), dtype=EVENT_DTYPE), np.zeros(N_CTR, dtype=np.int64))


def append_event(log: EventLog, state, kind, side=-1, area=-1, area2=-1, block=-1, value=0, value2=0) -> bool:
    """Append one event (:func:`soe_sim.engine.game.nb.log_event_nb`); False when full."""
    return bool(nb.log_event_nb(log.records, log.ctr, state, int(kind), int(side), int(area), int(area2),
                                int(block), int(value), int(value2)))


# --------------------------------------------------------------------------------------------------
# Set-up


@dataclass
class GameSetup:
    """Everything a scenario's games share (built once per scenario and rules)."""

    scenario: object
    game_map: object
    roster: object
    rules: object
    state0: object  # GameState at the start
    cards0: object  # CardState with the draw piles in id order (each game shuffles them)
    orders0: object  # empty OrderState
    orules: object  # OrderRules
    cr: object
    er: object
    kr: object
    rr: object
    cfg: GameConfig
    block_ids: np.ndarray = field(default=None)
    area_ids: np.ndarray = field(default=None)
    etable: object = field(default=None)  # EventTable of state0's universe (= cfg.etable)


def game_config(scenario, game_map, state, rules, *, max_steps: int = DEFAULT_MAX_STEPS,
                max_phase_steps: int = DEFAULT_MAX_PHASE_STEPS, max_phases: int | None = None,
                check_invariants: bool = False, roster=None, decks: dict | None = None) -> GameConfig:
    """The kernel-ready :class:`GameConfig` of a scenario (victory, objectives, special rules, caps,
    the card-event table and the leader table of ``state``'s block universe; ``roster`` defaults to
    ``load_blocks()``, ``decks`` to the built-in decks)."""
    from soe_sim.engine.events import event_table
    from soe_sim.engine.leaders import leader_table
    from soe_sim.engine.reinforce import nation_rules, nation_supply_bases

    ai = game_map.area_index
    n_areas = game_map.n_areas
    nbk = state.n_blocks
    _check_reserved_areas(scenario, game_map)
    vic = scenario.victory or {}
    imm = list(vic.get("immediate") or []) + ruleset_immediate_victory(rules, scenario, game_map)
    imm_kind = np.array([nb.IMMEDIATE_CAPTURE_AREA if i["kind"] == "capture_area" else nb.IMMEDIATE_VP_AT_LEAST
                         for i in imm], dtype=np.int64)
    imm_side = np.array([int(Side.from_slug(i["side"])) for i in imm], dtype=np.int64)
    imm_area = np.array([ai[i["area"]] if i.get("area") else -1 for i in imm], dtype=np.int64)
    imm_value = np.array([int(i.get("value", 0) or 0) for i in imm], dtype=np.int64)
    objs = [o for o in scenario.objectives if o.get("when", "end") == "end"]
    okind = {"hold_area": nb.OBJECTIVE_HOLD_AREA, "capture_area": nb.OBJECTIVE_CAPTURE_AREA,
             "eliminate_blocks": nb.OBJECTIVE_ELIMINATE_BLOCKS}
    obj_areas = np.zeros((len(objs), n_areas), dtype=np.bool_)
    obj_blocks = np.zeros((len(objs), nbk), dtype=np.bool_)
    if roster is None:
        from soe_sim.data import load_blocks

        roster = load_blocks()
    pos = {str(b): k for k, b in enumerate(roster.blocks["id"].to_numpy()[state.block_roster])}
    for k, o in enumerate(objs):
        for a in o.get("areas") or []:
            obj_areas[k, ai[a]] = True
        for b in o.get("blocks") or []:
            if b in pos:
                obj_blocks[k, pos[b]] = True
    rule_ids = [r.get("id") for r in scenario.special_rules]
    ac = []
    for ri, r in enumerate(scenario.special_rules):
        if r.get("kind") == "arrival_check":
            s = int(Side.from_slug(r.get("side", "soviet")))
            for t in r.get("thresholds") or []:
                ph = t.get("phase")
                ph = nb.PHASE_REINFORCEMENT if ph == "reinforcement" else int(ph)
                ac.append((ri, s, int(t["round"]), ph, int(t.get("min_modifier", 0))))
    ac = np.array(ac, dtype=np.int64).reshape(-1, 5)
    active, area_ok = nation_rules(game_map, scenario)
    supply_base, supply_side = nation_supply_bases(game_map, scenario)
    # G15, G16: where a nation's blocks may move, retreat or withdraw: a neutral nation's max_distance
    # from max_distance_from, a front_restriction's front (the same areas as for building, RF6)
    move_ok = area_ok.copy()
    intern = internment_config(rules, game_map)
    closed = intern.pop("closed_to")
    if closed is not None:  # EatS II.3 "Polish units can't cross the German border" (V11): move / rail rows
        sides = roster.blocks["side"].to_numpy()
        for nat in {str(x) for x in roster.blocks["nation"][sides == Side(closed).slug]}:
            move_ok[int(Nation.from_slug(nat)), intern["intern_area"]] = False
    kinds = {r.get("kind") for r in scenario.special_rules}
    players = list(scenario.players or [2, 2])
    two_front = max(players) > 2  # SoE 10.1: a 3–4 player scenario played by one player per side
    n_op = int(rules["round.operation_phases"])
    n_rounds = int(state.end[0]) - int(state.round[0]) + 1
    if max_phases is None:
        max_phases = (n_op + 2) * n_rounds + 4
    return GameConfig(
        imm_kind=imm_kind, imm_side=imm_side, imm_area=imm_area, imm_value=imm_value,
        obj_kind=np.array([okind[o["kind"]] for o in objs], dtype=np.int64),
        obj_side=np.array([int(Side.from_slug(o["side"])) for o in objs], dtype=np.int64),
        obj_vp=np.array([int(o.get("vp", 0) or 0) for o in objs], dtype=np.int64),
        obj_areas=obj_areas, obj_blocks=obj_blocks,
        ac_rule=ac[:, 0].copy(), ac_side=ac[:, 1].copy(), ac_round=ac[:, 2].copy(), ac_phase=ac[:, 3].copy(),
        ac_min=ac[:, 4].copy(), n_conditions=len(rule_ids),
        nation_active=active, nation_area_ok=area_ok, kaunas=int(ai.get("kaunas", -1)),
        no_reinforcement_phase="no_reinforcement_phase" in kinds, two_front=bool(two_front),
        card_fronts=len(Front),
        vp_leader_killed=int(rules["vp.leader_destroyed"]), vp_leader_captured=int(rules["vp.leader_captured"]),
        max_steps=int(max_steps), max_phase_steps=int(max_phase_steps), max_phases=int(max_phases),
        check_invariants=bool(check_invariants),
        nation_move_ok=move_ok, **intern, etable=event_table(state, roster, rules, decks=decks, game_map=game_map),
        leaders=leader_table(state, roster, rules, scenario),  # SoE 9.0 (rule leaders.abilities)
        klintsy=int(ai.get("klintsy", -1)),
        nation_supply_base=supply_base, nation_supply_side=supply_side,
    )


def ruleset_immediate_victory(rules, scenario, game_map) -> list[dict]:
    """The ``[[victory.immediate]]`` conditions the ruleset adds to every scenario (``[victory]``:
    EatS XII.1, 15 VP or a Soviet capture of Warsaw; SoE none), minus those the scenario already has."""
    own = [(i.get("kind"), i.get("side"), i.get("area"), int(i.get("value", 0) or 0))
           for i in ((getattr(scenario, "victory", None) or {}).get("immediate") or [])]
    out = []
    vp = int(rules["victory.immediate_vp"])
    if vp > 0:
        for side in Side.slugs():
            if ("vp_at_least", side, None, vp) not in own:
                out.append({"kind": "vp_at_least", "side": side, "value": vp})
    area = str(rules["victory.immediate_capture_area"])
    if area:
        problems = []
        try:
            side = _rules_side(rules, "victory.immediate_capture_side")
        except SoeInputError as err:
            problems += err.problems
        if area not in game_map.area_index:
            problems.append(Problem(rules.files[-1], "victory", "immediate_capture_area", area, "unknown area",
                                    did_you_mean(area, game_map.area_index)))
        if problems:
            raise SoeInputError(problems)
        if ("capture_area", side, area, 0) not in own:
            out.append({"kind": "capture_area", "side": side, "area": area})
    return out


def _check_reserved_areas(scenario, game_map) -> None:
    """A scenario that keeps Lithuania neutral (a ``neutral_nation`` rule for ``lithuanian``) needs the
    map area ``kaunas``: the engine finds Lithuania's capital by that id, so a map that renamed it would
    silently play without the capital's rules."""
    for i, r in enumerate(scenario.special_rules):
        if (r.get("kind") == "neutral_nation" and str(r.get("nation", "")).strip().lower() == "lithuanian"
                and "kaunas" not in game_map.area_index):
            where = str(getattr(scenario, "path", "") or scenario.id)
            raise SoeInputError(Problem(
                where, f"special_rules[{i}]", "nation", "lithuanian",
                "a neutral Lithuania needs the map area 'kaunas' (the engine finds Lithuania's capital by that "
                "id: docs/data-format.md 'Reserved area ids')",
                "name Lithuania's capital `kaunas` in map/areas.csv and in the files that refer to it"))


def ruleset_problems(rules, game_map, decks: dict | None = None) -> list:
    """Every problem game set-up (:func:`_build_setup`) finds in ``rules`` whatever the scenario, collected
    rather than raised: the combat chart (``Rules.combat_constants``), the order execution groups
    (``order_constants``), the internment table and ``closed_to`` (:func:`internment_config`, against
    ``game_map``), the ruleset's immediate victory (:func:`ruleset_immediate_victory`),
    ``leaders.abilities`` and, given ``decks`` (side slug → deck table), ``cards.deck_size`` against them.
    ``soe-sim validate`` runs these on a ruleset file; set-up runs them before building anything."""
    from soe_sim.engine.cards import _deck_arrays
    from soe_sim.engine.leaders import abilities_enabled
    from soe_sim.engine.orders import order_constants

    checks = [rules.combat_constants, lambda: order_constants(rules), lambda: internment_config(rules, game_map),
              lambda: ruleset_immediate_victory(rules, None, game_map), lambda: abilities_enabled(rules)]
    for side, deck in (decks or {}).items():
        if deck is not None:
            checks.append(lambda deck=deck, side=side: _deck_arrays(deck, side, int(rules["cards.deck_size"])))
    problems = []
    for check in checks:
        try:
            check()
        except SoeInputError as err:
            problems += err.problems
    return problems


def _rules_side(rules, key) -> str:
    v = str(rules[key])
    if v not in Side.slugs():
        raise SoeInputError(Problem(rules.files[-1], "", key, v, "expected a side", f"one of {', '.join(Side.slugs())}"))
    return v


def internment_config(rules, game_map) -> dict:
    """The :class:`GameConfig` internment fields of the ruleset's ``[internment]`` (EatS II.3
    Germany, reading V11; SoE: none) and ``closed_to`` (the side that may not enter the territory,
    or None)."""
    file = rules.files[-1]
    n = game_map.n_areas
    terr = str(rules["internment.territory"])
    area = np.zeros(n, dtype=np.bool_)
    ret = np.zeros(0, dtype=np.int64)
    delay = np.zeros(0, dtype=np.int64)
    side = int(Side.from_slug(_rules_side(rules, "internment.side")))
    closed = None
    if terr:
        if terr not in Territory.slugs():
            raise SoeInputError(Problem(file, "internment", "territory", terr, "unknown territory",
                                        did_you_mean(terr, Territory.slugs()) or f"one of {', '.join(Territory.slugs())}"))
        area = np.asarray(game_map.arrays.territory == int(Territory.from_slug(terr)), dtype=np.bool_)
        towns = list(rules["internment.return_areas"])
        delays = list(rules["internment.return_delays"])
        bad = [t for t in towns if t not in game_map.area_index]
        if bad:
            raise SoeInputError(Problem(file, "internment", "return_areas", bad[0], "unknown area",
                                        did_you_mean(str(bad[0]), game_map.area_index)))
        if len(delays) != len(towns) or not all(is_int(d) and d >= 1 for d in delays):
            raise SoeInputError(Problem(file, "internment", "return_delays", delays,
                                        "expected one delay of at least 1 operation phase per return area"))
        ret = np.array([game_map.area_index[t] for t in towns], dtype=np.int64)
        delay = np.array([int(d) for d in delays], dtype=np.int64)
        if str(rules["internment.closed_to"]):
            closed = int(Side.from_slug(_rules_side(rules, "internment.closed_to")))
    return {"intern_area": area, "intern_side": side, "intern_sp_loss": int(rules["internment.sp_loss"]),
            "intern_return": ret, "intern_delay": delay, "closed_to": closed}


def scenario_data(scenario) -> tuple:
    """``(game_map, roster, decks)`` of the data root ``scenario`` belongs to (``decks`` None for the
    default root: the built-in decks; its rules: :func:`scenario_rules`): the root of its file
    (``soe_sim.data.scenario.data_root_of``: the parent of its ``scenarios/`` folder when that holds
    a map, else the built-in data or ``$SOE_SIM_DATA``) — the map, blocks and cards it was validated
    against, so a scenario in a copy of ``data/`` is played on that copy's map, roster and decks."""
    from soe_sim.data import load_blocks, load_cards, load_map

    root = _own_root(scenario)
    if root is None:
        # the default loaders: decks None = the built-in decks, or a design variant's deck_override
        return load_map(), load_blocks(), None
    return load_map(root), load_blocks(root), {s.slug: load_cards(s.slug, root) for s in Side}


def _own_root(scenario):
    """The data root of ``scenario``'s file when it is not the default one (``data_dir()``), else None."""
    from soe_sim._paths import data_dir
    from soe_sim.data.scenario import data_root_of

    path = getattr(scenario, "path", None)
    if path is None:
        return None
    root = data_root_of(path)
    return None if root.resolve() == data_dir().resolve() else root


def scenario_rules(scenario, ruleset: str = "soe"):
    """:func:`~soe_sim.rules.load_rules` of ``ruleset`` for ``scenario``: a ruleset *name* is read from
    the scenario's own data root when that root has ``rules/<name>.toml`` (a copy of ``data/``, whose
    rules also validated its decks), else from the built-in data; a path is read as it is."""
    from pathlib import Path

    from soe_sim.rules import load_rules

    root = _own_root(scenario)
    if root is not None and Path(str(ruleset)).suffix != ".toml" and (root / "rules" / f"{ruleset}.toml").is_file():
        return load_rules(root / "rules" / f"{ruleset}.toml")
    return load_rules(ruleset)


def _data_stamp(scenario_id: str, ruleset: str) -> tuple:
    """``(path, mtime_ns, size)`` of every file a set-up of ``scenario_id`` under ``ruleset`` is read
    from (the scenario file, the map, blocks, cards and rules of its data root and of the built-in
    data, a ruleset file): part of the cache key, so an edited data file is read again. An unknown
    scenario id raises :class:`SoeInputError` with a suggestion."""
    from pathlib import Path

    from soe_sim._paths import data_dir, file_stamps
    from soe_sim.data.scenario import _resolve, data_root_of

    path = _resolve(scenario_id)
    files = [path]
    for root in {data_root_of(path), data_dir()}:
        for sub in ("map", "blocks", "cards", "rules"):
            d = root / sub
            if d.is_dir():
                files += list(d.iterdir())
    if Path(ruleset).suffix == ".toml":
        files.append(Path(ruleset))
    return file_stamps(files)


def _setup_cached(scenario_id: str, ruleset: str = "soe") -> GameSetup:
    """The set-up of a scenario id or file under a ruleset name or file, built once while its data
    files are unchanged (:func:`_data_stamp`): ``simulate``, ``play_chunk`` and the reports call this
    at every call, and building it (reading and validating the scenario, map, roster and decks) takes
    about a quarter of a second."""
    return _setup_cached_stamped(scenario_id, ruleset, _data_stamp(scenario_id, ruleset))


@functools.lru_cache(maxsize=16)
def _setup_cached_stamped(scenario_id: str, ruleset: str, stamp: tuple) -> GameSetup:
    from soe_sim.data import load_scenario

    scenario = load_scenario(scenario_id)
    game_map, roster, decks = scenario_data(scenario)
    return _build_setup(scenario, game_map, roster, scenario_rules(scenario, ruleset), decks)


def ruleset_scenario(scenario, roster, rules):
    """The scenario as the ruleset plays it (Python-level ruleset options): without leader blocks
    when ``blocks.leaders_in_play`` is false (EatS has none, reading V10). Unchanged under SoE."""
    if bool(rules["blocks.leaders_in_play"]):
        return scenario
    leaders = set(roster.blocks["id"][roster.blocks["arm"] == "leader"])
    keep = lambda df: df[~df["block"].isin(leaders)].reset_index(drop=True)  # noqa: E731
    return dataclasses.replace(
        scenario, deployment=keep(scenario.deployment), reinforcements=keep(scenario.reinforcements),
        force_pool={k: [b for b in v if b not in leaders] for k, v in (scenario.force_pool or {}).items()})


def ruleset_for_scenario(rules, scenario):
    """``rules`` with the card draw and hand limit of a player commanding both fronts when the
    scenario is played by one player per side of a 3–4 player scenario (``cards.*_both_fronts``:
    SoE 10.1 keeps 6 / 7, EatS IV.1 draws 12 and holds 13; 0 = the one-front value, so that a change of
    ``cards.draw_per_round`` / ``hand_limit`` reaches these scenarios too). Unchanged otherwise."""
    from soe_sim.rules import Rules

    players = list(scenario.players or [2, 2])
    if max(players) <= 2:
        return rules
    draw = int(rules["cards.draw_per_round_both_fronts"]) or int(rules["cards.draw_per_round"])
    limit = int(rules["cards.hand_limit_both_fronts"]) or int(rules["cards.hand_limit"])
    if (draw, limit) == (int(rules["cards.draw_per_round"]), int(rules["cards.hand_limit"])):
        return rules
    values = copy.deepcopy(rules.values)
    values["cards"]["draw_per_round"] = draw
    values["cards"]["hand_limit"] = limit
    return Rules(values, dict(rules.sources), list(rules.files))


def _build_setup(scenario, game_map, roster, rules, decks: dict | None = None) -> GameSetup:
    """The :class:`GameSetup` of ``scenario`` on ``game_map`` / ``roster`` / ``decks`` (side slug →
    deck table; ``None``: the built-in decks) under ``rules``."""
    from soe_sim.engine.cards import card_constants, new_card_state
    from soe_sim.engine.orders import new_order_state, order_constants
    from soe_sim.engine.reinforce import reinforce_constants
    from soe_sim.engine.events import new_game_with_events_area
    from soe_sim.engine.state import engine_constants
    from soe_sim.data.scenario import start_stacking_problems

    problems = ruleset_problems(rules, game_map)  # all at once (soe-sim validate runs the same checks)
    # the loader checked the start against rules/soe.toml; an overlay may lower stacking.max_blocks
    problems += start_stacking_problems(scenario, game_map, rules, roster=roster)
    if problems:
        raise SoeInputError(problems)
    scenario = ruleset_scenario(scenario, roster, rules)  # EatS: no leaders (V10)
    rules = ruleset_for_scenario(rules, scenario)  # EatS IV.1: both fronts draw 12, hold 13
    # the Events' Area blocks (EV8) are in the universe so that `reinforce:` cards can bring them in
    state0 = new_game_with_events_area(scenario, game_map, roster, rules, decks)
    cards0 = new_card_state(scenario, rules, np.zeros(1, dtype=np.uint64), decks=decks)
    for s in Side:  # id order: every game shuffles with its own chance stream
        top, ln = int(cards0.pile_top[s]), int(cards0.pile_len[s])
        cards0.pile[s, top:ln] = np.sort(cards0.pile[s, top:ln])
    cfg = game_config(scenario, game_map, state0, rules, roster=roster, decks=decks)
    orders0 = new_order_state(state0, rules)
    return GameSetup(
        scenario=scenario, game_map=game_map, roster=roster, rules=rules, state0=state0, cards0=cards0,
        orders0=orders0, orules=order_constants(rules),
        cr=rules.combat_constants(), er=engine_constants(rules), kr=card_constants(rules),
        rr=reinforce_constants(rules), cfg=cfg,
        block_ids=roster.blocks["id"].to_numpy()[state0.block_roster].astype(str),
        area_ids=game_map.areas["id"].to_numpy().astype(str),
        etable=cfg.etable,
    )


def game_setup(scenario, ruleset=None) -> GameSetup:
    """The :class:`GameSetup` of a scenario id (cached) or of a loaded Scenario, under ``ruleset``.

    ``ruleset``: a built-in ruleset name (``"soe"``, the default; ``"eats"`` = The Eagle and the
    Star, docs/rules.md "EatS variant"), a path to a rules TOML or a :class:`~soe_sim.rules.Rules`.
    An unknown name raises :class:`~soe_sim.errors.SoeInputError` with a suggestion. A GameSetup
    is returned as it is (its rules are fixed; passing a different ``ruleset`` is an error).
    """
    from soe_sim.rules import Rules, load_rules

    if isinstance(scenario, GameSetup):
        if ruleset is not None and not isinstance(ruleset, Rules) and _ruleset_id(ruleset) != scenario.rules["meta.id"]:
            raise SoeInputError(Problem("ruleset", "", "", str(ruleset), "this game set-up was built under another "
                                        f"ruleset ({scenario.rules['meta.id']!r})",
                                        "pass the scenario id instead of a GameSetup"))
        return scenario
    if isinstance(ruleset, Rules):
        from soe_sim.data import load_scenario

        sc = load_scenario(scenario) if isinstance(scenario, str) else scenario
        game_map, roster, decks = scenario_data(sc)
        return _build_setup(sc, game_map, roster, ruleset, decks)
    name = "soe" if ruleset is None else str(ruleset)
    load_rules(name)  # an unknown ruleset: SoeInputError with a suggestion
    if isinstance(scenario, os.PathLike):
        scenario = os.fspath(scenario)
    if not isinstance(scenario, (str, Scenario)):
        raise SoeInputError(Problem("scenario", "", "", repr(scenario)[:60],
                                    f"expected a scenario id, a TOML path, a Scenario or a GameSetup, not "
                                    f"{type(scenario).__name__}", "soe-sim scenarios lists the ids"))
    if isinstance(scenario, str):
        return _setup_cached(scenario, name)
    game_map, roster, decks = scenario_data(scenario)
    return _build_setup(scenario, game_map, roster, scenario_rules(scenario, name), decks)


def _ruleset_id(ruleset) -> str:
    from pathlib import Path

    from soe_sim.rules import load_rules

    p = Path(str(ruleset))
    return str(load_rules(ruleset)["meta.id"]) if p.suffix == ".toml" else str(ruleset)


def _cfg(setup: GameSetup, **kw) -> GameConfig:
    return setup.cfg._replace(**{k: v for k, v in kw.items() if v is not None})


# --------------------------------------------------------------------------------------------------
# Seeds


def game_seed_sequence(seed, game: int | None = None) -> np.random.SeedSequence:
    """The SeedSequence of a game: ``seed`` itself, or game ``game`` of a batch seeded ``seed``.

    ``seed`` may also be a ``(batch_seed, game)`` tuple (what the fuzzer reports).
    """
    if isinstance(seed, tuple) and len(seed) == 2 and game is None:
        seed, game = seed
    ss = as_seed_sequence(seed)
    if game is not None:
        game = check_count(game, "seed", field="game")  # numpy's own error would name no argument
        return np.random.SeedSequence(ss.entropy, spawn_key=tuple(ss.spawn_key) + (int(game),),
                                      pool_size=ss.pool_size)
    return np.random.SeedSequence(ss.entropy, spawn_key=tuple(ss.spawn_key), pool_size=ss.pool_size)


def game_streams(seed, game: int | None = None) -> np.ndarray:
    """(3,) uint64: the chance, Polish-policy and Soviet-policy stream seeds of a game."""
    return chunk_seeds(game_seed_sequence(seed, game), 3)


def _uint32_words(x) -> list[int] | None:
    """The uint32 words numpy's SeedSequence makes of an entropy / spawn-key value (ints and
    sequences of ints); None for anything else (the caller then takes the slow path)."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        n = int(x)
        if n < 0:
            return None
        if n == 0:
            return [0]
        words = []
        while n > 0:
            words.append(n & 0xFFFFFFFF)
            n >>= 32
        return words
    if isinstance(x, (tuple, list)):
        out = []
        for v in x:
            w = _uint32_words(v)
            if w is None:
                return None
            out += w
        return out
    return None


def game_stream_seeds(seed, start: int, stop: int) -> np.ndarray:
    """(stop - start, 3) uint64: :func:`game_streams` of games ``start .. stop - 1`` of a batch seeded
    ``seed``, computed in a kernel (``nb.game_stream_seeds_nb``, numpy's SeedSequence algorithm)
    instead of three SeedSequence objects per game. Seeds whose entropy is not made of integers use
    :func:`game_streams` itself."""
    ss = as_seed_sequence(seed)
    n = max(0, int(stop) - int(start))
    out = np.zeros((n, 3), dtype=np.uint64)
    if n == 0:
        return out
    run = _uint32_words(ss.entropy)
    key = _uint32_words(tuple(ss.spawn_key))
    if run is None or key is None:
        for g in range(n):
            out[g] = game_streams(ss, int(start) + g)
        return out
    run = run + [0] * max(0, int(ss.pool_size) - len(run))  # SeedSequence pads the run entropy of a child
    nb.game_stream_seeds_nb(np.array(run + key, dtype=np.uint64), int(ss.pool_size), int(start), out)
    return out


# --------------------------------------------------------------------------------------------------
# Policies (docs/policies.md)


@dataclass(frozen=True)
class Policy:
    """A named numba policy with parameter overrides (names: :data:`PARAMS`, docs/policies.md).

    ``Policy("balanced", {"attack_threshold": 0.7})``; ``omniscient=True`` is a shorthand for
    ``{"omniscient": 1}`` (features then use the true SP of every enemy block).
    """

    name: str = "random"
    params: dict = field(default_factory=dict)
    omniscient: bool = False

    def __post_init__(self):
        self.row()  # an unknown name or parameter fails here, where it was written, not when a game starts

    @property
    def id(self) -> int:
        return policy_id(self.name)

    def row(self) -> np.ndarray:
        """The float64 (N_PARAMS,) parameter row: the policy's defaults with the overrides."""
        import math

        from soe_sim.errors import Problem, SoeInputError, did_you_mean

        row = DEFAULT_PARAMS[self.id].copy()
        settable = [p for p in PARAMS if p != "slot"]  # the slot is set by play_game for Python policies
        for k, v in dict(self.params or {}).items():
            key = str(k).strip().lower()
            if key not in settable:
                hint = did_you_mean(key, settable)
                raise SoeInputError(Problem("policy", str(self.name), key, k, "unknown policy parameter",
                                            (hint + "; " if hint else "") + f"known parameters: {', '.join(settable)}"))
            if self.name == "random":
                raise SoeInputError(Problem("policy", "random", key, v,
                                            "the random policy takes no parameters (it reads no features)",
                                            f"use a scripted policy: {', '.join(_pol.SCRIPTED)}"))
            try:
                value = float(v)
                if isinstance(v, bool) or not math.isfinite(value):
                    raise ValueError
            except (TypeError, ValueError):
                raise SoeInputError(Problem("policy", str(self.name), key, v,
                                            "a policy parameter must be a finite number")) from None
            low, high, whole = _pol.PARAM_RANGES.get(key, (None, None, False))
            if ((low is not None and value < low) or (high is not None and value > high)
                    or (whole and value != int(value))):
                span = f"{'a whole number ' if whole else ''}" + (
                    f"from {low} to {high}" if high is not None else f"at least {low}")
                default = DEFAULT_PARAMS[self.id][PARAMS.index(key)]
                raise SoeInputError(Problem("policy", str(self.name), key, v, f"must be {span}",
                                            f"default {default:g}; see docs/policies.md"))
            row[PARAMS.index(key)] = value
        if self.omniscient:
            row[_pol.P_OMNISCIENT] = 1.0
        return row


def resolve_policy(spec) -> Policy | object:
    """A :class:`Policy` from a name, an id, ``(name, {param: value})`` or a Policy; an object with a
    ``choose`` method is returned as is (a Python policy). Unknown names or parameters raise
    :class:`~soe_sim.errors.SoeInputError` with a suggestion."""
    if isinstance(spec, Policy):
        spec.row()
        return spec
    if isinstance(spec, type):
        hint = "pass an instance, e.g. JitPolicy()" if hasattr(spec, "choose") else _POLICY_FORMS
        raise SoeInputError(Problem("policy", "", "", spec.__name__, "a class, not a policy", hint))
    if hasattr(spec, "choose") and callable(spec.choose):
        return spec
    if isinstance(spec, tuple) and len(spec) == 2:
        if not isinstance(spec[1], dict):
            raise SoeInputError(Problem("policy", "", "", spec, "(name, params): params must be a dict of "
                                        "parameter values", f"e.g. ({spec[0]!r}, {{'attack_threshold': 0.7}})"))
        pol = Policy(str(spec[0]).strip().lower(), dict(spec[1]))
    elif isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        pid = policy_id(spec)
        pol = Policy(next(k for k, v in POLICY_IDS.items() if v == pid))
    elif isinstance(spec, str):
        pol = Policy(spec.strip().lower())
    else:
        what = "a function" if callable(spec) else type(spec).__name__
        raise SoeInputError(Problem("policy", "", "", what, "not a policy", _POLICY_FORMS))
    pol.row()  # validates the name and the parameters
    return pol


_POLICY_FORMS = ("a policy is a name (" + ", ".join(POLICY_IDS) + "), (name, {param: value}), a Policy, or an "
                 "object with a method choose(decision, options, view) -> int (docs/policies.md)")


def policy_arrays(polish="random", soviet="random"):
    """``(ids int64 (2,), params float64 (2, N_PARAMS))`` of two numba policy specs (for
    :func:`soe_sim.engine.game.work.batch_work`)."""
    pols = [resolve_policy(polish), resolve_policy(soviet)]
    for p in pols:
        if not isinstance(p, Policy):
            from soe_sim.errors import Problem, SoeInputError

            raise SoeInputError(Problem("policy", "", "", type(p).__name__,
                                        "Python policies run only in play_game (the slow path)"))
    return (np.array([p.id for p in pols], dtype=np.int64), np.stack([p.row() for p in pols]))


class StateView:
    """What a Python policy sees at a decision (docs/policies.md "A Python policy").

    ``side`` (0 Polish, 1 Soviet), ``round``, ``phase``, ``vp`` (signed, + Polish), ``setup`` (the
    :class:`GameSetup`), :meth:`blocks` (own blocks in full; enemy blocks with their SP only once
    seen, unless ``omniscient``), ``rng`` (the side's own policy stream, a ``uint64`` array of
    length 1: draw with :meth:`rand_below` to keep common random numbers). ``state``, ``cards`` and
    ``orders`` are the live engine arrays (they include hidden information: read them only for
    what the side may know).
    """

    def __init__(self, setup, state, cards, orders, side, rng, omniscient=False):
        self.setup, self.state, self.cards, self.orders = setup, state, cards, orders
        self.side, self.rng, self.omniscient = int(side), rng, bool(omniscient)

    @property
    def round(self) -> int:
        return int(self.state.round[0])

    @property
    def phase(self) -> int:
        return int(self.state.phase[0])

    @property
    def vp(self) -> int:
        return int(self.state.vp[0])

    def rand_below(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` from the side's policy stream."""
        from soe_sim.engine.cards.nb import rand_below_nb

        return int(rand_below_nb(self.rng, int(n)))

    def blocks(self) -> pd.DataFrame:
        """Blocks on the map: ``block, side, area, sp`` (NaN for unseen enemy blocks), ``seen``."""
        st = self.state
        on = np.flatnonzero(st.block_status == nb.STATUS.ON_MAP)
        seen = self.omniscient | self.orders.seen[self.side, on]
        sp = st.block_sp[on].astype(float)
        sp[~seen] = np.nan
        return pd.DataFrame({"block": self.setup.block_ids[on], "side": st.block_side[on].astype(int),
                             "area": self.setup.area_ids[st.block_area[on]], "sp": sp, "seen": seen})


class JitPolicy:
    """A numba policy used through the Python interface (its choices equal the numba path's: same
    scorer, same features, same policy stream). Handy as a base for Python experiments."""

    def __init__(self, name="balanced", params=None):
        self.policy = resolve_policy((name, dict(params or {})))
        self._row = self.policy.row()

    @property
    def omniscient(self) -> bool:
        """The ``omniscient`` parameter (the game then shows this side every block, docs/policies.md)."""
        return bool(self._row[_pol.P_OMNISCIENT])

    def params_row(self) -> np.ndarray:
        """The parameter row the game's features are computed with (``unknown_sp``, ``omniscient``,
        ``cubes_weight`` shape the options themselves, not only their scores; audit K3)."""
        return self._row

    def choose(self, decision, options: pd.DataFrame, view: StateView) -> int:
        n = len(options)
        feat = np.zeros((n, N_FEAT), dtype=np.float64)
        feat[:, :options.shape[1]] = options.to_numpy(dtype=np.float64)
        return int(choose_option_nb(self.policy.id, self._row, int(decision), feat, n, view.rng, view.side))


def _python_adapter(obj, setup, state, cards, orders, omniscient):
    def choose(side, kind, feat, n, rng):
        decision = Decision(kind)
        names = FEATURES.get(kind, ())
        options = pd.DataFrame(np.array(feat[:n, :len(names)], copy=True), columns=list(names))
        k = obj.choose(decision, options, StateView(setup, state, cards, orders, side, rng, omniscient))
        # the rule of StepGame.apply: an integer (not a bool, not a float or a string that looks like one)
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or not 0 <= k < n:
            raise ValueError(f"{type(obj).__name__}.choose returned {k!r} for {decision.name} with {n} options: "
                             f"expected an integer 0..{n - 1}")
        return int(k)
    return choose


# --------------------------------------------------------------------------------------------------
# One game


@dataclass
class GameResult:
    """The result of :func:`play_game`."""

    outcome: str  # "finished" | "immediate_victory" | "aborted"
    winner: str | None  # "polish" | "soviet" | None (draw or aborted)
    vp: int  # final signed VP track (+ Polish)
    rounds: int  # rounds played (partly or fully)
    steps: int  # decision steps
    events: pd.DataFrame
    state: object
    cards: object
    log: EventLog
    row: np.ndarray  # the raw result row (nb.R_*)
    abort_reason: str | None = None
    violations: int = 0
    first_violation: dict | None = None

    def text(self) -> str:
        return format_events(self.events)


def _side_slug(v) -> str | None:
    v = int(v)
    return None if v < 0 else Side(v).slug


_NO_KEY_AREAS = np.zeros(0, dtype=np.int64)


def _no_reduction(n: int) -> tuple:
    """The reduction outputs of ``nb.play_games_serial_nb`` for ``n`` games played without it
    (stats, key_ctrl, traj_round, traj_phase, traj_vp, bat, counts: zero columns, never written)."""
    return (np.zeros((n, 0), dtype=np.int64),) * 5 + (np.zeros((n, 0, nb.N_BT), dtype=np.int64),
                                                      np.zeros((n, 0), dtype=np.int64))


def play_game(scenario, seed: SeedLike | tuple = None, polish="random", soviet="random", *,
              max_steps: int = DEFAULT_MAX_STEPS, max_phase_steps: int = DEFAULT_MAX_PHASE_STEPS,
              check_invariants: bool = False, log_capacity: int = DEFAULT_LOG_CAPACITY,
              log_detail: bool = False, ruleset=None) -> GameResult:
    """Play one game of ``scenario`` with seeded policies.

    Parameters
    ----------
    scenario : str, Scenario or GameSetup
        A scenario id (``soe-sim scenarios``), a TOML path, a loaded Scenario or a :class:`GameSetup`.
    seed : int, SeedSequence, Generator, (int, int) or None
        The game's seed; ``(batch_seed, i)`` is game ``i`` of :func:`play_games` / ``simulate`` seeded
        ``batch_seed`` (what their ``seed`` column and the fuzzer report). None: fresh entropy.
    polish, soviet : str, (str, dict), Policy or object
        A policy name (:data:`POLICY_IDS`), ``(name, {param: value})``, a :class:`Policy`, or a Python
        object with ``choose(decision, options, state_view) -> int`` (docs/policies.md; the slow path).
    max_steps, max_phase_steps : int
        Decision caps of the game and of one phase; a game that reaches one ends ``aborted``.
    check_invariants : bool
        Check the fuzzer's invariants after every phase (``violations`` / ``first_violation``).
    log_capacity : int
        Rows of the event log (≥ 1); a log that fills up aborts the game (``abort_reason``).
    log_detail : bool
        Also log the detail events ``BATTLE_PREP``, ``BATTLE_DECK``, ``POSITION`` and ``AREA_STATE``
        (:class:`Event`; for narrated games, ``soe-sim playtest``); the game played is the same, only its
        log is longer (give a larger ``log_capacity`` for long scenarios).
    ruleset : str, path or Rules, optional
        :func:`game_setup`: ``"soe"`` by default, ``"eats"``, a rules TOML or a Rules.

    Returns
    -------
    GameResult
        Outcome, winner, final VP, rounds, steps, the event frame (``events``, :func:`format_events` for
        text) and the final state arrays.
    """
    log_capacity = check_count(log_capacity, "log_capacity", 1)
    setup = game_setup(scenario, ruleset)
    cfg = _cfg(setup, max_steps=max_steps, max_phase_steps=max_phase_steps, check_invariants=check_invariants,
               log_detail=bool(log_detail))
    return _play_one(setup, seed, [resolve_policy(polish), resolve_policy(soviet)], cfg, log_capacity)


def _play_one(setup, seed, specs, cfg, log_capacity, step_violations=None) -> GameResult:
    """:func:`play_game` on a prepared ``setup`` and ``cfg`` with resolved policy ``specs``.

    ``step_violations``: when a list, both sides play the ``random`` policy from Python (the same
    choices, drawn from each side's policy stream: the game is the one ``random`` plays) and the
    invariants that hold at every decision (:func:`nb.check_step_invariants_nb`) are checked before
    each choice; the first violation, ``{"code", "step", "round", "phase"}``, is appended to the list.
    """
    streams = game_streams(seed)
    # the game is played in these (the batch kernel copies the start into them first) and counted
    # in the log's own ctr
    state, cards, orders, _, rng_chance, rng_policy = game_buffers(setup.state0, setup.cards0, setup.orders0)
    log = new_event_log(log_capacity)  # step._find_log reads this frame's ``log`` (StepGame.events)
    out = np.zeros(N_RES, dtype=np.int64)
    ids = np.zeros(2, dtype=np.int64)
    params = np.zeros((2, N_PARAMS), dtype=np.float64)
    slots = []
    try:
        for s, p in enumerate(specs):
            if isinstance(p, Policy) and step_violations is None:
                ids[s] = p.id
                params[s] = p.row()
                continue
            omni = bool(getattr(p, "omniscient", False)) and step_violations is None
            slot = max(_pol._PYTHON_POLICIES, default=0) + 1
            # the every-step chooser needs the game's scratch: reserved here, set once it exists
            _pol._PYTHON_POLICIES[slot] = (None if step_violations is not None
                                           else _python_adapter(p, setup, state, cards, orders, omni))
            slots.append(slot)
            ids[s] = POLICY_PYTHON
            # the features of a Python policy's options come from this row: the object's own when it has one
            # (JitPolicy), else random's (unknown_sp 3, docs/policies.md)
            row = getattr(p, "params_row", None)
            params[s] = row() if callable(row) and step_violations is None else DEFAULT_PARAMS[POLICY_RANDOM]
            params[s, _pol.P_SLOT] = slot
            params[s, _pol.P_OMNISCIENT] = 1.0 if omni else 0.0
        # The batch kernel of play_games / simulate plays this one game too: one compiled game loop
        # for all three (docs/engine-design.md "Compile time"). The policy set depends only on the
        # start, so it is that of the game's cards.
        kernel = nb.play_games_serial_nb
        cold_compile_notice(kernel)
        pset, scratch = batch_scratch(setup.state0, setup.cards0, setup.orders0, setup.game_map.arrays, setup.cr,
                                      setup.er, setup.kr, cfg, ids, params)
        if step_violations is not None:
            chooser = _step_checker(setup, state, cards, log, scratch.work.elim_ever, step_violations)
            for slot in slots:
                _pol._PYTHON_POLICIES[slot] = chooser
        kernel(setup.state0, setup.cards0, setup.orders0, setup.game_map.arrays, setup.cr, setup.er, setup.kr,
               setup.rr, setup.orules, cfg, pset, scratch, log.records, state, cards, orders, log.ctr, rng_chance,
               rng_policy, streams.reshape(1, 3), False, _NO_KEY_AREAS, out.reshape(1, N_RES), *_no_reduction(1))
    finally:
        for slot in slots:
            _pol._PYTHON_POLICIES.pop(slot, None)
    return _result(setup, out, state, cards, log)


def _step_checker(setup, state, cards, log, elim_ever, found):
    """The every-step fuzzer's chooser (``callable(side, kind, feat, n, rng)``, :data:`_pol._PYTHON_POLICIES`):
    checks :func:`nb.check_step_invariants_nb` on the live game arrays, then draws the ``random``
    policy's choice from the side's stream. The first violation goes to ``found``."""
    from soe_sim.engine.cards.nb import rand_below_nb

    m, er, vp_start = setup.game_map.arrays, setup.er, int(setup.state0.vp[0])

    def choose(side, kind, feat, n, rng):
        if not found and int(log.ctr[nb.C_ABORT]) != AbortReason.LOG_FULL:
            code = int(nb.check_step_invariants_nb(state, cards, m, er, vp_start, log.records, log.ctr, elim_ever))
            if code:
                found.append({"code": Violation(code).name.lower(), "step": int(log.ctr[nb.C_STEPS]),
                              "round": int(state.round[0]), "phase": int(state.phase[0])})
        return int(rand_below_nb(rng, n))
    return choose


def _result(setup, out, state, cards, log) -> GameResult:
    viol = int(out[nb.R_VIOLATIONS])
    first = None
    if viol:
        first = {"code": Violation(int(out[nb.R_VIOL_CODE])).name.lower(), "step": int(out[nb.R_VIOL_STEP]),
                 "round": int(out[nb.R_VIOL_ROUND]), "phase": int(out[nb.R_VIOL_PHASE])}
    abort = int(out[nb.R_ABORT])
    return GameResult(
        outcome=Outcome(int(out[nb.R_OUTCOME])).name.lower(), winner=_side_slug(out[nb.R_WINNER]),
        vp=int(out[nb.R_VP]), rounds=int(out[nb.R_ROUNDS]), steps=int(out[nb.R_STEPS]),
        events=events_frame(log, setup), state=state, cards=cards, log=log, row=out.copy(),
        abort_reason=AbortReason(abort).name.lower() if abort else None, violations=viol, first_violation=first,
    )


# --------------------------------------------------------------------------------------------------
# Many games


RESULT_COLUMNS = ("outcome", "winner", "vp", "rounds", "steps", "events", "abort", "violations",
                  "violation_code", "violation_step", "violation_round", "violation_phase", "phases",
                  "last_round", "last_phase")
assert len(RESULT_COLUMNS) == N_RES


def play_games(scenario, games: int, seed: SeedLike = None, threads: int | None = None, polish="random",
               soviet="random", *, max_steps: int = DEFAULT_MAX_STEPS,
               max_phase_steps: int = DEFAULT_MAX_PHASE_STEPS, check_invariants: bool = False,
               log_capacity: int = DEFAULT_LOG_CAPACITY, raw: bool = False, ruleset=None, start: int = 0):
    """Play ``games`` games in parallel, one row per game: the engine's raw results (``soe_sim.simulate``
    adds the statistics, key cities and trajectories).

    Parameters
    ----------
    scenario : str, Scenario or GameSetup
        As in :func:`play_game`.
    games : int
        Number of games (≥ 0).
    seed : int, SeedSequence, Generator or None
        Batch seed: game ``i`` equals ``play_game(scenario, seed=(seed, i))``.
    threads : int, optional
        Numba threads (≥ 1; default: numba's current count); the result does not depend on it.
    polish, soviet : str, (str, dict) or Policy
        Numba policies (:func:`play_game`; Python policies run only there).
    max_steps, max_phase_steps, check_invariants, log_capacity
        As in :func:`play_game`.
    raw : bool
        Return the int64 array of shape ``(games, N_RES)`` instead of the frame.
    ruleset : str, path or Rules, optional
        As in :func:`game_setup`.
    start : int
        Play games ``start .. start + games - 1`` of the batch seeded ``seed`` (the frame's index says
        which), so a long batch can be played in parts.

    Returns
    -------
    DataFrame
        Columns :data:`RESULT_COLUMNS` (``outcome``, ``winner`` as names; ``vp`` the final signed VP,
        + Polish; ``rounds``, ``steps``, ``events``, the abort reason and the first invariant violation),
        index ``start .. start + games - 1``; or the raw array with ``raw``.
    """
    games = check_count(games, "games")
    start = check_count(start, "start")
    log_capacity = check_count(log_capacity, "log_capacity", 1)
    if threads is not None:
        threads = check_count(threads, "threads", 1)
    setup = game_setup(scenario, ruleset)
    cfg = _cfg(setup, max_steps=max_steps, max_phase_steps=max_phase_steps, check_invariants=check_invariants)
    seeds = game_stream_seeds(seed, int(start), int(start) + int(games))
    out = np.zeros((int(games), N_RES), dtype=np.int64)
    policies, params = policy_arrays(polish, soviet)
    n_threads = max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)) if threads else numba.get_num_threads()
    args = (setup.state0, setup.cards0, setup.orders0, setup.game_map.arrays, setup.cr, setup.er, setup.kr,
            setup.rr, setup.orules, cfg)
    # the batch kernel of simulate, without its reduction (one compiled game loop for both)
    run_chunks(nb.play_games_serial_nb, args, seeds, (out, *_no_reduction(out.shape[0])), n_threads,
               (False, _NO_KEY_AREAS),
               per_thread=lambda a: batch_work(*a[:7], a[9], policies.copy(), params.copy(), int(log_capacity)))
    if raw:
        return out
    df = pd.DataFrame(out, columns=list(RESULT_COLUMNS))
    df["outcome"] = [Outcome(int(v)).name.lower() for v in df["outcome"]]
    df["winner"] = [_side_slug(v) or "" for v in df["winner"]]
    df["abort"] = [AbortReason(int(v)).name.lower() if v else "" for v in df["abort"]]
    df["violation_code"] = [Violation(int(v)).name.lower() if v else "" for v in df["violation_code"]]
    df.index = pd.RangeIndex(int(start), int(start) + len(df), name="game")
    return df


def private_copy(obj):
    """A deep copy of the arrays in ``obj`` (an array, or a NamedTuple of arrays, scalars and
    NamedTuples); anything else is returned as is."""
    if isinstance(obj, np.ndarray):
        return obj.copy()
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*[private_copy(v) for v in obj])
    if isinstance(obj, tuple):
        return tuple(private_copy(v) for v in obj)
    return obj


def run_chunks(kernel, args, seeds, outs, threads, extra=(), chunk=None, per_thread=None):
    """Run ``kernel(*args, *work, seeds[lo:hi], *extra, *(o[lo:hi] for o in outs))`` over chunks of
    games, ``work = per_thread(args)`` (a tuple, e.g. :func:`~soe_sim.engine.game.work.batch_work`; empty without
    ``per_thread``).

    ``kernel`` is a ``nogil`` numba kernel that plays the games of its chunk one after the other.
    With ``threads > 1`` the chunks go to a thread pool; each worker thread calls the kernel with
    its own :func:`private_copy` of ``args`` (the read-only inputs shared by every game), so the
    reference counts of their arrays — touched at every kernel call inside a game — stay in one
    core's cache, and with its own ``work``, made once and kept across its chunks. Every game
    depends only on its seed row: the result does not depend on the threads or the chunking.
    A caller that runs many batches on the same inputs keeps a :class:`ChunkWorkers` instead.
    """
    with ChunkWorkers(args, threads, per_thread) as workers:
        workers.run(kernel, seeds, outs, extra, chunk)


class ChunkWorkers:
    """The threads of :func:`run_chunks` with their private inputs and work, kept across calls.

    ``simulate`` plays its games in batches (a progress bar, the ``--ci-width`` check): made once per
    call, the workers keep each thread's copy of ``args`` and its ``per_thread(args)`` work — the
    scratch, the event log, the policies' win-probability memo (pure values, docs/engine-design.md
    "Performance") — from one batch to the next instead of allocating, copying and refilling them for
    every batch. Use as a context manager (the thread pool is shut down on exit).
    """

    def __init__(self, args, threads, per_thread=None):
        import threading

        self.args = args
        self.threads = max(1, int(threads))
        self.per_thread = per_thread
        self._local = threading.local()
        self._pool = None
        self._work = None  # the calling thread's work (threads == 1 or a single game)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def run(self, kernel, seeds, outs, extra=(), chunk=None):
        """:func:`run_chunks` of ``kernel`` on these workers' inputs."""
        for f in self.submit(kernel, seeds, outs, extra, chunk):
            f.result()

    def submit(self, kernel, seeds, outs, extra=(), chunk=None) -> list:
        """Start :meth:`run` and return its futures (wait with ``f.result()``; the ``outs`` slices are
        written when all are done) — queued behind the tasks already submitted, so a caller can hand
        the threads the next batch before it reads the last one. On one thread the games are played
        before it returns (no futures)."""
        n = seeds.shape[0]
        cold_compile_notice(kernel)
        if self.threads == 1 or n <= 1:
            if self._work is None:
                self._work = tuple(self.per_thread(self.args)) if self.per_thread else ()
            kernel(*self.args, *self._work, seeds, *extra, *outs)
            return []
        import math
        from concurrent.futures import ThreadPoolExecutor

        step = int(chunk) if chunk else max(1, min(64, math.ceil(n / (8 * self.threads))))
        local = self._local

        def work(lo, hi):
            a = getattr(local, "args", None)
            if a is None:
                a = local.args = private_copy(self.args)
                local.work = tuple(self.per_thread(a)) if self.per_thread else ()
            kernel(*a, *local.work, seeds[lo:hi], *extra, *(o[lo:hi] for o in outs))

        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.threads)
        return [self._pool.submit(work, lo, min(n, lo + step)) for lo in range(0, n, step)]


# --------------------------------------------------------------------------------------------------
# Rendering


# event kinds whose area / area2 / block field holds a number, not an index (see nb._EventC)
_NOT_AREA = frozenset({EVENT.CARD_PLAYED, EVENT.INITIATIVE, EVENT.FIRST_PLAYER})
_NOT_AREA2 = frozenset({EVENT.ARRIVAL_CHECK, EVENT.CARD_EVENT})
_NOT_BLOCK = frozenset({EVENT.CARD_PLAYED, EVENT.ARRIVAL_CHECK, EVENT.BATTLE_LOSSES, EVENT.OBJECTIVE,
                        EVENT.COMBAT_CARD, EVENT.ORDER_PLACED, EVENT.BATTLE_PREP, EVENT.BATTLE_DECK})


def events_frame(log: EventLog, setup: GameSetup | None = None) -> pd.DataFrame:
    """The used part of an event log as a DataFrame: kind names, side slugs, area and block ids."""
    rec = log.used() if isinstance(log, EventLog) else np.asarray(log)
    df = pd.DataFrame({k: rec[k].astype(np.int64) for k in EVENT_DTYPE.names})
    df["kind"] = [Event(int(v)).name.lower() for v in df["kind"]]
    df["side"] = [_side_slug(v) or "" for v in df["side"]]
    if setup is not None:
        kinds = rec["kind"]
        for col, exempt in (("area", _NOT_AREA), ("area2", _NOT_AREA2)):
            df[col] = [str(v) if k in exempt else ("" if v < 0 else str(setup.area_ids[v]))
                       for k, v in zip(kinds, df[col])]
        df["block"] = [str(v) if k in _NOT_BLOCK else ("" if v < 0 else str(setup.block_ids[v]))
                       for k, v in zip(kinds, df["block"])]
    return df


def format_events(events: pd.DataFrame) -> str:
    """One line per event: ``round.phase kind side area>area2 block value value2`` (golden files)."""
    lines = []
    for r in events.itertuples(index=False):
        where = str(r.area) if r.area not in ("", -1, "-1") else "-"
        if r.area2 not in ("", -1, "-1"):
            where += f">{r.area2}"
        blk = str(r.block) if r.block not in ("", -1, "-1") else "-"
        lines.append(f"{r.round}.{r.phase} {r.kind} {r.side or '-'} {where} {blk} {r.value} {r.value2}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------------------
# Fuzzer


_FUZZ_PART = 5000  # games per batch of the every-phase fuzzer (its progress bar moves once per part)


def fuzz(scenario, games: int, seed: SeedLike = 0, *, max_steps: int = DEFAULT_MAX_STEPS,
         max_phase_steps: int = DEFAULT_MAX_PHASE_STEPS, threads: int | None = None, ruleset=None,
         every_step: bool = False, progress: bool = False) -> dict:
    """Random decisions over ``games`` seeded games with the invariants checked after every phase
    (:func:`nb.check_invariants_nb`) and, with ``every_step``, also before every decision that has a
    choice (:func:`nb.check_step_invariants_nb`: all but the phase-end ones — stacking, unresolved
    battles, cards left in play).

    Game ``i`` is ``play_game(scenario, seed=(seed, i))`` with ``random`` policies in both modes (the
    every-step mode plays them one by one through a Python chooser that draws the same choices, so
    it is slower: about 17 ms per Kiev Offensive game on the project's 2-core VM, against 1 ms).
    Returns ``{"scenario", "ruleset", "games", "seed", "checked", "violations", "crashes", "stalemates",
    "first_violation", "first_crash", "outcomes", "winners", "mean_steps"}``: ``checked`` = ``"every
    phase"`` or ``"every decision"``; ``violations`` = games with at least one violated invariant;
    ``first_violation`` (or None) = ``{"game", "seed": [seed, game], "step", "round", "phase", "code",
    "when"}`` for the lowest-numbered such game, its earliest violation (``when``: ``"decision"`` —
    before the choice of step ``step`` — or ``"phase end"``), so that it can be replayed;
    ``stalemates`` = games aborted by a hard cap; ``crashes`` = games whose kernel raised (re-run one
    by one to find them). ``ruleset``: as in :func:`game_setup` (``"eats"``: The Eagle and the Star).
    ``progress``: a tqdm bar on stderr (in the every-phase mode the games are played in parts of
    ``_FUZZ_PART`` games, the same games whatever the parts).
    """
    check_seed(seed)  # a bad seed is an input error, not a crash of every game
    setup = game_setup(scenario, ruleset)
    seed_int = seed
    crashes = 0
    first_crash = None
    step_found = {}  # game -> its first violation before a decision (every_step)
    df = None
    from tqdm.auto import tqdm

    if not every_step:
        parts = []
        try:
            with tqdm(total=int(games), unit="game", disable=not progress, desc=f"fuzz {setup.scenario.id}") as bar:
                for start in range(0, int(games), _FUZZ_PART):
                    n = min(_FUZZ_PART, int(games) - start)
                    parts.append(play_games(setup, n, seed, threads=threads, max_steps=max_steps,
                                            max_phase_steps=max_phase_steps, check_invariants=True, start=start))
                    bar.update(n)
        except Exception as batch_exc:  # a kernel raised: find the culprits game by game
            batch_error = f"{type(batch_exc).__name__}: {batch_exc}"
        else:
            batch_error = None
            df = pd.concat(parts) if len(parts) > 1 else parts[0] if parts else play_games(setup, 0, seed)
    if df is None:
        cfg = _cfg(setup, max_steps=max_steps, max_phase_steps=max_phase_steps, check_invariants=True)
        specs = [resolve_policy("random"), resolve_policy("random")]
        rows = []
        for i in tqdm(range(int(games)), unit="game", disable=not (progress and every_step),
                      desc=f"fuzz {setup.scenario.id}"):
            found = [] if every_step else None
            try:
                rows.append(_play_one(setup, (seed, i), specs, cfg, DEFAULT_LOG_CAPACITY, found).row)
            except Exception as exc:  # noqa: BLE001 - reported, not hidden
                crashes += 1
                if first_crash is None:
                    first_crash = {"game": i, "seed": [seed_int, i], "error": f"{type(exc).__name__}: {exc}"}
                rows.append(np.full(N_RES, -1, dtype=np.int64))
            if found:
                step_found[i] = found[0]
        if crashes == 0 and not every_step:
            # Every game passes alone, so the parallel batch kernel itself failed (e.g. it does not
            # compile): that is a crash of the engine, never a silent fallback.
            crashes = 1
            first_crash = {"game": None, "seed": [seed_int, None], "error": f"play_games batch: {batch_error}"}
        out = np.stack(rows) if rows else np.zeros((0, N_RES), np.int64)
        ok = out[:, nb.R_OUTCOME] >= 0
        df = pd.DataFrame(out[ok], columns=list(RESULT_COLUMNS), index=np.flatnonzero(ok))
        df["outcome"] = [Outcome(int(v)).name.lower() for v in df["outcome"]]
        df["winner"] = [_side_slug(v) or "" for v in df["winner"]]
        df["violation_code"] = [Violation(int(v)).name.lower() if v else "" for v in df["violation_code"]]
    bad = sorted(set(int(g) for g in df.index[df["violations"] > 0]) | set(step_found))
    first = None
    if bad:
        g = bad[0]
        cands = []
        if g in df.index and int(df.loc[g, "violations"]) > 0:
            r = df.loc[g]
            cands.append({"step": int(r["violation_step"]), "round": int(r["violation_round"]),
                          "phase": int(r["violation_phase"]), "code": str(r["violation_code"]), "when": "phase end"})
        if g in step_found:
            cands.append({**step_found[g], "when": "decision"})
        first = {"game": g, "seed": [seed_int, g], **min(cands, key=lambda c: c["step"])}
    return {
        "scenario": setup.scenario.id,
        "ruleset": setup.rules.label,
        "games": int(games),
        "seed": seed_int,
        "checked": "every decision" if every_step else "every phase",
        "violations": len(bad),
        "crashes": crashes,
        "stalemates": int((df["outcome"] == "aborted").sum()),
        "first_violation": first,
        "first_crash": first_crash,
        "outcomes": {k: int(v) for k, v in df["outcome"].value_counts().sort_index().items()},
        "winners": {(k or "none"): int(v) for k, v in df["winner"].value_counts().sort_index().items()},
        "mean_steps": float(df["steps"].mean()) if len(df) else 0.0,
    }
