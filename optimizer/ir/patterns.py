"""Compiled regular expressions over MLIR dumps, PTX, ptxas logs, remarks and Ascend ttadapter IR.

Each constant carries an example of a line it matches (taken from Triton 3.9 / triton-ascend 3.2 output).
Everything the analysis counts is defined here, so a new Triton spelling is a one-line change.
"""

from __future__ import annotations

import re

# ---- dump structure -----------------------------------------------------------------------------------------
# // -----// IR Dump Before TritonGPUCoalesce: tritongpu-coalesce ('builtin.module' operation) //----- //   (3.9)
# // -----// IR Dump Before Inliner (inline) ('builtin.module' operation) //----- //                        (3.5)
# // -----// IR Dump Before DiscreteMaskAccessConversion (discrete-mask-access-conversion) //----- //     (opt tool)
# // -----// SoftwarePipeliner internal IR Dump After: LowerLoops                                        (internal step)
# // -----// LADDER stage ttgir begin //----- //                                                           (our marker)
BOUNDARY = re.compile(r"^// -----//.*$", re.M)
HEADER = re.compile(
    r"^// -----// (?:(?P<owner>\w+) internal )?IR Dump (?P<when>Before|After):? ?(?P<rest>.*?)\s*(?://----- //)?$"
)
HEADER_REST = re.compile(
    r"^(?P<name>[\w.]+)(?::\s*(?P<arg>[^\s{(]+)|\s+\((?P<arg2>[^)]*)\))?(?P<opts>\{.*?\})?\s*"
    r"(?:\('(?P<op>[^']+)' operation(?::\s*@(?P<sym>[^)\s]+))?\))?"
)
MARKER = re.compile(r"^// -----// LADDER stage (?P<stage>\w+) (?P<what>begin|end) //----- //$")

# ---- MLIR ops and locations -----------------------------------------------------------------------------------
#     %x_6 = tt.load %x_5, %x_1, %x : tensor<1024x!tt.ptr<f32>, #blocked> loc(#loc23)   -> tt.load
#     %1:2 = "tt.reduce"(%x_6, %offs) <{axis = 0 : i32}> ({                            -> tt.reduce
MLIR_OP = re.compile(r'^[ \t]*(?:%[^=\n]*=[ \t]*)?"?([a-z_][a-z0-9_]*\.[a-z0-9_.]+)"?', re.M)
# tt.func public @k(%X: !tt.ptr<f32> {tt.divisibility = 16 : i32} loc("X"(#loc)), %n: i32 loc("n"(#loc)))
DIVISIBILITY = re.compile(r"tt\.divisibility = (\d+)")
TOP_LEVEL_COMMA = re.compile(r",(?![^(){}<>]*[)}>])")
# #loc23 = loc("x"(#loc1))
LOC_DEF = re.compile(r"^(#loc\d*) = loc\((.*)\)\s*$", re.M)
# ... : tensor<1024xf32, #blocked> loc(#loc23)      /     ... loc("/k.py":7:9)
TRAILING_LOC = re.compile(r"loc\((.*)\)\s*\{?\s*$")
# #blocked = #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
LAYOUT_DEF = re.compile(r"^(#[\w]+) = (#[\w.]+<.*>)\s*$", re.M)


def layout_defs(text: str) -> dict[str, str]:
    """Layout aliases (``#blocked1`` -> ``#ttg.blocked<{...}>``); they are printed before the module body."""
    head = text[: text.find("\nmodule")] if "\nmodule" in text else text
    return dict(LAYOUT_DEF.findall(head))


WARPS_PER_CTA = re.compile(r"warpsPerCTA = \[([\d, ]+)\]")
SLICE_LAYOUT = re.compile(r"#ttg\.slice<\{dim = (\d+), parent = (#[\w.]+(?:<.*>)?)\}>")
# module attributes {"ttg.num-warps" = 4 : i32, ttg.shared = 16 : i32, ...}
SHARED_ATTR = re.compile(r"\bttg\.shared = (\d+)")

