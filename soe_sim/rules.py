"""Rule constants from ``data/rules/*.toml``, with overlays for variants.

Code never hard-codes a rule constant: it asks :func:`load_rules` and, for numba kernels, the
NamedTuples built from it (e.g. :meth:`Rules.combat_constants`).
"""
from __future__ import annotations

import copy
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, NamedTuple

import numpy as np

from soe_sim._paths import data_dir, file_stamps
from soe_sim.data._io import display_path, load_toml, toml_syntax_error
from soe_sim.errors import Problem, SoeInputError, did_you_mean


class CombatRules(NamedTuple):
    """Combat constants in kernel-ready form (SoE 7.34, 7.41, 7.44, 1.2, 3.0, 6.1, 7.2)."""

    chart_min_value: np.ndarray  # int64 (n_rows,) lowest combat value of each chart column
    chart_losses: np.ndarray  # int64 (n_rows,) losses inflicted for that column
    min_combat_value: int
    flank_penalty: int
    hand_card_bonus: int
    garrison_sp: int
    half_strength_divisor: int
    fortification_negates_flank: int
    fortification_loss_reduction: int
    defend_negates_flank: int
    defend_loss_reduction: int
    support_negates_flank_per_direction: int
    great_victory_losses: int
    great_victory_vp: int
    garrison_loss_counts_for_outcome: bool
    garrison_loss_counts_for_great_victory: bool
    garrison_loss_counts_for_initiative: bool
    withdraw_loss: int
    withdraw_cavalry_exempt_vs_infantry: bool
    withdraw_blocked_extra_loss: int
    initiative_min_level: int
    initiative_max_level: int
    initiative_max_change: int
    # ruleset options (SoE defaults in data/rules/soe.toml; The Eagle and the Star: data/rules/eats.toml)
    initiative_gain_by_loss_difference: bool  # EatS II.4.3 (SoE 6.1: losses inflicted only)
    garrison_first_loss_only_if_defender_loses: bool  # EatS II.4.2 (SoE 3.0: always first)
    rail_moved_strength_zero: bool  # EatS II.4.1 Railway transport (SoE: rail moves after battles)
    choose_after_draw: bool  # EatS IX.3 item 2: combat card chosen after the draw (SoE 7.41.2: before, R10)
    # how many blocks a battle can hold (the odds calculator's spec checks; the engine enforces them on the map)
    max_blocks: int  # stacking.max_blocks: blocks an area holds at the end of a phase (SoE 1.0, 7.33)
    max_blocks_per_link: int  # movement.max_blocks_per_link: blocks crossing one link into a battle (SoE 7.33)


def _read_toml(path: Path) -> dict:
    try:
        data = load_toml(path)
    except FileNotFoundError:
        raise SoeInputError(Problem(str(path), "", "", str(path), "rules file not found")) from None
    except (OSError, UnicodeDecodeError) as err:
        raise SoeInputError(Problem(str(path), "", "", str(path), f"cannot read file: {err}")) from None
    except tomllib.TOMLDecodeError:
        raise toml_syntax_error(path) from None  # worded and located as in any other data file
    if is_variant_doc(data):
        raise SoeInputError(Problem(str(path), "", "", str(path), "a design variant, not a ruleset or rules overlay",
                                    "use it with compare / sensitivity / tune (--variant) or as a sweep overlay "
                                    "(variant = ...); a rules overlay has the tables of data/rules/soe.toml, "
                                    "e.g. [combat] flank_penalty = 1 with [meta] base = \"soe\""))
    return data


def is_variant_doc(doc: dict) -> bool:
    """Whether a parsed TOML is a design variant (docs/designer.md "Variant files": a top-level
    ``name`` or ``[rules]``), which a ruleset or rules overlay never has."""
    return "rules" in doc or "name" in doc


def rule_tables() -> tuple[str, ...]:
    """The tables of a ruleset (``combat``, ``initiative``, …; not ``meta``), from the schema."""
    return tuple(k for k, v in _schema().items() if isinstance(v, dict) and k != "meta")


