"""Ladder policies through a real interpreter session: the setting reaches the engine, each policy runs exactly its
levels in every round, the policy is recorded in the trajectory, and the default records nothing new."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/optimizer: ladder_fakes

from ladder_fakes import LADDER_CARDS, FakeKB  # noqa: E402

from kb.models import EscalationTests  # noqa: E402
from optimizer.harness import timing_cache  # noqa: E402
from optimizer.ladder import engine  # noqa: E402
from optimizer.ladder.types import LadderContext, LevelResult  # noqa: E402
from optimizer.proposers.offline import OfflineProposer  # noqa: E402
from optimizer.session import Session  # noqa: E402
from optimizer.settings import LadderSettings  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "softmax"
EXPECTED = {"hierarchical": ["L1", "L2", "L3", "L4"], "l1-only": ["L1"], "profile-first": ["L1", "L2"],
            "always-deep": ["L1", "L2", "L3", "L4"], "random-family": ["L1"]}


class Recorder:
    """Stands in for a level: records that it ran and finds nothing (the round escalates to the policy's cap)."""

    def __init__(self, level: str, calls: list[str]) -> None:
        self.level, self.calls = level, calls

    def run(self, ctx: LadderContext) -> LevelResult:
        self.calls.append(self.level)
        return LevelResult(level=self.level, tests=EscalationTests(localized=False, single_family=False,  # type: ignore[arg-type]
                                                                   justified=False, notes="nothing"))


def test_each_policy_runs_its_levels_in_a_real_interpreter_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(engine, "default_levels", lambda: {n: Recorder(n, calls) for n in ("L1", "L2", "L3", "L4")})
    cache = tmp_path / "cache.jsonl"
    timing_cache._OPEN.pop(cache.resolve(), None)
    for policy, levels in EXPECTED.items():
        calls.clear()
        settings = LadderSettings(validation_seeds=[0], sandbox_timeout_s=120, max_inconclusive_streak=2, policy=policy,
                                  timing_cache=str(cache))
        traj = Session(DATA, None, kb=FakeKB(LADDER_CARDS), settings=settings, backend="interpreter",
                       proposer=OfflineProposer(), out_dir=tmp_path / policy).run(2)
        assert traj.rounds[0].outcome == "baseline"
        assert [r.outcome for r in traj.rounds[1:]] == ["inconclusive", "inconclusive"]
        assert calls == levels * 2, policy  # every round climbs exactly the policy's levels
        for r in traj.rounds[1:]:
            assert r.levels_reached == levels
            marks = [e for e in r.evidence if e.kind == "ladder_policy"]
            assert [e.reference for e in marks] == ([] if policy == "hierarchical" else [policy])
    # the five sessions validated one baseline: the first evaluated it, the other four read the cache
    stats = timing_cache.open_cache(cache).stats
    assert stats.stores == 1 and stats.hits == 4


def test_l1_only_with_the_real_levels_never_profiles(tmp_path: Path) -> None:
    settings = LadderSettings(validation_seeds=[0], sandbox_timeout_s=120, max_inconclusive_streak=2, policy="l1-only",
                              cache_dir=str(tmp_path / "ir-cache"))
    traj = Session(DATA, None, kb=FakeKB(LADDER_CARDS), settings=settings, backend="interpreter",
                   proposer=OfflineProposer(), out_dir=tmp_path / "s").run(1)
    r1 = traj.rounds[1]
    assert r1.levels_reached == ["L1"]
    assert not [e for e in r1.evidence if e.level in ("L2", "L3", "L4") and e.kind != "validation"]
    assert not (tmp_path / "ir-cache").exists() or not any((tmp_path / "ir-cache").rglob("*.ttir"))
    assert any(e.kind == "ladder_policy" and e.reference == "l1-only" for e in r1.evidence)
