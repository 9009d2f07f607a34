"""The card subsystem of the engine: both decks as arrays, and Python wrappers of its kernels.

:func:`new_card_state` builds a :class:`CardState` (a ``NamedTuple`` of numpy arrays, a valid numba
argument) from a scenario: per side, the location of each of the 55 cards (:class:`CardLocation`),
the shuffled draw pile with its top index, and the static card attributes (orders, combat modifier,
cubes, event kind, front, starred flag, battle-effect vector). The kernels in
:mod:`soe_sim.engine.cards.nb` draw, reshuffle, discard and play cards in place (SoE 3.4, 6.0,
7.1, 7.11–7.13, 7.41.1–2, 10.1); randomness comes from an explicit SplitMix64 state held in a
``uint64`` array (:func:`new_rng`). Readings: docs/rules.md "Engine: cards" (E-C1…).

Cards are named by their id (1–55); row ``id - 1`` of every per-card array is card ``id``.

Example::

    rules = load_rules()
    rng = new_rng(7)
    cs = new_card_state("battle-of-warsaw", rules, rng)
    cr = card_constants(rules)
    drawn, must_discard = nb.replenish_nb(cs, SIDE.POLISH, cr, rng)
    for card in hand(cs, SIDE.POLISH)[:must_discard]:
        nb.discard_nb(cs, SIDE.POLISH, card)
    plays = legal_card_plays(cs, SIDE.POLISH, FRONT.NORTH)   # [(0, CardUse.PASS), (3, CardUse.ORDERS), …]
    extra_orders, event = nb.apply_card_play_nb(cs, SIDE.POLISH, *plays[1], game.cubes[:, FRONT.NORTH])
"""
from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

import numpy as np
import pandas as pd

from soe_sim.data.cards import BATTLE_LIMIT_KEYS as _DATA_LIMIT_KEYS
from soe_sim.data.enums import CardFront, EventKind, Side
from soe_sim.engine.cards import nb
from soe_sim.engine.cards.nb import (
    DISCARD,
    DRAW_PILE,
    HAND,
    IN_PLAY,
    N_EFFECT,
    N_LOCATIONS,
    NO_CARD,
    REMOVED,
)
from soe_sim.errors import Problem, SoeInputError
from soe_sim.random import SeedLike, chunk_seeds

__all__ = [
    "CardLocation",
    "CardUse",
    "CardRules",
    "CardState",
    "NO_CARD",
    "BATTLE_EFFECT_KEYS",
    "BATTLE_LIMIT_KEYS",
    "card_constants",
    "new_card_state",
    "new_rng",
    "hand",
    "draw_pile",
    "card_counts",
    "check_conservation",
    "legal_card_plays",
    "nb",
]

# Effect keys of the battle-effect vector, in the order of soe_sim.battle.nb E_* constants.
BATTLE_EFFECT_KEYS = {
    "combat_value": nb.E_COMBAT_VALUE,
    "enemy_extra_loss": nb.E_ENEMY_EXTRA_LOSS,
    "own_loss_reduction": nb.E_OWN_LOSS_REDUCTION,
    "negate_flank": nb.E_NEGATE_FLANK,
    "cancel_fortification": nb.E_CANCEL_FORTIFICATION,
    "cancel_enemy_battle_card": nb.E_CANCEL_ENEMY_BATTLE_CARD,
}

# The play-limit keys of a battle card (soe_sim.data.cards.BATTLE_LIMIT_KEYS, in that order) → their bit
# flags in ``CardState.battle_limit``: conditions of the play, not effects of the battle.
BATTLE_LIMIT_KEYS = dict(zip(_DATA_LIMIT_KEYS, (nb.LIMIT_ATTACKER_ONLY, nb.LIMIT_DEFENDER_ONLY, nb.LIMIT_RAIL_LINE),
                             strict=True))


class CardLocation(IntEnum):
    """Where a card is (codes of ``CardState.location``; kernels use ``nb.DRAW_PILE`` …)."""

    DRAW_PILE = DRAW_PILE
    HAND = HAND
    DISCARD = DISCARD
    REMOVED = REMOVED
    IN_PLAY = IN_PLAY


