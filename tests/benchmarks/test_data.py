"""Committed trajectories are stored compressed; every reader takes both forms (benchmarks/_data.py)."""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import _data  # noqa: E402
import pack_results  # noqa: E402


def test_pack_compresses_deterministically_and_readers_take_both_forms(tmp_path: Path) -> None:
    a, b = tmp_path / "x" / "session", tmp_path / "y" / "session"
    a.mkdir(parents=True)
    b.mkdir(parents=True)
    (a / "trajectory.json").write_text('{"id": "a"}')
    (b / "trajectory.json").write_text('{"id": "b"}')
    assert pack_results.pack(tmp_path / "x")[0] == 1
    first = (a / "trajectory.json.gz").read_bytes()
    (a / "trajectory.json").write_text(gzip.decompress(first).decode())
    pack_results.pack(tmp_path / "x")
    assert (a / "trajectory.json.gz").read_bytes() == first  # no timestamp in the bytes: re-packing changes nothing
    assert _data.find(tmp_path) == [a / "trajectory.json", b / "trajectory.json"]
    assert _data.read_text(a / "trajectory.json") == '{"id": "a"}' and _data.read_text(b / "trajectory.json") == '{"id": "b"}'
    (a / "trajectory.json").write_text('{"id": "fresh"}')  # a fresh run beside the committed .gz: the plain file wins
    assert _data.read_text(a / "trajectory.json") == '{"id": "fresh"}' and len(_data.find(tmp_path)) == 2
    with pytest.raises(FileNotFoundError, match="nor trajectory.json.gz"):
        _data.read_text(tmp_path / "z" / "trajectory.json")


def test_the_committed_results_hold_no_uncompressed_trajectory() -> None:
    plain = sorted((ROOT / "benchmarks" / "results").rglob("trajectory.json"))
    assert plain == [], f"run `python benchmarks/pack_results.py` before committing: {plain[:3]}"
