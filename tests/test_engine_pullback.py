"""Phase-end stacking pull-back and a nation's limits (SoE 7.33, E11; G16; EatS II.3 Germany, V11).

The round loop pulls the latest arrivals of an overstacked area back (``game.nb.stacking_nb`` →
``engine.nb.overstack_pullback_nb``). A block ends its pull-back only where its nation may go — the
same per-nation mask (``EventWork.nation_ok``) as retreats and withdrawals: a ``front_restriction``
(UNR / UHA blocks stay in the south), neutral ground, and under EatS the German territory that is
closed to the Poles. A block with no allowed area is eliminated, as an encircled retreat is.
"""
from __future__ import annotations

import numpy as np
import pytest

from soe_sim.data.enums import FRONT, SIDE, Nation
from soe_sim.engine.game import game_setup, nb, new_event_log
from soe_sim.engine.nb import (
    N_SUPPLY_SLOTS,
    PULLBACK_ELIMINATED,
    PULLBACK_NONE,
    new_supply_search_cache_nb,
    overstack_pullback_nb,
)
from soe_sim.engine.state import STATUS

P = SIDE.POLISH


def _event_work(setup):
    st = setup.state0
    nbk, na = st.n_blocks, setup.game_map.n_areas
    z = lambda dt, n: np.zeros(n, dt)  # noqa: E731
    return nb.new_event_work_nb(setup.cfg, nbk, na, setup.cards0.location.shape[1], z(st.block_status.dtype, nbk),
                                z(st.block_area.dtype, nbk), z(st.block_sp.dtype, nbk),
                                z(st.garrison_side.dtype, na), z(bool, nbk), z(bool, nbk),
                                setup.orders0.order_type.shape[0])


def _overstack(setup, area, nations, came_from):
    """The scenario's start with only five Polish-side blocks on the map, all in ``area``: the first
    four of nation POLISH began the phase there, the fifth (of nation ``nations[-1]``) arrived last,
    from ``came_from``. Returns (state, index of the last arrival)."""
    st = setup.state0.copy()
    ix = setup.game_map.index
    off = st.block_status == STATUS.ON_MAP
    st.block_status[off] = STATUS.FORCE_POOL
    st.block_area[off] = -1
    chosen = []
    for nat in nations:
        cand = np.flatnonzero((st.block_side == P) & (st.block_nation == int(nat)) & (st.block_max_sp > 1))
        b = int(next(c for c in cand if c not in chosen))
        chosen.append(b)
    for k, b in enumerate(chosen):
        st.block_status[b] = STATUS.ON_MAP
        st.block_area[b] = ix(area)
        st.block_sp[b] = 1
        st.block_prev_area[b] = -1 if k < len(chosen) - 1 else ix(came_from)
        st.block_arrival[b] = 0 if k < len(chosen) - 1 else 3
    return st, chosen[-1]


def _stacking(setup, st):
    """Run the loop's pull-back (SoE 7.33) on ``st`` with the loop's access masks (G16)."""
    n, nbk = setup.game_map.n_areas, st.n_blocks
    ew = _event_work(setup)
    nb.update_access_nb(st, setup.cfg, ew)
    log = new_event_log(256)
    i32 = lambda: np.zeros((2, n), np.int32)  # noqa: E731
    bl = lambda: np.zeros((2, n), np.bool_)  # noqa: E731
    nb.stacking_nb(st, setup.game_map.arrays, setup.er, log.records, log.ctr, i32(), bl(), i32(), bl(), i32(),
                   new_supply_search_cache_nb(n, N_SUPPLY_SLOTS), np.empty(nbk, st.block_status.dtype),
                   np.empty(nbk, st.block_area.dtype), np.empty(nbk, st.block_sp.dtype),
                   np.empty(n, st.garrison_side.dtype),
                   np.zeros(nbk, np.bool_), np.zeros(nbk, np.bool_), ew.closed, ew.nation_ok, np.empty(nbk, np.int64),
                   np.zeros(2, np.int64), np.zeros(nbk, np.bool_))
    return ew


