"""Labelled kernels whose defect is NOT one of the listed causes (``benchmarks/diagnosis/beyond``, issue 30 item 5):
labels (``listed: false``, a new cause name, the account finding it must show), coverage (>= 8 kinds, one tune and
one eval kernel each), giveaway-free names and docstrings, the problem format, both kernels of every item validated
in the interpreter, and the static account naming the planted inefficiency on the initial kernel but not on the fix
(slow: one sm_90 compile per kernel)."""

from __future__ import annotations

import ast
import inspect
import json
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from benchmarks.diagnosis.dataset import (
    BEYOND_DIR,
    LabelError,
    account_kinds,
    beyond_table,
    load_beyond,
    load_item,
    load_items,
)
from kb.vocab import CAUSES
from optimizer.harness.problem import load_problem

ITEMS = load_beyond()
NAMES = [i.name for i in ITEMS]
#: words that would name the planted kind in a folder name or a docstring
GIVEAWAYS = ("wave", "tail", "occupancy", "stage", "pipelin", "predicat", "oversized", "int64", "64-bit", "invariant",
             "hoist", "stride", "uncoalesced", "coalesc", "layout", "shuffle", "convert", "mask", "bounds", "redundant",
             "planted", "naive")


def test_at_least_eight_new_kinds_each_with_a_tune_and_an_eval_kernel():
    kinds = Counter(i.cause for i in ITEMS)
    assert len(kinds) >= 8, kinds
    for cause in kinds:
        halves = Counter(i.split for i in ITEMS if i.cause == cause)
        assert halves["tune"] >= 1 and halves["eval"] >= 1, (cause, halves)
    assert all(not i.listed and i.cause not in CAUSES for i in ITEMS)
    assert all(i.inefficiency in account_kinds() for i in ITEMS)
    assert len({i.inefficiency for i in ITEMS}) == len(kinds), "each new kind names its own account finding"


def test_listed_items_stay_apart():
    assert not set(NAMES) & {i.name for i in load_items()}
    assert all(i.listed for i in load_items())


def test_readme_lists_the_new_kinds():
    readme = (BEYOND_DIR.parent / "README.md").read_text()
    assert beyond_table(ITEMS) in readme, "README's table of the kinds beyond the list is stale: paste beyond_table()"


GOOD = """cause: tail_wave
listed: false
inefficiency: wave_quantization
secondary: []
class: latency_bound
families: []
split: tune
where: "initial.py: 140 programs on 132 SMs"
shapes_dtypes: fp32
"""


def _write(tmp_path: Path, label: str) -> Path:
    folder = tmp_path / "item"
    folder.mkdir(parents=True)
    src = BEYOND_DIR / "column_block_sum"
    for f in ("problem.py", "initial.py", "fix.py"):
        (folder / f).write_text((src / f).read_text())
    (folder / "label.yaml").write_text(label)
    return folder


@pytest.mark.parametrize(("old", "new", "message"), [
    ("listed: false\n", "", "is not a Cause; use one of"),
    ("cause: tail_wave", "cause: fma_dot", "is a listed Cause"),
    ("cause: tail_wave", "cause: Tail-Wave", "snake_case"),
    ("inefficiency: wave_quantization", "inefficiency: slowness", "not a gap-account kind"),
    ("families: []", "families: [no-such-card]", "no-such-card"),
])
def test_bad_unlisted_labels_are_rejected(tmp_path: Path, old: str, new: str, message: str):
    assert load_item(_write(tmp_path / "good", GOOD)).cause == "tail_wave"
    with pytest.raises(LabelError, match=message):
        load_item(_write(tmp_path / "bad", GOOD.replace(old, new)))


def test_a_listed_label_cannot_carry_an_inefficiency(tmp_path: Path):
    label = GOOD.replace("cause: tail_wave", "cause: serial_tail").replace("listed: false\n", "").replace(
        "families: []", "families: [enlarge-tiny-blocks]")
    with pytest.raises(LabelError, match="inefficiency is for listed: false"):
        load_item(_write(tmp_path, label))


def test_names_and_docstrings_do_not_give_the_kind_away():
    for item in ITEMS:
        assert not [w for w in GIVEAWAYS if w in item.name], item.name
        for f in ("problem.py", "initial.py"):
            doc = (ast.get_docstring(ast.parse((item.folder / f).read_text())) or "").lower()
            assert not [w for w in GIVEAWAYS if w in doc], (item.name, f, [w for w in GIVEAWAYS if w in doc])


@pytest.mark.parametrize("name", NAMES)
def test_problem_format(name: str):
    from optimizer.harness.problem import load_candidate

    item = ITEMS[NAMES.index(name)]
    p = load_problem(item.problem_path)
    assert 1 <= len(p.module.CASES) <= 3 and 1 <= len(p.module.SMOKE_CASES) <= 2
    for case in p.cases + p.smoke_cases:
        assert p.flops(case) > 0 and p.bytes_moved(case) > 0
    for path in (item.initial_path, item.fix_path):
        cls = load_candidate(path)
        for method in ("__init__", "forward"):
            assert inspect.signature(getattr(cls, method)) == inspect.signature(getattr(p.module.Model, method))
        tree = ast.parse(path.read_text())
        kernels = {f.name: {a.arg for a in f.args.args if a.annotation and "constexpr" in ast.unparse(a.annotation)}
                   for f in tree.body if isinstance(f, ast.FunctionDef)
                   and any("triton.jit" in ast.unparse(d) for d in f.decorator_list)}
        launches = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript)
                    and isinstance(n.func.value, ast.Name) and n.func.value.id in kernels]
        assert launches, f"{path}: no launch"
        for call in launches:
            passed = {k.arg for k in call.keywords}
            assert "num_warps" in passed and kernels[call.func.value.id] <= passed, (path.name, call.func.value.id)


def test_initial_and_fix_validate_on_smoke_cases():
    """Both kernels of every item pass the project's validation in the interpreter (two workers)."""
    from optimizer.harness.evaluation import evaluate
    from optimizer.settings import LadderSettings

    settings = LadderSettings(validation_seeds=[0])
    jobs = [(i, p) for i in ITEMS for p in (i.initial_path, i.fix_path)]

    def run(job):
        item, path = job
        ev = evaluate(load_problem(item.problem_path), path, backend="interpreter", settings=settings, timing=False)
        return f"{item.name}/{path.name}", ev

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(run, jobs))
    failed = {k: ev.reason[:600] for k, ev in results if not ev.passed}
    assert not failed, json.dumps(failed, indent=1)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_the_static_account_names_the_planted_inefficiency(name: str):
    from benchmarks.diagnosis.beyond_account import account_row

    row = account_row(ITEMS[NAMES.index(name)])
    assert row["named"], row["initial"]
    assert row["discriminated"], row["fix"]


def test_account_report_counts_named_and_discriminated():
    from benchmarks.diagnosis.beyond_account import summarize

    rows = [{"split": "eval", "named": True, "discriminated": True, "named_every_case": True},
            {"split": "eval", "named": True, "discriminated": False, "named_every_case": False},
            {"split": "tune", "named": False, "discriminated": False}]
    s = summarize(rows)
    assert (s["eval"]["named"], s["eval"]["discriminated"], s["eval"]["named_every_case"]) == (2, 1, 1)
    assert s["eval"]["named_rate"] == 1.0 and s["tune"]["named_rate"] == 0.0 and s["tune"]["named_every_case"] is None
    assert s["all"]["n"] == 3
