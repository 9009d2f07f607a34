"""Numba kernels of the card subsystem: decks, draws, reshuffles, hands and card plays.

Rules: SoE 3.4 (six uses of a card), 6.0 (replenish, hand limit), 7.1 (card play at the start of an
operation phase, discard pile, reshuffle), 7.11 (orders), 7.12 (reinforcement cubes), 7.13
(historical events), 7.41.1 (battle cards), 7.41.2 (combat modifier: blind draw or hand card + 1),
10.0 (historical events only on their own front), 10.1 (two-front extra draws). Readings of
ambiguous text are docs/rules.md "Engine: cards" (E-C1…).

Layout (like :mod:`soe_sim.engine.nb`): every kernel is ``@njit(cache=True)`` and takes the
:class:`~soe_sim.engine.cards.CardState` named tuple ``cs`` (its arrays are updated in place), a side
(:data:`~soe_sim.data.enums.SIDE`), scalars, the :class:`~soe_sim.engine.cards.CardRules` named
tuple and a SplitMix64 stream ``rng`` (a ``uint64`` array; ``rng[0]`` is the state, advanced in
place).

Cards are named by their **id** (1…``n_cards``, as printed and as in ``data/cards/<side>.csv``);
row ``id - 1`` of every per-card array describes card ``id``. :data:`NO_CARD` (``0``) means "no
card".

The draw pile of side ``s`` is ``cs.pile[s, cs.pile_top[s]:cs.pile_len[s]]``, top card first. The
hand, the discard pile, the removed cards and the cards in play are given by ``cs.location`` alone
(their order never matters: a reshuffle gathers the discard pile in id order, then shuffles it).
"""
from __future__ import annotations

import numpy as np

from soe_sim._jit import njit
from soe_sim.battle.nb import (
    E_CANCEL_ENEMY_BATTLE_CARD,
    E_CANCEL_FORTIFICATION,
    E_COMBAT_VALUE,
    E_ENEMY_EXTRA_LOSS,
    E_NEGATE_FLANK,
    E_OWN_LOSS_REDUCTION,
    N_EFFECT,
    splitmix64_nb,
)
from soe_sim.data.enums import CARD_FRONT, EVENT_KIND

__all__ = [
    "DRAW_PILE", "HAND", "DISCARD", "REMOVED", "IN_PLAY", "N_LOCATIONS",
    "USE_NONE", "USE_PASS", "USE_ORDERS", "USE_CUBES", "USE_EVENT", "USE_COMBAT_BLIND",
    "USE_COMBAT_HAND", "USE_BATTLE", "USE_REACTION", "N_USES",
    "NO_CARD", "N_CUBE_KINDS", "N_EFFECT",
    "E_COMBAT_VALUE", "E_ENEMY_EXTRA_LOSS", "E_OWN_LOSS_REDUCTION", "E_NEGATE_FLANK",
    "E_CANCEL_FORTIFICATION", "E_CANCEL_ENEMY_BATTLE_CARD",
    "LIMIT_ATTACKER_ONLY", "LIMIT_DEFENDER_ONLY", "LIMIT_RAIL_LINE",
]

# --- locations (one per card; SoE 6.0, 7.1) -------------------------------------------------------
DRAW_PILE = 0
HAND = 1
DISCARD = 2
REMOVED = 3  # out of the game: scenario removals (SoE 4.0 scenario sheet) and starred events (7.13)
IN_PLAY = 4  # a battle card or combat card on the table until the battle ends (SoE 7.41.1–2)
N_LOCATIONS = 5

# --- uses of a card (SoE 3.4) ----------------------------------------------------------------------
USE_NONE = 0  # cs.use of a card that is not in play
USE_PASS = 1  # legal_card_plays_nb: play no card on this front (SoE 7.1 "not required to play")
USE_ORDERS = 2  # SoE 7.11
USE_CUBES = 3  # SoE 7.12
USE_EVENT = 4  # SoE 7.13 historical event
USE_COMBAT_BLIND = 5  # SoE 7.41.2 drawn blind from the deck
USE_COMBAT_HAND = 6  # SoE 7.41.2 played from the hand (+ hand_card_bonus)
USE_BATTLE = 7  # SoE 7.41.1
USE_REACTION = 8  # SoE 7.1 item 6, 7.41.4
N_USES = 9

