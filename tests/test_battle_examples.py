"""Every worked combat example in the seeds, resolved by the kernel and by the oracle.

SoE = Strike of the Eagle rulebook (seed 000); EatS = The Eagle and the Star (seed 002).
"""
from __future__ import annotations

import pytest

from soe_sim.battle import Battle, BattleCard, Withdraw, resolve
from tests import naive

HMG = BattleCard.from_effect("enemy_extra_loss:1", name="Heavy Machine Gun Fire")
ARTILLERY = BattleCard.from_effect("enemy_extra_loss:1", name="Artillery's Heavy Fire")


def both(battle, att_mod, def_mod, rules):
    """Resolve with the kernel and the oracle; they must agree field by field."""
    k = resolve(battle, att_mod, def_mod)
    o = naive.resolve(battle, att_mod, def_mod, rules)
    assert k["attacker_cv"] == o.attacker_cv
    assert k["defender_cv"] == o.defender_cv
    assert k["attacker_losses"] == o.attacker_losses
    assert k["defender_losses"] == o.defender_losses
    assert k["attacker_wins"] == o.attacker_wins
    assert k["great_victory"] == o.great_victory
    assert (k["initiative_holder"], k["initiative_level"]) == (o.initiative_holder, o.initiative_level)
    assert k["initiative_change"] == o.initiative_change
    return k


def test_soe_7_41_kalenkovichi(rules):
    """SoE 7.41: Pole draws 3 -> combat value 5 -> 1 loss; Soviet draws 1 -> 3 -> none.

    The Soviet (defender, initiative 1) loses and the initiative marker flips to the Poles.
    """
    battle = Battle.from_spec("2c", "2i", attacker_side="polish",
                              initiative_holder="defender", initiative_level=1)
    r = both(battle, 3, 1, rules)
    assert (r["attacker_cv"], r["defender_cv"]) == (5, 3)
    assert (r["attacker_losses"], r["defender_losses"]) == (0, 1)
    assert r["attacker_wins"]
    assert r["great_victory"] == "none"
    assert (r["initiative_holder"], r["initiative_level"], r["initiative_change"]) == ("attacker", 1, "flip")


def test_soe_7_41_zlobin(rules):
    """SoE 7.41 / 7.44 / 6.1: the Zlobin battle.

    Soviets attack with 4+4 from the east and 3 from the north (11 SP, two directions); the flank
    penalty is cancelled by Polish supporting block #6 (SoE 7.34); the attack from Zlobin's
    unfortified north voids the fortification (SoE 1.2). Soviet draws +2 -> 13 -> 4 losses.
    Poles: block 1 (3 SP) force-marched in, halved to 1, plus block #6 (4 SP) = 5; a hand card of
    4 counts 5 (SoE 7.41.2) -> 10 -> 3 losses. Losses 3 vs 4: the Soviets win a great victory and
    the Polish initiative (1) flips to the Soviets.
    """
    battle = Battle.from_spec("4i,4i/3i", "3if/4i", attacker_side="soviet", fortified=False,
                              defender_card="hand:4", initiative_holder="defender", initiative_level=1)
    assert battle.support_directions == 1
    r = both(battle, 2, 4 + 1, rules)
    assert (r["attacker_cv"], r["defender_cv"]) == (13, 10)
    assert (r["attacker_losses"], r["defender_losses"]) == (3, 4)
    assert r["attacker_wins"]
    assert r["great_victory"] == "attacker"
    assert (r["initiative_holder"], r["initiative_level"], r["initiative_change"]) == ("attacker", 1, "flip")
    assert r["defender_blocks_destroyed"] == 0  # "lowers one block to 1SP and the other to 2SP"


def test_soe_7_41_zlobin_had_the_poles_won(rules):
    """SoE 7.44 note: at initiative 1 the Poles needed at least 2 SP of losses to rise to 2."""
    battle = Battle.from_spec("1i", "4i,4i", attacker_side="soviet",
                              initiative_holder="defender", initiative_level=1)
    r = both(battle, 0, 0, rules)  # 8 -> 2 losses, but only 1 SP present: 1 real loss
    assert r["attacker_losses"] == 1 and not r["attacker_wins"]
    assert r["initiative_change"] == "none"
    battle = Battle.from_spec("2i", "4i,4i", attacker_side="soviet",
                              initiative_holder="defender", initiative_level=1)
    r = both(battle, 0, 0, rules)
    assert r["attacker_losses"] == 2 and r["initiative_change"] == "gain" and r["initiative_level"] == 2


