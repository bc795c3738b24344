"""ruff and mypy over kb/ and retrieval/ (configured in pyproject.toml): any finding fails the suite, so CI
runs both. Both tools come with the dev dependency group."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["kb", "retrieval"]


def _tool(name: str) -> str:
    exe = shutil.which(name) or str(Path(sys.executable).with_name(name))
    if not Path(exe).exists():
        pytest.fail(f"{name} (dev dependency group) is not installed: run scripts/setup-env.sh")
    return exe


def test_ruff_is_clean_on_kb_and_retrieval():
    done = subprocess.run([_tool("ruff"), "check", "--no-cache", "--output-format", "concise", *PACKAGES],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-1000:]


@pytest.mark.slow  # ~1-3 min cold on 2 shared cores (seconds with a warm .mypy_cache)
def test_mypy_is_clean_on_kb_and_retrieval():
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", *PACKAGES],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    if "No module named mypy" in done.stderr:
        pytest.fail("mypy (dev dependency group) is not installed: run scripts/setup-env.sh")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-1000:]
