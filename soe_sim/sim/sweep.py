"""Parameter sweeps on ``dask.distributed``: scenarios × policy pairs × rule overlays × seed chunks.

A sweep config (TOML) names the grid::

    scenarios = ["tutorial"]          # scenario ids (or TOML paths)
    games_per_chunk = 200
    chunks = 8
    seed = 7
    # optional
    ruleset = "soe"                   # base ruleset (data/rules/<name>.toml or a path)
    key_cities = ["warsaw", "kiev"]   # held_<city> columns (default: the map's 2+ VP cities)
    trajectories = false              # also write the VP track after every phase
    battles = false                   # also write one row per battle
    common_random_numbers = false     # true: every pair / overlay plays the same chunk seeds

    [[pairs]]
    polish = "random"
    soviet = "random"
    [[pairs]]                         # policy parameters: a list is a grid axis
    polish = "balanced"
    soviet = "balanced"
    polish_params = { attack_threshold = [0.5, 0.6, 0.7] }

    [[overlays]]                      # optional; without any, one overlay "base" (the ruleset as is)
    name = "gv3"
    files = ["rules/gv3.toml"]        # rules overlays (tables of data/rules/soe.toml), relative to the config
    [overlays.rules]                  # and/or inline rule keys
    combat.great_victory_losses = 3
    [[overlays]]                      # or a designer variant file (decks, scenario values too;
    name = "flank-1"                  # docs/designer.md), relative to the config or a built-in name
    variant = "flank-1"

Every (scenario, pair, policy parameters, overlay, chunk) is one task. Its batch seed is derived with ``SeedSequence``
from (sweep seed, scenario, pair, overlay, chunk index) — pair and overlay left out under
``common_random_numbers`` — so a task always plays the same games. A finished task is written
atomically (temporary file + rename) to
``OUT/games/<scenario>/<polish>__<soviet>[__p<hash of the parameters>]/<overlay>/chunk-00000.parquet`` (and ``OUT/trajectories``,
``OUT/battles`` when asked), so an interrupted sweep resumes by skipping the chunks whose file
exists: none is recomputed, no row is lost or written twice. ``OUT/manifest.json`` records the
config, the task list and the progress. ``pandas.read_parquet(OUT / "games")`` (or
:func:`read_sweep`) reads the whole sweep.

Every row carries ``scenario``, ``polish``, ``soviet``, ``polish_params``, ``soviet_params`` (JSON of
the parameter overrides), ``overlay``, ``chunk``, ``seed`` and ``game``;
``play_game(setup, seed=(seed, game), polish=(polish, params), soviet=...)`` replays it (``setup`` built
with the overlay's rules: :func:`overlay_setup`).
"""
from __future__ import annotations

import copy
import functools
import hashlib
import itertools
import json
import os
import re
import time
import tomllib
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from soe_sim._dask import check_scheduler_address
from soe_sim.data._io import load_toml, toml_syntax_error
from soe_sim.errors import Problem, SoeInputError, did_you_mean
from soe_sim.random import seed_int

__all__ = ["SweepConfig", "Overlay", "Task", "load_config", "plan", "run_sweep", "read_sweep", "sweep_summary",
           "format_sweep_summary", "chunk_seed",
           "overlay_setup", "run_task"]

MANIFEST = "manifest.json"
MANIFEST_VERSION = 1
TOP_KEYS = ("scenarios", "games_per_chunk", "chunks", "seed", "pairs", "overlays", "ruleset", "key_cities",
            "trajectories", "battles", "common_random_numbers")
PAIR_KEYS = ("polish", "soviet", "polish_params", "soviet_params")
OVERLAY_KEYS = ("name", "files", "rules", "variant")
_SLUG = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")
TABLES = ("games", "trajectories", "battles")


@dataclass(frozen=True)
class Overlay:
    """A rule variant: overlay files and inline rule keys applied to the base ruleset, or a full
    designer variant (``variant``: :meth:`soe_sim.design.variant.Variant.spec`, which also changes
    decks and scenario values and names its own ruleset)."""

    name: str
    files: tuple[str, ...] = ()
    rules: dict = field(default_factory=dict, hash=False, compare=False)
    variant: dict = field(default_factory=dict, hash=False, compare=False)

    def fingerprint(self) -> str:
        d = {"files": [_file_digest(f) for f in self.files], "rules": self.rules}
        if self.variant:
            from soe_sim.design.variant import Variant

            d["variant"] = Variant.from_spec(self.variant).content_key()
        return _digest(d)

    def to_dict(self) -> dict:
        d = {"name": self.name, "files": list(self.files), "rules": self.rules}
        if self.variant:
            d["variant"] = self.variant
        return d


