"""The game state as a struct of numpy arrays (a ``NamedTuple``), built from a scenario.

:func:`new_game` turns a validated :class:`~soe_sim.data.scenario.Scenario` into a
:class:`GameState`: one row per block of a fixed *block universe* (every roster block the scenario
uses: deployed, scheduled as a reinforcement or in a force pool; roster order), one row per map
area, and a few small "scalar" arrays (length-1 arrays so that numba kernels can update them in
place). Every field is a numpy array, so the whole tuple can be handed to ``@njit`` code, and the
kernels of :mod:`soe_sim.engine.nb` take its fields one by one.

Codes
-----
* sides: :data:`soe_sim.data.enums.SIDE` (``-1`` = nobody / neutral);
* block status: :class:`BlockStatus` / :data:`STATUS` (numba mirror);
* phases: ``0`` = replenish cards (SoE 6.0), ``1..N`` = operation phases (SoE 7.0, N =
  ``round.operation_phases``), :data:`PHASE_REINFORCEMENT` = reinforcement phase (SoE 8.0);
* cubes: columns :data:`CUBE_INFANTRY`, :data:`CUBE_CAVALRY`, :data:`CUBE_ALLIED` (SoE 3.2).

The VP track is one signed number (SoE 7.8): positive = Polish advantage, negative = Soviet.
Apply VP changes with :func:`soe_sim.engine.nb.vp_add_nb` (the track has no 0 space, docs/rules.md E10).
"""
from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

import numpy as np
import pandas as pd

from soe_sim.data.enums import Arm, Front, Nation, Side, UnitClass
from soe_sim.errors import Problem, SoeInputError

__all__ = [
    "BlockStatus",
    "STATUS",
    "NO_AREA",
    "NO_SIDE",
    "PHASE_REPLENISH",
    "PHASE_REINFORCEMENT",
    "CUBE_INFANTRY",
    "CUBE_CAVALRY",
    "CUBE_ALLIED",
    "CUBE_KINDS",
    "EngineRules",
    "GameState",
    "engine_constants",
    "initial_control",
    "new_game",
]


class BlockStatus(IntEnum):
    """Where a block of the universe is (SoE 4.0, 7.41.5, 7.42, 7.71)."""

    ON_MAP = 0
    FORCE_POOL = 1  # available to build (SoE 8.4) or detach (SoE 2.2)
    SCHEDULED = 2  # a reinforcement waiting on the track sheet (SoE 4.0)
    DESTROYED_TO_POOL = 3  # destroyed in battle, back in the force pool (SoE 7.41.5): may be rebuilt
    ELIMINATED_PERMANENT = 4  # no retreat (7.42), out of supply (7.71), leader lost (9.0): never rebuilt


class _StatusC(NamedTuple):
    ON_MAP: int = int(BlockStatus.ON_MAP)
    FORCE_POOL: int = int(BlockStatus.FORCE_POOL)
    SCHEDULED: int = int(BlockStatus.SCHEDULED)
    DESTROYED_TO_POOL: int = int(BlockStatus.DESTROYED_TO_POOL)
    ELIMINATED_PERMANENT: int = int(BlockStatus.ELIMINATED_PERMANENT)


STATUS = _StatusC()
"""Numba mirror of :class:`BlockStatus` (plain ints, frozen as constants in ``@njit`` code)."""

NO_AREA = -1  # block_area of a block that is not on the map
NO_SIDE = -1  # garrison_side / control of nobody (a neutral key city, SoE 1.3)
PHASE_REPLENISH = 0  # SoE 6.0
PHASE_REINFORCEMENT = 99  # SoE 8.0 (same sort key as soe_sim.data.scenario.RoundPhase)
CUBE_INFANTRY, CUBE_CAVALRY, CUBE_ALLIED = 0, 1, 2  # SoE 3.2 black / white / green
CUBE_KINDS = ("infantry", "cavalry", "allied")


