"""Decision policies of the game loop (numba), selected by an integer id (docs/policies.md).

At every decision the loop (:mod:`soe_sim.engine.game.nb`) knows the legal options (rows of the
module that owns the decision). For every policy but ``random`` it also fills a per-decision
**feature matrix** ``feat`` (``n_options`` × :data:`N_FEAT` float64, kind-specific columns named in
:data:`FEATURES`) with :func:`fill_*_features_nb`; the features use only what the deciding side
knows (its own blocks; enemy positions and block counts; enemy strengths only of blocks it has seen,
``OrderState.seen``) unless the side's ``omniscient`` parameter is set. The policy then picks an
index with :func:`choose_option_nb` ``(policy_id, params, kind, feat, n, rng, side)``:

* ``random`` (:data:`POLICY_RANDOM`): uniform, one draw of the side's policy stream (the control
  group; features are not even computed, so random play is exactly the engine's original one);
* ``aggressive`` / ``defensive`` / ``balanced``: the *scripted* scorer :func:`score_options_nb`
  with the policy's parameter vector (:data:`PARAMS`, :data:`DEFAULT_PARAMS`); the best-scoring
  option wins, ties broken uniformly from the side's own policy stream;
* :data:`POLICY_PYTHON`: a Python object's ``choose(decision, options, state_view)`` reached through
  ``numba.objmode`` (slow path, :func:`soe_sim.engine.game.play_game` only).

``rng`` is the deciding side's own SplitMix64 stream (a ``uint64`` view of length 1), so two runs
that differ only in one side's policy see the same chance stream (common random numbers).

Adding a jitted policy: docs/policies.md "A numba policy" (a new id in :data:`POLICY_IDS`, a branch
in :func:`choose_option_nb`, a parameter row in :data:`DEFAULT_PARAMS`).
"""
from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from soe_sim._jit import njit
from soe_sim.battle import nb as bnb
from soe_sim.data.enums import ARM, EVENT_KIND
from soe_sim.engine.battles import nb as engine_battles_nb
from soe_sim.engine.battles.nb import battle_inputs_nb, defender_side_nb
from soe_sim.engine.cards.nb import (
    DISCARD,
    DRAW_PILE,
    HAND,
    IN_PLAY,
    N_CUBE_KINDS,
    NO_CARD,
    USE_CUBES,
    USE_EVENT,
    USE_ORDERS,
    rand_below_nb,
)
from soe_sim.engine.events import nb as enb
from soe_sim.engine.leaders import nb as lnb
from soe_sim.engine.orders import nb as onb
from soe_sim.engine.state import STATUS

__all__ = [
    "DECISION", "POLICY_RANDOM", "POLICY_AGGRESSIVE", "POLICY_DEFENSIVE", "POLICY_BALANCED", "POLICY_PYTHON",
    "POLICY_IDS", "SCRIPTED", "PARAMS", "PARAM_DOCS", "PARAM_RANGES", "N_PARAMS", "DEFAULT_PARAMS", "FEATURES",
    "N_FEAT",
    "PolicySet", "choose_nb", "choose_option_nb", "score_options_nb", "random_policy_nb", "policy_id",
    "default_params",
]


# --------------------------------------------------------------------------------------------------
# Decision kinds (the loop's numba mirror; soe_sim.engine.game.Decision is the IntEnum)


class _DecisionC(NamedTuple):
    DISCARD: int = 0  # SoE 6.0, 10.1: discard down to the hand limit (one card per decision)
    CARD_PLAY: int = 1  # SoE 7.1: (card, use) per front, pass included
    FIRST_PLAYER: int = 2  # SoE 6.1, 7.2: the initiative holder chooses who places first
    ORDER: int = 3  # SoE 7.2: place an order marker
    EXEC_FIRST: int = 4  # SoE 6.1, 7.3: who executes an order type first
    MOVE: int = 5  # SoE 7.31: one move of an order's execution
    BATTLE_ORDER: int = 6  # SoE 7.4, 10.0: the initiative holder picks the next of equal-size battles (E-B1)
    BATTLE_CARD: int = 7  # SoE 7.41.1: play a battle card (or none)
    COMBAT_CARD: int = 8  # SoE 7.41.2: blind draw or a hand card
    ADVANCE: int = 9  # SoE 7.43: the winning attacker sends one block back (or stops: the rest stay)
    REORGANIZE: int = 10  # SoE 7.5
    RAIL: int = 11  # SoE 7.6
    GARRISON: int = 12  # SoE 8.1: place a free garrison (0) or not (1)
    COMBINE: int = 13  # SoE 8.2: pass or one absorption
    REINFORCE: int = 14  # SoE 8.3, 8.4: pass, strengthen one block or build one block
    EVENT_TARGET: int = 15  # SoE 7.13, 7.1 item 6: the area / block an event acts on (events.nb rows)
    REACTION: int = 16  # SoE 7.1 item 6, 7.41.4: pass (0) or play one of the playable reaction cards
    WITHDRAW_LOSS: int = 17  # SoE 7.2 Withdraw: the block that loses the withdrawal SP (O8)
    EXEC_ORDER: int = 18  # SoE 7.3: which of its orders of the group a side executes next (G8)
    LEADER: int = 19  # SoE 9.0: pass (0) or give one leader order (leaders.nb rows)


DECISION = _DecisionC()

# --------------------------------------------------------------------------------------------------
# Policy ids (POLICY_IDS is the single registry of named policies; soe_sim.sim uses it)

POLICY_RANDOM = 0  # uniform over the legal options: the control group
POLICY_AGGRESSIVE = 1
POLICY_DEFENSIVE = 2
POLICY_BALANCED = 3
N_POLICIES = 4
POLICY_PYTHON = 99  # a Python object (objmode, play_game only); not a name in POLICY_IDS

POLICY_IDS = {"random": POLICY_RANDOM, "aggressive": POLICY_AGGRESSIVE, "defensive": POLICY_DEFENSIVE,
              "balanced": POLICY_BALANCED}
SCRIPTED = ("aggressive", "defensive", "balanced")

# --------------------------------------------------------------------------------------------------
# Parameters: one float64 row per side (PolicySet.params[side]); names and meaning documented here and
# in docs/policies.md. Every scripted policy uses the same scorer; they differ only by these numbers.

PARAM_DOCS = {
    "omniscient": "1: features use the true SP of every enemy block (comparison switch); 0: only seen blocks",
    "unknown_sp": "SP assumed for an enemy block not yet seen (Recon, battle)",
    "attack_threshold": "minimum exact attacker win probability for an attack to score positively",
    "attack_weight": "weight of an attack: (p_win - attack_threshold) x (1 + area VP + enemy SP / 4)",
    "capture_weight": "score per VP of entering an enemy-controlled, undefended area",
    "hold_weight": "score per VP of keeping own key cities occupied (penalty for leaving a threatened one, "
                   "bonus for reinforcing it)",
    "defend_weight": "weight of a Defend order in a threatened own area (x threat x (1 + VP))",
    "withdraw_ratio": "Withdraw when the known adjacent enemy SP is at least this multiple of own SP",
    "advance_weight": "bonus for moving next to the enemy (towards the front)",
    "recon_weight": "score per unseen enemy block in a Recon area",
    "keep_cards": "number of best combat cards kept in hand (not played for orders or cubes)",
    "hand_margin": "play a combat card from hand when its value (+ hand bonus) beats the expected blind draw "
                   "(after the draw, EatS IX.3 combat.choose_after_draw: the drawn card's value) by at least this; "
                   "only while card_min_gain is 0",
    "orders_weight": "value of one order printed on a card (card play, discards)",
    "cubes_weight": "value of one reinforcement cube printed on a card (card play, discards)",
    "battle_card": "score of playing a battle card (> 0: play it — by the stakes while card_min_gain > 0 —, "
                   "<= 0: keep it)",
    "place_first": "preference for placing orders first (1 first, 0 second, 0.5 indifferent)",
    "exec_first": "preference for executing an order group first (1 first, 0 second, 0.5 indifferent)",
    "reserve": "own blocks to keep in a threatened own key city: leaving it with fewer costs hold_weight x VP",
    "front_weight": "reinforcement bonus for strengthening / building next to the enemy",
    "combine_weight": "score per SP gained by combining blocks (8.2), minus 0.5 per block given up",
    "leader_reserve": "score a leader's once-per-round order (SoE 9.0) must exceed to be given: the value of "
                      "keeping the ability for later in the round",
    "reinforce_risk": "weight, in an attack order's p_win, of the known enemy SP next to the target moving in "
                      "before the attack (0: ignored, 1: assumed; the placed order must still send a block, "
                      "SoE 7.3)",
    "marker_risk": "weight, in an attack order's p_win, of an enemy order marker already in the target being "
                   "a Defend order (markers lie face down, SoE 7.2: the side sees where, not what)",
    "card_min_gain": "play a combat card from hand (a battle card) only when it raises this battle's exact win "
                     "chance over the draw (over none), weighted by 1 + area VP / 2, plus 0.1 per SP of expected "
                     "net losses saved, by at least this (COMBAT_CARD / BATTLE_CARD ``p_win``); 0: off — "
                     "hand_margin's card-value rule, and battle_card's sign",
    "slot": "(Python policies) the registry slot of the Python object; set by play_game",
}
PARAMS = tuple(PARAM_DOCS)
N_PARAMS = len(PARAMS)
# The values a parameter override may take, ``(low, high, integer)`` (inclusive; None: unbounded):
# probabilities and preferences in [0, 1], counts of cards and blocks whole and non-negative, the
# switch 0 or 1; the weights may be any finite number (a negative weight is a legitimate experiment).
PARAM_RANGES = {
    "omniscient": (0, 1, True), "unknown_sp": (0, None, False), "attack_threshold": (0, 1, False),
    "withdraw_ratio": (0, None, False), "keep_cards": (0, None, True), "place_first": (0, 1, False),
    "exec_first": (0, 1, False), "reserve": (0, None, True), "reinforce_risk": (0, 1, False),
    "marker_risk": (0, 1, False), "card_min_gain": (0, None, False),
}
P_OMNISCIENT = PARAMS.index("omniscient")
P_UNKNOWN_SP = PARAMS.index("unknown_sp")
P_ATTACK_THRESHOLD = PARAMS.index("attack_threshold")
P_ATTACK_WEIGHT = PARAMS.index("attack_weight")
P_CAPTURE_WEIGHT = PARAMS.index("capture_weight")
P_HOLD_WEIGHT = PARAMS.index("hold_weight")
P_DEFEND_WEIGHT = PARAMS.index("defend_weight")
P_WITHDRAW_RATIO = PARAMS.index("withdraw_ratio")
P_ADVANCE_WEIGHT = PARAMS.index("advance_weight")
P_RECON_WEIGHT = PARAMS.index("recon_weight")
P_KEEP_CARDS = PARAMS.index("keep_cards")
P_HAND_MARGIN = PARAMS.index("hand_margin")
P_ORDERS_WEIGHT = PARAMS.index("orders_weight")
P_CUBES_WEIGHT = PARAMS.index("cubes_weight")
P_BATTLE_CARD = PARAMS.index("battle_card")
P_PLACE_FIRST = PARAMS.index("place_first")
P_EXEC_FIRST = PARAMS.index("exec_first")
P_RESERVE = PARAMS.index("reserve")
P_FRONT_WEIGHT = PARAMS.index("front_weight")
P_COMBINE_WEIGHT = PARAMS.index("combine_weight")
P_LEADER_RESERVE = PARAMS.index("leader_reserve")
P_REINFORCE_RISK = PARAMS.index("reinforce_risk")
P_MARKER_RISK = PARAMS.index("marker_risk")
P_CARD_MIN_GAIN = PARAMS.index("card_min_gain")
P_SLOT = PARAMS.index("slot")

_BASE = dict(omniscient=0.0, unknown_sp=3.0, attack_threshold=0.55, attack_weight=2.0, capture_weight=2.0,
             hold_weight=1.5, defend_weight=1.0, withdraw_ratio=3.0, advance_weight=0.3, recon_weight=0.3,
             keep_cards=1.0, hand_margin=0.5, orders_weight=1.0, cubes_weight=0.5, battle_card=1.0,
             place_first=0.0, exec_first=0.5, reserve=1.0, front_weight=1.0, combine_weight=1.0,
             leader_reserve=0.2, reinforce_risk=0.0, marker_risk=0.5, card_min_gain=0.03, slot=-1.0)
_DEFAULTS = {
    "random": dict(_BASE),
    "aggressive": dict(_BASE, attack_threshold=0.4, attack_weight=3.0, capture_weight=3.0, hold_weight=0.5,
                       defend_weight=0.2, withdraw_ratio=99.0, advance_weight=0.5, keep_cards=0.0, hand_margin=0.0,
                       exec_first=1.0, reserve=0.0, leader_reserve=0.0, marker_risk=0.25),
    "defensive": dict(_BASE, attack_threshold=0.6, attack_weight=2.0, capture_weight=1.5, hold_weight=3.0,
                      defend_weight=2.0, withdraw_ratio=2.0, advance_weight=0.1, keep_cards=2.0, hand_margin=1.0,
                      exec_first=0.0, reserve=1.0, leader_reserve=0.5, marker_risk=0.75),
    "balanced": dict(_BASE),
}
DEFAULT_PARAMS = np.array([[_DEFAULTS[name][k] for k in PARAMS] for name in POLICY_IDS], dtype=np.float64)
"""(N_POLICIES, N_PARAMS) float64: the default parameter row of each named policy (row = id)."""

# --------------------------------------------------------------------------------------------------
# Features: kind -> column names (N_FEAT float64 columns; unused columns are 0)

N_FEAT = 20
FEATURES = {
    DECISION.DISCARD: ("card", "orders", "cubes", "combat_mod", "battle_card", "historical"),
    DECISION.CARD_PLAY: ("card", "use", "orders", "cubes", "combat_mod", "hand_size", "better_in_hand", "front",
                         "event_value"),
    DECISION.FIRST_PLAYER: ("opponent_first", "step", "front"),
    DECISION.EXEC_FIRST: ("opponent_first", "step", "front"),
    DECISION.ORDER: ("type", "area", "area_vp", "control", "own_blocks", "own_sp", "enemy_blocks", "enemy_sp",
                     "own_sp_adjacent", "enemy_blocks_adjacent", "enemy_sp_adjacent", "in_supply",
                     "enemy_garrison", "p_win", "target_vp", "unseen_enemy"),
    DECISION.MOVE: ("stop", "block", "dest", "attack", "p_win", "dest_vp", "dest_control", "stack_room",
                    "enemy_sp", "block_sp", "origin_vp", "origin_left", "origin_threat", "dest_enemy_adjacent",
                    "detach", "att_sp"),
    DECISION.RAIL: ("stop", "block", "dest", "attack", "p_win", "dest_vp", "dest_control", "stack_room",
                    "enemy_sp", "block_sp", "origin_vp", "origin_left", "origin_threat", "dest_enemy_adjacent",
                    "detach", "att_sp"),
    DECISION.BATTLE_CARD: ("card", "attacker", "own_sp", "enemy_sp", "area_vp", "combat_value", "enemy_extra_loss",
                           "own_loss_reduction", "p_win", "p_win_none", "net_sp", "net_sp_none", "area"),
    DECISION.COMBAT_CARD: ("card", "value", "expected_blind", "orders", "cubes", "attacker", "own_sp", "enemy_sp",
                           "area_vp", "hand_size", "after_draw", "drawn_card", "drawn", "p_win", "p_win_draw",
                           "net_sp", "net_sp_draw", "area"),
    DECISION.REORGANIZE: ("block", "sp", "max_sp", "deficit"),
    DECISION.GARRISON: ("place", "area", "area_vp"),
    DECISION.COMBINE: ("pass", "absorber", "absorbed", "absorber_sp", "absorbed_sp", "area", "gain"),
    DECISION.REINFORCE: ("kind", "block", "area", "sp", "max_sp", "area_vp", "front_line", "enemy_sp_adjacent"),
    DECISION.EVENT_TARGET: ("card", "target", "target_kind", "friendly", "area", "area_vp", "enemy_blocks",
                            "enemy_sp", "enemy_sp_adjacent", "block_sp", "loss", "destroys"),
    DECISION.REACTION: ("pass", "card", "event_value", "vp", "enemy_sp_loss", "cards", "initiative", "cubes",
                        "blocks_sp", "orders", "card_cubes", "combat_mod"),
    DECISION.LEADER: ("type", "area", "area_vp", "control", "own_blocks", "own_sp", "enemy_blocks", "enemy_sp",
                      "own_sp_adjacent", "enemy_blocks_adjacent", "enemy_sp_adjacent", "in_supply",
                      "enemy_garrison", "p_win", "target_vp", "unseen_enemy", "leader", "ability", "block",
                      "countermands"),
    DECISION.BATTLE_ORDER: ("area", "size", "area_vp", "own_blocks", "own_sp", "enemy_blocks", "enemy_sp",
                            "attacker", "p_win", "front"),
    DECISION.ADVANCE: ("stop", "block", "sp", "back", "back_vp", "back_control", "back_own_blocks", "back_threat",
                       "area_vp", "area_threat", "staying", "overstack"),
    DECISION.WITHDRAW_LOSS: ("block", "sp", "max_sp", "destroys", "leader", "cavalry"),
    DECISION.EXEC_ORDER: ("order", "type", "area", "area_vp", "movers", "enemy_in_area", "enemy_adjacent", "rank"),
}
for _v in FEATURES.values():
    assert len(_v) <= N_FEAT

