"""The static account of the gap (``optimizer.ir.gap_account``): PTX widths, occupancy, waves, strides, masks, and
the TTGIR facts of real cuda:90 compiles (loop-invariant loads, i64 index arithmetic, layout conversions in loops).
The compiling tests take a few seconds each (one worker per kernel, no per-pass dumps)."""

from __future__ import annotations

from pathlib import Path

import pytest

from optimizer.ir.gap_account import (
    account_launch,
    kernel_facts,
    occupancy,
    ptx_facts,
    unexplained_findings,
    wave_fill,
)

PTX = """
.visible .entry k(
{
	@%p1 ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];
	ld.global.b32 { %r5 }, [ %rd2 + 0 ];
	ld.global.nc.v2.b64 { %rd3, %rd4 }, [ %rd5 + 0 ];
	st.global.b16 [ %rd6 + 0 ], { %rs1 };
	wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {%f1}, %rd7, %rd8;
	fma.rn.f32 %f2, %f3, %f4, %f5;
	ret;
}
"""


def test_ptx_widths_and_dot_units():
    f = ptx_facts(PTX)
    assert f["load_bits"] == {128: 2, 32: 1}
    assert f["store_bits"] == {16: 1}
    assert (f["wgmma"], f["mma"], f["fma_f32"]) == (1, 0, 1)
    assert f["instructions"] >= 7


def test_occupancy_limiters_on_h200():
    # 6 stages of 128x128x64 fp16 operands: ~192 KB per program -> one program per SM, shared memory decides
    smem = occupancy(4, 128, 6 * 32 * 1024)
    assert smem["programs_per_sm"] == 1 and smem["limiter"] == "shared_memory" and smem["warps_per_sm"] == 4
    # 8 warps x 128 registers: 4096 registers per warp -> 16 warps -> 2 programs, registers decide
    regs = occupancy(8, 128, 0)
    assert regs["programs_per_sm"] == 2 and regs["limiter"] == "registers"
    small = occupancy(4, 32, 0)
    assert small["programs_per_sm"] == 16 and small["limiter"] == "threads" and small["occupancy"] == 1.0


def test_wave_fill_models_the_tail():
    assert wave_fill(140, 1)["busy"] == pytest.approx(140 / 132 / 2, abs=1e-3)  # 8 SMs run a second program
    assert wave_fill(66, 4)["busy"] == pytest.approx(0.5)  # half the SMs idle
    assert wave_fill(132 * 8 * 10, 8)["busy"] == 1.0
    assert wave_fill(132 * 8 * 3 + 1, 8)["busy"] == pytest.approx((3 + 1 / 1056) / 4, abs=1e-3)


SRC = '''
import triton
import triton.language as tl

@triton.jit
def colmean(x_ptr, y_ptr, M, N, BLOCK: tl.constexpr):
    col = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, M, BLOCK):
        rows = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + rows * N + col, mask=rows < M, other=0.0)
    tl.store(y_ptr + col, tl.sum(acc, axis=0))

@triton.jit
def rowwise(x_ptr, y_ptr, N, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * N + cols, mask=mask, other=0.0)
    tl.store(y_ptr + row * N + cols, x, mask=mask)

@triton.jit
def flat(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask, other=0.0), mask=mask)

@triton.jit
def headscan(s_ptr, T, H: tl.constexpr, BT: tl.constexpr):
    i_h = tl.program_id(0)
    o_t = tl.arange(0, BT)
    p_s = s_ptr + i_h + o_t * H
    tl.store(p_s, tl.load(p_s, mask=o_t < T, other=0.0), mask=o_t < T)

@triton.jit
def grouped(x_ptr, y_ptr, M, N, BLOCK_M: tl.constexpr):
    pid = tl.program_id(0)
    pid_m = pid // (N // BLOCK_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    tl.store(y_ptr + rm, tl.load(x_ptr + rm, mask=rm < M), mask=rm < M)
'''


