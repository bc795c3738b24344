"""Pack committed results: fold each campaign folder's loose files into its archive (``<folder>/packed.jsonl.gz``,
format and readers in ``benchmarks/_data.py``), leaving only the ``*.md`` reports and ``*.png`` figures beside it.
Run it after unpacking a device call's results into ``benchmarks/results`` and before committing them.

    python benchmarks/pack_results.py            # every folder that already has an archive; stray trajectories gzipped
    python benchmarks/pack_results.py DIR ...    # these folders (a folder without an archive gets one)
    ladder bench pack [DIR ...]                  # the same

The same files always give the same archive bytes, so packing twice changes nothing.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _data import ARCHIVE, fold  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"


def compress(root: Path) -> tuple[int, int, int]:
    """Every ``trajectory.json`` under ``root`` becomes ``trajectory.json.gz`` (gzip -9, no timestamp): for result
    folders that are not packed (e.g. a run's own output folder). Returns (files, bytes before, bytes after)."""
    n = before = after = 0
    for p in sorted(root.rglob("trajectory.json")):
        raw = p.read_bytes()
        data = gzip.compress(raw, compresslevel=9, mtime=0)
        p.with_name(p.name + ".gz").write_bytes(data)
        p.unlink()
        n, before, after = n + 1, before + len(raw), after + len(data)
    return n, before, after


def packed_folders(root: Path = RESULTS) -> list[Path]:
    """The folders under ``root`` that hold an archive."""
    return sorted(a.parent for a in root.rglob(ARCHIVE))


def main(argv: list[str]) -> int:
    if any(a.startswith("-") for a in argv):
        print(__doc__)
        return 0 if set(argv) <= {"-h", "--help"} else 2
    folders = [Path(a) for a in argv] or packed_folders()
    for folder in folders:
        if not folder.is_dir():
            print(f"{folder}: not a folder", file=sys.stderr)
            return 2
        n, members, size = fold(folder)
        print(f"{folder}: {n} loose file(s) folded; {ARCHIVE} holds {members} file(s), {size / 1e6:.2f} MB")
    if not argv:  # trajectories of result folders that are not packed
        packed = set(folders)
        for t in sorted(RESULTS.rglob("trajectory.json")):
            if not any(f in t.parents for f in packed):
                compress(t.parent)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