def _merge(base: dict, overlay: dict, file: str, prefix: str, problems: list[Problem],
           origins: dict | None = None) -> None:
    """Deep-merge ``overlay`` into ``base`` in place; unknown keys and the keys of :data:`ROSTER_BOUNDS`
    become problems. ``origins`` (dotted key → file) records which file set each value."""
    for key, value in overlay.items():
        dotted = f"{prefix}{key}"
        if key not in base:
            problems.append(
                Problem(file, "", dotted, value, "unknown rule key", did_you_mean(key, base.keys()))
            )
            continue
        if isinstance(base[key], dict):
            if not isinstance(value, dict):
                problems.append(Problem(file, "", dotted, value, "expected a table"))
                continue
            _merge(base[key], value, file, dotted + ".", problems, origins)
        elif dotted in ROSTER_BOUNDS:  # read by the roster check only: the overlay would change nothing
            problems.append(roster_bound_problem(file, "", dotted, value))
        else:
            expected = type(base[key])
            ok = isinstance(value, expected) or (expected is float and isinstance(value, int))
            if expected is int and isinstance(value, bool):
                ok = False
            if not ok:
                problems.append(
                    Problem(file, "", dotted, value, f"expected {_type_name(base[key])}")
                )
                continue
            base[key] = value
            if origins is not None:
                origins[dotted] = file


# The schema every complete ruleset follows: the keys, tables and value types of the package's own
# SoE ruleset (not $SOE_SIM_DATA's, which is what is being checked when a user replaces it).
_SCHEMA_FILE = Path(__file__).resolve().parent.parent / "data" / "rules" / "soe.toml"

# Keys whose value must be at least 1 (every other integer rule value must be at least 0): a divisor,
# the lowest initiative level (SoE 6.1), sizes and ranges without which no game can be played.
_AT_LEAST_ONE = (
    "combat.half_strength_divisor", "initiative.min_level", "cards.deck_size", "cards.hand_limit",
    "movement.infantry", "movement.cavalry", "movement.leader", "movement.max_blocks_per_link",
    "stacking.max_blocks", "round.operation_phases", "blocks.brigade_max_sp", "blocks.division_max_sp",
    "blocks.leader_sp",
)

# Every number in a ruleset is at most RULE_MAX (the engine keeps rule values in int8..int64 arrays and
# constants; SoE's largest is 18) except the keys of _AT_MOST.
RULE_MAX = 100
_AT_MOST = {"cards.deck_size": 1000}

# The item type of each list rule whose SoE value is empty (there the schema cannot show it), as an
# example item: every list rule's items are type-checked (a list rule missing here and empty in soe.toml
# fails tests/test_input_errors.py).
_LIST_ITEM = {"internment.return_areas": "", "internment.return_delays": 0}

# Rules the engine honours at one value only: (value, why). The battle kernel moves the initiative by at
# most one level per battle whatever the rule says (battle/nb.py resolve_nb).
_ONLY_VALUE = {
    "initiative.max_change_per_battle": (1, "the engine moves the initiative by one level per battle (SoE 6.1, "
                                            "EatS II.4.3); other values are not implemented"),
}

# Rules that only bound the roster file: soe_sim.data.blocks checks `max_sp` of blocks/blocks.csv against
# them in the rules/soe.toml of the same data directory, and no game reads them. An overlay, a ruleset with a
# base, a variant or a design knob setting one would change nothing, so it is an error (:func:`_merge`).
ROSTER_BOUNDS = ("blocks.brigade_max_sp", "blocks.division_max_sp", "blocks.leader_sp")


def roster_bound_problem(file: str, entry: str, key: str, value, what: str = "an overlay or variant") -> Problem:
    """The error for ``what`` setting ``key``, one of :data:`ROSTER_BOUNDS`."""
    return Problem(file, entry, key, value,
                   f"this key only bounds the roster (blocks/blocks.csv `max_sp`, checked when the data is read); "
                   f"{what} cannot change it",
                   "edit `max_sp` in blocks/blocks.csv (and this key in rules/soe.toml) of a copy of data/ "
                   "(SOE_SIM_DATA)")