# rows of the per-area arrays of the ORDER features (_order_known_nb); K_FREE_SP: the own SP not yet
# committed to an attack order placed in the current placement step (commit_order_nb; = K_OWN_SP outside it)
# K_EN_MARK: the enemy order markers (face down) placed in the area this phase
K_OWN_N, K_OWN_SP, K_EN_N, K_EN_SP, K_UNSEEN, K_INSUP, K_DEFICIT, K_FREE_SP, K_EN_MARK = range(9)
N_KNOWN = 9


def default_params(name) -> np.ndarray:
    """A copy of the default parameter row of a named policy."""
    return DEFAULT_PARAMS[policy_id(name)].copy()


def policy_id(name) -> int:
    """The id of a policy given by name (``"random"``) or id; SoeInputError (a ValueError) otherwise."""
    from soe_sim.errors import Problem, SoeInputError, did_you_mean

    if isinstance(name, (int, np.integer)) and not isinstance(name, bool):
        if int(name) not in POLICY_IDS.values():
            raise SoeInputError(Problem("policy", "", "", name, "unknown policy id",
                                        f"known: {sorted(POLICY_IDS.values())}"))
        return int(name)
    key = str(name).strip().lower()
    if key not in POLICY_IDS:
        hint = did_you_mean(key, POLICY_IDS)
        raise SoeInputError(Problem("policy", "", "", name, "unknown policy",
                                    (hint + "; " if hint else "") + f"known policies: {', '.join(sorted(POLICY_IDS))}"))
    return POLICY_IDS[key]


# --------------------------------------------------------------------------------------------------
# The policy set of a game


class PolicySet(NamedTuple):
    """The two sides' policies inside a game kernel.

    ``ids`` int64 (2,) policy ids · ``params`` float64 (2, N_PARAMS) · ``deck_val`` int64 (2, 16),
    ``deck_prob`` float64 (2, 16), ``deck_n`` int64 (2,): the distinct combat modifiers of each side's
    whole deck and their shares (public knowledge: the blind-draw distribution used for exact odds) ·
    ``hand_bonus`` (SoE 7.41.2) · ``max_blocks`` (SoE 1.0) · ``cr`` the CombatRules · ``wp_key``
    int64 (2 * WP_SLOTS,), ``wp_val`` float64 (2 * WP_SLOTS,): the game's memo of
    :func:`attack_win_prob_nb` (a pure function of its packed inputs and of the game's deck
    distributions, so a remembered value is the value it would compute), one buffer seen as int64 and
    as float64: slot ``s`` has its key at ``wp_key[2 * s]`` and its value at ``wp_val[2 * s + 1]``, in
    one cache line · ``feat_buf`` float64
    (FEAT_ROWS, N_FEAT): storage of the decisions' feature matrices (``game.nb.feat_buffer_nb``; a
    matrix lives from its decision's features to its choice) · ``score_buf`` float64 (FEAT_ROWS,):
    the scripted scores of a decision (``game.nb.decide_nb``; no allocation per decision).

    The rest is scratch of the feature fillers, so that a decision allocates nothing (each filler uses
    it only until it returns, and none calls another that uses the same part): ``known`` float64
    (N_KNOWN, n_areas), what a side knows per area (:func:`known_areas_nb`) · ``bt_half`` bool
    (n_blocks,), ``bt_idx`` int64 (3, n_blocks) (attacking blocks, defending blocks, attack
    directions), ``bt_force`` int64 (4, n_blocks) (attackers' SP and arm, defenders' SP and arm),
    ``bt_fhalf`` bool (2, n_blocks) (attackers', defenders' half strength), ``bt_eff`` int64 (2,
    N_EFFECT), ``bt_prep`` int64 (N_PREP,) and ``bt_res`` int64 (N_OUT,): a battle as a side knows it
    (:func:`_known_battle_prep_nb`, :func:`_attack_win_prob_compute_nb`) · ``bt_odds`` float64 (2,
    k): win chance and net SP per combat modifier (:func:`_combat_value_odds_nb`; ``k`` covers every
    modifier the game's cards can give, :func:`odds_slots_nb`) · ``bt_sep`` int64 (2, 16): one side's part
    of a battle's outcome per value of a deck (:func:`_combat_value_odds_nb`, :func:`_attack_win_prob_compute_nb`).
    """

    ids: np.ndarray
    params: np.ndarray
    deck_val: np.ndarray
    deck_prob: np.ndarray
    deck_n: np.ndarray
    hand_bonus: int
    max_blocks: int
    cr: object
    wp_key: np.ndarray
    wp_val: np.ndarray
    feat_buf: np.ndarray
    score_buf: np.ndarray
    known: np.ndarray
    bt_half: np.ndarray
    bt_idx: np.ndarray
    bt_force: np.ndarray
    bt_fhalf: np.ndarray
    bt_eff: np.ndarray
    bt_prep: np.ndarray
    bt_res: np.ndarray
    bt_odds: np.ndarray
    bt_sep: np.ndarray


FEAT_ROWS = 4096  # rows of PolicySet.feat_buf (a decision with more options aborts the game: game.nb.feat_buffer_nb)
WP_SLOTS = 65536  # entries of the attack_win_prob_nb memo (open addressing, a power of two)
WP_PROBES = 16  # slots tried before a value is computed without being remembered


@njit(cache=True, _nrt=False, internal=True)
def odds_slots_nb(cs, hand_bonus):
    """Entries of ``PolicySet.bt_odds``'s rows: one per combat modifier from the lowest any card of
    either side gives (0 at most) to the highest a hand card gives (+ ``hand_bonus``), and one more
    (:func:`fill_combat_card_odds_nb` reaches one past a row's modifier)."""
    lo = 0
    hi = 0
    for s in range(2):
        for c in range(cs.location.shape[1]):
            v = np.int64(cs.combat_modifier[s, c])
            lo = min(lo, v)
            hi = max(hi, v + hand_bonus)
    return hi - lo + 2


@njit(cache=True, _nrt=True)
def make_policy_set_nb(ids, params, cs, cr, hand_bonus, max_blocks, n_areas, n_blocks):
    """The :class:`PolicySet` of a game (deck distributions from ``cs``; removed cards excluded) on a map
    of ``n_areas`` areas with ``n_blocks`` blocks (the sizes of its scratch)."""
    deck_val = np.zeros((2, 16), dtype=np.int64)
    deck_prob = np.zeros((2, 16), dtype=np.float64)
    deck_n = np.zeros(2, dtype=np.int64)
    for s in range(2):
        tot = 0
        for c in range(cs.location.shape[1]):
            if cs.location[s, c] == 3:  # REMOVED
                continue
            v = np.int64(cs.combat_modifier[s, c])
            k = -1
            for q in range(deck_n[s]):
                if deck_val[s, q] == v:
                    k = q
            if k < 0 and deck_n[s] < 16:
                k = deck_n[s]
                deck_val[s, k] = v
                deck_n[s] += 1
            if k >= 0:
                deck_prob[s, k] += 1.0
                tot += 1
        if tot == 0:
            deck_n[s] = 1
            deck_prob[s, 0] = 1.0
        else:
            for q in range(deck_n[s]):
                deck_prob[s, q] /= tot
    # the memo's keys and values interleaved in one buffer: a probe that finds its key finds the value in
    # the same cache line (the ~6,000-10,000 keys of a batch's games spread over the slots; two arrays
    # cost two lines a hit). A copy of the PolicySet (two arrays) still works, only without the locality.
    memo = np.zeros(2 * WP_SLOTS, dtype=np.int64)
    return PolicySet(ids, params, deck_val, deck_prob, deck_n, hand_bonus, max_blocks, cr,
                     memo, memo.view(np.float64),
                     np.empty((FEAT_ROWS, N_FEAT), dtype=np.float64), np.empty(FEAT_ROWS, dtype=np.float64),
                     np.zeros((N_KNOWN, n_areas), dtype=np.float64), np.zeros(n_blocks, dtype=np.bool_),
                     np.zeros((3, n_blocks), dtype=np.int64), np.zeros((4, n_blocks), dtype=np.int64),
                     np.zeros((2, n_blocks), dtype=np.bool_), np.zeros((2, bnb.N_EFFECT), dtype=np.int64),
                     np.zeros(bnb.N_PREP, dtype=np.int64), np.zeros(bnb.N_OUT, dtype=np.int64),
                     np.zeros((2, odds_slots_nb(cs, hand_bonus)), dtype=np.float64),
                     np.zeros((2, deck_val.shape[1]), dtype=np.int64))


@njit(cache=True, _nrt=False, internal=True)
def wants_features_nb(pol, side):
    """True when ``side``'s policy reads features (every policy but ``random``)."""
    return pol.ids[side] != POLICY_RANDOM


@njit(cache=True, _nrt=False, internal=True)
def is_scripted_nb(pol, side):
    """True when ``side``'s policy is a scripted one (:func:`score_options_nb` + :func:`argmax_tie_nb`)."""
    pid = pol.ids[side]
    return pid == POLICY_AGGRESSIVE or pid == POLICY_DEFENSIVE or pid == POLICY_BALANCED


# --------------------------------------------------------------------------------------------------
# What a side knows


@njit(cache=True, _nrt=False)
def known_areas_nb(state, orders, side, params_row, own_n, own_sp, en_n, en_sp, unseen, insup=None, deficit=None):
    """Per area: own blocks / SP, enemy blocks / known SP (seen blocks' SP, ``unknown_sp`` for the
    others, a garrison counted as 1 SP) and unseen enemy blocks, as ``side`` knows them; with
    ``insup`` / ``deficit`` also 1.0 where all own blocks are in supply (else 0.0) and the largest SP
    deficit of the own blocks (max SP − SP, 0.0 without own blocks), in the same pass over the blocks."""
    omni = params_row[P_OMNISCIENT] > 0.5
    usp = params_row[P_UNKNOWN_SP]
    own_n[:] = 0
    own_sp[:] = 0
    en_n[:] = 0
    en_sp[:] = 0
    unseen[:] = 0
    if insup is not None:  # None: pruned when compiled (numba specializes on the omitted arguments)
        insup[:] = 1.0
        deficit[:] = 0.0
    for b in range(state.block_side.shape[0]):
        if state.block_status[b] != STATUS.ON_MAP:
            continue
        a = state.block_area[b]
        if a < 0:
            continue
        if state.block_side[b] == side:
            own_n[a] += 1
            own_sp[a] += state.block_sp[b]
            if insup is not None:
                if not state.block_in_supply[b]:
                    insup[a] = 0.0
                deficit[a] = max(deficit[a], np.float64(state.block_max_sp[b] - state.block_sp[b]))
        else:
            en_n[a] += 1
            if omni or orders.seen[side, b]:
                en_sp[a] += state.block_sp[b]
            else:
                en_sp[a] += usp
                unseen[a] += 1
    for a in range(state.garrison_side.shape[0]):  # a select, not a branch: x + 0.0 is x (en_sp >= +0)
        en_sp[a] += 1.0 if state.garrison_side[a] == 1 - side else 0.0


@njit(cache=True, _nrt=False, internal=True)
def known_rows_nb(state, orders, side, params_row, known):
    """:func:`known_areas_nb` into the rows ``K_OWN_N``, ``K_OWN_SP``, ``K_EN_N``, ``K_EN_SP``,
    ``K_UNSEEN`` of ``known`` (N_KNOWN, n_areas), which it returns."""
    known_areas_nb(state, orders, side, params_row, known[K_OWN_N], known[K_OWN_SP], known[K_EN_N], known[K_EN_SP],
                   known[K_UNSEEN])
    return known


@njit(cache=True, _nrt=False, internal=True)
def _adjacent_sum_nb(m, a, arr):
    t = 0.0
    for e in range(m.adj_indptr[a], m.adj_indptr[a + 1]):
        v = m.adj_indices[e]
        if v != a:
            t += arr[v]
    return t


@njit(cache=True, _nrt=False, internal=True)
def _control_sign(state, side, a):
    c = state.control[a]
    if c == side:
        return 1.0
    if c == 1 - side:
        return -1.0
    return 0.0


@njit(cache=True, _nrt=False, internal=True)
def attack_win_prob_nb(pol, state, m, side, area, att_sp, att_half, def_sp, def_n, via):
    """Exact probability that ``side`` attacking ``area`` with ``att_sp`` SP (halved for a forced
    march) beats ``def_sp`` SP in ``def_n`` blocks (+ the area's enemy garrison, fortification of the
    link from ``via``), both sides drawing their combat card blind from their deck distribution
    (SoE 7.41; battle kernel :func:`soe_sim.battle.nb.resolve_nb`). Remembered per game in
    ``pol.wp_key`` / ``pol.wp_val`` (:func:`_win_prob_nb`)."""
    return _win_prob_nb(pol, pol.wp_key, pol.wp_val, m.adj_indptr, m.adj_indices, m.adj_fortified, m.front,
                        state.garrison_side, state.initiative_side, state.initiative_level, side, area, att_sp,
                        att_half, def_sp, def_n, via)


@njit(cache=True, inline="always")
def _win_prob_nb(pol, wp_key, wp_val, adj_indptr, adj_indices, adj_fortified, area_front, garrison_side,
                 initiative_side, initiative_level, side, area, att_sp, att_half, def_sp, def_n, via, defend=False):
    """:func:`attack_win_prob_nb` on the arrays it reads (``wp_key`` / ``wp_val`` = the memo of
    ``pol``), for hot loops: inlined, with no named-tuple field read outside the memo miss (each
    such read costs reference counting in a loop)."""
    if att_sp <= 0:
        return 0.0
    defender = 1 - side
    garrison = garrison_side[area] == defender
    if def_n <= 0 and not garrison:
        return 1.0
    a_sp0 = max(1, int(att_sp))
    n_d = max(def_n, 0)
    sp0 = np.int64(def_sp + 0.5)
    fortified = False
    if via >= 0:
        for e in range(adj_indptr[area], adj_indptr[area + 1]):
            if adj_indices[e] == via and adj_fortified[e]:
                fortified = True
    front = area_front[area]
    holder = 0 if initiative_side[front] == side else 1
    level = np.int64(initiative_level[front])
    # the memo: the result depends only on these inputs (and the game's deck distributions)
    key = np.int64(0)
    mask = (wp_key.shape[0] >> 1) - 1  # slots: key at 2 * slot, value at 2 * slot + 1 (PolicySet)
    h = np.int64(0)
    if 0 <= a_sp0 < 4096 and 0 <= sp0 < 4096 and n_d < 256 and 0 <= level < 32:
        key = ((((((((np.int64(a_sp0) << 12) | sp0) << 8) | n_d) << 5) | level) << 6)
               | ((1 if defend else 0) << 5) | (side << 4) | ((1 if att_half else 0) << 3)
               | ((1 if garrison else 0) << 2) | ((1 if fortified else 0) << 1) | holder) + 1
        h = (key * np.int64(-7046029254386353131)) >> 40
    p = -1.0
    if key != 0:
        for q in range(WP_PROBES):
            slot = ((h + q) & mask) << 1
            k0 = wp_key[slot]
            if k0 == key:
                p = wp_val[slot + 1]
                break
            if k0 == 0:
                break
    if p < 0.0:
        p = _attack_win_prob_compute_nb(pol, side, a_sp0, att_half, sp0, n_d, garrison, fortified, holder, level,
                                        defend)
        if key != 0:
            for q in range(WP_PROBES):
                slot = ((h + q) & mask) << 1
                if wp_key[slot] == 0:
                    wp_key[slot] = key
                    wp_val[slot + 1] = p
                    break
    return p