# ---- structural features counted in every MLIR snapshot -------------------------------------------------------
# Counted from the op histogram (``MLIR_OP``) plus a few literal substrings, so that ~100 snapshots of a few MB
# are summarized in tens of milliseconds. Each entry: (exact op names, op-name prefixes, literal substrings).
FEATURE_RULES: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    # %x = ttg.convert_layout %v : tensor<1024xf32, #blocked> -> tensor<1024xf32, #blocked1>
    "convert_layout": (("ttg.convert_layout",), (), ()),
    # gpu.barrier / ttg.barrier local / nvvm.barrier0 ; inline asm "bar.sync 0;"
    "barrier": (("gpu.barrier", "ttg.barrier"), ("nvvm.barrier",), ("bar.sync",)),
    # %r = nvvm.shfl.sync bfly %mask, %v, %c16, %c31 : i32 -> i32
    "shuffle": (("nvvm.shfl.sync",), (), ()),
    # %a = ttg.local_alloc : () -> !ttg.memdesc<3x64x32xf32, #shared, #smem, mutable>
    "local_alloc": (("ttg.local_alloc",), (), ()),
    "local_load_store": (("ttg.local_load", "ttg.local_store"), (), ()),
    # %t = ttg.async_copy_global_to_local %ptrs, %buf mask %m : ...
    "async_copy": (("ttg.async_copy_global_to_local", "ttng.async_tma_copy_global_to_local"), (), ()),
    "global_load": (("tt.load",), (), ("ld.global",)),
    "dot": (("tt.dot", "ttng.warp_group_dot", "ttng.tc_gen5_mma"), (), ()),
    "reduce": (("tt.reduce", "linalg.reduce"), (), ()),
    # Ascend ttadapter
    "linalg_fill": (("linalg.fill",), (), ()),
    "memref_copy": (("memref.copy",), (), ()),
    "discrete_access": ((), (), ("DiscreteMemAccess",)),
}
# llvm.store %v, %p : f32, !llvm.ptr<3>   (a store to shared memory in the LLVM dialect)
SHARED_STORE = re.compile(r"llvm\.store [^\n]*!llvm\.ptr<3>|ttg\.local_store ")

# %1:2 = "tt.reduce"(%x_6, %offs) <{axis = 0 : i32}> ({          (two operands: value + index)
REDUCE_OP = re.compile(r'"tt\.reduce"\((?P<operands>[^)]*)\)\s*<\{axis = (?P<axis>\d+)')
# }) : (tensor<1024xf32, #blocked>, tensor<1024xi32, #blocked>) -> (f32, i32) loc(#loc35)
REDUCE_CLOSE_TYPES = re.compile(r"^\s*\}\)\s*:\s*\((?P<types>.*?)\)\s*->")
TENSOR_ENCODING = re.compile(r"tensor<[^,>]*x?\w+, (#[\w.]+(?:<[^>]*>)?)>")
# %acc = tt.dot %a, %b, %c, inputPrecision = tf32 : tensor<64x32xf32, #ttg.dot_op<...>> * ... -> tensor<64x64xf32, #mma>
DOT_OP = re.compile(r"tt\.dot [^\n]*-> tensor<[^,>\n]+, (#[\w.]+)")
WGMMA_OP = re.compile(r"\bttng\.warp_group_dot\b")
TCGEN5_OP = re.compile(r"\bttng\.tc_gen5_mma\b")
MMA_VERSION = re.compile(r"#ttg\.nvidia_mma<\{versionMajor = (\d+)")
# scf.for %k = %c0 to %K step %c32 iter_args(...) -> (...) : i32 {
SCF_FOR = re.compile(r"^(?P<indent>\s*)(?:%[^=\n]*=\s*)?scf\.for\b", re.M)
TT_LOAD_TENSOR = re.compile(r"\btt\.load\b[^\n]*:\s*tensor<")