@lru_cache(maxsize=1)
def _schema() -> dict:
    with open(_SCHEMA_FILE, "rb") as fh:
        schema = tomllib.load(fh)
    schema.pop("sources", None)
    schema.get("meta", {}).pop("base", None)
    return schema


def _type_name(value) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "list",
            dict: "table"}.get(type(value), type(value).__name__)


def _same_kind(value, like) -> bool:
    if isinstance(like, bool) or isinstance(value, bool):
        return isinstance(value, bool) and isinstance(like, bool)
    if isinstance(like, float):
        return isinstance(value, (int, float))
    return isinstance(value, type(like))


def _check_values(values: dict, origins: dict, files: list[str], problems: list[Problem]) -> None:
    """Check a merged ruleset against the schema: every key present with its type (a partial file
    loaded as a ruleset of its own is the usual cause, hence the hint), no unknown key, numbers
    ``>= 0`` (``>= 1`` for :data:`_AT_LEAST_ONE`) and ``<= RULE_MAX`` (:data:`_AT_MOST`),
    ``initiative.min_level <= max_level``. Problems name
    the file that set the value."""
    first = files[0] if files else "rules"
    partial_hint = ("a file with only some rules is an overlay: add [meta] base = \"soe\" to it, or give "
                    "it as an overlay (odds --rules, a sweep's [[overlays]])")

    missing: list[tuple[str, object]] = []

    def walk(node: dict, ref: dict, prefix: str) -> None:
        for key, like in ref.items():
            dotted = prefix + key
            if key not in node:
                missing.append((dotted, like))
                continue
            value = node[key]
            where = origins.get(dotted, first)
            if isinstance(like, dict):
                if not isinstance(value, dict):
                    problems.append(Problem(where, "", dotted, value, "expected a table"))
                else:
                    walk(value, like, dotted + ".")
                continue
            if not _same_kind(value, like):
                problems.append(Problem(where, "", dotted, value, f"expected {_type_name(like)}"))
                continue
            items = value if isinstance(value, list) else [value]
            item = (like[0] if like else _LIST_ITEM.get(dotted)) if isinstance(value, list) else None
            if item is not None and not all(_same_kind(v, item) for v in value):
                problems.append(Problem(where, "", dotted, value, f"expected a list of {_type_name(item)}s"))
                continue
            low = 1 if dotted in _AT_LEAST_ONE else 0
            high = _AT_MOST.get(dotted, RULE_MAX)
            numbers = [v for v in items if isinstance(v, (int, float)) and not isinstance(v, bool)]
            if any(v < low for v in numbers):
                problems.append(Problem(where, "", dotted, value, f"must be at least {low}"))
            elif any(not v <= high for v in numbers):  # also NaN
                problems.append(Problem(where, "", dotted, value, f"must be at most {high}"))
            elif dotted in _ONLY_VALUE and value != _ONLY_VALUE[dotted][0]:
                only, why = _ONLY_VALUE[dotted]
                problems.append(Problem(where, "", dotted, value, f"must be {only}: {why}"))
        for key in node:
            if key not in ref:
                problems.append(Problem(origins.get(prefix + key, first), "", prefix + key, node[key],
                                        "unknown rule key", did_you_mean(key, ref.keys())))

    walk(values, _schema(), "")
    if len(missing) > 3:  # a partial file read as a whole ruleset: one line, not one per key
        names = ", ".join(k for k, _ in missing[:4])
        problems.insert(0, Problem(first, "", "", f"{len(missing)} keys missing",
                                   f"not a complete ruleset (missing {names}, …)", partial_hint))
    else:
        for dotted, like in missing:
            if isinstance(like, dict):
                problems.append(Problem(first, "", dotted, None, "missing rule table", partial_hint))
            else:
                problems.append(Problem(first, "", dotted, None, f"missing rule key ({_type_name(like)})",
                                        f"the SoE value is {like!r} (data/rules/soe.toml)"))
    ini = values.get("initiative", {})
    lo, hi = ini.get("min_level"), ini.get("max_level")
    if isinstance(lo, int) and isinstance(hi, int) and not isinstance(lo, bool) and lo > hi:
        problems.append(Problem(origins.get("initiative.max_level", first), "", "initiative.max_level", hi,
                                f"must be at least initiative.min_level ({lo})"))


