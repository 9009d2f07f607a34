"""Scenarios (``scenarios/<id>.toml``): set-up, reinforcements, special rules and victory.

:func:`load_scenario` validates a scenario against the map, the block roster and the decks of the
same data directory and returns a :class:`Scenario`. Checks (all problems are reported together):

* unknown / missing keys (with a suggestion), wrong types, unknown enum values;
* ``start`` / ``end``: round ≥ 1, phase 1..N (N = ``round.operation_phases``, SoE 5.0) or
  ``"reinforcement"``; the end not before the start;
* initiative levels within ``initiative.min_level..max_level`` (SoE 6.1: no level 0);
* garrisons only in key cities (areas whose ``garrison`` flag is set; SoE 3.0);
* deployments: known blocks and areas, SP 1..``max_sp`` (SoE 2.1), no block twice, the side
  stated (optional) matching the roster, no more than ``stacking.max_blocks`` blocks in an area
  except Eastern Links (SoE 1.0, 7.33), no area holding both sides' blocks at the start;
* reinforcements: known blocks not otherwise deployed, arrival between the start and the end, and
  an arrival area the side may use — **Polish** reinforcements never arrive on an Eastern Link (the
  Soviet map-edge boxes, SoE 1.4); **Soviet** reinforcements arrive on an Eastern Link or in a key
  city that the Soviets control at the start (a Soviet garrison or Soviet blocks deployed there, and
  no Polish ones); a ``condition`` names a special rule of the scenario;
* force pool: known blocks of the listed side, not deployed and not reinforcements;
* removed cards: ids present in that side's deck;
* special-rule kinds ``arrival_check``, ``neutral_nation``, ``no_leaders``,
  ``no_reinforcement_phase``, ``front_restriction``, each with its own keys
  (:data:`SPECIAL_RULE_KEYS`: a key the engine does not read is unknown); an ``arrival_check``'s
  ``blocks`` / ``area`` agree with the reinforcements it gates; objective kinds ``hold_area``,
  ``capture_area``, ``eliminate_blocks``, scored at the ``end`` (the only ``when``); victory ``vp``
  with immediate ``capture_area`` / ``vp_at_least``;
* objectives name one ``area`` or an all-of ``areas`` list (not both; non-empty, distinct, known
  areas). Each loaded objective dict carries ``areas`` (``[area]`` for the single-area form, ``[]``
  for an objective naming no area) so consumers read ``areas`` only.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from soe_sim._paths import data_dir
from soe_sim.data._io import SLUG_RE, Problems, check_keys, display_path, is_int, read_toml
from soe_sim.data._rules import rule
from soe_sim.data.enums import Front, Nation, Side
from soe_sim.errors import Problem, SoeInputError, did_you_mean

__all__ = [
    "RoundPhase",
    "Scenario",
    "list_scenarios",
    "load_scenario",
    "scenario_paths",
    "start_stacking_problems",
    "SPECIAL_RULE_KINDS",
    "OBJECTIVE_KINDS",
]

SCENARIO_KEYS = [
    "id", "name", "source", "description", "players", "rules", "start", "end", "vp", "initiative",
    "garrison", "deployment", "reinforcement", "force_pool", "removed_cards", "cubes", "special_rule",
    "objective", "victory", "notes", "sources",
]
OBJECTIVE_KINDS = ["hold_area", "capture_area", "eliminate_blocks"]
#: When an objective is scored: only at the end of the scenario (the engine's
#: ``score_objectives_nb``; "immediate" and "each_round" are not implemented and are rejected).
OBJECTIVE_WHEN = ["end"]
#: Keys every ``[[special_rule]]`` may hold (besides provenance keys) and those of each kind: a key
#: the engine does not read is an unknown key, so that a misspelt one is not silently ignored.
SPECIAL_RULE_COMMON_KEYS = ["kind", "id", "text"]
SPECIAL_RULE_KEYS = {
    "arrival_check": ["side", "thresholds", "area", "blocks"],
    "neutral_nation": ["nation", "side", "max_distance_from", "max_distance", "supply_base"],
    "no_leaders": [],
    "no_reinforcement_phase": [],
    "front_restriction": ["nation", "front"],
}
SPECIAL_RULE_KINDS = list(SPECIAL_RULE_KEYS)
#: Keys the format once accepted but the engine never read: rejected with what does the job instead.
RETIRED_KEYS = {
    "activated_by_card": ("not read by the engine: a nation is activated by the card whose effect is "
                          "`activate_nation:<nation>` (data/cards/*.csv)", "remove the key"),
    "draw_on_tie": ("not read by the engine: the VP track has no 0 space (SoE 7.8), and a game that ends at 0 "
                    "(it started even and never moved) has no winner", "remove the key"),
}
VICTORY_KINDS = ["vp"]
IMMEDIATE_KINDS = ["capture_area", "vp_at_least"]
CUBE_KINDS = ["infantry", "cavalry", "allied"]
# Ceilings of scenario numbers the engine keeps in int8/int16 arrays: the VP track (and an objective's or
# an immediate victory's VP), a round number and a side's cubes of one kind on a front.
VP_MAX = 100
ROUND_MAX = 99
CUBES_MAX = 100
REINFORCEMENT_PHASE = "reinforcement"


@dataclass(frozen=True, order=True)
class RoundPhase:
    """A point on the round track: ``round`` ≥ 1 and ``phase`` 1..5 or ``"reinforcement"``."""

    round: int
    phase: int | str = 1

    @property
    def phase_order(self) -> int:
        """Sort key of the phase within a round (the reinforcement phase comes last; SoE 5.0)."""
        return 99 if self.phase == REINFORCEMENT_PHASE else int(self.phase)

    def key(self) -> tuple[int, int]:
        """Sort key ``(round, phase order)``."""
        return (self.round, self.phase_order)

    def __str__(self) -> str:
        return f"round {self.round} phase {self.phase}"


@dataclass
class Scenario:
    """A validated scenario.

    Attributes
    ----------
    id, name, source, description : str
    players : list[int]
    start, end : RoundPhase
        First and last phase played (SoE 4.0 round marker).
    vp : dict
        ``{"side": …, "value": …}`` — the single signed VP track (SoE 7.8).
    initiative : dict
        ``{"north": {"side", "level"}, "south": {…}}`` (SoE 6.1).
    deployment : pandas.DataFrame
        ``block, side, area, sp`` — blocks on the map at the start.
    garrisons : pandas.DataFrame
        ``area, side`` (SoE 3.0).
    reinforcements : pandas.DataFrame
        ``block, side, round, phase, area, sp, condition`` (SoE 4.0).
    force_pool : dict[str, list[str]]
        Blocks available for building per side.
    removed_cards : dict[str, list[int]]
        Card ids removed before play per side.
    cubes : dict[str, dict[str, int]]
        Starting reinforcement cubes per side.
    special_rules, objectives : list[dict]
        The TOML tables as dicts. Every objective also carries ``areas``: the areas that must all
        be held (``[area]`` for the single-area form, ``[]`` for ``eliminate_blocks``).
    victory : dict
    path : pathlib.Path
    """

    id: str
    name: str
    start: RoundPhase
    end: RoundPhase
    deployment: pd.DataFrame
    garrisons: pd.DataFrame
    reinforcements: pd.DataFrame
    force_pool: dict
    removed_cards: dict
    special_rules: list
    objectives: list
    victory: dict
    vp: dict
    initiative: dict
    cubes: dict = field(default_factory=dict)
    source: str = ""
    description: str = ""
    players: list = field(default_factory=list)
    path: Path | None = None

    @property
    def rounds(self) -> int:
        """Number of rounds played (``end.round - start.round + 1``)."""
        return self.end.round - self.start.round + 1

    @property
    def vp_signed(self) -> int:
        """VP track as one signed number: positive when the Poles lead (SoE 7.8)."""
        v = int(self.vp.get("value", 0))
        return v if self.vp.get("side") == "polish" else -v

    def special_rule(self, kind: str) -> list[dict]:
        """Special rules of ``kind``."""
        return [r for r in self.special_rules if r.get("kind") == kind]

    def __repr__(self) -> str:
        return (f"Scenario({self.id!r}, {self.rounds} rounds, {len(self.deployment)} blocks deployed, "
                f"{len(self.reinforcements)} reinforcements)")


# --------------------------------------------------------------------------------------------------
# Locating scenarios


def scenario_paths(root: Path | str | None = None) -> list[Path]:
    """Scenario TOML files of a data root (default: built-in data), sorted by name."""
    base = Path(root) if root is not None else data_dir()
    return sorted((base / "scenarios").glob("*.toml"))


def _resolve(name_or_path) -> Path:
    p = Path(name_or_path)
    if p.suffix == ".toml" or p.exists() or len(p.parts) > 1:
        if not p.exists():
            raise SoeInputError(Problem(str(p), "", "", str(p), "scenario file not found"))
        if p.is_dir() or p.suffix.lower() != ".toml":
            raise SoeInputError(Problem(str(p), "", "", str(p), "a scenario is a .toml file (data/scenarios/*.toml)",
                                        "give a scenario id (soe-sim scenarios) or the path of its TOML file"))
        return p
    paths = {q.stem: q for q in scenario_paths()}
    if str(name_or_path) in paths:
        return paths[str(name_or_path)]
    raise SoeInputError(Problem(display_path(data_dir() / "scenarios"), "", "scenario", str(name_or_path),
                                "unknown scenario", did_you_mean(str(name_or_path), paths)
                                or (f"built-in: {', '.join(paths)}" if paths else None)))


def data_root_of(scenario_path: Path) -> Path:
    """Data root a scenario belongs to: its ``scenarios/`` parent when that holds a map, else built-in."""
    parent = scenario_path.resolve().parent
    if parent.name == "scenarios" and (parent.parent / "map" / "areas.csv").exists():
        return parent.parent
    return data_dir()


def list_scenarios(root: Path | str | None = None) -> pd.DataFrame:
    """Built-in scenarios (or those of data root ``root``): DataFrame ``id, name, rounds, path``.

    Reads only the scenario headers (no validation beyond TOML syntax); use ``soe-sim validate``.
    """
    problems = Problems()
    rows = []
    for p in scenario_paths(root):
        doc = read_toml(p, problems)
        if doc is None:
            continue
        start, end = doc.get("start", {}), doc.get("end", {})
        try:
            rounds = int(end.get("round", 1)) - int(start.get("round", 1)) + 1
        except (TypeError, ValueError, AttributeError):
            rounds = None
        rows.append({"id": str(doc.get("id", p.stem)), "name": str(doc.get("name", p.stem)),
                     "rounds": rounds, "path": str(p)})
    if problems:
        raise SoeInputError(problems)
    return pd.DataFrame(rows, columns=["id", "name", "rounds", "path"])


def load_scenario(name_or_path, *, game_map=None, roster=None, decks=None) -> Scenario:
    """Load and validate a scenario.

    Parameters
    ----------
    name_or_path : str or path-like
        A built-in scenario id (``"kiev-offensive"``) or a path to a scenario TOML.
    game_map, roster, decks : optional
        Already loaded :class:`~soe_sim.data.map.GameMap`, :class:`~soe_sim.data.blocks.Roster` and
        ``{"polish": DataFrame, "soviet": DataFrame}``; by default they are loaded from the
        scenario's data root (the parent of its ``scenarios/`` folder when that holds a map,
        else the built-in data).

    Returns
    -------
    Scenario

    Raises
    ------
    SoeInputError
        With every problem found in the scenario (and in the map/roster/decks it needs).
    """
    path = _resolve(name_or_path)
    problems = Problems()
    if game_map is None or roster is None or decks is None:
        from soe_sim.data.blocks import read_blocks
        from soe_sim.data.cards import read_deck
        from soe_sim.data.map import read_map

        root = data_root_of(path)
        # The scenario is built on the map and the roster: their problems are reported too. The
        # decks only serve the removed-card check; their own problems belong to `soe-sim validate`.
        if game_map is None:
            game_map = read_map(root / "map", problems)
        if roster is None:
            roster = read_blocks(root / "blocks", problems)
        if decks is None:
            decks = {s: read_deck(root / "cards" / f"{s}.csv", Problems()) for s in Side.slugs()}
    sc = read_scenario(path, problems, game_map, roster, decks)
    if problems:
        raise SoeInputError(problems)
    return sc


# --------------------------------------------------------------------------------------------------
# Reading and checking


def _table_lines(text: str, name: str) -> list[int]:
    """Line numbers of the ``[[name]]`` headers, in order."""
    pat = re.compile(r"^\s*\[\[\s*" + re.escape(name) + r"\s*\]\]")
    return [i + 1 for i, line in enumerate(text.splitlines()) if pat.match(line)]


class _Ctx:
    """Shared state of one scenario check."""

    def __init__(self, path: Path, problems: Problems, game_map, roster, decks, text: str):
        self.path, self.problems = path, problems
        self.map, self.roster, self.decks = game_map, roster, decks
        self.text = text
        self.root = data_root_of(path)

    def add(self, entry, fld, value, message, suggestion=None):
        self.problems.add(self.path, entry, fld, value, message, suggestion)

    def entry(self, table: str, k: int, label: str | None = None) -> str:
        lines = _table_lines(self.text, table)
        where = f"{table}[{k}]"
        if k < len(lines):
            where += f" line {lines[k]}"
        return where + (f" ({label})" if label else "")

    # lookups ---------------------------------------------------------------------------------
    def area(self, entry, fld, value) -> int | None:
        if self.map is None:
            return None
        if not isinstance(value, str):
            self.add(entry, fld, value, "expected an area id (string)")
            return None
        if value not in self.map.area_index:
            self.add(entry, fld, value, "unknown area", did_you_mean(value, self.map.area_index))
            return None
        return self.map.area_index[value]

    def block(self, entry, fld, value) -> int | None:
        if self.roster is None:
            return None
        if not isinstance(value, str):
            self.add(entry, fld, value, "expected a block id (string)")
            return None
        if value not in self.roster.block_index:
            self.add(entry, fld, value, "unknown block", did_you_mean(value, self.roster.block_index))
            return None
        return self.roster.block_index[value]

    def side(self, entry, fld, value, required=True) -> str | None:
        if value is None:
            if required:
                self.add(entry, fld, None, "missing required key")
            return None
        if value not in Side.slugs():
            self.add(entry, fld, value, "unknown side; expected polish or soviet",
                     did_you_mean(str(value), Side.slugs()))
            return None
        return value

    def int_(self, entry, fld, value, lo=None, hi=None) -> int | None:
        if not is_int(value):
            self.add(entry, fld, value, "expected an integer")
            return None
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            rng = f"{lo}..{hi}" if lo is not None and hi is not None else f">= {lo}" if hi is None else f"<= {hi}"
            self.add(entry, fld, value, f"out of range; expected {rng}")
            return None
        return value

    def table(self, entry, fld, value) -> dict | None:
        if not isinstance(value, dict):
            self.add(entry, fld, value if not isinstance(value, list) else "[…]", "expected a table")
            return None
        return value

    def tables(self, key, value) -> list:
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            self.add("", key, key, f"expected [[{key}]] tables")
            return []
        return value


def overstacked_areas(areas, game_map, max_blocks: int) -> list[tuple[str, int]]:
    """``(area, blocks)`` of each area of ``game_map`` holding more than ``max_blocks`` blocks, given the
    area of each block (unknown areas skipped; Eastern Links are unlimited): the start-position check of
    SoE 1.0 / 7.33, run by the loader and again under other rules by :func:`start_stacking_problems`."""
    per_area = Counter(a for a in areas if a in game_map.area_index)
    return [(a, n) for a, n in per_area.items()
            if n > max_blocks and not game_map.eastern_link[game_map.area_index[a]]]


def start_stacking_problems(scenario: Scenario, game_map, rules, label: str | None = None,
                            roster=None) -> list[Problem]:
    """The start positions of ``scenario`` against ``stacking.max_blocks`` of ``rules``.

    The loader checks them against ``rules/soe.toml`` of the scenario's data directory only; a ruleset,
    overlay or variant (``--ruleset FILE``, ``odds --rules``, a variant's ``[rules]``, a sweep overlay)
    may lower the limit, and the game would then start overstacked without a word. ``label`` names those
    rules (default: the last file they were read from). Given ``roster``, leaders are not counted when
    ``blocks.leaders_in_play`` is false (they are removed before play). One problem for the scenario,
    naming its file, every overstacked area and the limit; none when the positions are legal.
    """
    limit = int(rules["stacking.max_blocks"])
    dep = scenario.deployment
    if roster is not None and not bool(rules["blocks.leaders_in_play"]):
        leaders = set(roster.blocks["id"][roster.blocks["arm"] == "leader"])
        dep = dep[~dep["block"].isin(leaders)]
    over = sorted(overstacked_areas(list(dep["area"]), game_map, limit), key=lambda x: (-x[1], x[0]))
    if not over:
        return []
    if label is None:
        last = str(rules.files[-1]) if rules.files else "the rules"
        label = display_path(Path(last)) if last.endswith(".toml") else last
    shown = ", ".join(f"{a} ({n})" for a, n in over[:6]) + (f" and {len(over) - 6} more" if len(over) > 6 else "")
    file = display_path(scenario.path) if scenario.path is not None else f"scenario {scenario.id}"
    return [Problem(file, "deployment", "area", None,
                    f"overstacked at the start under {label} (stacking.max_blocks = {limit}, SoE 7.33): "
                    f"{len(over)} area(s) hold more blocks: {shown}",
                    f"raise stacking.max_blocks to at least {over[0][1]}, or play other scenarios under "
                    f"these rules")]


def read_scenario(path: Path, problems: Problems, game_map, roster, decks, doc: dict | None = None) -> Scenario | None:
    """Read and check one scenario TOML, appending problems; ``None`` when unreadable.

    ``doc``: the scenario's tables already read (and changed, e.g. by a rule variant of
    ``soe_sim.design``) to check instead of the file's; ``path`` still names the file.
    """
    path = Path(path)
    doc = read_toml(path, problems) if doc is None else doc
    if doc is None:
        return None
    text = path.read_text(encoding="utf-8-sig")
    c = _Ctx(path, problems, game_map, roster, decks, text)
    n_phases = int(rule(c.root, "round.operation_phases"))

    check_keys(doc, SCENARIO_KEYS, path, "", problems, required=["id", "name", "start", "end"])
    sid = doc.get("id", path.stem)
    if not isinstance(sid, str) or not SLUG_RE.match(sid):
        c.add("", "id", sid, "not a lowercase slug [a-z0-9]+(-[a-z0-9]+)*")
    elif sid != path.stem:
        # scenarios are found by id as `<id>.toml`: either side of the pair can change
        hint = f"rename the file to `{sid}.toml`"
        if SLUG_RE.match(path.stem):
            hint = f'set `id = "{path.stem}"` (for a copy under a new name) or {hint}'
        c.add("", "id", sid, "scenario id differs from the file name", hint)
    for key in ("name", "source", "description"):
        if key in doc and not isinstance(doc[key], str):
            c.add("", key, doc[key], "expected a string")
    players = doc.get("players", [2])
    if not isinstance(players, list) or not all(is_int(p) and p >= 1 for p in players):
        c.add("", "players", players, "expected a list of player counts")

    # --- start / end: SoE 4.0 round marker, SoE 5.0 phases -------------------------------------
    def round_phase(key) -> RoundPhase | None:
        t = doc.get(key)
        if t is None:
            return None
        if c.table(key, "", t) is None:
            return None
        check_keys(t, ["round", "phase"], path, key, problems, required=["round"])
        rnd = c.int_(key, "round", t.get("round", 1), lo=1, hi=ROUND_MAX)
        ph = t.get("phase", 1)
        if ph != REINFORCEMENT_PHASE and (not is_int(ph) or not 1 <= ph <= n_phases):
            c.add(key, "phase", ph, f"out of range; expected 1..{n_phases} or \"{REINFORCEMENT_PHASE}\"",
                  did_you_mean(str(ph), [REINFORCEMENT_PHASE]) if isinstance(ph, str) else None)
            ph = None
        if rnd is None or ph is None:
            return None
        return RoundPhase(rnd, ph)

    start, end = round_phase("start"), round_phase("end")
    if start and end and end.key() < start.key():
        c.add("end", "round", end.round, f"the scenario ends ({end}) before it starts ({start})")

    # --- vp track: SoE 7.8 --------------------------------------------------------------------
    vp = doc.get("vp", {"side": "polish", "value": 0})
    if c.table("vp", "", vp) is not None:
        check_keys(vp, ["side", "value"], path, "vp", problems)
        c.side("vp", "side", vp.get("side", "polish"))
        c.int_("vp", "value", vp.get("value", 0), lo=0, hi=VP_MAX)
    else:
        vp = {}

    # --- initiative: SoE 6.1 ------------------------------------------------------------------
    lo_lvl, hi_lvl = int(rule(c.root, "initiative.min_level")), int(rule(c.root, "initiative.max_level"))
    initiative = doc.get("initiative", {})
    if c.table("initiative", "", initiative) is None:
        initiative = {}
    check_keys(initiative, Front.slugs(), path, "initiative", problems)
    for front, t in initiative.items():
        if front not in Front.slugs() or c.table(f"initiative.{front}", "", t) is None:
            continue
        check_keys(t, ["side", "level"], path, f"initiative.{front}", problems, required=["side", "level"])
        c.side(f"initiative.{front}", "side", t.get("side"), required=False)
        if "level" in t:
            c.int_(f"initiative.{front}", "level", t["level"], lo=lo_lvl, hi=hi_lvl)

    # --- garrisons: SoE 3.0 -------------------------------------------------------------------
    garrisons = []
    seen_garrison: dict[str, str] = {}
    for k, g in enumerate(c.tables("garrison", doc.get("garrison"))):
        where = c.entry("garrison", k, f"area={g.get('area')}")
        check_keys(g, ["area", "side", "source"], path, where, problems, required=["area", "side"])
        ai = c.area(where, "area", g.get("area"))
        side = c.side(where, "side", g.get("side"), required=False)
        if ai is not None and not c.map.garrison[ai]:
            keys = [a for a, i in c.map.area_index.items() if c.map.garrison[i]]
            c.add(where, "area", g["area"], "garrison in an area that is not a key city",
                  did_you_mean(g["area"], keys))
        if g.get("area") in seen_garrison:
            c.add(where, "area", g.get("area"), f"second garrison in the same area ({seen_garrison[g['area']]})")
        seen_garrison[g.get("area")] = where
        garrisons.append({"area": g.get("area"), "side": side})

    # --- deployment -----------------------------------------------------------------------------
    deployed: dict[str, str] = {}
    deployment = []
    for k, d in enumerate(c.tables("deployment", doc.get("deployment"))):
        bid = d.get("block")
        where = c.entry("deployment", k, f"block={bid}")
        check_keys(d, ["block", "area", "sp", "side", "source"], path, where, problems,
                   required=["block", "area"])
        bi = c.block(where, "block", bid)
        ai = c.area(where, "area", d.get("area"))
        side = _block_side(c, where, bi, d.get("side"))
        sp = _sp(c, where, bi, d.get("sp"))
        if isinstance(bid, str):
            if bid in deployed:
                c.add(where, "block", bid, f"block deployed twice (also {deployed[bid]})")
            deployed.setdefault(bid, where)
        deployment.append({"block": bid, "side": side, "area": d.get("area"), "sp": sp, "_ai": ai})

    # SoE 1.0, 7.33: at most N blocks in an area (Eastern Links unlimited).
    if c.map is not None:
        max_blocks = int(rule(c.root, "stacking.max_blocks"))
        for area, n in overstacked_areas([d["area"] for d in deployment], c.map, max_blocks):
            c.add(f"deployment (area={area})", "area", area,
                  f"overstacked: {n} blocks at the start, the limit is {max_blocks} (SoE 7.33)")
        sides_in = defaultdict(set)
        for d in deployment:
            if d["_ai"] is not None and d["side"]:
                sides_in[d["area"]].add(d["side"])
        for area, sides in sides_in.items():
            if len(sides) > 1:
                c.add(f"deployment (area={area})", "area", area, "blocks of both sides in one area at the start")

    # Key cities the Soviets control at the start (garrison or blocks, no Polish presence).
    presence = defaultdict(set)
    for g in garrisons:
        if g["side"]:
            presence[g["area"]].add(g["side"])
    for d in deployment:
        if d["side"]:
            presence[d["area"]].add(d["side"])

    # --- special rules (before reinforcements: conditions refer to them) -----------------------
    special_rules = []
    rule_ids: set[str] = set()
    rule_kinds: dict[str, str] = {}
    for k, r in enumerate(c.tables("special_rule", doc.get("special_rule"))):
        where = c.entry("special_rule", k, f"id={r.get('id')}" if r.get("id") else None)
        kind = r.get("kind")
        if kind is None:
            c.add(where, "kind", None, "missing required key")
        elif kind not in SPECIAL_RULE_KINDS:
            c.add(where, "kind", kind, "unknown special-rule kind", did_you_mean(str(kind), SPECIAL_RULE_KINDS))
        rid = r.get("id")
        if rid is not None:
            if not isinstance(rid, str) or not SLUG_RE.match(rid):
                c.add(where, "id", rid, "not a lowercase slug")
            elif rid in rule_ids:
                c.add(where, "id", rid, "duplicate special-rule id")
            else:
                rule_ids.add(rid)
                rule_kinds[rid] = kind
        if kind in SPECIAL_RULE_KEYS:
            check_keys(_retired(c, where, r), SPECIAL_RULE_COMMON_KEYS + SPECIAL_RULE_KEYS[kind], path, where, problems,
                       required={"arrival_check": ["thresholds"], "neutral_nation": ["nation"],
                                 "front_restriction": ["nation", "front"]}.get(kind, []))
        if "side" in r:
            c.side(where, "side", r["side"])
        if kind == "arrival_check":
            for j, th in enumerate(r.get("thresholds", []) if isinstance(r.get("thresholds", []), list) else []):
                if not isinstance(th, dict):
                    c.add(where, f"thresholds[{j}]", th, "expected a table {round, phase, min_modifier}")
                    continue
                check_keys(th, ["round", "phase", "min_modifier"], path, f"{where} thresholds[{j}]", problems,
                           required=["round", "phase", "min_modifier"])
                for kk in ("round", "phase", "min_modifier"):
                    if kk in th and not is_int(th[kk]):
                        c.add(f"{where} thresholds[{j}]", kk, th[kk], "expected an integer")
            if "thresholds" in r and not isinstance(r["thresholds"], list):
                c.add(where, "thresholds", r["thresholds"], "expected a list of {round, phase, min_modifier}")
            if "area" in r:
                c.area(where, "area", r["area"])
            if "blocks" in r:
                if not isinstance(r["blocks"], list):
                    c.add(where, "blocks", r["blocks"], "expected a list of block ids")
                else:
                    for b in r["blocks"]:
                        c.block(where, "blocks", b)
        if kind in ("neutral_nation", "front_restriction") and "nation" in r and r["nation"] not in Nation.slugs():
            c.add(where, "nation", r["nation"], "unknown nation", did_you_mean(str(r["nation"]), Nation.slugs()))
        if kind == "neutral_nation":
            if "max_distance_from" in r:
                c.area(where, "max_distance_from", r["max_distance_from"])
            if "max_distance" in r:
                c.int_(where, "max_distance", r["max_distance"], lo=0, hi=1000)
            if "supply_base" in r:  # EatS II.3: Kaunas, a supply base of the side the nation joins (G16)
                c.area(where, "supply_base", r["supply_base"])
                if "side" not in r:
                    c.add(where, "side", None, "missing required key (`supply_base` is a supply base of the side "
                          "the nation joins: name it with `side`)")
            for have, miss in (("max_distance", "max_distance_from"), ("max_distance_from", "max_distance")):
                if have in r and miss not in r:
                    c.add(where, miss, None, f"missing required key (`{have}` limits the nation's moves only "
                          f"together with `{miss}`)")
        if kind == "front_restriction" and "front" in r and r["front"] not in Front.slugs():
            c.add(where, "front", r["front"], "unknown front; expected north or south",
                  did_you_mean(str(r["front"]), Front.slugs()))
        special_rules.append(dict(r))

    # --- reinforcements: SoE 4.0 ----------------------------------------------------------------
    reinforcements = []
    reinforcing: dict[str, str] = {}
    for k, d in enumerate(c.tables("reinforcement", doc.get("reinforcement"))):
        bid = d.get("block")
        where = c.entry("reinforcement", k, f"block={bid}")
        check_keys(d, ["block", "round", "phase", "area", "sp", "condition", "side", "source"], path,
                   where, problems, required=["block", "round", "area"])
        bi = c.block(where, "block", bid)
        ai = c.area(where, "area", d.get("area"))
        side = _block_side(c, where, bi, d.get("side"))
        sp = _sp(c, where, bi, d.get("sp"))
        if isinstance(bid, str):
            if bid in deployed:
                c.add(where, "block", bid, f"block both deployed ({deployed[bid]}) and a reinforcement")
            if bid in reinforcing:
                c.add(where, "block", bid, f"reinforcement listed twice (also {reinforcing[bid]})")
            reinforcing.setdefault(bid, where)
        rnd = c.int_(where, "round", d.get("round"), lo=1, hi=ROUND_MAX) if "round" in d else None
        ph = d.get("phase", 1)
        if ph != REINFORCEMENT_PHASE and (not is_int(ph) or not 1 <= ph <= n_phases):
            c.add(where, "phase", ph, f"out of range; expected 1..{n_phases} or \"{REINFORCEMENT_PHASE}\"")
        elif rnd is not None and start and end:
            at = RoundPhase(rnd, ph)
            if at.key() < start.key() or at.key() > end.key():
                c.add(where, "round", rnd, f"arrival ({at}) outside the scenario ({start} … {end})")
        if ai is not None and side:
            area = d["area"]
            if side == "polish" and c.map.eastern_link[ai]:
                # SoE 1.4: Eastern Links are Soviet map-edge boxes.
                c.add(where, "area", area, "a Polish reinforcement cannot arrive on an Eastern Link")
            elif side == "soviet" and not c.map.eastern_link[ai]:
                soviet_city = c.map.vp[ai] > 0 and presence.get(area) == {"soviet"}
                if not soviet_city:
                    east = [a for a, i in c.map.area_index.items() if c.map.eastern_link[i]]
                    c.add(where, "area", area, "a Soviet reinforcement must arrive on an Eastern Link or a "
                          "key city the Soviets hold at the start", did_you_mean(area, east))
        cond = d.get("condition")
        if cond is not None and cond not in rule_ids:
            c.add(where, "condition", cond, "condition names no special rule of this scenario",
                  did_you_mean(str(cond), rule_ids))
        elif cond is not None and rule_kinds.get(cond) != "arrival_check":
            # only an arrival_check rule ever lets gated reinforcements arrive (engine arrival_checks_nb)
            gates = [i for i, kd in rule_kinds.items() if kd == "arrival_check"]
            c.add(where, "condition", cond, f"condition names a {rule_kinds.get(cond)} rule; only an "
                  "arrival_check rule gates reinforcements",
                  did_you_mean(str(cond), gates) or (f"arrival_check rules: {', '.join(gates)}" if gates else None))
        reinforcements.append({"block": bid, "side": side, "round": rnd, "phase": ph, "area": d.get("area"),
                               "sp": sp, "condition": cond})

    # `blocks` / `area` of an arrival_check restate its gated reinforcements (those whose `condition`
    # names it, which alone decide what arrives and where): they must agree with them.
    for k, r in enumerate(c.tables("special_rule", doc.get("special_rule"))):
        rid = r.get("id")
        if r.get("kind") != "arrival_check" or not isinstance(rid, str):
            continue
        where = c.entry("special_rule", k, f"id={rid}")
        gated = [x for x in reinforcements if x["condition"] == rid]
        if isinstance(r.get("blocks"), list):
            listed, actual = set(map(str, r["blocks"])), {str(x["block"]) for x in gated}
            if listed != actual:
                parts = [f"not gated: {', '.join(sorted(listed - actual))}" if listed - actual else "",
                         f"gated but not listed: {', '.join(sorted(actual - listed))}" if actual - listed else ""]
                c.add(where, "blocks", r["blocks"], "must list exactly the reinforcements whose `condition` is "
                      f"\"{rid}\" (they alone are gated; {'; '.join(x for x in parts if x)})")
        if isinstance(r.get("area"), str):
            off = sorted({str(x["area"]) for x in gated if x["area"] != r["area"]})
            if off:
                c.add(where, "area", r["area"], f"the reinforcements gated by this rule arrive elsewhere "
                      f"({', '.join(off)}); `area` only restates their `area`")

    # --- force pool: SoE 4.0 -------------------------------------------------------------------
    force_pool = {s: [] for s in Side.slugs()}
    fp = doc.get("force_pool", {})
    if c.table("force_pool", "", fp) is not None:
        check_keys(fp, Side.slugs(), path, "force_pool", problems)
        in_pool: dict[str, str] = {}
        for side, blocks in fp.items():
            if side not in Side.slugs():
                continue
            if not isinstance(blocks, list):
                c.add(f"force_pool.{side}", "", blocks, "expected a list of block ids")
                continue
            for bid in blocks:
                where = f"force_pool.{side}"
                bi = c.block(where, "block", bid)
                if bi is not None and c.roster.blocks["side"].iat[bi] != side:
                    c.add(where, "block", bid, f"a {c.roster.blocks['side'].iat[bi]} block in the {side} force pool")
                if bid in deployed:
                    c.add(where, "block", bid, f"block both in the force pool and deployed ({deployed[bid]})")
                if bid in reinforcing:
                    c.add(where, "block", bid, f"block both in the force pool and a reinforcement "
                          f"({reinforcing[bid]})")
                if bid in in_pool:
                    c.add(where, "block", bid, "block listed twice in the force pool")
                in_pool[bid] = side
                force_pool[side].append(bid)

    # --- removed cards ----------------------------------------------------------------------------
    removed = {s: [] for s in Side.slugs()}
    rc = doc.get("removed_cards", {})
    if c.table("removed_cards", "", rc) is not None:
        check_keys(rc, Side.slugs(), path, "removed_cards", problems)
        for side, ids in rc.items():
            if side not in Side.slugs():
                continue
            if not isinstance(ids, list):
                c.add(f"removed_cards.{side}", "", ids, "expected a list of card ids")
                continue
            deck = (decks or {}).get(side)
            valid = set(deck["id"]) if deck is not None else None
            for cid in ids:
                if not is_int(cid):
                    c.add(f"removed_cards.{side}", "", cid, "expected a card id (integer)")
                elif valid is not None and cid not in valid:
                    c.add(f"removed_cards.{side}", "", cid, f"no card with this id in the {side} deck")
                else:
                    removed[side].append(cid)

    # --- cubes --------------------------------------------------------------------------------------
    cubes = {s: {k: 0 for k in CUBE_KINDS} for s in Side.slugs()}
    cb = doc.get("cubes", {})
    if c.table("cubes", "", cb) is not None:
        check_keys(cb, Side.slugs(), path, "cubes", problems)
        for side, t in cb.items():
            if side in Side.slugs() and c.table(f"cubes.{side}", "", t) is not None:
                check_keys(t, CUBE_KINDS, path, f"cubes.{side}", problems)
                for kk, v in t.items():
                    if kk in CUBE_KINDS and c.int_(f"cubes.{side}", kk, v, lo=0, hi=CUBES_MAX) is not None:
                        cubes[side][kk] = v

    # --- objectives -----------------------------------------------------------------------------------
    objectives = []
    for k, o in enumerate(c.tables("objective", doc.get("objective"))):
        kind = o.get("kind")
        where = c.entry("objective", k, f"kind={kind}")
        check_keys(o, ["kind", "side", "area", "areas", "blocks", "vp", "when", "source", "description"],
                   path, where, problems, required=["kind", "side"])
        if kind is not None and kind not in OBJECTIVE_KINDS:
            c.add(where, "kind", kind, "unknown objective kind", did_you_mean(str(kind), OBJECTIVE_KINDS))
        c.side(where, "side", o.get("side"), required=False)
        areas = _objective_areas(c, where, o, required=kind in ("hold_area", "capture_area"))
        if kind == "eliminate_blocks":
            bl = o.get("blocks")
            if not isinstance(bl, list):
                c.add(where, "blocks", bl, "expected a list of block ids")
            else:
                for b in bl:
                    c.block(where, "blocks", b)
        if "vp" in o:
            c.int_(where, "vp", o["vp"], lo=-VP_MAX, hi=VP_MAX)
        if o.get("when", "end") not in OBJECTIVE_WHEN:
            c.add(where, "when", o["when"], "not implemented: objectives are scored only at the end of the "
                  "scenario", f"allowed: {', '.join(OBJECTIVE_WHEN)} (the default; or leave `when` out)")
        obj = dict(o)
        obj["areas"] = areas  # all-of set; [area] for the single-area form, [] when no area is named
        objectives.append(obj)

    # --- victory --------------------------------------------------------------------------------------
    victory = doc.get("victory", {"kind": "vp"})
    if c.table("victory", "", victory) is None:
        victory = {"kind": "vp"}
    # no draw setting: the engine reads none (a VP track at 0 at the end has no winner)
    check_keys(_retired(c, "victory", victory), ["kind", "immediate", "source", "description"], path, "victory",
               problems)
    if victory.get("kind", "vp") not in VICTORY_KINDS:
        c.add("victory", "kind", victory["kind"], "unknown victory kind",
              did_you_mean(str(victory["kind"]), VICTORY_KINDS))
    for k, im in enumerate(c.tables("victory.immediate", victory.get("immediate"))):
        where = f"victory.immediate[{k}]"
        check_keys(im, ["kind", "side", "area", "value", "source"], path, where, problems,
                   required=["kind", "side"])
        kind = im.get("kind")
        if kind is not None and kind not in IMMEDIATE_KINDS:
            c.add(where, "kind", kind, "unknown immediate-victory kind", did_you_mean(str(kind), IMMEDIATE_KINDS))
        c.side(where, "side", im.get("side"), required=False)
        if kind == "capture_area":
            c.area(where, "area", im.get("area"))
        if kind == "vp_at_least":
            c.int_(where, "value", im.get("value"), lo=1, hi=VP_MAX)

    reinf_df = pd.DataFrame(reinforcements, columns=["block", "side", "round", "phase", "area", "sp", "condition"])
    reinf_df["phase"] = reinf_df["phase"].astype(object)
    reinf_df["condition"] = reinf_df["condition"].astype(object).where(reinf_df["condition"].notna(), None)
    dep_df = pd.DataFrame([{k: v for k, v in d.items() if k != "_ai"} for d in deployment],
                          columns=["block", "side", "area", "sp"])
    if start is None or end is None:
        return None
    return Scenario(
        id=str(sid), name=str(doc.get("name", sid)), start=start, end=end,
        deployment=dep_df,
        garrisons=pd.DataFrame(garrisons, columns=["area", "side"]),
        reinforcements=reinf_df,
        force_pool=force_pool, removed_cards=removed, special_rules=special_rules, objectives=objectives,
        victory=victory, vp=dict(vp), initiative={k: dict(v) for k, v in initiative.items() if isinstance(v, dict)},
        cubes=cubes, source=str(doc.get("source", "")), description=str(doc.get("description", "")),
        players=players if isinstance(players, list) else [], path=path,
    )


def _retired(c: _Ctx, where: str, table: dict) -> dict:
    """Report the :data:`RETIRED_KEYS` of ``table``; return the table without them (for ``check_keys``)."""
    for key in RETIRED_KEYS.keys() & table.keys():
        c.add(where, key, table[key], *RETIRED_KEYS[key])
    return {k: v for k, v in table.items() if k not in RETIRED_KEYS}


def _objective_areas(c: _Ctx, where: str, o: dict, required: bool) -> list:
    """Areas of an objective: ``area = "x"`` (one area) or ``areas = ["x", "y"]`` (all of them).

    Exactly one of the two keys when ``required`` (``hold_area`` / ``capture_area``); ``areas`` is a
    non-empty list of distinct known area ids. Returns the ids as a list (``[area]`` for the
    single-area form, ``[]`` when neither key is given).
    """
    has_one, has_many = "area" in o, "areas" in o
    if has_one and has_many:
        c.add(where, "areas", o["areas"],
              "give either `area` (one area) or `areas` (all of several areas), not both")
        return []
    if has_one:
        c.area(where, "area", o["area"])
        return [o["area"]]
    if not has_many:
        if required:
            c.add(where, "area", None, "missing required key (`area`, or `areas` for several areas)")
        return []
    areas = o["areas"]
    if not isinstance(areas, list):
        c.add(where, "areas", areas, "expected a list of area ids")
        return []
    if not areas:
        c.add(where, "areas", areas, "empty list; expected at least one area id (or use `area`)")
        return []
    seen = set()
    for a in areas:
        c.area(where, "areas", a)
        if isinstance(a, str):
            if a in seen:
                c.add(where, "areas", a, "area listed twice")
            seen.add(a)
    return list(areas)


def _block_side(c: _Ctx, where: str, bi: int | None, stated) -> str | None:
    """Side of a block from the roster; a stated ``side`` must agree."""
    if stated is not None:
        stated = c.side(where, "side", stated)
    if bi is None:
        return stated
    actual = c.roster.blocks["side"].iat[bi]
    if stated and stated != actual:
        c.add(where, "side", stated, f"block {c.roster.blocks['id'].iat[bi]} is a {actual} block")
    return actual


def _sp(c: _Ctx, where: str, bi: int | None, sp) -> int | None:
    """Check a starting SP against 1..max_sp (SoE 2.1); default max_sp."""
    max_sp = int(c.roster.blocks["max_sp"].iat[bi]) if bi is not None else None
    if max_sp is not None and max_sp < 1:
        max_sp = None  # the roster row's max_sp was unreadable: its own problem, not this file's
    if sp is None:
        return max_sp
    if not is_int(sp):
        c.add(where, "sp", sp, "expected an integer")
        return None
    if sp < 1:
        c.add(where, "sp", sp, "SP below 1")
    elif max_sp is not None and sp > max_sp:
        c.add(where, "sp", sp, f"SP above the block's maximum of {max_sp}")
    return sp
