"""Static verdicts do not depend on the order of a problem's CASES (issue 29 item 4)."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from optimizer.ladder.cases import autotuned_note, config_label, launch_configs, representative_case

ROOT = Path(__file__).resolve().parents[2]


def _problem(cases):
    return SimpleNamespace(cases=cases, smoke_cases=[{"N": 8}],
                           bytes_moved=lambda c: c["M"] * c["N"] * 4, flops=lambda c: None)


def test_representative_case_ignores_order() -> None:
    cases = [{"M": 32768, "N": 4096}, {"M": 4096, "N": 131072}, {"M": 65536, "N": 1024}]
    first = representative_case(_problem(cases))
    assert first == {"M": 4096, "N": 131072}
    for order in (cases[::-1], [cases[1], cases[0], cases[2]]):
        assert representative_case(_problem(order)) == first


def test_representative_case_respects_the_dry_record_cap() -> None:
    cases = [{"M": 1 << 20, "N": 1 << 12}, {"M": 1024, "N": 1024}, {"M": 2048, "N": 1024}]
    assert representative_case(_problem(cases), cap_bytes=1 << 30) == {"M": 2048, "N": 1024}
    assert representative_case(_problem(cases), cap_bytes=1) == {"M": 1024, "N": 1024}  # none fits: the smallest


def test_launch_configurations_of_an_autotuned_kernel_are_named() -> None:
    recs = [{"kernel": "k", "constexprs": {"BLOCK": 64}, "options": {"num_warps": 2}, "launches": 1},
            {"kernel": "k", "constexprs": {"BLOCK": 128}, "options": {"num_warps": 4}, "launches": 2}]
    cfgs = launch_configs(recs, "k")
    assert [config_label(c) for c in cfgs] == ["BLOCK=128, num_warps=4", "BLOCK=64, num_warps=2"]
    note = autotuned_note(recs)
    assert "2 launch configurations" in note and "BLOCK=128, num_warps=4" in note


@pytest.fixture
def client(kb):
    from retrieval.client import LocalKBClient

    return LocalKBClient(kb=kb)


def test_reordering_cases_keeps_the_static_verdict(client, tmp_path: Path) -> None:
    from optimizer.diagnosis import diagnose

    src = ROOT / "benchmarks" / "realistic" / "liger_softmax"
    verdicts = []
    for i, tail in enumerate(("", "\nCASES = CASES[::-1]\n")):
        folder = tmp_path / f"p{i}"
        shutil.copytree(src, folder)
        (folder / "problem.py").write_text((folder / "problem.py").read_text() + tail)
        d = diagnose(folder, folder / "initial.py", backend="interpreter", max_level="L1", kb=client,
                     workdir=tmp_path / f"w{i}", validate=False)
        note = next(n for n in d.notes if "read the launches of case" in n)
        verdicts.append((d.decision.cause if d.decision else None, note.split(" (", 1)[0]))
    assert verdicts[0] == verdicts[1]
    assert "'N': 32000" in verdicts[0][1] or "'N': 50257" in verdicts[0][1]  # the largest by bytes, not CASES[0]


def test_l3_reads_every_launch_configuration_and_names_the_diagnosed_one(monkeypatch) -> None:
    """An autotuned kernel's recorded configs are all compiled; the evidence names the diagnosed config and the
    problem signatures only some configs have (a spill in the big-tile config is not hidden)."""
    import optimizer.ir as ir
    from optimizer.ladder import l3_ir

    sig = lambda name: SimpleNamespace(name=name)  # noqa: E731
    recs = [{"kernel": "k", "constexprs": {"BLOCK": 128}, "options": {"num_warps": 4}, "launches": 2},
            {"kernel": "k", "constexprs": {"BLOCK": 4096}, "options": {"num_warps": 4}, "launches": 1}]
    calls = []

    def fake_capture(launches, **kw):
        calls.append(kw["memo_key"])
        return SimpleNamespace(kernel="k", signatures=[sig("register_spill")])

    monkeypatch.setattr(ir, "capture_report", fake_capture)
    phases = SimpleNamespace(time=lambda name: contextlib.nullcontext())
    ctx = SimpleNamespace(evaluation=SimpleNamespace(launches=recs), cache={}, phases=phases,
                          _capture_args=lambda: {"memo_key": "ir:abc", "target": "cuda:90"})
    report = SimpleNamespace(kernel="k", signatures=[sig("barrier")])
    (ev,) = l3_ir._config_evidence(ctx, report)
    assert ev.kind == "ir_configs" and ev.data["diagnosed"] == "BLOCK=128, num_warps=4"
    assert ev.data["in_some"] == ["barrier", "register_spill"] and len(calls) == 1
    assert "diagnosed BLOCK=128, num_warps=4" in ev.summary


def test_l3_compiles_the_other_configurations_side_by_side_and_reports_failures(monkeypatch) -> None:
    """The other configs' captures run in parallel workers; each keeps its own row, a failed compile is reported."""
    import threading
    import time

    import optimizer.ir as ir
    from optimizer.ladder import l3_ir

    monkeypatch.setattr(l3_ir, "CAPTURE_WORKERS", 4)
    recs = [{"kernel": "k", "constexprs": {"BLOCK": b}, "options": {"num_warps": 4}, "launches": 1}
            for b in (64, 128, 256, 512)]
    live, peak = [0], [0]
    lock = threading.Lock()

    def fake_capture(launches, **kw):
        with lock:
            live[0] += 1
            peak[0] = max(peak[0], live[0])
        time.sleep(0.2)
        with lock:
            live[0] -= 1
        block = launches[0]["constexprs"]["BLOCK"]
        if block == 512:
            raise RuntimeError("ptxas failed")
        return SimpleNamespace(kernel="k", signatures=[SimpleNamespace(name="register_spill")] if block == 256 else [])

    monkeypatch.setattr(ir, "capture_report", fake_capture)
    phases = SimpleNamespace(time=lambda name: contextlib.nullcontext())
    ctx = SimpleNamespace(evaluation=SimpleNamespace(launches=recs), cache={}, phases=phases,
                          _capture_args=lambda: {"memo_key": "ir:abc", "target": "cuda:90"})
    (ev,) = l3_ir._config_evidence(ctx, SimpleNamespace(kernel="k", signatures=[]))
    rows = ev.data["configs"]
    assert rows["BLOCK=128, num_warps=4"] == [] and rows["BLOCK=256, num_warps=4"] == ["register_spill"]
    assert rows["BLOCK=512, num_warps=4"] == ["compile failed: RuntimeError"]
    assert peak[0] >= 2  # the captures overlapped