def _leaves(node: dict, file: str, prefix: str = "", out: dict | None = None) -> dict:
    out = {} if out is None else out
    for key, value in node.items():
        if isinstance(value, dict):
            _leaves(value, file, f"{prefix}{key}.", out)
        else:
            out[f"{prefix}{key}"] = file
    return out


class Rules:
    """A ruleset: the base file plus any overlays, as nested dicts with helpers.

    Parameters
    ----------
    values : dict
        Merged rule tables (``values["combat"]["flank_penalty"]`` …).
    sources : dict
        Dotted key → rulebook citation.
    files : list of str
        Files merged, base first.
    """

    def __init__(self, values: dict, sources: dict, files: list[str]):
        self.values = values
        self.sources = sources
        self.files = files

    def __getitem__(self, key: str) -> Any:
        node: Any = self.values
        for part in key.split("."):
            node = node[part]
        return node

    @property
    def name(self) -> str:
        return self.values["meta"]["name"]

    @property
    def label(self) -> str:
        """The ruleset as output names it: ``meta.id`` (``"soe"``, ``"eats"``), followed by the file name of
        every file read from outside the data's ``rules/`` folder (a ruleset or overlay given as a path, a
        variant): ``"soe+b_noloss.toml"``. So a custom file is never reported as plain ``soe``. The rules
        of a copy of ``data/`` given by path (``<root>/rules/*.toml``, :func:`_rules_home`) are named as
        those of ``$SOE_SIM_DATA`` are: ``"soe"``, not ``"soe+soe.toml"``."""
        custom = [Path(f).name for f in self.files
                  if Path(f).resolve().parent != _rules_home(Path(f)).resolve()]
        return "+".join([str(self.values["meta"]["id"]), *custom])

    def combat_constants(self) -> CombatRules:
        """Kernel-ready combat constants (validated: chart rows ascending, losses ≥ 0)."""
        c = self.values["combat"]
        ini = self.values["initiative"]
        thresholds = np.asarray(c["chart_min_value"], dtype=np.int64)
        losses = np.asarray(c["chart_losses"], dtype=np.int64)
        problems = []
        file = self.files[-1]
        if len(thresholds) != len(losses) or len(thresholds) == 0:
            problems.append(
                Problem(file, "combat", "chart_losses", losses.tolist(),
                        "must have one entry per chart_min_value entry")
            )
        elif thresholds[0] != c["min_combat_value"] or np.any(np.diff(thresholds) <= 0):
            problems.append(
                Problem(file, "combat", "chart_min_value", thresholds.tolist(),
                        "must start at min_combat_value and be strictly increasing")
            )
        if np.any(losses < 0):
            problems.append(Problem(file, "combat", "chart_losses", losses.tolist(), "must be ≥ 0"))
        if problems:
            raise SoeInputError(problems)
        return CombatRules(
            chart_min_value=thresholds,
            chart_losses=losses,
            min_combat_value=int(c["min_combat_value"]),
            flank_penalty=int(c["flank_penalty"]),
            hand_card_bonus=int(c["hand_card_bonus"]),
            garrison_sp=int(c["garrison_sp"]),
            half_strength_divisor=int(c["half_strength_divisor"]),
            fortification_negates_flank=int(c["fortification_negates_flank"]),
            fortification_loss_reduction=int(c["fortification_loss_reduction"]),
            defend_negates_flank=int(c["defend_negates_flank"]),
            defend_loss_reduction=int(c["defend_loss_reduction"]),
            support_negates_flank_per_direction=int(c["support_negates_flank_per_direction"]),
            great_victory_losses=int(c["great_victory_losses"]),
            great_victory_vp=int(c["great_victory_vp"]),
            garrison_loss_counts_for_outcome=bool(c["garrison_loss_counts_for_outcome"]),
            garrison_loss_counts_for_great_victory=bool(
                c["garrison_loss_counts_for_great_victory"]
            ),
            garrison_loss_counts_for_initiative=bool(c["garrison_loss_counts_for_initiative"]),
            withdraw_loss=int(c["withdraw_loss"]),
            withdraw_cavalry_exempt_vs_infantry=bool(c["withdraw_cavalry_exempt_vs_infantry"]),
            withdraw_blocked_extra_loss=int(c["withdraw_blocked_extra_loss"]),
            initiative_min_level=int(ini["min_level"]),
            initiative_max_level=int(ini["max_level"]),
            initiative_max_change=int(ini["max_change_per_battle"]),
            initiative_gain_by_loss_difference=bool(ini["gain_by_loss_difference"]),
            garrison_first_loss_only_if_defender_loses=bool(c["garrison_first_loss_only_if_defender_loses"]),
            rail_moved_strength_zero=bool(c["rail_moved_strength_zero"]),
            choose_after_draw=bool(c["choose_after_draw"]),
            max_blocks=int(self.values["stacking"]["max_blocks"]),
            max_blocks_per_link=int(self.values["movement"]["max_blocks_per_link"]),
        )

    def __repr__(self) -> str:
        return f"Rules({self.name!r}, files={self.files})"


