"""Numba kernels of the Strike of the Eagle battle model (SoE 7.41 with 7.34, 1.2, 3.0, 7.2, 7.44, 6.1).

Layout (vectorbt/QuantEcon style): kernels take only arrays, scalars and the
:class:`~soe_sim.rules.CombatRules` NamedTuple, and fill caller-allocated ``out`` arrays.

A battle is first *prepared* into one row of ``N_PREP`` int64 parameters (everything that does not
depend on the combat cards), then *resolved* for a pair of card modifiers. The exact path
enumerates card pairs; the Monte Carlo path draws them from per-chunk streams. Both call the same
:func:`resolve_nb`, and the game engine will call it too.
"""
from __future__ import annotations

import numpy as np
from numba import prange

from soe_sim._jit import njit
from soe_sim.data.enums import ARM

# --- prepared-battle row layout -------------------------------------------------------------
P_ATT_BASE_CV = 0  # attacker combat value before the combat card
P_DEF_BASE_CV = 1  # defender combat value before the combat card (garrison, flank penalty in)
P_ATT_SP = 2  # real SP of attacking blocks (losses are taken at full strength, SoE 7.41.5)
P_ATT_N = 3  # number of attacking blocks
P_DEF_SP = 4  # real SP of defending blocks in the battle
P_DEF_N = 5  # number of defending blocks in the battle
P_DEF_GARRISON = 6  # garrison SP (0 or rules.garrison_sp)
P_DEF_LOSS_REDUCTION = 7  # fortification + Defend + own battle card (SoE 7.41.4)
P_DEF_EXTRA_LOSS = 8  # attacker's battle card + blocked-withdraw penalty (SoE 7.2)
P_ATT_LOSS_REDUCTION = 9
P_ATT_EXTRA_LOSS = 10
P_DEF_WITHDRAW_LOSS = 11  # SP lost by withdrawing blocks before any battle (SoE 7.2 Withdraw)
P_DEF_WITHDRAW_DESTROYED = 12  # 1 if that loss destroyed a 1-SP block
P_FOUGHT = 13  # 0 when every defender withdrew and no garrison stayed: no battle
P_INIT_HOLDER = 14  # 0 attacker holds the front's initiative, 1 defender
P_INIT_LEVEL = 15  # holder's level before the battle
P_FLANK_ATTACKS = 16  # flank attacks before negation (directions - 1)
P_FLANK_PENALIZED = 17  # flank attacks left after negation
N_PREP = 18

# --- battle-card effect vector layout (docs/data-format.md effect codes) ---------------------
E_COMBAT_VALUE = 0
E_ENEMY_EXTRA_LOSS = 1
E_OWN_LOSS_REDUCTION = 2
E_NEGATE_FLANK = 3
E_CANCEL_FORTIFICATION = 4
E_CANCEL_ENEMY_BATTLE_CARD = 5
N_EFFECT = 6

# --- withdraw modes (SoE 7.2 Withdraw) -------------------------------------------------------
WITHDRAW_NONE = 0
WITHDRAW_OK = 1  # defenders withdraw without battle
WITHDRAW_BLOCKED = 2  # no friendly area to withdraw to: fight and lose 1 SP extra

# --- resolved-outcome row layout -------------------------------------------------------------
O_ATT_CV = 0
O_DEF_CV = 1
O_ATT_LOSSES = 2  # real SP lost by the attacker
O_DEF_LOSSES = 3  # real SP lost by the defender: blocks + garrison + withdrawal
O_ATTACKER_WINS = 4
O_GREAT_VICTORY = 5  # 0 none, 1 attacker, 2 defender
O_INIT_HOLDER = 6  # 0 attacker, 1 defender, after the battle
O_INIT_LEVEL = 7
O_ATT_DESTROYED = 8  # attacking blocks destroyed
O_DEF_DESTROYED = 9  # defending blocks destroyed
O_GARRISON_LOST = 10
O_INIT_CHANGE = 11  # INIT_GAIN / INIT_NONE / INIT_LOSE / INIT_FLIP
O_DEF_BLOCK_LOSSES = 12  # real SP lost by defending blocks in the battle (no garrison/withdrawal)
N_OUT = 13

