"""Apply a recipe to a small test kernel and compare the rewritten module with the original in the interpreter."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from optimizer.rewrite.context import RecipeContext, RewriteResult
from optimizer.rewrite.recipe import apply_recipe

KERNELS = Path(__file__).parent / "kernels"


def load(path: Path, *, interpret: bool = True) -> Any:
    """Import ``path`` as a fresh module; its kernels run in the interpreter unless ``interpret`` is False."""
    os.environ["TRITON_INTERPRET"] = "1" if interpret else "0"  # read by triton.jit at decoration time
    name = f"_rw_{path.stem}_{abs(hash(path.read_text()))}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def rewrite(kernel: str, recipe: dict[str, Any], **ctx: Any) -> RewriteResult:
    src = (KERNELS / f"{kernel}.py").read_text()
    return apply_recipe(recipe, RecipeContext(source=src, **ctx))


def same_outputs(kernel: str, new_source: str, tmp_path: Path, *, atol: float = 1e-5, rtol: float = 1e-5,
                 cases: list[dict[str, Any]] | None = None) -> None:
    """Run the original and the rewritten ModelNew on every case of ``get_inputs`` and compare their outputs.

    The comparison runs in a child forked from an interpreter process started with ``TRITON_INTERPRET=1`` set before
    triton is imported (``_ForkServer``): in a pytest process where another test imported ``triton.language``
    without it, the language's own jitted helpers (``tl.sum``'s combine function ...) are compiled-mode functions the interpreter cannot call."""
    import json

    path = tmp_path / f"{kernel}_rewritten.py"
    path.write_text(new_source)
    args = json.dumps({"kernel": kernel, "path": str(path), "atol": atol, "rtol": rtol, "cases": cases})
    rc, output = _fork_server().compare(args, tmp_path)
    assert rc == 0, output[-4000:]


class _ForkServer:
    """One interpreter process per test process with torch and triton imported under ``TRITON_INTERPRET=1``; it
    forks a child per comparison (``_serve``). A fresh ``python -c`` per comparison paid the torch/triton import
    each time (56 call sites in tests/optimizer). The child loads both kernel files itself, as the fresh process
    did; the server never runs a kernel, so each child starts from the same state."""

    def __init__(self) -> None:
        import subprocess

        env = {**os.environ, "TRITON_INTERPRET": "1",
               "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])}
        self.proc = subprocess.Popen([sys.executable, "-c", "import rewrite_support as r; r._serve()"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def compare(self, args: str, tmp_path: Path, timeout_s: float = 600.0) -> tuple[int, str]:
        import json
        import select

        out = tmp_path / f"compare-{os.getpid()}-{id(args)}.log"
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"args": args, "out": str(out)}) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout_s)
        line = self.proc.stdout.readline() if ready else ""
        if not line:  # timed out or the server died: the next comparison starts a new one
            self.close()
            log = out.read_text() if out.exists() else ""
            return 1, f"comparison server gave no answer in {timeout_s:.0f} s\n{log}"
        return json.loads(line)["rc"], out.read_text() if out.exists() else ""

    def close(self) -> None:
        global _SERVER
        _SERVER = None
        self.proc.kill()
        self.proc.wait()


_SERVER: _ForkServer | None = None


def _fork_server() -> _ForkServer:
    global _SERVER
    if _SERVER is None or _SERVER.proc.poll() is not None:
        _SERVER = _ForkServer()
        import atexit

        atexit.register(lambda s=_SERVER: s.proc.poll() is None and s.close())
    return _SERVER


def _serve() -> None:
    """The fork server's loop (stdin: one JSON request per line, stdout: ``{"rc": N}`` per request)."""
    import json
    import traceback

    import torch  # noqa: F401  (imported once; each child inherits it)
    import triton.language  # noqa: F401

    for line in sys.stdin:
        req = json.loads(line)
        pid = os.fork()
        if pid == 0:  # the child: its output goes to the request's log file
            code = 1
            try:
                fd = os.open(req["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                _compare(req["args"])
                code = 0
            except BaseException:  # noqa: BLE001 -- reported through the exit code and the log
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"rc": os.waitstatus_to_exitcode(status)}), flush=True)


def _compare(args_json: str) -> None:
    import json

    a = json.loads(args_json)
    _same_outputs_here(a["kernel"], Path(a["path"]), atol=a["atol"], rtol=a["rtol"], cases=a["cases"])


def _same_outputs_here(kernel: str, path: Path, *, atol: float, rtol: float, cases: list[dict[str, Any]] | None) -> None:
    import torch

    old = load(KERNELS / f"{kernel}.py")
    new = load(path)
    for case in cases or getattr(old, "CASES", [{}]):
        torch.manual_seed(0)
        inputs = old.get_inputs(**case)
        want = old.ModelNew()(*[x.clone() if hasattr(x, "clone") else x for x in inputs])
        got = new.ModelNew()(*[x.clone() if hasattr(x, "clone") else x for x in inputs])
        for w, g in zip(want if isinstance(want, tuple) else (want,), got if isinstance(got, tuple) else (got,), strict=True):
            torch.testing.assert_close(g, w, atol=atol, rtol=rtol, msg=lambda m, c=case: f"case {c}: {m}")
