"""The narrated game report (Markdown) of a :class:`~soe_sim.playtest.story.Story`.

One section per round and phase (SoE 5.0), each split by stage in the order of play: arrivals, cards
played and why (orders, cubes, an event, a reaction), orders placed, orders executed (moves, Recon
results, Withdraw), battles (both forces, combat values, cards, the exact odds before the draw, the
result, losses, retreats), reorganization and rail, supply and stacking losses, control and VP. The
narrator sees everything, hidden blocks included. The text depends only on the game, so the same
seed gives the same report.
"""
from __future__ import annotations

import re

from soe_sim.engine.cards.nb import (
    USE_COMBAT_BLIND,
    USE_COMBAT_HAND,
    USE_CUBES,
    USE_EVENT,
    USE_ORDERS,
    USE_REACTION,
)
from soe_sim.engine.game import CAUSE, EVENT, AbortReason, Cause
from soe_sim.engine.game.nb import LEADER_CAPTURED, LEADER_KILLED
from soe_sim.engine.leaders.nb import LW_AFTER_BATTLES, LW_BEFORE_BATTLES, LW_BEFORE_FORCED, LW_BEFORE_MOVES
from soe_sim.engine.orders import OrderType
from soe_sim.engine.orders.nb import REMOVED, WD_BLOCKED, WD_NONE, WD_OK
from soe_sim.engine.state import STATUS
from soe_sim.playtest.story import (
    SIDE_NAMES,
    STAGES,
    ST_BATTLES,
    ST_PLACED,
    ST_SETUP,
    BattleStory,
    ReconStory,
    VPStory,
    record_kind,
    Story,
    front_name,
)

__all__ = ["narrate", "battle_line", "flank_penalty", "order_name", "signed_vp", "card_effect"]

_WINDOWS = {LW_BEFORE_FORCED: "before the forced marches", LW_BEFORE_MOVES: "before the moves",
            LW_BEFORE_BATTLES: "before the battles", LW_AFTER_BATTLES: "after the battles"}
_GROUPS = {1: "forced marches", 2: "Recon", 3: "moves", 4: "Withdraw", 5: "Reorganize", 6: "Rail Transport"}
# every cause has a text: an enum name (great_victory) would show raw in the report
_CAUSES = {CAUSE.BATTLE: "battle", CAUSE.SUPPLY: "out of supply", CAUSE.STACKING: "overstacked",
           CAUSE.CONTROL: "control", CAUSE.OBJECTIVE: "objective", CAUSE.REINFORCEMENT: "reinforcement",
           CAUSE.ORDERS: "orders", CAUSE.EVENT: "card event", CAUSE.GREAT_VICTORY: "great victory, SoE 7.44",
           CAUSE.ENCIRCLEMENT: "eliminated for want of a retreat, SoE 7.42",
           CAUSE.LEADER_KILLED: "leader killed, SoE 9.0", CAUSE.LEADER_CAPTURED: "leader captured, SoE 9.0",
           CAUSE.INTERNMENT: "interned", CAUSE.NONE: ""}


def order_name(t: int) -> str:
    """``"Forced March To"`` for an order type code (SoE 7.2)."""
    try:
        return OrderType(int(t)).name.replace("_", " ").title()
    except ValueError:
        return f"order {t}"


def signed_vp(v: int) -> str:
    """The signed VP track in words: ``"+2 (Polish)"``, ``"−3 (Soviet)"``."""
    v = int(v)
    if v > 0:
        return f"+{v} (Polish)"
    if v < 0:
        return f"−{-v} (Soviet)"
    return "0"


def _side(s: int) -> str:
    return SIDE_NAMES[s] if s in (0, 1) else "nobody"


def _count(k: int, word: str) -> str:
    """``"1 block"``, ``"2 blocks"``."""
    return f"{k} {word}{'s' if k != 1 else ''}"


