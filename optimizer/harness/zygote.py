"""A pre-imported fork server for sandboxed workers (``python -m optimizer.harness.zygote``).

Importing torch and triton costs several seconds per process; a session evaluates dozens of candidates. The
zygote imports them once and forks one child per request. Each child starts a new session (its own process
group, so a timeout kills everything it spawned) and enters the jail (limits, namespaces), redirects its output to
files and runs ``optimizer.harness.worker.run_request``; the zygote itself never runs candidate code and never
initialises CUDA, so forking stays safe: it checks after its imports and refuses to serve otherwise. CUDA workers
fork from it too (each child initialises the device itself). The zygote is single-threaded: it multiplexes
requests on stdin with ``select`` and reaps children with ``waitpid(WNOHANG)``.

Protocol (JSON lines): request ``{"id", "req", "res", "token", "stdout", "stderr", "cwd", "jail", "env"}`` (``jail``:
the spec ``optimizer.harness.jail.enter`` applies; ``env``: the worker's private HOME, TMPDIR and caches); replies
``{"id", "pid"}`` once forked and ``{"id", "pid", "returncode"}`` when the child exits (negative return codes are
signals, as with ``subprocess``).

Why not ``multiprocessing.get_context("forkserver")`` with ``set_forkserver_preload`` (deliberately left, checked
on CPython 3.11.7): the per-worker part would survive (``setsid``, ``RLIMIT_CORE``/``RLIMIT_AS``, the ``dup2``
capture and ``-signal`` exit codes can all run in the target), but two properties the sandbox relies on do not.

1. One server per parent process, with the parent's environment: ``multiprocessing.forkserver`` keeps a single
   module-level server, started with the parent's ``os.environ`` (``spawnv_passfds`` passes no environment).
   The preload (``triton.language`` above all) must be imported under ``TRITON_INTERPRET=1`` and the workers'
   ``PYTHONPATH``, which are set for workers only: in the session's own environment ``TRITON_INTERPRET`` would
   reach every process it starts from ``os.environ`` (the IR capture worker, ``optimizer.ir.capture``, copies
   it), and there ``@triton.jit`` would yield interpreter functions that cannot be compiled.
   ``optimizer.harness.sandbox`` keeps one zygote per (interpreter, PYTHONPATH). A probe that changed ``os.environ``
   between two ``Process.start()`` calls saw the first value in both children.
2. Workers outlive their parent: when the parent dies, the forkserver does not kill its children (the same
   probe's hung, ``setsid`` children were still running after the parent's ``os._exit``). The zygote kills
   every child's process group when its stdin closes, so a hung candidate cannot keep a core busy after a
   killed session (``tests/optimizer/harness/test_zygote.py``).

Each forkserver child would also re-run the parent's ``__main__`` (``spawn.prepare``), e.g. the CLI script.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

import optimizer.harness.probes
import optimizer.harness.timing
import optimizer.harness.validate  # noqa: F401  (imported once here, before forking: the workers' modules)
from optimizer.harness import jail
from optimizer.harness.worker import run_request

__all__ = ["serve"]


def _child(msg: dict[str, Any]) -> None:
    """Runs in the forked child: never returns. Jailed (``optimizer.harness.jail.enter``: its own session, limits,
    namespaces, minimal root, no capabilities) before the worker imports anything of the request's."""
    code = 1
    try:
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        out = os.open(msg["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        err = os.open(msg["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(out, 1)
        os.dup2(err, 2)
        for fd in (devnull, out, err):
            os.close(fd)
        sys.stdin = open(os.devnull)  # noqa: SIM115
        sys.stdout = os.fdopen(1, "w", buffering=1)
        sys.stderr = os.fdopen(2, "w", buffering=1)
        jail.enter(msg["jail"])  # the supervisor never returns from here; the worker does
        os.environ.update(msg.get("env") or {})
        tempfile.tempdir = None  # the zygote's cached temporary directory is out of the jail's sight
        os.chdir(msg["cwd"])
        code = run_request(Path(msg["req"]), Path(msg["res"]), msg["token"])
    except BaseException:  # noqa: BLE001 - process boundary (a forked child): report and exit, whatever happened
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


#: Modules torch and triton import lazily on first use of a dispatch mode, deterministic mode or the
#: interpreter (~800 modules: dynamo, sympy ...). Imported here, never executed: the zygote must not run
#: torch compute before forking (an initialised OpenMP pool deadlocks forked children).
_WARM_IMPORTS = ("torch.utils._python_dispatch", "torch._dynamo", "torch._decomp", "torch._functorch.eager_transforms",
                 "torch._higher_order_ops", "torch.fx", "torch.testing", "torch.utils.deterministic", "sympy", "mpmath",
                 "triton.runtime.interpreter", "triton.compiler", "triton.language")


def _warm_imports() -> None:
    import importlib

    for name in _WARM_IMPORTS:
        try:
            importlib.import_module(name)
        except (ImportError, OSError, RuntimeError):  # a missing module, a broken shared library, a version check at
            # import: an optimisation only, a module that fails here fails again where it is used
            pass


def serve() -> None:
    import torch  # the point of the zygote: import once
    import triton  # noqa: F401

    _warm_imports()
    if torch.cuda.is_initialized():  # forked children could not use the GPU: let the client spawn workers instead
        sys.stdout.write(json.dumps({"ready": False, "why": "CUDA initialised during the zygote's imports"}) + "\n")
        sys.stdout.flush()
        return

    children: dict[int, str] = {}
    out = sys.stdout
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    buf = b""
    stdin = sys.stdin.buffer.raw if hasattr(sys.stdin.buffer, "raw") else sys.stdin.buffer
    fd = stdin.fileno()
    eof = False
    while not eof or children:
        ready, _, _ = select.select([fd] if not eof else [], [], [], 0.05)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:  # the parent is gone: nobody will read results, so stop every child
                eof = True
                for pid in list(children):
                    try:
                        os.killpg(pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if not line.strip():
                    continue
                msg = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    _child(msg)
                children[pid] = msg["id"]
                out.write(json.dumps({"id": msg["id"], "pid": pid}) + "\n")
                out.flush()
        while children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                children.clear()
                break
            if pid == 0:
                break
            rid = children.pop(pid, None)
            if rid is not None:
                rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
                out.write(json.dumps({"id": rid, "pid": pid, "returncode": rc}) + "\n")
                out.flush()


if __name__ == "__main__":
    serve()
