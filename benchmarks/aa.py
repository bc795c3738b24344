"""A/A: how often the session's verdict calls an identical kernel "improved" or "regressed" (GPU; issue 19).

For each operator (``benchmarks/suite/<op>/initial.py``; its smallest CASES, or with ``--smoke`` its tiny
SMOKE_CASES, microsecond kernels that take the CUDA-graph path), exactly as a session does: the A/A noise floor is
measured on the baseline (the initial kernel timed against a second instance of itself, interleaved); then
``--n`` rounds each time the SAME kernel as the candidate against the initial candidate through the session's
timing function (``optimizer.harness.worker.time_cases``, the code the sandboxed worker runs), turn it into a Timing
(``optimizer.harness.evaluation.to_timing``) and judge it (``optimizer.harness.verdict.judge`` with the floor and
``improvement_threshold``). Every verdict other than ``neutral`` is a false call. The process boundary is the
only difference from a session round (a worker start per comparison would cost ~4 s each on the GPU host).

``--old-rule`` also applies the previous protocol to the same candidates: one do_bench median per case against
a baseline measured once at the start, ``improved`` iff the geomean ratio exceeds 1 + threshold.

Time: about ``cases x blocks x 2 x (rep + ~15 ms)`` per comparison, e.g. 2 cases, 8 blocks, 10 ms -> ~0.8 s
(+0.3 s with ``--old-rule``), so the default 4 operators x 50 comparisons take ~4-5 min. Target: <= 1% false calls.

Run (GPU): ``python benchmarks/aa.py OUTDIR [--ops softmax rmsnorm] [--n 50] [--max-cases 2] [--smoke]``
Writes ``OUTDIR/aa.json`` with provenance.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import provenance

DEFAULT_OPS = ["softmax", "rmsnorm", "cumsum", "matmul"]


def _evaluation(result: Any, candidate: Path, device: str) -> Any:
    """An Evaluation around a ``optimizer.harness.contracts.TimingResult`` (what the worker's ``time_cases`` returns)."""
    from kb.models import Validation
    from optimizer.harness.evaluation import Evaluation

    return Evaluation(candidate=candidate, backend="cuda", status="ok", reason="", validation=Validation(passed=True),
                      timing_cases=result.cases, protocol=result.protocol, device=device)


def run_operator(op: str, n: int, max_cases: int, old_rule: bool, smoke: bool = False) -> dict[str, Any]:
    import torch

    from optimizer.harness import timing, verdict
    from optimizer.harness.evaluation import timing_request, to_timing
    from optimizer.kernel.features import kernel_compute_kind
    from optimizer.harness.problem import case_label, load_candidate, load_problem
    from optimizer.settings import LadderSettings
    from optimizer.harness.worker import smallest_first, time_cases

    settings = LadderSettings()
    folder = ROOT / "benchmarks" / "suite" / op
    problem = load_problem(folder / "problem.py")
    initial = folder / "initial.py"
    cls = load_candidate(initial)
    cases = smallest_first(problem, problem.smoke_cases if smoke else problem.cases)[:max_cases]
    device = torch.cuda.get_device_name()
    aa_timing = timing_request(settings, None, True).model_copy(update={"reference": False})
    t0 = time.perf_counter()
    floor = verdict.noise_floor(_evaluation(time_cases(cases, aa_timing, problem, cls, "cuda", "cuda"), initial, device).pairs("aa"))
    vs_initial = timing_request(settings, {"initial": initial}, False).model_copy(update={"reference": False})
    old_base: dict[str, float] = {}
    if old_rule:
        for c in cases:
            xs, m = problem.make_inputs(c, 0, device="cuda"), problem.instantiate(cls, c, device="cuda")
            with torch.no_grad():
                old_base[case_label(c)] = timing.bench_cuda(lambda m=m, xs=xs: m(*xs)).median_ms
    calls: Counter[str] = Counter()
    old_calls: Counter[str] = Counter()
    methods: Counter[str] = Counter()
    points, widths = [], []
    for _ in range(n):
        ev = _evaluation(time_cases(cases, vs_initial, problem, cls, "cuda", "cuda"), initial, device)
        t = to_timing(ev, None, backend="cuda", problem=problem, cases=cases,
                      compute=kernel_compute_kind(ev.candidate, ev.launches))
        calls[verdict.judge(t.vs_base, floor.floor, settings.improvement_threshold)] += 1
        methods.update(c.method for c in t.cases)
        if t.vs_base:
            points.append(t.vs_base.point)
            widths.append(t.vs_base.hi - t.vs_base.lo)
        if old_rule:
            ratios = []
            for c in cases:
                xs, m = problem.make_inputs(c, 0, device="cuda"), problem.instantiate(cls, c, device="cuda")
                with torch.no_grad():
                    ratios.append(old_base[case_label(c)] / timing.bench_cuda(lambda m=m, xs=xs: m(*xs)).median_ms)
            g = timing.geomean(ratios) or 1.0
            thr = settings.improvement_threshold
            old_calls["improved" if g > 1 + thr else "regressed" if g < 1 - thr else "neutral"] += 1
    out = {"cases": [case_label(c) for c in cases], "smoke": smoke, "n": n, "noise_floor": floor.model_dump(), "calls": dict(calls),
           "false_call_fraction": (calls["improved"] + calls["regressed"]) / n, "methods": dict(methods),
           "vs_base_point_range": [min(points), max(points)] if points else None,
           "median_interval_width": sorted(widths)[len(widths) // 2] if widths else None,
           "seconds": round(time.perf_counter() - t0, 1)}
    if old_rule:
        out["old_rule"] = {"calls": dict(old_calls), "false_call_fraction": (old_calls["improved"] + old_calls["regressed"]) / n}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="ladder bench aa", description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path, help="output folder (aa.json goes there)")
    ap.add_argument("--ops", nargs="+", default=DEFAULT_OPS, help=f"suite operators (default {' '.join(DEFAULT_OPS)})")
    ap.add_argument("--n", type=int, default=50, help="identical-kernel comparisons per operator (4 x 50 = 200 by default)")
    ap.add_argument("--max-cases", type=int, default=2, help="the smallest N cases of each operator (keeps it affordable)")
    ap.add_argument("--smoke", action="store_true", help="time the tiny SMOKE_CASES (microsecond kernels: the CUDA-graph path)")
    ap.add_argument("--old-rule", action=argparse.BooleanOptionalAction, default=True, help="also judge by the previous protocol")
    args = ap.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        raise SystemExit("error: benchmarks/aa.py needs a CUDA GPU (it measures the GPU timing protocol)")
    from optimizer.settings import LadderSettings

    s = LadderSettings()
    result: dict[str, Any] = {"provenance": provenance(), "device": torch.cuda.get_device_name(),
                              "settings": {k: getattr(s, k) for k in ("timing_blocks", "timing_rep_ms", "timing_warmup_ms",
                                                                      "timing_graph_below_us", "improvement_threshold")},
                              "operators": {}}
    args.out.mkdir(parents=True, exist_ok=True)
    for op in args.ops:
        r = run_operator(op, args.n, args.max_cases, args.old_rule, args.smoke)
        result["operators"][op] = r
        print(f"{op}: floor {r['noise_floor']['floor']:.2%}, calls {r['calls']}, false {r['false_call_fraction']:.1%}"
              + (f"; old rule {r['old_rule']['calls']}" if "old_rule" in r else "") + f" ({r['seconds']} s)", flush=True)
        (args.out / "aa.json").write_text(json.dumps(result, indent=2, default=str) + "\n")  # partial results survive a timeout
    total = sum(r["n"] for r in result["operators"].values())
    false = sum(r["calls"].get("improved", 0) + r["calls"].get("regressed", 0) for r in result["operators"].values())
    result["overall"] = {"comparisons": total, "false_calls": false, "false_call_fraction": false / total if total else None}
    if args.old_rule:
        of = sum(r["old_rule"]["calls"].get("improved", 0) + r["old_rule"]["calls"].get("regressed", 0) for r in result["operators"].values())
        result["overall"]["old_rule_false_call_fraction"] = of / total if total else None
    (args.out / "aa.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(json.dumps(result["overall"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
