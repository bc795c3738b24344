"""Onboarding declarations (problem format extensions) and the rules they relax, checked in-process."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from kb.errors import InvalidArgument
from optimizer.harness.compile_only import interpreter_limitation
from optimizer.harness.hacks import static_scan
from optimizer.harness.probes import OpRecorder
from optimizer.harness.problem import load_problem
from optimizer.harness.validate import (
    EPILOGUE_MAX_FRACTION,
    reference_op_findings,
    compare_outputs,
)

_BASE = """
import torch
from torch import nn

class Model(nn.Module):
    def forward(self, x):
        return x * 2

def get_inputs(n=8):
    return [torch.randn(n)]

def get_init_inputs(**_):
    return []
"""


def _problem(tmp_path: Path, extra: str = "", base: str = _BASE, name: str = "p.py"):
    f = tmp_path / name
    f.write_text(textwrap.dedent(base) + "\n" + textwrap.dedent(extra))
    return load_problem(f)


@pytest.mark.parametrize(("decl", "field"), [
    ("INPLACE_OUTPUTS = 'x'", "INPLACE_OUTPUTS"), ("INPLACE_OUTPUTS = [-1]", "INPLACE_OUTPUTS"),
    ("INT_ATOL = -1", "INT_ATOL"), ("INT_ATOL = 0.5", "INT_ATOL"), ("ALLOWED_TORCH_OPS = [1]", "ALLOWED_TORCH_OPS"),
    ("OUTPUT_DTYPES = {0: 'floaty'}", "OUTPUT_DTYPES"), ("CPU_VALIDATION = 'maybe'", "CPU_VALIDATION"),
])
def test_bad_declarations_name_the_field(tmp_path: Path, decl: str, field: str) -> None:
    with pytest.raises(InvalidArgument) as e:
        _problem(tmp_path, decl)
    assert field in str(e.value)


def test_declarations_load(tmp_path: Path) -> None:
    p = _problem(tmp_path, """
        INPLACE_OUTPUTS = [0, 0]
        INT_ATOL = 1
        ALLOWED_TORCH_OPS = ["sum", "torch.logsumexp", "aten.mean.dim"]
        OUTPUT_DTYPES = {0: "torch.float32"}
        CPU_VALIDATION = "compile_only"
    """)
    assert p.inplace_outputs == (0,) and p.int_atol == 1 and p.cpu_validation == "compile_only"
    assert p.allowed_torch_ops == {"aten.sum", "aten.logsumexp", "aten.mean"}
    assert p.output_dtypes == {0: "float32"}
    plain = _problem(tmp_path, name="plain.py")  # a KernelBench problem keeps the strict defaults
    assert (plain.inplace_outputs, plain.int_atol, plain.cpu_validation) == ((), 0, "execute")


def test_integer_outputs_compare_within_int_atol(tmp_path: Path) -> None:
    ref = torch.tensor([-128, 0, 5, 127], dtype=torch.int8)
    off_by_one = torch.tensor([-127, 0, 4, 127], dtype=torch.int8)
    strict = _problem(tmp_path, name="strict.py")
    r = compare_outputs(off_by_one, ref, strict)
    assert not r.passed and "INT_ATOL" in r.message and "2/4" in r.message
    loose = _problem(tmp_path, "INT_ATOL = 1", name="loose.py")
    assert compare_outputs(off_by_one, ref, loose).passed
    assert not compare_outputs(off_by_one + 1, ref, loose).passed  # -126 vs -128 is 2 off
    flags = torch.tensor([True, False])
    assert not compare_outputs(~flags, flags, loose).passed  # bools stay exact


def test_output_dtype_may_differ_only_when_declared(tmp_path: Path) -> None:
    ref = torch.rand(64) + 0.5
    out = ref.to(torch.bfloat16)
    r = compare_outputs(out, ref, _problem(tmp_path, name="a.py"))
    assert r.reason == "wrong_dtype" and 'OUTPUT_DTYPES = {0: "bfloat16"}' in r.message
    declared = _problem(tmp_path, 'OUTPUT_DTYPES = {0: "bfloat16"}', name="b.py")
    assert compare_outputs(out, ref, declared).passed  # judged with the looser (bf16) tolerance
    assert not compare_outputs((ref * 1.1).to(torch.bfloat16), ref, declared).passed
    assert compare_outputs(ref.double(), ref, declared).reason == "wrong_dtype"  # only the declared dtype


_DEQUANT = """
import torch
from torch import nn

