"""The work arrays of the game loop, allocated in Python: the per-game :class:`~soe_sim.engine.game.nb.GameWork`,
the batch's :class:`~soe_sim.engine.game.nb.GameScratch` and what a thread keeps from game to game
(:func:`batch_work`).

They were jitted constructors once (``new_game_work_nb``, ``new_game_scratch_nb``,
``batch_work_nb``). Building and returning named tuples of some two hundred arrays made LLVM spend
about a minute on those three functions alone at every cold compile (docs/engine-design.md "Compile
time"), for work that numpy does here in microseconds. The leaf constructors that kernels also call
(placement tables, move and feature scratch, the event and leader work) stay kernels and are called
from here. The game loop sees the same types: every batch and every single game gets its arrays from
these functions.
"""
from __future__ import annotations

import numpy as np

from soe_sim.engine.battles import nb as bnb
from soe_sim.engine.game import nb
from soe_sim.engine.game import policies as pnb
from soe_sim.engine import nb as enb
from soe_sim.engine.leaders import nb as lnb
from soe_sim.engine.orders import nb as onb

__all__ = ["new_game_work", "new_game_scratch", "game_buffers", "batch_scratch", "batch_work"]


def new_game_work(state, cs, orders, m, cfg) -> nb.GameWork:
    """The :class:`~soe_sim.engine.game.nb.GameWork` of games on ``state``'s block universe, map
    arrays ``m`` and configuration ``cfg``: the arrays :func:`~soe_sim.engine.game.nb.play_game_policies_nb`
    resets at the start of every game (``reset_game_work_nb``). The position snapshot and the
    elimination trackers are shared with the :class:`~soe_sim.engine.game.nb.EventWork` ``ew``."""
    n_areas = state.control.shape[0]
    nbk = state.block_side.shape[0]
    elim_ever = np.zeros(nbk, dtype=np.bool_)
    destroyed_ever = np.zeros(nbk, dtype=np.bool_)
    snap_status = np.empty(nbk, dtype=state.block_status.dtype)
    snap_area = np.empty(nbk, dtype=state.block_area.dtype)
    snap_sp = np.empty(nbk, dtype=state.block_sp.dtype)
    snap_garrison = np.empty(n_areas, dtype=state.garrison_side.dtype)
    order_capacity = orders.order_type.shape[0]
    ew = nb.new_event_work_nb(cfg, nbk, n_areas, cs.location.shape[1], snap_status, snap_area, snap_sp,
                              snap_garrison, elim_ever, destroyed_ever, order_capacity)
    lw = lnb.new_leader_work_nb(cfg.leaders, n_areas, nbk, order_capacity, m.adj_indices.shape[0])
    supply = enb.new_supply_search_cache_nb(n_areas, enb.N_SUPPLY_SLOTS)
    lw = lw._replace(scr=lw.scr._replace(supply=supply))  # one cache for the game's supply searches
    return nb.GameWork(
        elim_ever=elim_ever, destroyed_ever=destroyed_ever,
        condition_met=np.zeros(max(int(cfg.n_conditions), 1), dtype=np.bool_),
        block_half=np.zeros(nbk, dtype=np.bool_), extra_orders=np.zeros((2, 2), dtype=np.int64),
        blocks=np.zeros((2, n_areas), dtype=np.int32), enemy=np.zeros((2, n_areas), dtype=np.bool_),
        src=np.zeros((2, n_areas), dtype=np.int32), depot=np.zeros((2, n_areas), dtype=np.bool_),
        depot_dist=np.zeros((2, n_areas), dtype=np.int32), snap_status=snap_status, snap_area=snap_area,
        snap_sp=snap_sp, snap_garrison=snap_garrison,
        info=np.zeros(max(onb.N_MOVE_INFO, onb.N_WITHDRAW_INFO), dtype=np.int64),
        wd_dest=np.empty(nbk, dtype=np.int64), wd_mode=np.zeros(n_areas, dtype=np.int64),
        reorg_rows=np.empty(nbk, dtype=np.int64), ew=ew,
        garrison_phase0=np.empty(n_areas, dtype=state.garrison_side.dtype),
        garrison_waiting=np.zeros(n_areas, dtype=np.bool_), lw=lw, arrived=np.empty(nbk, dtype=np.int64),
        control_prev=np.empty(n_areas, dtype=state.control.dtype), vp_change=np.zeros(1, dtype=np.int64),
        oos_counts=np.zeros((2, nb.N_OOS), dtype=np.int64), pull_dest=np.empty(nbk, dtype=np.int64),
        pull_counts=np.zeros(2, dtype=np.int64), insup=np.zeros(nbk, dtype=np.bool_),
        supply=supply,
    )


