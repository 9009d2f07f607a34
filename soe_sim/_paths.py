"""Where the built-in data lives.

The project ships its data as plain TOML/CSV under ``data/`` at the repository root. Users can point
``SOE_SIM_DATA`` at their own whole copy of it (:func:`data_dir`).
"""
from __future__ import annotations

import os
from pathlib import Path

_REPO_DATA = Path(__file__).resolve().parent.parent / "data"


#: The subdirectories a data directory must have: ``$SOE_SIM_DATA`` replaces the whole of ``data/``, and
#: nothing falls back to the built-in data for a missing one.
DATA_SUBDIRS = ("map", "blocks", "cards", "rules", "scenarios")


def data_dir() -> Path:
    """Root of the data directory (``$SOE_SIM_DATA`` or the repository's ``data/``).

    ``$SOE_SIM_DATA`` replaces all of the data: naming no directory, or one without every one of
    :data:`DATA_SUBDIRS` (``map/ blocks/ cards/ rules/ scenarios/``; ``variants/`` and ``systems/`` are
    optional), is a :class:`~soe_sim.errors.SoeInputError` naming the variable, the directory and the
    missing subdirectories (not "unknown ruleset 'soe'" or "no scenarios" later on)."""
    env = os.environ.get("SOE_SIM_DATA")
    if not env:
        return _REPO_DATA
    path = Path(env)
    missing = [f"{d}/" for d in DATA_SUBDIRS if not (path / d).is_dir()]
    if not path.is_dir() or missing:
        from soe_sim.errors import Problem, SoeInputError

        what = "no such directory" if not path.exists() else "not a directory" if not path.is_dir() else \
            f"not a data directory: it lacks {', '.join(missing)}"
        raise SoeInputError(Problem("SOE_SIM_DATA", "", "", env, what,
                                    "point it at a whole copy of the data/ directory (cp -r data mydata), "
                                    "or unset it for the built-in data"))
    return path


def file_stamps(files) -> tuple:
    """``(resolved path, mtime_ns, size)`` of each existing file of ``files``, sorted: a cache key
    part that changes when one of them is edited (the set-up and rules caches)."""
    out = []
    for p in sorted({Path(f).resolve() for f in files}):
        if p.is_file():
            st = p.stat()
            out.append((str(p), st.st_mtime_ns, st.st_size))
    return tuple(out)


def data_files_stamp(*subdirs: str) -> tuple:
    """``(root, stamps)`` of the data directory (:func:`data_dir`): its path and the :func:`file_stamps` of
    every file in its ``subdirs`` (``"cards"``, ``"rules"``): the key of a cache of what those files give,
    so an edited or replaced file is read again at the next call."""
    root = data_dir()
    files = [f for sub in subdirs if (root / sub).is_dir() for f in (root / sub).iterdir()]
    return str(root), file_stamps(files)


def check_creatable(directory: str, option: str, text: str) -> None:
    """``directory`` exists or can be created (what an output option needs before the work starts): its
    nearest existing ancestor is a writable directory. Else a :class:`~soe_sim.errors.SoeInputError`
    naming ``option`` and its value ``text``."""
    from soe_sim.errors import Problem, SoeInputError

    parent = os.path.abspath(directory)
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise SoeInputError(Problem(option, "", "", text, f"{parent} is a file, not a directory"))
    if not os.access(parent, os.W_OK | os.X_OK):
        raise SoeInputError(Problem(option, "", "", text, f"cannot write into {parent} (permission denied)"))


def os_error_text(err: BaseException) -> str:
    """The reason of a failed write in the words of the OS ("No such file or directory"), without the
    temporary file's name or the writer's own wording (pyarrow: "Failed to open local file '…'. Detail:
    [errno 2] …")."""
    import re

    m = re.search(r"\[errno (\d+)\]", str(err))  # pyarrow's OSError: its strerror is all of that text
    if m:
        return os.strerror(int(m.group(1)))
    if isinstance(err, OSError) and err.strerror:
        return err.strerror
    return str(err)
