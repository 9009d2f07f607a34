"""The designer's odds tables: attacker × defender strength grids of win probability and expected
losses, open / Defend / fortified / one and two flank attacks, as CSV and heatmap PNGs.

Run: ``python -m analysis.odds_tables --out reports`` (``make run`` does).
"""
from __future__ import annotations

import sys
from pathlib import Path

import click
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from soe_sim.battle.tables import CONDITIONS, odds_table, plot_odds_table  # noqa: E402
from soe_sim.errors import SoeInputError  # noqa: E402


@click.command()
@click.option("--out", "out_dir", default="reports", show_default=True, type=click.Path(file_okay=False),
              help="Directory for odds_tables.csv and the heatmaps.")
@click.option("--max-sp", default=16, show_default=True, type=click.IntRange(1, 40),
              help="Largest attacker/defender strength in the grid.")
@click.option("--attacker-side", type=click.Choice(["polish", "soviet"]), default="soviet", show_default=True)
def main(out_dir: str, max_sp: int, attacker_side: str) -> None:
    """Write reports/odds_tables.csv and one heatmap per condition and metric."""
    out = Path(out_dir)
    table = odds_table(range(1, max_sp + 1), range(1, max_sp + 1), attacker_side=attacker_side)
    out.mkdir(parents=True, exist_ok=True)
    csv_path = out / "odds_tables.csv"
    table.to_csv(csv_path, index=False, float_format="%.6f")
    written = [csv_path]
    for condition in CONDITIONS:
        for metric in ("attacker_win", "defender_losses_mean", "attacker_losses_mean"):
            fig = plot_odds_table(table, condition, metric)
            path = out / f"odds_{metric}_{condition}.png"
            fig.savefig(path, dpi=110)
            plt.close(fig)
            written.append(path)
    click.echo(f"odds tables: {len(table)} exact cells, {len(CONDITIONS)} conditions -> {out}/ "
               f"({len(written)} files)")


if __name__ == "__main__":
    try:
        main(standalone_mode=True)
    except SoeInputError as err:  # pragma: no cover - bad deck data
        for problem in err.problems:
            print(f"error: {problem}", file=sys.stderr)
        sys.exit(2)
