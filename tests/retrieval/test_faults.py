"""Fault injection (issue 8.3). Each fault ends with a clear error or a recovered KB, and no acknowledged write is
lost: kill -9 during a synthesis job and during a burst of review decisions; a full disk under the KB home and
under the index only (a real tmpfs when this process may mount one); a corrupt Chroma directory; a second
writer process on the same KB home."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
import pytest

from kb.errors import StorageError, Unavailable
from kb.models import (
    PatternCard,
    ProblemRef,
    Round,
    RoundRewrite,
    Timing,
    TimingProtocol,
    Trajectory,
    Validation,
    parse_card,
)
from kb.service import KnowledgeBase
from kb.settings import Settings
from retrieval.convert import to_proto_card
from retrieval.errors import CODE_KEY
from retrieval.v1 import ladder_pb2 as pb
from retrieval.v1 import ladder_pb2_grpc as pb_grpc

TOKENS = {"c-fault-7f3a-0123456789": ["contributor"], "r-fault-91bd-0123456789": ["reviewer"]}
CONTRIB = (("authorization", "Bearer c-fault-7f3a-0123456789"),)
REVIEW = (("authorization", "Bearer r-fault-91bd-0123456789"),)


# ---------------------------------------------------------------- helpers
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Served:
    """``python -m optimizer.cli serve`` on ``home`` as a real process; its log goes to a file (a pipe could fill)."""

    def __init__(self, home: Path, log: Path) -> None:
        self.port = _free_port()
        self.log = log
        env = {**os.environ, "LADDER_HOME": str(home), "LADDER_TOKENS": json.dumps(TOKENS), "HF_HUB_OFFLINE": "1",
               "TOKENIZERS_PARALLELISM": "false"}
        with open(log, "w") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "optimizer.cli", "serve", "--port", str(self.port)],
                                         env=env, stdout=out, stderr=subprocess.STDOUT)
        from retrieval.client import GrpcKBClient

        try:
            with GrpcKBClient(f"127.0.0.1:{self.port}") as c:
                c.wait_ready(timeout=300)
        except Exception:  # noqa: BLE001 - any failure to come up: show the server's log
            self.kill()
            raise AssertionError(f"server did not come up:\n{self.output()}") from None
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.port}")
        self.k = pb_grpc.KnowledgeServiceStub(self.channel)
        self.s = pb_grpc.SynthesisServiceStub(self.channel)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self) -> str:
        """kill -9, then return the log (which must never hold a token)."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(60)
        if hasattr(self, "channel"):
            self.channel.close()
        out = self.output()
        assert not any(t in out for t in TOKENS), "a bearer token reached the server log"
        return out


def _restart(home: Path, embedder):
    """The restart after the crash: a real server (in-process, sharing the test's embedding model)."""
    from retrieval.server.app import create_server

    settings = Settings(home=home, tokens=TOKENS, port=0)
    handle = create_server(settings, kb=KnowledgeBase.open(settings, embedder=embedder), bind="127.0.0.1:0")
    assert handle.wait_ready(120)
    ch = grpc.insecure_channel(f"127.0.0.1:{handle.port}")
    return handle, pb_grpc.KnowledgeServiceStub(ch), pb_grpc.SynthesisServiceStub(ch), ch


def _index_matches_store(kb: KnowledgeBase) -> None:
    served = {c.id: c.version for c in kb.store.served_cards()}
    assert kb.index.versions == served, "the vector index does not hold exactly the served card versions"


def _trajectory(k: int, rounds: int = 5) -> Trajectory:
    rs = [Round(index=i, levels_reached=["L1", "L2"], outcome="improved" if i % 2 else "neutral",
                hypothesis=f"trajectory {k} round {i}: tile {16 << (i % 4)} rows per program hides launch latency "
                           f"on shape {k * 37 % 997}x{i * 53 % 389}",
                rewrite=RoundRewrite(family="rows-per-program" if i % 2 else f"fault-new-family-{k}-{i}",
                                     description=f"process {2 << i} rows per program (variant {k}.{i})",
                                     diff=f"-ROWS = 1\n+ROWS = {2 << i}  # variant {k}.{i}\n"),  # distinct evidence
                validation=Validation(passed=True),
                timing=Timing(protocol=TimingProtocol(method="do_bench-median"), geomean_speedup=1.0 + (i % 3) / 4))
          for i in range(1, rounds + 1)]
    return Trajectory(id=f"fault-traj-{k:03d}", problem=ProblemRef(name=f"softmax_{k % 7}"), backend="cuda", rounds=rs)


@pytest.fixture
def home(tmp_path: Path, seeded_home: Path) -> Path:
    h = tmp_path / "kb"
    shutil.copytree(seeded_home, h, ignore=shutil.ignore_patterns("writer.lock"))
    return h


