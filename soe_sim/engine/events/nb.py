"""Numba kernels of card events: historical events (SoE 7.13) and reaction cards (SoE 3.4, 7.1 item 6,
7.41 item 4), resolved on the :class:`~soe_sim.engine.state.GameState`.

Readings of the card texts: docs/rules.md "Engine: card events" (EV1…). The effects are card data
(``data/cards/<side>.csv`` ``effect``), encoded once by :func:`soe_sim.engine.events.event_table`
into an :class:`~soe_sim.engine.events.EventTable` (per side × card: the condition, the effect codes
``FX_*`` and their values, the kind of choice the event needs ``TK_*``).

Protocol (the round loop, ``soe_sim.engine.game``, drives it; docs/engine-design.md "Decisions"):

* **historical event at card play (7.1, 7.13)**: ``card_play_context_nb(ctx, front)``; an event play
  ``(card, USE_EVENT)`` is legal only when ``legal_event_targets_nb(...) > 0`` (a use worth nothing is
  not offered, like E-C4); after ``cards.nb.apply_card_play_nb`` (which removes or discards the card,
  E-C1) the loop asks for a target among the rows and calls :func:`apply_event_nb`.
* **reaction windows (7.1 item 6)**: after a side's Recon order (``recon_context_nb``) and after each
  battle (``battle_context_nb`` + the mask of the battle's blocks taken *before* the battle by
  :func:`battle_blocks_nb`), :func:`reaction_window_nb` lists the reaction cards of a side that may be
  played now; :func:`play_reaction_nb` plays one (``cards.nb.play_reaction_card_nb``) and resolves it.

Every kernel takes the named tuples of the other modules: ``state`` (GameState), ``cards``
(CardState), ``orders`` (OrderState: what each side has seen), ``map_arrays`` (MapArrays), ``table``
(EventTable), plus ``active_nations`` — a per-game ``(n_nations,)`` bool array (copy of
``GameConfig.nation_active`` at game start) that an ``activate_nation`` event sets —, a context
``ctx`` (``N_X`` int64, columns ``X_*``) and ``involved`` (``(n_blocks,)`` bool, the blocks of the
battle of an after-battle window; ignored elsewhere).

``out`` of :func:`apply_event_nb` (``N_EO`` int64, columns ``EO_*``) reports what changed so that the
loop can log it (the VP change is the track's actual change, E10).
"""
from __future__ import annotations

import numpy as np

from soe_sim._jit import njit
from soe_sim.data.enums import ARM, CARD_FRONT, EVENT_KIND, SIDE
from soe_sim.engine.battles.nb import (
    B_AREA,
    B_ATT_LOSSES,
    B_ATTACKER,
    B_DEF_LOSSES,
    B_FOUGHT,
    B_WINNER,
)
from soe_sim.engine.cards.nb import DISCARD, HAND, IN_PLAY, NO_CARD, draw_cards_to_limit_nb, play_reaction_card_nb
from soe_sim.engine.nb import enemy_presence_nb, side_sign_nb, supply_depots_nb, vp_add_nb
from soe_sim.engine.state import STATUS

# --- effect codes (table.fx_code) ------------------------------------------------------------------
FX_NONE = 0
FX_ENEMY_SP_LOSS_INITIATIVE = 1  # enemy_sp_loss_initiative:N (SoE card 6 Desertions)
FX_ENEMY_SP_LOSS = 2  # enemy_sp_loss:N
FX_DRAW_CARDS = 3  # draw_cards:N (up to the hand limit)
FX_INITIATIVE = 4  # initiative:±N (SoE 6.1)
FX_VP = 5  # vp:N (SoE 7.8)
FX_CUBES_INFANTRY = 6  # cubes_infantry:N (SoE 3.2, 7.12)
FX_CUBES_CAVALRY = 7
FX_CUBES_ALLIED = 8
FX_ELIMINATE_NATION_BLOCK = 9  # eliminate_nation_block:<nation> (value: Nation code)
FX_ACTIVATE_NATION = 10  # activate_nation:<nation> (value: Nation code)
FX_REINFORCE = 11  # reinforce:<block> (value: block universe index, -1 not in this scenario)
# battle-card keys: resolved by the battle model through CardState.battle_effect (SoE 7.41.1); kept
# in the table for completeness, ignored by apply_event_nb
FX_BATTLE_COMBAT_VALUE = 12
FX_BATTLE_ENEMY_EXTRA_LOSS = 13
FX_BATTLE_OWN_LOSS_REDUCTION = 14
FX_BATTLE_NEGATE_FLANK = 15
FX_BATTLE_CANCEL_FORTIFICATION = 16
FX_BATTLE_CANCEL_ENEMY_BATTLE_CARD = 17
FX_AT_AREA = 18  # at_area:<area> (value: area index): the card's reinforce places only there (EV8)
N_FX = 19

# --- conditions (table.condition; table.cond_value holds a parameter) -----------------------------
COND_NONE = 0
COND_AFTER_OWN_RECON = 1  # condition:after_own_recon
COND_WON_BATTLE = 2  # condition:won_battle
COND_LOST_BATTLE = 3  # condition:lost_battle
COND_WON_BATTLE_AS_DEFENDER = 4  # condition:won_battle_as_defender
COND_WON_KEY_CITY_BATTLE = 5  # condition:won_key_city_battle_min_losses_<N> (cond_value = N)
N_COND = 6

