"""Run candidate code in a jailed subprocess with a timeout and resource limits; every fault becomes a result.

Every worker runs in the jail of ``optimizer.harness.jail`` (scrubbed environment: no ``LADDER_*`` secrets, no
tokens or keys; a private scratch directory as working directory, HOME, TMPDIR and Triton cache; no network, a
minimal read-only view of the file system and its own PID namespace where the platform allows; resource limits;
the whole process group killed at the deadline, and with it, through the PID namespace or the subreaper, every
process the candidate started). ``SandboxResult.isolation`` says which level ran.

A hang (timeout), a crash (abort, segfault: a negative return code), running out of memory (the address-space
limit, or the RSS watchdog), a compile error, or a worker that exits without writing its result all come
back as a ``SandboxResult`` with a ``status`` and a human-readable ``reason``; nothing raises to the caller.

Memory: on CPU backends the child gets ``RLIMIT_AS`` (address space), so an allocation beyond the limit fails
inside the child. CUDA and NPU runtimes reserve huge virtual ranges, so for them the limit is enforced by
an RSS watchdog in the parent instead (host memory only; device memory is bounded by the device itself).
"""

from __future__ import annotations

import atexit
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from optimizer.harness import jail, stages
from optimizer.harness.zygote_client import ZygoteClient

__all__ = ["PROFILER_ROOTS", "isolation_level", "jail_spec", "kill_tree", "profiler_roots", "run_worker",
           "SandboxLimits", "SandboxResult",
           "shutdown_zygotes", "triton_cache"]

Status = Literal["ok", "error", "timeout", "crashed", "oom"]
_REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class SandboxLimits:
    timeout_s: float = 300.0
    memory_mb: int | None = 8192
    #: apply RLIMIT_AS (CPU backends); otherwise the parent's RSS watchdog enforces ``memory_mb``
    address_space_limit: bool = True
    #: the largest file a worker may write (RLIMIT_FSIZE): outputs of full-size GPU cases go through files
    file_mb: int | None = 32768
    #: processes and threads of the worker together (pids cgroup, else RLIMIT_NPROC over the user's tasks)
    max_processes: int | None = 1024


@dataclass
class SandboxResult:
    status: Status
    reason: str = ""
    payload: dict[str, Any] = field(default_factory=dict)
    returncode: int | None = None
    duration_s: float = 0.0
    stdout_tail: str = ""
    stderr_tail: str = ""
    #: "namespaces" (network, PID, mount, IPC; minimal read-only root; no capabilities) or "basic: <why not>"
    isolation: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def failure_kind(self) -> str:
        """timeout | crashed | oom | compile_error | kernel_error | runtime_error | import_error | no_result ..."""
        if self.status == "error":
            return str(self.payload.get("error", {}).get("kind", "no_result"))
        return self.status


def _tail(path: Path, n: int = 4000) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-n:].decode("utf-8", "replace")


