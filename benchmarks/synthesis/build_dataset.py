"""Expand ``source.yaml`` (hand-written labelled rounds) into ``trajectories.jsonl`` (full Trajectory records).

Each source trajectory gets a baseline round 0; each labelled round becomes a ``kb.models.Round`` with evidence
items, the rewrite, a validation verdict, per-case timing derived from the lift over the incumbent (speedups are
recorded against the initial kernel, as the optimizer does), an outcome and a stop decision. Output is
deterministic (fixed timestamps, no randomness), so the file only changes when the source does.

Run: ``python benchmarks/synthesis/build_dataset.py [--check]`` (``--check`` also verifies every label names an
existing pattern card).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kb.models import (
    CaseTiming,
    CaseValidation,
    EscalationTests,
    EvidenceItem,
    ProblemRef,
    Round,
    RoundRewrite,
    StopDecision,
    Timing,
    TimingProtocol,
    Trajectory,
    Validation,
)

SOURCE = HERE / "source.yaml"
OUT = HERE / "trajectories.jsonl"
_EV = re.compile(r"^(L[1-4]) ([a-z_]+)(?:\[([^\]]+)\])?: (.+)$", re.DOTALL)
_DEVICES = {"cuda": "NVIDIA H200", "ascend": "Ascend 910B3", "amd": "AMD MI300X", "interpreter": "cpu"}
T0 = datetime(2025, 6, 2, 9, 0, tzinfo=timezone.utc)


def _evidence(items: list[str]) -> list[EvidenceItem]:
    out = []
    for s in items:
        m = _EV.match(s.strip())
        if not m:
            raise ValueError(f"evidence must read 'L2 kind[ref]: text', got {s!r}")
        out.append(EvidenceItem(level=m[1], kind=m[2], reference=m[3] or "", summary=m[4].strip()))
    return out


def _validation(val: str, cases: list[str]) -> Validation | None:
    kind, _, detail = val.partition(":")
    if kind == "none":
        return None
    if kind == "pass":
        return Validation(passed=True, cases=[CaseValidation(case=c, passed=True, seeds=[0, 1]) for c in cases])
    if kind == "fail":
        cv = [CaseValidation(case=c, passed=i != len(cases) - 1, seeds=[0, 1]) for i, c in enumerate(cases)]
        return Validation(passed=False, cases=cv, failure_reason=detail.strip())
    if kind == "hack":
        return Validation(passed=False, cases=[CaseValidation(case=c, passed=True) for c in cases],
                          hack_flags=[detail.strip()], failure_reason=f"hack check fired: {detail.strip()}")
    raise ValueError(f"val must be pass | fail:... | none:... | hack:..., got {val!r}")


def build_round(i: int, src: dict[str, Any], incumbent: float, cases: list[str], initial_ms: float,
                device: str) -> tuple[Round, float]:
    val = str(src.get("val", "pass"))
    validation = _validation(val, cases)
    lift = float(src["lift"])
    speedup = incumbent * lift
    proto = TimingProtocol(method="do_bench-median", warmup=25, reps=100, l2_flush=True, device=device)
    timing = None
    timed = validation is not None and (validation.passed or validation.hack_flags or val.startswith("fail"))
    if timed and not src.get("untimed"):
        timing = Timing(protocol=proto, geomean_speedup=round(speedup, 4), cases=[
            CaseTiming(case=c, ms=round(initial_ms / speedup, 5), baseline_ms=initial_ms) for c in cases])
    if validation is None or not validation.passed:
        outcome = "failed"
    elif lift > 1.03:
        outcome = "improved"
    elif lift < 0.97:
        outcome = "regressed"
    else:
        outcome = "neutral"
    stop_level = src.get("stop", "L2")
    levels = [f"L{k}" for k in range(1, int(stop_level[1]) + 1)]
    why = src.get("why") or f"Evidence at {stop_level} localizes the hotspot and points to one rewrite family."
    name = src.get("name") or "unnamed"
    rnd = Round(
        index=i,
        levels_reached=levels,
        hypothesis=src["h"].strip(),
        evidence=_evidence(src.get("ev", [])),
        cards_cited=list(src.get("cite", [])),
        rewrite=RoundRewrite(family=name, description=src["rw"].strip(), diff=src.get("diff", "").rstrip(),
                             recipe=src.get("recipe", {})),
        comparison_target="initial",
        validation=validation,
        timing=timing,
        outcome=outcome,
        stop=StopDecision(level=stop_level, bottleneck=src.get("bn", "unknown"), rationale=why.strip(),
                          tests=EscalationTests(localized=True, single_family=True, justified=True)),
        next_recommendation=src.get("next") or (val.partition(":")[2].strip() if val.startswith("none") else ""),
        candidate_path=f"candidates/round{i:02d}.py",
        started_at=T0 + timedelta(minutes=7 * i),
        duration_s=41.0 + 3 * i,
    )
    if outcome == "improved":
        incumbent = speedup
    return rnd, incumbent


def build(source: Path) -> list[dict[str, Any]]:
    data = yaml.safe_load(source.read_text(encoding="utf-8"))
    rows = []
    for k, t in enumerate(data["trajectories"]):
        backend = t["backend"]
        device = t.get("device", _DEVICES[backend])
        cases = t.get("cases", ["small", "medium", "large"])
        initial_ms = float(t.get("initial_ms", 0.5))
        base = Round(index=0, levels_reached=["L1"], hypothesis="Baseline measurement of the initial candidate.",
                     outcome="baseline", comparison_target="initial",
                     validation=_validation("pass", cases),
                     timing=Timing(protocol=TimingProtocol(method="do_bench-median", device=device),
                                   geomean_speedup=1.0),
                     started_at=T0)
        rounds, labels, incumbent = [base], {}, 1.0
        for i, src in enumerate(t["rounds"], start=1):
            rnd, incumbent = build_round(i, src, incumbent, cases, initial_ms, device)
            rounds.append(rnd)
            labels[str(i)] = {"family": src.get("fam"), "new_family_group": src.get("grp")}
        best = max((r for r in rounds if r.validation and r.validation.passed and not r.validation.hack_flags
                    and r.timing and r.timing.geomean_speedup), key=lambda r: (r.timing.geomean_speedup, -r.index))
        traj = Trajectory(
            id=t["id"], problem=ProblemRef(name=t["problem"], path=f"benchmarks/suite/{t['problem']}/problem.py"),
            backend=backend, device=device, proposer=t.get("proposer", "offline"), rounds=rounds,
            best_round=best.index, initial_ms=initial_ms, best_ms=round(initial_ms / best.timing.geomean_speedup, 5),
            versions={"triton": "3.6.0", "torch": "2.11.0"} if backend == "cuda" else {"triton-ascend": "3.2.0"},
            created_at=T0 + timedelta(days=k), finished=True,
        )
        rows.append({"split": t.get("split", "test"), "trajectory": traj.model_dump(mode="json"), "labels": labels})
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", type=Path, default=SOURCE)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true", help="verify labels against the packaged cards")
    args = ap.parse_args(argv)
    rows = build(args.source)
    labels = [lab for r in rows for lab in r["labels"].values()]
    if args.check:
        from kb.cardfiles import load_dir

        ids = {c.id for c in load_dir() if c.kind == "pattern"}
        bad = sorted({lab["family"] for lab in labels if lab["family"] and lab["family"] not in ids})
        if bad:
            print(f"labels naming no pattern card: {', '.join(bad)}", file=sys.stderr)
            return 1
    args.out.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8")
    fams = {lab["family"] for lab in labels if lab["family"]}
    groups = {lab["new_family_group"] for lab in labels if lab["family"] is None and lab["new_family_group"]}
    print(f"{len(rows)} trajectories, {len(labels)} labelled rounds, {len(fams)} families, "
          f"{len(groups)} new-family groups, {sum(lab['family'] is None for lab in labels)} rounds labelled null "
          f"-> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
