"""The measured account of the gap: ncu raw CSV parsing and the split of a case's gap over measured parts."""

from __future__ import annotations

import pytest

from optimizer.profile.ncu_account import (
    ACCOUNT_METRICS,
    STALL_REASONS,
    NcuUnitError,
    account_command,
    measured_account,
    parse_raw_metrics,
    raw_units,
)
from optimizer.profile.roofline import PEAKS

H200 = PEAKS["H200"]
STALL = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"


def _csv(launches: list[dict[str, float]], units: dict[str, str]) -> str:
    names = sorted({k for launch in launches for k in launch})
    head = ["ID", "Kernel Name", *names]
    lines = ["==PROF== Connected to process 1", ",".join(f'"{h}"' for h in head),
             ",".join(f'"{units.get(h, "")}"' for h in head)]
    for i, launch in enumerate(launches):
        vals = [str(i), "my_kernel", *(f"{launch[n]:,}" if n in launch else "" for n in names)]
        lines.append(",".join(f'"{v}"' for v in vals))
    return "\n".join(lines) + "\n==PROF== Disconnected\n"


def test_parse_scales_units_and_skips_noise() -> None:
    text = _csv([{"gpu__time_duration.sum": 150.0, "dram__bytes_read.sum": 2.0}],
                {"gpu__time_duration.sum": "usecond", "dram__bytes_read.sum": "Mbyte"})
    [row] = parse_raw_metrics(text)
    assert row["kernel"] == "my_kernel"
    assert row["gpu__time_duration.sum"] == pytest.approx(0.15)  # ms
    assert row["dram__bytes_read.sum"] == pytest.approx(2e6)  # bytes
    assert parse_raw_metrics("no csv here\n") == []


def test_memory_bound_gap_split_into_excess_bytes_idle_and_stalls() -> None:
    # 64 MB minimum on an H200 (4.8 TB/s): floor 13.98 us; the launch takes 40 us and moves 128 MB (2x the minimum)
    launch = {"gpu__time_duration.sum": 40_000.0, "dram__bytes_read.sum": 96e6, "dram__bytes_write.sum": 32e6,
              "sm__cycles_active.avg": 900.0, "sm__cycles_elapsed.avg": 1000.0,
              "launch__grid_size": 66.0, "launch__waves_per_multiprocessor": 0.5,
              STALL.format("long_scoreboard"): 6.0, STALL.format("lg_throttle"): 2.0}
    rows = parse_raw_metrics(_csv([launch], {"gpu__time_duration.sum": "nsecond", "dram__bytes_read.sum": "byte",
                                             "dram__bytes_write.sum": "byte"}))
    acc = measured_account(rows, bytes_moved=64e6, flops=None, peaks=H200, case="N=1")
    floor = 64e6 / 4800e9 * 1e3
    assert acc.roofline_ms == pytest.approx(floor)
    assert acc.gap_ms == pytest.approx(0.040 - floor)
    kinds = acc.by_kind()
    assert kinds["excess_dram_bytes"] == pytest.approx(64e6 / 4800e9 * 1e3)
    rest = 0.040 - 128e6 / 4800e9 * 1e3  # the launch beyond its own (dram) floor
    assert kinds["idle_sms"] == pytest.approx(0.040 * 0.1)
    assert kinds["memory_latency"] == pytest.approx((rest - 0.004) * 6 / 8)
    assert kinds["narrow_memory_instructions"] == pytest.approx((rest - 0.004) * 2 / 8)
    assert acc.coverage == pytest.approx(1.0)
    assert acc.unattributed_ms == pytest.approx(0.0, abs=1e-12)
    assert acc.top(1)[0].kind == "excess_dram_bytes"  # 13.3 us of the 26 us gap
    latency = next(f for f in acc.findings if f.kind == "memory_latency")
    assert "per_element_grid" in latency.explained_by and latency.share == pytest.approx(latency.ms / acc.gap_ms)


def test_without_stall_samples_the_rest_stays_unattributed() -> None:
    rows = [{"kernel": "k", "gpu__time_duration.sum": 0.040, "dram__bytes_read.sum": 64e6}]
    acc = measured_account(rows, bytes_moved=64e6, flops=None, peaks=H200)
    assert acc.findings == []
    assert acc.coverage == pytest.approx(0.0)
    assert acc.unattributed_ms == pytest.approx(acc.gap_ms)
    assert any("no stall samples" in n for n in acc.notes)


def test_at_roofline_has_no_gap_and_figures_still_reported() -> None:
    rows = [{"kernel": "k", "gpu__time_duration.sum": 64e6 / 4800e9 * 1e3 * 0.99, "dram__bytes_read.sum": 64e6,
             "sm__warps_active.avg.pct_of_peak_sustained_active": 40.0, "sm__maximum_warps_per_active_cycle_pct": 50.0,
             "launch__occupancy_limit_registers": 2.0, "launch__occupancy_limit_warps": 4.0,
             "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 400.0,
             "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 100.0}]
    acc = measured_account(rows, bytes_moved=64e6, flops=None, peaks=H200)
    assert acc.gap_ms == 0.0 and acc.coverage is None
    occ = next(f for f in acc.figures if f.kind == "occupancy")
    assert "limited by registers" in occ.summary
    assert next(f for f in acc.figures if f.kind == "sectors_per_load").value == pytest.approx(4.0)


def test_command_reads_every_stall_reason_with_base_units() -> None:
    cmd = account_command("/tmp/x.csv", launch_count=2)
    metrics = cmd[cmd.index("--metrics") + 1].split(",")
    assert all(STALL.format(r) in metrics for r in STALL_REASONS)
    assert len(set(ACCOUNT_METRICS)) == len(ACCOUNT_METRICS)
    assert cmd[cmd.index("--print-units") + 1] == "base" and cmd[-1] == "2"


def test_short_unit_names_convert_and_unknown_ones_refuse() -> None:
    launch = {"gpu__time_duration.sum": 666560.0, "dram__bytes_read.sum": 2.0}
    rows = parse_raw_metrics(_csv([launch], {"gpu__time_duration.sum": "ns", "dram__bytes_read.sum": "B"}))
    assert rows[0]["gpu__time_duration.sum"] == pytest.approx(0.66656)  # ns -> ms
    assert rows[0]["dram__bytes_read.sum"] == 2.0
    with pytest.raises(NcuUnitError, match="gpu__time_duration.sum.*'cycle'"):
        parse_raw_metrics(_csv([launch], {"gpu__time_duration.sum": "cycle", "dram__bytes_read.sum": "byte"}))
    assert raw_units(_csv([launch], {"gpu__time_duration.sum": "ns"}))["gpu__time_duration.sum"] == "ns"


def test_rates_and_percentages_pass_through_unscaled() -> None:
    launch = {"dram__bytes_read.sum.per_second": 3.5, "lts__t_sector_hit_rate.pct": 41.0}
    rows = parse_raw_metrics(_csv([launch], {"dram__bytes_read.sum.per_second": "Tbyte/s",
                                             "lts__t_sector_hit_rate.pct": "%"}))
    assert rows[0]["dram__bytes_read.sum.per_second"] == 3.5
    assert rows[0]["lts__t_sector_hit_rate.pct"] == 41.0
