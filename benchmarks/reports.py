"""``ladder bench report``: the committed campaign reports, regenerated from the committed (packed) results.

    ladder bench report                 # every report below, in place; then the campaign folders are packed again
    ladder bench report --check         # regenerate into a scratch folder and compare with the committed reports
    ladder bench report --out DIR       # one runner result dir's report.md / report.json / figures (suite/report.py)

Reports (each from data under ``benchmarks/results``, read through ``benchmarks/_data.py``):
- ``suite``, ``naive``, ``realistic/campaign``: ``report.md``, ``report.json`` and ``fig_*.png``
  (``benchmarks/suite/report.py``);
- ``diagnosis/campaign_vs_fix.{md,json}`` from ``diagnosis/campaign`` (``benchmarks/diagnosis/campaign_report.py``);
- ``first_versions.{md,json}`` from the three sets' ``report.json`` (``benchmarks/suite/compare_sets.py``).

``--check`` compares every regenerated file with the committed one, leaving out what records when and where it
was made (``provenance``, ``generated``, the "Generated ..." line); figures are compared byte for byte and reported,
not failed (matplotlib's output follows its version). Exit 1 when a report's content differs.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results"
for _p in (BENCH.parent, BENCH, BENCH / "suite", BENCH / "diagnosis"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import _data  # noqa: E402

#: result dirs with a runner report (report.py)
SUITE_REPORTS = ("suite", "naive", "realistic/campaign")
#: (campaign dir, report stem written next to it) for campaign_report.py
DIAGNOSIS_REPORTS = (("diagnosis/campaign", "campaign_vs_fix"),)
PROVENANCE_KEYS = ("provenance", "generated", "source")  # when, where, and from which absolute path


def regenerate(to: Path | None = None) -> list[Path]:
    """Write every report; into ``to`` (mirroring benchmarks/results) instead of in place when given. Returns the
    report files written, as paths under benchmarks/results."""
    from benchmarks.diagnosis import campaign_report
    from benchmarks.suite import compare_sets
    from benchmarks.suite import report as suite_report

    written: list[Path] = []
    for rel in SUITE_REPORTS:
        dest = (to / rel) if to else None
        rep = suite_report.write_report(RESULTS / rel, dest)
        written += [RESULTS / rel / n for n in ("report.md", "report.json", *rep["figures"])]
    for rel, stem in DIAGNOSIS_REPORTS:
        argv = ["--out", str(RESULTS / rel), "--name", stem] + (["--to", str(to / Path(rel).parent)] if to else [])
        _quiet(campaign_report.main, argv)
        written += [RESULTS / Path(rel).parent / f"{stem}.{ext}" for ext in ("md", "json")]
    argv = ["--results", str(to), "--out", str(to)] if to else []
    _quiet(compare_sets.main, argv)
    written += [RESULTS / "first_versions.md", RESULTS / "first_versions.json"]
    return written


def _quiet(fn: Any, argv: list[str]) -> None:
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        rc = fn(argv)
    if rc:
        raise SystemExit(f"{fn.__module__} {' '.join(argv)}: exit {rc}")


def _strip(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in PROVENANCE_KEYS}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def _md_lines(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if not ln.startswith("Generated ")]


def compare(committed: bytes, fresh: bytes, name: str) -> str | None:
    """None when the two agree outside provenance, else a one-line difference."""
    if name.endswith(".json"):
        a, b = _strip(json.loads(committed)), _strip(json.loads(fresh))
        if a == b:
            return None
        keys = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k)) if isinstance(a, dict) else []
        return f"content differs (keys: {', '.join(keys[:8])})"
    if name.endswith(".md"):
        a, b = _md_lines(committed.decode()), _md_lines(fresh.decode())
        if a == b:
            return None
        first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        return f"line {first + 1} differs: {(a[first] if first < len(a) else '<end>')[:100]!r} vs " \
               f"{(b[first] if first < len(b) else '<end>')[:100]!r}"
    return None if committed == fresh else "bytes differ"


def check() -> int:
    bad = 0
    with tempfile.TemporaryDirectory() as td:
        to = Path(td)
        for path in regenerate(to):
            rel = path.relative_to(RESULTS)
            fresh = (to / rel).read_bytes()
            try:
                committed = _data.read_bytes(path)
            except FileNotFoundError:
                print(f"NEW      {rel} (no committed file)")
                continue
            diff = compare(committed, fresh, path.name)
            figure = path.suffix == ".png"
            bad += diff is not None and not figure
            word = "same" if diff is None else "FIGURE" if figure else "DIFFERS"
            print(f"{word:8s} {rel}" + (f": {diff}" if diff else ""))
    print("every report regenerates from the committed data" if not bad else f"{bad} report file(s) differ")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="ladder bench report", description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--check", action="store_true", help="regenerate into a scratch folder and compare")
    ap.add_argument("--out", help="only this runner result dir's report (benchmarks/suite/report.py --out DIR)")
    ap.add_argument("--no-pack", action="store_true", help="leave the regenerated data files loose (not packed)")
    a, rest = ap.parse_known_args(argv)
    if a.out or rest:
        from benchmarks.suite import report as suite_report

        return suite_report.main((["--out", a.out] if a.out else []) + rest)
    if a.check:
        return check()
    written = regenerate()
    folders = sorted({f for p in written for f in [RESULTS / Path(p.relative_to(RESULTS).parts[0])]
                      if (f / _data.ARCHIVE).is_file()})
    if not a.no_pack:
        for f in folders:
            _data.fold(f)
    for p in written:
        print(f"wrote {p.relative_to(BENCH.parent)}")
    if folders and not a.no_pack:
        print(f"packed again: {', '.join(str(f.relative_to(BENCH.parent)) for f in folders)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
