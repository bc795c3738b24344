"""``causes.profile.host_finding``: the launcher's host wall time per call against the kernel's device time."""

from __future__ import annotations

from optimizer.ladder.causes.profile import HOST_BOUND, effective_ms, host_finding


def _rows(*pairs: tuple[float, float | None]) -> list[dict]:
    return [{"case": f"c{i}", "device_ms": d, "host_ms": h} for i, (d, h) in enumerate(pairs)]


def test_host_bound_on_every_case_supports_launch_overhead() -> None:
    f = host_finding(_rows((0.29, 1.18), (0.2, 1.22)))
    assert f is not None and f.cause == "launch_overhead" and f.confidence == 0.85
    assert "4.1x" in f.supporting[0].detail and "every case" in f.summary


def test_host_bound_on_some_cases_supports_it_less() -> None:
    f = host_finding(_rows((0.024, 0.053), (0.069, 0.068)))
    assert f is not None and f.confidence == 0.6 and "c0" in f.summary and "c1" not in f.summary


def test_device_set_time_refutes_launch_overhead() -> None:
    f = host_finding(_rows((0.16, 0.166), (0.32, 0.327)))
    assert f is not None and f.confidence == 0.0 and f.refute_strength == 0.6


def test_in_between_or_missing_figures_say_nothing() -> None:
    assert host_finding(_rows((1.0, 1.3))) is None  # above the device, under HOST_BOUND: neither way
    assert host_finding(_rows((1.0, None))) is None
    assert host_finding(_rows((1.0, 2.0), (1.0, None))) is None  # one case unmeasured: no claim about all


def test_effective_time_is_the_slower_side() -> None:
    assert effective_ms(0.3, 1.2) == 1.2 and effective_ms(0.3, 0.1) == 0.3 and effective_ms(0.3, None) == 0.3
    assert HOST_BOUND > 1.0