def test_soe_7_44_real_losses_cap_great_victory(rules):
    """SoE 7.44: 4+ chart losses against a lone 2-SP block are only 2 real losses: no great victory."""
    battle = Battle.from_spec("4i,4i,4i", "2i")
    r = both(battle, 4, 0, rules)
    assert r["attacker_losses"] == 0 and r["defender_losses"] == 2
    assert r["attacker_wins"] and r["great_victory"] == "none"


def test_soe_6_1_initiative_example(rules):
    """SoE 6.1: Soviets at 2 need at least 3 SP of real losses to reach 3; any loss drops to 1."""
    win_small = Battle.from_spec("4i,4i", "4i,4i", initiative_holder="attacker", initiative_level=2)
    r = both(win_small, 4, 0, rules)  # 12 -> 3 losses vs 8 -> 2 losses
    assert r["attacker_wins"] and r["defender_losses"] == 3 and r["initiative_level"] == 3
    r = both(Battle.from_spec("4i,4i", "4i,2i", initiative_level=2), 0, 0, rules)  # 8 -> 2 vs 6 -> 1
    assert r["attacker_wins"] and r["defender_losses"] == 2 and r["initiative_change"] == "none"
    r = both(Battle.from_spec("1i", "4i,4i", initiative_level=2), 0, 0, rules)
    assert not r["attacker_wins"] and r["initiative_level"] == 1 and r["initiative_change"] == "lose"


def test_eats_ix3_example_7(rules):
    """EatS IX.3 Example 7: Poles 4+2 frontal and a quick-moved 4 (counts 2) on the flank, draw +2
    -> 10 -> 3 losses; the Soviet 4-SP division with Defend ignores one loss and the flank penalty,
    plays HMG fire (+1 loss to the Poles) and a hand card of 2 (counts 3) -> 7 -> 2 + 1 losses.
    Poles lose 3, Soviets 2: the Poles lose and drop one initiative point.
    """
    battle = Battle.from_spec("4i,2i/4if", "4i", attacker_side="polish", defend=True,
                              defender_card="hand:2", defender_battle_card=HMG,
                              initiative_holder="attacker", initiative_level=2)
    r = both(battle, 2, 2 + 1, rules)
    assert (r["attacker_cv"], r["defender_cv"]) == (10, 7)
    assert (r["attacker_losses"], r["defender_losses"]) == (3, 2)
    assert not r["attacker_wins"]
    assert (r["initiative_holder"], r["initiative_level"], r["initiative_change"]) == ("attacker", 1, "lose")


def test_eats_kiev_round_combat_1_berdychiv(rules):
    """EatS round example, combat 1: Polish cavalry (3 SP) +1 -> 4 -> 1 loss removes the lone
    Soviet garrison (1 SP +2 -> 3 -> no loss). The Poles win; 1 loss is not more than their
    initiative 1, so the initiative does not change.
    """
    battle = Battle.from_spec("3c", "", garrison=True, attacker_side="polish",
                              initiative_holder="attacker", initiative_level=1)
    r = both(battle, 1, 2, rules)
    assert (r["attacker_cv"], r["defender_cv"]) == (4, 3)
    assert (r["attacker_losses"], r["defender_losses"]) == (0, 1)
    assert r["garrison_lost"] and r["attacker_wins"]
    assert r["initiative_change"] == "none" and r["initiative_level"] == 1


def test_eats_kiev_round_combat_2_malin(rules):
    """EatS round example, combat 2: two quick-moved Soviet divisions (2+2 halved = 2) +2 -> 4 ->
    1 loss; the Polish cavalry (2 SP) +3 -> 5 -> 1 loss. A draw: the attacker loses (SoE 7.41.6)
    and the Polish initiative 1 flips to the Soviets.
    """
    battle = Battle.from_spec("2c", "2if,2if", attacker_side="polish",
                              initiative_holder="attacker", initiative_level=1)
    r = both(battle, 3, 2, rules)
    assert (r["attacker_cv"], r["defender_cv"]) == (5, 4)
    assert (r["attacker_losses"], r["defender_losses"]) == (1, 1)
    assert not r["attacker_wins"]
    assert (r["initiative_holder"], r["initiative_level"], r["initiative_change"]) == ("defender", 1, "flip")


