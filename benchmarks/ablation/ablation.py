"""``ladder bench ablation``: what does the hierarchy buy? Ladder policies (arms) x the fixed problem list (issue 34).

    PYTHONPATH=. python3 benchmarks/ablation/ablation.py --arms hierarchical,always-deep --budget-s 520 \
        --out /tmp/ablation --pack $OUT/ablation.tar.gz          # one device call; run it again to go on
    python benchmarks/ablation/ablation.py --no-run --report   # tables and figures from the committed results
    python benchmarks/ablation/ablation.py --backend interpreter --problems naive/softmax --rounds 1 --out /tmp/abl

Every session: the same problem (``problems.json``, chosen by ``select_problems.py`` before any GPU run), the same rounds
(15), the offline proposer, the same GPU and timing protocol; only the ladder policy (``LADDER_POLICY``) differs.
All arms share one content-addressed timing cache (``<out>/timing_cache.jsonl``, ``optimizer.harness.timing_cache``):
a candidate already timed on this GPU in this run is not timed again (the baseline, common first rounds).

Resumable: one line per finished session in ``<out>/results.jsonl``; a (arm, problem) pair with a line is skipped.
A session cut by ``--budget-s`` is recorded as ``truncated`` and run again next time (its evaluations hit the cache).

Cost: ``gpu_s`` of a session is its wall time on the GPU machine (the session holds the GPU lock throughout) plus
the seconds its cache hits saved (what those evaluations cost when first run), so an arm run after another is not
cheaper for the cache: the cost is what the arm would have paid alone. ``wall_s`` is what it did pay.

``--report`` writes ``report.md``/``report.json``, ``fig_speedup.png`` and ``fig_cost_quality.png`` with provenance.
Per arm, over the problems every reported arm finished (paired): geomean initial -> best speedup, captured headroom
(ln speedup / ln headroom, headroom from ``problems.json``), rounds to the best, GPU-seconds per session and per
doubling (sum of gpu_s / sum of log2 speedup), wrong-family rounds (a rewrite whose family the kernel's label does
not accept; labelled kernels only), the level of the best round, and sessions that ended at 1.00x.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import tarfile
import time
import traceback
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # as the suite runner: keep an imported jax off the GPU
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
for _p in (REPO, REPO / "benchmarks"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

ARMS = ("hierarchical", "l1-only", "profile-first", "always-deep", "random-family")
PROBLEMS = HERE / "problems.json"
DEFAULT_OUT = REPO / "benchmarks" / "results" / "ablation"
#: a session whose best is within this of 1.0 "ended at 1.00x"
AT_ONE = 0.005


class OutOfTime(Exception):
    pass


def load_problems(path: Path = PROBLEMS) -> list[dict[str, Any]]:
    return list(json.loads(path.read_text())["problems"])


def list_sha(path: Path) -> str:
    """The problem list's identity (sha256 of problems.json, 16 hex digits), recorded with every session."""
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def restore_cache(out: Path) -> bool:
    """The committed cache is ``timing_cache.jsonl.gz``: unpacked for the run when no plain file is there."""
    import gzip

    plain, packed = out / "timing_cache.jsonl", out / "timing_cache.jsonl.gz"
    if plain.exists() or not packed.exists():
        return False
    plain.write_bytes(gzip.decompress(packed.read_bytes()))
    return True


def compress(out: Path) -> None:
    """Before committing: the cache as ``timing_cache.jsonl.gz`` and every session's trajectory as
    ``trajectory.json.gz`` (``benchmarks/pack_results.py``), so the results stay small in the device tree."""
    import gzip

    plain = out / "timing_cache.jsonl"
    if plain.exists():
        (out / "timing_cache.jsonl.gz").write_bytes(gzip.compress(plain.read_bytes(), compresslevel=9, mtime=0))
        plain.unlink()
    if (out / "sessions").exists():
        from pack_results import compress as pack_trajectories

        pack_trajectories(out / "sessions")


def read_results(out: Path) -> list[dict[str, Any]]:
    """The session rows, from ``<out>/results.jsonl`` on disk or inside the committed archive (``benchmarks/_data.py``:
    the committed results are packed, a run's folder is loose)."""
    import _data

    path = out / "results.jsonl"
    try:
        text = _data.read_text(path)
    except FileNotFoundError:
        return []
    rows = []
    for line in text.splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue  # a torn last line (a killed run): that session runs again
    return rows