@njit(cache=True, _nrt=False, internal=True)
def _attack_win_prob_compute_nb(pol, side, a_sp0, att_half, sp0, n_d, garrison, fortified, holder, level, defend):
    """:func:`attack_win_prob_nb` from its reduced inputs (no memo; its arrays are the ``bt_*`` scratch
    of ``pol``)."""
    defender = 1 - side
    n_d = min(n_d, pol.bt_force.shape[1])  # a known enemy count: never more than the blocks
    force = pol.bt_force
    fhalf = pol.bt_fhalf
    a_sp = force[0, :1]
    a_sp[0] = a_sp0
    a_half = fhalf[0, :1]
    a_half[0] = att_half
    a_arm = force[1, :1]
    a_arm[0] = 0
    a_dir = pol.bt_idx[2, :1]
    a_dir[0] = 0
    d_sp = force[2, :n_d]
    d_half = fhalf[1, :n_d]
    d_arm = force[3, :n_d]
    rem = sp0 - (1 if garrison else 0)
    for k in range(n_d):
        share = rem // (n_d - k) if n_d - k > 0 else 0
        share = max(share, 1)
        d_sp[k] = share
        rem -= share
        d_half[k] = False
        d_arm[k] = 0
    eff = pol.bt_eff[0]
    eff[:] = 0
    prep = pol.bt_prep
    bnb.prepare_battle_nb(a_sp, a_half, a_arm, a_dir, d_sp, d_half, d_arm, 0, garrison, defend, fortified,
                          bnb.WITHDRAW_NONE, eff, eff, holder, level, pol.cr, prep)
    p = 0.0
    if prep[bnb.P_FOUGHT] == 0:  # nobody left to fight (not with WITHDRAW_NONE): the attacker takes the area
        for i in range(pol.deck_n[side]):
            for j in range(pol.deck_n[defender]):
                p += pol.deck_prob[side, i] * pol.deck_prob[defender, j]
        return p
    # each side's losses depend only on the other side's combat value (bnb.resolve_nb): one chart lookup per
    # deck value instead of a resolution per pair; the same sums, in the same order
    cr = pol.cr
    def_outcome = pol.bt_sep[0]
    att_loss = pol.bt_sep[1]
    for i in range(pol.deck_n[side]):
        _cv, def_real, garrison_lost = bnb.defender_losses_nb(prep, pol.deck_val[side, i], cr)
        def_outcome[i] = bnb.defender_outcome_losses_nb(def_real, garrison_lost, cr)
    for j in range(pol.deck_n[defender]):
        _cv, att_loss[j] = bnb.attacker_losses_nb(prep, pol.deck_val[defender, j], cr)
    for i in range(pol.deck_n[side]):
        for j in range(pol.deck_n[defender]):
            if def_outcome[i] > att_loss[j]:
                p += pol.deck_prob[side, i] * pol.deck_prob[defender, j]
    return p


# --------------------------------------------------------------------------------------------------
# Feature fillers (called by the loop only when wants_features_nb)


@njit(cache=True, _nrt=False, internal=True)
def fill_card_features_nb(cs, side, cards, n, feat, col0):
    """Card columns of DISCARD (``col0`` = 1): orders, cubes, combat_mod, battle_card, historical."""
    for i in range(n):
        c = cards[i]
        feat[i, 0] = c
        if c <= 0:
            continue
        cu = 0
        for q in range(N_CUBE_KINDS):
            cu += cs.cubes[side, c - 1, q]
        feat[i, col0] = cs.orders[side, c - 1]
        feat[i, col0 + 1] = cu
        feat[i, col0 + 2] = cs.combat_modifier[side, c - 1]
        feat[i, col0 + 3] = 1.0 if cs.event_kind[side, c - 1] == EVENT_KIND.BATTLE else 0.0
        feat[i, col0 + 4] = 1.0 if cs.event_kind[side, c - 1] == EVENT_KIND.HISTORICAL else 0.0


@njit(cache=True, _nrt=False, internal=True)
def _better_in_hand(cs, side, card):
    v = cs.combat_modifier[side, card - 1]
    k = 0
    for c in range(cs.location.shape[1]):
        if cs.location[side, c] == HAND and c != card - 1:
            w = cs.combat_modifier[side, c]
            if w > v or (w == v and c < card - 1):
                k += 1
    return k


@njit(cache=True, _nrt=False, internal=True)
def fill_card_play_features_nb(cs, side, front, cards, uses, n, feat):
    hs = 0
    for c in range(cs.location.shape[1]):
        if cs.location[side, c] == HAND:
            hs += 1
    for i in range(n):
        c = cards[i]
        feat[i, 0] = c
        feat[i, 1] = uses[i]
        feat[i, 5] = hs
        feat[i, 7] = front
        if c <= 0:
            continue
        cu = 0
        for q in range(N_CUBE_KINDS):
            cu += cs.cubes[side, c - 1, q]
        feat[i, 2] = cs.orders[side, c - 1] if uses[i] == USE_ORDERS else 0
        feat[i, 3] = cu if uses[i] == USE_CUBES else 0
        feat[i, 4] = cs.combat_modifier[side, c - 1]
        # the rows list each card's uses together: one count per card, not per row
        feat[i, 6] = feat[i - 1, 6] if i > 0 and cards[i - 1] == c else _better_in_hand(cs, side, c)


@njit(cache=True, _nrt=False, internal=True)
def fill_first_features_nb(step, front, feat):
    for i in range(2):
        feat[i, 0] = i
        feat[i, 1] = step
        feat[i, 2] = front


@njit(cache=True, _nrt=False, internal=True)
def _order_known_nb(state, orders, pol, side, known):
    """The per-area arrays of the ORDER features (``known`` (N_KNOWN, n_areas) float64): what
    ``side`` knows (:func:`known_areas_nb`), whether all its blocks there are in supply and the
    largest SP deficit of its blocks there (the Reorganization ``target_vp`` column), all in one pass
    over the blocks (instead of one per row, or a second pass after :func:`known_rows_nb`)."""
    known_areas_nb(state, orders, side, pol.params[side], known[K_OWN_N], known[K_OWN_SP], known[K_EN_N],
                   known[K_EN_SP], known[K_UNSEEN], known[K_INSUP], known[K_DEFICIT])
    for a in range(known.shape[1]):
        known[K_FREE_SP, a] = known[K_OWN_SP, a]
        known[K_EN_MARK, a] = 0.0
    for o in range(orders.n_orders[0]):
        if orders.order_side[o] == 1 - side and orders.order_status[o] == onb.PLACED and orders.order_area[o] >= 0:
            known[K_EN_MARK, orders.order_area[o]] += 1.0


@njit(cache=True, inline="always")
def _adjacent_known_nb(adj_indptr, adj_indices, a, known, k):
    """:func:`_adjacent_sum_nb` of row ``k`` of ``known``."""
    t = 0.0
    for e in range(adj_indptr[a], adj_indptr[a + 1]):
        v = adj_indices[e]
        if v != a:
            t += known[k, v]
    return t


@njit(cache=True, inline="always")
def _reinforced_win_prob_nb(pol, wp_key, wp_val, adj_indptr, adj_indices, adj_fortified, area_front, garrison_side,
                            initiative_side, initiative_level, risk, marker_risk, max_blocks, side, area, att_sp,
                            att_half, known, via):
    """The ``p_win`` of an attack order on ``area`` (placed now, executed later): the exact win
    probability against the defenders ``side`` knows there (:func:`_win_prob_nb`), and with weight
    ``risk`` (``reinforce_risk``) against them joined by the known enemy SP next to ``area`` that the
    stacking limit lets in — a placed order must send a block even when the enemy has moved in first
    (SoE 7.3; audit K2). With an enemy order marker already in ``area`` (face down, SoE 7.2), the
    known-defenders term is itself (1 - ``marker_risk``)·p + ``marker_risk``·p(with a Defend order):
    the marker may be one (in balanced Kiev play most battles attacked at hopeless odds were against a
    Defend). Arrays only: inlined in loops."""
    en_sp = known[K_EN_SP, area]
    en_n = known[K_EN_N, area]
    p = _win_prob_nb(pol, wp_key, wp_val, adj_indptr, adj_indices, adj_fortified, area_front, garrison_side,
                     initiative_side, initiative_level, side, area, att_sp, att_half, en_sp, int(en_n), via)
    if marker_risk > 0.0 and p > 0.0 and known[K_EN_MARK, area] > 0.0 and en_n > 0.0:
        pd = _win_prob_nb(pol, wp_key, wp_val, adj_indptr, adj_indices, adj_fortified, area_front, garrison_side,
                          initiative_side, initiative_level, side, area, att_sp, att_half, en_sp, int(en_n), via,
                          True)
        p = (1.0 - marker_risk) * p + marker_risk * pd
    if risk <= 0.0 or p <= 0.0:
        return p
    adj_n = _adjacent_known_nb(adj_indptr, adj_indices, area, known, K_EN_N)
    room = max_blocks - en_n
    if adj_n <= 0.0 or room <= 0.0:
        return p
    extra_n = min(adj_n, room)
    extra_sp = _adjacent_known_nb(adj_indptr, adj_indices, area, known, K_EN_SP) * extra_n / adj_n
    p2 = _win_prob_nb(pol, wp_key, wp_val, adj_indptr, adj_indices, adj_fortified, area_front, garrison_side,
                      initiative_side, initiative_level, side, area, att_sp, att_half, en_sp + extra_sp,
                      int(en_n + extra_n), via)
    return (1.0 - risk) * p + risk * p2


@njit(cache=True, inline="always")
def _order_area_cols_nb(vp, adj_indptr, adj_indices, control, garrison_side, side, a, known, rows, r):
    """The ORDER columns that depend only on the area ``a >= 0`` (all but type, area, p_win and
    target_vp) into ``rows[r]`` (arrays only: inlined in loops)."""
    rows[r, 2] = vp[a]
    c = control[a]
    rows[r, 3] = 1.0 if c == side else (-1.0 if c == 1 - side else 0.0)  # _control_sign
    rows[r, 4] = known[K_OWN_N, a]
    rows[r, 5] = known[K_OWN_SP, a]
    rows[r, 6] = known[K_EN_N, a]
    rows[r, 7] = known[K_EN_SP, a]
    # the three sums of _adjacent_known_nb in one pass over the links (each added in the same order: the
    # same values)
    free_sp = 0.0
    en_n = 0.0
    en_sp = 0.0
    for e in range(adj_indptr[a], adj_indptr[a + 1]):
        v = adj_indices[e]
        if v != a:
            free_sp += known[K_FREE_SP, v]
            en_n += known[K_EN_N, v]
            en_sp += known[K_EN_SP, v]
    rows[r, 8] = free_sp
    rows[r, 9] = en_n
    rows[r, 10] = en_sp
    rows[r, 11] = known[K_INSUP, a]
    rows[r, 12] = 1.0 if garrison_side[a] == 1 - side else 0.0
    rows[r, 15] = known[K_UNSEEN, a]


_ORDER_TYPE_COLS = (0, 1, 13, 14)  # the columns _order_type_cols_nb writes (type, area, p_win, target_vp)


@njit(cache=True, inline="always")
def _order_type_cols_nb(pol, wp_key, wp_val, vp, adj_indptr, adj_indices, adj_fortified, area_front, control,
                        garrison_side, initiative_side, initiative_level, risk, marker_risk, max_blocks, side, t, a,
                        known, rows, r):
    """The ORDER columns type, area, p_win and target_vp of row (``t``, ``a >= 0``) into ``rows[r]``
    (its area columns already filled; arrays only: inlined in loops). ``risk`` / ``marker_risk`` = the
    side's ``reinforce_risk`` / ``marker_risk`` (:func:`_reinforced_win_prob_nb`), ``max_blocks`` the
    stacking limit."""
    rows[r, 0] = t
    rows[r, 1] = a
    forced = t == onb.FORCED_MARCH_TO or t == onb.FORCED_MARCH_OUT
    if t == onb.MOVE_TO or t == onb.FORCED_MARCH_TO:
        rows[r, 14] = vp[a]
        if known[K_EN_N, a] > 0 or garrison_side[a] == 1 - side:
            rows[r, 13] = _reinforced_win_prob_nb(pol, wp_key, wp_val, adj_indptr, adj_indices, adj_fortified,
                                                  area_front, garrison_side, initiative_side, initiative_level, risk,
                                                  marker_risk, max_blocks, side, a, rows[r, 8], forced, known, -1)
    elif t == onb.MOVE_OUT or t == onb.FORCED_MARCH_OUT:
        # the best attack (defended neighbour) and, apart, the best capture (undefended enemy-controlled
        # neighbour): a defended target the blocks cannot beat (p = 0) is neither (audit K1: it used to lend
        # its VP to the capture score)
        best = 0.0
        attack_vp = 0.0
        capture_vp = 0.0
        for e in range(adj_indptr[a], adj_indptr[a + 1]):
            v = adj_indices[e]
            if v == a:
                continue
            if known[K_EN_N, v] > 0 or garrison_side[v] == 1 - side:
                p = _reinforced_win_prob_nb(pol, wp_key, wp_val, adj_indptr, adj_indices, adj_fortified,
                                            area_front, garrison_side, initiative_side, initiative_level, risk,
                                            marker_risk, max_blocks, side, v, known[K_FREE_SP, a], forced, known, a)
                if p > best or (p == best and p > 0.0 and vp[v] > attack_vp):
                    best = p
                    attack_vp = vp[v]
            elif control[v] == 1 - side and vp[v] > capture_vp:
                capture_vp = vp[v]
        rows[r, 13] = best
        rows[r, 14] = attack_vp if best > 0.0 else capture_vp
    elif t == onb.REORGANIZE:
        rows[r, 14] = known[K_DEFICIT, a]


@njit(cache=True, inline="always")
def _order_inputs_nb(state, m, pol, side):
    """The arrays the ORDER row kernels read, taken out of the named tuples once before their loops:
    map VP, links and fortifications, fronts; control, garrisons, initiative; the win-probability
    memo; ``side``'s ``reinforce_risk`` and ``marker_risk``, and the stacking limit."""
    return (m.vp, m.adj_indptr, m.adj_indices, m.adj_fortified, m.front, state.control, state.garrison_side,
            state.initiative_side, state.initiative_level, pol.wp_key, pol.wp_val, pol.params[side, P_REINFORCE_RISK],
            pol.params[side, P_MARKER_RISK], pol.max_blocks)


@njit(cache=True, inline="always")
def _order_row_nb(pol, wp_key, wp_val, vp, ip, ix, fort, mfront, control, garrison, ini_side, ini_level, risk,
                  marker_risk, max_blocks, side, t, a, known, base, base_done, rows, r):
    """Compute ORDER row ``r`` (= ``t * n_areas + a``, ``a >= 0``) into ``rows[r]``: the area columns
    from ``base`` (computed on the area's first row, ``base_done``), then the type columns (arrays
    only: inlined in loops)."""
    if not base_done[a]:
        for q in range(N_FEAT):
            base[a, q] = 0.0
        _order_area_cols_nb(vp, ip, ix, control, garrison, side, a, known, base, a)
        base_done[a] = True
    for q in range(N_FEAT):
        rows[r, q] = base[a, q]
    _order_type_cols_nb(pol, wp_key, wp_val, vp, ip, ix, fort, mfront, control, garrison, ini_side, ini_level,
                        risk, marker_risk, max_blocks, side, t, a, known, rows, r)


@njit(cache=True, _nrt=False, internal=True)
def _order_rows_nb(state, m, pol, side, otype, oarea, n, known, base, base_done, rows, done):
    """Make sure the ORDER rows (``otype[i]``, ``oarea[i]``) with an area are in ``rows`` (index
    ``type * n_areas + area``; ``done`` / ``base_done`` flags, ``base`` the area columns), computed
    from ``known`` (:func:`_order_known_nb`). The named tuples are read once, outside the loop."""
    na = base.shape[0]
    (vp, ip, ix, fort, mfront, control, garrison, ini_side, ini_level, wp_key, wp_val, risk, marker_risk,
     max_blocks) = _order_inputs_nb(state, m, pol, side)
    for i in range(n):
        t = otype[i]
        a = oarea[i]
        if a < 0:
            continue
        r = t * na + a
        if done[r]:
            continue
        _order_row_nb(pol, wp_key, wp_val, vp, ip, ix, fort, mfront, control, garrison, ini_side, ini_level, risk,
                      marker_risk, max_blocks, side, t, a, known, base, base_done, rows, r)
        done[r] = True


@njit(cache=True, _nrt=False, internal=True)
def _copy_order_rows_nb(otype, oarea, n, rows, na, feat):
    """ORDER feature matrix rows from the computed ``rows`` (index ``type * na + area``); the pass
    row (area -1) keeps only its type and area."""
    for i in range(n):
        t = otype[i]
        a = oarea[i]
        feat[i, 0] = t
        feat[i, 1] = a
        if a < 0:
            continue
        r = t * na + a
        for q in range(N_FEAT):
            feat[i, q] = rows[r, q]


