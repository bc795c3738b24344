"""L1's quick-match vocabulary: every code-feature token ``features.extract_features`` emits, with its meaning
(the words the curated cards use in ``Symptoms.code_features``)."""

from __future__ import annotations

__all__ = ["FEATURE_DOC"]

FEATURE_DOC: dict[str, str] = {
    "tl.dot": "a kernel calls tl.dot",
    "matmul": "a tl.dot inside a K loop or tile program",
    "fp32_dot": "tl.dot on fp32 operands",
    "input_precision_ieee": "tl.dot with input_precision='ieee'",
    "input_precision_tf32x3": "tl.dot with input_precision='tf32x3' (fp32 accuracy on tensor cores)",
    "k_loop": "a loop around tl.dot",
    "tl.argmax": "tl.argmax used",
    "tl.argmin": "tl.argmin used",
    "tl.max": "tl.max reduction",
    "tl.min": "tl.min reduction",
    "tl.sum": "tl.sum reduction",
    "tl.cumsum": "scan",
    "tl.reduce": "custom tl.reduce",
    "tl.where": "tl.where select",
    "tl.atomic_add": "atomic adds",
    "masked_load": "tl.load with mask=",
    "masked_store": "tl.store with mask=",
    "tl.load": "any tl.load",
    "2d_tile": "tiles built with [:, None] / [None, :] broadcasting",
    "2d_mask": "a 2-D mask",
    "row_per_program": "each program handles one row (program_id used directly as the row index, no row loop)",
    "group_per_program": "row_per_program where the rows are groups (kernel or args mention group)",
    "single_pass_kernel": "no loop in the kernel: load, compute, store once",
    "tl.range": "tl.range / static_range loop",
    "inner_loop": "a for loop in a kernel",
    "nested_loop": "nested loops",
    "persistent": "a grid-stride loop over tiles using tl.num_programs",
    "tl.num_programs": "tl.num_programs used",
    "tl.program_id": "tl.program_id used",
    "cdiv_grid": "grid computed with triton.cdiv",
    "grid_over_blocks": "1-D grid over element blocks",
    "grid_over_tiles": "grid over 2-D output tiles",
    "large_grid": "a recorded grid above 65535 programs",
    "few_programs": "a recorded grid below 132 programs (H200 SMs)",
    "autotune": "@triton.autotune present",
    "num_warps": "num_warps given at the launch",
    "num_stages": "num_stages given",
    "hard_coded_block_size": "a constexpr block size passed as a literal, without autotune",
    "BLOCK_SIZE": "a BLOCK_SIZE constexpr",
    "compiler_hints": "tl.multiple_of / max_contiguous / assume present",
    "strides": "stride arguments",
    "int64": "int64 index math (.to(tl.int64))",
    ".to(tl.int64)": "int64 casts",
    "div_mod_index": "offsets use // and %",
    "modulo_offsets": "offsets use %",
    "elementwise": "no reduction and no dot",
    "multiple_kernels": "more than one kernel launched per forward",
    "torch_ops_in_forward": "PyTorch compute ops in forward",
    "multiple_shapes": "several benchmark cases",
    "bf16": "bf16 inputs",
    "fp16": "fp16 inputs",
    "short_rows": "row length below 256 elements in some case",
    "tl.arange": "tl.arange used",
    "indirect_load": "a load whose offsets come from another load",
    "two_pass_row_reduction": "two consecutive loops load the same chunks (e.g. a max pass, then a sum-of-exp pass)",
    "no_block_range": "a kernel that loads without any tl.arange: one element per program",
    "same_address_atomic": (
        "a tl.atomic_* whose address depends on no program id or loaded value (every program hits it)"
    ),
    "scatter_atomic": "a tl.atomic_* whose address is indexed by a loaded value (a histogram / scatter-add)",
    "multi_pass": "several loops (or repeated straight-line loads) read the same pointer argument",
    "reduction_in_loop": (
        "a tl.sum / tl.max / tl.min to a scalar accumulated inside a loop (one block reduction per "
        "iteration)"
    ),
    "small_dot_tile": "a tl.dot launched with BLOCK_M or BLOCK_N below 64, or BLOCK_K below 32",
    "pid_1d_matmul": "a tl.dot kernel indexed by one program id with no grouped (L2-friendly) order",
    "pid_2d_matmul": "a tl.dot kernel indexed by two program ids with no grouped order",
    "pointer_advance_in_loop": "a pointer argument advanced with += inside a loop",
    "multi_kernel_same_input": "the launcher passes the same tensor to two kernels (each reads it)",
    "intermediate_roundtrip": "one kernel writes a buffer the launcher allocated and a later kernel reads it back",
    "upcast_before_dot": "a tl.dot operand is converted to fp32 in the kernel (x.to(tl.float32)) before the dot",
    "launch_in_loop": "a kernel launched inside a Python loop of the launcher (one launch per iteration)",
    "per_call_host_setup": (
        "the launcher compiles or queries on every call (kernel.warmup, _init_handles, "
        "get_device_properties, triton.compile)"
    ),
    "unaligned_launch_arg": "a recorded launch passes an integer (size/stride) or pointer not divisible by 16",
}
