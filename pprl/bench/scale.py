"""`pprl bench scale`: the reference release's whole protocol at growing sizes, then matching
against the exact all-pairs scorer on the very tensors and model the daemons used (sealed
linkage's scale: benchmarks/sealed_linkage.py).

Per size: two daemons and the coordinator run every phase over loopback mutual TLS (phase
wall times, each daemon's peak resident memory, F1). Then, in this process with the daemons
stopped, candidate matching and the all-pairs oracle (matching.score_pairs) run on Alice's
stored tensors and model: time of each, pair completeness, reduction ratio, F1 of both.
Above `oracle_full_max` records the oracle scores a random sample of Alice's rows against
all of Bob's, and its full time is that time scaled by n / sample (marked as estimated).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pprl.files.records import load_records
from pprl.files.reference import load_reference
from pprl.party.local import (
    PARTIES,
    Privacy,
    evaluate,
    prepare,
    read_truth,
    running,
    write_demo_data,
)
from pprl.party.storage.artifacts import MODEL, ORDER, OWN_TENSOR, PEER_TENSOR
from pprl.party.storage.state import run_dir
from pprl.protocol.agreement import Agreement
from pprl.protocol.data.reference import DEFAULT_MAPPING
from pprl.protocol.linkage import candidates, matching, plans
from pprl.protocol.method import method_params
from pprl.protocol.method_settings import MethodParams
from pprl.protocol.metrics import linkage_quality
from pprl.protocol.model.classifier import Model
from pprl.protocol.model.features import (
    Standardise,
    indicator_features,
    missing_units,
    missing_values,
    unit_vectors,
)

Log = Callable[[str], None]


@dataclass(frozen=True)
class ScaleOptions:
    sizes: tuple[int, ...] = (5000, 20000, 50000, 100000, 200000)
    reference_rows: int = 2000
    seed: int = 7
    oracle_full_max: int = 50_000
    oracle_sample: int = 2000
    classifier: str = "linear"
    noise_sigma: float = 0.0
    feature: str | None = None  # None: the daemon's default for the noise
    release: str | None = None  # None: the daemon's default for the feature
    runs: int = 1  # on the same daemons: the first fills the gate cache, later ones find it

    def method(self) -> MethodParams:
        """The method the daemons' configurations resolve to."""
        return method_params(
            noise_sigma=self.noise_sigma,
            feature=self.feature,
            classifier=self.classifier,
            release=self.release,
        )


def _tensor(state: Path, name: str, shape: tuple[int, ...]) -> np.ndarray:
    return np.fromfile(state / name, dtype=np.uint8).reshape(shape)