def kill_tree(pid: int, wait: Any) -> None:
    """The jail's supervisor first (SIGTERM: it kills the worker, which takes its PID namespace along, or sweeps what
    the worker left behind), then the whole process group (SIGKILL)."""
    try:
        os.kill(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass
    wait(2.0)
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    wait(10.0)


def _rss_mb(pid: int) -> float:
    try:
        import psutil
    except ImportError:
        return 0.0
    try:
        p = psutil.Process(pid)
        procs = [p, *p.children(recursive=True)]
        return sum(q.memory_info().rss for q in procs) / 2**20
    except (psutil.Error, OSError):  # the process ended meanwhile, or its /proc entry is not ours to read
        return 0.0


_ZYGOTES: dict[tuple[bool, int], Any] = {}
_ZYGOTE_LOCK = threading.Lock()
#: Environments whose forked device workers could not initialise the device (a runtime that is not fork-safe
#: after the zygote's imports): their workers spawn from then on.
_NO_FORK: set[tuple[bool, int]] = set()
#: What a device runtime says when it was initialised before the fork (torch: "Cannot re-initialize CUDA in
#: forked subprocess"); such a worker is run again, spawned.
_FORK_UNSAFE = ("re-initialize CUDA in forked subprocess", "CUDA driver initialization failed", "initialization error")


#: Variables libraries set in the parent's environment when imported (scikit-learn and joblib, loaded with the KB's
#: query encoder in a thread during the baseline) that mean nothing to a worker: a zygote keyed on them was started
#: a second time mid-session (8.6 s of round 0 on a 2-core CPU), and the first one idled.
_ZYGOTE_KEY_IGNORES = frozenset({"KMP_INIT_AT_FORK", "KMP_DUPLICATE_LIB_OK"})


def _zygote_key(env: dict[str, str], interpreter: bool) -> tuple[bool, int]:
    # the whole environment: a fork inherits the zygote's, so a request with another CUDA_VISIBLE_DEVICES or
    # PYTHONPATH needs its own zygote
    return interpreter, hash(tuple(sorted((k, v) for k, v in env.items() if k not in _ZYGOTE_KEY_IGNORES)))


def _zygote(env: dict[str, str], interpreter: bool) -> Any:
    """The shared fork server for this environment, started on first use; None if it cannot start."""
    key = _zygote_key(env, interpreter)
    with _ZYGOTE_LOCK:
        if key in _NO_FORK:
            return None
        z = _ZYGOTES.get(key)
        if z is None or not z.alive:
            try:
                z = ZygoteClient(env)
            except (OSError, RuntimeError, ValueError):  # cannot spawn, "failed to start", a garbled first line
                return None
            _ZYGOTES[key] = z
        return z


def shutdown_zygotes() -> None:
    with _ZYGOTE_LOCK:
        for z in _ZYGOTES.values():
            z.close()
        _ZYGOTES.clear()


atexit.register(shutdown_zygotes)


def _request_paths(request: dict[str, Any]) -> list[str]:
    """Folders a worker must read for ``request``: those of its problem, candidate and comparison kernels."""
    paths = [request.get("problem"), request.get("candidate")]
    paths += list(((request.get("timing") or {}).get("against") or {}).values())
    out = []
    for p in paths:
        if isinstance(p, str) and p:
            q = Path(p).resolve()
            out.append(str(q if q.is_dir() else q.parent))
    return out


def jail_spec(scratch: Path, limits: SandboxLimits, *, readable: list[str], writable: list[str] | None = None,
              devices: bool = False, keep_caps: bool = False, python: str | Path | None = None) -> dict[str, Any]:
    """The spec ``optimizer.harness.jail.enter`` applies (isolation as far as ``jail.probe()`` found it works)."""
    level = jail.probe()
    return {"scratch": str(scratch), "isolate": level["isolate"], "readable": jail.default_readable(python) + readable,
            "writable": list(writable or []), "devices": devices, "keep_caps": keep_caps,
            "memory_mb": limits.memory_mb, "limit_as": limits.address_space_limit, "fsize_mb": limits.file_mb,
            "cpu_s": int(limits.timeout_s * max(1, os.cpu_count() or 1)) + 60, "nproc": limits.max_processes}


def triton_cache(env: dict[str, str] | None = None) -> Path | None:
    """The Triton cache workers share (writable in every jail): the parent's ``TRITON_CACHE_DIR``, else Triton's
    default ``~/.triton/cache``. Workers share autotuning decisions through it (``TRITON_CACHE_AUTOTUNING``, see
    ``optimizer.harness.timing``), so it is the one folder outside its scratch a worker may write: a candidate could
    plant an entry there (README "Sandbox"). ``LADDER_SANDBOX_PRIVATE_TRITON_CACHE=1`` gives each worker its own
    (safer, and every worker then compiles and autotunes afresh)."""
    if os.environ.get("LADDER_SANDBOX_PRIVATE_TRITON_CACHE") == "1":
        return None
    e = os.environ if env is None else env
    path = Path(e.get("TRITON_CACHE_DIR") or Path.home() / ".triton" / "cache").expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return path.resolve()


def isolation_level() -> str:
    level = jail.probe()
    return "namespaces" if level["isolate"] else f"basic: {level['why']}"


#: Install trees a profiler's launcher script looks in besides its own folder: CUDA's ``ncu`` is a wrapper that
#: searches ``<cuda>/bin/../nsight-compute-*`` and ``/opt/nvidia/nsight-compute/<version>``; on the lent GPU image
#: the tool lives only under /opt/nvidia, and a jail without it failed every ncu run with "nsight-compute directory
#: is not found" (L2 recorded no counters in any session before this was added).
PROFILER_ROOTS: dict[str, tuple[str, ...]] = {"ncu": ("/opt/nvidia",), "nsys": ("/opt/nvidia",)}


def profiler_roots(tool: str, *, isdir: Callable[[str], bool] = os.path.isdir) -> list[str]:
    """The existing install trees of ``PROFILER_ROOTS[tool]`` (by the tool's file name), to be readable in the jail."""
    return [p for p in PROFILER_ROOTS.get(Path(tool).name, ()) if isdir(p)]


def run_worker(
    request: dict[str, Any],
    *,
    limits: SandboxLimits = SandboxLimits(),
    env: dict[str, str] | None = None,
    interpreter: bool = False,
    prefix_cmd: list[str] | None = None,
    workdir: str | Path | None = None,
    use_zygote: bool = False,
    python: str | Path | None = None,
    readable: list[str] | None = None,
    writable: list[str] | None = None,
    hook: Any = None,
) -> SandboxResult:
    """Run ``optimizer.harness.worker`` on ``request`` in a fresh, jailed process group; classify how it ended.

    ``use_zygote`` forks the worker from a pre-imported server (fast: torch and triton imported once; used for the
    CPU interpreter and CUDA, whose runtime the zygote never initialises), else a fresh interpreter is spawned; a
    forked worker that reports a device runtime initialised before the fork is run again spawned, and that
    environment spawns from then on. ``prefix_cmd`` (e.g. ``ncu ...``) always spawns, and keeps capabilities (a
    profiler may need them for counters). ``python`` runs the worker with another interpreter (e.g.
    ``.venv-triton36/bin/python`` for Triton 3.6); it always spawns. ``readable``/``writable``: folders the worker
    sees besides the system, Python, the repository, its request's files and its scratch directory. ``hook()``
    is called while the worker runs (the judge's verdicts, ``optimizer.harness.judge``); the seconds it returns
    are added to the deadline.
    """
    t_setup = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="ladder_sbx_", dir=workdir))
    req_path, res_path = tmp / "request.json", tmp / "result.json"
    out_path, err_path = tmp / "stdout.txt", tmp / "stderr.txt"
    req_path.write_text(json.dumps(request, default=str))
    token = secrets.token_hex(16)
    child_env = jail.scrub_env(dict(os.environ if env is None else env))
    child_env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_REPO_ROOT), child_env.get("PYTHONPATH", "")) if p)
    if interpreter:
        child_env["TRITON_INTERPRET"] = "1"
    else:
        child_env.pop("TRITON_INTERPRET", None)
    cache = triton_cache(env)
    tools = []
    if prefix_cmd:  # a profiler installed outside /usr (ncu under /opt/nvidia/nsight-compute): its tree, read-only
        import shutil

        exe = shutil.which(prefix_cmd[0], path=child_env.get("PATH"))
        if exe:
            tools.append(str(Path(exe).resolve().parents[1]))
        tools += profiler_roots(prefix_cmd[0])
    spec = jail_spec(tmp, limits, readable=_request_paths(request) + tools + list(readable or []),
                     writable=[*(writable or []), *([str(cache)] if cache else [])], devices=not interpreter,
                     keep_caps=bool(prefix_cmd), python=python)
    private = jail.private_env(tmp, cache)
    t_zygote = time.monotonic()
    zygote = _zygote(child_env, interpreter) if use_zygote and not prefix_cmd and python is None else None
    t0 = time.monotonic()  # after the zygote's start (imports once per session): not the worker's time
    stages.add("setup", t_zygote - t_setup)  # the round's stages (optimizer.harness.stages): scratch, jail spec
    stages.add("zygote", t0 - t_zygote)  # its start (imports once per session and environment); ~0 once it runs
    if zygote is not None:
        rc, status, reason = _run_forked(zygote, limits, token, req_path, res_path, out_path, err_path, tmp, t0, spec,
                                         private, hook)
        if not interpreter and _fork_unsafe(res_path, err_path):
            _NO_FORK.add(_zygote_key(child_env, interpreter))
            res_path.unlink(missing_ok=True)
            zygote = None
    if zygote is None:
        spec_path = tmp / "jail.json"
        spec_path.write_text(json.dumps(spec))
        cmd = [sys.executable, "-m", "optimizer.harness.jail", str(spec_path), "--", *(prefix_cmd or []),
               str(python or sys.executable), "-m", "optimizer.harness.worker", str(req_path), str(res_path)]
        rc, status, reason = _run_spawned(cmd, limits, child_env | private, token, out_path, err_path, tmp, t0, hook)
    duration = time.monotonic() - t0
    stdout_tail, stderr_tail = _tail(out_path), _tail(err_path)
    payload: dict[str, Any] = {}
    if res_path.exists():
        try:
            payload = json.loads(res_path.read_text())
        except (OSError, json.JSONDecodeError):
            payload = {}
        if payload.get("token") != token:
            payload = {}
            if status is None:
                status, reason = "error", "error: the result file was not written by the worker (token mismatch)"
    if status is None:
        status, reason = _classify(rc, payload, stderr_tail)
    # the process's own start and exit (interpreter, imports, jail), besides what it reports as its work
    stages.add("start", max(0.0, duration - float(payload.get("worker_s") or 0.0)) if payload else duration)
    with stages.span("cleanup"):
        _cleanup(tmp)
    return SandboxResult(status, reason, payload, rc, duration, stdout_tail, stderr_tail, isolation_level())


