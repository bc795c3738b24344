"""Red-team probes for the KB side of issue 32 (items 3-8), loopback only, on scratch homes.

Each probe reproduces one finding of the red team (a hostile contributor or a careless user) against a scratch
KB home and an in-process server (gRPC + the review page on 127.0.0.1), or the ``ladder`` CLI in a subprocess,
and prints PASS (the finding is fixed) or FAIL with what it saw. Nothing leaves the machine. Items 1-2
(sandboxing candidate code) have their own probes.

Usage: python benchmarks/redteam/kb_probes.py [--out benchmarks/results/redteam]
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
from _provenance import provenance  # noqa: E402

REVIEW_TOKEN = "redteam-review-0123456789"
CONTRIB_TOKEN = "redteam-contrib-0123456789"
TOKENS = {REVIEW_TOKEN: {"name": "ana", "roles": ["reviewer"]}, CONTRIB_TOKEN: ["contributor"]}
PROBES: list[tuple[str, str, Callable[[Lab], str]]] = []


def probe(item: str, name: str) -> Callable:
    def wrap(fn: Callable[[Lab], str]) -> Callable[[Lab], str]:
        PROBES.append((item, name, fn))
        return fn

    return wrap


class Failed(Exception):
    pass


def check(ok: bool, seen: str) -> None:
    if not ok:
        raise Failed(seen)


class Lab:
    """The scratch world: a seeded home copied per probe, one shared embedder, one served home."""

    def __init__(self, root: Path) -> None:
        from kb.search.embedding import Embedder
        from kb.service import KnowledgeBase
        from kb.settings import Settings

        self.root = root
        self.embedder = Embedder()
        self.seed = root / "seed"
        KnowledgeBase.open(Settings(home=self.seed), embedder=self.embedder).close()
        self._server = None
        self._n = 0

    def home(self) -> Path:
        self._n += 1
        h = self.root / f"home{self._n}"
        shutil.copytree(self.seed, h, ignore=shutil.ignore_patterns("writer.lock"))
        return h

    def settings(self, home: Path, **kw):  # noqa: ANN201
        from kb.settings import Settings

        return Settings(home=home, tokens=TOKENS, port=0, **kw)

    def server(self, **kw):  # noqa: ANN201 - a fresh server with the review page
        from kb.service import KnowledgeBase
        from retrieval.server.app import create_server

        settings = self.settings(self.home(), **kw)
        handle = create_server(settings, kb=KnowledgeBase.open(settings, embedder=self.embedder),
                               bind="127.0.0.1:0", web_port=0)
        handle.wait_ready(300)
        return handle

    def cli(self, *args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
        e = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), **(env or {})}
        for k in ("LADDER_HOME", "LADDER_SNAPSHOT", "LADDER_TOKEN", "LADDER_TOKENS", "LADDER_DEBUG"):
            if not env or k not in env:
                e.pop(k, None)
        return subprocess.run([sys.executable, "-m", "optimizer.cli", *args], capture_output=True, text=True,
                              timeout=timeout, env=e, cwd=str(ROOT))


def _stub(handle):  # noqa: ANN001, ANN202
    import grpc

    from retrieval.v1 import ladder_pb2_grpc as pb_grpc

    ch = grpc.insecure_channel(f"127.0.0.1:{handle.port}", options=[("grpc.max_send_message_length", 64 << 20),
                                                                     ("grpc.max_receive_message_length", 64 << 20)])
    return ch, pb_grpc.KnowledgeServiceStub(ch), pb_grpc.SynthesisServiceStub(ch)


def _auth(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


def _rpc_error(fn: Callable[[], object]) -> tuple[str, str, str]:
    import grpc

    try:
        fn()
    except grpc.RpcError as e:
        meta = dict(e.trailing_metadata() or ())
        return e.code().name, meta.get("ladder-error-field", ""), e.details() or ""
    return "OK", "", ""


def _card(cid: str, **kw):  # noqa: ANN202
    from kb.models import PatternCard

    return PatternCard(**({"id": cid, "title": f"Probe {cid}", "summary": "A card written by the red-team probes.",
                           "backends": ["cuda"], "levels": ["L1"]} | kw))


def _traj(tid: str, *, note: str = "", speedup: float = 1.6, problem: str = "softmax", family: str = "x",
          diff: str = "-a\n+b\n"):
    from kb.models import ProblemRef, Round, RoundRewrite, Timing, TimingProtocol, Trajectory, Validation

    r = Round(index=1, levels_reached=["L1", "L2"], hypothesis="rows per program", outcome="improved"
              if speedup > 1 else "regressed", rewrite=RoundRewrite(family=family, description="loop rows", diff=diff),
              validation=Validation(passed=True), cards_cited=[family], next_recommendation=note,
              timing=Timing(protocol=TimingProtocol(method="do_bench-median"), geomean_speedup=speedup))
    return Trajectory(id=tid, problem=ProblemRef(name=problem), backend="cuda", rounds=[r])


# ---------------------------------------------------------------- item 3: bounded documents
@probe("3", "480 preconditions of ~8 KiB each are refused, naming the list")
def p_list_cap(lab: Lab) -> str:
    from retrieval import convert
    from retrieval.v1 import ladder_pb2 as pb

    h = lab.server()
    ch, k, _ = _stub(h)
    try:
        card = _card("rt-huge", preconditions=["p" * (8 * 1024 - 100)] * 480)
        code, field, _ = _rpc_error(lambda: k.UpsertCard(pb.UpsertCardRequest(card=convert.to_proto_card(card)),
                                                         metadata=_auth(CONTRIB_TOKEN), timeout=120))
        check(code == "INVALID_ARGUMENT" and field == "card.preconditions", f"{code} {field}")
        return f"{code} naming {field}"
    finally:
        ch.close()
        h.stop(0)


@probe("3", "a card over the whole-card cap (a list of evidence under every field cap) is refused")
def p_card_cap(lab: Lab) -> str:
    from retrieval import convert
    from retrieval.v1 import ladder_pb2 as pb

    h = lab.server()
    ch, k, _ = _stub(h)
    try:
        card = _card("rt-big", evidence=[{"kind": "doc", "text": "e" * 8000} for _ in range(60)])
        code, field, details = _rpc_error(lambda: k.UpsertCard(
            pb.UpsertCardRequest(card=convert.to_proto_card(card)), metadata=_auth(CONTRIB_TOKEN), timeout=120))
        check(code == "INVALID_ARGUMENT" and field == "card.evidence" and "LADDER_MAX_CARD_BYTES" in details,
              f"{code} {field} {details[:80]}")
        return f"{code} naming {field}"
    finally:
        ch.close()
        h.stop(0)


@probe("3", "20 cards at the cap, then a small write: the next Search stays fast")
def p_search_after_writes(lab: Lab) -> str:
    from benchmarks_bounded import capped_card  # type: ignore[import-not-found]

    from kb.models import parse_card
    from retrieval import convert
    from retrieval.v1 import ladder_pb2 as pb

    h = lab.server()
    ch, k, _ = _stub(h)
    try:
        for i in range(20):
            big = parse_card(capped_card(i, h.settings.limits))
            k.UpsertCard(pb.UpsertCardRequest(card=convert.to_proto_card(big)),
                         metadata=_auth(CONTRIB_TOKEN), timeout=300)
        t0 = time.perf_counter()
        k.Search(pb.SearchRequest(text="first search after the big writes"), timeout=300)
        first = time.perf_counter() - t0
        k.UpsertCard(pb.UpsertCardRequest(card=convert.to_proto_card(_card("rt-small"))), metadata=_auth(CONTRIB_TOKEN),
                     timeout=60)
        t0 = time.perf_counter()
        k.Search(pb.SearchRequest(text="search after one small write"), timeout=300)
        after = time.perf_counter() - t0
        check(first < 5.0 and after < 2.0, f"first {first:.2f} s, after a small write {after:.2f} s")
        return f"first Search {first:.2f} s, after a small write {after:.2f} s (red team: 95.8 s and 4.5 s)"
    finally:
        ch.close()
        h.stop(0)


# ---------------------------------------------------------------- item 4: evidence
@probe("4", "5 copies changing only next_recommendation count once")
def p_near_dupes(lab: Lab) -> str:
    from kb.service import KnowledgeBase

    kb = KnowledgeBase.open(lab.settings(lab.home()), embedder=lab.embedder)
    try:
        created = [kb.submit_trajectory(_traj(f"rt-dup-{i}", note=f"recommendation {i}")) for i in range(6)]
        unique = kb.store.count_trajectories(unique=True)
        check(created == [True] + [False] * 5 and unique == 1, f"created {created}, unique {unique}")
        return f"created {created.count(True)} of 6, unique evidence {unique}"
    finally:
        kb.close()


@probe("4", "3 prose copies at 0.5x do not propose deprecating a curated card")
def p_deprecation_copies(lab: Lab) -> str:
    from kb.service import KnowledgeBase
    from synthesis.curation import Curator

    kb = KnowledgeBase.open(lab.settings(lab.home()), embedder=lab.embedder)
    try:
        target = next(c for c in kb.store.served_cards() if c.kind == "pattern" and c.status == "active")
        for i in range(3):
            kb.submit_trajectory(_traj(f"rt-slow-{i}", note=f"n{i}", speedup=0.5, family=target.id))
        cur = Curator(kb)
        cur.run()
        cur.close()
        deps = [p for p in cur.proposals("pending") if p.kind == "deprecation" and p.target_family == target.id]
        stats = kb.get_card(target.id).stats
        check(not deps and stats.lift_n <= 1, f"{len(deps)} deprecation proposals, lift_n {stats.lift_n}")
        return f"no deprecation of {target.id}; lift_n {stats.lift_n}"
    finally:
        kb.close()


@probe("4", "a 1e300 speedup is refused naming the field")
def p_wild_speedup(lab: Lab) -> str:
    from retrieval import convert

    h = lab.server()
    ch, _, s = _stub(h)
    try:
        req = convert.to_proto_trajectory(_traj("rt-wild", speedup=1e300))
        code, field, _ = _rpc_error(lambda: s.SubmitTrajectory(req, metadata=_auth(CONTRIB_TOKEN), timeout=60))
        check(code == "INVALID_ARGUMENT" and field.endswith("geomean_speedup"), f"{code} {field}")
        return f"{code} naming {field}"
    finally:
        ch.close()
        h.stop(0)


# ---------------------------------------------------------------- item 5: synthesis and review consistency
@probe("5", "a trajectory submitted during a synthesis run is mined by the next run")
def p_arrival_during_run(lab: Lab) -> str:
    import synthesis.curation as curation
    from kb.service import KnowledgeBase

    kb = KnowledgeBase.open(lab.settings(lab.home()), embedder=lab.embedder)
    real = curation.synthesize
    try:
        kb.submit_trajectory(_traj("rt-first"))

        def slow(*a, **kw):  # noqa: ANN002, ANN003, ANN202
            kb.submit_trajectory(_traj("rt-late", problem="layernorm", diff="-c\n+d\n"))
            return real(*a, **kw)

        curation.synthesize = slow
        cur = curation.Curator(kb)
        cur.run()
        curation.synthesize = real
        left = [t.id for t in kb.store.trajectories(only_new=True)]
        cur.run()
        after = [t.id for t in kb.store.trajectories(only_new=True)]
        cur.close()
        check(left == ["rt-late"] and after == [], f"after run 1 unsynthesized {left}, after run 2 {after}")
        return "left unsynthesized by the running job, mined by the next"
    finally:
        curation.synthesize = real
        kb.close()


@probe("5", "two proposals with one new card id: approving the second never replaces the live card")
def p_same_new_id(lab: Lab) -> str:
    from kb.service import KnowledgeBase
    from synthesis.curation import Curator
    from synthesis.models import EvidenceRef, Proposal

    kb = KnowledgeBase.open(lab.settings(lab.home()), embedder=lab.embedder)
    try:
        for n, title in ((1, "First family"), (2, "Second family")):
            p = Proposal(id=f"new-family.rt-same.000{n}", kind="new_family", confidence=0.7,
                         card=_card("rt-same", title=title, status="proposed"),
                         evidence=[EvidenceRef(round_ref=f"rt{n}#1")])
            kb.store.put_proposal(p.id, p.status, p.model_dump(mode="json"))
        cur = Curator(kb)
        cur.review("new-family.rt-same.0001", "approve", reviewer="ana")
        second = cur.review("new-family.rt-same.0002", "approve", reviewer="ana")
        cur.close()
        live = kb.get_card("rt-same")
        check(live.title == "First family" and live.version == 1 and second.card.id != "rt-same",
              f"live {live.title} v{live.version}; second stored as {second.card.id}")
        return f"live card kept (v1); the second stored as {second.card.id}"
    finally:
        kb.close()


@probe("5", "SetCardStatus without a version does not activate a version slipped in later")
def p_slipped_version(lab: Lab) -> str:
    from retrieval import convert
    from retrieval.v1 import ladder_pb2 as pb

    h = lab.server()
    ch, k, _ = _stub(h)
    try:
        up = lambda c: k.UpsertCard(pb.UpsertCardRequest(card=convert.to_proto_card(c)),  # noqa: E731
                                    metadata=_auth(CONTRIB_TOKEN), timeout=60)
        up(_card("rt-slip", title="Reviewed version"))
        up(_card("rt-slip", title="Slipped in later"))
        code, field, _ = _rpc_error(lambda: k.SetCardStatus(pb.SetCardStatusRequest(id="rt-slip", status="active"),
                                                            metadata=_auth(REVIEW_TOKEN), timeout=60))
        ok = k.SetCardStatus(pb.SetCardStatusRequest(id="rt-slip", status="active", version=1),
                             metadata=_auth(REVIEW_TOKEN), timeout=60)
        served = k.GetCard(pb.GetCardRequest(id="rt-slip"), timeout=60)
        check(code == "INVALID_ARGUMENT" and field == "version" and ok.version == 1
              and served.title == "Reviewed version", f"{code} {field}; served {served.title!r}")
        return f"without a version: {code} naming {field}; with version 1: v1 served"
    finally:
        ch.close()
        h.stop(0)


@probe("5", "approving a new version retires the old one")
def p_one_active(lab: Lab) -> str:
    from kb.models import Evidence
    from kb.service import KnowledgeBase
    from synthesis.curation import Curator
    from synthesis.models import EvidenceRef, Proposal

    kb = KnowledgeBase.open(lab.settings(lab.home()), embedder=lab.embedder)
    try:
        t = next(c for c in kb.store.served_cards() if c.kind == "pattern" and c.status == "active")
        p = Proposal(id=f"example.{t.id}.rt", kind="example", target_family=t.id, base_version=t.version,
                     confidence=0.8, evidence=[EvidenceRef(round_ref="rt#1")],
                     card=t.model_copy(update={"evidence": [Evidence(kind="measurement", text="r", source="rt#1")]}))
        kb.store.put_proposal(p.id, p.status, p.model_dump(mode="json"))
        cur = Curator(kb)
        cur.review(p.id, "approve", reviewer="ana")
        cur.close()
        statuses = [v.status for v in kb.store.versions(t.id)]
        check(statuses.count("active") == 1 and statuses[-1] == "active", f"version statuses {statuses}")
        return f"versions {statuses}"
    finally:
        kb.close()


# ---------------------------------------------------------------- item 6: auth hygiene
@probe("6", 'an empty token ({"": ["reviewer"]}) is refused at start-up')
def p_empty_token(lab: Lab) -> str:
    r = lab.cli("serve", "--home", str(lab.home()), "--port", "0",
                env={"LADDER_TOKENS": json.dumps({"": ["reviewer"]})}, timeout=120)
    lines = [x for x in r.stderr.splitlines() if x.strip() and not x.startswith("KB:")]
    check(r.returncode == 2 and len(lines) == 1 and "LADDER_TOKENS" in lines[0],
          f"rc {r.returncode}: {r.stderr[-300:]}")
    return lines[0][:140]


@probe("6", "a 3-character token is refused at start-up")
def p_short_token(lab: Lab) -> str:
    r = lab.cli("serve", "--home", str(lab.home()), "--port", "0",
                env={"LADDER_TOKENS": json.dumps({"abc": ["reviewer"]})}, timeout=120)
    check(r.returncode == 2 and "16" in r.stderr and "Traceback" not in r.stderr,
          f"rc {r.returncode}: {r.stderr[-300:]}")
    return "refused, one line"


@probe("6", "a bare 'Authorization: Bearer ' cannot deprecate a live card")
def p_bare_bearer(lab: Lab) -> str:
    from retrieval.v1 import ladder_pb2 as pb

    h = lab.server()  # (an empty token in LADDER_TOKENS can no longer be configured: see the start-up probes)
    ch, k, _ = _stub(h)
    try:
        live = next(c for c in h.kb.engine.cards if c.status == "active")
        code, _, _ = _rpc_error(lambda: k.SetCardStatus(
            pb.SetCardStatusRequest(id=live.id, status="deprecated", version=live.version),
            metadata=(("authorization", "Bearer "),), timeout=60))
        still = h.kb.get_card(live.id).status
        status = _web(h.web.port, "POST", "/login", {"token": "", "csrf": "x"})
        check(code in ("PERMISSION_DENIED", "UNAUTHENTICATED") and still == "active" and status in (400, 401),
              f"{code}; card {still}; web {status}")
        return f"gRPC {code}, card still {still}; web sign-in with an empty token: HTTP {status}"
    finally:
        ch.close()
        h.stop(0)


@probe("6", "token guessing over gRPC is throttled")
def p_grpc_throttle(lab: Lab) -> str:
    from retrieval.v1 import ladder_pb2 as pb

    h = lab.server()
    ch, k, _ = _stub(h)
    try:
        codes = [_rpc_error(lambda i=i: k.SetCardStatus(pb.SetCardStatusRequest(id="x", status="active", version=1),
                                                        metadata=_auth(f"guess-{i:024d}"), timeout=60))[0]
                 for i in range(200)]
        blocked = codes.count("RESOURCE_EXHAUSTED")
        check(blocked >= 180, f"{blocked} of 200 guesses refused before checking")
        return f"{200 - blocked} guesses checked, {blocked} refused (RESOURCE_EXHAUSTED)"
    finally:
        ch.close()
        h.stop(0)


def _web(port: int, method: str, path: str, form: dict | None = None, headers: dict | None = None) -> int:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        c.request(method, path, body=urlencode(form) if form is not None else None,
                  headers={"Content-Type": "application/x-www-form-urlencoded", **(headers or {})})
        r = c.getresponse()
        r.read()
        return r.status
    finally:
        c.close()


@probe("6", "token guessing on the review page is throttled")
def p_web_throttle(lab: Lab) -> str:
    h = lab.server()
    try:
        st = [_web(h.web.port, "POST", "/p/none", {"action": "approve"}, {"Authorization": f"Bearer g{i:024d}"})
              for i in range(40)]
        check(st.count(429) >= 25, f"statuses {sorted(set(st))}, {st.count(429)} x 429")
        return f"{st.count(429)} of 40 guesses answered 429"
    finally:
        h.stop(0)


@probe("6", "300 half-sent requests to the review page hold no 300 threads")
def p_slowloris(lab: Lab) -> str:
    h = lab.server(web_read_timeout_s=2.0)
    socks = []
    try:
        before = threading.active_count()
        for _ in range(300):
            s = socket.create_connection(("127.0.0.1", h.web.port), timeout=5)
            s.sendall(b"GET /queue HTTP/1.1\r\nHost: x\r\n")
            socks.append(s)
        time.sleep(0.5)
        peak = threading.active_count() - before
        t0 = time.perf_counter()
        ok = False
        while time.perf_counter() - t0 < 15 and not ok:
            with contextlib.suppress(OSError):
                ok = _web(h.web.port, "GET", "/healthz") == 200
            if not ok:
                time.sleep(0.2)
        waited = time.perf_counter() - t0
        check(peak <= 40 and ok, f"{peak} extra threads, page answered: {ok} after {waited:.1f} s")
        return f"{peak} extra threads for 300 connections; the page answered after {waited:.1f} s"
    finally:
        for s in socks:
            s.close()
        h.stop(0)


# ---------------------------------------------------------------- item 7: storage faults
@probe("7", "a zero-byte kb.sqlite3 is reported with the recovery command, not re-seeded")
def p_zero_byte(lab: Lab) -> str:
    home = lab.home()
    (home / "kb.sqlite3").write_bytes(b"")
    for x in ("kb.sqlite3-wal", "kb.sqlite3-shm"):
        (home / x).unlink(missing_ok=True)
    r = lab.cli("kb", "stats", "--home", str(home))
    errs = [x for x in r.stderr.splitlines() if x.startswith("error")]
    check(r.returncode == 2 and len(errs) == 1 and "--salvage" in errs[0] and "Traceback" not in r.stderr
          and (home / "kb.sqlite3").stat().st_size == 0, f"rc {r.returncode}: {r.stderr[-300:]}")
    return errs[0][:150]


def _corrupt(db_path: Path) -> None:
    db = sqlite3.connect(db_path)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = db.execute("PRAGMA page_size").fetchone()[0]
    leaves = [r[0] for r in db.execute("SELECT pageno FROM dbstat WHERE name='card_versions' AND pagetype='leaf' "
                                       "ORDER BY pageno")]
    db.close()
    with open(db_path, "r+b") as f:
        f.seek((leaves[len(leaves) // 2] - 1) * page)
        f.write(b"\xde\xad\xbe\xef" * (page // 4))  # one 4 KiB page


@probe("7", "one corrupt page: stats/query/export are one line; export --salvage saves the readable cards")
def p_corrupt_page(lab: Lab) -> str:
    home = lab.home()
    _corrupt(home / "kb.sqlite3")
    outs = []
    for cmd in (["kb", "stats"], ["query", "argmax ties"], ["kb", "export", str(lab.root / "plain")]):
        r = lab.cli(*cmd, "--home", str(home))
        errors = [x for x in r.stderr.splitlines() if x.startswith("error")]
        outs.append((r.returncode, "Traceback" in r.stderr, errors))
    check(all(rc == 2 and not tb and len(e) == 1 for rc, tb, e in outs), f"{outs}")
    r = lab.cli("kb", "export", str(lab.root / "saved"), "--salvage", "--home", str(home), "--json")
    check(r.returncode == 0, r.stderr[-300:])
    rep = json.loads(r.stdout)
    from kb.cardfiles import load_dir

    check(rep["exported"] > len(load_dir()) // 2, f"{rep}")
    return f"reads fail in one line; salvage saved {rep['exported']} of {len(load_dir())} cards"


@probe("7", "a symlinked writer.lock: its target is never written")
def p_lock_symlink(lab: Lab) -> str:
    home = lab.home()
    victim = lab.root / "victim-lock.txt"
    victim.write_text("precious")
    (home / "writer.lock").unlink(missing_ok=True)
    (home / "writer.lock").symlink_to(victim)
    r = lab.cli("kb", "rebuild", "--home", str(home))
    check(victim.read_text() == "precious" and r.returncode == 2 and "symbolic link" in r.stderr,
          f"rc {r.returncode}, victim {victim.read_text()!r}: {r.stderr[-200:]}")
    return "refused in one line; target untouched"


@probe("7", "kb export / snapshot never write through symlinks in the destination")
def p_export_symlink(lab: Lab) -> str:
    from kb.cardfiles import load_dir

    home = lab.home()
    victim = lab.root / "victim-export.txt"
    victim.write_text("precious")
    out = lab.root / "out-export"
    (out / "patterns").mkdir(parents=True)
    first = next(c for c in load_dir() if c.kind == "pattern")
    (out / "patterns" / f"{first.id}.yaml").symlink_to(victim)
    r1 = lab.cli("kb", "export", str(out), "--home", str(home))
    snap = lab.root / "out-snap"
    snap.mkdir()
    (snap / "cards.jsonl").symlink_to(victim)
    r2 = lab.cli("kb", "snapshot", str(snap), "--home", str(home))
    check(victim.read_text() == "precious" and r1.returncode == 0 and r2.returncode == 0,
          f"rc {r1.returncode}/{r2.returncode}, victim {victim.read_text()[:20]!r}")
    return "links in the destination replaced, their targets untouched"


@probe("7", "CLI errors are one line (export onto a file, bad settings)")
def p_one_line(lab: Lab) -> str:
    home = lab.home()
    target = lab.root / "a-file.yaml"
    target.write_text("keep")
    rs = [lab.cli("kb", "export", str(target), "--home", str(home)),
          lab.cli("kb", "stats", "--home", str(home), env={"LADDER_PORT": "not-a-port"})]
    for r in rs:
        lines = [x for x in r.stderr.splitlines() if x.strip() and not x.startswith("KB:")]
        check(r.returncode == 2 and len(lines) == 1 and "Traceback" not in r.stderr, f"rc {r.returncode}: {r.stderr}")
    return "; ".join(x.stderr.strip().splitlines()[-1][:70] for x in rs)


# ---------------------------------------------------------------- item 8: output safety
@probe("8", "U+202E and other format characters are removed by the sanitiser (review, problem check, MCP)")
def p_bidi(lab: Lab) -> str:
    from kb.sanitize import terminal_text
    from retrieval.web.render import esc

    s = "approve\u202eevil\u200b\u2066x\u2069"
    check("\u202e" not in terminal_text(s) and "\u200b" not in esc(s), repr(terminal_text(s)))
    return f"{s!a} -> {terminal_text(s)!a}"


@probe("8", "MCP answers malformed JSON-RPC lines and bounds get_card's version")
def p_mcp(lab: Lab) -> str:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "rt", "version": "0"}}}
    lines = [json.dumps(init), "{not json", '{"jsonrpc":"2.0","id":42,"method":17}',
             json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
             json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                         "params": {"name": "get_card", "arguments": {"card_id": "x", "version": 2**70}}})]
    e = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "optimizer.cli", "mcp", "--home", str(lab.home())],
                       input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=300, env=e, cwd=str(ROOT))
    replies = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
    errs = [x["error"]["code"] for x in replies if "error" in x]
    call = json.dumps(next((x for x in replies if x.get("id") == 9), {}))
    check(errs == [-32700, -32600] and "invalid_argument" in call and "Overflow" not in call + r.stderr,
          f"errors {errs}; call {call[:120]}")
    return "parse error and invalid request answered; version 2**70 -> invalid_argument"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "redteam")
    ap.add_argument("-k", default="", help="run only probes whose name contains this")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "benchmarks" / "retrieval"))
    import importlib

    sys.modules["benchmarks_bounded"] = importlib.import_module("bounded_cards")
    root = Path(tempfile.mkdtemp(prefix="ladder-redteam-"))
    results = []
    try:
        lab = Lab(root)
        for item, name, fn in PROBES:
            if args.k and args.k not in name:
                continue
            t0 = time.perf_counter()
            try:
                seen, ok = fn(lab), True
            except Failed as e:
                seen, ok = str(e), False
            except Exception as e:  # noqa: BLE001 - a probe that crashes is a failure, with its reason
                seen, ok = f"{type(e).__name__}: {e} | {traceback.format_exc().splitlines()[-3][:120]}", False
            results.append({"item": item, "probe": name, "pass": ok, "seen": seen,
                            "seconds": round(time.perf_counter() - t0, 1)})
            print(f"{'PASS' if ok else 'FAIL'}  [{item}] {name}: {seen}", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    failed = sum(not r["pass"] for r in results)
    print(f"{len(results) - failed}/{len(results)} probes pass")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "kb_probes.json").write_text(json.dumps({"provenance": provenance(), "probes": results,
                                                         "passed": len(results) - failed, "failed": failed},
                                                        indent=2) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
