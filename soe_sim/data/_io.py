"""Low-level readers: CSV and TOML with every problem collected, never raised one at a time.

The CSV reader keeps each row's physical line number so that every later check can say
``areas.csv: line 17 (id=zlobin): field 'grid': …``. Column values are converted by a small
schema (:class:`Col`); a bad value becomes a :class:`~soe_sim.errors.Problem` and the row keeps a
placeholder so the remaining checks still run.
"""
from __future__ import annotations

import collections
import csv
import io
import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from soe_sim.errors import Problem, SoeInputError, did_you_mean

SLUG_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
GRID_RE = re.compile(r"^([A-K])([1-8])$")
_TRUE = {"true", "1", "yes", "y", "t"}
_FALSE = {"false", "0", "no", "n", "f"}


def display_path(path: Path | str) -> str:
    """Path as shown in messages: relative to the working directory when inside it."""
    p = Path(path)
    try:
        return os.path.relpath(p) if p.is_absolute() and not os.path.relpath(p).startswith("..") else str(p)
    except ValueError:  # other drive on Windows
        return str(p)


MISSING_KEY = "missing required key"


class Problems(list):
    """A list of :class:`Problem` with a shorthand ``add``."""

    def add(self, file, entry="", fld="", value=None, message="", suggestion=None) -> None:
        """Append one problem (``file`` may be a path); nothing more about a field already reported
        missing (its type check would only repeat the same problem)."""
        file = display_path(file) if isinstance(file, Path) else str(file)
        if value is None and any(p.message == MISSING_KEY and (p.file, p.entry, p.field) == (file, entry, fld)
                                 for p in self):
            return
        self.append(Problem(file, entry, fld, value, message, suggestion))


@dataclass(frozen=True)
class Col:
    """Schema of one CSV column.

    ``kind`` is one of ``slug``, ``str``, ``int``, ``float``, ``bool``, ``enum``, ``grid``,
    ``slug_list`` (``;``-separated slugs). ``choices`` restricts ``enum`` (and ``enum`` with
    ``allow_empty``); ``lo``/``hi`` bound numbers (inclusive).
    """

    name: str
    kind: str = "str"
    required: bool = True
    default: Any = None
    choices: tuple = ()
    lo: float | None = None
    hi: float | None = None
    allow_empty: bool = False


@dataclass
class Table:
    """A parsed CSV: the typed DataFrame plus the source line of each row."""

    path: Path
    frame: pd.DataFrame
    lines: list[int] = field(default_factory=list)
    ok: bool = True  # False when the file could not be read at all

    def entry(self, i: int, key: str = "id") -> str:
        """Message label of row ``i`` (``line 17 (id=zlobin)``)."""
        label = f"line {self.lines[i]}"
        if key in self.frame.columns:
            val = self.frame[key].iat[i]
            if val is not None and val == val and str(val) != "":
                label += f" ({key}={val})"
        return label


def _convert(col: Col, raw: str, where: str, path: Path, problems: Problems):
    """Convert one cell; append a problem and return the default on failure."""
    text = raw.strip()
    kind = col.kind
    if text == "" and kind not in ("str", "slug_list"):
        if col.allow_empty or not col.required:
            return col.default
        problems.add(path, where, col.name, raw, f"empty value; expected {_describe(col)}")
        return col.default
    if kind == "str":
        return text
    if kind == "slug":
        if not SLUG_RE.match(text):
            problems.add(path, where, col.name, raw,
                         "not a lowercase slug [a-z0-9]+(-[a-z0-9]+)*")
        return text
    if kind == "slug_list":
        items = [t.strip() for t in text.split(";") if t.strip()]
        return tuple(items)
    if kind == "bool":
        low = text.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        problems.add(path, where, col.name, raw, "expected true or false")
        # the column's default (garrison: unset, i.e. derived from vp), not a False the user never wrote
        # that later checks would report again ("a key city must allow a garrison (got False)")
        return col.default
    if kind in ("int", "float"):
        try:
            num = float(text)
            if not math.isfinite(num):
                raise ValueError
            if kind == "int":
                if num != int(num):
                    raise ValueError
                num = int(num)
        except ValueError:
            problems.add(path, where, col.name, raw, f"expected {_describe(col)}")
            return col.default
        if (col.lo is not None and num < col.lo) or (col.hi is not None and num > col.hi):
            problems.add(path, where, col.name, num, f"out of range; expected {_describe(col)}")
            return col.default  # never passed on: a later fixed-width array could not hold it
        return num
    if kind == "enum":
        if text not in col.choices:
            problems.add(path, where, col.name, raw,
                         f"unknown value; expected one of {', '.join(col.choices)}",
                         did_you_mean(text.lower(), col.choices))
            return col.default
        return text
    if kind == "grid":
        if not GRID_RE.match(text.upper()):
            problems.add(path, where, col.name, raw, "expected a grid square A1..K8")
            return col.default
        return text.upper()
    raise AssertionError(kind)  # pragma: no cover


