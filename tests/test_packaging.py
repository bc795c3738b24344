"""Packaging is quiet and lean: the wheel builds without setuptools warnings, carries every card, and the main
job's setup installs runtime dependencies only, one line per step."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_builds_without_warnings_and_carries_the_cards(tmp_path: Path):
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                           "-w", str(tmp_path), str(ROOT)], check=False, capture_output=True, text=True,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Warning" not in done.stdout + done.stderr, (done.stdout + done.stderr)[-2000:]
    (wheel,) = tmp_path.glob("kernel_ladder-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    cards = {p.relative_to(ROOT).as_posix() for p in (ROOT / "kb" / "cards").rglob("*.yaml")}
    assert cards and cards <= names, f"cards missing from the wheel: {sorted(cards - names)[:5]}"
    assert "retrieval/v1/ladder_pb2.pyi" in names


def test_main_job_setup_installs_runtime_dependencies_only():
    script = (ROOT / "scripts" / "setup-env.sh").read_text()
    runtime = script.split('if [ "${LADDER_RUNTIME_ONLY:-0}" = "1" ]', 1)[1].split("else", 1)[0]
    assert "--group dev" not in runtime and "-e ." in runtime
    assert "LADDER_RUNTIME_ONLY=1" in (ROOT / "scripts" / "main.sh").read_text()