def builtin_rulesets() -> list[str]:
    """Names of the built-in rulesets (``data/rules/<name>.toml``)."""
    return sorted(p.stem for p in (data_dir() / "rules").glob("*.toml"))


def _rules_home(path: Path) -> Path:
    """The ``rules/`` folder whose rulesets the ``[meta] base`` of ruleset file ``path`` names: that of the
    data root the file belongs to (``<root>/rules/<file>`` beside ``<root>/map/areas.csv``: a copy of
    ``data/`` given by path, as :func:`soe_sim.data.scenario.data_root_of` finds a scenario's root), else
    that of the data (``$SOE_SIM_DATA`` or the built-in ``data/``). So ``base = "soe"`` in a copy's
    ``rules/eats.toml`` is the copy's ``soe.toml``, by path as under ``$SOE_SIM_DATA``."""
    folder = Path(path).parent  # as given (relative stays relative: messages name the base as the file)
    real = folder.resolve()
    if real.name == "rules" and (real.parent / "map" / "areas.csv").is_file():
        return folder
    return data_dir() / "rules"


def base_files(path: Path | str) -> list[Path]:
    """The files the ``[meta] base`` chain of ruleset file ``path`` names, nearest first (resolved): what
    ``soe-sim validate`` checks before the file, whose own check would only repeat a base's problems. The
    chain stops at a file it cannot read, a base it cannot find and a cycle (:func:`load_rules` reports them)."""
    out: list[Path] = []
    path = Path(path)
    while True:
        try:
            meta = load_toml(path).get("meta")
            path = _base_path(meta["base"], path)
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, SoeInputError, AttributeError, KeyError,
                TypeError):
            return out
        if path.resolve() in out:
            return out
        out.append(path.resolve())


def _ruleset_path(name_or_path: str | Path, home: Path | None = None) -> Path:
    """The file of a ruleset name (``<home>/<name>.toml``; ``home`` defaults to the data's ``rules/``)
    or path; an unknown name is a :class:`~soe_sim.errors.SoeInputError` listing those of ``home``."""
    path = Path(name_or_path)
    if path.suffix == ".toml":
        return path
    own = home is not None and home.resolve() != (data_dir() / "rules").resolve()
    home = data_dir() / "rules" if home is None else home
    path = home / f"{name_or_path}.toml"
    if not path.exists():
        if own:  # a copy's ruleset names a base the copy lacks: never the built-in one in silence
            names = sorted(p.stem for p in home.glob("*.toml"))
            hint = did_you_mean(str(name_or_path), names)
            raise SoeInputError(Problem(
                "ruleset", "", "", str(name_or_path), f"unknown ruleset in {display_path(home)}",
                (hint + "; " if hint else "") + f"its rulesets: {', '.join(names) or 'none'}"))
        names = builtin_rulesets()
        if (data_dir() / "variants" / f"{name_or_path}.toml").is_file():
            raise SoeInputError(Problem(
                "ruleset", "", "", str(name_or_path), "a design variant, not a ruleset or rules overlay",
                f"use it with compare / sensitivity / tune (--variant {name_or_path}) or as a sweep overlay "
                f"(variant = \"{name_or_path}\"); rulesets: {', '.join(names)}"))
        hint = did_you_mean(str(name_or_path), names)
        raise SoeInputError(Problem(
            "ruleset", "", "", str(name_or_path), "unknown ruleset",
            (hint + "; " if hint else "") + f"built-in rulesets: {', '.join(names)} (or a path to a .toml file)"))
    return path


