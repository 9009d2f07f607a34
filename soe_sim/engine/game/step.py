"""Step-by-step play: an OpenSpiel-like Python interface over the numba game loop.

:class:`StepGame` runs :func:`soe_sim.engine.game.play_game` in a background thread. The sides under
step control (policy spec ``"step"``) get a Python policy object whose ``choose`` hands the decision
to the foreground and blocks until :meth:`StepGame.apply` answers it; the other sides keep their
numba (or Python) policies. The numba loop is not restructured: a StepGame whose every decision is
answered with the choices of a policy plays the very game ``play_game`` plays with that policy
(same event log), e.g. :meth:`StepGame.random_rollout` = the ``random`` policy.

```python
from soe_sim.engine.game.step import StepGame

with StepGame("tutorial", 3) as g:           # Polish under step control, Soviet random
    while not g.is_terminal:
        print(g.decision, g.legal_options["description"].tolist())
        g.apply(0)
    print(g.result.winner, len(g.events))
```

Only decisions with at least two legal options reach the stepper (the loop takes the single option
of the others itself, as for every policy). docs/policies.md "Step-by-step play".
"""
from __future__ import annotations

import functools
import queue
import sys
import threading
import time
import weakref
from typing import NamedTuple

import numpy as np
import pandas as pd

__all__ = ["StepGame", "StepDecision", "StepView", "StepTimeoutError", "describe_options", "STEP"]

STEP = "step"  # the policy spec of a side under step control

DEFAULT_TIMEOUT = 600.0  # seconds the foreground waits for the next decision (covers a JIT cache load)
_POLL = 0.2  # seconds between the background thread's checks of the "closed" flag
_JOIN_TIMEOUT = 30.0


class StepTimeoutError(TimeoutError):
    """The background game did not reach its next decision (or its end) in time."""


class _GameClosed(BaseException):
    """Raised inside the background game's policy to stop it (BaseException: no policy code
    catching ``Exception`` swallows it)."""


class StepDecision(NamedTuple):
    """The pending decision: ``kind`` (a :class:`~soe_sim.engine.game.Decision`), ``name``
    (``"move"``), ``side`` (``"polish"`` / ``"soviet"``), ``side_index`` (0 / 1), ``round``,
    ``phase``, ``n_options`` and ``index`` (0-based count of step decisions so far)."""

    kind: object
    name: str
    side: str
    side_index: int
    round: int
    phase: int
    n_options: int
    index: int

    def __str__(self) -> str:
        return (f"#{self.index} round {self.round} {phase_label(self.phase)}: {self.side} {self.name} "
                f"({_count(self.n_options, 'option')})")


def phase_label(phase: int) -> str:
    """``"phase 3"`` for an operation phase, ``"reinforcement phase"`` for the Reinforcement Phase (SoE 8.0;
    the engine's phase number ``PHASE_REINFORCEMENT``)."""
    from soe_sim.engine.state import PHASE_REINFORCEMENT

    return "reinforcement phase" if int(phase) == PHASE_REINFORCEMENT else f"phase {int(phase)}"


def _count(k: int, noun: str) -> str:
    """``"1 order"``, ``"3 orders"``."""
    return f"{k} {noun}" if k == 1 else f"{k} {noun}s"


def _order_label(t: int) -> str:
    """``"Forced March To"`` for an order type code (SoE 7.2; the playtest report's spelling)."""
    from soe_sim.engine.orders import OrderType

    try:
        return OrderType(int(t)).name.replace("_", " ").title()
    except ValueError:
        return f"order {int(t)}"


class StepView(NamedTuple):
    """What the deciding side knows at the pending decision (a snapshot).

    ``blocks``: blocks on the map (own in full; enemy blocks with ``sp`` NaN until seen, unless the
    game is ``omniscient``); ``hand``: own hand (``card``, ``name``, ``orders``, ``combat_modifier``);
    ``vp`` signed (+ Polish). ``raw``: the engine's live
    :class:`~soe_sim.engine.game.StateView` (its ``state`` / ``cards`` / ``orders`` hold hidden
    information; its ``rng`` is the side's policy stream; valid until the next :meth:`StepGame.apply`).
    """

    side: str
    side_index: int
    round: int
    phase: int
    vp: int
    blocks: pd.DataFrame
    hand: pd.DataFrame
    raw: object

    def rand_below(self, n: int) -> int:
        """A uniform integer in ``[0, n)`` from the side's own policy stream (common random numbers)."""
        return self.raw.rand_below(n)


