"""The checked-in generated code must match what scripts/gen_protos.py produces now."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_generated_code_is_up_to_date(tmp_path: Path):
    spec = importlib.util.spec_from_file_location("gen_protos", ROOT / "scripts" / "gen_protos.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.generate(tmp_path)
    fresh = sorted(p.relative_to(tmp_path) for p in (tmp_path / "retrieval").rglob("*_pb2*.py*"))
    assert fresh, "generator produced nothing"
    for rel in fresh:
        assert (ROOT / rel).read_text() == (tmp_path / rel).read_text(), f"{rel} is stale: run scripts/gen_protos.py"


def test_published_trajectory_schema_matches_the_model():
    """trajectory_json is the one field that stays JSON; its committed JSON Schema is the model's, regenerated."""
    import json

    from kb.models import Trajectory

    spec = importlib.util.spec_from_file_location("gen_protos", ROOT / "scripts" / "gen_protos.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    committed = ROOT / "protos" / "retrieval" / "v1" / "trajectory.schema.json"
    assert committed.read_text() == mod.schema_text("kb.models", "Trajectory"), "stale: run scripts/gen_protos.py"
    schema = json.loads(committed.read_text())
    assert {k: v for k, v in schema.items() if not k.startswith("$")} == {
        k: v for k, v in Trajectory.model_json_schema().items() if k != "$defs"}
    assert schema["$defs"] == Trajectory.model_json_schema()["$defs"]