def new_game_scratch(state, cs, orders, m, cfg) -> nb.GameScratch:
    """The :class:`~soe_sim.engine.game.nb.GameScratch` of games on ``state``'s block universe, map
    arrays ``m`` and ``cfg`` (one per thread: the games of a batch share it)."""
    n_areas = state.control.shape[0]
    nbk = state.block_side.shape[0]
    n_links = m.adj_indices.shape[0]
    order_capacity = orders.order_type.shape[0]
    n_order_rows = onb.N_ORDER_TYPES * n_areas + 1
    move_capacity = nbk * n_links * 3
    work = new_game_work(state, cs, orders, m, cfg)
    # one SupplySearchCache for every kernel of the loop (the game work's, which its leader scratch
    # shares): a supply search one of them made on a position is not made again by another
    # (docs/engine-design.md "Session 42")
    supply = work.supply
    mscr = onb.new_move_scratch_nb(nbk, m)
    return nb.GameScratch(
        ptabs0=onb.new_placement_tables_nb(nbk, n_areas, n_links, order_capacity)._replace(supply=supply),
        ptabs1=onb.new_placement_tables_nb(nbk, n_areas, n_links, order_capacity)._replace(supply=supply),
        ofc=pnb.new_order_feature_cache_nb(n_areas), mscr=mscr._replace(wd=mscr.wd._replace(supply=supply)),
        fscr=pnb.new_feat_scratch_nb(n_areas, nbk),
        otype=np.empty(n_order_rows, dtype=np.int64), oarea=np.empty(n_order_rows, dtype=np.int64),
        mv_block=np.empty(move_capacity, dtype=np.int64), mv_dest=np.empty(move_capacity, dtype=np.int64),
        mv_via=np.empty(move_capacity, dtype=np.int64), mv_detach=np.empty(move_capacity, dtype=np.int64),
        work=work,
        bscr=bnb.new_battle_scratch_nb(nbk, n_areas, n_links, cs.location.shape[1]),
    )


def game_buffers(state0, cs0, orders0):
    """The arrays a game is played in: copies of the start ``state0`` / ``cs0`` / ``orders0`` (the
    batch kernel copies the start into them again before each game), the loop's counters ``ctr``
    (N_CTR,) int64 and the stream states ``rng_chance`` (1,) / ``rng_policy`` (2,) uint64."""
    return (state0.copy(), cs0.copy(), orders0.copy(), np.zeros(nb.N_CTR, dtype=np.int64),
            np.zeros(1, dtype=np.uint64), np.zeros(2, dtype=np.uint64))


def policy_set(setup, policies, params, cards=None):
    """The :class:`~soe_sim.engine.game.policies.PolicySet` of a :class:`GameSetup`-like ``setup``
    (``cards0``, ``cr``, ``kr``, ``er``, ``state0``) with ``cards`` (default: the start's card state)
    for the deck distributions: for kernels called one by one (tests, tools)."""
    cs = setup.cards0 if cards is None else cards
    return pnb.make_policy_set_nb(policies, params, cs, setup.cr, setup.kr.hand_card_bonus, setup.er.max_blocks,
                                  setup.state0.control.shape[0], setup.state0.block_side.shape[0])


def batch_scratch(state0, cs0, orders0, m, cr, er, kr, cfg, policies, params):
    """The :class:`~soe_sim.engine.game.policies.PolicySet` of the start (``policies`` int64 (2,) /
    ``params`` float64 (2, N_PARAMS): the policy ids and parameter rows; it depends only on the
    start) and the :class:`~soe_sim.engine.game.nb.GameScratch` that the games of a thread share."""
    pset = pnb.make_policy_set_nb(policies, params, cs0, cr, kr.hand_card_bonus, er.max_blocks,
                                  state0.control.shape[0], state0.block_side.shape[0])
    return pset, new_game_scratch(state0, cs0, orders0, m, cfg)


def batch_work(state0, cs0, orders0, m, cr, er, kr, cfg, policies, params, log_capacity):
    """What a thread playing a batch's games keeps from game to game, in the order
    :func:`~soe_sim.engine.game.nb.play_games_serial_nb` takes it: the :func:`batch_scratch`, an
    event log of ``log_capacity`` entries (not zeroed: the loop writes every field of an entry before
    counting it) and the :func:`game_buffers`."""
    return (*batch_scratch(state0, cs0, orders0, m, cr, er, kr, cfg, policies, params),
            np.empty(int(log_capacity), dtype=nb.EVENT_DTYPE), *game_buffers(state0, cs0, orders0))
