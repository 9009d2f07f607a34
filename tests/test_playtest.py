"""soe-sim playtest: narrated games (SoE 5.0 phase by phase), exact battle odds (SoE 7.41), map
snapshots and GIF, the --find condition language, and the CLI's error paths."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from soe_sim.battle import nb as bnb
from soe_sim.engine.game import play_game
from soe_sim.errors import SoeInputError
from soe_sim.playtest import battles_frame, narrate, play_story, playtest
from soe_sim.playtest.narrate import battle_line, signed_vp
from soe_sim.playtest.story import vp_award
from soe_sim.playtest.find import NUMERIC_COLUMNS, find_game, parse_condition, start_control

pytestmark = pytest.mark.game_loop  # plays games: compiled once for the session (conftest.py)

SCENARIO = "tutorial"
SEED = 1
DETAIL = ("battle_prep", "battle_deck", "position", "area_state")


@pytest.fixture(scope="module")
def game():
    story, setup, result = play_story(SCENARIO, SEED, 0)
    return story, setup, result, narrate(story)


@pytest.fixture(scope="module")
def areas():
    from soe_sim.engine.game import game_setup

    return list(game_setup(SCENARIO).game_map.area_index)


# --------------------------------------------------------------------------------------------------
# The engine's detail events (GameConfig.log_detail)


def test_detail_events_do_not_change_the_game(game):
    story, setup, result, _ = game
    plain = play_game(SCENARIO, (SEED, 0))
    ev = result.events
    assert set(DETAIL) <= set(ev["kind"])
    assert DETAIL[0] not in set(plain.events["kind"])
    stripped = ev[~ev["kind"].isin(DETAIL)].reset_index(drop=True)
    pd.testing.assert_frame_equal(stripped, plain.events.reset_index(drop=True))
    assert (plain.winner, plain.vp, plain.rounds) == (result.winner, result.vp, result.rounds)


def test_positions_match_the_final_state(game):
    """POSITION events after the last phase = the blocks on the map at the end (SoE 7.8 snapshot)."""
    story, setup, result, _ = game
    st = result.state
    on = np.flatnonzero(st.block_status == 0)
    final = sorted((int(b), int(st.block_side[b]), int(st.block_area[b]), int(st.block_sp[b])) for b in on)
    assert story.phases[-1].blocks == final
    assert np.array_equal(story.phases[-1].control, st.control.astype(int))
    assert np.array_equal(story.phases[-1].garrison, st.garrison_side.astype(int))


@pytest.mark.parametrize("game_index", [0, 1, 2, 3])
def test_event_tracking_agrees_with_positions(game_index):
    """Moves, losses, retreats and placements in the log rebuild the map recorded after every phase."""
    story, _, _ = play_story(SCENARIO, SEED, game_index)
    assert story.detail
    assert story.tracking_mismatches == 0


def test_leader_orders_advances_and_battle_choices_are_tracked_and_told():
    """Kiev Offensive (leaders, SoE 9.0) with balanced play: every leader order, advance after a battle
    (7.43), choice among equal battles (7.4), lost leader and battle gets its line, and the advances keep
    the tracked map equal to the one recorded after every phase (they were once neither told nor tracked)."""
    seen = dict.fromkeys(("leader_order", "advance", "battle_chosen", "leader_lost"), 0)
    for game_index in range(12):
        if game_index >= 4 and all(seen.values()):
            break
        story, _, result = play_story("kiev-offensive", 3, game_index, polish="balanced", soviet="balanced")
        assert story.tracking_mismatches == 0, game_index
        text = narrate(story, snapshot_dir=None)
        kinds = result.events["kind"].value_counts()
        # every battle under its own heading: Stalin's Reorganize executed at once (9.0) once filed the rest of
        # the phase, battles included, under "Reorganize and rail" (game 2)
        assert len(re.findall(r"^- \*\*Battle of ", text, flags=re.M)) == int(kinds.get("battle", 0)), game_index
        for kind, pattern in (
                ("leader_order", r"^- (Polish|Soviet) leader .+ gives an? .+ order at .+ \(.+; SoE 9\.0\)\.$"),
                ("advance", r"^  - (Polish|Soviet) .+ goes back .+ → .+ after the battle \(SoE 7\.43\)\.$"),
                ("battle_chosen", r"^- (Polish|Soviet) \(initiative\) chooses the battle of .+ \(SoE 7\.4\)\.$"),
                ("leader_lost", r"^  - (Polish|Soviet) leader .+ is (killed|captured) at .+ \(SoE 9\.0\)\.$")):
            n = int(kinds.get(kind, 0))
            assert len(re.findall(pattern, text, flags=re.M)) == n, (game_index, kind)
            seen[kind] += n
    assert all(seen.values()), seen  # the games (at least four) exercise every kind


# --------------------------------------------------------------------------------------------------
# Narration


def test_narration_sections(game):
    story, setup, result, text = game
    assert text.startswith("# Strike of the Eagle playtest — Tutorial")
    for heading in ("### Set-up", "## Round 1", "### Round 1, Operation Phase 1", "### Round 1, Operation Phase 5",
                    "**Cards**", "**Orders placed**", "**Orders executed**", "**Battles**", "## Result"):
        assert heading in text, heading
    assert re.search(r"(Polish|Soviet) plays card \d+ “[^”]+” on the (north|south) front for", text)
    assert re.search(r"(Polish|Soviet) Recon at \w", text)
    assert "snapshots/round-01-phase-1.png" in text
    assert f"final {signed_vp(result.vp)}" in text
    assert "*At the start:*" in text and text.count("*End of phase:*") == len(story.phases) - 1


def test_every_battle_is_narrated_with_exact_odds(game):
    story, setup, result, text = game
    logged = result.events[result.events["kind"] == "battle"]
    assert len(logged) == len(story.battles) >= 1
    for (_, row), bt in zip(logged.iterrows(), story.battles):
        assert story.names.area_id[bt.area] == row["area"]
        assert f"**Battle of {story.names.area(bt.area)}**" in text
        assert bt.prep is not None
        assert 0.0 <= bt.p_attacker_win <= 1.0
        assert 0.0 <= bt.p_great_victory <= 1.0
        assert bt.consistent  # the recorded row + the cards drawn give the logged winner
        assert re.search(rf"win {100 * bt.p_attacker_win:.1f} % exact", text)
    frame = battles_frame(story)
    assert len(frame) == len(story.battles)
    assert frame["p_attacker_win"].between(0, 1).all()


def test_battle_row_reproduces_logged_losses():
    """SoE 7.41.5: the recorded prepared row resolved with the recorded cards gives the logged losses."""
    checked = 0
    for g in range(6):
        story, _, _ = play_story(SCENARIO, SEED, g)
        for bt in story.battles:
            if not bt.fought or bt.prep is None:
                continue
            res = np.empty(bnb.N_OUT, dtype=np.int64)
            bnb.resolve_nb(bt.prep, np.int64(bt.combat_cards[bt.attacker][2]),
                           np.int64(bt.combat_cards[bt.defender][2]), story.setup.cr, res)
            assert bt.attacker_losses == min(res[bnb.O_ATT_LOSSES], bt.prep[bnb.P_ATT_SP])
            assert bt.defender_losses == min(res[bnb.O_DEF_BLOCK_LOSSES], bt.prep[bnb.P_DEF_SP]) + res[
                bnb.O_GARRISON_LOST]
            assert bt.attacker_cv == res[bnb.O_ATT_CV]
            checked += 1
    assert checked >= 3


def test_odds_use_the_recorded_piles(game):
    """A blind draw is uniform over the recorded pile (SoE 7.41.2); a card from the hand is certain."""
    story, *_ = game
    from soe_sim.engine.cards.nb import USE_COMBAT_HAND

    for bt in story.battles:
        for s in (bt.attacker, bt.defender):
            use, card, mod = bt.combat_cards[s]
            if use != USE_COMBAT_HAND and card > 0:
                counts, _ = bt.decks[s]
                assert mod in counts and sum(counts.values()) >= 1
        # the exact probability equals the enumeration by hand over the two piles
        tot = 0.0
        for av, ap in _dist(bt, bt.attacker):
            for dv, dp in _dist(bt, bt.defender):
                res = np.empty(bnb.N_OUT, dtype=np.int64)
                bnb.resolve_nb(bt.prep, np.int64(av), np.int64(dv), story.setup.cr, res)
                tot += ap * dp * (res[bnb.O_ATTACKER_WINS] == 1)
        assert tot == pytest.approx(bt.p_attacker_win, abs=1e-12)


def _dist(bt, side):
    from soe_sim.engine.cards.nb import USE_COMBAT_HAND

    use, _card, mod = bt.combat_cards[side]
    if use == USE_COMBAT_HAND:
        return [(mod, 1.0)]
    counts, _ = bt.decks[side]
    n = sum(counts.values())
    return [(v, c / n) for v, c in counts.items()] if n else [(0, 1.0)]


def test_flank_attacks_are_in_the_battle_line_and_battles_csv():
    """SoE 7.34: a penalized flank attack takes ``combat.flank_penalty`` off the defender; the battle line
    says so (a 4-SP defender fighting at CV 2 is explained) and battles.csv has the counts. Kiev Offensive
    (7, 27), balanced v balanced: the Battle of Berezino has one flank attack (user review)."""
    seen = {"penalized": 0, "negated": 0}
    for g in (27, *range(8)):
        story, setup, _ = play_story("kiev-offensive", 7, g, polish="balanced", soviet="balanced")
        frame = battles_frame(story)
        for i, bt in enumerate(story.battles):
            attacks, left = int(bt.prep[bnb.P_FLANK_ATTACKS]), int(bt.prep[bnb.P_FLANK_PENALIZED])
            row = frame.iloc[i]
            assert (row["flank_attacks"], row["flank_penalized"]) == (attacks, left)
            assert row["flank_penalty"] == left * setup.cr.flank_penalty
            line = battle_line(story, bt)
            word = "flank attack" if attacks == 1 else "flank attacks"
            if left:
                negated = f", {attacks - left} negated" if left < attacks else ""
                assert f"{attacks} {word}{negated}: −{left * setup.cr.flank_penalty} CV" in line
                seen["penalized"] += 1
            elif attacks:
                assert f"{attacks} {word}, negated" in line
                seen["negated"] += 1
            else:
                assert "flank" not in line
        if g != 27 and all(seen.values()):
            break
    assert seen["penalized"] >= 1, seen


def test_every_cause_has_a_text():
    """A cause missing from the narrator's table printed as its enum name (great_victory, leader_killed)."""
    from soe_sim.engine.game import CAUSE
    from soe_sim.playtest.narrate import _cause

    for name, c in CAUSE._asdict().items():
        text = _cause(c)
        assert "_" not in text and not re.search(r"cause \d", text), (name, text)
    story, *_ = play_story("kiev-offensive", 7, 27, polish="balanced", soviet="balanced")
    assert "(great victory, SoE 7.44)" in narrate(story, snapshot_dir=None)  # the Battle of Berezino


