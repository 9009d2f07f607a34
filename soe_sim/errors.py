"""User-facing errors.

Every problem with user input (a CLI spec, a data file, a scenario) is raised as a
:class:`SoeInputError` carrying the file, the field, the bad value and, where one exists, a
suggestion. The CLI prints ``str(error)`` on one line per problem and exits with code 2; no
traceback reaches the user.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class Problem:
    """One validation problem: where, what, and a hint."""

    file: str
    entry: str
    field: str
    value: object
    message: str
    suggestion: str | None = None

    def __str__(self) -> str:
        where = self.file
        if self.entry:
            where += f": {self.entry}"
        if self.field:
            where += f": field '{self.field}'"
        # a missing value has nothing to show ("(got None)" would read as a Python repr)
        text = f"{where}: {self.message}" + ("" if self.value is None else f" (got {self.value!r})")
        if self.suggestion:
            text += f"; {self.suggestion}"
        return text


class SoeInputError(ValueError):
    """Bad user input; holds one or more :class:`Problem` (all reported together)."""

    def __init__(self, problems: Problem | str | Iterable[Problem]):
        if isinstance(problems, (Problem, str)):
            problems = [problems]
        self.problems: list = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def did_you_mean(value: str, choices: Iterable[str]) -> str | None:
    """Return ``"did you mean `x`?"`` for the closest choice, or None.

    A near typo (difflib ratio >= 0.8: ``chunk`` for ``chunks``) gets that choice; a value that is part of
    one to three longer names (``kiev`` for ``kiev-offensive``, ``offensive`` for both offensives; at
    least three characters, any case), which difflib finds too unlike or would pick one of, gets those
    names; any other value the closest choice by difflib (ratio >= 0.6), if there is one."""
    choices = [str(c) for c in choices]
    close = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.8)
    if close:
        return f"did you mean `{close[0]}`?"
    needle = str(value).strip().lower()
    holding = [c for c in choices if needle in c.lower()] if len(needle) >= 3 else []
    if 1 <= len(holding) <= 3:
        return "did you mean " + " or ".join(f"`{c}`" for c in holding) + "?"
    close = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.6)
    return f"did you mean `{close[0]}`?" if close else None


def check_count(value, where: str, low: int = 0, high: int | None = None, field: str = ""):
    """``value`` as an ``int`` when it is an integer (not a bool, not a float or a string that would be
    truncated or parsed in silence) within ``low..high``, else a :class:`SoeInputError` naming ``where``
    (an argument or an option) and the value."""
    import numbers

    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise SoeInputError(Problem(where, "", field, value if isinstance(value, (str, float)) else repr(value),
                                    f"expected an integer ≥ {low}, not {type(value).__name__}"))
    if value < low or (high is not None and value > high):
        rng = f"≥ {low}" if high is None else f"{low}..{high}"
        raise SoeInputError(Problem(where, "", field, int(value), f"must be {rng}"))
    return int(value)
