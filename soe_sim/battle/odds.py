"""Public battle API: exact odds (:func:`battle_odds`) and Monte Carlo (:func:`simulate_battles`).

The wrappers validate, allocate, call the kernels of :mod:`soe_sim.battle.nb` and wrap results in
pandas; DataFrames exist only here at the boundary.
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numba
import numpy as np
import pandas as pd

from soe_sim.battle import nb
from soe_sim.battle.decks import default_deck
from soe_sim.battle.spec import Battle, Deck
from soe_sim.errors import Problem, SoeInputError, check_count, did_you_mean
from soe_sim.random import SeedLike, chunk_seeds, seed_int
from soe_sim.rules import CombatRules, Rules, default_combat_constants

NO_HAND = -(1 << 41)  # "draw blind" marker in kernel arrays (below nb's -(1 << 40) threshold)
CHUNK_SIZE = 1 << 15  # simulations per random stream; part of the reproducibility contract
INIT_CHANGE_NAMES = ("gain", "none", "lose", "flip")
GREAT_VICTORY_NAMES = ("none", "attacker", "defender")

# Probabilities reported with their meaning; the JSON keys of `soe-sim odds`.
PROBABILITY_METRICS = {
    "attacker_win": "P(attacker wins)",
    "defender_win": "P(defender wins)",
    "attacker_great_victory": "P(attacker great victory, +1 VP)",
    "defender_great_victory": "P(defender great victory, +1 VP)",
    "garrison_lost": "P(garrison removed)",
    "defender_wiped_out": "P(every defending block destroyed)",
}
MEAN_METRICS = {
    "attacker_losses_mean": "E[attacker real SP losses]",
    "defender_losses_mean": "E[defender real SP losses]",
    "attacker_blocks_destroyed_mean": "E[attacking blocks destroyed]",
    "defender_blocks_destroyed_mean": "E[defending blocks destroyed]",
}


def _resolve_rules(rules: Rules | CombatRules | None) -> CombatRules:
    if rules is None:
        return default_combat_constants()
    if isinstance(rules, Rules):
        return rules.combat_constants()
    return rules


SIDES = ("polish", "soviet")


def _check_battle(battle, where: str) -> Battle:
    """``battle`` when it is a :class:`Battle`, else one input error naming ``where`` (a string such as
    ``"4i vs 3i"`` is the commonest mistake: the specs go through :meth:`Battle.from_spec`)."""
    if isinstance(battle, Battle):
        return battle
    hint = ("build it with Battle.from_spec(attacker, defender, ...), e.g. Battle.from_spec(\"4i,4i/3c\", \"4i,3i\")"
            if isinstance(battle, str) else "a soe_sim.Battle (Battle.from_spec)")
    raise SoeInputError(Problem(where, "", "battle", _short(battle), f"expected a Battle, not {type(battle).__name__}",
                                hint))


def _short(value):
    """``value`` for an error message: itself when a short scalar, else a clipped repr."""
    if isinstance(value, (str, int, float)) and len(str(value)) <= 60:
        return value
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_decks(decks, where: str) -> None:
    """``decks`` is None or a mapping of side names (a misspelt key would silently use the default deck)."""
    if decks is None:
        return
    if not isinstance(decks, Mapping):
        raise SoeInputError(Problem(where, "", "decks", _short(decks), "expected a mapping {side: deck}",
                                    '{"polish": "0:5,1:15,2:20,3:10,4:5"}'))
    for key in decks:
        if key not in SIDES:
            raise SoeInputError(Problem(where, "", "decks", key, "unknown side; expected polish or soviet",
                                        did_you_mean(str(key), SIDES)))


def _deck_for(side: str, decks: Mapping[str, Deck | str | Mapping] | None) -> Deck:
    if decks and side in decks and decks[side] is not None:
        d = decks[side]
        if isinstance(d, Deck):
            return d
        if isinstance(d, str):
            return Deck.parse(d, f"--deck-{side}")
        return Deck.from_mapping(d, f"deck {side}")
    return default_deck(side)


def _card_distribution(choice, deck: Deck, bonus: int, option: str) -> tuple[np.ndarray, np.ndarray]:
    if choice.hand is None:
        return deck.values, deck.probabilities()
    if choice.hand not in deck:
        raise SoeInputError(
            Problem(option, "", "", f"hand:{choice.hand}",
                    f"no card with combat modifier {choice.hand} in the deck; allowed: "
                    + ", ".join(f"hand:{v}" for v in deck.values))
        )
    # SoE 7.41.2: a card played from hand adds its printed modifier + 1.
    return np.array([choice.hand + bonus], dtype=np.int64), np.ones(1)


def prepare(battle: Battle, rules: CombatRules) -> np.ndarray:
    """Prepared kernel row of a battle (see :func:`soe_sim.battle.nb.prepare_battle_nb`)."""
    if battle.initiative_level > rules.initiative_max_level:  # SoE 6.1: the track ends at max_level
        raise SoeInputError(Problem("--initiative", "", "", f"{battle.initiative_holder}:{battle.initiative_level}",
                                    f"level must be at most {rules.initiative_max_level} (the initiative track, "
                                    f"rules initiative.max_level)"))
    problems = []
    for i, group in enumerate(battle.attacker):  # SoE 7.33: at most N blocks cross one link into a battle
        if len(group) > rules.max_blocks_per_link:
            problems.append(Problem("--attacker", "", f"direction {i + 1}", battle.attacker_spec().split("/")[i],
                                    f"{len(group)} blocks attack along one link; at most {rules.max_blocks_per_link} "
                                    f"may cross a link into a battle (rules movement.max_blocks_per_link, SoE 7.33)",
                                    "split them with `/` into several directions"))
    most = rules.max_blocks + battle.support_directions * rules.max_blocks_per_link
    if len(battle.defender) > most:
        problems.append(Problem("--defender", "", "", battle.defender_spec(),
                                f"{len(battle.defender)} defending blocks; an area holds at most {rules.max_blocks} "
                                f"(rules stacking.max_blocks, SoE 7.33) plus {rules.max_blocks_per_link} per "
                                f"supporting direction ({battle.support_directions} given)"))
    if problems:
        raise SoeInputError(problems)
    a = battle.arrays
    out = np.empty(nb.N_PREP, dtype=np.int64)
    nb.prepare_battle_nb(
        a["att_sp"], a["att_half"], a["att_arm"], a["att_direction"],
        a["def_sp"], a["def_half"], a["def_arm"],
        battle.support_directions, battle.garrison, battle.defend, battle.fortified,
        int(battle.withdraw), a["att_effect"], a["def_effect"],
        0 if battle.initiative_holder == "attacker" else 1, battle.initiative_level,
        rules, out,
    )
    return out


def wilson_interval(successes: np.ndarray | float, n: int, z: float = 1.959963984540054):
    """Wilson score interval for a binomial proportion (vectorised; floats for a scalar ``successes``), with
    the bounds exactly 0 at no successes and 1 at ``n``."""
    p = np.asarray(successes, dtype=float) / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # at 0 or n successes the bound is exactly 0 or 1; centre - half leaves rounding noise (2.8e-17)
    lo = np.where(p <= 0.0, 0.0, np.clip(centre - half, 0, 1))
    hi = np.where(p >= 1.0, 1.0, np.clip(centre + half, 0, 1))
    return (lo, hi) if lo.ndim else (float(lo), float(hi))


def _metrics(outcomes: np.ndarray, weights: np.ndarray) -> dict[str, float]:
    """Probabilities and means of an outcome table under weights summing to 1."""
    o = outcomes
    w = weights
    return {
        "attacker_win": float(w @ (o[:, nb.O_ATTACKER_WINS] == 1)),
        "defender_win": float(w @ (o[:, nb.O_ATTACKER_WINS] == 0)),
        "attacker_great_victory": float(w @ (o[:, nb.O_GREAT_VICTORY] == 1)),
        "defender_great_victory": float(w @ (o[:, nb.O_GREAT_VICTORY] == 2)),
        "garrison_lost": float(w @ (o[:, nb.O_GARRISON_LOST] > 0)),
        "attacker_losses_mean": float(w @ o[:, nb.O_ATT_LOSSES]),
        "defender_losses_mean": float(w @ o[:, nb.O_DEF_LOSSES]),
        "attacker_blocks_destroyed_mean": float(w @ o[:, nb.O_ATT_DESTROYED]),
        "defender_blocks_destroyed_mean": float(w @ o[:, nb.O_DEF_DESTROYED]),
    }


@dataclass
class MonteCarloEstimate:
    """Monte Carlo cross-check of a battle: estimates with 95 % intervals."""

    n: int
    seed: object
    estimates: dict[str, float]
    low: dict[str, float]
    high: dict[str, float]
    joint: pd.DataFrame
    initiative_shift: dict[str, float]

    def to_dict(self) -> dict:
        return {
            "n": self.n,
            "seed": self.seed,
            **{k: self.estimates[k] for k in self.estimates},
            "intervals": {k: [self.low[k], self.high[k]] for k in self.estimates},
            "initiative_shift": self.initiative_shift,
            "loss_distribution": [
                {"attacker_losses": int(r.attacker_losses), "defender_losses": int(r.defender_losses),
                 "p": float(r.p)}
                for r in self.joint.itertuples()
            ],
        }


class BattleOdds:
    """Exact odds of one battle, with an optional Monte Carlo cross-check.

    Attributes
    ----------
    battle : Battle
    outcomes : ndarray, shape (k, nb.N_OUT), int64
        One resolved outcome per pair of combat-card values.
    probabilities : ndarray, shape (k,), float64
    attacker_deck, defender_deck : Deck
    mc : MonteCarloEstimate or None
    """

    def __init__(self, battle, outcomes, probabilities, attacker_deck, defender_deck, mc=None):
        self.battle = battle
        self.outcomes = outcomes
        self.probabilities = probabilities
        self.attacker_deck = attacker_deck
        self.defender_deck = defender_deck
        self.mc = mc
        self.card_table = None  # optional: card_choice_table() attached by the CLI
        self.rules = "soe"  # the ruleset's label (soe_sim.rules.Rules.label): "soe+mine.toml" for an overlay
        self._metrics = None

    # -- exact results -------------------------------------------------------------------------
    @property
    def metrics(self) -> dict[str, float]:
        if self._metrics is None:
            m = _metrics(self.outcomes, self.probabilities)
            m["defender_wiped_out"] = self._wiped_out(self.outcomes, self.probabilities)
            self._metrics = m
        return self._metrics

    def _wiped_out(self, outcomes, weights) -> float:
        n_def = len(self.battle.defender)
        if n_def == 0:
            return float(weights @ (outcomes[:, nb.O_GARRISON_LOST] > 0))
        return float(weights @ (outcomes[:, nb.O_DEF_DESTROYED] >= n_def))

    def __getattr__(self, name):
        if name in PROBABILITY_METRICS or name in MEAN_METRICS:
            return self.metrics[name]
        raise AttributeError(name)

    @property
    def joint(self) -> pd.DataFrame:
        """Joint distribution of real losses: columns ``attacker_losses, defender_losses, p``."""
        return _joint(self.outcomes[:, nb.O_ATT_LOSSES], self.outcomes[:, nb.O_DEF_LOSSES],
                      self.probabilities)

    loss_distribution = joint

    def joint_matrix(self) -> pd.DataFrame:
        """The joint loss distribution as a matrix (rows attacker losses, columns defender losses)."""
        j = self.joint
        return j.pivot_table(index="attacker_losses", columns="defender_losses", values="p",
                             aggfunc="sum", fill_value=0.0)

    @property
    def initiative_shift(self) -> dict[str, float]:
        """P(holder gains a level / no change / loses a level / initiative flips) (SoE 6.1)."""
        codes = self.outcomes[:, nb.O_INIT_CHANGE]
        return {name: float(self.probabilities @ (codes == i)) for i, name in enumerate(INIT_CHANGE_NAMES)}

    @property
    def initiative_after(self) -> pd.DataFrame:
        """Distribution of (holder, level) after the battle."""
        holder = np.where(self.outcomes[:, nb.O_INIT_HOLDER] == 0, "attacker", "defender")
        df = pd.DataFrame({"holder": holder, "level": self.outcomes[:, nb.O_INIT_LEVEL],
                           "p": self.probabilities})
        return df.groupby(["holder", "level"], as_index=False)["p"].sum()

    def combat_values(self) -> pd.DataFrame:
        """Distribution of each side's combat value."""
        rows = []
        for side, col in (("attacker", nb.O_ATT_CV), ("defender", nb.O_DEF_CV)):
            s = pd.Series(self.probabilities).groupby(self.outcomes[:, col]).sum()
            rows += [{"side": side, "combat_value": int(v), "p": float(p)} for v, p in s.items()]
        return pd.DataFrame(rows)

    @property
    def summary(self) -> pd.DataFrame:
        """One row per metric: ``exact`` and, with Monte Carlo, ``mc``, ``mc_low``, ``mc_high`` (95 %
        interval) and ``mc_n`` (battles simulated)."""
        names = {**PROBABILITY_METRICS, **MEAN_METRICS}
        df = pd.DataFrame({"description": names, "exact": {k: self.metrics[k] for k in names}})
        if self.mc is not None:
            df["mc"] = pd.Series(self.mc.estimates)
            df["mc_low"] = pd.Series(self.mc.low)
            df["mc_high"] = pd.Series(self.mc.high)
            df["mc_n"] = int(self.mc.n)
        df.index.name = "metric"
        return df

    def to_dict(self) -> dict:
        """JSON-ready result (the `soe-sim odds --format json` document)."""
        b = self.battle
        d = {
            "battle": {
                "attacker": b.attacker_spec(),
                "defender": b.defender_spec(),
                "attacker_side": b.attacker_side,
                "defender_side": b.defender_side,
                "attack_directions": b.attack_directions,
                "support_directions": b.support_directions,
                "garrison": b.garrison,
                "defend": b.defend,
                "fortified": b.fortified,
                "withdraw": b.withdraw.name.lower(),
                "attacker_card": str(b.attacker_card),
                "defender_card": str(b.defender_card),
                "attacker_deck": str(self.attacker_deck),
                "defender_deck": str(self.defender_deck),
                "initiative": f"{b.initiative_holder}:{b.initiative_level}",
            },
            "rules": self.rules,
            **self.metrics,
            "initiative_shift": self.initiative_shift,
            "initiative_after": self.initiative_after.to_dict(orient="records"),
            "loss_distribution": self.joint.to_dict(orient="records"),
            "combat_values": self.combat_values().to_dict(orient="records"),
        }
        if self.mc is not None:
            d["mc"] = self.mc.to_dict()
        if getattr(self, "card_table", None) is not None:
            d["card_table"] = {a: row.to_dict() for a, row in self.card_table.iterrows()}
        return d

    def plot(self, ax=None, title: str | None = None):
        """Joint loss heatmap and outcome bars; returns the matplotlib Figure."""
        from soe_sim.battle.plot import plot_odds

        return plot_odds(self, title=title)

    def __repr__(self) -> str:
        m = self.metrics
        return (f"BattleOdds({self.battle.attacker_spec()} vs {self.battle.defender_spec() or 'garrison'}: "
                f"attacker wins {m['attacker_win']:.4f}, E[losses] {m['attacker_losses_mean']:.3f} / "
                f"{m['defender_losses_mean']:.3f})")


