"""GPU check of the onboarding rules (H200, Triton 3.6, torch 2.11; no network needed).

    python benchmarks/onboard_gpu_check.py OUT_DIR [PROBLEM_DIR ...]

For each problem folder (default: the worked example and the onboarding test problems) ``initial.py`` is
validated by execution and timed through the same path a session uses (``optimizer.harness.evaluation.evaluate`` with
``backend="cuda"``): kernels that are compile-only on the CPU (libdevice, block pointers) must execute and pass
here. A direct probe checks the in-place restore of the timing protocol: after ``bench_cuda(fn, setup=restore)``
the in-place input must hold exactly one application of the kernel to the pristine values. Writes
``OUT_DIR/onboard_gpu.json`` with provenance; exit status 0 only if every check passed.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from _provenance import write_result

DEFAULT = [ROOT / "benchmarks/realistic/onboard_liger_geglu", *(ROOT / "tests/optimizer/data/onboard" / n for n in
                                                                ("inplace_scale", "tanh_libdevice", "blockptr_copy"))]


def _evaluate(folder: Path) -> dict[str, Any]:
    from optimizer.harness.evaluation import evaluate
    from optimizer.harness.problem import load_problem
    from optimizer.settings import LadderSettings

    problem = load_problem(folder)
    ev = evaluate(problem, folder / "initial.py", backend="cuda", settings=LadderSettings())
    return {"problem": str(folder.relative_to(ROOT)), "passed": ev.passed, "static_only": ev.static_only,
            "reason": ev.reason, "device": ev.device, "versions": ev.versions, "timing_error": ev.timing_error,
            "cases": [{"case": c.case, "ms": c.stats.median_ms,
                       "reference_ms": c.reference_stats.median_ms if c.reference_stats else None}
                      for c in ev.timing_cases],
            "ok": ev.passed and not ev.static_only and bool(ev.timing_cases)}


def _inplace_restore_probe() -> dict[str, Any]:
    import torch

    from optimizer.harness import timing
    from optimizer.harness.problem import load_candidate, load_problem
    from optimizer.harness.worker import inplace_restore

    folder = ROOT / "tests/optimizer/data/onboard/inplace_scale"
    problem = load_problem(folder)
    cand = problem.instantiate(load_candidate(folder / "initial.py"), {}, device="cuda")
    inputs = problem.make_inputs({"n": 1 << 24}, 0, device="cuda")
    pristine = inputs[0].clone()
    restore = inplace_restore(problem, inputs)
    with torch.no_grad():
        stats = timing.bench_cuda(lambda: cand(*inputs), setup=restore)
    torch.cuda.synchronize()
    expected = pristine * inputs[1] + 1.0
    ok = bool(torch.allclose(inputs[0], expected))
    return {"ok": ok, "reps": stats.n, "median_ms": stats.median_ms,
            "note": "after timing, the in-place input holds exactly one application to the pristine values"
                    if ok else "the in-place input drifted: setup did not restore it before every call"}


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    out_dir = Path(argv[0])
    folders = [Path(a).resolve() for a in argv[1:]] or DEFAULT
    results = [_evaluate(f) for f in folders]
    probe = _inplace_restore_probe()
    ok = all(r["ok"] for r in results) and probe["ok"]
    path = write_result("onboard_gpu", {"ok": ok, "problems": results, "inplace_restore_probe": probe}, out_dir)
    for r in results:
        print(f"{'ok ' if r['ok'] else 'BAD'} {r['problem']}: passed={r['passed']} static_only={r['static_only']} "
              f"cases={[(c['case'], round(c['ms'], 4)) for c in r['cases']]} {r['reason'][:200]}")
    print(f"{'ok ' if probe['ok'] else 'BAD'} in-place restore probe: {probe['note']}")
    print(f"wrote {path}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