# --- what the event's choice is (table.target_kind) --------------------------------------------------
TK_NONE = 0  # nothing to choose: one row, target -1
TK_AREA = 1  # an area index
TK_BLOCK = 2  # a block index

# --- windows and the context array ctx ----------------------------------------------------------------
WINDOW_CARD_PLAY = 0  # SoE 7.1, 7.13: start of an operation phase, card play on ctx[X_FRONT]
WINDOW_AFTER_RECON = 1  # after ctx[X_SIDE]'s Recon order in ctx[X_AREA] (SoE 7.2, 7.31)
WINDOW_AFTER_BATTLE = 2  # after the battle in ctx[X_AREA] (SoE 7.41 item 4/6, 7.42)

X_WINDOW = 0
X_FRONT = 1  # front of the card play / of the area
X_AREA = 2  # recon or battle area (-1 at card play)
X_SIDE = 3  # side that executed the Recon / the attacker
X_WINNER = 4  # battle winner (-1)
X_ATT_LOSSES = 5  # SP lost by the attacker (battle record B_ATT_LOSSES)
X_DEF_LOSSES = 6  # SP lost by the defender, garrison included (B_DEF_LOSSES)
X_FOUGHT = 7  # 1 if the battle was fought (not a withdrawal without battle)
X_REVEALED = 8  # enemy blocks revealed by the Recon
N_X = 9

# --- out columns of apply_event_nb -------------------------------------------------------------------
EO_APPLIED = 0  # 1 when the event was resolved
EO_VP_DELTA = 1  # actual change of the signed VP track (new - old, + Polish)
EO_SP_LOST = 2  # SP lost by blocks because of the event
EO_DESTROYED = 3  # blocks destroyed (sent to the force pool) by the event
EO_CARDS_DRAWN = 4
EO_INI_FRONT = 5  # front whose initiative changed (-1 none)
EO_INI_OLD_SIDE = 6  # holder before the change
EO_INI_OLD_LEVEL = 7
EO_CUBES_INFANTRY = 8  # cubes taken (added to state.cubes[side, front of the play])
EO_CUBES_CAVALRY = 9
EO_CUBES_ALLIED = 10
EO_NATION = 11  # nation activated (-1)
EO_BLOCK_PLACED = 12  # block brought in from the Events' Area (-1)
EO_BLOCK_ELIMINATED = 13  # block eliminated by eliminate_nation_block (-1)
EO_AREA = 14  # area chosen (Desertions, reinforce) or of the eliminated block (-1)
EO_TARGET = 15  # the target row applied (-1 none)
N_EO = 16

EVENTS_AREA_ROUND = -1  # a SCHEDULED block with this arrival round waits in the Events' Area (EV8)


# =================================================================================================
# small helpers


@njit(cache=True, _nrt=False)
def in_events_area_nb(state, b):
    """Block ``b`` waits in the Events' Area: ``SCHEDULED`` with no arrival round (EV8)."""
    return b >= 0 and state.block_status[b] == STATUS.SCHEDULED and state.block_arrive_round[b] == EVENTS_AREA_ROUND


@njit(cache=True, _nrt=False, internal=True)
def _area_ok_front_nb(map_arrays, table, side, card, ctx, area):
    """SoE 10.0 / EatS V: a front-designated event acts on its own front; an event played in a front's
    card play (or a reaction to something on a front) acts on that front (EV2)."""
    f = map_arrays.front[area]
    cf = table.front[side, card - 1]
    if cf != CARD_FRONT.ANY and f != cf:
        return False
    if ctx[X_FRONT] >= 0 and f != ctx[X_FRONT]:
        return False
    return True


@njit(cache=True, _nrt=False, internal=True)
def _front_of_event_nb(table, side, card, ctx):
    """The front an initiative effect acts on: the card's front, else the front where it is played
    (Soviet card 12 "on the front where this card is played")."""
    cf = table.front[side, card - 1]
    if cf != CARD_FRONT.ANY:
        return cf
    return ctx[X_FRONT]


@njit(cache=True, _nrt=False, internal=True)
def _lose_sp_nb(state, b, n):
    """Block ``b`` loses up to ``n`` SP; at 0 SP it is destroyed and returns to the force pool (SoE
    card 6 "Destroyed blocks return to their Force Pool", 7.41.5). Returns ``(sp_lost, destroyed)``."""
    lost = min(n, np.int64(state.block_sp[b]))
    state.block_sp[b] -= lost
    if state.block_sp[b] <= 0:
        state.block_sp[b] = 0
        state.block_area[b] = -1
        state.block_status[b] = STATUS.DESTROYED_TO_POOL
        return lost, True
    return lost, False