NO_CARD = 0

# --- play limits of a battle card (bit flags of ``cs.battle_limit``; the card's text, SoE 7.41.1) ------
LIMIT_ATTACKER_ONLY = 1  # "Attacker only"
LIMIT_DEFENDER_ONLY = 2  # "Defender only"
LIMIT_RAIL_LINE = 4  # "Play in a battle in an area on a rail line"

N_CUBE_KINDS = 3  # columns as soe_sim.engine.state.CUBE_INFANTRY / CAVALRY / ALLIED (SoE 3.2)


# --- random numbers -----------------------------------------------------------------------------------


@njit(cache=True, inline="always")
def rand_below_nb(rng, n):
    """A uniform integer in ``[0, n)`` from the SplitMix64 stream ``rng`` (``rng[0]`` advanced).

    Multiply-shift of the top 32 bits (bias below ``n / 2**32``, i.e. < 2e-8 for a 55-card deck).
    """
    state, r = splitmix64_nb(rng[0])
    rng[0] = state
    return np.int64(((r >> np.uint64(32)) * np.uint64(n)) >> np.uint64(32))


# --- shuffles, draws and the discard pile (SoE 6.0, 7.1) -----------------------------------------


@njit(cache=True, _nrt=False)
def shuffle_draw_pile_nb(cs, side, rng):
    """Shuffle ``side``'s draw pile in place (SoE 4.0 setup, 7.1 reshuffle): Fisher–Yates.

    Going down from the last card ``i`` of the pile, swap it with a uniform card ``j <= i`` (the
    pile is indexed from its top).
    """
    top = cs.pile_top[side]
    n = cs.pile_len[side] - top
    for i in range(n - 1, 0, -1):
        j = rand_below_nb(rng, i + 1)
        a = cs.pile[side, top + i]
        cs.pile[side, top + i] = cs.pile[side, top + j]
        cs.pile[side, top + j] = a


@njit(cache=True, _nrt=True)
def draw_pile_size_nb(cs, side):
    """Cards left in ``side``'s draw pile."""
    return cs.pile_len[side] - cs.pile_top[side]


@njit(cache=True, _nrt=False, internal=True)
def reshuffle_discard_nb(cs, side, rng):
    """SoE 7.1: "the player immediately shuffles his discard pile to form a new draw deck".

    Only when the draw pile is empty (otherwise nothing happens). The discard pile is gathered in id
    order and shuffled with :func:`shuffle_draw_pile_nb`. Returns the size of the new pile.
    """
    if cs.pile_len[side] > cs.pile_top[side]:
        return 0
    k = 0
    for c in range(cs.location.shape[1]):
        if cs.location[side, c] == DISCARD:
            cs.pile[side, k] = c + 1
            cs.location[side, c] = DRAW_PILE
            k += 1
    cs.pile_top[side] = 0
    cs.pile_len[side] = k
    shuffle_draw_pile_nb(cs, side, rng)
    return k


@njit(cache=True, _nrt=False, internal=True)
def take_top_nb(cs, side, rng, location):
    """Take the top card of ``side``'s draw pile to ``location``; reshuffle first if the pile is empty
    (SoE 7.1). Returns the card id, or :data:`NO_CARD` when the draw pile and discard pile are both
    empty (docs/rules.md E-C2)."""
    if cs.pile_top[side] >= cs.pile_len[side]:
        if reshuffle_discard_nb(cs, side, rng) == 0:
            return NO_CARD
    card = cs.pile[side, cs.pile_top[side]]
    cs.pile_top[side] += 1
    cs.location[side, card - 1] = location
    return card


