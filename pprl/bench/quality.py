"""The linkage-quality benchmark: both parties of the protocol in one process, over a grid.

Each party runs the daemon's pipeline (pprl.protocol.pipeline): its records released under the
cell's agreement (noise and features as configured), a training sample released the same
way, its classifier fitted on it. Variants differ only in training and selection. Matching
either scores every pair in one scan per cell, which feeds every classifier of the cell (both
parties, every variant), so a variant's matching time is the shared dot products plus its own
scoring and selection; or, as a daemon does, scores the candidates each classifier's bound
allows (`matching = "candidates"`), timed per classifier.
"""

from __future__ import annotations

import dataclasses
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pprl.bench import plain
from pprl.bench.data import ATTRIBUTES, Columns, LinkageTask
from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data.reference import ReferenceSet, default_mapping, reference_overlap
from pprl.protocol.errors import SettingError
from pprl.protocol.linkage import candidates, matching
from pprl.protocol.linkage.released import record_pairs
from pprl.protocol.method import method_params
from pprl.protocol.method_settings import MethodParams
from pprl.protocol.metrics import linkage_quality
from pprl.protocol.model import classifier, training
from pprl.protocol.model.features import unit_vectors
from pprl.protocol.own_training import TrainingSample, fit, training_sample
from pprl.protocol.progress import Progress, rate_text
from pprl.protocol.vectors.randomness import Randomness

Row = dict[str, Any]
Log = Callable[[str], None]


@dataclass(frozen=True)
class Variant:
    """How a party trains its classifier and keeps its pairs: one line of the results."""

    name: str
    kernel: str = "linear"
    training_records: int = 5000
    corruption: str = "spread"
    negatives_per_positive: int = 1
    hard_negatives: int = 0
    class_weight: str = "none"
    top_k: int | None = None
    # The one-to-one step (matching.ASSIGNMENTS), or None: each pair judged alone.
    assignment: str | None = None

    def but(self, name: str, **changes: Any) -> Variant:
        return dataclasses.replace(self, name=name, **changes)

    def training(self, agreed: MethodParams) -> MethodParams:
        """The agreed method with this variant's training choices."""
        return dataclasses.replace(
            agreed,
            classifier=self.kernel,
            c=classifier.DEFAULT_C[self.kernel],
            training_records=self.training_records,
            negatives_per_positive=self.negatives_per_positive,
            hard_negatives=self.hard_negatives,
            class_weight=self.class_weight,
        )


# Algorithm 2 and 3 as published: one random negative per positive, each pair judged alone.
PAPER = Variant("paper")


def default_variant(params: MethodParams | None = None) -> Variant:
    """What a daemon does with these method parameters (default: the daemon's defaults)."""
    params = params or method_params()
    return Variant(
        "default",
        kernel=params.classifier,
        training_records=params.training_records,
        negatives_per_positive=params.negatives_per_positive,
        hard_negatives=params.hard_negatives,
        class_weight=params.class_weight,
        top_k=params.top_k,
        assignment=params.assignment,
    )


def ablation_variants(params: MethodParams | None = None) -> list[Variant]:
    """The paper's method with one improvement added at a time, and ours with one removed."""
    ours = default_variant(params)
    base = PAPER.but("paper", kernel=ours.kernel, training_records=ours.training_records)
    return [
        base,
        base.but("paper, prototype corruption (last name + '!')", corruption="prototype"),
        base.but("paper + one-to-one", top_k=ours.top_k, assignment=matching.GREEDY),
        base.but(
            "paper + negatives and weights",
            negatives_per_positive=ours.negatives_per_positive,
            hard_negatives=ours.hard_negatives,
            class_weight=ours.class_weight,
        ),
        ours,
        ours.but("default without hard negatives", hard_negatives=0),
        ours.but("default without class weights", class_weight="none"),
        ours.but(
            "default without extra negatives (1:1, none hard)",
            negatives_per_positive=1,
            hard_negatives=0,
        ),
        ours.but("default without one-to-one", top_k=None, assignment=None),
        ours.but("default, prototype corruption", corruption="prototype"),
    ]


def _quiet(_: str) -> None:
    """Discards log lines."""