# ---- PTX ------------------------------------------------------------------------------------------------------
# .file	1 "/work/k.py"
PTX_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]+)"', re.M)
# .loc	2 206 20, function_name $L__info_string0, inlined_at 2 223 16 // standard.py:206:20
PTX_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)(?:,.*?inlined_at\s+(\d+)\s+(\d+)\s+(\d+))?")
# .loc 2 152 28   // standard.py:152:28 @[ standard.py:160:59 @[ top2_argmax.py:12:20 ] ]     (Triton 3.6 comment)
PTX_LOC_COMMENT = re.compile(r"([\w.-]+\.py):(\d+):\d+")
PTX_INSTR: dict[str, re.Pattern[str]] = {
    # @%p1 ld.global.b32 { %r1 }, [ %rd1 + 0 ];      ld.global.v4.b32 { %r1, %r2, %r3, %r4 }, [ %rd1 + 0 ];
    "ld_global_v8": re.compile(r"\bld\.global(?:\.\w+)*\.v8\."),
    "ld_global_v4": re.compile(r"\bld\.global(?:\.\w+)*\.v4\."),
    "ld_global_v2": re.compile(r"\bld\.global(?:\.\w+)*\.v2\."),
    "ld_global_scalar": re.compile(r"\bld\.global(?:\.(?!v[248]\b)\w+)*\.[bufs](?:8|16|32|64)\s"),
    "ld_global_masked_scalar": re.compile(r"@%p\d+\s+ld\.global(?:\.(?!v[248]\b)\w+)*\.[bufs](?:8|16|32|64)\s"),
    # bar.sync 	0;     barrier.sync 0;     bar.arrive ...
    "bar_sync": re.compile(r"\bbar\.sync\b|\bbarrier\.sync\b|\bbarrier\.cta\.sync\b"),
    # shfl.sync.bfly.b32 	%r39, %r37, 16, 31, -1;
    "shfl": re.compile(r"\bshfl\.sync\b"),
    "st_shared": re.compile(r"\bst\.shared\b"),
    "ld_shared": re.compile(r"\bld\.shared\b|\bldmatrix\b"),
    "st_local": re.compile(r"\bst\.local\b"),
    "ld_local": re.compile(r"\bld\.local\b"),
    "mma_sync": re.compile(r"\bmma\.sync\b"),
    "wgmma": re.compile(r"\bwgmma\.mma_async\b"),
    "tcgen05": re.compile(r"\btcgen05\.mma\b"),
    "fma_f32": re.compile(r"\bfma\.rn(?:\.ftz)?\.f32\b"),
    "cp_async": re.compile(r"\bcp\.async\.(?:ca|cg)\b"),
    # cp.async.cg.shared.global [ %r1 + 0 ], [ %rd1 + 0 ], 0x10, %r2;   (8 or 16 bytes per copy: a vectorized load)
    "cp_async_wide": re.compile(r"\bcp\.async\.(?:ca|cg)\.shared\.global\b[^;]*,\s*(?:0x10|0x8|16|8)\s*[,;]"),
    "tma": re.compile(r"\bcp\.async\.bulk\.tensor\b"),
}

# ---- ptxas / cuobjdump / remarks ------------------------------------------------------------------------------
# ptxas info    : Used 23 registers, used 1 barriers, 104 bytes cumulative stack size
PTXAS_USED = re.compile(r"Used (\d+) registers(?:, used (\d+) barriers)?")
#     104 bytes stack frame, 104 bytes spill stores, 104 bytes spill loads
PTXAS_SPILL = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
# Function argmax_rows:REG:23 STACK:0 SHARED:0 LOCAL:0 ...
CUOBJDUMP_RES = re.compile(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)")
# /k.py:7:9: remark: Warning: vectorization fails vec = 1 origin vec = 4 numElems = 8 mask is 1
REMARK = re.compile(
    r"^(?P<file>[^\n:]+):(?P<line>\d+):(?P<col>\d+): (?P<sev>remark|note|warning|error): (?P<msg>.*)$", re.M
)
CARET = re.compile(r"^\s*\^~*\s*$")
REMARK_KINDS: dict[str, re.Pattern[str]] = {
    "vectorization": re.compile(r"vectorization fails", re.I),
    "mma": re.compile(r"\bMMA\b|FMA path", re.I),
    # "... the pipelined load for this operand will be disabled ..." / "Pipelining load that cannot use vectorized copy"
    "pipelining": re.compile(r"[Pp]ipelin.*(?:disabled|cannot|degradation|in registers)"),
}
# vectorization fails vec = 1 origin vec = 4 numElems = 8 mask is 1
VEC_REMARK = re.compile(
    r"vec = (?P<vec>\d+) origin vec = (?P<origin>\d+)(?: (?:numElems|elemsPerThread) = (?P<n>\d+))?"
)

# ---- Ascend ttadapter -----------------------------------------------------------------------------------------
# %reduced:2 = linalg.reduce ins(...) outs(...) dimensions = [0]
#     {reduce_mode = "max_with_index", tie_break_left = "true"}
REDUCE_MODE = re.compile(r'reduce_mode = "(?P<mode>(?:max|min)_with_index)"')
# %extracted = tensor.extract %idx[%i] {DiscreteMemAccess} : tensor<128xi32>
DISCRETE = re.compile(r"DiscreteMemAccess")
EXTRACTED_LOOP = re.compile(r"ExtractedLoadOrStore")
# linalg.fill ins(%cst : f32) outs(%alloc : memref<256xf32>)    (padding of a masked load's buffer)
PADDING_FILL = re.compile(r"linalg\.fill [^\n]*outs\([^)]*:\s*memref<")
UNLIKELY = re.compile(r"\bhivm\.unlikely_condition\b")
# func.func @k(...) attributes {..., mix_mode = "aiv", parallel_mode = "simd"}
MIX_MODE = re.compile(r'\bmix_mode = "(?P<mode>\w+)"')
