"""``soe-sim odds``: exact battle odds with an optional Monte Carlo cross-check.

``--system`` selects the combat system: ``soe`` (Strike of the Eagle, the default, handled here) or
another system registered in :data:`SYSTEMS`, whose own command parses the remaining options.
"""
from __future__ import annotations

import difflib
import importlib

import click

from soe_sim.battle.spec import Battle, BattleCard, Deck, Withdraw, resolve_battle_card
from soe_sim.cliutil import MC_MAX, SEED, emit_odds
from soe_sim.errors import Problem, SoeInputError, did_you_mean

# Other combat systems: name -> "module:click_command". Each parses its own options.
SYSTEMS: dict[str, str] = {
    "soyuz81": "soe_sim.systems.soyuz81_cli:odds_command",
    "rswe": "soe_sim.systems.rswe_cli:odds_command",
}


def _battle_card(value: str | None, side: str, option: str) -> BattleCard | None:
    """A battle card by deck id / name, or a raw effect code such as ``enemy_extra_loss:1``
    (:func:`soe_sim.battle.spec.resolve_battle_card`: the same lookup as from Python)."""
    return resolve_battle_card(value or None, side, option)


HOLDERS = ("attacker", "defender")


def _initiative(text: str) -> tuple[str, int]:
    holder, _, level = text.partition(":")
    if holder not in HOLDERS or not level.isdigit() or int(level) < 1:
        raise SoeInputError(Problem("--initiative", "", "", text, "expected `attacker:N` or `defender:N` with N ≥ 1",
                                    _initiative_hint(holder.strip(), level.strip())))
    return holder, int(level)


def _initiative_hint(holder: str, level: str) -> str | None:
    """``did you mean `attacker:1`?`` for a misspelt holder and/or a missing or bad level."""
    if holder not in HOLDERS:
        close = difflib.get_close_matches(holder.lower(), HOLDERS, n=1, cutoff=0.6)
        if not close:
            return None
        holder = close[0]
    level = level if level.isdigit() and int(level) >= 1 else "1"
    return f"did you mean `{holder}:{level}`?"


class _Choice(click.Choice):
    """``click.Choice`` whose bad value is a :class:`SoeInputError` in the project's style: the option, the
    value, the choices and the closest one ("did you mean `polish`?") instead of click's plain message."""

    def convert(self, value, param, ctx):
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            option = param.opts[0] if param is not None and param.opts else "value"
            choices = [str(c) for c in self.choices]
            listed = [f"`{c}`" for c in choices]
            expected = " or ".join(listed) if len(listed) == 2 else "one of " + ", ".join(listed)
            raise SoeInputError(Problem(option, "", "", value, f"expected {expected}",
                                        did_you_mean(value, choices))) from None


def _format_table(result) -> str:
    b = result.battle
    lines = []
    flags = [name for name, on in (("garrison", b.garrison), ("defend", b.defend),
                                   ("fortified", b.fortified)) if on]
    if b.withdraw != Withdraw.NONE:
        flags.append("withdraw" if b.withdraw == Withdraw.WITHDRAW else "withdraw-blocked")
    lines.append(f"Battle: {b.attacker_side} attacker [{b.attacker_spec()}] "
                 f"({b.attack_directions} direction{'s' if b.attack_directions != 1 else ''}) vs "
                 f"{b.defender_side} defender [{b.defender_spec() or '-'}]"
                 + (f" + support from {b.support_directions} direction(s)" if b.support_directions else "")
                 + (f"; {', '.join(flags)}" if flags else ""))
    lines.append(f"Cards: attacker {b.attacker_card} (deck {result.attacker_deck}), "
                 f"defender {b.defender_card} (deck {result.defender_deck}); "
                 f"initiative {b.initiative_holder}:{b.initiative_level}")
    if getattr(result, "rules", "soe") != "soe":
        lines.append(f"Rules: {result.rules}")
    lines.append("")
    s = result.summary
    has_mc = result.mc is not None
    header = f"{'metric':<34}{'exact':>10}" + (f"{'MC':>10}{'95% interval':>22}" if has_mc else "")
    lines.append(header)
    lines.append("-" * len(header))
    for name, row in s.iterrows():
        line = f"{row['description']:<34}{row['exact']:>10.4f}"
        if has_mc:
            line += f"{row['mc']:>10.4f}   [{row['mc_low']:.4f}, {row['mc_high']:.4f}]"
        lines.append(line)
    lines.append("")
    shift = result.initiative_shift
    lines.append("Initiative (SoE 6.1): " + ", ".join(f"{k} {v:.4f}" for k, v in shift.items()))
    lines.append("")
    lines.append("Joint distribution of real losses (rows: attacker, columns: defender):")
    matrix = result.joint_matrix()
    lines.append(matrix.to_string(float_format=lambda x: f"{x:.4f}"))
    if has_mc:
        lines.append("")
        lines.append(f"Monte Carlo: {result.mc.n:,} battles, seed {result.mc.seed}")
    return "\n".join(lines)


