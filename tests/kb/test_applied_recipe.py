"""``AppliedRecipe``: the typed record of ``RoundRewrite.recipe``. Trajectories store the same dict as before and
records written by earlier versions (offline, LLM, screened, before ``base`` existed) still read."""

from __future__ import annotations

import json

from kb.models import AppliedRecipe, Round, RoundRewrite, Trajectory

#: a round's recipe as the offline proposer stored it after a screen (card recipe + applied point + base + screened)
STORED_OFFLINE = {"kind": "launch_params", "params": {"num_warps": [2, 4, 8]}, "requires": ["code:reduction"],
                  "forbids": [], "applied": {"num_warps": 2}, "base": "3f2a9c", "screened": [{"num_warps": 2},
                                                                                            {"num_warps": 8}, None]}
#: the LLM proposer's record: no requires/forbids keys
STORED_LLM = {"kind": "llm", "params": {"model": "m"}, "base": "3f2a9c",
              "applied": {"reply_sha": "a1", "prompt_sha": "b2"}}
#: an early record: no base, and a key this version does not know
STORED_OLD = {"kind": "rows_per_program", "params": {}, "applied": {"rows": 4}, "point": 1}


def test_stored_records_read_typed_and_write_back_unchanged() -> None:
    for stored in (STORED_OFFLINE, STORED_LLM, STORED_OLD):
        rec = AppliedRecipe.of(stored)
        assert rec.record() == stored
    off, llm, old = (AppliedRecipe.of(d) for d in (STORED_OFFLINE, STORED_LLM, STORED_OLD))
    assert off.applied == {"num_warps": 2} and off.base == "3f2a9c" and off.screened == [{"num_warps": 2},
                                                                                         {"num_warps": 8}, None]
    assert llm.kind == "llm" and llm.requires == [] and llm.screened is None
    assert old.base is None and old.applied == {"rows": 4}


def test_screened_points_are_added_to_the_record() -> None:
    rec = AppliedRecipe(kind="launch_params", applied={"num_warps": 2}, base="abc")
    assert rec.record() == {"kind": "launch_params", "applied": {"num_warps": 2}, "base": "abc"}
    both = rec.with_screened([{"num_warps": 2}, {"num_warps": 4}])
    assert both.record() == {**rec.record(), "screened": [{"num_warps": 2}, {"num_warps": 4}]}
    assert rec.screened is None  # frozen: the original is unchanged


def test_a_stored_trajectory_keeps_its_recipe_dict() -> None:
    traj = Trajectory.model_validate({"id": "t-old", "problem": {"name": "softmax"}, "backend": "cuda", "rounds": [
        {"index": 0, "outcome": "baseline"},
        {"index": 1, "outcome": "neutral", "rewrite": {"family": "num-warps", "recipe": STORED_OFFLINE}}]})
    again = Trajectory.model_validate_json(traj.model_dump_json())
    rw = again.rounds[1].rewrite
    assert rw is not None and json.loads(again.model_dump_json())["rounds"][1]["rewrite"]["recipe"] == STORED_OFFLINE
    assert AppliedRecipe.of(rw.recipe).screened == STORED_OFFLINE["screened"]
    fresh = Round(index=1, outcome="neutral", rewrite=RoundRewrite(family="num-warps", recipe=AppliedRecipe.of(
        STORED_OFFLINE).record()))
    assert fresh.rewrite is not None and fresh.rewrite.recipe == STORED_OFFLINE
