"""Orders in the game (SoE 7.2, 7.3, 7.31–7.33, 7.5, 7.6, 7.71, 2.2): the :class:`OrderState`
arrays and Python wrappers of the kernels in :mod:`soe_sim.engine.orders.nb`.

:func:`new_order_state` builds an :class:`OrderState` (a ``NamedTuple`` of numpy arrays, a valid
numba argument) for a :class:`~soe_sim.engine.state.GameState`: the orders placed this phase (up
to ``capacity``), the pool use per side × type (SoE 7.2 "Order Marker Limits"), per-block phase
flags and what each side has seen (hidden information). :func:`order_constants` gives the
kernel-ready :class:`OrderRules`. Readings: docs/rules.md "Engine: orders and movement" (O1…).

Phase protocol (the game loop, ``soe_sim.engine.game``, drives it)::

    nb.reset_phase_nb(state, orders, False)                        # 7.0
    # 7.2 placement, alternating; per (side, front):
    n = nb.legal_orders_nb(state, orders, ma, orules, side, front, allowed, otype, oarea)
    nb.place_order_nb(state, orders, side, front, otype[i], oarea[i])   # NO_ORDER row = stop
    # 7.3 execution: forced marches, Recon, moves — for each order of the type:
    n = nb.legal_moves_nb(state, orders, ma, orules, o, blk, dst, via, det)
    nb.apply_move_nb(state, orders, ma, orules, o, blk[i], dst[i], via[i], det[i], info)
    #   ... repeat; "stop" allowed when nb.min_moves_required_nb(...) == 0; then
    nb.finish_order_nb(orders, o)
    nb.execute_recon_nb(state, orders, o)
    mode = nb.execute_withdraw_nb(state, orders, ma, orules, o, dest, info)   # → battle withdraw
    # battles: nb.mark_battle_nb, nb.defend_flag_nb, nb.block_half_nb, Reorganize designation
    # 7.5: nb.legal_reorganize_nb / nb.designate_reorganize_nb / nb.execute_reorganize_nb
    # 7.6: nb.legal_rail_nb / nb.apply_rail_nb / nb.finish_order_nb

Example::

    orules = order_constants(rules)
    orders = new_order_state(state)
    legal_orders(state, orders, game_map, orules, SIDE.POLISH, FRONT.NORTH, 2)
    # [(OrderType.RECON, 'zlobin'), ..., (None, None)]
"""
from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

import numpy as np

from soe_sim.data.enums import Front, Side
from soe_sim.engine.orders import nb
from soe_sim.engine.orders.nb import (
    MI_BRIGADE,
    MI_PINNED,
    N_MOVE_INFO,
    N_ORDER_TYPES,
    N_WITHDRAW_INFO,
    NO_ORDER,
    ORDER,
    ORDER_STATUS,
    WI_DESTROYED,
    WI_LOSS_BLOCK,
    WI_MOVED,
    WI_VP,
)

__all__ = [
    "OrderType",
    "OrderStatus",
    "ORDER",
    "ORDER_STATUS",
    "NO_ORDER",
    "N_ORDER_TYPES",
    "OrderRules",
    "OrderState",
    "EXECUTION_GROUPS",
    "order_constants",
    "new_order_state",
    "move_capacity",
    "order_capacity",
    "reset_phase",
    "legal_orders",
    "place_order",
    "legal_moves",
    "apply_move",
    "legal_rail",
    "orders_frame",
    "MI_PINNED",
    "MI_BRIGADE",
    "N_MOVE_INFO",
    "WI_MOVED",
    "WI_LOSS_BLOCK",
    "WI_DESTROYED",
    "WI_VP",
    "N_WITHDRAW_INFO",
    "nb",
]


class OrderType(IntEnum):
    """Order markers (SoE 7.2), in the execution order of SoE 7.3 (kernels: :data:`ORDER`)."""

    FORCED_MARCH_TO = nb.FORCED_MARCH_TO
    FORCED_MARCH_OUT = nb.FORCED_MARCH_OUT
    RECON = nb.RECON
    MOVE_TO = nb.MOVE_TO
    MOVE_OUT = nb.MOVE_OUT
    WITHDRAW = nb.WITHDRAW
    DEFEND = nb.DEFEND
    REORGANIZE = nb.REORGANIZE
    RAIL_TRANSPORT = nb.RAIL_TRANSPORT

    @property
    def slug(self) -> str:
        """The spelling of ``orders.pool`` keys (``"forced_march_to"``)."""
        return self.name.lower()


