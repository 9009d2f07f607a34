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
    """Return ``"did you mean `x`?"`` for the closest choice, or None."""
    close = difflib.get_close_matches(str(value), list(choices), n=1, cutoff=0.6)
    return f"did you mean `{close[0]}`?" if close else None