class EngineRules(NamedTuple):
    """Engine rule constants in kernel-ready form (all from ``data/rules/*.toml``)."""

    infantry_supply_range: int  # SoE 7.7
    cavalry_supply_range: int  # SoE 7.7
    rail_depot_range: int  # SoE 7.6
    rail_max_areas: int  # SoE 7.2 Rail Transport, 7.6
    rail_max_blocks: int  # SoE 7.2 Rail Transport, 7.6
    max_blocks: int  # SoE 1.0, 7.33
    max_blocks_per_link: int  # SoE 7.33
    vp_out_of_supply: int  # SoE 7.71
    vp_encirclement: int  # SoE 7.42
    move_infantry: int  # SoE 2.0, 7.31
    move_cavalry: int
    move_leader: int  # SoE 9.0
    forced_infantry: int  # SoE 2.0, 7.2
    forced_cavalry: int
    forced_leader: int
    operation_phases: int  # SoE 5.0
    garrisons_in_supply_phase: bool  # EatS II.4.2 (reading V6); SoE 8.1: Reinforcement Phase only


def engine_constants(rules) -> EngineRules:
    """Kernel-ready engine constants of a :class:`~soe_sim.rules.Rules`."""
    r = rules
    return EngineRules(
        infantry_supply_range=int(r["supply.infantry_range"]),
        cavalry_supply_range=int(r["supply.cavalry_range"]),
        rail_depot_range=int(r["supply.depot_range_for_rail"]),
        rail_max_areas=int(r["rail.max_areas"]),
        rail_max_blocks=int(r["rail.max_blocks"]),
        max_blocks=int(r["stacking.max_blocks"]),
        max_blocks_per_link=int(r["movement.max_blocks_per_link"]),
        vp_out_of_supply=int(r["vp.out_of_supply_elimination"]),
        vp_encirclement=int(r["vp.encirclement_elimination"]),
        move_infantry=int(r["movement.infantry"]),
        move_cavalry=int(r["movement.cavalry"]),
        move_leader=int(r["movement.leader"]),
        forced_infantry=int(r["movement.infantry_forced_march"]),
        forced_cavalry=int(r["movement.cavalry_forced_march"]),
        forced_leader=int(r["movement.leader_forced_march"]),
        operation_phases=int(r["round.operation_phases"]),
        garrisons_in_supply_phase=bool(r["garrison.place_in_supply_phase"]),
    )


