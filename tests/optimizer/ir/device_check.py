"""Run the capture worker on a GPU host without our Python dependencies (stdlib + Triton + torch only).

Usage on the device: ``python3 tests/optimizer/ir/device_check.py OUTDIR``. Each case leaves a worker
directory tarred as ``OUTDIR/<case>.tgz``; back here ``optimizer.ir.capture.load_capture`` rebuilds the
Capture and ``analyze`` reports on it. Not a pytest module (the gpu-marked test needs the full environment).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
KERNELS = Path(__file__).resolve().parent / "kernels"
WORKER = ROOT / "optimizer" / "ir" / "_worker.py"
sys.path.append(str(WORKER.parent))
from _specialize import parse_arg  # noqa: E402

BOOT = "import runpy, sys; path = sys.argv[1]; sys.argv = sys.argv[1:]; runpy.run_path(path, run_name='__main__')"
CASES = {
    "launch_masked_nodiv": ("masked_copy.py", "masked_copy", ["X=*fp32[4096]", "Y=*fp32[4096]", "n=1000", "BLOCK=1024"],
                            {}, "launch", [4], 90),
    "warmup_masked_div": ("masked_copy.py", "masked_copy", ["X=*fp32", "Y=*fp32", "n=1024", "BLOCK=1024"],
                          {}, "launch", [], 90),
    "launch_top2": ("top2_argmax.py", "top2_argmax", ["X=*fp32[4096]", "OUT=*fp32[64]", "n_cols=1000", "stride=1024",
                                                     "BLOCK=256"], {"num_warps": 1}, "launch", [4], 90),
    "compile_top2": ("top2_argmax.py", "top2_argmax", ["X=*fp32", "OUT=*fp32", "n_cols=1000", "stride=1024", "BLOCK=256"],
                     {"num_warps": 1}, "compile", [], 90),
    "compile_dot_tf32": ("dot_f32.py", "dot_f32", ["A=*fp32", "B=*fp32", "C=*fp32", "K=256", "stride_am=64",
                                                   "stride_bk=32", "stride_cm=32", "BLOCK_M=64", "BLOCK_N=32",
                                                   "BLOCK_K=16", "PRECISION=tf32"], {"num_warps": 4, "num_stages": 3},
                         "compile", [], 90),
}


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    failures = 0
    for case, (file, kernel, args, options, mode, grid, arch) in CASES.items():
        work = Path("/tmp/ladder-device") / case
        work.mkdir(parents=True, exist_ok=True)
        req = {"kernel_file": str(KERNELS / file), "kernel_name": kernel, "mode": mode, "per_pass": True,
               "args": [parse_arg(a).to_dict() for a in args], "options": options,
               "target": {"backend": "cuda", "arch": arch, "warp_size": 32}, "grid": grid, "workdir": str(work)}
        (work / "request.json").write_text(json.dumps(req))
        with open(work / "stdout.txt", "wb") as so, open(work / "stderr.txt", "wb") as se:
            rc = subprocess.run([sys.executable, "-c", BOOT, str(WORKER), str(work / "request.json")],
                                stdout=so, stderr=se, cwd=work).returncode
        result = json.loads((work / "result.json").read_text())
        print(case, "rc", rc, "ok", result.get("ok"), result.get("message", "")[:300], result.get("timings"),
              result.get("resources"), result.get("launched"), flush=True)
        failures += rc != 0
        with tarfile.open(out / f"{case}.tgz", "w:gz") as tar:
            tar.add(work, arcname=case)
    return failures


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