def _vp_gains(gained) -> str:
    """The VP each side gained: ``"Soviet +2 VP"``, ``"Polish +1 VP, Soviet +2 VP"`` (awards, not the
    track's moves: the track has no 0 space)."""
    return ", ".join(f"{SIDE_NAMES[s]} +{g} VP" for s, g in enumerate(gained) if g) or "no VP"


def _pct(p: float) -> str:
    return f"{100 * p:.1f} %"


def _cause(c: int) -> str:
    text = _CAUSES.get(int(c))
    if text is None:
        try:
            text = Cause(int(c)).name.lower()
        except ValueError:
            text = f"cause {c}"
    return f" ({text})" if text else ""


def _card_use(story: Story, e) -> str:
    n = story.names
    s, front, card, use, extra = int(e["side"]), int(e["area"]), int(e["value"]), int(e["value2"]), int(e["block"])
    row = n.card_row(s, card)
    head = f"{_side(s)} plays {n.card(s, card)}"
    where = f" on the {front_name(front)} front" if front >= 0 else ""
    if use == USE_ORDERS:
        base = int(getattr(story.setup.orules, "base_orders_per_front", 0))
        return (f"{head}{where} for its orders: +{extra} order{'s' if extra != 1 else ''}"
                f" ({base + extra} on this front with the base order{'s' if base != 1 else ''})")
    if use == USE_CUBES:
        if row is None:
            return f"{head}{where} for reinforcement cubes"
        parts = [f"{int(getattr(row, c + '_cubes'))} {c}" for c in ("infantry", "cavalry", "allied")
                 if int(getattr(row, c + "_cubes"))]
        return f"{head}{where} for reinforcement cubes ({', '.join(parts) or 'none'})"
    if use == USE_EVENT:
        return f"{head}{where} for its event"
    if use == USE_REACTION:
        return f"{head} as a reaction"
    return f"{head}{where}"


def card_effect(text, limit: int = 240) -> str:
    """The effect of a card's text without its kind prefix and the removal note, at most ``limit``
    characters (cut at a sentence end)."""
    t = re.sub(r"^(Historical event|Reaction|Battle card)[^.]*\.\s*", "", str(text or "").strip())
    t = t.split("*Remove")[0].strip()
    if len(t) > limit:
        cut = t[:limit].rfind(". ")
        t = t[:cut + 1] if cut > 0 else t[:limit].rstrip() + "…"
    return t.rstrip(".")


