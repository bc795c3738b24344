"""L4: invariant retrieval through a (fake) KBClient, template filling, compiler-source fallback."""

from __future__ import annotations

import string
from pathlib import Path

import yaml

from kb.client import KBClient
from kb.lint import TEMPLATE_FIELDS
from kb.models.cards import InvariantCard, parse_card
from kb.models.search import InvariantQuery, SearchHit
from optimizer.ir import FRONTEND, IRReport, Signature, explain
from optimizer.ir.constructs import card_constructs
from optimizer.ir.l4 import invariant_applies, template_context, fill_template, installed_backend_source, locate_pass

CARDS_DIR = Path(__file__).resolve().parents[3] / "kb" / "cards" / "invariants"


class FakeKB:
    """KBClient over in-memory invariant cards: matches by signature word or pass name, like the real service."""

    def __init__(self, cards: list[InvariantCard]) -> None:
        self.cards = cards
        self.queries: list[InvariantQuery] = []

    def get_invariants(self, query: InvariantQuery) -> list[SearchHit]:
        self.queries.append(query)
        passes = {p.lower() for p in query.pass_names}
        ok = [c for c in self.cards if query.backend in c.backends or "any" in c.backends or query.backend == "any"]
        by_sig = [c for c in ok if set(query.ir_signatures) & set(c.symptoms.ir_signatures)]
        by_pass = [c for c in ok if c not in by_sig and passes & {p.lower() for p in c.passes}]
        return [SearchHit(card=c, score=1.0) for c in (by_sig + by_pass)[: query.top_k]]

    def search(self, query):  # the rest of the protocol is unused by L4
        return []

    quick_match = search

    def get_card(self, card_id, version=None):
        return next(c for c in self.cards if c.id == card_id)

    def list_cards(self, filter, page_size=50, cursor=""):
        raise NotImplementedError

    def upsert_card(self, card):
        raise NotImplementedError

    def set_card_status(self, card_id, status, reason=""):
        raise NotImplementedError

    def submit_trajectory(self, trajectory):
        return False

    def close(self):
        pass


ARGMAX_CARD = InvariantCard(
    id="test-argmax", title="argmax reduces carry two operands", summary="tl.argmax builds a two-operand tt.reduce.",
    backends=["cuda"], levels=["L4"], passes=["ConvertTritonGPUToLLVM"],
    symptoms={"ir_signatures": ["multi_operand_reduction"]},
    legality="A multi-operand reduce never uses redux.sync; every butterfly step shuffles each operand.",
    question_templates=["Is the index of the reduce at {source_line} used after {pass}?", "Why {mystery}?"],
    body="## What a rewrite must satisfy\n- Keep tie-break-left semantics if indices are consumed.\n"
         "- Drop the index operand when only values are needed.\n## Other\ntext",
)


def _report(**over) -> IRReport:
    sig = Signature(name="multi_operand_reduction", count=2, stage="ttir", pass_introduced=FRONTEND,
                    related_passes=["ConvertTritonGPUToLLVM"], source_lines=[12, 14], detail="2 tt.reduce")
    base = dict(kernel="top2", source_file="/k/top2.py", target="cuda:90", backend="cuda", compiler="triton",
                compiler_version="3.9.0", mode="compile", signatures=[sig], options={"num_warps": 1},
                source_excerpt={12: "v1, i1 = tl.max(x, axis=0, return_indices=True)"})
    return IRReport(**(base | over))


def test_fake_kb_satisfies_the_protocol():
    assert isinstance(FakeKB([]), KBClient)


def test_explain_settles_with_a_card_and_fills_templates():
    kb = FakeKB([ARGMAX_CARD])
    account = explain(_report(), kb)
    (f,) = account.findings
    assert f.settled and f.cards == ["test-argmax"] and "redux.sync" in f.condition
    assert f.constraints == ["Keep tie-break-left semantics if indices are consumed.",
                             "Drop the index operand when only values are needed."]
    q1, q2 = f.questions
    assert q1.question == ("Is the index of the reduce at top2.py:12 (`v1, i1 = tl.max(x, axis=0, return_indices=True)`)"
                           " used after ConvertTritonGPUToLLVM?") and not q1.unfilled
    assert q2.unfilled == ["mystery"] and q2.question == "Why (mystery unknown)?"
    assert kb.queries[0].ir_signatures == ["multi_operand_reduction"] and kb.queries[0].backend == "cuda"
    assert "line 12" in f.account and f.pass_name == FRONTEND
    assert account.unresolved == []


def test_hotspot_lines_and_focus_select_signatures():
    kb = FakeKB([ARGMAX_CARD])
    assert explain(_report(), kb, hotspot_lines=[99]).findings == []
    assert len(explain(_report(), kb, hotspot_lines=[14]).findings) == 1
    assert explain(_report(), kb, focus=["fma_dot"]).findings == []


