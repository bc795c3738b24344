"""The labelled diagnosis benchmark (benchmarks/diagnosis): labels against the shared vocabulary, coverage of
every cause in both halves of the split, and every item's initial kernel AND reference fix validated against
the PyTorch reference on its SMOKE_CASES with the project's own validation (``optimizer.harness.evaluation.evaluate``
on the interpreter backend: sandboxed worker, every element compared, hack probes on)."""

from __future__ import annotations

import ast
import inspect
import json
import os
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from benchmarks.diagnosis.dataset import (
    DIAGNOSIS_DIR,
    LabelError,
    known_families,
    load_item,
    load_items,
)
from kb.vocab import CAUSE_CLASS, CAUSE_FAMILIES, CAUSES
from optimizer.harness.problem import load_problem

ROOT = Path(__file__).resolve().parents[2]
ITEMS = load_items()
NAMES = [i.name for i in ITEMS]
LABELLED_CAUSES = sorted(CAUSES - {"unknown"})
#: causes a compile for sm_90 can prove (spills, FMA dots, scalar loads): their items must carry a static_check
STATIC_CAUSES = {"register_spills", "fma_dot", "unvectorized_access"}


# ------------------------------------------------------------------------------------------- labels ---
def test_enough_items_and_every_cause_in_both_halves():
    assert len(ITEMS) >= 40
    for split in ("tune", "eval"):
        covered = Counter(i.cause for i in ITEMS if i.split == split)
        missing = [c for c in LABELLED_CAUSES if not covered[c]]
        assert not missing, f"{split} half lacks {missing}"
    per_cause = Counter((i.cause, i.split) for i in ITEMS)
    for cause in LABELLED_CAUSES:
        assert abs(per_cause[cause, "tune"] - per_cause[cause, "eval"]) <= 1, f"{cause}: split is not about half"


def test_some_items_have_a_dominant_and_a_secondary_cause():
    two = [i for i in ITEMS if i.secondary]
    assert len(two) >= 5, [i.name for i in two]
    assert {i.split for i in two} == {"tune", "eval"}


def test_labels_follow_the_vocabulary():
    for item in ITEMS:
        assert item.families[:1] == list(CAUSE_FAMILIES[item.cause][:1]), item.name
        assert set(item.families) <= known_families(), item.name
        if item.bottleneck_class != CAUSE_CLASS[item.cause]:
            assert item.cause in ("at_roofline", "unvectorized_access", "l2_unfriendly_order"), (
                f"{item.name}: class {item.bottleneck_class} differs from the default {CAUSE_CLASS[item.cause]}")
        if item.cause in STATIC_CAUSES:
            assert item.static_check is not None, f"{item.name}: a {item.cause} item must carry a static_check"
            assert item.static_check.seen != "TBD", f"{item.name}: run static_check.py --write-seen"


#: words that would hand a diagnoser the answer if an item's folder name or docstrings used them
GIVEAWAYS = ("planted", "naive", "spill", "contention", "fma", "roofline", "vectoriz", "redundant", "l2", "tiny",
             "per-element", "per_element", "launch overhead", "unaligned")


def test_names_and_docstrings_do_not_give_the_cause_away():
    for item in ITEMS:
        assert not any(w in item.name for w in GIVEAWAYS), item.name
        for f in ("problem.py", "initial.py"):
            doc = (ast.get_docstring(ast.parse((item.folder / f).read_text())) or "").lower()
            assert not [w for w in GIVEAWAYS if w in doc], (item.name, f, [w for w in GIVEAWAYS if w in doc])


def _write_item(tmp_path: Path, label: str, fix: bool = True) -> Path:
    folder = tmp_path / "item"
    folder.mkdir(parents=True)
    src = DIAGNOSIS_DIR / "gelu_tanh"
    for f in ("problem.py", "initial.py") + (("fix.py",) if fix else ()):
        (folder / f).write_text((src / f).read_text())
    (folder / "label.yaml").write_text(label)
    return folder


GOOD = """cause: per_element_grid
secondary: []
class: latency_bound
families: [block-per-program]
split: tune
where: "initial.py: one element per program"
shapes_dtypes: fp32
"""


@pytest.mark.parametrize(("old", "new", "message"), [
    ("cause: per_element_grid", "cause: slow_kernel", "is not a Cause; use one of"),
    ("cause: per_element_grid", "cause: unknown", "not a label"),
    ("class: latency_bound", "class: slowish", "is not a BottleneckClass"),
    ("[block-per-program]", "[block-per-program, no-such-card]", "no-such-card"),
    ("[block-per-program]", "[rows-per-program]", "must start with 'block-per-program'"),
    ("secondary: []", "secondary: [per_element_grid]", "must not repeat the cause"),
    ("split: tune", "split: test", "split"),
])
def test_bad_labels_are_rejected_with_a_clear_message(tmp_path: Path, old: str, new: str, message: str):
    assert load_item(_write_item(tmp_path, GOOD)).cause == "per_element_grid"
    bad = tmp_path / "bad"
    bad.mkdir()
    folder = _write_item(bad, GOOD.replace(old, new))
    with pytest.raises(LabelError, match=message) as err:
        load_item(folder)
    assert "label.yaml" in str(err.value)


