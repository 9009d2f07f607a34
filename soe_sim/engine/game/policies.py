"""Decision policies of the game loop (numba), selected by an integer id.

A policy is a jitted function ``(decision_kind, n_options, rng) -> index in 0..n_options-1``;
:func:`choose_nb` dispatches on the policy id. The loop only calls it when there is a real choice
(``n_options >= 2``); ``rng`` is the deciding side's own SplitMix64 stream (a ``uint64`` view of
length 1), so two runs that differ only in one side's policy see the same chance stream (common
random numbers, docs/engine-design.md "Randomness").

Adding a policy
---------------
1. write ``my_policy_nb(decision_kind, n_options, rng)`` below (``@njit(cache=True)``);
2. give it the next id (``POLICY_MY = 1``) and a branch in :func:`choose_nb`;
3. add its name to :data:`POLICY_IDS` so ``play_game(..., polish="my")`` finds it.

Policies that need the position (the legal options' rows, the state) will get more arguments in
the policies issue; the loop already passes the decision kind so that a policy can treat, for
example, card discards differently from moves.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from soe_sim.engine.cards.nb import rand_below_nb

__all__ = ["POLICY_RANDOM", "POLICY_IDS", "choose_nb", "random_policy_nb", "policy_id"]

POLICY_RANDOM = 0  # uniform over the legal options: the control group

POLICY_IDS = {"random": POLICY_RANDOM}


def policy_id(name) -> int:
    """The id of a policy given by name (``"random"``) or id."""
    if isinstance(name, (int, np.integer)):
        if int(name) not in POLICY_IDS.values():
            raise ValueError(f"unknown policy id {name}; known: {sorted(POLICY_IDS.values())}")
        return int(name)
    key = str(name).strip().lower()
    if key not in POLICY_IDS:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(sorted(POLICY_IDS))}")
    return POLICY_IDS[key]


@njit(cache=True)
def random_policy_nb(decision_kind, n_options, rng):
    """Uniform over ``0..n_options-1`` (one draw of ``rng``)."""
    return rand_below_nb(rng, n_options)


@njit(cache=True)
def choose_nb(policy_id, decision_kind, n_options, rng):
    """Index of the chosen option (``0 <= index < n_options``) for policy ``policy_id``.

    Unknown ids fall back to the random policy (the Python wrappers reject them earlier).
    """
    if n_options <= 1:
        return 0
    if policy_id == POLICY_RANDOM:
        return random_policy_nb(decision_kind, n_options, rng)
    return random_policy_nb(decision_kind, n_options, rng)