def test_a_battle_loss_is_told_at_the_battle_before_the_retreat():
    """The engine logs a block's battle changes as a move, then the loss at the area it retreated to: the
    report tells the loss at the battle's area, before the retreat (tutorial seed 1: Battle of Mazyr)."""
    from soe_sim.engine.game import EVENT

    pairs = 0
    for g in range(4):
        story, *_ = play_story(SCENARIO, SEED, g)
        lines = narrate(story, snapshot_dir=None).splitlines()
        n = story.names
        for bt in story.battles:
            ev = [e for e in bt.events if isinstance(e, np.void)]  # the raw records (VPStory aside)
            for e, nxt in zip(ev, ev[1:]):
                if (int(e["kind"]) == EVENT.BLOCK_MOVED and int(nxt["kind"]) == EVENT.BLOCK_LOSS
                        and int(nxt["block"]) == int(e["block"])):
                    b = n.block(int(e["block"]))
                    loss = f"{b} loses {int(nxt['value'])} SP at {n.area(int(e['area']))} (battle)."
                    move = f"{b} retreats {n.area(int(e['area']))} → {n.area(int(e['area2']))} (battle)."
                    i = next(k for k, t in enumerate(lines) if t.endswith(loss))
                    assert lines[i + 1].endswith(move), lines[i:i + 2]
                    assert int(e["area"]) == bt.area
                    pairs += 1
    assert pairs >= 1


