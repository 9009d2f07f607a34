"""Narrated games: ``soe-sim playtest``.

:func:`playtest` plays one seeded game with the engine's detail events on
(:func:`soe_sim.engine.game.play_game` ``log_detail=True``), turns it into a
:class:`~soe_sim.playtest.story.Story` and writes, into an output directory:

* ``game.md`` — the narrated report (:func:`soe_sim.playtest.narrate.narrate`);
* ``events.csv`` — the event log (:func:`soe_sim.engine.game.events_frame`);
* ``battles.csv`` — one row per battle with its flank attacks and exact odds before the draw
  (:func:`battles_frame`);
* ``snapshots/round-RR-phase-P.png`` — the map after every phase (``round-00-setup.png`` first);
* ``game.gif`` — the snapshots as an animation;
* ``search.csv`` — with ``find``: the simulated batch and which games matched.

Seeds: ``seed`` and ``game`` name the game ``play_game(scenario, seed=(seed, game))``, which is row
``game`` of ``soe_sim.simulate(scenario, seed=seed)`` (``soe-sim simulate --seed``), so a game found
by ``find`` is replayed with ``--seed S --game G``. The same seed and policies give the same game and
the same ``game.md``.
"""
from __future__ import annotations

import os
import shlex
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from soe_sim._paths import os_error_text
from soe_sim.errors import Problem, SoeInputError
from soe_sim.playtest.find import Condition, FindResult, find_game, parse_condition
from soe_sim.playtest.narrate import flank_penalty, narrate
from soe_sim.playtest.story import Story, build_story

__all__ = ["playtest", "play_story", "Playtest", "battles_frame", "narrate", "build_story", "find_game",
           "parse_condition", "Condition", "FindResult", "Story", "PLAYTEST_LOG_CAPACITY"]

#: Event-log capacity of a narrated game (the detail events add the map after every phase).
PLAYTEST_LOG_CAPACITY = 1 << 20


@dataclass
class Playtest:
    """What :func:`playtest` produced: the story, the report text and the files written."""

    story: Story
    text: str
    seed: int
    game: int
    out_dir: Path | None = None
    files: list = field(default_factory=list)
    search: FindResult | None = None


def _is_python_policy(p) -> bool:
    """A Python policy object (a ``choose(decision, options, view)`` method), not a numba Policy."""
    from soe_sim.engine.game import Policy

    return not isinstance(p, (Policy, type)) and callable(getattr(p, "choose", None))


def _policy_label(p) -> str:
    if _is_python_policy(p):
        inner = getattr(p, "policy", None)  # JitPolicy: the numba policy it runs
        what = f"{type(p).__name__}({inner.name!r})" if hasattr(inner, "name") else type(p).__name__
        return f"{what} (a Python policy)"
    from soe_sim.sim import policy_label

    name, params = policy_label(p)
    return name + (f" {params}" if params else "")


def play_story(scenario, seed: int, game: int = 0, polish="random", soviet="random"):
    """Play game ``game`` of batch seed ``seed`` with the detail events and return ``(story, setup, result)``."""
    from soe_sim.engine.game import play_game
    from soe_sim.sim import _setup_of

    setup, _ = _setup_of(scenario)
    result = play_game(setup, (int(seed), int(game)), polish, soviet, log_detail=True,
                       log_capacity=PLAYTEST_LOG_CAPACITY)
    return build_story(result, setup), setup, result


def battles_frame(story: Story) -> pd.DataFrame:
    """One row per battle: where and when, the forces, the cards, the exact odds and the result.

    ``flank_attacks`` are the attack directions beyond the first, ``flank_penalized`` those left after
    fortification, Defend, supporting directions and battle cards negated some, ``flank_penalty`` the
    combat value they took off the defender (SoE 7.34; empty without the detail events).
    """
    n = story.names
    side = ("polish", "soviet")
    rows = []
    for i, b in enumerate(story.battles):
        ac = b.combat_cards.get(b.attacker, (0, 0, 0))
        dc = b.combat_cards.get(b.defender, (0, 0, 0))
        flank = flank_penalty(story, b) or (None, None, None)
        rows.append({
            "battle": i, "round": b.round, "phase": b.phase, "area": n.area_id[b.area],
            "attacker": side[b.attacker], "defender": side[b.defender],
            "attacker_blocks": len(b.attackers), "attacker_sp": sum(s for _, s in b.attackers),
            "defender_blocks": len(b.defenders), "defender_sp": sum(s for _, s in b.defenders),
            "garrison": b.garrison, "defend": b.defend, "fortified": b.fortified,
            "flank_attacks": flank[0], "flank_penalized": flank[1], "flank_penalty": flank[2],
            "attacker_card": ac[1], "attacker_modifier": ac[2], "defender_card": dc[1], "defender_modifier": dc[2],
            "attacker_cv": b.attacker_cv, "defender_cv": b.defender_cv,
            "p_attacker_win": b.p_attacker_win, "p_great_victory": b.p_great_victory,
            "expected_attacker_losses": b.expected_attacker_losses,
            "expected_defender_losses": b.expected_defender_losses,
            "fought": b.fought, "winner": side[b.winner] if b.winner in (0, 1) else "",
            "attacker_losses": b.attacker_losses, "defender_losses": b.defender_losses,
            "great_victory": b.great_victory,
        })
    return pd.DataFrame(rows)


