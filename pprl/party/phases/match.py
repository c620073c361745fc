"""MATCH: score the peer's rows against the party's own with its own classifier, keep the
one-to-one pairs it accepts (with the expected quality fitted to them, before REVEAL sends
any id), and each own record's best peer records when soft links are asked for."""

from __future__ import annotations

from typing import Any

from pprl.party.phases import words
from pprl.party.phases.context import PhaseFailed, PhaseProgress, RunContext
from pprl.party.storage.artifacts import (
    MODEL,
    OWN_MATCHES,
    OWN_TENSOR,
    PEER_TENSOR,
    SOFT_MATCHES,
    TensorFile,
)
from pprl.protocol import pipeline
from pprl.protocol.expectation import Simulation, after_linking
from pprl.protocol.linkage import reflection, soft_links
from pprl.protocol.model import classifier
from pprl.wire.v1 import linkage_pb2 as pb


def run(ctx: RunContext, run_id: str, progress: PhaseProgress) -> None:
    own = ctx.tensor(run_id, OWN_TENSOR)
    peer = ctx.tensor(run_id, PEER_TENSOR)
    model_artifact = ctx.artifact(run_id, MODEL)
    model = classifier.Model.from_bytes(model_artifact.path.read_bytes())
    model_meta = model_artifact.meta
    agreement = ctx.agreement(run_id)
    top_k = agreement.method.soft_top_k
    if top_k:
        # Before any pair is scored: a K the peer's records cannot fill fails at once.
        try:
            soft_links.check_top_k(top_k, len(peer))
        except ValueError as exc:
            raise PhaseFailed(f"[method] {exc}, in {ctx.config.source}") from None
    _refuse_reflection(ctx, run_id, own, peer)
    where = f"on {ctx.config.scheduler}" if ctx.config.scheduler else "here"
    progress(0, len(own), "records", agreement.encoding.match_words(where))
    threshold = ctx.store.run(run_id).cut(ctx.config.threshold)
    matched = pipeline.match(
        agreement,
        own,
        peer,
        model,
        run=ctx.runner(),
        progress=lambda done, total: progress(done, total, "records", ""),
        threshold=threshold,
    )
    found = matched.matches
    scored = len(own) * len(peer) if matched.scored is None else matched.scored
    meta: dict[str, Any] = {"scored": scored, "threshold": threshold}
    share = scored / max(1, len(own) * len(peer))
    said = words.scored_words(scored, share, matched.scored is not None, len(found))
    if threshold:
        said += f", scoring above this party's threshold {threshold:g}"
    simulations = model_meta.get("simulations")
    # TRAIN estimated (its simulations accept above 0): fit them to these links
    if simulations and not threshold:
        fitted = after_linking(
            [Simulation.from_dict(s) for s in simulations],
            len(found),
            float(found.scores.mean()) if len(found) else 0.0,
            len(own),
            len(peer),
        )
        meta["expected"] = fitted.as_dict()
        said += f"; {fitted.words(len(found), len(own))}"
    ctx.write_pairs(run_id, OWN_MATCHES, found, meta)
    progress(len(own), len(own), "records", said)
    if top_k:
        _soft_match(ctx, run_id, own, peer, model, top_k, progress)


def _refuse_reflection(ctx: RunContext, run_id: str, own: TensorFile, peer: TensorFile) -> None:
    """Stop before scoring, and so before REVEAL sends any id, when the peer's tensor repeats
    this party's own release (pprl.protocol.linkage.reflection)."""
    share = reflection.repeated_share(
        reflection.blocks(own, len(own)), reflection.blocks(peer, len(peer))
    )
    noisy = ctx.agreement(run_id).method.noise_sigma > 0
    if reflection.is_reflected(share, noisy, len(own), len(peer)):
        raise PhaseFailed(
            f"{ctx.peer(run_id).peer}'s tensor repeats this party's own release in "
            f"{share:.0%} of its rows: a party's own release sent back would link every record "
            "to itself and reveal every id; nothing was scored or sent",
            reason=pb.REFLECTED,
        )


def _soft_match(
    ctx: RunContext,
    run_id: str,
    own: TensorFile,
    peer: TensorFile,
    model: classifier.Model,
    top_k: int,
    progress: PhaseProgress,
) -> None:
    """Each own row's top_k peer rows, whatever their score (soft_links)."""
    progress(0, len(own), "records", words.soft_linkage_words(top_k))
    found = pipeline.soft_match(
        ctx.agreement(run_id),
        own,
        peer,
        model,
        top_k,
        run=ctx.runner(),
        progress=lambda done, total: progress(done, total, "records", ""),
    )
    ctx.write_pairs(run_id, SOFT_MATCHES, found)
    progress(len(own), len(own), "records", words.soft_kept_words(len(found)))
