"""Rule variants (soe_sim.design.variant): reading, checking, composing, applying, knobs."""
from __future__ import annotations

import json

import numpy as np
import pytest

from soe_sim.design.variant import (
    BASE,
    Variant,
    builtin_variants,
    compose,
    knob_value,
    list_knobs,
    load_variant,
    parse_knob,
    resolve,
    variant_setup,
)
from soe_sim.errors import SoeInputError


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def _problems(excinfo) -> list[str]:
    return [str(p) for p in excinfo.value.problems]


# --------------------------------------------------------------------------------------------------
# Reading and checking


def test_builtin_variants_load_and_apply_to_the_tutorial():
    names = builtin_variants()
    assert {"flank-1", "hmg-deck", "polish-lead-2", "attacker-friendly"} <= set(names)
    for n in names:
        v = load_variant(n)
        assert v.changes(), n
        setup = variant_setup("tutorial", v)
        assert setup.state0.block_sp.sum() > 0


def test_rules_overlay_reaches_the_engine_constants():
    # SoE 7.34 flank penalty, 7.44 great victory, 6.0 hand limit
    setup = variant_setup("tutorial", "attacker-friendly")
    assert setup.cr.flank_penalty == 1
    assert setup.cr.great_victory_losses == 3
    assert setup.kr.hand_limit == 8
    base = variant_setup("tutorial", BASE)
    assert base.cr.flank_penalty == 2 and base.cr.great_victory_losses == 4 and base.kr.hand_limit == 7


def test_list_entry_by_index_and_whole_list(tmp_path):
    one = _write(tmp_path, "one.toml", "[rules]\ncombat.chart_losses.5 = 7\n")
    setup = variant_setup("tutorial", one)
    assert list(setup.cr.chart_losses) == [0, 1, 2, 3, 4, 7]  # EatS IX.3 chart, last column changed
    whole = variant_setup("tutorial", "bloody-chart")
    assert list(whole.cr.chart_losses) == [0, 1, 3, 4, 5, 6]


def test_unknown_keys_name_the_file_and_suggest(tmp_path):
    p = _write(tmp_path, "bad.toml",
               'name = "bad"\ndescripton = "x"\n[rules]\ncombat.flank_penalt = 1\ncards.hand_limit = "7"\n'
               '[scenario]\nvpp = 2\ninitiative.north.levle = 2\n[cards.polish]\nremov = [1]\n'
               '[cards.polish.change.7]\ncombat_modifer = 2\n')
    with pytest.raises(SoeInputError) as e:
        load_variant(p)
    msgs = _problems(e)
    assert all(m.startswith(str(p)) or "bad.toml" in m for m in msgs)
    text = "\n".join(msgs)
    assert "descripton" in text and "`description`" in text
    assert "combat.flank_penalt" in text and "`flank_penalty`" in text
    assert "cards.hand_limit" in text and "expected an integer" in text
    assert "vpp" in text and "`vp`" in text
    assert "initiative.north.levle" in text and "`level`" in text
    assert "remov" in text and "`remove`" in text
    assert "combat_modifer" in text and "`combat_modifier`" in text
    assert len(msgs) == 7


def test_bad_values_found_when_applied_to_a_scenario(tmp_path):
    # SoE 6.1: initiative levels 1..max_level; the scenario loader's check names the variant file
    p = _write(tmp_path, "ini.toml", "[scenario]\ninitiative.north.level = 9\n")
    v = load_variant(p)
    with pytest.raises(SoeInputError) as e:
        variant_setup("tutorial", v)
    (msg,) = _problems(e)
    assert "ini.toml" in msg and "tutorial.toml" in msg and "level" in msg and "out of range" in msg
    # SoE 7.41 chart: thresholds must increase
    q = _write(tmp_path, "chart.toml", "[rules]\ncombat.chart_min_value = [0, 4, 4, 10, 13, 18]\n")
    with pytest.raises(SoeInputError) as e:
        variant_setup("tutorial", q)
    assert "chart.toml" in str(e.value) and "strictly increasing" in str(e.value)


def test_missing_files_rulesets_and_loops(tmp_path):
    with pytest.raises(SoeInputError) as e:
        load_variant("flank1")
    assert "did you mean `flank-1`?" in str(e.value)
    with pytest.raises(SoeInputError) as e:
        load_variant(tmp_path / "nope.toml")
    assert "not found" in str(e.value)
    p = _write(tmp_path, "r.toml", 'ruleset = "seo"\n')
    with pytest.raises(SoeInputError) as e:
        load_variant(p)
    assert "unknown ruleset" in str(e.value) and "`soe`" in str(e.value)
    a = _write(tmp_path, "a.toml", 'extends = ["b.toml"]\n')
    _write(tmp_path, "b.toml", 'extends = ["a.toml"]\n')
    with pytest.raises(SoeInputError) as e:
        load_variant(a)
    assert "loop" in str(e.value)
    with pytest.raises(SoeInputError) as e:
        load_variant(_write(tmp_path, "bad.toml", "[rules\n"))
    assert "TOML syntax error" in str(e.value) and "(got" not in str(e.value)


