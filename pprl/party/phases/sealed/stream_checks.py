"""What the evaluating party checks of a peer's encrypted scoring stream before and while it
computes on it: the candidates and layout both derive, the agreed CKKS parameters, and the
order of the ciphertexts. A refusal names what does not fit, never a value."""

from __future__ import annotations

import math
from collections.abc import Iterator

from pprl.party.peering.transfer import TransferError
from pprl.party.phases.sealed.evaluation import Evaluation
from pprl.protocol.model.classifier import KERNEL_DIVISOR, MIN_CAP
from pprl.protocol.sealed.parameters import CkksSetting
from pprl.wire.v1 import linkage_pb2 as pb

# The widths a kernel model can have: its caps (MIN_CAP to 2, the largest cosine distance)
# over KERNEL_DIVISOR.
KERNEL_WIDTHS = (MIN_CAP / KERNEL_DIVISOR, 2.0 / KERNEL_DIVISOR)


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
    widths = list(header.kernel_widths)
    wanted = evaluation.entries if evaluation.kernel_features else 0
    if len(widths) != wanted or not all(KERNEL_WIDTHS[0] <= w <= KERNEL_WIDTHS[1] for w in widths):
        return (
            pb.BAD_CIPHERTEXT,
            f"{len(widths)} kernel widths (each within {KERNEL_WIDTHS[0]:g}..{KERNEL_WIDTHS[1]:g}) "
            f"where the agreement has {wanted}",
        )
    wrong = parameters_refusal(header.public_key, header.conjugation_key, evaluation.ckks)
    return None if wrong is None else (pb.BAD_CIPHERTEXT, wrong)


def parameters_refusal(public: bytes, conjugation: bytes, ckks: CkksSetting) -> str | None:
    """Why a public key or a conjugation key is not one under the agreed parameters, or None:
    SEAL loads each only for the same ring and modulus chain (their parameters' id) and with
    every coefficient reduced, and the conjugation key must hold that Galois element alone.
    The scale and level of each ciphertext are checked as it is evaluated."""
    # lazy: SEAL (tenseal, half a second) loads when a sealed run scores, not at start-up
    from pprl.files.sealed_bytes import evaluation_keys
    from pprl.protocol.sealed import scoring

    try:
        keys = evaluation_keys(scoring.seal_context(ckks), public, conjugation)
    except ValueError as error:
        return str(error)
    return scoring.conjugation_refusal(keys.conjugation, ckks)


def received_batches(
    messages: Iterator[pb.SealedScores], header: pb.ScoreHeader
) -> Iterator[tuple[int, list[bytes]]]:
    """The ciphertexts grouped by batch, refused (TransferError) when one is out of order, a
    batch is short, or more arrive than the header declared (checked once the last declared
    batch has been evaluated: the stream must then end)."""
    batch, current = 0, list[bytes]()
    for message in messages:
        if batch == header.batches:
            raise TransferError(
                f"more ciphertexts than the {header.batches} batches the header declared"
            )
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
    if batch < header.batches:
        raise TransferError(f"the stream ended in batch {batch} of {header.batches}")


def described(error: BaseException) -> str:
    """A refusal's words: ours as they are; the encryption library's by kind only."""
    if isinstance(error, TransferError):
        return str(error)
    return "a ciphertext cannot be read or computed on under the agreed parameters"
