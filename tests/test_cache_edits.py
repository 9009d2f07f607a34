"""In-process caches read an edited data file again at the next call (README "Data"), not only
``soe_sim.simulate``: the design variants (``compare`` would mix an edited arm with a stale one), the
sweep's overlay set-ups and the battle calculator's default deck and combat constants."""
from __future__ import annotations

import csv
import io
import os
import shutil

import pytest

from soe_sim._paths import data_dir


@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    root = tmp_path / "data"
    shutil.copytree(data_dir(), root, ignore=shutil.ignore_patterns("README.md"))
    monkeypatch.setenv("SOE_SIM_DATA", str(root))
    return root


def _touch_later(path):
    # an edit within the clock's resolution of the first read must still change the stamp
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


def _edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    _touch_later(path)


def _end_round_2(root):
    _edit(root / "scenarios" / "tutorial.toml", "[end]\nround = 1", "[end]\nround = 2")


def test_a_variant_is_resolved_again_after_a_scenario_edit(data_copy):
    # review finding 2: compare's variant arm kept the old scenario (rounds 1.0) while the base arm had 2.0
    from soe_sim.design.variant import resolve, variant_setup
    from soe_sim.engine.game import game_setup

    variant = str(data_copy / "variants" / "flank-1.toml")
    assert resolve("tutorial", variant).scenario.end.round == 1
    assert variant_setup("tutorial", variant).scenario.end.round == 1
    _end_round_2(data_copy)
    assert game_setup("tutorial").scenario.end.round == 2  # the base arm
    assert resolve("tutorial", variant).scenario.end.round == 2
    assert variant_setup("tutorial", variant).scenario.end.round == 2


def test_a_variant_follows_an_edited_rules_file(data_copy):
    from soe_sim.design.variant import resolve

    variant = str(data_copy / "variants" / "flank-1.toml")
    assert resolve("tutorial", variant).rules["movement.recon_range"] == 3
    _edit(data_copy / "rules" / "soe.toml", "\nrecon_range = 3", "\nrecon_range = 2")
    assert resolve("tutorial", variant).rules["movement.recon_range"] == 2


def test_a_sweep_overlay_setup_is_built_again_after_an_edit(data_copy):
    from soe_sim.sim.sweep import Overlay, overlay_setup

    overlay = Overlay("flank-1", rules={"combat": {"flank_penalty": 1}})
    assert overlay_setup("tutorial", overlay).scenario.end.round == 1
    _end_round_2(data_copy)
    assert overlay_setup("tutorial", overlay).scenario.end.round == 2


def test_battle_odds_read_an_edited_deck_and_rules_file_again(data_copy):
    # review finding 2: battle_odds kept the old deck after a card edit (0.2433 instead of 0.4182)
    import soe_sim

    battle = soe_sim.Battle.from_spec("3i/2c", "4i,3i")
    before = float(soe_sim.battle_odds(battle).summary.loc["attacker_win", "exact"])
    path = data_copy / "cards" / "soviet.csv"
    lines = path.read_text().splitlines(keepends=True)
    comments = [x for x in lines if x.startswith("#")]
    rows = list(csv.DictReader(io.StringIO("".join(x for x in lines if not x.startswith("#")))))
    for r in rows:
        r["combat_modifier"] = "4"
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    path.write_text("".join(comments) + out.getvalue())
    _touch_later(path)
    assert soe_sim.battle.default_deck("soviet").values.tolist() == [4]
    after = float(soe_sim.battle_odds(battle).summary.loc["attacker_win", "exact"])
    assert after != pytest.approx(before)


def test_default_combat_constants_follow_an_edited_rules_file(data_copy):
    from soe_sim.rules import default_combat_constants

    assert default_combat_constants().flank_penalty == 2
    _edit(data_copy / "rules" / "soe.toml", "flank_penalty = 2", "flank_penalty = 1")
    assert default_combat_constants().flank_penalty == 1


def test_card_names_follow_an_edited_deck(data_copy):
    """The names the playtest report and the step descriptions give a card follow an edited deck."""
    from soe_sim.engine.game.step import _card_names
    from soe_sim.playtest.story import _cards

    deck = data_copy / "cards" / "polish.csv"
    old = _cards("polish")[1].name
    assert _card_names(0)[1] == old
    _edit(deck, f'1,"{old}",', '1,"Renamed For The Test",')
    assert _cards("polish")[1].name == "Renamed For The Test"
    assert _card_names(0)[1] == "Renamed For The Test"
