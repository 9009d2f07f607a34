"""Red Star/White Eagle odds (seed 003, section 9).

The real CRT and ZOC Retreat Table are not in the seed text: the shipped partial table answers the
rulebook's worked examples and must refuse everything else; the procedure itself is tested against
a brute-force oracle on the test-only fixture table ``tests/fixtures/rswe_crt_fixture.toml``.
"""
from __future__ import annotations

import json
import math
import random
import tomllib
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from soe_sim.cli import main
from soe_sim.errors import SoeInputError
from soe_sim.systems import rswe_odds, rswe_resolve, zoc_retreat_result

FIXTURE = Path(__file__).parent / "fixtures" / "rswe_crt_fixture.toml"


def run_json(capsys, *args):
    assert main(["odds", "--system", "rswe", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def run_error(capsys, *args) -> str:
    assert main(["odds", "--system", "rswe", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("error: ")
    return err


# -- worked examples with the shipped partial table ---------------------------------------------

def test_jaroslaw_example_6_vs_1_in_city_roll_2():
    # RSWE 9.3 illustration: 6-1, city -1, one defence factor +1, roll 2 -> "X" and "3".
    r = rswe_resolve(6, 1, 2, terrain="city", attacker="polish")
    assert r["column"] == "6:1" and r["drm"] == 0 and r["modified_roll"] == 2
    assert r["result"] == "X 3"
    assert r["defender_eliminated"] and r["defender_losses"] == 1
    assert r["attacker_losses"] == 1  # "lose attack factors equal to the total defense factors lost ('1')"
    assert r["advance_mp"] == 3


def test_jaroslaw_example_cli(capsys):
    doc = run_json(capsys, "--attack", "6", "--defense", "1", "--terrain", "city", "--attacker", "polish",
                   "--roll", "2")
    assert doc["result"] == "X 3" and doc["column"] == "6:1" and doc["advance_mp"] == 3


def test_exchange_example_7_vs_3_roll_6():
    # RSWE 9.12: 7:3 reduces to 2:1; a 6 calls for an exchange: 3 defence factors lost, 3 attack
    # factors to remove. The advance number is not stated -> None.
    r = rswe_resolve(7, 3, 6, attacker="polish")
    assert r["column"] == "2:1" and r["result"].startswith("X")
    assert (r["attacker_losses"], r["defender_losses"]) == (3, 3)
    assert r["advance_mp"] is None


def test_zoc_retreat_example():
    # RSWE 9.14 example: delay factors 1 + 1 + 0 -> column "2-3"; roll 4, supplied -> no losses.
    assert zoc_retreat_result(1 + 1 + 0, 4) == "—"
    assert zoc_retreat_result(0, 1) == "—"  # entered no enemy ZOC: no roll
    with pytest.raises(SoeInputError, match="2-3 is incomplete"):
        zoc_retreat_result(2, 1)
    with pytest.raises(SoeInputError, match="no column for a delay-factor total of 5"):
        zoc_retreat_result(5, 4)


def test_odds_rounding_examples():
    fx = dict(crt=FIXTURE)
    assert rswe_odds(26, 9, **fx).column == "2:1"  # RSWE 9.0
    assert rswe_odds(7, 3, **fx).column == "2:1"  # RSWE 9.12
    assert rswe_odds(3, 7, **fx).column == "1:3"  # defender's favour below 1:1 too


def test_missing_column_is_a_clear_error(capsys):
    with pytest.raises(SoeInputError) as exc:
        rswe_odds(10, 3)
    msg = str(exc.value)
    assert "column 3:1 is missing" in msg and "--crt FILE" in msg
    err = run_error(capsys, "--attack", "10", "--defense", "3")
    assert "3:1 is missing" in err and "--crt" in err


def test_incomplete_column_is_a_clear_error(capsys):
    err = run_error(capsys, "--attack", "6", "--defense", "1", "--terrain", "city")
    assert "column 6:1 is incomplete" in err and "known: 2" in err


# -- procedure on the fixture table -------------------------------------------------------------

def test_warsaw_across_vistula_doubles_and_minus_two():
    # RSWE 18.0: attack into Warsaw across the Vistula -> defence doubled and 2 subtracted.
    r = rswe_odds(32, 4, terrain="city", river=True, fortified=True, crt=FIXTURE)
    assert r.setup.defense_for_odds == 8 and r.column == "4:1" and r.drm == -2
    six = r.outcomes.set_index("die").loc[6]
    assert six["modified_roll"] == 4 and six["result"] == "X 3"
    # losses at face value (9.12.2): the exchange costs the attacker 4 factors, not 8
    assert (six["attacker_losses"], six["defender_losses"]) == (4, 4)


def test_one_factor_before_doubling_and_die_clamp():
    r = rswe_odds(10, 1, fortified=True, crt=FIXTURE)  # 10 vs 2 -> 5:1, +1 (one factor before doubling)
    assert r.column == "5:1" and r.drm == 1
    assert list(r.outcomes["modified_roll"]) == [2, 3, 4, 5, 6, 6]
    low = rswe_odds(4, 4, terrain="marsh", river=True, attacker_unsupplied=True, crt=FIXTURE)
    assert low.drm == -3 and list(low.outcomes["modified_roll"]) == [1, 1, 1, 1, 2, 3]


def test_trench_only_for_russians_and_supply():
    ru = rswe_odds(8, 4, trench=True, crt=FIXTURE)
    assert ru.drm == -1
    pl = rswe_odds(8, 4, trench=True, attacker="polish", crt=FIXTURE)
    assert pl.drm == 0 and any("Polish" in m["name"] for m in pl.modifiers)
    assert rswe_odds(8, 4, defender_unsupplied=True, attacker_unsupplied=True, crt=FIXTURE).drm == 0
    assert rswe_odds(8, 4, attacker="polish", kosciuszko=True, crt=FIXTURE).drm == 1


def test_cavalry_charge_and_half_losses():
    # 4 infantry + charge factor 12 -> 16 vs 8 = 2:1; A½E on a 1:3 uses the charge factor (9.10.6)
    r = rswe_odds(4, 8, charge=12, crt=FIXTURE)
    assert r.setup.attack_total == 16 and r.column == "2:1"
    weak = rswe_odds(0, 9, charge=3, crt=FIXTURE)  # 3 vs 9 = 1:3; die 1 -> A½E = ceil(3/2) = 2
    assert weak.outcomes.loc[0, "result"] == "A½E" and weak.outcomes.loc[0, "attacker_losses"] == 2


def test_voluntary_odds_reduction():
    assert rswe_odds(20, 4, odds="3:1", crt=FIXTURE).column == "3:1"
    with pytest.raises(SoeInputError, match="only reduce"):
        rswe_odds(20, 4, odds="6:1", crt=FIXTURE)


def test_fixture_beyond_highest_uses_highest():
    r = rswe_odds(40, 2, crt=FIXTURE)
    assert r.odds == "20:1" and r.column == "6:1"
    assert rswe_odds(1, 9, crt=FIXTURE).column == "1:3"


def test_zoc_retreat_distribution_and_supply():
    r = rswe_odds(7, 3, defender_delay=[1, 1, 0], crt=FIXTURE)
    z = r.zoc["defender"]
    assert sum(z.values()) == pytest.approx(1.0)
    assert z["no_retreat"] == pytest.approx(3 / 6)
    # D1 (rolls 3, 5) -> total 1 -> ½E on 1; D2 (roll 4) -> total 2 -> E on 1, ½E on 2
    assert z["E"] == pytest.approx(1 / 36) and z["½E"] == pytest.approx(3 / 36)
    worse = rswe_odds(7, 3, defender_delay="1,1,0", defender_unsupplied=True,
                      defender_retreat_ends_unsupplied=True, crt=FIXTURE).zoc["defender"]
    assert worse["E"] > z["E"]
    with pytest.raises(SoeInputError, match="retreats 2 hexes"):
        rswe_odds(7, 3, defender_delay=[1], crt=FIXTURE)


# -- brute-force oracle on the fixture ----------------------------------------------------------

def naive(attack, defense, *, charge=0, terrain="clear", river=False, trench=False, fortified=False,
          attacker="russian", attacker_unsupplied=False, defender_unsupplied=False):
    """The RSWE 9.0 procedure written out longhand with Fractions, reading the fixture directly."""
    with open(FIXTURE, "rb") as fh:
        crt = tomllib.load(fh)["crt"]["columns"]
    A = attack + charge
    D = defense * (2 if fortified else 1)
    ratio = Fraction(A, D)
    label = f"{math.floor(ratio)}:1" if ratio >= 1 else f"1:{math.ceil(1 / ratio)}"
    order = ["1:3", "1:2", "1:1", "2:1", "3:1", "4:1", "5:1", "6:1"]
    if label not in order:
        label = "6:1" if ratio >= 1 else "1:3"
    drm = -1 if terrain in ("marsh", "forest", "rough", "city", "intermittent-lake") else 0
    drm += -1 if river else 0
    drm += -1 if trench and attacker == "russian" else 0
    drm += 1 if defense == 1 else 0
    drm += 1 if defender_unsupplied else 0
    drm += -1 if attacker_unsupplied else 0
    half = lambda x: -(-x // 2)  # noqa: E731
    joint = Counter()
    for roll in range(1, 7):
        m = min(6, max(1, roll + drm))
        codes = crt[label][m - 1].split()
        a = d = 0
        for c in codes:
            if c == "DE":
                d = defense
            elif c == "D½E":
                d = half(defense)
            elif c == "X":
                a, d = defense, defense
            elif c == "½X":
                a = d = half(defense)
            elif c == "A½E":
                a = half(A)
            elif c == "A½X":
                a = half(defense)
        joint[(a, d)] += Fraction(1, 6)
    return label, joint


def cases(n=300, seed=7):
    rng = random.Random(seed)
    for _ in range(n):
        attacker = rng.choice(["russian", "polish"])
        fortified = attacker == "russian" and rng.random() < 0.2
        kw = dict(terrain=rng.choice(["clear", "town", "marsh", "forest", "rough", "city", "intermittent-lake"]),
                  river=rng.random() < 0.3, trench=rng.random() < 0.3, fortified=fortified, attacker=attacker,
                  attacker_unsupplied=rng.random() < 0.2, defender_unsupplied=rng.random() < 0.2,
                  charge=0 if fortified else rng.choice([0, 0, 0, 6, 12]))
        yield rng.randint(1, 40), rng.randint(1, 12), kw


@pytest.mark.parametrize("attack,defense,kw", list(cases()))
def test_exact_matches_brute_force(attack, defense, kw):
    r = rswe_odds(attack, defense, crt=FIXTURE, **kw)
    label, want = naive(attack, defense, **kw)
    assert r.column == label
    got = {(int(x.attacker_losses), int(x.defender_losses)): x.p for x in r.joint.itertuples()}
    assert set(got) == set(want)
    for key, p in want.items():
        assert got[key] == pytest.approx(float(p), abs=1e-12)


# -- CLI output ---------------------------------------------------------------------------------

def test_cli_json_keys_and_formats(capsys, tmp_path):
    doc = run_json(capsys, "--attack", "7", "--defense", "3", "--crt", str(FIXTURE), "--defender-delay", "1,1,0")
    for key in ("column", "odds", "drm", "modifiers", "loss_distribution", "attacker_losses_mean",
                "defender_losses_mean", "p_defender_eliminated", "p_hex_vacated", "result_distribution",
                "advance_distribution", "zoc_retreat", "results_by_die", "notes"):
        assert key in doc
    assert set(doc["loss_distribution"][0]) == {"attacker_losses", "defender_losses", "p"}
    assert sum(r["p"] for r in doc["result_distribution"]) == pytest.approx(1.0)
    png = tmp_path / "rswe.png"
    assert main(["odds", "--system", "rswe", "--attack", "7", "--defense", "3", "--crt", str(FIXTURE),
                 "--plot", str(png)]) == 0
    assert "CRT column 2:1" in capsys.readouterr().out and png.stat().st_size > 0
    assert main(["odds", "--system", "rswe", "--attack", "7", "--defense", "3", "--crt", str(FIXTURE),
                 "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("metric,description,exact")


# -- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize("args,needle", [
    (["--attack", "5", "--defense", "0"], "--defense"),
    (["--defense", "3"], "--attack"),
    (["--attack", "5"], "--defense"),
    (["--attack", "5", "--defense", "2", "--terrain", "forrest"], "did you mean `forest`"),
    (["--attack", "5", "--defense", "2", "--fortified", "--attacker", "polish"], "9.6"),
    (["--attack", "5", "--defense", "2", "--fortified", "--charge", "4"], "9.10.3"),
    (["--attack", "5", "--defense", "2", "--kosciuszko"], "24.7.1"),
    (["--attack", "5", "--defense", "2", "--odds", "three"], "odds column"),
    (["--attack", "5", "--defense", "2", "--defender-delay", "a,b"], "--defender-delay"),
    (["--attack", "5", "--defense", "2", "--crt", "/nonexistent.toml"], "not found"),
    (["--attack", "5", "--defense", "2", "--roll", "7"], "1..6"),
])
def test_bad_input_is_one_line_exit_2(capsys, args, needle):
    assert needle in run_error(capsys, *args)


def test_bad_crt_file(tmp_path, capsys):
    f = tmp_path / "crt.toml"
    f.write_text('[crt]\ncomplete = true\n[crt.columns]\n"2:1" = ["Q", "—", "—", "—", "—", "—"]\n')
    assert "unknown CRT result code" in run_error(capsys, "--attack", "4", "--defense", "2", "--crt", str(f))
    f.write_text('[crt]\ncomplete = true\n[crt.columns]\n"2:1" = ["—", "—"]\n')
    assert "expected 6 cells" in run_error(capsys, "--attack", "4", "--defense", "2", "--crt", str(f))