class GameState(NamedTuple):
    """The whole game position as numpy arrays (pass fields to :mod:`soe_sim.engine.nb` kernels).

    Per block (``n_blocks`` rows, the scenario's block universe in roster order):

    ``block_roster`` int16 row in the roster (``roster.blocks.iloc[i]``) · ``block_side`` int8 ·
    ``block_arm`` int8 (:data:`~soe_sim.data.enums.ARM`) · ``block_class`` int8
    (:class:`~soe_sim.data.enums.UnitClass`) · ``block_nation`` int8 · ``block_max_sp`` int8 ·
    ``block_sp`` int8 current SP (0 when not on the map) · ``block_area`` int16 (``-1`` off map) ·
    ``block_status`` int8 (:data:`STATUS`) · ``block_prev_area`` int16 the area the block entered
    its current area from this phase (``-1`` if it did not move; SoE 7.33, 7.42 attacker retreat) ·
    ``block_arrival`` int16 order in which the block entered its area this phase (0 = began the
    phase there; the latest arrivals are the ones that overstack, SoE 7.33) ·
    ``block_in_supply`` bool result of the last supply check (SoE 7.7; off-map blocks True) ·
    ``block_arrive_round`` int16, ``block_arrive_phase`` int8, ``block_arrive_area`` int16,
    ``block_arrive_sp`` int8, ``block_arrive_condition`` int8 (index into
    ``scenario.special_rules``, ``-1`` none): the reinforcement schedule (SoE 4.0; ``-1`` rows for
    blocks that are not reinforcements).

    Per area (``n_areas``, map order): ``garrison_side`` int8 (``-1`` none; SoE 3.0) ·
    ``control`` int8 (``-1`` neutral; SoE 1.3, see :func:`initial_control`) · ``supply_base`` int8
    the side whose supply base the area has become in this game (``-1`` none, the state at the
    start): a supply source that is also that side's depot while no enemy block is in it — Kaunas
    once Lithuania joins the Soviets (special rule ``neutral_nation`` ``supply_base``, EatS II.3;
    docs/rules.md G16). The map's fixed sources (Warsaw, the Eastern Links) are ``GameMap`` data.

    Track sheet (SoE 3.3): ``round`` int16 (1,) · ``phase`` int8 (1,) · ``end`` int16 (2,) last
    ``(round, phase)`` played · ``vp`` int16 (1,) signed VP track (SoE 7.8) ·
    ``initiative_side`` int8 (2,) and ``initiative_level`` int8 (2,) indexed by
    :data:`~soe_sim.data.enums.FRONT` (SoE 6.1) · ``cubes`` int16 (2, 2, 3) saved reinforcement cubes
    per side × front (:data:`~soe_sim.data.enums.FRONT`) × (infantry, cavalry, allied) (SoE 3.2,
    7.12: a card played on a front puts its cubes in that front's pool; EatS X each front has its
    own RP track; with ``reinforcement.saved_cubes_per_front`` false, SoE, the two pools of a side
    are spent as one, reading RF14). A scenario's starting ``[cubes]`` go to the northern pool.
    """

    block_roster: np.ndarray
    block_side: np.ndarray
    block_arm: np.ndarray
    block_class: np.ndarray
    block_nation: np.ndarray
    block_max_sp: np.ndarray
    block_sp: np.ndarray
    block_area: np.ndarray
    block_status: np.ndarray
    block_prev_area: np.ndarray
    block_arrival: np.ndarray
    block_in_supply: np.ndarray
    block_arrive_round: np.ndarray
    block_arrive_phase: np.ndarray
    block_arrive_area: np.ndarray
    block_arrive_sp: np.ndarray
    block_arrive_condition: np.ndarray
    garrison_side: np.ndarray
    control: np.ndarray
    round: np.ndarray
    phase: np.ndarray
    end: np.ndarray
    vp: np.ndarray
    initiative_side: np.ndarray
    initiative_level: np.ndarray
    cubes: np.ndarray
    supply_base: np.ndarray

    # -- helpers (plain Python; numba only sees the array fields) ---------------------------------
    @property
    def n_blocks(self) -> int:
        return int(self.block_side.shape[0])

    @property
    def n_areas(self) -> int:
        return int(self.control.shape[0])

    def copy(self) -> "GameState":
        """A deep copy (every array copied)."""
        return GameState(*(np.array(a, copy=True) for a in self))

    def to_frame(self, roster=None, game_map=None) -> pd.DataFrame:
        """One row per block (ids and names when ``roster`` / ``game_map`` are given)."""
        df = pd.DataFrame({
            "side": [_slug(Side, v) for v in self.block_side],
            "arm": [_slug(Arm, v) for v in self.block_arm],
            "class": [_slug(UnitClass, v) for v in self.block_class],
            "nation": [_slug(Nation, v) for v in self.block_nation],
            "sp": self.block_sp.astype(int),
            "max_sp": self.block_max_sp.astype(int),
            "status": [BlockStatus(int(v)).name.lower() for v in self.block_status],
            "area": self.block_area.astype(int),
            "prev_area": self.block_prev_area.astype(int),
            "in_supply": self.block_in_supply.astype(bool),
        })
        if game_map is not None:
            ids = game_map.areas["id"].to_numpy()
            for col in ("area", "prev_area"):
                df[col] = [str(ids[a]) if a >= 0 else "" for a in df[col]]
        if roster is not None:
            df.insert(0, "block", roster.blocks["id"].to_numpy()[self.block_roster])
        df.index.name = "i"
        return df

    def areas_frame(self, game_map=None) -> pd.DataFrame:
        """One row per area that has a garrison, a controller or blocks."""
        n = self.n_areas
        on = self.block_status == STATUS.ON_MAP
        counts = np.zeros((2, n), dtype=int)
        for s in (0, 1):
            np.add.at(counts[s], self.block_area[on & (self.block_side == s)].astype(int), 1)
        ids = game_map.areas["id"].to_numpy() if game_map is not None else np.arange(n)
        df = pd.DataFrame({
            "area": ids,
            "control": [_slug(Side, v) for v in self.control],
            "garrison": [_slug(Side, v) for v in self.garrison_side],
            "polish_blocks": counts[0],
            "soviet_blocks": counts[1],
        })
        keep = (self.control >= 0) | (self.garrison_side >= 0) | (counts.sum(axis=0) > 0)
        return df[keep]

    def summary(self, game_map=None, roster=None) -> str:
        """A short human-readable description of the position (for debugging)."""
        vp = int(self.vp[0])
        lead = "even" if vp == 0 else (f"Polish +{vp}" if vp > 0 else f"Soviet +{-vp}")
        ph = int(self.phase[0])
        phase = {PHASE_REPLENISH: "replenish", PHASE_REINFORCEMENT: "reinforcement"}.get(ph, f"operation {ph}")
        lines = [f"round {int(self.round[0])} {phase} (ends round {int(self.end[0])} "
                 f"phase {int(self.end[1])}); VP {lead}"]
        for f in Front:
            lines.append(f"initiative {f.slug}: {_slug(Side, self.initiative_side[f])} "
                         f"{int(self.initiative_level[f])}")
        for s in Side:
            st = self.block_status[self.block_side == s]
            c = {f.slug: self.cubes[s, f].tolist() for f in Front}
            lines.append(
                f"{s.slug}: {int((st == STATUS.ON_MAP).sum())} on map, "
                f"{int((st == STATUS.SCHEDULED).sum())} scheduled, "
                f"{int(np.isin(st, (STATUS.FORCE_POOL, STATUS.DESTROYED_TO_POOL)).sum())} in pool, "
                f"{int((st == STATUS.ELIMINATED_PERMANENT).sum())} eliminated; "
                f"{int(((self.control == s)).sum())} areas controlled; cubes {c}")
        return "\n".join(lines)


