"""Helpers shared by the odds-ratio combat systems (Soyuz 81, Red Star/White Eagle).

Odds columns are handled as integer *indices* on one unbounded sequence so that column shifts are
plain additions: index ``k >= 0`` is ``(k + 1):1`` (1:1 → 0, 3:1 → 2) and index ``k < 0`` is
``1:(1 - k)`` (1:2 → -1, 1:3 → -2).
"""
from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd

from soe_sim._paths import data_dir
from soe_sim.data._io import load_toml
from soe_sim.errors import Problem, SoeInputError, did_you_mean

_LABEL = re.compile(r"^\s*(\d+)\s*[:\-]\s*(\d+)\s*$")


def odds_index(attack: int, defense: int) -> int:
    """Column index of ``attack`` vs ``defense`` rounded in the defender's favour.

    ``A >= D`` gives ``floor(A / D):1``; ``A < D`` gives ``1:ceil(D / A)`` (Soyuz 81 9.6, 9.7;
    RSWE 9.0).
    """
    if attack >= defense:
        return attack // defense - 1
    return 1 - -(-defense // attack)  # 1:ceil(D/A) has index 1 - ceil(D/A)


def index_label(index: int) -> str:
    """``2 -> "3:1"``, ``-2 -> "1:3"``."""
    return f"{index + 1}:1" if index >= 0 else f"1:{1 - index}"


def label_index(label: str, *, file: str = "", entry: str = "") -> int:
    """``"3:1"`` or ``"3-1"`` → 2; a bad label is a :class:`SoeInputError`."""
    m = _LABEL.match(str(label))
    if not m or (m.group(1) != "1" and m.group(2) != "1") or int(m.group(1)) < 1 or int(m.group(2)) < 1:
        raise SoeInputError(Problem(file, entry, "", label,
                                    "not an odds column label; expected `N:1` or `1:N` (e.g. `3:1`, `1:2`)"))
    a, d = int(m.group(1)), int(m.group(2))
    return a - 1 if d == 1 else 1 - d


def read_toml(path: str | Path, what: str) -> dict:
    """Read a TOML file, turning I/O and syntax problems into one-line input errors."""
    try:
        return load_toml(path)
    except FileNotFoundError:
        raise SoeInputError(Problem(str(path), "", "", str(path), f"{what} not found")) from None
    except IsADirectoryError:
        raise SoeInputError(Problem(str(path), "", "", str(path), f"{what} is a directory")) from None
    except tomllib.TOMLDecodeError:
        from soe_sim.data._io import Problems, read_toml as read_data_toml

        problems = Problems()  # worded and located as a syntax error in any other data file
        read_data_toml(Path(path), problems)
        raise SoeInputError(problems) from None


def system_file(system: str, path: str | Path | None = None) -> tuple[dict, Path]:
    """The data file of a combat system (``data/systems/<system>.toml`` unless ``path`` given)."""
    p = Path(path) if path is not None else data_dir() / "systems" / f"{system}.toml"
    return read_toml(p, f"{system} combat-system file"), p


def die_faces(raw: dict, file: str) -> int:
    """``[meta] die_faces`` of a combat-system file: an integer ≥ 1, else an error naming the key (a 0 showed
    up as "expected a list of 0 results" in every CRT cell)."""
    faces = raw["meta"]["die_faces"]
    if isinstance(faces, bool) or not isinstance(faces, int) or not 1 <= faces <= 100:
        raise SoeInputError(Problem(file, "meta", "die_faces", faces, "expected an integer 1..100"))
    return faces


def choice(option: str, value: str, allowed, what: str) -> str:
    """Validate ``value`` against ``allowed`` names (case-insensitive, `_`/`-` interchangeable)."""
    norm = str(value).strip().lower().replace("_", "-")
    names = list(allowed)
    lookup = {n.lower().replace("_", "-"): n for n in names}
    if norm in lookup:
        return lookup[norm]
    hint = did_you_mean(norm, list(lookup)) or ("allowed: " + ", ".join(names))
    raise SoeInputError(Problem(option, "", "", value, f"unknown {what}", hint))


def positive_int(option: str, value, *, allow_zero: bool = False, what: str = "") -> int:
    """An integer ≥ 1 (or ≥ 0), else a clear error."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        try:
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise TypeError
        except TypeError:
            raise SoeInputError(Problem(option, "", "", value, "expected a whole number")) from None
    value = int(value)
    low = 0 if allow_zero else 1
    if value < low:
        msg = f"must be ≥ {low}" + (f" ({what})" if what else "")
        raise SoeInputError(Problem(option, "", "", value, msg))
    return value


def joint_frame(att: np.ndarray, dfn: np.ndarray, p: np.ndarray) -> pd.DataFrame:
    """Joint distribution ``attacker_losses, defender_losses, p`` (rows with p = 0 dropped)."""
    df = pd.DataFrame({"attacker_losses": np.asarray(att, dtype=np.int64),
                       "defender_losses": np.asarray(dfn, dtype=np.int64),
                       "p": np.asarray(p, dtype=float)})
    df = df.groupby(["attacker_losses", "defender_losses"], as_index=False)["p"].sum()
    return df[df["p"] > 0].reset_index(drop=True)


def distribution(values, p, key: str) -> list[dict]:
    """``[{key: v, "p": p}, …]`` sorted by value, p = 0 dropped."""
    s = pd.Series(np.asarray(p, dtype=float)).groupby(np.asarray(values)).sum()
    return [{key: (v.item() if hasattr(v, "item") else v), "p": float(q)} for v, q in s.items() if q > 0]


def ceil_half(x: int) -> int:
    """Half, rounded up (RSWE 9.12.2: ½ of 3 is 2, ½ of 1 is 1)."""
    return math.ceil(x / 2)


def plot_joint(ax, joint: pd.DataFrame, xlabel: str, ylabel: str, title: str) -> None:
    """Heatmap of a joint loss distribution on ``ax`` (probabilities printed in the cells)."""
    matrix = joint.pivot_table(index="attacker_losses", columns="defender_losses", values="p",
                               aggfunc="sum", fill_value=0.0)
    data = matrix.to_numpy()
    im = ax.imshow(data, cmap="Greys", origin="lower", vmin=0, vmax=max(float(data.max()), 1e-9))
    ax.set_xticks(range(data.shape[1]), [str(c) for c in matrix.columns])
    ax.set_yticks(range(data.shape[0]), [str(r) for r in matrix.index])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    for (i, j), q in np.ndenumerate(data):
        if q > 0:
            colour = "white" if q > 0.5 * data.max() else "black"
            ax.text(j, i, f"{q:.3f}", ha="center", va="center", fontsize=9, color=colour)
    ax.figure.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label="probability")


def style():
    """``soe_sim.plotting.use_style()`` when available, else a no-op context."""
    import contextlib

    try:
        from soe_sim.plotting import use_style
    except ImportError:  # pragma: no cover
        return contextlib.nullcontext()
    return use_style()
