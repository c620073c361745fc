from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHASE_UNSPECIFIED: _ClassVar[Phase]
    PHASE_AGREE: _ClassVar[Phase]
    PHASE_SMASH: _ClassVar[Phase]
    PHASE_TRAIN: _ClassVar[Phase]
    PHASE_EXCHANGE: _ClassVar[Phase]
    PHASE_MATCH: _ClassVar[Phase]
    PHASE_REVEAL: _ClassVar[Phase]
    PHASE_LINK: _ClassVar[Phase]

class ErrorReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_REASON_UNSPECIFIED: _ClassVar[ErrorReason]
    NOT_AUTHORISED: _ClassVar[ErrorReason]
    BAD_INPUT: _ClassVar[ErrorReason]
    DIGEST_MISMATCH: _ClassVar[ErrorReason]
    VERSION_MISMATCH: _ClassVar[ErrorReason]
    PRIVACY_GATE: _ClassVar[ErrorReason]
    OUT_OF_ORDER: _ClassVar[ErrorReason]
    BAD_CHUNK: _ClassVar[ErrorReason]
    BAD_MATCHES: _ClassVar[ErrorReason]
    UNKNOWN_RUN: _ClassVar[ErrorReason]
    BUSY: _ClassVar[ErrorReason]
    PEER_UNAVAILABLE: _ClassVar[ErrorReason]
    DATA_LOSS: _ClassVar[ErrorReason]
    INTERNAL: _ClassVar[ErrorReason]
    ALREADY_RECEIVED: _ClassVar[ErrorReason]
    TIMED_OUT: _ClassVar[ErrorReason]
    ABANDONED: _ClassVar[ErrorReason]
    RUN_OPEN: _ClassVar[ErrorReason]
    STORAGE: _ClassVar[ErrorReason]
    POOR_LINKAGE: _ClassVar[ErrorReason]
    BAD_CIPHERTEXT: _ClassVar[ErrorReason]
    REFLECTED: _ClassVar[ErrorReason]
    OTHER_COORDINATOR: _ClassVar[ErrorReason]
    PEER_TOO_LARGE: _ClassVar[ErrorReason]
    KEY_BOUND: _ClassVar[ErrorReason]
    DEGENERATE_KEYS: _ClassVar[ErrorReason]
    NAMING_BOUND: _ClassVar[ErrorReason]
    MESSAGE_TOO_LARGE: _ClassVar[ErrorReason]
PHASE_UNSPECIFIED: Phase
PHASE_AGREE: Phase
PHASE_SMASH: Phase
PHASE_TRAIN: Phase
PHASE_EXCHANGE: Phase
PHASE_MATCH: Phase
PHASE_REVEAL: Phase
PHASE_LINK: Phase
ERROR_REASON_UNSPECIFIED: ErrorReason
NOT_AUTHORISED: ErrorReason
BAD_INPUT: ErrorReason
DIGEST_MISMATCH: ErrorReason
VERSION_MISMATCH: ErrorReason
PRIVACY_GATE: ErrorReason
OUT_OF_ORDER: ErrorReason
BAD_CHUNK: ErrorReason
BAD_MATCHES: ErrorReason
UNKNOWN_RUN: ErrorReason
BUSY: ErrorReason
PEER_UNAVAILABLE: ErrorReason
DATA_LOSS: ErrorReason
INTERNAL: ErrorReason
ALREADY_RECEIVED: ErrorReason
TIMED_OUT: ErrorReason
ABANDONED: ErrorReason
RUN_OPEN: ErrorReason
STORAGE: ErrorReason
POOR_LINKAGE: ErrorReason
BAD_CIPHERTEXT: ErrorReason
REFLECTED: ErrorReason
OTHER_COORDINATOR: ErrorReason
PEER_TOO_LARGE: ErrorReason
KEY_BOUND: ErrorReason
DEGENERATE_KEYS: ErrorReason
NAMING_BOUND: ErrorReason
MESSAGE_TOO_LARGE: ErrorReason

class ErrorDetail(_message.Message):
    __slots__ = ("reason", "message")
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    reason: ErrorReason
    message: str
    def __init__(self, reason: _Optional[_Union[ErrorReason, str]] = ..., message: _Optional[str] = ...) -> None: ...

