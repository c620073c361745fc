"""What this party does as the evaluator of the peer's scoring, during the peer's MATCH:
the same candidates derived from the keys, the peer's row first, and each received batch
evaluated on this party's unit vectors with secret factors and flooding."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from pprl import failpoints
from pprl.party.phases.context import RunContext
from pprl.party.phases.sealed import hidden_entries, stored
from pprl.party.phases.sealed.stream_shape import ScoreShape, scoring_layout
from pprl.protocol.own_training import mover_groups
from pprl.protocol.sealed import hidden_join, linear_form, session
from pprl.protocol.sealed.exact_entries import exact_entries
from pprl.protocol.sealed.kernel_features import Exact, RandomFeatures
from pprl.protocol.sealed.layout import Layout
from pprl.protocol.sealed.parameters import CkksSetting
from pprl.protocol.vectors.randomness import SEALED_SCORES


@dataclass(frozen=True)
class Evaluation:
    """What serving the peer's scoring needs: its layout and stream's shape, this party's
    unit vectors, the setting, whether the peer's model has a movers' alternative (from the
    agreement) over how many entries, and the agreed random features an entry (0: none) with
    the digest they are drawn from."""

    placed: Layout
    shape: ScoreShape
    units: np.ndarray
    ckks: CkksSetting
    candidates_sha256: bytes
    alternative: bool
    entries: int
    kernel_features: int
    digest: str
    exact: tuple[Exact, ...]
    live: np.ndarray

    def y(self, widths: np.ndarray | None) -> np.ndarray:
        """This party's plaintext for the peer's model: its unit vectors, or their random
        features for the peer's kernel widths (the exact entries' by their values)."""
        kernel = None
        if widths is not None:
            kernel = RandomFeatures(widths, self.kernel_features, self.digest, self.exact)
        return linear_form.evaluator_part(self.units, linear_form.Peer(kernel))


def evaluation_for_peer(ctx: RunContext, run_id: str) -> Evaluation:
    """The peer's scoring as this party derives it: the same candidates, the peer's row first."""
    agreement = ctx.agreement(run_id)
    method = agreement.method
    digest, _ = ctx.store.run(run_id).agreement()
    hidden = method.join.hidden
    join = hidden_entries.peer_join(ctx, run_id) if hidden else None
    pairs = (
        hidden_join.slot_pairs(join.counts()) if join else stored.candidates(ctx, run_id)[:, ::-1]
    )
    ckks = session.setting(method.sealed_crypto, method.sealed_thresholds)
    units = stored.own_units(ctx, run_id)
    alternative = bool(mover_groups(agreement))
    features = method.kernel_features
    entries = units.shape[1]
    # The columns the peer's stream holds, as its MATCH derives them (Peer.live).
    exact = exact_entries(agreement) if features else ()
    live = linear_form.coordinates_live(entries, units.shape[2], features, exact)
    placed, shape = scoring_layout(pairs, ckks, entries, live, alternative, hidden)
    if join is not None:
        placed = hidden_join.evaluator_layout(placed, join)
    sha = session.candidates_sha256(pairs)
    return Evaluation(
        placed, shape, units, ckks, sha, alternative, entries, features, digest, exact, live
    )


def evaluated(
    ctx: RunContext,
    evaluation: Evaluation,
    public: bytes,
    conjugation: bytes,
    batches: Iterator[tuple[int, list[bytes]]],
    ratios: np.ndarray | None = None,
    widths: np.ndarray | None = None,
) -> Iterator[tuple[int, list[bytes]]]:
    """Each received batch evaluated, in order, with secret factors and flooding; `ratios`:
    the peer's movers' alternative, when the agreement has one; `widths`: its kernel's, when
    the agreement has random features."""
    # lazy: SEAL (tenseal, half a second) loads when a sealed run scores, not at start-up
    from pprl.files.sealed_bytes import FreshCiphertexts, dumped_ciphertext, evaluation_keys
    from pprl.protocol.sealed import scoring

    context = scoring.seal_context(evaluation.ckks)
    keys = evaluation_keys(context, public, conjugation)
    y = evaluation.y(widths)
    rng = ctx.randomness.generator(SEALED_SCORES)
    tamper = failpoints.tamper_scores()
    fresh = FreshCiphertexts(context)  # no seed twice in the stream
    for batch, received in batches:
        ciphertexts = [fresh.read(data) for data in received]
        results = scoring.evaluated_batch(
            context,
            keys,
            batch,
            ciphertexts,
            y,
            evaluation.placed,
            evaluation.ckks,
            rng,
            ratios,
            evaluation.live,
        )
        if tamper:
            results = scoring.replaced(context, keys, evaluation.ckks, results, rng)
        yield batch, [dumped_ciphertext(result, context) for result in results]