def test_counts_are_singular_for_one():
    """"Polish 1 block / 3 SP", not "1 blocks" (the narrator's own counts)."""
    import dataclasses

    story, *_ = play_story(SCENARIO, SEED, 0)
    last = story.phases[-1]
    one = [t for t in last.blocks if t[1] == 0][:1]
    lone = dataclasses.replace(story, phases=[*story.phases[:-1], dataclasses.replace(
        last, blocks=one + [t for t in last.blocks if t[1] == 1])])
    text = narrate(lone, snapshot_dir=None)
    assert f"Polish 1 block / {one[0][3]} SP" in text
    assert not re.search(r"\b1 (blocks|battles|rounds|VP awards)\b", text)


def test_vp_changes_sum_to_final_vp(game):
    story, setup, result, text = game
    vp_events = result.events[result.events["kind"] == "vp"]
    assert sum(c for _r, _p, c, _cause, _a in story.vp_changes) == result.vp - story.vp_start == int(
        vp_events["value"].sum())
    assert len(re.findall(r"VP track [+−]\d+ \([A-Za-z]+\) → [+−]\d+", text)) == len(vp_events)
    last = story.phases[-1]
    assert last.vp_end == result.vp


def test_vp_award_skips_the_zero_space():
    """SoE 7.8 / docs/rules.md E10: Polish 1, the Soviets gain 2 → Soviet 2; the move is one longer."""
    assert vp_award(1, -2) == -2 and vp_award(-1, 1) == 1 and vp_award(-2, 3) == 4
    assert vp_award(3, 2) == -1 and vp_award(-4, -5) == -1 and vp_award(2, 4) == 2
    assert vp_award(0, 2) == 2 and vp_award(0, -1) == -1  # a scenario starting even has no space to skip