def _slug(enum_cls, v) -> str:
    v = int(v)
    return "" if v < 0 else enum_cls(v).slug


def _side_code(slug) -> int:
    return int(Side.from_slug(slug)) if slug else NO_SIDE


def initial_control(key_city, eastern_link, garrison_side, block_side, block_area, block_status) -> np.ndarray:
    """Control at the start of a scenario (SoE 1.3, 1.4, 3.0): plain Python.

    A key city is controlled by the side of its garrison (SoE 4.0: placed "controlling player side
    up"), else by the side whose blocks occupy it, else neutral. A non-key area is "controlled"
    (held) by the only side with blocks in it, else ``-1``. Soviet Eastern Links are always Soviet (SoE 1.4; docs/rules.md E3).
    """
    n = len(key_city)
    present = np.zeros((2, n), dtype=bool)
    on = (block_status == STATUS.ON_MAP) & (block_area >= 0)
    for s in (0, 1):
        present[s, block_area[on & (block_side == s)].astype(int)] = True
    control = np.full(n, NO_SIDE, dtype=np.int8)
    for i in range(n):
        g = int(garrison_side[i])
        if eastern_link[i]:
            control[i] = int(Side.SOVIET)
        elif g >= 0:
            control[i] = g  # SoE 4.0: the garrison is placed "controlling player side up"
        elif present[0, i] != present[1, i]:
            control[i] = 0 if present[0, i] else 1
    return control


