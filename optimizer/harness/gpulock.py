"""A per-GPU lock so that two timing sessions never share a device (two sessions on one GPU inflated a baseline ~2x).

The lock is an ``fcntl.flock`` on ``<lock_dir>/gpu-<key>.lock``, held for the whole session and released by the
kernel when the process ends (also on a crash). The key is the device's UUID when ``nvidia-smi`` can map the
visible index to it (so ``CUDA_VISIBLE_DEVICES=1`` and ``CUDA_VISIBLE_DEVICES=GPU-...`` collide as they should),
else the visible index itself. ``force=True`` goes ahead on a held device and the lock says ``shared``, which
the session records in the trajectory (``timing_env["shared_gpu"]``).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from kb.errors import Unavailable

__all__ = ["GPULock", "device_key"]

def _visible(index: int) -> str:
    vis = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    return vis[index] if index < len(vis) else str(index)


def device_key(index: int = 0) -> str:
    """A file-name-safe key for the CUDA device that ``cuda:index`` names in this process."""
    dev = _visible(index)
    if dev.isdigit() and shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=index,uuid", "--format=csv,noheader"], capture_output=True,
                                 text=True, timeout=20, check=False).stdout
            uuids = dict(line.split(", ", 1) for line in out.strip().splitlines() if ", " in line)
            dev = uuids.get(dev, dev).strip()
        except (OSError, subprocess.SubprocessError, ValueError):
            pass
    return re.sub(r"[^A-Za-z0-9._-]", "_", dev)


@dataclass
class GPULock:
    lock_dir: Path
    key: str
    owner: str = ""
    shared: bool = False
    _fh: IO[str] | None = None

    @property
    def path(self) -> Path:
        return self.lock_dir / f"gpu-{self.key}.lock"

    def acquire(self, *, force: bool = False) -> GPULock:
        """Take the lock; raise ``Unavailable`` naming the holder, or (``force``) continue and mark the lock shared."""
        self.lock_dir.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+")  # noqa: SIM115  (held open for the session: the flock lives on this handle)
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "unknown holder"
            fh.close()
            if not force:
                raise Unavailable(
                    f"GPU {self.key} is in use by another timing session ({holder}; lock {self.path}): wait for it, "
                    "pick another GPU with CUDA_VISIBLE_DEVICES, or pass --force (the results then say 'shared GPU')"
                ) from None
            self.shared = True
            return self
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps({"pid": os.getpid(), "owner": self.owner}))
        fh.flush()
        self._fh = fh
        return self

    def release(self) -> None:
        if self._fh is not None:
            self._fh.seek(0)
            self._fh.truncate()
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None

    def record(self) -> dict[str, Any]:
        return {
            "gpu_key": self.key,
            "lock": str(self.path),
            "shared_gpu": self.shared,
            "note": "shared GPU: another timing session held this device (--force); timings may be inflated"
            if self.shared
            else "",
        }