INIT_GAIN = 0
INIT_NONE = 1
INIT_LOSE = 2
INIT_FLIP = 3


@njit(cache=True, inline="always")
def half_strength_nb(sp, divisor):
    """Forced-marched and reorganizing blocks fight at half strength, rounded down (SoE 7.2)."""
    return sp // divisor


@njit(cache=True, inline="always")
def chart_losses_nb(combat_value, chart_min_value, chart_losses):
    """Losses inflicted for a combat value (EatS IX.3 table, SoE 7.41.3)."""
    # Branch-free count of thresholds reached: combat values are random, so a data-dependent
    # branch here would mispredict on most Monte Carlo draws.
    column = 0
    for i in range(chart_min_value.shape[0]):
        column += combat_value >= chart_min_value[i]
    return chart_losses[column - 1] if column > 0 else 0


@njit(cache=True, inline="always")
def prepare_battle_nb(
    att_sp, att_half, att_arm, att_direction,
    def_sp, def_half, def_arm,
    support_directions, garrison, defend, fortified, withdraw,
    att_effect, def_effect, init_holder, init_level, rules, out,
):
    """Reduce one battle to its card-independent parameters.

    Parameters
    ----------
    att_sp, att_half, att_arm, att_direction : ndarray, shape (n_att,)
        Attacking blocks: SP (int64), half-strength flag (forced march, bool), arm (int64) and the
        index of the road/rail they enter along (int64; distinct indices = distinct directions).
    def_sp, def_half, def_arm : ndarray, shape (n_def,)
        Defending blocks; ``def_half`` marks blocks that forced-marched in or reorganize.
    support_directions : int
        Separate directions along which friendly supporting blocks entered (SoE 7.34).
    garrison, defend, fortified : bool
        Garrison present (SoE 3.0); Defend Area order (SoE 7.2); every attack from fortified
        directions (SoE 1.2).
    withdraw : int
        ``WITHDRAW_NONE``, ``WITHDRAW_OK`` or ``WITHDRAW_BLOCKED`` (SoE 7.2 Withdraw).
    att_effect, def_effect : ndarray, shape (N_EFFECT,), int64
        Battle-card effects (zeros for no card).
    init_holder, init_level : int
        Front initiative before the battle: holder 0 = attacker, 1 = defender (SoE 6.1).
    rules : CombatRules
    out : ndarray, shape (N_PREP,), int64
        Filled in place.
    """
    # A card that cancels the enemy battle card voids it; two such cards void each other. The effects
    # in play are read into scalars (no copy of the arrays: callers compiled without reference counting
    # inline this function, and it allocates nothing).
    att_on = not (def_effect[E_CANCEL_ENEMY_BATTLE_CARD] > 0)
    def_on = not (att_effect[E_CANCEL_ENEMY_BATTLE_CARD] > 0)
    att_card_cv = att_effect[E_COMBAT_VALUE] if att_on else 0
    att_cancels_fortification = att_effect[E_CANCEL_FORTIFICATION] if att_on else 0
    att_enemy_extra_loss = att_effect[E_ENEMY_EXTRA_LOSS] if att_on else 0
    att_own_loss_reduction = att_effect[E_OWN_LOSS_REDUCTION] if att_on else 0
    def_card_cv = def_effect[E_COMBAT_VALUE] if def_on else 0
    def_negate_flank = def_effect[E_NEGATE_FLANK] if def_on else 0
    def_enemy_extra_loss = def_effect[E_ENEMY_EXTRA_LOSS] if def_on else 0
    def_own_loss_reduction = def_effect[E_OWN_LOSS_REDUCTION] if def_on else 0

    out[:] = 0
    out[P_INIT_HOLDER] = init_holder
    out[P_INIT_LEVEL] = init_level

    # Attacker: SP of blocks, forced-marched at half strength (SoE 7.2, 7.41.3).
    att_cv = 0
    att_total = 0
    all_attackers_infantry = True
    n_directions = 0
    for i in range(att_sp.shape[0]):
        att_total += att_sp[i]
        if att_half[i]:
            att_cv += half_strength_nb(att_sp[i], rules.half_strength_divisor)
        else:
            att_cv += att_sp[i]
        if att_arm[i] != ARM.INFANTRY:
            all_attackers_infantry = False
        new_direction = True
        for j in range(i):
            if att_direction[j] == att_direction[i]:
                new_direction = False
                break
        if new_direction:
            n_directions += 1
    out[P_ATT_BASE_CV] = att_cv + att_card_cv
    out[P_ATT_SP] = att_total
    out[P_ATT_N] = att_sp.shape[0]

    garrison_sp = rules.garrison_sp if garrison else 0
    out[P_DEF_GARRISON] = garrison_sp

    # SoE 7.2 Withdraw: blocks leave without a battle and lose 1 SP from one block (the
    # strongest, reading R6), none when every withdrawing block is cavalry (or a leader, which
    # moves as cavalry, SoE 9.0) and only infantry attacks. A garrison never moves (SoE 3.0), so
    # it stays and fights alone.
    if withdraw == WITHDRAW_OK:
        all_def_cavalry = True
        strongest = 0
        for i in range(def_sp.shape[0]):
            if def_arm[i] == ARM.INFANTRY:
                all_def_cavalry = False
            if def_sp[i] > strongest:
                strongest = def_sp[i]
        exempt = rules.withdraw_cavalry_exempt_vs_infantry and all_def_cavalry and all_attackers_infantry
        if def_sp.shape[0] > 0 and not exempt:
            loss = min(rules.withdraw_loss, strongest)
            out[P_DEF_WITHDRAW_LOSS] = loss
            if loss >= strongest:
                out[P_DEF_WITHDRAW_DESTROYED] = 1
        out[P_FOUGHT] = 1 if garrison_sp > 0 else 0
        def_cv = garrison_sp
        out[P_DEF_SP] = 0
        out[P_DEF_N] = 0
    else:
        out[P_FOUGHT] = 1
        def_cv = garrison_sp
        def_total = 0
        for i in range(def_sp.shape[0]):
            def_total += def_sp[i]
            if def_half[i]:
                def_cv += half_strength_nb(def_sp[i], rules.half_strength_divisor)
            else:
                def_cv += def_sp[i]
        out[P_DEF_SP] = def_total
        out[P_DEF_N] = def_sp.shape[0]

    # SoE 1.2: the fortification counts only when ALL attacks come from fortified directions.
    fortification = fortified and att_cancels_fortification == 0
    defend_on = defend
    # SoE 7.34: flank attacks = directions beyond the primary; fortification, Defend, each
    # direction of supporting blocks and battle cards each negate one.
    flank_attacks = max(n_directions - 1, 0)
    negated = support_directions * rules.support_negates_flank_per_direction + def_negate_flank
    if fortification:
        negated += rules.fortification_negates_flank
    if defend_on:
        negated += rules.defend_negates_flank
    penalized = max(flank_attacks - negated, 0)
    out[P_FLANK_ATTACKS] = flank_attacks
    out[P_FLANK_PENALIZED] = penalized
    out[P_DEF_BASE_CV] = def_cv + def_card_cv - penalized * rules.flank_penalty

    # SoE 7.41.4: the defender loses one less in a fortification and with a Defend order.
    reduction = def_own_loss_reduction
    if fortification:
        reduction += rules.fortification_loss_reduction
    if defend_on:
        reduction += rules.defend_loss_reduction
    out[P_DEF_LOSS_REDUCTION] = reduction
    extra = att_enemy_extra_loss
    if withdraw == WITHDRAW_BLOCKED:
        extra += rules.withdraw_blocked_extra_loss
    out[P_DEF_EXTRA_LOSS] = extra
    out[P_ATT_LOSS_REDUCTION] = att_own_loss_reduction
    out[P_ATT_EXTRA_LOSS] = def_enemy_extra_loss


