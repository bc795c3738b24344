"""The jail of a profiled worker can read the profiler's install tree outside /usr (ncu under /opt/nvidia)."""

from __future__ import annotations

from optimizer.harness.sandbox import profiler_roots


def test_ncu_gets_opt_nvidia_when_it_exists() -> None:
    assert profiler_roots("ncu", isdir=lambda p: p == "/opt/nvidia") == ["/opt/nvidia"]
    assert profiler_roots("/usr/local/cuda/bin/ncu", isdir=lambda p: True) == ["/opt/nvidia"]


def test_absent_trees_and_other_tools_add_nothing() -> None:
    assert profiler_roots("ncu", isdir=lambda p: False) == []
    assert profiler_roots("msprof", isdir=lambda p: True) == []
