"""Soyuz 81 odds (seed 001, section 9): rulebook examples, brute-force oracle, options, CLI, errors."""
from __future__ import annotations

import json
import math
import random
from collections import Counter
from fractions import Fraction

import pytest

from soe_sim.cli import main
from soe_sim.errors import SoeInputError
from soe_sim.systems import soyuz81_odds, soyuz81_table

# The CRT exactly as printed in seed 001 (lines 1247-1262): rows are die rolls.
SEED_CRT = """\
Odds> 1:3 1:2 1:1 2:1 3:1 4:1 5:1
1 1/1 1/1 0/2 0/3 0/4 0/5 0/6
2 2/0 1/1 1/1 0/2 0/3 0/4 0/5
3 2/0 2/1 2/1 1/1 0/2 0/3 0/4
4 2/0 2/0 2/1 2/1 1/1 0/2 0/3
5 2/0 2/0 2/0 2/1 2/1 1/1 0/2
6 2/0 2/0 2/0 2/1 2/1 2/1 1/1
"""


def seed_crt() -> dict[str, list[tuple[int, int]]]:
    lines = SEED_CRT.splitlines()
    heads = lines[0].split()[1:]
    cols: dict[str, list] = {h: [] for h in heads}
    for line in lines[1:]:
        cells = line.split()[1:]
        for h, c in zip(heads, cells):
            a, d = c.split("/")
            cols[h].append((int(a), int(d)))
    return cols


