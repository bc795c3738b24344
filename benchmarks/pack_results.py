"""Compress committed trajectories: every ``trajectory.json`` under the given dirs (default benchmarks/results)
becomes ``trajectory.json.gz`` (gzip -9, no timestamp, so the same JSON always gives the same bytes). Readers take
either form (``benchmarks/_data.py``). Run it before committing a campaign's results.

    python benchmarks/pack_results.py [DIR ...]
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def pack(root: Path) -> tuple[int, int, int]:
    n = before = after = 0
    for p in sorted(root.rglob("trajectory.json")):
        raw = p.read_bytes()
        data = gzip.compress(raw, compresslevel=9, mtime=0)
        p.with_name(p.name + ".gz").write_bytes(data)
        p.unlink()
        n, before, after = n + 1, before + len(raw), after + len(data)
    return n, before, after


def main(argv: list[str]) -> int:
    for root in [Path(a) for a in argv] or [RESULTS]:
        n, before, after = pack(root)
        print(f"{root}: {n} trajectories, {before / 1e6:.2f} MB -> {after / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
