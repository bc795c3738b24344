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

    The comparison runs in a fresh interpreter process with ``TRITON_INTERPRET=1`` set before triton is imported:
    in a pytest process where another test imported ``triton.language`` without it, the language's own jitted
    helpers (``tl.sum``'s combine function ...) are compiled-mode functions the interpreter cannot call."""
    import json
    import subprocess

    path = tmp_path / f"{kernel}_rewritten.py"
    path.write_text(new_source)
    args = json.dumps({"kernel": kernel, "path": str(path), "atol": atol, "rtol": rtol, "cases": cases})
    env = {**os.environ, "TRITON_INTERPRET": "1",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])}
    res = subprocess.run([sys.executable, "-c", f"import rewrite_support as r; r._compare({args!r})"],
                         capture_output=True, text=True, env=env, timeout=600, check=False)
    assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]


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