def new_game(scenario, game_map, roster, rules) -> GameState:
    """Build the starting :class:`GameState` of ``scenario`` (SoE 4.0).

    Parameters
    ----------
    scenario : soe_sim.data.scenario.Scenario
    game_map : soe_sim.data.map.GameMap
    roster : soe_sim.data.blocks.Roster
    rules : soe_sim.rules.Rules

    The block universe is every roster block named by the deployment, the reinforcements or the
    force pools, in roster order. Deployed blocks are ``ON_MAP`` at their SP, reinforcements
    ``SCHEDULED`` (their arrival in the ``block_arrive_*`` columns), force-pool blocks
    ``FORCE_POOL``. Garrisons come from the scenario (SoE 4.0 "a garrison counter on each key
    city"), control from :func:`initial_control`, the VP track from ``scenario.vp_signed``.
    """
    consts = engine_constants(rules)
    idx = roster.block_index
    used: dict[int, None] = {}
    for bid in list(scenario.deployment["block"]) + list(scenario.reinforcements["block"]):
        used[idx[bid]] = None
    for side in Side.slugs():
        for bid in scenario.force_pool.get(side, []):
            used[idx[bid]] = None
    rows = np.array(sorted(used), dtype=np.int16)
    nb = len(rows)
    pos = {int(r): k for k, r in enumerate(rows)}
    blocks = roster.blocks

    def codes(col, enum_cls):
        return np.array([int(enum_cls.from_slug(blocks[col].iat[r])) for r in rows], dtype=np.int8)

    block_side = codes("side", Side)
    block_arm = codes("arm", Arm)
    block_class = codes("class", UnitClass)
    block_nation = codes("nation", Nation)
    block_max_sp = np.array([int(blocks["max_sp"].iat[r]) for r in rows], dtype=np.int8)
    block_sp = np.zeros(nb, dtype=np.int8)
    block_area = np.full(nb, NO_AREA, dtype=np.int16)
    block_status = np.full(nb, STATUS.FORCE_POOL, dtype=np.int8)
    arr_round = np.full(nb, -1, dtype=np.int16)
    arr_phase = np.full(nb, -1, dtype=np.int8)
    arr_area = np.full(nb, NO_AREA, dtype=np.int16)
    arr_sp = np.full(nb, -1, dtype=np.int8)
    arr_cond = np.full(nb, -1, dtype=np.int8)

    ai = game_map.area_index
    for bid, area, sp in zip(scenario.deployment["block"], scenario.deployment["area"], scenario.deployment["sp"]):
        k = pos[idx[bid]]
        block_status[k] = STATUS.ON_MAP
        block_area[k] = ai[area]
        block_sp[k] = int(sp) if sp is not None and not pd.isna(sp) else int(block_max_sp[k])
    rule_ids = [r.get("id") for r in scenario.special_rules]
    r = scenario.reinforcements
    for bid, rnd, ph, area, sp, cond in zip(r["block"], r["round"], r["phase"], r["area"], r["sp"], r["condition"]):
        k = pos[idx[bid]]
        block_status[k] = STATUS.SCHEDULED
        arr_round[k] = int(rnd)
        arr_phase[k] = PHASE_REINFORCEMENT if ph == "reinforcement" else int(ph)
        arr_area[k] = ai[area]
        arr_sp[k] = int(sp) if sp is not None and not pd.isna(sp) else int(block_max_sp[k])
        arr_cond[k] = rule_ids.index(cond) if cond in rule_ids else -1

    n = game_map.n_areas
    garrison_side = np.full(n, NO_SIDE, dtype=np.int8)
    for area, side in zip(scenario.garrisons["area"], scenario.garrisons["side"]):
        garrison_side[ai[area]] = _side_code(side)
    control = initial_control(game_map.garrison, game_map.eastern_link, garrison_side, block_side,
                              block_area, block_status)

    def phase_code(p) -> int:
        return PHASE_REINFORCEMENT if p == "reinforcement" else int(p)

    ini_side = np.full(len(Front), NO_SIDE, dtype=np.int8)
    ini_level = np.zeros(len(Front), dtype=np.int8)
    for f in Front:
        t = scenario.initiative.get(f.slug)
        if t:
            ini_side[f] = _side_code(t.get("side"))
            ini_level[f] = int(t.get("level", 0))
    cubes = np.zeros((2, len(Front), len(CUBE_KINDS)), dtype=np.int16)
    for s in Side:
        for k, kind in enumerate(CUBE_KINDS):  # starting cubes: the northern pool (SoE 10.0: north first)
            cubes[s, Front.NORTH, k] = int((scenario.cubes or {}).get(s.slug, {}).get(kind, 0))
    start_phase = phase_code(scenario.start.phase)
    if not (start_phase == PHASE_REINFORCEMENT or 1 <= start_phase <= consts.operation_phases):
        raise SoeInputError(Problem(str(scenario.path or scenario.id), "start", "phase", scenario.start.phase,
                                    f"expected 1..{consts.operation_phases} or \"reinforcement\""))

    return GameState(
        block_roster=rows,
        block_side=block_side,
        block_arm=block_arm,
        block_class=block_class,
        block_nation=block_nation,
        block_max_sp=block_max_sp,
        block_sp=block_sp,
        block_area=block_area,
        block_status=block_status,
        block_prev_area=np.full(nb, NO_AREA, dtype=np.int16),
        block_arrival=np.zeros(nb, dtype=np.int16),
        block_in_supply=np.ones(nb, dtype=np.bool_),
        block_arrive_round=arr_round,
        block_arrive_phase=arr_phase,
        block_arrive_area=arr_area,
        block_arrive_sp=arr_sp,
        block_arrive_condition=arr_cond,
        garrison_side=garrison_side,
        control=control,
        round=np.array([scenario.start.round], dtype=np.int16),
        phase=np.array([start_phase], dtype=np.int8),
        end=np.array([scenario.end.round, phase_code(scenario.end.phase)], dtype=np.int16),
        vp=np.array([scenario.vp_signed], dtype=np.int16),
        initiative_side=ini_side,
        initiative_level=ini_level,
        cubes=cubes,
        supply_base=np.full(control.shape[0], NO_SIDE, dtype=np.int8),  # set when a nation joins (G16)
    )
