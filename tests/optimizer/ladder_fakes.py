"""An in-memory KBClient for optimizer tests: a few cards, symptom-overlap quick-match, invariant lookup."""

from __future__ import annotations

from typing import Any

from kb.errors import NotFound
from kb.models import AnyCard, Trajectory, parse_card
from kb.models.search import CardFilter, CardPage, InvariantQuery, QuickMatchQuery, ScoreBreakdown, SearchHit, SearchQuery


def _backend_ok(card: AnyCard, backend: str) -> bool:
    return backend == "any" or backend in card.backends or "any" in card.backends


class FakeKB:
    """Implements the kb.client.KBClient protocol over a dict of cards."""

    def __init__(self, cards: list[dict[str, Any]]) -> None:
        self.cards = {c["id"]: parse_card(c) for c in cards}
        self.trajectories: list[Trajectory] = []
        self.queries: list[QuickMatchQuery] = []

    def quick_match(self, query: QuickMatchQuery) -> list[SearchHit]:
        self.queries.append(query)
        want = query.symptoms.tokens()
        hits = []
        for card in self.cards.values():
            if card.kind != "pattern" or card.id in query.exclude or not _backend_ok(card, query.backend):
                continue
            common = sorted(want & card.symptoms.tokens())
            if common:
                score = len(common) / max(len(want), 1)
                hits.append(SearchHit(card=card, score=score, breakdown=ScoreBreakdown(symptom=score, matched_symptoms=common)))
        hits.sort(key=lambda h: (-h.score, h.card.id))
        return hits[: query.top_k]

    def search(self, query: SearchQuery) -> list[SearchHit]:
        kinds = set(query.filter.kinds)
        return [SearchHit(card=c, score=0.1) for c in self.cards.values() if not kinds or c.kind in kinds][: query.top_k]

    def get_invariants(self, query: InvariantQuery) -> list[SearchHit]:
        out = []
        for card in self.cards.values():
            if card.kind != "invariant":
                continue
            sigs = set(query.ir_signatures) & set(card.symptoms.ir_signatures)
            passes = set(query.pass_names) & set(card.passes)  # type: ignore[union-attr]
            if sigs or passes:
                out.append(SearchHit(card=card, score=len(sigs) + 2 * len(passes),
                                     breakdown=ScoreBreakdown(matched_symptoms=[f"ir:{s}" for s in sorted(sigs)])))
        return sorted(out, key=lambda h: -h.score)[: query.top_k]

    def get_card(self, card_id: str, version: int | None = None) -> AnyCard:
        if card_id not in self.cards:
            raise NotFound(f"no card {card_id}")
        return self.cards[card_id]

    def list_cards(self, filter: CardFilter, page_size: int = 50, cursor: str = "") -> CardPage:
        cards = list(self.cards.values())
        return CardPage(cards=cards, total=len(cards))

    def upsert_card(self, card: AnyCard) -> AnyCard:
        self.cards[card.id] = card
        return card

    def set_card_status(self, card_id: str, status: str, reason: str = "") -> AnyCard:
        card = self.get_card(card_id)
        card.status = status  # type: ignore[assignment]
        return card

    def submit_trajectory(self, trajectory: Trajectory) -> bool:
        if any(t.id == trajectory.id for t in self.trajectories):
            return False
        self.trajectories.append(trajectory)
        return True

    def close(self) -> None:
        pass


def _pattern(cid: str, *, code: list[str] = (), ir: list[str] = (), bottleneck: list[str] = (), recipe: dict | None = None,
             related: list[str] = ()) -> dict[str, Any]:
    return {
        "id": cid, "kind": "pattern", "title": f"Test card {cid}", "summary": f"A test pattern card named {cid}.",
        "backends": ["cuda", "ascend"], "levels": ["L1", "L2", "L3"],
        "symptoms": {"code_features": list(code), "ir_signatures": list(ir), "bottleneck_classes": list(bottleneck)},
        "rewrite": {"description": f"apply {cid}", **({"recipe": recipe} if recipe else {})},
        "preconditions": ["the kernel is a test kernel"], "body": f"## {cid}\nBody text of {cid}.", "related": list(related),
    }


#: Cards built so that a softmax session climbs the whole ladder: round 1 has no evidence, so L1 cannot
#: localize; L2 measures nothing on the interpreter; L3 sees cross-warp reductions but its matching card has
#: no recipe; L4's invariant points to the num_warps search. Round 2 knows sync_bound from round 1, so L1
#: stops on the num_warps card (it names sync_bound and num_warps is in the code).
LADDER_CARDS: list[dict[str, Any]] = [
    _pattern("rows-per-program-test", code=["row_per_program", "tl.max", "tl.sum", "masked_load"],
             bottleneck=["latency_bound", "launch_bound"],
             recipe={"kind": "rows_per_program", "params": {"param": "ROWS_PER_PROGRAM", "values": [2]}}),
    _pattern("shuffle-explainer-test", ir=["cross_warp_reduction", "warp_shuffle"], bottleneck=["sync_bound"]),
    _pattern("num-warps-test", code=["num_warps"], bottleneck=["sync_bound"],
             recipe={"kind": "launch_params", "params": {"search": {"num_warps": [1, 2, 4, 8]}}}),
    {
        "id": "inv-cross-warp-test", "kind": "invariant", "title": "Cross-warp reductions need shared memory",
        "summary": "A reduction whose axis spans several warps goes through shared memory and barriers.",
        "backends": ["cuda"], "levels": ["L4"], "symptoms": {"ir_signatures": ["cross_warp_reduction"]},
        "passes": ["ConvertTritonToTritonGPU", "ConvertTritonGPUToLLVM"],
        "legality": "the reduced axis stays inside one warp when num_warps * 32 <= the layout's threads along other axes",
        "question_templates": ["Why does {pass} spread the reduction at line {source_line} over several warps?"],
        "related": ["num-warps-test"],
        "rewrite": {"description": "keep each reduction inside a warp: fewer warps or a warp-aligned layout"},
    },
]
