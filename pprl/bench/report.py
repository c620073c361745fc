"""Markdown tables of a quality run, next to the figures the paper published."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# Section 5 of the split-learning paper (6-core desktop, NC voter data, training 5,000, linear):
# matching seconds per party (Alice / Bob), and the precision it reports for the split method.
PAPER_LINEAR_SECONDS = {5000: (8.6, 6.7), 20000: (115.8, 104.2), 50000: (739.9, 663.6)}
PAPER_SPLIT_PRECISION = {5000: "≈0.98", 50000: "≈0.85-0.90"}


def _published_seconds(size: int) -> str:
    if size not in PAPER_LINEAR_SECONDS:
        return "-"
    alice, bob = PAPER_LINEAR_SECONDS[size]
    return f"{alice} / {bob}"


def _cell(stats: dict[str, float]) -> str:
    """mean ± sd, or the mean alone after one repetition."""
    if stats["sd"] == 0.0:
        return f"{stats['mean']:.4f}"
    return f"{stats['mean']:.4f} ± {stats['sd']:.4f}"


_COLUMNS = (
    "records", "RS", "train", "kernel", "variant", "Alice P", "Alice R", "Bob P", "Bob R",
    "agreed F1", "plain P", "plain R", "match s (A/B)", "paper P", "paper s (A/B)",
)  # fmt: skip
_TIME_COLUMNS = {"match s (A/B)", "paper s (A/B)"}


def quality_table(summary: Sequence[dict[str, Any]], times: bool = True) -> str:
    """One line per grid point and variant; quality as mean ± sd over repetitions, matching
    time as the median. times=False drops the time columns (for runs that shared the CPU)."""
    keep = [i for i, name in enumerate(_COLUMNS) if times or name not in _TIME_COLUMNS]
    header = "| " + " | ".join(_COLUMNS[i] for i in keep) + " |"
    lines = [header, "|" + "---|" * len(keep)]
    for e in sorted(
        summary,
        key=lambda e: (e["reference_rows"], e["training_records"], e["kernel"], e["size"]),
    ):
        plain = e.get("plain")
        seconds = (
            f"{e['alice_match_seconds']['median']:.1f} / {e['bob_match_seconds']['median']:.1f}"
        )
        published = e["kernel"] == "linear" and e["training_records"] == 5000
        cells = [
            f"{e['size']:,}",
            f"{e['reference_rows']:,}",
            f"{e['training_records']:,}",
            e["kernel"],
            e["variant"],
            _cell(e["alice"]["precision"]),
            _cell(e["alice"]["recall"]),
            _cell(e["bob"]["precision"]),
            _cell(e["bob"]["recall"]),
            _cell(e["agreed"]["f1"]),
            _cell(plain["precision"]) if plain else "-",
            _cell(plain["recall"]) if plain else "-",
            seconds,
            PAPER_SPLIT_PRECISION.get(e["size"], "-") if published else "-",
            _published_seconds(e["size"]) if published else "-",
        ]
        lines.append("| " + " | ".join(cells[i] for i in keep) + " |")
    return "\n".join(lines) + "\n"
