"""The run report: a Markdown page and two figures beside the run's result.

What each part rests on:
- the scores are this party's own classifier's, of the pairs it accepted (MATCH keeps only
  pairs above its cut; the candidate search never scores most of the others, so there is no
  histogram of rejected pairs), split by whether the peer's classifier accepted them too;
- the expected trade-off is TRAIN's simulation (held-out synthetic pairs of this party's own
  records, released as the real run releases them) at the error rate fitted to the links,
  every own record assumed to have a partner: no labels are needed, and it is an estimate;
- with a truth file, the same trade-off measured on the agreed linkage.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pprl.files.atomic import atomic_file, write_text_atomic
from pprl.files.pyplot import PlotsUnavailable, pyplot
from pprl.party.reporting.facts import RunFacts
from pprl.party.storage.artifacts import REPORT

REPORT_MD, SCORES_PNG, QUALITY_PNG = REPORT
# Rows of the trade-off tables: every this many points of the curves.
TABLE_STEP = 4

Point = tuple[float, float, float]  # (threshold, precision, recall)


def truth_curve(facts: RunFacts, truth: set[tuple[str, str]], points: int = 41) -> list[Point]:
    """The agreed linkage cut at each threshold (this party's score), against the truth."""
    agreed = sorted((p.score, (p.own_id, p.peer_id) in truth) for p in facts.pairs if p.agreed)
    curve = []
    for cut in _cuts(facts, agreed[-1][0] if agreed else facts.threshold, points):
        kept = [right for score, right in agreed if _kept(facts, score, cut)]
        found = sum(kept)
        curve.append((cut, found / len(kept) if kept else 0.0, found / max(len(truth), 1)))
    return curve


def _cuts(facts: RunFacts, top: float, points: int) -> list[float]:
    """`points` cuts evenly from the run's threshold towards `top`, the highest score."""
    step = (top - facts.threshold) / points
    return [facts.threshold + k * step for k in range(points)]


def _kept(facts: RunFacts, score: float, cut: float) -> bool:
    """A probability is kept at the cut (REVEAL sends those at or above it); a score above."""
    return score >= cut if facts.probabilities else score > cut


def probability_curve(facts: RunFacts, points: int = 41) -> list[Point]:
    """Expected, without labels, from this party's match probabilities: the pairs kept at
    each cut, their mean probability as the precision, and the recall TRAIN expected scaled
    by the share of the expected right pairs they keep."""
    scores = sorted(p.score for p in facts.pairs)
    total = sum(scores)
    recall = float(facts.expected.get("recall", 0.0))
    curve = []
    for cut in _cuts(facts, scores[-1] if scores else facts.threshold, points):
        kept = [p for p in scores if p >= cut]
        precision = sum(kept) / len(kept) if kept else 0.0
        curve.append((cut, precision, recall * sum(kept) / total if total else 0.0))
    return curve


def write_report(
    facts: RunFacts, out: Path, truth: set[tuple[str, str]] | None = None
) -> list[Path]:
    """report.md and, with matplotlib, its figures in `out`; the paths written."""
    # The expected trade: read from the probabilities, or from TRAIN's simulation.
    expected = None if facts.probabilities else facts.curve_simulation()
    if facts.probabilities:
        curve: list[Point] | None = probability_curve(facts)
    else:
        curve = list(expected.curve) if expected is not None else None
    measured = truth_curve(facts, truth) if truth is not None else None
    if measured is not None and not facts.cuts:
        measured = measured[:1]  # the run's own cut: no other can be had
    written, note = [], ""
    try:
        plt = pyplot()
    except PlotsUnavailable as missing:
        note = f"No figures: {missing}."
    else:
        written.append(_scores_figure(plt, facts, truth, out / SCORES_PNG))
        if curve is not None or measured is not None:
            written.append(_quality_figure(plt, facts, curve, measured, out / QUALITY_PNG))
    page = _page(facts, [p.name for p in written], note, expected, curve, measured, truth)
    write_text_atomic(out / REPORT_MD, page)
    return [out / REPORT_MD, *written]


def _scores_figure(
    plt: Any, facts: RunFacts, truth: set[tuple[str, str]] | None, path: Path
) -> Path:
    figure, ax = plt.subplots(figsize=(6.4, 3.6))
    groups: dict[str, list[float]] = {}
    for pair in facts.pairs:
        if not pair.agreed:
            label = f"accepted by {facts.identity} only"
        elif truth is None:
            label = "agreed by both"
        else:
            right = (pair.own_id, pair.peer_id) in truth
            label = "agreed, true pair" if right else "agreed, not a true pair"
        groups.setdefault(label, []).append(pair.score)
    if groups:
        ax.hist(list(groups.values()), bins=40, stacked=True, label=list(groups))
        ax.legend(fontsize=8)
    ax.axvline(facts.threshold, color="black", linestyle=":", label="threshold")
    unit = "match probability" if facts.probabilities else "classifier score"
    ax.set_xlabel(f"{facts.identity}'s {unit}")
    ax.set_ylabel("pairs")
    at = "at or above" if facts.probabilities else "above"
    ax.set_title(f"Accepted pairs ({at} {facts.threshold:g})", fontsize=10)
    return _save(plt, figure, path)


def _quality_figure(
    plt: Any,
    facts: RunFacts,
    expected: Sequence[Point] | None,
    measured: Sequence[Point] | None,
    path: Path,
) -> Path:
    figure, ax = plt.subplots(figsize=(6.4, 3.6))
    for curve, kind, style in ((expected, "expected", "--"), (measured, "against the truth", "-")):
        if curve:
            cuts = [p[0] for p in curve]
            for index, measure, colour in ((1, "precision", "tab:blue"), (2, "recall", "tab:red")):
                values = [p[index] for p in curve]
                ax.plot(cuts, values, style, color=colour, label=f"{measure}, {kind}")
    ax.axvline(facts.threshold, color="black", linestyle=":")
    ax.set_xlabel("threshold (match probability)" if facts.probabilities else "threshold")
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8)
    ax.set_title("Precision and recall if the cut were moved", fontsize=10)
    return _save(plt, figure, path)