@njit(cache=True, _nrt=False, internal=True)
def _losses_strongest_first_nb(state, mask, n, out):
    """SoE 7.41.5 loss allocation applied to an event's loss: ``n`` SP off the strongest block of
    ``mask`` one at a time (ties: lowest index, E-B2); 1-SP blocks destroyed to the force pool."""
    for _ in range(n):
        best = -1
        for b in range(mask.shape[0]):
            if mask[b] and state.block_status[b] == STATUS.ON_MAP and state.block_sp[b] > 0:
                if best < 0 or state.block_sp[b] > state.block_sp[best]:
                    best = b
        if best < 0:
            break
        lost, dead = _lose_sp_nb(state, best, 1)
        out[EO_SP_LOST] += lost
        if dead:
            out[EO_DESTROYED] += 1


@njit(cache=True, _nrt=False, internal=True)
def _sp_target_block_nb(state, side, b):
    """An enemy block that can lose SP to an event: on the map, of side ``1 - side``, not a leader
    (EV4)."""
    return (state.block_status[b] == STATUS.ON_MAP and state.block_side[b] == 1 - side
            and state.block_arm[b] != ARM.LEADER)


@njit(cache=True, _nrt=False, internal=True)
def _event_target_block_nb(state, active_nations, side, b):
    """:func:`_sp_target_block_nb` and of an active nation: the blocks of a neutral nation not yet
    activated (G15) are out of play, so no event chooses them."""
    return _sp_target_block_nb(state, side, b) and active_nations[state.block_nation[b]]


@njit(cache=True, _nrt=False)
def initiative_step_nb(state, front, side, delta, lo, hi):
    """Move the initiative of ``front`` by ``delta`` points in ``side``'s favour (SoE 6.1): the holder
    gains up to ``hi``; against the other holder a point is taken from him and at ``lo`` the marker is
    flipped ("There are no '0' values"); an unheld track goes to the gainer at ``lo``. Returns True
    when the track changed."""
    if front < 0:
        return False
    s0 = state.initiative_side[front]
    l0 = state.initiative_level[front]
    steps = delta if delta > 0 else -delta
    gainer = side if delta > 0 else 1 - side
    for _ in range(steps):
        h = state.initiative_side[front]
        lv = state.initiative_level[front]
        if h == gainer:
            if lv < hi:
                state.initiative_level[front] = lv + 1
        elif h < 0:
            state.initiative_side[front] = gainer
            state.initiative_level[front] = lo
        elif lv > lo:
            state.initiative_level[front] = lv - 1
        else:
            state.initiative_side[front] = gainer
            state.initiative_level[front] = lo
    return state.initiative_side[front] != s0 or state.initiative_level[front] != l0


@njit(cache=True, _nrt=False, internal=True)
def _initiative_would_change_nb(state, front, side, delta, hi):
    if front < 0 or delta == 0:
        return False
    gainer = side if delta > 0 else 1 - side
    return not (state.initiative_side[front] == gainer and state.initiative_level[front] >= hi)


@njit(cache=True, _nrt=True, internal=True)
def _friendly_count_nb(state, side, area):
    c = 0
    for b in range(state.block_side.shape[0]):
        if state.block_status[b] == STATUS.ON_MAP and state.block_area[b] == area and state.block_side[b] == side:
            c += 1
    return c


@njit(cache=True, _nrt=False, internal=True)
def _effect_index_of_choice_nb(table, side, card):
    """Index of the effect that receives the event's choice (the first effect that needs one), -1."""
    c = card - 1
    tk = table.target_kind[side, c]
    if tk == TK_NONE:
        return -1
    for e in range(table.n_fx[side, c]):
        code = table.fx_code[side, c, e]
        if _effect_choice_kind_nb(table, side, card, code) == tk:
            return e
    return -1


@njit(cache=True, _nrt=False, internal=True)
def _effect_choice_kind_nb(table, side, card, code):
    """Kind of choice an effect needs (EV3): areas for Desertions and reinforce; blocks for
    eliminate_nation_block and for enemy_sp_loss outside a battle reaction."""
    if code == FX_ENEMY_SP_LOSS_INITIATIVE or code == FX_REINFORCE:
        return TK_AREA
    if code == FX_ELIMINATE_NATION_BLOCK:
        return TK_BLOCK
    if code == FX_ENEMY_SP_LOSS:
        cond = table.condition[side, card - 1]
        if cond == COND_WON_BATTLE or cond == COND_LOST_BATTLE or cond == COND_WON_BATTLE_AS_DEFENDER \
                or cond == COND_WON_KEY_CITY_BATTLE:
            return TK_NONE
        return TK_BLOCK
    return TK_NONE


