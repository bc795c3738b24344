"""Ladder policies (issue 34's arms): each runs exactly its levels, decides where it should, and is reproducible."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from kb.models import EscalationTests
from optimizer.ladder.engine import run_ladder
from optimizer.ladder.policy import POLICIES, ladder_policy
from optimizer.ladder.types import CardRef, LadderContext, LevelResult
from optimizer.settings import LadderSettings

PASS = EscalationTests(localized=True, single_family=True, justified=True, notes="ok")
FAIL = EscalationTests(localized=False, single_family=False, justified=False, notes="no")


def card(cid: str, applicable: bool | None = True) -> CardRef:
    return CardRef(id=cid, kind="pattern", title=cid, recipe={"kind": "launch"}, applicable=applicable)


class FakeLevel:
    """Records its calls; passes its tests when ``passes``, matching ``cards`` and choosing the first of them."""

    def __init__(self, level: str, calls: list[str], *, passes: bool, cards: list[CardRef]) -> None:
        self.level, self.calls, self.passes, self.cards = level, calls, passes, cards

    def run(self, ctx: LadderContext) -> LevelResult:
        self.calls.append(self.level)
        return LevelResult(level=self.level, tests=PASS if self.passes else FAIL, matched_cards=list(self.cards),  # type: ignore[arg-type]
                           chosen=self.cards[0] if self.passes else None, rationale=f"{self.level} rationale")


def levels(calls: list[str], passing: set[str]) -> dict[str, FakeLevel]:
    cards = {"L1": [card("vec-l1"), card("warps-l1"), card("no-recipe", None), card("refused", False)],
             "L2": [card("tile-l2")], "L3": [card("ir-l3")], "L4": [card("inv-l4")]}
    return {n: FakeLevel(n, calls, passes=n in passing, cards=cards[n]) for n in ("L1", "L2", "L3", "L4")}


def context(tmp_path: Path, policy: str = "hierarchical", *, seed: int = 0, problem: str = "softmax",
            history: int = 0) -> LadderContext:
    cand = tmp_path / "initial.py"
    cand.write_text("# a kernel\n")
    settings = LadderSettings(policy=policy, policy_seed=seed)
    past = [SimpleNamespace(rewrite=None, outcome="neutral", evidence=[])] * history
    return LadderContext(problem=SimpleNamespace(name=problem), candidate=cand, backend="interpreter",  # type: ignore[arg-type]
                         kb=None, settings=settings, history=past)  # type: ignore[arg-type]


@pytest.mark.parametrize(("policy", "passing", "expected", "stop_level", "chosen"), [
    # hierarchical: the first level that passes ends the round
    ("hierarchical", {"L1"}, ["L1"], "L1", "vec-l1"),
    ("hierarchical", {"L3"}, ["L1", "L2", "L3"], "L3", "ir-l3"),
    ("hierarchical", set(), ["L1", "L2", "L3", "L4"], None, None),
    # l1-only never profiles, never reads IR, never asks the compiler
    ("l1-only", {"L3"}, ["L1"], None, None),
    ("l1-only", {"L1"}, ["L1"], "L1", "vec-l1"),
    # profile-first: L1 and L2 every round (even when L1 passed), never L3/L4; the deepest passing level decides
    ("profile-first", {"L1"}, ["L1", "L2"], "L1", "vec-l1"),
    ("profile-first", {"L1", "L2"}, ["L1", "L2"], "L2", "tile-l2"),
    ("profile-first", {"L3", "L4"}, ["L1", "L2"], None, None),
    # always-deep: all four every round; the deepest passing level decides
    ("always-deep", {"L1"}, ["L1", "L2", "L3", "L4"], "L1", "vec-l1"),
    ("always-deep", {"L1", "L3"}, ["L1", "L2", "L3", "L4"], "L3", "ir-l3"),
    ("always-deep", {"L1", "L2", "L3", "L4"}, ["L1", "L2", "L3", "L4"], "L4", "inv-l4"),
])
def test_each_policy_runs_exactly_its_levels(tmp_path: Path, policy: str, passing: set[str], expected: list[str],
                                             stop_level: str | None, chosen: str | None) -> None:
    calls: list[str] = []
    ctx = context(tmp_path, policy)
    out = run_ladder(ctx, max_level="L4", levels=levels(calls, passing))  # type: ignore[arg-type]
    assert calls == expected and out.levels_reached == expected
    assert (out.stop.level if out.stop else None) == stop_level
    assert (out.chosen.id if out.chosen else None) == chosen
    recorded = [e for e in out.evidence if e.kind == "ladder_policy"]
    if policy == "hierarchical":
        assert not recorded  # the default path records nothing new
    else:
        assert [e.reference for e in recorded] == [policy] and recorded[0].data["name"] == policy


def test_the_session_max_level_still_caps_every_policy(tmp_path: Path) -> None:
    calls: list[str] = []
    run_ladder(context(tmp_path, "always-deep"), max_level="L2", levels=levels(calls, set()))  # type: ignore[arg-type]
    assert calls == ["L1", "L2"]


def test_an_explicit_policy_overrides_the_setting(tmp_path: Path) -> None:
    calls: list[str] = []
    run_ladder(context(tmp_path, "always-deep"), levels=levels(calls, {"L1"}), policy=ladder_policy("l1-only"))  # type: ignore[arg-type]
    assert calls == ["L1"]


def test_hierarchical_with_stop_early_off_is_unchanged(tmp_path: Path) -> None:
    """``ladder diagnose`` (stop_early=False): every level runs and the FIRST passing level is the stop, as before."""
    calls: list[str] = []
    out = run_ladder(context(tmp_path), stop_early=False, levels=levels(calls, {"L1", "L3"}))  # type: ignore[arg-type]
    assert calls == ["L1", "L2", "L3", "L4"] and out.stop.level == "L1" and out.chosen.id == "vec-l1"


def test_random_family_draws_an_applicable_family_reproducibly(tmp_path: Path) -> None:
    def draw(seed: int, problem: str = "softmax", history: int = 0) -> str:
        calls: list[str] = []
        out = run_ladder(context(tmp_path, "random-family", seed=seed, problem=problem, history=history),
                         levels=levels(calls, {"L1", "L2"}))  # type: ignore[arg-type]
        assert calls == ["L1"]  # the floor pays for L1's matching only
        assert out.stop is not None and "random-family policy" in out.stop.rationale
        return out.chosen.id  # type: ignore[union-attr]

    picks = {draw(s, p, h) for s in range(6) for p in ("softmax", "layernorm") for h in range(3)}
    assert picks == {"vec-l1", "warps-l1"}  # never a card without a recipe, never a refused one
    assert draw(3, "softmax", 1) == draw(3, "softmax", 1)  # seeded: the same session draws the same family


def test_random_family_with_nothing_applicable_is_inconclusive(tmp_path: Path) -> None:
    calls: list[str] = []
    lv = levels(calls, {"L1"})
    lv["L1"].cards = [card("refused", False)]
    out = run_ladder(context(tmp_path, "random-family"), levels=lv)  # type: ignore[arg-type]
    assert out.inconclusive and out.chosen is None


def test_unknown_policy_names_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="always-deep"):
        ladder_policy("deepest")
    with pytest.raises(ValueError):
        LadderSettings(policy="deepest")
    assert set(POLICIES) == {"hierarchical", "l1-only", "profile-first", "always-deep", "random-family"}


def test_policy_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LADDER_POLICY", "profile-first")
    monkeypatch.setenv("LADDER_POLICY_SEED", "7")
    s = LadderSettings()
    assert (s.policy, s.policy_seed) == ("profile-first", 7)