@njit(cache=True, _nrt=False)
def draw_cards_nb(cs, side, n, rng):
    """Draw ``n`` cards into ``side``'s hand (SoE 6.0, 7.1, 10.1).

    An empty draw pile is refilled from the shuffled discard pile at once (SoE 7.1); when both are
    empty the draws stop (docs/rules.md E-C2). No hand limit is applied here (SoE 6.0 discards after
    drawing). Returns the number of cards drawn.
    """
    drawn = 0
    for _ in range(n):
        if take_top_nb(cs, side, rng, HAND) == NO_CARD:
            break
        drawn += 1
    return drawn


@njit(cache=True, _nrt=False)
def hand_size_nb(cs, side):
    """Cards in ``side``'s hand (SoE 6.0)."""
    k = 0
    for c in range(cs.location.shape[1]):
        k += cs.location[side, c] == HAND
    return k


@njit(cache=True, _nrt=True, internal=True)
def hand_cards_nb(cs, side, out):
    """Write the ids of ``side``'s hand, ascending, to ``out``; return how many."""
    k = 0
    for c in range(cs.location.shape[1]):
        if cs.location[side, c] == HAND:
            out[k] = c + 1
            k += 1
    return k


@njit(cache=True, _nrt=False)
def excess_cards_nb(cs, side, hand_limit):
    """How many cards ``side`` must discard to be within ``hand_limit`` (SoE 6.0, 10.1)."""
    return max(0, hand_size_nb(cs, side) - hand_limit)


@njit(cache=True, _nrt=False)
def draw_cards_to_limit_nb(cs, side, n, hand_limit, rng):
    """Draw up to ``n`` cards, stopping at ``hand_limit`` cards in hand (reaction cards such as "draw
    3 cards up to your 7 card hand limit"). Returns the number drawn."""
    room = hand_limit - hand_size_nb(cs, side)
    if room <= 0:
        return 0
    return draw_cards_nb(cs, side, min(n, room), rng)


@njit(cache=True, _nrt=False)
def discard_nb(cs, side, card):
    """SoE 6.0: the player discards ``card`` from his hand. Returns False (and changes nothing) if
    ``card`` is not in ``side``'s hand."""
    if card < 1 or card > cs.location.shape[1] or cs.location[side, card - 1] != HAND:
        return False
    cs.location[side, card - 1] = DISCARD
    return True


@njit(cache=True, _nrt=False)
def replenish_nb(cs, side, rules, rng):
    """SoE 6.0 Replenish Cards Phase: draw ``rules.draw_per_round`` cards.

    "They then must discard down to a maximum of 7 cards": which cards go is the player's decision,
    so this kernel only draws and returns ``(drawn, must_discard)``; the caller then calls
    :func:`discard_nb` ``must_discard`` times (``must_discard = hand_size - rules.hand_limit``, ≥ 0).
    """
    drawn = draw_cards_nb(cs, side, rules.draw_per_round, rng)
    return drawn, excess_cards_nb(cs, side, rules.hand_limit)


@njit(cache=True, _nrt=False)
def two_front_extra_draw_nb(cs, side, phase, rules, rng):
    """SoE 10.1: a player commanding both fronts of a side draws ``rules.two_front_extra_draw`` more
    cards at the start of operation phases ``rules.two_front_extra_draw_phases`` (2–4) and "may hold
    a maximum of only 7 cards": like 6.0 he draws, then discards down (docs/rules.md E-C3).

    Call it only for such a player. Returns ``(drawn, must_discard)`` (``(0, 0)`` in other phases).
    """
    hit = False
    for p in rules.two_front_extra_draw_phases:
        if p == phase:
            hit = True
    if not hit:
        return 0, 0
    drawn = draw_cards_nb(cs, side, rules.two_front_extra_draw, rng)
    return drawn, excess_cards_nb(cs, side, rules.hand_limit)


