"""Other Triton environments: where a Triton 3.6 interpreter is (the GPU image's version) and what it runs.

The CPU machines run the latest Triton (3.9), which removed block pointers (``tl.make_block_ptr`` /
``tl.advance``); the lent H200 image runs Triton 3.6. ``make triton36-env`` creates ``.venv-triton36`` with
``triton==3.6.0`` only; a ``.pth`` file there adds the main ``.venv``'s site-packages *after* its own, so
torch and the project come from the main environment while ``import triton`` finds 3.6. Validation
(``--triton 3.6`` or ``LADDER_TRITON_PYTHON``) and IR capture (``ladder ir --triton-python PATH``) run their
worker with that interpreter; every result records the Triton version it ran with.
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

from kb.errors import InvalidArgument, ToolchainError

__all__ = ["ENV_VAR", "find_triton_python", "select_triton", "triton_python", "triton_version"]

ENV_VAR = "LADDER_TRITON_PYTHON"
REPO_ROOT = Path(__file__).resolve().parents[2]
_KNOWN = {"3.6": ".venv-triton36"}


def _hint(version: str) -> str:
    folder = _KNOWN.get(version, f".venv-triton{version.replace('.', '')}")
    return (f"Triton {version} needs its own virtualenv: run `make triton36-env` at the repository root ({REPO_ROOT}; "
            f"it creates {folder} with triton=={version}.0 in about 10 s), or point {ENV_VAR} at a python that has it.")


def find_triton_python(version: str | None = None) -> Path | None:
    """``$LADDER_TRITON_PYTHON`` if set, else the env for ``version`` (repo root, then cwd); None if absent."""
    explicit = os.environ.get(ENV_VAR)
    if explicit:
        return Path(explicit).absolute()  # absolute, not resolved: a venv's python is a symlink to the base one
    if version is None:
        return None
    if version not in _KNOWN:
        raise InvalidArgument(f"--triton {version}: known environments are {', '.join(_KNOWN)} (make triton36-env)",
                              field="triton")
    for root in (REPO_ROOT, Path.cwd()):
        cand = root / _KNOWN[version] / "bin" / "python"
        if cand.exists():
            return cand
    return None


def triton_python(version: str | None = None) -> Path | None:
    """Like :func:`find_triton_python`, but a requested version that is missing or wrong raises, saying how to fix
    it."""
    py = find_triton_python(version)
    if py is None:
        if version is None:
            return None
        raise ToolchainError(_hint(version))
    if not py.exists():
        raise ToolchainError(f"{ENV_VAR}={py} does not exist. {_hint(version or '3.6')}")
    if version is not None and not triton_version(str(py)).startswith(version + "."):
        raise ToolchainError(f"{py} has Triton {triton_version(str(py))}, not {version}. {_hint(version)}")
    return py


def select_triton(version: str | None) -> None:
    """``--triton 3.6``: run validation workers with that Triton env (sets LADDER_TRITON_PYTHON for this process)."""
    if version is None:
        return
    os.environ.pop(ENV_VAR, None)  # --triton names the version; the env for it is found, not overridden
    os.environ[ENV_VAR] = str(triton_python(version))


@functools.cache
def triton_version(python: str) -> str:
    """The Triton version ``python`` imports (one subprocess, cached)."""
    try:
        out = subprocess.run([python, "-c", "import triton; print(triton.__version__)"], capture_output=True,
                             text=True, timeout=120, check=False)
    except OSError as e:
        raise ToolchainError(f"cannot run {python}: {e}") from None
    if out.returncode != 0:
        raise ToolchainError(f"{python} cannot import triton: {out.stderr.strip()[-500:]}")
    return out.stdout.strip()
