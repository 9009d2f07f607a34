"""A played game as a story: phases, their events in the order of the phase sequence, battles with
their exact odds, and the map after every phase — everything :mod:`soe_sim.playtest.narrate` and
:mod:`soe_sim.playtest.snapshots` render.

Built from the event record of :func:`soe_sim.engine.game.play_game` (the kinds of
:data:`soe_sim.engine.game.EVENT`). A game played with ``log_detail=True`` also carries the detail
events that make the story exact: ``BATTLE_PREP`` (the prepared-battle row of every battle, SoE 7.41),
``BATTLE_DECK`` (the pile a blind combat-card draw takes from, SoE 7.41.2) and ``POSITION`` /
``AREA_STATE`` (the map at the end of every phase). Without them the story still reads, but battles
have no odds and the map between phases is tracked from the move events only.

Exact odds of a battle ("before the draw"): the probability that the attacker wins over the blind
combat-card draws, given the battle as it stood when it was resolved (blocks, half strength,
fortification, Defend, garrison, flank attacks, battle cards, initiative) and each side's combat card
as chosen: a card played from the hand counts its value (+ the hand bonus, SoE 7.41.2); a blind draw
is uniform over the draw pile at that moment (the discard pile when the draw pile is empty and is
reshuffled, SoE 7.1). Computed with :func:`soe_sim.battle.nb.exact_nb`, the kernel of ``soe-sim odds``.
Under ``combat.choose_after_draw`` (EatS IX.3 item 2, docs/rules.md V13) each side chose after seeing
its drawn card; the odds still take the recorded choices as fixed before the draw, and the narration
says so.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from soe_sim.battle import nb as bnb
from soe_sim.data.enums import Front, Side
from soe_sim.engine.game import CAUSE, EVENT
from soe_sim.engine.state import PHASE_REINFORCEMENT, PHASE_REPLENISH, STATUS

__all__ = ["Story", "PhaseStory", "BattleStory", "ReconStory", "VPStory", "record_kind", "Names", "build_story",
           "phase_title", "phase_slug", "vp_award", "STAGES", "SIDE_NAMES"]

SIDE_NAMES = ("Polish", "Soviet")

#: Stages of a phase, in the order of the phase sequence (docs/engine-design.md); each event is
#: filed under the stage it belongs to (events of no particular stage stay in the current one).
STAGES = ("Set-up", "Arrivals", "Cards", "Orders placed", "Orders executed", "Battles", "Reorganize and rail",
          "Supply, stacking and control", "Reinforcements", "End of the game")
(ST_SETUP, ST_ARRIVALS, ST_CARDS, ST_PLACED, ST_EXECUTED, ST_BATTLES, ST_REORG, ST_END_PHASE, ST_REINF,
 ST_END_GAME) = range(len(STAGES))

_BATTLE_KINDS = frozenset({EVENT.DEFEND, EVENT.BATTLE_DECK, EVENT.BATTLE_CARD, EVENT.COMBAT_CARD,
                           EVENT.BATTLE_PREP, EVENT.BATTLE, EVENT.BATTLE_LOSSES})
_DETAIL_KINDS = frozenset({EVENT.BATTLE_PREP, EVENT.BATTLE_DECK, EVENT.POSITION, EVENT.AREA_STATE})


def phase_title(rnd: int, phase: int) -> str:
    """``"Round 2, Operation Phase 3"`` (SoE 5.0: card replenishment, operation phases, reinforcement)."""
    if phase == PHASE_REPLENISH:
        return f"Round {rnd}, Card Replenishment"
    if phase == PHASE_REINFORCEMENT:
        return f"Round {rnd}, Reinforcement Phase"
    return f"Round {rnd}, Operation Phase {phase}"


def phase_slug(rnd: int, phase: int) -> str:
    """File stem of a phase's snapshot: ``round-02-phase-3`` (``phase-0`` replenishment, ``phase-R``
    reinforcement; they sort in playing order)."""
    p = "R" if phase == PHASE_REINFORCEMENT else str(int(phase))
    return f"round-{int(rnd):02d}-phase-{p}"


def _short_block_name(name: str) -> str:
    # "Polish infantry brigade (unnamed Inf) #1" -> "infantry brigade #1" (the side is always said)
    text = re.sub(r"\s+", " ", re.sub(r"\s*\([^)]*\)", "", str(name))).strip()
    return re.sub(r"^(Polish|Soviet) (infantry|cavalry) brigade", r"\2 brigade", text)


def _cards(side: str):
    """Card rows of ``side``'s deck by id, read again when a file of the data directory's ``cards/`` or
    ``rules/`` changed (an edited deck is named as edited within one Python session)."""
    from soe_sim._paths import data_files_stamp

    return _cards_stamped(side, data_files_stamp("cards", "rules"))


@lru_cache(maxsize=4)
def _cards_stamped(side: str, key: tuple):
    from soe_sim.data import load_cards

    c = load_cards(side)
    return {int(r.id): r for r in c.itertuples(index=False)}


class Names:
    """Display names of a game's blocks, areas and cards (from its :class:`GameSetup`)."""

    def __init__(self, setup):
        self.setup = setup
        roster = setup.roster.blocks.set_index("id")
        ids = [str(b) for b in setup.block_ids]
        self.block_id = ids
        self.block_name = [_short_block_name(roster.at[b, "name"]) if b in roster.index else b for b in ids]
        self.block_arm = [str(roster.at[b, "arm"]) if b in roster.index else "infantry" for b in ids]
        areas = setup.game_map.areas
        self.area_id = [str(a) for a in areas["id"]]
        self.area_name = [str(a) for a in areas["name"]]
        self.area_vp = setup.game_map.vp.astype(int)

    def block(self, b: int, sp: int | None = None) -> str:
        if b < 0 or b >= len(self.block_id):
            return f"block #{b}"
        text = self.block_name[b]
        if self.block_arm[b] == "leader":
            return text + " (leader)" if sp is not None else text
        if sp is not None:
            text += f" [{int(sp)}{'c' if self.block_arm[b] == 'cavalry' else ''}]"
        return text

    def area(self, a: int) -> str:
        return self.area_name[a] if 0 <= a < len(self.area_name) else "off the map"

    def card(self, side: int, card: int) -> str:
        if card <= 0:
            return "no card (both piles empty)"
        row = _cards(Side(side).slug).get(int(card))
        return f"card {card} “{row.name}”" if row is not None else f"card {card}"

    def card_row(self, side: int, card: int):
        return _cards(Side(side).slug).get(int(card))