class _OddsCommand(click.Command):
    """`odds` hands everything (including ``--help``) to another system's command when
    ``--system`` names one, before click parses the Strike of the Eagle options."""

    def parse_args(self, ctx, args):
        system = _system_in(args)
        if system is not None and system != "soe":
            ctx.meta["soe_sim.delegate"] = (system, _strip_system(args))
            return []
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as err:
            raise _unknown_option(err.option_name, "soe", self) from None

    def invoke(self, ctx):
        delegate = ctx.meta.get("soe_sim.delegate")
        if delegate is None:
            return super().invoke(ctx)
        system, args = delegate
        if system not in SYSTEMS:
            raise SoeInputError(Problem("--system", "", "", system,
                                        "unknown combat system; allowed: soe, " + ", ".join(SYSTEMS),
                                        did_you_mean(system, ["soe", *SYSTEMS])))
        command = _system_command(system)
        try:
            return command.main(args=args, prog_name=f"soe-sim odds --system {system}", standalone_mode=False)
        except click.NoSuchOption as err:
            raise _unknown_option(err.option_name, system, command) from None


def _system_command(system: str) -> click.Command:
    """The odds command of a system: ``odds_command`` (this module) for ``soe``, else from :data:`SYSTEMS`."""
    if system == "soe":
        return odds_command
    module, _, name = SYSTEMS[system].partition(":")
    return getattr(importlib.import_module(module), name)


def _option_names(command: click.Command) -> list[str]:
    return [name for p in command.params if isinstance(p, click.Option) for name in (*p.opts, *p.secondary_opts)]


def _system_label(system: str) -> str:
    return "`--system soe` (Strike of the Eagle, the default)" if system == "soe" else f"`--system {system}`"


def _unknown_option(option: str, system: str, command: click.Command) -> SoeInputError:
    """An unknown option of one system's odds command, naming the other systems that have it (``--attack``
    without ``--system soyuz81``) and the closest option of this system."""
    owners = [s for s in ("soe", *SYSTEMS) if s != system and option in _option_names(_system_command(s))]
    here = "`soe-sim odds` (Strike of the Eagle)" if system == "soe" else f"`soe-sim odds --system {system}`"
    message = f"no such option of {here}"
    if owners:
        message += "; it is an option of " + " and ".join(_system_label(s) for s in owners)
        # another system's option: only a near typo of this system's own is worth naming too (`--attack`)
        close = difflib.get_close_matches(option, _option_names(command), n=1, cutoff=0.85)
        others = " or ".join(f"`--system {s}`" for s in owners if s != "soe")
        suggestion = " or ".join(([f"drop `--system {system}`"] if "soe" in owners else [])
                                 + ([("add " if system == "soe" else "use ") + others] if others else []))
        suggestion += f", or did you mean `{close[0]}`?" if close else ""
    else:
        close = did_you_mean(option, _option_names(command))
        help_ = "soe-sim odds" + ("" if system == "soe" else f" --system {system}") + " --help"
        suggestion = close or f"see `{help_}`"
    return SoeInputError(Problem(option, "", "", None, message, suggestion))


def _system_in(args: list[str]) -> str | None:
    for i, arg in enumerate(args):
        if arg == "--system" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--system="):
            return arg.partition("=")[2]
    return None


@click.command("odds", cls=_OddsCommand)
@click.option("--system", default="soe", show_default=True,
              help="Combat system: soe (Strike of the Eagle), " + ", ".join(SYSTEMS) + "; the other systems "
                   "have their own options (soe-sim odds --system NAME --help).")
@click.option("--attacker", "attacker", default=None, metavar="SPEC",
              help='Attacking blocks `<SP><arm>[f]`, `,` between blocks, `/` between directions: "4i,4i/3c".')
@click.option("--defender", "defender", default=None, metavar="SPEC",
              help="Defending blocks (`f` forced-marched in, `r` reorganizing); `/` adds supporting blocks from "
                   "another direction (or use --support).")
@click.option("--garrison", is_flag=True, help="A garrison is present (SoE 3.0).")
@click.option("--defend", is_flag=True, help="Defend Area order (SoE 7.2).")
@click.option("--fortified", is_flag=True, help="Every attack comes from fortified directions (SoE 1.2).")
@click.option("--support", default=0, type=int, show_default=True,
              help="Supporting blocks entered from N directions (SoE 7.34); instead of `/` in --defender, not with it.")
@click.option("--withdraw", is_flag=True, help="Withdraw order: defenders withdraw without battle (SoE 7.2).")
@click.option("--withdraw-blocked", is_flag=True,
              help="Withdraw order but no area to withdraw to: fight and lose 1 SP extra (SoE 7.2).")
@click.option("--attacker-side", type=_Choice(["polish", "soviet"]), default="soviet", show_default=True)
@click.option("--attacker-card", default="draw", show_default=True, help="`draw` or `hand:V` (V = printed modifier).")
@click.option("--defender-card", default="draw", show_default=True, help="`draw` or `hand:V`.")
@click.option("--attacker-battle-card", default=None,
              help="Battle card by id or name, or an effect code like `enemy_extra_loss:1`.")
