"""The interleaving and CUDA-graph choice of ``time_interleaved``, with the do_bench calls faked (no GPU here)."""

from __future__ import annotations

import pytest

from optimizer.harness import timing


def _fake(monkeypatch: pytest.MonkeyPatch, ms: dict[str, float], graph_fails: bool) -> list[tuple[str, bool]]:
    calls: list[tuple[str, bool]] = []

    def block(fn, graph, warmup_ms, rep_ms):  # the role name travels as the fake "function"
        calls.append((fn, graph))
        if graph and graph_fails:
            raise RuntimeError("operation not permitted when stream is capturing")
        return [ms[fn] * (1 + 0.01 * i) for i in range(5)]

    monkeypatch.setattr(timing, "_cuda_block", block)
    return calls


def test_short_kernels_use_cuda_graphs_and_blocks_alternate(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake(monkeypatch, {"cand": 0.010, "base": 0.020}, graph_fails=False)
    res = timing.time_interleaved({"cand": "cand", "base": "base"}, blocks=4, graph_below_us=50)
    assert res["method"] == "cudagraph" and res["method_note"].startswith("cudagraph: the initial kernel takes 10.2 us")
    timed = calls[5:]  # after the do_bench first pass, the decider's graph block and the graph trial
    assert [r for r, _ in timed] == ["cand", "base", "base", "cand"] * 2 and all(g for _, g in timed)
    assert res["blocks"]["cand"] == [pytest.approx(0.0102)] * 4 and res["stats"]["base"]["n"] == 20


def test_capture_failure_and_slow_kernels_fall_back_with_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake(monkeypatch, {"a": 0.010, "b": 0.010}, graph_fails=True)
    res = timing.time_interleaved({"a": "a", "b": "b"}, blocks=2)
    assert res["method"] == "do_bench" and "capture failed" in res["method_note"] and "stream is capturing" in res["method_note"]
    calls = _fake(monkeypatch, {"a": 0.010, "b": 0.200}, graph_fails=False)
    res = timing.time_interleaved({"a": "a", "b": "b"}, blocks=2, graph_below_us=50, decide_by="b")
    assert res["method"] == "do_bench" and "204.0 us of device time >= 50 us" in res["method_note"]
    assert calls[2] == ("b", True) and not any(g for _, g in calls[3:])  # one graph block decides, the blocks are do_bench
    assert res["decided_ms"] == pytest.approx(0.204)


def test_the_method_is_decided_by_one_kernel_not_by_the_slowest_one_compared(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same initial kernel must get the same method whatever it is compared with (one timing truth)."""
    _fake(monkeypatch, {"initial": 0.010, "slow": 0.200, "fast": 0.005}, graph_fails=False)
    with_slow = timing.time_interleaved({"slow": "slow", "initial": "initial"}, blocks=2, decide_by="initial")
    with_fast = timing.time_interleaved({"fast": "fast", "initial": "initial"}, blocks=2, decide_by="initial")
    assert with_slow["method"] == with_fast["method"] == "cudagraph"


def test_a_fixed_method_is_used_as_given(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _fake(monkeypatch, {"a": 0.010, "b": 0.010}, graph_fails=False)
    res = timing.time_interleaved({"a": "a", "b": "b"}, blocks=2, method="do_bench")
    assert res["method"] == "do_bench" and res["decided_ms"] is None and "fixed" in res["method_note"]
    assert not any(g for _, g in calls)  # a 10 us kernel stays on do_bench when the session fixed do_bench
    calls = _fake(monkeypatch, {"a": 0.300, "b": 0.300}, graph_fails=False)
    res = timing.time_interleaved({"a": "a", "b": "b"}, blocks=2, method="cudagraph")
    assert res["method"] == "cudagraph" and all(g for _, g in calls[2:])
    _fake(monkeypatch, {"a": 0.010, "b": 0.010}, graph_fails=True)
    res = timing.time_interleaved({"a": "a", "b": "b"}, blocks=2, method="cudagraph")
    assert res["method"] == "do_bench" and res["fell_back"] and "every kernel of this case" in res["method_note"]
    with pytest.raises(ValueError, match="unknown timing method"):
        timing.time_interleaved({"a": "a"}, blocks=2, method="graphs")


def test_choose_method_threshold() -> None:
    assert timing.choose_method(0.049, 50)[0] == "cudagraph"
    assert timing.choose_method(0.050, 50)[0] == "do_bench"
    assert timing.choose_method(0.001, None)[0] == "do_bench"


def test_host_wall_time_counts_the_launchers_work() -> None:
    import time as _time

    def slow_launcher() -> None:
        _time.sleep(0.002)

    host = timing.host_wall_ms(slow_launcher, lambda: None, target_ms=20)
    assert 1.9 < host["launch_ms"] <= host["wall_ms"] and host["calls"] >= 10  # no upper bound: a loaded CI machine


def test_a_host_bound_launcher_is_timed_on_the_device(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seven launches of a few us each: flushed do_bench times the launcher's host work (0.46 ms on the H200 for
    activation_chain_small), the graph the device's; the case is timed with graphs."""
    calls: list[tuple[str, bool]] = []

    def block(fn, graph, warmup_ms, rep_ms):
        calls.append((fn, graph))
        return [0.030 if graph else 0.460] * 5

    monkeypatch.setattr(timing, "_cuda_block", block)
    res = timing.time_interleaved({"candidate": "candidate"}, blocks=2, graph_below_us=20)
    assert res["method"] == "cudagraph" and "host-bound" in res["method_note"]
    assert timing.choose_method(0.300, 50, 0.290)[0] == "do_bench"  # a long kernel: do_bench with its L2 flush
    assert timing.choose_method(0.300, 50, 0.040)[0] == "cudagraph"  # 40 us of device time
