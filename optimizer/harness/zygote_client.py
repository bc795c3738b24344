"""The parent's handle on a zygote, the pre-imported fork server of ``optimizer.harness.zygote`` (its protocol and
why it exists are described there). The client starts the server as its own process (``python -m
optimizer.harness.zygote``) and never imports it: the sandbox (parent side) and the worker (forked side) stay
apart."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from typing import Any

__all__ = ["ZygoteClient"]


class _Pending:
    def __init__(self) -> None:
        self.pid: int | None = None
        self.returncode: int | None = None
        self.started = threading.Event()
        self.done = threading.Event()


class ZygoteClient:
    """Parent-side handle on one zygote process (one per environment: interpreter on/off)."""

    def __init__(self, env: dict[str, str]) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "optimizer.harness.zygote"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=env, start_new_session=True,
        )
        assert self._proc.stdout is not None
        first = self._proc.stdout.readline()
        if not first or not json.loads(first).get("ready"):
            self._proc.kill()
            raise RuntimeError("zygote failed to start")
        self._lock = threading.Lock()
        self._pending: dict[str, _Pending] = {}
        self._counter = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @property
    def alive(self) -> bool:
        return self._proc.poll() is None

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            msg = json.loads(line)
            p = self._pending.get(msg.get("id", ""))
            if p is None:
                continue
            p.pid = msg.get("pid")
            p.started.set()
            if "returncode" in msg:
                p.returncode = msg["returncode"]
                p.done.set()
        for p in list(self._pending.values()):  # zygote died: release every waiter
            p.started.set()
            p.done.set()

    def spawn(self, msg: dict[str, Any]) -> _Pending:
        with self._lock:
            self._counter += 1
            rid = str(self._counter)
            pending = _Pending()
            self._pending[rid] = pending
            assert self._proc.stdin is not None
            self._proc.stdin.write((json.dumps({**msg, "id": rid}) + "\n").encode())
            self._proc.stdin.flush()
        if not pending.started.wait(30) or pending.pid is None:
            raise RuntimeError("zygote did not fork a worker")
        return pending

    def close(self) -> None:
        try:
            if self._proc.stdin:
                self._proc.stdin.close()
            self._proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):  # a broken pipe, or children that outlast the grace time
            self._proc.kill()