@dataclass
class SweepConfig:
    """A validated sweep config (:func:`load_config`)."""

    scenarios: list[str]
    games_per_chunk: int
    chunks: int
    seed: int
    pairs: list[tuple[str, str, str, str]]  # (polish, polish params JSON, soviet, soviet params JSON)
    overlays: list[Overlay]
    ruleset: str = "soe"
    key_cities: list[str] | None = None
    trajectories: bool = False
    battles: bool = False
    common_random_numbers: bool = False
    source: str = "<config>"

    def to_dict(self) -> dict:
        return {
            "scenarios": list(self.scenarios), "games_per_chunk": self.games_per_chunk, "chunks": self.chunks,
            "seed": self.seed,
            "pairs": [{"polish": p, "polish_params": json.loads(pp or "{}"), "soviet": s,
                       "soviet_params": json.loads(sp or "{}")} for p, pp, s, sp in self.pairs],
            "overlays": [o.to_dict() for o in self.overlays],
            "ruleset": self.ruleset, "key_cities": self.key_cities, "trajectories": self.trajectories,
            "battles": self.battles, "common_random_numbers": self.common_random_numbers,
        }

    def fingerprint(self) -> str:
        """What fixes the content of a chunk (the grid's extent may change between runs)."""
        return _digest({
            "seed": self.seed, "games_per_chunk": self.games_per_chunk, "ruleset": self.ruleset,
            "key_cities": self.key_cities, "trajectories": self.trajectories, "battles": self.battles,
            "common_random_numbers": self.common_random_numbers,
            "overlays": {o.name: o.fingerprint() for o in self.overlays},
        })


@dataclass(frozen=True)
class Task:
    """One chunk of games: ``games`` games of batch seed ``seed``."""

    scenario: str
    polish: str
    soviet: str
    overlay: str
    chunk: int
    seed: int
    games: int
    polish_params: str = ""  # JSON of the parameter overrides ("" = the policy's defaults)
    soviet_params: str = ""

    @property
    def pair(self) -> str:
        return _pair_dir(self.polish, self.polish_params, self.soviet, self.soviet_params)

    def relpath(self, table: str = "games") -> str:
        return f"{table}/{_dir_name(self.scenario)}/{self.pair}/{self.overlay}/chunk-{self.chunk:05d}.parquet"


# --------------------------------------------------------------------------------------------------
# Config