def test_strides_and_masks_at_the_recorded_values():
    values = {"x_ptr": 0, "y_ptr": 0, "__bytes__:x_ptr": 4, "__bytes__:y_ptr": 4}
    col = kernel_facts(SRC, "colmean", {**values, "M": 8192, "N": 8192, "BLOCK": 1024}, [8192])
    loads = [a for a in col["accesses"] if a["op"] == "load"]
    assert loads[0]["stride"] == 8192 and loads[0]["elt_bytes"] == 4
    assert col["masks"][0]["active"] == 1.0  # 8192 rows in 8 steps of 1024
    row = kernel_facts(SRC, "rowwise", {**values, "N": 1500, "BLOCK_N": 8192}, [65536])
    assert all(a["stride"] == 1 for a in row["accesses"])
    assert row["masks"][0]["active"] == pytest.approx(1500 / 8192, abs=1e-3)
    flat = kernel_facts(SRC, "flat", {**values, "n": 1 << 20, "BLOCK": 1024}, [1024])
    assert flat["masks"][0]["active"] == 1.0 and all(a["stride"] == 1 for a in flat["accesses"])
    # the stride sits in a pointer variable (fla's per-head scan: p = base + i_h + o_t * H): seen through it
    scan = kernel_facts(SRC, "headscan", {**values, "s_ptr": 0, "__bytes__:s_ptr": 4, "T": 64, "H": 32, "BT": 64}, [32])
    assert [a["stride"] for a in scan["accesses"]] == [32, 32]
    # a program id folded by // (grouped tile order) does not count blocks along the grid: no 1/64 'active' lanes
    grouped = kernel_facts(SRC, "grouped", {**values, "M": 2048, "N": 2048, "BLOCK_M": 128}, [256])
    assert grouped["masks"][0]["active"] == 1.0


def _account(src: str, kernel: str, ir_args: dict, grid: list[int], tmp_path: Path, num_warps: int = 4):
    from optimizer.ladder.gap_account import launch_accounts

    tmp_path.mkdir(parents=True, exist_ok=True)
    f = tmp_path / "k.py"
    f.write_text(src)
    consts = {k: v for k, v in ir_args.items() if k.isupper() or k.startswith("BLOCK")}
    rec = {"kernel": kernel, "file": str(f), "grid": grid, "ir_args": ir_args, "constexprs": consts,
           "signature": {k: v for k, v in ir_args.items() if isinstance(v, str)}, "options": {"num_warps": num_warps},
           "numel": {k: 1 << 20 for k, v in ir_args.items() if isinstance(v, str)}}
    accounts, notes = launch_accounts([rec], target="cuda:90", cache_dir=tmp_path / "cache")
    assert not notes, notes
    return {f.kind: f for f in accounts[0].findings}, accounts


def test_strided_column_walk_is_an_unexplained_inefficiency(tmp_path: Path):
    found, accounts = _account(SRC, "colmean", {"x_ptr": "*fp32", "y_ptr": "*fp32", "M": 8192, "N": 8192, "BLOCK": 1024},
                               [8192], tmp_path)
    s = found["access_stride"]
    assert s.significant and s.value == 8192 and s.share == pytest.approx(1 - 1 / 8) and s.proof == "static"
    assert s.source_lines == [11]
    assert found["vector_width"].data["loads"] == {32: found["vector_width"].data["loads"][32]}  # scalar loads only
    # the nearest listed cause (scalar loads -> unvectorized_access) does not explain the stride
    left = unexplained_findings(accounts, {"unvectorized_access"})
    assert "access_stride" in {f.kind for f in left} and "vector_width" not in {f.kind for f in left}


LOOPS = '''
import triton
import triton.language as tl

@triton.jit
def gain_in_loop(x_ptr, g_ptr, y_ptr, N, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    for r in range(ROWS):
        row = pid * ROWS + r
        gain = tl.exp(tl.load(g_ptr + cols))
        tl.store(y_ptr + row * N + cols, tl.load(x_ptr + row * N + cols) * gain)

@triton.jit
def gain_hoisted(x_ptr, g_ptr, y_ptr, N, ROWS: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    gain = tl.exp(tl.load(g_ptr + cols))
    for r in range(ROWS):
        row = pid * ROWS + r
        tl.store(y_ptr + row * N + cols, tl.load(x_ptr + row * N + cols) * gain)

@triton.jit
def wide_offsets(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2.0)
'''


def test_loop_invariant_work_and_wide_indices_from_ttgir(tmp_path: Path):
    args = {"x_ptr": "*fp32", "g_ptr": "*fp32", "y_ptr": "*fp32", "N": 2048, "ROWS": 16, "BLOCK_N": 2048}
    found, _ = _account(LOOPS, "gain_in_loop", args, [4096], tmp_path)
    inv = found["loop_invariant_work"]
    assert inv.significant and inv.data["loads"] >= 1 and inv.data["math"] >= 1 and 11 in inv.source_lines
    hoisted, _ = _account(LOOPS, "gain_hoisted", args, [4096], tmp_path / "h")
    assert "loop_invariant_work" not in hoisted
    wide, _ = _account(LOOPS, "wide_offsets", {"x_ptr": "*fp32", "y_ptr": "*fp32", "BLOCK": 1024}, [1024], tmp_path / "w")
    assert wide["index_width"].significant and 25 in wide["index_width"].source_lines