def latest(rows: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """The last record per (arm, problem)."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        out[(r["arm"], r["problem"])] = r
    return out


def append(out: Path, row: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with (out / "results.jsonl").open("a") as f:
        f.write(json.dumps(row, sort_keys=True, default=str) + "\n")
        f.flush()
        os.fsync(f.fileno())


# ------------------------------------------------------------------------------------------------ sessions ---
def summarize(traj: Any, problem: dict[str, Any], arm: str, *, wall_s: float, saved_s: float, hits: int,
              misses: int, truncated: str = "") -> dict[str, Any]:
    """One results.jsonl line from a finished (or truncated) session's trajectory."""
    rounds = []
    for r in traj.rounds:
        rounds.append({"index": r.index, "outcome": r.outcome, "levels": list(r.levels_reached),
                       "stop_level": r.stop.level if r.stop else None, "cause": r.stop.cause if r.stop else None,
                       "family": r.rewrite.family if r.rewrite else None, "duration_s": round(r.duration_s, 3),
                       "speedup": r.timing.geomean_speedup if r.timing else None})
    best = traj.best_round
    speedup = None
    if best is not None:
        conf = traj.selection.confirmed.get(best) if traj.selection else None
        if best == 0:
            speedup = 1.0 if traj.initial_ms else None
        elif conf is not None:
            speedup = conf.point
        else:
            speedup = traj.rounds[best].timing.geomean_speedup if traj.rounds[best].timing else None
    labels = problem.get("families") if problem.get("cause_source") == "label" else None
    return {
        "arm": arm, "problem": problem["id"], "set": problem["set"], "cause": problem["cause"],
        "cause_source": problem["cause_source"], "label_families": labels, "headroom": problem["headroom"],
        "backend": traj.backend, "device": traj.device, "trajectory_id": traj.id,
        # the code the arm ran: the device copy has no .git, so the caller passes the commit (device_call.sh)
        "code_rev": os.environ.get("LADDER_CODE_REV") or None,
        "status": "truncated" if truncated else "done", "truncated": truncated,
        "baseline_passed": bool(traj.rounds and traj.rounds[0].outcome == "baseline"),
        "rounds_run": len(traj.rounds) - 1, "initial_ms": traj.initial_ms, "best_ms": traj.best_ms,
        "best_round": best, "best_level": traj.rounds[best].stop.level if best and traj.rounds[best].stop else None,
        "speedup": speedup, "wall_s": round(wall_s, 2), "cache_saved_s": round(saved_s, 2),
        "gpu_s": round(wall_s + saved_s, 2), "cache_hits": hits, "cache_misses": misses, "rounds": rounds,
        "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


class Runner:
    def __init__(self, args: argparse.Namespace, *, kb: Any = None, settings: Any = None, log: Any = None,
                 session_cls: Any = None) -> None:
        self.a, self.kb, self.base_settings = args, kb, settings
        self.out = Path(args.out).resolve()
        self.log = log or (lambda m: print(m, flush=True))
        self.start = time.time()
        self.deadline = self.start + args.budget_s if args.budget_s else float("inf")
        self.session_cls = session_cls
        self.problems = load_problems(Path(args.problem_list))
        self.list_sha = list_sha(Path(args.problem_list))

    def plan(self) -> list[tuple[str, dict[str, Any]]]:
        known = {p["id"]: p for p in self.problems}
        names = {p["id"].split("/", 1)[1]: p["id"] for p in self.problems}
        want = self.a.problems or [p["id"] for p in self.problems]
        ids = [w if w in known else names.get(w, w) for w in want]
        unknown = [w for w in ids if w not in known]
        if unknown:
            raise SystemExit(f"unknown problem(s) {', '.join(unknown)}: see {self.a.problem_list}")
        bad = [a for a in self.a.arms if a not in ARMS]
        if bad:
            raise SystemExit(f"unknown arm(s) {', '.join(bad)}: use {', '.join(ARMS)}")
        rows = read_results(self.out)
        other = sorted({r.get("problem_list") for r in rows if r.get("problem_list") not in (None, self.list_sha)})
        if other and not self.a.allow_list_change:
            raise SystemExit(f"{self.out} holds sessions run with another problem list ({', '.join(other)}; this one is "
                             f"{self.list_sha}): the list is fixed before the first GPU run; pass --allow-list-change "
                             "only to extend it knowingly")
        done = latest(rows)
        todo = []
        order = {p["id"]: k for k, p in enumerate(self.problems)}
        for pid in ids:  # problem-major: the arms of one problem share its baseline and first rounds in the cache
            # the arm that runs a problem first pays what no cache accounts for (Triton's compile cache, the IR cache,
            # a cold GPU): the order rotates with the problem's place in the list, so no arm always goes first
            k = order[pid] % len(self.a.arms) if self.a.arms else 0
            for arm in self.a.arms[k:] + self.a.arms[:k]:
                prev = done.get((arm, pid))
                if prev is None or prev.get("status") != "done" or prev.get("backend") != self.a.backend \
                        or int(prev.get("rounds_requested", self.a.rounds)) != self.a.rounds:
                    todo.append((arm, known[pid]))
        return todo

    def settings_for(self, arm: str) -> Any:
        from optimizer.settings import LadderSettings

        s = self.base_settings or LadderSettings()
        update: dict[str, Any] = {"policy": arm, "policy_seed": self.a.seed}
        if not self.a.no_cache:
            update["timing_cache"] = str(self.out / "timing_cache.jsonl")
        if self.a.backend == "cuda" and "LADDER_SANDBOX_MEMORY_MB" not in os.environ:
            update["sandbox_memory_mb"] = 65536  # as the suite runner: large cases compare in float64 on the host
        return s.model_copy(update=update)

    def _kb(self) -> Any:
        if self.kb is None:
            from suite.runner import connect_kb

            self.kb = connect_kb(self.a.server, self.a.home)
        return self.kb

    def run(self) -> int:
        restore_cache(self.out)
        todo = self.plan()
        self.log(f"ablation: {len(todo)} session(s) to run ({', '.join(self.a.arms)}; {self.a.rounds} rounds; backend "
                 f"{self.a.backend}; budget {self.a.budget_s or 'none'} s)")
        durations: list[float] = []
        for i, (arm, prob) in enumerate(todo):
            est = statistics.median(durations) if durations else 0.0
            if durations and time.time() + min(est, 120.0) > self.deadline:
                self.log(f"budget: stopping with {len(todo) - i} session(s) to go (run again to continue)")
                break
            t0 = time.time()
            try:
                row = self.run_one(arm, prob)
            except KeyboardInterrupt:
                raise
            except Exception as exc:  # one session failing must not stop the others
                row = {"arm": arm, "problem": prob["id"], "status": "error", "backend": self.a.backend,
                       "error": f"{type(exc).__name__}: {exc}"[:2000], "traceback": traceback.format_exc()[-3000:]}
            row["rounds_requested"], row["problem_list"] = self.a.rounds, self.list_sha
            append(self.out, row)
            durations.append(time.time() - t0)
            sp = row.get("speedup")
            self.log(f"[{i + 1}/{len(todo)}] {arm} {prob['id']}: {row['status']}"
                     + (f" {sp:.3f}x" if sp else "") + f" gpu_s {row.get('gpu_s', '-')} ({time.time() - t0:.0f} s)")
            self.pack()
        self.pack()
        return 0

    def run_one(self, arm: str, prob: dict[str, Any]) -> dict[str, Any]:
        from optimizer.events import Event, RoundEnded, RoundStarted
        from optimizer.harness.timing_cache import open_cache
        from optimizer.proposers.factory import make_proposer
        from optimizer.session import Session

        settings = self.settings_for(arm)
        folder = REPO / prob["folder"]
        initial = folder / prob.get("initial", "initial.py")
        sess_dir = self.out / "sessions" / arm / prob["id"].replace("/", "__")
        shutil.rmtree(sess_dir, ignore_errors=True)
        cache = open_cache(settings.timing_cache) if settings.timing_cache else None
        before = cache.stats.copy() if cache is not None else None
        round_s: list[float] = []

        def progress(event: Event) -> None:
            if isinstance(event, RoundStarted) and event.round >= 2:
                per = statistics.median(round_s[1:]) if len(round_s) > 1 else (round_s[0] if round_s else 0.0)
                if time.time() + per > self.deadline:
                    raise OutOfTime(f"round {event.round} not started: the budget would be overrun")
            elif isinstance(event, RoundEnded):
                round_s.append(event.round.duration_s)

        cls = self.session_cls or Session
        session = cls(folder, initial, kb=self._kb(), settings=settings, backend=self.a.backend,
                      proposer=make_proposer(self.a.proposer, settings), out_dir=sess_dir, progress=progress)
        t0 = time.time()
        truncated = ""
        try:
            traj = session.run(self.a.rounds)
        except OutOfTime as exc:
            truncated = str(exc)
            from kb.models import Trajectory

            traj = Trajectory.model_validate_json((sess_dir / "trajectory.json").read_text())
        wall = time.time() - t0
        hits = misses = 0
        saved = 0.0
        if cache is not None and before is not None:  # (an empty cache is falsy: it has a length)
            hits, misses = cache.stats.hits - before.hits, cache.stats.misses - before.misses
            saved = cache.stats.saved_s - before.saved_s
        return summarize(traj, prob, arm, wall_s=wall, saved_s=saved, hits=hits, misses=misses, truncated=truncated)

    def pack(self) -> None:
        if not self.a.pack:
            return
        tmp = Path(self.a.pack + ".tmp")
        with tarfile.open(tmp, "w:gz") as tar:
            for name in ("results.jsonl", "timing_cache.jsonl"):
                if (self.out / name).exists():
                    tar.add(self.out / name, arcname=name)
            if (self.out / "sessions").exists():
                tar.add(self.out / "sessions", arcname="sessions",
                        filter=lambda ti: None if "/ir/" in ti.name or ti.name.endswith("/ir") else ti)
        tmp.replace(self.a.pack)


# -------------------------------------------------------------------------------------------------- report ---
def _geomean(xs: list[float]) -> float | None:
    xs = [x for x in xs if x is not None and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def wrong_family_rounds(row: dict[str, Any]) -> int | None:
    """Rounds whose rewrite's family the kernel's label does not accept; None without a label."""
    fams = row.get("label_families")
    if not fams:
        return None
    return sum(1 for r in row.get("rounds", [])[1:] if r.get("family") and r["family"] not in fams)


def arm_stats(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The per-arm measures over ``rows`` (one arm's finished sessions)."""
    sp = [r["speedup"] for r in rows if r.get("speedup")]
    doublings = sum(math.log2(s) for s in sp if s > 1)
    gpu = [float(r.get("gpu_s") or 0.0) for r in rows]
    captured = [math.log(r["speedup"]) / math.log(r["headroom"]) for r in rows
                if r.get("speedup") and r.get("headroom") and r["headroom"] > 1]
    to_best = [r["best_round"] for r in rows if r.get("best_round")]
    wrong = [w for w in (wrong_family_rounds(r) for r in rows) if w is not None]
    rewrites = [sum(1 for x in r.get("rounds", [])[1:] if x.get("family")) for r in rows if r.get("label_families")]
    levels = Counter((r.get("best_level") or "baseline") if r.get("best_round") else "baseline" for r in rows)
    return {
        "sessions": len(rows), "timed": len(sp), "geomean_speedup": _geomean(sp),
        "captured_headroom": statistics.mean(captured) if captured else None,
        "rounds_to_best_median": statistics.median(to_best) if to_best else None,
        "gpu_s_per_session": statistics.mean(gpu) if gpu else None, "gpu_s_total": sum(gpu),
        "wall_s_total": sum(float(r.get("wall_s") or 0.0) for r in rows),
        "gpu_s_per_doubling": sum(gpu) / doublings if doublings > 0 else None,
        "wrong_family_rounds": sum(wrong) if wrong else (0 if rewrites else None),
        "labelled_rewrite_rounds": sum(rewrites), "best_level": dict(sorted(levels.items())),
        "ended_at_1x": sum(1 for s in sp if abs(s - 1.0) <= AT_ONE),
    }


def report(out: Path, arms: list[str] | None = None, *, figures: bool = True) -> dict[str, Any]:
    """Aggregate ``<out>/results.jsonl`` per arm over the problems every arm finished; write the report files."""
    done = {k: v for k, v in latest(read_results(out)).items() if v.get("status") == "done"}
    arms = [a for a in (arms or ARMS) if any(k[0] == a for k in done)]
    problems = sorted({p for _a, p in done})
    common = [p for p in problems if all((a, p) in done for a in arms)]
    per_arm = {a: arm_stats([done[(a, p)] for p in common]) for a in arms}
    sets = sorted({done[(arms[0], p)].get("set") or "?" for p in common}) if arms else []
    for a in arms:
        per_arm[a]["finished_total"] = sum(1 for k in done if k[0] == a)
        per_arm[a]["by_set"] = {s: arm_stats([done[(a, p)] for p in common if (done[(a, p)].get("set") or "?") == s])
                                for s in sets}
    doc = {"arms": arms, "common_problems": common, "per_arm": per_arm, "target": target(per_arm)}
    try:
        from _provenance import provenance

        doc["provenance"] = provenance()
    except Exception as exc:  # noqa: BLE001
        doc["provenance"] = {"error": str(exc)}
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")
    (out / "report.md").write_text(markdown(doc))
    if figures and arms and common and any(per_arm[a]["timed"] for a in arms):  # no figure of untimed sessions
        plot(out, doc, done)
    return doc


def target(per_arm: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Issue 34's target: hierarchical within 3% of always-deep's geomean at <= 60% of its GPU-seconds, and above
    l1-only, profile-first and random-family. ``None`` for a comparison whose arms were not measured."""
    h = per_arm.get("hierarchical")
    out: dict[str, Any] = {}
    d = per_arm.get("always-deep")
    if h and d and h["geomean_speedup"] and d["geomean_speedup"] and d["gpu_s_total"]:
        out["quality_vs_always_deep"] = h["geomean_speedup"] / d["geomean_speedup"]
        out["cost_vs_always_deep"] = h["gpu_s_total"] / d["gpu_s_total"]
        out["matches_always_deep"] = out["quality_vs_always_deep"] >= 0.97 and out["cost_vs_always_deep"] <= 0.60
    for other in ("l1-only", "profile-first", "random-family"):
        o = per_arm.get(other)
        if h and o and h["geomean_speedup"] and o["geomean_speedup"]:
            out[f"beats_{other}"] = h["geomean_speedup"] > o["geomean_speedup"]
    return out


def _f(x: Any, fmt: str = "{:.3f}") -> str:
    return "-" if x is None else fmt.format(x)


def markdown(doc: dict[str, Any]) -> str:
    prov = doc.get("provenance") or {}
    lines = ["# Ablation: what does the hierarchy buy?", "",
             f"`{prov.get('command', '?')}` on {((prov.get('machine') or {}).get('node')) or '?'}, {prov.get('date', '?')}. "
             f"{len(doc['common_problems'])} problem(s) finished by every arm shown (the table is paired over them).", "",
             "| arm | sessions | geomean initial->best | captured headroom | rounds to best (median) | GPU-s / session | "
             "GPU-s / doubling | wrong-family rounds (labelled) | best round's level | ended at 1.00x |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for a in doc["arms"]:
        s = doc["per_arm"][a]
        lv = ", ".join(f"{k} {v}" for k, v in s["best_level"].items())
        wrong = "-" if s["wrong_family_rounds"] is None else f"{s['wrong_family_rounds']}/{s['labelled_rewrite_rounds']}"
        lines.append(f"| {a} | {s['sessions']} | {_f(s['geomean_speedup'], '{:.3f}x')} | {_f(s['captured_headroom'], '{:.0%}')} | "
                     f"{_f(s['rounds_to_best_median'], '{:g}')} | {_f(s['gpu_s_per_session'], '{:.0f}')} | "
                     f"{_f(s['gpu_s_per_doubling'], '{:.0f}')} | {wrong} | {lv} | {s['ended_at_1x']} |")
    sets = sorted({s for a in doc["arms"] for s in doc["per_arm"][a].get("by_set", {})})
    if sets:
        lines += ["", "Per set (geomean initial->best / captured headroom; real kernels' headroom is against the roofline, "
                  "the others' against a measured faster kernel):", "",
                  "| arm | " + " | ".join(sets) + " |", "|---|" + "---|" * len(sets)]
        for a in doc["arms"]:
            bs = doc["per_arm"][a]["by_set"]
            lines.append(f"| {a} | " + " | ".join(
                f"{_f(bs[x]['geomean_speedup'], '{:.3f}x')} / {_f(bs[x]['captured_headroom'], '{:.0%}')} ({bs[x]['sessions']})"
                for x in sets) + " |")
    t = doc["target"]
    lines += ["", "## Target", ""]
    if "matches_always_deep" in t:
        lines.append(f"- hierarchical vs always-deep: {t['quality_vs_always_deep']:.3f}x the geomean at "
                     f"{t['cost_vs_always_deep']:.0%} of the GPU-seconds: target (>= 0.97x at <= 60%) "
                     + ("met" if t["matches_always_deep"] else "NOT met"))
    else:
        lines.append("- hierarchical vs always-deep: not measured (both arms must have timed sessions)")
    for other in ("l1-only", "profile-first", "random-family"):
        k = f"beats_{other}"
        lines.append(f"- hierarchical beats {other}: " + ("not measured" if k not in t else "yes" if t[k] else "NO"))
    lines += ["", "GPU-seconds: the session's wall time on the GPU machine plus what its timing-cache hits saved "
              "(the cost it would have paid alone). Captured headroom: ln(speedup) / ln(headroom), mean over sessions. "
              "Per doubling: total GPU-seconds / total log2(speedup).", ""]
    if doc["arms"] and not any(doc["per_arm"][a]["timed"] for a in doc["arms"]):
        lines += ["No session was timed (the interpreter backend validates only): no speedup, no figure.", ""]
    return "\n".join(lines)


def plot(out: Path, doc: dict[str, Any], done: dict[tuple[str, str], dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    arms, common = doc["arms"], doc["common_problems"]
    fig, ax = plt.subplots(figsize=(1.6 * len(arms) + 2, 4))
    for i, a in enumerate(arms):
        ys = [done[(a, p)].get("speedup") for p in common]
        ys = [y for y in ys if y]
        ax.scatter([i] * len(ys), ys, alpha=0.5, s=14)
        g = doc["per_arm"][a]["geomean_speedup"]
        if g:
            ax.hlines(g, i - 0.3, i + 0.3, color="black")
            ax.annotate(f"{g:.2f}x", (i + 0.32, g), fontsize=8, va="center")
    ax.set_yscale("log")
    ax.set_xticks(range(len(arms)), arms, rotation=20)
    ax.set_ylabel("initial -> best speedup (log)")
    ax.set_title(f"Speedup per arm over {len(common)} problems (bar: geomean)")
    fig.tight_layout()
    fig.savefig(out / "fig_speedup.png", dpi=120)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for a in arms:
        s = doc["per_arm"][a]
        if s["gpu_s_per_session"] is not None and s["geomean_speedup"]:
            ax.scatter(s["gpu_s_per_session"], s["geomean_speedup"], s=40)
            ax.annotate(a, (s["gpu_s_per_session"], s["geomean_speedup"]), fontsize=8, xytext=(4, 4),
                        textcoords="offset points")
    ax.set_xlabel("GPU-seconds per session (mean)")
    ax.set_ylabel("geomean speedup")
    ax.set_title("Cost vs quality per arm")
    fig.tight_layout()
    fig.savefig(out / "fig_cost_quality.png", dpi=120)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------------- main ---
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Ladder policies (arms) x the ablation's fixed problem list.")
    p.add_argument("--arms", default=",".join(ARMS), help=f"comma-separated arms (default all: {','.join(ARMS)})")
    p.add_argument("--problems", default="", help="comma-separated problem ids or names (default: all of problems.json)")
    p.add_argument("--problem-list", default=str(PROBLEMS), help="the committed problem list")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--budget-s", type=float, default=0.0, help="stop starting sessions/rounds past this wall budget")
    p.add_argument("--backend", choices=["cuda", "interpreter"], default="cuda")
    p.add_argument("--proposer", choices=["offline", "llm"], default="offline")
    p.add_argument("--seed", type=int, default=0, help="random-family's seed (with the problem and round)")
    p.add_argument("--out", default=str(DEFAULT_OUT))
    p.add_argument("--no-cache", action="store_true", help="time every candidate (no shared timing cache)")
    p.add_argument("--allow-list-change", action="store_true",
                   help="run although results.jsonl holds sessions of another problems.json")
    p.add_argument("--server")
    p.add_argument("--home")
    p.add_argument("--pack", help="write results.jsonl, the timing cache and the sessions as one tar.gz here")
    p.add_argument("--unpack", help="restore a packed result dir into --out first")
    p.add_argument("--report", action="store_true", help="write the report and figures from the results")
    p.add_argument("--no-run", action="store_true", help="run no session (with --report / --unpack)")
    p.add_argument("--compress", action="store_true", help="after everything: gzip the timing cache and the "
                   "sessions' trajectories (before committing the results)")
    a = p.parse_args(argv)
    a.arms = [x for x in a.arms.split(",") if x]
    a.problems = [x for x in a.problems.split(",") if x]
    return a


def main(argv: list[str] | None = None, **kw: Any) -> int:
    a = parse_args(argv)
    out = Path(a.out)
    if a.unpack:
        out.mkdir(parents=True, exist_ok=True)
        with tarfile.open(a.unpack) as tar:
            tar.extractall(out, filter="data")
    rc = 0 if a.no_run else Runner(a, **kw).run()
    if a.report:
        doc = report(out, a.arms)
        print((out / "report.md").read_text() if doc["arms"] else f"no finished sessions under {out}")
    if a.compress:
        compress(out)
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