def _fork_unsafe(res_path: Path, err_path: Path) -> bool:
    """Whether a forked device worker failed because the device runtime cannot start in a forked child."""
    text = _tail(err_path)
    try:
        text += res_path.read_text()[:4000] if res_path.exists() else ""
    except OSError:
        pass
    return any(marker in text for marker in _FORK_UNSAFE)


def _watch(is_done: Any, pid: int, kill: Any, limits: SandboxLimits, t0: float,
           hook: Any = None) -> tuple[Status | None, str]:
    """Poll until ``is_done()``; call ``hook``; enforce the timeout and (without RLIMIT_AS) the RSS limit."""
    extra = 0.0
    while not is_done():
        if hook is not None:
            extra += float(hook() or 0.0)
        if time.monotonic() - t0 - extra > limits.timeout_s:
            kill()
            return "timeout", f"timeout: no result after {limits.timeout_s:g} s (hang or too slow); process killed"
        if limits.memory_mb and not limits.address_space_limit:
            rss = _rss_mb(pid)
            if rss > limits.memory_mb:
                kill()
                return "oom", f"oom: host memory {rss:.0f} MB exceeded the {limits.memory_mb} MB limit; process killed"
    return None, ""


def _run_spawned(cmd: list[str], limits: SandboxLimits, env: dict[str, str], token: str, out_path: Path, err_path: Path,
                 tmp: Path, t0: float, hook: Any = None) -> tuple[int | None, Status | None, str]:
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=out, stderr=err, env=env, cwd=str(tmp),
                                start_new_session=True)
        assert proc.stdin is not None
        try:
            proc.stdin.write((token + "\n").encode())
            proc.stdin.close()
        except BrokenPipeError:
            pass

        def done() -> bool:
            try:
                proc.wait(timeout=0.1)
                return True
            except subprocess.TimeoutExpired:
                return False

        def wait(seconds: float) -> None:
            try:
                proc.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                pass

        status, reason = _watch(done, proc.pid, lambda: kill_tree(proc.pid, wait), limits, t0, hook)
    return proc.returncode, status, reason