def _event_text(story: Story, e, where: int | None = None) -> str | None:
    """One line for a record, or None for records told elsewhere (or not worth telling); ``where``
    replaces the area of a ``block_loss`` (a battle's loss is logged where the block retreated to)."""
    n = story.names
    k = int(e["kind"])
    s, a, a2, b = int(e["side"]), int(e["area"]), int(e["area2"]), int(e["block"])
    v, v2 = int(e["value"]), int(e["value2"])
    if k == EVENT.GAME_START:
        return f"The game starts with the VP track at {signed_vp(v)}."
    if k == EVENT.CARDS_DRAWN:
        tail = f", must discard {v2}" if v2 > 0 else ""
        return f"{_side(s)} draws {v} card{'s' if v != 1 else ''}{tail}."
    if k == EVENT.CARD_DISCARDED:
        return f"{_side(s)} discards {n.card(s, v)}."
    if k == EVENT.CARD_PLAYED:
        return _card_use(story, e) + "."
    if k == EVENT.CARD_EVENT:
        row = n.card_row(s, v)
        what = f" — {card_effect(row.text)}" if row is not None and card_effect(row.text) else ""
        target = []
        if a >= 0:
            target.append(f"area {n.area(a)}")
        if b >= 0:
            target.append(n.block(b))
        return f"Event of {_side(s)} {n.card(s, v)}{what}" + (f" ({', '.join(target)})" if target else "") + "."
    if k == EVENT.ARRIVAL_CHECK:
        return (f"{_side(s)} arrival check: {n.card(s, v) if v > 0 else 'no card'} (modifier {v2}) against "
                f"{a2}: {'met' if b else 'not met'}.")
    if k == EVENT.REINFORCEMENT_ARRIVED:
        return f"{_side(s)} reinforcement {n.block(b, v)} arrives at {n.area(a)}."
    if k == EVENT.REINFORCEMENT_DELAYED:
        return f"{_side(s)} reinforcement {n.block(b)} is delayed (due at {n.area(a)})."
    if k == EVENT.FIRST_PLAYER:
        if v == 0:
            return f"{_side(s)} places the first order on the {front_name(a)} front."
        return f"{_side(s)} executes {_GROUPS.get(v, f'group {v}')} first on the {front_name(a)} front."
    if k == EVENT.MOVE:
        how = order_name(v)
        detach = f", leaving a {v2}-SP brigade behind" if v2 > 0 else ""
        return f"{_side(s)} {n.block(b)} moves {n.area(a)} → {n.area(a2)} ({how}){detach}."
    if k == EVENT.RAIL:
        return f"{_side(s)} {n.block(b)} goes by rail {n.area(a)} → {n.area(a2)}."
    if k == EVENT.PINNED:
        return f"{_side(s)} {n.block(b)} is pinned at {n.area(a)} (SoE 7.32)."
    if k == EVENT.LEADER_ORDER:
        window = _WINDOWS.get(v2, f"window {v2}")
        return (f"{_side(s)} leader {n.block(b)} at {n.area(a2)} gives a {order_name(v)} order at {n.area(a)} "
                f"({window}; SoE 9.0).")
    if k == EVENT.LEADER_LOST:
        fate = {LEADER_KILLED: "is killed", LEADER_CAPTURED: "is captured"}.get(v, "is lost")
        return f"{_side(s)} leader {n.block(b)} {fate} at {n.area(a)}{_cause(v2)} (SoE 9.0)."
    if k == EVENT.BATTLE_CHOSEN:
        return (f"{_side(s)} (initiative) chooses the battle of {n.area(a)} to go first among {_count(v2, 'battle')} "
                f"of {_count(v, 'block')} (SoE 7.4).")
    if k == EVENT.ADVANCE:
        return f"{_side(s)} {n.block(b)} goes back {n.area(a)} → {n.area(a2)} after the battle (SoE 7.43)."
    if k == EVENT.RIVALRY:
        return f"{n.area(a)}'s cubes go to the {_side(s)} commander of the {front_name(v)} front (SoE 10.2)."
    if k == EVENT.ORDER_CHOSEN:
        return None  # the side's choice of its next order (7.3, G8) shows in the order of the moves that follow
    if k == EVENT.ORDER_DONE:
        if v2 == REMOVED:
            return f"{_side(s)} {order_name(v)} order at {n.area(a)} is not carried out (marker returned)."
        return None
    if k == EVENT.RECON:
        return f"{_side(s)} Recon at {n.area(a)}: {v} enemy block{'s' if v != 1 else ''} revealed."
    if k == EVENT.WITHDRAW:
        if v == WD_OK:
            return f"{_side(s)} withdraws {v2} block{'s' if v2 != 1 else ''} from {n.area(a)} (SoE 7.2)."
        if v == WD_BLOCKED:
            return (f"{_side(s)} cannot withdraw from {n.area(a)}: no way out, the blocks fight and lose "
                    f"1 SP more (SoE 7.2).")
        if v == WD_NONE:
            return f"{_side(s)} Withdraw order at {n.area(a)}: no enemy to withdraw from."
        return f"{_side(s)} Withdraw at {n.area(a)} (mode {v})."
    if k == EVENT.REORGANIZED:
        return f"{_side(s)} {n.block(b)} reorganizes at {n.area(a)}: +{v} SP."
    if k == EVENT.BLOCK_LOSS:
        if where is not None:
            a = where
        return f"{_side(s)} {n.block(b)} loses {v} SP at {n.area(a)}{_cause(v2)}."
    if k == EVENT.BLOCK_REMOVED:
        fate = {STATUS.DESTROYED_TO_POOL: "is destroyed (back to the force pool)",
                STATUS.ELIMINATED_PERMANENT: "is eliminated permanently",
                STATUS.FORCE_POOL: "returns to the force pool"}.get(v, "leaves the map")
        return f"{_side(s)} {n.block(b)} {fate} at {n.area(a)}{_cause(v2)}."
    if k == EVENT.BLOCK_MOVED:
        verb = "retreats" if v2 == CAUSE.BATTLE else ("is pulled back" if v2 == CAUSE.STACKING else "moves")
        return f"{_side(s)} {n.block(b)} {verb} {n.area(a)} → {n.area(a2)}{_cause(v2)}."
    if k == EVENT.BLOCK_PLACED:
        if v2 == CAUSE.ORDERS:
            return f"{_side(s)} {n.block(b, v)} is detached at {n.area(a)} (SoE 2.2)."
        return f"{_side(s)} {n.block(b, v)} is placed at {n.area(a)}{_cause(v2)}."
    if k == EVENT.GARRISON_REMOVED:
        return f"{_side(s)} garrison at {n.area(a)} is removed{_cause(v2)}."
    if k == EVENT.GARRISON_PLACED:
        return f"{_side(s)} garrison placed at {n.area(a)}{_cause(v2)}."
    if k == EVENT.CONTROL:
        worth = f" ({n.area_vp[a]} VP)" if n.area_vp[a] > 0 else ""
        if s < 0:
            return f"{n.area(a)}{worth} is no longer controlled by {_side(v)}."
        return f"{_side(s)} takes control of {n.area(a)}{worth}" + (f" from {_side(v)}." if v >= 0 else ".")
    if k == EVENT.INITIATIVE:
        return f"Initiative on the {front_name(a)} front: {_side(s)}, level {v}."
    if k == EVENT.COMBINE:
        return f"{_side(s)} {n.block(b)} absorbs {n.block(v)} at {n.area(a)}: now {v2} SP (SoE 8.2)."
    if k == EVENT.STRENGTHEN:
        pool = f" with cubes of {n.area(v2)}" if v2 >= 0 else " with saved cubes"
        return f"{_side(s)} {n.block(b)} at {n.area(a)} is strengthened to {v} SP{pool}."
    if k == EVENT.BUILD:
        pool = f" with cubes of {n.area(v2)}" if v2 >= 0 else " with saved cubes"
        return f"{_side(s)} builds {n.block(b, v)} at {n.area(a)}{pool}."
    if k == EVENT.CUBES_DROPPED:
        if a < 0:  # EatS X: saved cubes over the cap of one front's pool (V8)
            return (f"{_side(s)} loses {v} saved cube{'s' if v != 1 else ''} on the {front_name(a2)} front "
                    f"(EatS X: at most the cap per front).")
        return f"{_side(s)} loses {v} unspent cube{'s' if v != 1 else ''} of {n.area(a)}."
    if k == EVENT.OBJECTIVE:
        return (f"Objective {v2 + 1} of the {_side(s)}: {'achieved' if b else 'not achieved'}"
                + (f", {v} VP." if v else "."))
    if k == EVENT.IMMEDIATE_VICTORY:
        return f"Immediate victory for the {_side(s)} (condition {v + 1} of the scenario)."
    if k == EVENT.GAME_END:
        return None  # the result line closes the report
    if k == EVENT.ABORT:
        try:
            why = AbortReason(v).name.lower()
        except ValueError:
            why = str(v)
        return f"The game is aborted: a hard cap was hit ({why})."
    if k == EVENT.PHASE_SKIPPED:
        return "Phase skipped: the scenario has no Reinforcement Phase."
    if k in (EVENT.ROUND_START, EVENT.PHASE_START, EVENT.DEFEND, EVENT.BATTLE_CARD, EVENT.COMBAT_CARD,
             EVENT.BATTLE, EVENT.BATTLE_LOSSES):
        return None
    return None