def _digest(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _file_digest(path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    except OSError:
        return "missing"


def _pair_dir(polish: str, polish_params: str, soviet: str, soviet_params: str) -> str:
    """``<polish>__<soviet>``, plus ``__p<hash>`` of the parameter overrides when there are any."""
    name = f"{polish}__{soviet}"
    if polish_params or soviet_params:
        name += "__p" + _digest([polish_params, soviet_params])[:10]
    return name


def _expand_params(table, where, entry, field_, file, problems) -> list[dict]:
    """A params table whose values are numbers or lists of numbers -> every combination."""
    if table is None:
        return [{}]
    if not isinstance(table, dict):
        problems.append(Problem(file, entry, field_, table, "expected a table of policy parameters",
                                "e.g. polish_params = { attack_threshold = [0.5, 0.7] }"))
        return [{}]
    keys = sorted(table)
    values = []
    for k in keys:
        v = table[k]
        vs = v if isinstance(v, list) else [v]
        if not vs or any(isinstance(x, bool) or not isinstance(x, (int, float)) for x in vs):
            problems.append(Problem(file, entry, f"{field_}.{k}", v, "expected a number or a list of numbers"))
            return [{}]
        values.append(vs)
    return [dict(zip(keys, combo)) for combo in itertools.product(*values)]


def _dir_name(scenario: str) -> str:
    return Path(scenario).stem if scenario.endswith(".toml") else scenario


def _int(raw, key, file, problems, lo=0):
    v = raw.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or v < lo:
        problems.append(Problem(file, "", key, v, f"expected an integer >= {lo}"))
        return None
    return v


def _bool(raw, key, file, problems, default=False):
    v = raw.get(key, default)
    if not isinstance(v, bool):
        problems.append(Problem(file, "", key, v, "expected true or false"))
        return default
    return v


def load_config(config, *, base_dir: str | Path | None = None) -> SweepConfig:
    """Read and validate a sweep config (a TOML path or a dict); every problem is reported at once,
    naming the file, the key and the value, with a suggestion where one exists."""
    from soe_sim.data import list_scenarios, load_scenario
    from soe_sim.sim import resolve_policy

    if isinstance(config, (str, Path)):
        file = str(config)
        try:
            raw = load_toml(config)
        except FileNotFoundError:
            raise SoeInputError(Problem(file, "", "", file, "sweep config not found")) from None
        except (OSError, UnicodeDecodeError) as err:
            raise SoeInputError(Problem(file, "", "", file, f"cannot read the sweep config: {err}")) from None
        except tomllib.TOMLDecodeError:
            raise toml_syntax_error(config) from None
        base_dir = Path(config).resolve().parent if base_dir is None else Path(base_dir)
    else:
        file = "<config>"
        raw = copy.deepcopy(dict(config))
        base_dir = Path(base_dir or ".")
    problems: list[Problem] = []
    for key in raw:
        if key not in TOP_KEYS:
            problems.append(Problem(file, "", key, raw[key], "unknown key",
                                    did_you_mean(key, TOP_KEYS) or f"known keys: {', '.join(TOP_KEYS)}"))
    for key in ("scenarios", "games_per_chunk", "chunks", "seed", "pairs"):
        if key not in raw:
            problems.append(Problem(file, "", key, None, "missing required key",
                                    'e.g. scenarios = ["tutorial"], games_per_chunk = 200, chunks = 8, seed = 7, '
                                    '[[pairs]] polish = "random" soviet = "random"'))
    # scenarios
    scenarios: list[str] = []
    sc = raw.get("scenarios", [])
    if isinstance(sc, str):
        sc = [sc]
    if not isinstance(sc, list) or ("scenarios" in raw and not sc):
        problems.append(Problem(file, "", "scenarios", raw.get("scenarios"), "expected a non-empty list of scenario ids"))
        sc = []
    known = list_scenarios()["id"].tolist()
    for i, s in enumerate(sc):
        if s == "all":
            scenarios.extend(k for k in known if k not in scenarios)
            continue
        if not isinstance(s, str):
            problems.append(Problem(file, f"scenarios[{i}]", "", s, "expected a scenario id"))
            continue
        try:
            load_scenario(s)
        except SoeInputError:
            problems.append(Problem(file, f"scenarios[{i}]", "", s, "unknown scenario",
                                    did_you_mean(s, known) or f"known scenarios: {', '.join(known)}"))
            continue
        if s in scenarios:
            problems.append(Problem(file, f"scenarios[{i}]", "", s, "scenario listed twice"))
            continue
        scenarios.append(s)
    gpc = _int(raw, "games_per_chunk", file, problems, lo=1) if "games_per_chunk" in raw else None
    chunks = _int(raw, "chunks", file, problems, lo=1) if "chunks" in raw else None
    seed = _int(raw, "seed", file, problems, lo=0) if "seed" in raw else None
    # pairs (× the combinations of list-valued policy parameters)
    from soe_sim.sim import policy_label

    pairs: list[tuple[str, str, str, str]] = []
    pr = raw.get("pairs", [])
    if not isinstance(pr, list) or ("pairs" in raw and not pr):
        problems.append(Problem(file, "", "pairs", raw.get("pairs"), "expected [[pairs]] tables with polish and soviet"))
        pr = []
    for i, p in enumerate(pr):
        entry = f"pairs[{i}]"
        if not isinstance(p, dict):
            problems.append(Problem(file, entry, "", p, "expected a table with polish and soviet"))
            continue
        for k in p:
            if k not in PAIR_KEYS:
                problems.append(Problem(file, entry, k, p[k], "unknown key",
                                        did_you_mean(k, PAIR_KEYS) or f"known keys: {', '.join(PAIR_KEYS)}"))
        sides = []
        for side in ("polish", "soviet"):
            if side not in p:
                problems.append(Problem(file, entry, side, None, "missing policy", 'e.g. polish = "random"'))
                continue
            n0 = len(problems)
            variants = _expand_params(p.get(f"{side}_params"), side, entry, f"{side}_params", file, problems)
            if len(problems) > n0:
                continue
            labels = []
            for params in variants:
                try:
                    pol = resolve_policy((p[side], params) if params else p[side], file, entry)
                except SoeInputError as err:
                    for q in err.problems:
                        field_ = side if q.message == "unknown policy" else f"{side}_params.{q.field}" if q.field else side
                        problems.append(Problem(file, entry, field_, q.value, q.message, q.suggestion))
                    labels = None
                    break
                labels.append(policy_label(pol))
            if labels is not None:
                sides.append(labels)
        if len(sides) == 2:
            for (pn, pp), (sn, sp) in itertools.product(*sides):
                key = (pn, pp, sn, sp)
                if key in pairs:
                    problems.append(Problem(file, entry, "", f"{pn} vs {sn}", "pair listed twice"))
                else:
                    pairs.append(key)
    # overlays
    ruleset = raw.get("ruleset", "soe")
    if not isinstance(ruleset, str):
        problems.append(Problem(file, "", "ruleset", ruleset, "expected a ruleset name or TOML path"))
        ruleset = "soe"
    else:
        from soe_sim.rules import load_rules

        try:  # an unknown built-in name ("eatz"): the error suggests the closest ("eats")
            load_rules(ruleset)
        except SoeInputError as err:
            problems.extend(Problem(file, "", "ruleset", q.value, q.message, q.suggestion) for q in err.problems)
            ruleset = "soe"
    overlays: list[Overlay] = []
    ov = raw.get("overlays", None)
    if ov is None:
        overlays = [Overlay("base")]
    elif not isinstance(ov, list) or not ov:
        problems.append(Problem(file, "", "overlays", ov, "expected [[overlays]] tables with a name"))
    else:
        for i, o in enumerate(ov):
            entry = f"overlays[{i}]"
            if not isinstance(o, dict):
                problems.append(Problem(file, entry, "", o, "expected a table"))
                continue
            for k in o:
                if k not in OVERLAY_KEYS:
                    problems.append(Problem(file, entry, k, o[k], "unknown key",
                                            did_you_mean(k, OVERLAY_KEYS) or f"known keys: {', '.join(OVERLAY_KEYS)}"))
            name = o.get("name")
            if not isinstance(name, str) or not _SLUG.match(name):
                problems.append(Problem(file, entry, "name", name, "expected a lower-case name (a-z, 0-9, '-', '_')",
                                        'e.g. name = "gv3"'))
                continue
            if any(x.name == name for x in overlays):
                problems.append(Problem(file, entry, "name", name, "overlay name used twice"))
                continue
            files = o.get("files", [])
            if isinstance(files, str):
                files = [files]
            paths = []
            for f in files if isinstance(files, list) else [files]:
                if not isinstance(f, str):
                    problems.append(Problem(file, entry, "files", f, "expected a path to a rule overlay TOML"))
                    continue
                fp = Path(f) if Path(f).is_absolute() else base_dir / f
                if not fp.is_file():
                    problems.append(Problem(file, entry, "files", f, "overlay file not found",
                                            f"paths are relative to {base_dir}"))
                    continue
                paths.append(str(fp.resolve()))
            rules = o.get("rules", {})
            if not isinstance(rules, dict):
                problems.append(Problem(file, entry, "rules", rules, "expected a table of rule keys"))
                rules = {}
            spec = {}
            if "variant" in o:  # a designer variant (docs/designer.md): decks and scenario values too
                from soe_sim.design.variant import load_variant

                if paths or o.get("rules"):
                    problems.append(Problem(file, entry, "variant", o["variant"],
                                            "give either `variant` or `files` / `rules`",
                                            "a variant file can hold the rule keys itself"))
                try:
                    spec = load_variant(o["variant"], base_dir=base_dir, _where=(file, entry)).spec()
                except SoeInputError as err:
                    problems.extend(err.problems)
            overlay = Overlay(name, tuple(paths), rules, spec)
            try:  # unknown rule keys and bad types, naming the file and key
                _overlay_rules(ruleset, overlay, file)
            except SoeInputError as err:
                problems.extend(err.problems)
            overlays.append(overlay)
    key_cities = raw.get("key_cities")
    if key_cities is not None:
        from soe_sim.data import load_map
        from soe_sim.sim import key_city_ids

        try:
            key_cities = key_city_ids(load_map(), key_cities)
        except SoeInputError as err:
            for p_ in err.problems:
                problems.append(Problem(file, "", "key_cities", p_.value, p_.message, p_.suggestion))
    traj = _bool(raw, "trajectories", file, problems)
    bats = _bool(raw, "battles", file, problems)
    crn = _bool(raw, "common_random_numbers", file, problems)
    if problems:
        raise SoeInputError(problems)
    cfg = SweepConfig(scenarios=scenarios, games_per_chunk=gpc, chunks=chunks, seed=seed, pairs=pairs,
                      overlays=overlays, ruleset=ruleset, key_cities=key_cities, trajectories=traj, battles=bats,
                      common_random_numbers=crn, source=file)
    return cfg


# --------------------------------------------------------------------------------------------------
# Rules and set-ups of overlays


def _overlay_rules(ruleset: str, overlay: Overlay, file: str = "<config>"):
    from soe_sim.rules import Rules, _merge, check_rules, load_rules

    base = load_rules(ruleset, overlay.files)
    if not overlay.rules:
        return base
    values = copy.deepcopy(base.values)
    problems: list[Problem] = []
    where = f"{file}: overlays '{overlay.name}' rules"
    _merge(values, overlay.rules, where, "", problems)
    if problems:
        raise SoeInputError(problems)
    rules = Rules(values, dict(base.sources), list(base.files) + [f"{file}#{overlay.name}"])
    check_rules(rules, where)  # the ranges every other path checks (audit I D12: flank_penalty = -7 ran)
    return rules


@functools.lru_cache(maxsize=64)
def _setup_cached(scenario: str, ruleset: str, overlay_json: str, stamp: tuple = ()):
    from soe_sim.data import load_scenario
    from soe_sim.engine.game import _build_setup, game_setup, scenario_data

    o = json.loads(overlay_json)
    if o.get("variant"):  # a designer variant names its own ruleset
        from soe_sim.design.variant import Variant, variant_setup

        return variant_setup(scenario, Variant.from_spec(o["variant"]))
    overlay = Overlay(o["name"], tuple(o["files"]), o["rules"])
    if ruleset == "soe" and not overlay.files and not overlay.rules:
        return game_setup(scenario)
    sc = load_scenario(scenario)
    game_map, roster, decks = scenario_data(sc)
    return _build_setup(sc, game_map, roster, _overlay_rules(ruleset, overlay), decks)


def overlay_setup(scenario: str, overlay: Overlay | None = None, ruleset: str = "soe"):
    """The engine GameSetup of ``scenario`` under ``ruleset`` and ``overlay`` (cached)."""
    overlay = overlay or Overlay("base")
    key = json.dumps(overlay.to_dict(), sort_keys=True)
    return _setup_cached(scenario, ruleset, key, _overlay_stamp(scenario, ruleset, overlay))


def _overlay_stamp(scenario: str, ruleset: str, overlay: Overlay) -> tuple:
    """The data root and the file stamps of the set-up (``soe_sim.engine.game._data_stamp``) and of the
    overlay's files: part of the cache key, so a data file edited between two calls is read again. An
    unknown scenario gives an empty stamp (the set-up reports it)."""
    from soe_sim._paths import data_dir, file_stamps
    from soe_sim.engine.game import _data_stamp

    if overlay.variant:  # a designer variant names its own ruleset
        ruleset = str(overlay.variant.get("ruleset") or "soe")
    try:
        stamp = _data_stamp(scenario, ruleset)
    except SoeInputError:
        stamp = ()
    return str(data_dir()), stamp, file_stamps(overlay.files)


# --------------------------------------------------------------------------------------------------
# Plan


def chunk_seed(seed: int, scenario: str, polish: str, soviet: str, overlay: str, chunk: int,
               common_random_numbers: bool = False, polish_params: str = "", soviet_params: str = "") -> int:
    """The batch seed of one chunk: ``SeedSequence([seed, H(scenario, pair, overlay), chunk])`` as a
    63-bit integer (H = the first 8 bytes of a SHA-256; the pair includes the policies' parameter
    overrides; pair and overlay are left out under common random numbers)."""
    parts = ([_dir_name(scenario)] if common_random_numbers else
             [_dir_name(scenario), polish, soviet, overlay] + ([polish_params, soviet_params]
                                                               if polish_params or soviet_params else []))
    h = int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[:8], "little")
    return seed_int(np.random.SeedSequence([int(seed), h, int(chunk)]))


def plan(cfg: SweepConfig) -> list[Task]:
    """Every task of the grid, in a fixed order."""
    tasks = []
    for sc in cfg.scenarios:
        for pol, pp, sov, sp in cfg.pairs:
            for ov in cfg.overlays:
                for c in range(cfg.chunks):
                    tasks.append(Task(sc, pol, sov, ov.name, c,
                                      chunk_seed(cfg.seed, sc, pol, sov, ov.name, c, cfg.common_random_numbers,
                                                 pp, sp),
                                      cfg.games_per_chunk, pp, sp))
    return tasks


# --------------------------------------------------------------------------------------------------
# Running one task (on a worker)


def run_task(task: dict, ruleset: str, overlay: dict, key_cities, trajectories: bool, battles: bool) -> dict:
    """Play one chunk; returns ``{"games": df, "trajectories": df | None, "battles": df | None,
    "seconds": float}`` with the sweep columns ``overlay`` and ``chunk`` added."""
    from soe_sim.sim import play_chunk

    t0 = time.perf_counter()
    ov = Overlay(overlay["name"], tuple(overlay["files"]), overlay["rules"], overlay.get("variant") or {})
    setup = overlay_setup(task["scenario"], ov, ruleset)
    pol = (task["polish"], json.loads(task["polish_params"])) if task.get("polish_params") else task["polish"]
    sov = (task["soviet"], json.loads(task["soviet_params"])) if task.get("soviet_params") else task["soviet"]
    frames = play_chunk(setup, pol, sov, seed=task["seed"], start=0, games=task["games"],
                        threads=1, key_cities=key_cities, trajectories=trajectories, battles=battles)
    out = {}
    for name, df in zip(TABLES, frames):
        if df is not None:
            df["scenario"] = task["scenario"]
            df.insert(5, "overlay", task["overlay"])
            df.insert(6, "chunk", np.int64(task["chunk"]))
        out[name] = df
    out["seconds"] = time.perf_counter() - t0
    return out


# --------------------------------------------------------------------------------------------------
# Files


def _atomic_write_parquet(df: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"  # dot files: skipped by pyarrow dataset discovery
    frame = df.copy()
    frame.attrs = {}
    frame.to_parquet(tmp, index=False)
    with open(tmp, "rb+") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _atomic_write_json(obj, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(obj, indent=2, default=str) + "\n")
    os.replace(tmp, path)


def _write_chunk(out: Path, task: Task, result: dict) -> None:
    """Write a finished chunk: the auxiliary tables first, the games file (the completion mark) last."""
    for name in ("trajectories", "battles", "games"):
        df = result.get(name)
        if df is not None:
            _atomic_write_parquet(df, out / task.relpath(name))


def _clean_temp(out: Path) -> int:
    n = 0
    for p in out.rglob(".*.tmp"):
        try:
            p.unlink()
            n += 1
        except OSError:
            pass
    return n


def _manifest(cfg: SweepConfig, tasks: list[Task], done: set, out: Path, started: str, status: str,
              extra: dict | None = None) -> dict:
    from soe_sim import __version__

    m = {
        "manifest_version": MANIFEST_VERSION,
        "soe_sim": __version__,
        "status": status,
        "config_file": cfg.source,
        "fingerprint": cfg.fingerprint(),
        "config": cfg.to_dict(),
        "layout": "{table}/{scenario}/{polish}__{soviet}[__p{params hash}]/{overlay}/chunk-{chunk:05d}.parquet",
        "tables": [t for t in TABLES if t == "games" or getattr(cfg, t)],
        "started": started,
        "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "tasks_total": len(tasks),
        "tasks_done": sum(1 for t in tasks if t.relpath() in done),
        "games_total": sum(t.games for t in tasks),
        "games_done": sum(t.games for t in tasks if t.relpath() in done),
        "tasks": [{**asdict(t), "pair": t.pair, "path": t.relpath(), "done": t.relpath() in done} for t in tasks],
    }
    if extra:
        m.update(extra)
    return m


def _verify_chunks(out: Path, tasks: list[Task]) -> None:
    import pyarrow.parquet as pq

    for t in tasks:
        path = out / t.relpath()
        try:
            seeds = pq.read_table(path, columns=["seed"]).column("seed").to_pylist()
        except Exception as err:  # noqa: BLE001 - any unreadable file is reported the same way
            raise SoeInputError(Problem(str(path), "", "", "", f"unreadable chunk file: {err}",
                                        "delete it to have it recomputed")) from None
        if len(seeds) != t.games or set(seeds) != {t.seed}:
            raise SoeInputError(Problem(str(path), "", "seed", sorted(set(seeds))[:3],
                                        f"this chunk was not written by this sweep (expected {t.games} games of "
                                        f"seed {t.seed})", "use a new --out directory"))


def _check_existing(out: Path, cfg: SweepConfig) -> dict | None:
    mp = out / MANIFEST
    if not mp.exists():
        others = sorted(p.name for p in out.iterdir() if p.name not in TABLES and not p.name.startswith("."))
        if others:  # a sweep writes games/, trajectories/, battles/ and the manifest: nothing else is ours
            raise SoeInputError(Problem("--out", "", "", str(out), "the directory is not empty and holds no sweep "
                                        f"(no {MANIFEST}; it has {', '.join(others[:3])}"
                                        f"{', …' if len(others) > 3 else ''})",
                                        "give a new or empty directory, or the --out of an earlier sweep to resume"))
        return None
    try:
        old = json.loads(mp.read_text())
    except (OSError, ValueError):
        raise SoeInputError(Problem(str(mp), "", "", "", "unreadable sweep manifest",
                                    "remove it (finished chunk files are kept and re-used) or use a new --out")) from None
    if old.get("fingerprint") != cfg.fingerprint():
        before, now = old.get("config") or {}, cfg.to_dict()
        keys = ("seed", "games_per_chunk", "ruleset", "key_cities", "trajectories", "battles",
                "common_random_numbers", "overlays")
        changed = [f"{k} {before.get(k)!r} → {now.get(k)!r}" for k in keys
                   if k in before and before.get(k) != now.get(k)]
        what = "; ".join(changed) if changed else "the content of a rule overlay or variant file"
        raise SoeInputError(Problem(str(mp), "", "fingerprint", old.get("fingerprint"),
                                    f"this directory holds a sweep with different settings ({what})",
                                    "use a new --out directory (the grid's scenarios, pairs, overlays and chunks "
                                    "may change between runs; what decides a chunk's games may not)"))
    return old


# --------------------------------------------------------------------------------------------------
# The sweep


def run_sweep(config, out, scheduler: str | None = None, *, client=None, n_workers: int | None = None,
              threads_per_worker: int = 1, processes: bool = True, progress: bool = False,
              max_tasks: int | None = None) -> dict:
    """Run (or resume) the sweep ``config`` into directory ``out``; returns the final manifest summary.

    Parameters
    ----------
    config : path, dict or SweepConfig
    out : path of the output directory (created).
    scheduler : address of a running ``dask.distributed`` scheduler (``tcp://host:8786``); default a
        LocalCluster of ``n_workers`` workers (default: one per CPU) with ``threads_per_worker``
        threads, in processes unless ``processes=False``.
    client : an existing ``distributed.Client`` (overrides ``scheduler``).
    max_tasks : stop after submitting this many of the missing tasks (the rest stays for a later run).

    Finished chunks already in ``out`` are skipped. Remote workers need soe_sim installed and the
    scenarios available; the client writes every file, so workers need no shared file system.
    """
    cfg = config if isinstance(config, SweepConfig) else load_config(config)
    own_client = None
    if client is None:
        scheduler = check_scheduler_address(scheduler)
        if scheduler:  # connected before OUT and its manifest exist: an unreachable scheduler leaves nothing
            own_client = client = _connect(scheduler)
    try:
        return _run_sweep(cfg, Path(out), client, own_client, n_workers, threads_per_worker, processes,
                          max_tasks, progress)
    except BaseException:
        if own_client is not None and own_client.status != "closed":
            own_client.close()
        raise


def _connect(scheduler: str):
    from distributed import Client

    try:
        return Client(scheduler, timeout="30s")
    except (OSError, TimeoutError) as err:
        raise SoeInputError(Problem("--scheduler", "", "", scheduler, f"cannot connect to the dask scheduler: {err}",
                                    "give tcp://HOST:PORT of a running `dask scheduler`")) from None


def _run_sweep(cfg, out, client, own_client, n_workers, threads_per_worker, processes, max_tasks, progress):
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise SoeInputError(Problem("--out", "", "", str(out), f"cannot create directory: {err.strerror}")) from None
    old = _check_existing(out, cfg)
    started = (old or {}).get("started") or time.strftime("%Y-%m-%dT%H:%M:%S%z")
    _clean_temp(out)
    tasks = plan(cfg)
    done = {t.relpath() for t in tasks if (out / t.relpath()).exists()}
    if old is None and done:  # chunk files without a manifest: make sure they are this sweep's
        _verify_chunks(out, [t for t in tasks if t.relpath() in done])
    todo = [t for t in tasks if t.relpath() not in done]
    skipped = len(done)
    if max_tasks is not None:
        todo = todo[: int(max_tasks)]
    _atomic_write_json(_manifest(cfg, tasks, done, out, started, "running"), out / MANIFEST)
    overlays = {o.name: o.to_dict() for o in cfg.overlays}
    t0 = time.perf_counter()
    computed = 0
    status = "interrupted"
    own_cluster = None
    futures: dict = {}
    try:
        if todo:
            from distributed import Client, LocalCluster, as_completed

            if client is None:
                own_cluster = LocalCluster(n_workers=n_workers, threads_per_worker=int(threads_per_worker),
                                           processes=processes, dashboard_address=None)
                own_client = client = Client(own_cluster)
            for t in todo:
                f = client.submit(run_task, asdict(t), cfg.ruleset, overlays[t.overlay], cfg.key_cities,
                                  cfg.trajectories, cfg.battles, pure=False,
                                  key=f"soe-chunk-{_dir_name(t.scenario)}-{t.pair}-{t.overlay}-"
                                      f"{t.chunk:05d}-{uuid.uuid4().hex[:8]}")
                futures[f] = t
            from tqdm.auto import tqdm

            with tqdm(total=len(tasks), initial=skipped, unit="chunk", disable=not progress, desc="sweep",
                      leave=False) as bar:
                for fut in as_completed(list(futures)):
                    t = futures.pop(fut)
                    result = fut.result()
                    _write_chunk(out, t, result)
                    done.add(t.relpath())
                    computed += 1
                    bar.update(1)
                    fut.release()
        status = "complete" if len(done) == len(tasks) else "partial"
    finally:
        if status == "interrupted":
            for f in list(futures):
                try:
                    f.cancel()
                except Exception:  # noqa: BLE001 - best effort on the way out
                    pass
        elapsed = time.perf_counter() - t0
        if own_client is not None:
            own_client.close()
        if own_cluster is not None:
            own_cluster.close()
        man = _manifest(cfg, tasks, done, out, started, status,
                        {"last_run": {"computed": computed, "skipped": skipped, "seconds": elapsed}})
        _atomic_write_json(man, out / MANIFEST)
    return {k: v for k, v in man.items() if k != "tasks"}


def read_sweep(out, table: str = "games") -> pd.DataFrame:
    """All finished chunks of a sweep directory as one frame (rows in task order, then game)."""
    out = Path(out)
    if table not in TABLES:
        raise SoeInputError(Problem("table", "", "", table, "unknown table", did_you_mean(table, TABLES)))
    files = sorted((out / table).rglob("chunk-*.parquet"))
    if not files:
        return pd.DataFrame()
    df = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    keys = [c for c in ("scenario", "polish", "soviet", "polish_params", "soviet_params", "overlay", "chunk", "game",
                        "battle", "step") if c in df]
    return df.sort_values(keys, kind="stable").reset_index(drop=True)


_CELL = ["scenario", "polish", "polish_params", "soviet", "soviet_params", "overlay"]


def sweep_summary(out) -> pd.DataFrame:
    """One row per cell of a sweep directory (scenario, policies with their parameters, overlay) over its
    finished chunks: ``games``, ``polish_win`` / ``soviet_win`` / ``draw`` (rates; a draw is a game that
    was neither won nor aborted), ``polish_win_lo`` / ``polish_win_hi`` (95 % Wilson interval),
    ``aborted`` (count) and ``vp_mean``. Empty when no chunk is finished."""
    from soe_sim.sim import win_rates

    files = sorted((Path(out) / "games").rglob("chunk-*.parquet"))
    if not files:
        return pd.DataFrame(columns=[*_CELL, "games", "polish_win", "polish_win_lo", "polish_win_hi", "soviet_win",
                                     "draw", "aborted", "vp_mean"])
    df = pd.concat([pd.read_parquet(f, columns=[*_CELL, "winner", "outcome", "vp"]) for f in files],
                   ignore_index=True)
    rows = []
    for key, g in df.groupby(_CELL, sort=True, dropna=False):
        r = win_rates(g)  # the rates, draws and intervals of `simulate`
        lo, hi = r["polish_win_ci"]
        rows.append({**dict(zip(_CELL, key)), "games": len(g), "polish_win": r["polish_win"], "polish_win_lo": lo,
                     "polish_win_hi": hi, "soviet_win": r["soviet_win"], "draw": r["draw"],
                     "aborted": int((g["outcome"] == "aborted").sum()), "vp_mean": float(g["vp"].mean())})
    return pd.DataFrame(rows)


def format_sweep_summary(cells: pd.DataFrame) -> str:
    """The table of :func:`sweep_summary` as text: one line per cell, win rates in per cent."""
    if cells.empty:
        return "no finished chunk yet"

    def who(name, params):
        return f"{name} {params}" if params else name

    t = pd.DataFrame({
        "scenario": cells["scenario"],
        "polish": [who(a, b) for a, b in zip(cells["polish"], cells["polish_params"])],
        "soviet": [who(a, b) for a, b in zip(cells["soviet"], cells["soviet_params"])],
        "overlay": cells["overlay"],
        "games": cells["games"].map("{:,}".format),
        "Polish win": [f"{100 * p:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}]"
                       for p, lo, hi in zip(cells["polish_win"], cells["polish_win_lo"], cells["polish_win_hi"])],
        "Soviet win": (100 * cells["soviet_win"]).map("{:.1f} %".format),
        "draw": (100 * cells["draw"]).map("{:.1f} %".format),
        "aborted": cells["aborted"],
        "VP mean": cells["vp_mean"].map("{:+.2f}".format),
    })
    return t.to_string(index=False) + "\n(Polish win: 95 % Wilson interval in brackets)"
