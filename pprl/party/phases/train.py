"""TRAIN: a classifier from the party's own records only (Algorithm 2), and, before anything
is sent, an estimate of the linkage it will give; a run expected to link badly stops here.
The simulations behind the estimate are kept with the model: MATCH fits them to its links."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np

from pprl.party.phases import words
from pprl.party.phases.context import PhaseFailed, PhaseProgress, RunContext
from pprl.party.phases.sealed import stored
from pprl.party.phases.sealed.stream_shape import score_shape
from pprl.party.storage.artifacts import MODEL
from pprl.protocol import pipeline
from pprl.protocol.expectation import (
    ERROR_RATES,
    Simulation,
    before_sending,
    poor_linkage_words,
    simulate,
)
from pprl.protocol.model.classifier import Model
from pprl.protocol.own_training import mover_groups
from pprl.protocol.sealed import calibration, match_cost, session
from pprl.protocol.sealed import expectation as sealed_expectation
from pprl.protocol.sealed.calibration import LinkedUnits
from pprl.protocol.sealed.exact_entries import evaluator_plaintext
from pprl.protocol.sealed.match_cost import MatchCost
from pprl.protocol.sealed.recipes import with_prefixes
from pprl.wire.v1 import linkage_pb2 as pb


def run(ctx: RunContext, run_id: str, progress: PhaseProgress) -> None:
    inputs = ctx.inputs(run_id)
    agreement = ctx.agreement(run_id)
    method = agreement.method
    records = min(method.training_records, len(inputs.records))
    progress(0, 1, "models", words.training_words(method.classifier, records))
    model, pairs = pipeline.train(agreement, inputs.records.attributes, ctx.randomness)
    meta: dict[str, Any] = {"kind": model.kind, "pairs": pairs}
    groups = mover_groups(agreement)
    movers = [agreement.mapping[m][0] for group in groups for m in group]
    said = words.trained_words(pairs, movers, method.mover_odds)
    minimum = ctx.config.privacy.min_expected_f1
    if minimum > 0:  # 0: no minimum to check, nothing to estimate
        progress(0, 1, "models", words.estimating_words(said))
        found: float | None = None
        wider: tuple[str, ...] = ()
        cost: MatchCost | None = None
        if agreement.encoding.sealed:
            # Candidates by the keys, against copies of every own record and strangers, at
            # each simulated error rate: the estimate is their mean (MATCH reads no scores to
            # fit a rate to), the links of records without a partner counted. What the keys
            # find is told on its own, the mean over the rates too.
            joins = sealed_expectation.joins(
                agreement, inputs.records.attributes, ctx.randomness, ERROR_RATES
            )
            simulated = [
                sealed_expectation.simulate(agreement, joined, model, ctx.randomness)
                for joined in joins.values()
            ]
            simulations: tuple[Simulation, ...] = tuple(s for s, _ in simulated)
            units = stored.own_units(ctx, run_id)
            meta["calibration"] = _calibrated(ctx, run_id, model, units, [x for _, x in simulated])
            cost = _projected_match(ctx, run_id, model, units, list(joins.values()))
            meta["match_projected"] = asdict(cost)
            found = sum(joined.keys_join() for joined in joins.values()) / len(joins)
            wider = _wider_keys(method.sealed_keys, list(inputs.records.attributes))
            meta["key_completeness"] = found
            said += f"; the blocking keys join {found:.1%} of synthetic true pairs"
        else:
            simulations = simulate(agreement, inputs.records.attributes, model, ctx.randomness)
        quality = before_sending(simulations)
        if quality.f1 < minimum:
            raise PhaseFailed(
                poor_linkage_words(quality, minimum, agreement.encoding.takes_noise, found, wider)
                + f" (in {ctx.config.source})"
                + _whose_noise(ctx, run_id),
                reason=pb.POOR_LINKAGE,
            )
        meta["expected"] = quality.as_dict()
        meta["simulations"] = [simulation.as_dict() for simulation in simulations]
        said += f"; {quality.words()}"
        if cost is not None:
            said += f"; {words.match_cost_words(cost, projected=True)}"
    ctx.write_artifact(run_id, MODEL, lambda tmp: tmp.write_bytes(model.to_bytes()), meta)
    progress(1, 1, "models", said)


def _calibrated(
    ctx: RunContext, run_id: str, model: Model, units: np.ndarray, linked: list[LinkedUnits]
) -> dict[str, Any]:
    """The probability of each bucket MATCH can tell, from the simulated links scored as MATCH
    will score them (its scale from the own records' `units`), checked on held-out links."""
    agreement = ctx.agreement(run_id)
    digest, _ = ctx.store.run(run_id).agreement()
    thresholds = session.thresholds(agreement.method.sealed_thresholds)
    peer = evaluator_plaintext(agreement, model, digest)
    scaled = calibration.scaling(model, units, peer, thresholds)
    links = [scaled.links(model, one) for one in linked]
    return calibration.fitted(links, thresholds).as_dict()


def _projected_match(
    ctx: RunContext,
    run_id: str,
    model: Model,
    units: np.ndarray,
    joins: list[sealed_expectation.CandidateJoin],
) -> MatchCost:
    """MATCH's cost for this party's scoring, projected from the simulated joins' candidates
    per sampled record against the peer's declared rows, in the stream's shape MATCH will
    send (`stream_shape.score_shape`)."""
    agreement = ctx.agreement(run_id)
    method = agreement.method
    digest, _ = ctx.store.run(run_id).agreement()
    ckks = session.setting(method.sealed_crypto, method.sealed_thresholds)
    live = evaluator_plaintext(agreement, model, digest).live(units.shape[1], units.shape[2])
    shape = score_shape(ckks, units.shape[1], live, bool(mover_groups(agreement)))
    # The hidden join gives a pair a slot per entry sharing a key, the graph join one.
    hidden = method.join.hidden
    pairs = [np.bincount(one.pairs[:, 0], minlength=len(one.own_rows)) for one in joins]
    slots = [
        np.bincount(one.pairs[:, 0], weights=one.entries_shared, minlength=len(one.own_rows))
        for one in joins
    ]
    rows = len(units)
    return match_cost.projected(
        np.concatenate(slots if hidden else pairs).astype(np.int64),
        rows,
        rows,
        ctx.peer_declared(run_id) or rows,
        ckks.slots,
        shape.coordinates,
        shape.returned,
        hidden,
        np.concatenate(pairs),
    )


def _wider_keys(written: str, attributes: list[str]) -> tuple[str, ...]:
    """The agreed recipes with the names' prefixes added, where that adds any."""
    agreed = session.recipes(written, attributes)
    wider = with_prefixes(agreed)
    return wider if len(wider) > len(agreed) else ()


def _whose_noise(ctx: RunContext, run_id: str) -> str:
    """When the peer's gate asked for more noise than this party's, say so."""
    meta = ctx.noise_meta(run_id)
    own, agreed = meta.get("sigma"), meta.get("agreed")
    if own is None or agreed is None or agreed <= own:
        return ""
    return words.whose_noise_words(ctx.peer(run_id).peer, agreed, own)
