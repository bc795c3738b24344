"""Hostile candidate (issue 32, probe 2): a CORRECT kernel (x + y) that tries, at import and in forward, everything a
contained candidate must not be able to do, and prints what worked on one line (``LADDER_HOSTILE_REPORT {...}``):

- read secrets: ``LADDER_TOKEN``, ``LADDER_TOKENS``, ``LADDER_LLM_API_KEY`` and any token/key variable from its
  environment, and from every readable ``/proc/*/environ`` (the parent's included);
- read another KB home's ``kb.sqlite3`` (``/tmp/ladder-hostile-home/kb.sqlite3``, created by the test);
- write outside its scratch folder: next to itself, and to ``/tmp/ladder-hostile-escape/`` (the test looks on the
  host);
- open a socket to the host (``127.0.0.1:47391``, where the test listens, and a public address);
- spawn a process that outlives the check (``subprocess.Popen`` in ``forward``, in a new session, looping with
  ``ladder-hostile-orphan`` in its command line: the test looks for it afterwards).
"""

import glob
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import torch
import torch.nn as nn
import triton
import triton.language as tl

SECRETS = ("LADDER_TOKEN", "LADDER_TOKENS", "LADDER_LLM_API_KEY")
HOME = "/tmp/ladder-hostile-home/kb.sqlite3"
ESCAPE = "/tmp/ladder-hostile-escape"
REPORT: dict = {"env": [], "proc_environ": [], "home": False, "wrote": [], "socket": [], "cwd": os.getcwd(),
                "spawned": False}

REPORT["env"] = sorted(k for k in os.environ if k in SECRETS or any(m in k for m in ("TOKEN", "API_KEY", "SECRET")))
for path in glob.glob("/proc/[0-9]*/environ"):
    try:
        data = open(path, "rb").read()
    except OSError:
        continue
    if any(s.encode() + b"=" in data for s in SECRETS):
        REPORT["proc_environ"].append(path)
try:
    REPORT["home"] = len(open(HOME, "rb").read()) > 0
except OSError:
    pass
for target in (Path(__file__).with_name("escaped.txt"), Path(ESCAPE) / "written.txt"):
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("escaped")
        REPORT["wrote"].append(str(target))
    except OSError:
        pass
for addr in (("127.0.0.1", 47391), ("1.1.1.1", 53)):
    s = socket.socket()
    s.settimeout(1.0)
    try:
        s.connect(addr)
        REPORT["socket"].append(f"{addr[0]}:{addr[1]}")
    except OSError:
        pass
    finally:
        s.close()


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x, y):
        if not REPORT["spawned"]:
            subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(0.2)", "ladder-hostile-orphan"],
                             start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            REPORT["spawned"] = True
            print("LADDER_HOSTILE_REPORT " + json.dumps(REPORT), flush=True)
        out = torch.empty_like(x)
        add_kernel[(triton.cdiv(x.numel(), 128),)](x, y, out, x.numel(), BLOCK=128)
        return out
