"""The phases that differ in sealed linkage ([method] encoding = "sealed";
pprl.protocol.sealed.session has the steps), and what the peer service does for the peer's.

- SMASH: the records' vectors, kept here (never sent), and their blocking keys, blinded once.
- EXCHANGE: the keys to the peer, which returns them blinded again (and, serving the peer's
  call, this party blinds the peer's keys again and keeps them).
- MATCH: the candidate pairs from both sets of doubly blinded keys; this party's classifier
  scored on them under CKKS with the peer as the evaluator; the accepted pairs one to one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from pprl import failpoints
from pprl.files.atomic import atomic_file
from pprl.party.phases import sealed_hidden
from pprl.party.phases.context import PhaseFailed, PhaseProgress, RunContext
from pprl.party.storage.artifacts import (
    BLINDING_SECRET,
    ENTRY_SECRET,
    MODEL,
    ORDER,
    OWN_KEYS,
    OWN_KEYS_TWICE,
    OWN_MATCHES,
    OWN_TENSOR,
    PEER_KEYS_TWICE,
)
from pprl.protocol import pipeline
from pprl.protocol.linkage import reflection
from pprl.protocol.model import classifier
from pprl.protocol.model.features import unit_vectors
from pprl.protocol.own_training import mover_groups
from pprl.protocol.sealed import graph_checks, hidden_join, linear_form, session
from pprl.protocol.sealed.blinding import POINT_BYTES, Blinder, BlindingError, returned, split
from pprl.protocol.sealed.exact_entries import evaluator_plaintext, exact_entries
from pprl.protocol.sealed.kernel_features import Exact, RandomFeatures
from pprl.protocol.sealed.layout import Layout
from pprl.protocol.sealed.parameters import CkksSetting
from pprl.protocol.sealed.recipes import most_keys
from pprl.protocol.vectors.randomness import SEALED_CHECKS, SEALED_SCORES
from pprl.wire.v1 import linkage_pb2 as pb


def smash(ctx: RunContext, run_id: str, progress: PhaseProgress) -> None:
    inputs = ctx.inputs(run_id)
    agreement = ctx.agreement(run_id)
    n = len(inputs.records)
    progress(0, n, "records", "smashing the records against the reference set (kept here)")
    released = pipeline.release(
        agreement,
        inputs.records.attributes,
        ctx.randomness,
        progress=lambda done, total: progress(done, total, "mapping entries", ""),
    )
    method = agreement.method
    recipes = session.recipes(method.sealed_keys, list(inputs.records.attributes))
    keys = session.row_keys(recipes, inputs.records.attributes, released.order, _first(ctx, run_id))
    digest, _ = ctx.store.run(run_id).agreement()
    blinder = Blinder()
    context = session.key_context(digest, run_id)
    counts, values = session.blinded_rows(blinder, context, keys)
    hidden = method.join.hidden
    entries = sealed_hidden.smash(ctx, run_id, keys, context) if hidden else 0
    # Everything is written before anything is recorded: a SMASH redone after a crash writes
    # it all again, with a fresh scalar.
    with atomic_file(ctx.store.artifact_path(run_id, ORDER)) as tmp, tmp.open("wb") as out:
        np.save(out, released.order)
    with atomic_file(ctx.store.artifact_path(run_id, OWN_TENSOR)) as tmp:
        released.tensor.tofile(tmp)
    with atomic_file(ctx.store.artifact_path(run_id, BLINDING_SECRET)) as tmp:
        tmp.write_bytes(blinder.secret())
        tmp.chmod(0o600)
    _write_keys(ctx, run_id, OWN_KEYS, counts, values, record=False)
    if hidden:
        sealed_hidden.record_smash(ctx, run_id, entries)
    ctx.store.record_artifact(run_id, ORDER)
    ctx.store.record_artifact(run_id, BLINDING_SECRET)
    ctx.store.record_artifact(run_id, OWN_KEYS, {"rows": n, "keys": int(counts.sum())})
    ctx.store.record_artifact(
        run_id,
        OWN_TENSOR,
        {
            "shape": list(released.tensor.shape),
            "audited_records": 0,
            "reidentified": 0.0,
            "exposed": 0.0,
            "recovered": {},
            "noise_edits": 0.0,
        },
    )
    keyless = int(np.count_nonzero(counts == 0))
    said = (
        f"smashed {n:,} records (kept here: sealed linkage sends no vectors); "
        f"{int(counts.sum()):,} blocking keys from {len(recipes)} "
        f"recipe{'s' if len(recipes) != 1 else ''}, blinded"
    )
    if keyless:
        said += (
            f"; {keyless:,} records have no key (each recipe needs a value they lack) and "
            "cannot be linked"
        )
    progress(n, n, "records", said)


def exchange(ctx: RunContext, run_id: str, progress: PhaseProgress) -> None:
    counts, values = _read_keys(ctx, run_id, OWN_KEYS)
    peer = ctx.peer(run_id)
    digest, _ = ctx.store.run(run_id).agreement()
    keys = int(counts.sum())
    progress(0, keys, "keys", f"sending {keys:,} blinded blocking keys to {peer.peer}")
    hidden = ctx.agreement(run_id).method.join.hidden
    if hidden:
        back, sent = sealed_hidden.exchange(ctx, run_id, peer, digest, values)
    else:
        back, sent = peer.blind_keys(run_id, digest, counts, values)
    ctx.store.add_counter(run_id, "bytes_sent", sent)
    try:
        returned(split(values, keys, "own keys"), back, f"{peer.peer}'s re-blinding")
    except BlindingError as error:
        raise PhaseFailed(str(error), reason=pb.BAD_CIPHERTEXT) from None
    _write_keys(ctx, run_id, OWN_KEYS_TWICE, counts, back)
    said = f"{peer.peer} returned the {keys:,} keys blinded again"
    if hidden:
        said += " (sent one to a message in a secret order), and keeps this party's key entries"
    progress(keys, keys, "keys", said)


def match(ctx: RunContext, run_id: str, progress: PhaseProgress) -> None:
    agreement = ctx.agreement(run_id)
    method = agreement.method
    peer = ctx.peer(run_id)
    digest, _ = ctx.store.run(run_id).agreement()
    hidden = method.join.hidden
    if hidden:
        # Slots (entry, slot number): the pairs each entry's key joins, rows unknown here.
        pairs, entry_rows, counts, checks = sealed_hidden.match_slots(ctx, run_id, peer, digest)
    else:
        pairs = _candidates(ctx, run_id)
    ckks = session.setting(method.sealed_crypto, method.sealed_thresholds)
    model = classifier.Model.from_bytes(ctx.artifact(run_id, MODEL).path.read_bytes())
    units = _units(ctx, run_id)
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
    placed, shape = _scoring_layout(pairs, ckks, entries, live, alternative is not None, hidden)
    x, c, alternative = linear_form.scaled_forms(x, c, alternative, own_y, entries)
    n_own, n_peer = len(x), ctx.peer_rows(run_id) or 0
    if hidden:
        # The layout's rows are the entries: each one's row's forms, a check's its own.
        scores = hidden_join.check_scores(checks, ckks.thresholds)
        x, c, alternative = hidden_join.check_forms(x, c, alternative, entry_rows, scores)
        held = int(np.count_nonzero(checks[pairs[:, 0]] >= 0))
        said = (
            f"{peer.peer} joins this party's key entries with its rows: {len(pairs):,} slots "
            f"(a pair once per key it shares; {held:,} of them checks of its results); "
            "scoring them under encryption"
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
    progress(0, placed.batches, "batches", said)
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
        found, named = sealed_hidden.resolved_matches(
            ctx, run_id, peer, digest, pairs, entry_rows, counts, buckets, _first(ctx, run_id)
        )
        within = method.sealed_names_within
        below = f" or within {within} below them" if within else ""
        said = (
            f"this party's classifier accepts {accepted:,} of the {len(pairs):,} slots; "
            f"{named:,} in its rows' best buckets{below} named to {peer.peer}, "
            f"{len(found):,} pairs one to one"
        )
    else:
        found = session.one_to_one(pairs, ranks, _first(ctx, run_id), digest, method.assignment)
        said = (
            f"this party's classifier accepts {accepted:,} of the {len(pairs):,} candidate "
            f"pairs; {len(found):,} one to one"
        )
    ctx.write_pairs(run_id, OWN_MATCHES, found, {"scored": len(pairs)})
    progress(placed.batches, placed.batches, "batches", said)


def _first(ctx: RunContext, run_id: str) -> bool:
    """Whether this party is the first of the two (the lower identity): the side of a fallback
    recipe's keys and of the one-to-one step's tie-break, which both parties must agree on."""
    return ctx.config.identity < ctx.peer(run_id).peer


# -- what the peer service does for the peer ----------------------------------------------
def reblind_for_peer(ctx: RunContext, run_id: str, counts: np.ndarray, values: bytes) -> bytes:
    """The peer's once-blinded keys blinded again with this party's scalar: returned to it,
    and kept (they and this party's own make the candidates)."""
    most = most_keys(ctx.agreement(run_id).method.sealed_keys)
    if len(counts) and int(counts.max()) > most:
        row = int(np.argmax(counts))
        raise PhaseFailed(
            f"keys refused: row {row:,} holds {int(counts[row]):,} keys, more than the agreed "
            f"recipes give a row ({most:,})",
            reason=pb.BAD_CIPHERTEXT,
        )
    _, own = _read_keys(ctx, run_id, OWN_KEYS)
    mine, theirs = (np.frombuffer(v, np.uint8).reshape(-1, POINT_BYTES) for v in (own, values))
    if reflection.repeated_share([mine], [theirs]) > reflection.NOISY_SHARE:
        # The peer's keys are blinded by its own scalar: none equals one of ours by chance.
        raise PhaseFailed(
            "keys refused: they repeat this party's own blinded keys (sent back to it)",
            reason=pb.REFLECTED,
        )
    # The hidden join: the peer's row keys come one to a message and go back blinded with the
    # entry scalar, the space its entries' join is in; never more than its rows' keys.
    hidden = ctx.agreement(run_id).method.join.hidden
    if hidden:
        sealed_hidden.check_bound(ctx, run_id, len(counts), "keys")
    secret = ENTRY_SECRET if hidden else BLINDING_SECRET
    blinder = Blinder.from_secret(ctx.artifact(run_id, secret).path.read_bytes())
    again = session.reblinded(blinder, values, "the peer's keys")
    if ctx.store.artifact(run_id, PEER_KEYS_TWICE, verify=False) is not None:
        # A peer resuming EXCHANGE sends the same keys again: confirm them. Other keys would
        # replace ones the candidates may already stand on.
        held_counts, held = _read_keys(ctx, run_id, PEER_KEYS_TWICE)
        if not np.array_equal(held_counts, counts) or held != again:
            raise PhaseFailed(
                "keys refused: this run already holds other keys from you",
                reason=pb.ALREADY_RECEIVED,
            )
        return again
    _write_keys(ctx, run_id, PEER_KEYS_TWICE, counts, again)
    return again


@dataclass(frozen=True)
class ScoreShape:
    """Ciphertexts per batch the scoring party sends and per round the evaluator returns:
    both parties derive them from the agreement, one through this class."""

    # Ciphertexts: x's columns and the constant, then the alternative's, two a ciphertext.
    coordinates: int
    returned: int  # one per two thresholds, then the alternative's score


def _scoring_layout(
    pairs: np.ndarray,
    ckks: CkksSetting,
    entries: int,
    live: np.ndarray,
    alternative: bool,
    hidden: bool = False,
) -> tuple[Layout, ScoreShape]:
    """The layout of a scoring party's pairs (its row first; with the hidden join its slots,
    entry first) and the shape of its stream, as the scorer and the evaluator both derive
    them: of the `entries` mapping entries' coordinates (the projected vectors' or the
    agreed random features', each with its missing indicator) those `live`
    (linear_form.Peer.live), then the constant, two a ciphertext."""
    extra = entries + 1 if alternative else 0
    coordinates = ckks.ciphertexts(int(np.count_nonzero(live)) + 1 + extra)
    shape = ScoreShape(coordinates, ckks.threshold_ciphertexts + int(alternative))
    placed = session.score_layout(pairs, ckks, shape.coordinates, returned=shape.returned)
    if hidden:
        placed = hidden_join.every_slot_ranked(placed)
    return placed, shape


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
    join = sealed_hidden.peer_join(ctx, run_id) if hidden else None
    pairs = hidden_join.slot_pairs(join.counts()) if join else _candidates(ctx, run_id)[:, ::-1]
    ckks = session.setting(method.sealed_crypto, method.sealed_thresholds)
    units = _units(ctx, run_id)
    alternative = bool(mover_groups(agreement))
    features = method.kernel_features
    entries = units.shape[1]
    # The columns the peer's stream holds, as its MATCH derives them (Peer.live).
    exact = exact_entries(agreement) if features else ()
    live = linear_form.coordinates_live(entries, units.shape[2], features, exact)
    placed, shape = _scoring_layout(pairs, ckks, entries, live, alternative, hidden)
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


# -- shared ---------------------------------------------------------------------------------
def _candidates(ctx: RunContext, run_id: str) -> np.ndarray:
    own = session.grouped(*_read_keys(ctx, run_id, OWN_KEYS_TWICE))
    held = ctx.store.artifact(run_id, PEER_KEYS_TWICE)
    if held is None:
        raise PhaseFailed(
            "the peer's blinded keys have not arrived: its EXCHANGE has not run",
            reason=pb.OUT_OF_ORDER,
        )
    peer = session.grouped(*_read_keys(ctx, run_id, PEER_KEYS_TWICE))
    return session.candidates(own, peer)


def _units(ctx: RunContext, run_id: str) -> np.ndarray:
    tensor = ctx.tensor(run_id, OWN_TENSOR)
    return unit_vectors(tensor[0 : len(tensor)], ctx.agreement(run_id).standardise)


def _write_keys(
    ctx: RunContext, run_id: str, name: str, counts: np.ndarray, values: bytes, record: bool = True
) -> None:
    def write(path) -> None:
        with path.open("wb") as out:
            np.savez(out, counts=counts, values=np.frombuffer(values, dtype=np.uint8))

    if record:
        meta = {"rows": len(counts), "keys": int(counts.sum())}
        ctx.write_artifact(run_id, name, write, meta)
    else:
        with atomic_file(ctx.store.artifact_path(run_id, name)) as tmp:
            write(tmp)


def _read_keys(ctx: RunContext, run_id: str, name: str) -> tuple[np.ndarray, bytes]:
    with np.load(ctx.artifact(run_id, name).path) as data:
        return data["counts"], data["values"].tobytes()
