"""GPU measurement worker for the suite runner: one operator's cases, timed under the optimizer's protocol.

    python benchmarks/suite/_measure.py REQUEST.json RESULT.jsonl

Run by ``runner.py`` in a subprocess per operator (a kernel that poisons the CUDA context, or a torch.compile
that hangs, takes only this process down). Each measurement is appended to RESULT.jsonl as soon as it is taken,
so a worker killed at its time box leaves everything it measured before.

Tasks (``request["task"]``):

- ``times``: per case, build the reference ``Model`` and the ``ModelNew`` of each candidate (the initial and
  the session's best) from the same seed and inputs (created directly on the GPU), check each candidate's
  output against the reference (every element, the problem's tolerance), then time eager PyTorch and each
  candidate with ``optimizer.harness.timing.bench_cuda`` (median of event-timed reps, 256 MB L2 flush before each rep:
  the protocol every session round is timed under).
- ``compile``: per case, ``torch.compile(Model, dynamic=False)``, record the first call's wall time (the
  compile), check its output, then time it with the same protocol. Cases not reached before
  ``request["deadline"]`` are recorded as skipped.
- ``ceilings``: the device's achievable copy bandwidth (device-to-device copy of 2 GiB, bytes read plus
  written) and dense bf16 matmul rate (8192^3 on random data), to set beside the datasheet peaks.

Lines: ``{"kind": "device", ...}`` first, then ``{"case", "label", "what", "status", "ms", "stats", ...}``.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # kb imports bm25s, which starts jax (on the GPU, if allowed) at import
SUITE = Path(__file__).resolve().parent
if str(SUITE) not in sys.path:
    sys.path.insert(0, str(SUITE))


class _Sink:
    def __init__(self, path: Path) -> None:
        self.f = open(path, "a")  # noqa: SIM115 - kept open for the whole worker

    def emit(self, rec: dict[str, Any]) -> None:
        self.f.write(json.dumps(rec, default=str) + "\n")
        self.f.flush()


def _bench(fn: Any, timing: dict[str, Any], method: str | None = None) -> dict[str, Any]:
    """Stats under the session's fixed method for the case (``timing.bench_method``), the method used, and the host's
    steady-state wall and launch time per call (what an eager loop sees)."""
    import torch

    from optimizer.harness.timing import bench_method, host_wall_ms

    stats, used = bench_method(fn, method, warmup_ms=float(timing["warmup_ms"]), rep_ms=float(timing["rep_ms"]),
                               flush_bytes=int(timing["flush_bytes"]))
    return {**stats.as_dict(), "method": used, "host": host_wall_ms(fn, torch.cuda.synchronize)}


def _short(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:1500]


def _free() -> None:
    import torch

    gc.collect()
    try:
        torch.cuda.empty_cache()
    except Exception:  # a poisoned context refuses even this; the worker is about to end anyway
        pass


def task_times(req: dict[str, Any], sink: _Sink) -> None:
    import torch
    from _harness import case_label, compare_problem, inplace_views, load_candidate, load_problem

    problem = load_problem(req["problem"])
    inplace = bool(getattr(problem.module, "INPLACE_OUTPUTS", None))
    fresh = (lambda xs: [x.clone() if isinstance(x, torch.Tensor) else x for x in xs]) if inplace else (lambda xs: xs)
    classes: dict[str, type | None] = {}
    for what, path in req["candidates"].items():
        try:
            classes[what] = load_candidate(path)
        except Exception as exc:
            classes[what] = None
            sink.emit({"what": what, "status": "error", "message": "import: " + _short(exc)})
    seed = int(req.get("seed", 0))
    methods = req.get("methods") or {}  # label -> the session's fixed method for the case (one timing truth)
    for case in req["cases"]:
        label = case_label(case)
        base = {"case": case, "label": label}
        try:
            with torch.device("cuda"):
                model = problem.make_model(case, seed=seed, device="cuda")
                inputs = problem.make_inputs(case, seed=seed + 1, device="cuda")
            with torch.no_grad():
                ref_in = fresh(inputs)  # INPLACE_OUTPUTS: reference and each candidate get their own copy
                ref = inplace_views(problem, model(*ref_in), ref_in)
                torch.cuda.synchronize()
                sink.emit({**base, "what": "eager", "status": "ok",
                           "stats": _bench(lambda: model(*ref_in), req["timing"], methods.get(label))})  # noqa: B023
        except Exception as exc:
            sink.emit({**base, "what": "eager", "status": "error", "message": _short(exc)})
            _free()
            continue
        for what, cls in classes.items():
            if cls is None:
                continue
            try:
                with torch.device("cuda"):
                    new = problem.instantiate(cls, case, seed=seed, device="cuda")
                with torch.no_grad():
                    new_in = fresh(inputs)
                    out = inplace_views(problem, new(*new_in), new_in)
                    torch.cuda.synchronize()
                    cmp = compare_problem(problem, ref, out)
                    out = None
                    rec = {**base, "what": what, "check": cmp.as_dict()}
                    if not cmp.ok:
                        sink.emit({**rec, "status": "mismatch", "message": cmp.message[:500]})
                        continue
                    sink.emit({**rec, "status": "ok",
                               "stats": _bench(lambda: new(*new_in), req["timing"], methods.get(label))})  # noqa: B023
            except Exception as exc:
                sink.emit({**base, "what": what, "status": "error", "message": _short(exc)})
                if "illegal" in str(exc) or "launch failure" in str(exc):
                    raise  # the context is gone: end the worker, the runner records what is missing
            finally:
                new = None
        model = inputs = ref = ref_in = new_in = None
        _free()


def task_compile(req: dict[str, Any], sink: _Sink) -> None:
    import torch
    from _harness import case_label, compare_problem, load_problem

    problem = load_problem(req["problem"])
    deadline = float(req.get("deadline") or 0) or float("inf")
    seed = int(req.get("seed", 0))
    mode = req.get("mode") or "default"
    for case in req["cases"]:
        label = case_label(case)
        base = {"case": case, "label": label, "what": "compile", "mode": mode}
        if time.time() > deadline:
            sink.emit({**base, "status": "skipped", "message": "torch.compile time box spent before this case"})
            continue
        try:
            torch._dynamo.reset()
            with torch.device("cuda"):
                model = problem.make_model(case, seed=seed, device="cuda")
                inputs = problem.make_inputs(case, seed=seed + 1, device="cuda")
            compiled = torch.compile(model, mode=None if mode == "default" else mode, dynamic=False)
            with torch.no_grad():
                ref = model(*inputs)
                t0 = time.perf_counter()
                out = compiled(*inputs)
                torch.cuda.synchronize()
                compile_s = time.perf_counter() - t0
                cmp = compare_problem(problem, ref, out)
                ref = out = None
                stats = _bench(lambda: compiled(*inputs), req["timing"], (req.get("methods") or {}).get(label))  # noqa: B023
            sink.emit({**base, "status": "ok", "stats": stats, "compile_s": round(compile_s, 2), "check": cmp.as_dict()})
        except Exception as exc:
            sink.emit({**base, "status": "error", "message": _short(exc)})
        finally:
            model = inputs = compiled = ref = out = None
            _free()


def task_ceilings(req: dict[str, Any], sink: _Sink) -> None:
    import torch

    timing = req["timing"]
    n = 2 * 1024**3 // 4
    src = torch.empty(n, dtype=torch.float32, device="cuda").uniform_()
    dst = torch.empty_like(src)
    copy = _bench(lambda: dst.copy_(src), timing)
    sink.emit({"what": "copy_bandwidth", "status": "ok", "stats": copy, "bytes": 2 * n * 4,
               "gbps": round(2 * n * 4 / (copy["median_ms"] * 1e-3) / 1e9, 1)})
    src = dst = None
    _free()
    m = 8192
    a = torch.randn(m, m, dtype=torch.bfloat16, device="cuda")
    b = torch.randn(m, m, dtype=torch.bfloat16, device="cuda")
    mm = _bench(lambda: a @ b, timing)
    sink.emit({"what": "bf16_matmul", "status": "ok", "stats": mm, "flops": 2 * m**3,
               "tflops": round(2 * m**3 / (mm["median_ms"] * 1e-3) / 1e12, 1)})


# ----------------------------------------------------------------- driver side (runs in the runner process) ---
def spawn(req: dict[str, Any], res: Path, timeout: float, repo: Path) -> tuple[int, list[dict[str, Any]]]:
    """Run one task in a fresh worker process; (exit status or -9 on timeout, the records it wrote)."""
    from _results import read_jsonl, write_json

    req_path = res.with_suffix(".request.json")
    write_json(req_path, req)
    res.write_text("")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(repo), os.environ.get("PYTHONPATH", "")) if p)}
    try:
        rc = subprocess.run([sys.executable, str(Path(__file__).resolve()), str(req_path), str(res)], check=False,
                            timeout=max(5.0, timeout), env=env, stdout=subprocess.DEVNULL).returncode
    except subprocess.TimeoutExpired:
        rc = -9
    return rc, read_jsonl(res)


def merge_times(cases: list[dict[str, Any]], recs: list[dict[str, Any]], cands: list[str],
                session: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Fill ``<what>_ms`` / ``<what>_status`` of every case from a ``times`` worker's records (and the session's own
    times of the initial and best round); returns (what is missing, worker-level errors)."""
    by = {(x.get("label"), x.get("what")): x for x in recs if x.get("label")}
    rounds = {rr["index"]: rr for rr in session.get("rounds", [])}
    missing = []
    for c in cases:
        for what in ("eager", *cands):
            x = by.get((c["label"], what), {})
            c[f"{what}_ms"] = x["stats"]["median_ms"] if x.get("status") == "ok" else None
            c[f"{what}_status"] = x.get("status", "missing")
            if x.get("status") == "ok":  # the device-time method used, and the host's wall time per call beside it
                c[f"{what}_method"] = x["stats"].get("method", "do_bench")
                c[f"{what}_host_ms"] = (x["stats"].get("host") or {}).get("wall_ms")
            if x.get("status") != "ok":
                missing.append(f"{c['label']} {what}: {x.get('status', 'missing')} {str(x.get('message', ''))[:200]}")
        c["session_initial_ms"] = (rounds.get(0) or {}).get("case_ms", {}).get(c["label"])
        c["session_best_ms"] = (rounds.get(session.get("best_round")) or {}).get("case_ms", {}).get(c["label"])
    fatal = [str(x.get("message")) for x in recs
             if x.get("kind") == "fatal" or (x.get("what") and not x.get("label") and x.get("status") == "error")]
    return missing, fatal