@njit(cache=True, _nrt=False, internal=True)
def effect_options_nb(state, orders, map_arrays, table, active_nations, side, card, e, ctx, out, limit):
    """The options of effect ``e`` of ``card`` (areas or blocks, ascending index) written to ``out``;
    returns how many, at most ``limit`` (the first ones: 1 asks only whether there is one, EV2).
    Effects without a choice return 0. ``out`` needs ``max(n_areas, n_blocks)`` entries: Desertions
    marks its areas in it before compacting them.

    * ``enemy_sp_loss_initiative`` (Desertions, SoE card 6: "Choose one area. The Soviets in this area
      …"): areas of the front holding an enemy non-leader block — only when the side holds the
      initiative on that front (else the loss is 0, EV1); after a Recon only the Recon area.
    * ``reinforce`` (EV8): friendly supply depots (SoE 1.31: in-supply controlled key cities, Soviet
      Eastern Links) of the front without enemy blocks and with room (7.33; Eastern Links unlimited),
      when the block waits in the Events' Area; only the ``at_area`` of the card when it has one
      ("place … in Warsaw").
    * ``eliminate_nation_block`` (Polish card 2 "Eliminate one of those UHA blocks"): enemy blocks of
      that nation on the map — after a Recon, those in the Recon area revealed to the side.
    * ``enemy_sp_loss`` outside a battle reaction (Soviet card 21 "one revealed enemy block loses 1
      SP"): enemy non-leader blocks — after a Recon, the revealed ones in the Recon area; at card play,
      those on the front.
    """
    c = card - 1
    code = table.fx_code[side, c, e]
    val = table.fx_value[side, c, e]
    n_areas = state.control.shape[0]
    nbk = state.block_side.shape[0]
    recon = ctx[X_WINDOW] == WINDOW_AFTER_RECON
    k = 0
    if limit <= 0:
        return 0
    if code == FX_ENEMY_SP_LOSS_INITIATIVE:
        # the areas holding a target block, marked in ``out`` in one pass over the blocks, then compacted
        # in place in ascending order (``out[k]`` is written only after ``out[a]``, ``k <= a``, is read)
        for a in range(n_areas):
            out[a] = 0
        for b in range(nbk):
            a = state.block_area[b]
            if a >= 0 and _event_target_block_nb(state, active_nations, side, b):
                out[a] = 1
        for a in range(n_areas):
            if out[a] == 0:
                continue
            if recon and a != ctx[X_AREA]:
                continue
            if not _area_ok_front_nb(map_arrays, table, side, card, ctx, a):
                continue
            f = map_arrays.front[a]
            if state.initiative_side[f] != side or state.initiative_level[f] * val <= 0:
                continue
            out[k] = a
            k += 1
            if k == limit:
                return k
    elif code == FX_REINFORCE:
        b = val
        if not in_events_area_nb(state, b) or state.block_side[b] != side:
            return 0
        # the supply search's arrays are allocated there: this kernel allocates nothing and counts no references
        k = _reinforce_options_nb(state, map_arrays, table, side, card, ctx, out, limit)
    elif code == FX_ELIMINATE_NATION_BLOCK:
        for b in range(nbk):
            if state.block_status[b] != STATUS.ON_MAP or state.block_side[b] != 1 - side:
                continue
            if state.block_nation[b] != val or not active_nations[val]:
                continue
            a = state.block_area[b]
            if recon and (a != ctx[X_AREA] or not orders.seen[side, b]):
                continue
            if not _area_ok_front_nb(map_arrays, table, side, card, ctx, a):
                continue
            out[k] = b
            k += 1
            if k == limit:
                return k
    elif code == FX_ENEMY_SP_LOSS:
        if _effect_choice_kind_nb(table, side, card, code) != TK_BLOCK:
            return 0
        for b in range(nbk):
            if not _event_target_block_nb(state, active_nations, side, b):
                continue
            a = state.block_area[b]
            if recon and (a != ctx[X_AREA] or not orders.seen[side, b]):
                continue
            if not _area_ok_front_nb(map_arrays, table, side, card, ctx, a):
                continue
            out[k] = b
            k += 1
            if k == limit:
                return k
    return k


@njit(cache=True, _nrt=True, internal=True)
def _reinforce_options_nb(state, map_arrays, table, side, card, ctx, out, limit):
    """:func:`effect_options_nb` of a ``reinforce`` effect (EV8): the side's supply depots (a supply search on
    arrays of its own) of the front without enemy blocks and with room, the card's ``at_area`` only when it has
    one."""
    c = card - 1
    n_areas = state.control.shape[0]
    k = 0
    only = -1  # EV8: "place … in Warsaw" (at_area) restricts the depots to that area
    for q in range(table.n_fx[side, c]):
        if table.fx_code[side, c, q] == FX_AT_AREA:
            only = table.fx_value[side, c, q]
    blocks = np.zeros((2, n_areas), dtype=np.int32)
    enemy = np.zeros((2, n_areas), dtype=np.bool_)
    src = np.zeros((2, n_areas), dtype=np.int32)
    depot = np.zeros((2, n_areas), dtype=np.bool_)
    enemy_presence_nb(state.block_side, state.block_area, state.block_status, state.garrison_side, blocks,
                      enemy)
    supply_depots_nb(map_arrays.adj_indptr, map_arrays.adj_indices, map_arrays.adj_bits, map_arrays.eastern_link,
                     map_arrays.supply_source, state.supply_base, map_arrays.garrison, enemy, src, depot)
    for a in range(n_areas):
        if not depot[side, a] or enemy[side, a] or (only >= 0 and a != only):
            continue
        if side == SIDE.POLISH and map_arrays.eastern_link[a]:
            continue
        if not _area_ok_front_nb(map_arrays, table, side, card, ctx, a):
            continue
        if not map_arrays.eastern_link[a] and blocks[side, a] >= table.max_blocks:
            continue
        out[k] = a
        k += 1
        if k == limit:
            return k
    return k


