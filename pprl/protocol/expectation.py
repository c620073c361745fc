"""How well a party's classifier will link, estimated before anything is sent.

After TRAIN a party holds a model trained on synthetic pairs of its own records. It can make
more such pairs that the model has not seen (a fresh sample of its records, freshly corrupted
by the agreed error model, both released with independent noise as its and the peer's real
releases are) and link them as MATCH would: candidates, top-k, the agreed one-to-one
assignment. The pairs are labelled, so precision and recall follow. No peer data is needed,
so a run that would link badly can stop at TRAIN, before EXCHANGE sends the tensor.

An error model puts every one of its errors on a compared value, where a real register
spreads them over all its fields and leaves many pairs identical in the compared ones: 48.5%
of FEBRL4's true pairs in both names. So EXACT_SHARE of the held-out pairs are the records
themselves, released twice with independent noise, and the rest are corrupted copies.

It is an estimate: the real peer's errors are not the error model's (docs/privacy.md,
"Expected linkage", measures how close it comes on data this project did not generate:
within 0.03 on FEBRL4 names, over-estimating by up to 0.32 where 30% of the peer's records
have no match), its file may hold fewer
of the same people, and the number of records compared changes precision. The sample is the
party's own record count, up to EXPECTATION_RECORDS, so the comparison is of about the real
run's size.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.model import classifier
from pprl.protocol.own_training import training_sample
from pprl.protocol.vectors.randomness import EXPECTATION, Randomness

# The most own records one estimate links against their corrupted copies: 5,000 x 5,000
# pairs take a few seconds, and precision at that scale is near the real run's at 5,000.
EXPECTATION_RECORDS = 5000
# The share of held-out pairs identical in the compared values (see above; docs/privacy.md
# measures the estimate with it and without it against the truth).
EXACT_SHARE = 0.5
# Below this expected F1 a run stops before EXCHANGE ([privacy] min_expected_f1).
DEFAULT_MIN_EXPECTED_F1 = 0.9


@dataclass(frozen=True)
class ExpectedQuality:
    """A classifier's precision and recall on held-out synthetic pairs of own records."""

    precision: float
    recall: float
    pairs: int  # the synthetic matching pairs it was measured on

    @property
    def f1(self) -> float:
        total = self.precision + self.recall
        return 0.0 if total == 0 else 2 * self.precision * self.recall / total

    def words(self) -> str:
        return (
            f"expected F1 about {self.f1:.2f} (precision {self.precision:.2f}, recall "
            f"{self.recall:.2f}; this party's classifier on {self.pairs:,} held-out synthetic "
            "pairs of its own records, released as the real release)"
        )

    def as_dict(self) -> dict[str, float]:
        return {
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "pairs": self.pairs,
        }


def expected_quality(
    agreement: Agreement,
    attributes: Mapping[str, Sequence[str]],
    model: classifier.Model,
    randomness: Randomness,
    size: int = EXPECTATION_RECORDS,
    exact_share: float = EXACT_SHARE,
) -> ExpectedQuality:
    """The model's precision and recall linking a fresh sample of own records with fresh
    copies of them, `exact_share` unchanged and the rest corrupted by the agreed error model,
    as MATCH links (identity is truth)."""
    rng = randomness.generator(EXPECTATION)
    sample = training_sample(agreement, attributes, rng, size=size)
    copies = sample.corrupted_tensor.copy()
    pairs = len(copies)
    exact = rng.random(pairs) < exact_share
    copies[exact] = agreement.smash(sample.own, rng)[exact]
    matched = pipeline.match(agreement, sample.own_tensor, copies, model)
    found = matched.matches
    correct = int(np.count_nonzero(found.rows_a == found.rows_b))
    precision = correct / len(found) if len(found) else 0.0
    return ExpectedQuality(precision, correct / pairs if pairs else 0.0, pairs)


def poor_linkage_words(quality: ExpectedQuality, minimum: float) -> str:
    """Why a run stops, and what would help, in the operator's words."""
    return (
        f"{quality.words()}, below the minimum of {minimum:.2f}; nothing was sent. What would "
        "help: a higher gate limit ([privacy] max_reidentification: less noise, more the peer "
        "learns, docs/privacy.md), more compared attributes ([records] and [[mapping]]), a "
        "larger reference set or one closer to the records' values (docs/reference-sets.md), "
        'another encoding ([method] encoding = "bloom", docs/bloom.md), or, knowing the '
        "estimate, a lower [privacy] min_expected_f1"
    )
