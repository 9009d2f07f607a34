"""The Eagle and the Star (seed 002, "EatS") as a ruleset variant of the engine (data/rules/eats.toml).

One test per engine option (kernel level: the option changes exactly what it should, and the SoE
value keeps the SoE behaviour), the ruleset file itself, the set-up transforms, the entry points
(``game_setup``, ``play_game``, ``simulate``, ``soe-sim simulate/fuzz --ruleset``, the sweep's
``ruleset``), and smoke tests that the four EatS scenarios play under the variant. Readings V1…V13:
docs/rules.md "EatS variant". The SoE goldens (tests/golden) are checked by test_engine_game.py.
"""
from __future__ import annotations

import functools
import json
import tomllib
from pathlib import Path

import numpy as np
import pytest

from soe_sim.battle import Battle, resolve
from soe_sim.cli import main
from soe_sim.data.enums import SIDE, Nation, UnitClass
from soe_sim.engine.game import (
    CAUSE,
    EVENT,
    Event,
    fuzz,
    game_setup,
    nb,
    new_event_log,
    play_game,
    play_games,
)
from soe_sim.engine.game import policies as pnb
from soe_sim.engine.game.work import policy_set
from soe_sim.engine.nb import N_SUPPLY_SLOTS, new_supply_search_cache_nb
from soe_sim.engine.orders import OrderType, legal_orders, legal_rail, new_order_state, order_constants, place_order
from soe_sim.engine.orders import nb as onb
from soe_sim.engine.state import STATUS
from soe_sim.errors import SoeInputError
from soe_sim.rules import load_rules

pytestmark = pytest.mark.game_loop  # plays games: compiled once for the session (conftest.py)

EATS_SCENARIOS = ["kiev-offensive", "tukhachevsky-offensive", "battle-of-warsaw", "campaign-1920"]
RULES_DIR = Path(__file__).resolve().parent.parent / "data" / "rules"


@functools.lru_cache(maxsize=None)
def _setup(scenario, ruleset):
    return game_setup(scenario, ruleset)


def _flat_keys(d, prefix=""):
    for k, v in d.items():
        if isinstance(v, dict) and k != "pool":
            yield from _flat_keys(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}"


# --- the ruleset file -------------------------------------------------------------------------------


def test_eats_ruleset_is_soe_plus_overlay_and_every_key_is_cited():
    """eats.toml is merged over soe.toml ([meta] base) and cites an EatS section for every key."""
    eats = load_rules("eats")
    soe = load_rules("soe")
    assert eats.name == "The Eagle and the Star" and eats["meta.id"] == "eats"
    assert [Path(f).name for f in eats.files] == ["soe.toml", "eats.toml"]
    assert set(_flat_keys(eats.values)) == set(_flat_keys(soe.values))  # a complete ruleset
    raw = tomllib.loads((RULES_DIR / "eats.toml").read_text())
    sources = raw.pop("sources")
    raw["meta"].pop("base")
    for key in _flat_keys({k: v for k, v in raw.items() if k != "meta"}):
        assert key in sources and sources[key].startswith("EatS"), key
    soe_raw = tomllib.loads((RULES_DIR / "soe.toml").read_text())
    soe_sources = soe_raw.pop("sources")
    for key in _flat_keys({k: v for k, v in soe_raw.items() if k != "meta"}):
        assert key in soe_sources, key
    # the values that make the difference (docs/rules.md "EatS variant")
    assert (eats["orders.base_orders_per_front"], eats["orders.mandatory_recon"], eats["orders.free_recon_per_front"]) \
        == (1, 0, 1)
    assert (soe["orders.base_orders_per_front"], soe["orders.mandatory_recon"], soe["orders.free_recon_per_front"]) \
        == (2, 1, 0)
    assert eats["reinforcement.max_saved_cubes_per_front"] == 10 and eats["victory.immediate_vp"] == 15
    assert eats["combat.choose_after_draw"] is True and soe["combat.choose_after_draw"] is False  # EatS IX.3


def test_unknown_ruleset_is_a_clear_error_with_a_suggestion(capsys):
    with pytest.raises(SoeInputError, match=r"unknown ruleset.*did you mean `eats`"):
        load_rules("eat")
    with pytest.raises(SoeInputError, match="built-in rulesets: eats, .*soe"):
        game_setup("tutorial", "strike")
    assert main(["simulate", "-s", "tutorial", "-n", "2", "--ruleset", "eagle"]) == 2
    err = capsys.readouterr().err
    assert "unknown ruleset" in err and "Traceback" not in err
    assert main(["fuzz", "-s", "tutorial", "-n", "2", "--ruleset", "soee"]) == 2
    assert "did you mean `soe`" in capsys.readouterr().err


def test_bad_execution_groups_are_rejected(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[meta]\nname = "x"\nid = "x"\nbase = "soe"\n[orders]\n'
                   'execute_before_battles = ["forced_march", "recon", "move"]\n'
                   'execute_after_battles = ["withdraw", "reorganize", "rail_transport"]\n')
    with pytest.raises(SoeInputError, match="withdraw must be executed before the battles"):
        order_constants(load_rules(bad))
    bad2 = tmp_path / "bad2.toml"  # (load_rules caches by path)
    bad2.write_text('[meta]\nname = "x"\nid = "x"\nbase = "soe"\n[orders]\nexecute_after_battles = ["rail"]\n')
    with pytest.raises(SoeInputError, match="unknown order execution group.*rail_transport"):
        order_constants(load_rules(bad2))


# --- set-up: leaders (V10), cards (EatS IV.1), victory (XII.1), Germany (II.3) -------------------------


def test_eats_ii_2_no_leader_blocks():
    """EatS has no leader blocks (II.2, XIV): the variant leaves them out of every scenario (V10)."""
    for sc in EATS_SCENARIOS:
        assert (_setup(sc, "eats").state0.block_arm == 2).sum() == 0
        assert (_setup(sc, "soe").state0.block_arm == 2).sum() > 0


def test_eats_iv_1_both_fronts_draw_12_hold_13():
    """EatS IV.1: a player commanding both fronts draws 12 cards and holds 13, with no extra draws;
    one front (the tutorial): 6 and 7. SoE 10.1: 6, hand 7, +2 in phases 2-4."""
    k = _setup("kiev-offensive", "eats").kr
    assert (k.draw_per_round, k.hand_limit, k.two_front_extra_draw) == (12, 13, 0)
    assert _setup("kiev-offensive", "eats").etable.hand_limit == 13
    k = _setup("tutorial", "eats").kr
    assert (k.draw_per_round, k.hand_limit) == (6, 7)
    k = _setup("kiev-offensive", "soe").kr
    assert (k.draw_per_round, k.hand_limit, k.two_front_extra_draw) == (6, 7, 2)


def test_one_front_card_keys_reach_the_3_4_player_scenarios(tmp_path):
    """SoE 10.1 keeps the one-front draw and hand limit for a player commanding both fronts, so the SoE
    ruleset's ``cards.*_both_fronts`` are 0 ("as the one-front keys") and a variant's hand limit 8
    (``data/variants/attacker-friendly.toml``) reaches kiev-offensive (audit 2026-11-26: it was
    masked by a both-fronts 7)."""
    from soe_sim.design.variant import variant_setup

    for scenario in ("kiev-offensive", "tutorial"):
        s = variant_setup(scenario, "attacker-friendly")
        assert s.rules["cards.hand_limit"] == 8
        assert s.kr.hand_limit == 8 and s.etable.hand_limit == 8
    assert game_setup("kiev-offensive", "soe").kr.hand_limit == 7


