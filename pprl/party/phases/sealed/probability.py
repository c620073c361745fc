"""Each accepted pair's match probability in sealed linkage: its bucket (kept with the
matches MATCH found) read through the calibration TRAIN fitted on synthetic links
(pprl.protocol.sealed.calibration). REVEAL cuts on it; LINK writes it."""

from __future__ import annotations

import numpy as np

from pprl.party.phases.context import PhaseFailed, RunContext
from pprl.party.storage.artifacts import MODEL
from pprl.protocol.sealed.calibration import Calibration


def calibration(ctx: RunContext, run_id: str) -> Calibration | None:
    """The run's calibration; None where TRAIN estimated nothing (min_expected_f1 = 0)."""
    fitted = ctx.artifact(run_id, MODEL).meta.get("calibration")
    return None if fitted is None else Calibration.from_dict(fitted)


def of_matches(
    calibrated: Calibration, matches: dict[str, np.ndarray], sharing: np.ndarray
) -> np.ndarray:
    """The probability of each of MATCH's pairs (own_matches: its scores are buckets less a
    tie-break under one bucket, a pair it did not score half a bucket, which rounds to 0);
    `sharing`: records holding the pair's values, per pair."""
    bucket = np.rint(matches["scores"]).astype(np.int64)
    ranked = matches.get("ranked", np.ones(len(bucket), dtype=bool))
    return calibrated.of(bucket, ranked, sharing)


def kept_at_cut(
    ctx: RunContext, run_id: str, matches: dict[str, np.ndarray], sharing: list[int], cut: float
) -> np.ndarray:
    """Which of MATCH's pairs (`matches`, as own_matches reads them) REVEAL sends: those whose
    probability, before the peer's records sharing values are known (`sharing`: this party's,
    per row), is at least `cut` (every one at 0)."""
    if cut <= 0:
        return np.ones(len(matches["own"]), dtype=bool)
    calibrated = calibration(ctx, run_id)
    if calibrated is None:
        raise PhaseFailed(
            f"a cut of {cut:g} needs match probabilities, which TRAIN calibrates with its "
            f"estimate: set [privacy] min_expected_f1 above 0 in {ctx.config.source}"
        )
    own = np.asarray(sharing, dtype=np.int64)[matches["own"]]
    return of_matches(calibrated, matches, own) >= cut