def test_fix_rules(tmp_path: Path):
    with pytest.raises(LabelError, match="has no fix.py"):
        load_item(_write_item(tmp_path, GOOD, fix=False))
    roof = GOOD.replace("per_element_grid", "at_roofline").replace("latency_bound", "memory_bound")
    with pytest.raises(LabelError, match="nothing to fix"):
        load_item(_write_item(tmp_path / "x", roof.replace("[block-per-program]", "[]"), fix=True))


def test_splits_filter():
    tune, ev = load_items("tune"), load_items("eval")
    assert sorted(i.name for i in tune + ev) == NAMES and not {i.name for i in tune} & {i.name for i in ev}
    with pytest.raises(LabelError, match="split must be one of"):
        load_items("test")


# ------------------------------------------------------------------------------------------ problems ---
@pytest.mark.parametrize("name", NAMES)
def test_problem_format(name: str):
    item = ITEMS[NAMES.index(name)]
    p = load_problem(item.problem_path)
    assert 1 <= len(p.module.CASES) <= 3 and 1 <= len(p.module.SMOKE_CASES) <= 2
    for case in p.cases + p.smoke_cases:
        assert p.flops(case) > 0 and p.bytes_moved(case) > 0
    for path in {item.initial_path, item.fix_path}:
        tree = ast.parse(path.read_text())
        kernels = [f for f in tree.body if isinstance(f, ast.FunctionDef)
                   and any("triton.jit" in ast.unparse(d) for d in f.decorator_list)]
        assert kernels, f"{path.name} defines no @triton.jit kernel"
    from optimizer.harness.problem import load_candidate

    for path in {item.initial_path, item.fix_path}:
        cls = load_candidate(path)
        for method in ("__init__", "forward"):
            assert inspect.signature(getattr(cls, method)) == inspect.signature(getattr(p.module.Model, method)), (
                f"{path.name}: ModelNew.{method} must have Model's signature")


@pytest.mark.parametrize("name", NAMES)
def test_launches_are_tunable(name: str):
    """Every launch passes num_warps and every constexpr, so launch-parameter searches can reach them."""
    item = ITEMS[NAMES.index(name)]
    for path in dict.fromkeys([item.initial_path, item.fix_path]):
        tree = ast.parse(path.read_text())
        kernels = [f for f in tree.body if isinstance(f, ast.FunctionDef)
                   and any("triton.jit" in ast.unparse(d) for d in f.decorator_list)]
        constexprs = {f.name: {a.arg for a in f.args.args if a.annotation and "constexpr" in ast.unparse(a.annotation)}
                      for f in kernels}
        launches = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript)
                    and isinstance(n.func.value, ast.Name) and n.func.value.id in constexprs]
        assert launches, f"{path.name}: ModelNew launches no kernel"
        for call in launches:
            passed = {k.arg for k in call.keywords}
            assert "num_warps" in passed and constexprs[call.func.value.id] <= passed, (path.name, call.func.value.id)


def test_initial_and_fix_validate_on_smoke_cases():
    """Both kernels of every item pass the project's validation in the interpreter (two workers)."""
    from optimizer.harness.evaluation import evaluate
    from optimizer.settings import LadderSettings

    settings = LadderSettings(validation_seeds=[0])
    jobs = [(i, path) for i in ITEMS for path in dict.fromkeys([i.initial_path, i.fix_path])]

    def run(job):
        item, path = job
        problem = load_problem(item.problem_path)
        ev = evaluate(problem, path, backend="interpreter", settings=settings, timing=False)
        return f"{item.name}/{path.name}", ev, len(problem.smoke_cases)

    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(run, jobs))
    failed = {k: ev.reason[:600] for k, ev, _ in results if not ev.passed}
    assert not failed, json.dumps(failed, indent=1)
    assert all(len(ev.validation.cases) == n for _, ev, n in results), "every smoke case was validated"