def test_eats_xii_1_immediate_victory_from_the_ruleset():
    """EatS XII.1: 15 VP or a Soviet capture of Warsaw wins at once; the ruleset adds the conditions
    a scenario lacks (the tutorial) and does not duplicate those the EatS scenarios already carry."""
    cfg = _setup("tutorial", "eats").cfg
    warsaw = _setup("tutorial", "eats").game_map.index("warsaw")
    rows = set(zip(cfg.imm_kind.tolist(), cfg.imm_side.tolist(), cfg.imm_area.tolist(), cfg.imm_value.tolist()))
    assert rows == {(nb.IMMEDIATE_VP_AT_LEAST, 0, -1, 15), (nb.IMMEDIATE_VP_AT_LEAST, 1, -1, 15),
                    (nb.IMMEDIATE_CAPTURE_AREA, 1, warsaw, 0)}
    assert len(_setup("tutorial", "soe").cfg.imm_kind) == 0
    assert len(_setup("kiev-offensive", "eats").cfg.imm_kind) == len(_setup("kiev-offensive", "soe").cfg.imm_kind) == 3


def test_eats_ii_3_germany_closed_to_poles():
    """EatS II.3 'Polish units can't cross the German border': no Polish nation may move into a
    German area (move and rail rows, G15 filter); Soviet nations may; SoE: everybody may."""
    s = _setup("kiev-offensive", "eats")
    germany = s.game_map.arrays.territory == 2
    assert germany.sum() == 5 and np.array_equal(s.cfg.intern_area, germany)
    for nat in (Nation.POLISH, Nation.UKRAINIAN_UNR, Nation.LITHUANIAN_BELARUSIAN):
        assert not s.cfg.nation_move_ok[int(nat), germany].any()
    assert s.cfg.nation_move_ok[int(Nation.SOVIET), germany].all()
    soe = _setup("kiev-offensive", "soe")
    assert not soe.cfg.intern_area.any()
    for nat in (Nation.POLISH, Nation.LITHUANIAN_BELARUSIAN, Nation.SOVIET):  # (UNR: SoE front_restriction, G16)
        assert soe.cfg.nation_move_ok[int(nat), germany].all()


# --- V1: one free order + a Recon marker (EatS VI); V: Withdraw excludes Defend (EatS II.4.1) -----------


def _orders_scene(ruleset):
    s = _setup("tutorial", ruleset)
    state = s.state0.copy()
    orders = new_order_state(state)
    onb.reset_phase_nb(state, orders, False)
    front = int(s.game_map.arrays.front[s.game_map.index("charyshi")])
    return s, state, orders, front


def test_eats_vi_free_order_and_recon_marker():
    """EatS VI: 1 free order of any kind plus 1 Recon marker, the Recon not mandatory. With 1 + 0
    card orders the side may pass at once, place one order of any type, and then only a Recon;
    after both, nothing. SoE 7.11/7.2: 2 orders, one of which must be a Recon (no pass before it)."""
    s, state, orders, front = _orders_scene("eats")
    base = s.orules.base_orders_per_front
    rows = legal_orders(state, orders, s.game_map, s.orules, SIDE.POLISH, front, base)
    assert (None, None) in rows  # not mandatory
    assert any(t is not None and t != OrderType.RECON for t, _ in rows)
    move = next((t, a) for t, a in rows if t == OrderType.MOVE_OUT)
    place_order(state, orders, s.game_map, SIDE.POLISH, front, *move)
    rows = legal_orders(state, orders, s.game_map, s.orules, SIDE.POLISH, front, base)
    assert rows and all(t in (OrderType.RECON, None) for t, _ in rows)  # the free Recon slot only
    recon = next(r for r in rows if r[0] == OrderType.RECON)
    place_order(state, orders, s.game_map, SIDE.POLISH, front, *recon)
    assert legal_orders(state, orders, s.game_map, s.orules, SIDE.POLISH, front, base) == []
    # a Recon placed first uses the Recon marker and leaves the free order
    s, state, orders, front = _orders_scene("eats")
    recon = next(r for r in legal_orders(state, orders, s.game_map, s.orules, SIDE.POLISH, front, base)
                 if r[0] == OrderType.RECON)
    place_order(state, orders, s.game_map, SIDE.POLISH, front, *recon)
    rows = legal_orders(state, orders, s.game_map, s.orules, SIDE.POLISH, front, base)
    assert any(t not in (OrderType.RECON, None) for t, _ in rows)
    # SoE: the mandatory Recon
    s, state, orders, front = _orders_scene("soe")
    rows = legal_orders(state, orders, s.game_map, s.orules, SIDE.POLISH, front, s.orules.base_orders_per_front)
    assert (None, None) not in rows
    move = next((t, a) for t, a in rows if t == OrderType.MOVE_OUT)
    place_order(state, orders, s.game_map, SIDE.POLISH, front, *move)
    rows = legal_orders(state, orders, s.game_map, s.orules, SIDE.POLISH, front, s.orules.base_orders_per_front)
    assert rows and all(t == OrderType.RECON for t, _ in rows)


def test_eats_ii_4_1_no_withdraw_with_defend():
    """EatS II.4.1 Withdraw: 'not allowed on a space where Defend order is present' (and no Defend
    where a Withdraw is). SoE allows both types on one area (two blocks, O2)."""
    for ruleset, allowed in (("eats", False), ("soe", True)):
        s, state, orders, front = _orders_scene(ruleset)
        place_order(state, orders, s.game_map, SIDE.POLISH, front, OrderType.DEFEND, "charyshi")
        rows = legal_orders(state, orders, s.game_map, s.orules, SIDE.POLISH, front, 4)
        assert ((OrderType.WITHDRAW, "charyshi") in rows) is allowed
        s, state, orders, front = _orders_scene(ruleset)
        place_order(state, orders, s.game_map, SIDE.POLISH, front, OrderType.WITHDRAW, "charyshi")
        rows = legal_orders(state, orders, s.game_map, s.orules, SIDE.POLISH, front, 4)
        assert ((OrderType.DEFEND, "charyshi") in rows) is allowed


# --- V3: initiative by the difference of losses (EatS II.4.3); V7: garrison losses (EatS II.4.2) ---------