class CardUse(IntEnum):
    """How a card is played (SoE 3.4; codes of ``legal_card_plays_nb`` and ``CardState.use``)."""

    NONE = nb.USE_NONE
    PASS = nb.USE_PASS
    ORDERS = nb.USE_ORDERS
    CUBES = nb.USE_CUBES
    EVENT = nb.USE_EVENT
    COMBAT_BLIND = nb.USE_COMBAT_BLIND
    COMBAT_HAND = nb.USE_COMBAT_HAND
    BATTLE = nb.USE_BATTLE
    REACTION = nb.USE_REACTION


class CardRules(NamedTuple):
    """Card rule constants in kernel-ready form (all from ``data/rules/*.toml`` ``[cards]``,
    ``combat.hand_card_bonus``)."""

    deck_size: int  # SoE 3.4 (55 cards per side)
    draw_per_round: int  # SoE 6.0
    hand_limit: int  # SoE 6.0, 10.1
    two_front_extra_draw: int  # SoE 10.1
    two_front_extra_draw_phases: np.ndarray  # SoE 10.1 (operation phases 2–4), int64
    cards_per_front_per_phase: int  # SoE 7.1
    hand_card_bonus: int  # SoE 7.41.2, 3.4


def card_constants(rules) -> CardRules:
    """Kernel-ready card constants of a :class:`~soe_sim.rules.Rules`."""
    return CardRules(
        deck_size=int(rules["cards.deck_size"]),
        draw_per_round=int(rules["cards.draw_per_round"]),
        hand_limit=int(rules["cards.hand_limit"]),
        two_front_extra_draw=int(rules["cards.two_front_extra_draw"]),
        two_front_extra_draw_phases=np.asarray(rules["cards.two_front_extra_draw_phases"], dtype=np.int64),
        cards_per_front_per_phase=int(rules["cards.cards_per_front_per_phase"]),
        hand_card_bonus=int(rules["combat.hand_card_bonus"]),
    )


class CardState(NamedTuple):
    """Both decks as arrays (first axis: :data:`~soe_sim.data.enums.SIDE`; second: card ``id - 1``).

    Dynamic: ``location`` int8 (2, n) :class:`CardLocation` · ``use`` int8 (2, n) the
    :class:`CardUse` of a card IN_PLAY (``NONE`` elsewhere) · ``pile`` int16 (2, n) the draw pile,
    ``pile[s, pile_top[s]:pile_len[s]]`` top first · ``pile_top``, ``pile_len`` int64 (2,).

    Static (from ``data/cards/<side>.csv``): ``orders`` int8 (SoE 7.11) · ``combat_modifier`` int8
    (7.41.2) · ``cubes`` int8 (2, n, 3) infantry/cavalry/allied (7.12, columns as
    ``GameState.cubes[:, front]``) · ``event_kind`` int8 (:data:`~soe_sim.data.enums.EVENT_KIND`) · ``front``
    int8 (:data:`~soe_sim.data.enums.CARD_FRONT`) · ``remove_after_event`` bool (starred card,
    7.13) · ``battle_effect`` int64 (2, n, N_EFFECT) the battle-card effect in the layout of
    :mod:`soe_sim.battle.nb` ``E_*`` (zeros for cards that are not battle cards) · ``battle_limit``
    int8 (2, n) the battle card's play limits, bit flags ``nb.LIMIT_*`` (:data:`BATTLE_LIMIT_KEYS`).
    """

    location: np.ndarray
    use: np.ndarray
    pile: np.ndarray
    pile_top: np.ndarray
    pile_len: np.ndarray
    orders: np.ndarray
    combat_modifier: np.ndarray
    cubes: np.ndarray
    event_kind: np.ndarray
    front: np.ndarray
    remove_after_event: np.ndarray
    battle_effect: np.ndarray
    battle_limit: np.ndarray

    @property
    def n_cards(self) -> int:
        return int(self.location.shape[1])

    def copy(self) -> "CardState":
        """A deep copy (every array copied)."""
        return CardState(*(np.array(a, copy=True) for a in self))

    def to_frame(self, side) -> pd.DataFrame:
        """One row per card of ``side``: location, use, position in the draw pile (0 = top)."""
        s = int(side)
        pos = np.full(self.n_cards, -1)
        top, ln = int(self.pile_top[s]), int(self.pile_len[s])
        for i, card in enumerate(self.pile[s, top:ln]):
            pos[int(card) - 1] = i
        return pd.DataFrame({
            "id": np.arange(1, self.n_cards + 1),
            "location": [CardLocation(int(v)).name.lower() for v in self.location[s]],
            "use": [CardUse(int(v)).name.lower() for v in self.use[s]],
            "pile_position": pos,
            "orders": self.orders[s].astype(int),
            "combat_modifier": self.combat_modifier[s].astype(int),
        }).set_index("id")