@click.option("--defender-battle-card", default=None, help="As --attacker-battle-card, for the defender.")
@click.option("--initiative", default="attacker:1", show_default=True,
              help="Front initiative before the battle: `attacker:N` or `defender:N` (SoE 6.1).")
@click.option("--deck-polish", default=None, metavar="COMPOSITION",
              help='Combat-modifier composition "0:5,1:15,2:20,3:10,4:5".')
@click.option("--deck-soviet", default=None, metavar="COMPOSITION", help="As --deck-polish.")
@click.option("--rules", "rules_overlays", multiple=True, metavar="TOML",
              help="Rules overlay TOML(s) merged over SoE in order: the tables of data/rules/soe.toml, only the keys "
                   "changed (e.g. [combat] flank_penalty = 1). An overlay's [meta] base is honoured (base = \"eats\" "
                   "gives EatS plus its changes). Design variants (data/variants) are for compare, "
                   "sensitivity and tune.")
@click.option("--mc", default=0, type=click.IntRange(min=0, max=MC_MAX), show_default=True,
              help=f"Add a Monte Carlo estimate over N battles (at most {MC_MAX:,}).")
@click.option("--seed", default=None, type=SEED, help="Seed of the Monte Carlo (≥ 0).")
@click.option("--threads", default=None, type=int, help="Numba threads (results do not depend on it).")
@click.option("--format", "fmt", type=_Choice(["table", "json", "csv"]), default="table", show_default=True)
@click.option("--plot", "plot_file", default=None, metavar="FILE", help="Write a plot of the odds (PNG/SVG/PDF).")
@click.option("--card-table", is_flag=True,
              help="Also show P(attacker wins) for every pair of combat-card choices (draw / hand:V).")
def odds_command(system, attacker, defender, garrison, defend, fortified, support, withdraw,
                 withdraw_blocked, attacker_side, attacker_card, defender_card, attacker_battle_card,
                 defender_battle_card, initiative, deck_polish, deck_soviet, rules_overlays, mc, seed,
                 threads, fmt, plot_file, card_table):
    """Exact odds of a battle, with an optional Monte Carlo cross-check."""
    if attacker is None:
        raise SoeInputError(Problem("--attacker", "", "", None, "missing --attacker SPEC, e.g. \"4i,4i/3c\""))
    if mc < 0:
        raise SoeInputError(Problem("--mc", "", "", mc, "must be ≥ 0"))
    if withdraw and withdraw_blocked:
        raise SoeInputError(Problem("--withdraw-blocked", "", "", None, "cannot be combined with --withdraw; "
                                    "give one of --withdraw (withdraw) or --withdraw-blocked (fight, 1 SP extra)"))
    mode = Withdraw.WITHDRAW if withdraw else Withdraw.BLOCKED if withdraw_blocked else Withdraw.NONE
    holder, level = _initiative(initiative)
    defender_side = "polish" if attacker_side == "soviet" else "soviet"
    battle = Battle.from_spec(
        attacker, defender or "", support=support, garrison=garrison, defend=defend,
        fortified=fortified, withdraw=mode, attacker_side=attacker_side,
        attacker_card=attacker_card, defender_card=defender_card,
        attacker_battle_card=_battle_card(attacker_battle_card, attacker_side, "--attacker-battle-card"),
        defender_battle_card=_battle_card(defender_battle_card, defender_side, "--defender-battle-card"),
        initiative_holder=holder, initiative_level=level,
    )
    decks = {}
    if deck_polish:
        decks["polish"] = Deck.parse(deck_polish, "--deck-polish")
    if deck_soviet:
        decks["soviet"] = Deck.parse(deck_soviet, "--deck-soviet")
    from soe_sim.battle.odds import battle_odds
    from soe_sim.rules import load_rules

    rules = load_rules("soe", rules_overlays) if rules_overlays else None
    result = battle_odds(battle, decks=decks or None, rules=rules, mc=mc, seed=seed, threads=threads)
    if card_table:
        from soe_sim.battle.odds import card_choice_table

        table = card_choice_table(battle, decks=decks or None, rules=rules)
        if fmt == "json":
            result.card_table = table
        else:
            emit_odds(result, fmt, plot_file, _format_table)
            click.echo("\nP(attacker wins) by combat-card choice (rows: attacker, columns: defender):"
                       if fmt == "table" else "")
            click.echo(table.to_string(float_format=lambda x: f"{x:.4f}") if fmt == "table"
                       else table.to_csv(float_format="%.6f"), nl=fmt == "table")
            return
    emit_odds(result, fmt, plot_file, _format_table)


def _strip_system(argv: list[str]) -> list[str]:
    """The ``odds`` arguments without the ``--system X`` pair."""
    out, skip = [], False
    for i, arg in enumerate(argv):
        if skip:
            skip = False
            continue
        if arg == "--system":
            skip = True
            continue
        if arg.startswith("--system="):
            continue
        out.append(arg)
    return out