class _Pending(NamedTuple):
    decision: object  # Decision
    options: pd.DataFrame  # feature columns only (what a Python policy receives)
    view: object  # StateView
    log: object  # EventLog of the running game, or None


class _Channel:
    """The two queues between the foreground and the background game, and the stop flag."""

    def __init__(self):
        self.to_fg: queue.Queue = queue.Queue()
        self.to_bg: queue.Queue = queue.Queue()
        self.closed = threading.Event()


def _find_log():
    """The EventLog of the game running on this thread (read-only, for ``events``): the ``log`` of
    the ``soe_sim.engine.game._play_one`` frame (``play_game``'s body) on the stack."""
    from soe_sim.engine.game import EventLog

    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name == "_play_one":
            log = f.f_locals.get("log")
            if isinstance(log, EventLog):
                return log
        f = f.f_back
    return None


class _StepAgent:
    """The Python policy of a side under step control (runs on the background thread). Holds no
    reference to the StepGame, so an abandoned StepGame is collected and its finalizer stops the game."""

    def __init__(self, chan: _Channel, omniscient: bool):
        self.chan = chan
        self.omniscient = bool(omniscient)
        self._log = None

    def choose(self, decision, options, view) -> int:
        chan = self.chan
        if chan.closed.is_set():
            raise _GameClosed()
        if self._log is None:
            self._log = _find_log()
        chan.to_fg.put(("decision", _Pending(decision, options, view, self._log)))
        while True:
            try:
                kind, value = chan.to_bg.get(timeout=_POLL)
            except queue.Empty:
                if chan.closed.is_set():
                    raise _GameClosed() from None
                continue
            if kind == "stop":
                raise _GameClosed()
            return int(value)


def _run(chan: _Channel, scenario, seed, polish, soviet, kwargs):
    from soe_sim.engine.game import play_game

    try:
        res = play_game(scenario, seed, polish=polish, soviet=soviet, **kwargs)
    except _GameClosed:
        chan.to_fg.put(("closed", None))
    except BaseException as exc:  # noqa: BLE001 - handed to the foreground and re-raised there
        chan.to_fg.put(("error", exc))
    else:
        chan.to_fg.put(("done", res))


def _shutdown(chan: _Channel, thread: threading.Thread, timeout: float = _JOIN_TIMEOUT) -> bool:
    """Stop the background game (finalizer and :meth:`StepGame.close`); True when its thread ended."""
    chan.closed.set()
    chan.to_bg.put(("stop", None))
    if thread.is_alive() and thread is not threading.current_thread():
        thread.join(timeout)
    return not thread.is_alive()


# --------------------------------------------------------------------------------------------------
# Human-readable options


def _card_names(side: int) -> dict:
    """Card names of ``side``'s deck by id, read again when a deck or rules file changed (as ``_cards`` of
    the playtest story)."""
    from soe_sim._paths import data_files_stamp

    return _card_names_stamped(int(side), data_files_stamp("cards", "rules"))


@functools.lru_cache(maxsize=4)
def _card_names_stamped(side: int, key: tuple) -> dict:
    from soe_sim.data import Side
    from soe_sim.data.cards import load_cards

    try:
        df = load_cards(Side(int(side)))
        return {int(i): str(n) for i, n in zip(df["id"], df["name"])}
    except Exception:  # noqa: BLE001 - names are cosmetic
        return {}


def _ids(arr, i) -> str:
    i = int(i)
    return str(arr[i]) if 0 <= i < len(arr) else "-"


