import contextlib
import os
import sys

import matplotlib
import pytest

matplotlib.use("Agg")
os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(scope="session")
def rules():
    from soe_sim.rules import load_rules

    return load_rules()


# The cold compile of the game loop (numba, several minutes) is most of a fresh clone's test run. Test
# files that play games carry ``pytestmark = pytest.mark.game_loop``. Under pytest-xdist (``make test``,
# with ``--no-loadscope-reorder`` so that files go out in the order below) the first such file goes to
# one worker, which compiles the loop into numba's on-disk cache, while the other workers run the files
# that never play a game; a worker reaching a game-loop file before the compile is done waits for it
# (``game_loop_compiled``) and then loads the cache in seconds instead of compiling the loop a second
# time beside the first.


@pytest.fixture(scope="session")
def game_loop_compiled(tmp_path_factory):
    """The batch game kernel compiled (or loaded from numba's cache) in this process, one process at a
    time: the first to take the lock compiles and writes the cache, the others then load it."""
    from filelock import FileLock

    from soe_sim.engine.game import play_games

    # The parent of a worker's base temporary directory is the session's own, shared by its workers. One
    # process has nothing to wait for (and shares no lock with another checkout's test run).
    lock = (FileLock(str(tmp_path_factory.getbasetemp().parent / "soe_sim-game-loop.lock"))
            if "PYTEST_XDIST_WORKER" in os.environ else contextlib.nullcontext())
    with lock:
        play_games("tutorial", 1, seed=0, threads=1)


def pytest_collection_modifyitems(session, config, items):
    """Game-loop files get ``game_loop_compiled`` before their other fixtures, except those marked
    ``game_loop(own_wait=True)``, which request it themselves after work that needs no compiled game
    (test_pure_python.py's interpreted games). The first game-loop file runs first, then every file that
    plays no game, then the ``own_wait`` files, then the other game-loop files; the order of the files
    is otherwise kept."""

    def kind(item):
        mark = item.get_closest_marker("game_loop")
        if mark is None:
            return None
        return "own_wait" if mark.kwargs.get("own_wait") else "game_loop"

    first_file = None
    for item in items:
        if kind(item) == "game_loop":
            if "game_loop_compiled" not in item.fixturenames:
                item.fixturenames.insert(0, "game_loop_compiled")
            if first_file is None:
                first_file = item.path

    def rank(item):
        if item.path == first_file:
            return 0
        return {None: 1, "own_wait": 2, "game_loop": 3}[kind(item)]

    items.sort(key=rank)  # stable: the order within each rank is the collection order


def _game_loop_loaded():
    nb = sys.modules.get("soe_sim.engine.game.nb")
    return nb is not None and bool(nb.play_games_serial_nb.signatures)


_LOADED_BEFORE = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item):
    item.stash[_LOADED_BEFORE] = _game_loop_loaded()  # before the test's fixtures, module ones too
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """A test of an unmarked file that brings the game loop into its process (its fixtures included)
    errors: its file needs ``pytest.mark.game_loop``, else a worker may compile the loop beside the one
    already compiling it. Seen only when it is the first test of its process to play (the loop stays
    loaded after)."""
    result = yield  # the test's own teardown first
    if (item.get_closest_marker("game_loop") is None and not item.stash.get(_LOADED_BEFORE, True)
            and _game_loop_loaded()):
        pytest.fail(f"{item.nodeid} plays games: give {item.path.name} `pytestmark = pytest.mark.game_loop` "
                    "(tests/conftest.py)", pytrace=False)
    return result