def test_soe_7_33_g16_pullback_respects_front_restriction():
    """SoE 7.33, G16: a UNR block (front_restriction: south only) that arrived last in an overstacked
    Kovel from Brest (north) is not pulled back to Brest but to a southern neighbour; a Polish block
    in its place goes back to Brest (7.33 "the area it came from")."""
    setup = game_setup("campaign-1920", "soe")
    m, ix = setup.game_map, setup.game_map.index
    st, unr = _overstack(setup, "kovel", [Nation.POLISH] * 4 + [Nation.UKRAINIAN_UNR], "brest")
    ew = _stacking(setup, st)
    assert not ew.nation_ok[int(Nation.UKRAINIAN_UNR), ix("brest")]
    dest = int(st.block_area[unr])
    assert st.block_status[unr] == STATUS.ON_MAP and dest not in (ix("brest"), ix("kovel"))
    assert m.front[dest] == FRONT.SOUTH and ew.nation_ok[int(Nation.UKRAINIAN_UNR), dest]
    assert int((st.block_area == ix("kovel")).sum()) == setup.er.max_blocks
    st, pol = _overstack(setup, "kovel", [Nation.POLISH] * 5, "brest")
    _stacking(setup, st)
    assert st.block_area[pol] == ix("brest")


def test_g16_pullback_with_no_allowed_area_eliminates():
    """G16, E11, E-B4: a block whose nation may end the pull-back nowhere around is eliminated
    permanently, as an encircled retreat is (no VP at phase end); with no limits it goes back."""
    setup = game_setup("campaign-1920", "soe")
    ix = setup.game_map.index
    arrs = setup.game_map.arrays
    for forbid in (True, False):
        st, unr = _overstack(setup, "kovel", [Nation.POLISH] * 4 + [Nation.UKRAINIAN_UNR], "brest")
        ok = np.ones((len(Nation), setup.game_map.n_areas), np.bool_)
        if forbid:
            ok[int(Nation.UKRAINIAN_UNR)] = False
        dest = np.empty(st.n_blocks, np.int64)
        counts = np.zeros(2, np.int64)
        n = setup.game_map.n_areas
        overstack_pullback_nb(arrs.adj_indptr, arrs.adj_indices, arrs.eastern_link, np.zeros(n, np.bool_),
                              np.zeros(n, np.int32), st.block_side, st.block_area, st.block_status, st.block_sp,
                              st.block_prev_area, st.block_arrival, P, setup.er.max_blocks, dest, counts,
                              st.block_nation, ok)
        if forbid:
            assert dest[unr] == PULLBACK_ELIMINATED and st.block_status[unr] == STATUS.ELIMINATED_PERMANENT
            assert counts.tolist() == [0, 1]
        else:
            assert dest[unr] == ix("brest") and counts.tolist() == [1, 0]
        assert all(dest[b] == PULLBACK_NONE for b in range(st.n_blocks) if b != unr)


@pytest.mark.parametrize("ruleset", ["eats", "soe"])
def test_eats_ii_3_polish_pullback_not_into_germany(ruleset):
    """EatS II.3 "Polish units can't cross the German border" (V11), SoE 7.33, G16: a Polish block that
    arrived last in an overstacked Dzialdowo from Allenstein (German territory) is pulled back into
    Poland, not into Germany; SoE has no German border rule and sends it back to Allenstein."""
    setup = game_setup("campaign-1920", ruleset)
    ix = setup.game_map.index
    st, pol = _overstack(setup, "dzialdowo", [Nation.POLISH] * 5, "allenstein")
    ew = _stacking(setup, st)
    dest = int(st.block_area[pol])
    if ruleset == "eats":
        assert not ew.nation_ok[int(Nation.POLISH), ix("allenstein")]
        assert st.block_status[pol] == STATUS.ON_MAP and dest not in (ix("allenstein"), ix("dzialdowo"))
        assert not setup.cfg.intern_area[dest] and ew.nation_ok[int(Nation.POLISH), dest]
    else:
        assert dest == ix("allenstein")