@njit(cache=True, inline="always")
def _destroyed_nb(losses, total_sp, n_blocks):
    # Losses go to the strongest block one SP at a time (SoE 7.41.5), so a block is destroyed
    # only once every block is down to 1 SP: each loss beyond total - n destroys one block.
    return min(max(losses - (total_sp - n_blocks), 0), n_blocks)


@njit(cache=True, inline="always")
def defender_losses_nb(prep, att_modifier, rules):
    """The defender's side of :func:`resolve_nb`, which depends on the attacker's combat value only: that
    value, the defender's real losses (garrison included, withdrawal not) and the garrison's part of them.
    The odds kernels of the policies combine it with :func:`attacker_losses_nb` per pair of modifiers."""
    # SoE 7.41.3: combat value = blocks + garrison + card - flank penalties, never below 0.
    att_cv = max(prep[P_ATT_BASE_CV] + att_modifier, rules.min_combat_value)
    hits_on_def = chart_losses_nb(att_cv, rules.chart_min_value, rules.chart_losses)
    hits_on_def = max(hits_on_def - prep[P_DEF_LOSS_REDUCTION], 0) + prep[P_DEF_EXTRA_LOSS]
    # SoE 7.41.5: the garrison takes the first loss; real losses never exceed the SP present.
    garrison_sp = prep[P_DEF_GARRISON]
    def_real = min(hits_on_def, prep[P_DEF_SP] + garrison_sp)
    return att_cv, def_real, min(def_real, garrison_sp)