def test_account_of_a_recorded_launch_is_typed_and_prints(tmp_path: Path):
    found, accounts = _account(SRC, "rowwise", {"x_ptr": "*fp32", "y_ptr": "*fp32", "N": 1500, "BLOCK_N": 8192},
                               [65536], tmp_path, num_warps=8)
    p = found["predicated_lanes"]
    assert p.significant and p.value == pytest.approx(0.1831, abs=1e-3) and p.source_lines == [18]
    assert "1500 of 8192 lanes" in p.line() and "cost needs a GPU" in p.line()
    occ = found["occupancy"]
    assert 0 < occ.value <= 1 and occ.data["limiter"] in ("threads", "registers", "blocks", "shared_memory")
    assert found["wave_quantization"].value > 0.9 and not found["wave_quantization"].significant
    again = type(accounts[0]).model_validate_json(accounts[0].model_dump_json())
    assert again.model_dump(mode="json") == accounts[0].model_dump(mode="json")


def test_account_launch_needs_no_compile_for_given_text():
    rec = {"kernel": "k", "file": "/nonexistent.py", "grid": [140], "options": {"num_warps": 4}}
    acc = account_launch(rec, ptx=PTX, ttgir="", registers=64, shared=200 * 1024)
    kinds = {f.kind: f for f in acc.findings}
    assert kinds["occupancy"].significant and kinds["occupancy"].data["limiter"] == "shared_memory"
    assert kinds["wave_quantization"].significant and kinds["wave_quantization"].share == pytest.approx(0.47, abs=0.01)


def test_a_conversion_into_a_dot_operand_is_not_counted():
    from optimizer.ir.gap_account import ttgir_facts

    ir = """  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<64xf32, #blocked>)  : i32 {
      %a = ttg.convert_layout %p : tensor<64x64xf16, #mma> -> tensor<64x64xf16, #ttg.dot_op<{opIdx = 0, parent = #mma}>>
      %b = ttg.convert_layout %s : tensor<64xf32, #ttg.slice<{dim = 0, parent = #blocked}>> -> tensor<64xf32, #ttg.slice<{dim = 1, parent = #blocked}>>
      scf.yield %acc : tensor<64xf32, #blocked>
    }
"""
    assert ttgir_facts(ir, "/nonexistent.py")["convert_in_loop"] == 1


def test_issue_floor_against_the_memory_floor():
    from optimizer.ir.gap_account import H200, issue_floor

    # 1024 rows x 8192 bf16 in and out (32 MiB), one program per row, 8 warps, 600 static PTX instructions per thread
    rec = {"grid": [1024], "signature": {"x": "*bf16", "y": "*bf16", "n": "i32"},
           "numel": {"x": 1024 * 8192, "y": 1024 * 8192}}
    loop_free = {"loops": 0, "has_dot": False}
    got = issue_floor(rec, 600, 8, loop_free)
    assert got is not None and got["bytes"] == 2 * 2 * 1024 * 8192 and got["programs"] == 1024
    issue_s = 600 * 8 * 1024 / (H200.sms * H200.schedulers * H200.clock_ghz * 1e9)
    assert got["ratio"] == pytest.approx(issue_s / (got["bytes"] / (H200.hbm_gbps * 1e9)), rel=1e-2)
    # twice the instructions: twice the issue floor, same memory floor
    assert issue_floor(rec, 1200, 8, loop_free)["ratio"] == pytest.approx(2 * got["ratio"], rel=1e-2)
    # no claim where the static count or the program count says nothing
    assert issue_floor(rec, 600, 8, {"loops": 1, "has_dot": False}) is None  # a loop's trip count is unknown
    assert issue_floor(rec, 600, 8, {"loops": 0, "has_dot": True}) is None
    assert issue_floor({**rec, "grid": "lambda META: (1024,)"}, 600, 8, loop_free) is None
    assert issue_floor({**rec, "grid": []}, 600, 8, loop_free) is None
    assert issue_floor({**rec, "numel": {}}, 600, 8, loop_free) is None


def test_issue_bound_is_an_unexplained_finding_when_issue_nears_memory():
    rec = {"kernel": "k", "file": "/nonexistent.py", "grid": [16384], "options": {"num_warps": 8},
           "signature": {"x": "*bf16", "y": "*bf16"}, "numel": {"x": 16384 * 4096, "y": 16384 * 4096}}
    body = "\n".join("\tadd.f32 %f1, %f2, %f3;" for _ in range(400))
    ptx = PTX.replace("\tret;", body + "\n\tret;")
    acc = account_launch(rec, ptx=ptx, ttgir="", registers=32, shared=0)
    issue = {f.kind: f for f in acc.findings}["issue_bound"]
    assert issue.significant and not issue.explained_by and issue.value >= 0.6
    lean = account_launch(rec, ptx=PTX, ttgir="", registers=32, shared=0)
    assert not {f.kind: f for f in lean.findings}["issue_bound"].significant