def _run_forked(zygote: Any, limits: SandboxLimits, token: str, req_path: Path, res_path: Path, out_path: Path,
                err_path: Path, tmp: Path, t0: float, spec: dict[str, Any], private: dict[str, str],
                hook: Any = None) -> tuple[int | None, Status | None, str]:
    pending = zygote.spawn({
        "req": str(req_path), "res": str(res_path), "token": token, "stdout": str(out_path), "stderr": str(err_path),
        "cwd": str(tmp), "jail": spec, "env": private,
    })
    pid = pending.pid
    status, reason = _watch(lambda: pending.done.wait(0.1), pid, lambda: kill_tree(pid, pending.done.wait), limits,
                            t0, hook)
    return pending.returncode, status, reason


def _classify(rc: int | None, payload: dict[str, Any], stderr_tail: str) -> tuple[Status, str]:
    if rc == jail.SETUP_FAILED and not payload:
        last = [ln for ln in stderr_tail.splitlines() if "sandbox setup failed" in ln][-1:] or [""]
        return "error", f"sandbox_error: the jail could not be set up, nothing ran ({last[0][:300]})"
    if rc is not None and rc < 0:
        sig = signal.Signals(-rc).name if -rc in signal.Signals._value2member_map_ else str(-rc)
        if sig == "SIGKILL":
            return "oom", "oom: killed by SIGKILL (likely the kernel OOM killer)"
        return "crashed", f"crashed: killed by {sig}"
    if "error" in payload:
        err = payload["error"]
        kind = err.get("kind", "runtime_error")
        if kind == "oom":
            return "oom", f"oom: {err.get('message', '')}"[:2000]
        return "error", f"{kind} during {err.get('stage', '?')}: {err.get('message', '')}"[:2000]
    if not payload:
        last = stderr_tail.strip().splitlines()[-1:] or [""]
        if "MemoryError" in stderr_tail or "Cannot allocate memory" in stderr_tail:
            return "oom", f"oom: worker died allocating memory ({last[0][:300]})"
        return "error", f"no_result: the worker exited with code {rc} without a result ({last[0][:300]})"
    if rc not in (0, None):
        return "crashed", f"crashed: exit code {rc}"
    return "ok", ""


def _cleanup(tmp: Path) -> None:
    import shutil

    shutil.rmtree(tmp, ignore_errors=True)
