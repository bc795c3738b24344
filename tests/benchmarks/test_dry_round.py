"""benchmarks/rewrite/dry_round.py: kernel selection, per-set counts and the report table."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _module():
    spec = importlib.util.spec_from_file_location("dry_round", ROOT / "benchmarks" / "rewrite" / "dry_round.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def test_sets_pick_the_right_candidate_files() -> None:
    dr = _module()
    naive = dr.kernels(["naive"], set())
    assert len(naive) == 42 and all(c.name == "naive.py" for _, _, c in naive)
    real = dr.kernels(["realistic"], {"tutorial_softmax"})
    assert [(s, f.name, c.name) for s, f, c in real] == [("realistic", "tutorial_softmax", "initial.py")]


def test_summary_counts_and_table() -> None:
    dr = _module()
    rows = [
        {"set": "naive", "kernel": "a", "cause": "tiny_programs", "confidence": 0.7, "family": "enlarge-tiny-blocks",
         "kind": "block_scale", "points": 4, "structural": True, "verdict": "valid", "description": "BLOCK 128 -> 1024"},
        {"set": "naive", "kernel": "b", "cause": "undecided", "structural": False, "verdict": "no_rewrite",
         "refused": "the ladder chose no family", "family_refusals": ["x: launch_params: no-op: num_warps=8 ..."]},
        {"set": "naive", "kernel": "c", "cause": "redundant_passes", "family": "x", "kind": "row_resident", "points": 1,
         "structural": True, "verdict": "baseline_fails", "failure": "mismatch | 1 element"},
        {"set": "realistic", "kernel": "d", "cause": "small_dot_tiles", "family": "y", "kind": "launch_params", "points": 2,
         "structural": False, "verdict": "invalid", "failure": "crashed"},
        {"set": "realistic", "kernel": "e", "cause": "undecided", "structural": False, "verdict": "error", "failure": "KeyError"},
    ]
    s = dr.summary(rows)
    assert s["naive"] == {"kernels": 3, "decided": 2, "rewrite_made": 2, "structural": 2, "valid": 1, "compile_only": 0,
                          "invalid": 0, "baseline_fails": 1, "errors": 0, "noop_refused": 1, "measured": 0,
                          "justified_stop": 0, "explained": 2, "plain_undecided": 1, "structural_or_stop": 1,
                          "with_headroom": 0, "unattributed_only": 0}
    assert s["realistic"]["invalid"] == 1 and s["realistic"]["errors"] == 1 and s["realistic"]["structural"] == 0
    prov = {"command": "dry_round.py", "machine": {"node": "n", "cpus": 2}, "date": "d", "versions": {"triton": "3.9.0"}}
    md = dr.markdown({"provenance": prov, "summary": s, "rows": rows})
    assert "| naive | 3 | 2 | 2 | 1 | 2 | 2 | 1 | 0 | 0 | 1 | 0 | 1 | 0 | 0 | 0 | 1 |" in md
    assert "mismatch / 1 element" in md  # a pipe inside a note cannot break the table


def test_no_kernel_matched_is_an_error() -> None:
    with pytest.raises(SystemExit, match="no kernel matched"):
        _module().main(["--set", "naive", "--only", "no_such_operator"])


def test_measured_records_and_justified_stops(tmp_path: Path) -> None:
    import json

    dr = _module()
    case = {"ok": True, "label": "n=8", "initial_ms": 0.5}
    (tmp_path / "a.json").write_text(json.dumps({"provenance": {"gpu": "NVIDIA H200", "date": "2026-12-04T00:00:00Z"},
        "problems": {"k": {"ok": True, "cases": [case]}, "bad": {"ok": False, "cases": [{**case, "ok": False}]},
                     "untimed": {"ok": True, "cases": [{"ok": True, "label": "n=8"}]}}}))
    (tmp_path / "b.json").write_text(json.dumps({"provenance": {"gpu": "NVIDIA H200", "date": "2026-12-05T00:00:00Z"},
        "problems": {"k": {"ok": True, "cases": [{**case, "initial_ms": 0.25}]}}}))
    m = dr.load_measured([tmp_path / "a.json", tmp_path / "b.json"])
    assert set(m) == {"k"}, "a failed or untimed kernel gives no record"
    assert m["k"]["case_ms"] == {"n=8": 0.25} and m["k"]["device"] == "NVIDIA H200" and "b.json" in m["k"]["source"]
    rows = [{"set": "realistic", "kernel": "k", "cause": "at_roofline", "structural": False, "verdict": "justified_stop",
             "measured": "NVIDIA H200 (b.json)"},
            {"set": "realistic", "kernel": "j", "cause": "undecided", "structural": False, "verdict": "no_rewrite"}]
    s = dr.summary(rows)["realistic"]
    assert s["justified_stop"] == 1 and s["measured"] == 1 and s["rewrite_made"] == 0 and s["decided"] == 1


def test_undecided_kernels_are_explained_by_the_static_account() -> None:
    dr = _module()
    acc = {"named": {"vector_width": 0.0}, "unexplained": {"issue_bound": 0.2}}
    rows = [{"set": "realistic", "kernel": "g", "cause": "undecided", "structural": False, "verdict": "no_rewrite",
             "account": acc, "roof_fraction": [0.52, 0.85]},
            {"set": "realistic", "kernel": "h", "cause": "unknown", "structural": False, "verdict": "no_rewrite",
             "roof_fraction": [0.9]}]
    assert dr._explained(rows[0]) == "inefficiency issue_bound (share ~20%)" and dr._explained(rows[1]) == ""
    s = dr.summary(rows)["realistic"]
    assert (s["decided"], s["explained"], s["plain_undecided"], s["with_headroom"]) == (0, 1, 1, 1)
