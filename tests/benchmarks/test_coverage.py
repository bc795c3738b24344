"""benchmarks/coverage/coverage.py (`ladder bench coverage`): per-kernel status, refusal categories, family counts."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _module():
    spec = importlib.util.spec_from_file_location("coverage_bench", ROOT / "benchmarks" / "coverage" / "coverage.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


ROWS = [
    {"set": "realistic", "kernel": "a", "cause": "small_dot_tiles", "family": "matmul-tile-config-search",
     "kind": "dot_tile_search", "structural": True, "verdict": "valid"},
    {"set": "realistic", "kernel": "b", "cause": "undecided", "structural": False, "verdict": "no_rewrite",
     "refused": "the ladder chose no family (inconclusive: no level passed all three escalation tests)"},
    {"set": "realistic", "kernel": "c", "cause": "unvectorized_access", "family": "compiler-hints-contiguity",
     "kind": "compiler_hints", "structural": False, "verdict": "no_rewrite",
     "refused": "compiler_hints: no-op: the candidate compiles to the same cuda:90 PTX as its base",
     "family_refusals": ["unaligned-size-alignment-hints: x_kernel has no broadcast stride products"]},
    {"set": "naive", "kernel": "d", "cause": "tiny_programs", "family": "num-warps-for-row-width", "kind": "launch_params",
     "structural": False, "verdict": "no_rewrite",
     "refused": "launch_params: no-op: num_warps=8 at the launch of k is overridden by its @triton.heuristics"},
    {"set": "naive", "kernel": "e", "cause": "tiny_programs", "family": "enlarge-tiny-blocks", "kind": "block_scale",
     "structural": False, "verdict": "no_rewrite",
     "refused": "block_scale does not apply (k: grid lambda META: (...) is not a tuple expression)"},
]


def test_rows_categories_and_family_counts(tmp_path: Path) -> None:
    cov = _module()
    src = tmp_path / "dry.json"
    src.write_text(json.dumps({"rows": ROWS}))
    assert cov.main(["--from", str(src), "--out", str(tmp_path), "--name", "c"]) == 0
    out = json.loads((tmp_path / "c.json").read_text())
    by = {r["kernel"]: r for r in out["rows"]}
    assert by["a"]["status"] == "structural" and by["a"]["category"] == ""
    assert by["b"]["category"].startswith("no family chosen")
    assert by["c"]["category"] == "no-op: same compiled kernel"
    assert by["d"]["category"] == "no-op: knob overridden by a decorator"
    assert by["e"]["category"] == "grid form not read"
    s = out["summary"]
    assert s["per_set"]["realistic"] == {"kernels": 3, "cause_decided": 2, "structural": 1, "launch_knob": 0,
                                         "refused": 2, "errors": 0, "refusal_categories": s["per_set"]["realistic"]["refusal_categories"]}
    assert s["families"]["unaligned-size-alignment-hints"] == {"applied": 0, "refused": 1}
    assert s["families"]["matmul-tile-config-search"] == {"applied": 1, "refused": 0}
    md = (tmp_path / "c.md").read_text()
    assert "## Top refusal reasons" in md and "| realistic | `c` |" in md
