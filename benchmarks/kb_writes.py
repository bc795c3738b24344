"""``ladder bench writes``: consecutive single-card writes on an embedded KB, then the first search after them.

The first search pays for any index work the writes deferred.

Method: a fresh KB home (seeded from the packaged cards, or a copy of ``--home``), one warm-up write, then
``--writes`` consecutive ``KnowledgeBase.upsert_card`` calls, each a new proposed pattern card with its own
text (so each one is embedded). Then two identical hybrid searches: the first one after the writes, the second
one from a warm engine (cache off, so it runs the ranking again). ``--cards N`` first grows the KB to N cards
with the retrieval latency benchmark's synthetic cards (template text, noisy real vectors:
``benchmarks/retrieval/latency.py``) and saves ``kb_writes_<N>cards.json`` beside the seed KB's ``kb_writes.json``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import percentiles, write_result  # noqa: E402


def _card(i: int):  # noqa: ANN202 - a PatternCard
    from kb.models import PatternCard

    return PatternCard(id=f"bench-write-{i}", title=f"Write probe {i}: rows per program variant {i}",
                       summary=f"Probe card {i} written to time single-card writes on the embedded KB.",
                       backends=["cuda"], levels=["L1"], status="proposed")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="ladder bench writes", description=__doc__.split("\n")[0])
    ap.add_argument("--writes", type=int, default=20)
    ap.add_argument("--home", type=Path, default=None, help="a seeded KB home to copy (default: seed a fresh one)")
    ap.add_argument("--cards", type=int, default=0, help="grow the KB to this many synthetic cards first")
    ap.add_argument("--out", type=Path, default=None, help="results directory (default benchmarks/results)")
    ap.add_argument("--no-save", action="store_true", help="print the figures only")
    args = ap.parse_args(argv)

    from kb.models.search import SearchQuery
    from kb.search.embedding import Embedder
    from kb.service import KnowledgeBase
    from kb.settings import Settings

    embedder = Embedder()
    embedder.warm()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "kb"
        if args.home:
            shutil.copytree(args.home, home, ignore=shutil.ignore_patterns("writer.lock"))
        if args.cards:
            sys.path.insert(0, str(Path(__file__).resolve().parent / "retrieval"))
            from latency import _synthetic_home

            KnowledgeBase.open(Settings(home=home), embedder=embedder).close()  # seeded (or the copy) first
            home = _synthetic_home(home, args.cards, embedder)  # a new folder: Chroma caches clients by path
        with KnowledgeBase.open(Settings(home=home, search_cache_size=0), embedder=embedder) as kb:
            kb.upsert_card(_card(-1))
            kb.search(SearchQuery(text="warm up", top_k=5))
            times = []
            for i in range(args.writes):
                t = time.perf_counter()
                kb.upsert_card(_card(i))
                times.append(time.perf_counter() - t)
            query = SearchQuery(text="rows per program loop for tiny rows", top_k=5)
            t = time.perf_counter()
            kb.search(query)
            first = time.perf_counter() - t
            t = time.perf_counter()
            kb.search(query)
            second = time.perf_counter() - t
            cards = len(kb.store.served_cards())
        if args.cards:
            shutil.rmtree(home, ignore_errors=True)
    result = {"method": __doc__, "cards_after": cards, "writes": percentiles(times),
              "writes_total_s": round(sum(times), 3), "first_search_ms": round(first * 1000, 3),
              "warm_search_ms": round(second * 1000, 3)}
    print(f"{args.writes} writes: total {result['writes_total_s']} s, per write {result['writes']}; "
          f"first search after them {result['first_search_ms']} ms, warm search {result['warm_search_ms']} ms "
          f"({cards} cards)")
    if not args.no_save:
        print(write_result(f"kb_writes_{args.cards}cards" if args.cards else "kb_writes", result, args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
