"""The zygote's guarantee that multiprocessing's forkserver lacks (see ``optimizer.harness.zygote``): when the parent
goes away, every worker it forked is killed, hung ones included."""

from __future__ import annotations

import os
import time
from pathlib import Path

from optimizer.harness.zygote import ZygoteClient

ROOT = Path(__file__).resolve().parents[3]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_hung_worker_dies_with_its_parent(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), TRITON_INTERPRET="1")
    zygote = ZygoteClient(env)
    fifo = tmp_path / "request.json"
    os.mkfifo(fifo)  # no writer ever opens it: the worker blocks reading its request, like a hang
    pending = zygote.spawn({"req": str(fifo), "res": str(tmp_path / "result.json"), "token": "t",
                            "stdout": str(tmp_path / "out.txt"), "stderr": str(tmp_path / "err.txt"),
                            "cwd": str(tmp_path), "memory_mb": None, "limit_as": False})
    assert pending.pid is not None
    time.sleep(0.5)
    assert _alive(pending.pid) and not pending.done.is_set()
    assert zygote._proc.stdin is not None
    zygote._proc.stdin.close()  # what the zygote sees when the session process dies: EOF on its stdin
    zygote._proc.wait(timeout=30)
    assert pending.done.wait(5) and pending.returncode == -9  # SIGKILL to the worker's process group
    assert not _alive(pending.pid)
