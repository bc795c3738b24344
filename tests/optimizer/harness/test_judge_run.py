"""One judge process per evaluation (``worker._judge_run``): it decides every case the candidate runs, the parent
keeps its final result, and a judge that fails fails the candidate (fail closed)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from optimizer.harness import judge, stages
from optimizer.harness.evaluation import evaluate
from optimizer.harness.problem import load_problem
from optimizer.harness.sandbox import SandboxResult
from optimizer.settings import LadderSettings

DATA = Path(__file__).resolve().parents[1] / "data"
WRONG = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 0.5, mask=offs < n)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        k[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
        return out
'''


def _count_tasks(monkeypatch) -> Counter:
    calls: Counter = Counter()
    real = judge.run_worker
    monkeypatch.setattr(judge, "run_worker", lambda req, **kw: calls.update([req["task"]]) or real(req, **kw))
    return calls


def test_every_case_is_judged_by_one_process_and_the_stages_show_it(monkeypatch) -> None:
    problem = load_problem(DATA / "softmax")
    assert len(problem.smoke_cases) == 2
    calls = _count_tasks(monkeypatch)
    with stages.recording() as sc:
        ev = evaluate(problem, DATA / "softmax" / "initial.py", backend="interpreter", settings=LadderSettings())
    assert ev.passed, ev.reason
    assert [c.passed for c in ev.validation.cases] == [True, True]
    assert calls["judge_run"] == 1 and calls["evaluate"] == 1 and calls["judge"] == 0  # not one per case
    out = sc.finish()
    for k in ("candidate", "candidate/judge", "candidate/judge/load", "candidate/judge/compare", "judge_exit", "merge"):
        assert k in out, (k, out)
    assert out["candidate/judge"] <= out["candidate"]
    assert set(stages.top_level(out)) >= {"static_scan", "reference", "candidate", "judge_exit", "merge", "other"}


def test_a_wrong_kernel_fails_at_its_first_case_and_the_judge_stops(monkeypatch, tmp_path: Path) -> None:
    cand = tmp_path / "wrong.py"
    cand.write_text(WRONG)
    calls = _count_tasks(monkeypatch)
    ev = evaluate(load_problem(DATA / "softmax"), cand, backend="interpreter", settings=LadderSettings())
    assert not ev.passed and ev.failure_kind == "mismatch", ev.reason
    assert len(ev.validation.cases) == 1 and calls["judge_run"] == 1


def test_a_judge_that_fails_fails_the_candidate(monkeypatch) -> None:
    real = judge.run_worker

    def broken(req, **kw):
        if req["task"] == "judge_run":
            return SandboxResult("crashed", "crashed: killed by SIGSEGV")
        return real(req, **kw)

    monkeypatch.setattr(judge, "run_worker", broken)
    ev = evaluate(load_problem(DATA / "softmax"), DATA / "softmax" / "initial.py", backend="interpreter",
                  settings=LadderSettings())
    assert not ev.passed and "judge_error" in ev.reason and "SIGSEGV" in ev.reason, ev.reason


def test_only_the_final_result_counts_not_the_per_case_files(monkeypatch) -> None:
    """A per-case decision file says pass, the judge's final (token-checked) result says fail: the case fails."""
    from optimizer.harness.contracts import JudgeRunResult, parse_result

    real_decisions = judge._Verdicts.decisions

    def final_fails(self):
        assert self.result is not None and self.result.ok
        final = parse_result(JudgeRunResult, self.result.payload)
        final.judged[0].case.passed, final.judged[0].case.message = False, "mismatch: forged pass"
        self.result.payload = {**self.result.payload, "judged": [j.model_dump() for j in final.judged]}
        return real_decisions(self)

    monkeypatch.setattr(judge._Verdicts, "decisions", final_fails)
    ev = evaluate(load_problem(DATA / "softmax"), DATA / "softmax" / "initial.py", backend="interpreter",
                  settings=LadderSettings())
    assert not ev.passed and "forged pass" in ev.reason, ev.reason