class Model(nn.Module):
    def forward(self, q, scale):
        return (q.to(torch.float32) * scale).to(OUT)

def get_inputs(n=16):
    return [torch.randint(-128, 127, (n,), dtype=torch.int8), 0.5]

def get_init_inputs(**_):
    return []
"""


def test_precision_is_judged_from_the_reference_outputs(tmp_path: Path) -> None:
    half = _problem(tmp_path, "OUT = torch.float16", base=_DEQUANT, name="dq16.py")
    assert not half.fp32_reference()  # integer inputs, fp16 output: not an fp32 problem
    assert half.reference_dtypes() == {"float16"}
    kernel = "import triton\n@triton.jit\ndef k(Q, Y):\n    y = tl.load(Q).to(tl.float16)\n"
    assert "precision_downgrade" not in {f.code for f in static_scan(kernel, fp32_reference=half.fp32_reference())}
    full = _problem(tmp_path, "OUT = torch.float32", base=_DEQUANT, name="dq32.py")
    assert full.fp32_reference()
    assert "precision_downgrade" in {f.code for f in static_scan(kernel, fp32_reference=full.fp32_reference())}


def test_precision_looks_at_every_smoke_case(tmp_path: Path) -> None:
    base = _DEQUANT.replace("def get_inputs(n=16):", "def get_inputs(n=16, half=False):").replace(
        "return (q.to(torch.float32) * scale).to(OUT)", "return (q.to(torch.float32) * scale).to(OUT)")
    p = _problem(tmp_path, """
        OUT = torch.float32
        SMOKE_CASES = [{"n": 8}, {"n": 8, "half": True}]
        _get = get_inputs
        def get_inputs(n=16, half=False):
            q, s = _get(n)
            return [q, torch.tensor(s, dtype=torch.float16 if half else torch.float32)]
    """, base=base, name="cases.py")
    assert not p.fp32_reference()  # the second smoke case touches fp16 (only [0] was looked at before)
    assert p.fp32_reference([p.smoke_cases[0]])
    big = _problem(tmp_path, """
        OUT = torch.float32
        SMOKE_CASES = [{"n": 8}]
        CASES = [{"n": 1 << 20}, {"n": 1 << 30, "half": True}]  # real sizes run on meta: free
        _get = get_inputs
        def get_inputs(n=16, half=False):
            q, s = _get(n)
            return [q, torch.tensor(s, dtype=torch.float16 if half else torch.float32)]
    """, base=base, name="big.py")
    assert not big.fp32_reference()


def _record(fn, *args):
    rec = OpRecorder()
    with torch.no_grad(), rec:
        fn(*args)
    return rec


def test_reference_op_rule_allows_a_cheap_epilogue_on_a_small_tensor(tmp_path: Path) -> None:
    x = torch.randn(64, 256)
    ref = _record(lambda t: t.sum(1).mean(), x)
    p = _problem(tmp_path, name="plain.py")
    partial = torch.randn(64)  # what a kernel would leave: one value per row
    assert reference_op_findings(ref, _record(lambda t: t.mean(), partial), p, x.numel(), False) == []
    cheat = _record(lambda t: torch.sum(t, 1).mean(), x)  # torch does the heavy reduction
    found = reference_op_findings(ref, cheat, p, x.numel(), False)
    assert [f.code for f in found] == ["reference_op_call"]
    assert "aten.sum on 16384 elements" in found[0].message and 'ALLOWED_TORCH_OPS = ["sum"]' in found[0].message
    assert f"1/{EPILOGUE_MAX_FRACTION}" in found[0].message
    declared = _problem(tmp_path, 'ALLOWED_TORCH_OPS = ["sum"]', name="declared.py")
    assert reference_op_findings(ref, cheat, declared, x.numel(), False) == []


def test_reference_op_rule_still_rejects_the_replaced_op(tmp_path: Path) -> None:
    a, b = torch.randn(32, 32), torch.randn(32, 32)
    ref = _record(torch.mm, a, b)
    found = reference_op_findings(ref, _record(torch.mm, a, b), _problem(tmp_path), a.numel(), False)
    assert found and "aten.mm" in found[0].message


def test_downcast_rule_follows_the_reference_dtypes(tmp_path: Path) -> None:
    x = torch.randn(16)
    ref = _record(lambda t: t * 2, x)
    cand = _record(lambda t: t.half().float(), x)
    p = _problem(tmp_path)
    assert [f.code for f in reference_op_findings(ref, cand, p, 16, False)] == ["precision_flags"]
    assert reference_op_findings(ref, cand, p, 16, True) == []  # the reference touches half types itself


def test_parameters_are_built_on_the_target_device(tmp_path: Path) -> None:
    p = _problem(tmp_path, base="""
        import torch
        from torch import nn

        class Model(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.w = nn.Parameter(torch.randn(n, n))
            def forward(self, x):
                return x @ self.w

        def get_inputs(n=4):
            return [torch.randn(n, n)]

        def get_init_inputs(n=4):
            return [n]
    """)
    big = p.make_model({"n": 200_000}, device="meta")  # 40e9 elements: only possible if never built on the host
    assert big.w.device.type == "meta"
    a, b = p.make_model({}, seed=3), p.make_model({}, seed=3)
    assert torch.equal(a.w, b.w)  # same seed, same parameters (the KernelBench rule)


def test_interpreter_limitations_are_recognised() -> None:
    assert "block pointers" in interpreter_limitation("NotImplementedError('Block pointers have been removed in favor')")
    libdev = "InterpreterError: ValueError('Did you forget to add @triton.jit ? (`_semantic` argument must be provided outside of JIT functions.)')"
    assert "libdevice" in interpreter_limitation(libdev, "tl.extra.cuda.libdevice.tanh(x)")
    assert interpreter_limitation(libdev, "helper(x)") is None  # without libdevice it is a real bug
    assert interpreter_limitation("mismatch: 3/100 elements outside atol") is None


def test_inplace_restore_puts_back_the_pristine_values(tmp_path: Path) -> None:
    from optimizer.harness.worker import inplace_restore

    p = _problem(tmp_path, "INPLACE_OUTPUTS = [0]")
    x = torch.arange(4.0)
    restore = inplace_restore(p, [x, 2.0])
    x.mul_(10)
    restore()
    assert torch.equal(x, torch.arange(4.0))
    assert inplace_restore(_problem(tmp_path, name="q.py"), [x]) is None


def test_compile_recorder_passes_none_arguments(tmp_path: Path) -> None:
    """A launcher passing ``None`` (e.g. no bias) compiles: None specialises to constexpr None (suite checker too)."""
    import importlib.util

    (tmp_path / "kern.py").write_text(textwrap.dedent("""
        import triton
        import triton.language as tl

        @triton.jit
        def add_bias(X, B, Y, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(X + offs, mask=offs < n)
            if B is not None:
                x += tl.load(B + offs, mask=offs < n)
            tl.store(Y + offs, x, mask=offs < n)
    """))
    spec = importlib.util.spec_from_file_location("kern_none", tmp_path / "kern.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    from optimizer.harness.compile_only import CompileRecorder

    rec = CompileRecorder()
    x = torch.empty(64, device="meta")
    rec(mod.add_bias, x, None, x, 64, BLOCK=64)
    assert rec.current[0]["ok"], rec.current[0]["message"]
    assert rec.current[0]["constexprs"]["B"] == "None" and "B" not in rec.current[0]["signature"]