@dataclass
class BattleStory:
    """One battle (SoE 7.4–7.44) with its exact odds (``None`` without the detail events)."""

    round: int
    phase: int
    area: int
    attacker: int  # side
    defender: int
    attackers: list  # [(block, sp)] in the area when the battle was fought
    defenders: list
    garrison: bool = False
    defend: bool = False
    fortified: bool | None = None  # None: unknown (no detail events)
    support_directions: int = 0
    battle_cards: dict = field(default_factory=dict)  # side -> card
    combat_cards: dict = field(default_factory=dict)  # side -> (use, card, modifier)
    decks: dict = field(default_factory=dict)  # side -> ({modifier: count}, from_discard)
    prep: np.ndarray | None = None
    winner: int = -1
    fought: bool = True
    attacker_losses: int = 0
    defender_losses: int = 0
    great_victory: bool = False
    # exact, before the draw (None without BATTLE_PREP)
    p_attacker_win: float | None = None
    p_great_victory: float | None = None
    expected_attacker_losses: float | None = None
    expected_defender_losses: float | None = None
    attacker_cv: int | None = None  # after the cards, as fought
    defender_cv: int | None = None
    replay_winner: int | None = None  # the winner the prepared row gives with the cards drawn
    events: list = field(default_factory=list)  # raw records of the battle and its consequences

    @property
    def consistent(self) -> bool | None:
        """Whether resolving the recorded battle row with the recorded cards gives the logged winner."""
        return None if self.replay_winner is None else self.replay_winner == self.winner