def _item_text(story: Story, item, where: int | None = None) -> str | None:
    if isinstance(item, VPStory):
        n = story.names
        at = f" at {n.area(item.area)}" if item.area >= 0 else ""
        # the award, not the track's move: crossing 0 moves the track one space more (SoE 7.8, E10)
        skip = "; the track has no 0 space" if item.crosses_zero else ""
        return (f"VP track {signed_vp(item.before)} → {signed_vp(item.after)}: {_side(item.side)} gains "
                f"{abs(item.award)} VP{at}{_cause(item.cause)}{skip}.")
    if isinstance(item, ReconStory):
        n = story.names
        k = item.revealed
        text = f"{_side(item.side)} Recon at {n.area(item.area)}: {k} enemy block{'s' if k != 1 else ''} revealed"
        if item.enemies:
            text += "; there: " + ", ".join(n.block(b, sp) for b, sp in item.enemies)
        return text + "."
    return _event_text(story, item, where)


def _force(story: Story, blocks: list) -> str:
    n = story.names
    sp = sum(s for _, s in blocks)
    k = len(blocks)
    listing = ", ".join(n.block(b, s) for b, s in blocks)
    return f"{k} block{'s' if k != 1 else ''}, {sp} SP" + (f" ({listing})" if listing else "")


def _after_draw(story: Story) -> bool:
    """EatS IX.3 item 2 (docs/rules.md V13): each side chose its combat card after seeing its draw."""
    cr = getattr(getattr(story, "setup", None), "cr", None)
    return bool(getattr(cr, "choose_after_draw", False))


