"""L2 signal parsing and classification: CUDA rules, an ncu CSV sample, msprof op-summary samples."""

from __future__ import annotations

from pathlib import Path

from optimizer.profile.ascend import classify_ops, parse_op_summary, summarize_ops
from optimizer.profile.classify import classify_cuda, dominant_class
from optimizer.profile.cuda import case_signals, parse_ncu_csv, summarize_ncu
from optimizer.profile.roofline import peaks_for, roofline_fraction, roofline_ms

DATA = Path(__file__).parent / "data"


def test_roofline() -> None:
    h200 = peaks_for("NVIDIA H200")
    assert h200 is not None and peaks_for("cpu") is None
    floor = roofline_ms(None, 4.8e9, h200)  # 4.8 GB at 4.8 TB/s = 1 ms
    assert abs(floor - 1.0) < 1e-9
    assert abs(roofline_fraction(None, 4.8e9, 2.0, h200) - 0.5) < 1e-9


def test_cuda_rules() -> None:
    assert classify_cuda({"kernel_fraction": 0.2, "ms": 0.004}).bottleneck == "launch_bound"
    assert classify_cuda({"ms": 1.0, "mem_fraction": 0.8, "compute_fraction": 0.05}).bottleneck == "memory_bound"
    assert classify_cuda({"ms": 1.0, "sm_pct": 75, "dram_pct": 20}).bottleneck == "compute_bound"
    occ = classify_cuda({"occupancy_pct": 12, "registers": 255, "spill_bytes": 4096, "dram_pct": 40, "sm_pct": 40})
    assert occ.bottleneck == "occupancy_limited" and "register_spill" in occ.signals
    assert classify_cuda({"ms": 2.0, "mem_fraction": 0.1, "compute_fraction": 0.02}).bottleneck == "latency_bound"
    assert classify_cuda({"ms": 2.0}).bottleneck == "unknown"
    assert dominant_class([("a", 9.0, "memory_bound"), ("b", 1.0, "latency_bound")]) == ("memory_bound", 0.9)
    assert dominant_class([("a", 5.0, "memory_bound"), ("b", 5.0, "latency_bound")])[0] == "unknown"


def test_ncu_csv_sample() -> None:
    rows = parse_ncu_csv((DATA / "ncu" / "softmax_raw.csv").read_text())
    assert len(rows) == 2 and rows[0]["kernel"] == "softmax_kernel"
    assert abs(rows[0]["ncu_time"] - 0.013664) < 1e-9 and rows[1]["dram_pct"] == 88.02
    summary = summarize_ncu(rows)
    assert summary["hot_kernel"] == "softmax_kernel" and 86 < summary["dram_pct"] < 89 and summary["registers"] == 26
    sig = case_signals(0.0139, 5 * 4096 * 1024, 8 * 4096 * 1024, peaks_for("H200"), {"kernel_fraction": 0.95, "launches_per_call": 1}, summary)
    c = classify_cuda(sig)
    assert c.bottleneck == "memory_bound" and "dram_throughput" in c.signals
    long = ('"ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"\n'
            '"0","k","s","dram__throughput.avg.pct_of_peak_sustained_elapsed","%","12.5"\n'
            '"0","k","s","gpu__time_duration.sum","usecond","3.5"\n')
    assert parse_ncu_csv(long) == [{"kernel": "k", "dram_pct": 12.5, "ncu_time": 0.0035}]


def test_msprof_samples_map_to_classes() -> None:
    expect = {"op_summary_topk_scalar.csv": ("moe_group_score_kernel", "scalar_bound"),
              "op_summary_elementwise_mte2.csv": ("scale_add_kernel", "memory_bound"),
              "kernel_details.csv": ("relu_kernel", "launch_bound")}
    for name, (op, cls) in expect.items():
        rows = parse_op_summary(DATA / "msprof" / name)
        summary = summarize_ops(rows)
        assert summary["hot"]["op"] == op
        c = classify_ops(summary)
        assert c.bottleneck == cls, (name, c.reasons)
    rows = parse_op_summary(DATA / "msprof" / "op_summary_topk_scalar.csv")
    assert any(r["task_type"] == "AI_CPU" for r in rows)  # parsed, then ignored by the summary
    hot = summarize_ops(rows)["hot"]
    assert 0.6 < hot["aiv_scalar_ratio"] < 0.67 and hot["count"] == 6 and hot["block_dim"] == 40
