"""Rule variants: TOML overlays on the rules, the card decks and a scenario's values.

A variant file (``data/variants/*.toml``, docs/designer.md) holds only what it changes::

    name = "flank-1"
    description = "Flank attacks cost 1 SP"
    ruleset = "soe"                 # optional base ruleset (data/rules/<name>.toml)
    extends = ["other.toml"]        # optional: variants applied first (paths relative to this file)

    [rules]                         # any key of data/rules/<ruleset>.toml
    combat.flank_penalty = 1
    combat.chart_losses.5 = 6       # one entry of a list (index from 0); a whole list replaces it

    [cards.polish]                  # deck composition
    remove = [3, 9]                 # removed before play
    [cards.polish.change.7]         # card 7 with these columns replaced (data/cards/*.csv columns)
    combat_modifier = 2
    [[cards.soviet.add]]            # a new card (id = the next free number)
    name = "Reserves"
    orders = 2
    combat_modifier = 3
    event_kind = "none"

    [scenario]                      # the scenario's own tables (docs/data-format.md)
    vp = 2                          # shorthand: the signed VP track at the start (+ Polish, - Soviet)
    initiative.north.level = 2
    objective.0.vp = 3              # one entry of an array of tables (index from 0)

Every key is checked: an unknown key is an error naming the file and the key, with a suggestion.
Variants compose (:func:`compose`, ``extends``, ``A.toml+B.toml`` on the command line): later
variants win key by key, card removals add up, card changes merge per card, added cards accumulate.

A *knob* is a numeric value named by the dotted key a variant file would use
(``rules.combat.flank_penalty``, ``scenario.vp``, ``scenario.objective.0.vp``,
``cards.polish.change.7.combat_modifier``); :meth:`Variant.with_knob` sets one.

:func:`variant_setup` builds the engine's GameSetup of a scenario under a variant (cached); the
sweep (:mod:`soe_sim.sim.sweep`) builds the same set-up on its workers from :meth:`Variant.spec`.
"""
from __future__ import annotations

import copy
import dataclasses
import functools
import json
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from soe_sim._paths import data_dir
from soe_sim.data._io import Problems, load_toml, toml_syntax_error
from soe_sim.errors import Problem, SoeInputError, did_you_mean

__all__ = [
    "Variant", "BASE", "Knob", "Resolved", "load_variant", "parse_variant", "compose", "resolve",
    "variant_setup", "parse_knob", "knob_value", "knob_domain", "list_knobs", "builtin_variants", "VARIANT_KEYS",
    "KNOB_DOMAINS",
]

VARIANT_KEYS = ("name", "description", "ruleset", "extends", "rules", "cards", "scenario", "source", "notes")
SECTIONS = ("rules", "scenario", "cards")
CARD_SIDES = ("polish", "soviet")
CARD_KEYS = ("remove", "change", "add")
#: Deck columns a variant may set (data/cards/*.csv; ``id`` is the card's place, not a value).
CARD_FIELDS = ("name", "orders", "combat_modifier", "infantry_cubes", "cavalry_cubes", "allied_cubes", "event_kind",
               "front", "remove_after_event", "effect", "text", "source")
CARD_NUMERIC = ("orders", "combat_modifier", "infantry_cubes", "cavalry_cubes", "allied_cubes")
_ADD_REQUIRED = ("name", "orders", "combat_modifier", "event_kind")

_ANY = None  # a scenario leaf whose value read_scenario checks
_LIST = "list"  # an array of tables
_SIDES = {"polish": _ANY, "soviet": _ANY}
_CUBES = {"infantry": _ANY, "cavalry": _ANY, "allied": _ANY}
#: Scenario keys a variant may set when the scenario file does not have them (docs/data-format.md).
SCENARIO_SCHEMA: dict = {
    "name": _ANY, "description": _ANY, "players": _ANY, "notes": _ANY,
    "start": {"round": _ANY, "phase": _ANY}, "end": {"round": _ANY, "phase": _ANY},
    "vp": {"side": _ANY, "value": _ANY},
    "initiative": {"north": {"side": _ANY, "level": _ANY}, "south": {"side": _ANY, "level": _ANY}},
    "garrison": _LIST, "deployment": _LIST, "reinforcement": _LIST, "special_rule": _LIST, "objective": _LIST,
    "force_pool": dict(_SIDES), "removed_cards": dict(_SIDES),
    "cubes": {"polish": dict(_CUBES), "soviet": dict(_CUBES)},
    "victory": {"kind": _ANY, "immediate": _LIST, "description": _ANY},
}
_PROVENANCE = ("source", "sources")


def variants_dir() -> Path:
    """``data/variants`` of the data directory (the built-in example variants)."""
    return data_dir() / "variants"


def builtin_variants() -> list[str]:
    """Names of the variant files in ``data/variants`` (``soe-sim compare --variant NAME``)."""
    return sorted(p.stem for p in variants_dir().glob("*.toml"))


# --------------------------------------------------------------------------------------------------
# The variant


