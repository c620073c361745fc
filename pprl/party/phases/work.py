"""What each phase of Algorithm 1 does on one party: the pipeline's steps (pprl.protocol.
pipeline) with their inputs read from the party's files and their results kept in the run
store, so a phase redone after a restart starts from what the earlier phases stored. Each
phase is a module of this package; `STEPS` says which runs which phase."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from pprl.party.phases import agree, exchange, link, match, reveal, smash, train
from pprl.party.phases.context import PhaseProgress, RunContext
from pprl.party.phases.sealed import evaluation as sealed_evaluation
from pprl.party.phases.sealed import exchange as sealed_exchange
from pprl.party.phases.sealed import hidden_entries
from pprl.party.phases.sealed import match as sealed_match
from pprl.party.phases.sealed import smash as sealed_smash
from pprl.protocol.phases import Phase
from pprl.wire.v1 import linkage_pb2 as pb

Step = Callable[[RunContext, str, PhaseProgress], None]
STEPS: dict[Phase, Step] = {
    Phase.AGREE: agree.run,
    Phase.SMASH: smash.run,
    Phase.TRAIN: train.run,
    Phase.EXCHANGE: exchange.run,
    Phase.MATCH: match.run,
    Phase.REVEAL: reveal.run,
    Phase.LINK: link.run,
}
# Sealed linkage ([method] encoding = "sealed") sends keys and ciphertexts, not a tensor.
SEALED_STEPS: dict[Phase, Step] = {
    **STEPS,
    Phase.SMASH: sealed_smash.run,
    Phase.EXCHANGE: sealed_exchange.run,
    Phase.MATCH: sealed_match.run,
}


class PhaseWork(RunContext):
    """A party's runs: the context every phase shares, and the phases."""

    def run(self, phase: Phase, run_id: str, progress: PhaseProgress) -> None:
        is_sealed = phase is not Phase.AGREE and self.agreement(run_id).encoding.sealed
        (SEALED_STEPS if is_sealed else STEPS)[phase](self, run_id, progress)

    def receive_matches(self, run_id: str, match_set: pb.PushMatchesRequest) -> int:
        """The peer's accepted pairs, arriving during its REVEAL (pprl.party.phases.reveal)."""
        return reveal.receive(self, run_id, match_set)

    def reblind_for_peer(self, run_id: str, counts: np.ndarray, values: bytes) -> bytes:
        """The peer's blinded keys, arriving during its EXCHANGE (sealed.exchange)."""
        return sealed_exchange.reblind_for_peer(self, run_id, counts, values)

    def keep_peer_entries(self, run_id: str, counts: np.ndarray, values: bytes) -> int:
        """The peer's key entries, arriving during its EXCHANGE (hidden join)."""
        return hidden_entries.keep_peer_entries(self, run_id, counts, values)

    def join_counts_for_peer(self, run_id: str) -> np.ndarray:
        """Per peer entry, this party's rows holding its key, during the peer's MATCH."""
        return hidden_entries.peer_join(self, run_id).counts()

    def resolve_for_peer(self, run_id: str, entries: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """This party's rows in the slots the peer names, during its MATCH."""
        return hidden_entries.resolve_for_peer(self, run_id, entries, slots)

    def evaluation_for_peer(self, run_id: str) -> sealed_evaluation.Evaluation:
        """What scoring for the peer needs, during its MATCH (sealed.evaluation)."""
        return sealed_evaluation.evaluation_for_peer(self, run_id)

    def evaluated(
        self,
        evaluation: sealed_evaluation.Evaluation,
        public: bytes,
        conjugation: bytes,
        batches: Iterator[tuple[int, list[bytes]]],
        ratios: np.ndarray | None = None,
        widths: np.ndarray | None = None,
    ) -> Iterator[tuple[int, list[bytes]]]:
        return sealed_evaluation.evaluated(
            self, evaluation, public, conjugation, batches, ratios, widths
        )
