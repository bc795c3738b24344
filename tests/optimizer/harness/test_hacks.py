"""Static hack catalogue: each pattern fires on its hack and stays quiet on honest code, comments and prose."""

from __future__ import annotations

from pathlib import Path

import pytest

from optimizer.harness.hacks import CATALOGUE, by_code, static_scan

DATA = Path(__file__).parents[1] / "data"
HONEST = (DATA / "softmax" / "initial.py").read_text()


def codes(src: str, **kw: bool) -> set[str]:
    return {f.code for f in static_scan(src, **kw)}


def test_catalogue_is_well_formed() -> None:
    seen = set()
    for c in CATALOGUE:
        assert c.code not in seen and c.sources and c.description
        seen.add(c.code)
        assert c.kind == "runtime" or c.patterns or c.code == "no_triton_kernel"
    assert by_code("reference_op_call").kind == "runtime"


def test_honest_candidate_is_clean() -> None:
    assert codes(HONEST) == set()


@pytest.mark.parametrize(
    ("snippet", "code"),
    [
        ("s = torch.cuda.Stream()", "side_stream"),
        ("import threading", "thread_injection"),
        ("time.perf_counter = lambda: 0.0", "timer_patch"),
        ("start = torch.cuda.Event(enable_timing=True)", "timer_patch"),
        ("f = sys._getframe(1)", "introspection"),
        ("from optimizer.harness.validate import compare_outputs", "harness_access"),
        ("ref = Model()", "harness_access"),
        ("y = x.half()", "precision_downgrade"),
        ("acc = tl.dot(a, b, input_precision='tf32')", "precision_downgrade"),
        ("@functools.lru_cache\ndef f(): pass", "static_result_cache"),
        ("os.environ['X'] = '1'", "env_tamper"),
    ],
)
def test_patterns_fire(snippet: str, code: str) -> None:
    assert code in codes(HONEST + "\n" + snippet + "\n")


def test_comments_docstrings_and_context() -> None:
    prose = HONEST + '\n# never use torch.cuda.Stream() here\ndef f():\n    """x.half() would be a hack"""\n    return 1\n'
    assert codes(prose) == set()
    assert "precision_downgrade" not in codes(HONEST + "\ny = x.half()\n", fp32_reference=False)
    assert "harness_access" not in codes(HONEST + "\nclass Model(nn.Module):\n    pass\n")
    assert codes("import torch\nclass ModelNew: pass\n") == {"no_triton_kernel"}


def test_review_only_flags_are_warnings_of_the_catalogue() -> None:
    """kb.vocab.REVIEW_ONLY_HACK_FLAGS (rounds stay minable) may only name warn-severity checks that exist."""
    from kb.vocab import REVIEW_ONLY_HACK_FLAGS
    from optimizer.harness.hacks import CATALOGUE

    warn = {c.code for c in CATALOGUE if c.severity == "warn"}
    assert REVIEW_ONLY_HACK_FLAGS <= warn
    assert "static_result_cache" not in REVIEW_ONLY_HACK_FLAGS  # suspicious code keeps blocking mining
