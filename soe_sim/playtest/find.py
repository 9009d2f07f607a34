"""``--find``: pick a game matching a condition from a simulated batch.

The condition language (parsed here, never ``eval``-ed; case does not matter)::

    condition := term { "or" term }
    term      := factor { "and" factor }
    factor    := "not" factor | "(" condition ")" | test
    test      := SIDE "wins"                    polish wins · soviet wins (also "win", "won")
               | "draw" | "finished" | "aborted" | "immediate victory"
               | CITY "falls"                   the city's controller at the end is not its controller
                                                at the start (also "fell", "captured", "is captured")
               | CITY "held by" SIDE            the controller at the end (SIDE may be "nobody")
               | SIDE "holds" CITY              the same
               | [SIDE] COLUMN OP NUMBER        OP: >= <= > < = == !=; COLUMN: a numeric column of
                                                soe_sim.simulate (vp, rounds, battles, …); "SIDE vp"
                                                is the VP lead of that side (polish vp = vp, soviet
                                                vp = −vp), "SIDE sp_lost" = the column sp_lost_SIDE

    SIDE := polish | soviet          CITY := an area id of the map (warsaw, kiev, minsk, lviv, …)

Examples: ``soviet wins and warsaw falls``, ``polish wins``, ``vp >= 5``, ``rounds <= 3``,
``kiev held by polish``, ``battles >= 3 and not draw``, ``soviet battles_won >= 2``.

The batch is :func:`soe_sim.simulate` (game ``i`` of batch seed ``s`` is
``play_game(scenario, seed=(s, i))``), and the first matching game is picked.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from soe_sim.errors import Problem, SoeInputError, did_you_mean

__all__ = ["Condition", "parse_condition", "find_game", "FindResult", "NUMERIC_COLUMNS", "CONDITION_HELP"]

SIDES = ("polish", "soviet")
OPS = (">=", "<=", "!=", "==", "=", ">", "<")
_TOKEN = re.compile(r"\s*(>=|<=|!=|==|=|>|<|\(|\)|-?\d+(?:\.\d+)?|[A-Za-z_][A-Za-z0-9_\-]*)")
_NON_NUMERIC = {"scenario", "polish", "soviet", "polish_params", "soviet_params", "seed", "game", "outcome",
                "winner", "abort"}
_KEYWORDS = {"and", "or", "not", "wins", "win", "won", "draw", "finished", "aborted", "immediate", "victory",
             "falls", "fell", "captured", "is", "held", "by", "holds", "hold", "nobody", "vp"}

CONDITION_HELP = ("understood: '<side> wins', 'draw', 'finished', 'aborted', 'immediate victory', "
                  "'<city> falls', '<city> held by <side>', '<side> holds <city>', "
                  "'[<side>] <column> <op> <number>' (op >= <= > < = !=; a numeric column of soe-sim simulate such "
                  "as vp, rounds, battles), joined with and, or, not and parentheses (soe_sim.playtest.find)")


def _numeric_columns() -> list[str]:
    from soe_sim.sim import GAME_COLUMNS

    return [c for c in GAME_COLUMNS if c not in _NON_NUMERIC]


NUMERIC_COLUMNS = tuple(_numeric_columns())


def _err(value, message, suggestion=None):
    return SoeInputError(Problem("--find", "", "", value, message, suggestion))


def _help(hint: str | None = None, columns: bool = False) -> str:
    """The suggestion of an error, kept short so that it stays in sight: a ``hint`` ("did you mean …")
    with a pointer to the language, else the language in short; the ~70 column names only with
    ``columns`` (the word is a column name not understood)."""
    if columns:
        return (hint + "; " if hint else "") + "columns: " + ", ".join(NUMERIC_COLUMNS)
    return f"{hint} (the language: soe_sim.playtest.find)" if hint else CONDITION_HELP


@dataclass(frozen=True)
class Condition:
    """A parsed ``--find`` condition: ``tree`` (nested tuples) and the ``cities`` it names."""

    text: str
    tree: tuple
    cities: tuple

    def evaluate(self, games: pd.DataFrame, start_control: dict | None = None) -> pd.Series:
        """Boolean Series over the rows of a :func:`soe_sim.simulate` frame (``held_<city>`` columns for
        every city named; ``start_control`` = ``{city: side slug or ''}`` for ``falls``)."""
        return pd.Series(_eval(self.tree, games, start_control or {}), index=games.index, dtype=bool)


class _Parser:
    def __init__(self, text: str, areas: set[str]):
        self.text = text
        self.areas = areas
        self.toks = self._tokenize(text)
        self.i = 0
        self.cities: list[str] = []

    def _tokenize(self, text: str) -> list[str]:
        toks, pos = [], 0
        text = str(text)
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if not m:
                raise _err(text[pos:].strip(), "cannot read the condition here", _help())
            tok = m.group(1)
            toks.append(tok.lower() if not re.fullmatch(r"-?\d+(?:\.\d+)?", tok) else tok)
            pos = m.end()
        if not toks:
            raise _err(text, "the condition is empty", "e.g. 'soviet wins and warsaw falls'; " + _help())
        return toks

    def peek(self, k: int = 0):
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def take(self, *expected):
        t = self.peek()
        if expected and t not in expected:
            got = "the end of the condition" if t is None else t
            raise _err(got, f"expected {' or '.join(repr(e) for e in expected)} in {self.text!r}", _help())
        self.i += 1
        return t

    def parse(self) -> tuple:
        tree = self.condition()
        if self.peek() is not None:
            raise _err(self.peek(), f"unexpected word in {self.text!r}", _help())
        return tree

    def condition(self):
        node = self.term()
        while self.peek() == "or":
            self.take()
            node = ("or", node, self.term())
        return node

    def term(self):
        node = self.factor()
        while self.peek() == "and":
            self.take()
            node = ("and", node, self.factor())
        return node

    def factor(self):
        t = self.peek()
        if t == "not":
            self.take()
            return ("not", self.factor())
        if t == "(":
            self.take()
            node = self.condition()
            self.take(")")
            return node
        return self.test()

    def _side(self, t):
        if t in SIDES:
            return t
        if t == "nobody":
            return ""
        raise _err(t, "expected a side", "sides: polish, soviet (or nobody after 'held by')")

    def _city(self, t):
        self.cities.append(t)
        return t

    def _number(self):
        t = self.take()
        try:
            return float(t)
        except (TypeError, ValueError):
            raise _err(t if t is not None else "the end", "expected a number after the comparison", _help()) from None

    def test(self):
        t = self.peek()
        if t is None:
            raise _err("the end of the condition", f"a test is missing in {self.text!r}", _help())
        nxt = self.peek(1)
        if t in SIDES and nxt in ("wins", "win", "won"):
            self.i += 2
            return ("winner", t)
        if t in SIDES and nxt in ("holds", "hold"):
            self.i += 2
            city = self.take()
            return ("held", self._check_city(city), t)
        if t == "draw":
            self.take()
            return ("draw",)
        if t in ("finished", "aborted"):
            self.take()
            return ("outcome", t)
        if t == "immediate":
            self.take()
            if self.peek() == "victory":
                self.take()
            return ("outcome", "immediate_victory")
        if t in SIDES and nxt is not None and (nxt == "vp" or f"{nxt}_{t}" in NUMERIC_COLUMNS):
            self.i += 2
            col = "vp" if nxt == "vp" else f"{nxt}_{t}"
            sign = -1.0 if (nxt == "vp" and t == "soviet") else 1.0
            return self._compare(col, sign)
        if t in NUMERIC_COLUMNS:
            self.take()
            return self._compare(t, 1.0)
        if t in self.areas:
            self.take()
            city = self._city(t)
            w = self.peek()
            if w in ("falls", "fell", "captured"):
                self.take()
                return ("falls", city)
            if w == "is" and self.peek(1) == "captured":
                self.i += 2
                return ("falls", city)
            if w == "held":
                self.take()
                self.take("by")
                return ("held", city, self._side(self.take()))
            raise _err(w if w is not None else "the end of the condition",
                       f"expected 'falls' or 'held by <side>' after the city {city!r}", _help())
        if t in SIDES:  # "<side> wins", "<side> holds <city>", "<side> <column> <op> <number>"
            after = ["wins", "holds", "vp"] + [c[: -len(t) - 1] for c in NUMERIC_COLUMNS if c.endswith("_" + t)]
            hint = did_you_mean(str(nxt), after) if nxt is not None else None
            raise _err(nxt if nxt is not None else "the end of the condition",
                       f"expected 'wins', 'holds <city>' or a number column after {t!r}",
                       hint or f"after a side: {', '.join(after)}")
        if t in _KEYWORDS:
            raise _err(t, f"misplaced word in {self.text!r}", _help())
        if nxt in OPS:  # "<word> <op> ...": a column name not understood
            raise _err(t, "unknown column in the condition", _help(did_you_mean(t, list(NUMERIC_COLUMNS)), True))
        known = list(NUMERIC_COLUMNS) + sorted(self.areas) + sorted(_KEYWORDS) + list(SIDES)
        hint = did_you_mean(t, known)
        raise _err(t, "unknown word in the condition", _help(hint))

    def _check_city(self, city):
        if city not in self.areas:
            raise _err(city if city is not None else "the end", "expected a city (an area id of the map)",
                       did_you_mean(str(city), sorted(self.areas)) or "e.g. warsaw, kiev")
        return self._city(city)

    def _compare(self, col, sign):
        op = self.peek()
        if op not in OPS:
            raise _err(op if op is not None else "the end of the condition",
                       f"expected a comparison (>=, <=, >, <, =, !=) after {col!r}", _help())
        self.take()
        return ("cmp", col, sign, "==" if op == "=" else op, self._number())


def parse_condition(text: str, areas) -> Condition:
    """Parse a ``--find`` condition (module docstring); ``areas`` = the map's area ids.

    Raises
    ------
    SoeInputError
        Naming the word not understood, with a "did you mean" or else what is understood (the numeric
        column names when the word stands where a column goes).
    """
    p = _Parser(text, {str(a).lower() for a in areas})
    tree = p.parse()
    return Condition(str(text), tree, tuple(dict.fromkeys(p.cities)))


def _eval(node, df: pd.DataFrame, start: dict) -> np.ndarray:
    op = node[0]
    if op == "and":
        return _eval(node[1], df, start) & _eval(node[2], df, start)
    if op == "or":
        return _eval(node[1], df, start) | _eval(node[2], df, start)
    if op == "not":
        return ~_eval(node[1], df, start)
    if op == "winner":
        return (df["winner"] == node[1]).to_numpy()
    if op == "draw":
        return ((df["winner"] == "") & (df["outcome"] != "aborted")).to_numpy()
    if op == "outcome":
        return (df["outcome"] == node[1]).to_numpy()
    if op == "held":
        return (df[f"held_{node[1]}"].fillna("") == node[2]).to_numpy()
    if op == "falls":
        return (df[f"held_{node[1]}"].fillna("") != start.get(node[1], "")).to_numpy()
    if op == "cmp":
        _, col, sign, cmp, value = node
        x = sign * df[col].to_numpy(dtype=float)
        return {">=": x >= value, "<=": x <= value, ">": x > value, "<": x < value, "==": x == value,
                "!=": x != value}[cmp]
    raise ValueError(f"bad condition node {node!r}")  # pragma: no cover - the parser builds only these


@dataclass
class FindResult:
    """The search: ``game`` = index of the first matching game (None: no match), ``matches`` = how
    many games matched, ``games`` = the simulated frame, ``mask`` = which rows matched."""

    condition: Condition
    seed: int
    game: int | None
    matches: int
    games: pd.DataFrame
    mask: pd.Series


def start_control(setup, cities) -> dict:
    """``{city: side slug or ''}``: each city's controller at the scenario's start."""
    from soe_sim.data.enums import Side

    idx = setup.game_map.area_index
    out = {}
    for c in cities:
        v = int(setup.state0.control[idx[c]])
        out[c] = Side(v).slug if v >= 0 else ""
    return out


def find_game(scenario, condition, *, seed: int, games: int = 500, polish="random", soviet="random",
              threads: int | None = None, progress: bool = False) -> FindResult:
    """Simulate ``games`` games of ``scenario`` (batch seed ``seed``) and pick the first one for which
    ``condition`` (a string or a :class:`Condition`) holds."""
    from soe_sim.sim import _setup_of, key_city_ids, simulate

    setup, _sid = _setup_of(scenario)
    if not isinstance(condition, Condition):
        condition = parse_condition(condition, setup.game_map.area_index.keys())
    keys = list(dict.fromkeys(key_city_ids(setup) + list(condition.cities)))
    df = simulate(setup, polish, soviet, games=int(games), seed=int(seed), threads=threads, key_cities=keys,
                  progress=progress)
    mask = condition.evaluate(df, start_control(setup, condition.cities))
    hits = np.flatnonzero(mask.to_numpy())
    game = int(df["game"].iloc[hits[0]]) if len(hits) else None
    return FindResult(condition, int(seed), game, int(len(hits)), df, mask)