@dataclass(frozen=True)
class Variant:
    """A rule variant: overlays on the ruleset, the two decks and the scenario.

    Attributes
    ----------
    name, description : str
    ruleset : str or None
        Base ruleset (``data/rules/<name>.toml`` or a path); None = ``"soe"``.
    rules : dict
        Nested rule keys (``{"combat": {"flank_penalty": 1}}``); a dict with index keys
        (``{"5": 6}``) changes entries of a list.
    scenario : dict
        Nested scenario keys; ``vp`` may be an int (the signed VP track, + Polish).
    cards : dict
        ``{side: {"remove": [ids], "change": {id: {column: value}}, "add": [{column: value}]}}``.
    files : tuple of str
        Files the variant was read from (composition order).
    """

    name: str = "base"
    description: str = ""
    ruleset: str | None = None
    rules: dict = field(default_factory=dict, compare=False)
    scenario: dict = field(default_factory=dict, compare=False)
    cards: dict = field(default_factory=dict, compare=False)
    files: tuple = ()

    # -- identity -------------------------------------------------------------------------------
    def spec(self) -> dict:
        """JSON-able description (what a sweep worker needs to rebuild the variant)."""
        return {"name": self.name, "description": self.description, "ruleset": self.ruleset,
                "rules": self.rules, "scenario": self.scenario, "cards": _cards_json(self.cards),
                "files": list(self.files)}

    @classmethod
    def from_spec(cls, spec: dict) -> "Variant":
        """Inverse of :meth:`spec`."""
        return cls(name=spec.get("name", "variant"), description=spec.get("description", ""),
                   ruleset=spec.get("ruleset"), rules=copy.deepcopy(spec.get("rules") or {}),
                   scenario=copy.deepcopy(spec.get("scenario") or {}),
                   cards=_cards_from_json(spec.get("cards") or {}), files=tuple(spec.get("files") or ()))

    def content_key(self) -> str:
        """JSON of what changes the game (not the name): equal keys play the same games."""
        return json.dumps({"ruleset": self.ruleset or "soe", "rules": self.rules, "scenario": self.scenario,
                           "cards": _cards_json(self.cards)}, sort_keys=True, default=str)

    def cache_key(self) -> str:
        """Key of the set-up caches: the content plus the name and files (they label the messages)."""
        spec = self.spec()
        spec["description"] = ""
        return json.dumps(spec, sort_keys=True, default=str)

    @property
    def is_base(self) -> bool:
        """True when the variant changes nothing (the ruleset ``soe`` as it is)."""
        return (self.ruleset in (None, "soe") and not self.rules and not self.scenario
                and not any(_card_side_nonempty(v) for v in self.cards.values()))

    def changes(self) -> list[str]:
        """The changes as ``dotted.key = value`` lines (for tables and reports)."""
        out = []
        if self.ruleset not in (None, "soe"):
            out.append(f"ruleset = {self.ruleset!r}")
        for sec in ("rules", "scenario"):
            for k, v in _flatten(getattr(self, sec)):
                out.append(f"{sec}.{k} = {v!r}")
        for side, t in sorted(self.cards.items()):
            if t.get("remove"):
                out.append(f"cards.{side}.remove = {sorted(t['remove'])}")
            for cid, ch in sorted((t.get("change") or {}).items()):
                for k, v in ch.items():
                    out.append(f"cards.{side}.change.{cid}.{k} = {v!r}")
            for card in t.get("add") or []:
                out.append(f"cards.{side}.add = {card.get('name', '?')!r}")
        return out

    # -- knobs --------------------------------------------------------------------------------------
    def with_knob(self, knob, value, name: str | None = None) -> "Variant":
        """This variant with one knob set to ``value`` (an int knob takes an integral value)."""
        k = parse_knob(knob) if isinstance(knob, str) else knob
        value = k.coerce(value)
        overlay: dict = {}
        node = overlay
        path = list(k.path)
        if k.section == "cards":
            side, _, cid, col = path
            overlay = {side: {"change": {int(cid): {col: value}}}}
        else:
            for p in path[:-1]:
                node = node.setdefault(p, {})
            node[path[-1]] = value
        label = f"{k.name}={_fmt_value(value)}"
        one = Variant(name=label, **{k.section: overlay})
        out = compose(self, one)
        return Variant(name=name or (label if self.is_base and self.name == "base" else f"{self.name}+{label}"),
                       description=out.description, ruleset=out.ruleset, rules=out.rules, scenario=out.scenario,
                       cards=out.cards, files=out.files)

    def __repr__(self) -> str:
        return f"Variant({self.name!r}, {len(self.changes())} changes)"


BASE = Variant("base", "the ruleset and the scenario as they are")


def _fmt_value(v) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v)) if abs(v) < 1e15 else repr(v)
    return str(v)


def _card_side_nonempty(t: dict) -> bool:
    return bool(t.get("remove") or t.get("change") or t.get("add"))


def _cards_json(cards: dict) -> dict:
    return {side: {"remove": sorted(int(c) for c in t.get("remove") or []),
                   "change": {str(k): dict(v) for k, v in sorted((t.get("change") or {}).items())},
                   "add": [dict(c) for c in t.get("add") or []]}
            for side, t in sorted(cards.items()) if _card_side_nonempty(t)}


def _cards_from_json(cards: dict) -> dict:
    return {side: {"remove": [int(c) for c in t.get("remove") or []],
                   "change": {int(k): dict(v) for k, v in (t.get("change") or {}).items()},
                   "add": [dict(c) for c in t.get("add") or []]}
            for side, t in cards.items()}