# ---------------------------------------------------------------- kill -9
@pytest.mark.slow
def test_kill9_during_synthesis_job(home: Path, tmp_path: Path, embedder):
    srv = Served(home, tmp_path / "serve.log")
    acked = []
    try:
        for k in range(60):
            req = pb.SubmitTrajectoryRequest(trajectory_json=_trajectory(k).model_dump_json())
            assert srv.s.SubmitTrajectory(req, metadata=CONTRIB, timeout=60).created
            acked.append(f"fault-traj-{k:03d}")
        job = srv.s.RunSynthesis(pb.RunSynthesisRequest(only_new=True), metadata=REVIEW, timeout=60)
        while job.state != "running":
            assert job.state == "queued", f"the job ended ({job.state}) before it could be interrupted: {job.message}"
            time.sleep(0.005)
            job = srv.s.GetJob(pb.GetJobRequest(job_id=job.job_id), timeout=60)
    finally:
        srv.kill()

    handle, _, synth, ch = _restart(home, embedder)
    try:
        store = handle.kb.store
        assert set(acked) <= {t.id for t in store.trajectories()}
        got = synth.GetJob(pb.GetJobRequest(job_id=job.job_id), timeout=30)
        assert got.state == "failed" and "interrupted" in got.message
        done = store._q("SELECT count(*) FROM trajectories WHERE synthesized=1")[0][0]
        assert done in (0, len(acked)), "a synthesis batch was half-committed"
        store.check()
        _index_matches_store(handle.kb)
        rerun = synth.RunSynthesis(pb.RunSynthesisRequest(only_new=False), metadata=REVIEW, timeout=60)
        while rerun.state in ("queued", "running"):
            time.sleep(0.2)
            rerun = synth.GetJob(pb.GetJobRequest(job_id=rerun.job_id), timeout=30)
        assert rerun.state == "done", rerun.message
        assert store._q("SELECT count(*) FROM trajectories WHERE synthesized=0")[0][0] == 0
    finally:
        ch.close()
        handle.stop(0)


def _queue_proposals(home: Path, embedder, n: int) -> list[dict]:
    """What a synthesis run would have queued: n new-family proposals (stored directly, to keep the test fast)."""
    from synthesis.models import Proposal

    docs = []
    with KnowledgeBase.open(Settings(home=home), embedder=embedder) as kb:
        for i in range(n):
            card = PatternCard(id=f"fault-fam-{i:03d}", title=f"Fault family {i}", status="proposed",
                               summary=f"A synthesized family number {i} used by the review-burst fault test.",
                               body="b", backends=["cuda"], levels=["L1"], sources=["trajectory:fault"])
            p = Proposal(id=f"fault-prop-{i:03d}", kind="new_family", card=card, confidence=0.6)
            kb.store.put_proposal(p.id, p.status, p.model_dump(mode="json"))
            docs.append(p.model_dump(mode="json"))
    return docs


@pytest.mark.slow
def test_kill9_during_review_burst(home: Path, tmp_path: Path, embedder):
    props = _queue_proposals(home, embedder, 60)
    editable, decidable = props[:2], props[2:]
    srv = Served(home, tmp_path / "serve.log")
    decided: dict[str, str] = {}
    edits: dict[str, int] = {}
    stop = threading.Event()

    def decide(mine: list[dict]) -> None:
        for n, p in enumerate(mine):
            if stop.is_set():
                return
            action, status = ("approve", "approved") if n % 2 == 0 else ("reject", "rejected")
            req = pb.ReviewRequest(proposal_id=p["id"], action=action, reason="burst", reviewer="ana")
            try:
                srv.s.Review(req, metadata=REVIEW, timeout=60)
            except grpc.RpcError:
                return
            decided[p["id"]] = status

    def edit(p: dict) -> None:
        i = 0
        while not stop.is_set():
            summary = f"Edited summary number {i} of a burst-reviewed family."
            card = to_proto_card(parse_card(dict(p["card"], summary=summary)))
            req = pb.ReviewRequest(proposal_id=p["id"], action="edit", card=card, reason=f"edit {i}", reviewer="ben")
            try:
                srv.s.Review(req, metadata=REVIEW, timeout=60)
            except grpc.RpcError:
                return
            edits[p["id"]] = i
            i += 1

    threads = [threading.Thread(target=decide, args=(decidable[k::2],)) for k in range(2)]
    threads += [threading.Thread(target=edit, args=(p,)) for p in editable]
    for t in threads:
        t.start()
    try:
        deadline = time.monotonic() + 240
        while (len(decided) < 8 or sum(edits.values()) < 8) and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        srv.kill()
        stop.set()
        for t in threads:
            t.join(60)
    assert len(decided) >= 8 and len(decided) < len(decidable), "the kill did not land inside the burst"

    handle, knowledge, synth, ch = _restart(home, embedder)
    try:
        for pid, status in decided.items():
            got = synth.GetProposal(pb.GetProposalRequest(proposal_id=pid), timeout=30).proposal
            assert got.status == status, f"acknowledged decision on {pid} lost"
            if status == "approved":
                assert knowledge.GetCard(pb.GetCardRequest(id=got.card.id), timeout=30).status == "active"
        for pid, last in edits.items():
            got = synth.GetProposal(pb.GetProposalRequest(proposal_id=pid), timeout=30).proposal
            assert int(got.reviewer_notes.split()[-1]) >= last, f"acknowledged edit {last} of {pid} lost"
        handle.kb.store.check()
        _index_matches_store(handle.kb)
    finally:
        ch.close()
        handle.stop(0)