def describe_options(decision, options: pd.DataFrame, setup, side: int, state=None) -> list[str]:
    """One human-readable line per option row of a decision (from its feature columns; ``state``,
    when given, adds the origin area of a moving block)."""
    from soe_sim.engine.cards.nb import USE_CUBES, USE_EVENT, USE_ORDERS
    from soe_sim.engine.events.nb import TK_BLOCK
    from soe_sim.engine.game import Decision

    d = Decision(int(decision))
    blocks, areas = setup.block_ids, setup.area_ids
    names = _card_names(side)
    # card play and who goes first are asked once per front when the scenario has two (SoE 10.0, 10.1)
    two_fronts = int(getattr(getattr(setup, "cfg", None), "card_fronts", 1)) > 1

    def on_front(r):
        f = r.get("front")
        if not two_fronts or f is None:
            return ""
        from soe_sim.data.enums import Front

        return f" ({Front(int(f)).slug} front)"

    def card(c):
        c = int(c)
        nm = names.get(c)
        return f"card {c}" + (f" '{nm}'" if nm else "")

    out = []
    for _, r in options.iterrows():
        g = r.get
        if d == Decision.DISCARD:
            s = f"discard {card(g('card'))} ({_count(int(g('orders')), 'order')}, " \
                f"{_count(int(g('cubes')), 'cube')}, combat {int(g('combat_mod')):+d})"
        elif d == Decision.CARD_PLAY:
            c, use = int(g("card")), int(g("use"))
            if c <= 0 or use not in (USE_ORDERS, USE_CUBES, USE_EVENT):
                s = "pass (play no card)"
            elif use == USE_ORDERS:
                s = f"play {card(c)} for {_count(int(g('orders')), 'order')}"
            elif use == USE_EVENT:
                s = f"play {card(c)} for its event (value {float(g('event_value')):.1f})"
            else:
                s = f"play {card(c)} for {_count(int(g('cubes')), 'reinforcement cube')}"
            s += on_front(r)
        elif d in (Decision.FIRST_PLAYER, Decision.EXEC_FIRST):
            what = "place orders" if d == Decision.FIRST_PLAYER else "execute"
            s = f"{what} first" if int(g("opponent_first")) == 0 else f"let the opponent {what} first"
            s += on_front(r)
        elif d == Decision.ORDER:
            t, a = int(g("type")), int(g("area"))
            if t < 0 or a < 0:
                s = "pass (place no more orders)"
            else:
                s = f"{_order_label(t)} {_ids(areas, a)}"
        elif d in (Decision.MOVE, Decision.RAIL):
            if float(g("stop")) > 0:
                s = "stop"
            else:
                b, dest = int(g("block")), int(g("dest"))
                src = ""
                if state is not None and 0 <= b < len(state.block_area) and state.block_area[b] >= 0:
                    src = f" {_ids(areas, state.block_area[b])}"
                verb = "rail" if d == Decision.RAIL else "move"
                s = f"{verb} {_ids(blocks, b)}{src} -> {_ids(areas, dest)}"
                if float(g("detach")) > 0:
                    s += f" detaching {int(g('detach'))} SP"
                if float(g("attack")) > 0:
                    s += f" (attack, p_win {float(g('p_win')):.2f})"
        elif d == Decision.BATTLE_CARD:
            c = int(g("card"))
            s = "no battle card" if c <= 0 else f"play battle {card(c)}"
        elif d == Decision.COMBAT_CARD:
            c = int(g("card"))
            if c > 0:
                s = f"play {card(c)} from hand (value {float(g('value')):+.0f})"
            elif float(g("after_draw")) > 0:  # EatS IX.3 item 2: the card is already drawn
                dc = int(g("drawn_card"))
                s = (f"keep the drawn {card(dc)} (value {float(g('drawn')):+.0f})" if dc > 0
                     else "keep the draw (piles empty, value +0)")
            else:
                s = f"blind draw (expected {float(g('expected_blind')):+.2f})"
        elif d == Decision.REORGANIZE:
            s = f"reorganize {_ids(blocks, g('block'))} ({int(g('sp'))}/{int(g('max_sp'))} SP)"
        elif d == Decision.GARRISON:
            where = _ids(areas, g("area"))
            s = f"place a garrison in {where}" if float(g("place")) > 0 else f"no garrison in {where}"
        elif d == Decision.COMBINE:
            if float(g("pass")) > 0:
                s = "combine no blocks"
            else:
                s = (f"{_ids(blocks, g('absorber'))} absorbs {_ids(blocks, g('absorbed'))} in "
                     f"{_ids(areas, g('area'))} (+{int(g('gain'))} SP)")
        elif d == Decision.REINFORCE:
            k = int(g("kind"))
            if k == 0:
                s = "stop reinforcing"
            elif k == 1:
                s = f"strengthen {_ids(blocks, g('block'))} in {_ids(areas, g('area'))} " \
                    f"({int(g('sp'))}/{int(g('max_sp'))} SP)"
            else:
                s = f"build {_ids(blocks, g('block'))} in {_ids(areas, g('area'))}"
        elif d == Decision.LEADER:
            s = _describe_leader(g, blocks, areas)
        elif d == Decision.EVENT_TARGET:
            t, tk = int(g("target")), int(g("target_kind"))
            if t < 0:
                s = f"resolve {card(g('card'))}"
            elif tk == TK_BLOCK:
                sp = float(g("block_sp"))
                s = f"{card(g('card'))} on {_ids(blocks, t)} in {_ids(areas, g('area'))} " \
                    f"({sp:.0f} SP, loses {float(g('loss')):.0f}{', destroyed' if float(g('destroys')) > 0 else ''})"
            elif float(g("friendly")) > 0:
                s = f"{card(g('card'))}: place in {_ids(areas, t)}"
            else:
                s = f"{card(g('card'))} in {_ids(areas, t)} (enemy SP {float(g('enemy_sp')):.0f}, " \
                    f"loses {float(g('loss')):.0f})"
        elif d == Decision.REACTION:
            if float(g("pass")) > 0:
                s = "play no reaction card"
            else:
                s = f"react with {card(g('card'))} (event value {float(g('event_value')):.1f})"
        elif d == Decision.BATTLE_ORDER:
            who = "attack" if float(g("attacker")) > 0 else "defend"
            s = f"fight the battle in {_ids(areas, g('area'))} next ({who}, {_count(int(g('size')), 'block')}, " \
                f"p_win {float(g('p_win')):.2f})"
        elif d == Decision.ADVANCE:
            if float(g("stop")) > 0:
                s = "advance: the remaining blocks stay"
            else:
                s = f"send {_ids(blocks, g('block'))} back to {_ids(areas, g('back'))}"
        elif d == Decision.WITHDRAW_LOSS:
            s = f"{_ids(blocks, g('block'))} loses the withdrawal SP ({int(g('sp'))}/{int(g('max_sp'))} SP" \
                f"{', destroyed' if float(g('destroys')) > 0 else ''})"
        elif d == Decision.EXEC_ORDER:
            s = (f"execute {_order_label(int(g('type')))} {_ids(areas, g('area'))} next "
                 f"({_count(int(g('movers')), 'block')} can execute it)")
        else:
            s = f"option {len(out)}"
        out.append(s)
    seen: dict = {}
    for i, s in enumerate(out):  # the same move along another path (the via area is no feature)
        k = seen[s] = seen.get(s, 0) + 1
        if k > 1:
            out[i] = f"{s} [path {k}]"
    return out