# Everything playtest writes into --out (replaced, or removed when a run does not write it).
_OUTPUTS = ("game.md", "events.csv", "battles.csv", "search.csv", "snapshots", "game.gif")


def _game_options(scenario_id: str, seed: int, pols: list, ruleset: str = "soe", game: int | None = None) -> str:
    """The options shared by ``soe-sim playtest`` and ``soe-sim simulate`` that fix the games played."""
    cmd = f"--scenario {scenario_id} --seed {seed}" + ("" if game is None else f" --game {game}")
    if ruleset != "soe":
        cmd += f" --ruleset {shlex.quote(str(ruleset))}"
    for flag, p in zip(("--polish", "--soviet"), pols):
        cmd += f" {flag} {p.name}"
        params = dict(p.params or {})
        if getattr(p, "omniscient", False):
            params["omniscient"] = 1
        for k, v in sorted(params.items()):
            cmd += f" {flag}-param {k}={float(v):g}"
    return cmd


def _replay_command(scenario_id: str, seed: int, game: int, pols: list, ruleset: str = "soe") -> str:
    return f"soe-sim playtest {_game_options(scenario_id, seed, pols, ruleset, game)} --out DIR"


def playtest(scenario, seed: int, *, game: int | None = None, polish="random", soviet="random", out_dir=None,
             find: str | Condition | None = None, search_games: int = 500, snapshots: bool = True,
             gif: bool = True, dpi: int = 80, gif_dpi: int = 60, fps: float = 1.0, threads: int | None = None,
             echo=None, progress: bool = False, ruleset=None) -> Playtest:
    """Play, narrate and (with ``out_dir``) write one game (module docstring).

    Parameters
    ----------
    scenario : str or Scenario or GameSetup
        A scenario id (``soe-sim scenarios``) or TOML path.
    seed : int
        Batch seed (≥ 0). Without ``find`` the game narrated is ``(seed, game)``.
    game : int, optional
        Game index in the batch (default 0); not allowed together with ``find``.
    polish, soviet : str, (name, {param: value}), Policy or object
        Numba policies (docs/policies.md); without ``find`` also a Python policy (an object with a
        ``choose(decision, options, view)`` method, as :func:`~soe_sim.engine.game.play_game` takes). A
        Python policy's game has no command line to replay it: the header says so.
    out_dir : path, optional
        Directory to write into (created; files of an earlier run are replaced). Everything is built
        in a temporary directory first, created before the game is played (a directory that cannot be
        written fails at once), so a failure leaves nothing half-written.
    find : str or Condition, optional
        Pick the first game of ``search_games`` simulated games matching this condition
        (:mod:`soe_sim.playtest.find`); no match raises :class:`LookupError`.
    snapshots, gif : bool
        Write the PNG snapshots / the GIF.
    echo : callable, optional
        Receives progress messages (the CLI prints them on stderr).
    progress : bool
        Progress bar of the batch search.
    ruleset : str, path or soe_sim.rules.Rules, optional
        ``"soe"`` (default, or a GameSetup's own), ``"eats"`` (The Eagle and the Star, docs/rules.md
        "EatS variant") or a rules TOML path; the search of ``find`` plays under it too.
    """
    from soe_sim.sim import _check_seed, _setup_of, check_output_dir, resolve_policy

    say = echo or (lambda _msg: None)
    # --- validate everything before any work or any file ---------------------------------------------
    setup, sid = _setup_of(scenario, ruleset)
    rules_label = setup.rules.label  # "soe+mine.toml" for a ruleset file: never plain "soe"
    # the --ruleset that replays the game: the file as given (a name of the data's rules/ is its id)
    rules_arg = (str(ruleset) if isinstance(ruleset, (str, Path)) and rules_label != setup.rules["meta.id"]
                 else str(setup.rules["meta.id"]))
    # a Python policy plays in play_game (play_story) but not in the simulated batch of --find
    pols = [spec if find is None and _is_python_policy(spec) else resolve_policy(spec, where)
            for spec, where in ((polish, "polish"), (soviet, "soviet"))]
    python = any(_is_python_policy(p) for p in pols)
    seed = _check_seed(seed)
    if game is not None and (isinstance(game, bool) or int(game) < 0):
        raise SoeInputError(Problem("--game", "", "", game, "the game index must be a non-negative integer"))
    if find is not None:
        if game is not None:
            raise SoeInputError(Problem("--game", "", "", game, "--game and --find exclude each other",
                                        "--find picks the game; drop --game"))
        if int(search_games) < 1:
            raise SoeInputError(Problem("--search-games", "", "", search_games, "must be at least 1"))
        cond = find if isinstance(find, Condition) else parse_condition(find, setup.game_map.area_index.keys())
    out = Path(out_dir) if out_dir is not None else None
    tmp = None
    created: list[Path] = []  # directories above --out this run made (removed again when it fails)
    if out is not None:
        check_output_dir(out, "--out")
        # the temporary directory is made now, not after the game (and the search) was played: a
        # directory that passes the check but cannot be written (/proc/…) fails before any work
        parent = out.resolve().parent
        created = [d for d in (parent, *parent.parents) if not d.exists()]
        try:
            parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".playtest-", dir=parent))
        except OSError as err:
            _remove_empty(created)
            raise SoeInputError(Problem("--out", "", "", str(out), f"cannot write: {os_error_text(err)}")) from None
    ok = False
    try:
        search = None
        if find is not None:
            say(f"searching {search_games} games of {sid} (seed {seed}) for: {cond.text}")
            search = find_game(setup, cond, seed=seed, games=int(search_games), polish=pols[0], soviet=pols[1],
                               threads=threads, progress=progress)
            if search.game is None:
                raise LookupError(f"no game among the {search_games} games of {sid} (seed {seed}) matches "
                                  f"{cond.text!r}; try more games (--search-games) or another seed")
            game = search.game
            say(f"found game {game} ({search.matches} of {search_games} games match)")
        game = int(game or 0)

        # --- play and narrate ------------------------------------------------------------------------
        names = [type(p).__name__ if _is_python_policy(p) else p.name for p in pols]
        say(f"playing {sid}, seed {seed}, game {game} ({names[0]} v {names[1]})")
        story, setup, result = play_story(setup, seed, game, pols[0], pols[1])
        if search is not None:
            row = search.games.loc[search.games["game"] == game].iloc[0]
            if (row["winner"] or None) != result.winner or int(row["vp"]) != result.vp:  # pragma: no cover
                say("warning: the narrated game differs from the simulated one (please report this)")
        header = [f"Scenario: `{sid}` — {setup.scenario.name} ({setup.scenario.start} to {setup.scenario.end})"]
        if python:  # soe-sim cannot name a Python policy: the game is play_game's with the same objects
            header += [f"Seed {seed}, game {game}: `play_game('{sid}', seed=({seed}, {game}), ...)` with the same "
                       f"policy objects",
                       f"Ruleset: `{rules_label}`",
                       f"Policies: Polish {_policy_label(pols[0])}, Soviet {_policy_label(pols[1])}",
                       "Replay: `soe_sim.playtest.playtest(...)` with the same arguments (a Python policy has no "
                       "command line)"]
        else:
            header += [f"Seed {seed}, game {game}: `play_game('{sid}', seed=({seed}, {game}), ...)`, row {game} of "
                       f"`soe-sim simulate {_game_options(sid, seed, pols, rules_arg)}`",
                       f"Ruleset: `{rules_label}`",
                       f"Policies: Polish {_policy_label(pols[0])}, Soviet {_policy_label(pols[1])}",
                       f"Replay: `{_replay_command(sid, seed, game, pols, rules_arg)}`"]
        if search is not None:
            header.append(f"Found by `--find \"{search.condition.text}\"`: first of {search.matches} matching games "
                          f"among {len(search.games)}")
        text = narrate(story, header=header, snapshot_dir="snapshots" if snapshots else None)
        pt = Playtest(story=story, text=text, seed=seed, game=game, search=search)
        if out is None:
            return pt

        # --- write into the temporary directory, then move into place ---------------------------------
        (tmp / "game.md").write_text(text, encoding="utf-8")
        result.events.to_csv(tmp / "events.csv", index=False)
        battles_frame(story).to_csv(tmp / "battles.csv", index=False)
        if search is not None:
            s = search.games.copy()
            s.attrs = {}
            s.insert(0, "matches", search.mask.to_numpy())
            s.to_csv(tmp / "search.csv", index=False)
        if snapshots or gif:
            from soe_sim.playtest.snapshots import write_snapshots

            def frame(i, n, ph):
                say(f"map {i + 1}/{n}: {ph.title}")

            write_snapshots(story, tmp / "snapshots", png=snapshots, gif_path=(tmp / "game.gif") if gif else None,
                            dpi=dpi, gif_dpi=gif_dpi, fps=fps, progress=frame)
        out.mkdir(parents=True, exist_ok=True)
        written = sorted(p.relative_to(tmp) for p in tmp.rglob("*") if p.is_file())
        # an earlier run's outputs this run does not write (its snapshots/, game.gif, search.csv) go too:
        # they would describe another game
        names = {item.name for item in tmp.iterdir()} | set(_OUTPUTS)
        for name in sorted(names):
            dest = out / name
            if dest.is_dir() and not dest.is_symlink():
                shutil.rmtree(dest)
            elif dest.exists() or dest.is_symlink():
                dest.unlink()
            if (tmp / name).exists():
                os.replace(tmp / name, dest)
        ok = True
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        if not ok:  # nothing of a failed run stays, not even the parents of --out it made
            _remove_empty(created)
    pt.out_dir = out
    pt.files = [out / p for p in written]  # what this run wrote, not what else is in the directory
    return pt


def _remove_empty(dirs: list[Path]) -> None:
    """Remove the directories (deepest first) a failed run created, if they are still empty."""
    for d in dirs:
        try:
            d.rmdir()
        except OSError:
            pass
