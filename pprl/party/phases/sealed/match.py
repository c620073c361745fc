"""MATCH in sealed linkage as the scoring party: the candidate pairs from both sets of doubly
blinded keys (with the hidden join, the peer's slots); this party's classifier scored on them
under CKKS with the peer as the evaluator (pprl.party.phases.sealed.evaluation); the
accepted pairs one to one."""

from __future__ import annotations

import numpy as np

from pprl.party.phases import words
from pprl.party.phases.context import PhaseFailed, PhaseProgress, RunContext
from pprl.party.phases.sealed import hidden_entries, stored
from pprl.party.phases.sealed.stream_shape import scoring_layout
from pprl.party.storage.artifacts import MODEL, OWN_MATCHES
from pprl.protocol.model import classifier
from pprl.protocol.own_training import mover_groups
from pprl.protocol.sealed import (
    graph_checks,
    hidden_join,
    layout,
    linear_form,
    match_cost,
    session,
)
from pprl.protocol.sealed.exact_entries import evaluator_plaintext
from pprl.protocol.vectors.randomness import SEALED_CHECKS
from pprl.wire.v1 import linkage_pb2 as pb


def run(ctx: RunContext, run_id: str, progress: PhaseProgress) -> None:
    agreement = ctx.agreement(run_id)
    method = agreement.method
    peer = ctx.peer(run_id)
    digest, _ = ctx.store.run(run_id).agreement()
    hidden = method.join.hidden
    if hidden:
        # Slots (entry, slot number): the pairs each entry's key joins, rows unknown here.
        pairs, entry_rows, counts, checks = hidden_entries.match_slots(ctx, run_id, peer, digest)
    else:
        pairs = stored.candidates(ctx, run_id)
    ckks = session.setting(method.sealed_crypto, method.sealed_thresholds)
    model = classifier.Model.from_bytes(ctx.artifact(run_id, MODEL).path.read_bytes())
    units = stored.own_units(ctx, run_id)
    movers = model.kind == classifier.LENIENT
    kernel = model.widths is not None
    if movers != bool(mover_groups(agreement)) or kernel != (method.kernel_features > 0):
        raise PhaseFailed(
            "this party's model does not match the agreed movers' or kernel setting: train again",
            reason=pb.DATA_LOSS,
        )
    evaluator = evaluator_plaintext(agreement, model, digest)
    x, c = linear_form.scorer_part(model, units, evaluator)
    alternative = linear_form.alternative_part(model, units, evaluator)
    own_y = linear_form.evaluator_part(units, evaluator)
    entries = units.shape[1]
    live = evaluator.live(entries, units.shape[2])
    placed, shape = scoring_layout(pairs, ckks, entries, live, alternative is not None, hidden)
    x, c, alternative = linear_form.scaled_forms(x, c, alternative, own_y, entries)
    n_own, n_peer = len(x), ctx.peer_rows(run_id) or 0
    if hidden:
        # The layout's rows are the entries: each one's row's forms, a check's its own.
        scores = hidden_join.check_scores(checks, ckks.thresholds)
        x, c, alternative = hidden_join.check_forms(x, c, alternative, entry_rows, scores)
        held = int(np.count_nonzero(checks[pairs[:, 0]] >= 0))
        slots = agreement.method.sealed_slots
        how = (
            f"{slots} an entry, its rows cut to {slots} and the rest dummies"
            if slots
            else "a pair once per key it shares"
        )
        said = (
            f"{peer.peer} joins this party's key entries with its rows: {len(pairs):,} slots "
            f"({how}; {held:,} of them checks of its results); scoring them under encryption"
        )
    else:
        # Some rows' slots scored on constants of this party's own: checks of the peer's
        # results, their pairs left to the peer's classifier.
        graph = graph_checks.drawn(
            pairs, len(ckks.thresholds) + 1, ctx.randomness.generator(SEALED_CHECKS)
        )
        placed, x, c, alternative = graph_checks.with_check_rows(
            placed, x, c, alternative, graph, ckks.thresholds
        )
        share = len(pairs) / max(1, n_own * n_peer)
        said = (
            f"{len(pairs):,} candidate pairs ({share:.3%} of all) share a blinded key; scoring "
            f"them under encryption with {peer.peer} ({len(graph.rows):,} of this party's "
            "rows checks of its results, their pairs left to its classifier)"
        )
    cost = match_cost.of_layout(placed, pairs, shape.coordinates, shape.returned)
    said += f"; {words.match_cost_words(cost, projected=False)}"
    progress(0, placed.batches, "batches", said)
    # lazy: SEAL (tenseal, half a second) loads when a sealed run scores, not at start-up
    from pprl.files.sealed_bytes import dumped, dumped_ciphertext, loaded_ciphertext
    from pprl.protocol.sealed import scoring

    keys = scoring.secret_keys(ckks)
    outgoing = (
        [dumped_ciphertext(ciphertext, keys.context) for ciphertext in batch]
        for batch in scoring.encrypted_batches(keys, x, c, placed, alternative, live)
    )
    counted = scoring.BucketCount(keys, placed, len(pairs), alternative is not None)

    def consume(batch: int, data: list[bytes]) -> None:
        counted.add(batch, [loaded_ciphertext(keys.context, one, seeded=False) for one in data])

    try:
        sent = peer.evaluate_scores(
            run_id,
            digest,
            dumped(keys.public),
            dumped(keys.conjugation),
            placed,
            shape.coordinates,
            session.candidates_sha256(pairs),
            outgoing,
            [placed.batch_rounds(batch) * shape.returned for batch in range(placed.batches)],
            consume,
            progress=lambda done, total: progress(done, total, "batches", ""),
            ratios=None if alternative is None else alternative.ratios,
            widths=model.widths,
        )
    except ValueError as error:
        raise PhaseFailed(
            f"{peer.peer}'s scores cannot be read: {error}", reason=pb.BAD_CIPHERTEXT
        ) from None
    ctx.store.add_counter(run_id, "bytes_sent", sent)
    buckets = counted.count
    try:
        if hidden:
            buckets = ranks = hidden_join.checked(pairs[:, 0], checks, buckets)
        else:
            ranks = graph_checks.verified(pairs, graph, buckets)
    except ValueError as error:
        raise PhaseFailed(
            f"{peer.peer}'s scores fail this party's checks, so nothing is kept: {error}",
            reason=pb.BAD_CIPHERTEXT,
        ) from None
    accepted = int(np.count_nonzero(ranks >= 1))  # a check's pair is not this party's
    if hidden:
        found, named = hidden_entries.resolved_matches(
            ctx,
            run_id,
            peer,
            digest,
            pairs,
            entry_rows,
            counts,
            buckets,
            stored.is_first(ctx, run_id),
        )
        within = method.sealed_names_within
        below = f" or within {within} below them" if within else ""
        said = (
            f"this party's classifier accepts {accepted:,} of the {len(pairs):,} slots; "
            f"{named:,} in its rows' best buckets{below} named to {peer.peer}, "
            f"{len(found):,} pairs one to one"
        )
    else:
        found = session.one_to_one(
            pairs, ranks, stored.is_first(ctx, run_id), digest, method.assignment
        )
        # A pair in no conflict was told only that it passed 0 (BucketCount).
        told = layout.conflicted(pairs)[layout.positions(pairs, found.rows_a, found.rows_b)]
        said = (
            f"this party's classifier accepts {accepted:,} of the {len(pairs):,} candidate "
            f"pairs; {len(found):,} one to one"
        )
    if hidden:
        told = np.ones(len(found), dtype=bool)  # every slot is told its bucket
    ctx.write_pairs(run_id, OWN_MATCHES, found, {"scored": len(pairs)}, {"ranked": told})
    progress(placed.batches, placed.batches, "batches", said)