def _combat_card(story: Story, side: int, card: tuple | None) -> str:
    if card is None:
        return f"{_side(side)}: no combat card"
    use, c, mod = card
    if _after_draw(story):  # EatS IX.3 item 2: every side drew; a hand card leaves its draw unused (V13)
        how = ("from the hand (its drawn card unused)" if use == USE_COMBAT_HAND
               else ("drawn and kept" if use == USE_COMBAT_BLIND else ""))
    else:
        how = "from the hand" if use == USE_COMBAT_HAND else ("drawn blind" if use == USE_COMBAT_BLIND else "")
    return f"{_side(side)} {story.names.card(side, c)} {how} ({mod:+d})"


def flank_penalty(story: Story, bt: BattleStory) -> tuple[int, int, int] | None:
    """``(flank attacks, flank attacks left after negation, CV off the defender)`` of a battle (SoE 7.34;
    the penalty is ``combat.flank_penalty`` per flank attack left), None without its prepared row."""
    if bt.prep is None:
        return None
    from soe_sim.battle import nb as bnb

    attacks, penalized = int(bt.prep[bnb.P_FLANK_ATTACKS]), int(bt.prep[bnb.P_FLANK_PENALIZED])
    return attacks, penalized, penalized * int(story.setup.cr.flank_penalty)