def test_eats_ii_4_3_initiative_example_1():
    """EatS II.4.3 Example 1: the Poles hold 1 initiative point; winning while inflicting 2 SP and
    losing 1 leaves the level (difference 1); inflicting 3 raises it. SoE 6.1 counts the losses
    inflicted alone (2 > 1: a gain)."""
    battle = Battle.from_spec("4i,4i", "4i,2i", attacker_side="polish", initiative_holder="attacker",
                              initiative_level=1)
    eats, soe = load_rules("eats"), load_rules("soe")
    r = resolve(battle, 0, 0, rules=eats)  # 8 -> 2 losses inflicted, 6 -> 1 suffered
    assert (r["attacker_wins"], r["defender_losses"], r["attacker_losses"]) == (True, 2, 1)
    assert (r["initiative_level"], r["initiative_change"]) == (1, "none")
    assert (resolve(battle, 0, 0, rules=soe)["initiative_level"]) == 2
    r = resolve(battle, 2, 0, rules=eats)  # 10 -> 3 inflicted, 1 suffered: difference 2 > 1
    assert (r["defender_losses"], r["attacker_losses"], r["initiative_level"], r["initiative_change"]) == \
        (3, 1, 2, "gain")
    # the defender holding the initiative: its losses count against it too
    held = Battle.from_spec("2i", "4i,4i", initiative_holder="defender", initiative_level=1)
    r = resolve(held, 2, 0, rules=eats)  # attacker 4 -> 1 loss; defender 8 -> 2 losses: difference 1
    assert (r["attacker_wins"], r["initiative_change"]) == (False, "none")
    assert resolve(held, 2, 0, rules=soe)["initiative_change"] == "gain"


def test_eats_ii_4_2_garrison_pays_first_only_in_a_lost_defence():
    """EatS II.4.2 'Garrisons are used to pay first losses in a lost defensive battle': a winning
    defender's blocks take the losses and the garrison stays (V7); a losing defender's garrison
    still goes first. SoE 3.0: the garrison always takes the first loss."""
    eats, soe = load_rules("eats"), load_rules("soe")
    won = Battle.from_spec("2i", "3i", garrison=True)  # 2+2 -> 1 loss; 3+1+3 -> 2 losses: defender wins
    r = resolve(won, 2, 3, rules=eats)
    assert (r["attacker_wins"], r["defender_losses"], r["garrison_lost"]) == (False, 1, False)
    assert resolve(won, 2, 3, rules=soe)["garrison_lost"] is True
    lost = Battle.from_spec("4i,4i", "2i", garrison=True)  # 8 -> 2 losses; 2+1 -> 0: defender loses
    for rules in (eats, soe):
        r = resolve(lost, 0, 0, rules=rules)
        assert (r["attacker_wins"], r["defender_losses"], r["garrison_lost"]) == (True, 2, True)
    alone = Battle.from_spec("1i", "", garrison=True)  # a lone garrison that wins still pays its loss
    r = resolve(alone, 3, 4, rules=eats)  # 4 -> 1 loss; 1+4 -> 1 loss: a draw, the attacker loses
    assert (r["attacker_wins"], r["garrison_lost"]) == (False, True)


def test_eats_ii_3_3_and_ix_2_no_flank_negation_by_strongholds_or_support():
    """EatS II.3.3: stronghold units 'can't ignore flanking attacks'; EatS IX.2 has no supporting-block
    rule (V4). Two attack directions against a fortified area (all from fortified directions) with
    one supporting direction: -2 SP under EatS, none under SoE."""
    battle = Battle.from_spec("2i/2i", "4i", fortified=True, support=1)
    e = resolve(battle, 0, 0, rules=load_rules("eats"))
    s = resolve(battle, 0, 0, rules=load_rules("soe"))
    assert (e["defender_cv"], s["defender_cv"]) == (2, 4)


# --- V5: rail transport into a defended battle at strength 0 (EatS II.4.1) ------------------------------


def _rail_scene(ruleset):
    """Kiev Offensive start, Polish rail order in Warsaw; Radzymin (a rail neighbour) held by a Polish
    block since the phase start and entered by a Soviet block from Ostrow Mazowiecka."""
    s = _setup("kiev-offensive", ruleset)
    gm = s.game_map
    state = s.state0.copy()
    orders = new_order_state(state)
    onb.reset_phase_nb(state, orders, False)
    warsaw, radzymin, ostrow = gm.index("warsaw"), gm.index("radzymin"), gm.index("ostrow-mazowiecka")
    pol = [int(b) for b in np.flatnonzero((state.block_area == warsaw) & (state.block_side == 0))]
    assert len(pol) >= 2
    holder, mover = pol[0], pol[1]
    state.block_area[holder] = radzymin
    sov = int(np.flatnonzero((state.block_status == STATUS.ON_MAP) & (state.block_side == 1)
                             & (state.block_arm == 0))[0])
    state.block_area[sov] = radzymin
    state.block_prev_area[sov] = ostrow
    state.block_arrival[sov] = 1
    front = int(gm.arrays.front[warsaw])
    o = place_order(state, orders, gm, SIDE.POLISH, front, OrderType.RAIL_TRANSPORT, "warsaw")
    return s, state, orders, o, mover, radzymin, warsaw


def test_eats_ii_4_1_rail_into_a_defended_battle_at_strength_0():
    """EatS II.4.1 Railway transport: the move may end in a battle area the side holds (V5), the
    block enters from the rail neighbour it came through and counts 0 in the battle
    (``rail_moved_sp_nb`` is what the loop takes off the combat card). SoE 7.6: never into an
    area with enemy blocks."""
    s, state, orders, o, mover, radzymin, warsaw = _rail_scene("eats")
    assert (mover, "radzymin") in legal_rail(state, orders, s.game_map, s.orules, o)
    via = onb.apply_rail_nb(state, orders, s.game_map.arrays, s.orules, o, mover, radzymin)
    assert via == warsaw and state.block_area[mover] == radzymin and state.block_prev_area[mover] == warsaw
    sp = int(state.block_sp[mover])
    assert sp > 0 and nb.rail_moved_sp_nb(state, orders, SIDE.POLISH, radzymin) == sp
    assert nb.rail_moved_sp_nb(state, orders, SIDE.SOVIET, radzymin) == 0
    s, state, orders, o, mover, radzymin, warsaw = _rail_scene("soe")
    rows = legal_rail(state, orders, s.game_map, s.orules, o)
    assert rows and (mover, "radzymin") not in rows
    assert s.cr.rail_moved_strength_zero is False and load_rules("eats").combat_constants().rail_moved_strength_zero


# --- V6 garrisons in the supply phase, V8 cube cap, V9 home builds, V11 internment: loop kernels --------


def _arrays(n_areas):
    return (np.zeros((2, n_areas), np.int32), np.zeros((2, n_areas), np.bool_), np.zeros((2, n_areas), np.int32),
            np.zeros((2, n_areas), np.bool_))


def _supply(n_areas):
    return new_supply_search_cache_nb(n_areas, N_SUPPLY_SLOTS)


def test_eats_ii_4_2_garrisons_placed_in_the_supply_phase():
    """EatS II.4.2: after the supply check a side's garrison goes into a supplied key town it occupies
    (V6), except where a garrison was eliminated this round (it waits for the Reinforcement Phase)."""
    s = _setup("kiev-offensive", "eats")
    gm = s.game_map
    state = s.state0.copy()
    minsk = gm.index("minsk")
    state.garrison_side[minsk] = -1
    pol = int(np.flatnonzero((state.block_status == STATUS.ON_MAP) & (state.block_side == 0))[0])
    state.block_area[pol] = minsk
    log = new_event_log(256)
    waiting = np.zeros(gm.n_areas, np.bool_)
    waiting[minsk] = True
    nb.supply_phase_garrisons_nb(state, gm.arrays, log.records, log.ctr, *_arrays(gm.n_areas), _supply(gm.n_areas),
                                 waiting)
    assert state.garrison_side[minsk] == -1
    waiting[:] = False
    nb.supply_phase_garrisons_nb(state, gm.arrays, log.records, log.ctr, *_arrays(gm.n_areas), _supply(gm.n_areas),
                                 waiting)
    assert state.garrison_side[minsk] == 0
    ev = [(int(e["kind"]), int(e["side"]), int(e["area"]), int(e["value2"])) for e in log.used()]
    assert ev.count((EVENT.GARRISON_PLACED, 0, minsk, CAUSE.SUPPLY)) == 1
    assert s.er.garrisons_in_supply_phase and not _setup("kiev-offensive", "soe").er.garrisons_in_supply_phase


