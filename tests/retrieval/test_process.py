"""The server as a real process: graceful SIGTERM, and kill -9 during a burst of writes loses no acked write."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import pytest

from retrieval.v1 import ladder_pb2 as pb
from retrieval.v1 import ladder_pb2_grpc as pb_grpc

CONTRIB = (("authorization", "Bearer contrib-0123456789abcdef"),)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(home: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "LADDER_HOME": str(home), "LADDER_TOKENS": json.dumps({"contrib-0123456789abcdef": ["contributor"]}),
           "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "optimizer.cli", "serve", "--port", str(port)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    from retrieval.client import GrpcKBClient

    with GrpcKBClient(f"127.0.0.1:{port}") as c:
        c.wait_ready(timeout=180)
    return proc


def _card(i: int) -> pb.Card:
    return pb.Card(id=f"burst-{i:04d}", kind="pattern", title=f"Burst card {i}", summary="A burst-written card.",
                   body="b", backends=["cuda"], levels=["L1"], sources=["https://example.org"],
                   rewrite=pb.Rewrite(description="r"))


@pytest.fixture
def home(tmp_path: Path, seeded_home: Path) -> Path:
    h = tmp_path / "kb"
    shutil.copytree(seeded_home, h, ignore=shutil.ignore_patterns("writer.lock"))
    return h


def test_kill9_during_write_burst_loses_no_acknowledged_write(home: Path):
    port = _free_port()
    proc = _start(home, port)
    acked: list[str] = []
    stop = threading.Event()

    def writer(offset: int) -> None:
        ch = grpc.insecure_channel(f"127.0.0.1:{port}")
        stub = pb_grpc.KnowledgeServiceStub(ch)
        i = offset
        while not stop.is_set():
            try:
                stub.UpsertCard(pb.UpsertCardRequest(card=_card(i)), metadata=CONTRIB, timeout=10)
                acked.append(f"burst-{i:04d}")
            except grpc.RpcError:
                return
            i += 2
        ch.close()

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 60
    while len(acked) < 10 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    stop.set()
    for t in threads:
        t.join(30)
    assert len(acked) >= 10

    from kb.service import KnowledgeBase
    from kb.settings import Settings

    kb = KnowledgeBase.open(Settings(home=home))  # reopens: takes the (released) writer lock, syncs the index
    try:
        for cid in acked:
            assert kb.get_card(cid).id == cid
        assert kb.stats()["indexed_vectors"] == kb.stats()["cards"]
        kb.store.check()
        assert kb.rebuild() == kb.stats()["cards"]
    finally:
        kb.close()


def test_sigterm_shuts_down_gracefully(home: Path):
    port = _free_port()
    proc = _start(home, port)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    assert "shutting down gracefully" in out
