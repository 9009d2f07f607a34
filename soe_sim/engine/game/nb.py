"""Numba kernels of the game loop (SoE 5.0, 6.0, 7.0–7.9, 8.0, 10.1): the round loop, the event log,
the decision dispatch, terminal conditions and the fuzzer's invariant checks.

The loop owns no rule of its own beyond the sequence of phases (SoE 5.0, 7.0, 7.9) and the scenario's
victory conditions: every rule is a kernel of another engine module, called in the order of
docs/engine-design.md "Phase sequence". Readings of the loop: docs/rules.md "Engine: the round loop"
(G1…).

Layout: every kernel is ``@njit(cache=True)`` and takes the named tuples of the other modules
(:class:`~soe_sim.engine.state.GameState` ``state``, :class:`~soe_sim.engine.cards.CardState` ``cs``,
:class:`~soe_sim.data.map.MapArrays` ``m``, :class:`~soe_sim.rules.CombatRules` ``cr``,
:class:`~soe_sim.engine.state.EngineRules` ``er``, :class:`~soe_sim.engine.cards.CardRules` ``kr``,
:class:`~soe_sim.engine.reinforce.nb.ReinforceRules` ``rr``) plus this module's :class:`GameConfig`
``cfg`` (the scenario's victory conditions and special rules as arrays), the policy ids, the random
streams and the event log.

Random streams (SplitMix64, ``uint64`` arrays advanced in place): ``rng_chance`` (1,) — shuffles,
blind combat draws, arrival checks; ``rng_policy`` (2,) — one per side, handed to the side's policy
as the length-1 view ``rng_policy[s:s + 1]``.

Counters (``ctr``, int64 (N_CTR,)): events logged, decision steps, the abort reason, invariant
violations (count, first code, its step, round and phase).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from soe_sim._jit import njit
from soe_sim.battle import nb as bnb
from soe_sim.data.enums import ARM, EVENT_KIND, SIDE, Nation, UnitClass
from soe_sim.engine.battles.nb import (
    B_ATT_LOSSES,
    B_ATTACKER,
    B_DEF_LOSSES,
    B_DEFENDER,
    B_FOUGHT,
    B_GREAT_VICTORY,
    B_LEADERS_KILLED,
    B_WINNER,
    battle_inputs_nb,
    apply_advance_nb,
    battle_candidates_nb,
    defender_side_nb,
    find_battles_scratch_nb,
    legal_advance_nb,
)
from soe_sim.engine.cards.nb import (
    DISCARD,
    HAND,
    IN_PLAY,
    N_LOCATIONS,
    NO_CARD,
    USE_COMBAT_BLIND,
    USE_COMBAT_HAND,
    USE_EVENT,
    USE_REACTION,
    apply_card_play_nb,
    battle_card_playable_nb,
    card_counts_nb,
    discard_nb,
    draw_combat_card_nb,
    end_battle_nb,
    legal_card_plays_nb,
    play_battle_card_nb,
    play_combat_card_from_hand_nb,
    replenish_nb,
    shuffle_draw_pile_nb,
    two_front_extra_draw_nb,
)
from soe_sim.engine import nb as enb  # internal kernels (no Python entry point) by module: tests/test_jit.py
from soe_sim.engine.battles import nb as battles_nb_module
from soe_sim.engine.events import nb as evnb
from soe_sim.engine.game import policies as pnb
from soe_sim.engine.game.policies import DECISION, N_FEAT, choose_nb, choose_option_nb  # noqa: F401
from soe_sim.engine.leaders import nb as lnb
from soe_sim.engine.nb import (
    N_OOS,
    apply_out_of_supply_nb,
    enemy_presence_nb,
    garrison_replacement_nb,
    overstack_pullback_nb,
    side_sign_nb,
    update_control_nb,
    vp_add_nb,
)
from soe_sim.engine.orders import nb as onb
from soe_sim.engine.reinforce.nb import (
    apply_build_nb,
    apply_combine_nb,
    apply_strengthen_nb,
    arrive_reinforcements_nb,
    build_pairs_after_spend_nb,
    combine_pairs_after_combine_nb,
    front_line_nb,
    legal_build_pairs_nb,
    legal_combine_pairs_nb,
    legal_strengthen_nb,
    nearest_leader_front_nb,
    replace_garrisons_nb,
    strategic_cubes_nb,
    strengthen_after_spend_nb,
)
from soe_sim.engine.state import PHASE_REINFORCEMENT, PHASE_REPLENISH, STATUS

# --------------------------------------------------------------------------------------------------
# Codes (IntEnum mirrors live in soe_sim.engine.game; these NamedTuples are the numba side)


# DECISION (the decision kinds) lives in soe_sim.engine.game.policies and is re-exported here.


class _EventC(NamedTuple):
    GAME_START: int = 0  # value = VP track, value2 = start phase
    ROUND_START: int = 1
    PHASE_START: int = 2
    CARDS_DRAWN: int = 3  # side, value = cards drawn, value2 = cards to discard
    CARD_DISCARDED: int = 4  # side, value = card
    CARD_PLAYED: int = 5  # side, area = front, value = card, value2 = use, block = extra orders
    ARRIVAL_CHECK: int = 6  # side, value = card drawn (0: none), value2 = modifier, area2 = threshold, block = met
    REINFORCEMENT_ARRIVED: int = 7  # side, block, area, value = SP
    REINFORCEMENT_DELAYED: int = 8  # side, block, area = scheduled area
    BATTLE: int = 9  # area, side = attacker, value = winner, value2 = fought (0: defenders withdrew)
    BATTLE_LOSSES: int = 10  # area, side = attacker, value / value2 = attacker / defender losses, block = great victory
    BATTLE_CARD: int = 11  # side, area, value = card
    COMBAT_CARD: int = 12  # side, area, value = card (0: none left), value2 = modifier, block = use
    BLOCK_LOSS: int = 13  # side, block, area, value = SP lost, value2 = cause
    BLOCK_REMOVED: int = 14  # side, block, area = last area, value = new status, value2 = cause
    BLOCK_MOVED: int = 15  # side, block, area = from, area2 = to, value2 = cause
    BLOCK_PLACED: int = 16  # side, block, area, value = SP, value2 = cause
    GARRISON_REMOVED: int = 17  # side, area, value2 = cause
    GARRISON_PLACED: int = 18  # side, area
    CONTROL: int = 19  # area, side = new controller (-1 neutral), value = old controller
    VP: int = 20  # side = gainer, value = change of the signed track (+ Polish), value2 = cause, area
    INITIATIVE: int = 21  # area = front, side = holder, value = level, value2 = old holder
    COMBINE: int = 22  # side, block = absorber, area, value = absorbed block, value2 = new SP
    STRENGTHEN: int = 23  # side, block, area, value = new SP, value2 = pool area (-1 saved cubes)
    BUILD: int = 24  # side, block, area, value = SP, value2 = pool area (-1 saved cubes)
    CUBES_DROPPED: int = 25  # side, area = strategic city (-1: saved cubes over the cap), area2 = front of the
    #                          capped pool, value = cubes lost, value2 = 0 strategic cubes unspent, 1 over the
    #                          EatS X cap of 10 RP per front (V8)
    OBJECTIVE: int = 26  # side, value = VP, value2 = objective index, block = achieved (0/1)
    IMMEDIATE_VICTORY: int = 27  # side = winner, value = condition index
    GAME_END: int = 28  # side = winner (-1 draw / none), value = outcome, value2 = VP track
    ABORT: int = 29  # value = abort reason
    PHASE_SKIPPED: int = 30  # value = reason (1: scenario has no Reinforcement Phase)
    ORDER_PLACED: int = 31  # side, area, value = order type, value2 = order id, block = front
    MOVE: int = 32  # side, block, area = from, area2 = to, value = order type, value2 = SP detached
    ORDER_DONE: int = 33  # side, area, value = order type, value2 = status (orders.nb EXECUTED / REMOVED)
    RECON: int = 34  # side, area, value = enemy blocks revealed
    WITHDRAW: int = 35  # side, area, value = mode (battle WITHDRAW_*), value2 = blocks withdrawn
    REORGANIZED: int = 36  # side, block, area, value = SP gained
    RAIL: int = 37  # side, block, area = from, area2 = to
    PINNED: int = 38  # side = pinned block's side, block, area
    FIRST_PLAYER: int = 39  # side = chosen first side, area = front, value = step (0 placement, 1+ order group)
    DEFEND: int = 40  # side = defender, area (a Defend Area order applied in the battle)
    CARD_EVENT: int = 41  # side, area = area chosen / of the eliminated block (-1), area2 = front (-1), block =
    #                       block placed or eliminated, value = card, value2 = window (events.nb WINDOW_*)
    # Detail events, logged only when GameConfig.log_detail is set (soe-sim playtest); off by default, so
    # batches, golden logs and statistics never see them:
    BATTLE_PREP: int = 42  # side = attacker, area, block = k, value / value2 = entries 2k / 2k+1 of the
    #                        prepared-battle row (soe_sim.battle.nb P_*), just before the battle is resolved;
    #                        the last k: value = flags (1 garrison, 2 Defend, 4 fortified), value2 = support dirs
    BATTLE_DECK: int = 43  # side = the side about to choose its combat card, area, value = combat modifier,
    #                        value2 = cards with it in the pile a blind draw takes from, block = 1 when that
    #                        pile is the discard pile (reshuffled at the draw, SoE 7.1), else 0
    POSITION: int = 44  # end of every phase: side, block, area, value = SP (every block on the map)
    AREA_STATE: int = 45  # end of every phase: area, side = controller (-1 none), value = garrison side (-1
    #                       none); only areas with a controller or a garrison
    LEADER_ORDER: int = 46  # side, area = the order's area, area2 = the leader's area, block = leader,
    #                         value = order type (orders.nb; Stalin REORGANIZE), value2 = window (leaders.nb LW_*)
    LEADER_LOST: int = 47  # side = the leader's side, area, block = leader, value = 1 killed / 2 captured (SoE 9.0),
    #                        value2 = cause (BATTLE, ORDERS: destroyed by a Withdraw's SP loss)
    BATTLE_CHOSEN: int = 48  # side = chooser (initiative holder), area, value = size, value2 = battles tied (7.4)
    ADVANCE: int = 49  # side, block, area = battle area, area2 = area it went back to (SoE 7.43)
    ORDER_CHOSEN: int = 50  # side, area, value = order type, value2 = order id: executed next (7.3, G8)
    RIVALRY: int = 51  # side, area = Klintsy, value = front whose commander gets its cubes (SoE 10.2)


EVENT = _EventC()


class _CauseC(NamedTuple):
    NONE: int = 0
    BATTLE: int = 1  # SoE 7.41–7.44
    SUPPLY: int = 2  # SoE 7.71
    STACKING: int = 3  # SoE 7.33
    CONTROL: int = 4  # SoE 1.3, 7.8
    OBJECTIVE: int = 5  # scenario [[objective]]
    REINFORCEMENT: int = 6  # SoE 4.0, 8.0–8.5
    ORDERS: int = 7  # SoE 7.2–7.6
    EVENT: int = 8  # SoE 7.13, 7.1 item 6: a historical event or a reaction card
    # VP of a battle by sub-cause (VP events only; block events of a battle keep BATTLE)
    GREAT_VICTORY: int = 9  # SoE 7.44
    ENCIRCLEMENT: int = 10  # SoE 7.42: a block eliminated for want of a retreat (block = the block)
    LEADER_KILLED: int = 11  # SoE 9.0: a leader destroyed (in battle or by a Withdraw's loss; block = leader)
    LEADER_CAPTURED: int = 12  # SoE 9.0: a leader that lost a battle and could not retreat (block = leader)
    INTERNMENT: int = 13  # EatS II.3 Germany: a block interned (ruleset option, reading V11)


CAUSE = _CauseC()


class _OutcomeC(NamedTuple):
    FINISHED: int = 0  # the scenario's last phase was played
    IMMEDIATE_VICTORY: int = 1  # a [[victory.immediate]] condition was met
    ABORTED: int = 2  # a hard cap was hit


OUTCOME = _OutcomeC()


class _AbortC(NamedTuple):
    NONE: int = 0
    TOTAL_STEPS: int = 1
    PHASE_STEPS: int = 2
    LOG_FULL: int = 3
    PHASES: int = 4
    LOOP: int = 5
    FEATURES: int = 6  # a decision with more options than PolicySet.feat_buf has rows


ABORT = _AbortC()


class _ViolationC(NamedTuple):
    NONE: int = 0
    SP_RANGE: int = 1  # a block on the map outside 1..max SP
    PLACEMENT: int = 2  # ON_MAP status and an area disagree (on the map and elsewhere)
    STACKING: int = 3  # more than max_blocks of a side in an area at phase end (Eastern Links exempt)
    CARDS: int = 4  # a deck not conserved (55 cards across locations), or a card left IN_PLAY
    VP_TRACK: int = 5  # VP track != start VP + sum of VP events
    ELIMINATED_RETURNED: int = 6  # a permanently eliminated block came back
    UNRESOLVED_BATTLE: int = 7  # opposing blocks (or blocks and an enemy garrison) share an area at phase end
    CUBES: int = 8  # a saved cube pool (side, front, colour) below 0 (SoE 3.2; EatS X per-front pools, V8)


VIOLATION = _ViolationC()

LITHUANIAN = int(Nation.LITHUANIAN)
OWN_NATION = (int(Nation.POLISH), int(Nation.SOVIET))  # by side: the side's own nation (EatS X.3, V9)
BRIGADE = int(UnitClass.BRIGADE)
LEADER_KILLED = 1  # EVENT.LEADER_LOST value
LEADER_CAPTURED = 2
IMMEDIATE_CAPTURE_AREA = 0
IMMEDIATE_VP_AT_LEAST = 1
OBJECTIVE_HOLD_AREA = 0
OBJECTIVE_CAPTURE_AREA = 1
OBJECTIVE_ELIMINATE_BLOCKS = 2

# ctr columns
C_EVENTS = 0
C_STEPS = 1
C_ABORT = 2
C_VIOLATIONS = 3
C_VIOL_CODE = 4
C_VIOL_STEP = 5
C_VIOL_ROUND = 6
C_VIOL_PHASE = 7
C_PHASES = 8
C_PHASE_STEP0 = 9
N_CTR = 10


# --------------------------------------------------------------------------------------------------
# Per-game statistics reduced from the event log (int64 columns of the kernel's ``stats`` array).
# Per-side statistics take two columns: ``base + side`` (SIDE.POLISH = 0, SIDE.SOVIET = 1).

S_VP_START = 0
S_IMMEDIATE = 1  # index of the [[victory.immediate]] condition met (-1 none)
S_BATTLES = 2
S_BATTLES_FOUGHT = 3
S_ATTACKS = 4  # +side: battles in which the side attacked
S_BATTLES_WON = 6
S_GREAT_VICTORIES = 8
S_SP_LOST_BATTLE = 10
S_SP_LOST_SUPPLY = 12
S_SP_LOST_OTHER = 14
S_DESTROYED_BATTLE = 16  # blocks destroyed in battle (to the force pool, SoE 7.41.5)
S_ELIM_BATTLE = 18  # blocks eliminated permanently in battle (no retreat 7.42, leaders 9.0)
S_ELIM_SUPPLY = 20  # SoE 7.71
S_ELIM_STACKING = 22  # SoE 7.33
S_ELIM_OTHER = 24  # orders (Withdraw) and anything else
S_LEADERS_LOST = 26
S_GARRISONS_LOST = 28
S_CITIES_CAPTURED = 30  # control changes to the side (key cities only, SoE 1.3)
S_VP_CONTROL = 32  # signed VP (+ Polish) by cause
S_VP_BATTLE = 33
S_VP_SUPPLY = 34
S_VP_OBJECTIVES = 35
S_VP_OTHER = 36
S_OBJECTIVES = 37  # +side: objectives achieved
S_REINFORCEMENTS = 39  # +side: reinforcements arrived
S_BUILDS = 41  # +side: blocks built (SoE 8.4)
S_CITIES_END = 43  # +side: VP cities controlled at the end
S_CITY_VP_END = 45  # +side: their VP
S_SP_END = 47  # +side: SP on the map at the end
S_BLOCKS_END = 49  # +side: blocks on the map at the end
S_SP_TRACK_ERRORS = 51  # internal check: on-map blocks whose SP the event replay got wrong (0)
S_LEADERS_KILLED = 52  # +side: SoE 9.0 leaders destroyed (battle, Withdraw loss) — LEADER_LOST events
S_LEADERS_CAPTURED = 54  # +side: SoE 9.0 leaders that lost a battle and could not retreat
S_ENCIRCLED = 56  # +side: other blocks eliminated in battle for want of a retreat (SoE 7.42)
S_VP_GREAT_VICTORY = 58  # signed VP (+ Polish) of the battle sub-causes (their sum with S_VP_BATTLE's rest)
S_VP_ENCIRCLEMENT = 59
S_VP_LEADER_KILLED = 60
S_VP_LEADER_CAPTURED = 61
S_LEADER_ORDERS = 62  # +side: SoE 9.0 leader orders given (LEADER_ORDER events)
N_STATS = 64

# battle rows
BT_ROUND, BT_PHASE, BT_AREA, BT_ATTACKER, BT_WINNER, BT_FOUGHT, BT_ATT_LOSSES, BT_DEF_LOSSES, BT_GREAT = range(9)
N_BT = 9

# The stats columns of a VP event by its cause (``value2``): (column, sub-cause column or -1). The VP
# of a battle's sub-causes (SoE 7.44, 7.42, 9.0) count in S_VP_BATTLE and in a column of their own.
_VP_CAUSE_COLUMNS = {
    CAUSE.CONTROL: (S_VP_CONTROL, -1),
    CAUSE.BATTLE: (S_VP_BATTLE, -1),
    CAUSE.GREAT_VICTORY: (S_VP_BATTLE, S_VP_GREAT_VICTORY),
    CAUSE.ENCIRCLEMENT: (S_VP_BATTLE, S_VP_ENCIRCLEMENT),
    CAUSE.LEADER_KILLED: (S_VP_BATTLE, S_VP_LEADER_KILLED),
    CAUSE.LEADER_CAPTURED: (S_VP_BATTLE, S_VP_LEADER_CAPTURED),
    CAUSE.SUPPLY: (S_VP_SUPPLY, -1),
    CAUSE.OBJECTIVE: (S_VP_OBJECTIVES, -1),
}
VP_COLUMNS = np.array([_VP_CAUSE_COLUMNS.get(c, (S_VP_OTHER, -1)) for c in range(max(CAUSE) + 1)], dtype=np.int64)

# result columns (``out`` of play_game_policies_nb, rows of play_games_serial_nb)
R_OUTCOME = 0
R_WINNER = 1
R_VP = 2
R_ROUNDS = 3
R_STEPS = 4
R_EVENTS = 5
R_ABORT = 6
R_VIOLATIONS = 7
R_VIOL_CODE = 8
R_VIOL_STEP = 9
R_VIOL_ROUND = 10
R_VIOL_PHASE = 11
R_PHASES = 12
R_LAST_ROUND = 13
R_LAST_PHASE = 14
N_RES = 15

EVENT_DTYPE = np.dtype([
    ("round", np.int16), ("phase", np.int8), ("kind", np.int16), ("side", np.int8), ("area", np.int16),
    ("area2", np.int16), ("block", np.int16), ("value", np.int32), ("value2", np.int32),
])


class GameConfig(NamedTuple):
    """The scenario's terminal conditions, special rules and the loop's caps, kernel-ready.

    Immediate victory (``[[victory.immediate]]``): ``imm_kind`` (``IMMEDIATE_*``), ``imm_side``,
    ``imm_area`` (-1), ``imm_value`` — int64 (n_imm,). Objectives (``[[objective]]``, scored at the
    end): ``obj_kind`` (``OBJECTIVE_*``), ``obj_side``, ``obj_vp`` int64 (n_obj,), ``obj_areas`` bool
    (n_obj, n_areas) all-of set, ``obj_blocks`` bool (n_obj, n_blocks). Arrival checks (special rule
    ``arrival_check``): one row per threshold, ``ac_rule`` (index into the scenario's special rules =
    ``block_arrive_condition``), ``ac_side``, ``ac_round``, ``ac_phase``, ``ac_min`` int64;
    ``n_conditions`` = number of special rules. ``nation_active`` (n_nations,) bool (at the start:
    each game plays on its own copy, which an ``activate_nation`` event changes) and
    ``nation_area_ok`` (n_nations, n_areas) bool (reinforce.nation_rules); ``nation_move_ok``
    (n_nations, n_areas) bool: where a nation's blocks may move (``neutral_nation`` ``max_distance``,
    G15, G16: ``neutral_nation`` ``max_distance`` and ``front_restriction``); ``kaunas`` area or -1;
    ``nation_supply_base`` / ``nation_supply_side`` (n_nations,) int64: the area that becomes a supply
    base of that side once the nation is active (``neutral_nation`` ``supply_base``, EatS II.3: Kaunas
    for the Soviets; G16), ``-1`` none.
    ``etable``: the :class:`~soe_sim.engine.events.EventTable` of the scenario's block universe
    (card events, G3). ``klintsy``: the Klintsy area or -1 (SoE 10.2 rivalry in 3–4 player
    scenarios, ``two_front``).

    Internment (ruleset ``[internment]``, EatS II.3 Germany, reading V11): ``intern_area`` (n_areas,)
    bool the territory whose entry interns ``intern_side``'s blocks (all False: no internment),
    ``intern_sp_loss``, ``intern_return`` / ``intern_delay`` int64 (k,) the return towns in order
    and the operation phases after which an interned block comes back there. ``leaders``: int64
    (n_blocks, ``leaders.nb.N_LT``) the leader table (SoE 9.0 abilities, range, front; every ability
    ``NO_ABILITY`` when the rule ``leaders.abilities`` is off; :func:`soe_sim.engine.leaders.leader_table`).
    """

    imm_kind: np.ndarray
    imm_side: np.ndarray
    imm_area: np.ndarray
    imm_value: np.ndarray
    obj_kind: np.ndarray
    obj_side: np.ndarray
    obj_vp: np.ndarray
    obj_areas: np.ndarray
    obj_blocks: np.ndarray
    ac_rule: np.ndarray
    ac_side: np.ndarray
    ac_round: np.ndarray
    ac_phase: np.ndarray
    ac_min: np.ndarray
    n_conditions: int
    nation_active: np.ndarray
    nation_area_ok: np.ndarray
    kaunas: int
    no_reinforcement_phase: bool
    two_front: bool  # SoE 10.1: one player commands both fronts of a side in a 3–4 player scenario
    card_fronts: int  # card plays per side per operation phase (one per front commanded, SoE 7.1)
    vp_leader_killed: int
    vp_leader_captured: int
    max_steps: int  # decision steps per game
    max_phase_steps: int  # decision steps per phase
    max_phases: int  # phases per game
    check_invariants: bool
    nation_move_ok: np.ndarray
    intern_area: np.ndarray
    intern_side: int
    intern_sp_loss: int
    intern_return: np.ndarray
    intern_delay: np.ndarray
    etable: object  # soe_sim.engine.events.EventTable
    leaders: np.ndarray  # SoE 9.0 leader table (soe_sim.engine.leaders.leader_table)
    klintsy: int
    nation_supply_base: np.ndarray
    nation_supply_side: np.ndarray
    log_detail: bool = False  # also log the detail events (BATTLE_PREP, BATTLE_DECK, POSITION, AREA_STATE)


class EventWork(NamedTuple):
    """Per-game scratch of the card events (built by :func:`new_event_work_nb`): ``active`` the
    game's own ``active_nations`` (copy of ``cfg.nation_active``: ``cfg`` is shared by the games of a
    batch), the window context ``ctx`` (events.nb ``N_X``), ``involved`` (the blocks of the battle of
    an after-battle window), ``targets`` (event choices), ``rcards`` (playable reaction cards),
    ``eo`` (events.nb ``N_EO``), ``hidden`` (inactive blocks hidden during order placement), the
    loop's snapshot / elimination arrays (the same arrays as the loop's own) and the phase's access
    masks (:func:`update_access_nb`): ``closed`` (2, n_areas) — areas a side's blocks may not enter
    (G15, G16) — and ``nation_ok`` (n_nations, n_areas) — where each nation's blocks may end a move
    or retreat; ``exec_pending`` int64 / ``exec_done`` bool (order capacity,): the pending orders of
    :func:`execute_orders_nb` (scratch, so that kernel allocates nothing). The card play's scratch (so that
    :func:`card_play_nb` and :func:`discard_down_nb` allocate nothing and count no references): ``cp_card`` /
    ``cp_use`` int64 (1 + 3 * n_cards,) the (card, use) rows of a CARD_PLAY decision (``cp_card``: also the
    hand of a DISCARD decision), ``cp_chosen`` int64 (nf, 4) per card front the card and the use each side
    chose (columns: Polish card, Soviet card, Polish use, Soviet use) and in ``cp_first`` int64 (nf,) the side
    that chooses first, ``cp_ctx`` int64 (N_X,) and ``cp_involved`` bool (n_blocks,) the scratch of
    ``events.nb.event_usable_scratch_nb`` (with ``ev_scratch``), ``cp_value`` float64 (6,) that of
    ``policies.event_value_nb``; ``nation_side`` int64 (n_nations,): scratch of :func:`update_access_nb`;
    ``ev_scratch`` int64 (max(n_areas, n_blocks),): the event listings' scratch (the card play's usability
    test, :func:`choose_event_target_nb`, :func:`reaction_loop_nb`; none runs inside another)."""

    active: np.ndarray
    ctx: np.ndarray
    involved: np.ndarray
    targets: np.ndarray
    rcards: np.ndarray
    eo: np.ndarray
    hidden: np.ndarray
    snap_status: np.ndarray
    snap_area: np.ndarray
    snap_sp: np.ndarray
    snap_garrison: np.ndarray
    elim_ever: np.ndarray
    destroyed_ever: np.ndarray
    closed: np.ndarray
    nation_ok: np.ndarray
    exec_pending: np.ndarray
    exec_done: np.ndarray
    cp_card: np.ndarray
    cp_use: np.ndarray
    cp_chosen: np.ndarray
    cp_first: np.ndarray
    cp_ctx: np.ndarray
    cp_involved: np.ndarray
    cp_value: np.ndarray
    nation_side: np.ndarray
    ev_scratch: np.ndarray


# --------------------------------------------------------------------------------------------------
# Event log


@njit(cache=True, _nrt=False)
def log_event_nb(log, ctr, state, kind, side, area, area2, block, value, value2):
    """Append one event (stamped with the state's round and phase); False when the log is full
    (the loop then aborts with ``ABORT.LOG_FULL``)."""
    i = ctr[C_EVENTS]
    if i >= log.shape[0]:
        if ctr[C_ABORT] == ABORT.NONE:
            ctr[C_ABORT] = ABORT.LOG_FULL
        return False
    # fields set by name, not as attributes: a record is then also writable when the kernels run as
    # Python (NUMBA_DISABLE_JIT, tests/test_pure_python.py), where numpy.void has no attribute setters
    e = log[i]
    e["round"] = state.round[0]
    e["phase"] = state.phase[0]
    e["kind"] = kind
    e["side"] = side
    e["area"] = area
    e["area2"] = area2
    e["block"] = block
    e["value"] = value
    e["value2"] = value2
    ctr[C_EVENTS] = i + 1
    return True


@njit(cache=True, _nrt=False, internal=True)
def vp_event_sum_nb(log, n):
    """Sum of the ``value`` of the VP events among the first ``n`` events."""
    t = 0
    for i in range(n):
        if log[i]["kind"] == EVENT.VP:
            t += log[i]["value"]
    return t


@njit(cache=True, _nrt=False, internal=True)
def add_vp_nb(state, log, ctr, nominal, cause, area):
    """Move the VP track by ``nominal`` (signed, + Polish; SoE 7.8 no 0 space) and log the change."""
    if nominal == 0:
        return
    old = state.vp[0]
    state.vp[0] = vp_add_nb(old, nominal)
    _log_vp_change_nb(state, log, ctr, old, cause, area)


@njit(cache=True, _nrt=False, internal=True)
def _log_vp_change_nb(state, log, ctr, old, cause, area):
    _log_vp_block_nb(state, log, ctr, old, cause, area, -1)


@njit(cache=True, _nrt=False, internal=True)
def _log_vp_block_nb(state, log, ctr, old, cause, area, block):
    d = np.int64(state.vp[0]) - np.int64(old)
    if d != 0:
        log_event_nb(log, ctr, state, EVENT.VP, SIDE.POLISH if d > 0 else SIDE.SOVIET, area, -1, block, d, cause)


# --------------------------------------------------------------------------------------------------
# Decisions


@njit(cache=True, inline="always")
def feat_buffer_nb(policies, side, n, ctr):
    """The feature matrix of a decision: ``(n, N_FEAT)`` zeros when ``side``'s policy reads features
    (every policy but ``random``) and there is a choice, else an empty ``(0, N_FEAT)`` array (the
    caller then skips its ``fill_*_features_nb``).

    The matrix is always a view of ``policies.feat_buf``, never a new array: the loop's kernels are
    compiled without reference counting (docs/engine-design.md), so they may not own an allocation.
    A decision with more options than the buffer has rows (``FEAT_ROWS``; not seen in any built-in
    scenario) ends the game as aborted (``ABORT.FEATURES``, G13) instead — the next ``decide_nb``
    then returns 0 at once."""
    buf = policies.feat_buf
    if n <= 1 or not pnb.wants_features_nb(policies, side):
        return buf[:0]
    if n > buf.shape[0]:
        ctr[C_ABORT] = ABORT.FEATURES
        return buf[:0]
    feat = buf[:n]
    for i in range(n):  # the matrix is zeros before the fill (PolicySet.feat_buf is reused)
        for q in range(N_FEAT):
            feat[i, q] = 0.0
    return feat


@njit(cache=True, _nrt=False)
def decide_nb(policies, side, kind, n, feat, rng_policy, ctr, cfg):
    """Ask ``side``'s policy for an option in ``0..n-1`` (0 when ``n <= 1`` or the game is aborting).

    ``policies`` is the game's :class:`~soe_sim.engine.game.policies.PolicySet`; ``feat`` the
    decision's feature matrix (:func:`feat_buffer_nb`, filled by the caller; empty for ``random``).

    Every call is a step; exceeding ``cfg.max_steps`` or ``cfg.max_phase_steps`` sets the abort
    reason, after which every decision returns 0 (the loops' option 0 always ends them: pass, no card,
    blind draw).
    """
    ctr[C_STEPS] += 1
    if ctr[C_ABORT] != ABORT.NONE:
        return 0
    if ctr[C_STEPS] > cfg.max_steps:
        ctr[C_ABORT] = ABORT.TOTAL_STEPS
        return 0
    if ctr[C_STEPS] - ctr[C_PHASE_STEP0] > cfg.max_phase_steps:
        ctr[C_ABORT] = ABORT.PHASE_STEPS
        return 0
    if n <= 1:
        return 0
    pid = policies.ids[side]
    if pid == pnb.POLICY_RANDOM:
        k = pnb.random_policy_nb(kind, n, rng_policy[side:side + 1])
    elif pnb.is_scripted_nb(policies, side) and n <= policies.score_buf.shape[0] and feat.shape[0] >= n:
        # choose_option_nb's scripted branch with the scores in PolicySet.score_buf (no allocation)
        pnb.score_options_nb(policies.params[side], kind, feat, n, policies.score_buf)
        k = pnb.argmax_tie_nb(policies.score_buf, n, rng_policy[side:side + 1])
    else:
        k = choose_option_nb(pid, policies.params[side], kind, feat, n, rng_policy[side:side + 1], side)
    if k < 0 or k >= n:
        k = 0
    return k


@njit(cache=True, _nrt=False, internal=True)
def decide_scores_nb(policies, side, n, scores, rng_policy, ctr, cfg):
    """:func:`decide_nb` for a scripted policy (``pnb.is_scripted_nb``) whose option scores are
    already known (``scores[:n]``, the values :func:`~soe_sim.engine.game.policies.score_options_nb`
    gives for the decision's features): the same steps, caps and choice
    (:func:`~soe_sim.engine.game.policies.argmax_tie_nb` on the side's policy stream)."""
    ctr[C_STEPS] += 1
    if ctr[C_ABORT] != ABORT.NONE:
        return 0
    if ctr[C_STEPS] > cfg.max_steps:
        ctr[C_ABORT] = ABORT.TOTAL_STEPS
        return 0
    if ctr[C_STEPS] - ctr[C_PHASE_STEP0] > cfg.max_phase_steps:
        ctr[C_ABORT] = ABORT.PHASE_STEPS
        return 0
    if n <= 1:
        return 0
    k = pnb.argmax_tie_nb(scores, n, rng_policy[side:side + 1])
    if k < 0 or k >= n:
        k = 0
    return k


# --------------------------------------------------------------------------------------------------
# Block bookkeeping


@njit(cache=True, _nrt=False, internal=True)
def snapshot_nb(state, snap_status, snap_area, snap_sp, snap_garrison):
    # element loops: an array-to-array slice assignment may allocate a temporary (no NRT here)
    for b in range(snap_status.shape[0]):
        snap_status[b] = state.block_status[b]
        snap_area[b] = state.block_area[b]
        snap_sp[b] = state.block_sp[b]
    for i in range(snap_garrison.shape[0]):
        snap_garrison[i] = state.garrison_side[i]


@njit(cache=True, _nrt=False, internal=True)
def log_diff_nb(state, log, ctr, cause, snap_status, snap_area, snap_sp, snap_garrison, elim_ever, destroyed_ever):
    """Log every block / garrison change since the snapshot, and keep the elimination trackers."""
    for b in range(state.block_side.shape[0]):
        s0 = snap_status[b]
        s1 = state.block_status[b]
        a0 = snap_area[b]
        a1 = state.block_area[b]
        # most blocks are as in the snapshot: one test, taken almost always, instead of the branches below
        # (non-short-circuit ``&``); such a block logs nothing and marks no tracker
        if (s0 == s1) & (a0 == a1) & (state.block_sp[b] == snap_sp[b]) & (s1 != STATUS.ELIMINATED_PERMANENT):
            continue
        side = state.block_side[b]
        on0 = s0 == STATUS.ON_MAP
        on1 = s1 == STATUS.ON_MAP
        if on0 and on1:
            if a0 != a1:
                log_event_nb(log, ctr, state, EVENT.BLOCK_MOVED, side, a0, a1, b, 0, cause)
            if state.block_sp[b] < snap_sp[b]:
                log_event_nb(log, ctr, state, EVENT.BLOCK_LOSS, side, a1, -1, b, snap_sp[b] - state.block_sp[b], cause)
        elif on0 and not on1:
            log_event_nb(log, ctr, state, EVENT.BLOCK_REMOVED, side, a0, -1, b, s1, cause)
        elif on1 and not on0:
            log_event_nb(log, ctr, state, EVENT.BLOCK_PLACED, side, a1, -1, b, state.block_sp[b], cause)
        if s1 != s0 and (s1 == STATUS.ELIMINATED_PERMANENT or s1 == STATUS.DESTROYED_TO_POOL):
            destroyed_ever[b] = True
        if s1 == STATUS.ELIMINATED_PERMANENT:
            elim_ever[b] = True
    for i in range(state.garrison_side.shape[0]):
        g0 = snap_garrison[i]
        g1 = state.garrison_side[i]
        if g0 != g1:
            if g0 >= 0:
                log_event_nb(log, ctr, state, EVENT.GARRISON_REMOVED, g0, i, -1, -1, 0, cause)
            if g1 >= 0:
                log_event_nb(log, ctr, state, EVENT.GARRISON_PLACED, g1, i, -1, -1, 0, cause)


# --------------------------------------------------------------------------------------------------
# SoE 7.13, 7.1 item 6: card events (soe_sim.engine.events; readings G3, EV1…)


@njit(cache=True, _nrt=True)
def new_event_work_nb(cfg, nbk, n_areas, n_cards, snap_status, snap_area, snap_sp, snap_garrison, elim_ever,
                      destroyed_ever, order_capacity):
    """The game's :class:`EventWork` (its own copy of ``cfg.nation_active``)."""
    return EventWork(cfg.nation_active.copy(), np.zeros(evnb.N_X, dtype=np.int64), np.zeros(nbk, dtype=np.bool_),
                     np.zeros(max(n_areas, nbk), dtype=np.int64), np.zeros(n_cards, dtype=np.int64),
                     np.zeros(evnb.N_EO, dtype=np.int64), np.zeros(nbk, dtype=np.bool_), snap_status, snap_area,
                     snap_sp, snap_garrison, elim_ever, destroyed_ever, np.zeros((2, n_areas), dtype=np.bool_),
                     cfg.nation_move_ok.copy(), np.zeros(max(order_capacity, 1), dtype=np.int64),
                     np.zeros(max(order_capacity, 1), dtype=np.bool_), np.zeros(1 + 3 * n_cards, dtype=np.int64),
                     np.zeros(1 + 3 * n_cards, dtype=np.int64), np.zeros((max(cfg.card_fronts, 1), 4), dtype=np.int64),
                     np.zeros(max(cfg.card_fronts, 1), dtype=np.int64), np.zeros(evnb.N_X, dtype=np.int64),
                     np.zeros(nbk, dtype=np.bool_), np.zeros(6, dtype=np.float64),
                     np.zeros(cfg.nation_move_ok.shape[0], dtype=np.int64), np.zeros(max(n_areas, nbk), dtype=np.int64))


@njit(cache=True, _nrt=False, internal=True)
def choose_event_target_nb(state, cs, orders, m, cfg, ew, side, card, policies, rng_policy, ctr):
    """The EVENT_TARGET decision: a row of ``events.nb.legal_event_targets_nb`` in the window
    ``ew.ctx`` (``-1`` for an event without a choice); ``-2`` when the event has no legal row."""
    n = evnb.event_targets_scratch_nb(state, orders, m, cfg.etable, ew.active, side, card, ew.ctx, ew.involved,
                                      ew.targets, ew.ev_scratch, False)
    if n == 0:
        return -2
    feat = feat_buffer_nb(policies, side, n, ctr)
    if feat.shape[0] > 0:
        pnb.fill_event_target_features_nb(state, orders, m, policies, cfg.etable, side, card, ew.ctx, ew.targets, n,
                                          feat)
    j = decide_nb(policies, side, DECISION.EVENT_TARGET, n, feat, rng_policy, ctr, cfg)
    return ew.targets[j]


@njit(cache=True, _nrt=False, internal=True)
def resolve_event_nb(state, cs, orders, m, cfg, ew, side, card, target, reaction, rng_chance, log, ctr):
    """Resolve ``side``'s event ``card`` on ``target`` in the window ``ew.ctx`` and log it: a reaction
    card is played from the hand first (``events.nb.play_reaction_nb``, logged as ``CARD_PLAYED`` with
    ``USE_REACTION``); a historical event was already played (``cards.nb.apply_card_play_nb``). Then
    ``CARD_EVENT``, the block changes (cause ``EVENT``), the VP change, an initiative change and the
    cards drawn. Card draws use the chance stream. Returns False when the event was refused."""
    snapshot_nb(state, ew.snap_status, ew.snap_area, ew.snap_sp, ew.snap_garrison)
    vp0 = state.vp[0]
    eo = ew.eo
    if reaction:
        ok = evnb.play_reaction_nb(state, cs, orders, m, cfg.etable, ew.active, side, card, ew.ctx, ew.involved,
                                   target, rng_chance, eo)
    else:
        ok = evnb.apply_event_nb(state, cs, orders, m, cfg.etable, ew.active, side, card, ew.ctx, ew.involved,
                                 target, rng_chance, eo)
    if not ok:
        return False
    front = ew.ctx[evnb.X_FRONT]
    if reaction:
        log_event_nb(log, ctr, state, EVENT.CARD_PLAYED, side, front, -1, 0, card, USE_REACTION)
    blk = eo[evnb.EO_BLOCK_PLACED] if eo[evnb.EO_BLOCK_PLACED] >= 0 else eo[evnb.EO_BLOCK_ELIMINATED]
    area = eo[evnb.EO_AREA]
    log_event_nb(log, ctr, state, EVENT.CARD_EVENT, side, area, front, blk, card, ew.ctx[evnb.X_WINDOW])
    log_diff_nb(state, log, ctr, CAUSE.EVENT, ew.snap_status, ew.snap_area, ew.snap_sp, ew.snap_garrison,
                ew.elim_ever, ew.destroyed_ever)
    _log_vp_change_nb(state, log, ctr, vp0, CAUSE.EVENT, area)
    f = eo[evnb.EO_INI_FRONT]
    if f >= 0:
        log_event_nb(log, ctr, state, EVENT.INITIATIVE, state.initiative_side[f], f, -1, -1,
                     state.initiative_level[f], eo[evnb.EO_INI_OLD_SIDE])
    if eo[evnb.EO_CARDS_DRAWN] > 0:
        log_event_nb(log, ctr, state, EVENT.CARDS_DRAWN, side, -1, -1, -1, eo[evnb.EO_CARDS_DRAWN], 0)
    return True


@njit(cache=True, _nrt=False, internal=True)
def _may_react_nb(cs, table, side):
    """Does ``side`` hold a reaction card (SoE 7.1 item 6)? Without one :func:`reaction_loop_nb`
    returns at once (``events.nb.reaction_window_nb`` lists only reaction cards in hand), so the loop
    calls it only then."""
    for c in range(cs.location.shape[1]):
        if cs.location[side, c] == HAND and table.kind[side, c] == EVENT_KIND.REACTION:
            return True
    return False


@njit(cache=True, _nrt=False, internal=True)
def reaction_loop_nb(state, cs, orders, m, cfg, ew, side, policies, rng_chance, rng_policy, log, ctr):
    """SoE 7.1 item 6 (EV11): in the window ``ew.ctx`` ``side`` plays reaction cards one decision at a
    time (REACTION: option 0 = pass, options 1..k = the playable cards of
    ``events.nb.reaction_window_nb``), each with its EVENT_TARGET, until it passes or none is
    playable."""
    for _ in range(cs.location.shape[1]):
        k = evnb.reaction_window_scratch_nb(state, cs, orders, m, cfg.etable, ew.active, side, ew.ctx, ew.involved,
                                            ew.rcards, ew.ev_scratch)
        if k == 0:
            return
        feat = feat_buffer_nb(policies, side, k + 1, ctr)
        if feat.shape[0] > 0:
            pnb.fill_reaction_features_nb(state, cs, orders, policies, cfg.etable, side, ew.ctx, ew.rcards, k + 1,
                                          feat)
        j = decide_nb(policies, side, DECISION.REACTION, k + 1, feat, rng_policy, ctr, cfg)
        if j == 0 or ctr[C_ABORT] != ABORT.NONE:
            return
        card = ew.rcards[j - 1]
        t = choose_event_target_nb(state, cs, orders, m, cfg, ew, side, card, policies, rng_policy, ctr)
        if t == -2 or not resolve_event_nb(state, cs, orders, m, cfg, ew, side, card, t, True, rng_chance, log,
                                           ctr):
            return


@njit(cache=True, _nrt=False, internal=True)
def freeze_inactive_nb(state, orders, active):
    """G15: the blocks of an inactive nation (``neutral_nation``, e.g. Lithuania before card 23) take
    no part in the phase's orders: flagged ``executed`` (orders ``_movable_nb``, rail and reorganize
    skip them). Call after ``reset_phase_nb`` and the card play."""
    for b in range(state.block_side.shape[0]):
        if state.block_status[b] == STATUS.ON_MAP and not active[state.block_nation[b]]:
            orders.executed[b] = True


@njit(cache=True, _nrt=False, internal=True)
def _all_active_nb(active):
    for nat in range(active.shape[0]):
        if not active[nat]:
            return False
    return True


@njit(cache=True, _nrt=False, internal=True)
def hide_inactive_nb(state, active, side, hidden):
    """G15: take ``side``'s inactive-nation blocks (``side`` -1: both sides') off the map while its order
    rows are listed (so that no order is placed for them to execute); :func:`unhide_nb` puts them back.
    Returns whether any was taken off (``hidden`` is all False between a hide and its unhide, so with
    every nation active there is nothing to do and :func:`unhide_nb` may be skipped)."""
    if _all_active_nb(active):
        return False
    any_hidden = False
    for b in range(state.block_side.shape[0]):
        hidden[b] = (state.block_status[b] == STATUS.ON_MAP and (side < 0 or state.block_side[b] == side)
                     and not active[state.block_nation[b]])
        if hidden[b]:
            state.block_status[b] = STATUS.SCHEDULED
            any_hidden = True
    return any_hidden


@njit(cache=True, _nrt=False, internal=True)
def hide_all_inactive_nb(state, active, hidden):
    """G15: take every inactive-nation block off the map (both sides) while presence, depots and
    supply are computed: out of play, it neither is supplied nor cuts the other side's clear paths
    (1.31, E1); :func:`unhide_nb` puts them back. Returns whether any was taken off
    (:func:`hide_inactive_nb` for both sides)."""
    return hide_inactive_nb(state, active, -1, hidden)


@njit(cache=True, _nrt=False, internal=True)
def unhide_nb(state, hidden):
    for b in range(state.block_side.shape[0]):
        if hidden[b]:
            state.block_status[b] = STATUS.ON_MAP
            hidden[b] = False


@njit(cache=True, _nrt=False)
def update_access_nb(state, cfg, ew):
    """G15, G16: the phase's access masks in ``ew`` (call after the card play: card 23 activates at
    once).

    ``ew.closed[s, a]``: side ``s``'s blocks may not end a move, retreat, withdrawal or pull-back in
    ``a`` — an area holding blocks of a nation not yet active (neutral ground: nobody attacks the
    neutral army, nobody stands beside it), and, in a scenario that keeps Lithuania neutral, Kaunas
    ("cannot be seized by either side"): closed to the Poles always, to the Soviets until Lithuania
    joins them. ``ew.nation_ok[nat, a]``: ``cfg.nation_move_ok`` (``max_distance``,
    ``front_restriction``) and not closed to the nation's side. An active nation's supply base
    (``cfg.nation_supply_base``) becomes its side's in ``state.supply_base`` (EatS II.3, G16)."""
    n_areas = state.control.shape[0]
    closed = ew.closed
    for a in range(n_areas):  # element loops, EventWork scratch: no allocation, no reference counting
        closed[0, a] = False
        closed[1, a] = False
    if cfg.kaunas >= 0 and not cfg.nation_active[LITHUANIAN]:
        closed[SIDE.POLISH, cfg.kaunas] = True
        if not ew.active[LITHUANIAN]:
            closed[SIDE.SOVIET, cfg.kaunas] = True
    n_nat = ew.nation_ok.shape[0]
    nation_side = ew.nation_side
    for nat in range(n_nat):
        nation_side[nat] = -1
    for b in range(state.block_side.shape[0]):
        nat = state.block_nation[b]
        nation_side[nat] = state.block_side[b]
        a = state.block_area[b]
        if state.block_status[b] == STATUS.ON_MAP and a >= 0 and not ew.active[nat]:
            closed[0, a] = True
            closed[1, a] = True
    for nat in range(n_nat):
        s = nation_side[nat]
        for a in range(n_areas):
            ew.nation_ok[nat, a] = cfg.nation_move_ok[nat, a] and (s < 0 or not closed[s, a])
        base = cfg.nation_supply_base[nat]
        if base >= 0 and ew.active[nat]:  # EatS II.3: "Kaunas ... is a supply base for Soviet units" (G16)
            state.supply_base[base] = cfg.nation_supply_side[nat]


@njit(cache=True, _nrt=False)
def filter_moves_nb(state, cfg, n, mv_block, mv_dest, mv_via, mv_detach, rail):
    """G15: drop the move / rail rows that take a block where its nation may not go
    (``cfg.nation_move_ok``: a ``neutral_nation``'s ``max_distance`` from its capital, a
    ``front_restriction``). Returns the new row count."""
    return filter_moves_ok_nb(state, cfg.nation_move_ok, n, mv_block, mv_dest, mv_via, mv_detach, rail)


@njit(cache=True, _nrt=False, internal=True)
def filter_moves_ok_nb(state, nation_ok, n, mv_block, mv_dest, mv_via, mv_detach, rail):
    """G15, G16: drop the move / rail rows whose destination ``nation_ok`` forbids to the block's
    nation (the loop passes ``EventWork.nation_ok``). Returns the new row count."""
    j = 0
    for i in range(n):
        b = mv_block[i]
        if nation_ok[state.block_nation[b], mv_dest[i]]:
            mv_block[j] = mv_block[i]
            mv_dest[j] = mv_dest[i]
            if not rail:
                mv_via[j] = mv_via[i]
                mv_detach[j] = mv_detach[i]
            j += 1
    return j


# --------------------------------------------------------------------------------------------------
# SoE 6.0, 10.1: replenish


@njit(cache=True, _nrt=False, internal=True)
def discard_down_nb(state, cs, side, must, policies, rng_policy, log, ctr, cfg, hand):
    """SoE 6.0: the player discards ``must`` cards of his choice, one decision per card. ``hand``: int64
    scratch of at least ``n_cards`` entries (``EventWork.cp_card``)."""
    n_cards = cs.location.shape[1]
    for _ in range(must):
        k = 0
        for c in range(n_cards):
            if cs.location[side, c] == HAND:
                hand[k] = c + 1
                k += 1
        if k == 0:
            return
        feat = feat_buffer_nb(policies, side, k, ctr)
        if feat.shape[0] > 0:
            pnb.fill_card_features_nb(cs, side, hand, k, feat, 1)
        j = decide_nb(policies, side, DECISION.DISCARD, k, feat, rng_policy, ctr, cfg)
        discard_nb(cs, side, hand[j])
        log_event_nb(log, ctr, state, EVENT.CARD_DISCARDED, side, -1, -1, -1, hand[j], 0)


@njit(cache=True, _nrt=False, internal=True)
def replenish_phase_nb(state, cs, kr, policies, rng_chance, rng_policy, log, ctr, cfg, hand):
    """SoE 6.0: each side draws ``draw_per_round`` cards, then discards down to the hand limit (``hand``:
    :func:`discard_down_nb`'s scratch)."""
    for s in range(2):
        drawn, must = replenish_nb(cs, s, kr, rng_chance)
        log_event_nb(log, ctr, state, EVENT.CARDS_DRAWN, s, -1, -1, -1, drawn, must)
        discard_down_nb(state, cs, s, must, policies, rng_policy, log, ctr, cfg, hand)


# --------------------------------------------------------------------------------------------------
# SoE 4.0 arrivals and the scenario's arrival checks


@njit(cache=True, _nrt=False, internal=True)
def arrival_checks_nb(state, cs, cfg, condition_met, rng_chance, log, ctr):
    """Scenario ``arrival_check`` rules (e.g. EatS 1st Cavalry Army), "before orders are given": at a
    listed (round, phase) a rule not yet met draws one card blind from its side's deck (then
    discarded, reading G4); the rule is met when the card's combat modifier is at least the
    threshold (a threshold ``<= 0`` is automatic)."""
    r = state.round[0]
    p = state.phase[0]
    for t in range(cfg.ac_rule.shape[0]):
        rule = cfg.ac_rule[t]
        if rule < 0 or condition_met[rule]:
            continue
        if cfg.ac_round[t] != r or cfg.ac_phase[t] != p:
            continue
        side = cfg.ac_side[t]
        thr = cfg.ac_min[t]
        card = NO_CARD
        mod = 0
        met = thr <= 0
        if not met:
            card, mod = draw_combat_card_nb(cs, side, rng_chance)
            end_battle_nb(cs, side)
            met = card != NO_CARD and mod >= thr
        if met:
            condition_met[rule] = True
        log_event_nb(log, ctr, state, EVENT.ARRIVAL_CHECK, side, -1, thr, 1 if met else 0, card, mod)


@njit(cache=True, _nrt=False, internal=True)
def arrivals_nb(state, m, er, condition_met, log, ctr, scratch_blocks, scratch_enemy, scratch_src, scratch_depot,
                supply, out):
    """SoE 4.0: place the scheduled reinforcements due now (reinforce.arrive_reinforcements_nb).
    Nothing is due (the test of ``arrive_reinforcements_nb``): nothing to do — the scratch supply
    arrays are not computed (every reader recomputes them first). ``supply``: the game's
    :class:`~soe_sim.engine.nb.SupplySearchCache` (``GameWork.supply``); ``out`` int64 (n_blocks,): scratch
    (``GameWork.arrived``)."""
    due = False
    r0 = state.round[0]
    p0 = state.phase[0]
    for b in range(state.block_side.shape[0]):
        if state.block_status[b] != STATUS.SCHEDULED:
            continue
        r = state.block_arrive_round[b]
        if r < 0 or r > r0 or (r == r0 and state.block_arrive_phase[b] > p0):
            continue
        c = state.block_arrive_condition[b]
        if c >= 0 and (c >= condition_met.shape[0] or not condition_met[c]):
            continue
        due = True
        break
    if not due:
        return
    enemy_presence_nb(state.block_side, state.block_area, state.block_status, state.garrison_side,
                      scratch_blocks, scratch_enemy)
    enb.supply_depots_into_nb(m.adj_indptr, m.adj_indices, m.adj_bits, m.eastern_link, m.supply_source,
                              state.supply_base, m.garrison, scratch_enemy, scratch_src, scratch_depot, supply)
    nbk = state.block_side.shape[0]
    arrive_reinforcements_nb(m.adj_indptr, m.adj_indices, m.eastern_link, scratch_enemy, scratch_depot,
                             er.max_blocks, state.round[0], state.phase[0], condition_met, state.block_side,
                             state.block_status, state.block_area, state.block_sp, state.block_prev_area,
                             state.block_arrival, state.block_in_supply, state.block_arrive_round,
                             state.block_arrive_phase, state.block_arrive_area, state.block_arrive_sp,
                             state.block_arrive_condition, out)
    for b in range(nbk):
        if out[b] >= 0:
            log_event_nb(log, ctr, state, EVENT.REINFORCEMENT_ARRIVED, state.block_side[b], out[b], -1, b,
                         state.block_sp[b], 0)
        elif out[b] == -2:
            log_event_nb(log, ctr, state, EVENT.REINFORCEMENT_DELAYED, state.block_side[b],
                         state.block_arrive_area[b], -1, b, 0, 0)


# --------------------------------------------------------------------------------------------------
# SoE 7.1: card play


@njit(cache=True, _nrt=False)
def card_play_nb(state, cs, orders, m, cfg, ew, policies, rng_chance, rng_policy, log, ctr, extra_orders):
    """SoE 7.1: per front, each side plays at most one card: orders (7.11, ``extra_orders[side,
    front]``), cubes (7.12), a historical event (7.13) or pass.

    The choice is face down and simultaneous (7.1 items 1–4), and every front's cards are placed
    before any is revealed (EatS IV.2 item 1, where SoE is silent on several fronts; reading G3):
    per front, north first (SoE 10.0), the non-initiative side chooses, then the initiative side — the
    options and features of every choice are computed on the position as it was, and every chosen card
    stays in its side's hand until its reveal (so the live arrays show no choice to the other side); a
    card a side chose for an earlier front is not offered to it again.
    Then the cards are revealed and resolved in the same order (north non-initiative, north
    initiative, south …; SoE 7.1 items 3–4). An event is offered only when
    ``events.nb.event_usable_nb`` says it would do something on its front (EV2); its target is an
    EVENT_TARGET decision at its reveal. An event that an earlier card's event has left with nothing
    to act on fizzles (the card is still played). Its arrays are the ``EventWork``'s ``cp_*`` scratch: every
    entry is written before it is read, so the kernel allocates nothing and counts no references."""
    nf = cfg.card_fronts
    cards = ew.cp_card
    uses = ew.cp_use
    chosen = ew.cp_chosen  # [f, s]: the card side s chose for front f; [f, 2 + s]: its use
    first_side = ew.cp_first
    ev_ctx = ew.cp_ctx  # scratch of event_usable_scratch_nb
    ev_involved = ew.cp_involved
    ev_tmp = ew.ev_scratch
    for f in range(nf):
        ini = state.initiative_side[f]
        first = 1 - ini if ini >= 0 else SIDE.POLISH
        first_side[f] = first
        for k in range(2):  # 7.1 items 1, 2: both choose face down
            s = first if k == 0 else 1 - first
            n = legal_card_plays_nb(cs, s, f, cards, uses)
            j = 0
            for i in range(n):  # G3: an event play only when the event would do something (EV2)
                taken = False  # placed face down for an earlier front: still in the hand, no longer to choose
                for f0 in range(f):
                    if cards[i] != NO_CARD and chosen[f0, s] == cards[i]:
                        taken = True
                if taken:
                    continue
                if uses[i] != USE_EVENT or evnb.event_usable_scratch_nb(state, cs, orders, m, cfg.etable, ew.active,
                                                                        s, cards[i], f, ev_ctx, ev_involved, ev_tmp):
                    cards[j] = cards[i]
                    uses[j] = uses[i]
                    j += 1
            n = j
            feat = feat_buffer_nb(policies, s, n, ctr)
            if feat.shape[0] > 0:
                pnb.fill_card_play_features_nb(cs, s, f, cards, uses, n, feat)
                pnb.fill_card_play_event_features_nb(state, cs, orders, policies, cfg.etable, s, f, cards, uses, n,
                                                     feat, ev_ctx, ew.cp_value)
            c = decide_nb(policies, s, DECISION.CARD_PLAY, n, feat, rng_policy, ctr, cfg)
            chosen[f, s] = cards[c]
            chosen[f, 2 + s] = uses[c]
    for f in range(nf):
        for k in range(2):  # 7.1 items 3, 4: the non-initiative card is revealed first
            s = first_side[f] if k == 0 else 1 - first_side[f]
            # 7.12: the cubes go to the front's pool
            extra, ev = apply_card_play_nb(cs, s, chosen[f, s], chosen[f, 2 + s], state.cubes[:, f])
            extra_orders[s, f] += extra
            if chosen[f, s] != NO_CARD:
                log_event_nb(log, ctr, state, EVENT.CARD_PLAYED, s, f, -1, extra, chosen[f, s], chosen[f, 2 + s])
            if ev != NO_CARD:
                evnb.card_play_context_nb(ew.ctx, f)
                involved = ew.involved
                for b in range(involved.shape[0]):  # element loop: no temporary array
                    involved[b] = False
                t = choose_event_target_nb(state, cs, orders, m, cfg, ew, s, ev, policies, rng_policy, ctr)
                if t != -2:
                    resolve_event_nb(state, cs, orders, m, cfg, ew, s, ev, t, False, rng_chance, log, ctr)


# --------------------------------------------------------------------------------------------------
# SoE 7.2, 7.3, 7.31, 7.2 Withdraw, 7.5, 7.6: orders (orders module)


@njit(cache=True, _nrt=False, internal=True)
def _first_side_nb(state, orules, policies, rng_policy, ctr, cfg, front, log, step):
    """SoE 6.1, 7.2, 7.3: the initiative holder of ``front`` chooses who goes first (option 0:
    himself). No holder: the Poles (G7). With ``orules.holder_chooses_order`` False (EatS II.4.3,
    VI, VII; reading V2) there is no choice: the player with the lower initiative places orders
    first (``step`` 0) and resolves them last (``step`` >= 1: the holder executes first).
    (:func:`feat_buffer_nb` for two options written out: no allocation, so no reference counting.)"""
    ini = state.initiative_side[front]
    if ini < 0:
        first = SIDE.POLISH
    elif not orules.holder_chooses_order:
        first = 1 - ini if step == 0 else ini
    else:
        feat = policies.feat_buf[:0]
        if pnb.wants_features_nb(policies, ini):
            feat = policies.feat_buf[:2]
            for i in range(2):
                for q in range(N_FEAT):
                    feat[i, q] = 0.0
        if feat.shape[0] > 0:
            pnb.fill_first_features_nb(step, front, feat)
        j = decide_nb(policies, ini, DECISION.FIRST_PLAYER if step == 0 else DECISION.EXEC_FIRST, 2, feat,
                      rng_policy, ctr, cfg)
        first = ini if j == 0 else 1 - ini
    log_event_nb(log, ctr, state, EVENT.FIRST_PLAYER, first, front, -1, -1, step, 0)
    return first


@njit(cache=True, _nrt=False, inline="always")
def place_orders_nb(state, orders, m, orules, cfg, ew, policies, rng_policy, log, ctr, extra_orders, otype, oarea,
                    ptabs0, ptabs1, ofc):
    """SoE 7.2: per front (north first, 10.0/10.1), the sides alternate placing one order at a time,
    the initiative holder choosing who starts, until each passes (the ``NO_ORDER`` row) or has none
    left; a side may place ``base_orders_per_front`` + its card's orders (7.11). The blocks of an
    inactive nation are hidden while a side's rows are listed (G15), and no Move To / Forced March
    To goes to an area closed to the side (G15, G16).

    Placing markers does not change the position, so each side's
    :class:`~soe_sim.engine.orders.nb.PlacementTables` (``ptabs0`` / ``ptabs1``) are computed once
    for the step and the ORDER features are remembered per row in ``ofc``
    (:class:`~soe_sim.engine.game.policies.OrderFeatureCache`)."""
    tabs_ok0 = False
    tabs_ok1 = False
    ofc.valid[:] = False
    for f in range(cfg.card_fronts):
        s = _first_side_nb(state, orules, policies, rng_policy, ctr, cfg, f, log, 0)
        done0 = False
        done1 = False
        for _it in range(4 * otype.shape[0] + 8):
            if done0 and done1:
                break
            if (s == 0 and done0) or (s == 1 and done1):
                s = 1 - s
                continue
            allowed = orules.base_orders_per_front + extra_orders[s, f]
            n = 0
            # the early exit of legal_orders_from_tables_nb (EatS VI: free Recon slots, reading V1)
            free_used = min(orders.recon_placed[s, f], orules.free_recon_per_front)
            if (((orders.placed[s, f] - free_used < allowed) or free_used < orules.free_recon_per_front)
                    and orders.n_orders[0] < orders.order_type.shape[0]):
                # each side's tables named in its own branch: a named tuple chosen at run time
                # (``ptabs0 if s == 0 else ptabs1``) is a copy of its ~270 words at every decision
                if s == 0:
                    if not tabs_ok0:
                        hid = hide_inactive_nb(state, ew.active, s, ew.hidden)
                        onb.placement_tables_nb(state, m, orules, s, ptabs0)
                        if hid:
                            unhide_nb(state, ew.hidden)
                        tabs_ok0 = True
                    n = onb.legal_orders_from_tables_nb(orders, m, orules, s, f, allowed, ptabs0, otype, oarea,
                                                        ew.closed[0])
                else:
                    if not tabs_ok1:
                        hid = hide_inactive_nb(state, ew.active, s, ew.hidden)
                        onb.placement_tables_nb(state, m, orules, s, ptabs1)
                        if hid:
                            unhide_nb(state, ew.hidden)
                        tabs_ok1 = True
                    n = onb.legal_orders_from_tables_nb(orders, m, orules, s, f, allowed, ptabs1, otype, oarea,
                                                        ew.closed[1])
            placed = False
            if n > 0:
                if n > 1 and pnb.is_scripted_nb(policies, s):  # the scores of the rows, cached per row
                    pnb.order_scores_cached_nb(state, orders, m, policies, s, otype, oarea, n, ofc, ofc.scores)
                    j = decide_scores_nb(policies, s, n, ofc.scores, rng_policy, ctr, cfg)
                else:
                    feat = feat_buffer_nb(policies, s, n, ctr)
                    if feat.shape[0] > 0:
                        pnb.fill_order_features_cached_nb(state, orders, m, policies, s, otype, oarea, n, feat, ofc)
                    j = decide_nb(policies, s, DECISION.ORDER, n, feat, rng_policy, ctr, cfg)
                if otype[j] != onb.NO_ORDER:
                    o = onb.place_order_nb(state, orders, s, f, otype[j], oarea[j])
                    if o >= 0:
                        placed = True
                        pnb.commit_order_nb(state, m, s, otype[j], oarea[j], ofc)
                        pnb.enemy_marker_nb(m, 1 - s, oarea[j], ofc, policies.params[1 - s, pnb.P_MARKER_RISK])
                        log_event_nb(log, ctr, state, EVENT.ORDER_PLACED, s, oarea[j], -1, f, otype[j], o)
            if not placed:
                if s == 0:
                    done0 = True
                else:
                    done1 = True
            if ctr[C_ABORT] != ABORT.NONE:
                return
            s = 1 - s


@njit(cache=True, _nrt=False, internal=True)
def _is_group_nb(t, group):
    if group == 0:
        return t == onb.FORCED_MARCH_TO or t == onb.FORCED_MARCH_OUT
    if group == 1:
        return t == onb.RECON
    if group == 2:
        return t == onb.MOVE_TO or t == onb.MOVE_OUT
    if group == 3:
        return t == onb.WITHDRAW
    if group == 4:
        return t == onb.REORGANIZE
    return t == onb.RAIL_TRANSPORT


@njit(cache=True, _nrt=False, internal=True)
def _execute_order_nb(state, cs, orders, m, orules, cfg, ew, policies, rng_chance, rng_policy, log, ctr, o, mv_block,
                      mv_dest, mv_via, mv_detach, info, wd_dest, wd_mode, snap_status, snap_area, snap_sp,
                      snap_garrison, elim_ever, destroyed_ever, reorg_rows, mscr, fscr):
    s = orders.order_side[o]
    t = orders.order_type[o]
    a = orders.order_area[o]
    if onb.is_move_type_nb(t) or t == onb.RAIL_TRANSPORT:
        rail = t == onb.RAIL_TRANSPORT
        kind = DECISION.RAIL if rail else DECISION.MOVE
        # after a move the rows are the last ones filtered (onb.moves_after_move_nb, onb.rails_after_rail_nb), not
        # listed again; ``kept`` is how many the last decision had, -1 when a listing is due
        kept = -1
        moved_block = -1
        moved_from = -1
        moved_dest = -1
        moved_via = -1
        brigade = -1
        full = False
        for _it in range(state.block_side.shape[0] + 1):
            n = -1
            if kept >= 0:
                if rail:
                    n = onb.rails_after_rail_nb(state, orders, m, orules, o, moved_block, moved_from, moved_dest, kept,
                                                mv_block, mv_dest)
                else:
                    n = onb.moves_after_move_nb(state, orders, orules, o, moved_block, moved_from, moved_dest,
                                                moved_via, brigade, kept, mv_block, mv_dest, mv_via, mv_detach)
            # filtered: the features' known rows (fscr.known) are those of the last decision, updated for the
            # move. They were filled at every decision since the listing: after a move the options are "stop"
            # and at least one row (n + off >= 2, so feat_buffer_nb gives a matrix), and a first decision with
            # a single option leaves no row once its block has moved.
            filtered = n >= 0
            if n < 0:
                if rail:
                    n = onb.legal_rail_nb(state, orders, m, orules, o, mv_block, mv_dest)
                else:
                    n = onb.legal_moves_scratch_nb(state, orders, m, orules, o, mv_block, mv_dest, mv_via, mv_detach,
                                                   mscr)
                full = n >= mv_block.shape[0]
                n = min(n, mv_block.shape[0])
                n = filter_moves_ok_nb(state, ew.nation_ok, n, mv_block, mv_dest, mv_via, mv_detach, rail)  # G15, G16
            if n == 0:
                break
            # SoE 7.3: a move is due while no block has executed the order (rows exist, so
            # onb.min_moves_required_nb would say 1 exactly when order_executed[o] == 0)
            must = orders.order_executed[o] == 0
            off = 0 if must else 1  # option 0 = stop executing this order (SoE 7.3), unless a move is due
            if n + off > 1 and pnb.is_scripted_nb(policies, s) and n + off <= policies.score_buf.shape[0]:
                # the scores straight from the position, without a feature matrix (decide_nb's scripted branch)
                if filtered:
                    pnb.known_after_move_nb(fscr.known, state.block_sp[moved_block], moved_from, moved_dest)
                pnb.move_scores_nb(state, orders, m, policies, s, o, mv_block, mv_dest, mv_via, mv_detach, n + off,
                                   off, rail, fscr, filtered, policies.score_buf)
                j = decide_scores_nb(policies, s, n + off, policies.score_buf, rng_policy, ctr, cfg)
            else:
                feat = feat_buffer_nb(policies, s, n + off, ctr)
                if feat.shape[0] > 0:
                    if filtered:
                        pnb.known_after_move_nb(fscr.known, state.block_sp[moved_block], moved_from, moved_dest)
                    pnb.fill_move_features_scratch_nb(state, orders, m, policies, s, o, mv_block, mv_dest, mv_via,
                                                      mv_detach, n + off, off, rail, feat, fscr, filtered)
                j = decide_nb(policies, s, kind, n + off, feat, rng_policy, ctr, cfg)
            if ctr[C_ABORT] != ABORT.NONE or (off == 1 and j == 0):
                break
            j -= off
            b = mv_block[j]
            frm = state.block_area[b]
            if rail:
                onb.apply_rail_nb(state, orders, m, orules, o, b, mv_dest[j])
                log_event_nb(log, ctr, state, EVENT.RAIL, s, frm, mv_dest[j], b, t, 0)
                kept = -1 if full else n  # onb.rails_after_rail_nb filters these rows
                moved_block = b
                moved_from = frm
                moved_dest = mv_dest[j]
            else:
                onb.apply_move_nb(state, orders, m, orules, o, b, mv_dest[j], mv_via[j], mv_detach[j], info)
                log_event_nb(log, ctr, state, EVENT.MOVE, s, frm, mv_dest[j], b, t, mv_detach[j])
                kept = -1 if full else n  # a listing cut at the capacity is listed again
                moved_block = b
                moved_from = frm
                moved_dest = mv_dest[j]
                moved_via = mv_via[j]
                brigade = info[onb.MI_BRIGADE]
                if info[onb.MI_BRIGADE] >= 0:
                    r = info[onb.MI_BRIGADE]
                    log_event_nb(log, ctr, state, EVENT.BLOCK_PLACED, s, frm, -1, r, state.block_sp[r], CAUSE.ORDERS)
                if info[onb.MI_PINNED] >= 0:
                    q = info[onb.MI_PINNED]
                    log_event_nb(log, ctr, state, EVENT.PINNED, 1 - s, state.block_area[q], -1, q, 0, 0)
        st = onb.finish_order_nb(orders, o)
        log_event_nb(log, ctr, state, EVENT.ORDER_DONE, s, a, -1, -1, t, st)
    elif t == onb.RECON:
        k = onb.execute_recon_nb(state, orders, o)
        log_event_nb(log, ctr, state, EVENT.RECON, s, a, -1, -1, k, 0)
        evnb.recon_context_nb(ew.ctx, state, m, s, a)  # EV9: the Recon side's reactions
        ew.involved[:] = False
        if _may_react_nb(cs, cfg.etable, s):
            reaction_loop_nb(state, cs, orders, m, cfg, ew, s, policies, rng_chance, rng_policy, log, ctr)
    elif t == onb.WITHDRAW:
        # SoE 7.2 "lose 1SP from any one block": the player's choice (O8, WITHDRAW_LOSS)
        loss_rows = wd_dest  # free until execute_withdraw_choice_nb fills it (no allocation here)
        nl = onb.withdraw_loss_options_scratch_nb(state, orders, m, orules, o, loss_rows, mscr.wd)
        loss_block = -1
        if nl > 0:
            feat = feat_buffer_nb(policies, s, nl, ctr)
            if feat.shape[0] > 0:
                pnb.fill_withdraw_loss_features_nb(state, loss_rows, nl, feat)
            loss_block = loss_rows[decide_nb(policies, s, DECISION.WITHDRAW_LOSS, nl, feat, rng_policy, ctr, cfg)]
        snapshot_nb(state, snap_status, snap_area, snap_sp, snap_garrison)
        vp0 = state.vp[0]
        mode = onb.execute_withdraw_choice_scratch_nb(state, orders, m, orules, o, wd_dest, info, loss_block,
                                                      ew.nation_ok, mscr.wd)
        if mode != onb.WD_NONE:
            wd_mode[a] = mode
        log_event_nb(log, ctr, state, EVENT.WITHDRAW, s, a, -1, info[onb.WI_LOSS_BLOCK], mode, info[onb.WI_MOVED])
        log_diff_nb(state, log, ctr, CAUSE.ORDERS, snap_status, snap_area, snap_sp, snap_garrison, elim_ever,
                    destroyed_ever)
        lb = info[onb.WI_LOSS_BLOCK]
        if info[onb.WI_DESTROYED] == 1 and lb >= 0 and state.block_arm[lb] == ARM.LEADER:
            # SoE 9.0: a leader destroyed by the withdrawal loss is killed (1 VP)
            log_event_nb(log, ctr, state, EVENT.LEADER_LOST, s, a, -1, lb, LEADER_KILLED, CAUSE.ORDERS)
            _log_vp_block_nb(state, log, ctr, vp0, CAUSE.LEADER_KILLED, a, lb)
        else:
            _log_vp_change_nb(state, log, ctr, vp0, CAUSE.ORDERS, a)
    elif t == onb.REORGANIZE:
        if orders.order_block[o] < 0:
            n = onb.legal_reorganize_nb(state, orders, o, reorg_rows)
            if n > 0:
                feat = feat_buffer_nb(policies, s, n, ctr)
                if feat.shape[0] > 0:
                    pnb.fill_reorganize_features_nb(state, reorg_rows, n, feat)
                j = decide_nb(policies, s, DECISION.REORGANIZE, n, feat, rng_policy, ctr, cfg)
                onb.designate_reorganize_nb(orders, o, reorg_rows[j])
        b = orders.order_block[o]
        gain = onb.execute_reorganize_nb(state, orders, orules, o)
        if gain >= 0:
            log_event_nb(log, ctr, state, EVENT.REORGANIZED, s, a, -1, b, gain, 0)
        else:
            log_event_nb(log, ctr, state, EVENT.ORDER_DONE, s, a, -1, -1, t, onb.REMOVED)


@njit(cache=True, _nrt=False, internal=True)
def group_pending_nb(order_front, order_status, order_type, n_orders, card_fronts, group):
    """Is an order of execution ``group`` placed on a front ``0 .. card_fronts - 1`` (the test with
    which :func:`execute_orders_nb` starts each front)? When not, that call does nothing, so the
    loop skips it (and its reference counting)."""
    for o in range(n_orders):
        f = order_front[o]
        if 0 <= f < card_fronts and order_status[o] == onb.PLACED and _is_group_nb(order_type[o], group):
            return True
    return False


@njit(cache=True, _nrt=False, inline="always")
def execute_orders_nb(state, cs, orders, m, orules, cfg, ew, policies, rng_chance, rng_policy, log, ctr, group,
                      mv_block, mv_dest, mv_via, mv_detach, info, wd_dest, wd_mode, snap_status, snap_area, snap_sp,
                      snap_garrison, elim_ever, destroyed_ever, reorg_rows, mscr, fscr):
    """SoE 7.3: one order group (0 forced marches, 1 Recon, 2 moves, 3 Withdraw, 4 Reorganize, 5 Rail
    Transport; ``orders.EXECUTION_GROUPS``): per front (north first), the initiative holder chooses
    which side executes first (EatS: the holder executes first, V2); each side executes its orders
    of the group "in any order" (G8): in the movement groups (forced marches, moves) an EXEC_ORDER
    decision picks the next order whenever two or more are pending, in the other groups the orders
    cannot interact and go in placement order."""
    for f in range(cfg.card_fronts):
        any_order = False
        for o in range(orders.n_orders[0]):
            if orders.order_front[o] == f and orders.order_status[o] == onb.PLACED and _is_group_nb(
                    orders.order_type[o], group):
                any_order = True
        if not any_order:
            continue
        first = _first_side_nb(state, orules, policies, rng_policy, ctr, cfg, f, log, group + 1)
        n_o = orders.n_orders[0]
        pending = ew.exec_pending
        done = ew.exec_done
        for o in range(n_o):
            done[o] = False
        for k in range(2):
            s = first if k == 0 else 1 - first
            for _it in range(n_o + 1):
                n = 0
                for o in range(n_o):
                    if (orders.order_side[o] == s and orders.order_front[o] == f and not done[o]
                            and orders.order_status[o] == onb.PLACED and _is_group_nb(orders.order_type[o], group)):
                        pending[n] = o
                        n += 1
                if n == 0:
                    break
                o = pending[0]
                if n > 1 and (group == 0 or group == 2):  # G8: which order next
                    feat = feat_buffer_nb(policies, s, n, ctr)
                    if feat.shape[0] > 0:
                        pnb.fill_exec_order_features_scratch_nb(state, orders, m, orules, policies, s, pending, n,
                                                                feat, mv_block, mv_dest, mv_via, mv_detach, mscr,
                                                                fscr)
                    o = pending[decide_nb(policies, s, DECISION.EXEC_ORDER, n, feat, rng_policy, ctr, cfg)]
                    log_event_nb(log, ctr, state, EVENT.ORDER_CHOSEN, s, orders.order_area[o], -1, -1,
                                 orders.order_type[o], o)
                done[o] = True
                _execute_order_nb(state, cs, orders, m, orules, cfg, ew, policies, rng_chance, rng_policy, log, ctr, o,
                                  mv_block, mv_dest, mv_via, mv_detach, info, wd_dest, wd_mode, snap_status,
                                  snap_area, snap_sp, snap_garrison, elim_ever, destroyed_ever, reorg_rows, mscr, fscr)
                if ctr[C_ABORT] != ABORT.NONE:
                    return


@njit(cache=True, _nrt=False, internal=True)
def designate_reorganizers_nb(state, orders, area, policies, rng_policy, ctr, cfg, reorg_rows):
    """SoE 7.2 Reorganization: a side with a Reorganize order in a battle area names the block "at
    the beginning of the battle" (it fights at half strength)."""
    for o in range(orders.n_orders[0]):
        if (orders.order_type[o] == onb.REORGANIZE and orders.order_area[o] == area
                and orders.order_status[o] == onb.PLACED and orders.order_block[o] < 0):
            n = onb.legal_reorganize_nb(state, orders, o, reorg_rows)
            if n > 0:
                s = orders.order_side[o]
                feat = feat_buffer_nb(policies, s, n, ctr)
                if feat.shape[0] > 0:
                    pnb.fill_reorganize_features_nb(state, reorg_rows, n, feat)
                j = decide_nb(policies, s, DECISION.REORGANIZE, n, feat, rng_policy, ctr, cfg)
                onb.designate_reorganize_nb(orders, o, reorg_rows[j])


# --------------------------------------------------------------------------------------------------
# SoE 9.0: the leaders' unique orders (leaders module; readings L1…)


@njit(cache=True, _nrt=False, internal=True)
def leader_window_open_nb(block_status, block_side, block_area, front, leaders, lids, used, window):
    """Could a leader of either side give an order at ``window`` (the test of
    ``leaders.nb.ready_leaders_nb`` for both sides)? When not, :func:`leader_window_nb` would only
    see both sides pass without a decision or an event (``legal_leader_orders_nb`` returns no row
    without a ready leader), so the loop skips the call (and its reference counting). ``lids``: the
    table's leader blocks (``LeaderWork.scr.lids``). No leader table rows (leaders off): False, as
    ``lnb.any_leader_nb``."""
    for q in range(lids.shape[0]):
        b = lids[q]
        ab = leaders[b, lnb.LT_ABILITY]
        if not used[b] and block_status[b] == STATUS.ON_MAP:
            a = block_area[b]
            if a >= 0 and lnb._window_ok_nb(ab, window):
                f = leaders[b, lnb.LT_FRONT]
                if f == lnb.ANY_FRONT or front[a] == f:
                    return True
    return False


@njit(cache=True, _nrt=False, internal=True)
def leader_window_nb(state, cs, orders, m, orules, cfg, ew, lw, policies, rng_chance, rng_policy, log, ctr, window,
                     mv_block, mv_dest, mv_via, mv_detach, info, wd_dest, wd_mode, snap_status, snap_area, snap_sp,
                     snap_garrison, elim_ever, destroyed_ever, reorg_rows, mscr, fscr, ofc):
    """SoE 9.0 (readings L1–L3): at ``window`` (``leaders.nb.LW_*``) the sides take turns, the side
    without the northern initiative first (as in card play, 7.1), each giving one leader order or
    passing (decision ``LEADER``: option 0 = pass, options 1..k = the rows of
    ``leaders.nb.legal_leader_orders_nb``) until both pass in a row. Each order is logged
    (``LEADER_ORDER``) and executed at once or placed for its execution group
    (:func:`_use_leader_nb`)."""
    if not lnb.any_leader_nb(cfg.leaders):
        return
    ini = state.initiative_side[0]
    s = 1 - ini if ini >= 0 else SIDE.POLISH
    passes = 0
    for _it in range(2 * cfg.leaders.shape[0] + 4):
        if passes >= 2 or ctr[C_ABORT] != ABORT.NONE:
            return
        n = lnb.legal_leader_orders_scratch_nb(state, orders, m, orules, cfg.leaders, lw.used, s, window,
                                               lw.r_leader, lw.r_type, lw.r_area, lw.r_block, lw.scr)
        j = 0
        if n > 0:
            feat = feat_buffer_nb(policies, s, n + 1, ctr)
            if feat.shape[0] > 0:
                pnb.fill_leader_features_cached_nb(state, orders, m, policies, cfg.leaders, s, lw.r_leader,
                                                   lw.r_type, lw.r_area, lw.r_block, n + 1, feat, ofc)
            j = decide_nb(policies, s, DECISION.LEADER, n + 1, feat, rng_policy, ctr, cfg)
        if j == 0:
            passes += 1
        else:
            passes = 0
            _use_leader_nb(state, cs, orders, m, orules, cfg, ew, lw, policies, rng_chance, rng_policy, log, ctr, s,
                           lw.r_leader[j - 1], lw.r_type[j - 1], lw.r_area[j - 1], lw.r_block[j - 1], window,
                           mv_block, mv_dest, mv_via, mv_detach, info, wd_dest, wd_mode, snap_status, snap_area,
                           snap_sp, snap_garrison, elim_ever, destroyed_ever, reorg_rows, mscr, fscr)
        s = 1 - s


@njit(cache=True, _nrt=False, internal=True)
def _use_leader_nb(state, cs, orders, m, orules, cfg, ew, lw, policies, rng_chance, rng_policy, log, ctr, side, leader,
                   order_type, area, block, window, mv_block, mv_dest, mv_via, mv_detach, info, wd_dest, wd_mode,
                   snap_status, snap_area, snap_sp, snap_garrison, elim_ever, destroyed_ever, reorg_rows, mscr, fscr):
    """Give one leader order (SoE 9.0): the leader is used for the round and revealed; Stalin's block
    gains its SP at once (L6); any other order countermands the side's unexecuted orders it replaces
    (L5, each logged ``ORDER_DONE`` removed), is put on the map (L1) and is executed at once when its
    group of 7.3 is over or it is Sikorski's Recon (L3), else with its group."""
    ab = cfg.leaders[leader, lnb.LT_ABILITY]
    lnb.mark_used_nb(orders, lw.used, side, leader)
    log_event_nb(log, ctr, state, EVENT.LEADER_ORDER, side, area, state.block_area[leader], leader, order_type, window)
    if ab == lnb.ABILITY.REORGANIZE:
        gain = lnb.reorganize_now_nb(state, orders, orules, block)
        log_event_nb(log, ctr, state, EVENT.REORGANIZED, side, area, -1, block, gain, 0)
        return
    k = lnb.countermand_nb(orders, side, area, order_type, lw.removed)
    for q in range(min(k, lw.removed.shape[0])):
        log_event_nb(log, ctr, state, EVENT.ORDER_DONE, side, area, -1, -1, orders.order_type[lw.removed[q]],
                     onb.REMOVED)
    o = lnb.place_leader_order_nb(orders, m, side, order_type, area)
    if o < 0:
        return
    lw.order_leader[o] = leader
    if lnb.executes_now_nb(ab, order_type, window):
        _execute_order_nb(state, cs, orders, m, orules, cfg, ew, policies, rng_chance, rng_policy, log, ctr, o,
                          mv_block, mv_dest, mv_via, mv_detach, info, wd_dest, wd_mode, snap_status, snap_area, snap_sp,
                          snap_garrison, elim_ever, destroyed_ever, reorg_rows, mscr, fscr)


# --------------------------------------------------------------------------------------------------
# SoE 7.4–7.44: battles


# --------------------------------------------------------------------------------------------------
# Detail events (GameConfig.log_detail; soe-sim playtest): what a narrated game needs beyond the record


@njit(cache=True, _nrt=True, internal=True)
def log_deck_nb(state, cs, side, area, log, ctr):
    """BATTLE_DECK events: the combat modifiers of the pile ``side``'s blind draw would take from
    (SoE 7.41.2): the draw pile, or the discard pile when the draw pile is empty (SoE 7.1 reshuffle).
    One event per modifier value; none when both piles are empty (the draw then adds 0)."""
    n_cards = cs.location.shape[1]
    top = cs.pile_top[side]
    ln = cs.pile_len[side]
    from_discard = top >= ln
    lo = 0
    hi = 0
    for c in range(n_cards):
        v = cs.combat_modifier[side, c]
        if c == 0 or v < lo:
            lo = v
        if c == 0 or v > hi:
            hi = v
    counts = np.zeros(hi - lo + 1, dtype=np.int64)
    if from_discard:
        for c in range(n_cards):
            if cs.location[side, c] == DISCARD:
                counts[cs.combat_modifier[side, c] - lo] += 1
    else:
        for k in range(top, ln):
            counts[cs.combat_modifier[side, cs.pile[side, k] - 1] - lo] += 1
    for v in range(counts.shape[0]):
        if counts[v] > 0:
            log_event_nb(log, ctr, state, EVENT.BATTLE_DECK, side, area, -1, 1 if from_discard else 0, v + lo,
                         counts[v])


@njit(cache=True, _nrt=True, internal=True)
def log_battle_prep_nb(state, m, cr, area, block_half, defend, withdraw, att_eff, def_eff, log, ctr):
    """BATTLE_PREP events: the prepared-battle row (:func:`soe_sim.battle.nb.prepare_battle_nb`) of the
    battle in ``area`` exactly as :func:`~soe_sim.engine.battles.nb.resolve_battle_in_state_nb` builds
    it, in pairs of entries, so the exact odds over the combat cards can be computed afterwards."""
    defender = defender_side_nb(state, area)
    attacker = 1 - defender
    nbk = state.block_side.shape[0]
    att_idx = np.empty(nbk, dtype=np.int64)
    def_idx = np.empty(nbk, dtype=np.int64)
    att_dir = np.empty(nbk, dtype=np.int64)
    n_att, n_def, n_support, fortified = battle_inputs_nb(state, m, area, defender, block_half, att_idx, def_idx,
                                                          att_dir)
    att_sp = np.empty(n_att, dtype=np.int64)
    att_half = np.empty(n_att, dtype=np.bool_)
    att_arm = np.empty(n_att, dtype=np.int64)
    for k in range(n_att):
        att_sp[k] = state.block_sp[att_idx[k]]
        att_half[k] = block_half[att_idx[k]]
        att_arm[k] = state.block_arm[att_idx[k]]
    def_sp = np.empty(n_def, dtype=np.int64)
    def_half = np.empty(n_def, dtype=np.bool_)
    def_arm = np.empty(n_def, dtype=np.int64)
    for k in range(n_def):
        def_sp[k] = state.block_sp[def_idx[k]]
        def_half[k] = block_half[def_idx[k]]
        def_arm[k] = state.block_arm[def_idx[k]]
    front = m.front[area]
    holder = 0 if state.initiative_side[front] == attacker else 1
    garrison = state.garrison_side[area] == defender
    n_pairs = (bnb.N_PREP + 1) // 2
    prep = np.zeros(2 * n_pairs + 2, dtype=np.int64)
    bnb.prepare_battle_nb(att_sp, att_half, att_arm, att_dir[:n_att], def_sp, def_half, def_arm, n_support,
                          garrison, defend, fortified, withdraw, att_eff, def_eff,
                          holder, state.initiative_level[front], cr, prep[:bnb.N_PREP])
    # the last pair: what the row folds together (SoE 1.2 fortification, 3.0 garrison, 7.2 Defend, 7.34)
    prep[2 * n_pairs] = (1 if garrison else 0) + (2 if defend else 0) + (4 if fortified else 0)
    prep[2 * n_pairs + 1] = n_support
    for k in range(n_pairs + 1):
        log_event_nb(log, ctr, state, EVENT.BATTLE_PREP, attacker, area, -1, k, prep[2 * k], prep[2 * k + 1])


@njit(cache=True, _nrt=False, internal=True)
def log_position_nb(state, log, ctr):
    """POSITION and AREA_STATE events: every block on the map and every area with a controller or a
    garrison (the map snapshot at the end of a phase)."""
    for b in range(state.block_side.shape[0]):
        if state.block_status[b] == STATUS.ON_MAP and state.block_area[b] >= 0:
            log_event_nb(log, ctr, state, EVENT.POSITION, state.block_side[b], state.block_area[b], -1, b,
                         state.block_sp[b], 0)
    for i in range(state.control.shape[0]):
        if state.control[i] >= 0 or state.garrison_side[i] >= 0:
            log_event_nb(log, ctr, state, EVENT.AREA_STATE, state.control[i], i, -1, -1, state.garrison_side[i], 0)


@njit(cache=True, _nrt=False, internal=True)
def _battle_card_pick_nb(state, cs, orders, m, side, area, attacker, policies, rng_policy, ctr, cfg, opts):
    """SoE 7.41.1, EatS IX.3 item 1 for one side: the BATTLE_CARD decision (row 0 = none) over the
    battle cards the side may play here; returns the card chosen (:data:`NO_CARD` for none) without
    playing it. ``opts`` is a scratch buffer of ``n_cards + 1`` entries."""
    n_cards = cs.location.shape[1]
    opts[0] = NO_CARD
    k = 1
    on_rail = m.rail_indptr[area + 1] > m.rail_indptr[area]
    for c in range(n_cards):  # the card's front (E-C9) and text (attacker / defender only, rail line)
        if cs.location[side, c] == HAND and battle_card_playable_nb(cs, side, c, m.front[area], attacker, on_rail):
            opts[k] = c + 1
            k += 1
    feat = feat_buffer_nb(policies, side, k, ctr)
    if feat.shape[0] > 0:
        pnb.fill_battle_features_nb(state, cs, orders, m, policies, side, area, attacker, opts, k, False, feat)
        pnb.fill_battle_card_odds_nb(state, cs, orders, m, policies, side, area, attacker, opts, k, feat)
    j = decide_nb(policies, side, DECISION.BATTLE_CARD, k, feat, rng_policy, ctr, cfg)
    return opts[j]


@njit(cache=True, _nrt=False, internal=True)
def _play_battle_card_nb(state, cs, side, area, card, log, ctr, effect):
    """Put ``side``'s chosen battle ``card`` in play (``effect`` receives its effect vector; zeros for
    :data:`NO_CARD`) and log ``BATTLE_CARD``."""
    effect[:] = 0
    if card != NO_CARD:
        play_battle_card_nb(cs, side, card, effect)
        log_event_nb(log, ctr, state, EVENT.BATTLE_CARD, side, area, -1, -1, card, 0)


@njit(cache=True, _nrt=False, internal=True)
def _battle_card_choice_nb(state, cs, orders, m, side, area, attacker, policies, rng_policy, log, ctr, cfg, effect,
                           opts):
    """:func:`_battle_card_pick_nb` and, at once, :func:`_play_battle_card_nb` (the card in play,
    ``effect`` its effect vector)."""
    card = _battle_card_pick_nb(state, cs, orders, m, side, area, attacker, policies, rng_policy, ctr, cfg, opts)
    _play_battle_card_nb(state, cs, side, area, card, log, ctr, effect)


@njit(cache=True, _nrt=False, internal=True)
def _combat_card_choice_nb(state, cs, orders, m, kr, side, area, attacker, policies, rng_policy, rng_chance, log,
                           ctr, cfg, opts, after_draw, drawn, drawn_mod):
    """The combat card of one side (decision COMBAT_CARD; row 0 = the card from the deck, rows 1… =
    the cards in hand, + ``kr.hand_card_bonus``); logs ``COMBAT_CARD`` and returns the modifier.

    ``after_draw`` False — SoE 7.41.2 (reading R10): the choice comes first and only a side that
    chose row 0 draws its card blind from ``rng_chance``. ``after_draw`` True — EatS IX.3 item 2
    (reading V13): the side has already drawn ``drawn`` (modifier ``drawn_mod``; :data:`NO_CARD`
    when its piles are empty) and its policy sees it (features ``after_draw``, ``drawn_card``,
    ``drawn``); a drawn card not kept stays in play, unused, and is discarded with the battle's cards
    (:func:`~soe_sim.engine.cards.nb.end_battle_nb`).
    """
    choice = _combat_card_pick_nb(state, cs, orders, m, side, area, attacker, policies, rng_policy, ctr, cfg, opts,
                                  after_draw, drawn, drawn_mod)
    return _play_combat_card_nb(state, cs, kr, side, area, choice, rng_chance, log, ctr, after_draw, drawn,
                                drawn_mod)


@njit(cache=True, _nrt=False, internal=True)
def _combat_card_pick_nb(state, cs, orders, m, side, area, attacker, policies, rng_policy, ctr, cfg, opts,
                         after_draw, drawn, drawn_mod):
    """The COMBAT_CARD decision of one side (row 0 = the card from the deck, rows 1… = the cards in
    hand); returns the hand card chosen, :data:`NO_CARD` for the deck, without playing it."""
    n_cards = cs.location.shape[1]
    opts[0] = NO_CARD
    k = 1
    for c in range(n_cards):
        if cs.location[side, c] == HAND:
            opts[k] = c + 1
            k += 1
    feat = feat_buffer_nb(policies, side, k, ctr)
    if feat.shape[0] > 0:
        pnb.fill_battle_features_nb(state, cs, orders, m, policies, side, area, attacker, opts, k, True, feat)
        if after_draw:
            pnb.fill_drawn_card_features_nb(drawn, drawn_mod, k, feat)
        pnb.fill_combat_card_odds_nb(state, cs, orders, m, policies, side, area, attacker, k, feat)
    j = decide_nb(policies, side, DECISION.COMBAT_CARD, k, feat, rng_policy, ctr, cfg)
    return opts[j]


@njit(cache=True, _nrt=False, internal=True)
def _play_combat_card_nb(state, cs, kr, side, area, choice, rng_chance, log, ctr, after_draw, drawn, drawn_mod):
    """Play ``side``'s chosen combat card (``choice``: a hand card, or :data:`NO_CARD` for the deck —
    the card already drawn under EatS IX.3, a blind draw now under SoE 7.41.2), log ``COMBAT_CARD``
    and return the modifier."""
    if choice == NO_CARD:
        if after_draw:  # EatS IX.3 item 2: keep the card drawn from the deck
            card, mod = drawn, drawn_mod
        else:  # SoE 7.41.2: drawn blind now
            card, mod = draw_combat_card_nb(cs, side, rng_chance)
        log_event_nb(log, ctr, state, EVENT.COMBAT_CARD, side, area, -1, USE_COMBAT_BLIND, card, mod)
    else:
        card = choice
        mod = play_combat_card_from_hand_nb(cs, side, card, kr)
        log_event_nb(log, ctr, state, EVENT.COMBAT_CARD, side, area, -1, USE_COMBAT_HAND, card, mod)
    return mod


@njit(cache=True, _nrt=False)
def _battle_cards_nb(state, cs, orders, m, kr, side, area, attacker, policies, rng_policy, rng_chance, log, ctr, cfg,
                     effect, opts):
    """SoE 7.41.1–2 for one side: optionally a battle card, then a combat card (blind or from the
    hand, + hand bonus), chosen before the draw (reading R10). Returns the combat modifier.
    ``opts``: scratch of ``n_cards + 1`` entries."""
    _battle_card_choice_nb(state, cs, orders, m, side, area, attacker, policies, rng_policy, log, ctr, cfg, effect,
                           opts)
    return _combat_card_choice_nb(state, cs, orders, m, kr, side, area, attacker, policies, rng_policy, rng_chance,
                                  log, ctr, cfg, opts, False, np.int64(NO_CARD), np.int64(0))


@njit(cache=True, _nrt=False)
def _soe_battle_cards_nb(state, cs, orders, m, kr, attacker, defender, area, policies, rng_policy, rng_chance, log,
                         ctr, cfg, att_eff, def_eff, opts):
    """SoE 7.41 items 1–2 (E-B8): the attacker decides on a battle card, then the defender, face down;
    then the attacker decides on a combat card (the blind draw or a hand card + hand bonus, chosen
    before the draw, R10), then the defender; only then are the choices played, in the same order
    (battle cards in play, blind draws from ``rng_chance`` attacker first) and logged. Every choice is
    made on the position as it was: a side's own battle card is out of its hand while it chooses its
    combat card (it is on the table), and nothing of the other side's choices is in play or in the log.
    Returns ``(att_mod, def_mod)``. ``opts``: scratch of ``n_cards + 1`` entries."""
    if cfg.log_detail:
        log_deck_nb(state, cs, attacker, area, log, ctr)
        log_deck_nb(state, cs, defender, area, log, ctr)
    att_card = _battle_card_pick_nb(state, cs, orders, m, attacker, area, True, policies, rng_policy, ctr, cfg, opts)
    def_card = _battle_card_pick_nb(state, cs, orders, m, defender, area, False, policies, rng_policy, ctr, cfg,
                                    opts)
    no = np.int64(NO_CARD)
    zero = np.int64(0)
    if att_card != NO_CARD:  # face down on the table while its owner chooses the combat card
        cs.location[attacker, att_card - 1] = IN_PLAY
    att_combat = _combat_card_pick_nb(state, cs, orders, m, attacker, area, True, policies, rng_policy, ctr, cfg,
                                      opts, False, no, zero)
    if att_card != NO_CARD:
        cs.location[attacker, att_card - 1] = HAND
    if def_card != NO_CARD:
        cs.location[defender, def_card - 1] = IN_PLAY
    def_combat = _combat_card_pick_nb(state, cs, orders, m, defender, area, False, policies, rng_policy, ctr, cfg,
                                      opts, False, no, zero)
    if def_card != NO_CARD:
        cs.location[defender, def_card - 1] = HAND
    _play_battle_card_nb(state, cs, attacker, area, att_card, log, ctr, att_eff)
    _play_battle_card_nb(state, cs, defender, area, def_card, log, ctr, def_eff)
    att_mod = _play_combat_card_nb(state, cs, kr, attacker, area, att_combat, rng_chance, log, ctr, False, no, zero)
    def_mod = _play_combat_card_nb(state, cs, kr, defender, area, def_combat, rng_chance, log, ctr, False, no, zero)
    return att_mod, def_mod


@njit(cache=True, _nrt=False)
def _battle_cards_after_draw_nb(state, cs, orders, m, kr, attacker, defender, area, policies, rng_policy,
                                rng_chance, log, ctr, cfg, att_eff, def_eff, opts):
    """EatS IX.3 items 1–2 (reading V13): the battle cards, attacker first; then each side draws its
    card from its own deck (attacker, then defender: the chance stream is consumed the same way
    whatever the choices); then the attacker, knowing his drawn card, keeps it or plays a hand card
    (+ hand bonus), then the defender, knowing his and the attacker's declaration. Returns
    ``(att_mod, def_mod)``. ``opts``: scratch of ``n_cards + 1`` entries."""
    if cfg.log_detail:
        log_deck_nb(state, cs, attacker, area, log, ctr)
    _battle_card_choice_nb(state, cs, orders, m, attacker, area, True, policies, rng_policy, log, ctr, cfg, att_eff,
                           opts)
    if cfg.log_detail:
        log_deck_nb(state, cs, defender, area, log, ctr)
    _battle_card_choice_nb(state, cs, orders, m, defender, area, False, policies, rng_policy, log, ctr, cfg,
                           def_eff, opts)
    a_card, a_mod = draw_combat_card_nb(cs, attacker, rng_chance)
    d_card, d_mod = draw_combat_card_nb(cs, defender, rng_chance)
    att_mod = _combat_card_choice_nb(state, cs, orders, m, kr, attacker, area, True, policies, rng_policy,
                                     rng_chance, log, ctr, cfg, opts, True, np.int64(a_card), np.int64(a_mod))
    def_mod = _combat_card_choice_nb(state, cs, orders, m, kr, defender, area, False, policies, rng_policy,
                                     rng_chance, log, ctr, cfg, opts, True, np.int64(d_card), np.int64(d_mod))
    return att_mod, def_mod


@njit(cache=True, _nrt=False)
def rail_moved_sp_nb(state, orders, side, area):
    """SP of ``side``'s blocks in ``area`` that moved by rail this phase (EatS II.4.1: they fight
    at strength 0, reading V5)."""
    t = 0
    for b in range(state.block_side.shape[0]):
        if (state.block_status[b] == STATUS.ON_MAP and state.block_area[b] == area and state.block_side[b] == side
                and orders.rail_moved[b]):
            t += state.block_sp[b]
    return t


@njit(cache=True, _nrt=False, internal=True)
def advance_nb(state, orders, m, er, cfg, ew, side, area, policies, rng_policy, log, ctr, blocks):
    """SoE 7.43 (E-B6): the winning attacker ``side`` sends blocks that fought in ``area`` back to
    the areas they came from, one ADVANCE decision at a time (option 0: stop, every remaining block
    stays), while at least two of its blocks stay (battles ``legal_advance_nb``). Each return is
    logged as ``ADVANCE``."""
    for _it in range(state.block_side.shape[0]):
        k = legal_advance_nb(state, m, ew.involved, ew.nation_ok, side, area, er.max_blocks, blocks)
        if k == 0:
            return
        feat = feat_buffer_nb(policies, side, k + 1, ctr)
        if feat.shape[0] > 0:
            pnb.fill_advance_features_nb(state, orders, m, policies, side, area, blocks, k + 1, feat)
        j = decide_nb(policies, side, DECISION.ADVANCE, k + 1, feat, rng_policy, ctr, cfg)
        if j == 0 or ctr[C_ABORT] != ABORT.NONE:
            return
        b = blocks[j - 1]
        back = apply_advance_nb(state, area, b)
        log_event_nb(log, ctr, state, EVENT.ADVANCE, side, area, back, b, 0, 0)


@njit(cache=True, _nrt=False, internal=True)
def battles_nb(state, cs, orders, m, cr, er, kr, cfg, ew, policies, rng_chance, rng_policy, log, ctr, block_half,
               wd_mode, reorg_rows, snap_status, snap_area, snap_sp, snap_garrison, elim_ever, destroyed_ever, bscr):
    """SoE 7.4: fight every battle, smallest first — in 3–4 player scenarios the northern front's
    first (10.0) — the initiative holder of the front choosing among equal-size battles (decision
    BATTLE_ORDER, reading E-B1), each with the Reorganize designation (7.2), its card decisions
    (7.41.1–2), the defender's Defend Area and Withdraw orders (7.2), half strength (forced march,
    reorganizing), losses, retreats (only into areas ``ew.nation_ok`` allows, G15/G16), great victory
    and initiative (battles module); a winning attacker may send blocks back (7.43, decisions
    ADVANCE); then the attacker's and the defender's reaction cards (7.1 item 6, EV10), and only then
    the battle's cards leave play. ``bscr``: the loop's ``battles.nb.BattleScratch`` (its arrays here and in
    the resolution of each battle: no allocation, no reference counting)."""
    n_areas = state.control.shape[0]
    areas = bscr.area_rows[0]
    sizes = bscr.area_rows[1]
    tied = bscr.area_rows[2]
    adv = bscr.adv
    att_eff = bscr.eff[0]
    def_eff = bscr.eff[1]
    att_eff[:] = 0
    def_eff[:] = 0
    rec = bscr.rec
    rec[:] = 0
    opts = bscr.opts[:cs.location.shape[1] + 1]  # the card options of a side
    for _guard in range(2 * n_areas + 2):
        k = find_battles_scratch_nb(state, areas, sizes, bscr.area_counts)
        if k == 0:
            return
        n_tied, tied_front = battle_candidates_nb(m, cfg.two_front, areas, sizes, k, tied)
        area = tied[0]
        chooser = state.initiative_side[tied_front]
        if n_tied > 1 and chooser >= 0:  # SoE 7.4: "the player with initiative on that front determines"
            size = sizes[0]
            for i in range(k):
                if areas[i] == area:
                    size = sizes[i]
            feat = feat_buffer_nb(policies, chooser, n_tied, ctr)
            if feat.shape[0] > 0:
                szs = bscr.area_rows[3, :n_tied]
                for i in range(n_tied):
                    szs[i] = size
                pnb.fill_battle_order_features_nb(state, orders, m, policies, chooser, tied, szs, n_tied, feat)
            area = tied[decide_nb(policies, chooser, DECISION.BATTLE_ORDER, n_tied, feat, rng_policy, ctr, cfg)]
            log_event_nb(log, ctr, state, EVENT.BATTLE_CHOSEN, chooser, area, -1, -1, size, n_tied)
        defender = defender_side_nb(state, area)
        if defender < 0:
            defender = state.garrison_side[area]
        attacker = 1 - defender
        designate_reorganizers_nb(state, orders, area, policies, rng_policy, ctr, cfg, reorg_rows)
        onb.block_half_nb(orders, block_half)
        defend = onb.defend_flag_nb(state, orders, defender, area)
        if defend:
            log_event_nb(log, ctr, state, EVENT.DEFEND, defender, area, -1, -1, 0, 0)
        withdraw = onb.battle_withdraw_mode_nb(state, orders, wd_mode, defender, area)  # O8
        if cr.choose_after_draw:  # EatS IX.3 items 1-2: both draw, then choose (V13)
            att_mod, def_mod = _battle_cards_after_draw_nb(state, cs, orders, m, kr, attacker, defender, area,
                                                           policies, rng_policy, rng_chance, log, ctr, cfg, att_eff,
                                                           def_eff, opts)
        else:  # SoE 7.41.1-2: both battle cards, then both combat cards, chosen before the draw (R10, E-B8)
            att_mod, def_mod = _soe_battle_cards_nb(state, cs, orders, m, kr, attacker, defender, area, policies,
                                                    rng_policy, rng_chance, log, ctr, cfg, att_eff, def_eff, opts)
        # SoE 7.41.3: the blocks are revealed (and have fought, 7.6) only now, after the four card choices
        # (reading O11): a side chooses its cards knowing only the enemy blocks it has already seen
        onb.mark_battle_nb(state, orders, area)
        if cr.rail_moved_strength_zero:
            # EatS II.4.1: blocks moved by rail this phase fight at 0 (V5): their full-strength SP,
            # already in the base combat value, come off the card modifier (the floor at 0 of the
            # total combat value still applies, EatS IX.2)
            att_mod -= rail_moved_sp_nb(state, orders, attacker, area)
            def_mod -= rail_moved_sp_nb(state, orders, defender, area)
        if cfg.log_detail:
            log_battle_prep_nb(state, m, cr, area, block_half, defend, withdraw, att_eff, def_eff, log, ctr)
        snapshot_nb(state, snap_status, snap_area, snap_sp, snap_garrison)
        front = m.front[area]
        ini_side0 = state.initiative_side[front]
        ini_lvl0 = state.initiative_level[front]
        vp0 = state.vp[0]
        evnb.battle_blocks_nb(state, area, ew.involved)  # EV5: the battle's blocks, before it is resolved
        battles_nb_module.resolve_battle_scratch_nb(state, m, cr, area, block_half, defend, withdraw, att_mod,
                                                    def_mod, att_eff, def_eff, er.max_blocks, er.vp_encirclement,
                                                    cfg.vp_leader_killed, cfg.vp_leader_captured, rec, ew.nation_ok,
                                                    bscr)
        log_event_nb(log, ctr, state, EVENT.BATTLE, attacker, area, -1, -1, rec[B_WINNER], rec[B_FOUGHT])
        log_event_nb(log, ctr, state, EVENT.BATTLE_LOSSES, attacker, area, -1, rec[B_GREAT_VICTORY],
                     rec[B_ATT_LOSSES], rec[B_DEF_LOSSES])
        log_diff_nb(state, log, ctr, CAUSE.BATTLE, snap_status, snap_area, snap_sp, snap_garrison, elim_ever,
                    destroyed_ever)
        if state.initiative_side[front] != ini_side0 or state.initiative_level[front] != ini_lvl0:
            log_event_nb(log, ctr, state, EVENT.INITIATIVE, state.initiative_side[front], front, -1, -1,
                         state.initiative_level[front], ini_side0)
        log_battle_vp_nb(state, log, ctr, cr, er, cfg, rec, vp0, area, snap_status, snap_area)
        if rec[B_FOUGHT] == 1 and rec[B_WINNER] == attacker:  # SoE 7.43
            advance_nb(state, orders, m, er, cfg, ew, attacker, area, policies, rng_policy, log, ctr, adv)
        evnb.battle_context_nb(ew.ctx, m, rec)  # EV10, EV11
        if _may_react_nb(cs, cfg.etable, attacker):
            reaction_loop_nb(state, cs, orders, m, cfg, ew, attacker, policies, rng_chance, rng_policy, log, ctr)
        if _may_react_nb(cs, cfg.etable, defender):
            reaction_loop_nb(state, cs, orders, m, cfg, ew, defender, policies, rng_chance, rng_policy, log, ctr)
        involved = ew.involved
        for b in range(involved.shape[0]):  # element loop: no temporary array
            involved[b] = False
        end_battle_nb(cs, attacker)
        end_battle_nb(cs, defender)
        if ctr[C_ABORT] != ABORT.NONE:
            return
    ctr[C_ABORT] = ABORT.LOOP


@njit(cache=True, _nrt=False, internal=True)
def _award_vp_nb(state, log, ctr, v, side, amount, cause, area, block):
    """Replay one VP award of the battle resolver from the track value ``v`` (one space at a time, as
    the resolver scores: SoE 7.8, no 0 space) and log its actual change; returns the new value."""
    old = v
    for _ in range(amount):
        v = vp_add_nb(v, side_sign_nb(side))
    d = np.int64(v) - np.int64(old)
    if d != 0:
        log_event_nb(log, ctr, state, EVENT.VP, SIDE.POLISH if d > 0 else SIDE.SOVIET, area, -1, block, d, cause)
    return v


@njit(cache=True, _nrt=False, internal=True)
def _gone_in_battle_nb(state, snap_status, snap_area, area, b):
    """Was block ``b`` in ``area`` before the battle (the snapshot) and is it eliminated permanently now?"""
    return (snap_status[b] == STATUS.ON_MAP and snap_area[b] == area
            and state.block_status[b] == STATUS.ELIMINATED_PERMANENT)


@njit(cache=True, _nrt=False)
def log_battle_vp_nb(state, log, ctr, cr, er, cfg, rec, vp0, area, snap_status, snap_area):
    """The VP of the battle just resolved in ``area``, by sub-cause (G14, G19), and its leaders lost
    (SoE 9.0, ``LEADER_LOST``): the resolver's awards are replayed in its order from the track before
    the battle (``vp0``): leaders killed (the attacker's blocks, then the defender's; each leader's
    enemy gains ``vp.leader_destroyed``), the great victory (7.44), then the loser's blocks eliminated
    for want of a retreat (7.42: a leader captured, ``vp.leader_captured``; any other block
    ``vp.encirclement_elimination``), each logged as a VP event with its cause and block. The battle's
    blocks are the ones in ``area`` in the snapshot taken before it. A loser's leader eliminated in the
    battle was killed when the losses reached it, captured otherwise: losses go to the strongest block,
    ties to the lowest index (E-B2), so the killed ones are the lowest-index ones (all leaders have
    1 SP). Anything the replay does not explain is logged with cause ``BATTLE`` (never in practice)."""
    nbk = state.block_side.shape[0]
    att = rec[B_ATTACKER]
    dfd = rec[B_DEFENDER]
    winner = rec[B_WINNER]
    loser = 1 - winner
    # the blocks of the battle eliminated in it are read from the snapshot each time (no block tables: most
    # battles eliminate nobody permanently, and then only the great victory can award VP)
    any_gone = False
    win_gone = 0
    for b in range(nbk):
        if _gone_in_battle_nb(state, snap_status, snap_area, area, b):
            any_gone = True
            if state.block_arm[b] == ARM.LEADER and state.block_side[b] == winner:
                win_gone += 1
    # the loser's leaders killed are its first ``loser_killed`` eliminated leaders by index (E-B2), the
    # others captured; the winner's eliminated leaders were all killed
    loser_killed = rec[B_LEADERS_KILLED] - win_gone
    v = np.int64(vp0)
    if any_gone:
        left = loser_killed
        for k in range(2):
            sd = att if k == 0 else dfd
            for b in range(nbk):
                if (not _gone_in_battle_nb(state, snap_status, snap_area, area, b) or state.block_side[b] != sd
                        or state.block_arm[b] != ARM.LEADER):
                    continue
                killed = sd == winner
                if not killed and left > 0:
                    killed = True
                    left -= 1
                if killed:
                    log_event_nb(log, ctr, state, EVENT.LEADER_LOST, sd, area, -1, b, LEADER_KILLED, CAUSE.BATTLE)
                    v = _award_vp_nb(state, log, ctr, v, 1 - sd, cfg.vp_leader_killed, CAUSE.LEADER_KILLED, area, b)
    if rec[B_GREAT_VICTORY] != 0:
        v = _award_vp_nb(state, log, ctr, v, winner, cr.great_victory_vp, CAUSE.GREAT_VICTORY, area, -1)
    if any_gone:
        skip = loser_killed  # the loser's killed leaders, logged above
        for b in range(nbk):
            if not _gone_in_battle_nb(state, snap_status, snap_area, area, b) or state.block_side[b] != loser:
                continue
            if state.block_arm[b] == ARM.LEADER:
                if skip > 0:
                    skip -= 1
                    continue
                log_event_nb(log, ctr, state, EVENT.LEADER_LOST, loser, area, -1, b, LEADER_CAPTURED, CAUSE.BATTLE)
                v = _award_vp_nb(state, log, ctr, v, winner, cfg.vp_leader_captured, CAUSE.LEADER_CAPTURED, area, b)
            else:
                v = _award_vp_nb(state, log, ctr, v, winner, er.vp_encirclement, CAUSE.ENCIRCLEMENT, area, b)
    if v != state.vp[0]:
        _log_vp_change_nb(state, log, ctr, v, CAUSE.BATTLE, area)


# --------------------------------------------------------------------------------------------------
# SoE 7.7, 7.71, 7.33, 7.8: end of an operation phase


@njit(cache=True, _nrt=False)
def supply_nb(state, m, er, log, ctr, blocks, enemy, src, depot, depot_dist, supply,
              snap_status, snap_area, snap_sp, snap_garrison, elim_ever, destroyed_ever, active, hidden, counts,
              oos_vp):
    """SoE 7.7, 7.71: supply of every block; out-of-supply losses, eliminations (VP) and garrisons.

    Blocks of a nation that is not (yet) active (``neutral_nation``, e.g. Lithuania before card 23)
    are out of play: they never lose SP to supply and do not cut the other side's supply paths
    (E14, G15; ``hidden`` is scratch). ``counts`` int64 (2, N_OOS) and ``oos_vp`` int64 (1,): scratch
    (``GameWork.oos_counts`` / ``vp_change``); ``supply`` the game's
    :class:`~soe_sim.engine.nb.SupplySearchCache` (``GameWork.supply``)."""
    hid = hide_all_inactive_nb(state, active, hidden)
    enemy_presence_nb(state.block_side, state.block_area, state.block_status, state.garrison_side, blocks, enemy)
    enb.supply_depots_into_nb(m.adj_indptr, m.adj_indices, m.adj_bits, m.eastern_link, m.supply_source,
                              state.supply_base, m.garrison, enemy, src, depot, supply)
    enb.block_supply_into_nb(m.adj_indptr, m.adj_indices, m.adj_bits, m.eastern_link, depot, enemy, state.block_side,
                             state.block_arm, state.block_area, state.block_status, er.infantry_supply_range,
                             er.cavalry_supply_range, depot_dist, state.block_in_supply, supply)
    if hid:
        unhide_nb(state, hidden)
    for b in range(state.block_side.shape[0]):
        if state.block_status[b] == STATUS.ON_MAP and not active[state.block_nation[b]]:
            state.block_in_supply[b] = True
    snapshot_nb(state, snap_status, snap_area, snap_sp, snap_garrison)
    apply_out_of_supply_nb(state.block_side, state.block_arm, state.block_area, state.block_status, state.block_sp,
                           state.block_in_supply, state.garrison_side, src, er.vp_out_of_supply, counts, oos_vp)
    log_diff_nb(state, log, ctr, CAUSE.SUPPLY, snap_status, snap_area, snap_sp, snap_garrison, elim_ever,
                destroyed_ever)
    add_vp_nb(state, log, ctr, oos_vp[0], CAUSE.SUPPLY, -1)


@njit(cache=True, _nrt=False, internal=True)
def _overstacked_nb(state, m, er, side, cnt):
    """Does ``side`` have more than ``er.max_blocks`` blocks in an area that is not an Eastern Link
    (SoE 7.33, 1.4)? ``cnt`` (2, n_areas) int32 scratch (row ``side`` overwritten)."""
    row = cnt[side]
    for i in range(row.shape[0]):
        row[i] = 0
    for b in range(state.block_side.shape[0]):
        a = state.block_area[b]
        if state.block_side[b] == side and state.block_status[b] == STATUS.ON_MAP and a >= 0:
            row[a] += 1
    for i in range(row.shape[0]):
        if row[i] > er.max_blocks and not m.eastern_link[i]:
            return True
    return False


@njit(cache=True, _nrt=False)
def stacking_nb(state, m, er, log, ctr, blocks, enemy, src, depot, depot_dist, supply,
                snap_status, snap_area, snap_sp, snap_garrison, elim_ever, destroyed_ever, closed, nation_ok, dest,
                cnt, insup):
    """SoE 7.33: pull back the latest arrivals of every overstacked area (Eastern Links exempt), the
    Poles first, then the Soviets (G9); enemy areas and depot distances are recomputed before each
    side so that no block is pulled back into an area the other side has just entered, the areas
    ``closed`` to the side (2, n_areas; G15, G16) count as enemy areas for the pull-back, and a
    block ends only where ``nation_ok`` (n_nations, n_areas; ``EventWork.nation_ok``, the retreat
    mask: neutral ground, a nation's ``max_distance`` / ``front_restriction``, EatS II.3 Germany for
    the Poles) allows its nation (G16; none allowed: eliminated, as an encircled retreat). ``dest`` int64
    (n_blocks,), ``cnt`` int64 (2,) and ``insup`` bool (n_blocks,): scratch (``GameWork.pull_dest`` /
    ``pull_counts`` / ``insup``); ``supply`` the game's :class:`~soe_sim.engine.nb.SupplySearchCache`."""
    nbk = state.block_side.shape[0]
    for b in range(nbk):  # block_supply_nb writes per-block supply: keep 7.7's result
        insup[b] = state.block_in_supply[b]
    snapshot_nb(state, snap_status, snap_area, snap_sp, snap_garrison)
    for s in range(2):
        if not _overstacked_nb(state, m, er, s, blocks):
            continue  # nothing to pull back: overstack_pullback_nb would change nothing (the supply
            #           scratch computed below is not read after this function)
        enemy_presence_nb(state.block_side, state.block_area, state.block_status, state.garrison_side, blocks,
                          enemy)
        enb.supply_depots_into_nb(m.adj_indptr, m.adj_indices, m.adj_bits, m.eastern_link, m.supply_source,
                                  state.supply_base, m.garrison, enemy, src, depot, supply)
        enb.block_supply_into_nb(m.adj_indptr, m.adj_indices, m.adj_bits, m.eastern_link, depot, enemy,
                                 state.block_side, state.block_arm, state.block_area, state.block_status,
                                 er.infantry_supply_range, er.cavalry_supply_range, depot_dist, insup, supply)
        for i in range(closed.shape[1]):
            enemy[s, i] = enemy[s, i] or closed[s, i]
        overstack_pullback_nb(m.adj_indptr, m.adj_indices, m.eastern_link, enemy[s], depot_dist[s],
                              state.block_side, state.block_area, state.block_status, state.block_sp,
                              state.block_prev_area, state.block_arrival, s, er.max_blocks, dest, cnt,
                              state.block_nation, nation_ok)  # G16: where each nation may go
    log_diff_nb(state, log, ctr, CAUSE.STACKING, snap_status, snap_area, snap_sp, snap_garrison, elim_ever,
                destroyed_ever)


@njit(cache=True, _nrt=False, internal=True)
def control_nb(state, m, log, ctr, old, out):
    """SoE 1.3, 7.8: control of every area and the VP of key cities changing hands. ``old`` (n_areas,) of
    ``state.control``'s dtype and ``out`` int64 (1,): scratch (``GameWork.control_prev`` / ``vp_change``)."""
    for i in range(old.shape[0]):  # element loop: no allocation, no reference counting
        old[i] = state.control[i]
    update_control_nb(m.garrison, m.eastern_link, m.vp, state.block_side, state.block_area, state.block_status,
                      state.garrison_side, state.control, out)
    for i in range(old.shape[0]):
        if old[i] != state.control[i] and m.garrison[i]:
            log_event_nb(log, ctr, state, EVENT.CONTROL, state.control[i], i, -1, -1, old[i], m.vp[i])
    add_vp_nb(state, log, ctr, out[0], CAUSE.CONTROL, -1)


@njit(cache=True, _nrt=False)
def immediate_victory_nb(state, cfg):
    """Index of the first ``[[victory.immediate]]`` condition met, -1 if none."""
    for t in range(cfg.imm_kind.shape[0]):
        s = cfg.imm_side[t]
        if cfg.imm_kind[t] == IMMEDIATE_CAPTURE_AREA:
            a = cfg.imm_area[t]
            if a >= 0 and state.control[a] == s:
                return t
        elif cfg.imm_kind[t] == IMMEDIATE_VP_AT_LEAST:
            if side_sign_nb(s) * state.vp[0] >= cfg.imm_value[t]:
                return t
    return -1


# --------------------------------------------------------------------------------------------------
# Ruleset options of the end of an operation phase (docs/rules.md "EatS variant")


@njit(cache=True, _nrt=False)
def intern_nb(state, cfg, n_op, log, ctr, snap_status, snap_area, snap_sp, snap_garrison, elim_ever,
              destroyed_ever):
    """EatS II.3 Germany (ruleset ``[internment]``, reading V11): every block of
    ``cfg.intern_side`` standing in the territory (``cfg.intern_area``) is removed from the map and
    loses ``cfg.intern_sp_loss`` SP; a block left with 0 SP is destroyed (to the force pool, as a
    battle loss; a leader is eliminated), any other becomes a scheduled reinforcement of the first
    return town (``cfg.intern_return``, in order) its side controls now, arriving after that town's
    delay in operation phases (``cfg.intern_delay``; none controlled: the last town and delay). The
    arrival kernel sends it to the nearest friendly depot if the town is not usable then (RF2).
    Returns the number of blocks interned."""
    nbk = state.block_side.shape[0]
    k = 0
    for b in range(nbk):
        a = state.block_area[b]
        if state.block_status[b] == STATUS.ON_MAP and a >= 0 and state.block_side[b] == cfg.intern_side \
                and cfg.intern_area[a]:
            k += 1
    if k == 0:
        return 0
    side = cfg.intern_side
    nr = cfg.intern_return.shape[0]
    ret = -1
    delay = 0
    for j in range(nr):
        if state.control[cfg.intern_return[j]] == side:
            ret = cfg.intern_return[j]
            delay = cfg.intern_delay[j]
            break
    if ret < 0 and nr > 0:
        ret = cfg.intern_return[nr - 1]
        delay = cfg.intern_delay[nr - 1]
    t = np.int64(state.phase[0]) - 1 + delay
    arr_round = np.int64(state.round[0]) + t // n_op
    arr_phase = t % n_op + 1
    snapshot_nb(state, snap_status, snap_area, snap_sp, snap_garrison)
    for b in range(nbk):
        a = state.block_area[b]
        if not (state.block_status[b] == STATUS.ON_MAP and a >= 0 and state.block_side[b] == side
                and cfg.intern_area[a]):
            continue
        sp = np.int64(state.block_sp[b]) - cfg.intern_sp_loss
        state.block_area[b] = -1
        state.block_prev_area[b] = -1
        state.block_arrival[b] = 0
        state.block_sp[b] = 0
        state.block_in_supply[b] = True  # off the map (E14)
        if sp <= 0 or ret < 0:
            state.block_status[b] = (STATUS.ELIMINATED_PERMANENT if state.block_arm[b] == ARM.LEADER
                                     else STATUS.DESTROYED_TO_POOL)
        else:
            state.block_status[b] = STATUS.SCHEDULED
            state.block_arrive_round[b] = arr_round
            state.block_arrive_phase[b] = arr_phase
            state.block_arrive_area[b] = ret
            state.block_arrive_sp[b] = sp
            state.block_arrive_condition[b] = -1
    log_diff_nb(state, log, ctr, CAUSE.INTERNMENT, snap_status, snap_area, snap_sp, snap_garrison, elim_ever,
                destroyed_ever)
    return k


@njit(cache=True, _nrt=True)
def supply_phase_garrisons_nb(state, m, log, ctr, blocks, enemy, src, depot, supply, waiting):
    """EatS II.4.2 "Garrisons are placed in supplied key towns during the Supply Phase, after
    checking supply" (``garrison.place_in_supply_phase``, reading V6): after the supply check of an
    operation phase both sides place a free garrison wherever SoE 8.1 would allow one (E12: a key
    city occupied by the side alone, with a clear path to its supply source), except in the towns
    whose garrison was eliminated this round (``waiting``): that counter waits on the round track
    for the Reinforcement Phase (EatS II.4.2, XI.2, round example combat 1)."""
    n_areas = state.control.shape[0]
    enemy_presence_nb(state.block_side, state.block_area, state.block_status, state.garrison_side, blocks, enemy)
    enb.supply_depots_into_nb(m.adj_indptr, m.adj_indices, m.adj_bits, m.eastern_link, m.supply_source,
                              state.supply_base, m.garrison, enemy, src, depot, supply)
    want = np.ones((2, n_areas), dtype=np.bool_)
    for i in range(n_areas):
        if waiting[i]:
            want[0, i] = False
            want[1, i] = False
    placed = np.zeros((2, n_areas), dtype=np.bool_)
    replace_garrisons_nb(m.garrison, state.block_side, state.block_area, state.block_status, state.garrison_side,
                         src, want, placed)
    for s in range(2):
        for i in range(n_areas):
            if placed[s, i]:
                log_event_nb(log, ctr, state, EVENT.GARRISON_PLACED, s, i, -1, -1, 0, CAUSE.SUPPLY)


@njit(cache=True, _nrt=False)
def cap_saved_cubes_nb(state, cap, log, ctr):
    """EatS X "One front can't have more than 10 Reinforcements Points" (reading V8).

    Each side's saved pool of each front (``state.cubes[side, front]``) is cut to ``cap``
    (``reinforcement.max_saved_cubes_per_front``; ``cap <= 0``: no cap, SoE 8.4), dropping allied,
    then cavalry, then infantry cubes. Logged as ``CUBES_DROPPED`` (area -1, area2 = the front,
    value = cubes lost, value2 1).
    """
    if cap <= 0:
        return
    for s in range(2):
        for f in range(state.cubes.shape[1]):
            over = np.int64(state.cubes[s, f, 0]) + state.cubes[s, f, 1] + state.cubes[s, f, 2] - cap
            if over <= 0:
                continue
            dropped = over
            for q in range(2, -1, -1):
                take = min(over, np.int64(state.cubes[s, f, q]))
                state.cubes[s, f, q] -= take
                over -= take
            log_event_nb(log, ctr, state, EVENT.CUBES_DROPPED, s, -1, f, -1, dropped, 1)


@njit(cache=True, _nrt=False, internal=True)
def front_build_pairs_only_nb(m, side, front, k, build_b, build_a):
    """EatS X (``reinforcement.saved_cubes_per_front``, reading V8): the RP of one front build on
    that front — drops the pairs of ``legal_build_pairs_nb`` (``build_b[:k]`` / ``build_a[:k]``)
    on the other front, except the side's supply sources (Warsaw / the Eastern Links, where EatS X.3
    recreates the side's own units whichever front's RP pay), keeping the order; returns how many
    are left."""
    j = 0
    for i in range(k):
        b = build_b[i]
        a = build_a[i]
        if m.front[a] != front and m.supply_source[a] != side:
            continue
        build_b[j] = b
        build_a[j] = a
        j += 1
    return j


@njit(cache=True, _nrt=True)
def home_builds_only_nb(state, m, side, bmask):
    """EatS X.3, X.4 (``reinforcement.own_nation_builds_at_supply_source_only``, reading V9): blocks
    of the side's own nation are recreated or taken from the reserve only in Warsaw (Poles) or an
    Eastern Link (Soviets), i.e. on the side's supply sources; allied-nation blocks keep the SoE
    8.4 rule. Clears the other rows of ``bmask`` (from ``legal_builds_nb``) and returns the number
    of rows left."""
    k = 0
    own = OWN_NATION[side]
    for b in range(bmask.shape[0]):
        home = state.block_nation[b] == own
        for a in range(bmask.shape[1]):
            if bmask[b, a]:
                if home and m.supply_source[a] != side:
                    bmask[b, a] = False
                else:
                    k += 1
    return k


@njit(cache=True, _nrt=False, internal=True)
def home_build_pairs_only_nb(state, m, side, k, build_b, build_a):
    """:func:`home_builds_only_nb` on the pair lists of ``legal_build_pairs_nb`` (``build_b[:k]`` /
    ``build_a[:k]``): drops the pairs it would clear, keeping the order; returns how many are left."""
    own = OWN_NATION[side]
    j = 0
    for i in range(k):
        b = build_b[i]
        a = build_a[i]
        if state.block_nation[b] == own and m.supply_source[a] != side:
            continue
        build_b[j] = b
        build_a[j] = a
        j += 1
    return j


# --------------------------------------------------------------------------------------------------
# SoE 8.0–8.5: reinforcement phase


@njit(cache=True, _nrt=True)
def reinforcement_phase_nb(state, orders, m, er, rr, cfg, active, policies, rng_policy, log, ctr, blocks, enemy, src,
                           depot, depot_dist, supply):
    """SoE 8.0: garrisons (8.1), then per side (Poles first, G6) combines (8.2), then strengthening
    and building (8.3, 8.31, 8.4) from each strategic city's cubes (8.5, city index order; Klintsy's
    on the front of the Soviet leader nearest to it in 3–4 player scenarios, 10.2) and then from the
    saved cubes (SoE 8.3: both fronts' pools spent as one on any front, RF14; EatS X with
    ``rr.saved_cubes_per_front``: each front's pool on its own front, builds on that front or a
    supply source, V8; ``rr.saved_cubes_first``: the saved pools before the strategic ones), one
    decision per cube spent until the side passes. ``active``: the game's
    ``active_nations`` (an ``activate_nation`` event makes a neutral nation's blocks eligible and
    opens the Kaunas cubes, EV7). The phase's snapshot (RF4) leaves the inactive blocks out: they
    neither cut supply paths nor make a front line (G15)."""
    n_areas = state.control.shape[0]
    nbk = state.block_side.shape[0]
    n_fronts = state.cubes.shape[1]
    hidden = np.zeros(nbk, dtype=np.bool_)
    hid = hide_all_inactive_nb(state, active, hidden)
    enemy_presence_nb(state.block_side, state.block_area, state.block_status, state.garrison_side, blocks, enemy)
    enb.supply_depots_into_nb(m.adj_indptr, m.adj_indices, m.adj_bits, m.eastern_link, m.supply_source,
                              state.supply_base, m.garrison, enemy, src, depot, supply)
    enb.block_supply_into_nb(m.adj_indptr, m.adj_indices, m.adj_bits, m.eastern_link, depot, enemy, state.block_side,
                             state.block_arm, state.block_area, state.block_status, er.infantry_supply_range,
                             er.cavalry_supply_range, depot_dist, state.block_in_supply, supply)
    # G15, RF7 (SoE 8.31): an area "held" only by inactive-nation blocks is no enemy-held area. Control
    # counted them (update_control_nb), so the front line takes an area's controller only when it is there
    # in the hidden snapshot (``enemy``) or the area is an Eastern Link (E3)
    held = state.control.copy()
    for b in range(nbk):
        a = state.block_area[b]
        if hidden[b] and a >= 0:
            h = held[a]
            if h >= 0 and not m.eastern_link[a] and not enemy[1 - h, a]:
                held[a] = -1
    if hid:
        unhide_nb(state, hidden)
    front_line = np.zeros((2, n_areas), dtype=np.bool_)
    front_line_nb(m.adj_indptr, m.adj_indices, enemy, held, front_line)
    # 8.1 garrisons ("may": one decision per eligible city)
    elig = np.zeros((2, n_areas), dtype=np.bool_)
    garrison_replacement_nb(m.garrison, state.block_side, state.block_area, state.block_status, state.garrison_side,
                            src, elig)
    want = np.zeros((2, n_areas), dtype=np.bool_)
    for s in range(2):
        for i in range(n_areas):
            if elig[s, i]:
                feat = feat_buffer_nb(policies, s, 2, ctr)
                if feat.shape[0] > 0:
                    pnb.fill_garrison_features_nb(m, i, feat)
                want[s, i] = decide_nb(policies, s, DECISION.GARRISON, 2, feat, rng_policy, ctr, cfg) == 0
    placed = np.zeros((2, n_areas), dtype=np.bool_)
    replace_garrisons_nb(m.garrison, state.block_side, state.block_area, state.block_status, state.garrison_side,
                         src, want, placed)
    for s in range(2):
        for i in range(n_areas):
            if placed[s, i]:
                log_event_nb(log, ctr, state, EVENT.GARRISON_PLACED, s, i, -1, -1, 0, CAUSE.REINFORCEMENT)
    gained = np.zeros((2, n_areas), dtype=np.int32)
    built = np.zeros(nbk, dtype=np.bool_)
    # the legal combines and builds as lists of pairs in the (row-major) order of the masks of
    # legal_combines_nb / legal_builds_nb: option j is pair j - 1 (no scan of the masks per decision)
    comb_d = np.empty(nbk * nbk, dtype=np.int64)
    comb_b = np.empty(nbk * nbk, dtype=np.int64)
    smask = np.zeros(nbk, dtype=np.bool_)
    build_b = np.empty(nbk * n_areas, dtype=np.int64)
    build_a = np.empty(nbk * n_areas, dtype=np.int64)
    build_cnt = np.zeros(n_areas, dtype=np.int32)
    build_ok = np.zeros(n_areas, dtype=np.bool_)
    strat = np.zeros((n_areas, 3), dtype=np.int64)
    pool = np.zeros(3, dtype=np.int64)
    for s in range(2):
        # 8.2 combine: listed once, then the pairs filtered after each combine (the same pairs)
        k = legal_combine_pairs_nb(s, state.block_side, state.block_arm, state.block_class, state.block_nation,
                                   state.block_area, state.block_status, state.block_sp, state.block_max_sp, active,
                                   rr.combine_same_arm, comb_d, comb_b)
        for _it in range(nbk + 1):
            if k == 0:
                break
            feat = feat_buffer_nb(policies, s, k + 1, ctr)
            if feat.shape[0] > 0:
                pnb.fill_combine_pair_features_nb(state, comb_d, comb_b, k + 1, feat)
            j = decide_nb(policies, s, DECISION.COMBINE, k + 1, feat, rng_policy, ctr, cfg)
            if j == 0:
                break
            dd = comb_d[j - 1]
            bb = comb_b[j - 1]
            area = state.block_area[dd]
            if apply_combine_nb(s, dd, bb, state.block_side, state.block_arm, state.block_class, state.block_nation,
                                state.block_area, state.block_status, state.block_sp, state.block_max_sp,
                                state.block_prev_area, state.block_arrival, state.block_in_supply,
                                active, rr.combine_same_arm):
                log_event_nb(log, ctr, state, EVENT.COMBINE, s, area, -1, dd, bb, state.block_sp[dd])
                orders.seen[1 - s, dd] = False  # O11: the enemy's view of its SP is out of date
            k = combine_pairs_after_combine_nb(dd, bb, state.block_sp, state.block_max_sp, k, comb_d, comb_b)
        # 8.3–8.5 pools: strategic cities, then the saved cubes (one pool per front under EatS X, V8)
        strategic_cubes_nb(m.strategic_cubes, state.control, depot, s, cfg.kaunas, active[LITHUANIAN], strat)
        n_saved = n_fronts if rr.saved_cubes_per_front else 1
        for qi in range(n_areas + n_saved):
            pi = qi
            if rr.saved_cubes_first:  # EatS X: the operational RP "should be used first"
                pi = n_areas + qi if qi < n_saved else qi - n_saved
            if pi < n_areas:
                if strat[pi, 0] + strat[pi, 1] + strat[pi, 2] == 0:
                    continue
                for q in range(3):
                    pool[q] = strat[pi, q]
                p_area = pi
                p_front = m.front[pi] if rr.strategic_same_front else -1  # SoE 8.5 (EatS X: anywhere, V14)
                if cfg.two_front and pi == cfg.klintsy:  # SoE 10.2: the nearest Soviet leader's front (RF12)
                    p_front = nearest_leader_front_nb(m.adj_indptr, m.adj_indices, m.front, pi, SIDE.SOVIET,
                                                      state.block_side, state.block_arm, state.block_area,
                                                      state.block_status, p_front)
                    log_event_nb(log, ctr, state, EVENT.RIVALRY, s, pi, -1, -1, p_front, 0)
                p_nation = LITHUANIAN if pi == cfg.kaunas else -1  # Kaunas: Lithuanian blocks only (8.5)
            else:
                p_area = -1
                p_nation = -1
                if rr.saved_cubes_per_front:  # EatS X: this front's RP, spent on this front (V8)
                    p_front = pi - n_areas
                    for q in range(3):
                        pool[q] = state.cubes[s, p_front, q]
                else:  # SoE 8.3: the side's cubes of both fronts, spent on either (RF14)
                    p_front = -1
                    for q in range(3):
                        pool[q] = 0
                        for f in range(n_fronts):
                            pool[q] += state.cubes[s, f, q]
            # one listing per pool, then after each cube spent the rows filtered (the same rows: within a
            # pool the listings' inputs move one way, see strengthen_after_spend_nb); afresh when a built
            # block may be strengthened (EatS X.4)
            k1 = 0
            k2 = 0
            fresh = True
            built_area = -1
            for _it in range(64 * nbk):
                if fresh:
                    k1 = legal_strengthen_nb(s, state.block_side, state.block_arm, state.block_nation,
                                             state.block_area, state.block_status, state.block_sp, state.block_max_sp,
                                             state.block_in_supply, built, active, m.front, front_line,
                                             gained, rr, pool, p_front, p_nation, smask)
                    k2 = legal_build_pairs_nb(s, state.block_side, state.block_arm, state.block_class,
                                              state.block_nation, state.block_area, state.block_status, active,
                                              cfg.nation_area_ok, m.eastern_link, depot, enemy, rr, pool, p_area,
                                              p_nation, build_cnt, build_ok, build_b, build_a)
                    if rr.own_nation_builds_at_supply_source_only and k2 > 0:
                        k2 = home_build_pairs_only_nb(state, m, s, k2, build_b, build_a)  # EatS X.3, X.4 (V9)
                    if p_area < 0 and p_front >= 0 and k2 > 0:
                        k2 = front_build_pairs_only_nb(m, s, p_front, k2, build_b, build_a)  # EatS X: front RP (V8)
                    if p_area >= 0 and p_front >= 0 and p_front != m.front[p_area]:
                        k2 = 0  # SoE 10.2: Klintsy's cubes given to the other front are used there, not built there
                else:
                    if k1 > 0:
                        k1 = strengthen_after_spend_nb(s, state.block_arm, state.block_nation, state.block_area,
                                                       state.block_sp, state.block_max_sp, front_line, gained, rr,
                                                       pool, smask)
                    if k2 > 0:
                        k2 = build_pairs_after_spend_nb(s, state.block_arm, state.block_class, state.block_nation,
                                                        state.block_status, m.eastern_link, rr, pool, built_area,
                                                        build_cnt, k2, build_b, build_a)
                if k1 + k2 == 0:
                    break
                feat = feat_buffer_nb(policies, s, 1 + k1 + k2, ctr)
                if feat.shape[0] > 0:
                    pnb.fill_reinforce_pair_features_nb(state, orders, m, policies, s, smask, build_b, build_a, k2,
                                                        front_line, 1 + k1 + k2, feat)
                j = decide_nb(policies, s, DECISION.REINFORCE, 1 + k1 + k2, feat, rng_policy, ctr, cfg)
                if j == 0:
                    break
                j -= 1
                fresh = False
                built_area = -1
                if j < k1:
                    t = -1
                    for b in range(nbk):
                        if smask[b]:
                            t += 1
                            if t == j:
                                apply_strengthen_nb(s, b, state.block_side, state.block_arm, state.block_nation,
                                                    state.block_area, state.block_status, state.block_sp,
                                                    state.block_max_sp, state.block_in_supply, built,
                                                    active, m.front, front_line, gained, rr, pool,
                                                    p_front, p_nation)
                                log_event_nb(log, ctr, state, EVENT.STRENGTHEN, s, state.block_area[b], -1, b,
                                             state.block_sp[b], p_area)
                                orders.seen[1 - s, b] = False  # O11: strengthened in secret (8.3)
                                break
                else:
                    j -= k1
                    b = build_b[j]
                    a = build_a[j]
                    apply_build_nb(s, b, a, state.block_side, state.block_arm, state.block_class,
                                   state.block_nation, state.block_area, state.block_status,
                                   state.block_sp, state.block_prev_area, state.block_arrival,
                                   state.block_in_supply, built, active,
                                   cfg.nation_area_ok, m.eastern_link, depot, enemy, rr, pool,
                                   p_area, p_nation)
                    log_event_nb(log, ctr, state, EVENT.BUILD, s, a, -1, b, state.block_sp[b], p_area)
                    built_area = a
                    if rr.built_brigade_may_strengthen and state.block_class[b] == BRIGADE:
                        built[b] = False  # EatS X.4: a reserve unit takes as many SP as RP
                        fresh = True  # it may be strengthened: a row the filter cannot add
            if pi >= n_areas:  # saved cubes stay for the next round (8.4)
                if rr.saved_cubes_per_front:
                    for q in range(3):
                        state.cubes[s, p_front, q] = pool[q]
                else:  # RF14: the cubes spent come out of the northern pool first
                    for q in range(3):
                        spent = -pool[q]
                        for f in range(n_fronts):
                            spent += state.cubes[s, f, q]
                        for f in range(n_fronts):
                            take = min(spent, np.int64(state.cubes[s, f, q]))
                            state.cubes[s, f, q] -= take
                            spent -= take
            else:
                left = pool[0] + pool[1] + pool[2]
                if left > 0:
                    log_event_nb(log, ctr, state, EVENT.CUBES_DROPPED, s, pi, -1, -1, left, 0)


# --------------------------------------------------------------------------------------------------
# End of the scenario


@njit(cache=True, _nrt=False, internal=True)
def _holds_nb(state, m, side, area):
    """A key city is held by its controller (SoE 1.3); any other area when no enemy block is in it."""
    if m.garrison[area]:
        return state.control[area] == side
    for b in range(state.block_side.shape[0]):
        if (state.block_status[b] == STATUS.ON_MAP and state.block_area[b] == area
                and state.block_side[b] == 1 - side):
            return False
    return True


@njit(cache=True, _nrt=False)
def score_objectives_nb(state, m, cfg, destroyed_ever, log, ctr):
    """Scenario ``[[objective]]`` VP at the end: ``hold_area`` / ``capture_area`` when the side holds
    every listed area; ``eliminate_blocks``: ``vp`` per listed block destroyed or eliminated at any
    time during the scenario."""
    n_areas = state.control.shape[0]
    for o in range(cfg.obj_kind.shape[0]):
        s = cfg.obj_side[o]
        kind = cfg.obj_kind[o]
        vp = 0
        ok = False
        if kind == OBJECTIVE_HOLD_AREA or kind == OBJECTIVE_CAPTURE_AREA:
            ok = True
            any_area = False
            for a in range(n_areas):
                if cfg.obj_areas[o, a]:
                    any_area = True
                    if not _holds_nb(state, m, s, a):
                        ok = False
            ok = ok and any_area
            if ok:
                vp = cfg.obj_vp[o]
        elif kind == OBJECTIVE_ELIMINATE_BLOCKS:
            for b in range(destroyed_ever.shape[0]):
                if cfg.obj_blocks[o, b] and destroyed_ever[b]:
                    vp += cfg.obj_vp[o]
            ok = vp > 0
        log_event_nb(log, ctr, state, EVENT.OBJECTIVE, s, -1, -1, 1 if ok else 0, vp, o)
        add_vp_nb(state, log, ctr, side_sign_nb(s) * vp, CAUSE.OBJECTIVE, -1)


# --------------------------------------------------------------------------------------------------
# Invariants (the fuzzer)


@njit(cache=True, _nrt=True)
def check_invariants_nb(state, cs, m, er, vp_start, log, ctr, elim_ever):
    """First violated invariant (``VIOLATION.*``), 0 when all hold. Called at the end of a phase."""
    return _invariants_nb(state, cs, m, er, vp_start, log, ctr, elim_ever, True)


@njit(cache=True, _nrt=True)
def check_step_invariants_nb(state, cs, m, er, vp_start, log, ctr, elim_ever):
    """The invariants of :func:`check_invariants_nb` that hold at every decision, not only at the end
    of a phase (the fuzzer's ``every_step`` mode checks them before each choice): all but stacking
    (the pull-back is at the end of the phase, SoE 7.33), unresolved battles (fought after the
    moves, 7.4) and cards left in play (a battle's cards stay there until it ends, E-C1); cards are
    still conserved."""
    return _invariants_nb(state, cs, m, er, vp_start, log, ctr, elim_ever, False)


@njit(cache=True, _nrt=True, internal=True)
def _invariants_nb(state, cs, m, er, vp_start, log, ctr, elim_ever, phase_end):
    nbk = state.block_side.shape[0]
    n_areas = state.control.shape[0]
    cnt = np.zeros((2, n_areas), dtype=np.int64)
    for b in range(nbk):
        on = state.block_status[b] == STATUS.ON_MAP
        a = state.block_area[b]
        if on != (a >= 0) or a >= n_areas:
            return VIOLATION.PLACEMENT
        if on:
            if state.block_sp[b] < 1 or state.block_sp[b] > state.block_max_sp[b]:
                return VIOLATION.SP_RANGE
            cnt[state.block_side[b], a] += 1
        if elim_ever[b] and state.block_status[b] != STATUS.ELIMINATED_PERMANENT:
            return VIOLATION.ELIMINATED_RETURNED
    if phase_end:  # SoE 7.33 pull-back and 7.4 battles happen at the end of the phase
        for i in range(n_areas):
            if not m.eastern_link[i]:
                if cnt[0, i] > er.max_blocks or cnt[1, i] > er.max_blocks:
                    return VIOLATION.STACKING
            g = state.garrison_side[i]
            if (cnt[0, i] > 0 and cnt[1, i] > 0) or (g >= 0 and cnt[1 - g, i] > 0):
                return VIOLATION.UNRESOLVED_BATTLE
    counts = np.zeros(N_LOCATIONS, dtype=np.int64)
    for s in range(2):
        if not card_counts_nb(cs, s, counts):
            return VIOLATION.CARDS
        t = 0
        for q in range(N_LOCATIONS):
            t += counts[q]
        if t != cs.location.shape[1] or (phase_end and counts[IN_PLAY] != 0):
            return VIOLATION.CARDS
    if state.vp[0] != vp_start + vp_event_sum_nb(log, ctr[C_EVENTS]):
        return VIOLATION.VP_TRACK
    for s in range(2):
        for f in range(state.cubes.shape[1]):
            for q in range(state.cubes.shape[2]):
                if state.cubes[s, f, q] < 0:
                    return VIOLATION.CUBES
    return VIOLATION.NONE


@njit(cache=True, _nrt=False, internal=True)
def _after_phase_nb(state, cs, m, er, cfg, vp_start, log, ctr, elim_ever):
    ctr[C_PHASES] += 1
    if cfg.log_detail:
        log_position_nb(state, log, ctr)
    _record_invariants_nb(state, cs, m, er, cfg, vp_start, log, ctr, elim_ever)


@njit(cache=True, _nrt=False, internal=True)
def _record_invariants_nb(state, cs, m, er, cfg, vp_start, log, ctr, elim_ever):
    """Check the invariants (when asked) and count a violation, remembering the first one."""
    if cfg.check_invariants and ctr[C_ABORT] != ABORT.LOG_FULL:
        v = check_invariants_nb(state, cs, m, er, vp_start, log, ctr, elim_ever)
        if v != VIOLATION.NONE:
            if ctr[C_VIOLATIONS] == 0:
                ctr[C_VIOL_CODE] = v
                ctr[C_VIOL_STEP] = ctr[C_STEPS]
                ctr[C_VIOL_ROUND] = state.round[0]
                ctr[C_VIOL_PHASE] = state.phase[0]
            ctr[C_VIOLATIONS] += 1


# --------------------------------------------------------------------------------------------------
# The round loop


@njit(cache=True, _nrt=True)
def default_params_nb(ids):
    """(2, N_PARAMS) float64: the default parameter row of each side's policy id
    (:data:`~soe_sim.engine.game.policies.DEFAULT_PARAMS`)."""
    params = np.zeros((2, pnb.N_PARAMS), dtype=np.float64)
    for s in range(2):
        pid = ids[s]
        row = pid if 0 <= pid < pnb.N_POLICIES else 0
        for q in range(pnb.N_PARAMS):
            params[s, q] = pnb.DEFAULT_PARAMS[row, q]
    return params


class GameWork(NamedTuple):
    """The per-game arrays of :func:`play_game_policies_nb` (``work.new_game_work``, reset by
    :func:`reset_game_work_nb` at the start of each game; one per chunk of games, so that the game
    loop allocates nothing and runs without reference counting): the elimination trackers, the
    victory conditions met, the phase's half-strength blocks and extra orders, the supply scratch
    (``blocks``, ``enemy``, ``src``, ``depot``, ``depot_dist``), the position snapshot, the move /
    Withdraw scratch, the :class:`EventWork` ``ew``, the garrison trackers of EatS II.4.2, the
    leaders' :class:`~soe_sim.engine.leaders.nb.LeaderWork` ``lw``, and the scratch of :func:`arrivals_nb`
    (``arrived``), :func:`control_nb` (``control_prev``, ``vp_change``), :func:`supply_nb` (``oos_counts``,
    ``vp_change``) and :func:`stacking_nb` (``pull_dest``, ``pull_counts``, ``insup``), and ``supply``, the
    :class:`~soe_sim.engine.nb.SupplySearchCache` the game's supply searches share (the placement tables,
    the leader and Withdraw scratch hold the same one: ``work.new_game_scratch``; it is not reset between
    games, as what it keeps is a pure function of its key)."""

    elim_ever: np.ndarray
    destroyed_ever: np.ndarray
    condition_met: np.ndarray
    block_half: np.ndarray
    extra_orders: np.ndarray
    blocks: np.ndarray
    enemy: np.ndarray
    src: np.ndarray
    depot: np.ndarray
    depot_dist: np.ndarray
    snap_status: np.ndarray
    snap_area: np.ndarray
    snap_sp: np.ndarray
    snap_garrison: np.ndarray
    info: np.ndarray
    wd_dest: np.ndarray
    wd_mode: np.ndarray
    reorg_rows: np.ndarray
    ew: EventWork
    garrison_phase0: np.ndarray
    garrison_waiting: np.ndarray
    lw: object  # leaders.nb.LeaderWork
    arrived: np.ndarray
    control_prev: np.ndarray
    vp_change: np.ndarray
    oos_counts: np.ndarray
    pull_dest: np.ndarray
    pull_counts: np.ndarray
    insup: np.ndarray
    supply: object  # engine.nb.SupplySearchCache


class GameScratch(NamedTuple):
    """Scratch of the round loop that a batch's games share (``work.new_game_scratch``; one per
    chunk of games, so its large arrays are allocated once): the placement tables of each side, the
    ORDER feature cache, the move and feature scratch, the order and move option rows."""

    ptabs0: object  # orders.nb.PlacementTables (Polish)
    ptabs1: object  # orders.nb.PlacementTables (Soviet)
    ofc: object  # policies.OrderFeatureCache
    mscr: object  # orders.nb.MoveScratch
    fscr: object  # policies.FeatScratch
    otype: np.ndarray
    oarea: np.ndarray
    mv_block: np.ndarray
    mv_dest: np.ndarray
    mv_via: np.ndarray
    mv_detach: np.ndarray
    work: GameWork
    bscr: object  # battles.nb.BattleScratch


@njit(cache=True, _nrt=False, internal=True)
def reset_game_work_nb(w, cfg):
    """Give ``w`` (:class:`GameWork`) the values ``work.new_game_work`` gives (its ``np.empty``
    arrays excepted: they are written before they are read), for the next game."""
    w.elim_ever[:] = False
    w.destroyed_ever[:] = False
    w.condition_met[:] = False
    w.block_half[:] = False
    w.extra_orders[:, :] = 0
    w.blocks[:, :] = 0
    w.enemy[:, :] = False
    w.src[:, :] = 0
    w.depot[:, :] = False
    w.depot_dist[:, :] = 0
    w.info[:] = 0
    w.wd_mode[:] = 0
    w.garrison_waiting[:] = False
    ew = w.ew
    for i in range(ew.active.shape[0]):  # the game's own copies of cfg's (G3, G15)
        ew.active[i] = cfg.nation_active[i]
    for i in range(ew.nation_ok.shape[0]):
        for j in range(ew.nation_ok.shape[1]):
            ew.nation_ok[i, j] = cfg.nation_move_ok[i, j]
    ew.ctx[:] = 0
    ew.involved[:] = False
    ew.targets[:] = 0
    ew.rcards[:] = 0
    ew.eo[:] = 0
    ew.hidden[:] = False
    ew.closed[:, :] = False
    ew.exec_pending[:] = 0
    ew.exec_done[:] = False
    w.lw.used[:] = False
    w.lw.order_leader[:] = -1


@njit(cache=True, _nrt=False, inline="always")
def play_game_policies_nb(state, cs, orders, m, cr, er, kr, rr, orules, cfg, policies, scratch, rng_chance,
                          rng_policy, log, ctr, out):
    """Play ``state`` / ``cs`` / ``orders`` (changed in place) from the scenario's start to its end
    (SoE 5.0).

    Sequence (docs/engine-design.md): both draw piles are shuffled (chance stream) and each side
    draws a first hand (G1); then, from ``(state.round, state.phase)`` to ``state.end``: replenish
    (6.0), operation phases (7.0–7.9) and the reinforcement phase (8.0), with the immediate-victory
    check after every operation phase; at the end the objectives are scored and the VP track
    decides (SoE 7.8). Card events (G3) use ``cfg.etable`` and the game's own copy of
    ``cfg.nation_active`` (:class:`EventWork`). ``out`` (N_RES,) int64 receives the result row;
    returns the outcome.

    ``policies`` is the :class:`~soe_sim.engine.game.policies.PolicySet` of the start
    (``pnb.make_policy_set_nb``: each side's policy id and parameter row, docs/policies.md) and
    ``scratch`` the :class:`GameScratch` (both from :func:`soe_sim.engine.game.work.batch_work`
    with the same ``cfg``). The games of a batch share both: the policy set's parts depend only on
    the start and its win-probability memo holds values of a pure function, every scratch array is
    set before it is read, and the per-game arrays (:class:`GameWork`) are reset here, so nothing an
    earlier game left there changes a result.
    Compiled without reference counting (docs/engine-design.md): it allocates nothing. Inlined into
    :func:`play_games_serial_nb`, its only caller, so that numba does not optimise and generate the
    whole engine once more for a library of its own (docs/engine-design.md "Compile time")."""
    n_areas = state.control.shape[0]
    nbk = state.block_side.shape[0]
    for q in range(ctr.shape[0]):
        ctr[q] = 0
    w = scratch.work
    reset_game_work_nb(w, cfg)
    vp_start = np.int64(state.vp[0])
    elim_ever = w.elim_ever
    destroyed_ever = w.destroyed_ever
    for b in range(nbk):
        if state.block_status[b] == STATUS.ELIMINATED_PERMANENT:
            elim_ever[b] = True
    condition_met = w.condition_met
    block_half = w.block_half
    extra_orders = w.extra_orders
    blocks = w.blocks
    enemy = w.enemy
    src = w.src
    depot = w.depot
    depot_dist = w.depot_dist
    snap_status = w.snap_status
    snap_area = w.snap_area
    snap_sp = w.snap_sp
    snap_garrison = w.snap_garrison
    n_op = er.operation_phases
    start_round = state.round[0]
    otype = scratch.otype
    oarea = scratch.oarea
    mv_block = scratch.mv_block
    mv_dest = scratch.mv_dest
    mv_via = scratch.mv_via
    mv_detach = scratch.mv_detach
    info = w.info
    wd_dest = w.wd_dest
    wd_mode = w.wd_mode
    reorg_rows = w.reorg_rows
    ew = w.ew  # G3: the game's own active_nations and event scratch
    garrison_phase0 = w.garrison_phase0
    garrison_waiting = w.garrison_waiting  # EatS II.4.2: eliminated this round (V6)
    cube_cap = rr.max_saved_cubes_per_front  # EatS X: per (side, front) pool (V8); 0: no cap
    lw = w.lw  # SoE 9.0
    ptabs0 = scratch.ptabs0
    ptabs1 = scratch.ptabs1
    ofc = scratch.ofc
    mscr = scratch.mscr
    fscr = scratch.fscr

    ofc.carry[:] = False  # the ORDER rows kept from step to step start with each game
    log_event_nb(log, ctr, state, EVENT.GAME_START, -1, -1, -1, -1, state.vp[0], state.phase[0])
    for s in range(2):
        shuffle_draw_pile_nb(cs, s, rng_chance)
    replenish_phase_nb(state, cs, kr, policies, rng_chance, rng_policy, log, ctr, cfg, ew.cp_card)  # G1

    outcome = OUTCOME.FINISHED
    winner = -1
    imm = -1
    for _phase_no in range(cfg.max_phases + 1):
        if _phase_no == cfg.max_phases:
            ctr[C_ABORT] = ABORT.PHASES
            break
        r = state.round[0]
        p = state.phase[0]
        ctr[C_PHASE_STEP0] = ctr[C_STEPS]
        log_event_nb(log, ctr, state, EVENT.PHASE_START, -1, -1, -1, -1, r, p)
        if p == PHASE_REPLENISH:
            log_event_nb(log, ctr, state, EVENT.ROUND_START, -1, -1, -1, -1, r, 0)
            lw.used[:] = False  # SoE 9.0: each leader's order once per round
            replenish_phase_nb(state, cs, kr, policies, rng_chance, rng_policy, log, ctr, cfg, ew.cp_card)
        elif p == PHASE_REINFORCEMENT:
            if cfg.no_reinforcement_phase:
                log_event_nb(log, ctr, state, EVENT.PHASE_SKIPPED, -1, -1, -1, -1, 1, 0)
            else:
                snapshot_nb(state, snap_status, snap_area, snap_sp, snap_garrison)
                arrivals_nb(state, m, er, condition_met, log, ctr, blocks, enemy, src, depot, w.supply, w.arrived)
                reinforcement_phase_nb(state, orders, m, er, rr, cfg, ew.active, policies, rng_policy, log, ctr, blocks,
                                       enemy, src, depot, depot_dist, w.supply)
                for b in range(nbk):  # keep the trackers (nothing is destroyed here)
                    if state.block_status[b] == STATUS.ELIMINATED_PERMANENT:
                        elim_ever[b] = True
            garrison_waiting[:] = False  # EatS II.4.2: the round track's garrisons are back (V6)
        else:
            # --- operation phase (SoE 7.0) -------------------------------------------------------
            onb.reset_phase_nb(state, orders, False)
            for i in range(n_areas):  # element loop: no temporary array (no reference counting here)
                garrison_phase0[i] = state.garrison_side[i]
            lw.order_leader[:] = -1
            block_half[:] = False
            wd_mode[:] = bnb.WITHDRAW_NONE
            extra_orders[:, :] = 0
            if cfg.two_front:
                for s in range(2):  # SoE 10.1
                    drawn, must = two_front_extra_draw_nb(cs, s, p, kr, rng_chance)
                    if drawn > 0 or must > 0:
                        log_event_nb(log, ctr, state, EVENT.CARDS_DRAWN, s, -1, -1, -1, drawn, must)
                        discard_down_nb(state, cs, s, must, policies, rng_policy, log, ctr, cfg, ew.cp_card)
            arrival_checks_nb(state, cs, cfg, condition_met, rng_chance, log, ctr)
            arrivals_nb(state, m, er, condition_met, log, ctr, blocks, enemy, src, depot, w.supply, w.arrived)
            card_play_nb(state, cs, orders, m, cfg, ew, policies, rng_chance, rng_policy, log, ctr, extra_orders)
            freeze_inactive_nb(state, orders, ew.active)  # G15 (after card play: card 23 activates at once)
            update_access_nb(state, cfg, ew)  # G15, G16: neutral ground, Kaunas, max_distance, fronts
            place_orders_nb(state, orders, m, orules, cfg, ew, policies, rng_policy, log, ctr, extra_orders, otype,
                            oarea, ptabs0, ptabs1, ofc)
            for gi in range(orules.execute_before_battles.shape[0]):
                # SoE 7.3: forced marches, Recon, moves, Withdraw (EatS VII: Quick Move, Move, Recon,
                # Reorganization, Railway transport, then Withdraw at the battle; V2)
                group = orules.execute_before_battles[gi]
                lwin = lnb.LW_BEFORE_FORCED if group == 0 else lnb.LW_BEFORE_MOVES
                if (group == 0 or group == 2) and leader_window_open_nb(
                        state.block_status, state.block_side, state.block_area, m.front, cfg.leaders, lw.scr.lids,
                        lw.used, lwin):
                    # SoE 9.0 leader windows (L2; EatS has no leaders, II.2)
                    leader_window_nb(state, cs, orders, m, orules, cfg, ew, lw, policies, rng_chance, rng_policy, log,
                                     ctr, lwin, mv_block,
                                     mv_dest, mv_via, mv_detach, info, wd_dest, wd_mode, snap_status, snap_area,
                                     snap_sp, snap_garrison, elim_ever, destroyed_ever, reorg_rows, mscr, fscr,
                                     ofc)
                if group_pending_nb(orders.order_front, orders.order_status, orders.order_type, orders.n_orders[0],
                                    cfg.card_fronts, group):
                    execute_orders_nb(state, cs, orders, m, orules, cfg, ew, policies, rng_chance, rng_policy, log,
                                      ctr, group, mv_block, mv_dest, mv_via, mv_detach, info,
                                      wd_dest, wd_mode, snap_status, snap_area, snap_sp, snap_garrison, elim_ever,
                                      destroyed_ever, reorg_rows, mscr, fscr)
            if leader_window_open_nb(state.block_status, state.block_side, state.block_area, m.front, cfg.leaders,
                                     lw.scr.lids, lw.used, lnb.LW_BEFORE_BATTLES):
                leader_window_nb(state, cs, orders, m, orules, cfg, ew, lw, policies, rng_chance, rng_policy, log, ctr,
                                 lnb.LW_BEFORE_BATTLES, mv_block, mv_dest, mv_via, mv_detach, info, wd_dest, wd_mode,
                                 snap_status, snap_area, snap_sp, snap_garrison, elim_ever, destroyed_ever, reorg_rows,
                                 mscr, fscr, ofc)
            lnb.full_strength_nb(orders, cfg.leaders, lw.order_leader)  # SoE 9.0 Budyonny
            battles_nb(state, cs, orders, m, cr, er, kr, cfg, ew, policies, rng_chance, rng_policy, log, ctr,
                       block_half, wd_mode, reorg_rows, snap_status, snap_area, snap_sp, snap_garrison, elim_ever,
                       destroyed_ever, scratch.bscr)
            if leader_window_open_nb(state.block_status, state.block_side, state.block_area, m.front, cfg.leaders,
                                     lw.scr.lids, lw.used, lnb.LW_AFTER_BATTLES):
                leader_window_nb(state, cs, orders, m, orules, cfg, ew, lw, policies, rng_chance, rng_policy, log, ctr,
                                 lnb.LW_AFTER_BATTLES, mv_block, mv_dest, mv_via, mv_detach, info, wd_dest, wd_mode,
                                 snap_status, snap_area, snap_sp, snap_garrison, elim_ever, destroyed_ever, reorg_rows,
                                 mscr, fscr, ofc)
            for gi in range(orules.execute_after_battles.shape[0]):  # SoE 7.5 Reorganize, 7.6 Rail Transport
                group = orules.execute_after_battles[gi]
                if not group_pending_nb(orders.order_front, orders.order_status, orders.order_type,
                                        orders.n_orders[0], cfg.card_fronts, group):
                    continue
                execute_orders_nb(state, cs, orders, m, orules, cfg, ew, policies, rng_chance, rng_policy, log, ctr,
                                  group, mv_block, mv_dest, mv_via, mv_detach, info,
                                  wd_dest, wd_mode, snap_status, snap_area, snap_sp, snap_garrison, elim_ever,
                                  destroyed_ever, reorg_rows, mscr, fscr)
            intern_nb(state, cfg, n_op, log, ctr, snap_status, snap_area, snap_sp, snap_garrison, elim_ever,
                      destroyed_ever)  # EatS II.3 Germany (V11; nothing without [internment])
            supply_nb(state, m, er, log, ctr, blocks, enemy, src, depot, depot_dist, w.supply,
                      snap_status, snap_area, snap_sp, snap_garrison, elim_ever, destroyed_ever, ew.active,
                      ew.hidden, w.oos_counts, w.vp_change)
            stacking_nb(state, m, er, log, ctr, blocks, enemy, src, depot, depot_dist, w.supply,
                        snap_status, snap_area, snap_sp, snap_garrison, elim_ever, destroyed_ever, ew.closed,
                        ew.nation_ok, w.pull_dest, w.pull_counts, w.insup)
            intern_nb(state, cfg, n_op, log, ctr, snap_status, snap_area, snap_sp, snap_garrison, elim_ever,
                      destroyed_ever)  # a block pulled back into the territory (7.33)
            if er.garrisons_in_supply_phase:  # EatS II.4.2 (V6)
                for i in range(n_areas):
                    if garrison_phase0[i] >= 0 and state.garrison_side[i] < 0:
                        garrison_waiting[i] = True
                supply_phase_garrisons_nb(state, m, log, ctr, blocks, enemy, src, depot, w.supply, garrison_waiting)
            control_nb(state, m, log, ctr, w.control_prev, w.vp_change)
            cap_saved_cubes_nb(state, cube_cap, log, ctr)  # EatS X (V8)
            imm = immediate_victory_nb(state, cfg)
        _after_phase_nb(state, cs, m, er, cfg, vp_start, log, ctr, elim_ever)
        if ctr[C_ABORT] != ABORT.NONE:
            break
        if imm >= 0:
            outcome = OUTCOME.IMMEDIATE_VICTORY
            winner = cfg.imm_side[imm]
            log_event_nb(log, ctr, state, EVENT.IMMEDIATE_VICTORY, winner, -1, -1, -1, imm, 0)
            break
        if r == state.end[0] and p == state.end[1]:
            break
        if p == PHASE_REPLENISH:
            state.phase[0] = 1
        elif p == PHASE_REINFORCEMENT:
            state.round[0] = r + 1
            state.phase[0] = PHASE_REPLENISH
        elif p >= n_op:
            state.phase[0] = PHASE_REINFORCEMENT
        else:
            state.phase[0] = p + 1

    if ctr[C_ABORT] != ABORT.NONE:
        outcome = OUTCOME.ABORTED
        winner = -1
        reason = ctr[C_ABORT]
        ctr[C_ABORT] = ABORT.NONE  # let the last events through if there is room
        log_event_nb(log, ctr, state, EVENT.ABORT, -1, -1, -1, -1, reason, 0)
        ctr[C_ABORT] = reason
    elif outcome == OUTCOME.FINISHED:
        score_objectives_nb(state, m, cfg, destroyed_ever, log, ctr)
        v = state.vp[0]
        winner = SIDE.POLISH if v > 0 else (SIDE.SOVIET if v < 0 else -1)
    log_event_nb(log, ctr, state, EVENT.GAME_END, winner, -1, -1, -1, outcome, state.vp[0])
    _record_invariants_nb(state, cs, m, er, cfg, vp_start, log, ctr, elim_ever)
    out[R_OUTCOME] = outcome
    out[R_WINNER] = winner
    out[R_VP] = state.vp[0]
    out[R_ROUNDS] = state.round[0] - start_round + 1
    out[R_STEPS] = ctr[C_STEPS]
    out[R_EVENTS] = ctr[C_EVENTS]
    out[R_ABORT] = ctr[C_ABORT]
    out[R_VIOLATIONS] = ctr[C_VIOLATIONS]
    out[R_VIOL_CODE] = ctr[C_VIOL_CODE]
    out[R_VIOL_STEP] = ctr[C_VIOL_STEP]
    out[R_VIOL_ROUND] = ctr[C_VIOL_ROUND]
    out[R_VIOL_PHASE] = ctr[C_VIOL_PHASE]
    out[R_PHASES] = ctr[C_PHASES]
    out[R_LAST_ROUND] = state.round[0]
    out[R_LAST_PHASE] = state.phase[0]
    return outcome


# --------------------------------------------------------------------------------------------------
# Many games in parallel


@njit(cache=True, _nrt=False, internal=True)
def _copy_array_nb(src, dst):
    """``dst[...] = src`` for C-contiguous arrays of one shape, element by element (no temporary)."""
    s = src.reshape(-1)
    d = dst.reshape(-1)
    for i in range(s.shape[0]):
        d[i] = s[i]


@njit(cache=True, _nrt=False)
def copy_state_into_nb(src, dst):
    """Every array of the GameState ``src`` into ``dst``'s (field order of the NamedTuple)."""
    _copy_array_nb(src.block_roster, dst.block_roster)
    _copy_array_nb(src.block_side, dst.block_side)
    _copy_array_nb(src.block_arm, dst.block_arm)
    _copy_array_nb(src.block_class, dst.block_class)
    _copy_array_nb(src.block_nation, dst.block_nation)
    _copy_array_nb(src.block_max_sp, dst.block_max_sp)
    _copy_array_nb(src.block_sp, dst.block_sp)
    _copy_array_nb(src.block_area, dst.block_area)
    _copy_array_nb(src.block_status, dst.block_status)
    _copy_array_nb(src.block_prev_area, dst.block_prev_area)
    _copy_array_nb(src.block_arrival, dst.block_arrival)
    _copy_array_nb(src.block_in_supply, dst.block_in_supply)
    _copy_array_nb(src.block_arrive_round, dst.block_arrive_round)
    _copy_array_nb(src.block_arrive_phase, dst.block_arrive_phase)
    _copy_array_nb(src.block_arrive_area, dst.block_arrive_area)
    _copy_array_nb(src.block_arrive_sp, dst.block_arrive_sp)
    _copy_array_nb(src.block_arrive_condition, dst.block_arrive_condition)
    _copy_array_nb(src.garrison_side, dst.garrison_side)
    _copy_array_nb(src.control, dst.control)
    _copy_array_nb(src.round, dst.round)
    _copy_array_nb(src.phase, dst.phase)
    _copy_array_nb(src.end, dst.end)
    _copy_array_nb(src.vp, dst.vp)
    _copy_array_nb(src.initiative_side, dst.initiative_side)
    _copy_array_nb(src.initiative_level, dst.initiative_level)
    _copy_array_nb(src.cubes, dst.cubes)
    _copy_array_nb(src.supply_base, dst.supply_base)


@njit(cache=True, _nrt=False)
def copy_cards_into_nb(src, dst):
    """Every array of the CardState ``src`` into ``dst``'s (field order of the NamedTuple)."""
    _copy_array_nb(src.location, dst.location)
    _copy_array_nb(src.use, dst.use)
    _copy_array_nb(src.pile, dst.pile)
    _copy_array_nb(src.pile_top, dst.pile_top)
    _copy_array_nb(src.pile_len, dst.pile_len)
    _copy_array_nb(src.orders, dst.orders)
    _copy_array_nb(src.combat_modifier, dst.combat_modifier)
    _copy_array_nb(src.cubes, dst.cubes)
    _copy_array_nb(src.event_kind, dst.event_kind)
    _copy_array_nb(src.front, dst.front)
    _copy_array_nb(src.remove_after_event, dst.remove_after_event)
    _copy_array_nb(src.battle_effect, dst.battle_effect)
    _copy_array_nb(src.battle_limit, dst.battle_limit)


@njit(cache=True, _nrt=False)
def copy_orders_into_nb(src, dst):
    """Every array of the OrderState ``src`` into ``dst``'s (field order of the NamedTuple)."""
    _copy_array_nb(src.order_side, dst.order_side)
    _copy_array_nb(src.order_front, dst.order_front)
    _copy_array_nb(src.order_type, dst.order_type)
    _copy_array_nb(src.order_area, dst.order_area)
    _copy_array_nb(src.order_status, dst.order_status)
    _copy_array_nb(src.order_executed, dst.order_executed)
    _copy_array_nb(src.order_block, dst.order_block)
    _copy_array_nb(src.n_orders, dst.n_orders)
    _copy_array_nb(src.arrival, dst.arrival)
    _copy_array_nb(src.pool_used, dst.pool_used)
    _copy_array_nb(src.placed, dst.placed)
    _copy_array_nb(src.recon_placed, dst.recon_placed)
    _copy_array_nb(src.executed, dst.executed)
    _copy_array_nb(src.block_order, dst.block_order)
    _copy_array_nb(src.forced_march, dst.forced_march)
    _copy_array_nb(src.reorganizing, dst.reorganizing)
    _copy_array_nb(src.pinned, dst.pinned)
    _copy_array_nb(src.moved, dst.moved)
    _copy_array_nb(src.rail_moved, dst.rail_moved)
    _copy_array_nb(src.fought, dst.fought)
    _copy_array_nb(src.detached, dst.detached)
    _copy_array_nb(src.seen, dst.seen)


@njit(cache=True, _nrt=True, internal=True)
def reduce_game_nb(log, n, sp0, arm, state, m_vp, key_areas, stats, key_ctrl, traj_round, traj_phase, traj_vp, bat):
    """Reduce one game's event log (first ``n`` events) and final ``state`` into ``stats``
    (N_STATS,), ``key_ctrl`` (n_key,), the VP after every phase (``traj_*``, as many as fit) and the
    battle rows (``bat`` (cap, N_BT), as many as fit). Returns (phases, battles) counted."""
    sp = sp0.astype(np.int64)  # SP of every block, replayed from the events
    stats[:] = 0
    stats[S_IMMEDIATE] = -1
    vp = np.int64(0)
    n_ph = 0
    n_bat = 0
    last_winner = -1
    cap_ph = traj_vp.shape[0]
    cap_bat = bat.shape[0]
    for i in range(n):
        e = log[i]
        k = e["kind"]
        if k == EVENT.GAME_START:
            vp = np.int64(e["value"])
            stats[S_VP_START] = e["value"]
        elif k == EVENT.PHASE_START:
            if 0 < n_ph <= cap_ph:
                traj_vp[n_ph - 1] = vp
            if n_ph < cap_ph:
                traj_round[n_ph] = e["value"]
                traj_phase[n_ph] = e["value2"]
            n_ph += 1
        elif k == EVENT.VP:
            d = np.int64(e["value"])
            vp += d
            c = e["value2"]
            col = S_VP_OTHER
            sub = -1
            if 0 <= c < VP_COLUMNS.shape[0]:
                col = VP_COLUMNS[c, 0]
                sub = VP_COLUMNS[c, 1]
            stats[col] += d
            if sub >= 0:
                stats[sub] += d
        elif k == EVENT.BATTLE:
            stats[S_BATTLES] += 1
            if e["value2"] != 0:
                stats[S_BATTLES_FOUGHT] += 1
            if e["side"] >= 0:
                stats[S_ATTACKS + e["side"]] += 1
            last_winner = e["value"]
            if last_winner >= 0:
                stats[S_BATTLES_WON + last_winner] += 1
            if n_bat < cap_bat:
                r = bat[n_bat]
                r[BT_ROUND] = e["round"]
                r[BT_PHASE] = e["phase"]
                r[BT_AREA] = e["area"]
                r[BT_ATTACKER] = e["side"]
                r[BT_WINNER] = e["value"]
                r[BT_FOUGHT] = e["value2"]
            n_bat += 1
        elif k == EVENT.BATTLE_LOSSES:
            if e["block"] != 0 and last_winner >= 0:
                stats[S_GREAT_VICTORIES + last_winner] += 1
            if 0 < n_bat <= cap_bat:
                r = bat[n_bat - 1]
                r[BT_ATT_LOSSES] = e["value"]
                r[BT_DEF_LOSSES] = e["value2"]
                r[BT_GREAT] = e["block"]
        elif k == EVENT.BLOCK_LOSS:
            b = e["block"]
            d = np.int64(e["value"])
            sp[b] -= d
            s = e["side"]
            if e["value2"] == CAUSE.BATTLE:
                stats[S_SP_LOST_BATTLE + s] += d
            elif e["value2"] == CAUSE.SUPPLY:
                stats[S_SP_LOST_SUPPLY + s] += d
            else:
                stats[S_SP_LOST_OTHER + s] += d
        elif k == EVENT.BLOCK_REMOVED:
            b = e["block"]
            s = e["side"]
            st = e["value"]
            if st == STATUS.DESTROYED_TO_POOL or st == STATUS.ELIMINATED_PERMANENT:
                d = sp[b]
                c = e["value2"]
                if c == CAUSE.BATTLE:
                    stats[S_SP_LOST_BATTLE + s] += d
                    if st == STATUS.DESTROYED_TO_POOL:
                        stats[S_DESTROYED_BATTLE + s] += 1
                    else:
                        stats[S_ELIM_BATTLE + s] += 1
                        if arm[b] != ARM.LEADER:  # eliminated for want of a retreat (SoE 7.42)
                            stats[S_ENCIRCLED + s] += 1
                elif c == CAUSE.SUPPLY:
                    stats[S_SP_LOST_SUPPLY + s] += d
                    stats[S_ELIM_SUPPLY + s] += 1
                elif c == CAUSE.STACKING:
                    stats[S_SP_LOST_OTHER + s] += d
                    stats[S_ELIM_STACKING + s] += 1
                else:
                    stats[S_SP_LOST_OTHER + s] += d
                    stats[S_ELIM_OTHER + s] += 1
                if arm[b] == 2:  # ARM.LEADER
                    stats[S_LEADERS_LOST + s] += 1
            sp[b] = 0
        elif k == EVENT.BLOCK_PLACED or k == EVENT.STRENGTHEN:
            sp[e["block"]] = e["value"]
        elif k == EVENT.REINFORCEMENT_ARRIVED or k == EVENT.BUILD:
            sp[e["block"]] = e["value"]
            if e["side"] >= 0:
                stats[(S_REINFORCEMENTS if k == EVENT.REINFORCEMENT_ARRIVED else S_BUILDS) + e["side"]] += 1
        elif k == EVENT.COMBINE:
            sp[e["block"]] = e["value2"]
            if 0 <= e["value"] < sp.shape[0]:
                sp[e["value"]] = 0
        elif k == EVENT.REORGANIZED:
            sp[e["block"]] += e["value"]
        elif k == EVENT.MOVE:
            if e["value2"] > 0:
                sp[e["block"]] -= e["value2"]
        elif k == EVENT.GARRISON_REMOVED:
            if e["side"] >= 0:
                stats[S_GARRISONS_LOST + e["side"]] += 1
        elif k == EVENT.CONTROL:
            if e["side"] >= 0:
                stats[S_CITIES_CAPTURED + e["side"]] += 1
        elif k == EVENT.OBJECTIVE:
            if e["side"] >= 0 and e["block"] != 0:
                stats[S_OBJECTIVES + e["side"]] += 1
        elif k == EVENT.IMMEDIATE_VICTORY:
            stats[S_IMMEDIATE] = e["value"]
        elif k == EVENT.LEADER_LOST:
            if e["value"] == LEADER_KILLED:
                stats[S_LEADERS_KILLED + e["side"]] += 1
            elif e["value"] == LEADER_CAPTURED:
                stats[S_LEADERS_CAPTURED + e["side"]] += 1
        elif k == EVENT.LEADER_ORDER:
            stats[S_LEADER_ORDERS + e["side"]] += 1
    if 0 < n_ph <= cap_ph:
        traj_vp[n_ph - 1] = vp
    for a in range(m_vp.shape[0]):
        c = state.control[a]
        if m_vp[a] > 0 and c >= 0:
            stats[S_CITIES_END + c] += 1
            stats[S_CITY_VP_END + c] += m_vp[a]
    for b in range(state.block_side.shape[0]):
        if state.block_status[b] == STATUS.ON_MAP:
            s = state.block_side[b]
            stats[S_SP_END + s] += state.block_sp[b]
            stats[S_BLOCKS_END + s] += 1
            if sp[b] != state.block_sp[b]:
                stats[S_SP_TRACK_ERRORS] += 1
    for j in range(key_areas.shape[0]):
        key_ctrl[j] = state.control[key_areas[j]]
    return n_ph, n_bat


@njit(cache=True, nogil=True, _nrt=False)
def play_games_serial_nb(state0, cs0, orders0, m, cr, er, kr, rr, orules, cfg, pset, scratch, log, st, cs, orders,
                         ctr, rng_chance, rng_policy, seeds, reduce, key_areas, res, stats, key_ctrl, traj_round,
                         traj_phase, traj_vp, bat, counts):
    """Games from the same start (``state0`` / ``cs0`` / ``orders0`` unchanged) one after the other,
    without the GIL: the one compiled game loop of the package.

    :func:`~soe_sim.engine.game.play_game`, :func:`~soe_sim.engine.game.play_games` and
    :func:`soe_sim.simulate` all play through this kernel, and the loop (:func:`play_game_policies_nb`)
    is inlined into it: numba optimises and compiles the whole engine again for every kernel that
    calls the loop, so one caller and no library of the loop's own save those compilations
    (docs/engine-design.md "Compile time"). Threads (``run_chunks``) each call it with their own copy
    of the read-only inputs, so that the reference counts of their arrays are not shared between
    cores, and their own work from :func:`soe_sim.engine.game.work.batch_work`, kept across chunks:
    ``pset``, ``scratch``, the event ``log`` (it serves every game: its entries are written before
    they are counted), the game's ``st`` / ``cs`` / ``orders`` (each game starts with a copy of the
    start in them; they hold the last game's final position afterwards), ``ctr`` (N_CTR,) int64 and
    the stream states ``rng_chance`` (1,) / ``rng_policy`` (2,) uint64. ``seeds`` (n_games, 3) uint64:
    each game's stream seeds. Compiled without reference counting: it allocates nothing
    (:func:`reduce_game_nb` allocates and frees its own scratch).

    ``res`` (n_games, N_RES) int64 receives each game's result row. With ``reduce`` each game is
    also reduced by :func:`reduce_game_nb` into ``stats[g]`` (N_STATS,), ``key_ctrl[g]`` (controller
    of ``key_areas`` at the end), ``traj_*[g]``, ``bat[g]`` and ``counts[g]`` (2,) = phases, battles
    counted; without it those arrays are not touched (they may have zero columns)."""
    for g in range(seeds.shape[0]):
        copy_state_into_nb(state0, st)
        copy_cards_into_nb(cs0, cs)
        copy_orders_into_nb(orders0, orders)
        rng_chance[0] = seeds[g, 0]
        rng_policy[0] = seeds[g, 1]
        rng_policy[1] = seeds[g, 2]
        play_game_policies_nb(st, cs, orders, m, cr, er, kr, rr, orules, cfg, pset, scratch, rng_chance, rng_policy,
                              log, ctr, res[g])
        if reduce:
            n_ph, n_bat = reduce_game_nb(log, ctr[C_EVENTS], state0.block_sp, state0.block_arm, st, m.vp, key_areas,
                                         stats[g], key_ctrl[g], traj_round[g], traj_phase[g], traj_vp[g], bat[g])
            counts[g, 0] = n_ph
            counts[g, 1] = n_bat


# --------------------------------------------------------------------------------------------------
# Stream seeds of many games (numpy's SeedSequence, replicated)

_SS_INIT_A = 0x43B0D7E5
_SS_MULT_A = 0x931E8875
_SS_INIT_B = 0x8B51F9DD
_SS_MULT_B = 0x58F38DED
_SS_MIX_MULT_L = 0xCA01F9DD
_SS_MIX_MULT_R = 0x4973F715
_M32 = 0xFFFFFFFF


@njit(cache=True, _nrt=False, internal=True)
def _ss_pool_nb(words, n_words, pool_size, pool):
    """``numpy.random.SeedSequence``'s entropy pool (``mix_entropy``) of the uint32 entropy words
    ``words[:n_words]`` (held in uint64)."""
    hc = np.uint64(_SS_INIT_A)
    for i in range(pool_size):
        v = words[i] if i < n_words else np.uint64(0)
        v ^= hc
        hc = (hc * np.uint64(_SS_MULT_A)) & np.uint64(_M32)
        v = (v * hc) & np.uint64(_M32)
        v ^= v >> np.uint64(16)
        pool[i] = v
    for i_src in range(pool_size):
        for i_dst in range(pool_size):
            if i_src != i_dst:
                v = pool[i_src]
                v ^= hc
                hc = (hc * np.uint64(_SS_MULT_A)) & np.uint64(_M32)
                v = (v * hc) & np.uint64(_M32)
                v ^= v >> np.uint64(16)
                r = (np.uint64(_SS_MIX_MULT_L) * pool[i_dst] - np.uint64(_SS_MIX_MULT_R) * v) & np.uint64(_M32)
                r ^= r >> np.uint64(16)
                pool[i_dst] = r
    for i_src in range(pool_size, n_words):
        for i_dst in range(pool_size):
            v = words[i_src]
            v ^= hc
            hc = (hc * np.uint64(_SS_MULT_A)) & np.uint64(_M32)
            v = (v * hc) & np.uint64(_M32)
            v ^= v >> np.uint64(16)
            r = (np.uint64(_SS_MIX_MULT_L) * pool[i_dst] - np.uint64(_SS_MIX_MULT_R) * v) & np.uint64(_M32)
            r ^= r >> np.uint64(16)
            pool[i_dst] = r


@njit(cache=True, _nrt=True, internal=True)
def _ss_state64_nb(pool, pool_size):
    """``generate_state(1, dtype=uint64)[0]`` of a SeedSequence with entropy pool ``pool``."""
    hc = np.uint64(_SS_INIT_B)
    w = np.zeros(2, dtype=np.uint64)
    for i in range(2):
        v = pool[i % pool_size]
        v ^= hc
        hc = (hc * np.uint64(_SS_MULT_B)) & np.uint64(_M32)
        v = (v * hc) & np.uint64(_M32)
        v ^= v >> np.uint64(16)
        w[i] = v
    return w[0] | (w[1] << np.uint64(32))


@njit(cache=True, _nrt=True)
def game_stream_seeds_nb(prefix, pool_size, start, out):
    """The stream seeds of games ``start .. start + out.shape[0] - 1`` of a batch: row ``g`` of ``out``
    (n, 3) uint64 = ``chunk_seeds(SeedSequence(entropy, spawn_key=key + (start + g,)), 3)``, i.e. child
    ``j`` has spawn key ``key + (game, j)``. ``prefix`` (uint64) holds the uint32 words of the batch's
    entropy (zero-padded to ``pool_size``) followed by those of ``key`` (see
    :func:`soe_sim.engine.game.game_stream_seeds`)."""
    k = prefix.shape[0]
    words = np.zeros(k + 4, dtype=np.uint64)
    for q in range(k):
        words[q] = prefix[q]
    pool = np.zeros(pool_size, dtype=np.uint64)
    for g in range(out.shape[0]):
        i = np.uint64(start + g)
        nw = k
        if i == 0:
            words[nw] = 0
            nw += 1
        else:
            while i > 0:
                words[nw] = i & np.uint64(_M32)
                i >>= np.uint64(32)
                nw += 1
        for j in range(3):
            words[nw] = j
            _ss_pool_nb(words, nw + 1, pool_size, pool)
            out[g, j] = _ss_state64_nb(pool, pool_size)
