"""Device peaks and roofline figures (pure functions).

Peaks are datasheet numbers (dense, no sparsity): they bound what a kernel can reach, and the roofline
fraction ``max(flops/peak_flops, bytes/peak_bw) / measured`` says how close a measurement comes. A time
below the roofline floor means the declared work was not done (the ``faster_than_roofline`` hack check).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "PEAKS",
    "RESIDENT_PROGRAMS_PER_SM",
    "DevicePeaks",
    "compute_kind",
    "peaks_for",
    "roofline_fraction",
    "roofline_ms",
    "roofline_split",
]


@dataclass(frozen=True)
class DevicePeaks:
    name: str
    hbm_gbps: float  # GB/s (1e9 bytes)
    fp32_tflops: float  # non-tensor-core FP32
    tensor_tflops: float  # dense bf16/fp16 tensor-core (or Cube) peak
    sms: int = 0  # streaming multiprocessors (0: unknown); with RESIDENT_PROGRAMS_PER_SM it bounds one wave
    tf32_tflops: float = 0.0  # dense tf32 tensor-core peak (0: unknown, then half the 16-bit peak)

    def compute_peak(self, kind: str) -> float:
        """TFLOP/s for a compute kind: ``tensor`` (fp16/bf16 dots), ``tf32`` (fp32 dots on tensor cores),
        ``tf32x3`` (three tf32 MMAs per product), ``fp32`` (FMA: ieee fp32 dots and everything without a dot)."""
        if kind == "tensor":
            return self.tensor_tflops
        if kind in ("tf32", "tf32x3"):
            tf = self.tf32_tflops or self.tensor_tflops / 2
            return tf / 3 if kind == "tf32x3" else tf
        return self.fp32_tflops or self.tensor_tflops

#: The most thread blocks (Triton programs) one SM holds at once on Ampere/Hopper (CUDA occupancy limit).
RESIDENT_PROGRAMS_PER_SM = 32


#: Substring of the device name -> peaks (NVIDIA datasheets; Ascend 910B figures are public estimates).
PEAKS: dict[str, DevicePeaks] = {
    "H200": DevicePeaks("H200", 4800.0, 67.0, 989.0, 132, 494.7),
    "H100": DevicePeaks("H100 SXM", 3350.0, 67.0, 989.0, 132, 494.7),
    "H800": DevicePeaks("H800", 3350.0, 67.0, 989.0, 132, 494.7),
    "A100": DevicePeaks("A100", 2039.0, 19.5, 312.0, 108, 156.0),
    "L40S": DevicePeaks("L40S", 864.0, 91.6, 362.0, 142, 183.0),
    "910B": DevicePeaks("Ascend 910B", 1600.0, 0.0, 320.0),
}


def peaks_for(device_name: str) -> DevicePeaks | None:
    for key, peaks in PEAKS.items():
        if key.lower() in (device_name or "").lower():
            return peaks
    return None


def compute_kind(tokens: set[str] | list[str], launches: list[dict] | None = None) -> str:
    """The compute peak a kernel can use: ``tensor`` for fp16/bf16 dots, ``tf32`` for fp32 dots at the default
    precision, ``tf32x3`` when asked for, ``fp32`` for ieee fp32 dots (FMA) and kernels without a dot."""
    toks = set(tokens)
    if "tl.dot" not in toks:
        return "fp32"
    sigs = [t for r in (launches or []) for t in (r.get("signature") or {}).values()]
    if any(t in ("*fp16", "*bf16", "*fp8e4nv", "*fp8e5") for t in sigs) and "fp32_dot" not in toks:
        return "tensor"
    if "input_precision_ieee" in toks:
        return "fp32"
    if "input_precision_tf32x3" in toks:
        return "tf32x3"
    return "tf32" if "fp32_dot" in toks or not sigs else "tensor"


def roofline_split(flops: float | None, bytes_moved: float | None, peaks: DevicePeaks, *, tensor: bool = False,
                   compute: str | None = None) -> tuple[float | None, float | None]:
    """(compute-bound floor ms, memory-bound floor ms); either is None when its figure is unknown.
    ``compute`` picks the peak (``DevicePeaks.compute_peak``); ``tensor=True`` is the 16-bit tensor peak."""
    kind = compute or ("tensor" if tensor else "fp32")
    peak_tf = peaks.compute_peak(kind)
    c = flops / (peak_tf * 1e12) * 1e3 if flops and peak_tf else None
    m = bytes_moved / (peaks.hbm_gbps * 1e9) * 1e3 if bytes_moved else None
    return c, m


def roofline_ms(
    flops: float | None, bytes_moved: float | None, peaks: DevicePeaks, *, compute: str = "tensor"
) -> float | None:
    """The speed-of-light floor: the larger of the compute and memory floors (default: the 16-bit tensor peak,
    the most generous; pass the kernel's ``compute_kind`` for its own floor)."""
    c, m = roofline_split(flops, bytes_moved, peaks, compute=compute)
    vals = [v for v in (c, m) if v is not None]
    return max(vals) if vals else None


def roofline_fraction(flops: float | None, bytes_moved: float | None, ms: float, peaks: DevicePeaks | None,
                      *, compute: str = "fp32") -> float | None:
    """Fraction of the roofline reached (1.0 = at the floor) with the peak of ``compute``; None without figures."""
    if peaks is None or not ms or ms <= 0:
        return None
    c, m = roofline_split(flops, bytes_moved, peaks, compute=compute)
    vals = [v for v in (c, m) if v is not None]
    return max(vals) / ms if vals else None