def _joint(att_losses, def_losses, weights) -> pd.DataFrame:
    df = pd.DataFrame({"attacker_losses": att_losses.astype(np.int64),
                       "defender_losses": def_losses.astype(np.int64), "p": weights})
    return df.groupby(["attacker_losses", "defender_losses"], as_index=False)["p"].sum()


def battle_odds(
    battle: Battle,
    *,
    decks: Mapping[str, Deck | str | Mapping] | None = None,
    rules: Rules | CombatRules | None = None,
    mc: int = 0,
    seed: SeedLike = None,
    threads: int | None = None,
) -> BattleOdds:
    """Exact odds of a battle by enumerating both combat cards (SoE 7.41).

    Parameters
    ----------
    battle : Battle
    decks : mapping, optional
        ``{"polish": Deck | "0:5,1:15,…" | {value: count}, "soviet": …}`` draw-pile compositions;
        defaults to the full decks in ``data/cards``.
    rules : Rules or CombatRules, optional
        Defaults to the built-in Strike of the Eagle rules.
    mc : int
        If > 0, also run that many Monte Carlo battles and attach estimates with 95 % intervals.
    seed : int, SeedSequence or Generator, optional
        Seed of the Monte Carlo streams.
    threads : int, optional
        Numba threads for the Monte Carlo (results do not depend on it).

    Returns
    -------
    BattleOdds
    """
    battle = _check_battle(battle, "battle_odds")
    _check_decks(decks, "battle_odds")
    mc = check_count(mc, "battle_odds", 0, field="mc")
    crules = _resolve_rules(rules)
    bonus = crules.hand_card_bonus
    att_deck = _deck_for(battle.attacker_side, decks)
    def_deck = _deck_for(battle.defender_side, decks)
    att_values, att_probs = _card_distribution(battle.attacker_card, att_deck, bonus, "--attacker-card")
    def_values, def_probs = _card_distribution(battle.defender_card, def_deck, bonus, "--defender-card")
    prep = prepare(battle, crules)
    k = len(att_values) * len(def_values)
    outcomes = np.empty((k, nb.N_OUT), dtype=np.int64)
    probs = np.empty(k, dtype=np.float64)
    nb.exact_nb(prep, att_values, att_probs, def_values, def_probs, crules, outcomes, probs)
    result = BattleOdds(battle, outcomes, probs, att_deck, def_deck)
    if isinstance(rules, Rules):
        result.rules = rules.label
    elif rules is not None:
        result.rules = "custom"  # CombatRules built in memory
    if mc:
        if seed is None:  # a fresh seed, recorded with the estimate so that it can be replayed (audit J F6)
            seed = seed_int()
        result.mc = _mc_estimate(battle, mc, seed, decks, crules, threads, result)
    return result


