"""``ladder bench retrieval``: Search latency through the real server, beside the bare embedding call and the
bare index query, on the seed KB and on a synthetic 100k-card KB, plus 16 concurrent clients and the cache.

Method (printed with the figures):
- bare embed: ``Embedder.encode([q])`` for distinct queries (no cache).
- bare index query: the hybrid ranking work without the embedding: dense top-n on the index (exact matvec
  below 20k vectors, Chroma HNSW above) + BM25 scores + z-score fusion (the default; ``fusion="rrf"`` selects
  reciprocal rank fusion), given a precomputed query vector.
- service: gRPC ``Search`` to a ``ladder serve`` subprocess on loopback, distinct queries (cold cache), with the
  embedding included; then the same queries again (served from the result cache); then 16 client threads.
- 100k KB: cards generated from templates over the seed vocabulary; their vectors are real seed-card
  embeddings plus Gaussian noise, re-normalised, because embedding 100k texts on 2 CPU cores would take ~40
  minutes. Everything on the query path (query embedding, HNSW, BM25 over 100k documents, filters, fusion, gRPC)
  is the real code.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _provenance import percentiles, write_result  # noqa: E402

QUERIES_GLOB = "queries_*.yaml"


def _queries() -> list[str]:
    import yaml

    qs: list[str] = []
    for f in sorted((Path(__file__).parent).glob(QUERIES_GLOB)):
        qs += [q["query"] for q in yaml.safe_load(f.read_text())]
    if not qs:
        qs = ["why does argmax scalarize on Ascend", "masked load does not vectorize", "wgmma not used for fp32 dot"]
    return qs


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _bare(kb, queries: list[str]) -> dict:
    from kb.search.embedding import Embedder

    fresh = Embedder(cache_size=0)
    fresh.encode(["warm"])
    embed_t, index_t = [], []
    eng = kb.engine
    from kb.models.search import CardFilter

    allowed = eng.filter_mask(CardFilter())
    for q in queries:
        t0 = time.perf_counter()
        vec = fresh.encode([q])[0]
        t1 = time.perf_counter()
        vallowed = np.zeros(len(eng._vrow_to_pos), dtype=bool)
        ok = eng._vrow_to_pos >= 0
        vallowed[ok] = allowed[eng._vrow_to_pos[ok]]
        hits = eng.index.query(vec, 50, vallowed)
        bm = eng.bm25_ranking(q, 50, allowed)
        eng._fuse({"dense": [(int(eng._vrow_to_pos[r]), s) for r, s in hits], "bm25": bm}, {}, 5)
        t2 = time.perf_counter()
        embed_t.append(t1 - t0)
        index_t.append(t2 - t1)
    return {"bare_embed": percentiles(embed_t), "bare_index_query": percentiles(index_t)}


def _serve(home: Path) -> tuple[subprocess.Popen, str]:
    port = _free_port()
    env = {**os.environ, "LADDER_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "optimizer.cli", "serve", "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    from retrieval.client import GrpcKBClient

    addr = f"127.0.0.1:{port}"
    with GrpcKBClient(addr) as c:
        c.wait_ready(timeout=900)
    return proc, addr


def _service(addr: str, queries: list[str], concurrency: int, duration_s: float) -> dict:
    import grpc

    from retrieval.v1 import ladder_pb2 as pb
    from retrieval.v1 import ladder_pb2_grpc as pb_grpc

    ch = grpc.insecure_channel(addr)
    stub = pb_grpc.KnowledgeServiceStub(ch)
    stub.Search(pb.SearchRequest(text="warm up the server"), timeout=60)
    cold = []
    for i, q in enumerate(queries):
        t0 = time.perf_counter()
        stub.Search(pb.SearchRequest(text=f"{q} #{i}", top_k=5), timeout=60)  # suffix: never cached
        cold.append(time.perf_counter() - t0)
    cached = []
    for i, q in enumerate(queries):
        t0 = time.perf_counter()
        stub.Search(pb.SearchRequest(text=f"{q} #{i}", top_k=5), timeout=60)
        cached.append(time.perf_counter() - t0)
    lat: list[float] = []
    errors = [0]
    lock = threading.Lock()
    stop = time.monotonic() + duration_s

    def worker(k: int) -> None:
        c = grpc.insecure_channel(addr)
        s = pb_grpc.KnowledgeServiceStub(c)
        rnd = random.Random(k)
        while time.monotonic() < stop:
            q = rnd.choice(queries) + f" ~{rnd.randrange(10**9)}"
            t0 = time.perf_counter()
            try:
                s.Search(pb.SearchRequest(text=q, top_k=5), timeout=60)
            except grpc.RpcError:
                with lock:
                    errors[0] += 1
                continue
            with lock:
                lat.append(time.perf_counter() - t0)
        c.close()

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(concurrency)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    ch.close()
    return {"service_cold": percentiles(cold), "service_cached": percentiles(cached),
            "concurrent": {"clients": concurrency, "duration_s": round(wall, 2), **percentiles(lat),
                           "throughput_qps": round(len(lat) / wall, 1), "errors": errors[0]}}


def _synthetic_home(seed_home: Path, n_cards: int, embedder) -> Path:
    """Copy the seed KB and grow it to n_cards with template cards and noisy real vectors."""
    from kb.models import PatternCard
    from kb.settings import Settings
    from kb.store import StructuredStore, VectorIndex

    home = Path(tempfile.mkdtemp(prefix="ladder-100k-"))
    shutil.rmtree(home)
    shutil.copytree(seed_home, home, ignore=shutil.ignore_patterns("writer.lock"))
    s = Settings(home=home)
    store = StructuredStore(s.db_path)
    seed = store.served_cards()
    seed_vecs = embedder.encode([c.search_text() for c in seed])
    rnd = np.random.default_rng(0)
    words = sorted({w for c in seed for w in c.search_text().split() if w.isascii() and 3 < len(w) < 20})
    index = VectorIndex(s.index_dir)
    index.open()
    batch_cards, batch_vecs = [], []
    n_new = n_cards - len(seed)
    t0 = time.time()
    for i in range(n_new):
        base = seed[i % len(seed)]
        extra = " ".join(rnd.choice(words, 12))
        card = PatternCard(id=f"syn-{i:06d}", title=f"Synthetic variant {i} of {base.title}"[:200],
                           summary=f"{base.summary[:300]} Variant {i}: {extra}"[:600], body=extra,
                           backends=base.backends, levels=base.levels, symptoms=base.symptoms,
                           rewrite={"description": "synthetic"}, sources=["synthetic"])
        v = seed_vecs[i % len(seed)] + rnd.normal(0, 0.08, seed_vecs.shape[1]).astype(np.float32)
        batch_cards.append(card)
        batch_vecs.append(v / np.linalg.norm(v))
        if len(batch_cards) == 5000 or i == n_new - 1:
            with store._tx() as db:  # bulk load: one transaction per batch
                for c in batch_cards:
                    store._insert_version(db, c)
                    db.execute("INSERT INTO cards(id, served_version, latest_version, seq) VALUES(?,?,?,?)",
                               (c.id, 1, 1, store._next_seq(db)))
            index.upsert([c.id for c in batch_cards], [1] * len(batch_cards), np.asarray(batch_vecs),
                         ["pattern"] * len(batch_cards))
            print(f"  synthetic KB: {i + 1}/{n_new} cards ({time.time() - t0:.0f}s)", flush=True)
            batch_cards, batch_vecs = [], []
    store.close()
    return home


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="ladder bench retrieval", description=__doc__.split("\n")[0])
    ap.add_argument("--cards", type=int, default=100_000, help="size of the synthetic KB (0 skips it)")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--duration", type=float, default=20.0, help="seconds of the concurrent run")
    ap.add_argument("--out", type=Path, default=None, help="results directory (default benchmarks/results)")
    ap.add_argument("--embed-backend", choices=["auto", "onnx", "torch"], default="auto",
                    help="query embedding in the bare call and the server; non-auto runs save "
                         "retrieval_latency_<backend>.json")
    args = ap.parse_args(argv)
    os.environ["LADDER_EMBED_BACKEND"] = args.embed_backend  # the `ladder serve` subprocess reads it

    from kb.search.embedding import Embedder
    from kb.service import KnowledgeBase
    from kb.settings import Settings

    queries = _queries()
    embedder = Embedder(backend=args.embed_backend)
    embedder.warm()
    seed_home = Path(tempfile.mkdtemp(prefix="ladder-seed-"))
    results: dict = {"queries": len(queries), "method": __doc__, "embed_backend": args.embed_backend,
                     "embed_runtime": embedder.runtime}
    for label, home in (("seed", seed_home), ("synthetic", None)):
        if label == "synthetic":
            if not args.cards:
                continue
            home = _synthetic_home(seed_home, args.cards, embedder)
        kb = KnowledgeBase.open(Settings(home=home), embedder=embedder)
        n = kb.stats()["cards"]
        bare = _bare(kb, queries)
        kb.close()
        print(f"[{label}: {n} cards] starting server ...", flush=True)
        proc, addr = _serve(home)
        try:
            svc = _service(addr, queries, args.concurrency, args.duration)
        finally:
            proc.terminate()
            proc.wait(60)
        bare_sum = bare["bare_embed"]["p50_ms"] + bare["bare_index_query"]["p50_ms"]
        r = {"cards": n, **bare, **svc, "p50_ratio_vs_bare": round(svc["service_cold"]["p50_ms"] / bare_sum, 3)}
        results[label] = r
        print(json.dumps({label: r}, indent=2), flush=True)
        if label == "synthetic":
            shutil.rmtree(home, ignore_errors=True)
    shutil.rmtree(seed_home, ignore_errors=True)
    name = "retrieval_latency" + ("" if args.embed_backend == "auto" else f"_{args.embed_backend}")
    out = write_result(name, results, args.out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