def test_unsettled_signature_is_located_in_installed_compiler_source(golden):
    _, report = golden("dot_ieee_90")
    account = explain(report, FakeKB([]), focus=["fma_dot"])
    (f,) = account.findings
    assert not f.settled and f.pass_name == "TritonGPUAccelerateMatmul"
    ref = f.source_refs[0]
    assert ref.path.endswith("compiler.py") and "accelerate_matmul" in ref.code and ref.function == "make_ttgir"
    assert "compiler source" in f.condition


def test_pass_gates_are_evaluated_for_the_target(golden):
    _, report = golden("dot_tf32_90_s1")
    (f,) = explain(report, None, focus=["no_software_pipelining"]).findings
    applicable = [r for r in f.source_refs if r.applies]
    assert applicable and all("capability" in " ".join(r.conditions) for r in applicable)
    assert "num_stages=1" in f.condition
    assert invariant_applies(["if capability // 10 in [8, 9]"], 90) is True
    assert invariant_applies(["elif capability // 10 >= 10"], 90) is False
    assert invariant_applies(["if os.system('x')"], 90) is None  # anything but the capability is never evaluated


def test_locate_pass_and_checkout_grep(tmp_path):
    src = installed_backend_source(_report())
    assert src is not None and src.name == "compiler.py"
    assert locate_pass("TritonGPUCoalesce", "tritongpu-coalesce", src)[0].code.startswith("passes.ttgpuir.add_coalesce(")
    assert locate_pass(FRONTEND, "", src) == []
    td = tmp_path / "include" / "Passes.td"
    td.parent.mkdir(parents=True)
    td.write_text('def TritonGPUAccelerateMatmul : Pass<"tritongpu-accelerate-matmul", "mlir::ModuleOp"> {\n')
    report = _report(signatures=[Signature(name="fma_dot", count=1, stage="ttgir",
                                           pass_introduced="TritonGPUAccelerateMatmul", source_lines=[17])],
                     pass_changes=[{"index": 1, "pass_name": "TritonGPUAccelerateMatmul",
                                    "pass_argument": "tritongpu-accelerate-matmul", "stage": "ttgir", "changed": True}])
    (f,) = explain(report, None, compiler_source=tmp_path).findings
    checkout = [r for r in f.source_refs if r.origin == "checkout"]
    assert checkout and checkout[0].path.endswith("Passes.td") and checkout[0].line == 1


def test_fill_template_reports_unknown_fields_and_never_prints_them_raw():
    q = fill_template("{pass} at {source_line} with {x}", {"pass": "P", "source_line": "k.py:3"}, "c")
    assert (q.question, q.unfilled, q.card_id) == ("P at k.py:3 with (x unknown)", ["x"], "c")


def _curated() -> list[InvariantCard]:
    cards = [parse_card(yaml.safe_load(p.read_text())) for p in sorted(CARDS_DIR.glob("*.yaml"))]
    return [c for c in cards if isinstance(c, InvariantCard)]


def test_curated_invariant_cards_ground_the_golden_signatures(golden):
    """Every golden signature that a curated card cites for one of its constructs gets such a card, every question
    is filled, and a card citing it for a construct the kernel lacks is passed over with the reason."""
    cards = _curated()
    kb = FakeKB(cards)
    for name in ("top2_argmax", "row_sum", "dot_ieee_90", "atomic_hist"):
        _, report = golden(name)
        account = explain(report, kb, top_k=10)
        for f in account.findings:
            sig = report.signature(f.signature)
            citing = [c for c in cards if f.signature in c.symptoms.ir_signatures and {"cuda", "any"} & set(c.backends)]
            about = {c.id: card_constructs(c.symptoms.code_features) for c in citing}
            fitting = {i for i, a in about.items() if not a or a & set(sig.constructs)}
            if fitting:
                assert set(f.cards) & fitting and set(f.cards) <= fitting, (name, f.signature, f.cards)
            assert {p.split(":")[0] for p in f.passed_over} == {c.id for c in citing} - fitting
            for q in f.questions:
                assert q.unfilled == [] and "{" not in q.question, (name, f.signature, q.question)