@njit(cache=True, inline="always")
def attacker_losses_nb(prep, def_modifier, rules):
    """The attacker's side of :func:`resolve_nb` (it depends on the defender's combat value only): that
    value and the attacker's real losses."""
    def_cv = max(prep[P_DEF_BASE_CV] + def_modifier, rules.min_combat_value)
    hits_on_att = chart_losses_nb(def_cv, rules.chart_min_value, rules.chart_losses)
    hits_on_att = max(hits_on_att - prep[P_ATT_LOSS_REDUCTION], 0) + prep[P_ATT_EXTRA_LOSS]
    return def_cv, min(hits_on_att, prep[P_ATT_SP])


@njit(cache=True, inline="always")
def defender_outcome_losses_nb(def_real, garrison_lost, rules):
    """The defender's losses that decide the battle (SoE 7.41.6: its blocks' real losses, and the
    garrison's when ``rules.garrison_loss_counts_for_outcome``); the attacker wins when they exceed its own."""
    if rules.garrison_loss_counts_for_outcome:
        return def_real
    return def_real - garrison_lost


@njit(cache=True, inline="always")
def resolve_nb(prep, att_modifier, def_modifier, rules, out):
    """Resolve a prepared battle for given combat-card modifiers (bonus for hand cards included).

    Parameters
    ----------
    prep : ndarray, shape (N_PREP,), int64
        From :func:`prepare_battle_nb`.
    att_modifier, def_modifier : int
        Combat-card values actually added (SoE 7.41.2).
    rules : CombatRules
    out : ndarray, shape (N_OUT,), int64
        Filled in place with the outcome.
    """
    out[:] = 0
    holder = prep[P_INIT_HOLDER]
    level = prep[P_INIT_LEVEL]
    if prep[P_FOUGHT] == 0:
        # Everyone withdrew (SoE 7.2): no battle, the attacker takes the area, initiative stays.
        out[O_DEF_LOSSES] = prep[P_DEF_WITHDRAW_LOSS]
        out[O_DEF_DESTROYED] = prep[P_DEF_WITHDRAW_DESTROYED]
        out[O_ATTACKER_WINS] = 1
        out[O_INIT_HOLDER] = holder
        out[O_INIT_LEVEL] = level
        out[O_INIT_CHANGE] = INIT_NONE
        return

    att_cv, def_real, garrison_lost = defender_losses_nb(prep, att_modifier, rules)
    def_cv, att_real = attacker_losses_nb(prep, def_modifier, rules)
    def_block_losses = def_real - garrison_lost
    # SoE 7.41.6: more losses loses; a draw is lost by the attacker.
    attacker_wins = defender_outcome_losses_nb(def_real, garrison_lost, rules) > att_real
    if rules.garrison_first_loss_only_if_defender_loses and not attacker_wins:
        # EatS II.4.2: "Garrisons are used to pay first losses in a lost defensive battle": a
        # winning defender's blocks pay first, the garrison only what they cannot (reading V7).
        def_block_losses = min(def_real, prep[P_DEF_SP])
        garrison_lost = def_real - def_block_losses

    # SoE 7.44: a winner inflicting >= 4 real losses scores a great victory.
    great = 0
    if attacker_wins:
        inflicted = def_block_losses
        if rules.garrison_loss_counts_for_great_victory:
            inflicted += garrison_lost
        if inflicted >= rules.great_victory_losses:
            great = 1
    elif att_real >= rules.great_victory_losses:
        great = 2

    # SoE 6.1: the holder gains a level by winning and inflicting more SP losses than his
    # current level; loses one for any lost battle; at 1 the marker flips to the opponent.
    def_for_initiative = def_block_losses
    if rules.garrison_loss_counts_for_initiative:
        def_for_initiative += garrison_lost
    if holder == 0:
        holder_won = attacker_wins
        inflicted_by_holder = def_for_initiative
        suffered_by_holder = att_real
    else:
        holder_won = not attacker_wins
        inflicted_by_holder = att_real
        suffered_by_holder = def_for_initiative
    if rules.initiative_gain_by_loss_difference:
        # EatS II.4.3 Example 1: the losses inflicted minus those suffered must exceed the level.
        inflicted_by_holder -= suffered_by_holder
    change = INIT_NONE
    if holder_won:
        if inflicted_by_holder > level and level < rules.initiative_max_level:
            level += min(1, rules.initiative_max_change)
            change = INIT_GAIN
    elif level > rules.initiative_min_level:
        level -= min(1, rules.initiative_max_change)
        change = INIT_LOSE
    else:
        holder = 1 - holder
        change = INIT_FLIP

    out[O_ATT_CV] = att_cv
    out[O_DEF_CV] = def_cv
    out[O_ATT_LOSSES] = att_real
    out[O_DEF_LOSSES] = def_real + prep[P_DEF_WITHDRAW_LOSS]
    out[O_ATTACKER_WINS] = 1 if attacker_wins else 0
    out[O_GREAT_VICTORY] = great
    out[O_INIT_HOLDER] = holder
    out[O_INIT_LEVEL] = level
    out[O_ATT_DESTROYED] = _destroyed_nb(att_real, prep[P_ATT_SP], prep[P_ATT_N])
    out[O_DEF_DESTROYED] = (
        _destroyed_nb(def_block_losses, prep[P_DEF_SP], prep[P_DEF_N])
        + prep[P_DEF_WITHDRAW_DESTROYED]
    )
    out[O_GARRISON_LOST] = garrison_lost
    out[O_INIT_CHANGE] = change
    out[O_DEF_BLOCK_LOSSES] = def_block_losses


