"""SoE 7.32, 7.34, 1.2: who fights a battle and from where (``battle_inputs_nb``) against a plain-Python oracle
on random positions of the campaign map: the attackers and their entry directions, the defenders, the number of
distinct directions the supporting defenders came from (each negates one flank attack) and the fortification."""
from __future__ import annotations

import numpy as np
import pytest

from soe_sim.data import load_blocks, load_map, load_scenario
from soe_sim.engine.battles.nb import battle_inputs_nb
from soe_sim.engine.state import STATUS, new_game
from soe_sim.rules import load_rules

NO_ARRIVAL = 1 << 30


def oracle(state, m, area, defender):
    """SoE 7.34 as the rulebook states it: attackers grouped by the area they entered from; a defending block
    supports when it moved in after the area was held (a defender block there from the start, a garrison, or an
    earlier defender arrival); the distinct directions of the supporting blocks (at most 16 counted); fortified
    only if every attack direction is a fortified link into the area (SoE 1.2)."""
    here = [b for b in range(state.block_side.shape[0])
            if state.block_status[b] == STATUS.ON_MAP and state.block_area[b] == area]
    defenders = [b for b in here if state.block_side[b] == defender]
    attackers = [b for b in here if state.block_side[b] != defender]
    held = state.garrison_side[area] == defender or any(state.block_prev_area[b] < 0 for b in defenders)
    first = min((state.block_arrival[b] for b in defenders if state.block_prev_area[b] >= 0), default=NO_ARRIVAL)
    support = {int(state.block_prev_area[b]) for b in defenders
               if state.block_prev_area[b] >= 0 and (held or state.block_arrival[b] > first)}
    links = range(m.adj_indptr[area], m.adj_indptr[area + 1])
    fortified_from = {int(m.adj_indices[e]) for e in links if m.adj_fortified[e]}
    directions = [int(state.block_prev_area[b]) for b in attackers]
    fortified = bool(attackers) and all(d in fortified_from for d in directions)
    return attackers, directions, defenders, min(len(support), 16), fortified


@pytest.mark.parametrize("seed", range(4))
def test_battle_inputs_match_the_oracle_on_random_positions(seed):
    game_map, roster, rules = load_map(), load_blocks(), load_rules()
    base = new_game(load_scenario("campaign-1920"), game_map, roster, rules)
    m = game_map.arrays
    rng = np.random.default_rng(seed)
    nbk = base.block_side.shape[0]
    n_areas = base.control.shape[0]
    kinds = {"several_support": 0, "same_direction_twice": 0, "fortified": 0, "garrison_held": 0}
    for _ in range(150):
        state = base._replace(**{f: getattr(base, f).copy() for f in ("block_status", "block_area",
                                                                        "block_prev_area", "block_arrival",
                                                                        "garrison_side")})
        area = int(rng.integers(n_areas))
        nbrs = m.adj_indices[m.adj_indptr[area]:m.adj_indptr[area + 1]]
        if nbrs.shape[0] == 0:
            continue
        for b in rng.choice(nbk, size=int(rng.integers(1, 14)), replace=False):
            state.block_status[b] = STATUS.ON_MAP
            state.block_area[b] = area
            # from the start (-1) or in from a neighbour, often the same one (repeated directions)
            state.block_prev_area[b] = -1 if rng.random() < 0.2 else int(rng.choice(nbrs[:3]))
            state.block_arrival[b] = int(rng.integers(0, 6))
        state.garrison_side[area] = int(rng.integers(-1, 2))
        defender = int(rng.integers(2))
        half = np.zeros(nbk, np.bool_)
        att, dfn, adir = (np.full(nbk, -7, np.int64) for _ in range(3))
        n_att, n_def, n_support, fortified = battle_inputs_nb(state, m, area, defender, half, att, dfn, adir)
        attackers, directions, defenders, support, fort = oracle(state, m, area, defender)
        assert list(att[:n_att]) == attackers and list(adir[:n_att]) == directions
        assert list(dfn[:n_def]) == defenders
        assert (n_support, bool(fortified)) == (support, fort)
        kinds["several_support"] += support >= 2
        kinds["same_direction_twice"] += support >= 1 and support < sum(
            1 for b in defenders if state.block_prev_area[b] >= 0)
        kinds["fortified"] += fort
        kinds["garrison_held"] += state.garrison_side[area] == defender and support >= 1
    assert min(kinds.values()) >= 3, kinds  # every case the count distinguishes was seen