def battle_line(story: Story, bt: BattleStory) -> str:
    """The headline of a battle: forces, combat values, exact odds before the draw, result."""
    n = story.names
    att, dfn = _side(bt.attacker), _side(bt.defender)
    extras = []
    if bt.garrison:
        extras.append("+garrison")
    if bt.fortified:
        extras.append("+fort")
    if bt.defend:
        extras.append("+Defend")
    if bt.support_directions:
        extras.append(f"+{bt.support_directions} supporting direction{'s' if bt.support_directions > 1 else ''}")
    flank = flank_penalty(story, bt)
    if flank is not None and flank[0]:
        attacks, penalized, penalty = flank
        negated = f", {attacks - penalized} negated" if penalized < attacks else ""
        extras.append(f"{_count(attacks, 'flank attack')}{negated}: −{penalty} CV" if penalty
                      else f"{_count(attacks, 'flank attack')}, negated")
    ext = f" ({', '.join(extras)})" if extras else ""
    if bt.attacker_cv is not None:
        cv_a, cv_d = f" CV {bt.attacker_cv}", f" CV {bt.defender_cv}"
    else:
        cv_a = cv_d = ""
    n_att = len(bt.attackers)
    n_def = len(bt.defenders)
    head = (f"**Battle of {n.area(bt.area)}**: {att} attack {n_att} block{'s' if n_att != 1 else ''}{cv_a} vs "
            f"{dfn} {n_def} block{'s' if n_def != 1 else ''}{cv_d}{ext}")
    if bt.p_attacker_win is not None:
        p = bt.p_attacker_win
        odds = f"{att} win {_pct(p)} exact" if p >= 0.5 else f"{att} win {_pct(p)} exact ({dfn} {_pct(1 - p)})"
    else:
        odds = "odds not recorded"
    if not bt.fought:
        result = f"no battle: the {dfn} blocks withdrew"
    else:
        won = _side(bt.winner)
        result = (f"{won} win{' a great victory' if bt.great_victory else ''}; {att} lose {bt.attacker_losses} SP, "
                  f"{dfn} lose {bt.defender_losses} SP")
        if bt.winner == bt.defender and bt.attacker_losses == bt.defender_losses:
            result += " (a draw is lost by the attacker, SoE 7.41.6)"
        retreats = sorted({int(e["area2"]) for e in bt.events
                           if record_kind(e) == EVENT.BLOCK_MOVED and int(e["value2"]) == CAUSE.BATTLE})
        if retreats:
            loser = _side(bt.attacker if bt.winner == bt.defender else bt.defender)
            result += f", {loser} retreat to {', '.join(n.area(a) for a in retreats)}"
    return f"{head}; {odds}; result: {result}."


def _battle_details(story: Story, bt: BattleStory) -> list[str]:
    n = story.names
    lines = [f"{_side(bt.attacker)}: {_force(story, bt.attackers)}; "
             f"{_side(bt.defender)}: {_force(story, bt.defenders)}"
             + (" + garrison" if bt.garrison else "") + "."]
    cards = []
    for s in (bt.attacker, bt.defender):
        if s in bt.battle_cards:
            cards.append(f"{_side(s)} battle {n.card(s, bt.battle_cards[s])}")
    cards += [_combat_card(story, s, bt.combat_cards.get(s)) for s in (bt.attacker, bt.defender)]
    lines.append("Cards: " + "; ".join(cards) + ".")
    if bt.prep is not None:
        from soe_sim.battle import nb as bnb

        draws = []
        for s in (bt.attacker, bt.defender):
            use = bt.combat_cards.get(s, (0, 0, 0))[0]
            if use != USE_COMBAT_HAND:
                counts, from_discard = bt.decks.get(s, ({}, False))
                total = sum(counts.values())
                comp = ", ".join(f"{v:+d}×{c}" for v, c in sorted(counts.items()))
                pile = "reshuffled discard pile" if from_discard else "draw pile"
                draws.append(f"{_side(s)} {pile} of {total} ({comp})" if total else f"{_side(s)} piles empty")
        base = (f"Before the cards: CV {int(bt.prep[bnb.P_ATT_BASE_CV])} vs {int(bt.prep[bnb.P_DEF_BASE_CV])}. "
                f"Exact odds before the draw: {_side(bt.attacker)} win {_pct(bt.p_attacker_win)}, great victory "
                f"{_pct(bt.p_great_victory)}, expected losses {bt.expected_attacker_losses:.2f} / "
                f"{bt.expected_defender_losses:.2f} SP")
        if _after_draw(story):  # EatS IX.3 item 2 (V13): the choices were made after the draws
            base += (" — each side's recorded choice taken as fixed before the draw; under EatS IX.3 each side "
                     "chose after seeing its drawn card")
        none = " (both cards from the hand)." if _after_draw(story) else " (no blind draw)."
        lines.append(base + (f" (blind draws from: {'; '.join(draws)})." if draws else none))
        if bt.consistent is False:
            lines.append("Note: the recorded battle row with these cards gives another winner than the game "
                         "(please report this).")
    told = [e for e in bt.events if isinstance(e, VPStory) or record_kind(e) in (
        EVENT.BLOCK_LOSS, EVENT.BLOCK_REMOVED, EVENT.BLOCK_MOVED, EVENT.BLOCK_PLACED, EVENT.GARRISON_REMOVED,
        EVENT.GARRISON_PLACED, EVENT.INITIATIVE, EVENT.CARD_PLAYED, EVENT.CARD_EVENT, EVENT.CARDS_DRAWN,
        EVENT.CONTROL, EVENT.LEADER_LOST, EVENT.ADVANCE)]
    i = 0
    while i < len(told):
        e, nxt = told[i], (told[i + 1] if i + 1 < len(told) else None)
        # The engine logs a block's changes over the battle as a move, then the SP lost at the area it
        # ended in (log_diff_nb): a loss after a retreat is told first, at the area of the battle.
        if (nxt is not None and record_kind(e) == EVENT.BLOCK_MOVED and record_kind(nxt) == EVENT.BLOCK_LOSS
                and int(nxt["block"]) == int(e["block"]) and int(nxt["area"]) == int(e["area2"])):
            pair = [(nxt, int(e["area"])), (e, None)]
            i += 2
        else:
            pair = [(e, None)]
            i += 1
        for item, where in pair:
            t = _item_text(story, item, where)
            if t:
                lines.append(t)
    return lines


