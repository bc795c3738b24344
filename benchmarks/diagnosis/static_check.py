"""Compile items' kernels for sm_90 (no GPU needed) and check the statically provable causes their labels claim.

    PYTHONPATH=. python benchmarks/diagnosis/static_check.py                     # every item with a static_check
    PYTHONPATH=. python benchmarks/diagnosis/static_check.py bias_relu_wide --json
    PYTHONPATH=. python benchmarks/diagnosis/static_check.py --write-seen   # record what was seen in label.yaml

For each item whose label.yaml has a ``static_check`` block, initial.py and fix.py are compiled with the
project's IR capture (``optimizer.ir``, the engine behind ``ladder ir``) using the label's arguments and
options; the detected IR signatures and ptxas spill bytes are compared with the label's expectations.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.diagnosis.dataset import DiagItem, Expectation, load_items


def _merge_args(base: list[str], extra: list[str]) -> list[str]:
    """``base`` with each NAME=... in ``extra`` replacing the same NAME (or appended)."""
    names = {a.split("=", 1)[0] for a in extra}
    return [a for a in base if a.split("=", 1)[0] not in names] + list(extra)


_CP_ASYNC = re.compile(r"\bcp\.async\.(?:ca|cg)\.shared")


def observe(path: Path, kernel: str, args: list[str], options: dict[str, int]) -> dict[str, Any]:
    """Compile one kernel for cuda:90; its signature names and ptxas resources."""
    from optimizer.ir import analyze, capture_kernel

    capture = capture_kernel(f"{path}::{kernel}", "cuda:90", args, options=options or None, per_pass=False)
    report = analyze(capture)
    res = capture.resources
    return {
        "signatures": sorted({s.name for s in report.signatures}),
        "registers": res.registers if res else None,
        "spill_stores_bytes": (res.spill_stores_bytes or 0) if res else None,
        "cp_async": len(_CP_ASYNC.findall(capture.stages.get("ptx", ""))),
    }


def failures(seen: dict[str, Any], want: Expectation) -> list[str]:
    """What in ``seen`` contradicts ``want`` (empty when the expectation holds)."""
    out = [f"{s} expected but not detected" for s in want.present if s not in seen["signatures"]]
    out += [f"{s} detected but expected absent" for s in want.absent if s in seen["signatures"]]
    spilled = bool(seen["spill_stores_bytes"])
    if want.spills is not None and spilled != want.spills:
        out.append(f"ptxas spill stores {seen['spill_stores_bytes']} B, expected {'some' if want.spills else 'none'}")
    if want.cp_async is not None and bool(seen["cp_async"]) != want.cp_async:
        out.append(f"{seen['cp_async']} cp.async copies in PTX, expected {'some' if want.cp_async else 'none'}")
    return out


def check_item(item: DiagItem) -> dict[str, Any]:
    sc = item.static_check
    if sc is None:
        raise ValueError(f"{item.name} has no static_check in its label")
    result: dict[str, Any] = {"item": item.name, "cause": item.cause}
    runs = {
        "initial": (item.initial_path, sc.kernel, sc.args, sc.options, sc.initial),
        "fix": (item.fix_path, sc.fix_kernel or sc.kernel, _merge_args(sc.args, sc.fix_args),
                {**sc.options, **sc.fix_options}, sc.fix),
    }
    compiled: dict[str, dict[str, Any]] = {}
    for which, (path, kernel, args, options, want) in runs.items():
        key = json.dumps([str(path), kernel, args, options])
        if key not in compiled:  # an at_roofline item's "fix" is its initial kernel: compile it once
            compiled[key] = observe(path, kernel, args, options)
        seen = compiled[key]
        result[which] = {**seen, "failures": failures(seen, want)}
    result["ok"] = not result["initial"]["failures"] and not result["fix"]["failures"]
    return result


def summary(result: dict[str, Any]) -> str:
    """One line for a label's ``seen`` field."""
    import triton

    parts = [f"{w}: regs={result[w]['registers']} spill_stores={result[w]['spill_stores_bytes']}B "
             f"cp.async={result[w]['cp_async']} "
             f"[{', '.join(result[w]['signatures'])}]" for w in ("initial", "fix")]
    return f"{'; '.join(parts)} (triton {triton.__version__}, cuda:90 compile-only)"


def write_seen(item: DiagItem, result: dict[str, Any]) -> None:
    """Replace the ``seen:`` line of the item's static_check block with this run's summary."""
    label = item.folder / "label.yaml"
    lines = label.read_text().splitlines()
    idx = [i for i, line in enumerate(lines) if line.startswith("  seen:")]
    if len(idx) != 1:
        raise ValueError(f"{label}: expected one '  seen:' line in static_check, found {len(idx)}")
    lines[idx[0]] = "  seen: " + json.dumps(summary(result))
    label.write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("items", nargs="*", help="item folder names (default: every item with a static_check)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--write-seen", action="store_true", help="record each result in the label's seen field")
    args = parser.parse_args(argv)
    items = [i for i in load_items() if i.static_check and (not args.items or i.name in args.items)]
    missing = sorted(set(args.items) - {i.name for i in items})
    if missing:
        print(f"no static_check for: {', '.join(missing)}", file=sys.stderr)
        return 2
    results = [check_item(i) for i in items]
    if args.write_seen:
        for item, result in zip(items, results, strict=True):
            write_seen(item, result)
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        for r in results:
            for which in ("initial", "fix"):
                s = r[which]
                print(f"{r['item']:26s} {which:7s} regs={s['registers']} spill={s['spill_stores_bytes']}B cp.async={s['cp_async']} "
                      f"{','.join(s['signatures'])} {'; '.join(s['failures'])}")
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
