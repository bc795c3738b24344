"""The per-GPU lock: a second process cannot take a held device; --force goes ahead and says 'shared'."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kb.errors import Unavailable
from optimizer.harness.gpulock import GPULock, device_key

HOLDER = """
import sys
from pathlib import Path
from optimizer.harness.gpulock import GPULock
lock = GPULock(Path(sys.argv[1]), "GPU-test", owner="holder-session").acquire()
print("locked", flush=True)
sys.stdin.read()  # hold until the parent closes stdin
lock.release()
"""


def test_two_processes_never_share_a_device(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[3]
    child = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, cwd=root, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})
    try:
        assert child.stdout.readline().strip() == "locked"
        with pytest.raises(Unavailable, match="holder-session.*--force"):
            GPULock(tmp_path, "GPU-test", owner="second").acquire()
        forced = GPULock(tmp_path, "GPU-test", owner="second").acquire(force=True)
        assert forced.shared and forced.record()["shared_gpu"] and "shared GPU" in forced.record()["note"]
        other = GPULock(tmp_path, "GPU-other").acquire()  # another device is free
        assert not other.shared
        other.release()
    finally:
        child.stdin.close()
        child.wait(timeout=30)
    mine = GPULock(tmp_path, "GPU-test", owner="third").acquire()  # released when the holder ended
    assert not mine.shared and mine.record()["shared_gpu"] is False
    mine.release()


def test_device_key_follows_cuda_visible_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("shutil.which", lambda _name: None)  # no nvidia-smi: the visible name itself
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-1a2b/3,5")
    assert device_key(0) == "GPU-1a2b_3" and device_key(1) == "5"
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert device_key(0) == "0"