@dataclass
class ReconStory:
    """A Recon order carried out (SoE 7.31): ``revealed`` enemy blocks newly seen, ``enemies`` the
    enemy blocks in the area at that moment ``[(block, sp)]``."""

    side: int
    area: int
    revealed: int
    enemies: list


def vp_award(before: int, after: int) -> int:
    """The VP a move of the track from ``before`` to ``after`` awarded, signed (+ Polish).

    The track has no 0 space (SoE 7.8, docs/rules.md E10): Polish +1, the Soviets gain 2 → Soviet 2
    (−2). A move that crosses 0 is therefore one longer than the award: +1 → −2 is −2 VP, not −3.
    """
    before, after = int(before), int(after)
    change = after - before
    if before > 0 > after or before < 0 < after:
        change += 1 if change < 0 else -1
    return change


@dataclass
class VPStory:
    """A move of the VP track (SoE 7.8; the track has no 0 space): ``side`` gained, the signed track
    went from ``before`` to ``after`` (+ Polish; ``change`` = ``after - before``, the ``vp`` event's
    value), for ``cause`` (:data:`~soe_sim.engine.game.CAUSE`) at ``area`` (-1: none)."""

    side: int
    change: int
    cause: int
    area: int
    before: int
    after: int

    @property
    def award(self) -> int:
        """The VP awarded, signed (+ Polish): ``change`` without the 0 space skipped (:func:`vp_award`)."""
        return vp_award(self.before, self.after)

    @property
    def crosses_zero(self) -> bool:
        """Whether the track crossed 0 (and moved one more than the award)."""
        return self.before > 0 > self.after or self.before < 0 < self.after


def record_kind(item) -> int:
    """The event kind of a raw record, -1 for a story object (:class:`VPStory`, :class:`ReconStory`)."""
    return int(item["kind"]) if isinstance(item, np.void) else -1


@dataclass
class PhaseStory:
    """One phase: its events filed by stage, and the map at its end."""

    round: int
    phase: int
    stages: dict = field(default_factory=dict)  # stage index -> list of items (record or BattleStory)
    battles: list = field(default_factory=list)
    vp_start: int = 0
    vp_end: int = 0
    vp_gained: list = field(default_factory=lambda: [0, 0])  # VP gained by the Polish, the Soviets (awards)
    blocks: list = field(default_factory=list)  # [(block, side, area, sp)] at the end of the phase
    garrison: np.ndarray | None = None  # side per area at the end (-1 none)
    control: np.ndarray | None = None
    moves: list = field(default_factory=list)  # [(side, from, to, kind)] kind: move / rail / retreat / other
    exact_positions: bool = False  # True: blocks from POSITION events, else tracked from moves

    @property
    def title(self) -> str:
        return "Set-up" if self.round < 0 else phase_title(self.round, self.phase)

    @property
    def slug(self) -> str:
        return "round-00-setup" if self.round < 0 else phase_slug(self.round, self.phase)


@dataclass
class Story:
    """A whole game: the phases in order (the first is the set-up), its battles and its result."""

    setup: object
    names: Names
    result: object
    phases: list
    battles: list
    vp_start: int
    vp_changes: list  # [(round, phase, change, cause, area)] of every VP event (change: of the track)
    detail: bool  # the game was played with log_detail
    tracking_mismatches: int  # phase ends where the tracked map differed from the POSITION events
    vp_items: list = field(default_factory=list)  # the VPStory of every VP event, in order (awards)

    @property
    def vp_end(self) -> int:
        return int(self.result.vp)