# --- card play at the start of an operation phase (SoE 7.1, 7.11–7.13) ----------------------------


@njit(cache=True, _nrt=False, internal=True)
def card_cubes_nb(cs, side, card):
    """Total reinforcement cubes printed on ``card`` (SoE 7.12)."""
    t = 0
    for k in range(N_CUBE_KINDS):
        t += cs.cubes[side, card - 1, k]
    return t


@njit(cache=True, _nrt=False, internal=True)
def event_playable_nb(cs, side, card, front):
    """SoE 7.13, 10.0: a historical event may be played on ``front`` when the card is historical and
    is designated for that front or for any front."""
    c = card - 1
    if cs.event_kind[side, c] != EVENT_KIND.HISTORICAL:
        return False
    f = cs.front[side, c]
    return f == CARD_FRONT.ANY or f == front


@njit(cache=True, _nrt=False)
def legal_card_plays_nb(cs, side, front, out_card, out_use):
    """The legal (card, use) choices of ``side`` on ``front`` at the start of an operation phase
    (SoE 7.1).

    Entry 0 is always ``(NO_CARD, USE_PASS)`` ("A player is not required to play a card"). Then, for
    each card in hand (ascending id): ``USE_ORDERS`` (7.11) when it prints orders, ``USE_CUBES``
    (7.12) when it prints cubes, ``USE_EVENT`` (7.13) when :func:`event_playable_nb` (only
    historical events, only on the card's front or ``any``; 10.0). Battle and reaction events are
    not played here (7.1 items 5–6). A use worth nothing (0 orders, no cubes) is not listed (E-C4).

    ``out_card``, ``out_use``: arrays of at least ``1 + 3 * n_cards`` entries. Returns the count.
    """
    out_card[0] = NO_CARD
    out_use[0] = USE_PASS
    k = 1
    for c in range(cs.location.shape[1]):
        if cs.location[side, c] != HAND:
            continue
        card = c + 1
        if cs.orders[side, c] > 0:
            out_card[k] = card
            out_use[k] = USE_ORDERS
            k += 1
        if card_cubes_nb(cs, side, card) > 0:
            out_card[k] = card
            out_use[k] = USE_CUBES
            k += 1
        if event_playable_nb(cs, side, card, front):
            out_card[k] = card
            out_use[k] = USE_EVENT
            k += 1
    return k


@njit(cache=True, _nrt=True)
def is_legal_play_nb(cs, side, front, card, use):
    """True if ``(card, use)`` is among :func:`legal_card_plays_nb` for ``side`` on ``front``."""
    if use == USE_PASS:
        return True
    if card < 1 or card > cs.location.shape[1] or cs.location[side, card - 1] != HAND:
        return False
    if use == USE_ORDERS:
        return cs.orders[side, card - 1] > 0
    if use == USE_CUBES:
        return card_cubes_nb(cs, side, card) > 0
    if use == USE_EVENT:
        return event_playable_nb(cs, side, card, front)
    return False


@njit(cache=True, _nrt=False, internal=True)
def retire_card_nb(cs, side, card, as_event):
    """Put a played card away (SoE 7.1 "placed in the discard pile, except those that specifically
    state that they are to be taken out of the game"; 7.13): REMOVED when played for its event and
    the card is starred (``remove_after_event``), else DISCARD (docs/rules.md E-C1)."""
    c = card - 1
    if as_event and cs.remove_after_event[side, c]:
        cs.location[side, c] = REMOVED
    else:
        cs.location[side, c] = DISCARD
    cs.use[side, c] = USE_NONE