class OrderStatus(IntEnum):
    """Status of a placed order (kernels: :data:`ORDER_STATUS`)."""

    PLACED = nb.PLACED
    EXECUTED = nb.EXECUTED
    REMOVED = nb.REMOVED  # unfulfilled (SoE 7.3) or not triggered (Withdraw): back in the pool


assert tuple(ORDER) == tuple(int(t) for t in OrderType)
assert tuple(ORDER_STATUS) == tuple(int(t) for t in OrderStatus)


class OrderRules(NamedTuple):
    """Order and movement constants in kernel-ready form (all from ``data/rules/*.toml``)."""

    pool: np.ndarray  # (N_ORDER_TYPES,) int64, by OrderType — SoE 7.2 (x5 / x2 / x1)
    base_orders_per_front: int  # SoE 7.11, 7.2
    mandatory_recon: int  # SoE 7.11, 7.2
    max_same_type_per_area: int  # SoE 7.2 Multiple Orders
    recon_range: int  # SoE 7.2 Recon Area
    move_infantry: int  # SoE 2.0, 7.31
    move_cavalry: int
    move_leader: int  # SoE 9.0
    forced_infantry: int  # SoE 2.0, 7.2
    forced_cavalry: int
    forced_leader: int
    max_blocks_per_link: int  # SoE 7.33
    max_blocks: int  # SoE 7.33 (withdraw overflow)
    rail_max_areas: int  # SoE 7.6
    rail_max_blocks: int  # SoE 7.6
    rail_depot_range: int  # SoE 7.6
    infantry_supply_range: int  # SoE 7.7 (depot distances for rail)
    cavalry_supply_range: int
    reorganize_gain: int  # SoE 7.5
    withdraw_loss: int  # SoE 7.2 Withdraw
    withdraw_cavalry_exempt: bool  # SoE 7.2 Withdraw
    vp_leader_destroyed: int  # SoE 9.0 (a leader destroyed by the withdrawal loss)
    detachment_max_sp: int  # SoE 2.2
    detachments: bool  # offer detachment rows in legal_moves_nb (SoE 2.2)
    # ruleset options (SoE values in data/rules/soe.toml; EatS: data/rules/eats.toml, docs/rules.md V1…)
    free_recon_per_front: int  # EatS VI: Recon-only slots on top of the orders (SoE 0)
    withdraw_excludes_defend: bool  # EatS II.4.1 Withdraw: no Withdraw with a Defend order (SoE False)
    holder_chooses_order: bool  # SoE 6.1, 7.2, 7.3 (True); EatS II.4.3: lower initiative places first, resolves last
    execute_before_battles: np.ndarray  # int64 execution groups (EXECUTION_GROUPS) before the battles, SoE 7.3 / EatS VII
    execute_after_battles: np.ndarray  # int64 execution groups after the battles
    rail_may_join_defended_battle: bool  # EatS II.4.1 Railway transport (SoE 7.6: never into enemy areas)


EXECUTION_GROUPS = ("forced_march", "recon", "move", "withdraw", "reorganize", "rail_transport")
"""Order execution groups (SoE 7.3), by code: the ``orders.execute_*_battles`` names of the rules
(the round loop's ``group`` argument, ``soe_sim.engine.game.nb._is_group_nb``)."""