class _Tracker:
    """The map as the events change it (blocks' areas and SP, garrisons, control)."""

    def __init__(self, state0, key_city):
        self.key = np.asarray(key_city, dtype=bool)  # CONTROL events are logged for key cities only (SoE 1.3)
        on = np.flatnonzero((state0.block_status == STATUS.ON_MAP) & (state0.block_area >= 0))
        self.side = state0.block_side.astype(int)
        self.area = {int(b): int(state0.block_area[b]) for b in on}
        self.sp = {int(b): int(state0.block_sp[b]) for b in on}
        self.garrison = state0.garrison_side.astype(int).copy()
        self.control = state0.control.astype(int).copy()

    def in_area(self, area: int, side: int | None = None) -> list:
        return sorted([(b, self.sp[b]) for b, a in self.area.items()
                       if a == area and (side is None or self.side[b] == side)], key=lambda t: t[0])

    def blocks(self) -> list:
        return sorted((b, int(self.side[b]), a, self.sp[b]) for b, a in self.area.items())

    def apply(self, e) -> tuple | None:
        """Apply one record; returns ``(side, from, to, kind)`` for a move, else None."""
        k, b = int(e["kind"]), int(e["block"])
        a, a2, v, v2, s = int(e["area"]), int(e["area2"]), int(e["value"]), int(e["value2"]), int(e["side"])
        if k == EVENT.MOVE:
            self.area[b] = a2
            self.sp[b] = self.sp.get(b, 0) - v2  # a brigade detached stays behind (SoE 2.2)
            return (s, a, a2, "move")
        if k == EVENT.RAIL:
            self.area[b] = a2
            return (s, a, a2, "rail")
        if k == EVENT.BLOCK_MOVED:
            self.area[b] = a2
            return (s, a, a2, "retreat" if v2 == CAUSE.BATTLE else "other")
        if k == EVENT.ADVANCE:  # SoE 7.43 (E-B6): area = the battle, area2 = where the block goes back to
            self.area[b] = a2
            return (s, a, a2, "advance")
        if k in (EVENT.BLOCK_PLACED, EVENT.REINFORCEMENT_ARRIVED, EVENT.BUILD):
            self.area[b] = a
            self.sp[b] = v
        elif k == EVENT.BLOCK_LOSS:
            self.sp[b] = self.sp.get(b, 0) - v
        elif k == EVENT.BLOCK_REMOVED:
            self.area.pop(b, None)
            self.sp.pop(b, None)
        elif k == EVENT.REORGANIZED:
            self.sp[b] = self.sp.get(b, 0) + v
        elif k == EVENT.STRENGTHEN:
            self.sp[b] = v
        elif k == EVENT.COMBINE:
            self.sp[b] = v2
            self.area.pop(v, None)  # the absorbed block leaves the map (SoE 8.2)
            self.sp.pop(v, None)
        elif k == EVENT.GARRISON_PLACED:
            self.garrison[a] = s
        elif k == EVENT.GARRISON_REMOVED:
            self.garrison[a] = -1
        elif k == EVENT.CONTROL:
            self.control[a] = s
        return None

    def sync(self, blocks: list, control: np.ndarray, garrison: np.ndarray) -> bool:
        """Replace the tracked map by the recorded one; True when they already agreed."""
        same = (sorted(blocks) == self.blocks() and np.array_equal(control[self.key], self.control[self.key])
                and np.array_equal(garrison, self.garrison))
        self.area = {b: a for b, _, a, _ in blocks}
        self.sp = {b: sp for b, _, _, sp in blocks}
        self.control = control.copy()
        self.garrison = garrison.copy()
        return same


def _stage_of(e, phase: int) -> int | None:
    k, v = int(e["kind"]), int(e["value"])
    if k in (EVENT.ARRIVAL_CHECK, EVENT.REINFORCEMENT_ARRIVED, EVENT.REINFORCEMENT_DELAYED):
        return ST_ARRIVALS
    if k in (EVENT.CARDS_DRAWN, EVENT.CARD_DISCARDED):
        return ST_CARDS if phase != PHASE_REINFORCEMENT else None
    if k == EVENT.CARD_PLAYED:
        from soe_sim.engine.cards.nb import USE_REACTION

        return None if int(e["value2"]) == USE_REACTION else ST_CARDS
    if k == EVENT.FIRST_PLAYER:
        return ST_PLACED if v == 0 else (ST_EXECUTED if v <= 4 else ST_REORG)
    if k == EVENT.ORDER_PLACED:
        return ST_PLACED
    if k in (EVENT.MOVE, EVENT.RECON, EVENT.WITHDRAW, EVENT.PINNED, EVENT.LEADER_ORDER):
        return ST_EXECUTED
    if k in _BATTLE_KINDS or k in (EVENT.BATTLE_CHOSEN, EVENT.ADVANCE):
        return ST_BATTLES
    if k in (EVENT.REORGANIZED, EVENT.RAIL):
        return ST_REORG
    if k in (EVENT.BLOCK_LOSS, EVENT.BLOCK_REMOVED, EVENT.BLOCK_MOVED, EVENT.BLOCK_PLACED, EVENT.GARRISON_REMOVED,
             EVENT.GARRISON_PLACED) and int(e["value2"]) in (CAUSE.SUPPLY, CAUSE.STACKING):
        return ST_END_PHASE
    if k == EVENT.CONTROL:
        return ST_END_PHASE if phase != PHASE_REINFORCEMENT else None
    if k in (EVENT.COMBINE, EVENT.STRENGTHEN, EVENT.BUILD, EVENT.CUBES_DROPPED, EVENT.RIVALRY):
        return ST_REINF
    if k == EVENT.GARRISON_PLACED and int(e["value2"]) == CAUSE.REINFORCEMENT:
        return ST_REINF
    if k in (EVENT.OBJECTIVE, EVENT.IMMEDIATE_VICTORY, EVENT.GAME_END, EVENT.ABORT):
        return ST_END_GAME
    return None


