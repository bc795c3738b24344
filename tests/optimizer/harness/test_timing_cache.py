"""The content-addressed timing cache (issue 34): a candidate already timed on this GPU is not timed again."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from optimizer.harness import evaluation as ev_mod
from optimizer.harness import timing_cache
from optimizer.harness.problem import case_label, load_problem
from optimizer.harness.sandbox import SandboxResult
from optimizer.settings import LadderSettings

DATA = Path(__file__).resolve().parents[1] / "data" / "softmax"
H200 = "NVIDIA H200|GPU-0000"


def _payload(problem: Any, cases: list[dict[str, Any]], roles: list[str], ms: float) -> dict[str, Any]:
    tcs = []
    for c in cases:
        blocks = {r: [ms * (1 + 0.01 * i) for i in range(4)] for r in roles}
        tcs.append({"case": case_label(c), "stats": {"median_ms": ms}, "method": "do_bench", "blocks": blocks,
                    "role_stats": {r: {"median_ms": ms} for r in roles if r != "candidate"}})
    return {"validation": {"passed": True}, "device": "NVIDIA H200", "versions": {"torch": "x"},
            "timing": {"protocol": {"method": "interleaved-blocks", "blocks": 4}, "cases": tcs},
            "phase_s": {"timing": 2.0, "validation": 1.0}, "worker_s": 3.0}


class FakeTimer:
    """Stands in for the sandboxed worker (validation + interleaved timing): counts its calls."""

    def __init__(self, problem: Any) -> None:
        self.problem, self.calls, self.lock = problem, [], threading.Lock()

    def judged(self, request: Any, backend: str, settings: Any, *, python: str | None = None) -> SandboxResult:
        with self.lock:
            self.calls.append(("evaluate", request.candidate))
        if request.timing is None:  # validation only
            return SandboxResult(status="ok", payload={"validation": {"passed": True}}, duration_s=1.0)
        roles = ["candidate", *request.timing.against, *(["aa"] if request.timing.aa else [])]
        return SandboxResult(status="ok", payload=_payload(self.problem, request.cases, roles, 1.0), duration_s=3.5)

    def run(self, request: Any, backend: str, settings: Any, *, python: str | None = None) -> SandboxResult:
        with self.lock:
            self.calls.append(("retime", request.candidate))
        roles = ["candidate", *request.timing.against]
        payload = {k: v for k, v in _payload(self.problem, request.cases, roles, 1.0).items() if k != "validation"}
        return SandboxResult(status="ok", payload=payload, duration_s=2.5)


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, FakeTimer, LadderSettings, Path]:
    problem = load_problem(DATA)
    timer = FakeTimer(problem)
    monkeypatch.setattr(ev_mod, "_judged", timer.judged)
    monkeypatch.setattr(ev_mod, "_run", timer.run)
    monkeypatch.setattr(ev_mod, "sanity_findings", lambda *a, **k: [])
    cache = tmp_path / "cache.jsonl"
    timing_cache._OPEN.pop(cache.resolve(), None)
    timing_cache.open_cache(cache, gpu=H200)
    cand = tmp_path / "a" / "round_01.py"
    cand.parent.mkdir()
    shutil.copyfile(DATA / "initial.py", cand)
    return problem, timer, LadderSettings(timing_cache=str(cache)), cand


def test_a_second_evaluation_of_the_same_source_is_a_hit(setup: Any, tmp_path: Path) -> None:
    problem, timer, settings, cand = setup
    first = ev_mod.evaluate(problem, cand, backend="cuda", settings=settings, aa=True)
    assert first.passed and len(timer.calls) == 1 and first.duration_s == 3.5
    # the same source under another path (another arm's session folder): no worker runs
    other = tmp_path / "b" / "round_00.py"
    other.parent.mkdir()
    shutil.copyfile(cand, other)
    second = ev_mod.evaluate(problem, other, backend="cuda", settings=settings, aa=True)
    assert len(timer.calls) == 1
    assert second.candidate == other.resolve() and second.passed and second.duration_s == 0.0 and second.phase_s == {}
    assert second.case_ms() == first.case_ms() and second.pairs("aa") == first.pairs("aa")
    assert second.protocol == first.protocol and second.device == first.device
    stats = timing_cache.open_cache(settings.timing_cache).stats
    assert (stats.hits, stats.misses, stats.stores) == (1, 1, 1) and stats.saved_s == pytest.approx(3.5)
    # a fresh process reading the file (resumed run) hits too
    fresh = timing_cache.TimingCache(settings.timing_cache, gpu=H200)
    assert len(fresh) == 1


def test_a_hit_moves_launch_records_to_the_candidate(setup: Any, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """L3/L4 compile the kernel from a launch record's ``file``: a hit must name this candidate, not the session
    folder of the arm that stored it (the ablation found L3 failing with FileNotFoundError on a resumed run, after the
    other arm's folder was gone). Records of another file (an imported module) keep theirs."""
    problem, timer, settings, cand = setup
    helper = tmp_path / "helper_kernels.py"
    helper.write_text("# a module the candidate imports\n")
    judged = timer.judged

    def with_launches(request: Any, backend: str, settings: Any, *, python: str | None = None) -> SandboxResult:
        res = judged(request, backend, settings, python=python)
        res.payload["launches"] = [{"kernel": "softmax_kernel", "file": str(Path(request.candidate).resolve()),
                                    "grid": [4]}, {"kernel": "helper", "file": str(helper), "grid": [1]}]
        return res

    monkeypatch.setattr(ev_mod, "_judged", with_launches)
    first = ev_mod.evaluate(problem, cand, backend="cuda", settings=settings)
    assert first.launches[0]["file"] == str(cand.resolve())
    other = tmp_path / "b" / "round_00.py"
    other.parent.mkdir()
    shutil.copyfile(cand, other)
    shutil.rmtree(cand.parent)  # the storing arm's folder is gone
    second = ev_mod.evaluate(problem, other, backend="cuda", settings=settings)
    assert len(timer.calls) == 1  # a hit
    assert [r["file"] for r in second.launches] == [str(other.resolve()), str(helper)]
    # an entry stored before the path was recorded: only files that no longer exist move
    legacy = timing_cache._rebase_launches([{"file": "/gone/round_03.py"}, {"file": str(helper)}], other, None)
    assert [r["file"] for r in legacy] == [str(other), str(helper)]


def test_a_changed_source_gpu_or_comparison_misses(setup: Any, tmp_path: Path) -> None:
    problem, timer, settings, cand = setup
    ev_mod.evaluate(problem, cand, backend="cuda", settings=settings)
    cand.write_text(cand.read_text() + "\n# changed\n")
    ev_mod.evaluate(problem, cand, backend="cuda", settings=settings)
    assert len(timer.calls) == 2
    timing_cache.open_cache(settings.timing_cache, gpu="NVIDIA A100|GPU-1111")  # another GPU
    ev_mod.evaluate(problem, cand, backend="cuda", settings=settings)
    assert len(timer.calls) == 3
    base = tmp_path / "base.py"
    base.write_text((DATA / "initial.py").read_text())
    ev_mod.evaluate(problem, cand, backend="cuda", settings=settings, against={"initial": base})  # against a kernel
    assert len(timer.calls) == 4
    base.write_text(base.read_text() + "\n# another base\n")
    ev_mod.evaluate(problem, cand, backend="cuda", settings=settings, against={"initial": base})
    assert len(timer.calls) == 5
    ev_mod.evaluate(problem, cand, backend="cuda", settings=settings.model_copy(update={"timing_blocks": 12}))  # method
    assert len(timer.calls) == 6
    ev_mod.evaluate(problem, cand, backend="cuda", settings=settings, methods={"x": "cudagraph"})
    assert len(timer.calls) == 7
    ev_mod.evaluate(problem, cand, backend="cuda", settings=settings, against={"initial": base})  # all as before: hit
    assert len(timer.calls) == 7


def test_retime_is_cached_by_blocks_and_roles(setup: Any, tmp_path: Path) -> None:
    problem, timer, settings, cand = setup
    init = tmp_path / "init.py"
    shutil.copyfile(DATA / "initial.py", init)
    a = ev_mod.retime(problem, cand, {"initial": init}, backend="cuda", settings=settings, blocks=16)
    b = ev_mod.retime(problem, cand, {"initial": init}, backend="cuda", settings=settings, blocks=16)
    assert len(timer.calls) == 1 and a.pairs("initial") == b.pairs("initial")
    ev_mod.retime(problem, cand, {"initial": init}, backend="cuda", settings=settings, blocks=8)
    assert len(timer.calls) == 2


def test_off_by_default_and_untimed_validations_are_never_cached(setup: Any) -> None:
    problem, timer, settings, cand = setup
    plain = LadderSettings()
    assert plain.timing_cache is None
    ev_mod.evaluate(problem, cand, backend="cuda", settings=plain)
    ev_mod.evaluate(problem, cand, backend="cuda", settings=plain)
    assert len(timer.calls) == 2
    ev_mod.evaluate(problem, cand, backend="cuda", settings=settings, timing=False)
    ev_mod.evaluate(problem, cand, backend="cuda", settings=settings, timing=False)
    assert len(timer.calls) == 4 and not Path(settings.timing_cache).exists()


def test_failures_are_not_stored(setup: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    problem, timer, settings, cand = setup
    calls = []

    def failing(request: Any, backend: str, settings: Any, *, python: str | None = None) -> SandboxResult:
        calls.append(1)
        return SandboxResult(status="timeout", reason="deadline")

    monkeypatch.setattr(ev_mod, "_judged", failing)
    for _ in range(2):
        assert not ev_mod.evaluate(problem, cand, backend="cuda", settings=settings).passed
    assert len(calls) == 2


def test_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    c = timing_cache.TimingCache(path, gpu="g")
    c.put("k1", {"evaluation": {}})
    with path.open("a") as f:
        f.write('{"v": 1, "key": "k2", "evalu')  # a writer killed mid-line
    again = timing_cache.TimingCache(path, gpu="g")
    assert len(again) == 1 and again.get("k1") is not None and again.get("k2") is None
    assert json.loads(path.read_text().splitlines()[0])["key"] == "k1"
