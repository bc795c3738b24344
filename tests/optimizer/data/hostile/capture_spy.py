"""Hostile kernel file for IR capture (issue 32): at import (the capture worker imports the file to find the kernel)
it looks for secrets, another KB home and the network, tries to write outside the capture folder, and starts a
new-session process that would outlive the capture; then it blocks when ``LADDER_HOSTILE_HANG`` names a file that
exists (the timeout test). What worked is printed on one line (``LADDER_HOSTILE_REPORT {...}``)."""

import glob
import json
import os
import socket
import subprocess
import sys
import time

import triton
import triton.language as tl

REPORT = {"env": sorted(k for k in os.environ if k.startswith("LADDER_") or "TOKEN" in k or "API_KEY" in k),
          "proc_environ": [], "home": False, "wrote": [], "socket": []}
for path in glob.glob("/proc/[0-9]*/environ"):
    try:
        if b"LADDER_TOKEN=" in open(path, "rb").read():
            REPORT["proc_environ"].append(path)
    except OSError:
        pass
try:
    REPORT["home"] = bool(open("/tmp/ladder-hostile-home/kb.sqlite3", "rb").read())
except OSError:
    pass
for target in (os.path.join(os.path.dirname(os.path.abspath(__file__)), "escaped.txt"), "/tmp/ladder-hostile-escape.txt"):
    try:
        open(target, "w").write("escaped")
        REPORT["wrote"].append(target)
    except OSError:
        pass
s = socket.socket()
s.settimeout(1.0)
try:
    s.connect(("127.0.0.1", 47391))
    REPORT["socket"].append("127.0.0.1:47391")
except OSError:
    pass
subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(0.2)", "ladder-hostile-orphan"],
                 start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("LADDER_HOSTILE_REPORT " + json.dumps(REPORT), flush=True)
if os.path.exists(os.path.join(os.path.dirname(os.path.abspath(__file__)), "problem.py")) and os.environ.get(
        "TRITON_HOSTILE_HANG") == "1":
    time.sleep(600)


@triton.jit
def copy_kernel(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(Y + offs, tl.load(X + offs, mask=offs < n), mask=offs < n)