def _mc_estimate(battle, n, seed, decks, crules, threads, exact: BattleOdds) -> MonteCarloEstimate:
    sims = simulate_battles([battle], n=n, seed=seed, decks=decks, rules=crules, threads=threads,
                            progress=False, as_frame=False)
    o = sims["outcomes"].astype(np.int64)
    w = np.full(n, 1.0 / n)
    est = _metrics(o, w)
    est["defender_wiped_out"] = exact._wiped_out(o, w)
    low, high = {}, {}
    for key in list(est):
        if key in PROBABILITY_METRICS:
            lo, hi = wilson_interval(est[key] * n, n)
        else:
            col = {"attacker_losses_mean": nb.O_ATT_LOSSES, "defender_losses_mean": nb.O_DEF_LOSSES,
                   "attacker_blocks_destroyed_mean": nb.O_ATT_DESTROYED,
                   "defender_blocks_destroyed_mean": nb.O_DEF_DESTROYED}[key]
            sd = o[:, col].std(ddof=1) if n > 1 else 0.0
            half = 1.959963984540054 * sd / math.sqrt(n)
            lo, hi = est[key] - half, est[key] + half
        low[key], high[key] = float(lo), float(hi)
    codes = o[:, nb.O_INIT_CHANGE]
    init = {name: float((codes == i).mean()) for i, name in enumerate(INIT_CHANGE_NAMES)}
    return MonteCarloEstimate(n, seed, est, low, high,
                              _joint(o[:, nb.O_ATT_LOSSES], o[:, nb.O_DEF_LOSSES], w), init)


