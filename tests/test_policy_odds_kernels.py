"""The policies' exact-odds kernels against a resolution of every pair of combat modifiers.

``_combat_value_odds_nb`` (the COMBAT_CARD / BATTLE_CARD odds) and ``_attack_win_prob_compute_nb`` (the ORDER and
MOVE ``p_win``) combine each side's part of ``soe_sim.battle.nb.resolve_nb`` — the losses a side takes depend only
on the other side's combat value (SoE 7.41.3–7.41.6) — instead of resolving each pair. The oracle here resolves
each pair with ``resolve_nb`` and sums in the same order, so the values must be equal to the last bit, on random
prepared battles under both rulesets' combat rules (EatS counts the garrison's losses differently, II.4.2).
"""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from soe_sim.battle import nb as bnb
from soe_sim.engine.game import game_setup
from soe_sim.engine.game import nb as gnb
from soe_sim.engine.game import policies as pnb
from soe_sim.engine.game.work import policy_set


@njit(cache=False)
def _odds_kernel(pol, prep, side, attacker, lo, p_out, net_out):
    pnb._combat_value_odds_nb(pol, prep, side, attacker, lo, p_out, net_out)


@njit(cache=False)
def _attack_kernel(pol, side, a_sp, att_half, sp, n_d, garrison, fortified, holder, level, defend):
    return pnb._attack_win_prob_compute_nb(pol, side, a_sp, att_half, sp, n_d, garrison, fortified, holder, level,
                                           defend)


def _odds_oracle(pol, prep, side, attacker, lo, n):
    enemy = 1 - side
    res = np.zeros(bnb.N_OUT, np.int64)
    p_out, net_out = np.zeros(n), np.zeros(n)
    for k in range(n):
        p = net = 0.0
        for j in range(pol.deck_n[enemy]):
            q = pol.deck_prob[enemy, j]
            v = int(pol.deck_val[enemy, j])
            if attacker:
                bnb.resolve_nb(prep, lo + k, v, pol.cr, res)
                p += q if res[bnb.O_ATTACKER_WINS] == 1 else 0.0
                net += q * (res[bnb.O_DEF_LOSSES] - res[bnb.O_ATT_LOSSES])
            else:
                bnb.resolve_nb(prep, v, lo + k, pol.cr, res)
                p += q if res[bnb.O_ATTACKER_WINS] == 0 else 0.0
                net += q * (res[bnb.O_ATT_LOSSES] - res[bnb.O_DEF_LOSSES])
        p_out[k], net_out[k] = p, net
    return p_out, net_out


def _random_prep(rng, cr, fought=True):
    n_att = int(rng.integers(1, 5))
    n_def = int(rng.integers(1, 4))
    att_sp = rng.integers(1, 5, n_att).astype(np.int64)
    def_sp = rng.integers(1, 5, n_def).astype(np.int64)
    att_half = rng.random(n_att) < 0.2
    def_half = rng.random(n_def) < 0.2
    att_arm = rng.integers(0, 2, n_att).astype(np.int64)
    def_arm = rng.integers(0, 2, n_def).astype(np.int64)
    att_dir = rng.integers(0, 3, n_att).astype(np.int64)
    eff = np.zeros((2, bnb.N_EFFECT), np.int64)
    withdraw = bnb.WITHDRAW_NONE if fought else int(rng.choice([bnb.WITHDRAW_NONE, bnb.WITHDRAW_BLOCKED]))
    prep = np.zeros(bnb.N_PREP, np.int64)
    bnb.prepare_battle_nb(att_sp, att_half, att_arm, att_dir, def_sp, def_half, def_arm, int(rng.integers(0, 2)),
                          bool(rng.random() < 0.5), bool(rng.random() < 0.3), bool(rng.random() < 0.3), withdraw,
                          eff[0], eff[1], int(rng.integers(0, 2)), int(rng.integers(1, 4)), cr, prep)
    return prep


def _balanced_policy_set(ruleset):
    """The policy set of two balanced players (policy id 1) in Kiev Offensive under ``ruleset``."""
    ids = np.array([1, 1], np.int64)
    return policy_set(game_setup("kiev-offensive", ruleset), ids, gnb.default_params_nb(ids))


@pytest.mark.parametrize("ruleset", ["soe", "eats"])
def test_combat_value_odds_equal_a_resolution_of_every_pair(ruleset):
    pol = _balanced_policy_set(ruleset)
    rng = np.random.default_rng(20261127)
    n = 12
    for case in range(300):
        prep = _random_prep(rng, pol.cr, fought=case % 10 != 0)
        if case % 10 == 0:
            prep[bnb.P_FOUGHT] = 0  # everyone withdrew: the kernel's other branch
            prep[bnb.P_DEF_WITHDRAW_LOSS] = int(rng.integers(0, 3))
        side = int(rng.integers(0, 2))
        attacker = bool(rng.random() < 0.5)
        lo = int(rng.integers(-3, 1))
        p_out, net_out = np.zeros(n), np.zeros(n)
        _odds_kernel(pol, prep, side, attacker, lo, p_out, net_out)
        p_ref, net_ref = _odds_oracle(pol, prep, side, attacker, lo, n)
        assert np.array_equal(p_out, p_ref) and np.array_equal(net_out, net_ref), (ruleset, case)


@pytest.mark.parametrize("ruleset", ["soe", "eats"])
def test_attack_win_prob_equals_a_resolution_of_every_pair(ruleset):
    pol = _balanced_policy_set(ruleset)
    rng = np.random.default_rng(7)
    res = np.zeros(bnb.N_OUT, np.int64)
    wins = 0
    for case in range(200):
        side = int(rng.integers(0, 2))
        a_sp, sp, n_d = int(rng.integers(1, 12)), int(rng.integers(1, 10)), int(rng.integers(1, 4))
        garrison, fortified, defend = bool(rng.random() < 0.4), bool(rng.random() < 0.3), bool(rng.random() < 0.3)
        att_half, holder, level = bool(rng.random() < 0.2), int(rng.integers(0, 2)), int(rng.integers(1, 4))
        got = _attack_kernel(pol, side, a_sp, att_half, sp, n_d, garrison, fortified, holder, level, defend)
        prep = pol.bt_prep  # the kernel's own preparation of the battle, left in the policy set's scratch
        p = 0.0
        for i in range(pol.deck_n[side]):
            for j in range(pol.deck_n[1 - side]):
                bnb.resolve_nb(prep, int(pol.deck_val[side, i]), int(pol.deck_val[1 - side, j]), pol.cr, res)
                if res[bnb.O_ATTACKER_WINS] == 1:
                    p += pol.deck_prob[side, i] * pol.deck_prob[1 - side, j]
        assert got == p, (ruleset, case)
        wins += 0.0 < got < 1.0
    assert wins > 20  # odds strictly between 0 and 1: the comparison is not trivial