@njit(cache=True, _nrt=True, internal=True)
def fill_order_features_nb(state, orders, m, pol, side, otype, oarea, n, feat):
    """ORDER rows (``legal_orders_nb``): see :data:`FEATURES`. ``p_win``: for a Move To / Forced
    March To into an enemy area, the exact win probability of the own SP adjacent to it
    (:func:`_reinforced_win_prob_nb`); for a Move Out / Forced March Out, the best such probability
    over the enemy-held neighbours (``target_vp`` their VP, or the VP of an undefended
    enemy-controlled neighbour). Outside a placement step nothing is committed (:func:`commit_order_nb`)."""
    na = state.control.shape[0]
    known = np.zeros((N_KNOWN, na), dtype=np.float64)
    _order_known_nb(state, orders, pol, side, known)
    base = np.zeros((na, N_FEAT), dtype=np.float64)
    rows = np.zeros((onb.N_ORDER_TYPES * na, N_FEAT), dtype=np.float64)
    _order_rows_nb(state, m, pol, side, otype, oarea, n, known, base, np.zeros(na, dtype=np.bool_), rows,
                   np.zeros(onb.N_ORDER_TYPES * na, dtype=np.bool_))
    _copy_order_rows_nb(otype, oarea, n, rows, na, feat)


class OrderFeatureCache(NamedTuple):
    """The ORDER features and scores of both sides during one placement step (SoE 7.2): the position
    does not change while orders are placed, so a row (type, area) keeps its features — and, the
    scripted scorer being a pure function of them, its score — from one decision of the step to the
    next, except the rows an order placed since has changed: the side's own attack orders commit
    blocks (:func:`commit_order_nb`) and the opponent's markers may be Defend orders
    (:func:`enemy_marker_nb`); both forget exactly those rows.
    ``valid`` bool (2,) (cleared by the loop at the start of the step); ``known`` float64 (2,
    N_KNOWN, n_areas) (:func:`_order_known_nb`); ``base`` float64 (2, n_areas, N_FEAT) the area
    columns (``base_done`` bool (2, n_areas)); ``rows`` float64 (2, N_ORDER_TYPES * n_areas,
    N_FEAT) the rows (``done``); ``score`` float64 (2, N_ORDER_TYPES * n_areas) their scripted
    scores (``score_done``); ``scores`` float64 (N_ORDER_TYPES * n_areas + 1,) and ``row0``
    float64 (N_FEAT,): scratch.

    From one placement step to the side's next, most of the map has not changed (in balanced Kiev play
    86 % of the rows computed anew had the score of the step before): a side's rows are carried over
    (``carry`` bool (2,), cleared by the loop at the start of a game) except those near an area whose
    inputs changed (:func:`_order_cache_side_nb`). The inputs of an area are its ``known`` column and
    ``prev_area`` int64 (2, 2, n_areas): its control and garrison when ``known`` was computed;
    ``known_next`` float64 (N_KNOWN, n_areas) (the new ``known``, compared with the old one before it
    replaces it), ``dirty`` bool (3, n_areas) and ``near`` int64 (3, n_areas) are scratch. The leader
    orders' rows (SoE 9.0, :func:`fill_order_features_scratch_nb`) are computed in scratch of their own
    (``s_known``, ``s_base``, ``s_base_done``, ``s_rows``, ``s_done``, shaped as one side's part), so a
    leader window between two steps keeps the carry."""

    valid: np.ndarray
    known: np.ndarray
    base: np.ndarray
    base_done: np.ndarray
    rows: np.ndarray
    done: np.ndarray
    score: np.ndarray
    score_done: np.ndarray
    scores: np.ndarray
    row0: np.ndarray
    lrow_type: np.ndarray
    lrow_area: np.ndarray
    carry: np.ndarray
    prev_area: np.ndarray
    known_next: np.ndarray
    dirty: np.ndarray
    near: np.ndarray
    s_known: np.ndarray
    s_base: np.ndarray
    s_base_done: np.ndarray
    s_rows: np.ndarray
    s_done: np.ndarray


@njit(cache=True, _nrt=True)
def new_order_feature_cache_nb(n_areas):
    nr = onb.N_ORDER_TYPES * n_areas
    return OrderFeatureCache(np.zeros(2, dtype=np.bool_), np.zeros((2, N_KNOWN, n_areas), dtype=np.float64),
                             np.zeros((2, n_areas, N_FEAT), dtype=np.float64), np.zeros((2, n_areas), dtype=np.bool_),
                             np.zeros((2, nr, N_FEAT), dtype=np.float64), np.zeros((2, nr), dtype=np.bool_),
                             np.zeros((2, nr), dtype=np.float64), np.zeros((2, nr), dtype=np.bool_),
                             np.zeros(nr + 1, dtype=np.float64), np.zeros(N_FEAT, dtype=np.float64),
                             np.zeros(FEAT_ROWS, dtype=np.int64), np.zeros(FEAT_ROWS, dtype=np.int64),
                             np.zeros(2, dtype=np.bool_), np.zeros((2, 2, n_areas), dtype=np.int64),
                             np.zeros((N_KNOWN, n_areas), dtype=np.float64), np.zeros((3, n_areas), dtype=np.bool_),
                             np.zeros((3, n_areas), dtype=np.int64),
                             np.zeros((N_KNOWN, n_areas), dtype=np.float64),
                             np.zeros((n_areas, N_FEAT), dtype=np.float64), np.zeros(n_areas, dtype=np.bool_),
                             np.zeros((nr, N_FEAT), dtype=np.float64), np.zeros(nr, dtype=np.bool_))


@njit(cache=True, inline="always")
def _push_links_nb(adj_indptr, adj_indices, src, n_src, mark, out):
    """The areas ``src[:n_src]`` and their neighbours, each once, into ``out`` and marked in ``mark``
    (False for all of them on entry); returns their count. The links are symmetric (``data.map._csr``),
    so these are also the areas that have one of ``src`` as a neighbour (arrays only: inlined)."""
    n = 0
    for i in range(n_src):
        x = src[i]
        if not mark[x]:
            mark[x] = True
            out[n] = x
            n += 1
        for e in range(adj_indptr[x], adj_indptr[x + 1]):
            v = adj_indices[e]
            if not mark[v]:
                mark[v] = True
                out[n] = v
                n += 1
    return n


@njit(cache=True, _nrt=False, internal=True)
def _order_cache_side_nb(state, m, orders, pol, side, cache):
    """Start ``side``'s part of ``cache`` for the placement step if not done yet: ``known`` anew, and
    the rows and scores of the side's last step kept where nothing they read has changed (``carry``).
    An area's columns read its own and its neighbours' inputs (``known``, control, garrison), the
    attack orders' ``p_win`` with a ``reinforce_risk`` > 0 also the neighbours' neighbours
    (:func:`_order_type_cols_nb`): an area's columns are forgotten when an input within one link has
    changed, its rows and scores when one within one link (two with a ``reinforce_risk``) has. The
    front's initiative, which ``p_win`` passes to the battle kernel, is not an input: a battle's winner
    does not depend on it (SoE 6.1: it changes only the initiative after the battle; tests/
    test_engine_orders.py checks it)."""
    if cache.valid[side]:
        return
    known = cache.known[side]
    na = known.shape[1]
    prev = cache.prev_area[side]
    if cache.carry[side]:
        # the new knowledge into scratch, then compared with the step before's and stored over it in one pass
        # (not the old copied aside first: each step found ``known`` evicted, and the copy wrote 9 rows more)
        new = cache.known_next
        _order_known_nb(state, orders, pol, side, new)
        changed = cache.dirty[0]
        near1 = cache.dirty[1]
        near2 = cache.dirty[2]
        # row by row over the areas (contiguous: loops LLVM vectorizes)
        control = state.control
        garrison = state.garrison_side
        for a in range(na):
            changed[a] = (prev[0, a] != control[a]) | (prev[1, a] != garrison[a])
        for k in range(N_KNOWN):
            for a in range(na):
                changed[a] |= known[k, a] != new[k, a]
                known[k, a] = new[k, a]
        # the changed areas' neighbourhoods, pushed along the links from the few changed areas (listed in
        # ``near[0]``) into ``near[1]`` (one link) and ``near[2]`` (two), marked in ``near1`` / ``near2`` (all
        # False between calls: the marks are cleared from the lists at the end)
        ip = m.adj_indptr
        ix = m.adj_indices
        list0 = cache.near[0]
        list1 = cache.near[1]
        list2 = cache.near[2]
        n0 = 0
        for x in range(na):
            list0[n0] = x
            n0 += changed[x]
        n1 = _push_links_nb(ip, ix, list0, n0, near1, list1)
        n2 = 0
        if pol.params[side, P_REINFORCE_RISK] > 0.0:  # else p_win reads no neighbour's neighbour
            n2 = _push_links_nb(ip, ix, list1, n1, near2, list2)
        rows_list = list2 if n2 > 0 else list1
        n_rows = n2 if n2 > 0 else n1
        base_done = cache.base_done[side]
        done = cache.done[side]
        score_done = cache.score_done[side]
        for i in range(n1):
            base_done[list1[i]] = False
            near1[list1[i]] = False
        for i in range(n_rows):
            a = rows_list[i]
            for t in range(onb.N_ORDER_TYPES):
                done[t * na + a] = False
                score_done[t * na + a] = False
        for i in range(n2):
            near2[list2[i]] = False
    else:
        _order_known_nb(state, orders, pol, side, known)
        cache.base_done[side, :] = False
        cache.done[side, :] = False
        cache.score_done[side, :] = False
        cache.carry[side] = True
    for a in range(na):
        prev[0, a] = state.control[a]
        prev[1, a] = state.garrison_side[a]
    cache.valid[side] = True


@njit(cache=True, _nrt=False)
def fill_order_features_cached_nb(state, orders, m, pol, side, otype, oarea, n, feat, cache):
    """:func:`fill_order_features_nb` through ``cache`` (:class:`OrderFeatureCache`): the same
    values, each (type, area) row computed once per placement step."""
    _order_cache_side_nb(state, m, orders, pol, side, cache)
    rows = cache.rows[side]
    _order_rows_nb(state, m, pol, side, otype, oarea, n, cache.known[side], cache.base[side], cache.base_done[side],
                   rows, cache.done[side])
    na = cache.base.shape[1]
    for i in range(n):
        t = otype[i]
        a = oarea[i]
        if a < 0:
            feat[i, 0] = t
            feat[i, 1] = a
            continue
        r = t * na + a
        for q in range(N_FEAT):
            feat[i, q] = rows[r, q]


@njit(cache=True, _nrt=False, internal=True)
def fill_order_features_scratch_nb(state, orders, m, pol, side, otype, oarea, n, feat, cache):
    """:func:`fill_order_features_nb` (the same values) with the scratch arrays of ``cache``
    (:class:`OrderFeatureCache`) instead of fresh zeroed arrays: ``known`` is rewritten in
    full, and the area columns and rows of the ``n`` rows are recomputed (their ``base_done`` /
    ``done`` flags cleared; :func:`_order_rows_nb` writes every column of a row it computes). For
    rows asked outside the placement step (leader orders, SoE 9.0): the arrays are the cache's own
    scratch (``s_known`` …), so the sides' placement rows are left as they were (``carry``)."""
    known = cache.s_known
    base = cache.s_base
    base_done = cache.s_base_done
    rows = cache.s_rows
    done = cache.s_done
    na = base.shape[0]
    _order_known_nb(state, orders, pol, side, known)
    for i in range(n):
        a = oarea[i]
        if a >= 0:
            base_done[a] = False
            done[otype[i] * na + a] = False
    _order_rows_nb(state, m, pol, side, otype, oarea, n, known, base, base_done, rows, done)
    _copy_order_rows_nb(otype, oarea, n, rows, na, feat)


@njit(cache=True, _nrt=False)
def order_scores_cached_nb(state, orders, m, pol, side, otype, oarea, n, cache, out):
    """The scripted scores (:func:`score_options_nb` of the ORDER rows of
    :func:`fill_order_features_nb`) of ``n`` order rows into ``out``, through ``cache``: each row's
    features and score are computed once per placement step, in one pass over the rows (a row is
    computed only when its score is not known yet). Only for a scripted policy."""
    _order_cache_side_nb(state, m, orders, pol, side, cache)
    known = cache.known[side]
    base = cache.base[side]
    base_done = cache.base_done[side]
    rows = cache.rows[side]
    done = cache.done[side]
    p = pol.params[side]
    score = cache.score[side]
    score_done = cache.score_done[side]
    row0 = cache.row0
    na = cache.base.shape[1]
    (vp, ip, ix, fort, mfront, control, garrison, ini_side, ini_level, wp_key, wp_val, risk, marker_risk,
     max_blocks) = _order_inputs_nb(state, m, pol, side)
    for i in range(n):
        t = otype[i]
        a = oarea[i]
        if a < 0:
            for q in range(N_FEAT):
                row0[q] = 0.0
            row0[0] = t
            row0[1] = a
            out[i] = _score_order_nb(p, row0)
            continue
        r = t * na + a
        if not score_done[r]:
            if t == onb.RECON:
                # the Recon score reads only the area's unseen enemy blocks (_score_order_nb,
                # _order_area_cols_nb column 15): the same float operations, without the area columns
                score[r] = p[P_RECON_WEIGHT] * known[K_UNSEEN, a] - 0.05
            elif done[r]:
                score[r] = _score_order_nb(p, rows[r])
            else:
                # the row scored in place in the area's columns (its type columns set, then cleared
                # back to the zeros of _order_area_cols_nb) instead of copied into ``rows`` first
                if not base_done[a]:
                    for q in range(N_FEAT):
                        base[a, q] = 0.0
                    _order_area_cols_nb(vp, ip, ix, control, garrison, side, a, known, base, a)
                    base_done[a] = True
                _order_type_cols_nb(pol, wp_key, wp_val, vp, ip, ix, fort, mfront, control, garrison, ini_side,
                                    ini_level, risk, marker_risk, max_blocks, side, t, a, known, base, a)
                score[r] = _score_order_nb(p, base[a])
                for q in _ORDER_TYPE_COLS:
                    base[a, q] = 0.0
            score_done[r] = True
        out[i] = score[r]


@njit(cache=True, _nrt=False, internal=True)
def _release_rows_nb(adj_indptr, adj_indices, x, cache, side):
    """Forget ``side``'s cached ORDER rows and scores that read the free own SP of area ``x``
    (``K_FREE_SP``, just set to 0 by a commit): the Move Out / Forced March Out rows of ``x`` (their
    ``p_win`` attacks with it) and, for each neighbour, its area columns (``own_sp_adjacent`` sums
    it), hence all its rows, and the scores of its Move To / Forced March To rows (the only scores
    reading that sum, through ``p_win``; :func:`_score_order_nb`)."""
    na = cache.base.shape[1]
    for t in (onb.MOVE_OUT, onb.FORCED_MARCH_OUT):
        cache.done[side, t * na + x] = False
        cache.score_done[side, t * na + x] = False
    for e in range(adj_indptr[x], adj_indptr[x + 1]):
        a = adj_indices[e]
        if a == x:
            continue  # an area's own columns exclude its own free SP (_order_area_cols_nb)
        cache.base_done[side, a] = False
        for t in range(onb.N_ORDER_TYPES):
            cache.done[side, t * na + a] = False
        for t in (onb.MOVE_TO, onb.FORCED_MARCH_TO):
            cache.score_done[side, t * na + a] = False


@njit(cache=True, _nrt=False)
def commit_order_nb(state, m, side, t, a, cache):
    """An order (type ``t``, area ``a``) ``side`` has just placed commits own blocks for the rest of
    the placement step (audit K2): after a Move To / Forced March To attack on ``a`` (enemy blocks or
    garrison there) the SP next to ``a``, after a Move Out / Forced March Out the SP in ``a``, no
    longer count for the ``p_win`` of the side's later attack orders (``K_FREE_SP``), so two orders do
    not both count the same blocks. Only while ``side``'s part of ``cache`` is in use (a policy that
    reads no ORDER features commits nothing)."""
    if not cache.valid[side]:
        return
    known = cache.known[side]
    ip = m.adj_indptr
    ix = m.adj_indices
    if t == onb.MOVE_TO or t == onb.FORCED_MARCH_TO:
        if known[K_EN_N, a] > 0 or state.garrison_side[a] == 1 - side:
            for e in range(ip[a], ip[a + 1]):
                x = ix[e]
                if x != a and known[K_FREE_SP, x] > 0.0:
                    known[K_FREE_SP, x] = 0.0
                    _release_rows_nb(ip, ix, x, cache, side)
    elif t == onb.MOVE_OUT or t == onb.FORCED_MARCH_OUT:
        if known[K_FREE_SP, a] > 0.0:
            known[K_FREE_SP, a] = 0.0
            _release_rows_nb(ip, ix, a, cache, side)