def _base_path(parent: str, path: Path) -> Path:
    """:func:`_ruleset_path` of the ``[meta] base`` of ``path``, within the data root of ``path``
    (:func:`_rules_home`); an unknown name is blamed on that file's key."""
    try:
        return _ruleset_path(parent, _rules_home(path))
    except SoeInputError as err:
        raise SoeInputError([Problem(str(path), "meta", "base", p.value, p.message, p.suggestion)
                             for p in err.problems]) from None


def _load_chain(name: str, chain: tuple[str, ...] = ()) -> tuple[dict, dict, list[str], dict]:
    """A ruleset file merged over the file its ``[meta] base`` names (recursively), so that a variant
    such as ``eats`` (``base = "soe"``) is a complete ruleset of its own. Also returns which file set
    each value (dotted key → file)."""
    path = _ruleset_path(name)
    data = _read_toml(path)
    sources = data.pop("sources", {})
    meta = data.get("meta", {})
    parent = meta.pop("base", None) if isinstance(meta, dict) else None
    if parent is None:
        return data, sources, [str(path)], _leaves(data, str(path))
    chain += (str(path.resolve()),)  # the files of the chain so far: a base names one of them in a cycle
    base = _base_path(parent, path) if isinstance(parent, str) else None
    if base is None or str(base.resolve()) in chain:
        raise SoeInputError(Problem(str(path), "meta", "base", parent,
                                    "expected the name of another ruleset (no cycles)", "e.g. base = \"soe\""))
    values, base_sources, files, origins = _load_chain(str(base), chain)
    problems: list[Problem] = []
    _merge(values, data, str(path), "", problems, origins)
    if problems:
        raise SoeInputError(problems)
    base_sources.update(sources)
    return values, base_sources, files + [str(path)], origins


def _rules_stamp(ruleset: str, overlays: tuple[str, ...]) -> tuple:
    """``(path, mtime_ns, size)`` of the rules files a load may read (the rules folder of the data,
    a ruleset or overlay given as a path): part of the cache key, so an edited file is read again."""
    files = list((data_dir() / "rules").glob("*.toml"))
    for x in (ruleset, *overlays):
        if Path(x).suffix == ".toml":  # and the rulesets its base may name (a copy's rules/)
            files += [Path(x), *_rules_home(Path(x)).glob("*.toml")]
    return file_stamps(files)


def _same_files(a: Iterable[str], b: Iterable[str]) -> bool:
    return [Path(f).resolve() for f in a] == [Path(f).resolve() for f in b]


def _overlay_base(parent, path: Path, loaded: tuple) -> tuple:
    """``loaded`` (``values, sources, files, origins`` so far) made ready for an overlay whose ``[meta]
    base`` is ``parent``: unchanged when ``parent`` is one of the files already merged (an overlay of
    ``soe`` applies over ``eats`` too); the chain of ``parent`` when what is merged so far is the start
    of that chain (``soe`` plus an overlay of ``eats`` is ``eats`` plus the overlay: the base is honoured,
    never dropped); otherwise an error, since the overlay would change a ruleset it was not written for."""
    files = loaded[2]
    if not isinstance(parent, str):
        raise SoeInputError(Problem(str(path), "meta", "base", parent, "expected the name of another ruleset",
                                    "e.g. base = \"soe\""))
    parent_path = _base_path(parent, path)
    if any(_same_files([f], [parent_path]) for f in files):
        return loaded
    chain = _load_chain(str(parent_path))
    if _same_files(files, chain[2][:len(files)]):
        return chain
    names = " + ".join(Path(f).stem for f in files)
    raise SoeInputError(Problem(str(path), "meta", "base", parent,
                                f"this overlay is based on {parent}, but it would be applied over {names}",
                                f"apply it over {parent} (a ruleset or an earlier overlay such as "
                                f"`--rules {parent}`), or change its base"))