def _flatten(d: dict, prefix: str = ""):
    for k, v in d.items():
        if isinstance(v, dict) and v:
            yield from _flatten(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v


# --------------------------------------------------------------------------------------------------
# Composition


def _deep_merge(a: dict, b: dict) -> dict:
    """``b`` over ``a`` (new dict): tables merge, anything else is replaced."""
    out = copy.deepcopy(a)
    for k, v in b.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def compose(*variants: Variant, name: str | None = None) -> Variant:
    """Apply ``variants`` in order: later ones win key by key; card removals add up, card changes
    merge per card, added cards accumulate; the last ruleset named wins."""
    vs = [v for v in variants if v is not None]
    if not vs:
        return BASE
    rules: dict = {}
    scenario: dict = {}
    cards: dict = {}
    ruleset = None
    files: list[str] = []
    for v in vs:
        rules = _deep_merge(rules, v.rules)
        scenario = _deep_merge(scenario, v.scenario)
        for side, t in v.cards.items():
            cur = cards.setdefault(side, {"remove": [], "change": {}, "add": []})
            cur["remove"] = cur["remove"] + [int(c) for c in t.get("remove") or [] if int(c) not in cur["remove"]]
            for cid, ch in (t.get("change") or {}).items():
                cur["change"][int(cid)] = {**cur["change"].get(int(cid), {}), **ch}
            cur["add"] = cur["add"] + [dict(c) for c in t.get("add") or []]
        if v.ruleset is not None:
            ruleset = v.ruleset
        files.extend(f for f in v.files if f not in files)
    named = [v for v in vs if not (v.is_base and v.name == "base")]
    if name is None:
        name = "+".join(v.name for v in named) if named else "base"
    desc = "; ".join(v.description for v in named if v.description)
    return Variant(name=name, description=desc, ruleset=ruleset, rules=rules, scenario=scenario, cards=cards,
                   files=tuple(files))


# --------------------------------------------------------------------------------------------------
# Reading and checking variant files


def _is_index(key) -> bool:
    return isinstance(key, int) or (isinstance(key, str) and key.isdigit())


def _type_ok(expected, value) -> bool:
    if isinstance(expected, bool):
        return isinstance(value, bool)
    if isinstance(expected, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(expected, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(expected, str):
        return isinstance(value, str)
    return True


def _type_name(v, plural: bool = False) -> str:
    if plural:
        return {bool: "true / false values", int: "integers", float: "numbers", str: "strings"}.get(
            type(v), type(v).__name__ + "s")
    return {bool: "true or false", int: "an integer", float: "a number", str: "a string"}.get(type(v), type(v).__name__)


def merge_checked(base, overlay: dict, file: str, section: str, problems: list, *, schema=None,
                  strict: bool = True, prefix: str = ""):
    """Merge ``overlay`` into ``base`` (a dict or a list; changed in place).

    Index keys (``"3"``) change one entry of a list; a list replaces a list. ``strict``: every key
    must exist in ``base`` and every value keep its type (rules). Otherwise (scenarios) keys missing
    from ``base`` are accepted when ``schema`` knows them and values are left to the scenario loader.
    Problems name ``file``, the ``[section]`` and the dotted key, with a suggestion.
    """
    where = f"[{section}]"
    for key, value in overlay.items():
        dotted = f"{prefix}{key}"
        if isinstance(base, list):
            if not _is_index(key) or not 0 <= int(key) < len(base):
                problems.append(Problem(file, where, dotted, value,
                                        f"not an entry of the list (it has {len(base)}: indices 0..{len(base) - 1})",
                                        "give a whole list to replace it"))
                continue
            k = int(key)
            cur = base[k]
            sub_schema = schema if schema not in (None, _LIST) else None
        else:
            if key in _PROVENANCE or (isinstance(key, str) and key.endswith("_source")):
                if not strict:
                    base[key] = value
                continue
            k = key
            known = isinstance(schema, dict) and key in schema
            if key not in base:
                if strict or not known:
                    choices = list(base.keys()) + (list(schema) if isinstance(schema, dict) else [])
                    problems.append(Problem(file, where, dotted, value if not isinstance(value, dict) else "{…}",
                                            "unknown key", did_you_mean(str(key), choices)
                                            or (f"known keys here: {', '.join(sorted(set(map(str, choices))))}"
                                                if choices else None)))
                    continue
                if isinstance(value, dict) and value and all(_is_index(x) for x in value):
                    problems.append(Problem(file, where, dotted, "{…}",
                                            f"there is no {key} list here to change an entry of (this scenario has "
                                            f"none)", f"give the whole list: [[{section}.{dotted}]] tables"))
                    continue
                base[key] = copy.deepcopy(value)
                continue
            cur = base[key]
            sub_schema = schema.get(key) if isinstance(schema, dict) else None
        if isinstance(cur, dict):
            if not isinstance(value, dict):
                problems.append(Problem(file, where, dotted, value, "expected a table",
                                        f"e.g. {section}.{dotted}.<key> = …"))
                continue
            merge_checked(cur, value, file, section, problems, schema=sub_schema, strict=strict, prefix=dotted + ".")
        elif isinstance(cur, list):
            if isinstance(value, dict):
                merge_checked(cur, value, file, section, problems, schema=sub_schema, strict=strict,
                              prefix=dotted + ".")
            elif isinstance(value, list):
                if strict and cur and not all(_type_ok(cur[0], x) for x in value):
                    problems.append(Problem(file, where, dotted, value,
                                            f"expected a list of {_type_name(cur[0], plural=True)}"))
                    continue
                base[k] = copy.deepcopy(value)
            else:
                problems.append(Problem(file, where, dotted, value, "expected a list (or a table of index = value)"))
        else:
            if strict and not _type_ok(cur, value):
                problems.append(Problem(file, where, dotted, value, f"expected {_type_name(cur)}"))
                continue
            base[k] = copy.deepcopy(value) if not isinstance(cur, float) or isinstance(value, bool) else float(value)


def _ruleset_problem(ruleset, file) -> Problem | None:
    from soe_sim.rules import _ruleset_path

    if not isinstance(ruleset, str) or not ruleset:
        return Problem(file, "", "ruleset", ruleset, "expected a ruleset name or a TOML path", 'e.g. ruleset = "soe"')
    try:
        path = _ruleset_path(ruleset)
    except SoeInputError as err:  # an unknown name: blamed on this file's key
        return next(Problem(file, "", "ruleset", p.value, p.message, p.suggestion) for p in err.problems)
    if not path.is_file():
        known = sorted(p.stem for p in (data_dir() / "rules").glob("*.toml"))
        return Problem(file, "", "ruleset", ruleset, "unknown ruleset",
                       did_you_mean(ruleset, known) or f"built-in rulesets: {', '.join(known)}")
    return None


def _check_rules(rules: dict, ruleset: str | None, file: str, problems: list) -> None:
    from soe_sim.rules import Rules, check_rules, load_rules

    if not isinstance(rules, dict):
        problems.append(Problem(file, "", "rules", rules, "expected a table of rule keys",
                                "e.g. [rules] combat.flank_penalty = 1"))
        return
    if "cards" in rules and isinstance(rules["cards"], dict) and "deck_size" in rules["cards"]:
        problems.append(Problem(file, "[rules]", "cards.deck_size", rules["cards"]["deck_size"],
                                "the deck size follows the decks", "add or remove cards with [cards.<side>] add / remove"))
    try:
        base = load_rules(ruleset or "soe")
    except SoeInputError as err:
        problems.extend(err.problems)
        return
    values = copy.deepcopy(base.values)
    before = len(problems)
    merge_checked(values, rules, file, "rules", problems, strict=True)
    _roster_bounds(rules, file, problems)
    if len(problems) == before:  # the ranges of load_rules (e.g. initiative.max_level >= min_level)
        try:
            check_rules(Rules(values, {}, [file]), file)
        except SoeInputError as err:
            problems.extend(err.problems)


def _roster_bounds(rules: dict, file: str, problems: list) -> None:
    """A problem for each key of :data:`soe_sim.rules.ROSTER_BOUNDS` that ``rules`` (a variant's ``[rules]``)
    sets: they bound the roster file only, so the variant would change nothing."""
    from soe_sim.rules import ROSTER_BOUNDS, roster_bound_problem

    for key in ROSTER_BOUNDS:
        table, name = key.split(".")
        node = rules.get(table) if isinstance(rules, dict) else None
        if isinstance(node, dict) and name in node:
            problems.append(roster_bound_problem(file, "[rules]", key, node[name]))


def _card_value(col, value, file, where, fld, problems):
    """Check one deck column value (the data/cards/*.csv schema); returns (ok, value)."""
    kind = col.kind
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            problems.append(Problem(file, where, fld, value, "expected an integer"))
            return False, None
        if (col.lo is not None and value < col.lo) or (col.hi is not None and value > col.hi):
            expected = f"{int(col.lo)}..{int(col.hi)}" if col.hi is not None else f">= {int(col.lo)}"
            problems.append(Problem(file, where, fld, value, f"expected an integer {expected}"))
            return False, None
        return True, int(value)
    if kind == "enum":
        if value not in col.choices:
            problems.append(Problem(file, where, fld, value, "unknown value", did_you_mean(str(value), col.choices)
                                    or f"one of {', '.join(col.choices)}"))
            return False, None
        return True, value
    if kind == "bool":
        if not isinstance(value, bool):
            problems.append(Problem(file, where, fld, value, "expected true or false"))
            return False, None
        return True, value
    if not isinstance(value, str):
        problems.append(Problem(file, where, fld, value, "expected a string"))
        return False, None
    return True, value


def _check_card_table(t: dict, file, where, problems, block_ids, required=()) -> dict:
    from soe_sim.data.cards import card_schema, parse_effect

    cols = {c.name: c for c in card_schema()}
    out = {}
    for k, v in t.items():
        if k not in CARD_FIELDS:
            problems.append(Problem(file, where, k, v, "unknown card column", did_you_mean(str(k), CARD_FIELDS)
                                    or f"columns: {', '.join(CARD_FIELDS)}"))
            continue
        ok, val = _card_value(cols[k], v, file, where, k, problems)
        if ok and k == "effect":
            found = Problems()  # parse_effect records with Problems.add
            parse_effect(val, file=str(file), entry=where, problems=found, block_ids=block_ids)
            problems.extend(found)
            ok = not found
        if ok:
            out[k] = val
    for k in required:
        if k not in t:
            problems.append(Problem(file, where, k, None, "missing required key",
                                    f"an added card needs {', '.join(required)}"))
    return out


def _check_cards(cards, file, problems) -> dict:
    from soe_sim.data import load_blocks, load_cards

    if not isinstance(cards, dict):
        problems.append(Problem(file, "", "cards", cards, "expected [cards.polish] / [cards.soviet] tables"))
        return {}
    block_ids = set(load_blocks().block_index)
    out = {}
    for side, t in cards.items():
        if side not in CARD_SIDES:
            problems.append(Problem(file, "[cards]", side, "{…}", "unknown side",
                                    did_you_mean(str(side), CARD_SIDES) or "polish or soviet"))
            continue
        where = f"[cards.{side}]"
        if not isinstance(t, dict):
            problems.append(Problem(file, where, "", t, "expected a table with remove / change / add"))
            continue
        n = int(len(load_cards(side)))
        adds = t.get("add", [])
        res = {"remove": [], "change": {}, "add": []}
        for k in t:
            if k not in CARD_KEYS:
                problems.append(Problem(file, where, k, "…", "unknown key",
                                        did_you_mean(str(k), CARD_KEYS) or f"known keys: {', '.join(CARD_KEYS)}"))
        if not isinstance(adds, list) or not all(isinstance(a, dict) for a in adds):
            problems.append(Problem(file, where, "add", "…", "expected [[cards.<side>.add]] tables"))
            adds = []
        for j, a in enumerate(adds):
            card = _check_card_table(a, file, f"{where} add[{j}]", problems, block_ids, required=_ADD_REQUIRED)
            res["add"].append(card)
        rm = t.get("remove", [])
        if not isinstance(rm, list):
            problems.append(Problem(file, where, "remove", rm, "expected a list of card ids", "e.g. remove = [3, 9]"))
            rm = []
        hi = n + len(adds)
        for cid in rm:
            if isinstance(cid, bool) or not isinstance(cid, int) or not 1 <= cid <= hi:
                problems.append(Problem(file, where, "remove", cid, f"expected a card id 1..{hi}"))
            elif cid not in res["remove"]:
                res["remove"].append(cid)
        ch = t.get("change", {})
        if not isinstance(ch, dict):
            problems.append(Problem(file, where, "change", "…", "expected [cards.<side>.change.<id>] tables"))
            ch = {}
        for cid, fields in ch.items():
            w = f"{where} change.{cid}"
            if not _is_index(cid) or not 1 <= int(cid) <= n:
                problems.append(Problem(file, where, "change", cid, f"expected a card id 1..{n} of the {side} deck"))
                continue
            if not isinstance(fields, dict):
                problems.append(Problem(file, w, "", fields, "expected a table of card columns",
                                        f"e.g. [cards.{side}.change.{cid}] combat_modifier = 2"))
                continue
            res["change"][int(cid)] = _check_card_table(fields, file, w, problems, block_ids)
        out[side] = res
    return out


def _check_scenario(scn, file, problems) -> dict:
    if not isinstance(scn, dict):
        problems.append(Problem(file, "", "scenario", scn, "expected a table of scenario keys",
                                "e.g. [scenario] vp = 2"))
        return {}
    out = {}
    for k, v in scn.items():
        if k == "id":
            problems.append(Problem(file, "[scenario]", "id", v, "a variant cannot rename the scenario",
                                    "use --scenario to choose another scenario"))
            continue
        if k == "vp" and not isinstance(v, dict):
            if isinstance(v, bool) or not isinstance(v, int):
                problems.append(Problem(file, "[scenario]", "vp", v,
                                        "expected the signed VP track (an integer, + Polish / - Soviet) or a table",
                                        "e.g. vp = 2 or vp = { side = \"soviet\", value = 1 }"))
                continue
            if v in KNOB_DOMAINS["scenario.vp"]["excluded"]:  # the knob scenario.vp: the track has no 0 space
                problems.append(Problem(file, "[scenario]", "vp", v, KNOB_DOMAINS["scenario.vp"]["reason"],
                                        "e.g. vp = 1 or vp = -1"))
                continue
        elif k not in SCENARIO_SCHEMA and k not in _PROVENANCE:
            problems.append(Problem(file, "[scenario]", k, v if not isinstance(v, dict) else "{…}", "unknown key",
                                    did_you_mean(str(k), SCENARIO_SCHEMA) or
                                    f"known keys: {', '.join(SCENARIO_SCHEMA)}"))
            continue
        else:
            _check_schema(v, SCENARIO_SCHEMA.get(k), file, k, problems)
        out[k] = v
    return out


def _check_schema(value, schema, file, dotted, problems) -> None:
    """Keys of nested scenario tables that no scenario could have (values: the scenario loader)."""
    if isinstance(schema, dict) and isinstance(value, dict):
        for k, v in value.items():
            if k in _PROVENANCE or str(k).endswith("_source"):
                continue
            if k not in schema:
                problems.append(Problem(file, "[scenario]", f"{dotted}.{k}", v if not isinstance(v, dict) else "{…}",
                                        "unknown key", did_you_mean(str(k), schema)
                                        or f"known keys here: {', '.join(schema)}"))
            else:
                _check_schema(v, schema[k], file, f"{dotted}.{k}", problems)


def parse_variant(doc: dict, file: str = "<variant>", base_dir: Path | None = None, _stack: tuple = ()) -> Variant:
    """A checked :class:`Variant` from the tables of a variant file (every problem reported at once)."""
    problems: list[Problem] = []
    for k in doc:
        if k not in VARIANT_KEYS:
            problems.append(Problem(file, "", k, doc[k] if not isinstance(doc[k], dict) else "{…}", "unknown key",
                                    did_you_mean(str(k), VARIANT_KEYS) or f"known keys: {', '.join(VARIANT_KEYS)}"))
    name = doc.get("name", Path(file).stem if file != "<variant>" else "variant")
    if not isinstance(name, str) or not name.strip():
        problems.append(Problem(file, "", "name", name, "expected a non-empty string", 'e.g. name = "flank-1"'))
        name = Path(file).stem
    desc = doc.get("description", "")
    if not isinstance(desc, str):
        problems.append(Problem(file, "", "description", desc, "expected a string"))
        desc = ""
    ruleset = doc.get("ruleset")
    if ruleset is not None:
        p = _ruleset_problem(ruleset, file)
        if p:
            problems.append(p)
            ruleset = None
    parents: list[Variant] = []
    ext = doc.get("extends", [])
    if isinstance(ext, str):
        ext = [ext]
    if not isinstance(ext, list) or not all(isinstance(e, str) for e in ext):
        problems.append(Problem(file, "", "extends", ext, "expected a list of variant files",
                                'e.g. extends = ["flank-1.toml"]'))
        ext = []
    for e in ext:
        try:
            parents.append(load_variant(e, base_dir=base_dir, _stack=_stack, _where=(file, "extends")))
        except SoeInputError as err:
            problems.extend(err.problems)
    inherited = compose(*parents).ruleset if parents else None
    rules = doc.get("rules", {})
    _check_rules(rules, ruleset or inherited, file, problems)
    cards = _check_cards(doc.get("cards", {}), file, problems)
    scenario = _check_scenario(doc.get("scenario", {}), file, problems)
    if problems:
        raise SoeInputError(problems)
    own = Variant(name=name.strip(), description=desc, ruleset=ruleset, rules=rules if isinstance(rules, dict) else {},
                  scenario=scenario, cards=cards, files=(file,))
    if not parents:
        return own
    return compose(*parents, own, name=own.name)


def _variant_path(ref: str, base_dir: Path | None) -> Path | None:
    p = Path(ref)
    if not p.is_absolute() and base_dir is not None:
        q = Path(base_dir) / p
        if q.exists() or p.suffix == ".toml":
            return q
    if p.suffix == ".toml" or len(p.parts) > 1 or p.exists():
        return p
    q = variants_dir() / f"{ref}.toml"
    return q if q.is_file() else None


def load_variant(ref, base_dir: Path | str | None = None, *, _stack: tuple = (), _where=None) -> Variant:
    """A variant from a file path, a built-in name (``data/variants/<name>.toml``), ``"base"`` (no
    change), a :class:`Variant`, or ``"A+B"`` (A then B composed).

    Raises
    ------
    SoeInputError
        Missing file, bad TOML, unknown keys (with a suggestion) or bad values, naming the file.
    """
    if isinstance(ref, Variant):
        return ref
    ref = str(ref).strip()
    if "+" in ref and not Path(ref).exists():
        parts = [s for s in ref.split("+")]
        if any(not s.strip() for s in parts):
            raise SoeInputError(Problem(*(_where or ("--variant", "")), "", ref, "empty part in a composed variant",
                                        "e.g. flank-1+deck-hmg.toml"))
        return compose(*(load_variant(s, base_dir, _stack=_stack, _where=_where) for s in parts))
    if ref in ("", "base"):
        return BASE
    path = _variant_path(ref, Path(base_dir) if base_dir is not None else None)
    file_where, entry = _where or ("--variant", "")
    if path is None or not path.is_file():
        known = builtin_variants()
        raise SoeInputError(Problem(file_where, entry, "", ref, "variant file not found",
                                    did_you_mean(ref, known + ["base"])
                                    or (f"give a TOML path or a built-in variant: {', '.join(known + ['base'])}")))
    key = str(path.resolve())
    if key in _stack:
        raise SoeInputError(Problem(file_where, entry, "extends", ref, "variants extend each other in a loop",
                                    " -> ".join(Path(s).name for s in _stack + (key,))))
    try:
        doc = load_toml(path)
    except UnicodeDecodeError as err:
        raise SoeInputError(Problem(str(path), "", "", str(path), f"cannot read the variant: {err}")) from None
    except tomllib.TOMLDecodeError:
        raise toml_syntax_error(path) from None
    except OSError as err:
        raise SoeInputError(Problem(str(path), "", "", str(path), f"cannot read the variant: {err.strerror}")) from None
    from soe_sim.data._io import display_path

    return parse_variant(doc, display_path(path), path.parent, _stack + (key,))


# --------------------------------------------------------------------------------------------------
# Applying a variant to a scenario


@dataclass
class Resolved:
    """A scenario under a variant: the rules, the decks, the scenario tables and the Scenario."""

    variant: Variant
    rules: object  # soe_sim.rules.Rules
    decks: dict  # side slug -> DataFrame in the load_cards format
    decks_changed: bool
    doc: dict  # the scenario's tables after the overlay
    scenario: object  # soe_sim.data.Scenario
    path: Path


def _label(v: Variant) -> str:
    return "+".join(v.files) if v.files else f"variant '{v.name}'"


def _apply_decks(v: Variant, label: str, problems: list) -> tuple[dict, bool, dict]:
    """The two decks after the variant's card changes; ``(decks, changed, extra removed ids)``.

    Added cards take the next ids. When the decks end up of different sizes the shorter one is
    padded with empty slots removed before play (the engine stores both decks in one array)."""
    from soe_sim.data import load_blocks, load_cards
    from soe_sim.data.cards import parse_effect

    decks = {s: load_cards(s) for s in CARD_SIDES}
    extra_removed: dict = {s: [] for s in CARD_SIDES}
    if not any(_card_side_nonempty(t) for t in v.cards.values()):
        return decks, False, extra_removed
    block_ids = set(load_blocks().block_index)
    for side in CARD_SIDES:
        t = v.cards.get(side) or {}
        df = decks[side].copy()
        for cid, ch in sorted((t.get("change") or {}).items()):
            rows = df.index[df["id"] == int(cid)]
            if len(rows) != 1:
                problems.append(Problem(label, f"[cards.{side}]", "change", cid, "no such card in the deck"))
                continue
            i = rows[0]
            for col, val in ch.items():
                if col == "effect":
                    df.at[i, "effect_code"] = val
                    df.at[i, "effect"] = parse_effect(val, block_ids=block_ids)
                else:
                    df.at[i, col] = val
        new = []
        n = len(df)
        for j, card in enumerate(t.get("add") or []):
            row = {"id": n + j + 1, "name": card["name"], "orders": card["orders"],
                   "combat_modifier": card["combat_modifier"], "infantry_cubes": card.get("infantry_cubes", 0),
                   "cavalry_cubes": card.get("cavalry_cubes", 0), "allied_cubes": card.get("allied_cubes", 0),
                   "event_kind": card["event_kind"], "front": card.get("front", "any"),
                   "remove_after_event": card.get("remove_after_event", False),
                   "effect": parse_effect(card.get("effect", ""), block_ids=block_ids),
                   "text": card.get("text", ""), "source": card.get("source", f"variant: {label}"),
                   "effect_code": card.get("effect", "")}
            new.append(row)
        if new:
            df = pd.concat([df, pd.DataFrame(new, columns=df.columns)], ignore_index=True)
        for i in range(len(df)):
            if df["event_kind"].iat[i] == "none" and df["effect"].iat[i]:
                problems.append(Problem(label, f"[cards.{side}] card {df['id'].iat[i]}", "effect",
                                        df["effect_code"].iat[i], "a card without an event has no effect",
                                        "set event_kind too"))
        decks[side] = df
    size = max(len(d) for d in decks.values())
    for side in CARD_SIDES:
        df = decks[side]
        if len(df) < size:
            pad = [{"id": k, "name": "(empty slot)", "orders": 0, "combat_modifier": 0, "infantry_cubes": 0,
                    "cavalry_cubes": 0, "allied_cubes": 0, "event_kind": "none", "front": "any",
                    "remove_after_event": False, "effect": {}, "text": "", "effect_code": "",
                    "source": "soe_sim.design: slot padding the shorter deck, removed before play"}
                   for k in range(len(df) + 1, size + 1)]
            decks[side] = pd.concat([df, pd.DataFrame(pad, columns=df.columns)], ignore_index=True)
            extra_removed[side] = [r["id"] for r in pad]
        for c in ("id", "orders", "combat_modifier", "infantry_cubes", "cavalry_cubes", "allied_cubes"):
            decks[side][c] = decks[side][c].astype(int)
        decks[side]["remove_after_event"] = decks[side]["remove_after_event"].astype(bool)
    return decks, True, extra_removed


def _expand_vp(scn: dict) -> dict:
    """The ``vp = N`` shorthand as the scenario's ``[vp]`` table (SoE 7.8: one signed track)."""
    if "vp" in scn and not isinstance(scn["vp"], dict):
        v = int(scn["vp"])
        scn = dict(scn)
        scn["vp"] = {"side": "polish" if v >= 0 else "soviet", "value": abs(v)}
    return scn


def _data_stamp(scenario_ref: str, spec_json: str) -> tuple:
    """The data root and ``(path, mtime_ns, size)`` of every file a resolve of ``scenario_ref`` under the
    variant ``spec_json`` reads (``soe_sim.engine.game._data_stamp``: the scenario, the map, blocks, cards
    and rules of its data root and of ``data_dir()``, the variant's ruleset file): part of the cache keys
    below, so an edited data file is read again (a stale arm would make ``compare`` report a false effect).
    An unknown scenario gives an empty stamp: :func:`_resolve_cached` reports it."""
    from soe_sim.engine.game import _data_stamp as setup_stamp

    ruleset = json.loads(spec_json).get("ruleset") or "soe"
    try:
        return str(data_dir()), setup_stamp(scenario_ref, str(ruleset))
    except SoeInputError:
        return str(data_dir()), ()


@functools.lru_cache(maxsize=64)
def _resolve_cached(scenario_ref: str, spec_json: str, stamp: tuple = ()) -> Resolved:
    from soe_sim.data import load_blocks, load_map
    from soe_sim.data._io import Problems, display_path, read_toml
    from soe_sim.data.scenario import _resolve, read_scenario, start_stacking_problems
    from soe_sim.rules import Rules, check_rules, load_rules

    v = Variant.from_spec(json.loads(spec_json))
    label = _label(v)
    problems: list[Problem] = []
    if v.ruleset is not None:
        p = _ruleset_problem(v.ruleset, label)
        if p:
            raise SoeInputError(p)
    base = load_rules(v.ruleset or "soe")
    values = copy.deepcopy(base.values)
    merge_checked(values, v.rules, label, "rules", problems, strict=True)
    _roster_bounds(v.rules, label, problems)
    decks, changed, extra_removed = _apply_decks(v, label, problems)
    if changed:
        values["cards"]["deck_size"] = int(len(decks["polish"]))
    if problems:
        raise SoeInputError(problems)
    rules = Rules(values, dict(base.sources), list(base.files) + ([label] if not v.is_base else []))
    check_rules(rules, label)  # the ranges of load_rules (e.g. initiative.max_level >= min_level)
    path = _resolve(scenario_ref)
    sp = Problems()
    doc = read_toml(path, sp)
    if doc is None:
        raise SoeInputError(sp)
    scn_over = _expand_vp(v.scenario)
    if "vp" in scn_over and isinstance(doc.get("vp"), dict) and "side" in scn_over["vp"] and "value" in scn_over["vp"]:
        doc["vp"] = {k: x for k, x in doc["vp"].items() if k not in ("side", "value")}  # a signed VP replaces both
    merge_checked(doc, scn_over, label, "scenario", problems, schema=SCENARIO_SCHEMA, strict=False)
    removed = doc.setdefault("removed_cards", {}) if isinstance(doc.get("removed_cards", {}), dict) else {}
    for side in CARD_SIDES:
        more = [int(c) for c in (v.cards.get(side) or {}).get("remove") or []] + extra_removed[side]
        if more:
            cur = list(removed.get(side) or [])
            removed[side] = cur + [c for c in more if c not in cur]
    if problems:
        raise SoeInputError(problems)
    game_map, roster = load_map(), load_blocks()
    sp = Problems()
    scenario = read_scenario(path, sp, game_map, roster, decks, doc=doc)
    if sp or scenario is None:
        where = f"{label} [scenario] applied to {display_path(path)}"
        raise SoeInputError([Problem(where, p.entry, p.field, p.value, p.message, p.suggestion) for p in sp]
                            or Problem(where, "", "", "", "the scenario could not be built"))
    # the loader checked the start against rules/soe.toml; the variant's stacking.max_blocks may be lower
    over = start_stacking_problems(scenario, game_map, rules, label, roster)
    if over:
        raise SoeInputError(over)
    try:
        rules.combat_constants()  # the chart's shape (SoE 7.41) is checked before any game
    except SoeInputError as err:
        raise SoeInputError([Problem(label, "[rules]", p.field and f"{p.entry}.{p.field}", p.value, p.message,
                                     p.suggestion) for p in err.problems]) from None
    return Resolved(variant=v, rules=rules, decks=decks, decks_changed=changed, doc=doc, scenario=scenario, path=path)


def resolve(scenario, variant: Variant | str | None = None) -> Resolved:
    """The rules, decks and checked Scenario of ``scenario`` (an id or a TOML path) under
    ``variant`` (cached); bad values are a SoeInputError naming the variant's file."""
    v = BASE if variant is None else load_variant(variant)
    key = v.cache_key()
    return _resolve_cached(str(scenario), key, _data_stamp(str(scenario), key))


@functools.lru_cache(maxsize=64)
def _setup_cached(scenario_ref: str, spec_json: str, stamp: tuple = ()):
    from soe_sim.data import load_blocks, load_map
    from soe_sim.data.cards import deck_override
    from soe_sim.engine.game import _build_setup

    r = _resolve_cached(scenario_ref, spec_json, stamp)
    if r.decks_changed:
        with deck_override(r.decks):  # card state, Events' Area and event table read the changed decks
            return _build_setup(r.scenario, load_map(), load_blocks(), r.rules)
    return _build_setup(r.scenario, load_map(), load_blocks(), r.rules)


def variant_setup(scenario, variant: Variant | str | None = None):
    """The engine :class:`~soe_sim.engine.game.GameSetup` of ``scenario`` under ``variant`` (cached).

    The unchanged variant gives the same set-up as ``soe_sim.engine.game.game_setup(scenario)``."""
    v = BASE if variant is None else load_variant(variant)
    if v.is_base:
        from soe_sim.engine.game import game_setup

        return game_setup(str(scenario))  # unknown ids: a SoeInputError with a suggestion
    key = v.cache_key()
    return _setup_cached(str(scenario), key, _data_stamp(str(scenario), key))


# --------------------------------------------------------------------------------------------------
# Knobs


#: Knobs whose values are not every integer, by knob name. ``excluded``: values the knob never takes
#: (the values on either side of one are neighbours: :meth:`Knob.position`); ``signed``: the default
#: range of ``soe-sim tune`` may go below 0; ``reason``: why, for messages and reports.
KNOB_DOMAINS: dict = {
    "scenario.vp": {
        "excluded": (0,), "signed": True,
        "reason": "the signed VP track has no 0 space (SoE 7.8; docs/rules.md E10): -1 and +1 are adjacent",
    },
}


@dataclass(frozen=True)
class Knob:
    """A numeric value of a variant named by its dotted key (``rules.combat.flank_penalty``).

    ``section`` is ``rules``, ``scenario`` or ``cards``; ``path`` the keys below it; ``integer``
    whether the value is an integer (set when the knob is read from a scenario, see
    :func:`knob_value`). ``excluded`` holds values the knob never takes (:data:`KNOB_DOMAINS`: the
    starting VP ``scenario.vp`` skips 0), ``signed`` whether its default tuning range may go below 0.

    The *position* of a value (:meth:`position`) counts the values the knob can take: it is the
    value itself for a knob without excluded values, and for ``scenario.vp`` the space on the track
    (… -2 → -2, -1 → -1, +1 → 0, +2 → 1 …), so that -1 and +1 are neighbours. Sweeps and searches
    work on positions; :meth:`value_at` maps a position back (linearly across a gap)."""

    name: str
    section: str
    path: tuple
    integer: bool = True
    excluded: tuple = ()
    signed: bool = False
    reason: str = ""

    def coerce(self, value):
        """``value`` as this knob's type: an int knob takes integral values only, and no knob takes
        one of its ``excluded`` values."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
            raise SoeInputError(Problem("knob", "", self.name, value, "expected a number"))
        if self.integer:
            if float(value) != round(float(value)):
                raise SoeInputError(Problem("knob", "", self.name, value, "this knob takes integers",
                                            f"e.g. {self.name}={int(round(float(value)))}"))
            value = int(round(float(value)))
        else:
            value = float(value)
        if value in self.excluded:
            raise SoeInputError(self.excluded_problem(value))
        return value

    def excluded_problem(self, value, where: str = "knob") -> Problem:
        """The problem of setting this knob to one of its excluded values."""
        near = [v for v in (value - 1, value + 1) if v not in self.excluded]
        return Problem(where, "", self.name, value,
                       "not a value of this knob" + (f": {self.reason}" if self.reason else ""),
                       "e.g. " + " or ".join(f"{self.name}={_fmt_value(v)}" for v in near) if near else None)

    def position(self, value):
        """The position of ``value`` among the values the knob takes (a float or an array; the value
        itself unless the knob has excluded values, linear across each gap: ``scenario.vp`` 0 → -0.5)."""
        x = self._array(value)
        out = x.copy()
        for e in self.excluded:  # the values around a gap are one position apart
            out = out - np.clip((x - (e - 1)) / 2.0, 0.0, 1.0)
        return out if np.ndim(value) else float(out)

    def value_at(self, position):
        """The value at ``position`` (the inverse of :meth:`position`; integral positions give the
        values the knob takes, and ±inf stays ±inf)."""
        p = self._array(position)
        out = p.copy()
        for e in sorted(self.excluded):
            lo = self.position(e - 1)  # the position of the value below the gap
            out = np.where(p <= lo, out, np.where(p < lo + 1, (e - 1) + 2 * (p - lo), out + 1))
        if not np.ndim(position):
            v = float(out)
            return int(v) if self.integer and math.isfinite(v) and v == int(v) else v
        return out

    def values_between(self, low, high) -> list:
        """The values of an integer knob in ``[low, high]``, excluded values left out."""
        return [v for v in range(math.ceil(low), math.floor(high) + 1) if v not in self.excluded]

    def skipped_between(self, low, high) -> list:
        """The excluded values that lie in ``[low, high]``."""
        return [e for e in self.excluded if low <= e <= high]

    @staticmethod
    def _array(x):
        return np.asarray(x, dtype=float) if np.ndim(x) else np.asarray(float(x))


def knob_domain(name: str) -> dict:
    """The :data:`KNOB_DOMAINS` entry of a knob name (``{}`` for a knob that takes every value)."""
    return dict(KNOB_DOMAINS.get(name, {}))


def parse_knob(name: str, where: str = "--knob") -> Knob:
    """Split a knob name into section and path (no scenario needed; see :func:`knob_value`)."""
    name = str(name).strip()
    parts = [p for p in name.split(".")]
    if not name or any(not p for p in parts):
        raise SoeInputError(Problem(where, "", "", name, "expected a dotted key",
                                    "e.g. rules.combat.flank_penalty or scenario.vp"))
    if parts[0] not in SECTIONS:
        from soe_sim.rules import load_rules

        hint = None
        try:
            load_rules()[name]
            hint = f"did you mean `rules.{name}`?"
        except (KeyError, TypeError):
            hint = did_you_mean(parts[0], SECTIONS)
        raise SoeInputError(Problem(where, "", "", name, "a knob name starts with rules., scenario. or cards.",
                                    hint or "e.g. rules.combat.flank_penalty, scenario.vp, "
                                            "cards.polish.change.7.combat_modifier"))
    if len(parts) < 2:
        raise SoeInputError(Problem(where, "", "", name, "the knob names a whole section",
                                    "e.g. rules.combat.flank_penalty"))
    from soe_sim.rules import ROSTER_BOUNDS, roster_bound_problem

    if parts[0] == "rules" and ".".join(parts[1:]) in ROSTER_BOUNDS:  # no game reads it: a flat line
        raise SoeInputError(roster_bound_problem(where, "", "", name, "a knob"))
    if parts[0] == "cards":
        if len(parts) != 5 or parts[2] != "change" or not parts[3].isdigit():
            raise SoeInputError(Problem(where, "", "", name, "a card knob is cards.<side>.change.<id>.<column>",
                                        "e.g. cards.polish.change.7.combat_modifier"))
        if parts[1] not in CARD_SIDES:
            raise SoeInputError(Problem(where, "", "", name, f"unknown side '{parts[1]}'",
                                        did_you_mean(parts[1], CARD_SIDES) or "polish or soviet"))
        if parts[4] not in CARD_NUMERIC:
            raise SoeInputError(Problem(where, "", "", name, f"'{parts[4]}' is not a numeric card column",
                                        did_you_mean(parts[4], CARD_NUMERIC) or f"one of {', '.join(CARD_NUMERIC)}"))
    return Knob(name, parts[0], tuple(parts[1:]), **knob_domain(name))


def _walk(node, path, name, section, choices_of):
    for i, p in enumerate(path):
        if isinstance(node, list):
            if not p.isdigit() or int(p) >= len(node):
                raise SoeInputError(Problem("--knob", "", "", name,
                                            f"'{'.'.join(path[:i + 1])}' is not an entry of the list "
                                            f"(it has {len(node)}: indices 0..{len(node) - 1})"))
            node = node[int(p)]
        elif isinstance(node, dict) and p in node:
            node = node[p]
        else:
            known = choices_of()
            raise SoeInputError(Problem("--knob", "", "", name, f"unknown knob of the {section}",
                                        did_you_mean(name, known) or "list them with `soe-sim knobs --scenario ID`"))
    return node


def _scenario_view(r: Resolved) -> dict:
    view = copy.deepcopy(r.doc)
    view["vp"] = int(r.scenario.vp_signed)  # knob scenario.vp: the signed track
    view["cubes"] = copy.deepcopy(r.scenario.cubes)
    return view


def knob_value(scenario, variant, knob) -> tuple[Knob, float | int]:
    """``(knob, its value)`` in ``scenario`` under ``variant``; unknown or non-numeric knobs raise
    SoeInputError with a suggestion. The returned Knob knows whether the value is an integer."""
    k = parse_knob(knob) if isinstance(knob, str) else knob
    r = resolve(scenario, variant)

    def choices():
        return [n for n, _ in list_knobs(scenario, variant)]

    if k.section == "rules":
        val = _walk(r.rules.values, k.path, k.name, "rules", choices)
    elif k.section == "scenario":
        val = _walk(_scenario_view(r), k.path, k.name, "scenario", choices)
    else:
        side, _, cid, col = k.path
        df = r.decks[side]
        rows = df.index[df["id"] == int(cid)]
        if len(rows) != 1 or int(cid) > len(df):
            raise SoeInputError(Problem("--knob", "", "", k.name, f"no card {cid} in the {side} deck",
                                        f"card ids are 1..{len(df)}"))
        val = int(df.at[rows[0], col])
    if isinstance(val, bool) or not isinstance(val, (int, float)):
        raise SoeInputError(Problem("--knob", "", "", k.name, f"not a numeric value (it is {val!r})",
                                    "knobs are integers or numbers; change other values in a variant file"))
    return dataclasses.replace(k, integer=isinstance(val, int)), val


def list_knobs(scenario, variant=None) -> list[tuple[str, float | int]]:
    """Every numeric knob of the rules and the scenario with its value (card knobs follow the
    pattern ``cards.<side>.change.<id>.<column>``)."""
    r = resolve(scenario, variant)
    out = []

    def walk(node, prefix):
        if isinstance(node, dict):
            for k, v in node.items():
                if k in _PROVENANCE or str(k).endswith("_source") or k == "meta":
                    continue
                walk(v, f"{prefix}{k}.")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{prefix}{i}.")
        elif isinstance(node, (int, float)) and not isinstance(node, bool):
            out.append((prefix[:-1], node))

    walk(r.rules.values, "rules.")
    view = _scenario_view(r)
    for key in ("vp", "start", "end", "initiative", "cubes", "objective", "victory", "deployment", "reinforcement"):
        if key in view:
            walk(view[key], f"scenario.{key}.")
    # cards.deck_size follows the decks; the roster bounds are read by no game (soe_sim.rules.ROSTER_BOUNDS)
    from soe_sim.rules import ROSTER_BOUNDS

    hidden = {"rules.cards.deck_size"} | {f"rules.{k}" for k in ROSTER_BOUNDS}
    return [(n, v) for n, v in out if n not in hidden]