@njit(cache=True, _nrt=False)
def enemy_marker_nb(m, side, a, cache, marker_risk):
    """The opponent of ``side`` has just placed an order marker (face down, SoE 7.2) in area ``a``:
    ``side``'s known markers there go up by one, and while ``marker_risk`` > 0 its cached ORDER rows
    whose ``p_win`` reads them (attacks on ``a`` when enemy blocks stand there: Move To on ``a``, Move
    Out next to it) are forgotten (their area columns stay: they do not read markers).
    Only while ``side``'s part of ``cache`` is in use."""
    if not cache.valid[side]:
        return
    known = cache.known[side]
    known[K_EN_MARK, a] += 1.0
    if marker_risk > 0.0 and known[K_EN_N, a] > 0.0:
        # only the attacks on ``a`` read the marker (_reinforced_win_prob_nb: enemy blocks there): its Move To /
        # Forced March To rows and the Move Out / Forced March Out rows of its neighbours
        na = cache.base.shape[1]
        for t in (onb.MOVE_TO, onb.FORCED_MARCH_TO):
            cache.done[side, t * na + a] = False
            cache.score_done[side, t * na + a] = False
        for e in range(m.adj_indptr[a], m.adj_indptr[a + 1]):
            x = m.adj_indices[e]
            if x != a:
                for t in (onb.MOVE_OUT, onb.FORCED_MARCH_OUT):
                    cache.done[side, t * na + x] = False
                    cache.score_done[side, t * na + x] = False


class FeatScratch(NamedTuple):
    """Per-game scratch of :func:`fill_move_features_scratch_nb` and
    :func:`fill_exec_order_features_scratch_nb`: ``known`` float64 (N_KNOWN, n_areas), ``pot``
    float64 (n_areas,), ``last_b`` int64 (n_areas,), ``seen`` bool (n_blocks,)."""

    known: np.ndarray
    pot: np.ndarray
    last_b: np.ndarray
    seen: np.ndarray


@njit(cache=True, _nrt=True)
def new_feat_scratch_nb(n_areas, n_blocks):
    return FeatScratch(np.zeros((N_KNOWN, n_areas), dtype=np.float64), np.zeros(n_areas, dtype=np.float64),
                       np.zeros(n_areas, dtype=np.int64), np.zeros(n_blocks, dtype=np.bool_))


@njit(cache=True, _nrt=True)
def fill_move_features_nb(state, orders, m, pol, side, order_id, mv_block, mv_dest, mv_via, mv_detach, n, off, rail,
                          feat):
    """MOVE / RAIL rows: row 0 is "stop" when ``off`` = 1, then one row per (block, dest, via, detach).
    ``att_sp`` = own SP already in the destination + the SP of every block that could still move there
    under this order (the potential attack), ``p_win`` its exact win probability against the known
    defenders."""
    fill_move_features_scratch_nb(state, orders, m, pol, side, order_id, mv_block, mv_dest, mv_via, mv_detach, n,
                                  off, rail, feat, new_feat_scratch_nb(state.control.shape[0],
                                                                     state.block_side.shape[0]), False)


@njit(cache=True, _nrt=False)
def known_after_move_nb(known, sp, origin, dest):
    """Update the own rows of ``known`` (:func:`known_rows_nb`) for a block of ``sp`` SP of the known
    side that moved from ``origin`` into ``dest`` (no detachment): the same values as computing them
    again (whole SP as floats: the sums are exact in any order)."""
    known[K_OWN_N, origin] -= 1.0
    known[K_OWN_N, dest] += 1.0
    known[K_OWN_SP, origin] -= sp
    known[K_OWN_SP, dest] += sp


@njit(cache=True, _nrt=False, internal=True)
def fill_move_features_scratch_nb(state, orders, m, pol, side, order_id, mv_block, mv_dest, mv_via, mv_detach, n, off,
                                  rail, feat, scr, known_ready):
    """:func:`fill_move_features_nb` with the caller's :class:`FeatScratch` ``scr``; ``known_ready``:
    ``scr.known`` already holds :func:`known_rows_nb` of ``side`` for the position (the game loop's
    decisions after a move of the same order, :func:`known_after_move_nb`)."""
    pr = pol.params[side]
    known = scr.known if known_ready else known_rows_nb(state, orders, side, pr, scr.known)
    own_n, own_sp, en_n, en_sp, unseen = known[K_OWN_N], known[K_OWN_SP], known[K_EN_N], known[K_EN_SP], known[K_UNSEEN]
    forced = False
    if not rail:
        forced = onb.is_forced_nb(orders.order_type[order_id])
    pot = scr.pot
    _move_potential_nb(state, mv_block, mv_dest, mv_detach, n - off, rail, pot, scr.last_b)
    if off == 1:
        feat[0, 0] = 1.0
    wp_key = pol.wp_key
    wp_val = pol.wp_val
    ip = m.adj_indptr
    ix = m.adj_indices
    fort = m.adj_fortified
    mfront = m.front
    garrison = state.garrison_side
    ini_side = state.initiative_side
    ini_level = state.initiative_level
    for i in range(off, n):
        j = i - off
        b = mv_block[j]
        d = mv_dest[j]
        x = state.block_area[b]
        feat[i, 1] = b
        feat[i, 2] = d
        attack = en_n[d] > 0 or state.garrison_side[d] == 1 - side
        feat[i, 3] = 1.0 if attack else 0.0
        feat[i, 5] = m.vp[d]
        feat[i, 6] = _control_sign(state, side, d)
        feat[i, 7] = np.inf if m.eastern_link[d] else pol.max_blocks - own_n[d]
        feat[i, 8] = en_sp[d]
        feat[i, 9] = state.block_sp[b]
        feat[i, 10] = m.vp[x] if _control_sign(state, side, x) > 0 else 0.0
        feat[i, 11] = own_n[x] - 1 + (1 if (not rail and mv_detach[j] > 0) else 0)
        feat[i, 12] = _adjacent_sum_nb(m, x, en_sp)
        feat[i, 13] = _adjacent_sum_nb(m, d, en_sp)
        feat[i, 14] = 0.0 if rail else mv_detach[j]
        att = own_sp[d] + pot[d]
        feat[i, 15] = att
        if attack and not rail:
            via = mv_via[j]
            feat[i, 4] = _win_prob_nb(pol, wp_key, wp_val, ip, ix, fort, mfront, garrison, ini_side, ini_level, side,
                                      d, att, forced, en_sp[d], int(en_n[d]), via)  # attack_win_prob_nb


@njit(cache=True, inline="always")
def _move_potential_nb(state, mv_block, mv_dest, mv_detach, n_rows, rail, pot, last_b):
    """Potential SP per destination (``pot`` float64 (n_areas,)): the SP of every distinct block of the
    move rows ``0..n_rows-1`` that could move there now, a detachment's SP left behind off (``last_b``
    int64 (n_areas,) scratch; the rows of a block are listed together). Arrays only: inlined."""
    for a in range(pot.shape[0]):
        pot[a] = 0.0
        last_b[a] = -1
    for j in range(n_rows):
        b = mv_block[j]
        d = mv_dest[j]
        if last_b[d] != b:
            last_b[d] = b
            pot[d] += state.block_sp[b] - (0 if rail else mv_detach[j])


@njit(cache=True, _nrt=False)
def move_scores_nb(state, orders, m, pol, side, order_id, mv_block, mv_dest, mv_via, mv_detach, n, off, rail, scr,
                   known_ready, out):
    """The scripted scores of a MOVE / RAIL decision (:func:`score_options_nb` of the rows of
    :func:`fill_move_features_scratch_nb`, the same arguments) into ``out[:n]``, without the feature
    matrix: each row's inputs of :func:`_move_score_nb` computed from the position, an attack's
    ``p_win`` and the neighbours' known enemy SP only where the score reads them. Only for a scripted
    policy (the game loop's MOVE / RAIL decisions, SoE 7.3 and 7.6)."""
    p = pol.params[side]
    known = scr.known if known_ready else known_rows_nb(state, orders, side, p, scr.known)
    own_n, own_sp, en_n, en_sp = known[K_OWN_N], known[K_OWN_SP], known[K_EN_N], known[K_EN_SP]
    forced = False
    pot = scr.pot
    if not rail:  # only a move's p_win reads the potential SP
        forced = onb.is_forced_nb(orders.order_type[order_id])
        _move_potential_nb(state, mv_block, mv_dest, mv_detach, n - off, rail, pot, scr.last_b)
    if off == 1:
        out[0] = 0.0  # stop executing this order
    reserve = p[P_RESERVE]
    garrison = state.garrison_side
    for j in range(n - off):  # row j + off
        d = mv_dest[j]
        x = state.block_area[mv_block[j]]
        attack = en_n[d] > 0 or garrison[d] == 1 - side
        p_win = 0.0
        control = 0.0
        threatened = False
        if attack:
            if not rail:
                p_win = _win_prob_nb(pol, pol.wp_key, pol.wp_val, m.adj_indptr, m.adj_indices, m.adj_fortified, m.front,
                                     garrison, state.initiative_side, state.initiative_level, side, d,
                                     own_sp[d] + pot[d], forced, en_sp[d], int(en_n[d]), mv_via[j])
        else:
            control = _control_sign(state, side, d)
            threatened = control >= 0 and _adjacent_sum_nb(m, d, en_sp) > 0  # a capture does not read it
        leaving_vp = 0.0
        if (_control_sign(state, side, x) > 0 and m.vp[x] > 0 and _adjacent_sum_nb(m, x, en_sp) > 0
                and own_n[x] - 1 + (1 if (not rail and mv_detach[j] > 0) else 0) < reserve):
            leaving_vp = np.float64(m.vp[x])
        overstacks = not m.eastern_link[d] and pol.max_blocks - own_n[d] <= 0
        detach = 0.0 if rail else np.float64(mv_detach[j])
        out[j + off] = _move_score_nb(p, attack, p_win, np.float64(m.vp[d]), en_sp[d], control, threatened,
                                      leaving_vp, overstacks, detach, rail)


@njit(cache=True, _nrt=False, internal=True)
def fill_battle_features_nb(state, cs, orders, m, pol, side, area, attacker, cards, n, combat, feat):
    """BATTLE_CARD (``combat`` False) and COMBAT_CARD rows; row 0 = no battle card / blind draw."""
    na = state.control.shape[0]
    pr = pol.params[side]
    known = known_rows_nb(state, orders, side, pr, pol.known)  # PolicySet scratch: no allocation per decision
    own_n, own_sp, en_n, en_sp, unseen = known[K_OWN_N], known[K_OWN_SP], known[K_EN_N], known[K_EN_SP], known[K_UNSEEN]
    hs = 0
    tot = 0.0
    cnt = 0
    for c in range(cs.location.shape[1]):
        if cs.location[side, c] == HAND:
            hs += 1
        elif cs.location[side, c] == DRAW_PILE:
            tot += cs.combat_modifier[side, c]
            cnt += 1
    if cnt == 0:  # the discard pile is reshuffled (SoE 7.1)
        for c in range(cs.location.shape[1]):
            if cs.location[side, c] == DISCARD:
                tot += cs.combat_modifier[side, c]
                cnt += 1
    exp_blind = tot / cnt if cnt > 0 else 0.0
    for i in range(n):
        c = cards[i]
        feat[i, 0] = c
        if combat:
            feat[i, 2] = exp_blind
            feat[i, 5] = 1.0 if attacker else 0.0
            feat[i, 6] = own_sp[area]
            feat[i, 7] = en_sp[area]
            feat[i, 8] = m.vp[area]
            feat[i, 9] = hs
            if c <= 0:
                feat[i, 1] = exp_blind
            else:
                feat[i, 1] = cs.combat_modifier[side, c - 1] + pol.hand_bonus
                feat[i, 3] = cs.orders[side, c - 1]
                cu = 0
                for q in range(N_CUBE_KINDS):
                    cu += cs.cubes[side, c - 1, q]
                feat[i, 4] = cu
        else:
            feat[i, 1] = 1.0 if attacker else 0.0
            feat[i, 2] = own_sp[area]
            feat[i, 3] = en_sp[area]
            feat[i, 4] = m.vp[area]
            if c > 0:
                feat[i, 5] = cs.battle_effect[side, c - 1, bnb.E_COMBAT_VALUE]
                feat[i, 6] = cs.battle_effect[side, c - 1, bnb.E_ENEMY_EXTRA_LOSS]
                feat[i, 7] = cs.battle_effect[side, c - 1, bnb.E_OWN_LOSS_REDUCTION]


@njit(cache=True, _nrt=False)
def fill_drawn_card_features_nb(drawn, drawn_mod, n, feat):
    """EatS IX.3 item 2 (reading V13): COMBAT_CARD after the draw. Every row gets ``after_draw`` = 1,
    ``drawn_card`` (the card drawn from the deck, 0 when the piles are empty) and ``drawn`` (its
    modifier); row 0 — keep the drawn card — is worth ``value`` = ``drawn``."""
    for i in range(n):
        feat[i, 10] = 1.0
        feat[i, 11] = drawn
        feat[i, 12] = drawn_mod
    feat[0, 1] = drawn_mod


@njit(cache=True, _nrt=False, internal=True)
def _known_battle_prep_nb(state, cs, orders, m, pol, side, area, attacker, own_card, prep):
    """The prepared battle (:func:`soe_sim.battle.nb.prepare_battle_nb`) in ``area`` as ``side`` knows it
    when it chooses its battle or combat card: the blocks, their directions and supporting directions, the
    fortification, half strength (forced march, reorganizing: revealed orders), the garrison and a
    revealed Defend order exactly as the engine will resolve them (:func:`battle_inputs_nb`), but with
    ``unknown_sp`` for each enemy block ``side`` has not seen (SoE 7.41.3: blocks are revealed only
    after the cards; the ``omniscient`` switch shows them), ``side``'s own battle card ``own_card`` (a card
    id, :data:`NO_CARD` for none; the enemy's lies face down) and no Withdraw."""
    defender = 1 - side if attacker else side
    att_side = 1 - defender
    half = pol.bt_half  # the arrays are PolicySet scratch: no allocation per decision
    onb.block_half_nb(orders, half)
    att_idx = pol.bt_idx[0]
    def_idx = pol.bt_idx[1]
    att_dir = pol.bt_idx[2]
    n_att, n_def, n_support, fortified = battle_inputs_nb(state, m, area, defender, half, att_idx, def_idx, att_dir)
    omni = pol.params[side, P_OMNISCIENT] > 0.5
    usp = max(1, int(pol.params[side, P_UNKNOWN_SP] + 0.5))
    att_sp, att_half, att_arm, def_sp, def_half, def_arm = engine_battles_nb.force_views_nb(
        state, att_idx, n_att, def_idx, n_def, half, pol.bt_force, pol.bt_fhalf)
    if not omni:  # the enemy's blocks ``side`` has not seen count ``unknown_sp``
        enemy_idx, enemy_sp, n_enemy = (def_idx, def_sp, n_def) if attacker else (att_idx, att_sp, n_att)
        for k in range(n_enemy):
            if not orders.seen[side, enemy_idx[k]]:
                enemy_sp[k] = usp
    att_eff = pol.bt_eff[0]
    def_eff = pol.bt_eff[1]
    att_eff[:] = 0
    def_eff[:] = 0
    own_eff = att_eff if attacker else def_eff
    if own_card > 0:  # SoE 7.41.1
        for e in range(bnb.N_EFFECT):
            own_eff[e] = cs.battle_effect[side, own_card - 1, e]
    garrison = state.garrison_side[area] == defender
    # Defend orders are revealed when the battles are resolved (SoE 7.3): both players know this one
    defend = onb.defend_benefit_order_nb(state, orders, defender, area) >= 0
    front = m.front[area]
    holder = 0 if state.initiative_side[front] == att_side else 1
    bnb.prepare_battle_nb(att_sp, att_half, att_arm, att_dir[:n_att], def_sp, def_half, def_arm, n_support, garrison,
                          defend, fortified, bnb.WITHDRAW_NONE, att_eff, def_eff, holder,
                          state.initiative_level[front], pol.cr, prep)


