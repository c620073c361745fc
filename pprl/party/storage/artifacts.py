"""The files a run keeps in its state directory, and the stored tensor read in row slices."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from pprl.party.storage.state import ArtifactError

OWN_TENSOR = "own_tensor.u8"
PEER_TENSOR = "peer_tensor.u8"
ORDER = "order.npy"
# What AGREE found in the data (shared reference values, repeated and missing values).
DATA_REPORT = "data_report.json"
# With noise_sigma = "auto": the rates measured, the sigma chosen, and the records attacked.
NOISE_CHOICE = "noise_choice.json"
MODEL = "model.npz"
OWN_MATCHES = "own_matches.npz"
PEER_MATCHES = "peer_matches.json"
LINKAGE_CSV = "linkage.csv"
OWN_MATCHES_CSV = "own_matches.csv"
PEER_MATCHES_CSV = "peer_matches.csv"
# The pairs for clerical review, when both parties configured a [matching] review_band: the
# agreed pairs marked in linkage.csv and the pairs only one party accepted.
REVIEW_CSV = "review.csv"
# With [method] soft_top_k: each own row's K best peer rows, and the soft linkage written from
# them with peer tokens (soft_links), and this party's own token map.
SOFT_MATCHES = "soft_matches.npz"
SOFT_LINKS_CSV = "soft_links.csv"
OWN_TOKENS_CSV = "own_tokens.csv"
# The run report LINK writes beside the result (pprl.party.reporting.render).
REPORT = ("report.md", "report_scores.png", "report_quality.png")
# What LINK writes for the operator: there only once a run's LINK is recorded.
RESULTS = (
    *(LINKAGE_CSV, OWN_MATCHES_CSV, PEER_MATCHES_CSV, REVIEW_CSV, SOFT_LINKS_CSV, OWN_TOKENS_CSV),
    *REPORT,
)
# What a new cut (Recut) drops, so that MATCH, REVEAL and LINK run again.
CUT = (OWN_MATCHES, SOFT_MATCHES, PEER_MATCHES, *RESULTS)
# Sealed linkage: this party's secret blinding scalar for the run (never sent), its blocking
# keys blinded once (what it sends) and twice (what the peer returns), and the peer's keys
# blinded twice (what this party returned to it).
BLINDING_SECRET = "blinding_secret.bin"
OWN_KEYS = "own_keys.npz"
OWN_KEYS_TWICE = "own_keys_twice.npz"
PEER_KEYS_TWICE = "peer_keys_twice.npz"
# The hidden join (sealed_join = "hidden", pprl.protocol.sealed.hidden_join): this party's
# second scalar (its key entries'), its entries (each one's row, and the values blinded once),
# the secret order its rows' keys travel in, the peer's entries blinded twice, and the join
# this party holds as the peer's evaluator (each entry's rows in the order of its slots).
ENTRY_SECRET = "entry_secret.bin"
OWN_ENTRIES = "own_entries.npz"
KEY_ORDER = "key_order.npy"
PEER_ENTRIES_TWICE = "peer_entries_twice.npz"
PEER_JOIN = "peer_join.npz"
# Every slot the peer has named (its entry, its slot), over all its calls: at most one per
# entry it sent, however often it asks.
PEER_NAMED = "peer_named.npy"
# The slots this party named, resolved: (own row, peer row, the recipe of the entry that
# found it), for why an agreed pair matched.
OWN_NAMED = "own_named.npz"
# How many records the peer said at AGREE it links (GetAgreementResponse.records).
PEER_DECLARED = "peer_declared.json"
# What a closed run no longer needs and what takes the room: both smashed tensors (the
# peer's is its data, kept no longer than useful), the shuffle, the model, the scores, and
# the peer's matches as received (peer_matches.csv keeps them), the soft rows (soft_links.csv
# keeps them). The result files stay.
BULK: tuple[str, ...] = (OWN_TENSOR, PEER_TENSOR, ORDER, MODEL, OWN_MATCHES, PEER_MATCHES)
BULK += (SOFT_MATCHES, BLINDING_SECRET, OWN_KEYS, OWN_KEYS_TWICE, PEER_KEYS_TWICE)
BULK += (ENTRY_SECRET, OWN_ENTRIES, KEY_ORDER, PEER_ENTRIES_TWICE, PEER_JOIN, PEER_NAMED)
BULK += (OWN_NAMED,)
# Closed runs whose bulk files stay, for inspection; older ones are pruned when a run begins.
KEEP_CLOSED_RUNS = 2


class TensorFile:
    """A stored uint8 tensor whose rows are read from disk on demand. Matching reads each row
    once; mapping the file instead would count all of it as the daemon's resident memory."""

    def __init__(self, path: Path, shape: tuple[int, ...]) -> None:
        self.path = path
        self.shape = shape
        self._row_bytes = math.prod(shape[1:])

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows: slice) -> np.ndarray:
        start, stop, step = rows.indices(self.shape[0])
        if step != 1:
            raise ValueError("rows are read in contiguous slices only")
        count = max(0, stop - start)
        with self.path.open("rb") as handle:
            handle.seek(start * self._row_bytes)
            data = np.fromfile(handle, dtype=np.uint8, count=count * self._row_bytes)
        if len(data) != count * self._row_bytes:
            raise ArtifactError(f"{self.path} is shorter than its recorded shape {self.shape}")
        return data.reshape(count, *self.shape[1:])