def test_eats_x_cube_cap_per_front():
    """EatS X 'One front can't have more than 10 Reinforcements Points' (V8): each side's saved pool of
    each front is capped at 10 (allied, then cavalry, then infantry dropped); 10 on the north and
    10 on the south are both kept (a per-side cap of 10 would drop them), 12 on one front lose 2 on
    that front only (a per-side cap of 20 would keep them); SoE: no cap."""
    N, S = 0, 1
    state = _setup("tutorial", "eats").state0.copy()
    state.cubes[0, N] = [8, 3, 2]  # 13: 3 over
    state.cubes[0, S] = [10, 0, 0]  # exactly the cap
    state.cubes[1, N] = [12, 0, 0]  # 12 on one front, nothing on the other
    state.cubes[1, S] = [0, 0, 0]
    log = new_event_log(64)
    nb.cap_saved_cubes_nb(state, 10, log.records, log.ctr)
    assert state.cubes.tolist() == [[[8, 2, 0], [10, 0, 0]], [[10, 0, 0], [0, 0, 0]]]
    got = [(int(e["kind"]), int(e["side"]), int(e["area"]), int(e["area2"]), int(e["value"]), int(e["value2"]))
           for e in log.used()]
    assert got == [(EVENT.CUBES_DROPPED, 0, -1, N, 3, 1), (EVENT.CUBES_DROPPED, 1, -1, N, 2, 1)]
    nb.cap_saved_cubes_nb(state, 0, log.records, log.ctr)  # SoE: max_saved_cubes_per_front = 0
    assert state.cubes.tolist() == [[[8, 2, 0], [10, 0, 0]], [[10, 0, 0], [0, 0, 0]]] and log.n == 2
    assert _setup("kiev-offensive", "eats").rr.max_saved_cubes_per_front == 10
    assert _setup("kiev-offensive", "eats").rr.saved_cubes_per_front
    assert not _setup("kiev-offensive", "soe").rr.saved_cubes_per_front


def _saved_pool_spending(ruleset, seeds=range(30)):
    """Kiev Offensive Reinforcement Phases with 6 saved infantry cubes of each side on the *south*
    front only and damaged blocks everywhere, random decisions: for each side, the fronts of the
    areas where saved-pool cubes were spent (STRENGTHEN / BUILD with pool -1) and the final pools."""
    s = _setup("kiev-offensive", ruleset)
    front = s.game_map.arrays.front
    src = s.game_map.arrays.supply_source
    spent = {0: set(), 1: set()}
    off_front_builds = 0
    finals = []
    for seed in seeds:
        state = s.state0.copy()
        state.cubes[:] = 0
        state.cubes[:, 1, 0] = 6  # EatS X: RP of a card played on the southern front
        state.phase[0] = nb.PHASE_REINFORCEMENT
        for b in np.flatnonzero((state.block_status == STATUS.ON_MAP) & (state.block_sp > 1)):
            state.block_sp[b] -= 1  # room to strengthen
        cs = s.cards0.copy()
        ids = np.zeros(2, np.int64)
        params = nb.default_params_nb(ids)
        pol = policy_set(s, ids, params, cs)
        log = new_event_log(4096)
        n = s.game_map.n_areas
        nb.reinforcement_phase_nb(state, s.orders0.copy(), s.game_map.arrays, s.er, s.rr, s.cfg,
                                  s.cfg.nation_active.copy(), pol, np.array([seed + 3, seed + 11], np.uint64),
                                  log.records, log.ctr, *_arrays(n), np.zeros((2, n), np.int32), _supply(n))
        for e in log.used():
            if e["kind"] in (EVENT.STRENGTHEN, EVENT.BUILD) and e["value2"] == -1:
                a = int(e["area"])
                if e["kind"] == EVENT.BUILD and src[a] == int(e["side"]):
                    continue  # EatS X.3: recreated at the side's supply source whichever front pays
                spent[int(e["side"])].add(int(front[a]))
                off_front_builds += int(e["kind"] == EVENT.BUILD and front[a] != 1)
        assert (state.cubes >= 0).all()
        finals.append(state.cubes.copy())
    return spent, off_front_builds, finals


def test_eats_x_card_cubes_go_to_the_front_where_the_card_is_played():
    """EatS V.2 "Add these points to your Reinforcement Points Track", X "One front can't have more
    than 10 Reinforcements Points" (V8), SoE 7.12: in the loop's card play (7.1, one card per front)
    the RP of a card played for reinforcements go to the pool of the front it is played on."""
    from soe_sim.engine.cards import nb as cnb

    s = _setup("kiev-offensive", "eats")
    st0 = s.state0
    nbk, na = st0.n_blocks, s.game_map.n_areas
    z = lambda dt, n: np.zeros(n, dt)  # noqa: E731
    checked = set()
    for seed in range(40):
        state = st0.copy()
        state.cubes[:] = 0
        cs = s.cards0.copy()
        rng = np.array([seed + 5, seed + 9], np.uint64)
        for side in (0, 1):
            cnb.shuffle_draw_pile_nb(cs, side, rng)
            cnb.replenish_nb(cs, side, s.kr, rng)
        ids = np.zeros(2, np.int64)
        pol = policy_set(s, ids, nb.default_params_nb(ids), cs)
        ew = nb.new_event_work_nb(s.cfg, nbk, na, cs.location.shape[1], z(st0.block_status.dtype, nbk),
                                  z(st0.block_area.dtype, nbk), z(st0.block_sp.dtype, nbk),
                                  z(st0.garrison_side.dtype, na), z(bool, nbk), z(bool, nbk),
                                  s.orders0.order_type.shape[0])
        log = new_event_log(512)
        nb.card_play_nb(state, cs, s.orders0.copy(), s.game_map.arrays, s.cfg, ew, pol, rng,
                        np.array([seed + 1, seed + 2], np.uint64), log.records, log.ctr, np.zeros((2, 2), np.int64))
        plays = [(int(e["side"]), int(e["area"]), int(e["value"]), int(e["value2"])) for e in log.used()
                 if e["kind"] == EVENT.CARD_PLAYED]
        if any(use == cnb.USE_EVENT for *_x, use in plays):
            continue  # an event may add cubes too
        want = np.zeros((2, 2, 3), np.int64)
        for side, front, card, use in plays:
            if use == cnb.USE_CUBES:
                want[side, front] += cs.cubes[side, card - 1]
                checked.add(front)
        assert state.cubes.tolist() == want.tolist()
    assert checked == {0, 1}  # cards played for RP on both fronts