def _save(plt: Any, figure: Any, path: Path) -> Path:
    figure.tight_layout()
    with atomic_file(path) as tmp:
        figure.savefig(tmp, dpi=100, format="png")
    plt.close(figure)
    return path


def _table(curve: Sequence[Point], current: float, digits: int = 2) -> list[str]:
    rows = ["| threshold | precision | recall |", "|---|---|---|"]
    for k, (cut, precision, recall) in enumerate(curve):
        if k % TABLE_STEP == 0 or k == len(curve) - 1:
            mark = " (now)" if abs(cut - current) < 1e-9 else ""
            rows.append(f"| {cut:.{digits}f}{mark} | {precision:.3f} | {recall:.3f} |")
    return rows


def _page(
    facts: RunFacts,
    figures: list[str],
    note: str,
    expected: Any,
    curve: Sequence[Point] | None,
    measured: Sequence[Point] | None,
    truth: set[tuple[str, str]] | None,
) -> str:
    me, peer = facts.identity, facts.peer
    only = len(facts.pairs) - facts.agreed
    lines = [
        f"# Run {facts.run_id}: {me}'s linkage with {peer}",
        "",
        f"- Result: `linkage.csv` in this directory, {facts.agreed:,} pairs agreed by both "
        f"({facts.review:,} marked for review).",
        f"- {me}'s classifier accepted {len(facts.pairs):,} pairs scoring above "
        f"{facts.threshold:g} among {facts.records:,} own records; {peer}'s did not accept "
        f"{only:,} of them.",
        _cut_words(facts),
        "",
        "## Scores",
        "",
        (
            "This party's match probabilities of the pairs its classifier accepted at or above "
            "the threshold (pairs it rejected are never told more than that)."
            if facts.probabilities
            else "This party's classifier's scores of the pairs it accepted. Pairs at or below "
            "the threshold are not kept (most are never scored), so they do not appear."
        ),
        "",
    ]
    if SCORES_PNG in figures:
        lines += [f"![scores]({SCORES_PNG})", ""]
    lines += ["## Precision and recall by threshold", ""]
    if facts.probabilities and curve is not None:
        lines += [
            "Expected, without labels: each pair's match probability is its bucket's share of "
            "right links among synthetic pairs of this party's own records (TRAIN's "
            "simulation, checked on held-out ones), divided among the records sharing its "
            "values. At each cut: the mean probability of the pairs kept, and the recall TRAIN "
            "expected times the share of the expected right pairs kept.",
            "",
            *_table(curve, facts.threshold, 4),
            "",
        ]
    elif expected is not None:
        lines += [
            "Expected, without labels: this party's classifier on held-out synthetic pairs of "
            f"its own records, changed as the pairs were fitted to differ (about "
            f"{expected.error_rate:.0%} of their compared values), every record assumed to "
            "have a partner. An estimate from the error model, not a measurement of this run.",
            "",
            *_table(expected.curve, -1.0),
            "",
        ]
    if measured is not None and truth is not None:
        lines += [
            f"Against the truth ({len(truth):,} true pairs): the agreed linkage cut at each "
            f"threshold of {me}'s {'match probability' if facts.probabilities else 'score'}.",
            "",
            *_table(measured, facts.threshold, 4 if facts.probabilities else 2),
            "",
        ]
    if QUALITY_PNG in figures:
        lines += [f"![precision and recall]({QUALITY_PNG})", ""]
    lines += _privacy(facts)
    if note:
        lines += ["", note]
    return "\n".join(lines) + "\n"


