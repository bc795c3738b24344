"""Search latency with 100 contributor cards at the size cap, against the seed KB (issue 32, item 3 target:
p99 within 2x of the seed KB's).

Method (printed with the figures): two scratch homes seeded from the packaged cards, each behind its own
in-process gRPC server on loopback (the real interceptors, servicer and KB): ``seed`` stays the seed KB, ``big``
gets 100 ``UpsertCard`` calls by a contributor, each card as large as the caps allow (``LADDER_MAX_CARD_BYTES``
in all: a 64 KiB body, preconditions at the field cap up to the card cap). ``Search`` over gRPC, one client
thread, distinct query texts (the result cache never answers), and the two servers asked *alternately* with the
same text, so load from other processes on the machine falls on both alike.
- ``seed`` / ``capped``: the big cards as contributed (``proposed``: default searches skip them, but they are in
  the engine, BM25 and the vector index).
- ``seed_2`` / ``capped_active``: after a reviewer approves the 100 cards (they can be returned).
- ``after_write``: on ``big``, one small upsert before each query, so every Search first rebuilds the engine
  (the red-team finding: 4.5 s per Search after each small write); not part of the 2x target.

Usage: python benchmarks/retrieval/bounded_cards.py [--queries 200] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _provenance import percentiles, write_result  # noqa: E402

TOKENS = {"bench-contrib-0123456789": ["contributor"], "bench-review-0123456789": ["reviewer"]}


def _queries(n: int) -> list[str]:
    import yaml

    base: list[str] = []
    for f in sorted((Path(__file__).parent).glob("queries_*.yaml")):
        base += [q["query"] for q in yaml.safe_load(f.read_text())]
    out = []
    i = 0
    while len(out) < n:  # distinct texts: a suffix keeps the result cache from answering
        out.append(f"{base[i % len(base)]} (variant {i // len(base)})" if i >= len(base) else base[i])
        i += 1
    return out


def capped_card(i: int, limits) -> dict:  # noqa: ANN001 - kb.limits.Limits
    """A card as JSON data as large as ``limits`` allow (under ``card_bytes`` in all)."""
    words = "coalesced masked load vectorize warp shuffle reduction tile persistent grid layout".split()
    text = lambda n, k: " ".join(words[(j + k) % len(words)] for j in range(n // 8))[:n]  # noqa: E731
    card = {"id": f"contrib-huge-{i:03d}", "kind": "pattern", "title": f"Contributor card {i} about tiles",
            "summary": "A contributor card at the size cap, to measure what large cards cost every search.",
            "backends": ["cuda"], "levels": ["L1", "L2"], "status": "proposed",
            "body": text(limits.card_body_bytes - 64, i)}
    budget = limits.card_bytes - 80 * 1024  # leave room for JSON quoting and the fixed fields
    field = limits.card_field_bytes - 64
    n = min(limits.card_list_items, budget // (field + 8))
    card["preconditions"] = [text(field, i + j) for j in range(n)]
    return card


def _search(stub, pb, texts: list[str], before=None) -> list[float]:  # noqa: ANN001
    out = []
    for t in texts:
        if before is not None:
            before()
        t0 = time.perf_counter()
        stub.Search(pb.SearchRequest(text=t, top_k=5), timeout=120)
        out.append(time.perf_counter() - t0)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--cards", type=int, default=100)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()

    import grpc

    from kb.models import parse_card
    from kb.service import KnowledgeBase, check_storable
    from kb.settings import Settings
    from retrieval import convert
    from retrieval.server.app import create_server
    from retrieval.v1 import ladder_pb2 as pb
    from retrieval.v1 import ladder_pb2_grpc as pb_grpc

    scratch = Path(tempfile.mkdtemp(prefix="ladder-bounded-"))
    handles = []
    try:
        def start(name: str):  # noqa: ANN202
            settings = Settings(home=scratch / name, tokens=TOKENS, port=0)
            handle = create_server(settings, kb=KnowledgeBase.open(settings), bind="127.0.0.1:0")
            handle.wait_ready(600)
            handles.append(handle)
            return settings, handle

        _, seed_h = start("seed")
        settings, big_h = start("big")
        limits = settings.limits
        contrib = (("authorization", "Bearer bench-contrib-0123456789"),)
        review = (("authorization", "Bearer bench-review-0123456789"),)
        qs = _queries(args.queries * 3)
        opts = [("grpc.max_send_message_length", 8 << 20), ("grpc.max_receive_message_length", 8 << 20)]
        phases: dict[str, dict] = {}
        with grpc.insecure_channel(f"127.0.0.1:{seed_h.port}", options=opts) as ch_a, \
                grpc.insecure_channel(f"127.0.0.1:{big_h.port}", options=opts) as ch_b:
            seed_stub, big = pb_grpc.KnowledgeServiceStub(ch_a), pb_grpc.KnowledgeServiceStub(ch_b)

            def paired(texts: list[str]) -> tuple[list[float], list[float]]:
                a, b = [], []
                for t in texts:
                    a += _search(seed_stub, pb, [t])
                    b += _search(big, pb, [t])
                return a, b

            paired(["warm up the embedder", "and the engine"])
            seed_cards = len(big_h.kb.engine.cards)
            sizes = []
            t0 = time.perf_counter()
            for i in range(args.cards):
                card = parse_card(capped_card(i, limits))
                check_storable(card, "card", limits)
                sizes.append(len(card.model_dump_json()))
                big.UpsertCard(pb.UpsertCardRequest(card=convert.to_proto_card(card)), metadata=contrib, timeout=600)
            upsert_s = time.perf_counter() - t0
            paired(["rebuild after the upserts"])
            a, b = paired(qs[: args.queries])
            phases["seed"], phases["capped"] = percentiles(a), percentiles(b)
            n = [0]

            def small_write() -> None:
                n[0] += 1
                c = parse_card(capped_card(1000, limits) | {"id": "small-write", "preconditions": [],
                                                            "body": f"small edit {n[0]}"})
                big.UpsertCard(pb.UpsertCardRequest(card=convert.to_proto_card(c)), metadata=contrib, timeout=600)

            k = max(20, args.queries // 4)
            phases["after_write"] = percentiles(_search(big, pb, qs[args.queries: args.queries + k],
                                                        before=small_write))
            for i in range(args.cards):
                big.SetCardStatus(pb.SetCardStatusRequest(id=f"contrib-huge-{i:03d}", status="active", version=1),
                                  metadata=review, timeout=600)
            paired(["rebuild after the approvals"])
            a, b = paired(qs[2 * args.queries: 3 * args.queries])
            phases["seed_2"], phases["capped_active"] = percentiles(a), percentiles(b)
        ratio = round(phases["capped"]["p99_ms"] / phases["seed"]["p99_ms"], 3)
        ratio_active = round(phases["capped_active"]["p99_ms"] / phases["seed_2"]["p99_ms"], 3)
        payload = {
            "method": __doc__.split("Usage:")[0].strip(),
            "seed_cards": seed_cards, "contributor_cards": args.cards,
            "card_bytes": {"limit": limits.card_bytes, "min": min(sizes), "max": max(sizes)},
            "upsert_total_s": round(upsert_s, 2),
            "search": phases,
            "p99_ratio_capped_vs_seed": ratio,
            "p99_ratio_capped_active_vs_seed": ratio_active,
            "p99_ratio_after_write_vs_seed": round(phases["after_write"]["p99_ms"] / phases["seed"]["p99_ms"], 3),
            "target": "capped p99 <= 2x seed p99 (asked alternately)",
            "met": ratio <= 2.0 and ratio_active <= 2.0,
        }
        path = write_result("retrieval_bounded_cards", payload, args.out)
        for name, p in phases.items():
            print(f"{name:14s} n={p['n']:4d} p50 {p['p50_ms']:8.2f} ms  p99 {p['p99_ms']:8.2f} ms")
        print(f"cards {min(sizes)}..{max(sizes)} bytes (cap {limits.card_bytes}); upserts {upsert_s:.1f} s")
        print(f"p99 capped/seed = {ratio}x, capped_active/seed = {ratio_active}x (target <= 2x: "
              f"{'met' if payload['met'] else 'NOT met'}); wrote {path}")
        return 0
    finally:
        for h in handles:
            h.stop(0)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