def test_eats_x_saved_cubes_spent_on_their_own_front():
    """EatS X (V8): RP saved on the southern front are spent only on the south (strengthening, and
    builds other than EatS X.3 recreations at the supply source); the northern pool stays empty.
    SoE 8.3 (RF14): the side's saved cubes are one pool, spent on either front (some go north)."""
    spent, off, finals = _saved_pool_spending("eats")
    assert spent[0] | spent[1] == {1} and off == 0
    assert all((c[:, 0] == 0).all() for c in finals)
    spent, _off, finals = _saved_pool_spending("soe")
    assert 0 in spent[0] | spent[1]  # SoE: southern cubes strengthen northern blocks too


def test_eats_x_3_own_nation_builds_at_home():
    """EatS X.3, X.4: Poles recreate (and take reserve units) in Warsaw, Soviets in their special
    locations (V9); allied-nation blocks keep the SoE 8.4 depots."""
    s = _setup("kiev-offensive", "eats")
    gm = s.game_map
    st = s.state0
    pol = int(np.flatnonzero((st.block_side == 0) & (st.block_nation == int(Nation.POLISH)))[0])
    unr = int(np.flatnonzero(st.block_nation == int(Nation.UKRAINIAN_UNR))[0])
    sov = int(np.flatnonzero((st.block_side == 1) & (st.block_nation == int(Nation.SOVIET)))[0])
    bmask = np.zeros((st.n_blocks, gm.n_areas), np.bool_)
    for b, a in ((pol, "warsaw"), (pol, "lviv"), (unr, "kiev"), (sov, "yartsevo"), (sov, "minsk")):
        bmask[b, gm.index(a)] = True
    assert nb.home_builds_only_nb(st, gm.arrays, 0, bmask) == 4  # Poles: only Polish-nation rows filtered
    assert not bmask[pol, gm.index("lviv")] and bmask[pol, gm.index("warsaw")] and bmask[unr, gm.index("kiev")]
    assert nb.home_builds_only_nb(st, gm.arrays, 1, bmask) == 3
    assert not bmask[sov, gm.index("minsk")] and bmask[sov, gm.index("yartsevo")]


def _reinforce_events(ruleset, seeds=range(40)):
    """Reinforcement phases of the Kiev Offensive start with 5 saved infantry cubes a side and front, random
    decisions: the events of every seed."""
    s = _setup("kiev-offensive", ruleset)
    out = []
    for seed in seeds:
        state = s.state0.copy()
        state.cubes[:, :, 0] = 5  # 5 infantry RP on each front
        state.phase[0] = nb.PHASE_REINFORCEMENT
        for b in np.flatnonzero((state.block_status == STATUS.ON_MAP) & (state.block_sp > 1))[::2]:
            state.block_sp[b] -= 1  # room to strengthen
        cs = s.cards0.copy()
        ids = np.zeros(2, np.int64)
        params = nb.default_params_nb(ids)
        pol = policy_set(s, ids, params, cs)
        log = new_event_log(4096)
        n = s.game_map.n_areas
        nb.reinforcement_phase_nb(state, s.orders0.copy(), s.game_map.arrays, s.er, s.rr, s.cfg,
                                  s.cfg.nation_active.copy(), pol, np.array([seed + 1, seed + 7], np.uint64),
                                  log.records, log.ctr, *_arrays(n), np.zeros((2, n), np.int32), _supply(n))
        out.append((state, log.used()))
    return s, out


def test_eats_x_reinforcement_options_in_the_phase():
    """EatS X: operational RP are used before the strategic ones (saved pool first); X.4 a unit from
    the Reserve Area may take more SP in the phase it enters (a built brigade is strengthened);
    X.3 own-nation blocks are built only on the side's supply sources. SoE: the opposite of each."""
    seen = {}
    for ruleset in ("eats", "soe"):
        s, runs = _reinforce_events(ruleset)
        src = s.game_map.arrays.supply_source
        order_ok, brigade_grown, away_builds = True, False, 0
        for state, ev in runs:
            for side in (0, 1):
                pools = [int(e["value2"]) for e in ev
                         if e["kind"] in (EVENT.STRENGTHEN, EVENT.BUILD) and e["side"] == side]
                saved = [i for i, p in enumerate(pools) if p == -1]
                strat = [i for i, p in enumerate(pools) if p != -1]
                if saved and strat:
                    first_saved = ruleset == "eats"
                    order_ok &= (max(saved) < min(strat)) if first_saved else (max(strat) < min(saved))
            built = set()
            for e in ev:
                b = int(e["block"])
                if e["kind"] == EVENT.BUILD:
                    if state.block_class[b] == int(UnitClass.BRIGADE):
                        built.add(b)
                    if state.block_nation[b] == int(e["side"]) and src[int(e["area"])] != int(e["side"]):
                        away_builds += 1  # own nation (Polish 0 / Soviet 1) built off a supply source
                elif e["kind"] == EVENT.STRENGTHEN and b in built:
                    brigade_grown = True
        seen[ruleset] = (order_ok, brigade_grown, away_builds)
    assert seen["eats"][:2] == (True, True) and seen["eats"][2] == 0
    assert seen["soe"][0] is True and seen["soe"][1] is False and seen["soe"][2] > 0


def test_eats_x_warsaw_strategic_cubes_on_either_front():
    """EatS X (V14): "If the Polish side is led by one player, he can use these [Warsaw's]
    reinforcements with no limits" — some southern blocks are strengthened from Warsaw's pool; SoE 8.5
    (RF11): a strategic city's cubes only on its own front, so none are."""
    south = {}
    for ruleset in ("eats", "soe"):
        s, runs = _reinforce_events(ruleset)
        warsaw = s.game_map.index("warsaw")
        front = s.game_map.arrays.front
        south[ruleset] = sum(1 for state, ev in runs for e in ev
                             if e["kind"] == EVENT.STRENGTHEN and int(e["value2"]) == warsaw
                             and front[int(e["area"])] != front[warsaw])
    assert _setup("kiev-offensive", "soe").rr.strategic_same_front
    assert not _setup("kiev-offensive", "eats").rr.strategic_same_front
    assert south["eats"] > 0 and south["soe"] == 0