@njit(cache=True, _nrt=False)
def apply_card_play_nb(cs, side, card, use, cubes):
    """Play ``card`` from ``side``'s hand for ``use`` (SoE 7.1, 7.11, 7.12, 7.13).

    * ``USE_PASS``: nothing happens.
    * ``USE_ORDERS`` (7.11): the card is discarded; returns its orders (extra orders on this front).
    * ``USE_CUBES`` (7.12): the card is discarded and its cubes are added to ``cubes[side]`` (a
      (2, 3) view: the :class:`~soe_sim.engine.state.GameState` ``cubes[:, front]`` of the front
      the card is played on; EatS X one RP pool per front, reading V8).
    * ``USE_EVENT`` (7.13): the card is removed from the game if starred, else discarded; its id is
      returned for the engine to resolve the event.

    Returns ``(extra_orders, event_card)`` (``event_card`` is :data:`NO_CARD` unless an event).
    Raises ValueError when the card is not in hand or the use is unknown (check legality with
    :func:`is_legal_play_nb` first: this kernel does not check the front).
    """
    if use == USE_PASS:
        return 0, NO_CARD
    if card < 1 or card > cs.location.shape[1] or cs.location[side, card - 1] != HAND:
        raise ValueError("apply_card_play_nb: card not in hand")
    c = card - 1
    if use == USE_ORDERS:
        retire_card_nb(cs, side, card, False)
        return np.int64(cs.orders[side, c]), NO_CARD
    if use == USE_CUBES:
        for k in range(N_CUBE_KINDS):
            cubes[side, k] += cs.cubes[side, c, k]
        retire_card_nb(cs, side, card, False)
        return 0, NO_CARD
    if use == USE_EVENT:
        retire_card_nb(cs, side, card, True)
        return 0, card
    raise ValueError("apply_card_play_nb: unknown use")


@njit(cache=True, _nrt=False)
def play_reaction_card_nb(cs, side, card):
    """SoE 7.1 item 6, 7.41.4: play a reaction card from hand "in accordance with the card's
    description". It is removed if starred, else discarded (E-C1); returns its id for the engine to
    resolve, or :data:`NO_CARD` (nothing done) if ``card`` is not a reaction card in hand."""
    if card < 1 or card > cs.location.shape[1] or cs.location[side, card - 1] != HAND:
        return NO_CARD
    if cs.event_kind[side, card - 1] != EVENT_KIND.REACTION:
        return NO_CARD
    retire_card_nb(cs, side, card, True)
    return card


# --- battle (SoE 7.41.1, 7.41.2) ----------------------------------------------------------------------


@njit(cache=True, _nrt=False)
def draw_combat_card_nb(cs, side, rng):
    """SoE 7.41.2: the combat modifier card "blindly drawn from their deck".

    The top card of the draw pile (reshuffling the discard pile if empty, 7.1) goes IN_PLAY until
    :func:`end_battle_nb` discards it (E-C5). Returns ``(card, modifier)``; ``(NO_CARD, 0)`` when the
    draw and discard piles are both empty (E-C2).
    """
    card = take_top_nb(cs, side, rng, IN_PLAY)
    if card == NO_CARD:
        return NO_CARD, 0
    cs.use[side, card - 1] = USE_COMBAT_BLIND
    return card, np.int64(cs.combat_modifier[side, card - 1])


@njit(cache=True, _nrt=False)
def play_combat_card_from_hand_nb(cs, side, card, rules):
    """SoE 7.41.2, 3.4: a combat card played from the hand adds its modifier + ``rules.hand_card_bonus``.

    The card goes IN_PLAY until :func:`end_battle_nb`. Returns the modifier; raises ValueError if the
    card is not in hand.
    """
    if card < 1 or card > cs.location.shape[1] or cs.location[side, card - 1] != HAND:
        raise ValueError("play_combat_card_from_hand_nb: card not in hand")
    cs.location[side, card - 1] = IN_PLAY
    cs.use[side, card - 1] = USE_COMBAT_HAND
    return np.int64(cs.combat_modifier[side, card - 1]) + rules.hand_card_bonus