def _execution_groups(rules) -> tuple[np.ndarray, np.ndarray]:
    """The two execution-group lists of the rules as codes, validated: every group exactly once,
    Withdraw before the battles (it decides the battle's withdraw mode)."""
    from soe_sim.errors import Problem, SoeInputError, did_you_mean

    file = rules.files[-1] if getattr(rules, "files", None) else "rules"
    problems = []
    lists = []
    for key in ("orders.execute_before_battles", "orders.execute_after_battles"):
        codes = []
        for name in rules[key]:
            if name not in EXECUTION_GROUPS:
                problems.append(Problem(file, "", key, name, "unknown order execution group",
                                        did_you_mean(str(name), EXECUTION_GROUPS)
                                        or f"groups: {', '.join(EXECUTION_GROUPS)}"))
            else:
                codes.append(EXECUTION_GROUPS.index(name))
        lists.append(codes)
    every = lists[0] + lists[1]
    if not problems and sorted(every) != list(range(len(EXECUTION_GROUPS))):
        problems.append(Problem(file, "", "orders.execute_before_battles", rules["orders.execute_before_battles"],
                                "every order execution group must be listed exactly once (with "
                                "orders.execute_after_battles)", f"groups: {', '.join(EXECUTION_GROUPS)}"))
    if not problems and EXECUTION_GROUPS.index("withdraw") not in lists[0]:
        problems.append(Problem(file, "", "orders.execute_after_battles", rules["orders.execute_after_battles"],
                                "withdraw must be executed before the battles"))
    if problems:
        raise SoeInputError(problems)
    return np.array(lists[0], dtype=np.int64), np.array(lists[1], dtype=np.int64)


def order_constants(rules=None, detachments: bool = True) -> OrderRules:
    """Kernel-ready order constants of a :class:`~soe_sim.rules.Rules` (default ``load_rules()``)."""
    if rules is None:
        from soe_sim.rules import load_rules

        rules = load_rules()
    r = rules
    pool = np.array([int(r[f"orders.pool.{t.slug}"]) for t in OrderType], dtype=np.int64)
    before, after = _execution_groups(r)
    return OrderRules(
        pool=pool,
        base_orders_per_front=int(r["orders.base_orders_per_front"]),
        mandatory_recon=int(r["orders.mandatory_recon"]),
        max_same_type_per_area=int(r["orders.max_same_type_per_area"]),
        recon_range=int(r["movement.recon_range"]),
        move_infantry=int(r["movement.infantry"]),
        move_cavalry=int(r["movement.cavalry"]),
        move_leader=int(r["movement.leader"]),
        forced_infantry=int(r["movement.infantry_forced_march"]),
        forced_cavalry=int(r["movement.cavalry_forced_march"]),
        forced_leader=int(r["movement.leader_forced_march"]),
        max_blocks_per_link=int(r["movement.max_blocks_per_link"]),
        max_blocks=int(r["stacking.max_blocks"]),
        rail_max_areas=int(r["rail.max_areas"]),
        rail_max_blocks=int(r["rail.max_blocks"]),
        rail_depot_range=int(r["supply.depot_range_for_rail"]),
        infantry_supply_range=int(r["supply.infantry_range"]),
        cavalry_supply_range=int(r["supply.cavalry_range"]),
        reorganize_gain=int(r["reinforcement.reorganize_gain"]),
        withdraw_loss=int(r["combat.withdraw_loss"]),
        withdraw_cavalry_exempt=bool(r["combat.withdraw_cavalry_exempt_vs_infantry"]),
        vp_leader_destroyed=int(r["vp.leader_destroyed"]),
        detachment_max_sp=int(r["blocks.detachment_max_sp"]),
        detachments=bool(detachments),
        free_recon_per_front=int(r["orders.free_recon_per_front"]),
        withdraw_excludes_defend=bool(r["orders.withdraw_excludes_defend"]),
        holder_chooses_order=bool(r["initiative.holder_chooses_order"]),
        execute_before_battles=before,
        execute_after_battles=after,
        rail_may_join_defended_battle=bool(r["rail.may_join_defended_battle"]),
    )


