"""One test per validation error kind, on a small fixture data directory with one thing broken.

The fixture (tests/fixtures/data) is valid; each case copies it to tmp_path, corrupts one file and
checks that the problem names the file, the field, the bad value and the suggestion.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from soe_sim.data import load_dataset, load_map, load_scenario, validate
from soe_sim.errors import SoeInputError

FIXTURE = Path(__file__).parent / "fixtures" / "data"


def copy_fixture(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    shutil.copytree(FIXTURE, root)
    return root


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) >= 1, f"fixture text {old!r} not found in {path}"
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def problems_of(root: Path) -> list:
    with pytest.raises(SoeInputError) as info:
        validate([root])
    return info.value.problems


def find(problems, file: str, field: str | None = None, value=None, message: str | None = None,
         suggestion: str | None = None):
    """The problem matching all given parts (fail with the full list otherwise)."""
    for p in problems:
        if not p.file.endswith(file):
            continue
        if field is not None and p.field != field:
            continue
        if value is not None and p.value != value:
            continue
        if message is not None and message not in p.message:
            continue
        if suggestion is not None and (p.suggestion is None or suggestion not in p.suggestion):
            continue
        return p
    pytest.fail("no matching problem in:\n" + "\n".join(str(p) for p in problems))


def test_fixture_is_valid():
    ds = load_dataset(FIXTURE)
    assert ds.game_map.n_areas == 10
    assert "test-offensive" in ds.scenarios


SCEN = "scenarios/test-offensive.toml"
AREAS = "map/areas.csv"
LINKS = "map/links.csv"

# (id, file to edit, old text, new text, expected: file, field, value, message part, suggestion part)
CASES = [
    # --- syntax --------------------------------------------------------------------------------
    ("csv-wrong-field-count", AREAS, "lublin,Lublin,Lublin,", "lublin,Lublin,",
     (AREAS, "", None, "wrong number of fields", None)),
    ("csv-unterminated-quote", LINKS, "minsk,zlobin,rail", 'minsk,"zlobin,rail',
     (LINKS, "", None, "CSV syntax error", None)),
    ("toml-syntax", SCEN, 'name = "Test Offensive"', 'name = "Test Offensive', (SCEN, "", None, "TOML syntax", None)),
    # --- columns and keys ----------------------------------------------------------------------
    ("unknown-column", AREAS, ",eastern_link,", ",eastern_lnk,",
     (AREAS, "eastern_lnk", "eastern_lnk", "unknown column", "did you mean `eastern_link`?")),
    ("missing-column", AREAS, ",eastern_link,", ",eastern_lnk,",
     (AREAS, "eastern_link", None, "missing required column", "did you mean `eastern_lnk`?")),
    ("unknown-scenario-key", SCEN, "[[deployment]]", "[[deployement]]",
     (SCEN, "deployement", "deployement", "unknown key", "did you mean `deployment`?")),
    # --- types and enum values -----------------------------------------------------------------
    ("bad-int", AREAS, "Kovel,Kowel,24.71,51.21,E5,south,contested,0,", "Kovel,Kowel,24.71,51.21,E5,south,contested,two,",
     (AREAS, "vp", "two", "expected an integer", None)),
    ("bad-enum", AREAS, "Minsk,Mińsk,27.57,53.90,H3,north,", "Minsk,Mińsk,27.57,53.90,H3,nort,",
     (AREAS, "front", "nort", "unknown value", "did you mean `north`?")),
    ("bad-bool", AREAS, "0,0,0,true,soviet", "0,0,0,maybe,soviet",
     (AREAS, "eastern_link", "maybe", "expected true or false", None)),
    ("bad-grid", AREAS, "H3,north,russia,2", "Z9,north,russia,2",
     (AREAS, "grid", "Z9", "expected a grid square", None)),
    ("bad-slug", AREAS, "\nrovno,Rovno", "\nRovno City,Rovno",
     (AREAS, "id", "Rovno City", "slug", None)),
    ("bad-block-class", "blocks/blocks.csv", "cavalry,brigade,2", "cavalry,brigade,3",
     ("blocks/blocks.csv", "max_sp", 3, "a brigade has at most 2 SP", None)),
    ("bad-leader-ability", "blocks/leaders.toml", '"any_order"', '"any_ordr"',
     ("blocks/leaders.toml", "ability", "any_ordr", "unknown leader ability", "did you mean `any_order`?")),
    ("unknown-effect-key", "cards/polish.csv", "enemy_extra_loss:1", "enemy_extra_los:1",
     ("cards/polish.csv", "effect", "enemy_extra_los", "unknown effect key", "did you mean `enemy_extra_loss`?")),
    # --- values too large for the engine's arrays (audit I D2: an OverflowError, not a problem) --------
    ("area-vp-too-large", AREAS, "Kovel,Kowel,24.71,51.21,E5,south,contested,0,",
     "Kovel,Kowel,24.71,51.21,E5,south,contested,200,", (AREAS, "vp", 200, "out of range; expected an integer 0..100",
                                                        None)),
    ("area-cubes-too-large", AREAS, "0,0,0,true,soviet", "1000,0,0,true,soviet",
     (AREAS, "strategic_infantry", 1000, "out of range; expected an integer 0..20", None)),
    ("card-modifier-too-large", "cards/polish.csv", "\n1,Card 1,2,1,", "\n1,Card 1,2,100000,",
     ("cards/polish.csv", "combat_modifier", 100000, "out of range; expected an integer 0..20", None)),
    ("card-effect-too-large", "cards/polish.csv", "enemy_extra_loss:1", "enemy_extra_loss:99999999999999999999",
     ("cards/polish.csv", "effect", "enemy_extra_loss:99999999999999999999", "out of range; expected 0..20",
      None)),
    # a battle card's effect ranges like a card's printed values; SP, flanks and cards never go negative
    ("card-battle-effect-negative", "cards/polish.csv", "enemy_extra_loss:1", "enemy_extra_loss:-1",
     ("cards/polish.csv", "effect", "enemy_extra_loss:-1", "out of range; expected 0..20", None)),
    ("scenario-vp-too-large", SCEN, '[vp]\nside = "polish"\nvalue = 1', '[vp]\nside = "polish"\nvalue = 1000000',
     (SCEN, "value", 1000000, "out of range; expected 0..100", None)),
    ("objective-vp-too-large", SCEN, 'area = "warsaw"\nvp = 1', 'area = "warsaw"\nvp = 99999999999999999999',
     (SCEN, "vp", 99999999999999999999, "out of range; expected -100..100", None)),
    ("end-round-too-large", SCEN, "[end]\nround = 2", "[end]\nround = 40000",
     (SCEN, "round", 40000, "out of range; expected 1..99", None)),
    # --- ids -----------------------------------------------------------------------------------
    ("duplicate-area-id", AREAS, "\nkovel,Kovel", "\nlublin,Kovel",
     (AREAS, "id", "lublin", "duplicate area id", None)),
    ("duplicate-block-id", "blocks/blocks.csv", "pl-5-id,", "pl-4-id,",
     ("blocks/blocks.csv", "id", "pl-4-id", "duplicate block id", None)),
    ("duplicate-card-id", "cards/soviet.csv", "\n7,Card 7", "\n8,Card 7",
     ("cards/soviet.csv", "id", 8, "duplicate card id", None)),
    # --- links ---------------------------------------------------------------------------------
    ("link-unknown-area", LINKS, "minsk,zlobin", "minsk,zlobn",
     (LINKS, "b", "zlobn", "unknown area", "did you mean `zlobin`?")),
    ("self-link", LINKS, "lublin,kovel,road", "lublin,lublin,road", (LINKS, "b", "lublin", "self-link", None)),
    ("duplicate-link", LINKS, "kovel,rovno,rail", "kovel,rovno,rail,test\nrovno,kovel,rail",
     (LINKS, "", None, "duplicate link", None)),
    ("asymmetric-link", LINKS, "kovel,rovno,rail", "kovel,rovno,rail,test\nrovno,kovel,road",
     (LINKS, "kind", "road", "asymmetric link", None)),
    ("disconnected-map", LINKS, "kovel,rovno,rail,test fixture\nrovno,pinsk,road,test fixture\n", "",
     (LINKS, "", None, "disconnected", None)),
    # --- map geometry --------------------------------------------------------------------------
    ("fortified-non-neighbour", AREAS, "true,brest,", "true,minsk,",
     (AREAS, "fortified_toward", "minsk", "not a neighbour", None)),
    ("fortified-unknown-area", AREAS, "true,brest,", "true,brst,",
     (AREAS, "fortified_toward", "brst", "unknown area", "did you mean `brest`?")),
    ("grid-contradicts-coordinates", AREAS, "21.01,52.23,B4", "21.01,52.23,F7",
     (AREAS, "grid", "F7", "contradicts the coordinates", "the coordinates are in B4")),
    # --- scenario: references -----------------------------------------------------------------
    ("unknown-area", SCEN, 'area = "lublin"', 'area = "Zlobn"',
     (SCEN, "area", "Zlobn", "unknown area", "did you mean `zlobin`?")),
    ("unknown-block", SCEN, 'block = "pl-2-id"', 'block = "pl-2-idd"',
     (SCEN, "block", "pl-2-idd", "unknown block", "did you mean `pl-2-id`?")),
    ("removed-card-not-in-deck", SCEN, "soviet = [23]", "soviet = [99]",
     (SCEN, "", 99, "no card with this id in the soviet deck", None)),
    ("unknown-condition", SCEN, 'condition = "first-cavalry-army"', 'condition = "first-cavalry"',
     (SCEN, "condition", "first-cavalry", "names no special rule", "did you mean `first-cavalry-army`?")),
    # --- scenario: rules --------------------------------------------------------------------------
    ("sp-above-max", SCEN, 'block = "pl-1-cb"\narea = "lublin"\nsp = 2', 'block = "pl-1-cb"\narea = "lublin"\nsp = 3',
     (SCEN, "sp", 3, "above the block's maximum of 2", None)),
    ("sp-below-one", SCEN, 'area = "brest"\nsp = 3', 'area = "brest"\nsp = 0', (SCEN, "sp", 0, "below 1", None)),
    ("deployed-twice", SCEN, 'block = "pl-2-id"', 'block = "pl-1-id"',
     (SCEN, "block", "pl-1-id", "deployed twice", None)),
    ("deployed-and-force-pool", SCEN, 'polish = ["pl-4-id", "pl-5-id"]', 'polish = ["pl-4-id", "pl-1-id"]',
     (SCEN, "block", "pl-1-id", "both in the force pool and deployed", None)),
    ("deployed-and-reinforcement", SCEN, 'block = "pl-3-id"', 'block = "pl-2-id"',
     (SCEN, "block", "pl-2-id", "both deployed", None)),
    ("wrong-side-force-pool", SCEN, 'soviet = ["ru-inf-1"]', 'soviet = ["pl-4-id"]',
     (SCEN, "block", "pl-4-id", "a polish block in the soviet force pool", None)),
    ("wrong-side-deployment", SCEN, 'block = "pl-2-id"\narea = "brest"', 'block = "pl-2-id"\nside = "soviet"\narea = "brest"',
     (SCEN, "side", "soviet", "is a polish block", None)),
    ("overstacked", SCEN, "[[reinforcement]]",
     '[[deployment]]\nblock = "pl-4-id"\narea = "warsaw"\n\n[[deployment]]\nblock = "pl-5-id"\narea = "warsaw"\n\n'
     '[[deployment]]\nblock = "pl-3-id"\narea = "warsaw"\n\n[[reinforcement]]',
     (SCEN, "area", "warsaw", "overstacked: 5 blocks", None)),
    ("polish-reinforcement-on-eastern-link", SCEN, 'block = "pl-3-id"\nround = 2\nphase = 1\narea = "warsaw"',
     'block = "pl-3-id"\nround = 2\nphase = 1\narea = "zlobin"',
     (SCEN, "area", "zlobin", "Polish reinforcement cannot arrive on an Eastern Link", None)),
    ("soviet-reinforcement-outside-eastern-links", SCEN, 'round = 2\nphase = 1\narea = "minsk"',
     'round = 2\nphase = 1\narea = "brest"',
     (SCEN, "area", "brest", "must arrive on an Eastern Link", None)),
    ("garrison-on-non-key-city", SCEN, 'area = "minsk"\nside = "soviet"', 'area = "pinsk"\nside = "soviet"',
     (SCEN, "area", "pinsk", "not a key city", None)),
    ("initiative-level-below-1", SCEN, 'side = "soviet"\nlevel = 1', 'side = "soviet"\nlevel = 0',
     (SCEN, "level", 0, "out of range", None)),
    ("start-round-out-of-range", SCEN, "[start]\nround = 1", "[start]\nround = 0", (SCEN, "round", 0, "out of range", None)),
    ("phase-out-of-range", SCEN, "[start]\nround = 1\nphase = 1", "[start]\nround = 1\nphase = 7",
     (SCEN, "phase", 7, "out of range", None)),
    ("end-before-start", SCEN, "[start]\nround = 1", "[start]\nround = 3", (SCEN, "round", 2, "ends", None)),
    ("reinforcement-after-end", SCEN, "round = 2\nphase = 1\narea = \"minsk\"", "round = 5\nphase = 1\narea = \"minsk\"",
     (SCEN, "round", 5, "outside the scenario", None)),
    ("unknown-special-rule-kind", SCEN, 'kind = "arrival_check"', 'kind = "arival_check"',
     (SCEN, "kind", "arival_check", "unknown special-rule kind", "did you mean `arrival_check`?")),
    ("unknown-objective-kind", SCEN, 'kind = "hold_area"', 'kind = "hold_areas"',
     (SCEN, "kind", "hold_areas", "unknown objective kind", "did you mean `hold_area`?")),
    # --- scenario: all-of objectives (`areas`) ------------------------------------------------
    ("objective-area-and-areas", SCEN, 'area = "warsaw"\nvp = 1', 'area = "warsaw"\nareas = ["warsaw", "lublin"]\nvp = 1',
     (SCEN, "areas", ["warsaw", "lublin"], "either `area`", None)),
    ("objective-areas-empty", SCEN, 'area = "warsaw"\nvp = 1', 'areas = []\nvp = 1',
     (SCEN, "areas", [], "empty list", None)),
    ("objective-areas-unknown-area", SCEN, 'area = "warsaw"\nvp = 1', 'areas = ["warsaw", "lubln"]\nvp = 1',
     (SCEN, "areas", "lubln", "unknown area", "did you mean `lublin`?")),
    ("objective-areas-duplicate", SCEN, 'area = "warsaw"\nvp = 1', 'areas = ["warsaw", "lublin", "warsaw"]\nvp = 1',
     (SCEN, "areas", "warsaw", "area listed twice", None)),
    ("unknown-side", SCEN, '[vp]\nside = "polish"', '[vp]\nside = "poles"',
     (SCEN, "side", "poles", "unknown side", None)),
    # --- scenario: keys the engine does not read (audit G F4) ----------------------------------
    ("objective-when-not-implemented", SCEN, 'when = "end"', 'when = "each_round"',
     (SCEN, "when", "each_round", "not implemented", "allowed: end")),
    ("victory-draw-on-tie", SCEN, '[victory]\nkind = "vp"', '[victory]\nkind = "vp"\ndraw_on_tie = true',
     (SCEN, "draw_on_tie", True, "not read by the engine", "remove the key")),
    ("neutral-nation-activated-by-card", SCEN, "[[objective]]",
     '[[special_rule]]\nid = "lit"\nkind = "neutral_nation"\nnation = "lithuanian"\nactivated_by_card = 23\n\n'
     "[[objective]]", (SCEN, "activated_by_card", 23, "activate_nation:<nation>", "remove the key")),
    ("special-rule-misspelt-key", SCEN, "[[objective]]",
     '[[special_rule]]\nid = "lit"\nkind = "neutral_nation"\nnation = "lithuanian"\nmax_distance_from = "minsk"\n'
     "max_distanse = 3\n\n[[objective]]", (SCEN, "max_distanse", 3, "unknown key", "did you mean `max_distance`?")),
    # EatS II.3 (G16): the supply base a neutral nation's side gains once it joins
    ("neutral-nation-supply-base-unknown-area", SCEN, "[[objective]]",
     '[[special_rule]]\nid = "lit"\nkind = "neutral_nation"\nnation = "lithuanian"\nside = "soviet"\n'
     'supply_base = "minks"\n\n[[objective]]', (SCEN, "supply_base", "minks", "unknown area", "did you mean")),
    ("neutral-nation-supply-base-without-side", SCEN, "[[objective]]",
     '[[special_rule]]\nid = "lit"\nkind = "neutral_nation"\nnation = "lithuanian"\nsupply_base = "minsk"\n\n'
     "[[objective]]", (SCEN, "side", None, "`supply_base` is a supply base of the side", None)),
    ("special-rule-key-of-another-kind", SCEN, 'kind = "arrival_check"\nside = "soviet"',
     'kind = "arrival_check"\nside = "soviet"\nmax_distance = 3',
     (SCEN, "max_distance", 3, "unknown key", None)),
    ("arrival-check-misspelt-key", SCEN, "thresholds = [", "threshold = [",
     (SCEN, "threshold", "threshold", "unknown key", "did you mean `thresholds`?")),
    ("arrival-check-blocks-not-gated", SCEN, 'kind = "arrival_check"\nside = "soviet"',
     'kind = "arrival_check"\nside = "soviet"\nblocks = ["ru-4-cd", "ru-3-id"]',
     (SCEN, "blocks", ["ru-4-cd", "ru-3-id"], "not gated: ru-3-id", None)),
    ("arrival-check-area-elsewhere", SCEN, 'kind = "arrival_check"\nside = "soviet"',
     'kind = "arrival_check"\nside = "soviet"\narea = "minsk"',
     (SCEN, "area", "minsk", "arrive elsewhere (zlobin)", None)),
    ("front-restriction-front-any", SCEN, "[[objective]]",
     '[[special_rule]]\nid = "unr"\nkind = "front_restriction"\nnation = "ukrainian-unr"\nfront = "any"\n\n'
     "[[objective]]", (SCEN, "front", "any", "expected north or south", None)),
]


@pytest.mark.parametrize("fname,old,new,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_validation_error(tmp_path, fname, old, new, expected):
    root = copy_fixture(tmp_path)
    edit(root / fname, old, new)
    problems = problems_of(root)
    file, field, value, message, suggestion = expected
    p = find(problems, file, field or None, value, message, suggestion)
    text = str(p)
    assert file in text.replace("\\", "/")
    if field:
        assert f"field '{field}'" in text
    if value is not None:
        assert repr(value) in text
    if suggestion:
        assert suggestion in text


def test_csv_problem_names_the_line(tmp_path):
    root = copy_fixture(tmp_path)
    edit(root / AREAS, "Minsk,Mińsk,27.57,53.90,H3,north,", "Minsk,Mińsk,27.57,53.90,H3,nort,")
    p = find(problems_of(root), AREAS, "front", "nort")
    # line 11 of the file: 1 comment line, the header, 9 rows before minsk
    assert p.entry.startswith("line 11") and "id=minsk" in p.entry


def test_toml_syntax_names_the_line(tmp_path):
    root = copy_fixture(tmp_path)
    edit(root / SCEN, 'name = "Test Offensive"', 'name = "Test Offensive')
    p = find(problems_of(root), SCEN, message="TOML syntax")
    assert p.entry == "line 2"


def test_disconnected_map_names_the_component(tmp_path):
    root = copy_fixture(tmp_path)
    edit(root / LINKS, "kovel,rovno,rail,test fixture\n", "")
    edit(root / LINKS, "rovno,pinsk,road,test fixture\n", "")
    p = find(problems_of(root), LINKS, message="disconnected")
    assert "{rovno}" in p.message


def test_eastern_link_is_exempt_from_stacking(tmp_path):
    # SoE 7.33: the stacking limit does not apply to the Eastern Links
    root = copy_fixture(tmp_path)
    extra = "".join(f'[[deployment]]\nblock = "ru-{i}-id"\narea = "zlobin"\n\n' for i in (5, 6, 7, 8))
    edit(root / SCEN, "[[reinforcement]]", extra + "[[reinforcement]]")
    sc = load_scenario(root / SCEN)
    assert (sc.deployment["area"] == "zlobin").sum() == 5


def test_soviet_reinforcement_in_soviet_held_key_city_is_allowed():
    sc = load_scenario(FIXTURE / SCEN)
    row = sc.reinforcements.set_index("block").loc["ru-3-id"]
    assert row["area"] == "minsk"  # Soviet garrison + blocks at the start


def test_all_problems_reported_together(tmp_path):
    root = copy_fixture(tmp_path)
    edit(root / AREAS, "Minsk,Mińsk,27.57,53.90,H3,north,", "Minsk,Mińsk,27.57,53.90,H3,nort,")
    edit(root / LINKS, "minsk,zlobin", "minsk,zlobn")
    edit(root / SCEN, 'block = "pl-2-id"', 'block = "pl-2-idd"')
    problems = problems_of(root)
    files = {p.file.replace("\\", "/").split("data/")[-1] for p in problems}
    assert {AREAS, LINKS, SCEN} <= files


def test_load_map_raises_with_problems(tmp_path):
    root = copy_fixture(tmp_path)
    edit(root / LINKS, "lublin,kovel,road", "lublin,lublin,road")
    with pytest.raises(SoeInputError) as info:
        load_map(root)
    assert any("self-link" in p.message for p in info.value.problems)


def test_unknown_scenario_name_suggests():
    with pytest.raises(SoeInputError) as info:
        load_scenario("no-such-scenario-xyz")
    assert info.value.problems[0].field == "scenario"


def test_validate_single_files(tmp_path):
    root = copy_fixture(tmp_path)
    out = validate([root / SCEN, root / AREAS, root / "blocks" / "blocks.csv", root / "cards" / "polish.csv"])
    assert len(out) == 4
    edit(root / "cards" / "polish.csv", "enemy_extra_loss:1", "enemy_extra_los:1")
    with pytest.raises(SoeInputError):
        validate([root / "cards" / "polish.csv"])


def test_validate_rejects_unknown_file(tmp_path):
    f = tmp_path / "notes.csv"
    f.write_text("a,b\n1,2\n")
    with pytest.raises(SoeInputError) as info:
        validate([f])
    assert "don't know how to validate" in info.value.problems[0].message


def test_arrival_check_restating_its_reinforcements_is_valid(tmp_path):
    root = copy_fixture(tmp_path)
    edit(root / SCEN, 'kind = "arrival_check"\nside = "soviet"',
         'kind = "arrival_check"\nside = "soviet"\narea = "zlobin"\nblocks = ["ru-4-cd"]')
    sc = load_scenario(root / SCEN)
    assert sc.special_rule("arrival_check")[0]["blocks"] == ["ru-4-cd"]


def test_condition_must_name_an_arrival_check(tmp_path):
    # only an arrival_check rule lets gated reinforcements arrive: any other kind would hold them back forever
    root = copy_fixture(tmp_path)
    edit(root / SCEN, "[[objective]]", '[[special_rule]]\nid = "no-leaders"\nkind = "no_leaders"\n\n[[objective]]')
    edit(root / SCEN, 'condition = "first-cavalry-army"', 'condition = "no-leaders"')
    find(problems_of(root), SCEN, "condition", "no-leaders", "only an arrival_check rule gates reinforcements",
         "arrival_check rules: first-cavalry-army")


def test_files_saved_with_a_byte_order_mark_are_read(tmp_path):
    # audit I D10: Excel's "CSV UTF-8" starts with a BOM: 175 errors ("unknown column '\ufeff# …'"); a TOML
    # with one was "Invalid statement"
    root = copy_fixture(tmp_path)
    for rel in (AREAS, LINKS, "cards/polish.csv", SCEN, "map/grid.toml", "blocks/leaders.toml"):
        path = root / rel
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    ds = load_dataset(root)
    assert ds.game_map.n_areas == 10 and "test-offensive" in ds.scenarios
    validate([root])


def test_copy_under_a_new_name_suggests_setting_the_id(tmp_path):
    # user review: a copy of a scenario under a new name was told only to rename the file back
    root = copy_fixture(tmp_path)
    shutil.copy(root / SCEN, root / "scenarios" / "my-copy.toml")
    p = find(problems_of(root), "scenarios/my-copy.toml", "id", "test-offensive", "differs from the file name")
    assert 'set `id = "my-copy"`' in p.suggestion and "rename the file to `test-offensive.toml`" in p.suggestion


def test_a_missing_key_is_reported_once(tmp_path):
    # user review: a deployment without its area got "missing required key" and "expected an area id" too
    root = copy_fixture(tmp_path)
    edit(root / SCEN, 'block = "pl-1-id"\narea = "warsaw"\n', 'block = "pl-1-id"\n')
    about_area = [p for p in problems_of(root) if p.field == "area" and "deployment[0]" in p.entry]
    assert [p.message for p in about_area] == ["missing required key"]


def test_validate_takes_a_partial_rules_overlay(tmp_path):
    # user review: `validate r1.toml` on an overlay that `odds --rules` accepts: "not a complete ruleset"
    f = tmp_path / "r1.toml"
    f.write_text("[combat]\nflank_penalty = 2\n")
    (line,) = validate([f])
    assert line.endswith("r1.toml: rules overlay, valid over soe")
    f.write_text('[combat]\nflank_penalty = "x"\n')
    with pytest.raises(SoeInputError) as info:
        validate([f])
    assert [(p.field, p.message) for p in info.value.problems] == [("combat.flank_penalty", "expected integer")]


def test_validate_takes_a_sweep_config(tmp_path):
    # user review: `validate sw.toml` said "don't know how to validate this file"
    f = tmp_path / "sw.toml"
    body = ('scenarios = ["tutorial"]\ngames_per_chunk = 20\nchunks = 3\nseed = 7\n'
            '[[pairs]]\npolish = "{p}"\nsoviet = "random"\n')
    f.write_text(body.format(p="balanced"))
    (line,) = validate([f])
    assert line.endswith("sw.toml: sweep config, 3 chunks of 20 games")
    f.write_text(body.format(p="balancd"))
    with pytest.raises(SoeInputError) as info:
        validate([f])
    (p,) = info.value.problems
    assert p.field == "polish" and p.value == "balancd" and "did you mean `balanced`?" in p.suggestion


# --- a copy of the built-in data given by path (user review "replacing the built-in data") --------------

BUILTIN = Path(__file__).parent.parent / "data"


def copy_builtin(tmp_path: Path) -> Path:
    root = tmp_path / "copy"
    shutil.copytree(BUILTIN, root)
    return root


def drop_lines(path: Path, prefixes: tuple[str, ...]) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(x for x in lines if not x.startswith(prefixes)), encoding="utf-8")


def test_a_copys_rulesets_take_their_base_from_the_copy(tmp_path):
    # finding 1: `base = "soe"` in a copy's rules/eats.toml loaded the built-in soe.toml ("expected the ids
    # 1..55" for a copy with 50-card decks and deck_size = 50; its edits ignored under --ruleset eats)
    from soe_sim.rules import load_rules

    root = copy_builtin(tmp_path)
    for side in ("polish", "soviet"):
        drop_lines(root / "cards" / f"{side}.csv", tuple(f"{i}," for i in range(51, 56)))
    edit(root / "rules" / "soe.toml", "deck_size = 55", "deck_size = 50")
    edit(root / "rules" / "soe.toml", "max_level = 5", "max_level = 4")
    assert len(validate([root, root / "rules" / "eats.toml", root / "rules" / "no-leader-abilities.toml"])) == 3
    rules = load_rules(root / "rules" / "eats.toml")
    assert rules["cards.deck_size"] == 50 and rules["initiative.max_level"] == 4
    assert [Path(f).resolve() for f in rules.files] == [root / "rules" / "soe.toml", root / "rules" / "eats.toml"]
    # named as under $SOE_SIM_DATA ("eats"), not as an overlay of its own ("soe+soe.toml")
    assert rules.label == "eats" and load_rules(root / "rules" / "soe.toml").label == "soe"
    assert load_rules("eats")["cards.deck_size"] == 55  # the built-in data is untouched


def test_a_copys_ruleset_base_missing_from_the_copy_is_an_error(tmp_path):
    from soe_sim.rules import load_rules

    root = copy_builtin(tmp_path)
    (root / "rules" / "soe.toml").rename(root / "rules" / "base.toml")
    with pytest.raises(SoeInputError) as info:  # never the built-in soe.toml in silence
        load_rules(root / "rules" / "eats.toml")
    (p,) = info.value.problems
    assert p.file.endswith("eats.toml") and (p.entry, p.field, p.value) == ("meta", "base", "soe")
    assert "unknown ruleset in" in p.message and "base" in p.suggestion
    (root / "rules" / "base.toml").rename(root / "rules" / "soe.toml")
    edit(root / "rules" / "soe.toml", 'id = "soe"\n', 'id = "soe"\nbase = "eats"\n')
    with pytest.raises(SoeInputError, match="no cycles"):
        load_rules(root / "rules" / "eats.toml")


def test_a_deleted_card_is_one_error_naming_the_deck_file(tmp_path):
    # finding 1/6: "the deck should have 55 cards" plus "data/cards/polish.csv: expected the ids 1..55"
    root = copy_builtin(tmp_path)
    drop_lines(root / "cards" / "polish.csv", ("55,",))
    (p,) = problems_of(root)
    assert p.file.endswith("copy/cards/polish.csv") and "missing ids 55" in p.message
    # a ruleset checked on its own names the copy's deck, not the built-in path
    (p,) = problems_of(root / "rules" / "soe.toml")
    assert Path(p.file) == root / "cards" / "polish.csv" and "expected the ids 1..55" in p.message


# --- one mistake, one problem (finding 6) -----------------------------------------------------------------

def test_a_header_missing_a_column_is_one_problem(tmp_path):
    # 1,308 lines: every row "wrong number of fields", every link and scenario area "unknown"
    root = copy_fixture(tmp_path)
    edit(root / AREAS, ",name_pl,", ",")
    (p,) = problems_of(root)
    assert p.file.endswith(AREAS) and p.entry == "line 2 (header)"
    assert "the header names 16 columns but every row has 17 fields" in p.message
    assert "is the header missing `name_pl`?" in p.suggestion


def test_a_duplicate_area_row_is_not_a_disconnected_map(tmp_path):
    root = copy_fixture(tmp_path)
    row = next(x for x in (root / AREAS).read_text().splitlines() if x.startswith("minsk,"))
    (root / AREAS).write_text((root / AREAS).read_text() + row + "\n")
    (p,) = problems_of(root)
    assert p.field == "id" and "duplicate area id" in p.message


def test_a_bad_boolean_is_one_problem(tmp_path):
    # also "a key city must allow a garrison (got False)" and "garrison in an area that is not a key city"
    root = copy_fixture(tmp_path)
    edit(root / AREAS, "H3,north,russia,2,true,", "H3,north,russia,2,maybe,")
    (p,) = problems_of(root)
    assert (p.field, p.value, p.message) == ("garrison", "maybe", "expected true or false")


def test_a_semicolon_separated_csv_says_so(tmp_path):
    root = copy_fixture(tmp_path)
    (root / LINKS).write_text((root / LINKS).read_text().replace(",", ";"))
    (p,) = problems_of(root)
    assert p.file.endswith(LINKS) and "separated by semicolons" in p.message and "comma" in p.suggestion


# --- messages (finding 8) ---------------------------------------------------------------------------------

def test_coordinates_outside_the_map_are_reported(tmp_path):
    # swapped lat/lon was "grid square contradicts the coordinates …; the coordinates are in K1"
    root = copy_fixture(tmp_path)
    edit(root / AREAS, "Minsk,Mińsk,27.57,53.90,", "Minsk,Mińsk,53.90,27.57,")
    (p,) = problems_of(root)
    assert (p.field, p.value) == ("lon", 53.9) and "outside the map" in p.message
    assert p.suggestion == "are lon and lat swapped?"


def test_a_rules_file_syntax_error_reads_as_any_other(tmp_path):
    # a rules file's syntax error is worded and located as a scenario's ("line 12: TOML syntax error: …")
    from soe_sim.rules import load_rules

    f = tmp_path / "r.toml"
    f.write_text("[combat]\nflank_penalty = \n")
    for call in (lambda: load_rules(f), lambda: validate([f])):
        with pytest.raises(SoeInputError) as info:
            call()
        (p,) = info.value.problems
        assert p.entry == "line 2" and p.message.startswith("TOML syntax error: ") and "(got" not in str(p)


def test_a_problem_in_a_copys_base_ruleset_is_reported_once(tmp_path):
    # its rulesets with base = "soe" (eats, no-leader-abilities) are not checked over it: "eats.toml: field
    # 'combat.flank_penalty': expected string (got 2)" only repeated the base's problem
    root = copy_builtin(tmp_path)
    edit(root / "rules" / "soe.toml", "\nflank_penalty = 2\n", '\nflank_penalty = "two"\n')
    (p,) = problems_of(root)
    assert p.file.endswith("copy/rules/soe.toml") and (p.field, p.value) == ("combat.flank_penalty", "two")