@njit(cache=True, _nrt=False, internal=True)
def _effect_usable_nb(state, orders, map_arrays, table, active_nations, side, card, e, ctx, involved, scratch):
    """Would effect ``e`` change anything now? (an event with no usable effect is not offered, EV2)."""
    c = card - 1
    code = table.fx_code[side, c, e]
    val = table.fx_value[side, c, e]
    kind = _effect_choice_kind_nb(table, side, card, code)
    if kind != TK_NONE:
        return effect_options_nb(state, orders, map_arrays, table, active_nations, side, card, e, ctx, scratch, 1) > 0
    if code == FX_ENEMY_SP_LOSS:  # battle reaction: the enemy blocks of the battle still on the map
        for b in range(involved.shape[0]):
            if involved[b] and _sp_target_block_nb(state, side, b):
                return val > 0
        return False
    if code == FX_DRAW_CARDS:
        return val > 0
    if code == FX_INITIATIVE:
        return _initiative_would_change_nb(state, _front_of_event_nb(table, side, card, ctx), side, val,
                                           table.ini_max)
    if code == FX_VP:
        return val != 0
    if code == FX_CUBES_INFANTRY or code == FX_CUBES_CAVALRY or code == FX_CUBES_ALLIED:
        return val > 0
    if code == FX_ACTIVATE_NATION:
        return val >= 0 and val < active_nations.shape[0] and not active_nations[val]
    return False


# =================================================================================================
# decisions


@njit(cache=True, _nrt=True)
def legal_event_targets_nb(state, cards, orders, map_arrays, table, active_nations, side, card, ctx, involved,
                           out_target):
    """The choices of ``side``'s event ``card`` in context ``ctx`` (one row per option, ``out_target``:
    an area or block index per ``table.target_kind``, or ``-1`` for an event without a choice).

    Returns 0 when the event would do nothing (no effect usable: not offered, EV2), else the number of
    rows (1 for an event without a choice). The card's location is not checked (the loop asks before
    and after playing it). ``out_target`` needs ``max(n_areas, n_blocks)`` entries.
    """
    scratch = np.empty(max(state.control.shape[0], state.block_side.shape[0]), dtype=np.int64)
    return event_targets_scratch_nb(state, orders, map_arrays, table, active_nations, side, card, ctx, involved,
                                    out_target, scratch, False)


@njit(cache=True, _nrt=False, internal=True)
def event_targets_scratch_nb(state, orders, map_arrays, table, active_nations, side, card, ctx, involved, out_target,
                             scratch, any_only):
    """:func:`legal_event_targets_nb` with the caller's ``scratch`` (int64, ``max(n_areas, n_blocks)``).
    With ``any_only`` it only tells whether the event would do something (EV2): 1 at the first usable
    effect or option found, else 0 (``out_target`` and ``scratch`` may then be one array)."""
    c = card - 1
    if card < 1 or card > table.n_fx.shape[1]:
        return 0
    ech = _effect_index_of_choice_nb(table, side, card)
    usable = False
    for e in range(table.n_fx[side, c]):
        if e == ech:
            continue
        if _effect_usable_nb(state, orders, map_arrays, table, active_nations, side, card, e, ctx, involved,
                             scratch):
            usable = True
            if any_only:
                return 1
    if ech >= 0:
        k = effect_options_nb(state, orders, map_arrays, table, active_nations, side, card, ech, ctx, out_target,
                              1 if any_only else out_target.shape[0])
        if k > 0:
            return k
    if usable:
        out_target[0] = -1
        return 1
    return 0