def merge_compile(cases: list[dict[str, Any]], recs: list[dict[str, Any]], rc: int) -> tuple[str, list[str]]:
    """Fill ``compile_ms`` / ``compile_s`` / ``compile_status`` per case; returns (phase status, messages)."""
    by = {x.get("label"): x for x in recs if x.get("label")}
    for c in cases:
        x = by.get(c["label"], {})
        ok = x.get("status") == "ok" and (x.get("check") or {}).get("ok", True)
        c["compile_ms"] = x["stats"]["median_ms"] if ok else None
        c["compile_s"] = x.get("compile_s")
        c["compile_status"] = "ok" if ok else ("mismatch" if x.get("status") == "ok" else x.get("status", "missing"))
    n_ok = sum(c["compile_status"] == "ok" for c in cases)
    status = "ok" if n_ok == len(cases) else ("timeout" if rc == -9 else "partial" if n_ok else "failed")
    msgs = [f"{c['label']}: {c['compile_status']} {str(by.get(c['label'], {}).get('message', ''))[:200]}"
            for c in cases if c["compile_status"] != "ok"]
    return status, msgs


TASKS = {"times": task_times, "compile": task_compile, "ceilings": task_ceilings}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    req = json.loads(Path(argv[0]).read_text())
    sink = _Sink(Path(argv[1]))
    import torch
    import triton

    if not torch.cuda.is_available():
        sink.emit({"kind": "device", "status": "error", "message": "no CUDA device"})
        return 2
    sink.emit({"kind": "device", "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
               "triton": triton.__version__, "cuda": torch.version.cuda})
    try:
        TASKS[req["task"]](req, sink)
    except Exception as exc:
        sink.emit({"kind": "fatal", "status": "error", "message": _short(exc), "traceback": traceback.format_exc()[-3000:]})
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
