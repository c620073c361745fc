"""EXCHANGE: send the released tensor to the peer, which confirms its checksum."""

from __future__ import annotations

import time

from pprl.party.phases import words
from pprl.party.phases.context import PhaseProgress, RunContext
from pprl.party.storage.artifacts import OWN_TENSOR


def run(ctx: RunContext, run_id: str, progress: PhaseProgress) -> None:
    artifact = ctx.artifact(run_id, OWN_TENSOR)
    shape = tuple(artifact.meta["shape"])
    megabytes = -(-artifact.size // 1_000_000)
    peer = ctx.peer(run_id)
    progress(0, megabytes, "MB", words.sending_tensor_words(peer.peer))
    digest, _ = ctx.store.run(run_id).agreement()
    began = time.perf_counter()
    _, sent = peer.push_tensor(
        run_id,
        digest,
        artifact.path,
        shape,
        artifact.sha256,
        progress=lambda done, total: progress(done // 1_000_000, megabytes, "MB", ""),
    )
    rate = artifact.size / 1e6 / max(time.perf_counter() - began, 1e-9)
    ctx.store.add_counter(run_id, "bytes_sent", sent)
    progress(megabytes, megabytes, "MB", words.checksum_words(rate))