# ---------------------------------------------------------------- full disk
@pytest.fixture
def tmpfs(tmp_path: Path):
    """A real, tiny filesystem (tmpfs). Mounting needs root (CAP_SYS_ADMIN); elsewhere the test is skipped and
    ``test_full_disk_simulated`` still covers the error path."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mnt)], capture_output=True, text=True, check=False)
    if r.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def _fill(directory: Path) -> Path:
    """Write zeros until the filesystem holding ``directory`` is full (ENOSPC)."""
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * (1 << 16))
    except OSError as e:
        assert e.errno == 28, e
    finally:
        os.close(fd)
    return filler


def _card(cid: str, title: str = "") -> pb.Card:
    return pb.Card(id=cid, kind="pattern", title=title or f"Card {cid}", body="b", backends=["cuda"], levels=["L1"],
                   summary="A card written while the disk is being filled.", sources=["https://example.org"],
                   rewrite=pb.Rewrite(description="r"))


def test_full_disk_under_the_kb_home(tmpfs: Path, seeded_home: Path, embedder):
    """The store cannot commit: the write fails with UNAVAILABLE / code storage saying the disk is full, reads go
    on, and writes work again once space is freed."""
    from kb.errors import NotFound
    from retrieval.server.app import create_server

    home = tmpfs / "kb"
    shutil.copytree(seeded_home, home, ignore=shutil.ignore_patterns("writer.lock"))
    settings = Settings(home=home, tokens=TOKENS, port=0)
    handle = create_server(settings, kb=KnowledgeBase.open(settings, embedder=embedder), bind="127.0.0.1:0")
    assert handle.wait_ready(120)
    ch = grpc.insecure_channel(f"127.0.0.1:{handle.port}")
    stub, synth = pb_grpc.KnowledgeServiceStub(ch), pb_grpc.SynthesisServiceStub(ch)
    try:
        stub.UpsertCard(pb.UpsertCardRequest(card=_card("disk-before")), metadata=CONTRIB, timeout=60)
        filler = _fill(tmpfs)
        writes = [(stub.UpsertCard, pb.UpsertCardRequest(card=_card("disk-full"))),
                  (synth.SubmitTrajectory, pb.SubmitTrajectoryRequest(trajectory_json=_trajectory(1).model_dump_json()))]
        for call, req in writes:
            with pytest.raises(grpc.RpcError) as e:
                call(req, metadata=CONTRIB, timeout=60)
            assert e.value.code() == grpc.StatusCode.UNAVAILABLE
            assert dict(e.value.trailing_metadata())[CODE_KEY] == "storage" and "full" in e.value.details()
        assert stub.GetCard(pb.GetCardRequest(id="disk-before"), timeout=30).id == "disk-before"
        assert stub.Search(pb.SearchRequest(text="argmax on Ascend"), timeout=30).hits
        filler.unlink()
        stub.UpsertCard(pb.UpsertCardRequest(card=_card("disk-after")), metadata=CONTRIB, timeout=60)
    finally:
        ch.close()
        handle.stop(0)
    with KnowledgeBase.open(Settings(home=home), embedder=embedder) as kb:
        assert kb.get_card("disk-before") and kb.get_card("disk-after")
        with pytest.raises(NotFound):
            kb.get_card("disk-full")
        kb.store.check()
        _index_matches_store(kb)


def test_full_disk_under_the_index_only(home: Path, tmpfs: Path, embedder, caplog):
    """The store commits but Chroma cannot persist: the write is acknowledged (it is durable), search serves the
    new vectors from memory, and a restart re-embeds what the persisted index lacks."""
    from kb.models.search import SearchQuery

    shutil.copytree(home / "chroma", tmpfs / "chroma")
    shutil.rmtree(home / "chroma")
    (home / "chroma").symlink_to(tmpfs / "chroma")
    title = "Quokka lighthouse tiling for the full index disk"
    kb = KnowledgeBase.open(Settings(home=home), embedder=embedder)
    try:
        filler = _fill(tmpfs)
        from retrieval.convert import from_proto_card

        stored = kb.upsert_card(from_proto_card(_card("index-full", title)))
        assert stored.version == 1 and kb.index.persist_error
        kb.set_card_status("index-full", "active", version=1)
        assert any("served from memory" in r.getMessage() or "serves them from memory" in r.getMessage()
                   for r in caplog.records)
        assert kb.search(SearchQuery(text=title, mode="dense", top_k=3))[0].card.id == "index-full"
        filler.unlink()
    finally:
        kb.close()
    script = ("import json; from kb.service import KnowledgeBase; from kb.settings import Settings; "
              f"kb = KnowledgeBase.open(Settings(home={str(home)!r})); "
              "print(json.dumps([kb.index.versions == {c.id: c.version for c in kb.store.served_cards()}, "
              "'index-full' in kb.index.versions, kb.index.persist_error])); kb.close()")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"}, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [True, True, None]


def test_full_disk_simulated(kb):
    """Where no tmpfs can be mounted: SQLite's 'database or disk is full' becomes a StorageError, nothing is
    written, and the KB stays readable."""
    from kb.models.search import SearchQuery
    from retrieval.convert import from_proto_card

    real = kb.store._db

    class Full:
        def execute(self, sql: str, *args):
            if sql.lstrip().upper().startswith(("INSERT", "UPDATE")):
                raise sqlite3.OperationalError("database or disk is full")
            return real.execute(sql, *args)

        def __getattr__(self, name: str):
            return getattr(real, name)

    before = kb.store.count_cards()
    kb.store._db = Full()
    try:
        with pytest.raises(StorageError, match="full"):
            kb.upsert_card(from_proto_card(_card("sim-full")))
        assert kb.search(SearchQuery(text="argmax on Ascend"))
    finally:
        kb.store._db = real
    assert kb.store.count_cards() == before
    kb.store.check()


# ---------------------------------------------------------------- corrupt index
@pytest.mark.slow
@pytest.mark.parametrize("damage", ["garbage", "truncated", "segments"])
def test_corrupt_chroma_index_is_rebuilt(home: Path, embedder, damage: str):
    from kb.models.search import SearchQuery

    index = home / "chroma"
    for p in sorted(index.rglob("*")):
        if not p.is_file() or (damage == "segments" and p.parent == index):
            continue
        p.write_bytes(b"" if damage == "truncated" else os.urandom(max(p.stat().st_size, 4096)))
    with KnowledgeBase.open(Settings(home=home), embedder=embedder) as kb:
        _index_matches_store(kb)
        if damage == "garbage":
            assert list(home.glob("chroma.corrupt-*")), "the unreadable index was not moved aside"
        cards = kb.store.served_cards()
        for card in cards[:: max(1, len(cards) // 6)]:
            hits = kb.search(SearchQuery(text=f"{card.title}. {card.summary}", mode="dense", top_k=3))
            assert card.id in [h.card.id for h in hits], f"{card.id} is not searchable after the rebuild"


# ---------------------------------------------------------------- second writer
@pytest.mark.slow
def test_second_writer_on_the_same_home_gets_a_clear_error(home: Path, tmp_path: Path, embedder):
    from typer.testing import CliRunner

    from optimizer.cli.app import app

    srv = Served(home, tmp_path / "serve.log")
    try:
        with pytest.raises(Unavailable) as e:
            KnowledgeBase.open(Settings(home=home), embedder=embedder)
        assert str(srv.proc.pid) in str(e.value) and "--server" in str(e.value)
        r = CliRunner().invoke(app, ["kb", "stats", "--home", str(home)])  # a read command: opens read-only
        assert r.exit_code == 0 and f"process {srv.proc.pid} (a server) owns it" in " ".join(r.output.split())
        env = {**os.environ, "LADDER_HOME": str(home), "HF_HUB_OFFLINE": "1"}
        second = subprocess.run([sys.executable, "-m", "optimizer.cli", "serve", "--port", str(_free_port())],
                                env=env, capture_output=True, text=True, timeout=300, check=False)
        assert second.returncode == 2, second.stdout + second.stderr
        assert "already open for writing" in " ".join((second.stdout + second.stderr).split())
        assert srv.k.GetCard(pb.GetCardRequest(id="top2-pairwise-max"), timeout=30).id == "top2-pairwise-max"
        srv.k.UpsertCard(pb.UpsertCardRequest(card=_card("after-second-writer")), metadata=CONTRIB, timeout=60)
    finally:
        srv.kill()
