"""Pick a runner (Ray or per-device processes), expand problem arguments, print progress and results.

Used by ``ladder optimize-cluster`` (``optimizer.cli.cluster``, which ``python -m optimizer.cluster`` also runs);
progress and results go to plain streams, so the worker side needs no Rich.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

from optimizer.cluster.spec import ClusterResult, trajectory_id

__all__ = ["check_outbox", "expand_problems", "launch", "print_progress", "print_results"]


def expand_problems(args: list[str]) -> list[str]:
    """Files and problem folders as given; a folder of problem folders (``benchmarks/suite``) becomes its members."""
    out: list[str] = []
    for a in args:
        p = Path(a)
        if p.is_dir() and not (p / "problem.py").is_file():
            members = sorted(str(d) for d in p.iterdir() if (d / "problem.py").is_file())
            out.extend(members or [a])
        else:
            out.append(a)
    return out


def launch(problems: list[str], *, cluster: str | None, devices: list[str] | None, **kw: Any) -> list[ClusterResult]:
    """``devices`` -> the no-Ray process runner on this machine; otherwise Ray at ``cluster``."""
    problems = expand_problems(problems)
    if devices:
        from optimizer.cluster.procs import run_local

        kw.pop("num_cpus", None)
        return run_local(problems, devices=devices, **kw)
    from optimizer.cluster.fanout import run_cluster

    return run_cluster(problems, address=cluster or "auto", **kw)


def print_progress(stream: TextIO = sys.stderr) -> Any:
    def show(event: str, d: dict[str, Any]) -> None:
        c = d["counts"]
        head = f"[{c['done']}/{c['total']} done, {c['failed']} failed, {c['running']} running, {c['retried']} retried]"
        key = d["key"]
        if event in ("start", "retry"):
            where = f" on {d['node']}" + (f" device {d['visible']}" if d.get("visible") else "")
            line = f"{key}: attempt {d['attempt']} (pid {d['pid']}){where}" + (" - RETRY" if event == "retry" else "")
        elif event == "round_end":
            sp = f" {d['speedup']:.3f}x" if d.get("speedup") else ""
            line = f"{key}: round {d['round']} {d['outcome']}{sp}"
        elif event == "submitted":
            line = f"{key}: trajectory {d['id']} " + ("stored" if d["created"] else "already stored (dedup)")
        elif event == "session_done":
            line = f"{key}: done after {d['attempts']} attempt(s), best round {d['best_round']}"
        elif event == "session_failed":
            line = f"{key}: FAILED after {d['attempts']} attempt(s): {d['error'][:300]}"
        else:
            return
        stream.write(f"{head} {line}\n")
        stream.flush()

    return show


def print_results(results: list[ClusterResult], *, as_json: bool, stream: TextIO = sys.stdout) -> None:
    if as_json:
        stream.write(json.dumps([r.to_dict() for r in results], indent=2) + "\n")
        return
    stream.write(f"{'session':<24} {'status':<7} {'tries':>5} {'rounds':>6} {'best':>5} {'speedup':>8}  trajectory\n")
    for r in results:
        sp = f"{r.best_speedup:.3f}x" if r.best_speedup else "-"
        best = "-" if r.best_round is None else str(r.best_round)
        stream.write(f"{r.key:<24} {r.status:<7} {r.attempts:>5} {r.rounds:>6} {best:>5} {sp:>8}  "
                     f"{r.trajectory_id if r.status == 'ok' else r.error[:100]}\n")


def check_outbox(results: list[ClusterResult], outbox: Path, campaign: str) -> tuple[bool, str]:
    """Snapshot mode: every finished session's trajectory is in the outbox, and nothing else of the campaign is.

    The outbox stores one file per trajectory id, so a re-submitted id cannot appear twice; what this catches
    is a missing trajectory or an extra one (a retried session that did not reuse its id).
    """
    want = {r.trajectory_id for r in results if r.status == "ok"}
    prefix = trajectory_id(campaign, "", "").rstrip(":")
    have = {p.stem for p in outbox.glob("*.json") if p.stem.startswith(prefix + ":")} if outbox.is_dir() else set()
    missing, extra = sorted(want - have), sorted(have - want)
    ok = not missing and not extra
    return ok, (f"outbox {outbox}: {len(have & want)} of {len(want)} finished sessions' trajectories present, once each"
                + (f"; MISSING {missing}" if missing else "") + (f"; EXTRA {extra}" if extra else ""))
