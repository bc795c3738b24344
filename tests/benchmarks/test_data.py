"""Committed results are packed, one archive per campaign folder; every reader takes a folder packed, unpacked or
both at once (benchmarks/_data.py), and packing loses nothing."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "benchmarks" / "suite"))

import _data  # noqa: E402
import pack_results  # noqa: E402


def _campaign(root: Path) -> Path:
    c = root / "camp"
    (c / "relu" / "session").mkdir(parents=True)
    (c / "relu" / "result.json").write_text('{"op": "relu", "status": "done"}')
    (c / "relu" / "session" / "trajectory.json.gz").write_bytes(gzip.compress(b'{"id": "t"}', mtime=0))
    (c / "relu" / "session" / "round_01.py").write_text("x = 1\n")
    (c / "runs.jsonl").write_text('{"run": 1}\n')
    (c / "report.md").write_text("# report\n")
    (c / "fig.png").write_bytes(b"\x89PNG\x00\xff")
    (c / "blob.bin").write_bytes(b"\x00\xff\xfe")
    return c


def test_fold_packs_all_but_reports_and_reads_back_the_same(tmp_path: Path) -> None:
    c = _campaign(tmp_path)
    before = {p: _data.read_bytes(p) for p in _data.files(c)}
    assert sorted(p.relative_to(c).as_posix() for p in before) == [
        "blob.bin", "fig.png", "relu/result.json", "relu/session/round_01.py", "relu/session/trajectory.json",
        "report.md", "runs.jsonl"]
    assert pack_results.main([str(c)]) == 0
    assert sorted(p.relative_to(c).as_posix() for p in c.rglob("*") if p.is_file()) == [
        "fig.png", "packed.jsonl.gz", "report.md"]  # what people read stays a file
    after = {p: _data.read_bytes(p) for p in _data.files(c)}
    src = c / "relu" / "session" / "round_01.py"
    assert after.pop(src.with_name("round_01.py.txt")) == before.pop(src)  # candidate sources are stored as data
    assert after == before
    assert _data.is_dir(c / "relu") and not (c / "relu").exists() and _data.exists(c / "relu" / "result.json")
    assert _data.glob(c, "*/result.json") == [c / "relu" / "result.json"]
    assert _data.find(tmp_path) == [c / "relu" / "session" / "trajectory.json"]
    session = c / "relu" / "session"
    assert _data.files(session) == [session / "round_01.py.txt", session / "trajectory.json"]


def test_archive_bytes_are_deterministic(tmp_path: Path) -> None:
    first = _data.archive_bytes({"b": b"2", "a": b"1", "c": b"\xff"})
    assert first == _data.archive_bytes({"c": b"\xff", "a": b"1", "b": b"2"})
    c = _campaign(tmp_path)
    _data.fold(c)
    packed = (c / _data.ARCHIVE).read_bytes()
    _data.fold(c)  # nothing loose: unchanged
    assert (c / _data.ARCHIVE).read_bytes() == packed
    _data.materialize(c, c)  # everything written out again, then folded: the same bytes
    assert (c / "relu" / "result.json").is_file()
    _data.fold(c)
    assert (c / _data.ARCHIVE).read_bytes() == packed


def test_a_loose_file_wins_and_is_folded_in_later(tmp_path: Path) -> None:
    c = _campaign(tmp_path)
    _data.fold(c)
    (c / "relu" / "result.json").parent.mkdir()
    (c / "relu" / "result.json").write_text('{"op": "relu", "status": "redone"}')  # a device call's newer result
    (c / "gelu").mkdir()
    (c / "gelu" / "result.json").write_text('{"op": "gelu"}')  # a new operator, not packed yet
    assert json.loads(_data.read_text(c / "relu" / "result.json"))["status"] == "redone"
    assert [p.parent.name for p in _data.glob(c, "*/result.json")] == ["gelu", "relu"]
    n, members, _size = _data.fold(c)
    assert n == 2 and members == 6 and not (c / "gelu").exists()
    assert json.loads(_data.read_text(c / "relu" / "result.json"))["status"] == "redone"


def test_nested_result_dirs_read_through_the_archive_above(tmp_path: Path) -> None:
    c = _campaign(tmp_path)
    (c / "campaign" / "softmax").mkdir(parents=True)
    (c / "campaign" / "softmax" / "result.json").write_text('{"op": "softmax"}')
    _data.fold(c)
    sub = c / "campaign"
    assert _data.is_dir(sub) and _data.glob(sub, "*/result.json") == [sub / "softmax" / "result.json"]
    dest = tmp_path / "copy"
    assert _data.materialize(sub, dest) == 1 and (dest / "softmax" / "result.json").read_text() == '{"op": "softmax"}'
    (sub / "softmax").mkdir(parents=True)
    (sub / "softmax" / "extra.json").write_text("{}")
    assert _data.fold(sub)[0] == 1  # a sub-folder folds into the archive above it
    assert not (c / "campaign" / _data.ARCHIVE).exists() and _data.exists(sub / "softmax" / "extra.json")
    with pytest.raises(FileNotFoundError, match="packed.jsonl.gz"):
        _data.read_text(sub / "missing.json")


def test_results_unpack_merges_logs_with_the_packed_ones(tmp_path: Path) -> None:
    import _results

    c = _campaign(tmp_path)
    _data.fold(c)
    src = tmp_path / "device"
    (src / "gelu").mkdir(parents=True)
    (src / "gelu" / "result.json").write_text('{"op": "gelu", "status": "done"}')
    (src / "runs.jsonl").write_text('{"run": 2}\n')
    pack = _results.pack(src, tmp_path / "p.tar.gz")
    _results.unpack(pack, c)
    assert _data.read_text(c / "runs.jsonl") == '{"run": 1}\n{"run": 2}\n'  # the packed line is kept
    assert sorted(_results.load_results(c)) == ["gelu", "relu"]
    assert _data.ARCHIVE not in {m.name for m in __import__("tarfile").open(_results.pack(c, tmp_path / "q.tar.gz"))}


def test_the_committed_results_stay_a_small_share_of_the_tree() -> None:
    """Results are data: at most 10% of the tracked files (issue 33). New results may be committed unpacked for a
    while (they are read all the same); `ladder bench pack` folds them into their campaign's archive."""
    assert sorted(RESULTS.rglob("trajectory.json")) == [], "run `python benchmarks/pack_results.py` before committing"
    try:
        tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    paths = tracked.splitlines()
    results = [p for p in paths if p.startswith("benchmarks/results/")]
    loose = [p for p in results if not p.endswith((_data.ARCHIVE, ".md", ".png")) and any(
        (ROOT / p).is_relative_to(f) for f in pack_results.packed_folders())]
    assert len(results) <= 0.10 * len(paths), (
        f"{len(results)} of {len(paths)} tracked files are results; run `ladder bench pack` (unpacked: {loose[:5]})")


def test_committed_naive_report_regenerates_from_the_packed_data() -> None:
    import report

    committed = json.loads(_data.read_text(RESULTS / "naive" / "report.json"))
    fresh = json.loads(json.dumps(report.build(RESULTS / "naive"), default=str))
    drop = ("generated", "provenance", "figures")
    assert {k: v for k, v in fresh.items() if k not in drop} == {k: v for k, v in committed.items() if k not in drop}
