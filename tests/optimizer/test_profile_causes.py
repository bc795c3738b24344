"""L2 cause findings from counter patterns: excess DRAM traffic, a saturated bus, resident warps that wait."""

from __future__ import annotations

from optimizer.ladder.causes import profile_findings
from optimizer.ladder.decide import decide
from optimizer.ladder.findings import EvidenceRef, Finding


def _case(label: str, **signals: float) -> dict:
    return {"case": label, "ms": 1.0, "class": "memory_bound", "figures": {}, "signals": dict(signals, tokens=[])}


def _by(findings: list[Finding], cause: str) -> list[Finding]:
    return [f for f in findings if f.cause == cause]


def test_dram_busy_with_little_useful_traffic_supports_redundant_passes() -> None:
    # 83% DRAM busy while the problem's bytes need 23% of peak: ~3.6x the minimum traffic
    fs = profile_findings([_case("a", dram_pct=83.4, mem_fraction=0.234, spill_bytes=0.0),
                           _case("b", dram_pct=83.4, mem_fraction=0.224, spill_bytes=0.0)], "memory_bound", 1.0)
    (f,) = _by(fs, "redundant_passes")
    assert f.confidence == 0.75 and "3.6x" in f.supporting[0].detail
    # the saturated bus refutes narrow loads as the limit
    (u,) = _by(fs, "unvectorized_access")
    assert u.confidence == 0.0 and u.refute_strength > 0.5


def test_no_excess_traffic_claim_when_the_traffic_is_what_the_problem_needs_or_spills() -> None:
    fine = profile_findings([_case("a", dram_pct=68.0, mem_fraction=0.78, spill_bytes=0.0)], "memory_bound", 1.0)
    assert not _by(fine, "redundant_passes") and not _by(fine, "unvectorized_access")
    spilling = profile_findings([_case("a", dram_pct=60.0, mem_fraction=0.01, spill_bytes=1e9)], "memory_bound", 1.0)
    assert not _by(spilling, "redundant_passes")  # local-memory traffic is the spills' doing
    idle = profile_findings([_case("a", dram_pct=20.0, mem_fraction=0.02, spill_bytes=0.0)], "latency_bound", 1.0)
    assert not _by(idle, "redundant_passes")


def test_resident_warps_without_throughput_point_at_serialized_atomics() -> None:
    fs = profile_findings([_case("a", occupancy_pct=94.0, dram_pct=1.7, sm_pct=2.3)], "latency_bound", 1.0)
    (a,) = _by(fs, "same_address_atomics")
    assert a.confidence == 0.5
    assert all(f.refute_strength == 0.4 for f in _by(fs, "tiny_programs") + _by(fs, "per_element_grid"))
    # low occupancy with low throughput is the tiny-program picture, not a stall
    assert not _by(profile_findings([_case("a", occupancy_pct=12.0, dram_pct=1.8, sm_pct=13.5)], "latency_bound", 1.0),
                   "same_address_atomics")


def test_the_stall_pattern_breaks_an_atomics_versus_tiny_programs_tie() -> None:
    def l1(cause: str, conf: float) -> Finding:
        return Finding(cause=cause, level="L1", confidence=conf, structural=True,  # type: ignore[arg-type]
                       supporting=[EvidenceRef(level="L1", kind="code_feature", reference=cause)])

    static = [l1("same_address_atomics", 0.8), l1("tiny_programs", 0.75)]
    assert not decide(static).decided  # equally supported, different rewrites: escalate
    l2 = profile_findings([_case("a", occupancy_pct=94.0, dram_pct=1.7, sm_pct=2.3)], "latency_bound", 1.0)
    d = decide(static + l2, measured="latency_bound", measured_any=True)
    assert d.decided and d.cause == "same_address_atomics"


def test_a_tiled_matmul_rereading_operands_is_not_called_redundant_passes() -> None:
    busy = [_case("a", dram_pct=70.0, mem_fraction=0.1, spill_bytes=0.0)]
    assert _by(profile_findings(busy, "memory_bound", 1.0), "redundant_passes")
    assert not _by(profile_findings(busy, "memory_bound", 1.0, dots=True), "redundant_passes")


def test_spill_traffic_on_the_scale_of_the_data_names_register_spills_whatever_the_class() -> None:
    """A 16384-wide layernorm that spills 3.2 GB per launch reads as memory-bound (its DRAM is busy with the spills):
    the spill share decides, not the class; a few spilled bytes on a large problem do not."""
    heavy = profile_findings([_case("a", dram_pct=68.0, mem_fraction=0.3, spill_bytes=3.2e9, bytes_moved=5.4e8),
                              _case("b", dram_pct=68.0, mem_fraction=0.3, spill_bytes=3.2e9, bytes_moved=5.4e8)],
                             "memory_bound", 1.0)
    (f,) = _by(heavy, "register_spills")
    assert f.confidence == 0.7 and "5.9x the problem's bytes" in f.supporting[0].detail
    light = profile_findings([_case("a", dram_pct=68.0, mem_fraction=0.3, spill_bytes=1e6, bytes_moved=5.4e8)],
                             "memory_bound", 1.0)
    assert not _by(light, "register_spills")
    unknown = profile_findings([_case("a", dram_pct=68.0, mem_fraction=0.3, spill_bytes=3.2e9)], "memory_bound", 1.0)
    assert not _by(unknown, "register_spills")  # without the problem's bytes, and not occupancy-limited: no claim
