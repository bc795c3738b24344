"""``ladder bench retrieval-quality``: Recall@1, Recall@5, MRR@10 and nDCG@10 for dense-only, BM25-only and
hybrid search over the labelled queries in ``benchmarks/retrieval/queries_*.yaml`` (against the seed KB).

Recall@k = |relevant ∩ top-k| / |relevant|, averaged over queries; MRR@10 uses the first relevant hit;
nDCG@10 uses binary relevance. Hit@k (any relevant card in the top k) is reported too. "hybrid" is the
default fusion (standardised scores); "hybrid-rrf" is reciprocal rank fusion (k=60), shown for comparison.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _provenance import write_result  # noqa: E402

MODES = ("dense", "bm25", "hybrid-rrf", "hybrid")


def load_queries(folder: Path | None = None) -> list[dict]:
    qs: list[dict] = []
    for f in sorted((folder or Path(__file__).parent).glob("queries_*.yaml")):
        for q in yaml.safe_load(f.read_text()) or []:
            qs.append({**q, "file": f.name})
    return qs


def score(ranked: list[str], relevant: set[str]) -> dict[str, float]:
    def recall(k: int) -> float:
        return len(relevant & set(ranked[:k])) / len(relevant)

    rr = next((1.0 / i for i, cid in enumerate(ranked[:10], 1) if cid in relevant), 0.0)
    dcg = sum(1.0 / math.log2(i + 1) for i, cid in enumerate(ranked[:10], 1) if cid in relevant)
    idcg = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(relevant), 10) + 1))
    return {"recall@1": recall(1), "recall@5": recall(5), "mrr@10": rr, "ndcg@10": dcg / idcg,
            "hit@1": float(bool(relevant & set(ranked[:1]))), "hit@5": float(bool(relevant & set(ranked[:5])))}


def evaluate(kb, queries: list[dict]) -> tuple[dict[str, dict[str, float]], list[dict]]:
    from kb.models.search import SearchQuery

    totals = {m: {} for m in MODES}
    misses = []
    for q in queries:
        rel = set(q["relevant"])
        for m in MODES:
            kb.engine.fusion = "rrf" if m == "hybrid-rrf" else "zscore"
            mode = "hybrid" if m.startswith("hybrid") else m
            ranked = [h.card.id for h in kb.search(SearchQuery(text=q["query"], top_k=10, mode=mode))]
            for k, v in score(ranked, rel).items():
                totals[m][k] = totals[m].get(k, 0.0) + v
            if m == "hybrid" and not rel & set(ranked[:5]):
                misses.append({"id": q.get("id"), "query": q["query"], "relevant": sorted(rel), "top5": ranked[:5]})
    n = max(len(queries), 1)
    return {m: {k: round(v / n, 4) for k, v in t.items()} for m, t in totals.items()}, misses


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="ladder bench retrieval-quality", description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--show-misses", action="store_true", help="print hybrid misses (relevant not in top 5)")
    args = ap.parse_args(argv)

    from kb.service import KnowledgeBase
    from kb.settings import Settings

    queries = load_queries()
    if not queries:
        print("no labelled queries found under benchmarks/retrieval/", file=sys.stderr)
        return 2
    known = None
    with tempfile.TemporaryDirectory(prefix="ladder-quality-") as home:
        kb = KnowledgeBase.open(Settings(home=Path(home), search_cache_size=0))
        try:
            known = {c.id for c in kb.store.served_cards()}
            unknown = sorted({r for q in queries for r in q["relevant"]} - known)
            if unknown:
                print(f"labels name cards that do not exist: {unknown}", file=sys.stderr)
                return 2
            metrics, misses = evaluate(kb, queries)
        finally:
            kb.close()
    print(f"{len(queries)} labelled queries, {len(known)} cards")
    print(f"{'metric':<10}" + "".join(f"{m:>12}" for m in MODES))
    for k in ("recall@1", "recall@5", "mrr@10", "ndcg@10", "hit@1", "hit@5"):
        print(f"{k:<10}" + "".join(f"{metrics[m][k]:>12.3f}" for m in MODES))
    h = metrics["hybrid"]
    checks = {"hybrid recall@5 >= 0.9": h["recall@5"] >= 0.9, "hybrid mrr@10 >= 0.75": h["mrr@10"] >= 0.75,
              "hybrid beats dense and bm25 (mrr@10 and recall@5)": all(
                  h[k] > metrics[m][k] for m in ("dense", "bm25") for k in ("mrr@10", "recall@5"))}
    for name, ok in checks.items():
        print(f"  {'MET ' if ok else 'MISSED'} {name}")
    if args.show_misses:
        print(json.dumps(misses, indent=2))
    out = write_result("retrieval_quality", {"queries": len(queries), "cards": len(known), "metrics": metrics,
                                             "targets": checks, "hybrid_misses": misses}, args.out)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
