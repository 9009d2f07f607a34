"""A readable, plain-Python version of the Strike of the Eagle battle rules: the test oracle.

Written straight from the rulebook, deliberately unlike the kernels: it moves SP block by block,
enumerates every individual card of each deck, and uses no shortcuts. Constants come from the
rules file (as plain dict lookups), never from the kernels.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

from soe_sim.battle.spec import Arm, Battle, Withdraw


@dataclass
class NaiveOutcome:
    attacker_cv: int
    defender_cv: int
    attacker_losses: int
    defender_losses: int
    attacker_wins: bool
    great_victory: str  # "none" | "attacker" | "defender"
    initiative_holder: str
    initiative_level: int
    initiative_change: str  # gain | none | lose | flip
    attacker_destroyed: int
    defender_destroyed: int
    garrison_lost: bool


def chart(value: int, c: dict) -> int:
    """EatS IX.3 Battle Results Table."""
    losses = 0
    for lowest, result in zip(c["chart_min_value"], c["chart_losses"]):
        if value >= lowest:
            losses = result
    return losses


def take_losses(blocks: list[int], garrison: bool, hits: int) -> tuple[list[int], bool, int, int]:
    """SoE 7.41.5: garrison first, then the strongest block one SP at a time.

    Returns (remaining block SPs, garrison lost, SP actually removed from blocks, blocks destroyed).
    """
    blocks = list(blocks)
    garrison_lost = False
    removed = 0
    destroyed = 0
    for _ in range(hits):
        if garrison and not garrison_lost:
            garrison_lost = True
            continue
        if not blocks:
            break
        i = max(range(len(blocks)), key=lambda k: blocks[k])
        blocks[i] -= 1
        removed += 1
        if blocks[i] == 0:
            blocks.pop(i)
            destroyed += 1
    return blocks, garrison_lost, removed, destroyed


def resolve(battle: Battle, att_modifier: int, def_modifier: int, rules) -> NaiveOutcome:
    """Resolve one battle for the given combat-card values (hand bonus already included)."""
    c = rules["combat"]
    ini = rules["initiative"]
    attackers = [b for group in battle.attacker for b in group]
    att_card = battle.attacker_battle_card
    def_card = battle.defender_battle_card
    if att_card and att_card.cancel_enemy_battle_card:
        def_card_effective = None
    else:
        def_card_effective = def_card
    if def_card and def_card.cancel_enemy_battle_card:
        att_card_effective = None
    else:
        att_card_effective = att_card
    att_card, def_card = att_card_effective, def_card_effective

    def card_value(card, key):
        return getattr(card, key) if card is not None else 0

    holder = battle.initiative_holder
    level = battle.initiative_level
    defenders = list(battle.defender)
    withdraw_loss = 0
    withdraw_destroyed = 0
    if battle.withdraw == Withdraw.WITHDRAW:
        # SoE 7.2: withdraw without battle, 1 SP from one block unless cavalry vs infantry only.
        only_cavalry = all(b.arm != Arm.INFANTRY for b in defenders)
        only_infantry_attacks = all(b.arm == Arm.INFANTRY for b in attackers)
        if not (c["withdraw_cavalry_exempt_vs_infantry"] and only_cavalry and only_infantry_attacks):
            sps = [b.sp for b in defenders]
            remaining, _, removed, destroyed = take_losses(sps, False, c["withdraw_loss"])
            withdraw_loss, withdraw_destroyed = removed, destroyed
        defenders = []  # they left
        if not battle.garrison:
            return NaiveOutcome(0, 0, 0, withdraw_loss, True, "none", holder, level, "none",
                                0, withdraw_destroyed, False)

    def strength(b):
        return b.sp // c["half_strength_divisor"] if b.half_strength else b.sp

    att_cv = sum(strength(b) for b in attackers) + card_value(att_card, "combat_value") + att_modifier
    fortified = battle.fortified and not card_value(att_card, "cancel_fortification")
    flank_attacks = max(len(battle.attacker) - 1, 0)
    negations = battle.support_directions * c["support_negates_flank_per_direction"]
    negations += card_value(def_card, "negate_flank")
    if fortified:
        negations += c["fortification_negates_flank"]
    if battle.defend:
        negations += c["defend_negates_flank"]
    flank_penalty = max(flank_attacks - negations, 0) * c["flank_penalty"]
    def_cv = (sum(strength(b) for b in defenders) + (c["garrison_sp"] if battle.garrison else 0)
              + card_value(def_card, "combat_value") + def_modifier - flank_penalty)
    att_cv = max(att_cv, c["min_combat_value"])
    def_cv = max(def_cv, c["min_combat_value"])

    hits_on_defender = chart(att_cv, c)
    if fortified:
        hits_on_defender -= c["fortification_loss_reduction"]
    if battle.defend:
        hits_on_defender -= c["defend_loss_reduction"]
    hits_on_defender -= card_value(def_card, "own_loss_reduction")
    hits_on_defender = max(hits_on_defender, 0) + card_value(att_card, "enemy_extra_loss")
    if battle.withdraw == Withdraw.BLOCKED:
        hits_on_defender += c["withdraw_blocked_extra_loss"]
    hits_on_attacker = max(chart(def_cv, c) - card_value(att_card, "own_loss_reduction"), 0)
    hits_on_attacker += card_value(def_card, "enemy_extra_loss")

    garrison_sp = c["garrison_sp"] if battle.garrison else 0
    assert garrison_sp in (0, 1), "the oracle models a 1-SP garrison"
    _, garrison_lost, def_removed, def_destroyed = take_losses(
        [b.sp for b in defenders], battle.garrison, hits_on_defender)
    _, _, att_removed, att_destroyed = take_losses([b.sp for b in attackers], False, hits_on_attacker)

    def_for_outcome = def_removed + (1 if garrison_lost and c["garrison_loss_counts_for_outcome"] else 0)
    attacker_wins = def_for_outcome > att_removed  # SoE 7.41.6: ties go to the defender
    great = "none"
    if attacker_wins:
        real = def_removed + (1 if garrison_lost and c["garrison_loss_counts_for_great_victory"] else 0)
        if real >= c["great_victory_losses"]:
            great = "attacker"
    elif att_removed >= c["great_victory_losses"]:
        great = "defender"

    if holder == "attacker":
        holder_won = attacker_wins
        inflicted = def_removed + (1 if garrison_lost and c["garrison_loss_counts_for_initiative"] else 0)
    else:
        holder_won = not attacker_wins
        inflicted = att_removed
    change = "none"
    if holder_won:
        if inflicted > level and level < ini["max_level"]:
            level += 1
            change = "gain"
    elif level > ini["min_level"]:
        level -= 1
        change = "lose"
    else:
        holder = "defender" if holder == "attacker" else "attacker"
        change = "flip"
    return NaiveOutcome(att_cv, def_cv, att_removed, def_removed + (1 if garrison_lost else 0) + withdraw_loss,
                        attacker_wins, great, holder, level, change, att_destroyed,
                        def_destroyed + withdraw_destroyed, garrison_lost)


def card_list(deck) -> list[int]:
    """Every individual card's modifier in a deck composition."""
    return [v for v, n in deck.counts for _ in range(n)]


