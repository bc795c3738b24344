"""ruff and mypy over the paths held to the lint and type standard: pyproject.toml's ``[tool.mypy] files``.
Any finding fails the suite, so CI runs both; a path joins the list once it is clean. Both tools come with the
dev dependency group."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# tomllib is 3.11+ and the project supports 3.10: read the one line
_FILES = re.search(r"^\[tool\.mypy\][^\[]*?^files = \[([^\]]*)\]", (ROOT / "pyproject.toml").read_text(), re.M | re.S)
PATHS: list[str] = re.findall(r'"([^"]+)"', _FILES.group(1)) if _FILES else []


def _tool(name: str) -> str:
    exe = shutil.which(name) or str(Path(sys.executable).with_name(name))
    if not Path(exe).exists():
        pytest.fail(f"{name} (dev dependency group) is not installed: run scripts/setup-env.sh")
    return exe


def test_the_checked_paths_exist():
    assert {"kb", "retrieval", "synthesis", "optimizer"} <= set(PATHS)  # the whole product
    assert [p for p in PATHS if not (ROOT / p).exists()] == []


def test_ruff_is_clean_on_the_checked_paths():
    done = subprocess.run([_tool("ruff"), "check", "--no-cache", "--output-format", "concise", *PATHS],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-1000:]


@pytest.mark.slow  # ~1-3 min cold on 2 shared cores (seconds with a warm .mypy_cache)
def test_mypy_is_clean_on_the_checked_paths():
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", *PATHS],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    if "No module named mypy" in done.stderr:
        pytest.fail("mypy (dev dependency group) is not installed: run scripts/setup-env.sh")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-1000:]


def test_product_code_tells_no_campaign_history():
    """Comments and docstrings say why, not which work session found it (issue 33 item 8): "session 11's kernel"
    goes stale the day it is written; the measured fact that motivates a rule stays."""
    pattern = re.compile(r"\b[Ss]ession \d+\b")
    hits = [f"{f.relative_to(ROOT)}:{i}" for pkg in ("kb", "retrieval", "synthesis", "optimizer")
            for f in sorted((ROOT / pkg).rglob("*.py"))
            for i, line in enumerate(f.read_text().splitlines(), 1) if pattern.search(line)]
    assert hits == []