class OrderState(NamedTuple):
    """Orders of the current operation phase and the per-phase block flags.

    Orders (``capacity`` rows, ids ``0..n_orders[0]-1`` in placement order): ``order_side`` int8 ·
    ``order_front`` int8 · ``order_type`` int8 (:data:`ORDER`) · ``order_area`` int16 ·
    ``order_status`` int8 (:data:`ORDER_STATUS`) · ``order_executed`` int16 blocks that executed it ·
    ``order_block`` int16 the block designated to reorganize (-1) · ``n_orders`` int64 (1,) ·
    ``arrival`` int64 (1,) the phase's arrival counter (``block_arrival`` of the last move).

    Counters: ``pool_used`` int16 (2, N_ORDER_TYPES) markers of each type on the map (SoE 7.2
    "Order Marker Limits"; an unfulfilled order goes back) · ``placed`` int16 (2, 2) orders placed per
    side × front · ``recon_placed`` int16 (2, 2).

    Per block (``n_blocks``): ``executed`` (an order, SoE 7.2 "only one order per Operation Phase") ·
    ``block_order`` int16 the order it executed (-1) · ``forced_march`` (fights at half strength) ·
    ``reorganizing`` (designated to reorganize: half strength if attacked) · ``pinned`` (SoE 7.32) ·
    ``moved`` · ``rail_moved`` · ``fought`` (in a battle this phase, SoE 7.6) · ``detached`` (a brigade
    created this phase, SoE 2.2: may not move). ``seen`` bool (2, n_blocks): ``seen[s, b]`` — side
    ``s`` knows block ``b``'s identity and strength (own blocks always; Recon 7.31, battles 7.41.3).
    """

    order_side: np.ndarray
    order_front: np.ndarray
    order_type: np.ndarray
    order_area: np.ndarray
    order_status: np.ndarray
    order_executed: np.ndarray
    order_block: np.ndarray
    n_orders: np.ndarray
    arrival: np.ndarray
    pool_used: np.ndarray
    placed: np.ndarray
    recon_placed: np.ndarray
    executed: np.ndarray
    block_order: np.ndarray
    forced_march: np.ndarray
    reorganizing: np.ndarray
    pinned: np.ndarray
    moved: np.ndarray
    rail_moved: np.ndarray
    fought: np.ndarray
    detached: np.ndarray
    seen: np.ndarray

    def copy(self) -> "OrderState":
        return OrderState(*(np.array(a, copy=True) for a in self))

    @property
    def n(self) -> int:
        return int(self.n_orders[0])


def new_order_state(state, rules=None, capacity: int = 64) -> OrderState:
    """An empty :class:`OrderState` for ``state`` (``rules`` unused, kept for symmetry), reset as at
    the start of a phase except that ``state`` itself is not touched: each side sees its own blocks."""
    nbk = state.block_side.shape[0]
    nf = len(Front)
    seen = np.zeros((2, nbk), dtype=np.bool_)
    for s in Side:
        seen[int(s)] = state.block_side == int(s)
    return OrderState(
        order_side=np.full(capacity, -1, np.int8),
        order_front=np.full(capacity, -1, np.int8),
        order_type=np.full(capacity, NO_ORDER, np.int8),
        order_area=np.full(capacity, -1, np.int16),
        order_status=np.full(capacity, nb.REMOVED, np.int8),
        order_executed=np.zeros(capacity, np.int16),
        order_block=np.full(capacity, -1, np.int16),
        n_orders=np.zeros(1, np.int64),
        arrival=np.zeros(1, np.int64),
        pool_used=np.zeros((2, N_ORDER_TYPES), np.int16),
        placed=np.zeros((2, nf), np.int16),
        recon_placed=np.zeros((2, nf), np.int16),
        executed=np.zeros(nbk, np.bool_),
        block_order=np.full(nbk, -1, np.int16),
        forced_march=np.zeros(nbk, np.bool_),
        reorganizing=np.zeros(nbk, np.bool_),
        pinned=np.zeros(nbk, np.bool_),
        moved=np.zeros(nbk, np.bool_),
        rail_moved=np.zeros(nbk, np.bool_),
        fought=np.zeros(nbk, np.bool_),
        detached=np.zeros(nbk, np.bool_),
        seen=seen,
    )


def move_capacity(state, map_arrays) -> int:
    """Rows that always suffice for :func:`~soe_sim.engine.orders.nb.legal_moves_nb`
    (blocks × directed links × (1 + detachment sizes))."""
    return int(state.block_side.shape[0]) * int(map_arrays.adj_indices.shape[0]) * 3


