"""Reference folders are shared by evaluations running in threads: one in use is never deleted under its reader
(an eviction by a third problem removed ref_1.pt while a parallel validation was reading it)."""

from __future__ import annotations

from pathlib import Path

from optimizer.harness import judge


def test_an_evicted_reference_folder_outlives_its_last_reader(tmp_path: Path) -> None:
    folder = tmp_path / "ladder_reference_x"
    folder.mkdir()
    (folder / "ref_1.pt").write_text("")
    with judge._LOCK:
        judge._hold(folder)
        judge._hold(folder)
        judge._evict(folder)  # a third problem pushed it out of the cache while two evaluations read it
    assert (folder / "ref_1.pt").exists()
    judge._release(folder)
    assert (folder / "ref_1.pt").exists()
    judge._release(folder)
    assert not folder.exists() and folder not in judge._IN_USE and folder not in judge._DOOMED
    idle = tmp_path / "idle"
    idle.mkdir()
    with judge._LOCK:
        judge._evict(idle)  # nobody reads it: gone at once
    assert not idle.exists()
