"""EXCHANGE in sealed linkage, both halves: this party's keys to the peer, which returns them
blinded again; and, serving the peer's call, the peer's keys blinded again with this party's
scalar and kept (they and this party's own make the candidates)."""

from __future__ import annotations

import numpy as np

from pprl.party.phases.context import PhaseFailed, PhaseProgress, RunContext
from pprl.party.phases.sealed import hidden_entries, stored
from pprl.party.storage.artifacts import (
    BLINDING_SECRET,
    ENTRY_SECRET,
    OWN_KEYS,
    OWN_KEYS_TWICE,
    PEER_KEYS_TWICE,
)
from pprl.protocol.linkage import reflection
from pprl.protocol.sealed import key_spread, session
from pprl.protocol.sealed.blinding import POINT_BYTES, Blinder, BlindingError, returned, split
from pprl.protocol.sealed.recipes import most_keys
from pprl.wire.v1 import linkage_pb2 as pb


def run(ctx: RunContext, run_id: str, progress: PhaseProgress) -> None:
    counts, values = stored.read_keys(ctx, run_id, OWN_KEYS)
    peer = ctx.peer(run_id)
    digest, _ = ctx.store.run(run_id).agreement()
    keys = int(counts.sum())
    progress(0, keys, "keys", f"sending {keys:,} blinded blocking keys to {peer.peer}")
    hidden = ctx.agreement(run_id).method.join.hidden
    if hidden:
        back, sent = hidden_entries.exchange(ctx, run_id, peer, digest, values)
    else:
        back, sent = peer.blind_keys(run_id, digest, counts, values)
    ctx.store.add_counter(run_id, "bytes_sent", sent)
    try:
        returned(split(values, keys, "own keys"), back, f"{peer.peer}'s re-blinding")
    except BlindingError as error:
        raise PhaseFailed(str(error), reason=pb.BAD_CIPHERTEXT) from None
    stored.write_keys(ctx, run_id, OWN_KEYS_TWICE, counts, back)
    said = f"{peer.peer} returned the {keys:,} keys blinded again"
    if hidden:
        said += " (sent one to a message in a secret order), and keeps this party's key entries"
    progress(keys, keys, "keys", said)


# -- what the peer service does for the peer ----------------------------------------------
def reblind_for_peer(ctx: RunContext, run_id: str, counts: np.ndarray, values: bytes) -> bytes:
    """The peer's once-blinded keys blinded again with this party's scalar: returned to it,
    and kept (they and this party's own make the candidates)."""
    most = most_keys(ctx.agreement(run_id).method.sealed_keys)
    if len(counts) and int(counts.max()) > most:
        row = int(np.argmax(counts))
        raise PhaseFailed(
            f"keys refused: row {row:,} holds {int(counts[row]):,} keys, more than the agreed "
            f"recipes give an honest row ({most:,})",
            reason=pb.KEY_BOUND,
        )
    degenerate = key_spread.degenerate_refusal(values, ctx.peer_declared(run_id))
    if degenerate is not None:
        raise PhaseFailed(f"keys refused: {degenerate}", reason=pb.DEGENERATE_KEYS)
    _, own = stored.read_keys(ctx, run_id, OWN_KEYS)
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
        hidden_entries.check_bound(ctx, run_id, len(counts), "keys")
    secret = ENTRY_SECRET if hidden else BLINDING_SECRET
    with ctx.spreading() as spread:
        blinder = Blinder.from_secret(ctx.artifact(run_id, secret).path.read_bytes(), spread)
        again = session.reblinded(blinder, values, "the peer's keys")
    if ctx.store.artifact(run_id, PEER_KEYS_TWICE, verify=False) is not None:
        # A peer resuming EXCHANGE sends the same keys again: confirm them. Other keys would
        # replace ones the candidates may already stand on.
        held_counts, held = stored.read_keys(ctx, run_id, PEER_KEYS_TWICE)
        if not np.array_equal(held_counts, counts) or held != again:
            raise PhaseFailed(
                "keys refused: this run already holds other keys from you",
                reason=pb.ALREADY_RECEIVED,
            )
        return again
    stored.write_keys(ctx, run_id, PEER_KEYS_TWICE, counts, again)
    return again