class GetAgreementRequest(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class GetAgreementResponse(_message.Message):
    __slots__ = ("run_id", "digest", "description", "software_version", "records", "accepts_records")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SOFTWARE_VERSION_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    ACCEPTS_RECORDS_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    digest: str
    description: str
    software_version: str
    records: int
    accepts_records: int
    def __init__(self, run_id: _Optional[str] = ..., digest: _Optional[str] = ..., description: _Optional[str] = ..., software_version: _Optional[str] = ..., records: _Optional[int] = ..., accepts_records: _Optional[int] = ...) -> None: ...

class PushTensorRequest(_message.Message):
    __slots__ = ("header", "chunk")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    header: TensorHeader
    chunk: TensorChunk
    def __init__(self, header: _Optional[_Union[TensorHeader, _Mapping]] = ..., chunk: _Optional[_Union[TensorChunk, _Mapping]] = ...) -> None: ...

class TensorHeader(_message.Message):
    __slots__ = ("run_id", "digest", "shape", "dtype", "total_bytes", "chunk_count", "sha256")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    SHAPE_FIELD_NUMBER: _ClassVar[int]
    DTYPE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_BYTES_FIELD_NUMBER: _ClassVar[int]
    CHUNK_COUNT_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    digest: str
    shape: _containers.RepeatedScalarFieldContainer[int]
    dtype: str
    total_bytes: int
    chunk_count: int
    sha256: bytes
    def __init__(self, run_id: _Optional[str] = ..., digest: _Optional[str] = ..., shape: _Optional[_Iterable[int]] = ..., dtype: _Optional[str] = ..., total_bytes: _Optional[int] = ..., chunk_count: _Optional[int] = ..., sha256: _Optional[bytes] = ...) -> None: ...

class TensorChunk(_message.Message):
    __slots__ = ("index", "data", "sha256")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    index: int
    data: bytes
    sha256: bytes
    def __init__(self, index: _Optional[int] = ..., data: _Optional[bytes] = ..., sha256: _Optional[bytes] = ...) -> None: ...

class PushTensorResponse(_message.Message):
    __slots__ = ("sha256", "bytes_received")
    SHA256_FIELD_NUMBER: _ClassVar[int]
    BYTES_RECEIVED_FIELD_NUMBER: _ClassVar[int]
    sha256: bytes
    bytes_received: int
    def __init__(self, sha256: _Optional[bytes] = ..., bytes_received: _Optional[int] = ...) -> None: ...

class BlindedKeys(_message.Message):
    __slots__ = ("run_id", "digest", "first_row", "counts", "values", "last")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    FIRST_ROW_FIELD_NUMBER: _ClassVar[int]
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    LAST_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    digest: str
    first_row: int
    counts: _containers.RepeatedScalarFieldContainer[int]
    values: bytes
    last: bool
    def __init__(self, run_id: _Optional[str] = ..., digest: _Optional[str] = ..., first_row: _Optional[int] = ..., counts: _Optional[_Iterable[int]] = ..., values: _Optional[bytes] = ..., last: _Optional[bool] = ...) -> None: ...

class EntriesReceipt(_message.Message):
    __slots__ = ("entries",)
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    entries: int
    def __init__(self, entries: _Optional[int] = ...) -> None: ...

class JoinCountsRequest(_message.Message):
    __slots__ = ("run_id", "digest")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    digest: str
    def __init__(self, run_id: _Optional[str] = ..., digest: _Optional[str] = ...) -> None: ...

class JoinCountsResponse(_message.Message):
    __slots__ = ("counts",)
    COUNTS_FIELD_NUMBER: _ClassVar[int]
    counts: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, counts: _Optional[_Iterable[int]] = ...) -> None: ...

class ResolveSlotsRequest(_message.Message):
    __slots__ = ("run_id", "digest", "entries", "slots")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    SLOTS_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    digest: str
    entries: _containers.RepeatedScalarFieldContainer[int]
    slots: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, run_id: _Optional[str] = ..., digest: _Optional[str] = ..., entries: _Optional[_Iterable[int]] = ..., slots: _Optional[_Iterable[int]] = ...) -> None: ...

