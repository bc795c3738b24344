"""host_setup_cache example: a persistent row softmax whose launcher compiles the kernel and queries the device on
every call to size the grid by occupancy (the Triton tutorial's launcher form), 32768 x 4096 fp32."""

import torch
import triton
import triton.language as tl
from torch import nn

RECIPE = {"kind": "host_setup_cache", "params": {}}
CONTEXT = {}
TOL = {"atol": 1e-6, "rtol": 1e-5}
_HOST_SETUP_CACHE: dict = {}


def _host_setup_cached(site, fn, *args, **kwargs):
    """Per-call host setup (kernel warmup, device queries) memoized on what it can depend on: each tensor's shape,
    strides, dtype, device and 16-byte alignment, and the other arguments' values (unhashable ones bypass the cache)."""
    import collections.abc

    def part(a):
        if hasattr(a, "data_ptr") and hasattr(a, "stride"):
            return ("tensor", tuple(a.shape), tuple(a.stride()), str(a.dtype), str(a.device), a.data_ptr() % 16)
        return a

    def hashable(v):
        return all(hashable(x) for x in v) if isinstance(v, tuple) else isinstance(v, collections.abc.Hashable)

    key = (site, tuple(part(a) for a in args), tuple(sorted((k, part(v)) for k, v in kwargs.items())))
    if not hashable(key):
        return fn(*args, **kwargs)
    if key not in _HOST_SETUP_CACHE:
        out = fn(*args, **kwargs)
        items = out if isinstance(out, (tuple, list)) else out.values() if isinstance(out, dict) else (out,)
        if any(hasattr(x, "data_ptr") for x in items):
            return out  # a tensor is never reused across calls
        _HOST_SETUP_CACHE[key] = out
    return _HOST_SETUP_CACHE[key]


@triton.jit
def softmax_kernel(y_ptr, x_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    for row in tl.range(tl.program_id(0), n_rows, tl.num_programs(0)):
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        v = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
        e = tl.exp(v - tl.max(v, axis=0))
        tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


def _occupancy_grid(y, x, n_rows, n_cols, BLOCK, num_warps):
    props = triton.runtime.driver.active.utils.get_device_properties(x.device.index)
    kernel = softmax_kernel.warmup(y, x, n_rows, n_cols, BLOCK=BLOCK, num_warps=num_warps, grid=(1,))
    kernel._init_handles()
    per_sm = max(1, props["max_num_regs"] // (kernel.n_regs * props["warpSize"] * num_warps))
    return min(n_rows, props["multiprocessor_count"] * per_sm)


class ModelNew(nn.Module):
    def forward(self, x):
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        BLOCK = triton.next_power_of_2(n_cols)
        programs = _host_setup_cached('forward:_occupancy_grid#1', _occupancy_grid, y, x, n_rows, n_cols, BLOCK, 8)
        softmax_kernel[(programs,)](y, x, n_rows, n_cols, BLOCK=BLOCK, num_warps=8)
        return y


def get_inputs(device="cuda"):
    return [torch.randn(32768, 4096, device=device, dtype=torch.float32)]


def reference(x):
    return torch.softmax(x, dim=-1)