@contextlib.contextmanager
def numba_threads(threads: int | None):
    """Temporarily set numba's thread count (results never depend on it)."""
    if threads is None:
        yield
        return
    if threads < 1 or threads > numba.config.NUMBA_NUM_THREADS:
        raise SoeInputError(Problem("--threads", "", "", threads,
                                    f"must be 1..{numba.config.NUMBA_NUM_THREADS}"))
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def simulate_battles(
    battles: Battle | Sequence[Battle],
    n: int | Sequence[int] = 1000,
    *,
    seed: SeedLike = None,
    decks: Mapping[str, Deck | str | Mapping] | None = None,
    rules: Rules | CombatRules | None = None,
    threads: int | None = None,
    progress: bool | None = None,
    as_frame: bool = True,
):
    """Monte Carlo over many battles (same or different specs), one row per simulated battle.

    Parameters
    ----------
    battles : Battle or sequence of Battle
    n : int or sequence of int
        Simulations per battle.
    seed : int, SeedSequence or Generator, optional
        Root seed; per-chunk streams are spawned from it, so results are identical at any
        thread count.
    decks, rules, threads
        As in :func:`battle_odds`.
    progress : bool, optional
        Show a progress bar (default: when more than 20 million simulations).
    as_frame : bool
        Return a DataFrame (default) or the raw arrays.

    Returns
    -------
    DataFrame
        Columns ``battle, attacker_card, defender_card, attacker_cv, defender_cv,
        attacker_losses, defender_losses, attacker_wins, great_victory, initiative_holder,
        initiative_level, initiative_change, attacker_blocks_destroyed,
        defender_blocks_destroyed, garrison_lost``.
    """
    if isinstance(battles, Battle):
        battles = [battles]
    if isinstance(battles, (str, bytes)) or not isinstance(battles, Sequence):
        _check_battle(battles, "simulate_battles")
    battles = [_check_battle(b, "simulate_battles") for b in battles]
    if not battles:
        raise SoeInputError(Problem("simulate_battles", "", "battles", battles, "no battles given"))
    _check_decks(decks, "simulate_battles")
    if isinstance(n, Sequence) and not isinstance(n, str):
        if len(n) != len(battles):
            raise SoeInputError(Problem("simulate_battles", "", "n", _short(n),
                                        f"{len(n)} counts for {len(battles)} battles",
                                        "give one count per battle, or one count for all"))
        counts = np.array([check_count(k, "simulate_battles", 1, field="n") for k in n], dtype=np.int64)
    else:
        counts = np.full(len(battles), check_count(n, "simulate_battles", 1, field="n"), dtype=np.int64)
    crules = _resolve_rules(rules)
    bonus = crules.hand_card_bonus

    deck_index: dict[str, int] = {}
    deck_list: list[Deck] = []

    def deck_id(side: str) -> int:
        d = _deck_for(side, decks)
        key = str(d)
        if key not in deck_index:
            deck_index[key] = len(deck_list)
            deck_list.append(d)
        return deck_index[key]

    nb_ = len(battles)
    prep = np.empty((nb_, nb.N_PREP), dtype=np.int64)
    att_fixed = np.full(nb_, NO_HAND, dtype=np.int64)
    def_fixed = np.full(nb_, NO_HAND, dtype=np.int64)
    att_deck = np.empty(nb_, dtype=np.int64)
    def_deck = np.empty(nb_, dtype=np.int64)
    for i, b in enumerate(battles):
        prep[i] = prepare(b, crules)
        att_deck[i] = deck_id(b.attacker_side)
        def_deck[i] = deck_id(b.defender_side)
        for choice, fixed, d, opt in ((b.attacker_card, att_fixed, att_deck[i], "--attacker-card"),
                                      (b.defender_card, def_fixed, def_deck[i], "--defender-card")):
            if choice.hand is not None:
                values, _ = _card_distribution(choice, deck_list[d], bonus, opt)
                fixed[i] = values[0]
    width = max(len(d.counts) for d in deck_list)
    deck_values = np.zeros((len(deck_list), width), dtype=np.int64)
    deck_cum = np.zeros((len(deck_list), width), dtype=np.int64)
    deck_n = np.zeros(len(deck_list), dtype=np.int64)
    for i, d in enumerate(deck_list):
        k = len(d.counts)
        deck_values[i, :k] = d.values
        deck_cum[i, :k] = np.cumsum(d.cards)
        deck_n[i] = k

    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    total = int(offsets[-1])
    n_chunks = -(-total // CHUNK_SIZE)
    seeds = chunk_seeds(seed, n_chunks)
    out_att = np.empty(total, dtype=np.int16)
    out_def = np.empty(total, dtype=np.int16)
    out = np.empty((total, nb.N_OUT), dtype=np.int16)
    if progress is None:
        progress = total > 20_000_000
    batch = max(1, min(n_chunks, 256)) if progress else n_chunks
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, unit="battle", unit_scale=True, desc="battles")
    with numba_threads(threads):
        for first in range(0, n_chunks, batch):
            last = min(first + batch, n_chunks)
            nb.simulate_nb(prep, att_fixed, def_fixed, att_deck, def_deck, deck_values, deck_cum,
                           deck_n, offsets, CHUNK_SIZE, first, seeds[first:last], crules,
                           out_att, out_def, out)
            if bar is not None:
                bar.update(min(last * CHUNK_SIZE, total) - min(first * CHUNK_SIZE, total))
    if bar is not None:
        bar.close()
    if not as_frame:
        return {"offsets": offsets, "attacker_card": out_att, "defender_card": out_def, "outcomes": out}
    battle_idx = np.repeat(np.arange(nb_, dtype=np.int32), counts)
    return pd.DataFrame({
        "battle": battle_idx,
        "attacker_card": out_att,
        "defender_card": out_def,
        "attacker_cv": out[:, nb.O_ATT_CV],
        "defender_cv": out[:, nb.O_DEF_CV],
        "attacker_losses": out[:, nb.O_ATT_LOSSES],
        "defender_losses": out[:, nb.O_DEF_LOSSES],
        "attacker_wins": out[:, nb.O_ATTACKER_WINS].astype(bool),
        "great_victory": pd.Categorical.from_codes(out[:, nb.O_GREAT_VICTORY], GREAT_VICTORY_NAMES),
        "initiative_holder": pd.Categorical.from_codes(out[:, nb.O_INIT_HOLDER], ["attacker", "defender"]),
        "initiative_level": out[:, nb.O_INIT_LEVEL],
        "initiative_change": pd.Categorical.from_codes(out[:, nb.O_INIT_CHANGE], INIT_CHANGE_NAMES),
        "attacker_blocks_destroyed": out[:, nb.O_ATT_DESTROYED],
        "defender_blocks_destroyed": out[:, nb.O_DEF_DESTROYED],
        "garrison_lost": out[:, nb.O_GARRISON_LOST].astype(bool),
    })


