from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import pytest

from kb.errors import Conflict, NotFound, Unavailable
from kb.models import PatternCard, ProblemRef, Trajectory
from kb.store import StructuredStore


def _card(cid: str = "c1", **kw) -> PatternCard:
    return PatternCard(id=cid, title=kw.pop("title", f"Title {cid}"), summary="A summary long enough.",
                       backends=["cuda"], levels=["L1"], **kw)


@pytest.fixture
def store(tmp_path: Path):
    s = StructuredStore(tmp_path / "kb.sqlite3")
    yield s
    s.close()


def test_edit_of_active_card_stays_pending_until_approved(store):
    store.put_card(_card(status="active"))
    store.put_card(_card(status="proposed", title="Edited title"))
    assert store.get_card("c1").title == "Title c1"  # old version still served
    assert store.latest_version("c1") == 2
    store.set_status("c1", "active")
    served = store.get_card("c1")
    assert (served.version, served.title) == (2, "Edited title")
    assert store.get_card("c1", 1).status == "deprecated"


def test_illegal_transition_is_a_conflict_naming_status(store):
    store.put_card(_card(status="active"))
    with pytest.raises(Conflict) as e:
        store.set_status("c1", "draft")
    assert e.value.field == "status"


def test_missing_card_is_not_found(store):
    with pytest.raises(NotFound):
        store.get_card("nope")


def test_trajectory_submission_is_idempotent(store):
    t = Trajectory(id="traj-001", problem=ProblemRef(name="p"), backend="interpreter")
    assert store.put_trajectory(t) is True
    assert store.put_trajectory(t) is False
    assert store.count_trajectories() == 1


def _try_open(path: str, q) -> None:  # runs in a child process
    try:
        StructuredStore(Path(path)).close()
        q.put("opened")
    except Unavailable as e:
        q.put(str(e))


def test_second_writer_process_is_refused_clearly(store):
    q = mp.get_context("spawn").Queue()
    p = mp.get_context("spawn").Process(target=_try_open, args=(str(store.path), q))
    p.start()
    p.join(60)
    msg = q.get(timeout=5)
    assert "already open for writing" in msg and "--server" in msg


def test_readonly_store_reads_but_refuses_writes(store):
    store.put_card(_card())
    ro = StructuredStore(store.path, readonly=True)
    try:
        assert ro.get_card("c1").id == "c1"
        with pytest.raises(Unavailable):
            ro.put_card(_card("c2"))
    finally:
        ro.close()


def test_reopening_picks_up_new_curated_cards_but_keeps_reviewed_edits(tmp_path, embedder):
    import shutil

    import yaml

    from kb.cardfiles import packaged_cards_dir
    from kb.service import KnowledgeBase
    from kb.settings import Settings

    cards = tmp_path / "cards"
    shutil.copytree(packaged_cards_dir() / "invariants", cards / "invariants")
    kb = KnowledgeBase(Settings(home=tmp_path / "kb"), StructuredStore(tmp_path / "kb" / "kb.sqlite3"), embedder)
    try:
        assert kb.seed(cards) > 0
        assert kb.seed(cards) == 0  # idempotent
        f = cards / "invariants" / "ascend-argmax-max-with-index.yaml"
        data = yaml.safe_load(f.read_text())
        data["summary"] = data["summary"] + " Updated upstream."
        f.write_text(yaml.safe_dump(data))
        new = dict(data, id="brand-new-invariant", title="A brand new invariant card")
        (cards / "invariants" / "brand-new-invariant.yaml").write_text(yaml.safe_dump(new))
        assert kb.seed(cards) == 2
        assert kb.store.get_card("ascend-argmax-max-with-index").summary.endswith("Updated upstream.")
        edited = kb.store.get_card("brand-new-invariant").model_copy(update={"title": "Reviewed title"})
        kb.store.put_card(edited)  # an edit through the service
        data["summary"] += " Again."
        (cards / "invariants" / "brand-new-invariant.yaml").write_text(yaml.safe_dump(dict(new, summary="A changed upstream summary.")))
        kb.seed(cards)
        assert kb.store.get_card("brand-new-invariant").title == "Reviewed title"
    finally:
        kb.store.close()
