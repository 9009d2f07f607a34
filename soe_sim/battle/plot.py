"""Plots of battle odds: the joint loss distribution and the outcome probabilities."""
from __future__ import annotations

import numpy as np


def plot_odds(result, title: str | None = None):
    """Figure with the joint loss heatmap (left) and outcome probabilities (right).

    Parameters
    ----------
    result : BattleOdds
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """

    import matplotlib.pyplot as plt

    from soe_sim.plotting import SIDE_COLORS, use_style

    b = result.battle
    with use_style():
        fig, (ax_joint, ax_bar) = plt.subplots(1, 2, figsize=(12, 5), gridspec_kw={"width_ratios": [1.1, 1]})
        matrix = result.joint_matrix()
        data = matrix.to_numpy()
        im = ax_joint.imshow(data, cmap="Greys", origin="lower", vmin=0, vmax=max(data.max(), 1e-9))
        ax_joint.set_xticks(range(data.shape[1]), [str(c) for c in matrix.columns])
        ax_joint.set_yticks(range(data.shape[0]), [str(r) for r in matrix.index])
        ax_joint.set_xlabel(f"defender ({b.defender_side}) real SP losses")
        ax_joint.set_ylabel(f"attacker ({b.attacker_side}) real SP losses")
        ax_joint.set_title("Joint distribution of losses")
        for (i, j), p in np.ndenumerate(data):
            if p > 0:
                colour = "white" if p > 0.5 * data.max() else "black"
                ax_joint.text(j, i, f"{p:.3f}", ha="center", va="center", fontsize=9, color=colour)
        fig.colorbar(im, ax=ax_joint, fraction=0.046, pad=0.04, label="probability")

        m = result.metrics
        labels = ["attacker wins", "defender wins", "attacker great victory",
                  "defender great victory", "garrison removed", "defenders wiped out"]
        keys = ["attacker_win", "defender_win", "attacker_great_victory", "defender_great_victory",
                "garrison_lost", "defender_wiped_out"]
        colours = [SIDE_COLORS[b.attacker_side], SIDE_COLORS[b.defender_side],
                   SIDE_COLORS[b.attacker_side], SIDE_COLORS[b.defender_side], "0.5", "0.5"]
        y = np.arange(len(keys))[::-1]
        values = [m[k] for k in keys]
        ax_bar.barh(y, values, color=colours, alpha=0.85, label="exact")
        if result.mc is not None:
            est = np.array([result.mc.estimates[k] for k in keys])
            lo = np.array([result.mc.low[k] for k in keys])
            hi = np.array([result.mc.high[k] for k in keys])
            ax_bar.errorbar(est, y, xerr=[np.maximum(est - lo, 0), np.maximum(hi - est, 0)], fmt="o", color="black", ms=3,
                            capsize=3, label=f"Monte Carlo (n={result.mc.n:,}) 95 %")
            ax_bar.legend(loc="lower right", fontsize=8)
        for yi, v in zip(y, values):
            ax_bar.text(min(v + 0.01, 0.9), yi, f"{v:.3f}", va="center", fontsize=9)
        ax_bar.set_yticks(y, labels)
        ax_bar.set_xlim(0, 1)
        ax_bar.set_xlabel("probability")
        ax_bar.set_title(f"E[losses]: attacker {m['attacker_losses_mean']:.2f}, "
                         f"defender {m['defender_losses_mean']:.2f}")
        fig.suptitle(title or f"{b.attacker_side.title()} [{b.attacker_spec()}] attacks "
                     f"{b.defender_side.title()} [{b.defender_spec() or 'garrison'}]")
        fig.tight_layout()
    return fig
