"""benchmarks/_output.py: every benchmark's JSON names the machine it was measured on."""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import _output  # noqa: E402  (benchmarks/_output.py)


def test_cpu_model_reads_the_first_model_name(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\n"
                    "processor\t: 1\nmodel name\t: Other CPU\n")
    assert _output.cpu_model(info) == "Intel(R) Xeon(R) Processor"


def test_cpu_model_without_cpuinfo_falls_back(tmp_path, monkeypatch):
    monkeypatch.setattr(_output.platform, "processor", lambda: "")
    assert _output.cpu_model(tmp_path / "missing") == "unknown"
    (tmp_path / "empty").write_text("processor\t: 0\nmodel name\t:   \n")
    assert _output.cpu_model(tmp_path / "empty") == "unknown"
    monkeypatch.setattr(_output.platform, "processor", lambda: "x86_64")
    assert _output.cpu_model(tmp_path / "missing") == "x86_64"


def test_emit_json_adds_the_host_and_writes_the_same_text(tmp_path, capsys):
    out = tmp_path / "result.json"
    _output.emit_json({"benchmark": "demo", "value": 1.5}, str(out))
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    host = printed["host"]
    assert printed["value"] == 1.5
    assert set(host) == {"cpu_model", "cpus", "machine", "python", "numpy", "numba"}
    assert host["cpu_model"] and host["cpus"] >= 1


def test_emit_json_keeps_a_host_the_script_gave(capsys):
    _output.emit_json({"host": {"cpu_model": "given"}}, None)
    assert json.loads(capsys.readouterr().out) == {"host": {"cpu_model": "given"}}


def test_instructions_reads_the_branch_events_of_a_callgrind_output():
    """benchmarks/instructions.py --branch-sim: the totals line's events by the names of the events line."""
    import click
    import pytest

    import instructions  # benchmarks/instructions.py

    text = ("version: 1\ncmd: python\nevents: Ir Bc Bcm Bi Bim\nfn=(1) f\n3 10 2 1 0 0\n"
            "totals: 1200 300 41 7 2\n")
    assert instructions.callgrind_events(text) == {"Ir": 1200, "Bc": 300, "Bcm": 41, "Bi": 7, "Bim": 2}
    assert instructions.callgrind_total(text) == 1200
    assert instructions.callgrind_events("events: Ir\nsummary: 99\n") == {"Ir": 99}
    with pytest.raises(click.ClickException, match="events"):
        instructions.callgrind_events("totals: 5\n")


def test_refcount_sites_counts_the_calls_by_caller_and_names_jit_code_from_the_perf_map():
    """benchmarks/refcount_sites.py: callgrind's call edges with compressed names, a caller that callgrind names
    by its address (numba's JIT code) named from the perf map, the inclusive instructions of the calls."""
    import refcount_sites  # benchmarks/refcount_sites.py

    perf_map = ("1000 100 _ZN7soe_sim6engine4game2nb12card_play_nbB2v1E\n"
                "2000 40 NRT_incref\n2040 40 NRT_decref\n")
    name_of = refcount_sites.perf_map_lookup(perf_map)
    assert name_of(0x1010) == "_ZN7soe_sim6engine4game2nb12card_play_nbB2v1E" and name_of(0x3000) is None
    text = ("events: Ir\n"
            "fn=(1) 0x0000000000001008\n"
            "cfn=(2) 0x0000000000002000\ncalls=30 0x2000\n5 120\n"
            "cfn=(3) 0x0000000000002040'2\ncalls=29 0x2040\n6 200\n"
            "fn=(4) main\n"
            "cfn=(2)\ncalls=4 0x2000\n7 16\n"
            "cfn=(5) 0x0000000000009999\ncalls=1 0x9999\n8 3\n")
    edges = refcount_sites.call_edges(text, name_of)
    caller = "engine.game.nb.card_play_nb"
    assert edges[(caller, "NRT_incref")] == 30 and edges[(caller, "NRT_decref")] == 29
    assert edges[("main", "NRT_incref")] == 4 and edges[("main", "0x0000000000009999")] == 1
    assert edges[("", "NRT_incref")] == 136 and edges[("", "NRT_decref")] == 200
    summary = refcount_sites.summarize(edges, games=2, top=1)
    assert summary["NRT_incref"] == {"calls_per_game": 17.0, "instructions_per_game": 68.0,
                                     "callers": [{"function": caller, "calls_per_game": 15.0}]}
    assert summary["NRT_MemInfo_alloc_aligned"]["calls_per_game"] == 0


def test_callgrind_profile_sums_self_costs_without_the_calls_inclusive_lines():
    """benchmarks/callgrind_profile.py: a function's self cost is its cost lines less the inclusive cost after
    each ``calls=`` line; a compressed name first given on a ``cfn=`` line, and JIT code named by its address,
    are resolved (the perf map)."""
    import callgrind_profile  # benchmarks/callgrind_profile.py
    import refcount_sites

    name_of = refcount_sites.perf_map_lookup("1000 100 _ZN7soe_sim6engine2nb17clear_bfs_into_nbB2v1E\n")
    text = ("events: Ir Bc Bcm\n"
            "fn=(1) main\n"
            "3 100 10 2\n"
            "cfn=(2) 0x0000000000001010\ncalls=5 0x1010\n4 900 90 30\n"
            "+1 7 1 1\n"
            "fn=(2)\n"
            "0 800 80 25\n"
            "5 100 10 5\n")
    events, cost = callgrind_profile.self_costs(text, name_of)
    assert events == ["Ir", "Bc", "Bcm"]
    assert cost == {"main": [107, 11, 3], "engine.nb.clear_bfs_into_nb": [900, 90, 30]}
    summary = callgrind_profile.summarize(events, cost, games=2, top=1)
    assert summary["totals_per_game"] == {"Ir": 503.5, "Bc": 50.5, "Bcm": 16.5}
    top = summary["by_mispredictions"][0]
    assert top["function"] == "engine.nb.clear_bfs_into_nb" and top["Bcm_per_game"] == 15.0
    assert top["Ir_share"] == round(900 / 1007, 4)
    assert [r["function"] for r in summary["by_instructions"]] == ["engine.nb.clear_bfs_into_nb"]
    events, cost = callgrind_profile.self_costs("events: Ir\nfn=(1) f\n1 4\n", name_of)
    assert "by_mispredictions" not in callgrind_profile.summarize(events, cost, games=1, top=3)