@njit(cache=True, _nrt=False, internal=True)
def _combat_value_odds_nb(pol, prep, side, attacker, lo, p_out, net_out):
    """For each combat modifier ``lo + k`` of ``side`` (``k < p_out.shape[0]``) in the prepared battle
    ``prep``: ``side``'s exact chance to win (``p_out[k]``) and the expected SP the enemy loses minus
    those ``side`` loses (``net_out[k]``) against the enemy's blind draw from its deck distribution
    (SoE 7.41; ties are the defender's, R9)."""
    enemy = 1 - side
    if prep[bnb.P_FOUGHT] != 0:
        _combat_value_odds_fought_nb(pol, prep, enemy, attacker, lo, p_out, net_out)
        return
    res = pol.bt_res  # nobody left to fight (everyone withdrew): bnb.resolve_nb's own answer
    for k in range(p_out.shape[0]):
        mod = lo + k
        p = 0.0
        net = 0.0
        for j in range(pol.deck_n[enemy]):
            q = pol.deck_prob[enemy, j]
            if attacker:
                bnb.resolve_nb(prep, mod, pol.deck_val[enemy, j], pol.cr, res)
                if res[bnb.O_ATTACKER_WINS] == 1:
                    p += q
                net += q * (res[bnb.O_DEF_LOSSES] - res[bnb.O_ATT_LOSSES])
            else:
                bnb.resolve_nb(prep, pol.deck_val[enemy, j], mod, pol.cr, res)
                if res[bnb.O_ATTACKER_WINS] == 0:
                    p += q
                net += q * (res[bnb.O_ATT_LOSSES] - res[bnb.O_DEF_LOSSES])
        p_out[k] = p
        net_out[k] = net


@njit(cache=True, inline="always")
def _combat_value_odds_fought_nb(pol, prep, enemy, attacker, lo, p_out, net_out):
    """:func:`_combat_value_odds_nb` of a battle that is fought. Each side's losses depend only on the other
    side's combat value (:func:`soe_sim.battle.nb.resolve_nb`), so the side's losses are computed once per
    value of the enemy's deck (``PolicySet.bt_sep``) and the enemy's once per modifier, instead of a
    resolution per pair; the sums are the same, in the same order."""
    cr = pol.cr
    withdraw_loss = prep[bnb.P_DEF_WITHDRAW_LOSS]
    own_loss = pol.bt_sep[0]  # per enemy deck value: the side's real losses (as resolve_nb reports them)
    own_deciding = pol.bt_sep[1]  # per enemy deck value, the side defending: its losses that decide (7.41.6)
    nj = pol.deck_n[enemy]
    for j in range(nj):
        v = pol.deck_val[enemy, j]
        if attacker:
            _cv, own_loss[j] = bnb.attacker_losses_nb(prep, v, cr)
        else:
            _cv, def_real, garrison_lost = bnb.defender_losses_nb(prep, v, cr)
            own_deciding[j] = bnb.defender_outcome_losses_nb(def_real, garrison_lost, cr)
            own_loss[j] = def_real + withdraw_loss
    for k in range(p_out.shape[0]):
        mod = lo + k
        p = 0.0
        net = 0.0
        if attacker:
            _cv, def_real, garrison_lost = bnb.defender_losses_nb(prep, mod, cr)
            enemy_deciding = bnb.defender_outcome_losses_nb(def_real, garrison_lost, cr)
            enemy_loss = def_real + withdraw_loss
            for j in range(nj):
                q = pol.deck_prob[enemy, j]
                if enemy_deciding > own_loss[j]:  # the attacker wins
                    p += q
                net += q * (enemy_loss - own_loss[j])
        else:
            _cv, enemy_loss = bnb.attacker_losses_nb(prep, mod, cr)
            for j in range(nj):
                q = pol.deck_prob[enemy, j]
                if not own_deciding[j] > enemy_loss:  # the attacker loses (a draw included)
                    p += q
                net += q * (enemy_loss - own_loss[j])
        p_out[k] = p
        net_out[k] = net


@njit(cache=True, _nrt=False, internal=True)
def _modifier_range_nb(cs, pol, side):
    """The lowest and highest combat modifier ``side``'s cards can give (a hand card: + hand bonus), 0
    included."""
    lo = 0
    hi = 0
    for c in range(cs.location.shape[1]):
        v = cs.combat_modifier[side, c]
        lo = min(lo, v)
        hi = max(hi, v + pol.hand_bonus)
    return lo, hi


@njit(cache=True, _nrt=False, internal=True)
def _draw_average_nb(cs, side, lo, p_mod, net_mod):
    """``p_mod`` / ``net_mod`` (indexed by modifier − ``lo``) averaged over the card ``side``'s blind draw
    may bring: its draw pile, else the discard pile that will be reshuffled (SoE 7.1); modifier 0 when
    both are empty."""
    p0 = 0.0
    net0 = 0.0
    cnt = 0
    for pile in (DRAW_PILE, DISCARD):
        if cnt == 0:
            for c in range(cs.location.shape[1]):
                if cs.location[side, c] == pile:
                    p0 += p_mod[cs.combat_modifier[side, c] - lo]
                    net0 += net_mod[cs.combat_modifier[side, c] - lo]
                    cnt += 1
    if cnt == 0:
        return p_mod[-lo], net_mod[-lo]
    return p0 / cnt, net0 / cnt


@njit(cache=True, _nrt=False, internal=True)
def fill_battle_card_odds_nb(state, cs, orders, m, pol, side, area, attacker, cards, n, feat):
    """BATTLE_CARD columns ``p_win`` / ``net_sp`` of each row (``cards[i]``, row 0 = none) and, in every
    row, those of row 0 (``p_win_none`` / ``net_sp_none``) and the battle's ``area``: ``side``'s exact
    chance to win the battle in ``area`` and its expected net SP with that battle card in play (SoE
    7.41.1) and its combat card drawn blind from its own pile, against the enemy's blind draw, in the
    battle as ``side`` knows it (:func:`_known_battle_prep_nb`; the enemy's battle card is not known).
    The odds per modifier go to ``PolicySet.bt_odds`` (:func:`odds_slots_nb` covers every modifier the
    cards give), so the kernel allocates nothing and counts no references; a game whose cards changed their
    modifiers beyond it gets fresh arrays (:func:`_battle_card_odds_fresh_nb`)."""
    lo, hi = _modifier_range_nb(cs, pol, side)
    if hi - lo + 1 <= pol.bt_odds.shape[1]:
        _battle_card_odds_nb(state, cs, orders, m, pol, side, area, attacker, cards, n, feat, lo,
                             pol.bt_odds[0, :hi - lo + 1], pol.bt_odds[1, :hi - lo + 1])
    else:
        _battle_card_odds_fresh_nb(state, cs, orders, m, pol, side, area, attacker, cards, n, feat, lo, hi)


@njit(cache=True, _nrt=True, internal=True)
def _battle_card_odds_fresh_nb(state, cs, orders, m, pol, side, area, attacker, cards, n, feat, lo, hi):
    """:func:`fill_battle_card_odds_nb` with its odds per modifier in fresh arrays."""
    _battle_card_odds_nb(state, cs, orders, m, pol, side, area, attacker, cards, n, feat, lo,
                         np.empty(hi - lo + 1, dtype=np.float64), np.empty(hi - lo + 1, dtype=np.float64))


@njit(cache=True, _nrt=False, internal=True)
def _battle_card_odds_nb(state, cs, orders, m, pol, side, area, attacker, cards, n, feat, lo, p_mod, net_mod):
    """:func:`fill_battle_card_odds_nb` with ``p_mod`` / ``net_mod`` (one entry per modifier from ``lo``)."""
    prep = pol.bt_prep
    for i in range(n):
        _known_battle_prep_nb(state, cs, orders, m, pol, side, area, attacker, max(cards[i], 0), prep)
        _combat_value_odds_nb(pol, prep, side, attacker, lo, p_mod, net_mod)
        p_draw, net_draw = _draw_average_nb(cs, side, lo, p_mod, net_mod)
        feat[i, 8] = p_draw
        feat[i, 10] = net_draw
    for i in range(n):
        feat[i, 9] = feat[0, 8]
        feat[i, 11] = feat[0, 10]
        feat[i, 12] = area


@njit(cache=True, _nrt=False, internal=True)
def fill_combat_card_odds_nb(state, cs, orders, m, pol, side, area, attacker, n, feat):
    """COMBAT_CARD columns ``p_win`` / ``net_sp`` of each row, in every row those of row 0 (the draw:
    ``p_win_draw`` / ``net_sp_draw``) and the battle's ``area``: ``side``'s exact chance to win the
    battle and its expected net SP (enemy losses minus own) when its combat modifier is the row's
    ``value`` (row 0: averaged over the cards its blind draw may bring — the draw pile, else the
    discard pile that will be reshuffled; after the draw, EatS IX.3, the card drawn) against the
    enemy's blind draw from its deck distribution, in the battle as ``side`` knows it
    (:func:`_known_battle_prep_nb`). Call after :func:`fill_battle_features_nb` (and
    :func:`fill_drawn_card_features_nb`): reads the ``value`` column. The odds per modifier go to
    ``PolicySet.bt_odds`` as in :func:`fill_battle_card_odds_nb` (beyond it: :func:`_combat_card_odds_fresh_nb`)."""
    after_draw = feat[0, 10] > 0
    drawn_card = int(feat[0, 11]) if after_draw else -1
    own_card = NO_CARD
    for c in range(cs.location.shape[1]):
        if cs.location[side, c] == IN_PLAY and c + 1 != drawn_card:  # the own battle card on the table
            own_card = c + 1
    prep = pol.bt_prep
    _known_battle_prep_nb(state, cs, orders, m, pol, side, area, attacker, own_card, prep)
    lo, hi = _modifier_range_nb(cs, pol, side)
    for i in range(n):
        v = int(np.floor(feat[i, 1]))
        lo = min(lo, v)
        hi = max(hi, v + 1)
    if hi - lo + 1 <= pol.bt_odds.shape[1]:
        _combat_card_odds_nb(cs, pol, prep, side, area, attacker, n, feat, after_draw, lo,
                             pol.bt_odds[0, :hi - lo + 1], pol.bt_odds[1, :hi - lo + 1])
    else:
        _combat_card_odds_fresh_nb(cs, pol, prep, side, area, attacker, n, feat, after_draw, lo, hi)


@njit(cache=True, _nrt=True, internal=True)
def _combat_card_odds_fresh_nb(cs, pol, prep, side, area, attacker, n, feat, after_draw, lo, hi):
    """:func:`fill_combat_card_odds_nb` with its odds per modifier in fresh arrays."""
    _combat_card_odds_nb(cs, pol, prep, side, area, attacker, n, feat, after_draw, lo,
                         np.empty(hi - lo + 1, dtype=np.float64), np.empty(hi - lo + 1, dtype=np.float64))


@njit(cache=True, _nrt=False, internal=True)
def _combat_card_odds_nb(cs, pol, prep, side, area, attacker, n, feat, after_draw, lo, p_mod, net_mod):
    """:func:`fill_combat_card_odds_nb` on the prepared battle ``prep``, with ``p_mod`` / ``net_mod`` (one entry
    per modifier from ``lo``)."""
    _combat_value_odds_nb(pol, prep, side, attacker, lo, p_mod, net_mod)
    if after_draw:
        p0 = p_mod[int(feat[0, 12]) - lo]
        net0 = net_mod[int(feat[0, 12]) - lo]
    else:
        p0, net0 = _draw_average_nb(cs, side, lo, p_mod, net_mod)
    for i in range(n):
        if i == 0:
            feat[i, 13] = p0
            feat[i, 15] = net0
        else:
            k = int(feat[i, 1]) - lo
            feat[i, 13] = p_mod[k]
            feat[i, 15] = net_mod[k]
        feat[i, 14] = p0
        feat[i, 16] = net0
        feat[i, 17] = area


@njit(cache=True, _nrt=False, internal=True)
def fill_reorganize_features_nb(state, rows, n, feat):
    for i in range(n):
        b = rows[i]
        feat[i, 0] = b
        feat[i, 1] = state.block_sp[b]
        feat[i, 2] = state.block_max_sp[b]
        feat[i, 3] = state.block_max_sp[b] - state.block_sp[b]


@njit(cache=True, _nrt=False, internal=True)
def fill_garrison_features_nb(m, area, feat):
    feat[0, 0] = 1.0
    feat[1, 0] = 0.0
    for i in range(2):
        feat[i, 1] = area
        feat[i, 2] = m.vp[area]


@njit(cache=True, _nrt=True, internal=True)
def fill_combine_features_nb(state, comb, n, feat):
    """COMBINE rows: row 0 = pass, then absorptions in (absorber, absorbed) index order."""
    feat[0, 0] = 1.0
    nbk = comb.shape[0]
    t = 0
    for d in range(nbk):
        for b in range(nbk):
            if comb[d, b]:
                t += 1
                if t >= n:
                    return
                feat[t, 1] = d
                feat[t, 2] = b
                feat[t, 3] = state.block_sp[d]
                feat[t, 4] = state.block_sp[b]
                feat[t, 5] = state.block_area[d]
                feat[t, 6] = min(state.block_sp[b], state.block_max_sp[d] - state.block_sp[d])


@njit(cache=True, _nrt=False, internal=True)
def fill_combine_pair_features_nb(state, comb_d, comb_b, n, feat):
    """:func:`fill_combine_features_nb` from the pair lists of
    ``reinforce.nb.legal_combine_pairs_nb`` (row ``t`` = pair ``t - 1``): the same rows."""
    feat[0, 0] = 1.0
    for t in range(1, n):
        d = comb_d[t - 1]
        b = comb_b[t - 1]
        feat[t, 1] = d
        feat[t, 2] = b
        feat[t, 3] = state.block_sp[d]
        feat[t, 4] = state.block_sp[b]
        feat[t, 5] = state.block_area[d]
        feat[t, 6] = min(state.block_sp[b], state.block_max_sp[d] - state.block_sp[d])


@njit(cache=True, _nrt=False, internal=True)
def fill_reinforce_pair_features_nb(state, orders, m, pol, side, smask, build_b, build_a, n_builds, front_line, n,
                                    feat):
    """REINFORCE features: row 0 = pass, then one row per strengthenable block of ``smask``, then
    one per build pair of ``reinforce.nb.legal_build_pairs_nb`` (``build_b`` / ``build_a``,
    ``n_builds`` pairs)."""
    na = state.control.shape[0]
    pr = pol.params[side]
    known = known_rows_nb(state, orders, side, pr, pol.known)  # PolicySet scratch: no allocation per decision
    own_n, own_sp, en_n, en_sp, unseen = known[K_OWN_N], known[K_OWN_SP], known[K_EN_N], known[K_EN_SP], known[K_UNSEEN]
    t = 1
    nbk = smask.shape[0]
    for b in range(nbk):
        if smask[b] and t < n:
            a = state.block_area[b]
            feat[t, 0] = 1.0
            feat[t, 1] = b
            feat[t, 2] = a
            feat[t, 3] = state.block_sp[b]
            feat[t, 4] = state.block_max_sp[b]
            if a >= 0:
                feat[t, 5] = m.vp[a]
                feat[t, 6] = 1.0 if front_line[side, a] else 0.0
                feat[t, 7] = _adjacent_sum_nb(m, a, en_sp)
            t += 1
    for q in range(n_builds):
        if t >= n:
            break
        b = build_b[q]
        a = build_a[q]
        feat[t, 0] = 2.0
        feat[t, 1] = b
        feat[t, 2] = a
        feat[t, 3] = 0.0
        feat[t, 4] = state.block_max_sp[b]
        feat[t, 5] = m.vp[a]
        feat[t, 6] = 1.0 if front_line[side, a] else 0.0
        feat[t, 7] = _adjacent_sum_nb(m, a, en_sp)
        t += 1


# --- card events (SoE 7.13, 7.1 item 6) -----------------------------------------------------------


