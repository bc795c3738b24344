"""Capture: compile one ``@triton.jit`` kernel in a worker process and collect every stage and pass dump.

``capture_kernel("kernels.py::my_kernel", "cuda:90", ["x=*fp32", "n=4096", "BLOCK=1024"])`` runs
``_worker.py`` in a fresh interpreter (the current one for CUDA, ``.venv-ascend`` for Ascend) with its own
Triton cache, per-pass dumps and remarks enabled, then parses what it wrote into a :class:`Capture`.
The parent never imports Triton, so capturing costs one compile plus parsing.

Without a GPU (CI) the CUDA path compiles for the requested architecture with the bundled ptxas; register,
spill and barrier figures come from ``ptxas -v`` (or ``cuobjdump -res-usage`` when the log is missing).
``mode="launch"`` uses the JIT on a real GPU instead; it is not exercised in CI (see tests marked ``gpu``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kb.errors import InvalidArgument, ToolchainError
from optimizer.ir import patterns as P
from optimizer.ir._specialize import ArgSpec, SpecError, parse_arg
from optimizer.ir.passes import label_stages, parse_remarks, split_dump
from optimizer.ir.types import Capture, KernelArg, PassSnapshot, Remark, ResourceUsage, Target

__all__ = ["capture_kernel", "load_capture", "parse_args", "parse_ptxas_log", "parse_spec", "parse_target"]

WORKER = Path(__file__).with_name("_worker.py")
#: the largest file the capture worker may write (RLIMIT_FSIZE). The per-pass dump of most kernels is a few MB, but
#: it grows with the module times the pass count: a real loss kernel's dump reached 25 GB and filled the disk. Past
#: the limit the worker is stopped and the capture is retried without per-pass snapshots.
DUMP_LIMIT_MB = int(os.environ.get("LADDER_IR_DUMP_LIMIT_MB", "1024"))


class DumpTooLarge(ToolchainError):
    """The capture worker wrote a file over ``DUMP_LIMIT_MB``; capture with ``per_pass=False``."""


#: Start the worker by path without putting this directory first on sys.path (``types.py`` would shadow stdlib).
_BOOT = "import runpy, sys; path = sys.argv[1]; sys.argv = sys.argv[1:]; runpy.run_path(path, run_name='__main__')"
BINARY_STAGES = frozenset({"cubin", "npubin", "hsaco", "mlirbc"})
DEFAULT_ASCEND_ARCH = "Ascend910B3"
_CUDA = re.compile(r"^(?:cuda|nvidia|sm)[:_]?(?:sm_?)?(\d+)?a?$")


def parse_target(text: str | Target) -> Target:
    """``cuda:90`` / ``cuda:sm_80`` / ``cuda`` (= 90) / ``ascend`` / ``ascend:Ascend910B3`` -> :class:`Target`."""
    if isinstance(text, Target):
        return text
    t = text.strip().lower()
    if m := _CUDA.match(t):
        return Target(backend="cuda", arch=int(m[1] or 90), warp_size=32)
    if t in ("ascend", "npu") or t.startswith(("ascend:", "npu:")):
        arch = text.split(":", 1)[1] if ":" in text else DEFAULT_ASCEND_ARCH
        return Target(backend="ascend", arch=arch, warp_size=0)
    raise InvalidArgument(
        f"unknown target {text!r}; use cuda:<cc> (e.g. cuda:90, cuda:80) or ascend[:<soc>] (e.g. ascend:Ascend910B3)",
        field="target",
    )


def parse_spec(spec: str) -> tuple[Path, str]:
    """``path/to/file.py::kernel_name`` -> (existing file, kernel name)."""
    path, sep, name = spec.rpartition("::")
    if not sep or not path or not name.isidentifier():
        raise InvalidArgument(f"expected FILE::KERNEL (e.g. kernels/softmax.py::softmax_kernel), got {spec!r}",
                              field="spec")
    file = Path(path).expanduser()
    if not file.is_file():
        raise InvalidArgument(f"kernel file {file} does not exist", field="spec")
    return file.resolve(), name


def parse_args(args: Sequence[str] | Mapping[str, Any] | None) -> dict[str, ArgSpec]:
    """``["x=*fp32", "n=4096"]`` or ``{"x": "*fp32", "n": 4096}`` -> parsed arguments by name."""
    items = [f"{k}={_fmt(v)}" for k, v in args.items()] if isinstance(args, Mapping) else list(args or [])
    out: dict[str, ArgSpec] = {}
    for text in items:
        try:
            a = parse_arg(text)
        except SpecError as e:
            raise InvalidArgument(str(e), field="arg") from None
        if a.name in out:
            raise InvalidArgument(f"argument {a.name!r} given twice", field="arg")
        out[a.name] = a
    return out


def _fmt(v: Any) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


def capture_kernel(
    spec: str,
    target: str | Target = "cuda:90",
    args: Sequence[str] | Mapping[str, Any] | None = None,
    *,
    options: Mapping[str, Any] | None = None,
    mode: str = "compile",
    grid: Sequence[int] | None = None,
    per_pass: bool = True,
    workdir: str | Path | None = None,
    timeout_s: float = 600.0,
    python: str | Path | None = None,
) -> Capture:
    """Compile ``spec`` (``FILE::KERNEL``) for ``target`` and capture stages, pass snapshots and resources.

    ``args`` follow ``_specialize``'s syntax (``x=*fp32``, ``n=4096``, ``BLOCK=1024``); ``options`` are Triton
    compile options (``num_warps``, ``num_stages``, ``maxnreg``, ...). ``mode="launch"`` compiles through the
    JIT on a real GPU (``grid`` plus sized pointers ``x=*fp32[N]`` make it an actual launch; without them the
    JIT's ``warmup`` compiles without running); it is not exercised in CI. ``mode="plain"`` is the benchmark's
    baseline: the same compile with no dumps, remarks or logs, returning only timings. ``per_pass=False``
    skips the per-pass snapshots. The work directory (stage files, pass dump, logs) is kept and recorded in
    ``Capture.workdir``; :func:`load_capture` reads it back. ``python`` runs the worker with another
    interpreter (default ``$LADDER_TRITON_PYTHON``, else this one; ``.venv-ascend`` for Ascend).
    """
    file, name = parse_spec(spec)
    tgt = parse_target(target)
    parsed = parse_args(args)
    if mode not in ("compile", "launch", "plain"):
        raise InvalidArgument(f"mode must be compile, launch or plain, got {mode!r}", field="mode")
    if tgt.backend == "ascend" and mode == "launch":
        raise ToolchainError("launch mode on Ascend needs an NPU and CANN, which this machine does not have")
    if python is None:
        from optimizer.harness.triton_env import find_triton_python

        python = find_triton_python() or sys.executable  # $LADDER_TRITON_PYTHON (e.g. Triton 3.6), else this one
        if tgt.backend == "ascend":
            from optimizer.ir.ascend import ascend_python

            python = ascend_python()
    work = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix=f"ladder-ir-{name}-"))
    work.mkdir(parents=True, exist_ok=True)
    request = {
        "kernel_file": str(file), "kernel_name": name, "mode": mode, "per_pass": per_pass,
        "args": [a.to_dict() for a in parsed.values()], "options": dict(options or {}),
        "target": {"backend": tgt.triton_backend, "arch": tgt.arch, "warp_size": tgt.warp_size},
        "grid": list(grid or []), "workdir": str(work),
    }
    (work / "request.json").write_text(json.dumps(request, indent=1))
    dropped = ""
    try:
        result, wall = _run_worker(python, work, timeout_s, kernel_dir=file.parent, launch=mode == "launch")
    except DumpTooLarge as exc:
        if not per_pass:
            raise
        # the per-pass snapshots outgrew DUMP_LIMIT_MB (a module of hundreds of thousands of ops, e.g. a fully
        # unrolled static_range): drop them and capture the stages alone
        (work / "passes.mlir").unlink(missing_ok=True)
        request["per_pass"] = False
        dropped = f"per-pass snapshots dropped: {exc}"
        (work / "request.json").write_text(json.dumps(request, indent=1))
        result, wall = _run_worker(python, work, timeout_s, kernel_dir=file.parent, launch=mode == "launch")
    if mode == "plain":
        return Capture(
            kernel=name, source_file=file, target=tgt, workdir=work, timings={**result["timings"], "wall_s": wall}
        )
    cap = _build_capture(file, name, tgt, mode, request, result, work, wall)
    if dropped:
        cap.warnings.append(dropped)
    return cap


def _run_worker(python: str | Path, work: Path, timeout_s: float, *, kernel_dir: Path | None = None,
                launch: bool = False, memory_mb: int = 16384) -> tuple[dict, float]:
    """Run the capture worker in the sandbox's jail (``optimizer.harness.jail``): scrubbed environment, ``work`` as
    its only writable folder, the kernel's folder read-only, no network, limits (address space in compile mode;
    a real launch needs the CUDA runtime's huge virtual ranges), and at the deadline the whole process tree is
    killed, not only the direct child."""
    from optimizer.harness import jail
    from optimizer.harness.sandbox import SandboxLimits, jail_spec, kill_tree

    env = jail.scrub_env({k: v for k, v in os.environ.items() if k != "MLIR_DUMP_PATH"}, work)
    repo = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (repo, env.get("PYTHONPATH", "")) if p)
    env.setdefault("PYTHONUNBUFFERED", "1")
    limits = SandboxLimits(timeout_s, memory_mb, address_space_limit=not launch, file_mb=DUMP_LIMIT_MB)
    spec = jail_spec(work, limits, readable=[str(kernel_dir)] if kernel_dir else [], devices=launch, python=python)
    (work / "jail.json").write_text(json.dumps(spec))
    cmd = [sys.executable, "-m", "optimizer.harness.jail", str(work / "jail.json"), "--",
           str(python), "-c", _BOOT, str(WORKER), str(work / "request.json")]
    t0 = time.perf_counter()
    with open(work / "stdout.txt", "wb") as out, open(work / "stderr.txt", "wb") as err:
        try:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=work, start_new_session=True)
        except OSError as e:
            raise ToolchainError(f"cannot run the capture worker with {python}: {e}") from None

        def wait(seconds: float) -> None:
            try:
                proc.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                pass

        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            kill_tree(proc.pid, wait)
            raise ToolchainError(f"IR capture timed out after {timeout_s:.0f} s (its process tree was killed); see "
                                 f"{work}/stderr.txt") from None
    if proc.returncode == -signal.SIGXFSZ or (proc.returncode and _over_limit(work)):
        raise DumpTooLarge(f"the capture worker wrote a file over {DUMP_LIMIT_MB} MB (RLIMIT_FSIZE) and was stopped; "
                           f"see {work}")
    if proc.returncode == jail.SETUP_FAILED and not (work / "result.json").exists():
        tail = (work / "stderr.txt").read_text(errors="replace")[-600:]
        raise ToolchainError(f"the capture worker's sandbox could not be set up: {tail.strip()}")
    wall = time.perf_counter() - t0
    res_file = work / "result.json"
    if not res_file.exists():
        tail = (work / "stderr.txt").read_text(errors="replace")[-2000:]
        raise ToolchainError(f"the capture worker exited with code {proc.returncode} and no result:\n{tail}")
    result = json.loads(res_file.read_text())
    if not result.get("ok"):
        _raise_worker_error(result, work)
    return result, wall


def _over_limit(work: Path) -> bool:
    """A file of ``work`` at the size limit: the worker (or a child that reports another code) hit RLIMIT_FSIZE."""
    cap = DUMP_LIMIT_MB * 1024 * 1024
    return any(p.is_file() and p.stat().st_size >= cap for p in work.glob("*.mlir"))


def _raise_worker_error(result: dict, work: Path) -> None:
    kind, msg = result.get("error_type", "Error"), result.get("message", "")
    if kind == "SpecError":
        raise InvalidArgument(msg, field="arg")
    if kind in ("ModuleNotFoundError", "ImportError"):
        raise ToolchainError(f"{msg} (while running the capture worker; see {work}/result.json)")
    if "active drivers" in msg or "CUDA" in msg and "available" in msg:
        raise ToolchainError(f"--launch needs a GPU and its driver: {msg}")
    if kind in ("CompilationError", "CompileTimeAssertionFailure", "MLIRCompilationError"):
        raise InvalidArgument(f"the kernel does not compile: {msg}", field="spec")
    raise ToolchainError(f"IR capture failed ({kind}): {msg}\nsee {work}/result.json for the traceback")


def load_capture(workdir: str | Path) -> Capture:
    """Rebuild a :class:`Capture` from a worker's directory (``request.json``, ``result.json``, dumps, stages),
    e.g. one produced on another machine (a GPU host) and copied back."""
    work = Path(workdir)
    try:
        request = json.loads((work / "request.json").read_text())
        result = json.loads((work / "result.json").read_text())
    except (OSError, ValueError) as e:
        raise InvalidArgument(f"{work} is not a capture directory (request.json/result.json): {e}",
                              field="workdir") from None
    if not result.get("ok"):
        _raise_worker_error(result, work)
    t = request["target"]
    tgt = parse_target("ascend:" + str(t["arch"]) if t["backend"] == "npu" else f"{t['backend']}:{t['arch']}")
    return _build_capture(Path(request["kernel_file"]), request["kernel_name"], tgt, request["mode"], request,
                          result, work, result.get("timings", {}).get("worker_s", 0.0))


def _build_capture(file, name, tgt, mode, request, result, work, wall) -> Capture:
    stages: dict[str, str] = {}
    binaries: dict[str, Path] = {}
    for ext, fname in result.get("stages", {}).items():
        path = work / "stages" / fname
        if ext in BINARY_STAGES:
            binaries[ext] = path
        else:
            stages[ext] = path.read_text(errors="replace")
    snaps, remarks = _snapshots(work, result.get("pipelines", []))
    ptxas_log = (work / "stdout.txt").read_text(errors="replace")
    remarks += parse_remarks(ptxas_log)  # some Triton versions print diagnostics to stdout
    metadata = result.get("metadata", {})
    resources = _resources(ptxas_log, binaries.get("cubin"), result.get("resources"), metadata.get("shared"))
    spec = result.get("specialization", {})
    kargs = [KernelArg(name=r["name"], index=r["index"], type=r["type"], value=_jsonable(r.get("value")),
                       divisibility=r.get("divisibility"), folded_to_constexpr=r.get("folded_to_constexpr", False),
                       source=r.get("source", "arg")) for r in spec.get("resolved", [])]
    kargs, mismatch = _check_specialization(kargs, stages.get("ttir") or stages.get("source", ""), name)
    warnings = [f"the compiled TTIR specializes differently from the reproduction: {mismatch}"] if mismatch else []
    options = {k: metadata[k] for k in ("num_warps", "num_stages", "num_ctas", "maxnreg", "enable_fp_fusion")
               if k in metadata} | dict(request["options"])
    return Capture(
        kernel=name,
        source_file=file,
        target=tgt,
        mode=mode,
        compiler=result.get("compiler", "triton"),
        compiler_version=result.get("triton_version", ""),
        python=result.get("python", ""),
        args=kargs,
        options=options,
        stages=stages,
        binaries=binaries,
        snapshots=snaps,
        remarks=remarks,
        resources=resources,
        metadata=metadata,
        timings={**result.get("timings", {}), "wall_s": wall},
        ptxas_log=ptxas_log.strip(),
        workdir=work,
        launched=bool(result.get("launched")),
        device=result.get("device"),
        warnings=warnings
        + list(result.get("warnings", []))
        + (
            []
            if snaps or not request["per_pass"]
            else ["no per-pass snapshots were printed (MLIR_ENABLE_DUMP unsupported?)"]
        ),
    )


def _snapshots(work: Path, pipelines: list[dict]) -> tuple[list[PassSnapshot], list[Remark]]:
    """Pass snapshots from ``passes.mlir`` (or, for versions that ignore MLIR_DUMP_PATH, from stderr) plus
    the Ascend adapter tool's own dump; remarks from stderr."""
    err_snaps, remarks = split_dump((work / "stderr.txt").read_text(errors="replace"))
    dump = work / "passes.mlir"
    snaps = err_snaps
    if dump.exists() and dump.stat().st_size:
        snaps, more = split_dump(dump.read_text(errors="replace"))
        snaps = label_stages(snaps, pipelines)
        remarks += more
    adapter = work / "adapter_passes.mlir"
    if adapter.exists():
        extra, more = split_dump(adapter.read_text(errors="replace"))
        snaps += [s.model_copy(update={"index": len(snaps) + i}) for i, s in enumerate(extra)]
        remarks += more
    return snaps, remarks


def _check_specialization(args: list[KernelArg], ttir: str, kernel: str) -> tuple[list[KernelArg], str]:
    """Read ``tt.divisibility`` from the compiled kernel's TTIR signature (the truth, also after a JIT launch),
    put it on the arguments and report where it differs from the reproduced specialization."""
    head = ttir.find(f"tt.func public @{kernel}(")
    if head < 0:
        return args, ""
    start = ttir.index("(", head)
    depth, end = 0, start
    for end in range(start, len(ttir)):
        depth += {"(": 1, ")": -1}.get(ttir[end], 0)
        if depth == 0:
            break
    entries = [e.strip() for e in P.TOP_LEVEL_COMMA.split(ttir[start + 1 : end]) if e.strip().startswith("%")]
    runtime = [a for a in args if a.type != "constexpr"]
    by_name = {e[1:].split(":", 1)[0].strip(): e for e in entries}
    out, diffs = [], []
    for a in args:
        entry = by_name.get(a.name)
        if entry is None and a.type != "constexpr" and len(entries) == len(runtime):
            entry = entries[runtime.index(a)]  # Triton 3.2 prints %arg0, %arg1, ...
        if entry is None:
            out.append(a)
            continue
        m = P.DIVISIBILITY.search(entry)
        actual = int(m.group(1)) if m else None
        if actual != a.divisibility:
            diffs.append(f"{a.name}: divisibility {actual} (reproduced {a.divisibility})")
        out.append(a.model_copy(update={"divisibility": actual}))
    return out, "; ".join(diffs)


def _jsonable(v: Any) -> Any:
    return v if isinstance(v, (int, float, str, bool, type(None))) else str(v)


def _resources(ptxas_log: str, cubin: Path | None, driver: dict | None, shared: Any) -> ResourceUsage | None:
    """ptxas -v figures (else cuobjdump on the cubin), overridden by the CUDA driver's after a real load."""
    res = parse_ptxas_log(ptxas_log) or (cuobjdump_resources(cubin) if cubin else None)
    if driver:
        base = res or ResourceUsage()
        update: dict[str, Any] = {"registers": driver.get("registers"),
                                  "source": f"{base.source} + {driver['source']}" if res else driver["source"]}
        if base.spill_stores_bytes is None and driver.get("spills") is not None:
            update["spill_stores_bytes"] = driver["spills"]
        res = base.model_copy(update=update)
    if res is not None and isinstance(shared, int):
        res = res.model_copy(update={"shared_bytes": shared})
    return res


def parse_ptxas_log(log: str) -> ResourceUsage | None:
    """Registers, barriers, stack and spill bytes from ``ptxas -v`` output (None if there is none)."""
    used = P.PTXAS_USED.search(log)
    if not used:
        return None
    spill = P.PTXAS_SPILL.search(log)
    return ResourceUsage(
        registers=int(used[1]), barriers=int(used[2]) if used[2] else 0,
        stack_bytes=int(spill[1]) if spill else None, spill_stores_bytes=int(spill[2]) if spill else None,
        spill_loads_bytes=int(spill[3]) if spill else None, source="ptxas -v",
    )


def cuobjdump_resources(cubin: Path) -> ResourceUsage | None:
    """``cuobjdump -res-usage`` on a cubin with the cuobjdump bundled in the Triton wheel."""
    spec = importlib.util.find_spec("triton")
    if spec is None or not spec.submodule_search_locations:
        return None
    tool = Path(next(iter(spec.submodule_search_locations))) / "backends" / "nvidia" / "bin" / "cuobjdump"
    if not tool.exists():
        return None
    try:
        out = subprocess.run([str(tool), "-res-usage", str(cubin)], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = P.CUOBJDUMP_RES.search(out)
    if not m:
        return None
    return ResourceUsage(registers=int(m[1]), stack_bytes=int(m[2]), spill_stores_bytes=int(m[4]),
                         source="cuobjdump -res-usage (LOCAL bytes reported as spill stores)")