def test_barrier_is_explained_by_the_card_of_its_construct(golden):
    """A barrier from a cross-warp tl.sum gets the reduction cards, one from tl.atomic_add the atomics card."""
    kb = FakeKB(_curated())
    _, report = golden("row_sum")
    (f,) = explain(report, kb, focus=["barrier"]).findings
    assert report.signature("barrier").constructs == ["reduce", "store"]  # tl.store(OUT + row, tl.sum(x, axis=0))
    assert f.cards[0] == "nv-cross-warp-reduce-smem-barriers" and "nv-atomic-sem-lowering" not in f.cards
    assert any(p.startswith("nv-atomic-sem-lowering: about atomic") for p in f.passed_over)
    assert "Would a block shape 1024 with rows across warps keep the reduce warp-local?" in [q.question for q in f.questions]
    _, report = golden("atomic_hist")
    (f,) = explain(report, kb, focus=["barrier"]).findings
    assert report.signature("barrier").constructs == ["atomic"]
    assert f.cards == ["nv-atomic-sem-lowering"] and f.settled and "acq_rel" in f.condition
    assert "nv-cross-warp-reduce-smem-barriers" in {p.split(":")[0] for p in f.passed_over}


def test_every_card_placeholder_is_a_field_the_filler_fills():
    """Each ``{name}`` in an invariant card's questions is a documented template field, and the L4 filler produces
    every documented field from a report that has the information."""
    used = {n for c in _curated() for t in c.question_templates for _, n, _, _ in string.Formatter().parse(t) if n}
    assert used and used <= set(TEMPLATE_FIELDS), sorted(used - set(TEMPLATE_FIELDS))
    sig = Signature(name="masked_load_not_vectorized", count=1, stage="llir", pass_introduced="ConvertTritonGPUToLLVM",
                    source_lines=[12], detail="1 masked load(s) fell back to narrower accesses (vec 1 instead of 4)",
                    evidence=['reduce_mode = "max_with_index"'],
                    facts={"op": "tt.load", "dtype": "f32", "block_shape": "1024", "operands": "1",
                           "input_precision": "tf32"})
    report = _report(signatures=[sig], options={"num_warps": 4, "maxnreg": 64}, compiled_with={"num_stages": 3},
                     stages=[{"stage": "ptx", "lines": 10, "features": {"fma_f32": 7}}],
                     resources={"registers": 40, "spill_stores_bytes": 0, "shared_bytes": 16, "barriers": 1})
    context = template_context(report, sig)
    assert set(TEMPLATE_FIELDS) <= set(context), sorted(set(TEMPLATE_FIELDS) - set(context))
    assert (context["num_stages"], context["fma_f32"], context["origin_vec"]) == ("3", "7", "4")


def test_fields_fall_back_to_neighbours_and_constexprs():
    reduce = Signature(name="cross_warp_reduction", count=1, stage="ttgir", source_lines=[12],
                       facts={"op": "tt.reduce", "dtype": "f32", "block_shape": "256", "operands": "2"})
    barrier = Signature(name="barrier", count=2, stage="ptx", source_lines=[12])
    spill = Signature(name="register_spill", count=64, stage="cubin", pass_introduced="ptxas")
    report = _report(signatures=[reduce, barrier, spill], args=[
        {"name": "X", "index": 0, "type": "*fp16"}, {"name": "BLOCK_M", "index": 1, "type": "constexpr", "value": 64},
        {"name": "BLOCK_N", "index": 2, "type": "constexpr", "value": 32}])
    ctx = template_context(report, barrier)
    assert (ctx["block_shape"], ctx["dtype"], ctx["operands"]) == ("256", "f32", "2")
    ctx = template_context(report, spill)
    assert (ctx["block_shape"], ctx["dtype"]) == ("BLOCK_M=64, BLOCK_N=32", "fp16") and "source_line" not in ctx
    q = fill_template("live tensors at {source_line} for {block_shape}", ctx)
    assert q.unfilled == ["source_line"] and q.question == "live tensors at (source_line unknown) for BLOCK_M=64, BLOCK_N=32"


def test_attribute_is_capture_analyze_explain_in_one_call(tmp_path):
    from optimizer.ir import attribute

    kernels = Path(__file__).parent / "kernels"
    res = attribute(f"{kernels}/top2_argmax.py::top2_argmax", "cuda:90",
                    {"X": "*fp32", "OUT": "*fp32", "n_cols": 1000, "stride": 1024, "BLOCK": 256},
                    client=FakeKB([ARGMAX_CARD]), options={"num_warps": 1}, hotspot_lines=[12], workdir=tmp_path)
    assert res.report.signature("multi_operand_reduction").count == 2
    settled = [f for f in res.account.findings if f.settled]
    assert [f.signature for f in settled] == ["multi_operand_reduction"] and settled[0].cards == ["test-argmax"]
    assert all(12 in f.source_lines for f in res.account.findings)


def test_curated_cards_fill_every_question_on_ascend(ascend_golden):
    kb = FakeKB(_curated())
    for name in ("top2_argmax", "gather"):
        _, report = ascend_golden(name)
        for f in explain(report, kb, top_k=10).findings:
            assert f.cards, (name, f.signature)
            for q in f.questions:
                assert q.unfilled == [] and "{" not in q.question, (name, f.signature, q.question)