@pytest.mark.slow
def test_static_checks_hold_on_sm90():
    """What each label says the sm_90 compile shows (spills, FMA dots, scalar loads) is what the compile shows."""
    proc = subprocess.run([sys.executable, str(DIAGNOSIS_DIR / "static_check.py"), "--json"], check=False, capture_output=True,
                          text=True, timeout=1800, cwd=ROOT, env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    results = json.loads(proc.stdout)
    bad = {r["item"]: r["initial"]["failures"] + r["fix"]["failures"] for r in results if not r["ok"]}
    assert not bad and proc.returncode == 0, bad
    assert {r["item"] for r in results} >= {i.name for i in ITEMS if i.cause in STATIC_CAUSES}


def test_readme_documents_the_split_as_it_is():
    from benchmarks.diagnosis.dataset import split_table

    readme = (DIAGNOSIS_DIR / "README.md").read_text()
    assert split_table(ITEMS) in readme, "README's split table is stale: paste dataset.split_table() into it"
    assert f"{len(ITEMS)} Triton kernels" in readme


# ---------------------------------------------------------------------------------------- gpu_time ---
sys.path.insert(0, str(DIAGNOSIS_DIR))
import gpu_time


def test_gpu_time_reads_labels_without_yaml():
    import yaml

    assert gpu_time.list_items() == NAMES
    for item in ITEMS:
        fields = gpu_time.label_fields(item.folder / "label.yaml")
        raw = yaml.safe_load((item.folder / "label.yaml").read_text())
        assert fields == {k: raw[k] for k in ("cause", "secondary", "class", "split")}


def test_gpu_time_selects_items_and_rejects_unknown_ones():
    assert gpu_time.select("sum_all, gelu_tanh", None, NAMES) == ["sum_all", "gelu_tanh"]
    assert set(gpu_time.select(None, "eval", NAMES)) == {i.name for i in ITEMS if i.split == "eval"}
    with pytest.raises(SystemExit, match="unknown item"):
        gpu_time.select("sum_all,nope", None, NAMES)


def test_gpu_time_summary_and_table():
    ok = {"ok": True, "message": ""}
    records = [
        {"item": "a", "cause": "fma_dot", "split": "tune", "case": "N=1", "checks": {"initial": ok, "fix": ok},
         "ms": {"initial": 4.0, "fix": 1.0, "torch": 2.0}},
        {"item": "a", "cause": "fma_dot", "split": "tune", "case": "N=2", "checks": {"initial": ok, "fix": ok},
         "ms": {"initial": 9.0, "fix": 1.0, "torch": 2.0}},
        {"item": "b", "cause": "at_roofline", "split": "eval", "case": "N=1",
         "checks": {"initial": {"ok": False, "message": "3 elements differ"}}, "ms": {}},
    ]
    s = gpu_time.summarize(records)
    assert s["items"]["a"]["fix_speedup"] == 6.0 and s["items"]["a"]["fix_vs_torch"] == 2.0
    assert s["items"]["b"]["fix_speedup"] is None and s["failures"] == ["b [N=1] initial: 3 elements differ"]
    assert s["weak_items"] == []
    records[1]["ms"]["initial"] = 1.0 / 4.0  # geomean speedup (4 * 1/4) ** 0.5 = 1: the cause costs nothing here
    assert gpu_time.summarize(records)["weak_items"] == ["a"]
    lines = gpu_time.render_table(records).splitlines()
    assert len(lines) == 5 and lines[2].split()[-2:] == ["4.00", "ok"] and lines[4].endswith("FAIL")


#: run gpu_time.py as on the GPU machine: no pydantic, no yaml; do_bench replaced by a fake that runs the
#: function once and returns 2, 1, 4 ms in turn (initial, fix, torch), so the timing path runs on the CPU
FAKE_GPU_RUN = """
import runpy, sys, itertools
class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("pydantic", "pydantic_settings", "yaml", "chromadb", "grpc"):
            raise ImportError(f"{name} is not installed here")
sys.meta_path.insert(0, Blocker())
import triton.testing
times = itertools.cycle([2.0, 1.0, 4.0])
def fake_do_bench(fn, warmup=None, rep=None, return_mode=None):
    fn()
    return next(times)
triton.testing.do_bench = fake_do_bench
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def test_gpu_time_runs_standalone_and_writes_results(tmp_path: Path):
    items = "sum_all,scale_copy,no_such_item"
    env = {**os.environ, "TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-c", FAKE_GPU_RUN, str(DIAGNOSIS_DIR / "gpu_time.py"), str(tmp_path), "--device", "cpu",
           "--smoke"]
    bad = subprocess.run([*cmd, "--items", items], check=False, capture_output=True, text=True, timeout=300, env=env, cwd=ROOT)
    assert bad.returncode != 0 and "unknown item(s): no_such_item" in bad.stderr
    proc = subprocess.run([*cmd, "--items", "sum_all,scale_copy"], check=False, capture_output=True, text=True, timeout=300,
                          env=env, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads((tmp_path / "diagnosis_gpu_times.json").read_text())
    assert {"hostname", "gpu", "torch", "triton", "date", "command"} <= set(report["provenance"])
    recs = {r["item"]: r for r in report["records"]}
    assert recs["sum_all"]["ms"] == {"initial": 2.0, "fix": 1.0, "torch": 4.0}
    assert set(recs["sum_all"]["checks"]) == {"initial", "fix"} and all(c["ok"] for c in recs["sum_all"]["checks"].values())
    assert set(recs["scale_copy"]["checks"]) == {"initial"}  # at_roofline: no fix.py
    assert report["summary"]["items"]["sum_all"]["fix_speedup"] == 2.0 and not report["summary"]["failures"]
    assert (tmp_path / "diagnosis_gpu_times.txt").read_text().startswith("item ")