def test_eats_ii_3_internment():
    """EatS II.3 Germany (V11): a Soviet block in German territory leaves the map with 1 SP less and
    returns at the first friendly town of Grodno (3 actions later), Svencionys (5), Polotsk (7); a
    1-SP block is destroyed. In the Kiev Offensive only Polotsk is Soviet: Round 1 Phase 3 + 7 =
    Round 2 Phase 5."""
    s = _setup("kiev-offensive", "eats")
    gm = s.game_map
    state = s.state0.copy()
    state.phase[0] = 3
    lyck = gm.index("lyck")
    sov = np.flatnonzero((state.block_status == STATUS.ON_MAP) & (state.block_side == 1))
    big = int(next(b for b in sov if state.block_sp[b] >= 2))
    one = int(next(b for b in sov if state.block_sp[b] == 1))
    sp = int(state.block_sp[big])
    for b in (big, one):
        state.block_area[b] = lyck
    log = new_event_log(256)
    nbk, n = state.n_blocks, gm.n_areas
    snaps = (np.empty(nbk, np.int8), np.empty(nbk, np.int16), np.empty(nbk, np.int8), np.empty(n, np.int8),
             np.zeros(nbk, np.bool_), np.zeros(nbk, np.bool_))
    assert nb.intern_nb(state, s.cfg, 5, log.records, log.ctr, *snaps) == 2
    assert state.block_status[big] == STATUS.SCHEDULED and state.block_area[big] == -1
    assert (state.block_arrive_area[big], state.block_arrive_round[big], state.block_arrive_phase[big],
            state.block_arrive_sp[big]) == (gm.index("polotsk"), 2, 5, sp - 1)
    assert state.block_status[one] == STATUS.DESTROYED_TO_POOL
    removed = [(int(e["block"]), int(e["value"]), int(e["value2"])) for e in log.used()
               if e["kind"] == EVENT.BLOCK_REMOVED]
    assert sorted(removed) == sorted([(big, STATUS.SCHEDULED, CAUSE.INTERNMENT),
                                      (one, STATUS.DESTROYED_TO_POOL, CAUSE.INTERNMENT)])
    # Grodno Soviet: back there 3 actions later; SoE: nothing happens
    state.control[gm.index("grodno")] = 1
    other = int(next(b for b in sov if b not in (big, one) and state.block_sp[b] >= 2))
    state.block_area[other] = lyck
    nb.intern_nb(state, s.cfg, 5, log.records, log.ctr, *snaps)
    assert (state.block_arrive_area[other], state.block_arrive_round[other], state.block_arrive_phase[other]) == \
        (gm.index("grodno"), 2, 1)
    soe = _setup("kiev-offensive", "soe")
    st2 = soe.state0.copy()
    st2.block_area[big] = lyck
    assert nb.intern_nb(st2, soe.cfg, 5, log.records, log.ctr, *snaps) == 0 and st2.block_area[big] == lyck


# --- EatS IX.3 item 2: the combat card chosen after the draw (V13) ------------------------------------


def _card_scene(ruleset, att_hand, att_top, def_hand, def_top):
    """Kiev Offensive cards with a known hand and draw-pile top for each side: side 0 (the attacker)
    holds ``att_hand`` and draws ``att_top`` first; side 1 likewise. Returns (setup, state, cs)."""
    from soe_sim.engine.cards import nb as cnb

    s = _setup("kiev-offensive", ruleset)
    cs = s.cards0.copy()
    for side, hand, top in ((0, att_hand, att_top), (1, def_hand, def_top)):
        rest = [c + 1 for c in range(cs.location.shape[1])
                if cs.location[side, c] != cnb.REMOVED and c + 1 != top and c + 1 not in hand]
        for c in range(cs.location.shape[1]):
            if cs.location[side, c] != cnb.REMOVED:
                cs.location[side, c] = cnb.HAND if c + 1 in hand else cnb.DRAW_PILE
            cs.use[side, c] = cnb.USE_NONE
        pile = [top] + rest
        cs.pile[side, :len(pile)] = pile
        cs.pile_top[side] = 0
        cs.pile_len[side] = len(pile)
    return s, s.state0.copy(), cs


def _pick_cards(cs, side, want_high_hand):
    """(hand card, top card) of ``side``: non-battle cards, the hand card the highest modifier and the
    top the lowest (``want_high_hand``), or the reverse."""
    from soe_sim.engine.cards import nb as cnb
    from soe_sim.data.enums import EVENT_KIND

    ok = [c + 1 for c in range(cs.location.shape[1])
          if cs.location[side, c] != cnb.REMOVED and cs.event_kind[side, c] != EVENT_KIND.BATTLE]
    by = sorted(ok, key=lambda c: (int(cs.combat_modifier[side, c - 1]), c))
    lo, hi = by[0], by[-1]
    assert cs.combat_modifier[side, hi - 1] > cs.combat_modifier[side, lo - 1]
    return (hi, lo) if want_high_hand else (lo, hi)


def _combat_cards(s, state, cs, policy_ids, seed=3, after_draw=True):
    """Run the battle-card and combat-card decisions of a battle (attacker 0, defender 1, area 0) and
    return (att_mod, def_mod, COMBAT_CARD events as (side, use, card, mod), rng_chance after)."""
    ids = np.array([pnb.POLICY_IDS[p] for p in policy_ids], np.int64)
    params = nb.default_params_nb(ids)
    params[:, pnb.P_CARD_MIN_GAIN] = 0.0  # the card-value rule: these tests are about the sequence, not the stakes
    pol = policy_set(s, ids, params, cs)
    log = new_event_log(256)
    rng_chance = np.array([seed + 100], np.uint64)
    rng_policy = np.array([seed + 1, seed + 2], np.uint64)
    att_eff = np.zeros(nb.bnb.N_EFFECT, np.int64)
    def_eff = np.zeros(nb.bnb.N_EFFECT, np.int64)
    m = s.game_map.arrays
    opts = np.empty(cs.location.shape[1] + 1, np.int64)
    if after_draw:
        am, dm = nb._battle_cards_after_draw_nb(state, cs, s.orders0.copy(), m, s.kr, 0, 1, 0, pol, rng_policy,
                                                rng_chance, log.records, log.ctr, s.cfg, att_eff, def_eff, opts)
    else:
        am = nb._battle_cards_nb(state, cs, s.orders0.copy(), m, s.kr, 0, 0, True, pol, rng_policy, rng_chance,
                                 log.records, log.ctr, s.cfg, att_eff, opts)
        dm = nb._battle_cards_nb(state, cs, s.orders0.copy(), m, s.kr, 1, 0, False, pol, rng_policy, rng_chance,
                                 log.records, log.ctr, s.cfg, def_eff, opts)
    ev = [(int(e["side"]), int(e["block"]), int(e["value"]), int(e["value2"])) for e in log.used()
          if e["kind"] == EVENT.COMBAT_CARD]
    return int(am), int(dm), ev, int(rng_chance[0])


