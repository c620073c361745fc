"""Linkage F1 against dictionary-attack re-identification, over a grid of noise scales.

Both parties run in one process through the daemon's pipeline (pprl.protocol.pipeline,
seeded per party): noise-aware training, released tensors with noise drawn once per distinct
value, candidate matching, one-to-one selection, agreed pairs; the method's defaults for the
noise come from method_params, as a daemon's configuration gets them. The attack is the
privacy gate's (audit_release) on a sample of Alice's released records, with the
census first and last names as the dictionary:

    .venv/bin/python benchmarks/privacy_curves.py --sizes 5000 --reference-rows 200 2000 \\
        --sigmas 0 0.5 1 1.5 2 --features projected-cosine --out docs/research/results/privacy.json
    .venv/bin/python benchmarks/privacy_curves.py --out docs/research/results/privacy.json \\
        --plot docs/research/privacy_curves.png

sigma is in FedSim's standardised units: the noise in edit units is sigma * sigma0, with
sigma0 the spread of distances within the reference set. Results are appended to --out as
they come, so a long grid can be stopped and resumed (rows already there are skipped).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from pprl.bench.data import read_reference
from pprl.files.atomic import write_text_atomic
from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.reference import DEFAULT_MAPPING, ReferenceSet
from pprl.protocol.gate import audit_release
from pprl.protocol.method import method_params
from pprl.protocol.metrics import linkage_quality
from pprl.protocol.privacy.audit import census_dictionary
from pprl.protocol.privacy.population_attack import Population
from pprl.protocol.vectors.randomness import Randomness
from pprl.protocol.vectors.release import RELEASES

ATTRIBUTES = ("first", "middle", "last")
BUILT_IN = "built-in"
KEY = (
    "size",
    "reference_rows",
    "sigma",
    "feature",
    "release",
    "reference",
    "population_extra",
    "seed",
)
# Rows written before the projected release, reference files and population lists.
KEY_DEFAULTS = {"release": "distances", "reference": BUILT_IN, "population_extra": None}


def _columns(people: list) -> dict[str, list[str]]:
    return {name: [getattr(p, name) for p in people] for name in ATTRIBUTES}


def reference_columns(name: str, rows: int) -> dict[str, list[str]]:
    """The built-in set of `rows` rows, or `rows` rows of a reference file (first,last CSV
    or one FIRST_LAST per line, as `pprl bench quality --reference` reads it)."""
    return read_reference(None if name == BUILT_IN else name, rows)


def reference_label(name: str) -> str:
    """How a row names its reference set: a file by its name alone, not where it lies."""
    return name if name == BUILT_IN else Path(name).name


def population_list(people: list, size: int, extra: float, seed: int) -> Population:
    """The peer's list of people: every one of the party's, and round(extra * size) others
    from the same generator (another seed), in a shuffled order."""
    others = synthetic.generate(max(1, round(extra * size)), seed + 7919).alice
    listed = [*people, *others[: round(extra * size)]]
    order = np.random.default_rng(seed).permutation(len(listed))
    return Population({name: [getattr(listed[i], name) for i in order] for name in ATTRIBUTES})


def point(
    size, rows, sigma, feature, release, reference_name, seed, audit_rows, caches, extra=None
):
    dictionaries, data_cache = caches
    if (size, seed) not in data_cache:
        data_cache[(size, seed)] = synthetic.generate(size, seed)
    data = data_cache[(size, seed)]
    reference = reference_columns(reference_name, rows)
    agreement = Agreement(
        ReferenceSet(reference_name, reference),
        DEFAULT_MAPPING,
        method_params(noise_sigma=sigma, feature=feature, release=release),
    )
    alice, bob = _columns(data.alice), _columns(data.bob)
    randomness = (Randomness(seed, "alice"), Randomness(seed, "bob"))
    began = time.perf_counter()
    linkage = pipeline.link_in_process(agreement, alice, bob, randomness)
    ids_a, ids_b = [p.id for p in data.alice], [p.id for p in data.bob]
    agreed = {(ids_a[a], ids_b[b]) for a, b in linkage.agreed}
    quality = linkage_quality(agreed, data.truth)
    link_seconds = time.perf_counter() - began
    if (reference_name, rows) not in dictionaries:
        dictionaries[reference_name, rows] = census_dictionary(reference)
    dictionary = dictionaries[reference_name, rows]
    began = time.perf_counter()
    population = None if extra is None else population_list(data.alice, size, extra, seed)
    report = audit_release(
        agreement,
        linkage.alice.released,
        alice,
        dictionary,
        audit_rows,
        randomness[0],
        population=population,
    )
    audit_seconds = time.perf_counter() - began
    return {
        "size": size,
        "reference_rows": rows,
        "sigma": sigma,
        "sigma0": agreement.sigma0,
        "noise_edits": agreement.release.noise,
        "feature": agreement.method.feature,
        "release": release,
        "reference": reference_label(reference_name),
        "population_extra": extra,
        "bytes_per_party": int(linkage.alice.released.tensor.nbytes),
        "seed": seed,
        "precision": quality.precision,
        "recall": quality.recall,
        "f1": quality.f1,
        "record_reidentified": report.record_reidentified,
        "record_exact": report.record_exact,
        "record_exposed": report.record_exposed,
        "attack": report.attack,
        "by_attack": report.by_attack,
        "attributes": {
            a.attribute: {
                "exact": a.result.exact_rate,
                "nearest": a.result.nearest_rate,
                "median_candidates": a.result.median_candidates,
                "in_dictionary": a.in_dictionary,
            }
            for a in report.attributes
        },
        "audited_records": report.records,
        "link_seconds": link_seconds,
        "audit_seconds": audit_seconds,
    }


def plot(rows: list[dict], path: Path) -> None:
    """F1 against record re-identification (left) and surname recovery (right), one curve per
    size, reference set and feature, each point labelled with its sigma."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, panels = plt.subplots(1, 2, figsize=(13, 5.5), sharey=True)
    # The privacy issue's targets: F1 >= 0.95 with <= 5% of records and <= 30% of surnames.
    measures = [
        (lambda r: r["record_reidentified"], "records re-identified (every name recovered, %)", 5),
        (lambda r: r["attributes"]["last"]["nearest"], "surnames recovered (%)", 30),
    ]

    def curve_of(r: dict) -> tuple:
        return (
            r["size"],
            r.get("reference", BUILT_IN),
            r["reference_rows"],
            r["feature"],
            r.get("release", "distances"),
        )

    settings = sorted({curve_of(r) for r in rows})
    for axes, (measure, label, target) in zip(panels, measures, strict=True):
        axes.fill_between([0, target], 0.95, 1.0, color="green", alpha=0.12, label="target")
        for setting in settings:
            size, reference, reference_rows, feature, release = setting
            curve = sorted((r for r in rows if curve_of(r) == setting), key=lambda r: r["sigma"])
            x = [100 * measure(r) for r in curve]
            y = [r["f1"] for r in curve]
            style = ("-" if feature == "projected-cosine" else "--") + (
                "o" if size < 50000 else "D"
            )
            axes.plot(
                x,
                y,
                style,
                label=f"{size:,} a side, {reference} {reference_rows:,}, {feature}, {release}",
            )
            for r, xi, yi in zip(curve, x, y, strict=True):
                axes.annotate(
                    f"\u03c3={r['sigma']:g}",
                    (xi, yi),
                    fontsize=7,
                    xytext=(3, 3),
                    textcoords="offset points",
                )
        axes.axvline(10, color="grey", linewidth=0.8, linestyle=":")
        axes.axhline(0.9, color="grey", linewidth=0.8, linestyle=":")
        axes.set_xlabel(f"{label}, dictionary attack by the peer")
        axes.grid(alpha=0.3)
    panels[0].set_ylabel("agreed linkage F1")
    panels[0].legend(fontsize=8, loc="lower right")
    figure.suptitle("Noise on released tensors: linkage quality against what the peer recovers")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def attacker(row: dict) -> str:
    """The attacker a row's rates are of, and the other's record rate when both ran (rows
    written before the weighted attacker existed are the uniform one's)."""
    others = {a: r for a, r in row.get("by_attack", {}).items() if a != row.get("attack")}
    return row.get("attack", "uniform") + "".join(f" ({a} {r:.1%})" for a, r in others.items())


