"""L3 cause findings from IR signatures (compile-only: these need no GPU and no execution).

Rules (signature -> cause, confidence):
- ``fma_dot`` (tt.dot in a blocked layout / fma.f32 in PTX) -> ``fma_dot`` 0.9; ``wgmma_dot``/``mma_dot`` refute it.
- ``register_spill`` (ptxas spill bytes or local-memory ops) -> ``register_spills`` 0.9; a cubin with 0 B of
  spills refutes a spill hypothesis.
- ``scalar_global_load`` / ``masked_load_not_vectorized`` -> ``unvectorized_access`` 0.7 (0.8 when arguments lack
  ``tt.divisibility=16``); when the kernel has no block range the scalar loads are the per-element grid's doing,
  so they support ``per_element_grid`` instead. Vectorized loads with no scalar ones refute ``unvectorized_access``,
  and so do scalar loads that all sit outside the loops while the loop loads are vectorized (read once per program).
- ``mma_dot`` without ``wgmma_dot`` on sm_90 (the tile is too small for a warp-group MMA) -> ``small_dot_tiles`` 0.5.
- ``no_software_pipelining`` on a dot loop -> ``small_dot_tiles`` 0.3 (the tile config has no stages to overlap).
"""

from __future__ import annotations

from typing import Any

from optimizer.ladder.findings import EvidenceRef, Finding

__all__ = ["ir_findings"]


def _ref(sig: Any, detail: str = "") -> EvidenceRef:
    return EvidenceRef(level="L3", kind="ir_signature", reference=sig.name, detail=(detail or sig.detail)[:400],
                       source_lines=list(sig.source_lines))


def ir_findings(report: Any, *, block_range: bool = True, loop_load_lines: set[int] | None = None) -> list[Finding]:
    """``loop_load_lines``: source lines of the kernel's loads inside loops (None: unknown)."""
    sigs = {s.name: s for s in report.signatures}
    out: list[Finding] = []
    arch = str(report.target)
    if "fma_dot" in sigs:
        refute = [_ref(sigs[n]) for n in ("wgmma_dot", "mma_dot") if n in sigs]
        out.append(
            Finding(
                cause="fma_dot",
                level="L3",
                confidence=0.9,
                structural=True,
                supporting=[_ref(sigs["fma_dot"])],
                refuting=refute,
                refute_strength=0.3 if refute else 0.0,
                summary=f"{sigs['fma_dot'].count} tl.dot lowered to FMA: no tensor-core MMA",
            )
        )
    elif "wgmma_dot" in sigs or "mma_dot" in sigs:
        s = sigs.get("wgmma_dot") or sigs["mma_dot"]
        out.append(Finding(cause="fma_dot", level="L3", confidence=0.0, refuting=[_ref(s)], refute_strength=0.9,
                           summary=f"dots run on tensor cores ({s.name})"))
    res = report.resources
    if "register_spill" in sigs:
        out.append(
            Finding(
                cause="register_spills",
                level="L3",
                confidence=0.9,
                structural=True,
                supporting=[_ref(sigs["register_spill"])],
                summary=f"register spills: {sigs['register_spill'].detail[:160]}",
            )
        )
    elif res is not None and res.spill_stores_bytes == 0:
        out.append(Finding(cause="register_spills", level="L3", confidence=0.0, refute_strength=0.9,
                           refuting=[EvidenceRef(level="L3", kind="ir_signature", reference="ptxas",
                                                 detail=f"0 B spill stores, {res.registers} registers")],
                           summary="ptxas reports no spills"))
    scalar = [sigs[n] for n in ("masked_load_not_vectorized", "scalar_global_load") if n in sigs]
    once = _once_per_program(scalar, sigs.get("vector_global_load"), loop_load_lines)
    if once:
        out.append(Finding(cause="unvectorized_access", level="L3", confidence=0.0, refute_strength=0.6,
                           refuting=[_ref(sigs["vector_global_load"])], summary=once))
    elif scalar:
        undivided = any("tt.divisibility" in s.detail for s in scalar)
        if not block_range:
            out.append(Finding(cause="per_element_grid", level="L3", confidence=0.6, structural=True,
                               supporting=[_ref(s) for s in scalar],
                               summary="scalar global loads: each program touches one element"))
        else:
            refute = [_ref(sigs["vector_global_load"])] if "vector_global_load" in sigs else []
            out.append(
                Finding(
                    cause="unvectorized_access",
                    level="L3",
                    confidence=0.8 if undivided else 0.6,
                    structural=True,
                    supporting=[_ref(s) for s in scalar],
                    refuting=refute,
                    refute_strength=0.2 if refute else 0.0,
                    summary="global loads are not vectorized"
                    + (" (arguments lack tt.divisibility=16)" if undivided else ""),
                )
            )
    elif "vector_global_load" in sigs:
        out.append(Finding(cause="unvectorized_access", level="L3", confidence=0.0, refute_strength=0.8,
                           refuting=[_ref(sigs["vector_global_load"])], summary="global loads are vectorized"))
    if "mma_dot" in sigs and "wgmma_dot" not in sigs and ":90" in arch:
        out.append(
            Finding(
                cause="small_dot_tiles",
                level="L3",
                confidence=0.5,
                structural=True,
                supporting=[_ref(sigs["mma_dot"])],
                summary="sm_90 dot lowered to mma.sync, not wgmma: the tile or warp count is too small for a "
                "warp-group MMA",
            )
        )
    if "no_software_pipelining" in sigs:
        out.append(Finding(cause="small_dot_tiles", level="L3", confidence=0.3, structural=True,
                           supporting=[_ref(sigs["no_software_pipelining"])],
                           summary="dot loop loads stay synchronous: no stages to overlap memory and MMA"))
    return out


def _once_per_program(scalar: list[Any], vector: Any, loop_load_lines: set[int] | None) -> str:
    """Why the scalar loads are not the kernel's traffic, or "": every scalar load sits outside the loops (an index,
    a routing id, a per-row scale: read once per program) while the loops' loads are vectorized (``ld.global.v*``,
    8-16 B ``cp.async`` or TMA). A dot kernel whose operand tiles stream through cp.async reads its token ids with
    scalar loads whatever its tile; vectorizing those would change nothing."""
    if not scalar or vector is None or not loop_load_lines:
        return ""
    lines = {n for s in scalar for n in s.source_lines}
    if not lines or lines & loop_load_lines:
        return ""
    return (f"the scalar loads (lines {sorted(lines)[:6]}) sit outside every loop, read once per program; the loop "
            f"loads are vectorized ({vector.detail[:120]})")