def card_distribution(b: BattleStory, side: int, blind: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``(modifiers int64, probabilities)`` of ``side``'s combat card in battle ``b``: the hand card it
    played, else (or with ``blind``) the modifiers of the pile it draws from with their shares."""
    from soe_sim.engine.cards.nb import USE_COMBAT_HAND

    use, _card, mod = b.combat_cards.get(side, (0, 0, 0))
    if use == USE_COMBAT_HAND and not blind:
        return np.array([mod], dtype=np.int64), np.ones(1)
    counts, _ = b.decks.get(side, ({}, False))
    if not counts:  # both piles empty: the draw adds nothing (docs/rules.md E-C2)
        return np.zeros(1, dtype=np.int64), np.ones(1)
    vals = np.array(sorted(counts), dtype=np.int64)
    n = np.array([counts[v] for v in vals], dtype=float)
    return vals, n / n.sum()


def _odds(b: BattleStory, crules) -> None:
    """Fill the exact odds and the replayed result of a battle from its recorded row and cards."""
    if b.prep is None:
        return
    av, ap = card_distribution(b, b.attacker)
    dv, dp = card_distribution(b, b.defender)
    k = len(av) * len(dv)
    out = np.empty((k, bnb.N_OUT), dtype=np.int64)
    probs = np.empty(k, dtype=np.float64)
    bnb.exact_nb(b.prep, av, ap, dv, dp, crules, out, probs)
    wins = out[:, bnb.O_ATTACKER_WINS] == 1
    b.p_attacker_win = float(probs @ wins)
    great = np.where(wins, out[:, bnb.O_GREAT_VICTORY] == 1, out[:, bnb.O_GREAT_VICTORY] == 2)
    b.p_great_victory = float(probs @ great)
    b.expected_attacker_losses = float(probs @ out[:, bnb.O_ATT_LOSSES])
    b.expected_defender_losses = float(probs @ out[:, bnb.O_DEF_LOSSES])
    res = np.empty(bnb.N_OUT, dtype=np.int64)
    bnb.resolve_nb(b.prep, np.int64(b.combat_cards.get(b.attacker, (0, 0, 0))[2]),
                   np.int64(b.combat_cards.get(b.defender, (0, 0, 0))[2]), crules, res)
    b.attacker_cv = int(res[bnb.O_ATT_CV])
    b.defender_cv = int(res[bnb.O_DEF_CV])
    b.replay_winner = b.attacker if res[bnb.O_ATTACKER_WINS] == 1 else b.defender


def build_story(result, setup) -> Story:
    """The :class:`Story` of a :class:`~soe_sim.engine.game.GameResult` of ``setup``'s scenario."""
    names = Names(setup)
    rec = result.log.used()
    state0 = setup.state0
    tracker = _Tracker(state0, setup.game_map.garrison)
    n_pairs = (bnb.N_PREP + 1) // 2
    detail = bool(np.isin(rec["kind"], list(_DETAIL_KINDS)).any())

    setup_phase = PhaseStory(-1, -1, vp_start=int(state0.vp[0]), vp_end=int(state0.vp[0]))
    setup_phase.blocks = tracker.blocks()
    setup_phase.control = tracker.control.copy()
    setup_phase.garrison = tracker.garrison.copy()
    setup_phase.exact_positions = True
    phases = [setup_phase]
    cur = setup_phase
    stage = ST_SETUP
    battles: list[BattleStory] = []
    battle: BattleStory | None = None
    battle_fought = False  # the current battle's BATTLE record was seen: the next record starts another
    prep_rows: list[np.ndarray] = []  # per battle: its BATTLE_PREP pairs (the prepared row, then the flags)
    prep_pairs: list[int] = []
    vp = int(state0.vp[0])
    vp_changes = []
    vp_items: list[VPStory] = []
    mismatches = 0
    pos_blocks: list = []
    pos_seen = False
    area_ctrl = area_gar = None
    prev_kind = -1  # the kind of the last record filed (detail records aside)

    def close_positions():
        nonlocal pos_seen, pos_blocks, mismatches, area_ctrl, area_gar
        if pos_seen:
            ctrl = np.full_like(tracker.control, -1) if area_ctrl is None else area_ctrl
            gar = np.full_like(tracker.garrison, -1) if area_gar is None else area_gar
            if not tracker.sync(pos_blocks, ctrl, gar):
                mismatches += 1
            cur.exact_positions = True
        cur.blocks = tracker.blocks()
        cur.control = tracker.control.copy()
        cur.garrison = tracker.garrison.copy()
        pos_seen, pos_blocks, area_ctrl, area_gar = False, [], None, None

    for e in rec:
        k = int(e["kind"])
        if k == EVENT.PHASE_START:
            close_positions()
            cur = PhaseStory(int(e["value"]), int(e["value2"]), vp_start=vp, vp_end=vp)
            phases.append(cur)
            stage = ST_ARRIVALS
            battle = None
            continue
        if k == EVENT.POSITION:
            pos_seen = True
            pos_blocks.append((int(e["block"]), int(e["side"]), int(e["area"]), int(e["value"])))
            continue
        if k == EVENT.AREA_STATE:
            pos_seen = True
            if area_ctrl is None:
                area_ctrl = np.full_like(tracker.control, -1)
                area_gar = np.full_like(tracker.garrison, -1)
            area_ctrl[int(e["area"])] = int(e["side"])
            area_gar[int(e["area"])] = int(e["value"])
            continue
        item = e
        if k == EVENT.VP:
            item = VPStory(int(e["side"]), int(e["value"]), int(e["value2"]), int(e["area"]), vp, vp + int(e["value"]))
            vp += int(e["value"])
            cur.vp_end = vp
            cur.vp_gained[0 if item.award > 0 else 1] += abs(item.award)
            vp_items.append(item)
            vp_changes.append((cur.round, cur.phase, int(e["value"]), int(e["value2"]), int(e["area"])))
        st = _stage_of(e, cur.phase)
        if k == EVENT.REORGANIZED and prev_kind == EVENT.LEADER_ORDER:
            st = None  # Stalin's Reorganize executed at once (SoE 9.0, L6), not the Reorganize group of 7.5
        prev_kind = k
        if st is not None and st >= stage:
            stage = st
        # battles: one unit from its first record to the next battle or the next stage
        starts_battle = k in (EVENT.DEFEND, EVENT.BATTLE_DECK, EVENT.BATTLE_CARD, EVENT.COMBAT_CARD, EVENT.BATTLE_PREP,
                              EVENT.BATTLE)
        if stage != ST_BATTLES or k in (EVENT.BATTLE_CHOSEN, EVENT.LEADER_ORDER):
            # a BATTLE_CHOSEN record (SoE 7.4) comes before the battle it chose, a leader order (9.0) of the
            # window after the battles after the last one: each is told on its own, not as part of a battle
            battle = None
        elif starts_battle and (battle is None or battle.area != int(e["area"]) or battle_fought):
            a = int(e["area"])
            defender_side = _defender_of(e)
            battle = BattleStory(cur.round, cur.phase, a, 1 - defender_side, defender_side,
                                 attackers=tracker.in_area(a, 1 - defender_side),
                                 defenders=tracker.in_area(a, defender_side),
                                 garrison=bool(tracker.garrison[a] == defender_side))
            battle_fought = False
            prep_rows.append(np.zeros(2 * n_pairs + 2, dtype=np.int64))
            prep_pairs.append(0)
            battles.append(battle)
            cur.battles.append(battle)
            cur.stages.setdefault(ST_BATTLES, []).append(battle)
        if battle is not None and stage == ST_BATTLES:
            battle.events.append(item)
            if _battle_record(battle, e, n_pairs, prep_rows[-1]):
                prep_pairs[-1] += 1
            if k == EVENT.BATTLE:
                battle_fought = True
        elif k == EVENT.RECON:
            a = int(e["area"])
            cur.stages.setdefault(stage, []).append(
                ReconStory(int(e["side"]), a, int(e["value"]), tracker.in_area(a, 1 - int(e["side"]))))
        else:
            cur.stages.setdefault(stage, []).append(item)
        mv = tracker.apply(e)
        if mv is not None:
            cur.moves.append(mv)
    close_positions()

    crules = setup.cr
    for b, row, pairs in zip(battles, prep_rows, prep_pairs):
        if pairs >= n_pairs + 1:  # the whole row and the flags were recorded (log_detail)
            b.prep = row[:bnb.N_PREP].copy()
            flags = int(row[2 * n_pairs])
            b.garrison, b.defend, b.fortified = bool(flags & 1), bool(flags & 2), bool(flags & 4)
            b.support_directions = int(row[2 * n_pairs + 1])
            b.fought = bool(b.prep[bnb.P_FOUGHT])
        _odds(b, crules)
    return Story(setup=setup, names=names, result=result, phases=phases, battles=battles,
                 vp_start=int(state0.vp[0]), vp_changes=vp_changes, detail=detail, tracking_mismatches=mismatches,
                 vp_items=vp_items)


def _defender_of(e) -> int:
    """The defending side of the battle whose first record is ``e``."""
    k = int(e["kind"])
    if k in (EVENT.BATTLE_PREP, EVENT.BATTLE):
        return 1 - int(e["side"])  # side = attacker
    if k == EVENT.DEFEND:
        return int(e["side"])
    # the first card decision of a battle is the attacker's (SoE 7.41.1-2)
    return 1 - int(e["side"])


def _battle_record(b: BattleStory, e, n_pairs: int, prep_row: np.ndarray) -> bool:
    """File one record of a battle into ``b``; True when it was a pair of the prepared row."""
    k = int(e["kind"])
    s = int(e["side"])
    if k == EVENT.DEFEND:
        b.defend = True
    elif k == EVENT.BATTLE_DECK:
        counts, _ = b.decks.get(s, ({}, False))
        counts[int(e["value"])] = int(e["value2"])
        b.decks[s] = (counts, bool(e["block"]))
    elif k == EVENT.BATTLE_CARD:
        b.battle_cards[s] = int(e["value"])
    elif k == EVENT.COMBAT_CARD:
        b.combat_cards[s] = (int(e["block"]), int(e["value"]), int(e["value2"]))
    elif k == EVENT.BATTLE_PREP:
        j = int(e["block"])
        if 0 <= j <= n_pairs:
            prep_row[2 * j] = int(e["value"])
            prep_row[2 * j + 1] = int(e["value2"])
            return True
    elif k == EVENT.BATTLE:
        b.attacker = s
        b.defender = 1 - s
        b.winner = int(e["value"])
        b.fought = bool(e["value2"])
    elif k == EVENT.BATTLE_LOSSES:
        b.great_victory = bool(e["block"])
        b.attacker_losses = int(e["value"])
        b.defender_losses = int(e["value2"])
    return False


def front_name(f: int) -> str:
    """``"north"`` / ``"south"`` for a front index (SoE 1.1)."""
    try:
        return Front(int(f)).slug
    except ValueError:
        return f"front {f}"
