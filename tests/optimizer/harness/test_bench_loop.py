"""``bench_cuda`` is triton's do_bench where do_bench gives what is asked, else one event loop (shared with the
NPU twin) that restores in-place inputs outside the timed region. Fake devices: no GPU here."""

from __future__ import annotations

import random
import sys
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np
import pytest

from optimizer.harness import timing


class _Device:
    """Events, synchronize and the flush buffer of a fake device; every action goes into one log."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self.clock = 0.0
        self.allocated: list[int] = []
        dev = self

        class Event:
            def __init__(self, enable_timing: bool = False) -> None:
                self.t = 0.0

            def record(self) -> None:
                dev.log.append("record")
                self.t = dev.clock

            def elapsed_time(self, other: Event) -> float:
                return other.t - self.t

        self.Event = Event

    def synchronize(self) -> None:
        self.log.append("sync")

    def empty(self, n: int, dtype: Any = None, device: str = "") -> Any:
        self.allocated.append(n * 4)
        return SimpleNamespace(zero_=lambda: self.log.append("flush"))

    def fn(self) -> None:
        self.log.append("fn")
        self.clock += 0.5  # each call takes 0.5 ms of fake device time


@pytest.fixture
def cuda(monkeypatch: pytest.MonkeyPatch) -> _Device:
    dev = _Device()
    sync = dev.synchronize  # one bound method: the tamper check compares identities
    fake = SimpleNamespace(empty=dev.empty, int32="int32", cuda=SimpleNamespace(Event=dev.Event, synchronize=sync))
    monkeypatch.setattr(timing, "_torch", fake)
    monkeypatch.setattr(timing, "_CudaEvent", dev.Event)
    monkeypatch.setattr(timing, "_cuda_sync", sync)
    return dev


def test_without_setup_the_default_protocol_is_triton_do_bench(cuda: _Device, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, dict[str, Any]]] = []

    def do_bench(fn: Any, **kw: Any) -> list[float]:
        calls.append((fn, kw))
        return [3.0, 1.0, 2.0, 4.0, 5.0]

    monkeypatch.setattr(timing, "_do_bench", do_bench)
    stats = timing.bench_cuda(cuda.fn, warmup_ms=7, rep_ms=30)
    assert calls == [(cuda.fn, {"warmup": 7, "rep": 30, "return_mode": "all"})]
    assert (stats.median_ms, stats.min_ms, stats.max_ms, stats.n) == (3.0, 1.0, 5.0, 5) and not cuda.log


def test_do_bench_refuses_a_replaced_event_class(cuda: _Device, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timing, "_do_bench", lambda fn, **kw: [1.0])
    monkeypatch.setattr(timing._torch.cuda, "Event", object)  # a candidate patching torch.cuda.Event
    with pytest.raises(RuntimeError, match="timer_tampered"):
        timing.bench_cuda(cuda.fn)


def _timed_reps(log: list[str]) -> list[list[str]]:
    """The log after the warm-up, cut into one list per timed rep (each ends with the closing record)."""
    last_sync = len(log) - 1 - log[::-1].index("sync")
    body = log[:last_sync]
    first = body.index("record", body.index("sync", body.index("sync") + 1))  # after the estimate's sync
    head = body[:first]
    reps, cur = [], head[len(head) - 1 - head[::-1].index("fn") + 1:]  # the last rep's prefix (setup, flush)
    for x in body[first:]:
        cur.append(x)
        if cur.count("record") == 2:
            reps.append(cur)
            cur = []
    return reps


@pytest.mark.parametrize("flush_mb", [256, 64])
def test_a_setup_runs_before_every_call_and_outside_the_events(cuda: _Device, monkeypatch: pytest.MonkeyPatch,
                                                               flush_mb: int) -> None:
    monkeypatch.setattr(timing, "_do_bench", lambda fn, **kw: pytest.fail("do_bench cannot run a per-rep setup"))
    stats = timing.bench_cuda(cuda.fn, warmup_ms=2, rep_ms=5, flush_bytes=flush_mb << 20,
                              setup=lambda: cuda.log.append("setup"))
    assert cuda.allocated == [flush_mb << 20]
    assert cuda.log.count("fn") == cuda.log.count("setup")  # warm-up and estimate included
    reps = _timed_reps(cuda.log)
    assert len(reps) == stats.n == 10 and all(r == ["setup", "flush", "record", "fn", "record"] for r in reps)
    assert stats.median_ms == pytest.approx(0.5)


def test_another_flush_size_uses_the_loop_without_setup(cuda: _Device, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timing, "_do_bench", lambda fn, **kw: pytest.fail("do_bench flushes 256 MiB only"))
    stats = timing.bench_cuda(cuda.fn, warmup_ms=1, rep_ms=2, flush_bytes=1 << 20, max_reps=3)
    assert cuda.allocated == [1 << 20] and stats.n == 3  # the rep cap holds
    assert all(r == ["flush", "record", "fn", "record"] for r in _timed_reps(cuda.log))


def test_the_npu_twin_runs_the_same_loop_on_npu_events(monkeypatch: pytest.MonkeyPatch) -> None:
    dev = _Device()
    npu = SimpleNamespace(Event=dev.Event, synchronize=dev.synchronize)
    monkeypatch.setattr(timing, "_torch", SimpleNamespace(empty=dev.empty, int32="int32", npu=npu))
    monkeypatch.setitem(sys.modules, "torch_npu", ModuleType("torch_npu"))
    stats = timing.bench_npu(dev.fn, warmup_ms=1, rep_ms=2, setup=lambda: dev.log.append("setup"))
    assert stats.n == 4 and all(r == ["setup", "flush", "record", "fn", "record"] for r in _timed_reps(dev.log))


@pytest.mark.parametrize("n", [1, 2, 5, 37])
def test_summary_percentiles_match_numpy_linear_interpolation(n: int) -> None:
    rng = random.Random(n)
    xs = [rng.lognormvariate(0, 0.3) for _ in range(n)]
    s = timing.summarize(xs)
    assert s.n == n and s.min_ms == min(xs) and s.max_ms == max(xs)
    assert (s.p20_ms, s.median_ms, s.p80_ms) == pytest.approx(list(np.quantile(xs, [0.2, 0.5, 0.8])), rel=1e-12)
    with pytest.raises(ValueError, match="no timing samples"):
        timing.summarize([])