@njit(cache=True, _nrt=True)
def apply_event_nb(state, cards, orders, map_arrays, table, active_nations, side, card, ctx, involved, target, rng,
                   out):
    """Resolve ``side``'s event ``card`` with ``target`` (a row of :func:`legal_event_targets_nb`), in
    place. Every effect of the card is applied in its data order:

    * ``enemy_sp_loss_initiative:N`` — SoE card 6 Desertions: "The Soviets in this area immediately
      lose as many SPs as the Poles have initiative points on that front. Destroyed blocks return to
      their Force Pool": N × the side's initiative level on the area's front, off the enemy blocks of
      the chosen area strongest first (7.41.5; EV1, EV4).
    * ``enemy_sp_loss:N`` — after a Recon / at card play: the chosen enemy block loses N SP (Soviet
      card 21); after a battle: the enemy blocks of that battle still on the map lose N SP in total,
      strongest first (Polish 23, 29; Soviet 27; EV5). Destroyed blocks go to the force pool.
    * ``draw_cards:N`` — "draw N cards up to your hand limit" (SoE 3.4 Spoils of War: "immediately
      draw 3 cards up to your 7 card hand limit"): ``cards.nb.draw_cards_to_limit_nb`` (E-C3).
    * ``initiative:±N`` — SoE 6.1 "Initiative changes when: Certain Event Cards are played": N
      points in the side's favour on the card's front, or on the front where it is played
      (:func:`initiative_step_nb`; EV6).
    * ``vp:N`` — the side gains N VP (SoE 7.8; ``soe_sim.engine.nb.vp_add_nb``, the track has no 0).
    * ``cubes_*:N`` — the side takes N reinforcement cubes of that colour (SoE 3.2, 7.12).
    * ``eliminate_nation_block:<nation>`` — Polish card 2 Desertions in UHA: the chosen block "is
      destroyed and returns to the Force Pool" (EatS round example: "removed to Destroyed Units' Area").
    * ``activate_nation:<nation>`` — Soviet card 23 Alliance with Lithuania (EatS II.3: "After this,
      the Soviet player can activate Lithuanian units"): ``active_nations[nation] = True`` (EV7).
    * ``reinforce:<block>`` — the block leaves the Events' Area and is placed at full strength on the
      chosen depot (EV8).

    Returns False (nothing changed, ``out[EO_APPLIED] = 0``) when ``target`` is not a legal row.
    ``out`` (``N_EO``) int64 receives the changes.
    """
    out[:] = 0
    out[EO_INI_FRONT] = -1
    out[EO_INI_OLD_SIDE] = -1
    out[EO_NATION] = -1
    out[EO_BLOCK_PLACED] = -1
    out[EO_BLOCK_ELIMINATED] = -1
    out[EO_AREA] = -1
    out[EO_TARGET] = -1
    if card < 1 or card > table.n_fx.shape[1]:
        return False
    c = card - 1
    n_areas = state.control.shape[0]
    nbk = state.block_side.shape[0]
    opts = np.empty(max(n_areas, nbk), dtype=np.int64)
    n = legal_event_targets_nb(state, cards, orders, map_arrays, table, active_nations, side, card, ctx, involved,
                               opts)
    if n == 0:
        return False
    ok = False
    for i in range(n):
        if opts[i] == target:
            ok = True
    if not ok:
        return False
    ech = _effect_index_of_choice_nb(table, side, card)
    out[EO_TARGET] = target
    for e in range(table.n_fx[side, c]):
        code = table.fx_code[side, c, e]
        val = np.int64(table.fx_value[side, c, e])
        kind = _effect_choice_kind_nb(table, side, card, code)
        t = -1
        if kind != TK_NONE:
            # the chosen row goes to the effect that asked for it; another effect needing a choice
            # takes its first option (EV3)
            if e == ech:
                t = target
            else:
                k = effect_options_nb(state, orders, map_arrays, table, active_nations, side, card, e, ctx, opts,
                                      opts.shape[0])
                t = opts[0] if k > 0 else -1
            if t < 0:
                continue
        if code == FX_ENEMY_SP_LOSS_INITIATIVE:
            # SoE card 6: "as many SPs as the Poles have initiative points on that front"
            f = map_arrays.front[t]
            lvl = np.int64(state.initiative_level[f]) if state.initiative_side[f] == side else 0
            mask = np.zeros(nbk, dtype=np.bool_)
            for b in range(nbk):
                if state.block_area[b] == t and _event_target_block_nb(state, active_nations, side, b):
                    mask[b] = True
            _losses_strongest_first_nb(state, mask, lvl * val, out)
            out[EO_AREA] = t
        elif code == FX_ENEMY_SP_LOSS:
            if kind == TK_BLOCK:
                lost, dead = _lose_sp_nb(state, t, val)
                out[EO_SP_LOST] += lost
                if dead:
                    out[EO_DESTROYED] += 1
            else:
                mask = np.zeros(nbk, dtype=np.bool_)
                for b in range(nbk):
                    if involved[b] and _sp_target_block_nb(state, side, b):
                        mask[b] = True
                _losses_strongest_first_nb(state, mask, val, out)
        elif code == FX_DRAW_CARDS:
            # SoE 7.13 "placed in the discard pile after use": the card being resolved is still in use,
            # so a reshuffle during its own draw does not take it back into the pile (E-C10)
            c0 = card - 1
            was = cards.location[side, c0]
            if was == DISCARD:
                cards.location[side, c0] = IN_PLAY
            out[EO_CARDS_DRAWN] += draw_cards_to_limit_nb(cards, side, val, table.hand_limit, rng)
            cards.location[side, c0] = was
        elif code == FX_INITIATIVE:
            f = _front_of_event_nb(table, side, card, ctx)
            if f >= 0:
                s0 = state.initiative_side[f]
                l0 = state.initiative_level[f]
                if initiative_step_nb(state, f, side, val, table.ini_min, table.ini_max):
                    out[EO_INI_FRONT] = f
                    out[EO_INI_OLD_SIDE] = s0
                    out[EO_INI_OLD_LEVEL] = l0
        elif code == FX_VP:
            old = np.int64(state.vp[0])
            state.vp[0] = vp_add_nb(old, side_sign_nb(side) * val)
            out[EO_VP_DELTA] += np.int64(state.vp[0]) - old
        elif code == FX_CUBES_INFANTRY or code == FX_CUBES_CAVALRY or code == FX_CUBES_ALLIED:
            q = code - FX_CUBES_INFANTRY
            cf = _front_of_event_nb(table, side, card, ctx)  # the front's pool (SoE 7.12; EatS X, V8)
            if cf < 0:
                cf = 0
            state.cubes[side, cf, q] += val
            out[EO_CUBES_INFANTRY + q] += val
        elif code == FX_ELIMINATE_NATION_BLOCK:
            out[EO_AREA] = state.block_area[t]
            lost, _dead = _lose_sp_nb(state, t, np.int64(state.block_sp[t]))
            out[EO_SP_LOST] += lost
            out[EO_DESTROYED] += 1
            out[EO_BLOCK_ELIMINATED] = t
        elif code == FX_ACTIVATE_NATION:
            if val >= 0 and val < active_nations.shape[0] and not active_nations[val]:
                active_nations[val] = True
                out[EO_NATION] = val
        elif code == FX_REINFORCE:
            b = val
            state.block_status[b] = STATUS.ON_MAP
            state.block_area[b] = t
            state.block_sp[b] = state.block_max_sp[b]
            state.block_prev_area[b] = -1
            state.block_arrival[b] = 0
            state.block_in_supply[b] = True
            orders.seen[side, b] = True
            orders.seen[1 - side, b] = False
            out[EO_BLOCK_PLACED] = b
            out[EO_AREA] = t
    out[EO_APPLIED] = 1
    return True