def test_ruleset_key_is_supported(tmp_path):
    p = _write(tmp_path, "soe.toml", 'ruleset = "soe"\n[rules]\ncombat.flank_penalty = 3\n')
    v = load_variant(p)
    assert v.ruleset == "soe"
    r = resolve("tutorial", v)
    assert r.rules["combat.flank_penalty"] == 3
    assert variant_setup("tutorial", v).cr.flank_penalty == 3
    assert load_variant(_write(tmp_path, "plain.toml", 'ruleset = "soe"\n')).is_base


def test_deck_size_is_not_a_knob(tmp_path):
    p = _write(tmp_path, "d.toml", "[rules]\ncards.deck_size = 60\n")
    with pytest.raises(SoeInputError) as e:
        load_variant(p)
    assert "follows the decks" in str(e.value)


# --------------------------------------------------------------------------------------------------
# Composition


def test_compose_later_wins_and_cards_accumulate(tmp_path):
    a = Variant("a", rules={"combat": {"flank_penalty": 1, "great_victory_losses": 3}},
                cards={"polish": {"remove": [4], "change": {7: {"orders": 1}}, "add": []}})
    b = Variant("b", rules={"combat": {"flank_penalty": 0}}, scenario={"vp": 3},
                cards={"polish": {"remove": [5], "change": {7: {"combat_modifier": 0}},
                                  "add": [{"name": "X", "orders": 1, "combat_modifier": 1, "event_kind": "none"}]}})
    c = compose(a, b)
    assert c.name == "a+b"
    assert c.rules == {"combat": {"flank_penalty": 0, "great_victory_losses": 3}}
    assert c.scenario == {"vp": 3}
    assert c.cards["polish"]["remove"] == [4, 5]
    assert c.cards["polish"]["change"][7] == {"orders": 1, "combat_modifier": 0}
    assert len(c.cards["polish"]["add"]) == 1
    assert compose(BASE, BASE).is_base and compose().is_base
    # extends and A+B compose the same way
    assert load_variant("attacker-friendly").rules["combat"] == load_variant("flank-1+great-victory-3").rules["combat"]
    # a spec round-trips (what the sweep sends to its workers)
    spec = json.loads(json.dumps(c.spec()))
    assert Variant.from_spec(spec).cache_key() == c.cache_key()


# --------------------------------------------------------------------------------------------------
# Decks and scenario values in the engine set-up


def test_deck_changes_reach_the_card_state():
    setup = variant_setup("tutorial", "hmg-deck")
    cs = setup.cards0
    assert cs.orders.shape == (2, 56)  # a Polish card added: both decks padded to 56 slots
    # Soviet card 38 is now a battle card with the HMG effect (EatS VII Example 7)
    from soe_sim.battle.nb import E_ENEMY_EXTRA_LOSS

    assert cs.battle_effect[1, 37, E_ENEMY_EXTRA_LOSS] == 1
    base = variant_setup("tutorial", BASE).cards0
    assert base.battle_effect[1, 37].sum() == 0
    # the new Polish card 56 is in the draw pile, card 4 and the Soviet padding slot 56 are removed
    from soe_sim.engine.cards import REMOVED, DRAW_PILE

    assert cs.location[0, 55] == DRAW_PILE and cs.combat_modifier[0, 55] == 2
    assert cs.location[0, 3] == REMOVED and cs.location[1, 55] == REMOVED
    assert (cs.location == DRAW_PILE).sum() == 55 + 55  # Polish 56 - card 4, Soviet 55
    # outside the variant's set-up the built-in decks are loaded again
    from soe_sim.data import load_cards

    assert len(load_cards("polish")) == 55


def test_scenario_values_and_signed_vp(tmp_path):
    r = resolve("tutorial", "polish-lead-2")
    assert r.scenario.vp_signed == 2
    assert r.scenario.initiative["north"]["side"] == "polish" and r.scenario.initiative["north"]["level"] == 2
    p = _write(tmp_path, "sov.toml", "[scenario]\nvp = -3\nend.round = 2\n")
    r2 = resolve("tutorial", p)
    assert r2.scenario.vp_signed == -3 and r2.scenario.end.round == 2
    setup = variant_setup("tutorial", p)
    assert int(setup.state0.vp[0]) == -3


# --------------------------------------------------------------------------------------------------
# Knobs


