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
    assert res["method"] == "cudagraph" and res["method_note"] == ""
    timed = calls[4:]  # after the do_bench first pass and the graph trial
    assert [r for r, _ in timed] == ["cand", "base", "base", "cand"] * 2 and all(g for _, g in timed)
    assert res["blocks"]["cand"] == [pytest.approx(0.0102)] * 4 and res["stats"]["base"]["n"] == 20


def test_capture_failure_and_slow_kernels_fall_back_with_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake(monkeypatch, {"a": 0.010, "b": 0.010}, graph_fails=True)
    res = timing.time_interleaved({"a": "a", "b": "b"}, blocks=2)
    assert res["method"] == "do_bench" and "capture failed" in res["method_note"] and "stream is capturing" in res["method_note"]
    calls = _fake(monkeypatch, {"a": 0.010, "b": 0.200}, graph_fails=False)
    res = timing.time_interleaved({"a": "a", "b": "b"}, blocks=2, graph_below_us=50)
    assert res["method"] == "do_bench" and "204.0 us >= 50 us" in res["method_note"] and not any(g for _, g in calls)
