"""The curated pattern cards' data: labelled retrieval queries, offline-proposer recipes and the H200
measurements the cards quote (benchmarks/patterns/results). Pure file checks, no model and no GPU."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from kb.models.cards import PatternCard, parse_card

ROOT = Path(__file__).resolve().parents[2]
PATTERNS = ROOT / "kb" / "cards" / "patterns"
QUERIES = ROOT / "benchmarks" / "retrieval" / "queries_patterns.yaml"
RESULTS = ROOT / "benchmarks" / "patterns" / "results" / "idioms_h200.json"
STYLES = {"symptom", "ir", "counter", "question", "code"}
#: recipe kinds the offline proposer implements, with the parameter keys each one takes (a card may leave optional
#: ones out: the tile search's ``modes`` belongs to persistent-tile-loop only)
RECIPE_PARAMS = {
    "launch_params": {"search", "objective"},
    "autotune": {"configs", "key"},
    "compiler_hints": {"hints", "targets", "value"},
    "rows_per_program": {"param", "values"},
    "care_padding_false": set(),
    "value_only_reduction": set(),
    "online_logsumexp": set(),
    "grouped_program_order": {"GROUP_SIZE_M"},
    "persistent_grid": {"programs"},
    "split_k": {"SPLIT_K"},
    "input_precision": {"value"},
    "alignment_hints": set(),
    "block_per_program": {"param", "values", "values_2d"},
    "single_pass_fusion": set(),
    "two_stage_reduction": {"block"},
    "privatized_histogram": {"max_bins"},
    "register_spill_relief": {"values", "search", "objective"},
    "dot_precision": {"tf32_min_tolerance"},
    "dot_tile_search": {"configs", "fixed_variants", "modes"},
    "low_precision_operands": set(),
    "launch_loop_grid": set(),
    "block_scale": {"values"},
    "kernel_chain_fusion": set(),
    "dot_tensor_descriptor": set(),
    "inplace_output": set(),
    "producer_inline": set(),
    "host_setup_cache": set(),
    "lane_accumulators": set(),
    "row_resident": {"values"},
    "column_tiles": {"values"},
    "interleaved_pairs": set(),
    "repeated_index_loads": set(),
}


@pytest.fixture(scope="module")
def cards() -> dict[str, PatternCard]:
    out = {}
    for f in sorted(PATTERNS.glob("*.yaml")):
        card = parse_card(yaml.safe_load(f.read_text()))
        assert isinstance(card, PatternCard), f.name
        out[card.id] = card
    return out


@pytest.fixture(scope="module")
def queries() -> list[dict]:
    return yaml.safe_load(QUERIES.read_text())


def test_queries_are_well_formed_and_label_existing_pattern_cards(queries, cards):
    assert len(queries) >= 60
    ids = [q["id"] for q in queries]
    assert len(ids) == len(set(ids)), "query ids must be unique"
    for q in queries:
        assert set(q) == {"id", "query", "relevant", "style"}, q["id"]
        assert re.fullmatch(r"q-pat-\d{3}", q["id"]), q["id"]
        assert q["style"] in STYLES, q["id"]
        assert q["relevant"] and set(q["relevant"]) <= set(cards), (q["id"], set(q["relevant"]) - set(cards))


def test_queries_do_not_quote_card_titles(queries, cards):
    titles = {c.title.strip().lower() for c in cards.values()}
    assert not [q["id"] for q in queries if q["query"].strip().lower() in titles]


def test_every_pattern_card_is_the_answer_to_some_query(queries, cards):
    answered = {r for q in queries for r in q["relevant"]}
    assert set(cards) - answered == set()


def test_recipes_use_the_proposer_kinds_and_parameter_shapes(cards):
    for card in cards.values():
        recipe = card.rewrite.recipe if card.rewrite else None
        if recipe is None:
            continue
        assert recipe.kind in RECIPE_PARAMS, (card.id, recipe.kind)
        assert set(recipe.params) <= RECIPE_PARAMS[recipe.kind], (card.id, sorted(recipe.params))
        if recipe.kind == "launch_params":
            assert recipe.params["search"] and all(isinstance(v, list) and v for v in recipe.params["search"].values())
        if recipe.kind == "autotune":
            assert all("kwargs" in c for c in recipe.params["configs"]), card.id


def test_measurements_quoted_by_cards_exist_and_were_correct(cards):
    records = json.loads(RESULTS.read_text())["records"]
    by_exp = {r["experiment"] for r in records}
    assert all(r.get("correct") and "ms" in r for r in records), "every timed variant must have passed its check"
    quoted = [e for c in cards.values() for e in c.evidence if e.source and "idioms_h200.json" in e.source]
    assert quoted, "cards quote the H200 measurements"
    for name in ("softmax_short_rows", "top2_sum_groups_of_32", "matmul_splitk_skinny", "cumsum_rows"):
        assert name in by_exp