def test_eats_ix_3_combat_card_after_the_draw():
    """EatS IX.3 item 2 "each player draws one card from the deck. After looking at it, a player can
    instead use a card from his hand ... The attacker declares which card he wants to use first"
    (combat.choose_after_draw, V13). The attacker draws his lowest card and holds his highest: he
    plays the hand card (+1), his drawn card stays unused and is discarded with the battle's cards.
    The defender draws his highest card and holds his lowest: he keeps the drawn card. Both always
    draw, attacker first, so the chance stream is the same whatever the policies choose."""
    from soe_sim.engine.cards import nb as cnb

    s0 = _setup("kiev-offensive", "eats")
    assert s0.cr.choose_after_draw is True and _setup("kiev-offensive", "soe").cr.choose_after_draw is False
    a_hand, a_top = _pick_cards(s0.cards0, 0, True)
    d_hand, d_top = _pick_cards(s0.cards0, 1, False)
    s, state, cs = _card_scene("eats", [a_hand], a_top, [d_hand], d_top)
    bonus = s.kr.hand_card_bonus
    am, dm, ev, rng_after = _combat_cards(s, state, cs, ("balanced", "balanced"))
    a_mod = int(cs.combat_modifier[0, a_hand - 1]) + bonus
    d_mod = int(cs.combat_modifier[1, d_top - 1])
    # the attacker declares first: a hand card; the defender keeps his draw
    assert ev == [(0, cnb.USE_COMBAT_HAND, a_hand, a_mod), (1, cnb.USE_COMBAT_BLIND, d_top, d_mod)]
    assert (am, dm) == (a_mod, d_mod)
    assert cs.pile_top.tolist() == [1, 1]  # both drew
    assert cs.location[0, a_top - 1] == cnb.IN_PLAY and cs.location[0, a_hand - 1] == cnb.IN_PLAY
    assert cs.location[1, d_top - 1] == cnb.IN_PLAY and cs.location[1, d_hand - 1] == cnb.HAND
    for side in (0, 1):
        cnb.end_battle_nb(cs, side)
    assert cs.location[0, a_top - 1] == cnb.DISCARD and cs.location[0, a_hand - 1] == cnb.DISCARD
    assert cs.location[1, d_top - 1] == cnb.DISCARD
    counts = np.zeros(cnb.N_LOCATIONS, np.int64)
    for side in (0, 1):
        assert cnb.card_counts_nb(cs, side, counts) and counts.sum() == cs.location.shape[1]
    # reversed hands: the attacker keeps a high draw, the defender switches from a low one
    s, state, cs = _card_scene("eats", [a_top], a_hand, [d_top], d_hand)
    am, dm, ev, rng_after2 = _combat_cards(s, state, cs, ("balanced", "balanced"))
    assert ev == [(0, cnb.USE_COMBAT_BLIND, a_hand, int(cs.combat_modifier[0, a_hand - 1])),
                  (1, cnb.USE_COMBAT_HAND, d_top, int(cs.combat_modifier[1, d_top - 1]) + bonus)]
    assert rng_after2 == rng_after  # the same draws whatever was chosen (common random numbers)
    # random policies: the same draws again, and the chance stream is consumed identically
    for seed in range(6):
        s, state, cs = _card_scene("eats", [a_hand], a_top, [d_hand], d_top)
        *_x, rng_r = _combat_cards(s, state, cs, ("random", "random"), seed=seed)
        s, state, cs2 = _card_scene("eats", [a_hand], a_top, [d_hand], d_top)
        *_x, rng_b = _combat_cards(s, state, cs2, ("balanced", "balanced"), seed=seed)
        assert rng_r == rng_b and cs.pile_top.tolist() == cs2.pile_top.tolist() == [1, 1]


def test_eats_ix_3_soe_chooses_before_the_draw():
    """SoE 7.41.2 (reading R10, combat.choose_after_draw false): the choice comes first and a side
    that plays a hand card draws nothing; only a blind draw takes the top card."""
    from soe_sim.engine.cards import nb as cnb

    s0 = _setup("kiev-offensive", "soe")
    a_hand, a_top = _pick_cards(s0.cards0, 0, True)
    d_top = _pick_cards(s0.cards0, 1, True)[1]
    s, state, cs = _card_scene("soe", [a_hand], a_top, [], d_top)
    am, dm, ev, _r = _combat_cards(s, state, cs, ("balanced", "balanced"), after_draw=False)
    assert ev[0] == (0, cnb.USE_COMBAT_HAND, a_hand, int(cs.combat_modifier[0, a_hand - 1]) + s.kr.hand_card_bonus)
    assert ev[1][:2] == (1, cnb.USE_COMBAT_BLIND)  # an empty hand: the defender draws blind
    assert cs.pile_top.tolist() == [0, 1]  # the attacker never drew
    assert cs.location[0, a_top - 1] == cnb.DRAW_PILE


def test_eats_ix_3_describe_and_score_the_drawn_card():
    """The step interface names the kept draw; the scripted score compares a hand card with the
    drawn card (not the expected blind draw) after the draw, with hand_margin."""
    import pandas as pd

    from soe_sim.engine.game import Decision
    from soe_sim.engine.game.step import describe_options

    cols = pnb.FEATURES[pnb.DECISION.COMBAT_CARD]
    assert cols[10:13] == ("after_draw", "drawn_card", "drawn")
    feat = np.zeros((2, pnb.N_FEAT))
    feat[1, 0], feat[1, 1] = 7, 3.0  # a hand card worth 2 + 1
    feat[:, 2] = 0.0  # expected blind draw
    pnb.fill_drawn_card_features_nb(np.int64(12), np.int64(3), 2, feat)
    assert feat[0, 1] == 3.0 and (feat[:, 10] == 1).all() and (feat[:, 12] == 3).all()
    p = pnb.DEFAULT_PARAMS[pnb.POLICY_IDS["balanced"]].copy()
    p[pnb.P_CARD_MIN_GAIN] = 0.0  # the card-value rule (the stakes rule reads p_win: tests/test_policies.py)
    scores = np.zeros(2)
    pnb.score_options_nb(p, pnb.DECISION.COMBAT_CARD, feat, 2, scores)
    assert scores[1] <= scores[0]  # a drawn +3 is kept against a hand +2 (+1)
    feat[:, 11:13] = (12, 1)
    pnb.score_options_nb(p, pnb.DECISION.COMBAT_CARD, feat, 2, scores)
    assert scores[1] > scores[0]  # a drawn +1 is given up for it
    df = pd.DataFrame(feat[:, :len(cols)], columns=list(cols))
    text = describe_options(Decision.COMBAT_CARD, df, _setup("kiev-offensive", "eats"), 0)
    assert text[0].startswith("keep the drawn card 12") and "from hand" in text[1]


def test_eats_ix_3_narration_says_the_choice_followed_the_draw():
    """Playtest narration of an EatS game (V13): the exact odds are labelled as taking the recorded
    choices as fixed before the draw, and a hand card is said to leave its drawn card unused."""
    from soe_sim.playtest.narrate import narrate
    from soe_sim.playtest.story import build_story

    s = _setup("kiev-offensive", "eats")
    g = play_game(s, (4, 0), "balanced", "balanced", ruleset="eats", log_detail=True, log_capacity=200_000)
    text = narrate(build_story(g, s))
    assert "under EatS IX.3 each side chose after seeing its drawn card" in text
    assert "(its drawn card unused)" in text or "drawn and kept" in text
    soe = _setup("kiev-offensive", "soe")
    text = narrate(build_story(play_game(soe, (4, 0), log_detail=True, log_capacity=200_000), soe))
    assert "Exact odds before the draw" in text and "EatS IX.3" not in text


# --- the loop under the variant -------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _games(scenario, ruleset, n=3, seed=21):
    return [play_game(scenario, (seed, i), check_invariants=True, ruleset=ruleset) for i in range(n)]