def test_narrated_vp_are_the_awards_not_the_track_moves(game):
    """The report says the VP gained (a 2-VP city is "+2 VP", not the track's −3 across the missing 0),
    per event, per phase and in the Result line; events.csv keeps the track's change (G14)."""
    story, setup, result, text = game
    items = story.vp_items
    assert len(items) == (result.events["kind"] == "vp").sum()
    assert any(v.crosses_zero for v in items)  # tutorial seed 1: +1 (Polish) → −2 (Soviet) for Kiev
    lines = text.splitlines()
    vp_lines = [i for i, t in enumerate(lines) if re.search(r"^\s*- VP track [+−]\d+ \(", t)]
    assert len(vp_lines) == len(items)
    for i, v in zip(vp_lines, items):
        assert re.search(rf"→ {re.escape(signed_vp(v.after))}: (Polish|Soviet) gains {abs(v.award)} VP\b", lines[i])
        assert ("no 0 space" in lines[i]) == v.crosses_zero
        control = re.search(r"takes control of .+ \((\d+) VP\)|^\s*- (.+) \((\d+) VP\) is no longer", lines[i - 1])
        if control:  # the VP of a city change hands: the award is the city's value
            assert abs(v.award) == int(control.group(1) or control.group(3))
    gained = [sum(v.award for v in items if v.award > 0), -sum(v.award for v in items if v.award < 0)]
    assert gained[0] - gained[1] == sum(ph.vp_gained[0] - ph.vp_gained[1] for ph in story.phases)
    assert "(this phase -" not in text and "(this phase +" not in text
    for ph in story.phases[1:]:
        if any(ph.vp_gained):
            part = ", ".join(f"{side} +{g} VP" for side, g in zip(("Polish", "Soviet"), ph.vp_gained) if g)
            assert f"{signed_vp(ph.vp_end)} (this phase: {part});" in text
    net = gained[0] - gained[1]
    net_text = f"Polish +{net} VP" if net > 0 else (f"Soviet +{-net} VP" if net < 0 else "0 VP")
    assert (f"{len(items)} VP awards summing to {net_text} (Polish {gained[0]}, Soviet {gained[1]}), "
            f"final {signed_vp(result.vp)}") in text
    assert abs(net) < abs(result.vp - story.vp_start)  # this game crossed 0: the track moved one more


def test_same_seed_same_text(game):
    *_, text = game
    story2, _, _ = play_story(SCENARIO, SEED, 0)
    assert narrate(story2) == text
    story3, _, _ = play_story(SCENARIO, SEED, 1)
    assert narrate(story3) != text


# --------------------------------------------------------------------------------------------------
# --find