def run_json(capsys, *args):
    assert main(["odds", "--system", "soyuz81", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def run_error(capsys, *args) -> str:
    assert main(["odds", "--system", "soyuz81", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("error: ")
    return err


# -- worked examples of the rulebook ------------------------------------------------------------

def test_example_26_vs_7_is_3_1(capsys):
    assert soyuz81_odds(26, 7).column == "3:1"  # S81 9.6
    doc = run_json(capsys, "--attack", "26", "--defense", "7")
    assert doc["column"] == "3:1"
    assert {"column", "loss_distribution", "attacker_losses_mean", "defender_losses_mean"} <= set(doc)
    assert set(doc["loss_distribution"][0]) == {"attacker_losses", "defender_losses", "p"}
    assert sum(r["p"] for r in doc["loss_distribution"]) == pytest.approx(1.0)


def test_example_5_vs_11_is_1_3():
    r = soyuz81_odds(5, 11)  # S81 9.7: 11/5 = 2.2 -> 3 -> 1:3
    assert r.base_odds == "1:3" and r.column == "1:3"


def test_example_six_at_3_1_gives_2_1():
    r = soyuz81_odds(26, 7)  # S81 9.16
    row = r.outcomes.set_index("die").loc[6]
    assert row["result"] == "2/1"
    assert (row["attacker_losses"], row["defender_losses"]) == (2, 1)


def test_example_concentric_and_river_net_zero():
    r = soyuz81_odds(8, 8, concentric=True, river=True)  # S81 9.9 example: played on 1:1
    assert r.net_shift == 0 and r.column == "1:1"
    assert sorted(s["columns"] for s in r.shifts) == [-1, 1]


def test_hia_example_0_3_against_one_step_costs_one_sap():
    # S81 9.14 example: a high intensity 0/3 against one Polish step -> 1 SAP.
    # 12 vs 2 = 6:1, city 2L -> 4:1; die 4 gives 0/2, +1 = 0/3.
    r = soyuz81_odds(12, 2, terrain="city", high_intensity=True, defender_steps=1)
    row = r.outcomes.set_index("die").loc[4]
    assert row["result"] == "0/2" and row["defender_losses"] == 1 and row["sap_cost"] == 1
    assert r.sap_cost_mean == pytest.approx(1.0)  # every result now costs a Polish step
    assert r.p_hex_cleared == pytest.approx(1.0)


@pytest.mark.parametrize("column,att,dfn", [
    ("1:3", Fraction(11, 6), Fraction(1, 6)), ("1:2", Fraction(5, 3), Fraction(1, 2)),
    ("1:1", Fraction(3, 2), Fraction(5, 6)), ("2:1", Fraction(7, 6), Fraction(3, 2)),
    ("3:1", Fraction(5, 6), Fraction(2)), ("4:1", Fraction(1, 2), Fraction(8, 3)),
    ("5:1", Fraction(1, 6), Fraction(7, 2)),
])
def test_expected_losses_per_column(column, att, dfn):
    a, d = column.split(":")
    r = soyuz81_odds(int(a) * 6, int(d) * 6)
    assert r.column == column
    assert r.attacker_losses_mean == pytest.approx(float(att))
    assert r.defender_losses_mean == pytest.approx(float(dfn))


def test_equal_factors_is_1_1_and_weaker_is_at_least_1_2():
    assert soyuz81_odds(7, 7).column == "1:1"
    assert soyuz81_odds(10, 11).column == "1:2"


# -- brute-force oracle -------------------------------------------------------------------------

SEQ = [f"1:{k}" for k in range(100, 1, -1)] + [f"{k}:1" for k in range(1, 101)]
EXTRAPOLATED = {"6:1": [(0, 7), (0, 6), (0, 5), (0, 4), (0, 3), (0, 2)],
                "7:1": [(0, 8), (0, 7), (0, 6), (0, 5), (0, 4), (0, 3)]}


def naive(attack, defense, *, terrain="clear", river=False, concentric=False, airpower=0,
          attacker="soviet", high_intensity=False, attacker_steps=None, defender_steps=None,
          limits="after", beyond_table="clamp"):
    """Straight from the rulebook text: Fractions, label lists, one die face at a time."""
    crt = seed_crt()
    if Fraction(attack) >= Fraction(defense):
        label = f"{math.floor(Fraction(attack, defense))}:1"
    else:
        label = f"1:{math.ceil(Fraction(defense, attack))}"
    net = {"clear": 0, "forest": 0, "mountain": -1, "city": -2}[terrain]
    net += -1 if river else 0
    net += 1 if concentric else 0
    net += airpower if attacker == "soviet" else -airpower
    pos = SEQ.index(label)
    lo, hi = SEQ.index("1:3"), SEQ.index("7:1")
    if limits == "before":
        pos = min(max(pos, lo - 1), hi + 1)
        pos = min(max(pos + net, lo - 1), hi + 1)
    else:
        pos += net
    if pos > hi:
        cells = [(0, 6)] * 6
    elif pos < lo:
        cells = [(2, 0)] * 6
    elif SEQ[pos] in crt:
        cells = crt[SEQ[pos]]
    else:
        cells = crt["5:1"] if beyond_table == "clamp" else EXTRAPOLATED[SEQ[pos]]
    joint = Counter()
    for a, d in cells:
        if high_intensity:
            d += 1
        if defender_steps is not None:
            d = min(d, defender_steps)
        if attacker_steps is not None:
            a = min(a, attacker_steps)
        joint[(a, d)] += Fraction(1, 6)
    return joint


def cases(n=400, seed=20240601):
    rng = random.Random(seed)
    for _ in range(n):
        terrain = rng.choice(["clear", "forest", "mountain", "city"])
        attacker = rng.choice(["soviet", "polish"])
        kw = dict(terrain=terrain, attacker=attacker, river=rng.random() < 0.4,
                  concentric=terrain != "city" and rng.random() < 0.4, airpower=rng.choice([0, 0, 1, 2, 3]),
                  high_intensity=terrain == "city" and attacker == "soviet" and rng.random() < 0.5,
                  attacker_steps=rng.choice([None, 1, 2, 4, 10]), defender_steps=rng.choice([None, 1, 2, 3, 9]),
                  limits=rng.choice(["after", "before"]), beyond_table=rng.choice(["clamp", "extrapolate"]))
        yield rng.randint(1, 60), rng.randint(1, 30), kw


@pytest.mark.parametrize("attack,defense,kw", list(cases()))
def test_exact_matches_brute_force(attack, defense, kw):
    r = soyuz81_odds(attack, defense, **kw)
    want = naive(attack, defense, **kw)
    got = {(int(x.attacker_losses), int(x.defender_losses)): x.p for x in r.joint.itertuples()}
    assert set(got) == set(want)
    for key, p in want.items():
        assert got[key] == pytest.approx(float(p), abs=1e-12)
    assert r.attacker_losses_mean == pytest.approx(float(sum(a * p for (a, _), p in want.items())))
    assert r.defender_losses_mean == pytest.approx(float(sum(d * p for (_, d), p in want.items())))


# -- options: limits, 6:1/7:1, airpower, optional rules -----------------------------------------

def test_limits_before_and_after_shifts():
    # raw 1:5 with 2R: after -> 1:3; before -> "<1:3" pseudo-column then 2R -> 1:2.
    assert soyuz81_odds(2, 10, airpower=2).column == "1:3"
    assert soyuz81_odds(2, 10, airpower=2, limits="before").column == "1:2"
    # raw 12:1 in a city: after -> 10:1 -> automatic 0/6; before -> ">7:1" then 2L -> 6:1 (read on 5:1).
    after = soyuz81_odds(12, 1, terrain="city")
    assert after.column == ">7:1" and after.resolution.kind == "automatic"
    assert set(after.outcomes["result"]) == {"0/6"}
    before = soyuz81_odds(12, 1, terrain="city", limits="before")
    assert before.final_odds == "6:1" and before.column == "5:1"
    assert set(soyuz81_odds(1, 9).outcomes["result"]) == {"2/0"}  # 1:9 < 1:3


def test_beyond_table_options(tmp_path):
    clamp = soyuz81_odds(6, 1)
    assert clamp.final_odds == "6:1" and clamp.column == "5:1" and clamp.resolution.kind == "clamped"
    assert any("5:1" in n for n in clamp.notes())
    ext = soyuz81_odds(7, 1, beyond_table="extrapolate")
    assert ext.column == "7:1" and ext.resolution.kind == "extrapolated"
    assert ext.outcomes["result"].iloc[0] == "0/8"
    assert any("HYPOTHETICAL" in n for n in ext.notes())
    f = tmp_path / "cols.toml"
    f.write_text('[crt]\n"6:1" = ["0/6","0/6","0/5","0/4","0/3","0/2"]\n"7:1" = ["0/6","0/6","0/6","0/5","0/4","0/3"]\n')
    user = soyuz81_odds(13, 2, beyond_table=f"columns:{f}")
    assert user.column == "6:1" and user.resolution.kind == "user"
    assert list(user.outcomes["result"]) == ["0/6", "0/6", "0/5", "0/4", "0/3", "0/2"]
    bad = tmp_path / "bad.toml"
    bad.write_text('[crt]\n"6:1" = ["0/6","0/6","0/5","0/4","0/3","0/2"]\n')
    with pytest.raises(SoeInputError, match="7:1"):
        soyuz81_odds(13, 2, beyond_table=f"columns:{bad}")
    printed = tmp_path / "printed.toml"
    printed.write_text('[crt]\n"3:1" = ["0/6","0/6","0/5","0/4","0/3","0/2"]\n')
    with pytest.raises(SoeInputError, match="only the columns missing"):
        soyuz81_odds(13, 2, beyond_table=f"columns:{printed}")


def test_airpower_direction_and_optional_forest_halving():
    assert soyuz81_odds(4, 4, airpower=2).column == "3:1"  # Soviet attack: 2R (S81 7.3)
    assert soyuz81_odds(4, 4, airpower=1, attacker="polish").column == "1:2"  # Polish attack: 1L
    # optional 10.2: in forest two markers count as one; an odd one is dropped
    assert soyuz81_odds(4, 4, airpower=3, terrain="forest", optional_air_forest=True).column == "2:1"
    assert soyuz81_odds(4, 4, airpower=3, terrain="forest").column == "4:1"
    assert soyuz81_odds(4, 4, airpower=2, attacker="polish", attacker_in_forest=True,
                        optional_air_forest=True).column == "1:2"


def test_optional_forest_and_spetsnaz():
    assert soyuz81_odds(4, 4, terrain="forest").column == "1:1"  # S81 9.11: no effect
    assert soyuz81_odds(4, 4, terrain="forest", optional_forest=True).column == "1:2"  # 10.1
    assert soyuz81_odds(12, 4, terrain="city", spetsnaz=True).column == "2:1"  # 3:1 - 2L + 1R


def test_losses_capped_only_with_steps():
    free = soyuz81_odds(50, 10)  # 5:1: die 1 -> 0/6
    assert free.outcomes["defender_losses"].max() == 6
    assert free.p_hex_cleared is None
    capped = soyuz81_odds(50, 10, defender_steps=2, attacker_steps=1)
    assert capped.outcomes["defender_losses"].max() == 2
    assert capped.p_hex_cleared == pytest.approx(5 / 6)  # only die 6 (1/1) leaves a step
    assert capped.p_attacker_eliminated == pytest.approx(1 / 6)


def test_table_rows_and_cli(capsys, tmp_path):
    t = soyuz81_table()
    assert set(t["shift"]) == set(range(-3, 4))
    row = t[(t["base_odds"] == "3:1") & (t["shift"] == 0)].iloc[0]
    assert row["column"] == "3:1" and row["defender_losses_mean"] == pytest.approx(2.0)
    doc = run_json(capsys, "--table")
    assert doc["system"] == "soyuz81" and len(doc["table"]) == len(t)
    png = tmp_path / "table.png"
    assert main(["odds", "--system", "soyuz81", "--table", "--plot", str(png)]) == 0
    assert "base_odds" in capsys.readouterr().out and png.stat().st_size > 0


def test_cli_table_json_csv_and_plot(capsys, tmp_path):
    png = tmp_path / "odds.png"
    assert main(["odds", "--system", "soyuz81", "--attack", "26", "--defense", "7", "--concentric",
                 "--river", "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "CRT column 3:1" in out and png.stat().st_size > 0
    assert main(["odds", "--system", "soyuz81", "--attack", "26", "--defense", "7", "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("metric,description,exact")
    doc = run_json(capsys, "--attack", "20", "--defense", "4", "--city", "--high-intensity",
                   "--defender-steps", "2", "--attacker-steps", "3")
    assert doc["column"] == "3:1" and doc["inputs"]["terrain"] == "city"
    assert sum(r["p"] for r in doc["sap_cost_distribution"]) == pytest.approx(1.0)
    assert max(r["defender_losses"] for r in doc["loss_distribution"]) <= 2
    assert doc["p_hex_cleared"] is not None


def test_plot_returns_figure():
    import matplotlib.figure

    fig = soyuz81_odds(26, 7, defender_steps=4).plot()
    assert isinstance(fig, matplotlib.figure.Figure)


# -- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize("args,needle", [
    (["--attack", "5", "--defense", "0"], "--defense"),
    (["--attack", "0", "--defense", "3"], "--attack"),
    (["--attack", "5", "--defense", "3", "--terrain", "mountian"], "did you mean `mountain`"),
    (["--attack", "5", "--defense", "3", "--terrain", "swamp"], "unknown terrain"),
    (["--attack", "5", "--defense", "3", "--city", "--concentric"], "concentric"),
    (["--attack", "5", "--defense", "3", "--high-intensity"], "9.14"),
    (["--attack", "5", "--defense", "3", "--city", "--attacker", "polish", "--high-intensity"], "9.14"),
    (["--attack", "5", "--defense", "3", "--spetsnaz"], "7.5"),
    (["--attack", "5", "--defense", "3", "--beyond-table", "guess"], "--beyond-table"),
    (["--attack", "5", "--defense", "3", "--beyond-table", "columns:/nonexistent.toml"], "not found"),
    (["--attack", "5", "--defense", "3", "--limits", "during"], "--limits"),
    (["--attack", "5", "--defense", "3", "--airpower", "-1"], "--airpower"),
    (["--attack", "5", "--defense", "3", "--attacker", "german"], "attacking side"),
    (["--attack", "5", "--defense", "3", "--terrain", "mountain", "--city"], "--city"),
    (["--defense", "3"], "--attack"),
    (["--attack", "5", "--defense", "3", "--defender-steps", "0"], "--defender-steps"),
])
def test_bad_input_is_one_line_exit_2(capsys, args, needle):
    assert needle in run_error(capsys, *args)


def test_unknown_option_exit_2(capsys):
    assert main(["odds", "--system", "soyuz81", "--attack", "5", "--defense", "3", "--bogus"]) == 2
    assert "bogus" in capsys.readouterr().err


def test_api_errors():
    with pytest.raises(SoeInputError, match="defence"):
        soyuz81_odds(5, 0)
    with pytest.raises(SoeInputError, match="did you mean"):
        soyuz81_odds(5, 3, terrain="citty")