def new_rng(seed: SeedLike | np.ndarray = None) -> np.ndarray:
    """A SplitMix64 state for the card kernels: a ``(1,)`` uint64 array (advanced in place).

    ``seed``: an int / SeedSequence / Generator / None (spawned through
    :func:`soe_sim.random.chunk_seeds`), or an existing uint64 array (returned as is).
    """
    if isinstance(seed, np.ndarray):
        if seed.dtype != np.uint64 or seed.ndim != 1 or seed.shape[0] < 1:
            raise TypeError("seed_state must be a 1-D uint64 array")
        return seed
    return chunk_seeds(seed, 1)


def _deck_arrays(cards: pd.DataFrame, side_name: str, deck_size: int) -> dict:
    ids = [int(v) for v in cards["id"]]
    if sorted(ids) != list(range(1, deck_size + 1)):
        from soe_sim._paths import data_dir
        from soe_sim.data._io import display_path

        # the file the deck was read from (soe_sim.data.cards.read_deck), else the data's own
        file = cards.attrs.get("path") or data_dir() / "cards" / f"{side_name}.csv"
        raise SoeInputError(Problem(display_path(file), "", "id", len(ids),
                                    f"expected the ids 1..{deck_size} (cards.deck_size) once each"))
    n = deck_size
    out = {
        "orders": np.zeros(n, np.int8),
        "combat_modifier": np.zeros(n, np.int8),
        "cubes": np.zeros((n, 3), np.int8),
        "event_kind": np.zeros(n, np.int8),
        "front": np.full(n, int(CardFront.ANY), np.int8),
        "remove_after_event": np.zeros(n, np.bool_),
        "battle_effect": np.zeros((n, N_EFFECT), np.int64),
        "battle_limit": np.zeros(n, np.int8),
    }
    for row in cards.itertuples(index=False):
        c = int(row.id) - 1
        out["orders"][c] = int(row.orders)
        out["combat_modifier"][c] = int(row.combat_modifier)
        out["cubes"][c] = (int(row.infantry_cubes), int(row.cavalry_cubes), int(row.allied_cubes))
        kind = EventKind.from_slug(row.event_kind)
        out["event_kind"][c] = int(kind)
        out["front"][c] = int(CardFront.from_slug(row.front))
        out["remove_after_event"][c] = bool(row.remove_after_event)
        if kind == EventKind.BATTLE:
            for key, value in (row.effect or {}).items():
                if key in BATTLE_EFFECT_KEYS:
                    out["battle_effect"][c, BATTLE_EFFECT_KEYS[key]] = int(value)
                elif key in BATTLE_LIMIT_KEYS and int(value) != 0:
                    out["battle_limit"][c] |= BATTLE_LIMIT_KEYS[key]
    return out


