"""Analysis scripts, the shared matplotlib style (soe.mplstyle) of soe_sim and the notebooks' helpers.

Notebooks (``notebooks/*.ipynb``) pick their problem sizes with :func:`notebook_size`, so that the
test suite (``tests/test_notebooks.py``) can execute every notebook top to bottom with small sizes
by setting the environment variable ``SOE_SIM_SMALL=1``::

    from analysis import notebook_size
    GAMES = notebook_size(2000, small=20)   # 2000 games normally, 20 under the test suite
"""
from __future__ import annotations

import os

__all__ = ["SMALL_ENV", "is_small", "notebook_size"]

#: Environment variable that switches notebooks to their small sizes (any value but "", "0",
#: "false", "no", "off").
SMALL_ENV = "SOE_SIM_SMALL"


def is_small() -> bool:
    """True when ``SOE_SIM_SMALL`` asks for small sizes (the test suite sets it)."""
    return os.environ.get(SMALL_ENV, "").strip().lower() not in ("", "0", "false", "no", "off")


def notebook_size(default, small):
    """``small`` when ``SOE_SIM_SMALL`` is set (see :func:`is_small`), else ``default``.

    Parameters
    ----------
    default : object
        The size used by a reader running the notebook (games, grid size, …).
    small : object
        The size used when the test suite executes the notebook.

    Examples
    --------
    >>> import os
    >>> os.environ.pop("SOE_SIM_SMALL", None) and None
    >>> notebook_size(1000, 10)
    1000
    >>> os.environ["SOE_SIM_SMALL"] = "1"
    >>> notebook_size(1000, 10)
    10
    >>> del os.environ["SOE_SIM_SMALL"]
    """
    return small if is_small() else default
