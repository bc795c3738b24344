"""``ladder bench suite``: optimizer sessions across the operator suite, resumable, within a wall-clock budget.

    PYTHONPATH=. python3 benchmarks/suite/runner.py --backend cuda --rounds 6 --budget-s 520 \
        --out benchmarks/results/suite --pack $OUT/suite.tar.gz          # one device call; run it again to go on
    python benchmarks/suite/runner.py --unpack suite.tar.gz --out benchmarks/results/suite --no-run
    python benchmarks/suite/runner.py --backend interpreter --ops relu softmax --rounds 2 --out /tmp/suite
    PYTHONPATH=. python3 benchmarks/suite/runner.py --initial naive --backend cuda --rounds 15 --budget-s 520 \
        --pack $OUT/naive.tar.gz                      # from naive.py; results in benchmarks/results/naive

``--initial`` picks each operator's starting point: ``initial.py`` (default) or ``naive.py`` (the naive first
translations). ``--set realistic`` drives the real public kernels of ``benchmarks/realistic`` (their ``initial.py``,
results in ``benchmarks/results/realistic/campaign``) through the same sessions and measurements. The choice is
recorded in every ``result.json`` (``initial``, ``set``) and in ``runs.jsonl``; the sets never share a result dir
(the default dir follows the set, and a dir holding another set is refused).

On the lent H200 (no network, no pydantic, grpcio older than the generated code): carry pydantic's wheels and a
KB snapshot, ``export PYTHONPATH=/tmp/site:$PWD LADDER_SNAPSHOT=DIR LADDER_EMBEDDING_MODEL_DIR=DIR``; when
``retrieval.client`` cannot import, the runner opens the snapshot directly (``connect_kb``).

Per operator: an optimizer session (``optimizer.session.Session``, in-process, KB from ``--server`` or the
embedded KB / ``LADDER_SNAPSHOT``), then on CUDA a measurement pass in a subprocess (``_measure.py``): eager
PyTorch, the initial and the best candidate, every case, timed back to back under the optimizer's protocol
(``optimizer.harness.timing.bench_cuda``), then torch.compile in its own time-boxed subprocess. The interpreter backend
checks correctness only and measures nothing.

Resuming: each phase's outcome lands in ``<op>/result.json`` before the next starts. Finished operators are
skipped; an operator whose session was cut off restarts its session; one whose session finished but whose
measurement did not re-measures only. ``--budget-s`` stops starting work when the budget is nearly spent:
a session's round is not started when it and the measurement would overrun, and the session then ends with the
rounds it has (recorded as truncated). ``--pack FILE`` writes the result directory (without IR dumps) as one
tar.gz after every operator; ``--unpack FILE`` restores it first. See ``_results.py`` for the layout.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

# bm25s (imported with kb) runs a jax op at import when jax is installed, as on the GPU image: that starts XLA on
# the GPU and preallocates most of its memory in every process that imports kb. Keep jax on the CPU, here and in
# every child process (session workers, _measure.py).
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

SUITE = Path(__file__).resolve().parent
REPO = SUITE.parents[1]
for _p in (REPO, SUITE, REPO / "benchmarks"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from _data import files as data_files
from _data import read_bytes, read_text
from _results import (
    append_jsonl,
    pack,
    read_json,
    sources_as_code,
    sources_as_data,
    summarize_trajectory,
    unpack,
    write_json,
)

DEFAULT_OUT = REPO / "benchmarks" / "results" / "suite"
#: the default result dir of each starting-point set (``--initial``)
DEFAULT_OUTS = {"initial": DEFAULT_OUT, "naive": REPO / "benchmarks" / "results" / "naive"}
REALISTIC_OUT = REPO / "benchmarks" / "results" / "realistic" / "campaign"
DIAGNOSIS_OUT = REPO / "benchmarks" / "results" / "diagnosis" / "campaign"


def default_out(problem_set: str, initial: str) -> Path:
    """The result dir of a (problem set, starting point): the real kernels' or the diagnosis set's, else the
    starting-point set's."""
    return {"realistic": REALISTIC_OUT, "diagnosis": DIAGNOSIS_OUT}.get(problem_set) or DEFAULT_OUTS[initial]
#: first-guess phase durations (s) before this result dir has history: baseline, one round, measurement, compile
DEFAULTS = {"cuda": (40.0, 60.0, 45.0, 120.0), "interpreter": (12.0, 12.0, 0.0, 0.0)}