def test_knob_names_and_values():
    k, v = knob_value("tutorial", BASE, "rules.combat.flank_penalty")
    assert (k.integer, v) == (True, 2)
    assert knob_value("tutorial", BASE, "scenario.vp")[1] == 1  # tutorial: Poles lead by 1 (SoE 7.8 example)
    assert knob_value("tutorial", BASE, "rules.combat.chart_losses.2")[1] == 2
    assert knob_value("tutorial", "hmg-deck", "cards.soviet.change.38.orders")[1] == 1
    v2 = BASE.with_knob("rules.combat.flank_penalty", 0)
    assert variant_setup("tutorial", v2).cr.flank_penalty == 0
    assert v2.name == "rules.combat.flank_penalty=0"
    v3 = load_variant("flank-1").with_knob("scenario.vp", -2)
    r = resolve("tutorial", v3)
    assert r.scenario.vp_signed == -2 and r.rules["combat.flank_penalty"] == 1
    card = BASE.with_knob("cards.polish.change.7.combat_modifier", 0)
    assert variant_setup("tutorial", card).cards0.combat_modifier[0, 6] == 0
    names = dict(list_knobs("tutorial"))
    assert names["rules.combat.flank_penalty"] == 2 and names["scenario.vp"] == 1
    assert "rules.cards.deck_size" not in names


@pytest.mark.parametrize("name, text", [
    ("combat.flank_penalty", "did you mean `rules.combat.flank_penalty`?"),
    ("rules.combat.flank_penalt", "did you mean `rules.combat.flank_penalty`?"),
    ("rules.meta.name", "not a numeric value"),
    ("rules.combat.chart_losses.9", "not an entry of the list"),
    ("cards.polish.7.orders", "cards.<side>.change.<id>.<column>"),
    ("cards.polish.change.7.name", "not a numeric card column"),
    ("scenario.vpp", "unknown knob of the scenario"),
])
def test_bad_knobs(name, text):
    with pytest.raises(SoeInputError) as e:
        knob_value("tutorial", BASE, name)
    assert text in str(e.value)


def test_starting_vp_has_no_zero(tmp_path):
    # user review: the VP track has no 0 space (docs/rules.md E10: -1 and +1 are adjacent), but scenario.vp = 0
    # was played as a start with no advantage
    k = parse_knob("scenario.vp")
    assert k.excluded == (0,) and k.signed and "no 0 space" in k.reason
    with pytest.raises(SoeInputError) as e:
        BASE.with_knob("scenario.vp", 0)
    assert "scenario.vp" in str(e.value) and "(got 0)" in str(e.value) and "no 0 space" in str(e.value)
    assert knob_value("tutorial", BASE, "scenario.vp")[0].excluded == (0,)  # the knob read from a scenario too
    p = _write(tmp_path, "zero.toml", "[scenario]\nvp = 0\n")
    with pytest.raises(SoeInputError) as e:
        load_variant(p)
    assert "zero.toml" in str(e.value) and "'vp'" in str(e.value) and "no 0 space" in str(e.value)
    # positions: -1 and +1 are neighbours, and the map is monotone with its inverse
    assert [k.position(v) for v in (-2, -1, 1, 2)] == [-2, -1, 0, 1] and k.position(0) == -0.5
    assert [k.value_at(p) for p in (-2, -1, 0, 1)] == [-2, -1, 1, 2] and k.value_at(-0.5) == 0
    assert k.values_between(-2, 2) == [-2, -1, 1, 2] and k.skipped_between(-2, 2) == [0]
    flank = parse_knob("rules.combat.flank_penalty")
    assert flank.excluded == () and flank.position(3) == 3 and flank.value_at(2.5) == 2.5


def test_int_knob_refuses_fractions():
    k = parse_knob("rules.combat.flank_penalty")
    with pytest.raises(SoeInputError):
        k.coerce(1.5)
    assert k.coerce(2.0) == 2 and isinstance(k.coerce(2.0), int)


def test_sweep_config_takes_a_variant(tmp_path):
    from soe_sim.sim import sweep as sw

    cfg = _write(tmp_path, "sweep.toml",
                 'scenarios = ["tutorial"]\ngames_per_chunk = 2\nchunks = 1\nseed = 1\n'
                 '[[pairs]]\npolish = "random"\nsoviet = "random"\n'
                 '[[overlays]]\nname = "deck"\nvariant = "hmg-deck"\n'
                 '[[overlays]]\nname = "bad"\nvariant = "hmg-dek"\n')
    with pytest.raises(SoeInputError) as e:
        sw.load_config(cfg)
    assert "hmg-dek" in str(e.value) and "`hmg-deck`" in str(e.value)
    cfg.write_text(cfg.read_text().replace('[[overlays]]\nname = "bad"\nvariant = "hmg-dek"\n', ""))
    c = sw.load_config(cfg)
    ov = c.overlays[0]
    assert ov.variant and ov.variant["cards"]["soviet"]["change"]["38"]["event_kind"] == "battle"
    setup = sw.overlay_setup("tutorial", ov)
    assert setup.cards0.orders.shape == (2, 56)
    assert ov.fingerprint() != sw.Overlay("deck").fingerprint()
    assert np.array_equal(setup.cards0.location, variant_setup("tutorial", "hmg-deck").cards0.location)