class ResolveSlotsResponse(_message.Message):
    __slots__ = ("rows",)
    ROWS_FIELD_NUMBER: _ClassVar[int]
    rows: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, rows: _Optional[_Iterable[int]] = ...) -> None: ...

class SealedScores(_message.Message):
    __slots__ = ("header", "ciphertext")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    CIPHERTEXT_FIELD_NUMBER: _ClassVar[int]
    header: ScoreHeader
    ciphertext: Ciphertext
    def __init__(self, header: _Optional[_Union[ScoreHeader, _Mapping]] = ..., ciphertext: _Optional[_Union[Ciphertext, _Mapping]] = ...) -> None: ...

class ScoreHeader(_message.Message):
    __slots__ = ("run_id", "digest", "public_key", "batches", "coordinates", "candidates_sha256", "alternative_ratios", "kernel_widths", "conjugation_key")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_KEY_FIELD_NUMBER: _ClassVar[int]
    BATCHES_FIELD_NUMBER: _ClassVar[int]
    COORDINATES_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_SHA256_FIELD_NUMBER: _ClassVar[int]
    ALTERNATIVE_RATIOS_FIELD_NUMBER: _ClassVar[int]
    KERNEL_WIDTHS_FIELD_NUMBER: _ClassVar[int]
    CONJUGATION_KEY_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    digest: str
    public_key: bytes
    batches: int
    coordinates: int
    candidates_sha256: bytes
    alternative_ratios: _containers.RepeatedScalarFieldContainer[float]
    kernel_widths: _containers.RepeatedScalarFieldContainer[float]
    conjugation_key: bytes
    def __init__(self, run_id: _Optional[str] = ..., digest: _Optional[str] = ..., public_key: _Optional[bytes] = ..., batches: _Optional[int] = ..., coordinates: _Optional[int] = ..., candidates_sha256: _Optional[bytes] = ..., alternative_ratios: _Optional[_Iterable[float]] = ..., kernel_widths: _Optional[_Iterable[float]] = ..., conjugation_key: _Optional[bytes] = ...) -> None: ...

class Ciphertext(_message.Message):
    __slots__ = ("batch", "index", "data")
    BATCH_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    batch: int
    index: int
    data: bytes
    def __init__(self, batch: _Optional[int] = ..., index: _Optional[int] = ..., data: _Optional[bytes] = ...) -> None: ...

class MatchedPair(_message.Message):
    __slots__ = ("sender_row", "receiver_row", "sender_id", "sender_sharing")
    SENDER_ROW_FIELD_NUMBER: _ClassVar[int]
    RECEIVER_ROW_FIELD_NUMBER: _ClassVar[int]
    SENDER_ID_FIELD_NUMBER: _ClassVar[int]
    SENDER_SHARING_FIELD_NUMBER: _ClassVar[int]
    sender_row: int
    receiver_row: int
    sender_id: str
    sender_sharing: int
    def __init__(self, sender_row: _Optional[int] = ..., receiver_row: _Optional[int] = ..., sender_id: _Optional[str] = ..., sender_sharing: _Optional[int] = ...) -> None: ...

class PushMatchesRequest(_message.Message):
    __slots__ = ("run_id", "digest", "pairs", "review_band")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    PAIRS_FIELD_NUMBER: _ClassVar[int]
    REVIEW_BAND_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    digest: str
    pairs: _containers.RepeatedCompositeFieldContainer[MatchedPair]
    review_band: float
    def __init__(self, run_id: _Optional[str] = ..., digest: _Optional[str] = ..., pairs: _Optional[_Iterable[_Union[MatchedPair, _Mapping]]] = ..., review_band: _Optional[float] = ...) -> None: ...

class PushMatchesResponse(_message.Message):
    __slots__ = ("pairs_received",)
    PAIRS_RECEIVED_FIELD_NUMBER: _ClassVar[int]
    pairs_received: int
    def __init__(self, pairs_received: _Optional[int] = ...) -> None: ...

class AdvanceRequest(_message.Message):
    __slots__ = ("run_id", "phase", "peer", "driver")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    PEER_FIELD_NUMBER: _ClassVar[int]
    DRIVER_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    phase: Phase
    peer: str
    driver: str
    def __init__(self, run_id: _Optional[str] = ..., phase: _Optional[_Union[Phase, str]] = ..., peer: _Optional[str] = ..., driver: _Optional[str] = ...) -> None: ...