def _describe_leader(g, blocks, areas) -> str:
    """One LEADER option (SoE 9.0) in words: who gives which order where."""
    from soe_sim.data.enums import LeaderAbility

    t = int(g("type"))
    if t < 0:
        return "give no leader order (pass)"
    who, where, ab = _ids(blocks, g("leader")), _ids(areas, g("area")), int(g("ability"))
    if ab == LeaderAbility.REORGANIZE:
        s = f"{who}: reorganize {_ids(blocks, g('block'))} in {where} at once (+SP; {int(g('target_vp'))} SP missing)"
    elif ab == LeaderAbility.RECON:
        s = f"{who}: recon {where} at once"
    else:
        s = f"{who}: {_order_label(t)} {where}"
        if ab == LeaderAbility.FORCED_MARCH_OUT_FULL_STRENGTH:
            s += " (blocks fight at full strength)"
        elif ab == LeaderAbility.FREE_DEFEND:
            s = f"{who}: free defend in {where}"
    c = int(g("countermands"))
    if c > 0:
        s += f", countermanding {c} order{'s' if c > 1 else ''}"
    return s


# --------------------------------------------------------------------------------------------------
# The stepper


class StepGame:
    """One game played decision by decision from Python (OpenSpiel-like).

    ``polish`` / ``soviet``: ``"step"`` for a side under step control, else any
    :func:`~soe_sim.engine.game.play_game` policy spec (name, ``(name, params)``, Policy, Python
    object). At least one side must be ``"step"``. ``omniscient``: the step sides' views show the
    true SP of every enemy block. ``timeout``: seconds to wait for the background game to reach its
    next decision (:class:`StepTimeoutError` otherwise; the game is then closed). Other keyword
    arguments go to ``play_game`` (``max_steps``, ``check_invariants``, ``log_capacity`` …).

    The constructor returns once the game waits for its first step decision (or has ended).
    """

    def __init__(self, scenario, seed=None, polish=STEP, soviet="random", *, omniscient: bool = False,
                 timeout: float | None = DEFAULT_TIMEOUT, **kwargs):
        from soe_sim.engine.game import game_setup, resolve_policy
        from soe_sim.errors import Problem, SoeInputError

        self.setup = game_setup(scenario)
        self.seed = seed
        self.timeout = timeout
        specs = []
        for name, spec in (("polish", polish), ("soviet", soviet)):
            if isinstance(spec, str) and spec.strip().lower() == STEP:
                specs.append(None)
            else:
                specs.append(resolve_policy(spec))  # validates names / parameters here, in the foreground
        if all(s is not None for s in specs):
            raise SoeInputError(Problem("StepGame", "", "polish/soviet", (polish, soviet),
                                        "no side under step control", 'give "step" as the policy of a side'))
        self.step_sides = tuple(i for i, s in enumerate(specs) if s is None)
        self._chan = _Channel()
        pols = [s if s is not None else _StepAgent(self._chan, omniscient) for s in specs]
        self._thread = threading.Thread(
            target=_run, args=(self._chan, self.setup, seed, pols[0], pols[1], dict(kwargs)),
            name=f"soe-step-{self.setup.scenario.id}", daemon=True)
        self._pending: _Pending | None = None
        self._result = None
        self._closed = False
        self._n_steps = 0
        self._history: list[int] = []
        self._log = None
        self._options_cache = None
        self._finalizer = weakref.finalize(self, _shutdown, self._chan, self._thread)
        self._thread.start()
        self._wait()

    # -- plumbing ----------------------------------------------------------------------------------

    def _wait(self):
        """Wait for the background game's next message: a decision, the result or an error."""
        t0 = time.monotonic()
        while True:
            left = None if self.timeout is None else self.timeout - (time.monotonic() - t0)
            if left is not None and left <= 0:
                try:
                    self.close(timeout=1.0)
                except StepTimeoutError:
                    pass  # the thread stops at its next decision (the closed flag is set)
                raise StepTimeoutError(
                    f"StepGame({self.setup.scenario.id!r}, seed={self.seed!r}): the background game did not reach "
                    f"its next decision within {self.timeout:g} s (after {self._n_steps} step decisions); "
                    "the game was closed. Raise `timeout` if the JIT cache is being rebuilt.")
            try:
                kind, value = self._chan.to_fg.get(timeout=min(_POLL * 5, left) if left is not None else _POLL * 5)
            except queue.Empty:
                if not self._thread.is_alive() and self._chan.to_fg.empty():
                    self._closed = True
                    raise RuntimeError("StepGame: the background game thread ended without a result")
                continue
            break
        self._options_cache = None
        if kind == "decision":
            self._pending = value
            if value.log is not None:
                self._log = value.log
        elif kind == "done":
            self._pending = None
            self._result = value
            self._thread.join(_JOIN_TIMEOUT)
        elif kind == "error":
            self._pending = None
            self._closed = True
            self._thread.join(_JOIN_TIMEOUT)
            raise value
        else:  # "closed"
            self._pending = None
            self._closed = True

    def _need_pending(self, what: str) -> _Pending:
        from soe_sim.errors import Problem, SoeInputError

        if self._pending is None:
            state = "finished" if self._result is not None else "closed"
            raise SoeInputError(Problem("StepGame", "", what, None, f"the game is {state}: no pending decision"))
        return self._pending

    # -- the OpenSpiel-like interface ----------------------------------------------------------------

    @property
    def is_terminal(self) -> bool:
        """True once the game has finished (or was closed): no more decisions."""
        return self._pending is None

    @property
    def is_closed(self) -> bool:
        return self._closed

    @property
    def result(self):
        """The :class:`~soe_sim.engine.game.GameResult` once the game has finished, else None."""
        return self._result

    @property
    def decision(self) -> StepDecision | None:
        """The pending decision (None when terminal)."""
        p = self._pending
        if p is None:
            return None
        from soe_sim.data import Side

        v = p.view
        return StepDecision(p.decision, p.decision.name.lower(), Side(v.side).slug, v.side, v.round, v.phase,
                            len(p.options), self._n_steps)

    @property
    def current_player(self) -> int:
        """Side index (0 Polish, 1 Soviet) of the pending decision; -1 when terminal."""
        return -1 if self._pending is None else int(self._pending.view.side)

    @property
    def features(self) -> pd.DataFrame:
        """The pending decision's options with their feature columns only (what a Python policy's
        ``choose`` receives)."""
        return self._need_pending("features").options.copy()

    @property
    def legal_options(self) -> pd.DataFrame:
        """One row per legal option (row ``i`` = ``apply(i)``): the feature columns of the kind
        (docs/policies.md "Features") and ``description``."""
        p = self._need_pending("legal_options")
        if self._options_cache is None:
            df = p.options.copy()
            df["description"] = describe_options(p.decision, p.options, self.setup, p.view.side, p.view.state)
            df.index.name = "option"
            self._options_cache = df
        return self._options_cache.copy()

    @property
    def legal_actions(self) -> list[int]:
        """``range(n_options)`` as a list (OpenSpiel spelling)."""
        return list(range(len(self._need_pending("legal_actions").options)))

    @property
    def state_view(self) -> StepView:
        """What the deciding side knows (:class:`StepView`)."""
        from soe_sim.data import Side
        from soe_sim.engine.cards.nb import HAND

        p = self._need_pending("state_view")
        v = p.view
        names = _card_names(v.side)
        ids = np.flatnonzero(v.cards.location[v.side] == HAND) + 1
        hand = pd.DataFrame({
            "card": ids.astype(int),
            "name": [names.get(int(c), "") for c in ids],
            "orders": v.cards.orders[v.side, ids - 1].astype(int),
            "combat_modifier": v.cards.combat_modifier[v.side, ids - 1].astype(int),
        })
        return StepView(Side(v.side).slug, v.side, v.round, v.phase, v.vp, v.blocks(), hand, v)

    @property
    def history(self) -> list[int]:
        """The options applied so far, in order."""
        return list(self._history)

    @property
    def events(self) -> pd.DataFrame | None:
        """The event log so far (the full log once finished); None when not obtainable (no step
        decision reached yet)."""
        from soe_sim.engine.game import events_frame

        if self._result is not None:
            return self._result.events
        if self._log is None:
            return None
        if not self._closed and self._pending is None:
            return None  # the background game is running: the log is not stable
        return events_frame(type(self._log)(self._log.records.copy(), self._log.ctr.copy()), self.setup)

    def apply(self, index) -> None:
        """Answer the pending decision with option ``index`` (``0 <= index < len(legal_options)``) and
        run the game to the next step decision (or its end)."""
        from soe_sim.errors import Problem, SoeInputError

        p = self._need_pending("apply")
        n = len(p.options)
        if isinstance(index, (bool, np.bool_)) or not isinstance(index, (int, np.integer)):
            raise SoeInputError(Problem("StepGame", str(self.decision), "index", index,
                                        "an option index must be an integer", f"choose 0..{n - 1}"))
        k = int(index)
        if not 0 <= k < n:
            raise SoeInputError(Problem("StepGame", str(self.decision), "index", k, "no such option",
                                        f"choose 0..{n - 1}"))
        self._pending = None
        self._history.append(k)
        self._n_steps += 1
        self._chan.to_bg.put(("apply", k))
        self._wait()

    def play(self, policy, max_decisions: int | None = None):
        """Answer the pending and further decisions with a Python policy (``choose(decision,
        options, view) -> int`` on the feature columns, e.g. :class:`~soe_sim.engine.game.JitPolicy`)
        or a callable ``f(step_game) -> int``; stop at the end or after ``max_decisions``. Returns
        :attr:`result` (None when stopped early)."""
        k = 0
        while not self.is_terminal and (max_decisions is None or k < max_decisions):
            p = self._pending
            if hasattr(policy, "choose"):
                i = policy.choose(p.decision, p.options.copy(), p.view)
            else:
                i = policy(self)
            self.apply(i)  # apply checks the answer (an integer index; no float or string taken as one)
            k += 1
        return self._result

    def random_rollout(self):
        """Play the rest of the game with uniform choices drawn from each step side's own policy
        stream: the ``random`` policy's choices, so the game equals ``play_game`` with ``random`` for
        those sides from here on. Returns the :class:`~soe_sim.engine.game.GameResult`."""
        return self.play(lambda g: g._pending.view.rand_below(len(g._pending.options)))

    def close(self, timeout: float = _JOIN_TIMEOUT) -> None:
        """Stop the background game (the pending decision raises inside the loop and unwinds it);
        idempotent. A finished game is left as it is."""
        if self._result is None:
            self._closed = True
            self._pending = None
        self._options_cache = None
        if not _shutdown(self._chan, self._thread, timeout):
            raise StepTimeoutError(f"StepGame.close: the background game thread did not stop within {timeout:g} s")
        self._finalizer.detach()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self) -> str:
        if self._result is not None:
            state = f"finished: {self._result.outcome}, winner {self._result.winner}, vp {self._result.vp}"
        elif self._closed:
            state = "closed"
        else:
            state = str(self.decision)
        return f"<StepGame {self.setup.scenario.id} seed={self.seed!r} {state}>"