def test_eats_kiev_round_combat_3_khmilnyk_withdraw(rules):
    """EatS round example, combat 3: the Soviet Withdraw order avoids the battle; the strongest
    block (UHA I, 3 SP) loses 1 SP and the Polish Artillery's Heavy Fire card has no effect.
    """
    battle = Battle.from_spec("3i,2i/3i", "2i,3i,2i", attacker_side="polish",
                              withdraw=Withdraw.WITHDRAW, attacker_battle_card=ARTILLERY)
    for att_mod, def_mod in [(0, 0), (4, 0), (0, 4)]:
        r = both(battle, att_mod, def_mod, rules)
        assert (r["attacker_losses"], r["defender_losses"]) == (0, 1)
        assert r["attacker_wins"] and r["initiative_change"] == "none"
        assert r["defender_blocks_destroyed"] == 0


@pytest.mark.parametrize("attacker, loss", [("3i", 0), ("3c", 1), ("2i/2c", 1)])
def test_soe_7_2_cavalry_withdraw_exemption(rules, attacker, loss):
    """SoE 7.2: cavalry withdraw free of the 1 SP penalty only when attacked by infantry alone."""
    battle = Battle.from_spec(attacker, "2c", withdraw=Withdraw.WITHDRAW)
    r = both(battle, 0, 0, rules)
    assert r["defender_losses"] == loss


def test_soe_7_2_withdraw_blocked_costs_one_more(rules):
    """SoE 7.2: blocks that cannot withdraw fight and lose 1 SP in addition to the combat result."""
    free = both(Battle.from_spec("4i", "4i"), 1, 1, rules)
    blocked = both(Battle.from_spec("4i", "4i", withdraw=Withdraw.BLOCKED), 1, 1, rules)
    assert blocked["defender_losses"] == free["defender_losses"] + 1


def test_soe_7_2_withdraw_leaves_garrison_to_fight(rules):
    """SoE 3.0 / 7.2: garrisons never move, so after a withdrawal the garrison fights alone."""
    battle = Battle.from_spec("4i", "3i", garrison=True, withdraw=Withdraw.WITHDRAW)
    r = both(battle, 0, 0, rules)  # 4 -> 1 loss kills the garrison; the garrison (1) inflicts none
    assert r["garrison_lost"] and r["defender_losses"] == 1 + 1  # garrison + withdrawal loss
    assert r["attacker_wins"]


def test_soe_7_34_flank_example(rules):
    """SoE 7.34: attacked along 3 roads -> two flank attacks, -4; with Defend only -2; the
    fortified, defended, supported example ignores up to 3 flank penalties and loses 2 less.
    """
    plain = both(Battle.from_spec("1i/1i/1i", "4i"), 0, 0, rules)
    assert plain["defender_cv"] == 0  # 4 - 4
    defended = both(Battle.from_spec("1i/1i/1i", "4i", defend=True), 0, 0, rules)
    assert defended["defender_cv"] == 2  # 4 - 2
    full = both(Battle.from_spec("4i,4i/4i/4i", "4i", defend=True, fortified=True, support=1), 4, 0, rules)
    assert full["defender_cv"] == 4  # no penalty left
    # 16 + 4 = 20 -> 5 losses, minus fortification and Defend = 3
    assert full["defender_losses"] == 3


def test_soe_1_2_fortification_only_if_all_attacks_fortified(rules):
    """SoE 1.2: fortified -> one less loss and one flank negated; otherwise nothing."""
    fort = both(Battle.from_spec("4i,4i", "4i", fortified=True), 2, 0, rules)
    open_ = both(Battle.from_spec("4i,4i", "4i", fortified=False), 2, 0, rules)
    assert open_["defender_losses"] - fort["defender_losses"] == 1


def test_soe_7_2_reorganizing_and_forced_march_half_strength(rules):
    """SoE 7.2: forced-marched and reorganizing blocks fight at half strength, rounded down,
    each block separately (two 3-SP forced-marched blocks count 1 + 1 = 2)."""
    r = both(Battle.from_spec("3if,3if", "3ir"), 0, 0, rules)
    assert (r["attacker_cv"], r["defender_cv"]) == (2, 1)


def test_combat_value_never_below_zero(rules):
    """EatS IX.2: final strength can't be lower than zero."""
    r = both(Battle.from_spec("1i/1i/1i/1i", "1i"), 0, 0, rules)
    assert r["defender_cv"] == 0