@njit(cache=True, _nrt=False)
def battle_card_playable_nb(cs, side, c, battle_front, attacker, on_rail):
    """May card index ``c`` (id ``c + 1``) of ``side`` be played as the battle card of a battle on
    ``battle_front`` (``attacker``: the side attacks; ``on_rail``: the battle's area is on a rail
    line)? SoE 7.41.1 ("the text on the card describes how the battle will be influenced") with the
    card's play limits (``cs.battle_limit``), and EatS V where SoE is silent: a card designated for a
    front is played as an event — a battle card is one — only on that front (reading E-C9)."""
    if cs.event_kind[side, c] != EVENT_KIND.BATTLE:
        return False
    f = cs.front[side, c]
    if f != CARD_FRONT.ANY and f != battle_front:
        return False
    lim = cs.battle_limit[side, c]
    if (lim & LIMIT_ATTACKER_ONLY) != 0 and not attacker:
        return False
    if (lim & LIMIT_DEFENDER_ONLY) != 0 and attacker:
        return False
    if (lim & LIMIT_RAIL_LINE) != 0 and not on_rail:
        return False
    return True


@njit(cache=True, _nrt=False)
def play_battle_card_nb(cs, side, card, out_effect):
    """SoE 7.41.1: play a battle card from the hand for its battle effect.

    ``out_effect`` (``N_EFFECT``, int64, layout of :mod:`soe_sim.battle.nb` ``E_*``) receives the
    card's effect vector. The card goes IN_PLAY; :func:`end_battle_nb` removes it if starred, else
    discards it (E-C1). Returns False (``out_effect`` zeroed, nothing moved) if ``card`` is not a
    battle card in hand.
    """
    out_effect[:] = 0
    if card < 1 or card > cs.location.shape[1] or cs.location[side, card - 1] != HAND:
        return False
    c = card - 1
    if cs.event_kind[side, c] != EVENT_KIND.BATTLE:
        return False
    for e in range(N_EFFECT):
        out_effect[e] = cs.battle_effect[side, c, e]
    cs.location[side, c] = IN_PLAY
    cs.use[side, c] = USE_BATTLE
    return True


@njit(cache=True, _nrt=False)
def end_battle_nb(cs, side):
    """After a battle (SoE 7.1 "Once played, cards are placed in the discard pile"): every card of
    ``side`` IN_PLAY leaves the table — a battle card played for its event is removed if starred,
    every other card (combat cards, blind or from hand) is discarded (E-C1, E-C5). Returns how many."""
    k = 0
    for c in range(cs.location.shape[1]):
        if cs.location[side, c] == IN_PLAY:
            retire_card_nb(cs, side, c + 1, cs.use[side, c] == USE_BATTLE)
            k += 1
    return k


# --- conservation ----------------------------------------------------------------------------------


@njit(cache=True, _nrt=True)
def card_counts_nb(cs, side, out_counts):
    """Conservation check: cards of ``side`` per location.

    Fills ``out_counts`` (``N_LOCATIONS``) and returns True when the deck is consistent: every card
    has a valid location code; the draw pile ``pile[top:len]`` lists each DRAW_PILE card exactly
    once and nothing else; cards not IN_PLAY have ``use == USE_NONE``. Since each card has one
    location, ``out_counts.sum() == n_cards`` always holds when the result is True.
    """
    n = cs.location.shape[1]
    out_counts[:] = 0
    ok = True
    for c in range(n):
        loc = cs.location[side, c]
        if loc < 0 or loc >= N_LOCATIONS:
            ok = False
            continue
        out_counts[loc] += 1
        if loc != IN_PLAY and cs.use[side, c] != USE_NONE:
            ok = False
    top = cs.pile_top[side]
    ln = cs.pile_len[side]
    if top < 0 or ln > n or top > ln:
        return False
    if ln - top != out_counts[DRAW_PILE]:
        ok = False
    seen = np.zeros(n, dtype=np.bool_)
    for i in range(top, ln):
        card = cs.pile[side, i]
        if card < 1 or card > n or seen[card - 1] or cs.location[side, card - 1] != DRAW_PILE:
            ok = False
        else:
            seen[card - 1] = True
    return ok