class _Party:
    """One party's side of a cell: its release under the cell's agreement, its training
    samples and its per-variant models, all through the daemon's pipeline."""

    def __init__(self, name: str, columns: Columns, agreement: Agreement, seed: int) -> None:
        self.name = name
        self.columns = columns
        self.agreement = agreement
        self.seed = seed
        self.released = pipeline.release(agreement, columns, Randomness(seed, name))
        self._samples: dict[tuple[int, str], TrainingSample] = {}
        self._similarity: dict[tuple[int, str], np.ndarray] = {}

    def _rng(self, *parts: int | str) -> np.random.Generator:
        """Seeds from the cell seed and the purpose, so adding a variant changes no other."""
        words = [self.seed, self.name, *parts]
        return np.random.default_rng([zlib.crc32(str(word).encode()) for word in words])

    def sample(self, variant: Variant) -> TrainingSample:
        """The released training sample, shared by variants alike in it."""
        key = (variant.training_records, variant.corruption)
        if key not in self._samples:
            self._samples[key] = training_sample(
                self.agreement,
                self.columns,
                self._rng("sample", *key),
                size=variant.training_records,
                corruption=variant.corruption,
            )
        return self._samples[key]

    def train(self, variant: Variant) -> tuple[classifier.Model, float]:
        """The classifier and the seconds its training set and fit took."""
        sample = self.sample(variant)
        began = time.perf_counter()
        key = (variant.training_records, variant.corruption)
        if variant.hard_negatives and key not in self._similarity:
            shift = self.agreement.standardise
            self._similarity[key] = training.smashed_similarity(
                unit_vectors(sample.own_tensor, shift), unit_vectors(sample.corrupted_tensor, shift)
            )
        model, _ = fit(
            self.agreement,
            sample,
            self._rng("negatives", *key),
            method=variant.training(self.agreement.method),
            similarity=self._similarity.get(key),
        )
        return model, time.perf_counter() - began

    def train_plain(self, variant: Variant) -> classifier.Model:
        sample = self.sample(variant)
        x, y = plain.training_features(
            sample.own,
            sample.corrupted,
            list(ATTRIBUTES),
            self._rng("negatives", variant.training_records, variant.corruption),
            variant.negatives_per_positive,
            variant.hard_negatives,
        )
        return classifier.train(x, y, variant.kernel, class_weight=variant.class_weight)


def _pairs(found: matching.Matches) -> set[tuple[int, int]]:
    return set(zip(found.rows_a.tolist(), found.rows_b.tolist(), strict=True))


def _finish(found: matching.Matches, variant: Variant) -> tuple[matching.Matches, float]:
    began = time.perf_counter()
    if variant.assignment is not None:
        found = matching.one_to_one(found, variant.assignment)
    return found, time.perf_counter() - began


def _quality(pairs: set[tuple[int, int]], truth: set[tuple[int, int]]) -> dict[str, float]:
    q = linkage_quality(pairs, truth)
    return {
        "precision": q.precision,
        "recall": q.recall,
        "f1": q.f1,
        "tp": q.true_positives,
        "fp": q.false_positives,
        "fn": q.false_negatives,
    }


def _progress(log: Log, what: str) -> Progress:
    last = [0.0]
    began = time.perf_counter()

    def report(done: int, total: int) -> None:
        now = time.perf_counter()
        if done < total and now - last[0] < 10:
            return
        last[0] = now
        rate = rate_text(done, total, now - began, "rows")
        log(f"  {what}: {done:,}/{total:,} rows" + (f", {rate}" if rate else ""))

    return report


MATCHING = ("all-pairs", "candidates")


def _smashed_matches(
    alice: _Party,
    bob: _Party,
    variants: Sequence[Variant],
    models: list[tuple[classifier.Model, classifier.Model, float, float]],
    matching_mode: str,
    log: Log,
) -> tuple[list[matching.Matches], list[float]]:
    """Per variant, Alice's then Bob's accepted pairs as (Alice row, Bob row) of the released
    tensors, and the seconds each classifier's matching took."""
    shift = alice.agreement.standardise
    tensor_a, tensor_b = alice.released.tensor, bob.released.tensor
    if matching_mode == "all-pairs":
        log(f"  trained {2 * len(variants)} classifiers; scoring all pairs")
        selections = []
        for variant, (model_a, model_b, _, _) in zip(variants, models, strict=True):
            selections.append(matching.Selection(model_a, variant.top_k, "a"))
            selections.append(matching.Selection(model_b, variant.top_k, "b"))
        times = matching.PassTimes()
        found = matching.score_pairs(
            unit_vectors(tensor_a, shift),
            unit_vectors(tensor_b, shift),
            selections,
            progress=_progress(log, "smashed pairs"),
            times=times,
        )
        return found, [times.shared + spent for spent in times.selections]
    log(f"  trained {2 * len(variants)} classifiers; scoring candidate pairs")
    found, seconds = [], []
    for variant, (model_a, model_b, _, _) in zip(variants, models, strict=True):
        for own, peer, model in ((tensor_a, tensor_b, model_a), (tensor_b, tensor_a, model_b)):
            began = time.perf_counter()
            outcome = candidates.accepted_pairs(
                own, peer, matching.Selection(model, variant.top_k), standardise=shift
            )
            seconds.append(time.perf_counter() - began)
            kept = outcome.matches
            found.append(
                kept if own is tensor_a else matching.Matches(kept.rows_b, kept.rows_a, kept.scores)
            )
    return found, seconds


