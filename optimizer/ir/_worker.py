"""Capture worker: compiles ONE kernel in a fresh process and writes every stage plus the pass dump.

Run by path (``capture.py`` starts it through ``runpy`` so that this package's ``types.py`` never shadows the
standard library) with one argument, ``REQUEST.json``; it must also run inside ``.venv-ascend``, which has
neither pydantic nor our packages: standard library + the Triton installed in *that* interpreter only.

Why a subprocess per kernel: Triton reads its environment knobs at compile time and the MLIR dump stream
is per process. The worker sets, before importing Triton: a fresh ``TRITON_CACHE_DIR`` and
``TRITON_ALWAYS_COMPILE=1`` (a cache hit would produce no dumps), ``MLIR_ENABLE_DUMP=1`` with
``MLIR_DUMP_PATH=passes.mlir`` (per-pass "IR Dump Before" snapshots to one buffered file: printing them to
unbuffered stderr instead costs about a second per kernel), ``MLIR_ENABLE_DIAGNOSTICS=remarks`` (performance
remarks with Python source locations) and ``TRITON_DUMP_PTXAS_LOG=1`` (``ptxas -v`` on stdout).

Tying snapshots to stages without a hard-coded pass list: the worker wraps the backend's stage functions
(marker lines ``// -----// LADDER stage <name> begin|end //----- //`` on stderr) and ``pass_manager.run``
(recording, per pipeline run, the stage and ``get_pipeline_str()``); the parent finds each pipeline's first
pass in the dump. Versions that ignore ``MLIR_DUMP_PATH`` (triton-ascend 3.2) print the snapshots to stderr,
where they interleave exactly with the markers.

Modes:
- ``compile``: ``triton.compile(ASTSource(...), target=GPUTarget(...))`` with the JIT's specialization
  reproduced by ``_specialize.specialize`` (no GPU needed).
- ``launch``: the real JIT path on a GPU (``kernel[grid](...)`` when every pointer has a size and a grid is
  given, else ``kernel.warmup``), then ``_init_handles()`` for registers/spills from the driver. Needs torch
  and a CUDA device; NOT exercised in CI (it is verified on a lent H200, see tests marked ``gpu``).
- ``plain``: the same compile with no dumps, remarks or logs: the baseline of the capture benchmark.
- Ascend (``target.backend == "npu"``): the stages ``ttir`` and ``ttadapter`` of triton-ascend run by hand
  (recipe of the 3.2 wheel); ``npubin`` needs CANN's ``bishengir-compile``, which is absent here, so it is
  attempted only when that tool is on PATH.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import json
import os
import shutil
import sys
import time
import traceback
import types
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent))
from _specialize import ArgSpec, Param, SpecError, specialize  # noqa: E402

MARK = "// -----// LADDER stage {name} {what} //----- //\n"
_TORCH_DTYPES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64", "i8": "int8",
                 "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8", "i1": "bool", "u1": "bool"}


def _mark(name: str, what: str) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os.write(2, MARK.format(name=name, what=what).encode())


_STATE: dict = {"stage": "frontend", "pipelines": []}


def _set_env(req: dict) -> None:
    work = Path(req["workdir"])
    os.environ["TRITON_CACHE_DIR"] = str(work / "cache")
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    if req["mode"] == "plain":
        for k in ("MLIR_ENABLE_DUMP", "MLIR_DUMP_PATH", "MLIR_ENABLE_DIAGNOSTICS", "TRITON_DUMP_PTXAS_LOG"):
            os.environ.pop(k, None)
        return
    if req.get("per_pass", True):
        os.environ["MLIR_ENABLE_DUMP"] = "1"
        os.environ["MLIR_DUMP_PATH"] = str(work / "passes.mlir")
    else:  # "0" would still be read as a kernel-name filter by some versions
        os.environ.pop("MLIR_ENABLE_DUMP", None)
        os.environ.pop("MLIR_DUMP_PATH", None)
    os.environ["MLIR_ENABLE_DIAGNOSTICS"] = "remarks"
    os.environ["TRITON_DUMP_PTXAS_LOG"] = "1"
    if req["target"]["backend"] == "npu":  # triton-ascend drops locations from ttadapter unless asked
        os.environ.setdefault("TRITON_DISABLE_LINE_INFO", "0")


def _load_kernel(path: str, name: str):
    file = Path(path).resolve()
    sys.path.insert(0, str(file.parent))
    spec = importlib.util.spec_from_file_location(f"_ladder_kernel_{file.stem}", file)
    if spec is None or spec.loader is None:
        raise SpecError(f"{file} cannot be imported as a Python module: pass the path of a .py file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not hasattr(module, name):
        found = sorted(k for k, v in vars(module).items() if hasattr(v, "arg_names") or hasattr(v, "fn"))
        raise SpecError(f"{file} has no kernel named {name!r}; @triton.jit objects there: {found}")
    fn = getattr(module, name)
    # Autotuner / Heuristics wrappers: unwrap to the JITFunction (the only one with ``params``; an Autotuner has
    # ``arg_names`` too, in Triton 3.6 and 3.9, so that attribute does not tell them apart)
    while not hasattr(fn, "params") and hasattr(fn, "fn"):
        fn = fn.fn
    if not hasattr(fn, "arg_names"):
        raise SpecError(f"{name!r} in {file} is not a @triton.jit function")
    return fn


def _params(fn) -> list[Param]:
    out = []
    for i, p in enumerate(fn.params):
        raw = getattr(p, "_param", None)
        default = inspect.Parameter.empty if raw is None else raw.default
        has_default = default is not inspect.Parameter.empty
        out.append(Param(name=p.name, index=getattr(p, "num", i), is_constexpr=bool(p.is_constexpr),
                         has_default=has_default, default=default if has_default else None,
                         do_not_specialize=bool(getattr(p, "do_not_specialize", False)),
                         do_not_specialize_on_alignment=bool(getattr(p, "do_not_specialize_on_alignment", False))))
    return out


def _resolve_constexpr(value):
    """A dtype constexpr comes back as text: ``tl.float16`` from the command line, ``triton.language.bfloat16``
    (the dtype's repr) from a recorded launch (``compute_type=tl.bfloat16``); both name a ``triton.language``
    attribute."""
    if isinstance(value, str):
        for prefix in ("tl.", "triton.language."):
            if value.startswith(prefix) and value[len(prefix):].isidentifier():
                import triton.language as tl

                return getattr(tl, value[len(prefix):], value)
    return value


def _make_source(fn, spec, triton_mod, backend_name: str):
    from triton.compiler import ASTSource

    constexprs = {k: _resolve_constexpr(v) for k, v in spec.constexprs.items()}
    params = inspect.signature(ASTSource.__init__).parameters
    if "constexprs" in params:  # Triton >= 3.3
        attrs = {(i,): [["tt.divisibility", 16]] for i in spec.divisible_by_16}
        return ASTSource(fn=fn, signature=dict(spec.signature), constexprs=constexprs, attrs=attrs)
    # Triton 3.2 (triton-ascend 3.2.0): signature without constexprs, AttrsDescriptor hints
    hints = {i: 16 for i in spec.divisible_by_16}
    hints.update({i: 1 for i in spec.equal_to_1})
    if backend_name == "npu":
        from triton.backends.ascend.compiler import AscendAttrsDescriptor as Descriptor
    else:
        from triton.backends.compiler import AttrsDescriptor as Descriptor
    names = {p.name: i for i, p in enumerate(fn.params)}
    folded = {fn.params[i].name for i in spec.equal_to_1}
    signature = {k: ("i32" if k in folded else v) for k, v in spec.signature.items() if v != "constexpr" or k in folded}
    signature = dict(sorted(signature.items(), key=lambda kv: names[kv[0]]))
    return ASTSource(fn=fn, signature=signature, constants=constexprs, attrs=Descriptor.from_hints(hints))


def _wrap_stages(backend_cls, timings: dict) -> None:
    """Put stage markers (and timings) around every stage function the backend registers."""
    original = backend_cls.add_stages

    def add_stages(self, stages, options, *args, **kwargs):
        original(self, stages, options, *args, **kwargs)
        for name, fn in list(stages.items()):
            stages[name] = _timed_stage(name, fn, timings)

    backend_cls.add_stages = add_stages


def _timed_stage(name, fn, timings):
    def run(src, metadata):
        _mark(name, "begin")
        _STATE["stage"] = name
        t = time.perf_counter()
        try:
            return fn(src, metadata)
        finally:
            timings[name] = time.perf_counter() - t
            _STATE["stage"] = "frontend"
            _mark(name, "end")

    return run


def _record_pipelines() -> None:
    """Record (stage, pipeline string) for every pass-manager run, so the parent can split the dump file."""
    from triton._C.libtriton import ir

    original = ir.pass_manager.run
    describe = getattr(ir.pass_manager, "get_pipeline_str", None)

    def run(self, *args, **kwargs):
        _STATE["pipelines"].append({"stage": _STATE["stage"], "pipeline": describe(self) if describe else ""})
        return original(self, *args, **kwargs)

    ir.pass_manager.run = run


def _write_stage(out: Path, kernel: str, ext: str, value) -> str:
    path = out / f"{kernel}.{ext}"
    if isinstance(value, bytes):
        path.write_bytes(value)
    else:
        path.write_text(str(value))
    return path.name


def _compile_cuda(req, fn, spec, result, timings):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend

    t = req["target"]
    target = GPUTarget(t["backend"], t["arch"], t["warp_size"])
    if req["mode"] != "plain":
        _wrap_stages(type(make_backend(target)), timings)
    src = _make_source(fn, spec, triton, t["backend"])
    start = time.perf_counter()
    ck = triton.compile(src, target=target, options=dict(req.get("options") or {}))
    result["timings"]["compile_s"] = time.perf_counter() - start
    return ck


def _launch_cuda(req, fn, spec, result, timings):
    import torch
    import triton  # noqa: F401
    from triton.compiler.compiler import make_backend
    from triton.runtime import driver

    _wrap_stages(type(make_backend(driver.active.get_current_target())), timings)
    args, sized = {}, True
    for a in (ArgSpec.from_dict(d) for d in req["args"]):
        if a.kind == "pointer":
            dtype = getattr(torch, _TORCH_DTYPES[a.type[1:]])
            buf = torch.zeros((a.numel or 16) + 16, dtype=dtype, device="cuda")
            args[a.name] = buf if a.aligned else buf[1:]
            sized &= a.numel is not None
        elif a.kind == "unknown_int":
            raise SpecError(f"--launch needs a concrete value for {a.name} (got only its type {a.type})")
        else:
            args[a.name] = _resolve_constexpr(a.value)
    opts = dict(req.get("options") or {})
    grid = tuple(req.get("grid") or ())
    start = time.perf_counter()
    if grid and sized:
        ck = fn[grid](**args, **opts)
        torch.cuda.synchronize()
        result["launched"] = True
    else:
        ck = fn.warmup(grid=grid or (1,), **args, **opts)
        result["launched"] = False
    result["timings"]["compile_s"] = time.perf_counter() - start
    ck._init_handles()
    result["resources"] = {"registers": ck.n_regs, "spills": ck.n_spills,
                           "max_threads": getattr(ck, "n_max_threads", None), "source": "cuda function attributes"}
    result["device"] = torch.cuda.get_device_name()
    return ck


def _compile_ascend(req, fn, spec, result, timings):
    import triton
    import triton.backends.ascend.compiler as ascend_compiler
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler.compiler import make_backend

    t = req["target"]
    target = GPUTarget("npu", t["arch"], 0)
    backend = make_backend(target)
    options = backend.parse_options(dict(req.get("options") or {}))
    stages: dict = {}
    backend.add_stages(stages, options)
    if req["mode"] != "plain":
        shim = _adapter_subprocess_shim(Path(req["workdir"]) / "adapter_passes.mlir")
        ascend_compiler.subprocess = shim
        type(backend).add_stages.__globals__["subprocess"] = shim  # the backend's own copy of the module
        stages = {k: _timed_stage(k, v, timings) for k, v in stages.items()}
    src = _make_source(fn, spec, triton, "npu")
    start = time.perf_counter()
    ctx = ir.context()
    ir.load_dialects(ctx)
    backend.load_dialects(ctx)
    codegen = backend.get_codegen_implementation(*([options] if _arity(backend.get_codegen_implementation) else []))
    make_ir_args = (options, codegen, backend.get_module_map(), ctx)
    if "target" in inspect.signature(src.make_ir).parameters:
        make_ir_args = (target, *make_ir_args)
    module = src.make_ir(*make_ir_args)
    asm = {"source": str(module)}
    metadata = {"hash": "ladder-ir", "target": target, **options.__dict__}
    for name, stage in stages.items():
        if name == "npubin" and not shutil.which("bishengir-compile"):
            result["warnings"].append("npubin not built: CANN's bishengir-compile is not on PATH (no NPU toolchain)")
            break
        module = stage(module, metadata)
        asm[name] = module if isinstance(module, (bytes, str)) else str(module)
    result["timings"]["compile_s"] = time.perf_counter() - start
    result["metadata"] = {k: v for k, v in metadata.items() if _jsonable(v)}
    return types.SimpleNamespace(asm=asm, metadata=None)


def _adapter_subprocess_shim(dump: Path):
    """triton-ascend 3.2 runs TTIR -> ttadapter in the ``triton-adapter-opt`` binary: ask it for its own
    per-pass snapshots and append them, between ``ttadapter`` stage markers, to ``dump``."""
    import subprocess as real

    def run(cmd, *args, **kwargs):
        if isinstance(cmd, list) and cmd and str(cmd[0]).endswith("triton-adapter-opt"):
            cmd = [*cmd, "--mlir-print-ir-before-all", "--mlir-disable-threading"]
            kwargs["capture_output"] = True
            done = real.run(cmd, *args, **kwargs)
            err = done.stderr if isinstance(done.stderr, bytes) else done.stderr.encode()
            with open(dump, "ab") as f:
                f.write(MARK.format(name="ttadapter", what="begin").encode() + err
                        + MARK.format(name="ttadapter", what="end").encode())
            return done
        return real.run(cmd, *args, **kwargs)

    shim = types.ModuleType("subprocess")
    shim.__dict__.update({**vars(real), "run": run})
    return shim


def _arity(fn) -> int:
    try:
        return len(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return 0


def _jsonable(v) -> bool:
    try:
        json.dumps(v)
        return True
    except (TypeError, ValueError):
        return False


def main(argv: list[str]) -> int:
    req = json.loads(Path(argv[0]).read_text())
    out = Path(req["workdir"])
    stages_dir = out / "stages"
    stages_dir.mkdir(parents=True, exist_ok=True)
    result: dict = {"ok": False, "timings": {}, "warnings": [], "stages": {}}
    t0 = time.perf_counter()
    try:
        _set_env(req)
        import warnings

        warnings.filterwarnings("ignore", message=".*TRITON_DEFAULT_FP_FUSION.*")
        import triton

        result["timings"]["import_s"] = time.perf_counter() - t0
        result["triton_version"] = triton.__version__
        result["compiler"] = "triton-ascend" if req["target"]["backend"] == "npu" else "triton"
        if req["mode"] != "plain":
            _record_pipelines()
        result["python"] = sys.executable
        fn = _load_kernel(req["kernel_file"], req["kernel_name"])
        args = {d["name"]: ArgSpec.from_dict(d) for d in req["args"]}
        bool_type = "u1" if "constexprs" in inspect.signature(
            __import__("triton.compiler", fromlist=["ASTSource"]).ASTSource.__init__).parameters else "i1"
        spec = specialize(_params(fn), args, bool_type=bool_type)
        result["specialization"] = spec.to_dict()
        stage_times: dict = {}
        if req["target"]["backend"] == "npu":
            ck = _compile_ascend(req, fn, spec, result, stage_times)
        elif req["mode"] == "launch":
            ck = _launch_cuda(req, fn, spec, result, stage_times)
        else:
            ck = _compile_cuda(req, fn, spec, result, stage_times)
        result["timings"]["stages_s"] = stage_times
        result["pipelines"] = _STATE["pipelines"]
        if req["mode"] != "plain":
            for ext, value in ck.asm.items():
                result["stages"][ext] = _write_stage(stages_dir, req["kernel_name"], ext, value)
        if ck.metadata is not None:
            md = ck.metadata._asdict()
            result["metadata"] = {k: v for k, v in md.items() if _jsonable(v)}
            result["metadata"]["target"] = str(md.get("target"))
        result["ok"] = True
        if req["mode"] != "plain":  # every stage is in stages/ now; the cache only duplicates it
            shutil.rmtree(out / "cache", ignore_errors=True)
    except BaseException as exc:  # noqa: BLE001 - worker process boundary: reported (type, traceback) to the
        # parent, which raises the right LadderError
        result.update(error_type=type(exc).__name__, message=str(exc), traceback=traceback.format_exc())
    result["timings"]["worker_s"] = time.perf_counter() - t0
    with contextlib.suppress(OSError, ValueError):  # a closed or broken stdout: the result file still goes out
        sys.stdout.flush()
    (out / "result.json").write_text(json.dumps(result, default=str))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