def test_condition_language(areas):
    c = parse_condition("soviet wins and warsaw falls", areas)
    assert c.tree == ("and", ("winner", "soviet"), ("falls", "warsaw"))
    assert c.cities == ("warsaw",)
    assert parse_condition("Polish WINS", areas).tree == ("winner", "polish")
    assert parse_condition("vp >= 5", areas).tree == ("cmp", "vp", 1.0, ">=", 5.0)
    assert parse_condition("rounds <= 3", areas).tree == ("cmp", "rounds", 1.0, "<=", 3.0)
    assert parse_condition("kiev held by polish", areas).tree == ("held", "kiev", "polish")
    assert parse_condition("soviet holds kiev", areas).tree == ("held", "kiev", "soviet")
    assert parse_condition("soviet vp > 2", areas).tree == ("cmp", "vp", -1.0, ">", 2.0)
    assert parse_condition("soviet battles_won >= 1", areas).tree == ("cmp", "battles_won_soviet", 1.0, ">=", 1.0)
    assert parse_condition("not (draw or aborted) and immediate victory", areas).tree == (
        "and", ("not", ("or", ("draw",), ("outcome", "aborted"))), ("outcome", "immediate_victory"))
    assert "vp" in NUMERIC_COLUMNS and "winner" not in NUMERIC_COLUMNS


@pytest.mark.parametrize("text, word", [
    ("soviet wins and warsaw explodes", "explodes"),
    ("polsh wins", "polsh"),
    ("vp >= lots", "lots"),
    ("vp 5", "5"),
    ("(polish wins", "the end of the condition"),
    ("", ""),
    ("kiev held by romania", "romania"),
    ("__import__('os')", "'"),
    ("soviet winz", "winz"),  # the word after the side is named, with its suggestion
])
def test_condition_errors_name_the_word_and_list_what_is_understood(text, word, areas):
    with pytest.raises(SoeInputError) as err:
        parse_condition(text, areas)
    msg = str(err.value)
    assert msg.startswith("--find")
    assert repr(word) in msg or word in msg
    if text == "soviet winz":
        assert "did you mean `wins`" in msg
    elif text == "polsh wins":
        assert "did you mean `polish`" in msg and "soe_sim.playtest.find" in msg
    elif text not in ("kiev held by romania",):
        assert "understood" in msg or "e.g." in msg


@pytest.mark.parametrize("text", ["polsh wins", "", "vp >= ", "kiev explodes", "qqqq", "(polish wins", "vp 5"])
def test_condition_errors_are_short_without_the_column_list(text, areas):
    """The ~70 column names buried the "did you mean" of every error (one 2,500-character line); they are
    listed only when the word not understood stands where a column goes."""
    with pytest.raises(SoeInputError) as err:
        parse_condition(text, areas)
    msg = str(err.value)
    assert len(msg) < 450, msg
    assert "sp_lost_polish" not in msg
    if text == "polsh wins":
        assert len(msg) < 150 and "did you mean `polish`" in msg


def test_an_unknown_column_lists_the_columns(areas):
    with pytest.raises(SoeInputError) as err:
        parse_condition("vpp >= 3", areas)
    msg = str(err.value)
    assert "unknown column" in msg and "did you mean `vp`" in msg
    assert msg.index("did you mean") < msg.index("columns:")  # the hint first, in sight
    assert all(c in msg for c in NUMERIC_COLUMNS)


def test_condition_evaluation(areas):
    df = pd.DataFrame({"winner": ["polish", "soviet", "", ""], "outcome": ["finished"] * 3 + ["aborted"],
                       "vp": [3, -2, 0, 0], "rounds": [1, 2, 3, 4], "held_warsaw": ["polish", "soviet", "polish", ""]})
    start = {"warsaw": "polish"}
    ev = lambda t: parse_condition(t, areas).evaluate(df, start).tolist()  # noqa: E731
    assert ev("soviet wins and warsaw falls") == [False, True, False, False]
    assert ev("polish wins or draw") == [True, False, True, False]
    assert ev("warsaw held by nobody") == [False, False, False, True]
    assert ev("soviet vp >= 2") == [False, True, False, False]
    assert ev("not rounds <= 2") == [False, False, True, True]