def order_capacity(map_arrays) -> int:
    """Rows that always suffice for :func:`~soe_sim.engine.orders.nb.legal_orders_nb`."""
    return N_ORDER_TYPES * int(map_arrays.front.shape[0]) + 1


# --- Python conveniences (tests, debugging, the step-by-step interface) --------------------------


def reset_phase(state, orders, keep_seen: bool = False) -> None:
    nb.reset_phase_nb(state, orders, bool(keep_seen))


def legal_orders(state, orders, game_map, orules, side, front, orders_allowed) -> list[tuple]:
    """:func:`~soe_sim.engine.orders.nb.legal_orders_nb` as ``[(OrderType | None, area id | None)]``."""
    ma = game_map.arrays
    size = order_capacity(ma)
    t = np.empty(size, np.int64)
    a = np.empty(size, np.int64)
    k = nb.legal_orders_nb(state, orders, ma, orules, int(side), int(front), int(orders_allowed), t, a)
    ids = game_map.ids
    return [(None, None) if t[i] == NO_ORDER else (OrderType(int(t[i])), ids[int(a[i])]) for i in range(k)]


def place_order(state, orders, game_map, side, front, order_type, area) -> int:
    """Place an order (no legality check: use :func:`legal_orders`); ``area`` id or index."""
    i = game_map.index(area) if isinstance(area, str) else int(area)
    return int(nb.place_order_nb(state, orders, int(side), int(front), int(order_type), i))


def legal_moves(state, orders, game_map, orules, order_id) -> list[tuple]:
    """:func:`~soe_sim.engine.orders.nb.legal_moves_nb` as ``[(block, dest id, via id, detach)]``."""
    ma = game_map.arrays
    size = move_capacity(state, ma)
    b = np.empty(size, np.int64)
    d = np.empty(size, np.int64)
    v = np.empty(size, np.int64)
    x = np.empty(size, np.int64)
    k = nb.legal_moves_nb(state, orders, ma, orules, int(order_id), b, d, v, x)
    ids = game_map.ids
    return [(int(b[i]), ids[int(d[i])], ids[int(v[i])], int(x[i])) for i in range(k)]


def apply_move(state, orders, game_map, orules, order_id, block, dest, via, detach=0) -> dict:
    """Apply a move row (area ids or indices); returns ``{"pinned": block|-1, "brigade": block|-1}``."""
    ix = (lambda a: game_map.index(a) if isinstance(a, str) else int(a))
    info = np.zeros(N_MOVE_INFO, np.int64)
    nb.apply_move_nb(state, orders, game_map.arrays, orules, int(order_id), int(block), ix(dest), ix(via),
                     int(detach), info)
    return {"pinned": int(info[MI_PINNED]), "brigade": int(info[MI_BRIGADE])}


def legal_rail(state, orders, game_map, orules, order_id) -> list[tuple]:
    """:func:`~soe_sim.engine.orders.nb.legal_rail_nb` as ``[(block, dest id)]``."""
    ma = game_map.arrays
    size = int(state.block_side.shape[0]) * int(ma.front.shape[0])
    b = np.empty(size, np.int64)
    d = np.empty(size, np.int64)
    k = nb.legal_rail_nb(state, orders, ma, orules, int(order_id), b, d)
    return [(int(b[i]), game_map.ids[int(d[i])]) for i in range(k)]


def orders_frame(orders, game_map=None):
    """One row per order placed this phase (a pandas DataFrame)."""
    import pandas as pd

    k = orders.n
    ids = game_map.ids if game_map is not None else None
    return pd.DataFrame({
        "side": [Side(int(s)).slug for s in orders.order_side[:k]],
        "front": [Front(int(f)).slug for f in orders.order_front[:k]],
        "type": [OrderType(int(t)).slug for t in orders.order_type[:k]],
        "area": [ids[int(a)] if ids is not None else int(a) for a in orders.order_area[:k]],
        "status": [OrderStatus(int(s)).name.lower() for s in orders.order_status[:k]],
        "executed": orders.order_executed[:k].astype(int),
    })
