"""PNG figures of a suite report (matplotlib, Agg): speedup distribution, before/after times, process accounting.

Timing figures are drawn only from measured times; without GPU timing they are not written (and stale ones from
an earlier report in the same directory are removed), so a figure in the directory always matches report.json.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SPEEDUP, TIMES, PROCESS = "fig_speedup.png", "fig_times.png", "fig_process.png"


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def speedup_figure(ops: list[dict[str, Any]], path: Path, start: str = "initial") -> None:
    plt = _plt()
    from matplotlib.ticker import FuncFormatter

    rows = sorted((o for o in ops if o["speedup"]), key=lambda o: o["speedup"])
    fig, ax = plt.subplots(figsize=(8, 0.26 * len(rows) + 1.6))
    y = range(len(rows))
    ax.barh(list(y), [o["speedup"] for o in rows], color="#4C72B0", label=f"best / {start}.py")
    for key, marker, color, label in (("vs_eager", "o", "#DD8452", "best vs torch eager"),
                                      ("vs_compile", "D", "#55A868", "best vs torch.compile")):
        pts = [(o[key], i) for i, o in enumerate(rows) if o[key]]
        if pts:
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=color, s=18, zorder=3, label=label)
    for x, ls in ((1, "-"), (2, ":"), (5, ":")):
        ax.axvline(x, color="grey", lw=0.8, ls=ls)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}x"))
    ax.set_yticks(list(y), [o["op"] for o in rows], fontsize=7)
    ax.set_xlabel("speedup (geomean over cases, log scale)")
    ax.set_title(f"Speedup per operator from {start}.py (lines at 1x, 2x, 5x)")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def times_figure(cases: list[dict[str, Any]], path: Path) -> None:
    plt = _plt()
    pts = [c for c in cases if c["initial_ms"] and c["best_ms"]]
    fig, axes = plt.subplots(1, 2, figsize=(11, 5))
    ax = axes[0]
    mem = [c for c in pts if c["memory_bound"]]
    cmp_ = [c for c in pts if not c["memory_bound"]]
    for group, color, label in ((mem, "#4C72B0", "memory-bound case"), (cmp_, "#C44E52", "compute-bound case")):
        if group:
            ax.scatter([c["initial_ms"] for c in group], [c["best_ms"] for c in group], s=12, color=color, label=label)
    lo = min(min(c["initial_ms"], c["best_ms"]) for c in pts)
    hi = max(max(c["initial_ms"], c["best_ms"]) for c in pts)
    for k, ls in ((1, "-"), (2, ":"), (5, ":")):
        ax.plot([lo, hi], [lo / k, hi / k], color="grey", lw=0.8, ls=ls)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("initial candidate (ms)")
    ax.set_ylabel("best candidate (ms)")
    ax.set_title("Before / after, every case (lines: 1x, 2x, 5x)")
    ax.legend(fontsize=7)
    ax = axes[1]
    for key, color, label in (("eager_ms", "#DD8452", "torch eager"), ("compile_ms", "#55A868", "torch.compile"),
                              ("initial_ms", "#8172B3", "initial")):
        sel = [c for c in pts if c[key] and c["floor_ms"]]
        if sel:
            ax.scatter([c["floor_ms"] for c in sel], [c[key] for c in sel], s=9, color=color, alpha=0.7, label=label)
    sel = [c for c in pts if c["floor_ms"]]
    if sel:
        ax.scatter([c["floor_ms"] for c in sel], [c["best_ms"] for c in sel], s=14, color="#4C72B0", label="best")
        flo, fhi = min(c["floor_ms"] for c in sel), max(c["floor_ms"] for c in sel)
        ax.plot([flo, fhi], [flo, fhi], color="black", lw=0.8, label="roofline floor")
        ax.plot([flo, fhi], [flo / 0.6, fhi / 0.6], color="grey", lw=0.8, ls=":", label="60% of roofline")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("roofline floor, H200 datasheet (ms)")
    ax.set_ylabel("measured (ms)")
    ax.set_title("Times against the roofline floor")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def process_figure(acc: dict[str, Any], path: Path) -> None:
    plt = _plt()
    from matplotlib.ticker import MaxNLocator

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    bl = acc["best_level"]
    axes[0].bar(list(bl), list(bl.values()), color="#4C72B0")
    axes[0].set_title("Level of the selected best round")
    ml = acc["max_level"]
    reach = acc["trajectories_reaching_level"]
    xs = list(range(len(ml)))
    axes[1].bar([x - 0.2 for x in xs], list(ml.values()), width=0.4, color="#DD8452", label="highest level reached")
    axes[1].bar([x + 0.2 for x in xs], [reach.get(k, 0) for k in ml], width=0.4, color="#55A868", label="reached at least once")
    axes[1].set_xticks(xs, list(ml))
    axes[1].set_title("Levels the trajectories reached")
    axes[1].legend(fontsize=7)
    bi = {int(k): v for k, v in acc["best_round_index"].items()}
    top = max([*bi, int(acc.get("max_rounds_run") or 0)])
    axes[2].bar(list(range(top + 1)), [bi.get(i, 0) for i in range(top + 1)], width=0.6, color="#8172B3")
    axes[2].set_xticks(list(range(top + 1)))
    axes[2].set_title("Index of the best round")
    axes[2].set_xlabel("round (0 = the initial candidate)")
    for ax in axes:
        ax.set_ylabel("trajectories")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    fig.suptitle(f"Process accounting: {acc['trajectories']} trajectories, {acc['rounds']} rounds")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_figures(rep: dict[str, Any], out: Path) -> list[str]:
    """Write the figures the data supports; returns their file names."""
    written = []
    if rep["has_timing"]:
        speedup_figure(rep["per_op"], out / SPEEDUP, rep.get("initial_set", "initial"))
        times_figure(rep["per_case"], out / TIMES)
        written += [SPEEDUP, TIMES]
    else:
        for name in (SPEEDUP, TIMES):
            (out / name).unlink(missing_ok=True)
    if rep["accounting"]["trajectories"]:
        process_figure(rep["accounting"], out / PROCESS)
        written.append(PROCESS)
    else:
        (out / PROCESS).unlink(missing_ok=True)
    return written
