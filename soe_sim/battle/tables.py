"""Designer's odds tables: attacker × defender block strength grids under standard conditions."""
from __future__ import annotations

import math
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from soe_sim.battle.odds import battle_odds
from soe_sim.battle.spec import Battle, Block

# Condition name -> Battle keyword arguments (attack directions are handled separately).
CONDITIONS: dict[str, dict] = {
    "open": {"directions": 1},
    "defend": {"directions": 1, "defend": True},
    "fortified": {"directions": 1, "fortified": True},
    "defend+fortified": {"directions": 1, "defend": True, "fortified": True},
    "one-flank": {"directions": 2},
    "two-flanks": {"directions": 3},
    "one-flank+defend": {"directions": 2, "defend": True},
}


def representative_blocks(strength: int, parts: int = 1) -> list[int] | None:
    """Split ``strength`` SP into at least ``parts`` near-equal blocks of at most 4 SP (SoE 2.1).

    Returns None when the strength cannot fill ``parts`` blocks (e.g. 1 SP from two directions).
    """
    if strength < parts or strength < 1:
        return None
    n = max(math.ceil(strength / 4), parts)
    base, extra = divmod(strength, n)
    return [base + 1] * extra + [base] * (n - extra)


def _battle(att_sp: int, def_sp: int, condition: Mapping, attacker_side: str) -> Battle | None:
    directions = condition.get("directions", 1)
    att = representative_blocks(att_sp, directions)
    dfd = representative_blocks(def_sp)
    if att is None or dfd is None:
        return None
    groups = [[] for _ in range(directions)]
    for i, sp in enumerate(att):
        groups[i % directions].append(Block(sp))
    kwargs = {k: v for k, v in condition.items() if k != "directions"}
    return Battle(tuple(tuple(g) for g in groups), tuple(Block(sp) for sp in dfd),
                  attacker_side=attacker_side, **kwargs)


def odds_table(
    attacker_strengths: Iterable[int] = range(1, 17),
    defender_strengths: Iterable[int] = range(1, 17),
    conditions: Iterable[str] = tuple(CONDITIONS),
    *,
    attacker_side: str = "soviet",
    decks=None,
    rules=None,
) -> pd.DataFrame:
    """Exact odds for every (attacker SP, defender SP, condition), both cards drawn blind.

    Forces are infantry blocks at full strength, split into near-equal blocks of at most 4 SP;
    flank conditions spread the attacker over 2 or 3 directions (SoE 7.34).

    Returns
    -------
    DataFrame
        Long format: ``condition, attacker_sp, defender_sp, attacker_win, attacker_losses_mean,
        defender_losses_mean, attacker_great_victory, defender_great_victory`` (NaN where the
        attacker is too weak to come from that many directions).
    """
    rows = []
    for name in conditions:
        condition = CONDITIONS[name]
        for a in attacker_strengths:
            for d in defender_strengths:
                battle = _battle(a, d, condition, attacker_side)
                row = {"condition": name, "attacker_sp": a, "defender_sp": d}
                if battle is None:
                    row.update(dict.fromkeys(["attacker_win", "attacker_losses_mean", "defender_losses_mean",
                                              "attacker_great_victory", "defender_great_victory"], np.nan))
                else:
                    m = battle_odds(battle, decks=decks, rules=rules).metrics
                    row.update({k: m[k] for k in ("attacker_win", "attacker_losses_mean", "defender_losses_mean",
                                                  "attacker_great_victory", "defender_great_victory")})
                rows.append(row)
    return pd.DataFrame(rows)


def _cell_label(v: float, is_prob: bool) -> str:
    if not is_prob:
        return f"{v:.1f}"
    if v >= 0.995:
        return "1"
    if v < 0.005:
        return "0"
    return f"{v:.2f}"[1:]  # ".42": compact enough for a 16 x 16 grid


def plot_odds_table(table: pd.DataFrame, condition: str, value: str = "attacker_win", ax=None):
    """Heatmap of one metric of one condition; returns the Figure."""
    import matplotlib.pyplot as plt

    from soe_sim.plotting import use_style

    grid = table[table["condition"] == condition].pivot(index="attacker_sp", columns="defender_sp", values=value)
    with use_style():
        if ax is None:
            fig, ax = plt.subplots(figsize=(9, 7.5))
        else:
            fig = ax.figure
        is_prob = value.startswith(("attacker_win", "attacker_great", "defender_great"))
        cmap = "RdBu_r" if value == "attacker_win" else "viridis"
        im = ax.imshow(grid.to_numpy(), origin="lower", cmap=cmap, vmin=0 if is_prob else None,
                       vmax=1 if is_prob else None, aspect="auto")
        ax.set_xticks(range(grid.shape[1]), grid.columns)
        ax.set_yticks(range(grid.shape[0]), grid.index)
        ax.set_xlabel("defender SP (full-strength infantry)")
        ax.set_ylabel("attacker SP")
        for (i, j), v in np.ndenumerate(grid.to_numpy()):
            if not np.isnan(v):
                ax.text(j, i, _cell_label(v, is_prob), ha="center", va="center", fontsize=6.5,
                        color="white" if (is_prob and (v > 0.8 or v < 0.2)) else "black")
        ax.set_title(f"{value.replace('_', ' ')} — {condition} (both cards drawn blind)")
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
        fig.tight_layout()
    return fig
