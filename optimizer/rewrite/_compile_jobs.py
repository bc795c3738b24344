"""Compile worker for the effect check: several (file, kernel, specialization, options) jobs in ONE process.

Run by path (``effect.py`` starts it through ``runpy`` so that ``optimizer/ir/types.py`` never shadows the standard
library) with one argument, ``REQUEST.json``: ``{"target": {...}, "jobs": [{"file", "kernel", "args", "options"}]}``.
Each job is compiled with ``triton.compile(ASTSource(...), target=GPUTarget(...))`` -- the specialization the JIT
would use, reproduced by ``optimizer/ir/_specialize`` as the IR capture does -- without per-pass dumps; the worker
writes, per job, the PTX and TTGIR with debug locations removed (or the error). Standard library + Triton only.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import sys
import tempfile
import traceback
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1] / "ir"))
from _specialize import ArgSpec, specialize  # noqa: E402
from _worker import _load_kernel, _make_source, _params  # noqa: E402

# Example PTX debug lines:	.loc	1 42 17  /  .file	1 "/tmp/x/initial.py"  /  $L__debug_ranges ... sections
_PTX_DEBUG = re.compile(r"^\s*(\.loc|\.file|//)")
# Example TTGIR location:  ... loc(#loc12)   /   #loc12 = loc("/tmp/x/initial.py":42:17)
_LOC_REF = re.compile(r"\s*loc\([^()]*(\([^()]*\))?[^()]*\)")
_LOC_DEF = re.compile(r"^#loc\d*\s*=")


def normal_ptx(ptx: str) -> str:
    """PTX without source locations, comments and the DWARF sections (what the hardware runs, nothing else)."""
    out = []
    for line in ptx.splitlines():
        if line.lstrip().startswith(".section") and ".debug" in line:
            break  # the DWARF sections close the file
        if not _PTX_DEBUG.match(line) and line.strip():
            out.append(line.rstrip())
    return "\n".join(out)


def normal_ttgir(ttgir: str) -> str:
    out = []
    for line in ttgir.splitlines():
        if _LOC_DEF.match(line):
            continue
        out.append(_LOC_REF.sub("", line).rstrip())
    return "\n".join(x for x in out if x.strip())


def main(argv: list[str]) -> int:
    req = json.loads(Path(argv[0]).read_text())
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="ladder-effect-cache-")
    for k in ("MLIR_ENABLE_DUMP", "MLIR_DUMP_PATH", "MLIR_ENABLE_DIAGNOSTICS", "TRITON_DUMP_PTXAS_LOG"):
        os.environ.pop(k, None)
    results = []
    import triton
    from triton.backends.compiler import GPUTarget

    t = req["target"]
    target = GPUTarget(t["backend"], t["arch"], t["warp_size"])
    bool_type = "u1" if "constexprs" in inspect.signature(
        __import__("triton.compiler", fromlist=["ASTSource"]).ASTSource.__init__).parameters else "i1"
    for job in req["jobs"]:
        try:
            if job["args"] is None:
                raise ValueError("unreadable launch record")
            fn = _load_kernel(job["file"], job["kernel"])
            args = {d["name"]: ArgSpec.from_dict(d) for d in job["args"]}
            spec = specialize(_params(fn), args, bool_type=bool_type)
            ck = triton.compile(_make_source(fn, spec, triton, t["backend"]), target=target,
                                options=dict(job.get("options") or {}))
            results.append({"ok": True, "ptx": normal_ptx(str(ck.asm.get("ptx", ""))),
                            "ttgir": normal_ttgir(str(ck.asm.get("ttgir", "")))})
        except BaseException as exc:  # reported per job; the parent treats a failed compile as "cannot tell"
            results.append({"ok": False, "error": f"{type(exc).__name__}: {exc}"[:600],
                            "traceback": traceback.format_exc()[-1500:]})
    Path(req["out"]).write_text(json.dumps({"results": results}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
