"""GPU step: time each structural transform on its example (initial vs transformed vs torch) and check outputs.

    python benchmarks/rewrite/time_transforms.py OUT_DIR [--only NAME ...]

Needs a CUDA GPU, torch and triton (no network, no libcst). For every ``examples/<name>.py`` with a
``transformed/<name>.py`` (written on CPU by ``prepare.py``): runs the original, the transformed module and the
torch reference on the same inputs, records the max abs error of both kernels against torch and whether they pass
the example's TOL, and the median of ``triton.testing.do_bench`` for all three. Writes
``OUT_DIR/rewrite_transforms.json`` with provenance (machine, GPU, versions, date, command).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import traceback
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # the repository root, for benchmarks._provenance

from benchmarks._provenance import provenance


def load(path: Path, tag: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"rw_{tag}_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def check(out: Any, ref: Any, tol: dict[str, float]) -> dict[str, Any]:
    import torch

    err = (out.float() - ref.float()).abs().max().item()
    return {"max_abs_err": err, "passed": bool(torch.allclose(out.float(), ref.float(), atol=tol["atol"], rtol=tol["rtol"]))}


def measure(name: str) -> dict[str, Any]:
    """``name`` is an example, or ``<example>__v<i>`` for its i-th further variant."""
    import torch
    from triton.testing import do_bench

    base = name.split("__v")[0]
    initial, transformed = load(HERE / "examples" / f"{base}.py", "initial"), load(HERE / "transformed" / f"{name}.py", "new")
    meta = json.loads((HERE / "transformed" / f"{name}.json").read_text())
    torch.manual_seed(0)
    inputs = initial.get_inputs("cuda")
    ref = initial.reference(*inputs)
    row: dict[str, Any] = {"recipe": meta["recipe"], "applied": meta["applied"], "description": meta["description"],
                           "tol": initial.TOL}
    for label, mod in (("initial", initial), ("transformed", transformed)):
        try:
            model = mod.ModelNew()
            out = model(*inputs)
            torch.cuda.synchronize()
            row[label] = {**check(out, ref, initial.TOL), "ms": do_bench(lambda m=model: m(*inputs), warmup=25, rep=200,
                                                                        return_mode="median")}
        except Exception as exc:  # a failing variant is a result, not a crash of the whole run
            row[label] = {"error": f"{type(exc).__name__}: {exc}"[:2000], "traceback": traceback.format_exc()[-4000:]}
    row["torch"] = {"ms": do_bench(lambda: initial.reference(*inputs), warmup=25, rep=200, return_mode="median")}
    if "ms" in row["initial"] and "ms" in row["transformed"]:
        row["speedup"] = row["initial"]["ms"] / row["transformed"]["ms"]
        row["transformed_vs_torch"] = row["torch"]["ms"] / row["transformed"]["ms"]
    try:  # provenance of the transformed file: a fresh rewrite gives the same source (needs libcst)
        sys.path.insert(0, str(HERE))
        from prepare import transform

        if "__v" not in name:
            row["fresh_rewrite_matches"] = transform(HERE / "examples" / f"{name}.py")[0] == (HERE / "transformed" / f"{name}.py").read_text()
    except ImportError as exc:
        row["fresh_rewrite_matches"] = f"not checked ({exc})"
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    import torch
    import triton

    if not torch.cuda.is_available():
        raise SystemExit("needs a CUDA GPU (torch.cuda.is_available() is False)")
    bases = {p.stem for p in (HERE / "examples").glob("*.py")}
    names = sorted(p.stem for p in (HERE / "transformed").glob("*.py") if p.stem.split("__v")[0] in bases)
    if args.only:
        names = [n for n in names if n.split("__v")[0] in args.only]
    results = {}
    for n in names:
        print(f"== {n}", flush=True)
        results[n] = measure(n)
        r = results[n]
        print(f"   initial {r['initial'].get('ms', r['initial'].get('error'))} ms, transformed "
              f"{r['transformed'].get('ms', r['transformed'].get('error'))} ms, torch {r['torch']['ms']:.4f} ms", flush=True)
    prov = provenance()
    prov["gpu"] = torch.cuda.get_device_name(0)
    prov["versions"]["triton_runtime"] = triton.__version__
    args.out_dir.mkdir(parents=True, exist_ok=True)
    out = args.out_dir / "rewrite_transforms.json"
    out.write_text(json.dumps({"provenance": prov, "results": results}, indent=2, default=str) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
