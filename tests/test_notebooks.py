"""Every notebook in notebooks/ runs top to bottom with small sizes (SOE_SIM_SMALL=1, read through
analysis.notebook_size), and the committed notebooks follow the house rules: outputs stripped, a
seed in the first code cell, imports only from soe_sim / analysis (plus the standard tools)."""
from __future__ import annotations

import ast
import os
import queue
import time
from pathlib import Path

import pytest

from analysis import SMALL_ENV, is_small, notebook_size

pytestmark = pytest.mark.game_loop  # plays games: compiled once for the session (conftest.py)

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# Third-party modules a notebook may import besides soe_sim / analysis (display and plotting only).
ALLOWED_IMPORTS = {"soe_sim", "analysis", "numpy", "pandas", "matplotlib", "ipywidgets", "IPython",
                   "__future__", "os", "pathlib", "json", "math"}
EXECUTE_TIMEOUT = 900  # seconds per cell: a cold numba cache compiles the game loop


def _code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def _poll_in_slices(channel, step=0.5):
    """Make ``channel.get_msg(timeout=T)`` (a kernel client channel of nbclient's asyncio client) wait in polls of at
    most ``step`` seconds until ``T``.

    The asyncio poll of a ZMQ socket sometimes misses the wake-up of a message that has already arrived and returns it
    only when its timeout runs out (the behaviour reported as pyzmq issue 1558). nbclient waits for a cell's reply with
    the cell timeout, 900 s here, so a notebook test then sat idle for 15 minutes and passed (sessions 25 and 26: the
    kernel idle after the `ipywidgets` cell of 01_combat_odds, nbclient waiting). Measured with a 40 s cell timeout and
    both cores busy: 4 of 20 runs of that notebook stalled the full 40 s before, none of 25 with the polls sliced. A
    new poll looks at the socket's pending events first, so a missed wake-up now costs at most ``step``.
    """
    get_msg = channel.get_msg

    async def sliced(timeout=None, **kwargs):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = step if deadline is None else max(0.0, min(step, deadline - time.monotonic()))
            try:
                return await get_msg(timeout=wait, **kwargs)
            except queue.Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    channel.get_msg = sliced


def test_notebook_size_switch(monkeypatch):
    monkeypatch.delenv(SMALL_ENV, raising=False)
    assert not is_small()
    assert notebook_size(1000, 10) == 1000
    for on in ("1", "yes", "true"):
        monkeypatch.setenv(SMALL_ENV, on)
        assert is_small()
        assert notebook_size(1000, 10) == 10
    for off in ("0", "", "false", "off"):
        monkeypatch.setenv(SMALL_ENV, off)
        assert notebook_size(1000, 10) == 1000


def test_sliced_polls_return_a_waiting_message_at_once_and_still_time_out():
    import asyncio

    class Channel:  # a message is waiting, but a poll longer than 1 s misses its wake-up until the poll times out
        def __init__(self, message):
            self.message = message
            self.polls = []

        async def get_msg(self, timeout=None):
            self.polls.append(timeout)
            if self.message is None:
                await asyncio.sleep(timeout)
                raise queue.Empty
            if timeout is None or timeout > 1:
                await asyncio.sleep(30)
            return self.message

    waiting = Channel({"msg_type": "execute_reply"})
    _poll_in_slices(waiting, step=0.05)
    t = time.monotonic()
    assert asyncio.run(waiting.get_msg(timeout=900)) == {"msg_type": "execute_reply"}
    assert time.monotonic() - t < 5 and waiting.polls == [0.05]
    assert asyncio.run(waiting.get_msg()) == {"msg_type": "execute_reply"}  # no timeout: slices as well

    empty = Channel(None)
    _poll_in_slices(empty, step=0.05)
    t = time.monotonic()
    with pytest.raises(queue.Empty):
        asyncio.run(empty.get_msg(timeout=0.3))
    assert 0.3 <= time.monotonic() - t < 5 and len(empty.polls) >= 5


def test_there_are_notebooks():
    names = {p.name for p in NOTEBOOKS}
    assert {"01_combat_odds.ipynb", "02_scenario_balance.ipynb"} <= names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_house_rules(path):
    import nbformat

    nb = nbformat.read(path, as_version=4)
    cells = _code_cells(nb)
    assert cells, f"{path.name} has no code cell"
    for c in cells:
        assert not c.get("outputs"), f"{path.name}: outputs must be stripped before committing"
        assert c.get("execution_count") is None, f"{path.name}: execution counts must be stripped"
    assert "seed" in cells[0].source.lower(), f"{path.name}: the first code cell must set a seed"
    assert "notebook_size" in "\n".join(c.source for c in cells), f"{path.name}: sizes via analysis.notebook_size"
    for c in cells:
        src = "\n".join(line for line in c.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(src)):
            mods = []
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                mods = [node.module or ""]
            for m in mods:
                assert m.split(".")[0] in ALLOWED_IMPORTS, f"{path.name}: imports {m}; use soe_sim / analysis"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_executes(path, tmp_path, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv(SMALL_ENV, "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("NUMBA_NUM_THREADS", os.environ.get("NUMBA_NUM_THREADS", "1"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=EXECUTE_TIMEOUT, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})

    def slice_the_polls(**_):  # on_notebook_start: the kernel client exists, no cell has run
        _poll_in_slices(client.kc.shell_channel)
        _poll_in_slices(client.kc.iopub_channel)

    client.on_notebook_start = slice_the_polls
    client.execute()  # raises CellExecutionError naming the failing cell
    errors = [o for c in _code_cells(nb) for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