@njit(cache=True, _nrt=False, internal=True)
def event_value_nb(state, cs, orders, pol, table, side, card, ctx, out):
    """What ``side``'s event ``card`` would gain in context ``ctx`` (events.nb ``X_*``), as ``side``
    knows it: ``out[0..5]`` = VP, enemy SP lost, cards drawn, initiative points, cubes, own SP brought
    into play (an Events' Area block, an activated nation's blocks). Returns the scripted value
    ``2·VP + SP lost + 0.5·cards + initiative + cubes_weight·(cubes + SP brought in)``."""
    out[:6] = 0.0
    if card < 1 or card > table.n_fx.shape[1]:
        return 0.0
    c = card - 1
    pr = pol.params[side]
    hs = 0
    for q in range(cs.location.shape[1]):
        if cs.location[side, q] == HAND:
            hs += 1
    f = ctx[enb.X_FRONT]
    if f < 0 and table.front[side, c] >= 0 and table.front[side, c] < state.initiative_side.shape[0]:
        f = table.front[side, c]
    for e in range(table.n_fx[side, c]):
        code = table.fx_code[side, c, e]
        val = np.float64(table.fx_value[side, c, e])
        if code == enb.FX_VP:
            out[0] += val
        elif code == enb.FX_ENEMY_SP_LOSS_INITIATIVE:
            if f >= 0 and state.initiative_side[f] == side:
                out[1] += val * state.initiative_level[f]
        elif code == enb.FX_ENEMY_SP_LOSS:
            out[1] += val
        elif code == enb.FX_ELIMINATE_NATION_BLOCK:
            out[1] += pr[P_UNKNOWN_SP]
        elif code == enb.FX_DRAW_CARDS:
            # the card itself leaves the hand first (E-C3)
            out[2] += max(0.0, min(val, np.float64(table.hand_limit - hs + 1)))
        elif code == enb.FX_INITIATIVE:
            out[3] += val
        elif code == enb.FX_CUBES_INFANTRY or code == enb.FX_CUBES_CAVALRY or code == enb.FX_CUBES_ALLIED:
            out[4] += val
        elif code == enb.FX_REINFORCE:
            b = table.fx_value[side, c, e]
            if b >= 0:
                out[5] += state.block_max_sp[b]
        elif code == enb.FX_ACTIVATE_NATION:
            nat = table.fx_value[side, c, e]
            for b in range(state.block_side.shape[0]):
                if (state.block_status[b] == STATUS.ON_MAP and state.block_side[b] == side
                        and state.block_nation[b] == nat):
                    out[5] += state.block_sp[b]
    return 2.0 * out[0] + out[1] + 0.5 * out[2] + out[3] + pr[P_CUBES_WEIGHT] * (out[4] + out[5])


@njit(cache=True, _nrt=False, internal=True)
def fill_card_play_event_features_nb(state, cs, orders, pol, table, side, front, cards, uses, n, feat, ctx, tmp):
    """CARD_PLAY column ``event_value`` (:func:`event_value_nb`) of the ``USE_EVENT`` rows. ``ctx`` int64
    (N_X,) and ``tmp`` float64 (6,): scratch (``game.nb.EventWork.cp_ctx`` / ``cp_value``)."""
    enb.card_play_context_nb(ctx, front)
    for i in range(n):
        if uses[i] == USE_EVENT and cards[i] > 0:
            feat[i, 8] = event_value_nb(state, cs, orders, pol, table, side, cards[i], ctx, tmp)


@njit(cache=True, _nrt=True, internal=True)
def fill_reaction_features_nb(state, cs, orders, pol, table, side, ctx, rcards, n, feat):
    """REACTION rows: row 0 = pass, row ``i`` = reaction card ``rcards[i - 1]`` with its
    :func:`event_value_nb` and what the card is otherwise worth (orders, cubes, combat modifier)."""
    feat[0, 0] = 1.0
    tmp = np.zeros(6, dtype=np.float64)
    for i in range(1, n):
        c = rcards[i - 1]
        feat[i, 1] = c
        feat[i, 2] = event_value_nb(state, cs, orders, pol, table, side, c, ctx, tmp)
        for q in range(6):
            feat[i, 3 + q] = tmp[q]
        feat[i, 9] = cs.orders[side, c - 1]
        cu = 0
        for q in range(N_CUBE_KINDS):
            cu += cs.cubes[side, c - 1, q]
        feat[i, 10] = cu
        feat[i, 11] = cs.combat_modifier[side, c - 1]


@njit(cache=True, _nrt=False, internal=True)
def fill_event_target_features_nb(state, orders, m, pol, table, side, card, ctx, targets, n, feat):
    """EVENT_TARGET rows (``events.nb.legal_event_targets_nb``): an area (Desertions, ``reinforce``:
    ``friendly`` = 1 for a placement) or an enemy block (``block_sp`` as known, ``loss`` the SP it
    would lose, ``destroys``)."""
    na = state.control.shape[0]
    pr = pol.params[side]
    known = known_rows_nb(state, orders, side, pr, pol.known)  # PolicySet scratch: no allocation per decision
    own_n, own_sp, en_n, en_sp, unseen = known[K_OWN_N], known[K_OWN_SP], known[K_EN_N], known[K_EN_SP], known[K_UNSEEN]
    c = card - 1
    tk = table.target_kind[side, c]
    code = enb.FX_NONE
    val = 0.0
    for e in range(table.n_fx[side, c]):  # the effect that receives the choice (EV3)
        k = table.fx_code[side, c, e]
        if (tk == enb.TK_AREA and (k == enb.FX_ENEMY_SP_LOSS_INITIATIVE or k == enb.FX_REINFORCE)) or (
                tk == enb.TK_BLOCK and (k == enb.FX_ELIMINATE_NATION_BLOCK or k == enb.FX_ENEMY_SP_LOSS)):
            code = k
            val = np.float64(table.fx_value[side, c, e])
            break
    omni = pr[P_OMNISCIENT] > 0.5
    for i in range(n):
        t = targets[i]
        feat[i, 0] = card
        feat[i, 1] = t
        feat[i, 2] = tk
        if t < 0:
            continue
        a = t
        if tk == enb.TK_BLOCK:
            a = state.block_area[t]
            bsp = np.float64(state.block_sp[t]) if (omni or orders.seen[side, t]) else pr[P_UNKNOWN_SP]
            feat[i, 9] = bsp
            loss = bsp if code == enb.FX_ELIMINATE_NATION_BLOCK else val
            feat[i, 10] = loss
            feat[i, 11] = 1.0 if loss >= bsp else 0.0
        if a < 0:
            continue
        feat[i, 3] = 1.0 if code == enb.FX_REINFORCE else 0.0
        feat[i, 4] = a
        feat[i, 5] = m.vp[a]
        feat[i, 6] = en_n[a]
        feat[i, 7] = en_sp[a]
        feat[i, 8] = _adjacent_sum_nb(m, a, en_sp)
        if code == enb.FX_ENEMY_SP_LOSS_INITIATIVE:
            f = m.front[a]
            lvl = np.float64(state.initiative_level[f]) if state.initiative_side[f] == side else 0.0
            feat[i, 10] = min(val * lvl, en_sp[a])


# --- leader orders (SoE 9.0) ---------------------------------------------------------------------


@njit(cache=True, _nrt=True, internal=True)
def fill_leader_features_nb(state, orders, m, pol, leaders, side, r_leader, r_type, r_area, r_block, n, feat):
    """LEADER rows: row 0 = pass (type -1), row ``i`` = ``leaders.nb.legal_leader_orders_nb`` row
    ``i - 1``. Columns 0–15 are those of an ORDER row for the same (type, area)
    (:func:`fill_order_features_nb`; a full-strength Forced March Out of Budyonny gets the ``p_win``
    of a full-strength move), then ``leader`` (block), ``ability`` (``leaders.nb.ABILITY``), ``block``
    (Stalin: the block reorganized, whose missing SP replace ``target_vp``; else -1) and
    ``countermands`` (the side's unexecuted orders the leader order would take off the area)."""
    otype = np.empty(n, dtype=np.int64)
    oarea = np.empty(n, dtype=np.int64)
    _leader_order_rows_nb(leaders, r_leader, r_type, r_area, n, otype, oarea)
    fill_order_features_nb(state, orders, m, pol, side, otype, oarea, n, feat)
    _leader_cols_nb(state, orders, leaders, side, r_leader, r_type, r_area, r_block, n, feat)


@njit(cache=True, _nrt=False, internal=True)
def fill_leader_features_cached_nb(state, orders, m, pol, leaders, side, r_leader, r_type, r_area, r_block, n, feat,
                                   cache):
    """:func:`fill_leader_features_nb` with ``side``'s arrays of the game's
    :class:`OrderFeatureCache` ``cache`` as scratch instead of fresh ORDER feature arrays
    (:func:`fill_order_features_scratch_nb`: the same values; the rows' types and areas in
    ``cache.lrow_type`` / ``lrow_area``, FEAT_ROWS entries like the feature matrix ``feat``)."""
    if n > cache.lrow_type.shape[0]:
        return
    otype = cache.lrow_type
    oarea = cache.lrow_area
    _leader_order_rows_nb(leaders, r_leader, r_type, r_area, n, otype, oarea)
    fill_order_features_scratch_nb(state, orders, m, pol, side, otype, oarea, n, feat, cache)
    _leader_cols_nb(state, orders, leaders, side, r_leader, r_type, r_area, r_block, n, feat)


@njit(cache=True, _nrt=False, internal=True)
def _leader_order_rows_nb(leaders, r_leader, r_type, r_area, n, otype, oarea):
    """The ORDER (type, area) of each LEADER row (row 0: pass) into ``otype`` / ``oarea``."""
    otype[0] = onb.NO_ORDER
    oarea[0] = -1
    for i in range(1, n):
        t = r_type[i - 1]
        if leaders[r_leader[i - 1], lnb.LT_ABILITY] == lnb.ABILITY.FORCED_MARCH_OUT_FULL_STRENGTH:
            t = onb.MOVE_OUT  # full strength: the p_win of an unhalved move
        otype[i] = t
        oarea[i] = r_area[i - 1]


@njit(cache=True, _nrt=False, internal=True)
def _leader_cols_nb(state, orders, leaders, side, r_leader, r_type, r_area, r_block, n, feat):
    """The LEADER columns of :func:`fill_leader_features_nb` after the ORDER columns."""
    feat[0, 16] = -1.0
    feat[0, 17] = -1.0
    feat[0, 18] = -1.0
    for i in range(1, n):
        L = r_leader[i - 1]
        t = r_type[i - 1]
        a = r_area[i - 1]
        b = r_block[i - 1]
        ab = leaders[L, lnb.LT_ABILITY]
        feat[i, 0] = t
        feat[i, 16] = L
        feat[i, 17] = ab
        feat[i, 18] = b
        if b >= 0:
            feat[i, 14] = state.block_max_sp[b] - state.block_sp[b]
        c = 0
        if lnb.is_out_type_nb(t) and ab != lnb.ABILITY.REORGANIZE:
            for o in range(orders.n_orders[0]):
                if (orders.order_side[o] == side and orders.order_area[o] == a and orders.order_status[o] == onb.PLACED
                        and lnb.is_out_type_nb(orders.order_type[o])):
                    c += 1
        feat[i, 19] = c


# --- battle order, advance, withdrawal loss, order of execution (SoE 7.4, 7.43, 7.2, 7.3) ---------


@njit(cache=True, _nrt=False, internal=True)
def fill_battle_order_features_nb(state, orders, m, pol, side, areas, sizes, n, feat):
    """BATTLE_ORDER rows: the equal-size battles ``areas[:n]`` the initiative holder ``side`` may
    fight next (SoE 7.4). ``p_win``: ``side``'s exact chance to win the battle with blind draws, from
    the strengths it knows (an own garrison counts 1 SP)."""
    na = state.control.shape[0]
    pr = pol.params[side]
    known = known_rows_nb(state, orders, side, pr, pol.known)  # PolicySet scratch: no allocation per decision
    own_n, own_sp, en_n, en_sp, unseen = known[K_OWN_N], known[K_OWN_SP], known[K_EN_N], known[K_EN_SP], known[K_UNSEEN]
    for i in range(n):
        a = areas[i]
        feat[i, 0] = a
        feat[i, 1] = sizes[i]
        feat[i, 2] = m.vp[a]
        feat[i, 3] = own_n[a]
        feat[i, 4] = own_sp[a]
        feat[i, 5] = en_n[a]
        feat[i, 6] = en_sp[a]
        feat[i, 9] = m.front[a]
        attacking = defender_side_nb(state, a) != side
        feat[i, 7] = 1.0 if attacking else 0.0
        if attacking:
            feat[i, 8] = attack_win_prob_nb(pol, state, m, side, a, own_sp[a], False, en_sp[a], int(en_n[a]), -1)
        else:
            g = 1.0 if state.garrison_side[a] == side else 0.0
            feat[i, 8] = 1.0 - attack_win_prob_nb(pol, state, m, 1 - side, a, en_sp[a], False, own_sp[a] + g,
                                                  int(own_n[a]), -1)


@njit(cache=True, _nrt=False, internal=True)
def fill_advance_features_nb(state, orders, m, pol, side, area, blocks, n, feat):
    """ADVANCE rows (SoE 7.43): row 0 = stop (every remaining block stays in ``area``), row ``i`` =
    send ``blocks[i - 1]`` back to the area it came from (``back``). ``staying`` = own blocks in the
    battle area now, ``overstack`` = how many over the stacking limit (the phase end pulls the latest
    arrivals back, SoE 7.33); threats are the known enemy SP next to the area."""
    na = state.control.shape[0]
    pr = pol.params[side]
    known = known_rows_nb(state, orders, side, pr, pol.known)  # PolicySet scratch: no allocation per decision
    own_n, own_sp, en_n, en_sp, unseen = known[K_OWN_N], known[K_OWN_SP], known[K_EN_N], known[K_EN_SP], known[K_UNSEEN]
    stay = own_n[area]
    over = max(0.0, stay - pol.max_blocks) if not m.eastern_link[area] else 0.0
    threat = _adjacent_sum_nb(m, area, en_sp)
    for i in range(n):
        feat[i, 8] = m.vp[area]
        feat[i, 9] = threat
        feat[i, 10] = stay
        feat[i, 11] = over
    feat[0, 0] = 1.0
    for i in range(1, n):
        b = blocks[i - 1]
        back = state.block_prev_area[b]
        feat[i, 1] = b
        feat[i, 2] = state.block_sp[b]
        feat[i, 3] = back
        if back < 0:
            continue
        feat[i, 4] = m.vp[back]
        feat[i, 5] = _control_sign(state, side, back)
        feat[i, 6] = own_n[back]
        feat[i, 7] = _adjacent_sum_nb(m, back, en_sp)


@njit(cache=True, _nrt=False, internal=True)
def fill_withdraw_loss_features_nb(state, blocks, n, feat):
    """WITHDRAW_LOSS rows (SoE 7.2 "lose 1SP from any one block"): the withdrawing blocks."""
    for i in range(n):
        b = blocks[i]
        feat[i, 0] = b
        feat[i, 1] = state.block_sp[b]
        feat[i, 2] = state.block_max_sp[b]
        feat[i, 3] = 1.0 if state.block_sp[b] <= 1 else 0.0
        feat[i, 4] = 1.0 if state.block_arm[b] == ARM.LEADER else 0.0
        feat[i, 5] = 1.0 if state.block_arm[b] == ARM.CAVALRY else 0.0


@njit(cache=True, _nrt=True, internal=True)
def fill_exec_order_features_nb(state, orders, m, orules, pol, side, order_ids, n, feat):
    """EXEC_ORDER rows (SoE 7.3 "in any order"): the side's placed orders of the group, in placement
    order (``rank``). ``movers``: distinct blocks that could execute the order now (a block may be
    wanted by several orders: executing the most constrained first leaves fewer unfulfilled)."""
    nbk = state.block_side.shape[0]
    cap = nbk * m.adj_indices.shape[0] * 3
    fill_exec_order_features_scratch_nb(state, orders, m, orules, pol, side, order_ids, n, feat,
                                        np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64),
                                        np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64),
                                        onb.new_move_scratch_nb(nbk, m),
                                        new_feat_scratch_nb(state.control.shape[0], nbk))


@njit(cache=True, _nrt=False, internal=True)
def fill_exec_order_features_scratch_nb(state, orders, m, orules, pol, side, order_ids, n, feat, mb, md, mv, mx,
                                        mscr, fscr):
    """:func:`fill_exec_order_features_nb` (the same values) with the caller's move rows ``mb``,
    ``md``, ``mv``, ``mx`` (capacity ``n_blocks * n_links * 3``, as the game loop's),
    :class:`~soe_sim.engine.orders.nb.MoveScratch` ``mscr`` (``legal_moves_scratch_nb``) and
    :class:`FeatScratch` ``fscr`` instead of fresh ones (no allocation: no reference counting)."""
    pr = pol.params[side]
    known = known_rows_nb(state, orders, side, pr, fscr.known)
    own_n, own_sp, en_n, en_sp, unseen = known[K_OWN_N], known[K_OWN_SP], known[K_EN_N], known[K_EN_SP], known[K_UNSEEN]
    cap = mb.shape[0]
    seen = fscr.seen
    for i in range(n):
        o = order_ids[i]
        a = orders.order_area[o]
        feat[i, 0] = o
        feat[i, 1] = orders.order_type[o]
        feat[i, 2] = a
        feat[i, 3] = m.vp[a]
        feat[i, 5] = en_n[a] + (1.0 if state.garrison_side[a] == 1 - side else 0.0)
        feat[i, 6] = _adjacent_sum_nb(m, a, en_n)
        feat[i, 7] = i
        if onb.is_move_type_nb(orders.order_type[o]):
            k = onb.legal_moves_scratch_nb(state, orders, m, orules, o, mb, md, mv, mx, mscr)
            seen[:] = False
            c = 0
            for j in range(min(k, cap)):
                if not seen[mb[j]]:
                    seen[mb[j]] = True
                    c += 1
            feat[i, 4] = c