def new_card_state(scenario=None, rules=None, seed_state: SeedLike | np.ndarray = None,
                   decks: dict | None = None) -> CardState:
    """Both decks at the start of ``scenario`` (SoE 4.0): shuffled draw piles, empty hands.

    Parameters
    ----------
    scenario : Scenario, scenario id or None
        Its ``removed_cards`` (side → ids) start REMOVED; ``None`` removes nothing.
    rules : soe_sim.rules.Rules, optional (default ``load_rules()``)
    seed_state : uint64 array (advanced in place), or a seed for :func:`new_rng`
        The stream that shuffles the two piles (Polish first, then Soviet).
    decks : dict side slug → DataFrame, optional
        Deck tables in the :func:`soe_sim.data.load_cards` format (default: the built-in decks).

    Every card not removed is in the draw pile; the piles are gathered in id order and shuffled
    with :func:`~soe_sim.engine.cards.nb.shuffle_draw_pile_nb`. Whether the first round begins with
    a replenish phase is the phase loop's business.
    """
    from soe_sim.data import load_cards, load_scenario
    from soe_sim.rules import load_rules

    rules = load_rules() if rules is None else rules
    if isinstance(scenario, str):
        scenario = load_scenario(scenario)
    removed = dict(getattr(scenario, "removed_cards", None) or {})
    rng = new_rng(seed_state)
    n = int(rules["cards.deck_size"])
    per_side = []
    for s in Side:
        cards = (decks or {}).get(s.slug)
        if cards is None:
            cards = load_cards(s.slug)
        per_side.append(_deck_arrays(cards, s.slug, n))
    location = np.full((2, n), DRAW_PILE, np.int8)
    pile = np.zeros((2, n), np.int16)
    pile_len = np.zeros(2, np.int64)
    for s in Side:
        for cid in removed.get(s.slug, []) or []:
            cid = int(cid)
            if not 1 <= cid <= n:
                raise SoeInputError(Problem(str(getattr(scenario, "path", "") or "scenario"),
                                            f"removed_cards.{s.slug}", "", cid, f"expected a card id 1..{n}"))
            location[s, cid - 1] = REMOVED
        ids = np.flatnonzero(location[s] == DRAW_PILE) + 1
        pile[s, :len(ids)] = ids
        pile_len[s] = len(ids)
    cs = CardState(
        location=location,
        use=np.zeros((2, n), np.int8),
        pile=pile,
        pile_top=np.zeros(2, np.int64),
        pile_len=pile_len,
        **{k: np.stack([d[k] for d in per_side]) for k in per_side[0]},
    )
    for s in Side:
        nb.shuffle_draw_pile_nb(cs, int(s), rng)
    return cs


# --- Python conveniences ------------------------------------------------------------------------


def hand(cs: CardState, side) -> list[int]:
    """Ids of the cards in ``side``'s hand, ascending."""
    return [int(c) + 1 for c in np.flatnonzero(cs.location[int(side)] == HAND)]


def draw_pile(cs: CardState, side) -> list[int]:
    """Ids of ``side``'s draw pile, top card first."""
    s = int(side)
    return [int(c) for c in cs.pile[s, int(cs.pile_top[s]):int(cs.pile_len[s])]]


def card_counts(cs: CardState, side) -> dict[str, int]:
    """Cards of ``side`` per location (:func:`~soe_sim.engine.cards.nb.card_counts_nb`); raises
    AssertionError if the deck is inconsistent."""
    out = np.zeros(N_LOCATIONS, np.int64)
    ok = nb.card_counts_nb(cs, int(side), out)
    if not ok:
        raise AssertionError(f"inconsistent card state for side {int(side)}: {out.tolist()}")
    return {CardLocation(i).name.lower(): int(out[i]) for i in range(N_LOCATIONS)}


def check_conservation(cs: CardState) -> None:
    """Raise AssertionError unless both decks are consistent and hold ``n_cards`` cards each."""
    for s in Side:
        counts = card_counts(cs, s)
        if sum(counts.values()) != cs.n_cards:
            raise AssertionError(f"{s.slug}: {counts} does not sum to {cs.n_cards}")


def legal_card_plays(cs: CardState, side, front) -> list[tuple[int, CardUse]]:
    """:func:`~soe_sim.engine.cards.nb.legal_card_plays_nb` as a list of ``(card id, CardUse)``."""
    size = 1 + 3 * cs.n_cards
    cards = np.zeros(size, np.int64)
    uses = np.zeros(size, np.int64)
    k = nb.legal_card_plays_nb(cs, int(side), int(front), cards, uses)
    return [(int(cards[i]), CardUse(int(uses[i]))) for i in range(k)]