class AdvanceResponse(_message.Message):
    __slots__ = ("phase", "done", "total", "unit", "message", "finished", "seconds")
    PHASE_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    UNIT_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    phase: Phase
    done: int
    total: int
    unit: str
    message: str
    finished: bool
    seconds: float
    def __init__(self, phase: _Optional[_Union[Phase, str]] = ..., done: _Optional[int] = ..., total: _Optional[int] = ..., unit: _Optional[str] = ..., message: _Optional[str] = ..., finished: _Optional[bool] = ..., seconds: _Optional[float] = ...) -> None: ...

class HoldRequest(_message.Message):
    __slots__ = ("run_id", "driver", "release")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    DRIVER_FIELD_NUMBER: _ClassVar[int]
    RELEASE_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    driver: str
    release: bool
    def __init__(self, run_id: _Optional[str] = ..., driver: _Optional[str] = ..., release: _Optional[bool] = ...) -> None: ...

class HoldResponse(_message.Message):
    __slots__ = ("held",)
    HELD_FIELD_NUMBER: _ClassVar[int]
    held: bool
    def __init__(self, held: _Optional[bool] = ...) -> None: ...

class RecutRequest(_message.Message):
    __slots__ = ("run_id", "threshold", "driver")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    DRIVER_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    threshold: float
    driver: str
    def __init__(self, run_id: _Optional[str] = ..., threshold: _Optional[float] = ..., driver: _Optional[str] = ...) -> None: ...

class RecutResponse(_message.Message):
    __slots__ = ("completed", "rewound", "threshold")
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    REWOUND_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    completed: Phase
    rewound: bool
    threshold: float
    def __init__(self, completed: _Optional[_Union[Phase, str]] = ..., rewound: _Optional[bool] = ..., threshold: _Optional[float] = ...) -> None: ...