def test_find_picks_the_first_matching_game():
    from soe_sim.engine.game import game_setup
    from soe_sim.sim import simulate

    res = find_game(SCENARIO, "soviet wins", seed=SEED, games=12, threads=1)
    assert res.game is not None
    sim = simulate(SCENARIO, games=12, seed=SEED, threads=1)
    winners = sim["winner"].tolist()
    assert winners[res.game] == "soviet" and "soviet" not in winners[:res.game]
    assert res.matches == winners.count("soviet")
    story, _, result = play_story(SCENARIO, SEED, res.game)  # the very game of the batch
    assert result.winner == "soviet" and result.vp == sim.loc[res.game, "vp"]
    # a city condition: held_<city> of simulate against the scenario's starting control
    setup = game_setup(SCENARIO)
    city = "kiev"
    res2 = find_game(SCENARIO, f"{city} falls", seed=SEED, games=12, threads=1)
    start = start_control(setup, [city])[city]
    held = res2.games[f"held_{city}"].tolist()
    falls = [h != start for h in held]
    assert res2.matches == sum(falls)
    assert res2.game == (falls.index(True) if any(falls) else None)


# --------------------------------------------------------------------------------------------------
# CLI: files, snapshots, GIF, errors


def test_cli_writes_report_snapshots_and_gif(tmp_path, capsys):
    from PIL import Image

    from soe_sim.cli import main

    out = tmp_path / "pt"
    code = main(["playtest", "--scenario", SCENARIO, "--seed", str(SEED), "--out", str(out), "--dpi", "40",
                 "--quiet"])
    assert code == 0
    text = (out / "game.md").read_text(encoding="utf-8")
    assert text == playtest(SCENARIO, SEED).text  # same seed, same report (no files written here)
    assert f"Seed {SEED}, game 0" in text
    story, *_ = play_story(SCENARIO, SEED, 0)
    events = pd.read_csv(out / "events.csv")
    assert (events["kind"] == "battle").sum() == len(story.battles)
    pngs = sorted((out / "snapshots").glob("*.png"))
    assert [p.stem for p in pngs] == sorted(ph.slug for ph in story.phases)
    assert pngs[0].stem == "round-00-setup"
    for p in pngs:
        with Image.open(p) as im:
            im.verify()
            assert im.format == "PNG"
    with Image.open(out / "game.gif") as gif:
        assert gif.format == "GIF" and gif.n_frames >= 2
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".playtest-")]  # no temporary left
    assert "game.md" in capsys.readouterr().out


def test_cli_find(tmp_path, capsys):
    from soe_sim.cli import main

    out = tmp_path / "found"
    code = main(["playtest", "--scenario", SCENARIO, "--seed", str(SEED), "--out", str(out), "--find",
                 "soviet wins", "--search-games", "12", "--threads", "1", "--no-snapshots", "--no-gif"])
    assert code == 0
    err = capsys.readouterr().err
    assert "searching 12 games" in err and "found game" in err
    search = pd.read_csv(out / "search.csv")
    g = int(search.loc[search["matches"], "game"].iloc[0])
    text = (out / "game.md").read_text(encoding="utf-8")
    assert f"Seed {SEED}, game {g}" in text and "**Soviet win**" in text
    assert f"--seed {SEED} --game {g}" in text
    assert not (out / "snapshots").exists() and not (out / "game.gif").exists()


