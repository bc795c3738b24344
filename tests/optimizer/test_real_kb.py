"""The optimizer against the real embedded KB (curated cards, hybrid quick-match), on the CPU interpreter."""

from __future__ import annotations

from pathlib import Path

import pytest

from optimizer.diagnosis import diagnose
from optimizer.proposers.offline import OfflineProposer
from optimizer.session import Session
from optimizer.settings import LadderSettings

DATA = Path(__file__).parent / "data"
TOP2_FAMILIES = {"groups-per-program-moe-scoring", "value-only-reduction", "top2-pairwise-max", "rows-per-program",
                 "num-warps-for-row-width", "argmax-via-max-then-index-min"}


@pytest.fixture
def client(kb):
    from retrieval.client import LocalKBClient

    return LocalKBClient(kb=kb)


def test_l1_on_curated_cards(client, tmp_path: Path) -> None:
    d = diagnose(DATA / "top2", None, backend="interpreter", max_level="L1", kb=client, workdir=tmp_path)
    l1 = d.levels[0]
    ids = {c.id for c in l1.matched_cards}
    assert ids & TOP2_FAMILIES, ids
    assert any(c.recipe and c.applicable for c in l1.matched_cards), l1.matched_cards
    assert {"code_features", "quick_match", "bottleneck", "escalation_tests"} <= {e.kind for e in l1.evidence}


@pytest.mark.slow
def test_session_with_real_kb_is_submitted(client, kb, tmp_path: Path) -> None:
    settings = LadderSettings(validation_seeds=[0, 1], sandbox_timeout_s=120, ir_target="cuda:90")
    session = Session(DATA / "top2", None, kb=client, settings=settings, backend="interpreter", proposer=OfflineProposer(),
                      out_dir=tmp_path)
    traj = session.run(2, submit=True)
    assert traj.rounds[0].outcome == "baseline" and len(traj.rounds) == 3
    for r in traj.rounds[1:]:
        assert r.outcome in ("neutral", "failed", "inconclusive") and r.levels_reached
        if r.rewrite is not None:
            assert client.get_card(r.rewrite.family).kind == "pattern" and r.rewrite.diff
    assert kb.submit_trajectory(traj) is False  # already stored by the session