def _orders_placed(story: Story, items: list) -> list[str]:
    """Orders placed, one line per side and front, in placement order (other records as they come)."""
    n = story.names
    out: list[str] = []
    groups: dict = {}
    order: list = []
    for e in items:
        if record_kind(e) == EVENT.ORDER_PLACED:
            key = (int(e["side"]), int(e["block"]))
            if key not in groups:
                groups[key] = []
                order.append(key)
            groups[key].append(f"{order_name(int(e['value']))} {n.area(int(e['area']))}")
        else:
            t = _item_text(story, e)
            if t:
                out.append(t)
    for s, f in order:
        out.append(f"{_side(s)} ({front_name(f)}): " + ", ".join(groups[(s, f)]) + ".")
    return out


def narrate(story: Story, *, title: str | None = None, header: list[str] | None = None,
            snapshot_dir: str | None = "snapshots") -> str:
    """The Markdown report of a game.

    Parameters
    ----------
    story : Story
    title : str, optional
        First heading (default: ``"<ruleset name> playtest — <scenario name>"``, e.g. "The Eagle and the
        Star playtest — Tutorial" under EatS).
    header : list of str, optional
        Bullet lines under the title (seed, policies, replay command …).
    snapshot_dir : str or None
        Relative directory of the phase snapshots to link (``<slug>.png``); None: no links.
    """
    res = story.result
    sc = story.setup.scenario
    game_name = getattr(getattr(story.setup, "rules", None), "name", None) or "Strike of the Eagle"
    lines = [f"# {title or f'{game_name} playtest — {sc.name}'}", ""]
    for h in header or []:
        lines.append(f"- {h}")
    n_battles = len(story.battles)
    if res.winner:
        verdict = f"**{res.winner.title()} win**"
    elif res.outcome == "aborted":
        verdict = "**aborted**"
    else:
        verdict = "**draw**"
    how = {"finished": "at the end of the scenario", "immediate_victory": "by immediate victory",
           "aborted": f"({res.abort_reason})"}.get(res.outcome, res.outcome)
    lines.append(f"- Result: {verdict} {how}; VP track {signed_vp(res.vp)}; {_count(res.rounds, 'round')} "
                 f"played; {_count(n_battles, 'battle')}.")
    lines += ["", "The narrator sees everything, hidden blocks included. The VP track is signed (+ Polish, "
              "− Soviet; SoE 7.8) and has no 0 space: crossing 0 moves it one more than the VP gained "
              "(Polish +1, the Soviets gain 2 → −2 (Soviet)). Block strengths are in brackets (c = cavalry). "
              "*Exact odds before the draw*: P(attacker wins) over the blind combat-card draws, from the battle "
              "as it stood, the cards as chosen and the piles at that moment (SoE 7.41).", ""]
    last_round = None
    for ph in story.phases:
        if ph.round >= 0 and ph.round != last_round:
            lines += [f"## Round {ph.round}", ""]
            last_round = ph.round
        lines += [f"### {ph.title}", ""]
        for st in sorted(ph.stages):
            items = ph.stages[st]
            if st == ST_BATTLES:
                body = []
                for it in items:
                    if isinstance(it, BattleStory):
                        body.append(f"- {battle_line(story, it)}")
                        body += [f"  - {t}" for t in _battle_details(story, it)]
                    else:
                        t = _item_text(story, it)
                        if t:
                            body.append(f"- {t}")
            elif st == ST_PLACED:
                body = [f"- {t}" for t in _orders_placed(story, items)]
            else:
                body = [f"- {t}" for t in (_item_text(story, e) for e in items) if t]
            if body:
                lines += ([f"**{STAGES[st]}**", ""] if st != ST_SETUP else []) + body + [""]
        on_map = {0: [0, 0], 1: [0, 0]}
        for _b, s, _a, sp in ph.blocks:
            on_map[s][0] += 1
            on_map[s][1] += sp
        forces = (f"on the map Polish {_count(on_map[0][0], 'block')} / {on_map[0][1]} SP, "
                  f"Soviet {_count(on_map[1][0], 'block')} / {on_map[1][1]} SP")
        if ph.round >= 0:
            delta = f" (this phase: {_vp_gains(ph.vp_gained)})" if any(ph.vp_gained) else " (no change)"
            lines.append(f"*End of phase:* VP track {signed_vp(ph.vp_end)}{delta}; {forces}.")
        else:
            st0 = story.setup.state0
            ini = ", ".join(f"{front_name(f)} {_side(int(st0.initiative_side[f]))} (level "
                            f"{int(st0.initiative_level[f])})" for f in range(len(st0.initiative_side)))
            lines.append(f"*At the start:* VP track {signed_vp(story.vp_start)}; {forces}; initiative: {ini}.")
        lines.append("")
        if snapshot_dir is not None:
            lines += [f"![{ph.title}]({snapshot_dir}/{ph.slug}.png)", ""]
    # the awards, not the track's moves, add up: the track skips 0 (SoE 7.8, E10)
    gained = [sum(abs(v.award) for v in story.vp_items if (v.award > 0) == (s == 0)) for s in (0, 1)]
    net = gained[0] - gained[1]
    net_text = f"Polish +{net} VP" if net > 0 else (f"Soviet +{-net} VP" if net < 0 else "0 VP")
    skip = ("; the track has no 0 space, so crossing it moved the track one more"
            if any(v.crosses_zero for v in story.vp_items) else "")
    lines += ["## Result", "",
              f"- {verdict} {how}.",
              f"- VP track: start {signed_vp(story.vp_start)}, {_count(len(story.vp_items), 'VP award')} "
              f"summing to {net_text} (Polish {gained[0]}, Soviet {gained[1]}), final {signed_vp(res.vp)}{skip}.",
              f"- Battles: {n_battles}; won by the attacker: "
              f"{sum(1 for b in story.battles if b.fought and b.winner == b.attacker)}.", ""]
    if story.battles and any(b.p_attacker_win is not None for b in story.battles):
        lines += ["| # | phase | battle | attacker | P(attacker wins) | CV | winner | losses att / def |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for i, b in enumerate(story.battles, 1):
            p = "—" if b.p_attacker_win is None else _pct(b.p_attacker_win)
            cv = "—" if b.attacker_cv is None else f"{b.attacker_cv} vs {b.defender_cv}"
            win = _side(b.winner) if b.fought else "(withdrew)"
            lines.append(f"| {i} | {b.round}.{b.phase} | {story.names.area(b.area)} | {_side(b.attacker)} | {p} | "
                         f"{cv} | {win} | {b.attacker_losses} / {b.defender_losses} |")
        lines.append("")
    return "\n".join(lines)