def _describe(col: Col) -> str:
    if col.kind in ("int", "float"):
        word = "an integer" if col.kind == "int" else "a number"
        if col.lo is not None and col.hi is not None:
            return f"{word} {col.lo:g}..{col.hi:g}"
        if col.lo is not None:
            return f"{word} >= {col.lo:g}"
        if col.hi is not None:
            return f"{word} <= {col.hi:g}"
        return word
    if col.kind == "enum":
        return "one of " + ", ".join(col.choices)
    return col.kind


def read_table(path: Path, schema: list[Col], problems: Problems, key: str = "id",
               allow_extra: bool = False) -> Table:
    """Read a CSV with leading ``#`` comment lines and convert it by ``schema``.

    Returns a :class:`Table`; all problems (syntax, missing/unknown columns, bad values) are
    appended to ``problems``. Missing optional columns are filled with their defaults.
    """
    path = Path(path)
    empty = Table(path, pd.DataFrame({c.name: pd.Series(dtype=object) for c in schema}), [], ok=False)
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark (Excel's "CSV UTF-8") is not text
    except FileNotFoundError:
        problems.add(path, "", "", str(path), "file not found")
        return empty
    except (OSError, UnicodeDecodeError) as exc:
        problems.add(path, "", "", str(path), f"cannot read file: {exc}")
        return empty
    lines = text.splitlines(keepends=True)
    start = 0
    while start < len(lines) and (lines[start].lstrip().startswith("#") or not lines[start].strip()):
        start += 1
    if start == len(lines):
        problems.add(path, "", "", None, "no header row (file is empty)")
        return empty
    reader = csv.reader(io.StringIO("".join(lines[start:])), strict=True)
    rows: list[tuple[int, list[str]]] = []
    try:
        header = [h.strip() for h in next(reader)]
        header_line = start + 1
        if len(header) == 1 and header[0].count(";") >= 1 and ";" not in {c.name for c in schema}:
            # an export in a locale whose list separator is ";" (Excel in much of Europe): one problem, not
            # every column reported missing
            problems.add(path, f"line {header_line} (header)", "", header[0],
                         "the columns are separated by semicolons; a data CSV is comma-separated",
                         "save it as \"CSV UTF-8 (comma delimited)\", or replace the semicolons by commas")
            return empty
        while True:
            before = reader.line_num
            try:
                row = next(reader)
            except StopIteration:
                break
            line = start + before + 1
            if not row or all(not c.strip() for c in row):
                continue
            if row[0].lstrip().startswith("#"):
                continue
            rows.append((line, row))
    except csv.Error as exc:
        problems.add(path, f"line {start + reader.line_num}", "", None, f"CSV syntax error: {exc}")
        return empty

    widths = collections.Counter(len(row) for _, row in rows)
    if rows and len(header) not in widths:
        # no row agrees with the header: the header is wrong, not each row (one problem instead of one
        # per row and per column it lacks, and no check of a table read from no row at all)
        width = widths.most_common(1)[0][0]
        absent = [c.name for c in schema if c.name not in header]
        hint = None
        if width > len(header) and absent:
            hint = f"is the header missing {' or '.join(f'`{a}`' for a in absent[:3])}?"
        elif width < len(header):
            hint = "does the header name a column the rows do not have?"
        rows_have = f"every row has {width}" if len(widths) == 1 else f"no row has as many (most have {width})"
        problems.add(path, f"line {header_line} (header)", "", None,
                     f"the header names {len(header)} columns but {rows_have} fields", hint)
        return Table(path, empty.frame, [], ok=False)

    known = {c.name for c in schema}
    for h in header:
        if h not in known and not allow_extra:
            problems.add(path, f"line {header_line} (header)", h, h, "unknown column",
                         did_you_mean(h, known - set(header)))
    seen = set()
    for h in header:
        if h in seen:
            problems.add(path, f"line {header_line} (header)", h, h, "duplicate column")
        seen.add(h)
    missing = [c for c in schema if c.required and c.name not in header]
    for c in missing:
        problems.add(path, f"line {header_line} (header)", c.name, None, "missing required column",
                     did_you_mean(c.name, [h for h in header if h not in known]))

    index = {h: i for i, h in enumerate(header)}
    data: dict[str, list] = {c.name: [] for c in schema}
    extra_cols = [h for h in header if h not in known]
    for h in extra_cols:
        data[h] = []
    line_numbers = []
    for line, row in rows:
        if len(row) != len(header):
            problems.add(path, f"line {line}", "", len(row),
                         f"wrong number of fields; the header has {len(header)}")
            continue
        key_val = row[index[key]].strip() if key in index else ""
        where = f"line {line}" + (f" ({key}={key_val})" if key_val else "")
        line_numbers.append(line)
        for c in schema:
            if c.name in index:
                data[c.name].append(_convert(c, row[index[c.name]], where, path, problems))
            else:
                data[c.name].append(c.default)
        for h in extra_cols:
            data[h].append(row[index[h]].strip())
    frame = pd.DataFrame({k: pd.Series(v, dtype=object) for k, v in data.items()})
    return Table(path, frame, line_numbers, ok=not missing)


def load_toml(path) -> dict:
    """``tomllib`` on a UTF-8 file, with or without the byte-order mark Excel and Notepad write."""
    return tomllib.loads(Path(path).read_bytes().decode("utf-8-sig"))


def read_toml(path: Path, problems: Problems) -> dict | None:
    """Parse a TOML file; on a syntax error record the file and line and return ``None``."""
    path = Path(path)
    try:
        return load_toml(path)
    except FileNotFoundError:
        problems.add(path, "", "", str(path), "file not found")
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"line (\d+)", msg)
        problems.add(path, f"line {m.group(1)}" if m else "", "", None, f"TOML syntax error: {msg}")
    except (OSError, UnicodeDecodeError) as exc:
        problems.add(path, "", "", str(path), f"cannot read file: {exc}")
    return None


def toml_syntax_error(path) -> SoeInputError:
    """The error of a TOML file that does not parse (``tomllib.TOMLDecodeError``), worded and located as for
    every data file (``line N: TOML syntax error: …``), for the readers of rules, variants and sweep configs."""
    problems = Problems()
    read_toml(Path(path), problems)
    return SoeInputError(problems)


def check_keys(d: dict, allowed: Iterable[str], path: Path, entry: str, problems: Problems,
               required: Iterable[str] = ()) -> None:
    """Report unknown keys (with a suggestion) and missing required keys of a TOML table.

    Provenance keys (``source``, ``sources``, ``<key>_source``) are always allowed.
    """
    allowed = list(allowed)
    for k in d:
        if k in ("source", "sources") or (k.endswith("_source") and k[: -len("_source")] in allowed):
            continue
        if k not in allowed:
            problems.add(path, entry, k, d[k] if not isinstance(d[k], (dict, list)) else k,
                         "unknown key", did_you_mean(k, allowed))
    for k in required:
        if k not in d:
            problems.add(path, entry, k, None, MISSING_KEY)


def is_int(x) -> bool:
    """True for a real integer (not a bool)."""
    return isinstance(x, int) and not isinstance(x, bool)