def test_eats_vii_execution_sequence_and_initiative_order():
    """EatS VII: Quick Move, Move, then Railway transport, Recon and Reorganization, all before the
    combats (V2); EatS II.4.3 / VI: the player with the lower initiative places first, the higher
    resolves first, without a decision. Checked on the event logs of whole games."""
    s = _setup("kiev-offensive", "eats")
    init = {0: (0, 1), 1: (0, 1)}  # Scenario I: initiative 1 for Poland on both fronts
    assert [(int(s.state0.initiative_side[f]), int(s.state0.initiative_level[f])) for f in (0, 1)] == \
        [init[0], init[1]]
    checked = 0
    for g in _games("kiev-offensive", "eats"):
        holder = {f: int(s.state0.initiative_side[f]) for f in (0, 1)}
        phase_events = {}
        for i, e in enumerate(g.log.used()):
            k = int(e["kind"])
            if k == EVENT.INITIATIVE:
                holder[int(e["area"])] = int(e["side"])
            elif k == EVENT.FIRST_PLAYER:
                f, step = int(e["area"]), int(e["value"])
                want = 1 - holder[f] if step == 0 else holder[f]
                assert int(e["side"]) == want
                checked += 1
            key = (int(e["round"]), int(e["phase"]))
            phase_events.setdefault(key, []).append((i, k, int(e["value"])))
        for evs in phase_events.values():
            moves = [i for i, k, v in evs if k == EVENT.MOVE and v in (onb.MOVE_TO, onb.MOVE_OUT)]
            fms = [i for i, k, v in evs if k == EVENT.MOVE and v in (onb.FORCED_MARCH_TO, onb.FORCED_MARCH_OUT)]
            late = [i for i, k, v in evs if k in (EVENT.RECON, EVENT.REORGANIZED, EVENT.RAIL)]
            battles = [i for i, k, v in evs if k == EVENT.BATTLE]
            if fms and moves:
                assert max(fms) < min(moves)
            if late and (moves or fms):
                assert min(late) > max(moves + fms)
            if late and battles:
                assert max(late) < min(battles)
    assert checked > 0
    # SoE: reorganize / rail after the battles whenever both occur in a phase
    for g in _games("kiev-offensive", "soe"):
        ev = g.log.used()
        for key in {(int(e["round"]), int(e["phase"])) for e in ev}:
            idx = [(i, int(e["kind"])) for i, e in enumerate(ev) if (int(e["round"]), int(e["phase"])) == key]
            # (Stalin's reorganization right after his leader order is immediate, SoE 9.0 / L6)
            late = [i for i, k in idx if k == EVENT.RAIL or (k == EVENT.REORGANIZED
                                                               and int(ev[i - 1]["kind"]) != EVENT.LEADER_ORDER)]
            battles = [i for i, k in idx if k == EVENT.BATTLE]
            if late and battles:
                assert min(late) > max(battles)


@pytest.mark.parametrize("scenario", EATS_SCENARIOS)
def test_every_eats_scenario_plays_under_the_eats_ruleset(scenario):
    """Each of the four EatS scenarios plays to its end under the variant with random policies and no
    invariant violation (placement, SP range, stacking, battles resolved, cards, VP track)."""
    rep = fuzz(scenario, 4, seed=31, ruleset="eats", threads=1)
    assert rep["ruleset"] == "eats"
    assert rep["crashes"] == 0, rep["first_crash"]
    assert rep["violations"] == 0, rep["first_violation"]
    assert rep["stalemates"] == 0
    assert sum(rep["outcomes"].values()) == 4


@pytest.mark.slow
@pytest.mark.parametrize("scenario", EATS_SCENARIOS)
def test_every_eats_scenario_fuzz_large(scenario):
    """Thousands of seeded random EatS games of every scenario, the invariants checked after every
    phase (2,000) and before every decision (1,000)."""
    for games, every_step in ((2000, False), (1000, True)):
        rep = fuzz(scenario, games, seed=2020, ruleset="eats", every_step=every_step)
        assert rep["crashes"] == 0, rep["first_crash"]
        assert rep["violations"] == 0, rep["first_violation"]
        assert rep["stalemates"] == 0


def test_eats_games_differ_from_soe_games_and_use_the_options():
    """The same seed plays a different game under EatS (no leaders, 12-card hands, no Recon
    obligation…), the loop under EatS uses the variant's machinery, and play_games == play_game."""
    eats = _games("kiev-offensive", "eats")
    soe = _games("kiev-offensive", "soe")
    assert [len(g.events) for g in eats] != [len(g.events) for g in soe]
    first = eats[0].events
    drawn = first[(first["kind"] == "cards_drawn")]["value"].tolist()
    assert drawn[:2] == [12, 12]  # EatS IV.1: both fronts, 12 cards each
    blocks = set().union(*(set(g.events["block"]) for g in eats))
    assert "pl-pilsudski" not in blocks and "pl-pilsudski" in set().union(*(set(g.events["block"]) for g in soe))
    rows = play_games("kiev-offensive", 3, seed=21, threads=1, ruleset="eats", check_invariants=True)
    assert rows["vp"].tolist() == [g.vp for g in eats] and rows["steps"].tolist() == [g.steps for g in eats]


# --- entry points: simulate, CLI, sweep ------------------------------------------------------------------


def test_simulate_and_cli_under_eats(capsys, tmp_path):
    from soe_sim.sim import simulate

    df = simulate("tutorial", games=6, seed=4, threads=1, ruleset="eats")
    assert len(df) == 6 and df.attrs["soe_sim"]["ruleset"] == "eats"
    assert simulate("tutorial", games=6, seed=4, threads=1).attrs["soe_sim"]["ruleset"] == "soe"
    assert main(["simulate", "-s", "tutorial", "-n", "6", "--seed", "4", "--threads", "1", "--ruleset", "eats",
                 "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ruleset"] == "eats" and out["games"] == 6
    assert out["polish_win"] == pytest.approx((df["winner"] == "polish").mean())
    assert main(["fuzz", "-s", "tutorial", "-n", "2", "--ruleset", "eats"]) == 0
    assert "tutorial under eats: 2 games" in capsys.readouterr().out


def test_sweep_config_ruleset_eats(tmp_path):
    from soe_sim.sim import sweep as sw

    cfg_path = tmp_path / "sweep.toml"
    cfg_path.write_text('scenarios = ["tutorial"]\nruleset = "eats"\ngames_per_chunk = 2\nchunks = 1\nseed = 1\n'
                        '[[pairs]]\npolish = "random"\nsoviet = "random"\n')
    cfg = sw.load_config(str(cfg_path))
    assert cfg.ruleset == "eats"
    setup = sw.overlay_setup("tutorial", cfg.overlays[0], cfg.ruleset)
    assert setup.rules["meta.id"] == "eats" and setup.orules.free_recon_per_front == 1
    assert sw.overlay_setup("tutorial").rules["meta.id"] == "soe"
    cfg_path.write_text(cfg_path.read_text().replace('"eats"', '"eatz"'))
    with pytest.raises(SoeInputError, match="did you mean `eats`"):
        sw.load_config(str(cfg_path))


def test_game_setup_ruleset_arguments():
    from soe_sim.rules import load_rules as lr

    s = game_setup("tutorial", lr("eats"))
    assert s.rules["meta.id"] == "eats" and s.orules.holder_chooses_order is False
    assert game_setup(s) is s and game_setup(s, "eats") is s
    with pytest.raises(SoeInputError, match="another ruleset"):
        game_setup(s, "soe")
    assert game_setup("tutorial").rules["meta.id"] == "soe"
    assert Event.CUBES_DROPPED.name == "CUBES_DROPPED"


def test_an_edited_rules_file_is_read_again(tmp_path):
    """``load_rules`` caches what it read, keyed also on the files' stamps: a designer who edits a
    ruleset file (SoE 7.7 cavalry supply range) in a running session gets the edit, not the cache."""
    import os

    from soe_sim._paths import data_dir
    from soe_sim.rules import load_rules

    path = tmp_path / "mine.toml"
    path.write_text((data_dir() / "rules" / "soe.toml").read_text())
    assert int(load_rules(path)["supply.cavalry_range"]) == 5
    path.write_text(path.read_text().replace("\ncavalry_range = 5\n", "\ncavalry_range = 4\n", 1))
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert int(load_rules(path)["supply.cavalry_range"]) == 4
