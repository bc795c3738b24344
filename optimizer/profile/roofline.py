"""Device peaks and roofline figures (pure functions).

Peaks are datasheet numbers (dense, no sparsity): they bound what a kernel can reach, and the roofline
fraction ``max(flops/peak_flops, bytes/peak_bw) / measured`` says how close a measurement comes. A time
below the roofline floor means the declared work was not done (the ``faster_than_roofline`` hack check).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PEAKS", "RESIDENT_PROGRAMS_PER_SM", "DevicePeaks", "peaks_for", "roofline_fraction", "roofline_ms", "roofline_split"]


@dataclass(frozen=True)
class DevicePeaks:
    name: str
    hbm_gbps: float  # GB/s (1e9 bytes)
    fp32_tflops: float  # non-tensor-core FP32
    tensor_tflops: float  # dense bf16/fp16 tensor-core (or Cube) peak
    sms: int = 0  # streaming multiprocessors (0: unknown); with RESIDENT_PROGRAMS_PER_SM it bounds one wave

#: The most thread blocks (Triton programs) one SM holds at once on Ampere/Hopper (CUDA occupancy limit).
RESIDENT_PROGRAMS_PER_SM = 32


#: Substring of the device name -> peaks (NVIDIA datasheets; Ascend 910B figures are public estimates).
PEAKS: dict[str, DevicePeaks] = {
    "H200": DevicePeaks("H200", 4800.0, 67.0, 989.0, 132),
    "H100": DevicePeaks("H100 SXM", 3350.0, 67.0, 989.0, 132),
    "H800": DevicePeaks("H800", 3350.0, 67.0, 989.0, 132),
    "A100": DevicePeaks("A100", 2039.0, 19.5, 312.0, 108),
    "L40S": DevicePeaks("L40S", 864.0, 91.6, 362.0, 142),
    "910B": DevicePeaks("Ascend 910B", 1600.0, 0.0, 320.0),
}


def peaks_for(device_name: str) -> DevicePeaks | None:
    for key, peaks in PEAKS.items():
        if key.lower() in (device_name or "").lower():
            return peaks
    return None


def roofline_split(flops: float | None, bytes_moved: float | None, peaks: DevicePeaks, *, tensor: bool = False) -> tuple[float | None, float | None]:
    """(compute-bound floor ms, memory-bound floor ms); either is None when its figure is unknown."""
    peak_tf = peaks.tensor_tflops if tensor else (peaks.fp32_tflops or peaks.tensor_tflops)
    c = flops / (peak_tf * 1e12) * 1e3 if flops and peak_tf else None
    m = bytes_moved / (peaks.hbm_gbps * 1e9) * 1e3 if bytes_moved else None
    return c, m


def roofline_ms(flops: float | None, bytes_moved: float | None, peaks: DevicePeaks) -> float | None:
    """The speed-of-light floor: the larger of the compute and memory floors (tensor peak: the most generous)."""
    c, m = roofline_split(flops, bytes_moved, peaks, tensor=True)
    vals = [v for v in (c, m) if v is not None]
    return max(vals) if vals else None


def roofline_fraction(flops: float | None, bytes_moved: float | None, ms: float, peaks: DevicePeaks | None) -> float | None:
    """Fraction of the roofline reached (1.0 = at the floor); None without figures or peaks."""
    if peaks is None or not ms or ms <= 0:
        return None
    c, m = roofline_split(flops, bytes_moved, peaks)
    vals = [v for v in (c, m) if v is not None]
    return max(vals) / ms if vals else None