@pytest.mark.parametrize("args, needle", [
    (["--scenario", "tutorail", "--seed", "1"], "tutorial"),
    (["--scenario", "tutorial", "--seed", "-3"], "--seed"),
    (["--scenario", "tutorial", "--seed", "x"], "--seed"),
    (["--scenario", "tutorial", "--seed", "1", "--polish", "agressive"], "aggressive"),
    (["--scenario", "tutorial", "--seed", "1", "--soviet-param", "attack_treshold=0.5"], "attack_threshold"),
    (["--scenario", "tutorial", "--seed", "1", "--find", "soviet wins and warsaw explodes"], "explodes"),
    (["--scenario", "tutorial", "--seed", "1", "--find", "polish wins", "--game", "2"], "--game"),
    (["--scenario", "tutorial", "--seed", "1", "--ruleset", "eatz"], "eats"),
])
def test_cli_errors_exit_2_and_write_nothing(tmp_path, capsys, args, needle):
    from soe_sim.cli import main

    out = tmp_path / "never"
    code = main(["playtest", *args, "--out", str(out)])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and len(err.splitlines()) == 1 and needle in err
    assert "Traceback" not in err
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_cli_ruleset_eats_narrates_the_eats_game(tmp_path, capsys):
    """EatS (seed 002) games can be watched too: the narrated game is ``play_game`` under the
    ``eats`` ruleset, the header names it and the replay command carries ``--ruleset eats``."""
    from soe_sim.cli import main
    from soe_sim.engine.game import game_setup

    out = tmp_path / "eats"
    code = main(["playtest", "--scenario", SCENARIO, "--seed", str(SEED), "--out", str(out), "--ruleset", "eats",
                 "--no-snapshots", "--no-gif", "--quiet"])
    assert code == 0
    text = (out / "game.md").read_text(encoding="utf-8")
    assert "Ruleset: `eats`" in text and "--ruleset eats" in text
    assert text.startswith("# The Eagle and the Star playtest — ")  # titled by the ruleset played
    eats = play_game(game_setup(SCENARIO, "eats"), (SEED, 0), "random", "random")
    soe = play_game(game_setup(SCENARIO), (SEED, 0), "random", "random")
    events = pd.read_csv(out / "events.csv")
    assert (events["kind"] == "battle").sum() == (eats.events["kind"] == "battle").sum()
    assert "Ruleset: `soe`" in playtest(SCENARIO, SEED).text
    # the two rulesets play different games from the same seed (else this test could not fail)
    assert not eats.events[["kind", "round", "phase"]].equals(soe.events[["kind", "round", "phase"]])


def test_cli_no_match_exits_1(tmp_path, capsys):
    from soe_sim.cli import main

    out = tmp_path / "none"
    code = main(["playtest", "--scenario", SCENARIO, "--seed", "1", "--out", str(out), "--find", "rounds > 50",
                 "--search-games", "3", "--threads", "1", "--quiet"])
    assert code == 1
    err = capsys.readouterr().err
    assert "no game among the 3 games" in err and "--search-games" in err
    assert not out.exists()


def test_a_bad_out_fails_before_the_game_is_played(tmp_path, monkeypatch):
    """--out is checked by creating the temporary directory before playing: a path that passes the
    up-front check but cannot be written (``/proc/nope``) failed only after the game (or the search)."""
    import soe_sim.playtest as pt_mod

    def no_play(*_a, **_k):
        raise AssertionError("the game was played before --out was found unwritable")

    def no_dir(*_a, **_k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(pt_mod, "play_story", no_play)
    monkeypatch.setattr(pt_mod, "find_game", no_play)
    monkeypatch.setattr(pt_mod.tempfile, "mkdtemp", no_dir)
    for find in (None, "soviet wins"):
        with pytest.raises(SoeInputError, match="--out: cannot write"):
            playtest(SCENARIO, SEED, out_dir=tmp_path / "a" / "out", find=find)
        assert list(tmp_path.iterdir()) == []  # the parent it made is gone again


def test_a_failed_run_leaves_no_directory(tmp_path):
    """No match (exit 1): neither --out, nor the parents this run created, nor the temporary stay."""
    out = tmp_path / "a" / "b" / "out"
    with pytest.raises(LookupError):
        playtest(SCENARIO, SEED, out_dir=out, find="rounds > 50", search_games=2, threads=1)
    assert list(tmp_path.iterdir()) == []


def test_a_python_policy_is_narrated_without_find():
    """play_game takes Python policies, so playtest does too (not --find: the batch is numba only).
    JitPolicy plays the numba policy's choices: the same game as the policy by name."""
    from soe_sim.engine.game import JitPolicy

    py = playtest(SCENARIO, SEED, polish=JitPolicy("balanced"), soviet="defensive")
    nb = playtest(SCENARIO, SEED, polish="balanced", soviet="defensive")
    pd.testing.assert_frame_equal(py.story.result.events, nb.story.result.events)
    assert "Policies: Polish JitPolicy('balanced') (a Python policy), Soviet defensive" in py.text
    assert "soe-sim" not in py.text.split("The narrator")[0]  # no command line replays it
    with pytest.raises(SoeInputError, match="Python polic"):
        playtest(SCENARIO, SEED, polish=JitPolicy("balanced"), find="polish wins", search_games=2)