# --------------------------------------------------------------------------------------------------
# The scripted scorer


@njit(cache=True, inline="always")
def _stakes_gain_nb(p_win, p_win_other, net_sp, net_sp_other, vp):
    """What a card changes in a battle's exact odds (docs/policies.md "Combat cards and the stakes"): the
    win probability it adds, weighted up by the area's VP, plus a tenth of the expected net SP it adds,
    against ``p_win_other`` / ``net_sp_other`` (the blind draw, or no battle card)."""
    return (p_win - p_win_other) * (1.0 + 0.5 * vp) + 0.1 * (net_sp - net_sp_other)


@njit(cache=True, _nrt=False)
def score_options_nb(p, kind, feat, n, out):
    """Score every option of a decision from its features with the parameter row ``p`` (the scripted
    policies; docs/policies.md "How the scripted policies score")."""
    for i in range(n):
        f = feat[i]
        s = 0.0
        if kind == DECISION.DISCARD:
            keep = (p[P_ORDERS_WEIGHT] * f[1] + p[P_CUBES_WEIGHT] * f[2] + max(f[3], 0.0)
                    + (p[P_BATTLE_CARD] if f[4] > 0 else 0.0))
            s = -keep
        elif kind == DECISION.CARD_PLAY:
            if f[0] > 0:
                if f[1] == USE_EVENT:  # an event that gains VP / SP / cards / initiative / cubes
                    s = f[8]
                else:
                    s = p[P_ORDERS_WEIGHT] * f[2] + p[P_CUBES_WEIGHT] * f[3]
                if f[6] < p[P_KEEP_CARDS]:  # among the best combat cards in hand: keep it
                    s -= 1.0 + max(f[4], 0.0)
                if f[5] <= p[P_KEEP_CARDS]:
                    s -= 0.5
        elif kind == DECISION.FIRST_PLAYER:
            s = p[P_PLACE_FIRST] if f[0] == 0 else 1.0 - p[P_PLACE_FIRST]
        elif kind == DECISION.EXEC_FIRST:
            s = p[P_EXEC_FIRST] if f[0] == 0 else 1.0 - p[P_EXEC_FIRST]
        elif kind == DECISION.ORDER:
            s = _score_order_nb(p, f)
        elif kind == DECISION.MOVE or kind == DECISION.RAIL:
            s = _score_move_nb(p, f, kind == DECISION.RAIL)
        elif kind == DECISION.BATTLE_CARD:
            if f[0] > 0:
                if p[P_BATTLE_CARD] > 0.0 and p[P_CARD_MIN_GAIN] > 0.0:  # the stakes, as for COMBAT_CARD
                    s = _stakes_gain_nb(f[8], f[9], f[10], f[11], f[4]) - p[P_CARD_MIN_GAIN]
                else:
                    s = p[P_BATTLE_CARD] * (1.0 + 0.1 * (f[2] + f[3]) + f[4])
        elif kind == DECISION.COMBAT_CARD:
            if f[0] > 0:  # a hand card against the blind draw's expectation (SoE 7.41.2), or against the
                # card already drawn (EatS IX.3 item 2, after_draw)
                keep = 0.01 * (p[P_ORDERS_WEIGHT] * f[3] + p[P_CUBES_WEIGHT] * f[4])
                if p[P_CARD_MIN_GAIN] > 0.0:  # the stakes: what the card changes in this battle's exact odds
                    s = _stakes_gain_nb(f[13], f[14], f[15], f[16], f[8]) - p[P_CARD_MIN_GAIN] - keep
                else:
                    alt = f[12] if f[10] > 0 else f[2]
                    s = f[1] - alt - p[P_HAND_MARGIN] - keep
        elif kind == DECISION.REORGANIZE:
            s = f[3]
        elif kind == DECISION.GARRISON:
            s = f[0]
        elif kind == DECISION.COMBINE:
            if f[0] == 0:
                s = p[P_COMBINE_WEIGHT] * f[6] - 0.5
        elif kind == DECISION.REINFORCE:
            if f[0] == 1:
                s = 1.0 + p[P_FRONT_WEIGHT] * f[6] + 0.1 * f[5] + 0.05 * f[7]
            elif f[0] == 2:
                s = 1.2 + p[P_FRONT_WEIGHT] * f[6] + 0.1 * f[5] + 0.05 * f[7] + 0.1 * f[4]
        elif kind == DECISION.EVENT_TARGET:
            if f[3] > 0:  # a placement: next to the enemy, then the area's VP
                s = 1.0 + p[P_FRONT_WEIGHT] * (1.0 if f[8] > 0 else 0.0) + 0.1 * f[5] + 0.05 * f[8]
            elif f[2] == 2:  # an enemy block: destroy one, else hit the strongest known
                s = 2.0 * f[11] + 0.5 * f[9] + 0.1 * f[5]
            else:  # Desertions: the area where the most SP are lost
                s = f[10] + 0.1 * f[5] + 0.01 * f[7]
        elif kind == DECISION.REACTION:
            if f[0] == 0:  # a card: its event against what it is worth for orders / cubes later
                s = f[2] - 0.3 * (p[P_ORDERS_WEIGHT] * f[9] + p[P_CUBES_WEIGHT] * f[10]) - 0.05 * max(f[11], 0.0)
        elif kind == DECISION.LEADER:
            s = _score_leader_nb(p, f)
        elif kind == DECISION.BATTLE_ORDER:  # the battle most likely won first, then the VP at stake
            s = f[8] + 0.1 * f[2]
        elif kind == DECISION.ADVANCE:
            if f[0] == 0:  # send a block back: excess blocks (weakest first), a threatened empty own city
                s = -0.2 - p[P_ADVANCE_WEIGHT] * 0.5 - (0.3 if f[9] > 0 else 0.0) - 0.05 * f[2]
                if f[11] > 0:
                    s += 1.5
                if f[5] > 0 and f[6] == 0 and f[7] > 0:
                    s += p[P_HOLD_WEIGHT] * 0.5 * f[4]
        elif kind == DECISION.WITHDRAW_LOSS:  # the strongest block; never destroy one (a leader least)
            s = f[1] - 3.0 * f[3] - 5.0 * f[4]
        elif kind == DECISION.EXEC_ORDER:  # the most constrained order first, then placement order
            s = -f[4] - 0.001 * f[7]
        out[i] = s


@njit(cache=True, _nrt=False, internal=True)
def _score_leader_nb(p, f):
    """A leader order (SoE 9.0): scored like the same order placed (:func:`_score_order_nb`; Budyonny's
    full-strength Forced March Out like a Move Out), Stalin's immediate reorganization 0.3 (+0.05 per
    SP the block misses, +0.2 next to the enemy: no half strength risk), minus 0.5 per order it
    countermands, minus ``leader_reserve`` (the ability is spent for the round). Pass = 0."""
    t = f[0]
    if t == onb.NO_ORDER:
        return 0.0
    ab = f[17]
    if ab == lnb.ABILITY.REORGANIZE:
        s = 0.3 + 0.05 * f[14] + (0.2 if f[10] > 0 else 0.0)
    elif ab == lnb.ABILITY.FORCED_MARCH_OUT_FULL_STRENGTH:
        f[0] = onb.MOVE_OUT  # scored in place (no copy: no allocation), then restored
        s = _score_order_nb(p, f)
        f[0] = t
    else:
        s = _score_order_nb(p, f)
    return s - 0.5 * f[19] - p[P_LEADER_RESERVE]


@njit(cache=True, inline="always")
def _score_order_nb(p, f):
    t = f[0]
    if t == onb.NO_ORDER:
        return 0.0
    vp = f[2]
    own_sp = f[5]
    threat = f[10]  # known enemy SP next door
    thr = p[P_ATTACK_THRESHOLD]
    if t == onb.MOVE_TO or t == onb.FORCED_MARCH_TO:
        k = 0.8 if t == onb.FORCED_MARCH_TO else 1.0
        if f[6] > 0 or f[12] > 0:  # enemy in the area: an attack by the adjacent own SP
            return k * p[P_ATTACK_WEIGHT] * (f[13] - thr) * (1.0 + vp + 0.25 * f[7])
        if f[3] < 0:  # undefended enemy-controlled area
            return k * (p[P_CAPTURE_WEIGHT] * vp + p[P_ADVANCE_WEIGHT] * (1.0 if threat > 0 else 0.3))
        if f[3] > 0 and threat > own_sp and vp > 0:  # reinforce a threatened own key city
            return k * p[P_HOLD_WEIGHT] * vp * 0.5
        return k * p[P_ADVANCE_WEIGHT] * (0.5 if threat > 0 else -0.2)
    if t == onb.MOVE_OUT or t == onb.FORCED_MARCH_OUT:
        k = 0.8 if t == onb.FORCED_MARCH_OUT else 1.0
        s = 0.0
        if f[13] > 0:
            s = k * p[P_ATTACK_WEIGHT] * (f[13] - thr) * (1.0 + f[14])
        elif f[14] > 0:
            s = k * p[P_CAPTURE_WEIGHT] * f[14]
        else:
            s = k * p[P_ADVANCE_WEIGHT] * 0.3
        if f[3] > 0 and vp > 0 and threat > 0 and f[4] <= p[P_RESERVE]:
            s -= p[P_HOLD_WEIGHT] * vp * 0.5
        return s
    if t == onb.DEFEND:
        if own_sp <= 0 or threat <= 0:
            return -0.5
        return p[P_DEFEND_WEIGHT] * min(threat / (own_sp + 1.0), 3.0) * (1.0 + vp) * 0.5
    if t == onb.WITHDRAW:
        if own_sp <= 0 or threat < p[P_WITHDRAW_RATIO] * own_sp:
            return -1.0
        return p[P_DEFEND_WEIGHT] * (threat / own_sp - p[P_WITHDRAW_RATIO] + 0.5) - p[P_HOLD_WEIGHT] * vp
    if t == onb.RECON:
        return p[P_RECON_WEIGHT] * f[15] - 0.05
    if t == onb.REORGANIZE:
        return 0.3 * f[14] - (0.5 if threat > 0 else 0.0)
    if t == onb.RAIL_TRANSPORT:
        return -0.1
    return 0.0


@njit(cache=True, _nrt=False, internal=True)
def _score_move_nb(p, f, rail):
    if f[0] > 0:  # stop executing this order
        return 0.0
    leaving_vp = f[10] if f[10] > 0 and f[12] > 0 and f[11] < p[P_RESERVE] else 0.0
    return _move_score_nb(p, f[3] > 0, f[4], f[5], f[8], f[6], f[13] > 0, leaving_vp, f[7] <= 0, f[14], rail)


@njit(cache=True, inline="always")
def _move_score_nb(p, attack, p_win, vp, en_sp, control, threatened, leaving_vp, overstacks, detach, rail):
    """The scripted score of a move (the rule of :func:`_score_move_nb`, shared with
    :func:`move_scores_nb`, which computes its inputs from the position): ``attack`` with ``p_win``
    against ``en_sp`` known enemy SP, else a capture (``control`` < 0), a hold of a threatened own key
    city or an advance towards (``threatened``) or away from the enemy; minus the VP of a threatened
    own key city left below the reserve (``leaving_vp``), 1 when the move ``overstacks`` (SoE 7.33
    pulls the latest arrivals back), 0.05 per detached SP and 0.1 for a rail move. Inlined."""
    if attack:
        s = p[P_ATTACK_WEIGHT] * (p_win - p[P_ATTACK_THRESHOLD]) * (1.0 + vp + 0.25 * en_sp)
    elif control < 0:
        s = p[P_CAPTURE_WEIGHT] * vp + 0.2 * p[P_ADVANCE_WEIGHT] + 0.05
    elif control > 0 and vp > 0 and threatened:
        s = p[P_HOLD_WEIGHT] * vp * 0.5
    else:
        s = p[P_ADVANCE_WEIGHT] * (0.3 if threatened else -0.3)
    if leaving_vp > 0:
        s -= p[P_HOLD_WEIGHT] * leaving_vp
    if overstacks:
        s -= 1.0
    s -= 0.05 * detach
    if rail:
        s -= 0.1
    return s


@njit(cache=True, _nrt=False)
def argmax_tie_nb(scores, n, rng):
    """Index of the highest score, ties (within 1e-9) broken uniformly from ``rng`` (one draw only
    when there is a tie)."""
    # The maximum in four interleaved running maxima: one chain of compare-and-select over ~110 ORDER rows
    # waits on itself at every element, four chains do not. Each chain skips a NaN as the single chain did
    # (``>`` is False), and a NaN first score stays the maximum in all four, so the value is the single
    # chain's. Only the rows within 1e-9 of it matter afterwards: their count and the sum of their indices
    # come from one branch-free (vectorized) pass, and that sum is the answer when they are one row. None
    # (a NaN maximum) keeps the old fallback: the draw is made, then index 0.
    best0 = scores[0]
    best1 = best0
    best2 = best0
    best3 = best0
    i = 1
    while i + 4 <= n:
        s0 = scores[i]
        s1 = scores[i + 1]
        s2 = scores[i + 2]
        s3 = scores[i + 3]
        best0 = s0 if s0 > best0 else best0
        best1 = s1 if s1 > best1 else best1
        best2 = s2 if s2 > best2 else best2
        best3 = s3 if s3 > best3 else best3
        i += 4
    while i < n:
        s0 = scores[i]
        best0 = s0 if s0 > best0 else best0
        i += 1
    best = best0
    best = best1 if best1 > best else best
    best = best2 if best2 > best else best
    best = best3 if best3 > best else best
    lo = best - 1e-9
    k = 0
    index_sum = 0
    for i in range(n):
        tied = scores[i] >= lo
        k += tied
        index_sum += i * tied
    if k == 1:
        return index_sum
    r = rand_below_nb(rng, k)
    for i in range(n):
        if scores[i] >= lo:
            if r == 0:
                return i
            r -= 1
    return 0


# --------------------------------------------------------------------------------------------------
# Dispatch


@njit(cache=True, _nrt=False)
def random_policy_nb(decision_kind, n_options, rng):
    """Uniform over ``0..n_options-1`` (one draw of ``rng``)."""
    return rand_below_nb(rng, n_options)


@njit(cache=True, _nrt=True)
def choose_nb(policy_id, decision_kind, n_options, rng):
    """Feature-free choice (the loop's original entry, kept for tests and tools): the random policy.

    Scripted policies need features: use :func:`choose_option_nb`. Unknown ids fall back to random.
    """
    if n_options <= 1:
        return 0
    return random_policy_nb(decision_kind, n_options, rng)


_PYTHON_POLICIES: dict = {}  # slot -> callable(side, kind, feat, n, rng) -> int (soe_sim.engine.game)


def _python_choose(slot, side, kind, feat, n, rng):
    fn = _PYTHON_POLICIES.get(int(slot))
    if fn is None:
        return 0
    return int(fn(int(side), int(kind), feat, int(n), rng))


@njit(cache=True, _nrt=True)
def choose_option_nb(policy_id, params, kind, feat, n, rng, side):
    """Index of the chosen option (``0 <= index < n``) for policy ``policy_id`` with the side's
    parameter row ``params`` and the decision's feature matrix ``feat`` (``n`` × N_FEAT)."""
    if n <= 1:
        return 0
    if policy_id == POLICY_RANDOM:
        return random_policy_nb(kind, n, rng)
    if policy_id == POLICY_PYTHON:
        slot = np.int64(params[P_SLOT])
        with numba.objmode(k="int64"):
            k = _python_choose(slot, side, kind, feat, n, rng)
        return k
    if policy_id == POLICY_AGGRESSIVE or policy_id == POLICY_DEFENSIVE or policy_id == POLICY_BALANCED:
        scores = np.empty(n, dtype=np.float64)
        score_options_nb(params, kind, feat, n, scores)
        return argmax_tie_nb(scores, n, rng)
    # a policy id with no branch above (names are checked against POLICY_IDS before a game starts): never
    # play some other policy in its place
    raise ValueError("choose_option_nb: a policy id without a branch (docs/policies.md 'A numba policy')")
