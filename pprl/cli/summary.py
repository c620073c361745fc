"""The end-of-run summary as a person reads it; the same dict is what --json writes."""

from __future__ import annotations

import json
from pathlib import Path

from pprl.files.atomic import write_text_atomic
from pprl.protocol.phases import Phase


def other_records(summary: dict, name: str) -> int:
    return sum(p["records"] for n, p in summary["parties"].items() if n != name)


def print_summary(summary: dict) -> None:
    """The agreed method, phase times, bytes sent, what each party counted at the phase
    reached and, when a truth file was given, precision and recall; a session of several
    parties, pair by pair."""
    if "pairs" in summary:
        for run in summary["pairs"]:
            print(f"\n== {run['pair'][0]} and {run['pair'][1]} (run {run['run_id']})")
            print_run(run)
        print(
            f"\nsession {summary['session_id']}: {summary['linked_pairs']} of "
            f"{summary['pair_count']} pairs linked in {summary['seconds']:.2f} s"
        )
        return
    print_run(summary)


def print_method(method: dict) -> None:
    """The agreed encoding, then its main settings by their [method] names."""
    print(f"\nmethod: encoding {method['encoding']}")
    settings = "; ".join(f"{key} {value}" for key, value in method.items() if key != "encoding")
    if settings:
        print(f"  {settings}")


def counts_words(name: str, party: dict, completed: Phase) -> str:
    """What is counted of a party at the phase both reached: records from SMASH on, its
    classifier's pairs from MATCH on, the agreed pairs from LINK on (zeros before them would
    read as a run that found nothing)."""
    said = []
    if completed >= Phase.SMASH:
        said.append(f"{party['records']:,} records")
    if completed >= Phase.MATCH:
        above = f" above {party['threshold']:g}" if party.get("threshold") else ""
        said.append(f"its classifier accepted {party['own_matches']:,} pairs{above}")
    if completed >= Phase.LINK:
        said.append(f"agreed by both: {party['agreed_matches']:,}")
    if not said:
        return f"{name}: nothing counted yet (the run has completed {completed.name})"
    return f"{name}: " + ", ".join(said)


def print_run(summary: dict) -> None:
    if summary.get("method"):
        print_method(summary["method"])
    print("\nphase wall times (s):")
    for phase, seconds in summary["phases"].items():
        print(f"  {phase:<9} {seconds:8.2f}")
    print(f"  {'total':<9} {summary['seconds']:8.2f}")
    print("\nbytes sent: " + ", ".join(f"{n} {b:,}" for n, b in summary["bytes_sent"].items()))
    completed = Phase[summary["completed"].upper()]
    for name, party in summary["parties"].items():
        print(counts_words(name, party, completed))
        if party.get("scored_pairs"):
            share = party["scored_pairs"] / max(1, party["records"] * other_records(summary, name))
            # Under the hidden join a pair sharing k keys is scored in k slots.
            print(
                f"  matching scored {party['scored_pairs']:,} candidates ({100 * share:.3f}% as "
                "many as all pairs)"
            )
        privacy = party.get("privacy", {})
        if privacy.get("audited_records"):
            noise = privacy["noise_edits"]
            print(
                f"  privacy gate: a dictionary attack re-identified {privacy['reidentified']:.1%} "
                f"of {privacy['audited_records']} sampled released records (limit "
                f"{privacy['limit']:.1%}); " + (f"noise {noise:.3g} edits" if noise else "no noise")
            )
        if privacy.get("recovered"):
            each = ", ".join(f"{a} {r:.1%}" for a, r in privacy["recovered"].items())
            print(
                f"  what that attack recovered: values {each}; records with any name "
                f"{privacy['exposed']:.1%}"
            )
        if privacy.get("noise_choice"):
            print(f"  {privacy['noise_choice']}")
        expected = party.get("expected", {})
        if expected.get("f1"):
            spread = expected.get("spread", "")
            print(
                f"  expected before sending: F1 about {expected['f1']:.2f} (precision "
                f"{expected['precision']:.2f}, recall {expected['recall']:.2f}"
                f"{f'; {spread}' if spread else ''}; "
                f"minimum {expected['minimum']:.2f})"
            )
        fitted = party.get("fitted", {})
        if fitted.get("f1"):
            partnered = (
                f"; about {fitted['partnered']:,.0f} own records with a partner"
                if fitted["partnered"]
                else ""
            )
            print(
                f"  expected, fitted to its accepted pairs: F1 about {fitted['f1']:.2f} "
                f"(precision {fitted['precision']:.2f}, recall {fitted['recall']:.2f}{partnered})"
            )
        if party.get("peak_rss_bytes"):
            print(f"  daemon peak resident memory {party['peak_rss_bytes'] / 2**30:.2f} GiB")
        if party.get("result_path"):
            print(f"  result: {party['result_path']}")
            print(f"  report: {party['report_path']}")
        elif party.get("result"):
            print(f"  result: {party['result']} in {name}'s state directory (report.md beside it)")
    if "linkage" not in summary:
        return
    print(f"\n{'match set':<22} {'precision':>9} {'recall':>7} {'F1':>7} {'pairs':>7}")
    labels = {
        **{name: f"{name}'s classifier" for name in summary["parties"]},
        "linkage": "agreed linkage (both)",
    }
    for key, label in labels.items():
        q = summary[key]
        pairs = q["true_positives"] + q["false_positives"]
        print(f"{label:<22} {q['precision']:9.4f} {q['recall']:7.4f} {q['f1']:7.4f} {pairs:7d}")


def write_json(path: str | None, document: dict) -> None:
    """--json: the same dict the person read, whole or not at all."""
    if path:
        write_text_atomic(Path(path), json.dumps(document, indent=2) + "\n")
        print(f"summary written to {path}")
