"""Red Star/White Eagle (seed 003, section 9): exact odds of one battle.

Procedure (RSWE 9.0-9.14): total the attack factors (charging cavalry use their charge factor,
9.10) and the defence factors (Polish defenders doubled behind the Warsaw fortifications, 9.6 /
18.0), form the odds ratio rounded in the defender's favour, roll one die, add the die-roll
modifiers (9.2-9.9, optional 24.7), treat results above 6 / below 1 as 6 / 1, and read the CRT. A
result may call for losses (in combat *factors*, 9.11-9.12), retreats (9.13), an advance (9.15); a
unit retreating through enemy zones of control rolls on the ZOC Retreat Table (9.14).

The CRT and the ZOC Retreat Table are **not in the seed text**. ``data/systems/rswe.toml`` holds
only the cells the rulebook's worked examples reveal; a battle that needs any other cell stops
with an error naming the column and asking for the full table (``crt=`` / ``--crt FILE``). Nothing
is guessed.

Losses are reported as the *factor requirement* of the result: the minimum number of attack /
defence factors the owner must remove (9.11, rounded up, 9.12.2, at face value against
fortifications). The factors actually removed depend on which steps the owner flips (9.12).
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from soe_sim.errors import Problem, SoeInputError
from soe_sim.systems.common import (
    ceil_half, choice, die_faces, distribution, index_label, joint_frame, label_index, odds_index, plot_joint,
    positive_int, read_toml, style, system_file,
)

SIDES = ("russian", "polish")
LOSS_CODES = ("DE", "D½E", "X", "½X", "A½E", "A½X")
ZOC_CODES = ("—", "½E", "E")
_ALIASES = {"A1/2E": "A½E", "A1/2X": "A½X", "D1/2E": "D½E", "1/2X": "½X", "-": "—", "–": "—",
            "C": "—", "CONTACT": "—", "NE": "—", "1/2E": "½E"}
_RETREAT = re.compile(r"^([AD])(\d+)$")

DESCRIPTIONS = {
    "attacker_losses_mean": "E[attacker factors to remove]",
    "defender_losses_mean": "E[defender factors to remove]",
    "p_defender_eliminated": "P(all defenders eliminated)",
    "p_hex_vacated": "P(defender's hex vacated)",
    "p_defender_retreats": "P(defender retreats)",
    "p_attacker_retreats": "P(attacker retreats)",
    "p_contact": "P(contact: no effect)",
    "advance_mp_mean": "E[advance MPs granted]",
}


@dataclass(frozen=True)
class Cell:
    """One parsed CRT cell, e.g. ``"X 3"`` or ``"D½E D2 4"``."""

    text: str
    unknown: bool = False  # the cell is "?": not revealed by the seed text
    partial: bool = False  # part of the cell is "?" (e.g. "X ?": exchange, advance MPs not stated)
    loss: str | None = None  # one of LOSS_CODES
    attacker_retreat: int = 0
    defender_retreat: int = 0
    advance: int = 0
    contact: bool = False


def parse_cell(text: str, file: str = "", entry: str = "") -> Cell:
    """Parse a CRT cell (codes of RSWE 9.11, separated by spaces; ``?`` = unknown)."""
    text = str(text).strip()
    tokens = text.replace(",", " ").replace("+", " ").split()
    if not tokens:
        raise SoeInputError(Problem(file, entry, "", text, "empty CRT cell; use `?` for an unknown cell"))
    kw: dict = {"text": text}
    if tokens == ["?"]:
        return Cell(text, unknown=True)
    for raw in tokens:
        tok = _ALIASES.get(raw.upper(), _ALIASES.get(raw, raw))
        up = tok.upper()
        if tok == "?":
            kw["partial"] = True
        elif tok == "—":
            kw["contact"] = True
        elif tok in LOSS_CODES or up in LOSS_CODES:
            if "loss" in kw:
                raise SoeInputError(Problem(file, entry, "", text, "a cell holds at most one loss code"))
            kw["loss"] = tok if tok in LOSS_CODES else up
        elif _RETREAT.match(up):
            side, n = _RETREAT.match(up).groups()
            kw["attacker_retreat" if side == "A" else "defender_retreat"] = int(n)
        elif tok.isdigit():
            kw["advance"] = int(tok)
        else:
            raise SoeInputError(Problem(file, entry, "", raw, "unknown CRT result code",
                                        "codes: A#, D#, A½E, A½X, D½E, DE, X, ½X, — (contact), "
                                        "a number (advance MPs), ? (unknown)"))
    return Cell(**kw)


def _parse_bin(label: str, file: str) -> tuple[int, int]:
    """ZOC column label ``"2-3"``, ``"4"`` or ``"6+"`` → inclusive (low, high)."""
    s = str(label).strip()
    m = re.fullmatch(r"(\d+)\s*-\s*(\d+)", s) or re.fullmatch(r"(\d+)", s) or re.fullmatch(r"(\d+)\+", s)
    if not m:
        raise SoeInputError(Problem(file, "zoc_retreat.columns", "", label,
                                    "expected a delay-factor column `N`, `N-M` or `N+`"))
    if s.endswith("+"):
        return int(m.group(1)), 10 ** 9
    lo = int(m.group(1))
    hi = int(m.group(2)) if m.lastindex and m.lastindex >= 2 else lo
    if hi < lo:
        raise SoeInputError(Problem(file, "zoc_retreat.columns", "", label, "empty range"))
    return lo, hi


def _zoc_cell(text: str, file: str, entry: str) -> str | None:
    t = _ALIASES.get(str(text).strip().upper(), _ALIASES.get(str(text).strip(), str(text).strip()))
    if t == "?":
        return None
    if t not in ZOC_CODES:
        raise SoeInputError(Problem(file, entry, "", text, "unknown ZOC Retreat Table result",
                                    "results: — (no effect), ½E, E, ? (unknown)"))
    return t


@dataclass(frozen=True)
class RsweTables:
    """The RSWE CRT and ZOC Retreat Table as loaded (possibly partial)."""

    faces: int
    crt: dict  # column index -> list of Cell
    crt_complete: bool
    above_highest: str
    below_lowest: str
    zoc: list  # [(low, high, label, [code or None] * faces)]
    zoc_complete: bool
    crt_file: str
    zoc_file: str


@dataclass(frozen=True)
class RsweData:
    """RSWE constants (die-roll modifiers, fortification doubling) and tables."""

    drm: dict
    fortification: dict
    tables: RsweTables
    sources: dict
    file: str

    def source(self, key: str) -> str:
        return self.sources.get(key, "")


def _read_tables(raw: dict, file: str, faces: int, base: RsweTables | None = None) -> RsweTables:
    """CRT / ZOC tables from a TOML document; sections absent fall back to ``base``."""
    if "crt" not in raw and "zoc_retreat" not in raw:
        raise SoeInputError(Problem(file, "", "", None, "no [crt] or [zoc_retreat] table in the file"))
    kw = {} if base is None else asdict(base) | {"crt": base.crt, "zoc": base.zoc}
    if "crt" in raw:
        c = raw["crt"]
        cols = c.get("columns")
        if not isinstance(cols, dict) or not cols:
            raise SoeInputError(Problem(file, "crt", "columns", cols, "missing [crt.columns] (odds -> 6 cells)"))
        crt = {}
        for label, cells in cols.items():
            idx = label_index(label, file=file, entry="crt.columns")
            if not isinstance(cells, list) or len(cells) != faces:
                raise SoeInputError(Problem(file, f"crt.columns.{label}", "", cells,
                                            f"expected {faces} cells, one per modified die roll 1..{faces}"))
            crt[idx] = [parse_cell(x, file, f"crt.columns.{label}") for x in cells]
        for key in ("above_highest", "below_lowest"):
            val = c.get(key, "error")
            allowed = ("highest", "error") if key == "above_highest" else ("lowest", "error")
            if val not in allowed:
                raise SoeInputError(Problem(file, "crt", key, val, "allowed: " + ", ".join(allowed)))
        kw.update(crt=crt, crt_complete=bool(c.get("complete", False)),
                  above_highest=c.get("above_highest", "error"), below_lowest=c.get("below_lowest", "error"),
                  crt_file=file)
    if "zoc_retreat" in raw:
        z = raw["zoc_retreat"]
        zoc = []
        for label, cells in (z.get("columns") or {}).items():
            lo, hi = _parse_bin(label, file)
            if not isinstance(cells, list) or len(cells) != faces:
                raise SoeInputError(Problem(file, f"zoc_retreat.columns.{label}", "", cells,
                                            f"expected {faces} cells, one per modified die roll 1..{faces}"))
            zoc.append((lo, hi, str(label), [_zoc_cell(x, file, f"zoc_retreat.columns.{label}") for x in cells]))
        zoc.sort()
        for (l1, h1, a, _), (l2, _h2, b, _) in zip(zoc, zoc[1:]):
            if l2 <= h1:
                raise SoeInputError(Problem(file, "zoc_retreat.columns", "", [a, b], "overlapping delay-factor columns"))
        kw.update(zoc=zoc, zoc_complete=bool(z.get("complete", False)), zoc_file=file)
    kw["faces"] = faces
    missing = [k for k in ("crt", "zoc") if k not in kw]
    if missing:
        raise SoeInputError(Problem(file, "", "", None, "missing table(s): " + ", ".join(missing)))
    return RsweTables(**kw)


_DATA: RsweData | None = None


def load_rswe(path: str | Path | None = None, crt: str | Path | None = None) -> RsweData:
    """RSWE constants and tables; ``crt`` is a user file replacing the CRT and/or ZOC table."""
    global _DATA
    if path is None and _DATA is not None:
        data = _DATA
    else:
        raw, p = system_file("rswe", path)
        f = str(p)
        try:
            faces = die_faces(raw, f)
            data = RsweData(drm=raw["drm"], fortification=raw["fortification"],
                            tables=_read_tables(raw, f, faces), sources=raw.get("sources", {}), file=f)
        except KeyError as err:
            raise SoeInputError(Problem(f, "", str(err.args[0]), None, "missing key")) from None
        if path is None:
            _DATA = data
    if crt is not None:
        user = read_toml(crt, "CRT file (--crt)")
        data = RsweData(data.drm, data.fortification,
                        _read_tables(user, str(crt), data.tables.faces, data.tables),
                        data.sources, data.file)
    return data


def _supply_hint(tables: RsweTables) -> str:
    return (f"supply the full table with --crt FILE (API: crt=FILE); format in docs/data-format.md "
            f"(currently read from {tables.crt_file})")


def _column(idx: int, tables: RsweTables) -> tuple[int, str]:
    """Column index actually read for odds ``idx`` (and a note), or a clear error."""
    label = index_label(idx)
    if idx in tables.crt:
        return idx, ""
    cols = sorted(tables.crt)
    if not tables.crt_complete:
        raise SoeInputError(Problem("RSWE CRT", "", "", label,
                                    f"column {label} is missing: the CRT is not in the seed text (RSWE 9.0; "
                                    "only cells revealed by the rulebook's examples are shipped: "
                                    + ", ".join(index_label(c) for c in cols) + ")",
                                    _supply_hint(tables)))
    if idx > cols[-1] and tables.above_highest == "highest":
        return cols[-1], f"odds {label} above the highest column: read on {index_label(cols[-1])}"
    if idx < cols[0] and tables.below_lowest == "lowest":
        return cols[0], f"odds {label} below the lowest column: read on {index_label(cols[0])}"
    where = "above the highest" if idx > cols[-1] else "below the lowest" if idx < cols[0] else "missing from the"
    raise SoeInputError(Problem(tables.crt_file, "crt.columns", "", label,
                                f"odds {label} are {where} column(s) of the CRT and the file says what to "
                                "do beyond it as `error`", "set crt.above_highest / crt.below_lowest"))


@dataclass(frozen=True)
class RsweBattle:
    """One RSWE battle, validated (see :func:`rswe_odds`)."""

    attack: int
    defense: int
    charge: int = 0
    attacker: str = "russian"
    terrain: str = "clear"
    river: bool = False
    trench: bool = False
    fortified: bool = False
    attacker_unsupplied: bool = False
    defender_unsupplied: bool = False
    kosciuszko: bool = False
    odds: str | None = None
    defender_delay: tuple | None = None
    attacker_delay: tuple | None = None
    defender_retreat_ends_unsupplied: bool = False
    attacker_retreat_ends_unsupplied: bool = False


def _delays(option: str, value) -> tuple | None:
    if value is None:
        return None
    if isinstance(value, str):
        parts = [v for v in value.replace(" ", "").split(",") if v != ""]
        try:
            value = [int(v) for v in parts]
        except ValueError:
            raise SoeInputError(Problem(option, "", "", value,
                                        "expected comma-separated delay factors per hex of the retreat path, e.g. 1,1,0")) from None
    out = tuple(positive_int(option, v, allow_zero=True, what="delay factors") for v in value)
    if not out:
        raise SoeInputError(Problem(option, "", "", value, "give one delay-factor total per retreat hex"))
    return out


def _validate(data: RsweData, kw: dict) -> RsweBattle:
    attack = positive_int("--attack", kw["attack"], allow_zero=True, what="attack factors")
    charge = positive_int("--charge", kw.get("charge", 0), allow_zero=True, what="charge factors")
    if attack + charge < 1:
        raise SoeInputError(Problem("--attack", "", "", attack, "the attack needs at least 1 attack or charge factor"))
    defense = positive_int("--defense", kw["defense"],
                           what="total defence factors; odds against 0 defence factors are undefined")
    attacker = choice("--attacker", kw.get("attacker", "russian"), SIDES, "attacking side")
    terrain = choice("--terrain", kw.get("terrain", "clear"), data.drm["terrain"], "terrain")
    if kw.get("fortified") and attacker != "russian":
        raise SoeInputError(Problem("--fortified", "", "", True,
                                    "only Polish defenders benefit from the fortifications (RSWE 9.6, 18.0)",
                                    "the attacker must be russian"))
    if kw.get("fortified") and charge and attacker == "russian":
        raise SoeInputError(Problem("--charge", "", "", charge,
                                    "Russian cavalry may not charge across fortification hexsides (RSWE 9.10.3)"))
    if kw.get("kosciuszko") and attacker != "polish":
        raise SoeInputError(Problem("--kosciuszko", "", "", True,
                                    "the Kosciuszko Squadron modifies Polish attacks only (RSWE 24.7.1)"))
    odds = kw.get("odds")
    if odds is not None:
        label_index(odds, file="--odds")
    return RsweBattle(attack, defense, charge, attacker, terrain, bool(kw.get("river")), bool(kw.get("trench")),
                      bool(kw.get("fortified")), bool(kw.get("attacker_unsupplied")),
                      bool(kw.get("defender_unsupplied")), bool(kw.get("kosciuszko")), odds,
                      _delays("--defender-delay", kw.get("defender_delay")),
                      _delays("--attacker-delay", kw.get("attacker_delay")),
                      bool(kw.get("defender_retreat_ends_unsupplied")),
                      bool(kw.get("attacker_retreat_ends_unsupplied")))


def die_modifiers(b: RsweBattle, data: RsweData) -> list[dict]:
    """Every applicable die-roll modifier: ``{"name", "drm", "source"}``."""
    d = data.drm
    out = []

    def add(name, value, key):
        out.append({"name": name, "drm": int(value), "source": data.source(f"drm.{key}")})

    if d["terrain"][b.terrain]:
        add(f"terrain: {b.terrain}", d["terrain"][b.terrain], "terrain")  # RSWE 9.2
    if b.river:
        add("all attackers through river hexsides", d["river"], "river")  # RSWE 9.3
    if b.trench:
        if b.attacker == "russian":
            add("Russian attack through trench faces", d["trench"], "trench")  # RSWE 9.4
        else:
            out.append({"name": "trench: Polish attackers are not affected", "drm": 0,
                        "source": data.source("drm.trench")})
    if b.defense == 1:  # RSWE 9.8: before doubling for fortifications
        add("only one defence factor", d["one_defense_factor"], "one_defense_factor")
    if b.defender_unsupplied:
        add("defender unsupplied", d["defender_unsupplied"], "defender_unsupplied")  # RSWE 9.9
    if b.attacker_unsupplied:
        add("attacker unsupplied", d["attacker_unsupplied"], "attacker_unsupplied")  # RSWE 9.9
    if b.kosciuszko:
        add("Kosciuszko Squadron (optional)", d["kosciuszko"], "kosciuszko")  # RSWE 24.7.1
    return out


class _Setup:
    """Odds, column and modifiers of a battle (shared by :func:`rswe_odds` and :func:`rswe_resolve`)."""

    def __init__(self, data: RsweData, kw: dict):
        self.data = data
        self.tables = data.tables
        self.battle = b = _validate(data, kw)
        self.attack_total = b.attack + b.charge  # RSWE 9.10.1: charge factor instead of combat factor
        mult = int(data.fortification["defense_multiplier"]) if b.fortified else 1
        self.defense_for_odds = b.defense * mult  # RSWE 9.6 / 18.0
        self.computed = odds_index(self.attack_total, self.defense_for_odds)  # RSWE 9.0
        self.odds_index = self.computed
        if b.odds is not None:
            wanted = label_index(b.odds, file="--odds")
            if wanted > self.computed:
                raise SoeInputError(Problem("--odds", "", "", b.odds,
                                            f"the attacker may only reduce the odds (RSWE 9.0); computed odds are "
                                            f"{index_label(self.computed)}"))
            self.odds_index = wanted
        self.column, self.column_note = _column(self.odds_index, self.tables)
        self.modifiers = die_modifiers(b, data)
        self.drm = sum(m["drm"] for m in self.modifiers)
        self.lo, self.hi = int(data.drm["die_min"]), int(data.drm["die_max"])

    def modified(self, roll: int) -> int:
        return min(max(roll + self.drm, self.lo), self.hi)  # RSWE 9.0: clamp to 1..6

    def cell(self, roll: int) -> Cell:
        return self.tables.crt[self.column][self.modified(roll) - 1]

    def check_known(self, rolls, allow_partial: bool = False) -> None:
        """Error naming the column if a cell these raw rolls need is unknown (or partly unknown)."""
        col = self.tables.crt[self.column]
        needed = sorted({self.modified(r) for r in rolls})
        unknown = [m for m in needed if col[m - 1].unknown or (col[m - 1].partial and not allow_partial)]
        if unknown:
            known = [f"{i + 1}" + (" (partly)" if c.partial else "") for i, c in enumerate(col) if not c.unknown]
            raise SoeInputError(Problem(
                "RSWE CRT", "", "", index_label(self.column),
                f"column {index_label(self.column)} is incomplete: modified roll(s) "
                + ", ".join(map(str, unknown)) + " are not (fully) in the seed text (known: "
                + (", ".join(known) or "none") + ")",
                _supply_hint(self.tables)))

    def losses(self, cell: Cell) -> tuple[int, int]:
        """Factor requirements (attacker, defender) of a cell (RSWE 9.11, 9.12.2)."""
        A, D = self.attack_total, self.battle.defense  # face values (9.12.2), charge counts (9.10.6)
        return {
            None: (0, 0),
            "DE": (0, D),
            "D½E": (0, ceil_half(D)),
            "X": (D, D),
            "½X": (ceil_half(D), ceil_half(D)),
            "A½E": (ceil_half(A), 0),
            "A½X": (ceil_half(D), 0),
        }[cell.loss]


def zoc_retreat_result(delay_total: int, roll: int, *, begins_unsupplied: bool = False,
                       ends_unsupplied: bool = False, tables: RsweTables | None = None) -> str:
    """Result of one ZOC Retreat Table roll (RSWE 9.14): ``"—"``, ``"½E"`` or ``"E"``.

    A total of 0 enemy delay factors means the unit entered no enemy ZOC and does not roll.
    """
    tables = tables or load_rswe().tables
    total = positive_int("--defender-delay", delay_total, allow_zero=True, what="delay factors")
    if total == 0:
        return "—"
    col = _zoc_column(total, tables)
    mod = max(1, int(roll) - int(begins_unsupplied) - int(ends_unsupplied))  # RSWE 9.14.3
    code = col[3][min(mod, tables.faces) - 1]
    if code is None:
        raise SoeInputError(_zoc_unknown(col, [mod], tables))
    return code


def _zoc_column(total: int, tables: RsweTables):
    for col in tables.zoc:
        if col[0] <= total <= col[1]:
            return col
    raise SoeInputError(Problem("RSWE ZOC Retreat Table", "", "", total,
                                f"no column for a delay-factor total of {total}: the table is not in the seed "
                                "text (known columns: " + (", ".join(c[2] for c in tables.zoc) or "none") + ")",
                                f"supply it in the [zoc_retreat] section of --crt FILE (currently {tables.zoc_file})"))


def _zoc_unknown(col, mods, tables: RsweTables) -> Problem:
    known = [i + 1 for i, c in enumerate(col[3]) if c is not None]
    return Problem("RSWE ZOC Retreat Table", "", "", col[2],
                   f"column {col[2]} is incomplete: modified roll(s) " + ", ".join(map(str, sorted(set(mods))))
                   + " are not in the seed text (known: " + (", ".join(map(str, known)) or "none") + ")",
                   f"supply it in the [zoc_retreat] section of --crt FILE (currently {tables.zoc_file})")


def _zoc_distribution(n_hexes: int, delays, begins: bool, ends: bool, tables: RsweTables, option: str) -> dict:
    """P(—, ½E, E) for one unit retreating ``n_hexes`` along the path ``delays`` (RSWE 9.14)."""
    if len(delays) < n_hexes:
        raise SoeInputError(Problem(option, "", "", ",".join(map(str, delays)),
                                    f"a result retreats {n_hexes} hexes: give the enemy delay factors of "
                                    f"each of the {n_hexes} hexes entered"))
    total = sum(delays[:n_hexes])  # RSWE 9.14.1: every hex entered, origin excluded
    if total == 0:
        return {"—": 1.0, "½E": 0.0, "E": 0.0}
    col = _zoc_column(total, tables)
    mods = [max(1, r - int(begins) - int(ends)) for r in range(1, tables.faces + 1)]  # RSWE 9.14.3
    if any(col[3][m - 1] is None for m in mods):
        raise SoeInputError(_zoc_unknown(col, [m for m in mods if col[3][m - 1] is None], tables))
    out = {k: 0.0 for k in ZOC_CODES}
    for m in mods:
        out[col[3][m - 1]] += 1.0 / tables.faces
    return out


def rswe_resolve(attack: int, defense: int, roll: int, **kw) -> dict:
    """The result of one raw die roll (only that CRT cell is needed, so the shipped partial table
    answers the rulebook's worked examples). Keywords as in :func:`rswe_odds`."""
    s = _Setup(load_rswe(kw.pop("data", None), kw.pop("crt", None)), {"attack": attack, "defense": defense, **kw})
    r = positive_int("roll", roll)
    if r > s.tables.faces:
        raise SoeInputError(Problem("roll", "", "", roll, f"a die shows 1..{s.tables.faces}"))
    s.check_known([r], allow_partial=True)
    cell = s.cell(r)
    att, dfn = s.losses(cell)
    # A partly known cell ("X ?") has known losses and retreats but unknown advance MPs.
    return {"column": index_label(s.column), "drm": s.drm, "modified_roll": s.modified(r), "result": cell.text,
            "attacker_losses": att, "defender_losses": dfn, "attacker_retreat": cell.attacker_retreat,
            "defender_retreat": cell.defender_retreat, "advance_mp": None if cell.partial else cell.advance,
            "defender_eliminated": dfn >= s.battle.defense}


class RsweOdds:
    """Exact odds of one RSWE battle (the die's six faces enumerated).

    Attributes
    ----------
    battle : RsweBattle
    odds, column : str
        Odds ratio (after any voluntary reduction) and the CRT column read.
    modifiers : list of dict
    outcomes : DataFrame
        One row per die face: ``die, modified_roll, result, attacker_losses, defender_losses,
        attacker_retreat, defender_retreat, advance_mp, defender_eliminated, p`` (+ ZOC columns).
    """

    system = "rswe"

    def __init__(self, setup: _Setup, outcomes: pd.DataFrame, zoc: dict):
        self.setup = setup
        self.battle = setup.battle
        self.modifiers = setup.modifiers
        self.drm = setup.drm
        self.outcomes = outcomes
        self.zoc = zoc

    odds = property(lambda self: index_label(self.setup.odds_index))
    column = property(lambda self: index_label(self.setup.column))

    @property
    def joint(self) -> pd.DataFrame:
        """Joint distribution of the factor requirements (attacker, defender)."""
        o = self.outcomes
        return joint_frame(o["attacker_losses"], o["defender_losses"], o["p"])

    loss_distribution = joint

    @property
    def metrics(self) -> dict:
        o = self.outcomes  # every face has p = 1/faces (one fair die): means are plain averages
        return {
            "attacker_losses_mean": float(np.mean(o["attacker_losses"])),
            "defender_losses_mean": float(np.mean(o["defender_losses"])),
            "p_defender_eliminated": float(np.mean(o["defender_eliminated"])),
            "p_hex_vacated": float(np.mean((o["defender_eliminated"] | (o["defender_retreat"] > 0)))),
            "p_defender_retreats": float(np.mean(((o["defender_retreat"] > 0) & ~o["defender_eliminated"]))),
            "p_attacker_retreats": float(np.mean((o["attacker_retreat"] > 0))),
            "p_contact": float(np.mean(o["contact"])),
            "advance_mp_mean": float(np.mean(o["advance_mp"])),
        }

    def __getattr__(self, name):
        if name in DESCRIPTIONS:
            return self.metrics[name]
        raise AttributeError(name)

    @property
    def summary(self) -> pd.DataFrame:
        df = pd.DataFrame({"description": DESCRIPTIONS, "exact": self.metrics})
        df.index.name = "metric"
        return df

    def result_distribution(self) -> list[dict]:
        return distribution(self.outcomes["result"], self.outcomes["p"], "result")

    def notes(self) -> list[str]:
        out = ["losses are factor requirements: the minimum attack/defence factors the owner must remove "
               "(RSWE 9.11-9.12; actual removal depends on which steps are flipped)"]
        if self.setup.column_note:
            out.append(self.setup.column_note)
        for side in ("defender", "attacker"):
            if side not in self.zoc and (self.outcomes[f"{side}_retreat"] > 0).any():
                out.append(f"ZOC retreat losses of the {side} not computed: give --{side}-delay "
                           "(enemy delay factors per hex of the retreat path, RSWE 9.14)")
        return out

    def to_dict(self) -> dict:
        """JSON-ready result (``soe-sim odds --system rswe --format json``)."""
        inputs = asdict(self.battle)
        for k in ("defender_delay", "attacker_delay"):
            inputs[k] = list(inputs[k]) if inputs[k] is not None else None
        o = self.outcomes
        return {
            "system": self.system,
            "inputs": inputs,
            "attack_total": self.setup.attack_total,
            "defense_for_odds": self.setup.defense_for_odds,
            "computed_odds": index_label(self.setup.computed),
            "odds": self.odds,
            "column": self.column,
            "modifiers": self.modifiers,
            "drm": self.drm,
            "results_by_die": o.drop(columns="p").to_dict(orient="records"),
            **self.metrics,
            "loss_distribution": self.joint.to_dict(orient="records"),
            "result_distribution": self.result_distribution(),
            "advance_distribution": distribution(o["advance_mp"], o["p"], "advance_mp"),
            "zoc_retreat": self.zoc,
            "notes": self.notes(),
        }

    def plot(self, title: str | None = None):
        """Joint factor-loss heatmap (left) and result probabilities (right); returns the Figure."""
        import matplotlib.pyplot as plt

        from soe_sim.plotting import SIDE_COLORS

        b = self.battle
        colours = {"russian": SIDE_COLORS["soviet"], "polish": SIDE_COLORS["polish"]}
        defender = "polish" if b.attacker == "russian" else "russian"
        with style():
            fig, (ax_j, ax_r) = plt.subplots(1, 2, figsize=(12, 5), gridspec_kw={"width_ratios": [1.1, 1]})
            plot_joint(ax_j, self.joint, f"defender ({defender}) factors to remove",
                       f"attacker ({b.attacker}) factors to remove", "Joint distribution of losses")
            dist = self.result_distribution()
            y = np.arange(len(dist))[::-1]
            ax_r.barh(y, [d["p"] for d in dist], color=colours[b.attacker], alpha=0.85)
            ax_r.set_yticks(y, [d["result"] for d in dist])
            ax_r.set_xlim(0, 1)
            ax_r.set_xlabel("probability")
            ax_r.set_title(f"CRT results, column {self.column}, DRM {self.drm:+d}")
            fig.suptitle(title or f"Red Star/White Eagle: {self.setup.attack_total} vs "
                         f"{self.setup.defense_for_odds} ({self.odds})")
            fig.tight_layout()
        return fig

    def __repr__(self) -> str:
        m = self.metrics
        return (f"RsweOdds({self.setup.attack_total} vs {self.setup.defense_for_odds}: column {self.column}, "
                f"DRM {self.drm:+d}, P(hex vacated) {m['p_hex_vacated']:.3f})")


def rswe_odds(
    attack: int,
    defense: int,
    *,
    charge: int = 0,
    attacker: str = "russian",
    terrain: str = "clear",
    river: bool = False,
    trench: bool = False,
    fortified: bool = False,
    attacker_unsupplied: bool = False,
    defender_unsupplied: bool = False,
    kosciuszko: bool = False,
    odds: str | None = None,
    defender_delay=None,
    attacker_delay=None,
    defender_retreat_ends_unsupplied: bool = False,
    attacker_retreat_ends_unsupplied: bool = False,
    crt: str | Path | None = None,
    data: str | Path | None = None,
) -> RsweOdds:
    """Exact odds of a Red Star/White Eagle battle (RSWE 9.0-9.15).

    Parameters
    ----------
    attack : int
        Attack factors of the eligible attackers not charging.
    charge : int
        Charge factors of charging cavalry, used instead of their combat factor (9.10).
    defense : int
        Face-value defence factors of the eligible defenders (≥ 1; overstacked units excluded).
    attacker : {"russian", "polish"}
    terrain : {"clear", "town", "marsh", "forest", "rough", "city", "intermittent-lake"}
        Defender's hex (9.2, 9.7).
    river, trench : bool
        All attackers through river hexsides (9.3); Russians all through trench faces or trench +
        river hexsides (9.4). Both given → both apply (docs/rules.md).
    fortified : bool
        Polish defenders in a Warsaw fortified hex attacked across a fortification hexside:
        defence doubled for the odds, losses at face value (9.6, 18.0, 9.12.2).
    attacker_unsupplied, defender_unsupplied : bool
        9.9 (−1 / +1).
    kosciuszko : bool
        Optional 24.7.1, +1 on one Polish attack.
    odds : str, optional
        Voluntarily reduced odds, e.g. ``"3:1"`` (9.0).
    defender_delay, attacker_delay : list of int or "1,1,0", optional
        Enemy delay factors of each hex of the retreat path, in order (9.14.1): enables the ZOC
        Retreat Table for retreat results.
    defender_retreat_ends_unsupplied, attacker_retreat_ends_unsupplied : bool
        9.14.3 (the retreat begins unsupplied when that side is unsupplied).
    crt : path, optional
        TOML file with ``[crt]`` and/or ``[zoc_retreat]`` replacing the shipped partial tables.

    Returns
    -------
    RsweOdds

    Raises
    ------
    SoeInputError
        Bad input, or a CRT / ZOC column or cell the tables do not have.
    """
    s = _Setup(load_rswe(data, crt), dict(
        attack=attack, defense=defense, charge=charge, attacker=attacker, terrain=terrain, river=river,
        trench=trench, fortified=fortified, attacker_unsupplied=attacker_unsupplied,
        defender_unsupplied=defender_unsupplied, kosciuszko=kosciuszko, odds=odds,
        defender_delay=defender_delay, attacker_delay=attacker_delay,
        defender_retreat_ends_unsupplied=defender_retreat_ends_unsupplied,
        attacker_retreat_ends_unsupplied=attacker_retreat_ends_unsupplied))
    faces = s.tables.faces
    rolls = range(1, faces + 1)
    s.check_known(rolls)
    rows = []
    for r in rolls:
        cell = s.cell(r)
        att, dfn = s.losses(cell)
        rows.append({"die": r, "modified_roll": s.modified(r), "result": cell.text,
                     "attacker_losses": att, "defender_losses": dfn,
                     "attacker_retreat": cell.attacker_retreat, "defender_retreat": cell.defender_retreat,
                     "advance_mp": cell.advance, "contact": cell.contact,
                     "defender_eliminated": dfn >= s.battle.defense, "p": 1.0 / faces})
    o = pd.DataFrame(rows)
    b = s.battle
    zoc = {}
    for side, delays, begins, ends in (
            ("defender", b.defender_delay, b.defender_unsupplied, b.defender_retreat_ends_unsupplied),
            ("attacker", b.attacker_delay, b.attacker_unsupplied, b.attacker_retreat_ends_unsupplied)):
        if delays is None:
            continue
        retreat = o[f"{side}_retreat"].to_numpy()
        if side == "defender":
            retreat = np.where(o["defender_eliminated"], 0, retreat)  # losses before retreats (9.0)
        dist = {"no_retreat": float(o["p"][retreat == 0].sum()), "—": 0.0, "½E": 0.0, "E": 0.0}
        for n, p in zip(retreat, o["p"]):
            if n > 0:
                for code, q in _zoc_distribution(int(n), delays, begins, ends, s.tables, f"--{side}-delay").items():
                    dist[code] += p * q
        zoc[side] = dist  # per retreating unit (each unit rolls separately, 9.14.2)
    return RsweOdds(s, o, zoc)
