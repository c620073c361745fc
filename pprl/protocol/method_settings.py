"""The method's settings both parties share (`MethodParams`, the configuration's [method]),
and which encodings read which of them: plain values, below the encodings that read them.

`pprl.protocol.method.method_params` fills in the defaults that depend on each other and
asks the agreed encoding to check them; the encodings' code is pprl.protocol.encodings.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from pprl.protocol.data.error_model import ONE_ERROR
from pprl.protocol.linkage.matching import GREEDY
from pprl.protocol.sealed.joins import DEFAULT_JOIN, DEFAULT_SLOTS, Join, join_named
from pprl.protocol.sealed.parameters import DEFAULT_CRYPTO
from pprl.protocol.sealed.session import DEFAULT_KERNEL_FEATURES, DEFAULT_THRESHOLDS
from pprl.protocol.vectors.bloom import BloomParams

# The paper's release, distances to the reference set: what a method description means when
# it names no encoding, so that every earlier description (and its digest) stays what it was.
PAPER_ENCODING = "reference"
# The method settings of the Bloom filters (in the agreement only when a Bloom encoding is).
BLOOM_SETTINGS = ("bloom_bits", "bloom_hashes", "bloom_q")
# The method settings only sealed linkage reads (they enter the digest only for it).
SEALED_SETTINGS = (
    "sealed_keys",
    "sealed_thresholds",
    "sealed_crypto",
    "sealed_kernel_features",
    "sealed_join",
    "sealed_names_within",
    "sealed_slots",
)


@dataclass(frozen=True)
class EncodingSettings:
    """What the settings say of one encoding ([method] encoding): the method settings only it
    reads (in the agreement's description only when it is agreed), whether it needs the key
    both parties hold ([privacy] bloom_key), and whether the peer never receives its vectors
    (candidates and scores are computed under blinding and encryption, pprl.protocol.sealed)."""

    settings: tuple[str, ...] = ()
    keyed: bool = False
    sealed: bool = False


# Each encoding's name and settings; its code, registered by the same name, is in
# pprl.protocol.encodings.registry.
ENCODING_SETTINGS = {
    PAPER_ENCODING: EncodingSettings(),
    "bloom": EncodingSettings(BLOOM_SETTINGS, keyed=True),
    "bloom-distances": EncodingSettings(BLOOM_SETTINGS, keyed=True),
    "sealed": EncodingSettings(SEALED_SETTINGS, sealed=True),
}

# Beside the agreed encoding's own settings, what the end-of-run summary names of a run's
# method: how each party trains its classifier and keeps one pair a record, and, where a
# release is sent (not under sealed linkage), what it is and how much noise it carries.
TRAINING_SETTINGS = ("classifier", "error_model", "assignment")
RELEASE_SETTINGS = ("release", "feature", "noise_sigma")
# Sealed settings only the hidden join reads: under the graph join they would name slots
# and buckets the run never had.
HIDDEN_JOIN_SETTINGS = ("sealed_names_within", "sealed_slots")


@dataclass(frozen=True)
class MethodParams:
    """Parameters both parties must share; they go into the agreement digest."""

    distance: str = "levenshtein"
    clamp: int = 254
    dtype: str = "uint8"
    feature: str = "cosine"
    # Gaussian noise on released distances in FedSim's standardised units (times sigma0 of the
    # reference set gives edits); 0 releases the raw distances.
    noise_sigma: float = 0.0
    classifier: str = "linear"
    c: float = 100.0
    training_records: int = 5000
    # How TRAIN corrupts own records into matches (pprl.protocol.data.error_model): "one-error" is
    # the paper's single edit; "registers" adds nicknames, middle initials, swaps and blanks.
    error_model: str = ONE_ERROR
    negatives_per_positive: int = 4
    hard_negatives: int = 2
    # Each entry's distance is capped at this quantile of the non-matches' (0: raw distances,
    # the paper's); see classifier.saturation_caps.
    saturation: float = 0.0
    # A pair whose address fields all disagree (a move) still links when a model of its other
    # fields gives it at least these log-odds (0: the address may veto any pair); see
    # classifier.lenient_alternatives.
    mover_odds: float = 0.0
    class_weight: str = "balanced"
    top_k: int = 10
    assignment: str = GREEDY
    normalisation: str = "upper-collapse-whitespace"
    # What a party sends per value (pprl.protocol.vectors.release.RELEASES).
    release: str = "distances"
    # Components the "projected-cosine" feature keeps per reference column (0: the rule
    # release.kept_components gives, sqrt(2R) with a floor of 30). Fewer send fewer bytes
    # under sealed linkage, for a little F1 (docs/research/benchmarks.md).
    projected_components: int = 0
    # Besides the linkage, each party writes its records' K best peer records (soft_links);
    # 0: not asked for.
    soft_top_k: int = 0
    # What a party encodes its values as (ENCODING_SETTINGS; pprl.protocol.encodings.registry):
    # edit distances to the reference set, or keyed q-gram Bloom filters
    # (pprl.protocol.vectors.bloom) of bloom_bits, bloom_hashes, bloom_q, sent as they are or
    # as distances to the reference set's filters, or sealed linkage's vectors.
    encoding: str = PAPER_ENCODING
    bloom_bits: int = 1024
    bloom_hashes: int = 10
    bloom_q: int = 2
    # Sealed linkage (pprl.protocol.sealed.session): the blocking-key recipes, the scores each
    # candidate pair's is compared with under encryption, and the named set of cryptographic
    # parameters.
    sealed_keys: str = ""
    sealed_thresholds: str = DEFAULT_THRESHOLDS
    sealed_crypto: str = DEFAULT_CRYPTO
    # Random features per entry for a kernel model (pprl.protocol.sealed.kernel_features);
    # 0: a model linear in the distances.
    sealed_kernel_features: int = DEFAULT_KERNEL_FEATURES
    # How the candidate pairs are found (pprl.protocol.sealed.joins).
    sealed_join: str = DEFAULT_JOIN
    # Under the hidden join, each row names its accepted slots within this many buckets of
    # the best it reached (pprl.protocol.sealed.hidden_join.best_slots); 0: its best only.
    sealed_names_within: int = 0
    # Under the hidden join, every entry's slots (pprl.protocol.sealed.hidden_join.fixed): its
    # rows cut to this many and the rest dummies, so the counts say nothing; 0: as many as
    # the evaluator's rows holding its key (the count told).
    sealed_slots: int = DEFAULT_SLOTS

    def to_dict(self) -> dict[str, Any]:
        """C, sigma and saturation as floats, so that 100 and 100.0 give the same digest; the
        release only when it is not the paper's distances and soft_top_k only when asked for,
        so that every earlier description (and its digest) stays what it was."""
        out = {
            **asdict(self),
            "c": float(self.c),
            "noise_sigma": float(self.noise_sigma),
            "saturation": float(self.saturation),
        }
        if self.release == "distances":
            del out["release"]
        if not self.soft_top_k:
            del out["soft_top_k"]
        if not self.projected_components:
            del out["projected_components"]
        if not self.mover_odds:
            del out["mover_odds"]
        else:
            out["mover_odds"] = float(self.mover_odds)
        if self.encoding == PAPER_ENCODING:
            del out["encoding"]
        if self.sealed_join == DEFAULT_JOIN:
            del out["sealed_join"]
        if not self.sealed_names_within:
            del out["sealed_names_within"]
        if not self.sealed_slots:
            del out["sealed_slots"]
        # Each known encoding's own settings only when it is the one agreed (an unknown one,
        # which no party can configure, keeps every field: the digest still tells them apart).
        current = ENCODING_SETTINGS.get(self.encoding)
        if current is not None:
            for encoding in ENCODING_SETTINGS.values():
                for key in set(encoding.settings) - set(current.settings):
                    out.pop(key, None)
        return out

    def summary(self) -> dict[str, Any]:
        """The agreed encoding and the settings that say how it links, by their [method]
        names: what the end-of-run summary names, since a run's figures mean other things
        in sealed linkage (no release, no gate, no fitted estimate) and in a release."""
        encoding = ENCODING_SETTINGS.get(self.encoding, EncodingSettings())
        own = encoding.settings
        if encoding.sealed and not self.join.hidden:
            own = tuple(name for name in own if name not in HIDDEN_JOIN_SETTINGS)
        released = () if encoding.sealed else RELEASE_SETTINGS
        names = (*own, *released, *TRAINING_SETTINGS)
        return {"encoding": self.encoding, **{name: getattr(self, name) for name in names}}

    @property
    def join(self) -> Join:
        """How sealed linkage finds the pairs it scores (pprl.protocol.sealed.joins)."""
        return join_named(self.sealed_join)

    @property
    def sealed(self) -> bool:
        """Whether the agreed encoding is sealed linkage."""
        encoding = ENCODING_SETTINGS.get(self.encoding)  # the digest takes any fields, known or not
        return encoding is not None and encoding.sealed

    @property
    def kernel_features(self) -> int:
        """Random features per entry when the agreed encoding scores a kernel model under
        encryption; 0 when the model is linear in the distances."""
        return self.sealed_kernel_features if self.sealed else 0

    @property
    def keyed(self) -> bool:
        """Whether the encoding needs the parties' shared Bloom-filter key."""
        encoding = ENCODING_SETTINGS.get(self.encoding)  # the digest takes any fields, known or not
        return encoding is not None and encoding.keyed

    @property
    def bloom(self) -> BloomParams:
        return BloomParams(self.bloom_bits, self.bloom_hashes, self.bloom_q)
