"""Leaders' unique orders in the game (SoE 9.0): the leader table and Python wrappers of the kernels
in :mod:`soe_sim.engine.leaders.nb`.

Each leader block may give his unique order once per round (``data/blocks/leaders.toml``: ability,
range, front). :func:`leader_table` turns that file into the kernel-ready table of one game state
(``GameConfig.leaders``); the rule ``leaders.abilities`` of ``data/rules/soe.toml`` switches every
ability off, and so does a scenario's ``no_leaders`` special rule. The round loop
(:mod:`soe_sim.engine.game`) opens the leader windows and asks the policies (decision ``LEADER``).
Readings: docs/rules.md "Engine: leader orders" (L1…).

Example::

    table = leader_table(state, roster, rules)
    used = np.zeros(state.n_blocks, bool)
    legal_leader_orders(state, orders, game_map, orules, table, used, SIDE.SOVIET, Window.BEFORE_BATTLES)
    # [(budyonny_index, OrderType.FORCED_MARCH_OUT, 'zhytomyr', None), ...]
"""
from __future__ import annotations

from enum import IntEnum

import numpy as np

from soe_sim.data.enums import CardFront, Front, LeaderAbility
from soe_sim.engine.leaders import nb
from soe_sim.engine.leaders.nb import (
    ABILITY,
    ANY_FRONT,
    LT_ABILITY,
    LT_FRONT,
    LT_RANGE,
    LW_AFTER_BATTLES,
    LW_BEFORE_BATTLES,
    LW_BEFORE_FORCED,
    LW_BEFORE_MOVES,
    N_LT,
    N_WINDOWS,
    NO_ABILITY,
    LeaderWork,
)
from soe_sim.errors import Problem, SoeInputError

__all__ = [
    "ABILITY", "ANY_FRONT", "LT_ABILITY", "LT_FRONT", "LT_RANGE", "N_LT", "NO_ABILITY", "N_WINDOWS", "Window",
    "LeaderWork", "leader_table", "abilities_enabled", "legal_leader_orders", "new_leader_work", "nb",
]

assert tuple(ABILITY) == tuple(int(a) for a in LeaderAbility)


class Window(IntEnum):
    """The moments of an operation phase at which leaders may give orders (reading L2)."""

    BEFORE_FORCED = LW_BEFORE_FORCED
    BEFORE_MOVES = LW_BEFORE_MOVES
    BEFORE_BATTLES = LW_BEFORE_BATTLES
    AFTER_BATTLES = LW_AFTER_BATTLES


def abilities_enabled(rules) -> bool:
    """The rule ``leaders.abilities`` (SoE 9.0; False switches every leader order off); a value that
    is not ``true`` / ``false`` is an input error naming the rules file."""
    try:
        v = rules["leaders.abilities"]
    except KeyError:
        raise SoeInputError(Problem(rules.files[0], "leaders", "abilities", None, "missing rule key",
                                    "add `abilities = true` to the [leaders] table")) from None
    if not isinstance(v, bool):
        raise SoeInputError(Problem(rules.files[-1], "leaders", "abilities", v, "must be true or false",
                                    "`abilities = false` switches the SoE 9.0 leader orders off"))
    return v


def leader_table(state, roster=None, rules=None, scenario=None) -> np.ndarray:
    """The kernel-ready leader table of ``state``'s block universe: int64 ``(n_blocks, N_LT)``,
    columns ``LT_ABILITY`` (:data:`ABILITY` code, ``NO_ABILITY`` for other blocks), ``LT_RANGE``
    (areas), ``LT_FRONT`` (``FRONT`` code, ``ANY_FRONT``).

    ``roster`` defaults to ``load_blocks()`` (its ``leaders`` are ``data/blocks/leaders.toml``, checked
    by the loader), ``rules`` to ``load_rules()``. Every ability is off (``NO_ABILITY``) when the rule
    ``leaders.abilities`` is false or the scenario has the ``no_leaders`` special rule. A leader entry
    whose ability, range or front cannot be used raises :class:`~soe_sim.errors.SoeInputError` naming
    ``leaders.toml``, the entry and the field."""
    if roster is None:
        from soe_sim.data import load_blocks

        roster = load_blocks()
    if rules is None:
        from soe_sim.rules import load_rules

        rules = load_rules()
    nbk = int(state.block_side.shape[0])
    table = np.full((nbk, N_LT), NO_ABILITY, dtype=np.int64)
    table[:, LT_RANGE] = 0
    table[:, LT_FRONT] = ANY_FRONT
    if not abilities_enabled(rules):
        return table
    if scenario is not None and any(r.get("kind") == "no_leaders" for r in scenario.special_rules):
        return table
    leaders = roster.leaders
    path = str((roster.path / "leaders.toml") if getattr(roster, "path", None) is not None else "leaders.toml")
    problems = []
    for k, row in enumerate(leaders.itertuples(index=False)):
        where = f"leader[{k}] (block={row.block})"
        if row.block not in roster.block_index:
            problems.append(Problem(path, where, "block", row.block, "unknown block"))
            continue
        try:
            ab = int(LeaderAbility.from_slug(row.ability))
        except (KeyError, AttributeError):
            problems.append(Problem(path, where, "ability", row.ability, "unknown leader ability",
                                    f"known: {', '.join(LeaderAbility.slugs())}"))
            continue
        rng = row.range
        if isinstance(rng, bool) or not isinstance(rng, (int, np.integer)) or rng < 0:
            problems.append(Problem(path, where, "range", rng, "expected an integer >= 0"))
            continue
        fr = str(row.front or "any")
        if fr not in CardFront.slugs():
            problems.append(Problem(path, where, "front", fr, "unknown front; expected any, north or south"))
            continue
        front = ANY_FRONT if fr == CardFront.ANY.slug else int(Front.from_slug(fr))
        r = roster.block_index[row.block]
        for b in np.flatnonzero(np.asarray(state.block_roster) == r):
            table[b] = (ab, int(rng), front)
    if problems:
        raise SoeInputError(problems)
    return table


def new_leader_work(state, table, orders, game_map) -> LeaderWork:
    """A :class:`~soe_sim.engine.leaders.nb.LeaderWork` for one game on ``game_map`` (nobody's
    ability used)."""
    return nb.new_leader_work_nb(np.asarray(table, dtype=np.int64), int(state.control.shape[0]),
                                 int(state.block_side.shape[0]), int(orders.order_type.shape[0]),
                                 int(game_map.arrays.adj_indices.shape[0]))


def legal_leader_orders(state, orders, game_map, orules, table, used, side, window) -> list[tuple]:
    """:func:`~soe_sim.engine.leaders.nb.legal_leader_orders_nb` as ``[(leader block index,
    OrderType, area id, block index | None)]``."""
    from soe_sim.engine.orders import OrderType

    table = np.asarray(table, dtype=np.int64)
    cap = int(nb.leader_rows_capacity_nb(table, game_map.n_areas, int(state.block_side.shape[0])))
    rows = [np.empty(cap, np.int64) for _ in range(4)]
    k = nb.legal_leader_orders_nb(state, orders, game_map.arrays, orules, table, np.asarray(used, dtype=np.bool_),
                                  int(side), int(window), *rows)
    ids = game_map.ids
    return [(int(rows[0][i]), OrderType(int(rows[1][i])), ids[int(rows[2][i])],
             None if rows[3][i] < 0 else int(rows[3][i])) for i in range(k)]
