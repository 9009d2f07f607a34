"""The ``soe-sim`` command.

Each subsystem defines its click commands in its own module; this module only assembles them and
turns :class:`~soe_sim.errors.SoeInputError` into one clear message per problem on stderr with exit
code 2 (no traceback).
"""
from __future__ import annotations

import dataclasses
import os
import sys

import click

from soe_sim.errors import SoeInputError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="soe_sim")
def cli() -> None:
    """soe_sim: exact odds and Monte Carlo analysis for Strike of the Eagle."""
    from soe_sim._paths import data_dir

    data_dir()  # a bad $SOE_SIM_DATA: one error naming it, whatever the command and its caches


def _register() -> None:
    # Imported here so `soe-sim --help` stays fast and a broken optional part names itself.
    from soe_sim.battle.cli import odds_command

    cli.add_command(odds_command)
    from soe_sim.data.cli import register as register_data_commands

    register_data_commands(cli)
    from soe_sim.engine.game.cli import register as register_engine_commands  # soe-sim fuzz
    from soe_sim.sim.cli import register as register_sim_commands  # soe-sim simulate, sweep

    register_engine_commands(cli)
    register_sim_commands(cli)
    from soe_sim.report.cli import register as register_report_commands  # soe-sim report balance

    register_report_commands(cli)
    from soe_sim.design.cli import register as register_design_commands  # compare, sensitivity, tune, knobs

    register_design_commands(cli)
    from soe_sim.playtest.cli import register as register_playtest_commands  # soe-sim playtest

    register_playtest_commands(cli)


def _option_flags(args: list[str]) -> dict[str, str]:
    """``{python name: flag}`` of the options of the command ``args`` invoke (``{"ci_width": "--ci-width"}``),
    so that an error raised by the Python API under its argument's name names the option in the CLI."""
    command: click.Command = cli
    for word in args:
        if word.startswith("-"):
            continue
        if not isinstance(command, click.Group) or word not in command.commands:
            break
        command = command.commands[word]
    return {p.name: p.opts[0] for p in command.params
            if isinstance(p, click.Option) and p.name and p.opts and p.opts[0].startswith("--")}


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI, mapping input errors to exit code 2."""
    _register()
    try:
        args = list(sys.argv[1:] if argv is None else argv)
        cli.main(args=args, prog_name="soe-sim", standalone_mode=False)
    except SoeInputError as err:
        flags = _option_flags(args)
        for problem in err.problems:
            if problem.file in flags:  # the Python API names its argument (``ci_width``): say ``--ci-width``
                problem = dataclasses.replace(problem, file=flags[problem.file])
            elif os.path.isabs(problem.file):  # a file read by its absolute path (a ruleset's): shown as any other
                from soe_sim.data._io import display_path

                problem = dataclasses.replace(problem, file=display_path(problem.file))
            click.echo(f"error: {problem}", err=True)
        return 2
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        click.echo(f"error: {exc.format_message()}", err=True)
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