def resolve(
    battle: Battle,
    attacker_modifier: int,
    defender_modifier: int,
    *,
    rules: Rules | CombatRules | None = None,
) -> dict:
    """Resolve one battle for known combat-card values (the hand bonus already included).

    The single-battle view of the kernel the exact, Monte Carlo and engine paths share; useful to
    replay a battle from the table ("I drew a 2, he played a 4 from hand").

    Returns
    -------
    dict
        ``attacker_cv, defender_cv, attacker_losses, defender_losses, attacker_wins,
        great_victory, initiative_holder, initiative_level, initiative_change,
        attacker_blocks_destroyed, defender_blocks_destroyed, garrison_lost``.
    """
    crules = _resolve_rules(rules)
    prep = prepare(battle, crules)
    out = np.empty(nb.N_OUT, dtype=np.int64)
    nb.resolve_nb(prep, int(attacker_modifier), int(defender_modifier), crules, out)
    return {
        "attacker_cv": int(out[nb.O_ATT_CV]),
        "defender_cv": int(out[nb.O_DEF_CV]),
        "attacker_losses": int(out[nb.O_ATT_LOSSES]),
        "defender_losses": int(out[nb.O_DEF_LOSSES]),
        "attacker_wins": bool(out[nb.O_ATTACKER_WINS]),
        "great_victory": GREAT_VICTORY_NAMES[out[nb.O_GREAT_VICTORY]],
        "initiative_holder": "attacker" if out[nb.O_INIT_HOLDER] == 0 else "defender",
        "initiative_level": int(out[nb.O_INIT_LEVEL]),
        "initiative_change": INIT_CHANGE_NAMES[out[nb.O_INIT_CHANGE]],
        "attacker_blocks_destroyed": int(out[nb.O_ATT_DESTROYED]),
        "defender_blocks_destroyed": int(out[nb.O_DEF_DESTROYED]),
        "garrison_lost": bool(out[nb.O_GARRISON_LOST]),
    }