@njit(cache=True, inline="always")
def exact_nb(prep, att_values, att_probs, def_values, def_probs, rules, out_outcomes, out_probs):
    """Enumerate every pair of combat-card values (SoE 7.41.2).

    Parameters
    ----------
    prep : ndarray, shape (N_PREP,), int64
    att_values, def_values : ndarray, shape (k_att,), (k_def,), int64
        Distinct modifier values each side can add (a hand card is a single value with
        probability 1; a blind draw is every value present in the deck).
    att_probs, def_probs : ndarray, float64
        Their probabilities (each sums to 1).
    rules : CombatRules
    out_outcomes : ndarray, shape (k_att * k_def, N_OUT), int64
    out_probs : ndarray, shape (k_att * k_def,), float64
    """
    k = 0
    for i in range(att_values.shape[0]):
        for j in range(def_values.shape[0]):
            resolve_nb(prep, att_values[i], def_values[j], rules, out_outcomes[k])
            out_probs[k] = att_probs[i] * def_probs[j]
            k += 1


@njit(cache=True, inline="always")
def splitmix64_nb(state):
    """One step of SplitMix64: returns (new_state, 64-bit output)."""
    state = state + np.uint64(0x9E3779B97F4A7C15)
    z = state
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return state, z ^ (z >> np.uint64(31))


