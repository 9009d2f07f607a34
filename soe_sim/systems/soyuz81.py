"""Soyuz 81 (seed 001, section 9): exact odds of one attack on the odds-ratio CRT.

The CRT, its column shifts and limits are data (``data/systems/soyuz81.toml``); this module turns
an attack into a CRT column and enumerates the six faces of the die (9.16), so every probability is
exact (multiples of 1/6).

Two points the rulebook leaves open are options (see docs/rules.md):

* ``beyond_table``: the printed CRT stops at 5:1 although 9.8 names columns up to 7:1. Final odds
  of 6:1 or 7:1 use the 5:1 column (``"clamp"``, default), the labelled hypothetical columns of the
  data file (``"extrapolate"``), or columns from a user file (``"columns:FILE"``).
* ``limits``: the automatic results of 9.8 (>7:1 → 0/6, <1:3 → 2/0) are judged on the final odds
  after the shifts (``"after"``, default: 9.8 says "Final odds"), or the base odds are first pulled
  into the table range, with the automatic results as one pseudo-column at each end, and then
  shifted (``"before"``).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from soe_sim.errors import Problem, SoeInputError
from soe_sim.systems.common import (
    choice, die_faces, distribution, index_label, joint_frame, label_index, odds_index, plot_joint,
    positive_int, read_toml, style, system_file,
)

SIDES = ("soviet", "polish")
BEYOND_TABLE = ("clamp", "extrapolate", "columns:FILE")
LIMITS = ("after", "before")

DESCRIPTIONS = {
    "attacker_losses_mean": "E[attacker steps lost]",
    "defender_losses_mean": "E[defender steps lost]",
    "p_defender_loses_any": "P(defender loses ≥ 1 step)",
    "p_attacker_loses_none": "P(attacker loses no step)",
    "p_hex_cleared": "P(defending hex cleared)",
    "p_attacker_eliminated": "P(every attacking step lost)",
    "sap_cost_mean": "E[SAP cost of the attack]",
}


def _cell(text: str, file: str, entry: str) -> tuple[int, int]:
    """``"2/1"`` → (2, 1)."""
    a, sep, d = str(text).partition("/")
    if not sep or not a.strip().isdigit() or not d.strip().isdigit():
        raise SoeInputError(Problem(file, entry, "", text, "expected a result `a/d` (attacker/defender steps lost)"))
    return int(a), int(d)


def _column(cells, file: str, entry: str, faces: int) -> list[tuple[int, int]]:
    if not isinstance(cells, list) or len(cells) != faces:
        raise SoeInputError(Problem(file, entry, "", cells, f"expected a list of {faces} results, one per die roll"))
    return [_cell(c, file, entry) for c in cells]


@dataclass(frozen=True)
class Soyuz81Data:
    """The Soyuz 81 tables in usable form (from ``data/systems/soyuz81.toml``)."""

    faces: int
    lowest: int  # column index of the lowest printed/named column (1:3)
    highest: int  # column index of the highest named column (7:1)
    below_result: tuple[int, int]
    above_result: tuple[int, int]
    crt: dict[int, list[tuple[int, int]]]
    extrapolated: dict[int, list[tuple[int, int]]]
    shifts: dict
    high_intensity: dict
    sources: dict
    file: str

    @classmethod
    def load(cls, path: str | Path | None = None) -> "Soyuz81Data":
        raw, p = system_file("soyuz81", path)
        f = str(p)
        try:
            faces = die_faces(raw, f)
            odds = raw["odds"]
            crt = {label_index(k, file=f, entry="crt"): _column(v, f, f"crt.{k}", faces)
                   for k, v in raw["crt"].items()}
            ext = {label_index(k, file=f, entry="crt_extrapolated"): _column(v, f, f"crt_extrapolated.{k}", faces)
                   for k, v in raw.get("crt_extrapolated", {}).items()}
            return cls(
                faces=faces,
                lowest=label_index(odds["lowest_column"], file=f, entry="odds.lowest_column"),
                highest=label_index(odds["highest_column"], file=f, entry="odds.highest_column"),
                below_result=_cell(odds["below_lowest_result"], f, "odds.below_lowest_result"),
                above_result=_cell(odds["above_highest_result"], f, "odds.above_highest_result"),
                crt=crt, extrapolated=ext, shifts=raw["shifts"], high_intensity=raw["high_intensity"],
                sources=raw.get("sources", {}), file=f,
            )
        except KeyError as err:
            raise SoeInputError(Problem(f, "", str(err.args[0]), None, "missing key")) from None

    def source(self, key: str) -> str:
        return self.sources.get(key, "")

    @property
    def printed_highest(self) -> int:
        return max(self.crt)


_DATA: Soyuz81Data | None = None


def load_soyuz81(path: str | Path | None = None) -> Soyuz81Data:
    """Soyuz 81 tables (the built-in file is cached)."""
    global _DATA
    if path is not None:
        return Soyuz81Data.load(path)
    if _DATA is None:
        _DATA = Soyuz81Data.load()
    return _DATA


def _user_columns(path: str, data: Soyuz81Data) -> dict[int, list[tuple[int, int]]]:
    """6:1 / 7:1 columns from a user TOML file (``[crt] "6:1" = [...]``, docs/data-format.md)."""
    raw = read_toml(path, "CRT columns file")
    table = raw.get("crt")
    if not isinstance(table, dict):
        raise SoeInputError(Problem(path, "", "crt", None, "missing table [crt] with the 6:1 and 7:1 columns"))
    wanted = range(data.printed_highest + 1, data.highest + 1)
    out = {}
    for key, cells in table.items():
        idx = label_index(key, file=path, entry="crt")
        if idx not in wanted:
            raise SoeInputError(Problem(path, "crt", key, key,
                                        "only the columns missing from the printed CRT may be supplied",
                                        "allowed: " + ", ".join(index_label(i) for i in wanted)))
        out[idx] = _column(cells, path, f"crt.{key}", data.faces)
    missing = [index_label(i) for i in wanted if i not in out]
    if missing:
        raise SoeInputError(Problem(path, "crt", "", sorted(table),
                                    "column(s) " + ", ".join(missing) + " missing from the file"))
    return out


def _policy(beyond_table: str) -> tuple[str, str | None]:
    text = str(beyond_table)
    if text.startswith("columns:"):
        path = text.partition(":")[2]
        if not path:
            raise SoeInputError(Problem("--beyond-table", "", "", text, "expected `columns:FILE`"))
        return "columns", path
    if text in ("clamp", "extrapolate"):
        return text, None
    raise SoeInputError(Problem("--beyond-table", "", "", text, "unknown treatment of 6:1 and 7:1",
                                "allowed: clamp, extrapolate, columns:FILE"))


def final_index(base: int, net: int, limits: str, data: Soyuz81Data) -> int:
    """Final column index; below ``data.lowest`` / above ``data.highest`` means an automatic result.

    ``limits="after"``: shift on the unbounded column sequence, limits judged on the result (9.8
    "Final odds"). ``limits="before"``: the base odds are first pulled into the range, the automatic
    results being one pseudo-column beyond each end, then shifted (and pulled in again).
    """
    lo, hi = data.lowest - 1, data.highest + 1
    if limits == "before":
        base = min(max(base, lo), hi)
        return min(max(base + net, lo), hi)
    return base + net


@dataclass(frozen=True)
class ColumnResolution:
    """How a final odds index is read on the CRT."""

    final_odds: str  # "6:1", ">7:1", "<1:3"
    column: str  # CRT column used ("5:1"), or the odds band of an automatic result
    kind: str  # printed | clamped | extrapolated | user | automatic
    cells: list  # (attacker, defender) per face
    note: str


def resolve_column(index: int, data: Soyuz81Data, beyond_table: str = "clamp",
                   user_columns: dict | None = None) -> ColumnResolution:
    """The CRT column and per-face results for a final odds index (9.8, 9.16)."""
    mode, _ = _policy(beyond_table)
    faces = data.faces
    if index > data.highest:
        label = f">{index_label(data.highest)}"
        return ColumnResolution(index_label(index), label, "automatic", [data.above_result] * faces,
                                f"final odds {index_label(index)} are above {index_label(data.highest)}: "
                                f"automatic {data.above_result[0]}/{data.above_result[1]} (S81 9.8)")
    if index < data.lowest:
        label = f"<{index_label(data.lowest)}"
        return ColumnResolution(index_label(index), label, "automatic", [data.below_result] * faces,
                                f"final odds {index_label(index)} are below {index_label(data.lowest)}: "
                                f"automatic {data.below_result[0]}/{data.below_result[1]} (S81 9.8)")
    label = index_label(index)
    if index in data.crt:
        return ColumnResolution(label, label, "printed", data.crt[index], "")
    # 6:1 and 7:1: named by 9.8, absent from the printed table.
    if mode == "clamp":
        top = data.printed_highest
        return ColumnResolution(label, index_label(top), "clamped", data.crt[top],
                                f"{label} is not printed on the CRT; resolved on the {index_label(top)} "
                                "column (--beyond-table clamp, docs/rules.md)")
    if mode == "extrapolate":
        if index not in data.extrapolated:
            raise SoeInputError(Problem(data.file, "crt_extrapolated", "", label, "no extrapolated column"))
        return ColumnResolution(label, label, "extrapolated", data.extrapolated[index],
                                f"HYPOTHETICAL {label} column extrapolated from the 2:1-5:1 pattern, "
                                "not rule text (--beyond-table extrapolate)")
    cols = user_columns or {}
    return ColumnResolution(label, label, "user", cols[index],
                            f"{label} column supplied by the user (--beyond-table columns:FILE)")


@dataclass(frozen=True)
class Soyuz81Attack:
    """One Soyuz 81 attack, validated (see :func:`soyuz81_odds` for the meaning of each field)."""

    attack: int
    defense: int
    attacker_steps: int | None = None
    defender_steps: int | None = None
    attacker: str = "soviet"
    terrain: str = "clear"
    river: bool = False
    concentric: bool = False
    airpower: int = 0
    high_intensity: bool = False
    optional_forest: bool = False
    optional_air_forest: bool = False
    attacker_in_forest: bool = False
    spetsnaz: bool = False
    beyond_table: str = "clamp"
    limits: str = "after"


def _validate(data: Soyuz81Data, **kw) -> Soyuz81Attack:
    attack = positive_int("--attack", kw["attack"], what="total attack factors")
    defense = positive_int("--defense", kw["defense"],
                           what="total defence factors; odds against 0 defence factors are undefined")
    att_steps = kw.get("attacker_steps")
    def_steps = kw.get("defender_steps")
    if att_steps is not None:
        att_steps = positive_int("--attacker-steps", att_steps)
    if def_steps is not None:
        def_steps = positive_int("--defender-steps", def_steps)
    attacker = choice("--attacker", kw.get("attacker", "soviet"), SIDES, "attacking side")
    terrain = choice("--terrain", kw.get("terrain", "clear"), data.shifts["terrain"], "terrain")
    airpower = positive_int("--airpower", kw.get("airpower", 0), allow_zero=True, what="airpower markers")
    limits = choice("--limits", kw.get("limits", "after"), LIMITS, "limits order")
    beyond = kw.get("beyond_table", "clamp")
    _policy(beyond)
    city = terrain == "city"
    # S81 9.13 / TEC errata: "No concentric bonus is possible" against a city.
    if kw.get("concentric") and city:
        raise SoeInputError(Problem("--concentric", "", "", True,
                                    "no concentric bonus is possible against a city hex (S81 9.13)"))
    if kw.get("high_intensity"):
        # S81 9.14: Soviet attacks into a city hex with a tank or artillery division.
        if attacker != "soviet" or not city:
            raise SoeInputError(Problem("--high-intensity", "", "", True,
                                        "only a Soviet attack into a city hex may be high intensity (S81 9.14)",
                                        "add --terrain city (and --attacker soviet)"))
    if kw.get("spetsnaz") and (attacker != "soviet" or not city):
        raise SoeInputError(Problem("--spetsnaz", "", "", True,
                                    "the optional Spetsnaz shift is for a Soviet attack on a city hex (S81 7.5)"))
    return Soyuz81Attack(attack, defense, att_steps, def_steps, attacker, terrain,
                         bool(kw.get("river")), bool(kw.get("concentric")), airpower,
                         bool(kw.get("high_intensity")), bool(kw.get("optional_forest")),
                         bool(kw.get("optional_air_forest")), bool(kw.get("attacker_in_forest")),
                         bool(kw.get("spetsnaz")), str(beyond), limits)


def column_shifts(a: Soyuz81Attack, data: Soyuz81Data) -> list[dict]:
    """Every applicable column shift: ``{"name", "columns", "source"}`` (negative = left)."""
    s = data.shifts
    out = []

    def add(name, cols, key):
        if cols:
            out.append({"name": name, "columns": int(cols), "source": data.source(f"shifts.{key}")})

    add(f"terrain: {a.terrain}", s["terrain"][a.terrain], f"terrain.{a.terrain}")  # S81 9.10, 9.11, 9.13
    if a.optional_forest and a.terrain == "forest":
        add("forest (optional 10.1)", s["optional_forest"], "optional_forest")
    if a.river:
        add("all attackers across river/lake", s["river"], "river")  # S81 9.12
    if a.concentric:
        add("concentric attack", s["concentric"], "concentric")  # S81 9.15
    if a.airpower:
        # S81 7.3: each marker shifts one column in the Soviet favour, in and out of the hex.
        markers = a.airpower
        in_forest = a.terrain == "forest" if a.attacker == "soviet" else a.attacker_in_forest
        name = f"airpower: {a.airpower} marker(s)"
        if a.optional_air_forest and in_forest:
            # S81 10.2 (optional): in a forest hex two markers count as one (odd one rounds down).
            markers //= int(s["optional_airpower_forest_markers_per_shift"])
            name += f" in forest = {markers} (optional 10.2)"
        sign = 1 if a.attacker == "soviet" else -1
        add(name, sign * markers * s["airpower_per_marker"], "airpower_per_marker")
    if a.spetsnaz:
        add("8th Spetsnaz Brigade vs city (optional 7.5)", s["optional_spetsnaz_city"], "optional_spetsnaz_city")
    return out


def _face_losses(cells, a_steps, d_steps, extra: int, sap_per_step: int, hia: bool):
    att = np.array([c[0] for c in cells], dtype=np.int64)
    dfn = np.array([c[1] for c in cells], dtype=np.int64) + extra  # S81 9.14: +1 step
    # S81 9.17: the defender absorbs first; losses beyond the steps present are ignored.
    dfn_lost = np.minimum(dfn, d_steps) if d_steps is not None else dfn
    att_lost = np.minimum(att, a_steps) if a_steps is not None else att
    sap = dfn_lost * sap_per_step if hia else np.zeros_like(dfn_lost)  # S81 9.14
    return att, dfn, att_lost, dfn_lost, sap


class Soyuz81Odds:
    """Exact odds of one Soyuz 81 attack (the die's six faces enumerated).

    Attributes
    ----------
    attack : Soyuz81Attack
    base_odds, final_odds, column : str
        Odds from 9.6/9.7, after the shifts, and the CRT column actually read.
    shifts : list of dict
    outcomes : DataFrame
        One row per die face: ``die, result, attacker_losses, defender_losses, sap_cost, p``.
    """

    system = "soyuz81"

    def __init__(self, attack: Soyuz81Attack, base: int, net: int, resolution: ColumnResolution,
                 shifts: list, outcomes: pd.DataFrame, data: Soyuz81Data):
        self.attack = attack
        self.base_index = base
        self.net_shift = net
        self.resolution = resolution
        self.shifts = shifts
        self.outcomes = outcomes
        self.data = data

    base_odds = property(lambda self: index_label(self.base_index))
    final_odds = property(lambda self: self.resolution.final_odds)
    column = property(lambda self: self.resolution.column)

    @property
    def joint(self) -> pd.DataFrame:
        """Joint distribution of steps lost (capped when step counts are given)."""
        o = self.outcomes
        return joint_frame(o["attacker_losses"], o["defender_losses"], o["p"])

    loss_distribution = joint

    @property
    def metrics(self) -> dict:
        o = self.outcomes  # every face has p = 1/faces (one fair die): means are plain averages
        a = self.attack
        m = {
            "attacker_losses_mean": float(np.mean(o["attacker_losses"])),
            "defender_losses_mean": float(np.mean(o["defender_losses"])),
            "p_defender_loses_any": float(np.mean((o["defender_losses"] > 0))),
            "p_attacker_loses_none": float(np.mean((o["attacker_losses"] == 0))),
            "p_hex_cleared": (float(np.mean((o["defender_losses"] >= a.defender_steps)))
                              if a.defender_steps is not None else None),
            "p_attacker_eliminated": (float(np.mean((o["attacker_losses"] >= a.attacker_steps)))
                                      if a.attacker_steps is not None else None),
            "sap_cost_mean": float(np.mean(o["sap_cost"])),
        }
        return m

    def __getattr__(self, name):
        if name in DESCRIPTIONS:
            return self.metrics[name]
        raise AttributeError(name)

    @property
    def sap_cost_distribution(self) -> list[dict]:
        return distribution(self.outcomes["sap_cost"], self.outcomes["p"], "sap")

    @property
    def summary(self) -> pd.DataFrame:
        """One row per metric (``description``, ``exact``); undefined metrics are NaN."""
        m = self.metrics
        df = pd.DataFrame({"description": DESCRIPTIONS,
                           "exact": {k: (np.nan if m[k] is None else m[k]) for k in DESCRIPTIONS}})
        df.index.name = "metric"
        return df

    def notes(self) -> list[str]:
        out = []
        if self.resolution.note:
            out.append(self.resolution.note)
        if self.attack.defender_steps is None or self.attack.attacker_steps is None:
            out.append("losses are CRT step losses, not capped (give --attacker-steps/--defender-steps "
                       "to cap them at the steps present, S81 9.17)")
        if self.attack.high_intensity:
            out.append("high intensity: +1 defender step on every result; SAP cost = Polish steps lost "
                       "(S81 9.14)")
        return out

    def to_dict(self) -> dict:
        """JSON-ready result (the ``soe-sim odds --system soyuz81 --format json`` document)."""
        a = self.attack
        inputs = asdict(a)
        return {
            "system": self.system,
            "inputs": inputs,
            "base_odds": self.base_odds,
            "shifts": self.shifts,
            "net_shift": self.net_shift,
            "final_odds": self.final_odds,
            "column": self.column,
            "column_kind": self.resolution.kind,
            "beyond_table": a.beyond_table,
            "limits": a.limits,
            "results_by_die": self.outcomes.drop(columns="p").to_dict(orient="records"),
            **self.metrics,
            "loss_distribution": self.joint.to_dict(orient="records"),
            "sap_cost_distribution": self.sap_cost_distribution,
            "notes": self.notes(),
        }

    def plot(self, title: str | None = None):
        """Joint loss heatmap (left) and the result of each die face (right); returns the Figure."""
        import matplotlib.pyplot as plt

        from soe_sim.plotting import SIDE_COLORS

        a = self.attack
        defender = "polish" if a.attacker == "soviet" else "soviet"
        with style():
            fig, (ax_j, ax_d) = plt.subplots(1, 2, figsize=(12, 5), gridspec_kw={"width_ratios": [1.1, 1]})
            plot_joint(ax_j, self.joint, f"defender ({defender}) steps lost",
                       f"attacker ({a.attacker}) steps lost", "Joint distribution of step losses")
            o = self.outcomes
            x = o["die"].to_numpy()
            ax_d.bar(x - 0.2, o["attacker_losses"], width=0.4, color=SIDE_COLORS[a.attacker], label="attacker")
            ax_d.bar(x + 0.2, o["defender_losses"], width=0.4, color=SIDE_COLORS[defender], label="defender")
            ax_d.set_xticks(x, [f"{d}\n{r}" for d, r in zip(o["die"], o["result"])])
            ax_d.set_xlabel("die roll / CRT result")
            ax_d.set_ylabel("steps lost")
            ax_d.legend(fontsize=8)
            m = self.metrics
            ax_d.set_title(f"column {self.column}: E[losses] {m['attacker_losses_mean']:.2f} / "
                           f"{m['defender_losses_mean']:.2f}")
            fig.suptitle(title or f"Soyuz 81: {a.attack} vs {a.defense}, base {self.base_odds}, "
                         f"net shift {self.net_shift:+d} -> {self.final_odds}")
            fig.tight_layout()
        return fig

    def __repr__(self) -> str:
        m = self.metrics
        return (f"Soyuz81Odds({self.attack.attack} vs {self.attack.defense}: column {self.column}, "
                f"E[losses] {m['attacker_losses_mean']:.3f} / {m['defender_losses_mean']:.3f})")


def soyuz81_odds(
    attack: int,
    defense: int,
    *,
    attacker_steps: int | None = None,
    defender_steps: int | None = None,
    attacker: str = "soviet",
    terrain: str = "clear",
    river: bool = False,
    concentric: bool = False,
    airpower: int = 0,
    high_intensity: bool = False,
    optional_forest: bool = False,
    optional_air_forest: bool = False,
    attacker_in_forest: bool = False,
    spetsnaz: bool = False,
    beyond_table: str = "clamp",
    limits: str = "after",
    data: Soyuz81Data | str | Path | None = None,
) -> Soyuz81Odds:
    """Exact odds of a Soyuz 81 attack (S81 9.6-9.17).

    Parameters
    ----------
    attack, defense : int
        Total attack factors of the attackers, total defence factors in the defending hex (≥ 1).
    attacker_steps, defender_steps : int, optional
        Steps present; when given, losses are capped at them (9.17) and ``p_hex_cleared`` is defined.
    attacker : {"soviet", "polish"}
        Side of the attacker (airpower direction, 7.3; high intensity and Spetsnaz are Soviet only).
    terrain : {"clear", "forest", "mountain", "city"}
        Defender's hex (9.10-9.13; cities are clear terrain, 8.6).
    river : bool
        All attackers across river/lake hexsides (1L, 9.12).
    concentric : bool
        Concentric attack (1R, 9.15); not allowed into a city.
    airpower : int
        Airpower markers of the interdicted hex: the defender's when the Soviets attack (R), the
        attackers' when the Poles attack (L) (7.3).
    high_intensity : bool
        Soviet high intensity attack into a city (9.14): +1 defender step, SAP = Polish steps lost.
    optional_forest, optional_air_forest, spetsnaz : bool
        Optional rules 10.1 (forest 1L), 10.2 (two markers in forest count as one) and 7.5
        (8th Spetsnaz vs city, 1R).
    attacker_in_forest : bool
        For a Polish attack with option 10.2: the attackers' interdicted hex is a forest hex.
    beyond_table : {"clamp", "extrapolate", "columns:FILE"}
        Treatment of 6:1 and 7:1 (see the module docstring).
    limits : {"after", "before"}
        Whether 9.8's limits apply after or before the shifts.
    data : Soyuz81Data or path, optional
        Alternative tables (default ``data/systems/soyuz81.toml``).

    Returns
    -------
    Soyuz81Odds
    """
    if not isinstance(data, Soyuz81Data):
        data = load_soyuz81(data)
    a = _validate(data, attack=attack, defense=defense, attacker_steps=attacker_steps,
                  defender_steps=defender_steps, attacker=attacker, terrain=terrain, river=river,
                  concentric=concentric, airpower=airpower, high_intensity=high_intensity,
                  optional_forest=optional_forest, optional_air_forest=optional_air_forest,
                  attacker_in_forest=attacker_in_forest, spetsnaz=spetsnaz, beyond_table=beyond_table,
                  limits=limits)
    base = odds_index(a.attack, a.defense)  # S81 9.6 / 9.7
    shifts = column_shifts(a, data)  # S81 9.9: cumulative, one net shift
    net = sum(s["columns"] for s in shifts)
    idx = final_index(base, net, a.limits, data)  # S81 9.8
    mode, path = _policy(a.beyond_table)
    user = _user_columns(path, data) if mode == "columns" else None
    res = resolve_column(idx, data, a.beyond_table, user)
    hia = data.high_intensity
    extra = int(hia["extra_defender_steps"]) if a.high_intensity else 0
    _, _, att_lost, dfn_lost, sap = _face_losses(res.cells, a.attacker_steps, a.defender_steps, extra,
                                                 int(hia["sap_per_defender_step"]), a.high_intensity)
    faces = np.arange(1, data.faces + 1)
    outcomes = pd.DataFrame({
        "die": faces,
        "result": [f"{c[0]}/{c[1]}" for c in res.cells],
        "attacker_losses": att_lost,
        "defender_losses": dfn_lost,
        "sap_cost": sap,
        "p": np.full(data.faces, 1.0 / data.faces),  # S81 9.16: one fair die
    })
    return Soyuz81Odds(a, base, net, res, shifts, outcomes, data)


def soyuz81_table(
    *,
    shifts=range(-3, 4),
    base_odds=None,
    beyond_table: str = "clamp",
    limits: str = "after",
    high_intensity: bool = False,
    attacker_steps: int | None = None,
    defender_steps: int | None = None,
    data: Soyuz81Data | str | Path | None = None,
) -> pd.DataFrame:
    """The odds-column × net-shift table for players.

    One row per (base odds, net shift): the CRT column read and the exact expected losses.

    Parameters
    ----------
    shifts : iterable of int
        Net column shifts (negative = left).
    base_odds : iterable of str, optional
        Base odds labels; default three columns beyond each end of 1:3..7:1 (1:6 … 10:1).
    beyond_table, limits, high_intensity, attacker_steps, defender_steps
        As in :func:`soyuz81_odds`.

    Returns
    -------
    DataFrame
        ``base_odds, shift, final_odds, column, column_kind, attacker_losses_mean,
        defender_losses_mean, p_defender_loses_any``.
    """
    if not isinstance(data, Soyuz81Data):
        data = load_soyuz81(data)
    limits = choice("--limits", limits, LIMITS, "limits order")
    mode, path = _policy(beyond_table)
    user = _user_columns(path, data) if mode == "columns" else None
    if base_odds is None:
        bases = list(range(data.lowest - 3, data.highest + 4))
    else:
        bases = [label_index(b, file="--base-odds") for b in base_odds]
    if attacker_steps is not None:
        attacker_steps = positive_int("--attacker-steps", attacker_steps)
    if defender_steps is not None:
        defender_steps = positive_int("--defender-steps", defender_steps)
    hia = data.high_intensity
    extra = int(hia["extra_defender_steps"]) if high_intensity else 0
    rows = []
    for b in bases:
        for s in shifts:
            res = resolve_column(final_index(b, int(s), limits, data), data, beyond_table, user)
            _, _, att, dfn, _ = _face_losses(res.cells, attacker_steps, defender_steps, extra,
                                             int(hia["sap_per_defender_step"]), high_intensity)
            rows.append({"base_odds": index_label(b), "shift": int(s), "final_odds": res.final_odds,
                         "column": res.column, "column_kind": res.kind,
                         "attacker_losses_mean": float(att.mean()), "defender_losses_mean": float(dfn.mean()),
                         "p_defender_loses_any": float((dfn > 0).mean())})
    return pd.DataFrame(rows)


def plot_table(table: pd.DataFrame, title: str | None = None):
    """Heatmap of E[defender losses] − E[attacker losses] over base odds × net shift."""
    import matplotlib.pyplot as plt

    with style():
        fig, ax = plt.subplots(figsize=(9, 6))
        order = list(dict.fromkeys(table["base_odds"]))
        t = table.assign(edge=table["defender_losses_mean"] - table["attacker_losses_mean"])
        m = t.pivot(index="base_odds", columns="shift", values="edge").loc[order]
        lab = t.pivot(index="base_odds", columns="shift", values="column").loc[order]
        im = ax.imshow(m.to_numpy(), cmap="RdBu", origin="lower", aspect="auto",
                       vmin=-6, vmax=6)
        ax.set_xticks(range(m.shape[1]), [f"{s:+d}" for s in m.columns])
        ax.set_yticks(range(m.shape[0]), list(m.index))
        ax.set_xlabel("net column shift (− left, + right)")
        ax.set_ylabel("base odds (S81 9.6 / 9.7)")
        for (i, j), v in np.ndenumerate(m.to_numpy()):
            ax.text(j, i, f"{lab.iloc[i, j]}\n{v:+.2f}", ha="center", va="center", fontsize=7)
        fig.colorbar(im, ax=ax, label="E[defender steps] − E[attacker steps]")
        ax.set_title(title or "Soyuz 81: CRT column and expected step-loss edge")
        fig.tight_layout()
    return fig