def card_choice_table(
    battle: Battle,
    metric: str = "attacker_win",
    *,
    decks: Mapping[str, Deck | str | Mapping] | None = None,
    rules: Rules | CombatRules | None = None,
) -> pd.DataFrame:
    """Exact ``metric`` for every pair of combat-card choices (SoE 7.41.2): draw blind or play a
    hand card of each printed value in the deck.

    Rows are the attacker's choice, columns the defender's (``"draw"``, ``"hand:0"``, …), so a
    player can see what playing a card from hand is worth against each reply.
    """
    from dataclasses import replace

    if metric not in PROBABILITY_METRICS and metric not in MEAN_METRICS:
        raise SoeInputError(Problem("metric", "", "", metric, "unknown metric; allowed: "
                                    + ", ".join([*PROBABILITY_METRICS, *MEAN_METRICS])))
    att_deck = _deck_for(battle.attacker_side, decks)
    def_deck = _deck_for(battle.defender_side, decks)
    att_choices = ["draw", *(f"hand:{v}" for v in att_deck.values)]
    def_choices = ["draw", *(f"hand:{v}" for v in def_deck.values)]
    table = pd.DataFrame(index=pd.Index(att_choices, name="attacker card"),
                         columns=pd.Index(def_choices, name="defender card"), dtype=float)
    for a in att_choices:
        for d in def_choices:
            b = replace(battle, attacker_card=a, defender_card=d)
            table.loc[a, d] = battle_odds(b, decks=decks, rules=rules).metrics[metric]
    return table
