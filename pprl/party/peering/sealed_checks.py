"""What the evaluating party checks of a peer's encrypted scoring stream before and while it
computes on it: the candidates and layout both derive, the agreed CKKS parameters, and the
order of the ciphertexts. A refusal names what does not fit, never a value."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

from pprl.party.peering.transfer import TransferError
from pprl.protocol.sealed.parameters import CkksSetting
from pprl.wire.v1 import linkage_pb2 as pb

if TYPE_CHECKING:
    from pprl.party.phases.sealed import Evaluation

# A ciphertext under other parameters differs in size by far more than this share.
SIZE_TOLERANCE = 0.25


def header_refusal(
    header: pb.ScoreHeader, evaluation: Evaluation
) -> tuple[pb.ErrorReason, str] | None:
    """Why a score header does not fit this party's view of the run, or None."""
    if header.candidates_sha256 != evaluation.candidates_sha256:
        return (
            pb.DIGEST_MISMATCH,
            "the candidate pairs differ from the ones this party derives from the blinded keys",
        )
    coordinates = evaluation.shape.coordinates
    if header.batches != evaluation.placed.batches or header.coordinates != coordinates:
        return (
            pb.BAD_CIPHERTEXT,
            f"{header.batches} batches of {header.coordinates} ciphertexts, where the agreed "
            f"layout has {evaluation.placed.batches} of {coordinates}",
        )
    ratios = list(header.alternative_ratios)
    wanted = evaluation.entries if evaluation.alternative else 0
    if len(ratios) != wanted or not all(math.isfinite(r) for r in ratios):
        return (
            pb.BAD_CIPHERTEXT,
            f"{len(ratios)} movers' ratios (finite numbers) where the agreement has {wanted}",
        )
    wrong = parameters_refusal(header.public_context, evaluation.ckks)
    return None if wrong is None else (pb.BAD_CIPHERTEXT, wrong)


def parameters_refusal(public: bytes, ckks: CkksSetting) -> str | None:
    """Why a public context is not one of the agreed parameters, or None: it must load, hold
    no more than a public key's secrets, use the agreed scale, fill the agreed slots, and
    give ciphertexts of the agreed size (another ring or modulus chain changes it)."""
    import tenseal as ts

    from pprl.protocol.sealed import scoring

    try:
        context = ts.context_from(public)
    except Exception:  # TenSEAL raises several kinds for bytes that are not a context
        return "the public context cannot be read"
    if context.global_scale != 2.0**ckks.scale_bits:
        return "the public context's scale is not the agreed one"
    try:
        probe = len(ts.ckks_vector(context, [0.0] * ckks.slots).serialize())
    except Exception:
        return "the public context holds fewer slots than agreed"
    own = scoring.secret_context(ckks)
    expected = len(ts.ckks_vector(own, [0.0] * ckks.slots).serialize())
    if abs(probe - expected) > SIZE_TOLERANCE * expected:
        return "the public context's ring or modulus chain is not the agreed one"
    return None


def received_batches(
    messages: Iterator[pb.SealedScores], header: pb.ScoreHeader
) -> Iterator[tuple[int, list[bytes]]]:
    """The ciphertexts grouped by batch, refused (TransferError) when one is out of order, a
    batch is short, or more arrive than the header declared."""
    batch, current = 0, list[bytes]()
    for message in messages:
        if not message.HasField("ciphertext"):
            raise TransferError("a second header in one stream")
        ciphertext = message.ciphertext
        if ciphertext.batch != batch or ciphertext.index != len(current):
            raise TransferError(
                f"ciphertext {ciphertext.index} of batch {ciphertext.batch} where ciphertext "
                f"{len(current)} of batch {batch} was due"
            )
        current.append(ciphertext.data)
        if len(current) == header.coordinates:
            yield batch, current
            batch, current = batch + 1, []
            if batch == header.batches:
                return
    if batch < header.batches:
        raise TransferError(f"the stream ended in batch {batch} of {header.batches}")


def described(error: BaseException) -> str:
    """A refusal's words: ours as they are; the encryption library's by kind only."""
    if isinstance(error, TransferError):
        return str(error)
    return "a ciphertext cannot be read or computed on under the agreed parameters"