def _end_to_end(workdir: Path, size: int, options: ScaleOptions, log: Log) -> dict[str, Any]:
    """Both daemons and the coordinator through every phase, `options.runs` times; the daemons
    are stopped after. Times are the first run's (a fresh state directory), F1 and the stored
    run the last one's (same data: what a later run differs in is its gate cache)."""
    data = workdir / "data"
    began = time.perf_counter()
    write_demo_data(data, size, options.seed, reference_rows=options.reference_rows)
    log(f"n={size}: data written in {time.perf_counter() - began:.1f} s; starting daemons")
    records = {n: data / f"{n}.csv" for n in PARTIES}
    # The reference release, whose stored tensors the oracle scores again; the gate is
    # measured and reported, never a reason to stop a benchmark.
    privacy = Privacy(
        options.noise_sigma,
        options.feature,
        max_reidentification=1.0,
        release=options.release,
        encoding="reference",
    )
    deployment = prepare(
        workdir, records, data / "reference.csv", options.classifier, privacy=privacy, built_in=True
    )
    summaries = []
    with running(deployment) as coordinator:
        for run in range(options.runs):
            summaries.append(coordinator.run(new=True))
            if options.runs > 1:
                log(f"n={size}: run {run + 1}/{options.runs} in {summaries[-1]['seconds']} s")
    first, last = summaries[0], summaries[-1]
    quality = evaluate(deployment, last["run_id"], read_truth(data / "truth.csv"))
    end = {
        "run_id": last["run_id"],
        "seconds": first["seconds"],
        "phases": first["phases"],
        "peak_rss_gib": {
            n: round(p["peak_rss_bytes"] / 2**30, 3) for n, p in last["parties"].items()
        },
        "f1": {n: quality[n]["f1"] for n in (*PARTIES, "linkage")},
        "state": {n: str(deployment.parties[n].state_dir) for n in PARTIES},
    }
    if len(summaries) > 1:
        # The median later run, by wall time: what a deployment's next run costs.
        later = sorted(summaries[1:], key=lambda s: s["seconds"])
        median = later[(len(later) - 1) // 2]
        end["warm"] = {
            "runs": [s["seconds"] for s in summaries[1:]],
            "seconds": median["seconds"],
            "phases": median["phases"],
        }
    return end


def _truth_rows(workdir: Path, states: dict[str, Path]) -> set[tuple[int, int]]:
    """True pairs as (Alice's tensor row, Bob's tensor row): tensors are secretly shuffled."""
    data = workdir / "data"
    rows = {}
    for name in PARTIES:
        order = np.load(states[name] / ORDER)
        ids = load_records(data / f"{name}.csv").ids  # as the daemon loaded them
        index = {record_id: i for i, record_id in enumerate(ids)}
        position = np.empty(len(order), dtype=np.int64)
        position[order] = np.arange(len(order))
        rows[name] = (index, position)
    truth = read_truth(data / "truth.csv")
    (index_a, row_a), (index_b, row_b) = rows["alice"], rows["bob"]
    return {(int(row_a[index_a[a]]), int(row_b[index_b[b]])) for a, b in truth}


def _f1(found: matching.Matches, truth: set[tuple[int, int]]) -> float:
    pairs = set(zip(found.rows_a.tolist(), found.rows_b.tolist(), strict=True))
    return round(linkage_quality(pairs, truth).f1, 5)


# Two float32 paths (a matrix product, a per-entry sum) may round a decision differently by
# this much relative to the model's size: a pair within it of a cut is a tie, not a miss.
_ROUNDING = 1e-5


def _rounding(model: Model) -> float:
    """How far apart the float32 paths may put one decision."""
    size = abs(float(model.arrays["bias"]))
    size += float(np.abs(model.arrays["dual_coef" if model.kind == "rbf" else "weights"]).sum())
    return _ROUNDING * size


def _units64(codes: np.ndarray, shift: Standardise | None) -> np.ndarray:
    """One row's (M, R) codes as unit_vectors makes them, in float64: the agreed shift and
    scale first, and a missing value (MISSING_CODE) a zero vector."""
    values = codes.astype(np.float64)
    if shift is not None:
        values = (values - shift.centre) / shift.scale
        if shift.basis is not None:
            values = np.einsum("mr,mrk->mk", values, shift.basis.astype(np.float64))
        if shift.constant is not None:
            constant = np.asarray(shift.constant, dtype=np.float64)[:, None]
            values = np.concatenate([values, constant], axis=-1)
    norms = np.linalg.norm(values, axis=-1, keepdims=True)
    values = np.divide(values, norms, out=np.zeros_like(values), where=norms > 0)
    values[missing_values(codes)] = 0.0
    return values


def _float64_decision(
    own: np.ndarray,
    peer: np.ndarray,
    model: Model,
    a: int,
    b: int,
    shift: Standardise | None = None,
) -> float:
    """A pair's decision computed in float64: the reference when the float32 paths disagree."""
    x, y = _units64(own[a], shift), _units64(peer[b], shift)
    dots = (x * y).sum(axis=1)
    features = np.concatenate(
        [np.clip(1.0 - dots, 0.0, 2.0), indicator_features(missing_units(x), missing_units(y))]
    )
    return float(model.decision(features[None, :])[0])


def _explain(
    own: np.ndarray,
    peer: np.ndarray,
    model: Model,
    pair: tuple[int, int],
    in_oracle: bool,
    ours: set[tuple[int, int]],
    oracle: set[tuple[int, int]],
    shift: Standardise | None = None,
) -> dict[str, Any]:
    """Why a kept pair differs: its float64 decision and the weakest float64 decision each
    path kept for the same A row (a swap at the top_k cut, or a decision next to 0). A
    rounding tie: the decision is within float32 rounding of 0 or of the weakest pair the
    path that left it out kept."""
    row = pair[0]

    def weakest(kept: set[tuple[int, int]]) -> float | None:
        scores = [_float64_decision(own, peer, model, a, b, shift) for a, b in kept if a == row]
        return round(min(scores), 6) if scores else None

    decision = _float64_decision(own, peer, model, *pair, shift)
    weakest_oracle, weakest_ours = weakest(oracle), weakest(ours)
    cut = weakest_ours if in_oracle else weakest_oracle
    tolerance = _rounding(model)
    return {
        "pair": list(pair),
        "kept_by": "oracle" if in_oracle else "candidates",
        "float64_decision": round(decision, 6),
        "weakest_kept_oracle": weakest_oracle,
        "weakest_kept_candidates": weakest_ours,
        "rounding_tie": abs(decision) <= tolerance
        or (cut is not None and abs(decision - cut) <= tolerance),
    }


def _compare(
    workdir: Path, end: dict[str, Any], size: int, options: ScaleOptions, log: Log
) -> dict[str, Any]:
    """Alice's matching by candidates and by the all-pairs oracle, on her stored run."""
    states = {n: run_dir(Path(end["state"][n]), end["run_id"]) for n in PARTIES}
    state = states["alice"]
    model = Model.from_bytes((state / MODEL).read_bytes())
    agreement = Agreement(
        load_reference(workdir / "data" / "reference.csv"), DEFAULT_MAPPING, options.method()
    )
    own = _tensor(state, OWN_TENSOR, (size, -1, agreement.width))
    peer = _tensor(state, PEER_TENSOR, (size, -1, agreement.width))
    truth = _truth_rows(workdir, states)
    shift = agreement.standardise
    selection = matching.Selection(model, agreement.method.top_k)

    times: dict[str, float] = {}
    began = time.perf_counter()
    side_a = candidates.distinct_entries(own, standardise=shift)
    side_b = candidates.distinct_entries(peer, standardise=shift)
    times["distinct"] = time.perf_counter() - began
    began = time.perf_counter()
    work = candidates.plan(side_a, side_b, selection)
    times["plan"] = time.perf_counter() - began
    began = time.perf_counter()
    outcome = plans.run_here(work)
    times["blocks"] = time.perf_counter() - began
    began = time.perf_counter()
    ours = matching.one_to_one(outcome.matches, agreement.method.assignment)
    times["one_to_one"] = time.perf_counter() - began
    ours_seconds = sum(times.values())
    rows_a, rows_b = np.array(sorted(truth)).T
    completeness = float(work.is_candidate(rows_a, rows_b).mean())
    log(
        f"n={size}: candidates {outcome.candidates:,} in {ours_seconds:.1f} s; "
        f"pair completeness {completeness:.5f}; oracle next"
    )

    full = size <= options.oracle_full_max
    sample = (
        np.arange(size)
        if full
        else np.sort(np.random.default_rng(size).choice(size, options.oracle_sample, False))
    )
    unit_b = unit_vectors(peer, shift)
    began = time.perf_counter()
    exact = matching.score_pairs(unit_vectors(own[sample], shift), unit_b, [selection])[0]
    oracle_seconds = time.perf_counter() - began
    del unit_b
    exact = matching.Matches(sample[exact.rows_a], exact.rows_b, exact.scores)
    # Rows not sampled are left out of both before comparing the kept pairs.
    in_sample = np.isin(outcome.matches.rows_a, sample)
    ours_kept = set(
        zip(
            outcome.matches.rows_a[in_sample].tolist(),
            outcome.matches.rows_b[in_sample].tolist(),
            strict=True,
        )
    )
    exact_kept = set(zip(exact.rows_a.tolist(), exact.rows_b.tolist(), strict=True))
    differing = [
        _explain(own, peer, model, pair, pair in exact_kept, ours_kept, exact_kept, shift)
        for pair in sorted(exact_kept ^ ours_kept)[:20]
    ]
    scale = size / len(sample)
    row: dict[str, Any] = {
        "size": size,
        "classifier": model.kind,
        "reference_rows": options.reference_rows,
        "release": agreement.method.release,
        "noise_sigma": agreement.method.noise_sigma,
        "tensor_bytes_per_party": int(own.nbytes),
        "end_to_end_seconds": end["seconds"],
        "phases": end["phases"],
        **({"warm_cache": end["warm"]} if "warm" in end else {}),
        "peak_rss_gib": end["peak_rss_gib"],
        "end_to_end_f1": end["f1"],
        "matching_seconds": round(ours_seconds, 3),
        "matching_steps": {k: round(v, 3) for k, v in times.items()},
        "candidates": outcome.candidates,
        "reduction_ratio": round(1 - (outcome.candidates or size * size) / (size * size), 6),
        "pair_completeness": round(completeness, 6),
        "oracle_rows": len(sample),
        "oracle_seconds": round(oracle_seconds * scale, 3),
        "oracle_estimated": not full,
        "speedup": round(oracle_seconds * scale / ours_seconds, 2),
        "kept_pairs_equal_oracle": ours_kept == exact_kept,
        "oracle_pairs_missed": len(exact_kept - ours_kept),
        # Differing pairs (of the first 20) that are not float32 rounding ties: a real miss.
        "differing_beyond_rounding": sum(not d["rounding_tie"] for d in differing),
        "differing_pairs": differing,
        "f1": _f1(ours, truth),
    }
    if full:
        row["oracle_f1"] = _f1(matching.one_to_one(exact, agreement.method.assignment), truth)
    return row


def run_scale(options: ScaleOptions, workdir: Path, log: Log) -> Iterator[dict[str, Any]]:
    """One row per size, as each finishes; `workdir` keeps each size's data and state."""
    for size in options.sizes:
        where = workdir / f"n{size}"
        where.mkdir(parents=True, exist_ok=True)
        end = _end_to_end(where, size, options, log)
        log(
            f"n={size}: end to end {end['seconds']:.1f} s, match {end['phases']['match']:.1f} s, "
            f"peak memory {end['peak_rss_gib']} GiB, agreed F1 {end['f1']['linkage']}"
        )
        yield _compare(where, end, size, options, log)


def growth_exponent(sizes: list[int], seconds: list[float]) -> float:
    """Slope of log(time) against log(n): time grows as n to this power."""
    slope, _ = np.polyfit(np.log(sizes), np.log(seconds), 1)
    return float(slope)


def scale_table(rows: list[dict[str, Any]]) -> str:
    """Markdown: the protocol end to end, then Alice's matching against the oracle."""
    lines = [
        "| n a side | end to end (s) | MATCH phase (s) | peak memory alice / bob (GiB) "
        "| agreed F1 | matching (s) | all-pairs oracle (s) | speed-up | candidate pairs "
        "| reduction ratio | pair completeness | F1 | oracle F1 | next run: end to end (s) |",
        "|" + "---|" * 14,
    ]
    for row in rows:
        warm = row.get("warm_cache")
        oracle = f"{row['oracle_seconds']:.1f}" + (" (est.)" if row["oracle_estimated"] else "")
        memory = row["peak_rss_gib"]
        agreed = row["end_to_end_f1"]["linkage"]
        lines.append(
            f"| {row['size']:,} | {row['end_to_end_seconds']:.1f} | {row['phases']['match']:.1f} "
            f"| {memory['alice']:.2f} / {memory['bob']:.2f} | {agreed:.4f} "
            f"| {row['matching_seconds']:.1f} | {oracle} | {row['speedup']:.1f}x "
            f"| {row['candidates']:,} | {row['reduction_ratio']:.4f} "
            f"| {row['pair_completeness']:.5f} | {row['f1']:.4f} "
            f"| {format(row['oracle_f1'], '.4f') if 'oracle_f1' in row else '-'} "
            f"| {format(warm['seconds'], '.1f') if warm else '-'} |"
        )
    growth = growth_lines(rows)
    if growth:
        lines += ["", *(f"- {line}" for line in growth)]
    return "\n".join(lines)


def growth_lines(rows: list[dict[str, Any]]) -> list[str]:
    """Fitted growth exponents: over every size, and over the three largest, which say more
    about larger n (fixed costs such as training weigh on the small sizes). The oracle is
    fitted on its measured sizes only, not on times scaled from a sample."""
    rows = sorted(rows, key=lambda r: r["size"])
    lines = []
    for label, key in (("end to end", "end_to_end_seconds"), ("matching", "matching_seconds")):
        if len(rows) < 2:
            break
        text = f"{label}: time grows as n^{_fit(rows, key):.2f} over all sizes"
        if len(rows) > 3:
            text += f", n^{_fit(rows[-3:], key):.2f} over the three largest"
        lines.append(text)
    measured = [r for r in rows if not r["oracle_estimated"]]
    if len(measured) >= 2:
        lines.append(
            f"all-pairs oracle: time grows as n^{_fit(measured, 'oracle_seconds'):.2f} "
            "over its fully measured sizes"
        )
    return lines


def _fit(rows: list[dict[str, Any]], key: str) -> float:
    return growth_exponent([r["size"] for r in rows], [r[key] for r in rows])
