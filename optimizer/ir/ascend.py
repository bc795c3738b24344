"""The triton-ascend environment: where its interpreter is and how to tell the user to create it.

triton-ascend installs a package named ``triton``, so it cannot share an environment with upstream Triton.
It lives in its own virtualenv (``make ascend-env`` creates ``.venv-ascend`` at the repository root with
``triton-ascend==3.2.0`` and ``pybind11``, about 30 s from PyPI) and the capture worker runs inside it.

What runs here: TTIR and TTIR -> ttadapter (Linalg + HIVM/HFusion annotations, through the wheel's bundled
``triton-adapter-opt``), with per-pass snapshots of both pipelines. What does not: ``npubin`` (CANN's
``bishengir-compile``), HIVM IR, and anything that needs an NPU (launches, msprof). None of those exist on
this machine, so they are untested.
"""

from __future__ import annotations

import os
from pathlib import Path

from kb.errors import ToolchainError

__all__ = ["ASCEND_ENV_HINT", "ascend_python", "find_ascend_python"]

ENV_VAR = "LADDER_ASCEND_PYTHON"
REPO_ROOT = Path(__file__).resolve().parents[2]
ASCEND_ENV_HINT = (
    "The Ascend target needs triton-ascend in its own virtualenv. Create it with `make ascend-env` at the "
    f"repository root ({REPO_ROOT}; it installs triton-ascend==3.2.0 + pybind11 into .venv-ascend in about "
    f"30 s), or point {ENV_VAR} at a python that has triton-ascend installed."
)


def find_ascend_python() -> Path | None:
    """The triton-ascend interpreter: ``$LADDER_ASCEND_PYTHON``, else ``.venv-ascend`` (repo root, then cwd)."""
    explicit = os.environ.get(ENV_VAR)
    if explicit:
        return Path(explicit)
    for root in (REPO_ROOT, Path.cwd()):
        for rel in ("bin/python", "Scripts/python.exe"):
            cand = root / ".venv-ascend" / rel
            if cand.exists():
                return cand
    return None


def ascend_python() -> Path:
    """Like :func:`find_ascend_python` but raises a :class:`ToolchainError` saying how to create the env."""
    py = find_ascend_python()
    if py is None:
        raise ToolchainError(ASCEND_ENV_HINT)
    if not py.exists():
        raise ToolchainError(f"{ENV_VAR}={py} does not exist. {ASCEND_ENV_HINT}")
    site = _site_packages(py)
    if site is not None and not (site / "triton" / "backends" / "ascend").is_dir():
        raise ToolchainError(f"{py} has no triton-ascend backend (triton/backends/ascend). {ASCEND_ENV_HINT}")
    return py


def ascend_backend_dir(py: Path | None = None) -> Path | None:
    """``.../site-packages/triton/backends/ascend`` of the Ascend environment (for L4 source inspection)."""
    py = py or find_ascend_python()
    site = _site_packages(py) if py else None
    d = site / "triton" / "backends" / "ascend" if site else None
    return d if d and d.is_dir() else None


def _site_packages(py: Path) -> Path | None:
    """Site-packages of a virtualenv interpreter, found on disk (no subprocess)."""
    venv = py.parent.parent
    for cand in sorted((venv / "lib").glob("python3*/site-packages")):
        return cand
    win = venv / "Lib" / "site-packages"
    return win if win.is_dir() else None
