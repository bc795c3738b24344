"""Worker contracts (``optimizer.harness.contracts``): requests and results validated at the worker boundary, the typed
timing case, the L2 profilers reached through ``optimizer.harness.measure`` (sandbox faked), committed records still load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ladder_fakes import LADDER_CARDS, FakeKB

from benchmarks import _data
from kb.models import Trajectory, Validation
from optimizer.harness import measure
from optimizer.harness.contracts import (
    ContractError,
    EvaluateResult,
    ProfileRequest,
    RunRequest,
    TimingCase,
    parse_request,
    parse_result,
    to_wire,
)
from optimizer.harness.evaluation import Evaluation, timing_request
from optimizer.ladder import keys
from optimizer.ladder.l2_profile import ProfileLevel
from optimizer.ladder.types import LadderContext
from optimizer.harness.problem import load_problem
from optimizer.harness.sandbox import SandboxResult
from optimizer.settings import LadderSettings
from optimizer.harness.worker import run_request

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).parent / "data"
SOFTMAX = DATA / "softmax"
PC = {"problem": "p.py", "candidate": "c.py"}


def test_requests_in_the_former_wire_format_parse_into_their_task_model() -> None:
    """The dicts the levels and evaluation wrote before the models existed are still valid requests."""
    old_profile = {"task": "profile", **PC, "backend": "cuda", "cases": [{"N": 8}], "iters": 20}
    req = parse_request(old_profile)
    assert isinstance(req, ProfileRequest) and req.iters == 20 and req.cases == [{"N": 8}]
    old_run = {"task": "run", **PC, "backend": "cuda", "cases": [], "iters": 1}
    assert parse_request(old_run) == RunRequest(problem="p.py", candidate="c.py", backend="cuda", cases=[], iters=1)
    timing = timing_request(LadderSettings(), {"initial": Path("/x/initial.py")}, False)
    old_eval = {"task": "evaluate", **PC, "backend": "interpreter", "cases": [{"N": 8}],
                "seeds": [0, 1], "timing": timing.model_dump()}
    req = parse_request(json.loads(json.dumps(old_eval)))
    assert req.timing is not None and req.timing.against == {"initial": "/x/initial.py"}
    assert parse_request(req.model_dump(mode="json")) == req  # JSON round trip


def test_values_json_cannot_hold_are_written_as_text_as_before() -> None:
    import torch

    req = RunRequest(**PC, backend="cuda", cases=[{"N": 8, "dtype": torch.float16}])
    sent = json.loads(json.dumps(to_wire(req), default=str))  # what the sandbox writes
    assert parse_request(sent).cases == [{"N": 8, "dtype": "torch.float16"}]


@pytest.mark.parametrize(("data", "field"), [
    ({"problem": "p.py"}, "'task'"),
    ({"task": "profile", **PC, "backend": "gpu", "cases": []}, "'profile.backend'"),
    ({"task": "run", **PC, "backend": "cuda", "cases": [], "iters": 0}, "'run.iters'"),
    ({"task": "launches", "problem": "p.py", "candidate": "c.py"}, "'launches.case'"),
    ({"task": "time", **PC, "backend": "cuda", "cases": [], "timing": {"blocks": "x"}},
     "'time.timing.blocks'"),
    ({"task": "evaluate", **PC, "backend": "cuda", "cases": [], "seeds": [], "extra": 1},
     "'evaluate.extra'"),
])
def test_a_bad_request_names_the_field(data: dict, field: str) -> None:
    with pytest.raises(ContractError, match=field):
        parse_request(data)


def test_unknown_task_is_refused() -> None:
    with pytest.raises(ContractError, match="'task'"):
        parse_request({"task": "explode", "problem": "p.py", "candidate": "c.py"})


def test_the_worker_answers_a_malformed_request_with_a_bad_request_error(tmp_path: Path) -> None:
    req, res = tmp_path / "request.json", tmp_path / "result.json"
    req.write_text(json.dumps({"task": "run", **PC, "backend": "cuda", "cases": "all"}))
    assert run_request(req, res, "tok") == 0
    payload = json.loads(res.read_text())
    assert payload["token"] == "tok" and payload["error"]["kind"] == "bad_request"
    assert "'run.cases'" in payload["error"]["message"]


def test_a_bad_result_names_the_field() -> None:
    good = {"validation": Validation(passed=True).model_dump(mode="json"), "token": "t", "worker_s": 0.1}
    assert parse_result(EvaluateResult, good).validation.passed
    bad = good | {"timing": {"protocol": {"method": "interleaved-blocks"}, "cases": [{"case": "N=8", "stats": {}}]}}
    with pytest.raises(ContractError, match=r"'timing\.cases\.0\.stats\.median_ms'"):
        parse_result(EvaluateResult, bad)


def test_timing_cases_given_as_json_are_read_into_the_model() -> None:
    raw = {"case": "N=8", "stats": {"median_ms": 2.0}, "reference_stats": {"median_ms": 3.0, "n": 5},
           "blocks": {"candidate": [2.0, 2.1], "initial": [4.0, 4.2]}, "role_stats": {"initial": {"median_ms": 4.1}},
           "method": "do_bench"}
    ev = Evaluation(candidate=Path("c.py"), backend="cuda", status="ok", reason="", validation=Validation(passed=True),
                    timing_cases=[raw, TimingCase(case="N=16", stats={"median_ms": 5.0})])
    assert all(isinstance(c, TimingCase) for c in ev.timing_cases)
    assert ev.case_ms() == {"N=8": 2.0, "N=16": 5.0} and ev.reference_ms() == {"N=8": 3.0}
    assert ev.pairs("initial") == {"N=8": ([4.0, 4.2], [2.0, 2.1])} and ev.blocks("aa") == {}


def test_committed_trajectories_still_load() -> None:
    paths = _data.find(ROOT / "benchmarks" / "results")  # committed packed (benchmarks/_data.py)
    assert paths, "no committed trajectory found"
    for p in paths:
        t = Trajectory.model_validate_json(_data.read_text(p))
        assert t.rounds, p


def _cuda_ctx() -> LadderContext:
    problem = load_problem(SOFTMAX)
    ev = Evaluation(candidate=SOFTMAX / "initial.py", backend="cuda", status="ok", reason="",
                    validation=Validation(passed=True),
                    launches=[{"kernel": "softmax_kernel", "file": str(SOFTMAX / "initial.py")}],
                    timing_cases=[{"case": "x", "stats": {"median_ms": 1.0}}], device="NVIDIA H200")
    return LadderContext(problem=problem, candidate=SOFTMAX / "initial.py", backend="cuda", kb=FakeKB(LADDER_CARDS),
                         settings=LadderSettings(), evaluation=ev)


def test_l2_profiles_through_measure_with_the_same_request_and_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[dict] = []
    case = {"case": "N=8", "wall_ms": 1.0, "device_ms": 0.5, "kernel_fraction": 0.5, "launches_per_call": 1.0,
            "kernels": [{"name": "softmax_kernel", "us_per_call": 500.0, "launches_per_call": 1.0}]}

    def fake_worker(request, *, limits, **kw):
        sent.append(request)
        return SandboxResult("ok", payload={"profile": [case], "token": "t", "worker_s": 0.2})

    monkeypatch.setattr(measure, "run_worker", fake_worker)
    ctx = _cuda_ctx()
    prof = ProfileLevel()._profile(ctx)
    assert prof == {"cases": [case]} and ctx.cache[keys.profile(ctx.source_sha)] is prof
    assert ProfileLevel()._profile(ctx) is prof and len(sent) == 1  # cached per source
    wire = {"problem": str(ctx.problem.path), "candidate": str(ctx.candidate), "backend": "cuda",
            "cases": ctx.problem.cases_for("cuda")}
    assert sent[0] == {"task": "profile", **wire, "iters": 20, "out_dir": "."}
    assert "profiler" in ctx.phases.seconds


def test_l2_records_why_a_profile_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    results = iter([SandboxResult("timeout", reason="timeout: no result after 300 s"),
                    SandboxResult("ok", payload={"profile": [{"case": "N=8", "wall_ms": "fast"}]})])
    monkeypatch.setattr(measure, "run_worker", lambda request, **kw: next(results))
    assert ProfileLevel()._profile(_cuda_ctx()) == {"error": "timeout: no result after 300 s"}
    bad = ProfileLevel()._profile(_cuda_ctx())
    assert bad["error"].startswith("bad_result:") and "'profile" in bad["error"]


def test_l2_ncu_runs_the_forward_under_ncu(monkeypatch: pytest.MonkeyPatch) -> None:
    from optimizer.profile.cuda import CLASSIFIER_METRICS, ncu_command

    calls: list[tuple[dict, list[str]]] = []

    def fake_worker(request, *, limits, prefix_cmd, **kw):
        calls.append((request, prefix_cmd))
        Path(prefix_cmd[prefix_cmd.index("--log-file") + 1]).write_text((DATA / "ncu" / "softmax_raw.csv").read_text())
        return SandboxResult("ok", payload={"ran": True})

    monkeypatch.setattr("optimizer.profile.cuda.ncu_available", lambda: True)
    monkeypatch.setattr(measure, "run_worker", fake_worker)
    ctx = _cuda_ctx()
    out = ProfileLevel()._ncu(ctx)
    (request, cmd), = calls
    cases = ctx.problem.cases_for("cuda")
    largest = max(cases, key=lambda c: ctx.problem.bytes_moved(c))  # the first of equals: both move 16 MB here
    wire = {"problem": str(ctx.problem.path), "candidate": str(ctx.candidate), "backend": "cuda", "cases": [largest]}
    assert largest == cases[0]
    # the largest case only, with one warm-up forward outside the profiled range: autotuning and JIT launches are
    # not replayed
    assert request == {"task": "run", **wire, "iters": 1, "warmup": 1, "profiler_range": True}
    log = cmd[cmd.index("--log-file") + 1]
    assert cmd == ncu_command(log, "softmax_kernel", metrics=CLASSIFIER_METRICS, ranged=True,
                              launch_count=ctx.settings.ncu_launch_count)
    assert cmd[cmd.index("--profile-from-start") + 1] == "off"
    assert cmd[cmd.index("--launch-count") + 1] == "8"  # a kernel launched per head in a host loop is not replayed 32 times
    assert ctx.cache[keys.ncu(ctx.source_sha)] is out and "ncu" in ctx.phases.seconds
    assert out["hot_kernel"] and out["launches"] >= 1, out


def test_l2_ncu_profiles_the_largest_case_only(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict] = []

    def fake_worker(request, *, limits, prefix_cmd, **kw):
        seen.append(request)
        Path(prefix_cmd[prefix_cmd.index("--log-file") + 1]).write_text((DATA / "ncu" / "softmax_raw.csv").read_text())
        return SandboxResult("ok", payload={"ran": True})

    monkeypatch.setattr("optimizer.profile.cuda.ncu_available", lambda: True)
    monkeypatch.setattr(measure, "run_worker", fake_worker)
    ctx = _cuda_ctx()
    monkeypatch.setattr(ctx.problem, "bytes_moved", lambda case: float(case["M"]))  # the second case is larger
    ProfileLevel()._ncu(ctx)
    assert [r["cases"] for r in seen] == [[{"M": 8192, "N": 512}]]
