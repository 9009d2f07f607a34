"""Validate whole data directories or single files, reporting every problem at once.

:func:`validate` is what ``soe-sim validate`` runs. It accepts a data root (holding ``map/``,
``blocks/``, ``cards/``, ``scenarios/``), a single scenario TOML, or a single CSV/TOML of the map,
the roster or a deck; cross-file checks use the file's own data root when it has one, else the
built-in data. Problems are collected into one :class:`~soe_sim.errors.SoeInputError`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from soe_sim._paths import data_dir
from soe_sim.data._io import Problems, display_path, read_toml
from soe_sim.data.blocks import read_blocks
from soe_sim.data.cards import read_deck
from soe_sim.data.map import read_map
from soe_sim.data.scenario import data_root_of, read_scenario, scenario_paths
from soe_sim.data.enums import Side
from soe_sim.errors import Problem, SoeInputError

__all__ = ["DataSet", "read_dataset", "validate", "load_dataset"]


@dataclass
class DataSet:
    """Everything read from one data root (parts may be ``None`` when unreadable)."""

    root: Path
    game_map: object = None
    roster: object = None
    decks: dict = field(default_factory=dict)
    scenarios: dict = field(default_factory=dict)
    rulesets: list = field(default_factory=list)

    def summary(self) -> str:
        """One-line description used by ``soe-sim validate``."""
        parts = []
        if self.game_map is not None:
            parts.append(f"{self.game_map.n_areas} areas, {len(self.game_map.links)} links")
        if self.roster is not None:
            parts.append(f"{len(self.roster.blocks)} blocks ({len(self.roster.leaders)} leaders)")
        if self.decks:
            parts.append(" + ".join(f"{len(d)} {s}" for s, d in self.decks.items() if d is not None) + " cards")
        if self.scenarios:
            parts.append(f"{len(self.scenarios)} scenarios ({', '.join(self.scenarios)})")
        if self.rulesets:
            parts.append(f"{len(self.rulesets)} rulesets ({', '.join(self.rulesets)})")
        return f"{display_path(self.root)}: " + "; ".join(parts)


def read_dataset(root: Path | str | None, problems: Problems, scenarios: bool = True) -> DataSet:
    """Read and check everything under ``root`` (default: built-in data), appending problems."""
    root = Path(root) if root is not None else data_dir()
    ds = DataSet(root)
    ds.game_map = read_map(root / "map", problems)
    ds.roster = read_blocks(root / "blocks", problems)
    ids = set(ds.roster.block_index) if ds.roster is not None else None
    areas = set(ds.game_map.area_index) if ds.game_map is not None else None
    sound = {}  # the decks read without a problem: a ruleset's deck-size check of a faulty one only repeats it
    for side in Side.slugs():
        before = len(problems)
        ds.decks[side] = read_deck(root / "cards" / f"{side}.csv", problems, block_ids=ids, area_ids=areas)
        sound[side] = ds.decks[side] if len(problems) == before else None
    from soe_sim.rules import base_files

    # the data's rulesets (and their overlays), each after its bases: one whose base has a problem is not
    # checked ("eats.toml: flank_penalty: expected string" for a bad value in its base soe.toml)
    chains = {p: base_files(p) for p in (root / "rules").glob("*.toml")}
    faulty: set = set()
    for p in sorted(chains, key=lambda q: (len(chains[q]), q.name)):
        if faulty.intersection(chains[p]):
            continue
        before = len(problems)
        if _validate_rules(p, problems, ds.game_map, sound):
            ds.rulesets.append(p.stem)
        elif len(problems) > before:
            faulty.add(p.resolve())
    ds.rulesets.sort()
    if scenarios:
        for p in scenario_paths(root):
            sc = read_scenario(p, problems, ds.game_map, ds.roster, ds.decks)
            if sc is not None:
                ds.scenarios[sc.id] = sc
    return ds


def load_dataset(root: Path | str | None = None) -> DataSet:
    """Read and validate a whole data root; raise :class:`SoeInputError` listing every problem."""
    problems = Problems()
    ds = read_dataset(root, problems)
    if problems:
        raise SoeInputError(problems)
    return ds


def _root_of_file(path: Path, depth: int = 2) -> Path:
    """Data root of ``<root>/<part>/<file>`` when it has a map, else the built-in data."""
    root = path.resolve().parents[depth - 1]
    return root if (root / "map" / "areas.csv").exists() else data_dir()


def _validate_rules(path: Path, problems: Problems, game_map=None, decks: dict | None = None) -> str:
    """A ruleset file (``rules/*.toml``): merged over its ``[meta] base`` and checked against the
    schema and ranges (:func:`soe_sim.rules.load_rules`), then by the checks game set-up runs on a
    ruleset (:func:`soe_sim.engine.game.ruleset_problems`: combat chart, order execution groups,
    internment, immediate victory, deck size) against ``game_map`` / ``decks`` — by default those of
    the file's data root (``<root>/rules/<file>``), else the built-in data."""
    from soe_sim.rules import load_rules

    overlay = False
    try:
        rules = load_rules(path)
    except SoeInputError as err:
        doc = read_toml(path, Problems()) or {}
        partial = any(p.message.startswith(("not a complete ruleset", "missing rule")) for p in err.problems)
        if not partial or "base" in (doc.get("meta") or {}):
            problems.extend(err.problems)
            return ""
        # a file with only some rules: an overlay (odds --rules, a sweep's [[overlays]]), checked merged over SoE
        try:
            rules = load_rules("soe", [path])
        except SoeInputError as err2:
            problems.extend(err2.problems)
            return ""
        overlay = True
    if game_map is None and decks is None:
        root = _root_of_file(path)
        game_map = read_map(root / "map", Problems())  # context only: their problems are not this file's
        decks = {s: read_deck(root / "cards" / f"{s}.csv", Problems()) for s in Side.slugs()}
    if game_map is not None:
        from soe_sim.engine.game import ruleset_problems

        found = ruleset_problems(rules, game_map, decks)
        if found:
            problems.extend(found)
            return ""
    found = _start_problems(path, rules)
    if found:
        problems.extend(found)
        return ""
    if overlay:
        return f"{display_path(path)}: rules overlay, valid over soe"
    return f"{display_path(path)}: ruleset {rules['meta.id']}"


def _start_problems(path: Path, rules) -> list:
    """The scenarios of the file's data directory (else the built-in ones) that would start overstacked
    under ``rules`` (:func:`soe_sim.data.scenario.start_stacking_problems`, as set-up finds it): read only
    when ``stacking.max_blocks`` is below the limit the loader checked them with (``rules/soe.toml``)."""
    from soe_sim.data._rules import rule
    from soe_sim.data.scenario import start_stacking_problems

    root = _root_of_file(path)
    if int(rules["stacking.max_blocks"]) >= int(rule(root, "stacking.max_blocks")):
        return []
    game_map, roster = read_map(root / "map", Problems()), read_blocks(root / "blocks", Problems())
    if game_map is None or roster is None:  # context only: their own problems are not this file's
        return []
    decks = {s: read_deck(root / "cards" / f"{s}.csv", Problems()) for s in Side.slugs()}
    found = []
    for p in scenario_paths(root):
        sc = read_scenario(p, Problems(), game_map, roster, decks)
        if sc is not None:
            found += start_stacking_problems(sc, game_map, rules, display_path(path), roster)
    return found


def _validate_sweep(path: Path, problems: Problems) -> str:
    """A ``soe-sim sweep`` config: read as the sweep reads it (keys, scenarios, policies and their
    parameters, overlays), so a mistake shows before any chunk runs."""
    from soe_sim.sim.sweep import load_config, plan

    try:
        cfg = load_config(path)
    except SoeInputError as err:
        problems.extend(err.problems)
        return ""
    return f"{display_path(path)}: sweep config, {len(plan(cfg))} chunks of {cfg.games_per_chunk} games"


def _validate_variant(path: Path, problems: Problems) -> str:
    """A design variant (``variants/*.toml``: ``name``, ``[rules]``, ``[cards]``, ``[scenario]``)."""
    from soe_sim.design.variant import load_variant

    try:
        variant = load_variant(str(path))  # its rule values, card changes and scenario keys checked
    except SoeInputError as err:
        problems.extend(err.problems)
        return ""
    return f"{display_path(path)}: variant {variant.name}"


_SYSTEMS = ("soyuz81", "rswe")


def _validate_system(path: Path, problems: Problems) -> str:
    """A combat-system file (``systems/soyuz81.toml``, ``systems/rswe.toml``): read as ``odds --system``
    reads it (its CRT cells, odds limits, die faces)."""
    from soe_sim.systems.rswe import load_rswe
    from soe_sim.systems.soyuz81 import load_soyuz81

    try:
        (load_soyuz81 if path.stem == "soyuz81" else load_rswe)(path)
    except SoeInputError as err:
        problems.extend(err.problems)
        return ""
    return f"{display_path(path)}: combat system {path.stem}"


def _validate_extras(root: Path, problems: Problems) -> list[str]:
    """The design variants (``variants/``) and combat-system files (``systems/``) of a data directory."""
    done = [_validate_variant(p, problems) for p in sorted((root / "variants").glob("*.toml"))]
    done += [_validate_system(p, problems) for p in sorted((root / "systems").glob("*.toml")) if p.stem in _SYSTEMS]
    return [d for d in done if d]


def _validate_one(path: Path, problems: Problems) -> str:
    """Validate one path, appending problems; return the ok-summary text."""
    if path.is_dir():
        if not any((path / d).is_dir() for d in ("map", "blocks", "cards", "scenarios")):
            problems.add(path, "", "", str(path), "not a data directory (expected map/, blocks/, cards/, scenarios/)")
            return ""
        summary = read_dataset(path, problems).summary()
        extras = _validate_extras(path, problems)
        variants = sum(": variant " in e for e in extras)
        systems = len(extras) - variants
        return summary + (f"; {variants} variants" if variants else "") + (f"; {systems} combat systems" if systems
                                                                            else "")
    if not path.exists():
        problems.add(path, "", "", str(path), "file not found")
        return ""
    name = path.name
    if name in ("areas.csv", "links.csv", "grid.toml"):
        gm = read_map(path.parent, problems)
        return f"{display_path(path.parent)}: {gm.n_areas if gm else 0} areas"
    if name in ("blocks.csv", "leaders.toml"):
        r = read_blocks(path.parent, problems)
        return f"{display_path(path.parent)}: {len(r.blocks) if r else 0} blocks"
    if path.suffix == ".csv" and path.stem in Side.slugs():
        root = _root_of_file(path)
        sub = Problems()  # the roster is only context here; its own problems are not this file's
        roster = read_blocks(root / "blocks", sub)
        ids = set(roster.block_index) if roster is not None else None
        gm = read_map(root / "map", Problems())
        deck = read_deck(path, problems, block_ids=ids, area_ids=set(gm.area_index) if gm is not None else None)
        return f"{display_path(path)}: {len(deck) if deck is not None else 0} cards"
    if path.suffix == ".toml":
        doc = read_toml(path, Problems())
        if doc is not None and ("deployment" in doc or "start" in doc or path.parent.name == "scenarios"):
            root = data_root_of(path)
            # as in load_scenario: the map and roster it is built on are checked too; the decks
            # serve only the removed-card check (validate cards/*.csv for their own problems)
            gm = read_map(root / "map", problems)
            roster = read_blocks(root / "blocks", problems)
            decks = {s: read_deck(root / "cards" / f"{s}.csv", Problems()) for s in Side.slugs()}
            sc = read_scenario(path, problems, gm, roster, decks)
            return f"{display_path(path)}: scenario {sc.id if sc else '?'}"
        if doc is None:
            read_toml(path, problems)  # record the syntax error
            return ""
        from soe_sim.rules import is_variant_doc, rule_tables

        if path.stem in _SYSTEMS and (path.parent.name == "systems" or "crt" in doc):
            return _validate_system(path, problems)
        if path.parent.name == "variants" or is_variant_doc(doc):
            return _validate_variant(path, problems)
        if path.parent.name == "rules" or "meta" in doc or any(t in doc for t in rule_tables()):
            return _validate_rules(path, problems)
        if "pairs" in doc or "games_per_chunk" in doc:
            return _validate_sweep(path, problems)
    problems.add(path, "", "", name, "don't know how to validate this file: expected a data directory, "
                 "a scenario TOML, areas.csv, links.csv, grid.toml, blocks.csv, leaders.toml, polish.csv "
                 "or soviet.csv, a ruleset (rules/*.toml), a variant (variants/*.toml), a sweep config or a "
                 "combat-system file (systems/soyuz81.toml, systems/rswe.toml)")
    return ""


def validate(paths=None) -> list[str]:
    """Validate data paths (default: all built-in data).

    Parameters
    ----------
    paths : iterable of path-like, optional
        Data roots, scenario TOMLs or single CSV/TOML files.

    Returns
    -------
    list[str]
        One summary line per path when everything is valid.

    Raises
    ------
    SoeInputError
        Listing every problem found in all paths.
    """
    paths = [Path(p) for p in (paths or [])] or [data_dir()]
    problems = Problems()
    summaries = [_validate_one(p, problems) for p in paths]
    if problems:
        # de-duplicate (a shared data root may be read more than once)
        unique: dict[str, Problem] = {}
        for p in problems:
            unique.setdefault(str(p), p)
        raise SoeInputError(list(unique.values()))
    return summaries