@njit(cache=True, inline="always")
def draw_modifier_nb(state, values, cumcount, n_values):
    """Draw one card blind from a deck given as cumulative counts per modifier value."""
    total = cumcount[n_values - 1]
    state, r = splitmix64_nb(state)
    # 53 random bits scaled to [0, total): bias below 2**-40 for any real deck, and no division.
    pick = np.int64(np.float64(np.int64(r >> np.uint64(11))) * (1.0 / 9007199254740992.0) * total)
    index = 0
    for v in range(n_values - 1):  # branch-free: the pick is random
        index += pick >= cumcount[v]
    return state, values[index]


@njit(cache=True, parallel=True, _nrt=True)
def simulate_nb(
    prep, att_fixed, def_fixed, att_deck, def_deck,
    deck_values, deck_cumcount, deck_nvalues,
    sim_offsets, chunk_size, chunk_offset, chunk_seeds, rules,
    out_att_modifier, out_def_modifier, out_outcomes,
):
    """Monte Carlo: resolve ``sim_offsets[-1]`` battles with cards drawn from per-chunk streams.

    Simulations are numbered 0..S-1; battle ``b`` owns simulations
    ``sim_offsets[b]:sim_offsets[b+1]``. Simulations are split into fixed-size chunks, chunk ``c``
    drawing from a SplitMix64 stream seeded by ``chunk_seeds[c]``, so the output is
    bit-identical at any thread count.

    Parameters
    ----------
    prep : ndarray, shape (n_battles, N_PREP), int64
    att_fixed, def_fixed : ndarray, shape (n_battles,), int64
        Modifier of a hand card (bonus included), or -1 << 40 to draw blind.
    att_deck, def_deck : ndarray, shape (n_battles,), int64
        Row of the deck tables each side draws from.
    deck_values, deck_cumcount : ndarray, shape (n_decks, max_values), int64
        Distinct modifier values of each deck and cumulative card counts.
    deck_nvalues : ndarray, shape (n_decks,), int64
    sim_offsets : ndarray, shape (n_battles + 1,), int64
    chunk_size : int
    chunk_offset : int
        Global index of the first chunk handled by this call (callers run batches of chunks to
        show progress; chunk ``chunk_offset + c`` always uses ``chunk_seeds[c]``).
    chunk_seeds : ndarray, shape (n_chunks,), uint64
    rules : CombatRules
    out_att_modifier, out_def_modifier : ndarray, shape (S,), int16
    out_outcomes : ndarray, shape (S, N_OUT), int16
        Compact outcome rows (every field fits in int16).
    """
    n_sims = sim_offsets[sim_offsets.shape[0] - 1]  # no negative index in a kernel (soe_sim._jit)
    n_chunks = chunk_seeds.shape[0]
    n_battles = prep.shape[0]
    for c in prange(n_chunks):
        state = chunk_seeds[c]
        scratch = np.empty(N_OUT, dtype=np.int64)
        start = (chunk_offset + c) * chunk_size
        stop = min(start + chunk_size, n_sims)
        b = np.searchsorted(sim_offsets, start, side="right") - 1
        for s in range(start, stop):
            while b < n_battles - 1 and s >= sim_offsets[b + 1]:
                b += 1
            if att_fixed[b] > -(1 << 40):
                att_mod = att_fixed[b]
            else:
                d = att_deck[b]
                state, att_mod = draw_modifier_nb(state, deck_values[d], deck_cumcount[d], deck_nvalues[d])
            if def_fixed[b] > -(1 << 40):
                def_mod = def_fixed[b]
            else:
                d = def_deck[b]
                state, def_mod = draw_modifier_nb(state, deck_values[d], deck_cumcount[d], deck_nvalues[d])
            out_att_modifier[s] = att_mod
            out_def_modifier[s] = def_mod
            resolve_nb(prep[b], att_mod, def_mod, rules, scratch)
            for k in range(N_OUT):
                out_outcomes[s, k] = scratch[k]