def run_cell(
    task: LinkageTask,
    reference: Columns,
    variants: Sequence[Variant],
    seed: int,
    *,
    method: MethodParams | None = None,
    matching_mode: str = "all-pairs",
    with_plain: bool = True,
    log: Log = _quiet,
) -> list[Row]:
    """Both parties, every variant, on one generated task: one result row per variant.

    `method` is what the cell's agreement fixes (noise, features; default: the daemon's
    defaults); `matching_mode` is "all-pairs" or "candidates"."""
    if matching_mode not in MATCHING:
        raise SettingError(f"unknown matching {matching_mode!r}; expected one of {MATCHING}")
    method = method or method_params()
    agreement = Agreement(
        ReferenceSet("benchmark reference", dict(reference)),
        default_mapping(method.error_model),
        method,
    )
    began = time.perf_counter()
    alice = _Party("alice", task.alice, agreement, seed)
    bob = _Party("bob", task.bob, agreement, seed)
    smash_seconds = time.perf_counter() - began
    models = []
    for variant in variants:
        (model_a, train_a), (model_b, train_b) = alice.train(variant), bob.train(variant)
        models.append((model_a, model_b, train_a, train_b))
    found, match_seconds = _smashed_matches(alice, bob, variants, models, matching_mode, log)
    plain_found: list[matching.Matches] = []
    plain_times = matching.PassTimes()
    plain_selections = (
        [matching.Selection(alice.train_plain(v), v.top_k, "a") for v in variants]
        if with_plain
        else []
    )
    plain_began = time.perf_counter()  # after training: the time is matching alone
    if with_plain:
        plain_found = plain.score_pairs(
            task.alice,
            task.bob,
            list(ATTRIBUTES),
            plain_selections,
            progress=_progress(log, "plain pairs"),
            times=plain_times,
        )
    # The distance tables of distinct values, built before the scan.
    plain_setup = (
        time.perf_counter() - plain_began - plain_times.shared - sum(plain_times.selections)
    )
    both = {k: [*task.alice[k], *task.bob[k]] for k in task.alice}
    overlap = reference_overlap(both, agreement.reference, agreement.mapping)
    rows = []
    for index, variant in enumerate(variants):
        _, _, train_a, train_b = models[index]
        kept_a, finish_a = _finish(found[2 * index], variant)
        kept_b, finish_b = _finish(found[2 * index + 1], variant)
        pairs_a = record_pairs(kept_a, alice.released, bob.released)
        pairs_b = record_pairs(kept_b, alice.released, bob.released)
        row: Row = {
            "size": len(task.alice["first"]),
            "reference_rows": len(reference["first"]),
            "reference_overlap": overlap,
            "seed": seed,
            "noise_sigma": method.noise_sigma,
            "feature": method.feature,
            "matching": matching_mode,
            **{f"variant_{k}": v for k, v in dataclasses.asdict(variant).items()},
            "alice": _quality(pairs_a, task.truth),
            "bob": _quality(pairs_b, task.truth),
            "agreed": _quality(pairs_a & pairs_b, task.truth),
            "alice_match_seconds": match_seconds[2 * index] + finish_a,
            "bob_match_seconds": match_seconds[2 * index + 1] + finish_b,
            "alice_train_seconds": train_a,
            "bob_train_seconds": train_b,
            "smash_seconds": smash_seconds,
        }
        if with_plain:
            kept, finish = _finish(plain_found[index], variant)
            row["plain"] = _quality(_pairs(kept), task.truth)
            row["plain_match_seconds"] = (
                plain_setup + plain_times.shared + plain_times.selections[index] + finish
            )
        rows.append(row)
    log(f"  cell done in {time.perf_counter() - began:.1f} s")
    return rows


def stderr_log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
