"""The account decides where a listed cause explains it (``optimizer.ladder.gap_account.account_findings``): a
defect that only one case's sizes expose supports its cause at L3 instead of staying a footnote."""

from __future__ import annotations

from optimizer.ir.gap_account import GapAccount, GapFinding
from optimizer.ladder.decide import decide
from optimizer.ladder.findings import EvidenceRef, Finding
from optimizer.ladder.gap_account import account_findings, with_account


def _acc(config: str, grid: list[int], *findings: GapFinding) -> GapAccount:
    return GapAccount(kernel="ln_fwd", config=config, grid=grid, device="H200 (sm_90)", findings=list(findings))


def _vw(significant: bool, summary: str) -> GapFinding:
    return GapFinding(kind="vector_width", kernel="ln_fwd", value=32 if significant else 128, unit="bits",
                      summary=summary, significant=significant, proof="needs_gpu",
                      explained_by=["unvectorized_access", "per_element_grid"])


ALIGNED = _acc("BLOCK_SIZE=4096, num_warps=8", [16384], _vw(False, "6 global loads: 6 x 128-bit"))
ODD = _acc("BLOCK_SIZE=4096, num_warps=8", [32768], _vw(True, "48 global loads: 48 x 32-bit"))
MASK = _acc("BLOCK_SIZE=1024, num_warps=4", [65536], GapFinding(
    kind="needless_mask", kernel="ln_fwd", value=3, unit="accesses", summary="3 masked accesses", significant=True))


def test_scalar_loads_at_one_case_support_unvectorized_access_tied_to_the_loads() -> None:
    fs = account_findings([ALIGNED, ODD, MASK], load_lines=[59, 60, 71])
    assert [f.cause for f in fs] == ["unvectorized_access"]
    f = fs[0]
    assert f.structural and f.level == "L3" and f.source_lines == [59, 60, 71]
    assert "[32768]" in f.supporting[0].detail and "48 x 32-bit" in f.summary


def test_one_element_per_program_names_the_grid_and_kinds_without_a_cause_are_not_forced() -> None:
    assert [f.cause for f in account_findings([ODD], block_range=False)] == ["per_element_grid"]
    assert account_findings([ALIGNED, MASK]) == []  # needless_mask: no listed cause; aligned loads: no finding


def test_the_account_outweighs_one_configurations_vectorized_ir() -> None:
    """L3's IR report compiled the aligned case (vectorized loads refute the cause); the level drops that refutation
    when the account shows scalar loads elsewhere, and the cause is decided."""
    ir_refutes = Finding(cause="unvectorized_access", level="L3", confidence=0.0, refute_strength=0.8,
                         refuting=[EvidenceRef(level="L3", kind="ir_signature", reference="vector_global_load")])
    l1 = Finding(cause="unvectorized_access", level="L1", confidence=0.35, structural=True)
    assert not decide([l1, ir_refutes]).decided
    extra = account_findings([ALIGNED, ODD], load_lines=[59])
    d = decide(with_account([l1, ir_refutes], extra))
    assert d.decided and d.cause == "unvectorized_access"


def _wave(share: float, summary: str) -> GapFinding:
    return GapFinding(kind="wave_quantization", kernel="ln_fwd", value=1 - share, unit="fraction of SM time busy",
                      summary=summary, significant=share > 0.25, share=share)


def test_idle_sms_the_largest_static_share_are_named_beside_the_decision() -> None:
    from optimizer.ladder.causal import CausalStep
    from optimizer.ladder.gap_account import idle_sm_notes

    spills = GapFinding(kind="register_spills", kernel="ln_fwd", value=512, unit="bytes", summary="ptxas spills 512 B",
                        significant=True, proof="needs_gpu")
    tiny = _acc("BLOCK_SIZE=262144", [8], spills, _wave(0.939, "8 programs on 132 SMs x 1 resident = 0.061 waves"))
    lanes = GapFinding(kind="predicated_lanes", kernel="ln_fwd", value=0.3, unit="fraction of lanes on",
                       summary="mask at line 9 on (30%)", significant=True, share=0.7)
    masked = _acc("BLOCK_SIZE=1024", [100], lanes, _wave(0.24, "100 programs on 132 SMs"))
    notes = idle_sm_notes([tiny, masked])
    assert len(notes) == 1  # at [100] the masked lanes cost more than the idle SMs
    assert "grid [8]" in notes[0] and "~94%" in notes[0] and "8 programs on 132 SMs" in notes[0]
    step = CausalStep(decide([]), None, [], None, "L3")
    step.notes = notes
    ev = step.evidence("L3")
    assert ev.data["idle_sms"] == notes and "static account: ln_fwd" in ev.summary
    assert "idle_sms" not in CausalStep(decide([]), None, [], None, "L3").evidence("L3").data