# =================================================================================================
# contexts and reaction windows


@njit(cache=True, _nrt=False, internal=True)
def _clear_ctx_nb(ctx):
    ctx[:] = -1
    ctx[X_ATT_LOSSES] = 0
    ctx[X_DEF_LOSSES] = 0
    ctx[X_FOUGHT] = 0
    ctx[X_REVEALED] = 0


@njit(cache=True, _nrt=False)
def card_play_context_nb(ctx, front):
    """Context of a historical event played in ``front``'s card play (SoE 7.1, 7.13)."""
    _clear_ctx_nb(ctx)
    ctx[X_WINDOW] = WINDOW_CARD_PLAY
    ctx[X_FRONT] = front


@njit(cache=True, _nrt=False)
def recon_context_nb(ctx, state, map_arrays, side, area):
    """Context after ``side``'s Recon order in ``area`` (call after ``orders.nb.execute_recon_nb``):
    ``X_REVEALED`` = enemy blocks on the map there."""
    _clear_ctx_nb(ctx)
    ctx[X_WINDOW] = WINDOW_AFTER_RECON
    ctx[X_FRONT] = map_arrays.front[area]
    ctx[X_AREA] = area
    ctx[X_SIDE] = side
    k = 0
    for b in range(state.block_side.shape[0]):
        if state.block_status[b] == STATUS.ON_MAP and state.block_area[b] == area and state.block_side[b] == 1 - side:
            k += 1
    ctx[X_REVEALED] = k


@njit(cache=True, _nrt=False)
def battle_context_nb(ctx, map_arrays, rec):
    """Context after a battle from its record (``battles.nb.resolve_battle_in_state_nb`` ``out``)."""
    _clear_ctx_nb(ctx)
    area = rec[B_AREA]
    ctx[X_WINDOW] = WINDOW_AFTER_BATTLE
    ctx[X_FRONT] = map_arrays.front[area]
    ctx[X_AREA] = area
    ctx[X_SIDE] = rec[B_ATTACKER]
    ctx[X_WINNER] = rec[B_WINNER]
    ctx[X_ATT_LOSSES] = rec[B_ATT_LOSSES]
    ctx[X_DEF_LOSSES] = rec[B_DEF_LOSSES]
    ctx[X_FOUGHT] = rec[B_FOUGHT]


@njit(cache=True, _nrt=False)
def battle_blocks_nb(state, area, out_mask):
    """``out_mask[b]``: block ``b`` is on the map in ``area`` (call *before* resolving the battle: the
    blocks of the battle, whichever side, for the after-battle reactions)."""
    for b in range(state.block_side.shape[0]):
        out_mask[b] = state.block_status[b] == STATUS.ON_MAP and state.block_area[b] == area


@njit(cache=True, _nrt=False, internal=True)
def reaction_condition_met_nb(map_arrays, table, side, card, ctx):
    """Is ``side``'s reaction ``card`` playable in the window ``ctx`` (its condition and front)?

    * ``after_own_recon`` — Polish card 2 / Soviet 21 "Play after your Recon order reveals enemy
      blocks": ``side`` executed the Recon and it revealed at least one enemy block (EV9).
    * ``won_battle`` / ``lost_battle`` / ``won_battle_as_defender`` — after a battle that was fought
      (a withdrawal without battle is none), won / lost by ``side`` / won as the defender.
    * ``won_key_city_battle_min_losses_N`` — SoE 3.4 Spoils of War: "Play after a battle in a key
      city. If you won the battle and inflicted at least 3SP losses on the enemy" (losses as recorded
      by the battle, a garrison loss included; EV10).

    A front-designated card reacts only to something on its front (SoE 10.0, EatS V).
    """
    c = card - 1
    if table.kind[side, c] != EVENT_KIND.REACTION:
        return False
    cf = table.front[side, c]
    if cf != CARD_FRONT.ANY and ctx[X_FRONT] != cf:
        return False
    cond = table.condition[side, c]
    w = ctx[X_WINDOW]
    if cond == COND_AFTER_OWN_RECON:
        return w == WINDOW_AFTER_RECON and ctx[X_SIDE] == side and ctx[X_REVEALED] > 0
    if w != WINDOW_AFTER_BATTLE or ctx[X_FOUGHT] != 1:
        return False
    won = ctx[X_WINNER] == side
    if cond == COND_WON_BATTLE:
        return won
    if cond == COND_LOST_BATTLE:
        return ctx[X_WINNER] == 1 - side
    if cond == COND_WON_BATTLE_AS_DEFENDER:
        return won and ctx[X_SIDE] != side
    if cond == COND_WON_KEY_CITY_BATTLE:
        if not won or not map_arrays.garrison[ctx[X_AREA]]:
            return False
        inflicted = ctx[X_DEF_LOSSES] if ctx[X_SIDE] == side else ctx[X_ATT_LOSSES]
        return inflicted >= table.cond_value[side, c]
    return False