class OutOfTime(Exception):
    """Raised from the session's progress callback when the next round would overrun the budget."""


def connect_kb(server: str | None, home: str | None) -> Any:
    """``retrieval.client.connect``; where the wire layer cannot import (e.g. the GPU image's grpcio is older than
    the generated code needs) and no server is asked for, the snapshot KB that ``connect`` would have returned."""
    try:
        from retrieval.client import connect
    except (ImportError, RuntimeError) as exc:
        from kb.settings import Settings

        settings = Settings(**({"home": Path(home).expanduser()} if home else {}))
        if server or settings.snapshot is None:
            raise
        from kb.search.embedding import Embedder
        from kb.snapshot import SnapshotKB

        print(f"retrieval.client unavailable ({str(exc)[:120]}); reading the snapshot {settings.snapshot} directly", flush=True)
        return SnapshotKB(settings.snapshot, outbox=settings.home / "outbox", embedder=Embedder(model_path=settings.embedding_model_dir, backend=settings.embed_backend))
    return connect(server=server, home=home)


def _hms(s: float) -> str:
    s = max(0, int(s))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


class Runner:
    def __init__(self, args: argparse.Namespace, *, kb: Any = None, settings: Any = None, log: Any = None) -> None:
        self.a, self.kb, self.settings = args, kb, settings
        self.out = Path(args.out).resolve()
        self.log = log or (lambda msg: print(msg, flush=True))
        self.start = time.time()
        self.deadline = self.start + args.budget_s if args.budget_s else float("inf")
        self.run_id = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        self.ceilings: dict[str, Any] = {}
        from _harness import PROBLEM_ROOTS

        self.root = PROBLEM_ROOTS[args.set]

    # ------------------------------------------------------------------------------------------- plan ---
    def select_ops(self) -> list[str]:
        from _harness import list_ops, load_problem

        known = list_ops(self.root)
        ops = self.a.ops or known
        unknown = sorted(set(ops) - set(known))
        if unknown:
            raise SystemExit(f"unknown operator(s): {', '.join(unknown)} (see {self.root.relative_to(REPO)}/)")
        if self.a.category:
            ops = [op for op in ops if getattr(load_problem(self.root / op).module, "CATEGORY", None) in self.a.category]
        if self.a.split:  # the label's split only chooses items; the session never sees label.yaml
            from benchmarks.diagnosis.dataset import load_items

            half = {i.name for i in load_items(self.a.split, root=self.root)}
            ops = [op for op in ops if op in half]
        return ops

    def todo(self, op: str, *, redo: bool = False) -> str | None:
        """Why ``op`` needs work in this invocation, or None when it is complete (or given up on)."""
        r = read_json(self.out / op / "result.json")
        if r is None or redo:
            return "new" if r is None else "redo"
        if r.get("backend") != self.a.backend:
            return f"backend {r.get('backend')} -> {self.a.backend}"
        status, attempts = r.get("status"), int(r.get("attempts", 0))
        if status in ("running", "error", "failed"):  # failed: the baseline did not validate (an OOM can do that)
            return f"{status} before" if attempts < self.a.max_attempts else None
        if status == "done" and self.a.backend == "cuda" and self.a.compile and (r.get("compile") or {}).get("status") != "ok":
            return "torch.compile missing" if int((r.get("compile") or {}).get("attempts", 0)) < self.a.max_attempts else None
        return None

    def estimates(self) -> dict[str, float]:
        """Phase durations from the finished operators of this result dir (defaults before there are any)."""
        from _results import load_results

        base, rnd, meas, comp = DEFAULTS[self.a.backend]
        done = [r for r in load_results(self.out).values() if r.get("status") == "done" and r.get("backend") == self.a.backend]
        rounds = [x["duration_s"] for r in done for x in r["session"]["rounds"][1:]]
        bases = [r["session"]["rounds"][0]["duration_s"] for r in done if r["session"]["rounds"]]
        meas_s = [r["measure"]["wall_s"] for r in done if (r.get("measure") or {}).get("wall_s")]
        comp_s = [r["compile"]["wall_s"] for r in done if (r.get("compile") or {}).get("wall_s")]
        avg = lambda xs, d: sum(xs) / len(xs) if xs else d
        est = {"baseline": avg(bases, base), "round": avg(rounds, rnd), "measure": avg(meas_s, meas),
               "compile": avg(comp_s, comp) if self.a.compile else 0.0}
        # sessions end early (at the roofline, or after inconclusive rounds): where finished sessions say how long a
        # whole one takes, that observed length is the estimate, never more than the rounds asked for allow
        full = est["baseline"] + self.a.rounds * est["round"]
        walls = [r["session"]["wall_s"] for r in done if (r.get("session") or {}).get("wall_s")
                 and int(r.get("rounds_requested") or 0) >= self.a.rounds]
        est["session"] = min(full, avg(walls, full))
        est["op"] = est["session"] + est["measure"] + est["compile"]
        est["minimum"] = est["baseline"] + min(1, self.a.rounds) * est["round"] + est["measure"] + est["compile"]
        return est

    # -------------------------------------------------------------------------------------------- run ---
    def check_set(self) -> None:
        """Refuse a result dir that holds operators started from the other set: their figures must not mix."""
        from _results import load_results

        other = sorted(op for op, r in load_results(self.out).items()
                       if (r.get("initial", "initial"), r.get("set", "suite")) != (self.a.initial, self.a.set))
        if other:
            raise SystemExit(f"{self.out} holds results started from another set than {self.a.set} {self.a.initial}.py "
                             f"({', '.join(other[:5])}{' ...' if len(other) > 5 else ''}); give this set its own dir: "
                             f"--out {default_out(self.a.set, self.a.initial)}")

    def run(self) -> int:
        self.out.mkdir(parents=True, exist_ok=True)
        self.check_set()
        ops = self.select_ops()
        todo = [(op, why) for op in ops if (why := self.todo(op, redo=self.a.redo))]
        self.unpack_for_work([op for op, _ in todo])
        self.log(f"suite: {len(ops)} operator(s), {len(ops) - len(todo)} complete, {len(todo)} to run "
                 f"(from {self.a.initial}.py, backend {self.a.backend}, {self.a.rounds} rounds, budget {_hms(self.a.budget_s) if self.a.budget_s else 'none'})")
        if self.a.backend == "cuda" and todo:
            self.ceilings = self.measure_ceilings()
        from _provenance import provenance

        append_jsonl(self.out / "runs.jsonl", {"run": self.run_id, "event": "start", "provenance": provenance(),
                                               "args": {k: v for k, v in vars(self.a).items()}, "ceilings": self.ceilings})
        finished, started = 0, 0
        for i, (op, why) in enumerate(todo):
            est = self.estimates()
            left = self.deadline - time.time()
            # an operator that fits a fresh invocation waits for one rather than being cut; one that fits none
            # starts whenever its baseline, one round and the measurements fit
            need = est["op"] if not self.a.budget_s or est["op"] <= self.a.budget_s else est["minimum"]
            if started and need > left:
                self.log(f"budget: {_hms(left)} left, an operator needs ~{_hms(need)}; stopping with "
                         f"{len(todo) - i} to go (run again to continue)")
                break
            started += 1
            eta = (len(todo) - i) * est["op"]
            self.log(f"[{i + 1}/{len(todo)}] {op}: start ({why}); elapsed {_hms(time.time() - self.start)}, "
                     f"ETA for the rest {_hms(eta)}")
            t0 = time.time()
            try:
                res = self.run_op(op)
            except KeyboardInterrupt:
                raise
            except Exception as exc:  # one operator failing must not stop the others
                res = self._record(op, status="error", error=f"{type(exc).__name__}: {exc}",
                                   traceback=traceback.format_exc()[-3000:])
            finished += res.get("status") == "done"
            self.log(f"[{i + 1}/{len(todo)}] {op}: {self._line(res)} ({_hms(time.time() - t0)})")
            self.pack()
        append_jsonl(self.out / "runs.jsonl", {"run": self.run_id, "event": "end", "wall_s": round(time.time() - self.start, 1),
                                               "ops_done": finished, "ops_started": started})
        left = [op for op in ops if self.todo(op)]
        # with --redo an operator complete from an earlier run is not "complete" for this one until it ran here
        not_run = [op for op, _why in todo[started:]] if self.a.redo else []
        self.log(f"suite: {len(ops) - len(left)}/{len(ops)} operator(s) complete" + (f"; left: {' '.join(left)}" if left else "")
                 + (f"; not redone (budget): {' '.join(not_run)}" if not_run else ""))
        self.pack()
        return 0

    def unpack_for_work(self, ops: list[str]) -> None:
        """Where the result dir is packed (``benchmarks/_data.py``), write out what this run changes: the ``*.jsonl``
        logs at its top (appended to) and the folders of the operators it works on (sources turned back into code)."""
        written = 0
        for p in data_files(self.out):
            rel = p.relative_to(self.out).parts
            wanted = (len(rel) == 1 and p.suffix == ".jsonl") or rel[0] in ops
            if wanted and not p.is_file() and not p.with_name(p.name + ".gz").is_file():
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_bytes(read_bytes(p))
                written += 1
        if written:
            sources_as_code(self.out)
            self.log(f"unpacked {written} file(s) of {len(ops)} operator(s) from the packed result dir")

    def _record(self, op: str, **update: Any) -> dict[str, Any]:
        from _provenance import provenance

        path = self.out / op / "result.json"
        r = read_json(path) or {}
        r.update(update, op=op, run=self.run_id, updated=datetime.now(timezone.utc).isoformat(timespec="seconds"))
        r["provenance"] = provenance()
        write_json(path, r)
        return r

    def run_op(self, op: str) -> dict[str, Any]:
        from _harness import load_problem

        problem = load_problem(self.root / op)
        prev = read_json(self.out / op / "result.json") or {}
        cases = problem.cases_for(self.a.backend)
        fresh = (self.a.redo or prev.get("backend") != self.a.backend or prev.get("status") == "failed"
                 or not (prev.get("session") or {}).get("complete"))
        base = {"backend": self.a.backend, "initial": self.a.initial, "set": self.a.set, "category": getattr(problem.module, "CATEGORY", None),
                "rounds_requested": self.a.rounds, "proposer": self.a.proposer}
        if fresh:
            same = prev.get("backend") == self.a.backend and not self.a.redo
            r = self._record(op, **base, status="running", attempts=int(prev.get("attempts", 0)) + 1 if same else 1,
                             session=None, cases=self._cases(op, problem, cases), measure=None, compile=None, error=None)
            r = self._record(op, session=self.run_session(op), status="running")
        else:
            r = self._record(op, status="running", attempts=int(prev.get("attempts", 0)) + 1)
        if not r["session"]["baseline_passed"]:
            why = (r["session"]["rounds"] or [{}])[0].get("failure") or "see session/trajectory.json"
            return self._record(op, status="failed", error=f"the initial candidate failed validation: {why}")
        if self.a.backend != "cuda":
            return self._record(op, status="done")
        if fresh or (r.get("measure") or {}).get("status") != "ok":
            r = self.measure_times(op, r)
        if r["measure"]["status"] != "ok":
            return self._record(op, status="error", error=f"measurement: {r['measure'].get('message', '')}")
        if self.a.compile and (r.get("compile") or {}).get("status") != "ok":
            r = self.measure_compile(op, r)
        elif not self.a.compile and not r.get("compile"):
            r = self._record(op, compile={"status": "disabled", "message": "--no-compile"})
        return self._record(op, status="done", error=None)

    @staticmethod
    def _cases(op: str, problem: Any, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
        from _harness import case_label

        return [{"label": case_label(c), "case": c, "dtype": c.get("dtype", "float32"), "flops": problem.flops(c),
                 "bytes": problem.bytes_moved(c)} for c in cases]

    # ---------------------------------------------------------------------------------------- session ---
    def _kb(self) -> Any:
        if self.kb is None:
            self.log("connecting to the KB" + (f" at {self.a.server}" if self.a.server else
                                               f" (snapshot {os.environ['LADDER_SNAPSHOT']})" if os.environ.get("LADDER_SNAPSHOT") else " (embedded)"))
            self.kb = connect_kb(self.a.server, self.a.home)
        return self.kb

    def default_settings(self) -> Any:
        """LadderSettings from the environment; on CUDA the sandbox's host-memory cap is raised (``--sandbox-memory-mb``)
        unless LADDER_SANDBOX_MEMORY_MB sets it: validating the large cases compares outputs in float64 on the host."""
        from optimizer.settings import LadderSettings

        s = LadderSettings()
        if self.a.backend == "cuda" and "LADDER_SANDBOX_MEMORY_MB" not in os.environ:
            s = s.model_copy(update={"sandbox_memory_mb": self.a.sandbox_memory_mb})
        return s

    def initial_file(self, op: str) -> Path:
        from _harness import initial_path

        return initial_path(op, self.a.initial, self.root)

    def run_session(self, op: str) -> dict[str, Any]:
        import json

        from optimizer.events import Event, RoundEnded, RoundStarted, SubmitFailed
        from optimizer.proposers.factory import make_proposer
        from optimizer.session import Session

        settings = self.settings or self.default_settings()
        sess_dir = self.out / op / "session"
        shutil.rmtree(sess_dir, ignore_errors=True)
        est = self.estimates()
        durations: list[float] = []
        t0 = time.time()

        def progress(event: Event) -> None:
            if isinstance(event, RoundStarted) and event.round >= 2:
                per_round = sum(durations[1:]) / max(1, len(durations) - 1) if len(durations) > 1 else est["round"]
                if time.time() + per_round + est["measure"] + est["compile"] > self.deadline:
                    raise OutOfTime(f"round {event.round} not started: the budget would be overrun")
            elif isinstance(event, RoundEnded):
                r = event.round
                durations.append(r.duration_s)
                sp = r.timing.geomean_speedup if r.timing else None
                fam = f" {r.rewrite.family}" if r.rewrite else ""
                self.log(f"    {op} r{r.index}: {'>'.join(r.levels_reached) or 'baseline'}{fam} -> {r.outcome}"
                         + (f" {sp:.3f}x" if sp else "") + f" ({r.duration_s:.0f}s)")
            elif isinstance(event, SubmitFailed):
                self.log(f"    {op}: trajectory submission failed: {event.error}")

        session = Session(self.root / op, self.initial_file(op), kb=self._kb(), settings=settings, backend=self.a.backend,
                          proposer=make_proposer(self.a.proposer, settings), out_dir=sess_dir, progress=progress)
        truncated = ""
        try:
            traj = session.run(self.a.rounds, submit=bool(self.a.server))
        except OutOfTime as exc:
            truncated = str(exc)
            traj = self._finish_truncated(sess_dir)
        summary = summarize_trajectory(json.loads(traj.model_dump_json()))
        summary.update(complete=True, truncated=truncated, wall_s=round(time.time() - t0, 1),
                       trajectory="session/trajectory.json", best_candidate="session/best.py")
        return summary

    def _finish_truncated(self, sess_dir: Path) -> Any:
        """The session as it stood when the budget ran out: best round selected over the rounds run, best.py copied."""
        from kb.models import Trajectory
        from optimizer.harness.timing import geomean
        from optimizer.round.select import select_best

        traj = Trajectory.model_validate_json((sess_dir / "trajectory.json").read_text())
        traj.best_round = select_best(traj.rounds)
        if traj.best_round is not None:
            best = traj.rounds[traj.best_round]
            ms = [c.ms for c in best.timing.cases if c.ms] if best.timing else []
            traj.best_ms = geomean(ms) if ms else None
            shutil.copyfile(best.candidate_path, sess_dir / "best.py")
        (sess_dir / "trajectory.json").write_text(traj.model_dump_json(indent=2))
        if self.a.server:
            try:
                self._kb().submit_trajectory(traj)
            except Exception as exc:
                self.log(f"    trajectory submission failed: {exc}")
        return traj

    # ------------------------------------------------------------------------------------ measurement ---
    def _timing(self) -> dict[str, Any]:
        s = self.settings or self.default_settings()
        return {"warmup_ms": s.timing_warmup_ms, "rep_ms": s.timing_rep_ms, "flush_bytes": s.l2_flush_mb * 1024 * 1024}

    def _worker(self, req: dict[str, Any], res: Path, timeout: float) -> tuple[int, list[dict[str, Any]]]:
        from _measure import spawn

        return spawn(req, res, timeout, REPO)

    def measure_ceilings(self) -> dict[str, Any]:
        rc, recs = self._worker({"task": "ceilings", "timing": self._timing()}, self.out / "ceilings.jsonl", 180)
        by = {r.get("what"): r for r in recs}
        dev = next((r for r in recs if r.get("kind") == "device"), {})
        c = {"device": dev.get("device"), "copy_gbps": (by.get("copy_bandwidth") or {}).get("gbps"),
             "bf16_tflops": (by.get("bf16_matmul") or {}).get("tflops"), "rc": rc}
        self.log(f"device {c['device']}: copy {c['copy_gbps']} GB/s, bf16 matmul {c['bf16_tflops']} TFLOP/s"
                 + ("".join(f"; {x.get('message', '')[:300]}" for x in recs if x.get("status") == "error")))
        return c

    def measure_times(self, op: str, r: dict[str, Any]) -> dict[str, Any]:
        from _measure import merge_times

        best = self.out / op / "session" / "best.py"
        cands = {"initial": str(self.initial_file(op)), **({"best": str(best)} if best.exists() else {})}
        fix = self.root / op / "fix.py"
        if self.a.set == "diagnosis" and fix.is_file():  # the reference fix, timed in the same worker as the best
            cands["fix"] = str(fix)
        req = {"task": "times", "problem": str(self.root / op / "problem.py"), "candidates": cands,
               "cases": [c["case"] for c in r["cases"]], "timing": self._timing(), "seed": 0, "methods": self._methods(op)}
        t0 = time.time()
        rc, recs = self._worker(req, self.out / op / "measure_times.jsonl", self.a.measure_timeout_s)
        missing, fatal = merge_times(r["cases"], recs, list(cands), r["session"])
        dev = next((x for x in recs if x.get("kind") == "device"), {})
        status = "ok" if not missing and rc == 0 else ("timeout" if rc == -9 else "incomplete")
        msg = "; ".join([*(m for m in fatal if m), *missing])[:2000] or (f"worker exit {rc}" if rc else "")
        measure = {"status": status, "rc": rc, "wall_s": round(time.time() - t0, 1), "device": dev.get("device"),
                   "versions": {k: dev.get(k) for k in ("torch", "triton", "cuda")}, "message": msg,
                   "protocol": {"method": "optimizer.harness.timing.bench_method median under the session's per-case method",
                                **self._timing()}, "ceilings": self.ceilings}
        return self._record(op, cases=r["cases"], measure=measure)

    def _methods(self, op: str) -> dict[str, str]:
        """The session's per-case timing methods (trajectory ``timing_methods``): the report times each case the way
        the session did, so its speedups are the session's (one timing truth)."""
        path = self.out / op / "session" / "trajectory.json"
        try:
            doc = json.loads(read_text(path))  # a committed session's is trajectory.json.gz
        except (OSError, ValueError):
            return {}
        return {k: v["method"] for k, v in (doc.get("timing_methods") or {}).items() if isinstance(v, dict) and "method" in v}

    def measure_compile(self, op: str, r: dict[str, Any]) -> dict[str, Any]:
        from _measure import merge_compile

        prev = r.get("compile") or {}
        left = self.deadline - time.time() - 15
        box = min(self.a.compile_budget_s, left)
        attempts = int(prev.get("attempts", 0)) + 1
        if box < 30:
            return self._record(op, compile={**prev, "status": "skipped", "message": "no budget left for torch.compile",
                                             "attempts": attempts - 1})
        req = {"task": "compile", "problem": str(self.root / op / "problem.py"), "cases": [c["case"] for c in r["cases"]],
               "timing": self._timing(), "seed": 0, "mode": self.a.compile_mode, "deadline": time.time() + box,
               "methods": self._methods(op)}
        t0 = time.time()
        rc, recs = self._worker(req, self.out / op / "measure_compile.jsonl", box + 60)
        status, msgs = merge_compile(r["cases"], recs, rc)
        comp = {"status": status, "mode": self.a.compile_mode, "rc": rc, "wall_s": round(time.time() - t0, 1),
                "time_box_s": round(box), "attempts": attempts, "message": "; ".join(msgs)[:2000]}
        return self._record(op, cases=r["cases"], compile=comp)

    # --------------------------------------------------------------------------------------- progress ---
    @staticmethod
    def _line(r: dict[str, Any]) -> str:
        from _results import geomean

        s = r.get("session") or {}
        if r.get("status") in ("error", "failed"):
            return f"{r['status'].upper()}: {str(r.get('error'))[:300]}"
        parts = [f"{r.get('status')}; best round {s.get('best_round')} ({s.get('best_level')}) of {s.get('rounds_run')}"
                 + (" [truncated]" if s.get("truncated") else "")]
        cs = r.get("cases") or []
        for name, key in (("initial", "initial_ms"), ("eager", "eager_ms"), ("compile", "compile_ms")):
            g = geomean((c.get(key) / c["best_ms"]) if c.get(key) and c.get("best_ms") else None for c in cs)
            if g:
                parts.append(f"{g:.2f}x vs {name}")
        return "; ".join(parts)

    # -------------------------------------------------------------------------------------- pack/unpack ---
    def pack(self) -> None:
        if self.a.pack:
            pack(self.out, Path(self.a.pack))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="ladder bench suite", description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ops", nargs="*", default=[], help="operator names (default: all)")
    p.add_argument("--category", nargs="*", help="only these CATEGORY values (elementwise, reduction, argmax_topk, ...)")
    p.add_argument("--rounds", type=int, default=15, help="session rounds after the baseline (default 15)")
    p.add_argument("--backend", choices=["cuda", "interpreter"], default="cuda")
    p.add_argument("--proposer", choices=["offline", "llm"], default="offline")
    p.add_argument("--initial", choices=sorted(DEFAULT_OUTS), default="initial",
                   help="starting point of every session: initial.py (default) or naive.py")
    p.add_argument("--set", choices=["suite", "realistic", "diagnosis"], default="suite",
                   help="problem set: the operator suite (default), the real kernels of benchmarks/realistic or the "
                   "labelled planted-cause kernels of benchmarks/diagnosis (their fix.py is timed beside the best)")
    p.add_argument("--split", choices=["tune", "eval"], help="with --set diagnosis: only this half of the labelled set")
    p.add_argument("--out", help="result dir (default benchmarks/results/suite, benchmarks/results/naive with --initial naive, "
                   "benchmarks/results/realistic/campaign with --set realistic, benchmarks/results/diagnosis/campaign with --set diagnosis)")
    p.add_argument("--budget-s", type=float, default=0.0, help="wall budget of this invocation (0: none)")
    p.add_argument("--server", help="KB service HOST:PORT; trajectories are submitted to it")
    p.add_argument("--home", help="embedded KB dir (default $LADDER_HOME; LADDER_SNAPSHOT=DIR reads a snapshot)")
    p.add_argument("--no-compile", dest="compile", action="store_false", help="skip torch.compile timings")
    p.add_argument("--compile-mode", default="default", help="torch.compile mode (default, max-autotune-no-cudagraphs ...)")
    p.add_argument("--compile-budget-s", type=float, default=180.0, help="time box of torch.compile per operator")
    p.add_argument("--measure-timeout-s", type=float, default=300.0, help="time box of the timing pass per operator")
    p.add_argument("--sandbox-memory-mb", type=int, default=65536,
                   help="host-memory cap of a CUDA session's sandboxed workers (default 65536; LADDER_SANDBOX_MEMORY_MB wins)")
    p.add_argument("--max-attempts", type=int, default=2, help="give up on an operator after this many failed attempts")
    p.add_argument("--redo", action="store_true", help="rerun the selected operators even if complete")
    p.add_argument("--pack", help="write the result dir as one tar.gz here (after every operator)")
    p.add_argument("--unpack", help="restore a packed result dir into --out before running")
    p.add_argument("--no-run", action="store_true", help="only --unpack / --pack")
    args = p.parse_args(argv)
    if args.set in ("realistic", "diagnosis") and args.initial != "initial":
        p.error(f"--set {args.set} starts from each kernel's initial.py: drop --initial")
    if args.split and args.set != "diagnosis":
        p.error("--split chooses a half of the labelled diagnosis set: use it with --set diagnosis")
    args.out = args.out or str(default_out(args.set, args.initial))
    return args


def main(argv: list[str] | None = None, *, kb: Any = None, settings: Any = None, log: Any = None) -> int:
    args = parse_args(argv)
    out = Path(args.out)
    if args.unpack:
        if Path(args.unpack).is_file():
            n = unpack(Path(args.unpack), out)
            print(f"unpacked {n} file(s) from {args.unpack} into {out}", flush=True)
        else:
            print(f"--unpack: {args.unpack} does not exist; starting from {out} as it is", flush=True)
    if args.no_run:
        if args.pack:
            pack(out, Path(args.pack))
        return 0
    sources_as_code(out)  # resumed sessions import their rounds; at rest the sources are data again
    try:
        return Runner(args, kb=kb, settings=settings, log=log).run()
    finally:
        sources_as_data(out)


if __name__ == "__main__":
    sys.exit(main())
