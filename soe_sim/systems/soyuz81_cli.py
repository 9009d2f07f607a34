"""``soe-sim odds --system soyuz81``: exact odds of a Soyuz 81 attack, or the odds × shift table."""
from __future__ import annotations

import json

import click

from soe_sim.cliutil import emit_odds, write_figure
from soe_sim.errors import Problem, SoeInputError


def _format(result) -> str:
    a = result.attack
    lines = [f"Soyuz 81: {a.attack} attack factors vs {a.defense} defence factors "
             f"({a.attacker} attacker), defender in {a.terrain}"]
    lines.append(f"Base odds {result.base_odds} (S81 9.6/9.7)")
    for s in result.shifts:
        cols = s["columns"]
        lines.append(f"  shift {abs(cols)}{'R' if cols > 0 else 'L'}  {s['name']}  [{s['source']}]")
    lines.append(f"Net shift {result.net_shift:+d} -> final odds {result.final_odds}; CRT column "
                 f"{result.column} ({result.resolution.kind}; limits {a.limits}, beyond-table {a.beyond_table})")
    lines.append("")
    o = result.outcomes
    lines.append(f"{'die':>3}  {'result':>6}  {'att lost':>8}  {'def lost':>8}  {'SAP':>3}")
    for r in o.itertuples():
        lines.append(f"{r.die:>3}  {r.result:>6}  {r.attacker_losses:>8}  {r.defender_losses:>8}  {r.sap_cost:>3}")
    lines.append("")
    header = f"{'metric':<34}{'exact':>10}"
    lines += [header, "-" * len(header)]
    for _, row in result.summary.iterrows():
        value = "n/a" if row["exact"] != row["exact"] else f"{row['exact']:.4f}"
        lines.append(f"{row['description']:<34}{value:>10}")
    lines.append("")
    lines.append("Joint distribution of steps lost (rows: attacker, columns: defender):")
    j = result.joint.pivot_table(index="attacker_losses", columns="defender_losses", values="p",
                                 aggfunc="sum", fill_value=0.0)
    lines.append(j.to_string(float_format=lambda x: f"{x:.4f}"))
    if a.high_intensity:
        lines.append("SAP cost: " + ", ".join(f"{d['sap']}: {d['p']:.4f}" for d in result.sap_cost_distribution))
    for note in result.notes():
        lines.append(f"note: {note}")
    return "\n".join(lines)


def _format_table(table) -> str:
    order = list(dict.fromkeys(table["base_odds"]))
    cell = table.assign(cell=[f"{c:>5} {a:.2f}/{d:.2f}" for c, a, d in
                              zip(table["column"], table["attacker_losses_mean"], table["defender_losses_mean"])])
    pivot = cell.pivot(index="base_odds", columns="shift", values="cell").loc[order]
    pivot.columns = [f"{s:+d}" for s in pivot.columns]
    lines = ["Soyuz 81: CRT column and E[attacker steps]/E[defender steps] by base odds (rows) and net "
             "column shift (columns; − left, + right)"]
    lines.append(pivot.to_string())
    kinds = sorted(set(table["column_kind"]) - {"printed", "automatic"})
    if kinds:
        lines.append("note: 6:1/7:1 read as " + ", ".join(kinds) + " (--beyond-table)")
    return "\n".join(lines)


@click.command("odds", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--attack", type=int, default=None, help="Total attack factors (S81 9.6).")
@click.option("--defense", "--defence", "defense", type=int, default=None, help="Total defence factors in the hex.")
@click.option("--attacker-steps", type=int, default=None, help="Attacking steps present (caps losses, S81 9.17).")
@click.option("--defender-steps", type=int, default=None, help="Defending steps present (caps losses, S81 9.17).")
@click.option("--attacker", "attacker", default="soviet", show_default=True, help="Attacking side: soviet | polish.")
@click.option("--terrain", default="clear", show_default=True, help="Defender's hex: clear | forest | mountain | city.")
@click.option("--city", is_flag=True, help="Defender in a city hex (same as --terrain city; 2L, S81 9.13).")
@click.option("--river", is_flag=True, help="All attackers across river/lake hexsides (1L, S81 9.12).")
@click.option("--concentric", is_flag=True, help="Concentric attack (1R, S81 9.15; not into a city).")
@click.option("--airpower", default=0, type=int, show_default=True,
              help="Airpower markers in the interdicted hex: 1R each for a Soviet attack, 1L each for a Polish one (S81 7.3).")
@click.option("--high-intensity", is_flag=True, help="Soviet high intensity attack on a city (S81 9.14).")
@click.option("--optional-forest", is_flag=True, help="Optional 10.1: defender in forest 1L.")
@click.option("--optional-air-forest", is_flag=True, help="Optional 10.2: two airpower markers in a forest hex count as one.")
@click.option("--attacker-in-forest", is_flag=True, help="With 10.2 and a Polish attack: the attackers' hex is forest.")
@click.option("--spetsnaz", is_flag=True, help="Optional 7.5: 8th Spetsnaz Brigade attacks a city (1R).")
@click.option("--beyond-table", default="clamp", show_default=True,
              help="6:1 and 7:1 (named by 9.8, not printed): clamp | extrapolate | columns:FILE.")
@click.option("--limits", default="after", show_default=True,
              help="Apply the 9.8 limits after (default) or before the column shifts.")
@click.option("--table", "show_table", is_flag=True, help="Print the odds-column × shift table instead.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
@click.option("--plot", "plot_file", default=None, metavar="FILE", help="Write a plot (PNG/SVG/PDF).")
def odds_command(attack, defense, attacker_steps, defender_steps, attacker, terrain, city, river,
                 concentric, airpower, high_intensity, optional_forest, optional_air_forest,
                 attacker_in_forest, spetsnaz, beyond_table, limits, show_table, fmt, plot_file):
    """Exact odds of a Soyuz 81 attack (seed 001, section 9)."""
    from soe_sim.systems.soyuz81 import plot_table, soyuz81_odds, soyuz81_table

    if show_table:
        table = soyuz81_table(beyond_table=beyond_table, limits=limits, high_intensity=high_intensity,
                              attacker_steps=attacker_steps, defender_steps=defender_steps)
        if plot_file:
            write_figure(plot_table(table), plot_file)
        if fmt == "json":
            click.echo(json.dumps({"system": "soyuz81", "beyond_table": beyond_table, "limits": limits,
                                   "table": table.to_dict(orient="records")}, indent=2))
        elif fmt == "csv":
            click.echo(table.to_csv(index=False), nl=False)
        else:
            click.echo(_format_table(table))
        return
    for name, value in (("--attack", attack), ("--defense", defense)):
        if value is None:
            raise SoeInputError(Problem(name, "", "", None, f"missing {name} N (or use --table)"))
    if city:
        if terrain not in ("clear", "city"):
            raise SoeInputError(Problem("--city", "", "", terrain,
                                        "city hexes are clear terrain (S81 8.6); --city excludes --terrain"))
        terrain = "city"
    result = soyuz81_odds(attack, defense, attacker_steps=attacker_steps, defender_steps=defender_steps,
                          attacker=attacker, terrain=terrain, river=river, concentric=concentric,
                          airpower=airpower, high_intensity=high_intensity, optional_forest=optional_forest,
                          optional_air_forest=optional_air_forest, attacker_in_forest=attacker_in_forest,
                          spetsnaz=spetsnaz, beyond_table=beyond_table, limits=limits)
    emit_odds(result, fmt, plot_file, _format)
