"""``soe-sim odds --system rswe``: exact odds of a Red Star/White Eagle battle."""
from __future__ import annotations

import json

import click

from soe_sim.cliutil import emit_odds
from soe_sim.errors import Problem, SoeInputError


def _format(result) -> str:
    b = result.battle
    s = result.setup
    lines = [f"Red Star/White Eagle: {b.attacker} attack {b.attack}"
             + (f" + charge {b.charge}" if b.charge else "")
             + f" vs defence {b.defense}" + (f" (doubled to {s.defense_for_odds}, fortified)" if b.fortified else "")
             + f", defender in {b.terrain}"]
    lines.append(f"Odds {index(s.computed)}" + (f", reduced to {result.odds}" if result.odds != index(s.computed) else "")
                 + f" (RSWE 9.0); CRT column {result.column}")
    for m in result.modifiers:
        lines.append(f"  DRM {m['drm']:+d}  {m['name']}  [{m['source']}]")
    lines.append(f"Net DRM {result.drm:+d}; modified rolls are kept within 1..6 (RSWE 9.0)")
    lines.append("")
    o = result.outcomes
    lines.append(f"{'die':>3}  {'mod':>3}  {'result':<10}{'att loss':>9}{'def loss':>9}{'A ret':>6}{'D ret':>6}{'adv MP':>7}")
    for r in o.itertuples():
        lines.append(f"{r.die:>3}  {r.modified_roll:>3}  {r.result:<10}{r.attacker_losses:>9}{r.defender_losses:>9}"
                     f"{r.attacker_retreat:>6}{r.defender_retreat:>6}{r.advance_mp:>7}")
    lines.append("")
    header = f"{'metric':<34}{'exact':>10}"
    lines += [header, "-" * len(header)]
    for _, row in result.summary.iterrows():
        lines.append(f"{row['description']:<34}{row['exact']:>10.4f}")
    for side, dist in result.zoc.items():
        lines.append(f"ZOC Retreat Table, each retreating {side} unit: "
                     + ", ".join(f"{k} {v:.4f}" for k, v in dist.items()))
    for note in result.notes():
        lines.append(f"note: {note}")
    return "\n".join(lines)


def index(i: int) -> str:
    from soe_sim.systems.common import index_label

    return index_label(i)


@click.command("odds", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--attack", type=int, default=None, help="Attack factors of the non-charging attackers (RSWE 9.0).")
@click.option("--charge", type=int, default=0, show_default=True, help="Charge factors of charging cavalry (RSWE 9.10).")
@click.option("--defense", "--defence", "defense", type=int, default=None,
              help="Face-value defence factors of the eligible defenders.")
@click.option("--attacker", default="russian", show_default=True, help="Attacking side: russian | polish.")
@click.option("--terrain", default="clear", show_default=True,
              help="Defender's hex: clear | town | marsh | forest | rough | city | intermittent-lake (RSWE 9.2, 9.7).")
@click.option("--river", is_flag=True, help="All attackers through river hexsides (−1, RSWE 9.3).")
@click.option("--trench", is_flag=True, help="Russians all through trench faces / trench+river (−1, RSWE 9.4).")
@click.option("--fortified", is_flag=True, help="Polish defenders behind the Warsaw fortifications: defence doubled (RSWE 9.6, 18.0).")
@click.option("--attacker-unsupplied", is_flag=True, help="−1 (RSWE 9.9).")
@click.option("--defender-unsupplied", is_flag=True, help="+1 (RSWE 9.9).")
@click.option("--kosciuszko", is_flag=True, help="Optional 24.7.1: +1 on a Polish attack.")
@click.option("--odds", "odds", default=None, metavar="N:1", help="Voluntarily reduced odds (RSWE 9.0).")
@click.option("--defender-delay", default=None, metavar="D1,D2,…",
              help="Enemy delay factors of each hex of the defender's retreat path (RSWE 9.14).")
@click.option("--attacker-delay", default=None, metavar="D1,D2,…", help="As --defender-delay, for the attacker.")
@click.option("--defender-retreat-ends-unsupplied", is_flag=True, help="ZOC roll −1 (RSWE 9.14.3).")
@click.option("--attacker-retreat-ends-unsupplied", is_flag=True, help="ZOC roll −1 (RSWE 9.14.3).")
@click.option("--crt", "crt_file", default=None, metavar="FILE",
              help="TOML with the full [crt] (and [zoc_retreat]) tables; see docs/data-format.md.")
@click.option("--roll", type=int, default=None, help="Resolve one raw die roll instead of the distribution.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
@click.option("--plot", "plot_file", default=None, metavar="FILE", help="Write a plot (PNG/SVG/PDF).")
def odds_command(attack, charge, defense, attacker, terrain, river, trench, fortified, attacker_unsupplied,
                 defender_unsupplied, kosciuszko, odds, defender_delay, attacker_delay,
                 defender_retreat_ends_unsupplied, attacker_retreat_ends_unsupplied, crt_file, roll, fmt,
                 plot_file):
    """Exact odds of a Red Star/White Eagle battle (seed 003, section 9)."""
    from soe_sim.systems.rswe import rswe_odds, rswe_resolve

    if attack is None and charge == 0:
        raise SoeInputError(Problem("--attack", "", "", None, "missing --attack N (and/or --charge N)"))
    if defense is None:
        raise SoeInputError(Problem("--defense", "", "", None, "missing --defense N"))
    kw = dict(charge=charge, attacker=attacker, terrain=terrain, river=river, trench=trench, fortified=fortified,
              attacker_unsupplied=attacker_unsupplied, defender_unsupplied=defender_unsupplied,
              kosciuszko=kosciuszko, odds=odds, defender_delay=defender_delay, attacker_delay=attacker_delay,
              defender_retreat_ends_unsupplied=defender_retreat_ends_unsupplied,
              attacker_retreat_ends_unsupplied=attacker_retreat_ends_unsupplied, crt=crt_file)
    if roll is not None:
        for k in ("defender_delay", "attacker_delay", "defender_retreat_ends_unsupplied",
                  "attacker_retreat_ends_unsupplied"):
            kw.pop(k)
        res = rswe_resolve(attack or 0, defense, roll, **kw)
        if fmt == "json":
            click.echo(json.dumps({"system": "rswe", "roll": roll, **res}, indent=2))
        else:
            click.echo(" ".join(f"{k}={v}" for k, v in res.items()))
        return
    result = rswe_odds(attack or 0, defense, **kw)
    emit_odds(result, fmt, plot_file, _format)