@lru_cache(maxsize=32)
def _load_cached(base: str, overlays: tuple[str, ...], stamp: tuple = ()) -> Rules:
    loaded = _load_chain(base)
    problems: list[Problem] = []
    for overlay in overlays:
        path = _ruleset_path(overlay)
        data = _read_toml(path)
        meta = data.get("meta", {})
        parent = meta.pop("base", None) if isinstance(meta, dict) else None
        if parent is not None:  # honoured: an EatS overlay given to `odds --rules` is EatS + its change
            loaded = _overlay_base(parent, path, loaded)
        values, sources, files, origins = loaded
        sources.update(data.pop("sources", {}))
        _merge(values, data, str(path), "", problems, origins)
        files.append(str(path))
    values, sources, files, origins = loaded
    if not problems:
        _check_values(values, origins, files, problems)
    if problems:
        raise SoeInputError(problems)
    return Rules(values, sources, files)


def check_rules(rules: Rules, file: str | None = None) -> None:
    """Check a :class:`Rules` whose values were changed in memory (a design knob, a sweep value)
    against the ruleset schema and ranges of :func:`load_rules`; problems name ``file`` (default: the
    last file the rules were read from). Raises :class:`~soe_sim.errors.SoeInputError`."""
    where = file or (rules.files[-1] if rules.files else "rules")
    problems: list[Problem] = []
    _check_values(rules.values, {k: where for k in _leaves(rules.values, where)}, [where], problems)
    if problems:
        raise SoeInputError(problems)


def load_rules(ruleset: str | Path = "soe", overlays: Iterable[str | Path] = ()) -> Rules:
    """Load a ruleset and apply overlays in order.

    Parameters
    ----------
    ruleset : str or Path
        Built-in name (``"soe"`` → ``data/rules/soe.toml``, ``"eats"`` → The Eagle and the Star,
        ``data/rules/eats.toml``) or a path to a TOML file. A file whose ``[meta]`` has
        ``base = "<name>"`` is merged over that ruleset (docs/data-format.md). An unknown name is a
        :class:`~soe_sim.errors.SoeInputError` with a suggestion.
    overlays : iterable of str or Path
        Variant files whose keys replace the base ones; unknown keys are an error naming the
        file and key with a suggestion. An overlay's ``[meta] base`` is honoured: it must be one of
        the files merged so far, or those files the start of its chain (then the rest of the chain
        is merged first: ``load_rules("soe", [f])`` with ``base = "eats"`` in ``f`` is EatS plus
        ``f``); any other base is a :class:`~soe_sim.errors.SoeInputError`.

    Returns
    -------
    Rules
        A fresh copy (callers may mutate it without affecting the cache).
    """
    overlays = tuple(str(o) for o in overlays)
    cached = _load_cached(str(ruleset), overlays, _rules_stamp(str(ruleset), overlays))
    return Rules(copy.deepcopy(cached.values), dict(cached.sources), list(cached.files))


def default_combat_constants(ruleset: str = "soe") -> CombatRules:
    """Cached combat constants of a built-in ruleset (hot path of :func:`battle_odds`), read again when
    a rules file has changed (the stamp of :func:`load_rules`)."""
    return _default_combat_constants(ruleset, _rules_stamp(ruleset, ()))


@lru_cache(maxsize=32)
def _default_combat_constants(ruleset: str, stamp: tuple) -> CombatRules:
    return _load_cached(ruleset, (), stamp).combat_constants()
