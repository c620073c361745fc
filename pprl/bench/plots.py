"""Figures in the style of the paper's figures 1 and 2: quality and matching time against the
number of matched records, one line per configuration. matplotlib is an optional extra."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pprl.bench.report import PAPER_LINEAR_SECONDS
from pprl.bench.scale import growth_exponent
from pprl.files.pyplot import pyplot


def _lines(summary: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Entries grouped into one line per configuration, each sorted by size."""
    lines: dict[str, list[dict[str, Any]]] = {}
    for entry in summary:
        label = (
            f"{entry['variant']}, RS {entry['reference_rows']:,}, "
            f"train {entry['training_records']:,}, {entry['kernel']}"
        )
        lines.setdefault(label, []).append(entry)
    return {label: sorted(points, key=lambda e: e["size"]) for label, points in lines.items()}


def _paper_times(ax: Any, marker: str, label: str) -> None:
    """Alice's matching times the paper published (linear, 6 cores), as a dotted black line."""
    published = sorted(PAPER_LINEAR_SECONDS)
    seconds = [PAPER_LINEAR_SECONDS[n][0] for n in published]
    ax.plot(published, seconds, marker=marker, linestyle=":", color="black", label=label)


def _save_log_log(plt: Any, figure: Any, ax: Any, path: Path, xlabel: str, ylabel: str) -> Path:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def quality_figure(summary: Sequence[dict[str, Any]], path: Path, role: str = "alice") -> Path:
    """Precision and recall of one party's classifier (mean over repetitions, bars: min-max)."""
    plt = pyplot()
    figure, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharex=True)
    for label, points in _lines(summary).items():
        sizes = [p["size"] for p in points]
        for ax, metric in zip(axes, ("precision", "recall"), strict=True):
            stats = [p[role][metric] for p in points]
            means = [s["mean"] for s in stats]
            errors = [
                [m - s["min"] for m, s in zip(means, stats, strict=True)],
                [s["max"] - m for m, s in zip(means, stats, strict=True)],
            ]
            ax.errorbar(sizes, means, yerr=errors, marker="o", capsize=3, label=label)
    for ax, metric in zip(axes, ("precision", "recall"), strict=True):
        ax.set_xscale("log")
        ax.set_xlabel("matched records per side")
        ax.set_ylabel(f"{role} {metric}")
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def time_figure(summary: Sequence[dict[str, Any]], path: Path) -> Path:
    """Alice's matching time against size (log-log): one line per reference-set size and
    kernel (time hardly depends on the variant, which shares the scan), the plain baseline,
    and the times the paper published for its 6-core machine."""
    plt = pyplot()
    figure, ax = plt.subplots(figsize=(7, 4.5))
    lines: dict[str, dict[int, float]] = {}
    for entry in summary:
        split = f"split, RS {entry['reference_rows']:,}, {entry['kernel']}"
        lines.setdefault(split, {})[entry["size"]] = entry["alice_match_seconds"]["median"]
        if "plain_match_seconds" in entry:
            plain = f"plain (no privacy), {entry['kernel']}"
            lines.setdefault(plain, {})[entry["size"]] = entry["plain_match_seconds"]["median"]
    for label, points in sorted(lines.items()):
        sizes = sorted(points)
        style = "--" if label.startswith("plain") else "-"
        ax.plot(sizes, [points[n] for n in sizes], marker="o", linestyle=style, label=label)
    _paper_times(ax, "s", "paper, split linear, 6 cores (published)")
    return _save_log_log(
        plt, figure, ax, path, "matched records per side", "matching time per party (s)"
    )


def scale_figure(rows: Sequence[dict[str, Any]], path: Path) -> Path:
    """Time against records per side (log-log) for `pprl bench scale`: the whole protocol,
    Alice's candidate matching, and the all-pairs oracle (hollow where its time is scaled up
    from a sample of rows), with the paper's published matching times for reference."""
    plt = pyplot()
    figure, ax = plt.subplots(figsize=(7, 4.5))
    rows = sorted(rows, key=lambda r: r["size"])
    sizes = [r["size"] for r in rows]
    for label, key, marker in (
        ("whole protocol, both daemons, mutual TLS", "end_to_end_seconds", "o"),
        ("matching by candidates (one party)", "matching_seconds", "s"),
        ("all-pairs oracle (one party)", "oracle_seconds", "^"),
    ):
        seconds = [r[key] for r in rows]
        fitted = [r for r in rows if key != "oracle_seconds" or not r["oracle_estimated"]]
        if len(fitted) >= 2:
            exponent = growth_exponent([r["size"] for r in fitted], [r[key] for r in fitted])
            label += f", ~n^{exponent:.2f}"
        (line,) = ax.plot(sizes, seconds, marker=marker, label=label)
        if key == "oracle_seconds":
            estimated = [r for r in rows if r["oracle_estimated"]]
            ax.plot(
                [r["size"] for r in estimated],
                [r[key] for r in estimated],
                marker=marker,
                linestyle="none",
                markerfacecolor="white",
                color=line.get_color(),
                label="oracle time scaled from a row sample",
            )
    _paper_times(ax, "x", "paper, matching, linear, 6 cores (published)")
    return _save_log_log(plt, figure, ax, path, "records per side", "wall time (s)")