class AbandonRequest(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class AbandonResponse(_message.Message):
    __slots__ = ("run_id", "completed", "was_open")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    WAS_OPEN_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    completed: Phase
    was_open: bool
    def __init__(self, run_id: _Optional[str] = ..., completed: _Optional[_Union[Phase, str]] = ..., was_open: _Optional[bool] = ...) -> None: ...

class GetStatusRequest(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class GetStatusResponse(_message.Message):
    __slots__ = ("identity", "run_id", "completed", "phase_seconds", "bytes_sent", "records", "own_matches", "peer_matches", "agreed_matches", "peak_rss_bytes", "scored_pairs", "audited_records", "reidentified", "reidentification_limit", "noise_edits", "reference_shared", "repeated_groups", "repeated_records", "missing_values", "unreadable_values", "noise_sigma", "noise_choice", "peer", "exposed", "recovered", "expected_precision", "expected_recall", "expected_f1", "min_expected_f1", "expected_spread", "fitted_precision", "fitted_recall", "fitted_f1", "fitted_partnered", "fitted_error_rate", "result", "threshold", "method")
    class PhaseSecondsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    class ReferenceSharedEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class MissingValuesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class UnreadableValuesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class RecoveredEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    IDENTITY_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_FIELD_NUMBER: _ClassVar[int]
    PHASE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    BYTES_SENT_FIELD_NUMBER: _ClassVar[int]
    RECORDS_FIELD_NUMBER: _ClassVar[int]
    OWN_MATCHES_FIELD_NUMBER: _ClassVar[int]
    PEER_MATCHES_FIELD_NUMBER: _ClassVar[int]
    AGREED_MATCHES_FIELD_NUMBER: _ClassVar[int]
    PEAK_RSS_BYTES_FIELD_NUMBER: _ClassVar[int]
    SCORED_PAIRS_FIELD_NUMBER: _ClassVar[int]
    AUDITED_RECORDS_FIELD_NUMBER: _ClassVar[int]
    REIDENTIFIED_FIELD_NUMBER: _ClassVar[int]
    REIDENTIFICATION_LIMIT_FIELD_NUMBER: _ClassVar[int]
    NOISE_EDITS_FIELD_NUMBER: _ClassVar[int]
    REFERENCE_SHARED_FIELD_NUMBER: _ClassVar[int]
    REPEATED_GROUPS_FIELD_NUMBER: _ClassVar[int]
    REPEATED_RECORDS_FIELD_NUMBER: _ClassVar[int]
    MISSING_VALUES_FIELD_NUMBER: _ClassVar[int]
    UNREADABLE_VALUES_FIELD_NUMBER: _ClassVar[int]
    NOISE_SIGMA_FIELD_NUMBER: _ClassVar[int]
    NOISE_CHOICE_FIELD_NUMBER: _ClassVar[int]
    PEER_FIELD_NUMBER: _ClassVar[int]
    EXPOSED_FIELD_NUMBER: _ClassVar[int]
    RECOVERED_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_PRECISION_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_RECALL_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_F1_FIELD_NUMBER: _ClassVar[int]
    MIN_EXPECTED_F1_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_SPREAD_FIELD_NUMBER: _ClassVar[int]
    FITTED_PRECISION_FIELD_NUMBER: _ClassVar[int]
    FITTED_RECALL_FIELD_NUMBER: _ClassVar[int]
    FITTED_F1_FIELD_NUMBER: _ClassVar[int]
    FITTED_PARTNERED_FIELD_NUMBER: _ClassVar[int]
    FITTED_ERROR_RATE_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    identity: str
    run_id: str
    completed: Phase
    phase_seconds: _containers.ScalarMap[str, float]
    bytes_sent: int
    records: int
    own_matches: int
    peer_matches: int
    agreed_matches: int
    peak_rss_bytes: int
    scored_pairs: int
    audited_records: int
    reidentified: float
    reidentification_limit: float
    noise_edits: float
    reference_shared: _containers.ScalarMap[str, int]
    repeated_groups: int
    repeated_records: int
    missing_values: _containers.ScalarMap[str, int]
    unreadable_values: _containers.ScalarMap[str, int]
    noise_sigma: float
    noise_choice: str
    peer: str
    exposed: float
    recovered: _containers.ScalarMap[str, float]
    expected_precision: float
    expected_recall: float
    expected_f1: float
    min_expected_f1: float
    expected_spread: str
    fitted_precision: float
    fitted_recall: float
    fitted_f1: float
    fitted_partnered: float
    fitted_error_rate: float
    result: str
    threshold: float
    method: str
    def __init__(self, identity: _Optional[str] = ..., run_id: _Optional[str] = ..., completed: _Optional[_Union[Phase, str]] = ..., phase_seconds: _Optional[_Mapping[str, float]] = ..., bytes_sent: _Optional[int] = ..., records: _Optional[int] = ..., own_matches: _Optional[int] = ..., peer_matches: _Optional[int] = ..., agreed_matches: _Optional[int] = ..., peak_rss_bytes: _Optional[int] = ..., scored_pairs: _Optional[int] = ..., audited_records: _Optional[int] = ..., reidentified: _Optional[float] = ..., reidentification_limit: _Optional[float] = ..., noise_edits: _Optional[float] = ..., reference_shared: _Optional[_Mapping[str, int]] = ..., repeated_groups: _Optional[int] = ..., repeated_records: _Optional[int] = ..., missing_values: _Optional[_Mapping[str, int]] = ..., unreadable_values: _Optional[_Mapping[str, int]] = ..., noise_sigma: _Optional[float] = ..., noise_choice: _Optional[str] = ..., peer: _Optional[str] = ..., exposed: _Optional[float] = ..., recovered: _Optional[_Mapping[str, float]] = ..., expected_precision: _Optional[float] = ..., expected_recall: _Optional[float] = ..., expected_f1: _Optional[float] = ..., min_expected_f1: _Optional[float] = ..., expected_spread: _Optional[str] = ..., fitted_precision: _Optional[float] = ..., fitted_recall: _Optional[float] = ..., fitted_f1: _Optional[float] = ..., fitted_partnered: _Optional[float] = ..., fitted_error_rate: _Optional[float] = ..., result: _Optional[str] = ..., threshold: _Optional[float] = ..., method: _Optional[str] = ...) -> None: ...
