"""Block rosters of both sides (``blocks/blocks.csv``) and the leaders (``blocks/leaders.toml``)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from soe_sim._paths import data_dir
from soe_sim.data._io import Col, Problems, check_keys, is_int, read_table, read_toml
from soe_sim.data._rules import rule
from soe_sim.data.enums import Arm, CardFront, LeaderAbility, Nation, Side, UnitClass
from soe_sim.errors import SoeInputError, did_you_mean

__all__ = ["Roster", "load_blocks", "BLOCK_SCHEMA"]

BLOCK_SCHEMA = [
    Col("id", "slug"),
    Col("side", "enum", choices=tuple(Side.slugs())),
    Col("name", "str"),
    Col("nation", "enum", choices=tuple(Nation.slugs())),
    Col("arm", "enum", choices=tuple(Arm.slugs())),
    Col("class", "enum", choices=tuple(UnitClass.slugs())),
    Col("max_sp", "int", lo=1, hi=4),
    Col("source", "str"),
]
LEADER_KEYS = ["block", "ability", "range", "front", "text", "source", "name"]


@dataclass
class Roster:
    """Both sides' blocks and the leaders.

    Attributes
    ----------
    blocks : pandas.DataFrame
        ``id, side, name, nation, arm, class, max_sp, source`` in file order (row = block index).
    leaders : pandas.DataFrame
        ``block, ability, range, front, text, source``.
    block_index : dict[str, int]
        Block id → row index.
    side, arm, max_sp : numpy.ndarray
        int8 codes per block (:class:`~soe_sim.data.enums.Side`, :class:`~soe_sim.data.enums.Arm`).

    Unpacks as ``blocks, leaders = load_blocks()``.
    """

    blocks: pd.DataFrame
    leaders: pd.DataFrame
    block_index: dict
    side: np.ndarray
    arm: np.ndarray
    max_sp: np.ndarray
    path: Path | None = None

    def __iter__(self):
        return iter((self.blocks, self.leaders))

    def side_of(self, block: str) -> str | None:
        """Side slug of ``block`` (``None`` when unknown)."""
        i = self.block_index.get(block)
        return None if i is None else self.blocks["side"].iat[i]

    def __repr__(self) -> str:
        return f"Roster({len(self.blocks)} blocks, {len(self.leaders)} leaders)"


def resolve_blocks_dir(path: Path | str | None) -> Path:
    """The ``blocks`` directory for ``path`` (a blocks dir, a data root or the default)."""
    if path is None:
        return data_dir() / "blocks"
    p = Path(path)
    if p.is_file():
        return p.parent
    if (p / "blocks").is_dir():
        return p / "blocks"
    return p


def load_blocks(path: Path | str | None = None) -> Roster:
    """Load and validate the block roster and the leaders.

    Parameters
    ----------
    path : path-like, optional
        A ``blocks`` directory or a data root holding ``blocks/``; default: built-in data.

    Returns
    -------
    Roster
        Also unpacks as ``(blocks, leaders)`` DataFrames.

    Raises
    ------
    SoeInputError
        With every problem found.
    """
    problems = Problems()
    roster = read_blocks(resolve_blocks_dir(path), problems)
    if problems:
        raise SoeInputError(problems)
    return roster


def read_blocks(blocks_dir: Path, problems: Problems) -> Roster | None:
    """Read and check ``blocks.csv`` and ``leaders.toml``, appending problems; ``None`` if unreadable."""
    blocks_dir = Path(blocks_dir)
    root = blocks_dir.parent
    path = blocks_dir / "blocks.csv"
    t = read_table(path, BLOCK_SCHEMA, problems)
    if not t.ok:
        return None
    df = t.frame
    index: dict[str, int] = {}
    caps = {"brigade": rule(root, "blocks.brigade_max_sp"), "division": rule(root, "blocks.division_max_sp"),
            "leader": rule(root, "blocks.leader_sp")}
    for i in range(len(df)):
        bid, where = df["id"].iat[i], t.entry(i)
        if bid in index:
            problems.add(path, where, "id", bid, f"duplicate block id (first on line {t.lines[index[bid]]})")
        elif bid:
            index[bid] = i
        arm, cls, sp = df["arm"].iat[i], df["class"].iat[i], df["max_sp"].iat[i]
        if arm and cls and (arm == "leader") != (cls == "leader"):
            problems.add(path, where, "class", cls, f"arm '{arm}' and class '{cls}' disagree: "
                         "leaders have arm and class 'leader'")
        # SoE 2.1 (brigades 2 SP, divisions 4 SP), SoE 9.0 (leaders 1 SP)
        if cls in caps and sp is not None:
            if cls == "leader" and sp != caps[cls]:
                problems.add(path, where, "max_sp", sp, f"a leader has exactly {caps[cls]} SP")
            elif sp > caps[cls]:
                problems.add(path, where, "max_sp", sp, f"a {cls} has at most {caps[cls]} SP")

    leaders = _read_leaders(blocks_dir / "leaders.toml", df, index, problems)
    code = lambda col, enum_cls: np.array(  # noqa: E731
        [int(enum_cls.from_slug(v)) if v else -1 for v in df[col]], dtype=np.int8)
    df = df.copy()
    df["max_sp"] = [int(v) if v is not None else 0 for v in df["max_sp"]]
    return Roster(df, leaders, index, code("side", Side), code("arm", Arm),
                  df["max_sp"].to_numpy(dtype=np.int8), blocks_dir)


def _read_leaders(path: Path, blocks: pd.DataFrame, index: dict, problems: Problems) -> pd.DataFrame:
    cols = ["block", "ability", "range", "front", "text", "source"]
    empty = pd.DataFrame({c: pd.Series(dtype=object) for c in cols})
    if not path.exists():
        return empty
    doc = read_toml(path, problems)
    if doc is None:
        return empty
    check_keys(doc, ["leader", "meta", "source", "sources"], path, "", problems)
    entries = doc.get("leader", [])
    if not isinstance(entries, list):
        problems.add(path, "", "leader", entries, "expected [[leader]] tables")
        return empty
    rows, seen = [], set()
    for k, e in enumerate(entries):
        bid = e.get("block") if isinstance(e, dict) else None
        where = f"leader[{k}]" + (f" (block={bid})" if bid else "")
        if not isinstance(e, dict):
            problems.add(path, where, "", e, "expected a table")
            continue
        check_keys(e, LEADER_KEYS, path, where, problems, required=["block", "ability"])
        if bid is not None:
            if bid not in index:
                problems.add(path, where, "block", bid, "unknown block", did_you_mean(str(bid), index))
            elif blocks["arm"].iat[index[bid]] != "leader":
                problems.add(path, where, "block", bid, "not a leader block (arm is "
                             f"'{blocks['arm'].iat[index[bid]]}' in blocks.csv)")
            if bid in seen:
                problems.add(path, where, "block", bid, "leader listed twice")
            seen.add(bid)
        ab = e.get("ability")
        if ab is not None and ab not in LeaderAbility.slugs():
            problems.add(path, where, "ability", ab, "unknown leader ability",
                         did_you_mean(str(ab), LeaderAbility.slugs()))
        rng = e.get("range", 0)
        if not is_int(rng) or rng < 0:
            problems.add(path, where, "range", rng, "expected an integer >= 0")
        fr = e.get("front", "any")
        if fr not in CardFront.slugs():
            problems.add(path, where, "front", fr, "unknown front; expected any, north or south",
                         did_you_mean(str(fr), CardFront.slugs()))
        rows.append({"block": bid, "ability": ab, "range": rng, "front": fr,
                     "text": e.get("text", ""), "source": e.get("source", "")})
    return pd.DataFrame(rows, columns=cols) if rows else empty