def _cut_words(facts: RunFacts) -> str:
    if facts.probabilities:
        return (
            f"- To move the cut: `pprl coordinate --run-id {facts.run_id} --threshold P` (a "
            "match probability, at least each party's own `[matching] threshold`); REVEAL and "
            "LINK run again on the pairs MATCH kept, with no new encrypted comparison."
        )
    if not facts.cuts:
        return (
            "- The cut cannot be moved: sealed linkage compares each score with the agreed "
            "thresholds under encryption, and keeps no score to cut again."
        )
    return (
        f"- To move the cut: `pprl coordinate --run-id {facts.run_id} --threshold SCORE` (at "
        "least each party's own `[matching] threshold`); MATCH, REVEAL and LINK run again, "
        "nothing before them."
    )


def _privacy(facts: RunFacts) -> list[str]:
    privacy = facts.privacy
    if not privacy.get("audited_records"):
        only = len(facts.pairs) - facts.agreed
        return [
            "## Privacy",
            "",
            "No release of this run was attacked: sealed linkage sends no vectors (what it "
            "reveals is in docs/security.md).",
            "",
            f"Pairs that are not in the linkage, revealed at REVEAL: {facts.peer} received "
            f"the ids of {only:,} of {facts.identity}'s records in pairs only "
            f"{facts.identity}'s classifier accepted, and sent the ids of {facts.peer_only:,} "
            f"of its own in pairs only its classifier accepted. The review queue "
            "(`review.csv`) lists those pairs and reveals nothing more.",
        ]
    recovered = ", ".join(f"{a} {r:.1%}" for a, r in sorted(privacy.get("recovered", {}).items()))
    noise = privacy.get("noise_edits", 0.0)
    limit = f" (limit {privacy['limit']:.1%})" if "limit" in privacy else ""
    return [
        "## Privacy",
        "",
        f"The privacy gate's dictionary attack on {privacy['audited_records']:,} sampled "
        f"records of this party's release re-identified {privacy['reidentified']:.1%} of "
        f"them{limit}; records with any name recovered {privacy.get('exposed', 0.0):.1%}; "
        f"values recovered: {recovered or 'none'}; noise {noise:.3g} edits. These figures hold "
        "for that attacker on this release (docs/research/privacy.md).",
    ]