@njit(cache=True, _nrt=True)
def reaction_window_nb(state, cards, orders, map_arrays, table, active_nations, side, ctx, involved, out_cards):
    """The reaction cards ``side`` may play now (SoE 7.1 item 6: "in accordance with the card's
    description"): in hand, condition met (:func:`reaction_condition_met_nb`) and with at least one
    legal row (:func:`legal_event_targets_nb`). Writes their ids (ascending) to ``out_cards`` and
    returns how many (0: no decision; the loop adds a "pass" option)."""
    return reaction_window_scratch_nb(state, cards, orders, map_arrays, table, active_nations, side, ctx, involved,
                                      out_cards, np.empty(max(state.control.shape[0], state.block_side.shape[0]),
                                                          dtype=np.int64))


@njit(cache=True, _nrt=False)
def reaction_window_scratch_nb(state, cards, orders, map_arrays, table, active_nations, side, ctx, involved, out_cards,
                               tmp):
    """:func:`reaction_window_nb` with the caller's ``tmp`` int64 (max(n_areas, n_blocks),) scratch (the round
    loop's ``EventWork.ev_scratch``): no allocation, no reference counting. Whether a card has a legal row is
    :func:`event_targets_scratch_nb`'s ``any_only`` answer, which is 0 exactly when the listing is empty."""
    n_cards = cards.location.shape[1]
    k = 0
    for c in range(n_cards):
        if cards.location[side, c] != HAND:
            continue
        card = c + 1
        if not reaction_condition_met_nb(map_arrays, table, side, card, ctx):
            continue
        if event_targets_scratch_nb(state, orders, map_arrays, table, active_nations, side, card, ctx, involved, tmp,
                                    tmp, True) == 0:
            continue
        out_cards[k] = card
        k += 1
    return k


@njit(cache=True, _nrt=True)
def play_reaction_nb(state, cards, orders, map_arrays, table, active_nations, side, card, ctx, involved, target, rng,
                     out):
    """Play reaction ``card`` from ``side``'s hand in window ``ctx`` and resolve it with ``target`` (a
    row of :func:`legal_event_targets_nb`). The card is removed if starred, else discarded (E-C1;
    ``cards.nb.play_reaction_card_nb``). Returns False (nothing changed) when the card is not
    playable now or the target is illegal."""
    out[:] = 0
    if card < 1 or card > cards.location.shape[1] or cards.location[side, card - 1] != HAND:
        return False
    if not reaction_condition_met_nb(map_arrays, table, side, card, ctx):
        return False
    opts = np.empty(max(state.control.shape[0], state.block_side.shape[0]), dtype=np.int64)
    n = legal_event_targets_nb(state, cards, orders, map_arrays, table, active_nations, side, card, ctx, involved,
                               opts)
    ok = False
    for i in range(n):
        if opts[i] == target:
            ok = True
    if not ok:
        return False
    if play_reaction_card_nb(cards, side, card) == NO_CARD:
        return False
    return apply_event_nb(state, cards, orders, map_arrays, table, active_nations, side, card, ctx, involved, target,
                          rng, out)


@njit(cache=True, _nrt=True)
def event_usable_nb(state, cards, orders, map_arrays, table, active_nations, side, card, front):
    """SoE 7.1, 7.13: may ``side`` play historical ``card`` for its event in ``front``'s card play?
    (the card's front allows it — SoE 10.0 — and the event would do something, EV2). Filter the
    ``USE_EVENT`` rows of ``cards.nb.legal_card_plays_nb`` with it."""
    return event_usable_scratch_nb(state, cards, orders, map_arrays, table, active_nations, side, card, front,
                                   np.empty(N_X, dtype=np.int64), np.zeros(state.block_side.shape[0], dtype=np.bool_),
                                   np.empty(max(state.control.shape[0], state.block_side.shape[0]), dtype=np.int64))


@njit(cache=True, _nrt=False, internal=True)
def event_usable_scratch_nb(state, cards, orders, map_arrays, table, active_nations, side, card, front, ctx, involved,
                            tmp):
    """:func:`event_usable_nb` with the caller's scratch: ``ctx`` int64 (N_X,), ``involved`` bool
    (n_blocks,) (cleared here) and ``tmp`` int64 (max(n_areas, n_blocks),)."""
    c = card - 1
    if card < 1 or card > table.n_fx.shape[1] or table.kind[side, c] != EVENT_KIND.HISTORICAL:
        return False
    cf = table.front[side, c]
    if cf != CARD_FRONT.ANY and cf != front:
        return False
    card_play_context_nb(ctx, front)
    for b in range(involved.shape[0]):
        involved[b] = False
    return event_targets_scratch_nb(state, orders, map_arrays, table, active_nations, side, card, ctx, involved, tmp,
                                    tmp, True) > 0
