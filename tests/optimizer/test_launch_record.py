"""LaunchRecord: the typed launch record of the worker contracts, still a dict (issue 29 item 1)."""

from __future__ import annotations

import typing

from optimizer.harness.contracts import LaunchesResult, LaunchRecord


def test_launch_record_is_typed_and_stays_a_dict() -> None:
    hints = typing.get_type_hints(LaunchRecord)
    assert {"kernel", "file", "signature", "constexprs", "divisible_by_16", "ir_args", "options", "grid",
            "launches"} <= set(hints)
    rec = {"kernel": "k", "file": "/x.py", "options": {"num_warps": 4}, "grid": "<function>", "launches": 2,
           "something_new": [1, 2]}
    out = LaunchesResult.model_validate({"launches": [rec], "note": ""}).launches[0]
    assert isinstance(out, dict) and out == rec  # unknown keys are kept, values untouched
    assert out.get("options", {}).get("num_warps") == 4
