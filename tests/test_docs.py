"""The rules documents say what the code and the tests are: ``docs/rules-coverage.md`` has one row per
section of Strike of the Eagle 1.0–10.2, and every test, file and function it names exists; every
reading label (``G15``, ``E-B1``...) cited in the coverage table or in the package's code is one that
``docs/rules.md`` defines, and the coverage page's list of label families matches them.

These are checks of text against text, so a renamed test or function, or a reading cited but never
written down, fails here instead of leaving a document that points nowhere."""
from __future__ import annotations

import ast
import glob
import re
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COVERAGE = ROOT / "docs" / "rules-coverage.md"
READINGS = ROOT / "docs" / "rules.md"

# The numbered sections of the Strike of the Eagle rules (seed 000, its headings 1.0–10.2; 1.2, the
# fortifications, is a numbered paragraph of the map rules without a heading of its own).
SOE_SECTIONS = (
    "1.0", "1.1", "1.2", "1.3", "1.31", "1.4", "2.0", "2.1", "2.2", "3.0", "3.1", "3.2", "3.3", "3.4",
    "4.0", "5.0", "6.0", "6.1", "7.0", "7.1", "7.11", "7.12", "7.13", "7.2", "7.3", "7.31", "7.32", "7.33",
    "7.34", "7.4", "7.41", "7.42", "7.43", "7.44", "7.5", "7.6", "7.7", "7.71", "7.8", "7.9", "8.0", "8.1",
    "8.2", "8.3", "8.31", "8.4", "8.5", "9.0", "10.0", "10.1", "10.2",
)
STATUSES = ("done", "partial", "missing")
# a reading label: a family (R, D, E, E-B, E-C, RF, O, G, EV, L, V) and its number
LABEL = re.compile(r"\b((?:E-B|E-C|RF|EV|R|D|E|O|G|L|V)\d+)\b")


def _rows() -> list[list[str]]:
    rows = []
    for line in COVERAGE.read_text(encoding="utf-8").splitlines():
        if re.match(r"^\| \d", line):
            rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return rows


def _test_names() -> set[str]:
    names = set()
    for path in (ROOT / "tests").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_"):
                names.add(node.name)
    return names


@lru_cache(maxsize=None)
def _defined_names(path: Path) -> frozenset[str]:
    """Functions, classes and module-level or class-level names assigned in ``path``."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return frozenset(names)


def _defined_labels() -> list[str]:
    return re.findall(r"^\*\*((?:E-B|E-C|RF|EV|R|D|E|O|G|L|V)\d+) —", READINGS.read_text(encoding="utf-8"), re.M)


def test_rules_coverage_has_one_row_per_soe_section():
    sections = [row[0] for row in _rows()]
    assert sections == list(SOE_SECTIONS)


def test_rules_coverage_rows_have_a_status_code_and_existing_tests():
    tests = _test_names()
    for row in _rows():
        assert len(row) == 5, f"section {row[0]}: {len(row)} cells, expected 5"
        section, _title, status, code, named = row
        assert status.split()[0].strip("—,") in STATUSES, f"section {section}: status {status[:40]!r}"
        assert code, f"section {section}: no code named"
        names = re.findall(r"`(test_\w+)`", named)
        assert names, f"section {section}: no test named"
        unknown = sorted(set(names) - tests)
        assert not unknown, f"section {section}: tests not found in tests/: {unknown}"


def test_rules_coverage_code_references_exist():
    """Every backticked path in the code column exists (a glob matches a file), and each name after
    ``path.py``:: (``path.py``::name, other_name (note), ...; up to the next path or ``;``) is defined
    in that file."""
    problems = []
    for row in _rows():
        section, code = row[0], row[3]
        for path in re.findall(r"`([\w./*-]+/[\w./*-]+)", code):
            if not glob.glob(str(ROOT / path)):
                problems.append(f"{section}: no file {path}")
        parts = re.split(r"`([\w./-]+\.py)`::", code)
        for i in range(1, len(parts), 2):
            path = ROOT / parts[i]
            text = parts[i + 1].split(";")[0]
            text = re.sub(r"`[^`]*`", "", text)
            while re.search(r"\([^()]*\)", text):
                text = re.sub(r"\([^()]*\)", "", text)
            defined = _defined_names(path) if path.exists() else set()
            for item in text.split(","):
                match = re.match(r"\s*([A-Za-z_][\w.]*)", item)
                if match is None:
                    continue
                name = match.group(1).split(".")[-1]
                if name not in defined:
                    problems.append(f"{section}: {parts[i]} defines no {name}")
    assert not problems, "\n".join(problems)


def test_reading_labels_are_defined_once():
    labels = _defined_labels()
    assert len(labels) == len(set(labels)), sorted({x for x in labels if labels.count(x) > 1})
    assert len(labels) > 100  # the pattern found the readings


@pytest.mark.parametrize("where", ["coverage", "package"])
def test_cited_reading_labels_are_defined(where):
    defined = set(_defined_labels())
    if where == "coverage":
        texts = {COVERAGE.name: COVERAGE.read_text(encoding="utf-8")}
    else:
        texts = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in (ROOT / "soe_sim").rglob("*.py")}
    undefined = []
    for name, text in texts.items():
        # flake8 codes in noqa comments (E402, E731...) are not readings
        text = re.sub(r"noqa:[ \w,-]+", "", text)
        undefined += [f"{name}: {label}" for label in sorted(set(LABEL.findall(text)) - defined)]
    assert not undefined, "\n".join(undefined)


def test_coverage_lists_every_reading_family_with_its_range():
    """The coverage page's list (``- G1–G19: round loop``) gives each family's first and last label."""
    numbers: dict[str, list[int]] = {}
    for label in _defined_labels():
        family, number = re.match(r"([A-Z-]+?)(\d+)$", label).groups()
        numbers.setdefault(family, []).append(int(number))
    listed = dict(
        (m.group(1), int(m.group(3)))
        for m in re.finditer(r"^- ([A-Z-]+?)(\d+)–\1(\d+)\b", COVERAGE.read_text(encoding="utf-8"), re.M)
    )
    assert listed == {family: max(values) for family, values in numbers.items()}
