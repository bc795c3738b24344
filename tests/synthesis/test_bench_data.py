"""The labelled synthesis benchmark: size, label integrity, and that the JSONL matches its source."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from kb.cardfiles import load_dir

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "benchmarks" / "synthesis"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"_synth_{name}", DATA / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_labelled_set_is_large_enough_and_labels_name_real_cards():
    rows = [json.loads(line) for line in (DATA / "trajectories.jsonl").read_text().splitlines() if line.strip()]
    labels = [lab for r in rows for lab in r["labels"].values()]
    assert len(rows) >= 30 and len(labels) >= 150
    ids = {c.id for c in load_dir() if c.kind == "pattern"}
    assert sorted({lab["family"] for lab in labels if lab["family"] and lab["family"] not in ids}) == []
    groups = [lab["new_family_group"] for lab in labels if lab["family"] is None and lab["new_family_group"]]
    assert len(set(groups)) >= 5 and all(lab["new_family_group"] is None for lab in labels if lab["family"])
    assert {r["split"] for r in rows} == {"dev", "test"}


def test_jsonl_is_built_from_source():
    built = _load("build_dataset").build(DATA / "source.yaml")
    stored = [json.loads(line) for line in (DATA / "trajectories.jsonl").read_text().splitlines() if line.strip()]
    assert built == stored, "run: python benchmarks/synthesis/build_dataset.py"