def table(rows: list[dict]) -> str:
    """The results as a markdown table, in the order of the figure's curves."""
    lines = [
        "| a side | RS | feature | release | sigma | noise (edits) | precision | recall | F1 "
        "| records re-identified | attacker | first | middle | last | MB sent | link s | audit s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def order(r: dict) -> tuple:
        return (*tuple(r.get(k, KEY_DEFAULTS.get(k)) for k in KEY[:-1][::-1]), r["sigma"])

    for r in sorted(rows, key=order):
        a = r["attributes"]
        sent = f"{r['bytes_per_party'] / 1e6:.1f}" if "bytes_per_party" in r else "-"
        label = r.get("reference", BUILT_IN)
        lines.append(
            f"| {r['size']:,} | {label} {r['reference_rows']:,} | {r['feature']} "
            f"| {r.get('release', 'distances')} | {r['sigma']:g} "
            f"| {r['noise_edits']:.2f} | {r['precision']:.4f} | {r['recall']:.4f} "
            f"| {r['f1']:.4f} | {r['record_reidentified']:.1%} | {attacker(r)} "
            f"| {a['first']['nearest']:.1%} "
            f"| {a['middle']['nearest']:.1%} | {a['last']['nearest']:.1%} | {sent} "
            f"| {r['link_seconds']:.0f} | {r['audit_seconds']:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000])
    parser.add_argument("--reference-rows", type=int, nargs="+", default=[200, 2000])
    parser.add_argument("--sigmas", type=float, nargs="+", default=[0, 1, 2, 4])
    parser.add_argument(
        "--features", nargs="+", default=[None], help="default: the daemon's for the noise"
    )
    parser.add_argument(
        "--releases", nargs="+", default=["distances"], choices=RELEASES, help="what is sent"
    )
    parser.add_argument(
        "--reference", default=BUILT_IN, help="a reference file (its first --reference-rows rows)"
    )
    parser.add_argument(
        "--population-extra",
        type=float,
        help="also attack with a list of people: the party's own and this many times as many "
        "others (the attacker who combines a record's attributes)",
    )
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--audit-rows", type=int, default=500)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--plot", type=Path, help="only draw the figure from --out, as PNG")
    parser.add_argument("--table", action="store_true", help="only print --out as markdown")
    args = parser.parse_args()
    if args.plot or args.table:
        rows = json.loads(args.out.read_text())
        if args.plot:
            plot(rows, args.plot)
        if args.table:
            print(table(rows))
        return
    done = json.loads(args.out.read_text()) if args.out.exists() else []
    seen = {tuple(row.get(k, KEY_DEFAULTS.get(k)) for k in KEY) for row in done}
    caches: tuple[dict, dict] = ({}, {})
    grid = [
        (size, rows, chosen, release, sigma)
        for size in args.sizes
        for rows in args.reference_rows
        for chosen in args.features
        for release in args.releases
        for sigma in args.sigmas
    ]
    for size, rows, chosen, release, sigma in grid:
        feature = method_params(noise_sigma=sigma, feature=chosen).feature
        label = reference_label(args.reference)
        setting = (size, rows, sigma, feature, release, label, args.population_extra, args.seed)
        if setting in seen:
            continue
        row = point(
            size,
            rows,
            sigma,
            feature,
            release,
            args.reference,
            args.seed,
            args.audit_rows,
            caches,
            args.population_extra,
        )
        done.append(row)
        write_text_atomic(args.out, json.dumps(done, indent=1))
        print(
            f"n={size} RS={rows} {feature} {release} sigma={sigma:g} "
            f"({row['noise_edits']:.2f} edits): F1 {row['f1']:.4f} "
            f"(P {row['precision']:.4f} R {row['recall']:.4f}), re-identified "
            f"{row['record_reidentified']:.1%} "
            + " ".join(
                f"{a}:{v['nearest']:.0%}/{v['exact']:.0%}" for a, v in row["attributes"].items()
            )
            + f" [{row['link_seconds']:.0f}+{row['audit_seconds']:.0f} s, "
            f"{row['bytes_per_party'] / 1e6:.1f} MB]",
            flush=True,
        )


if __name__ == "__main__":
    main()