def exact_distribution(battle: Battle, att_deck, def_deck, rules) -> dict[tuple[int, int], Fraction]:
    """Joint loss distribution by enumerating every individual card pair, in exact fractions."""
    bonus = rules["combat"]["hand_card_bonus"]
    att_cards = [battle.attacker_card.hand + bonus] if battle.attacker_card.hand is not None else card_list(att_deck)
    def_cards = [battle.defender_card.hand + bonus] if battle.defender_card.hand is not None else card_list(def_deck)
    weight = Fraction(1, len(att_cards) * len(def_cards))
    dist: Counter = Counter()
    for a in att_cards:
        for d in def_cards:
            o = resolve(battle, a, d, rules)
            dist[(o.attacker_losses, o.defender_losses)] += weight
    return dict(dist)


def exact_outcomes(battle: Battle, att_deck, def_deck, rules) -> list[tuple[NaiveOutcome, Fraction]]:
    bonus = rules["combat"]["hand_card_bonus"]
    att_cards = [battle.attacker_card.hand + bonus] if battle.attacker_card.hand is not None else card_list(att_deck)
    def_cards = [battle.defender_card.hand + bonus] if battle.defender_card.hand is not None else card_list(def_deck)
    weight = Fraction(1, len(att_cards) * len(def_cards))
    return [(resolve(battle, a, d, rules), weight) for a in att_cards for d in def_cards]
