"""Every key of a party's configuration file: its table, type, default and meaning, in one place.

The loader accepts exactly these keys (config.KNOWN_KEYS is derived from OPTIONS), and
docs/configuration.md and docs/party.example.toml are rendered from them
(pprl.party.config_reference), so the reference cannot drift from the code: the tests
compare every literal default with what load_config gives when the key is absent.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from pprl.protocol.data.error_model import DEFAULT_MODEL as REGISTERS_MODEL
from pprl.protocol.data.error_model import MODEL_NAMES, ONE_ERROR
from pprl.protocol.data.kinds import DEFAULT_DATE_FORMAT
from pprl.protocol.data.kinds import KINDS as ATTRIBUTE_KINDS
from pprl.protocol.data.records import BAD_VALUE_POLICIES
from pprl.protocol.encodings.registry import DEFAULT_ENCODING, ENCODINGS, Encoding
from pprl.protocol.expectation import DEFAULT_MIN_EXPECTED_F1
from pprl.protocol.linkage.matching import ASSIGNMENTS, GREEDY, OPTIMAL
from pprl.protocol.method import DEFAULT_MOVER_ODDS, DEFAULT_SATURATION
from pprl.protocol.method_settings import MethodParams
from pprl.protocol.model.classifier import CLASS_WEIGHTS, DEFAULT_C, TRAINERS
from pprl.protocol.model.features import FEATURES, PROJECTED
from pprl.protocol.privacy.audit import MEASURES
from pprl.protocol.sealed.joins import JOINS
from pprl.protocol.sealed.parameters import CRYPTO, DEFAULT_CRYPTO
from pprl.protocol.sealed.recipes import BLANKS_AGREE, FALLBACK, TRANSFORMS, UNORDERED
from pprl.protocol.sealed.session import (
    DEFAULT_THRESHOLDS,
    KERNEL_FEATURES_BEYOND_NAMES,
    KERNEL_FEATURES_NAMES,
    thresholds,
)
from pprl.protocol.vectors.release import RELEASES

# The privacy gate refuses to release a tensor when a dictionary attack on a sample of it
# re-identifies a larger share of records than this (see docs/research/privacy.md).
DEFAULT_REIDENTIFICATION_LIMIT = 0.10
DEFAULT_AUDIT_RECORDS = 200
# How long a daemon waits for its peer to answer a call, or to send the next chunk of a
# stream, before the phase fails with TIMED_OUT ([peer] timeout_seconds).
DEFAULT_PEER_TIMEOUT = 120.0

_METHOD = MethodParams()


@dataclass(frozen=True)
class Option:
    """One key of a party's file.

    `default` is the value a file may write and get what it gets without the key (None when
    there is no such value: then `default_text` says what absence means, or the rule when
    the default depends on other settings). `example` is a value to show where the default
    cannot be written; `yours` marks an optional key every party sets (shown uncommented in
    the example file). `encodings` lists the [method] encodings the key applies to (empty:
    all)."""

    table: str
    key: str
    type: str
    description: str
    default: Any = None
    default_text: str = ""
    required: bool = False
    example: Any = None
    yours: bool = False
    choices: tuple[str, ...] = ()
    encodings: tuple[str, ...] = ()

    @property
    def dotted(self) -> str:
        return f"{self.table}.{self.key}" if self.table else self.key


def _where(applies: Callable[[Encoding], bool]) -> tuple[str, ...]:
    """The registered encodings a key applies to."""
    return tuple(name for name, encoding in ENCODINGS.items() if applies(encoding))


def _method_encodings(key: str) -> tuple[str, ...]:
    """The encodings a [method] key applies to, from the registry: those whose own settings
    hold it (when it is one encoding's own) and that do not refuse it; empty: all."""
    owned = any(key in encoding.settings for encoding in ENCODINGS.values())
    names = _where(
        lambda e: (not owned or key in e.settings) and key not in e.refused_keys,
    )
    return () if len(names) == len(ENCODINGS) else names


def _fixed_by(key: str) -> str:
    """Where an encoding needs the key at one value, as the registry says."""
    fixed = [
        f'{json.dumps(e.fixed[key])} with encoding "{n}"'
        for n, e in ENCODINGS.items()
        if key in e.fixed
    ]
    return f" (always {' and '.join(fixed)})" if fixed else ""


_NOISY = _where(lambda e: e.takes_noise)
_KEYED = _where(lambda e: e.keyed)
_VECTORS = _where(lambda e: not e.sealed)

_TOP = (
    Option(
        "",
        "identity",
        "string",
        "This party's name: it must equal the common name (CN) of its certificate.",
        required=True,
        example="alice",
    ),
    Option(
        "",
        "listen",
        "HOST:PORT",
        "Where the daemon serves, over mutual TLS only (there is no insecure port).",
        required=True,
        example="0.0.0.0:50051",
    ),
    Option(
        "",
        "state_dir",
        "path",
        "The daemon's SQLite run state, tensors, model and results; back it up with the noise "
        "key it holds.",
        required=True,
        example="state",
    ),
)

_RECORDS = (
    Option(
        "records",
        "path",
        "path",
        "This party's records: a CSV file with a header; a blank cell is a missing value. "
        "Ids must be unique; records may share every compared value.",
        required=True,
        example="alice.csv",
    ),
    Option(
        "records",
        "id_column",
        "string",
        "The column holding each record's id (what the linkage result lists).",
        default="id",
        yours=True,
        example="id",
    ),
    Option(
        "records",
        "attributes",
        "list of strings",
        "The columns compared, in order.",
        default=["first", "middle", "last"],
        yours=True,
        example=["first", "middle", "last"],
    ),
    Option(
        "records",
        "kinds",
        "table of attribute = kind",
        'Each attribute\'s kind, e.g. { dob = "date", postcode = "number" }; attributes not '
        "listed are names. Names and text are compared with accents folded and punctuation "
        "read as spaces (apostrophes dropped).",
        default={},
        choices=tuple(ATTRIBUTE_KINDS),
    ),
    Option(
        "records",
        "date_formats",
        "table of attribute = string",
        'Each date attribute\'s strptime format, e.g. { dob = "%d/%m/%Y" }; it must give day, '
        f"month and year. Dates not listed are read as {DEFAULT_DATE_FORMAT}.",
        default={},
    ),
    Option(
        "records",
        "scales",
        "table of attribute = number",
        "For a quantity, the difference that is one unit of distance (e.g. { height = 0.5 }); "
        "for coordinates, the metres that are one unit and the tolerance. Every quantity and "
        "coordinates attribute needs one; it is part of the agreement.",
        default={},
    ),
    Option(
        "records",
        "on_bad_value",
        "string",
        'A cell its kind cannot read: "error" stops the run naming file, row and field; '
        '"missing" counts it as missing and reports it.',
        default="error",
        choices=BAD_VALUE_POLICIES,
    ),
)

_REFERENCE = (
    Option(
        "reference",
        "path",
        "path",
        "The public reference set: a CSV with a header naming its columns, identical on both "
        "sides (pprl reference builds one).",
        required=True,
        example="reference.csv",
    ),
    Option(
        "reference",
        "mapping",
        'list of ["attribute", "column"] pairs',
        "Which reference column each attribute is compared with. An entry such as "
        '["first+middle+last", "first+last"] compares the sorted words of several names; '
        '["middle:initial", "first"] a name\'s first letter; ["last:first-part", "last"] a '
        "compound surname's first part.",
        default_text=f'with error_model "{ONE_ERROR}": first, last, middle->first, '
        "middle->last; with any other: first, last, middle->first, the combined names and "
        "the initials of middle and first",
    ),
)

_METHOD_OPTIONS: tuple[Option, ...] = (
    Option(
        "method",
        "encoding",
        "string",
        'What a party encodes its records as. "sealed": blinded blocking keys and scores '
        'under encryption, no vector sent; "reference": the paper\'s release of noisy '
        "distances, which a peer can attack with a dictionary; the Bloom encodings send "
        "keyed filters or their noisy distances.",
        default=DEFAULT_ENCODING,
        choices=tuple(ENCODINGS),
    ),
    Option(
        "method",
        "sealed_keys",
        "list of strings",
        "The blocking-key recipes, attribute[:transform] joined by + (transforms: "
        f'{", ".join(TRANSFORMS)}); "first|last:soundex" reads either attribute; the marks '
        f"{FALLBACK} (a fallback, for rows no other recipe keys), {UNORDERED} (the parts in "
        f"either order) and {BLANKS_AGREE} (blanks agree) lead, in that order.",
        default_text="from the attributes' kinds and the error model; a schema with none (one "
        "name and a quantity, say) must name them",
    ),
    Option(
        "method",
        "sealed_thresholds",
        "list of numbers",
        "What each candidate pair's score is compared with under encryption: 0 decides, the "
        "rest order the one-to-one step (each party scales its scores so that a record "
        "against itself scores about 12).",
        default=list(thresholds(DEFAULT_THRESHOLDS)),
    ),
    Option(
        "method",
        "sealed_crypto",
        "string",
        "The named set of cryptographic parameters sealed linkage uses.",
        default=DEFAULT_CRYPTO,
        choices=tuple(CRYPTO),
    ),
    Option(
        "method",
        "sealed_kernel_features",
        "integer",
        "Random features per entry of a kernel model scored under encryption (even; a "
        "cosine and a sine per frequency); 0 scores a model linear in the distances.",
        default_text=f"{KERNEL_FEATURES_BEYOND_NAMES} when the records hold more than names, "
        f"{KERNEL_FEATURES_NAMES} on names alone trained with swaps (the register models), "
        "0 otherwise",
    ),
    Option(
        "method",
        "sealed_join",
        "string",
        '"graph": both parties join the blinded keys (each sees which peer rows share which '
        'keys with its own); "hidden": the evaluator alone, against key entries without rows, '
        "so each party learns only the peer row of its rows' best pairs.",
        default_text='"hidden" on names alone, "graph" beyond them',
        choices=tuple(JOINS),
    ),
    Option(
        "method",
        "sealed_names_within",
        "integer",
        "Hidden join only: each row names its accepted slots within this many buckets of its "
        "best (0: its best only); more links more, and lets a peer re-identify more.",
        default=_METHOD.sealed_names_within,
    ),
    Option(
        "method",
        "sealed_slots",
        "integer",
        "Hidden join only: the slots every key entry gets, its rows cut to this many and the "
        "rest filled with dummies, so that the counts tell nothing of who is in the "
        "evaluator's file (0: as many as its rows holding the key, and the count is told). "
        "Each party still learns as much as evaluator, so this alone hides little; it costs "
        "about a fifth more bytes.",
        default=_METHOD.sealed_slots,
    ),
    Option(
        "method",
        "classifier",
        "string",
        '"linear": a linear SVM; "logistic": logistic regression (a linear decision); "rbf": '
        "an RBF-kernel SVM (not under sealed linkage, which evaluates a linear form).",
        default_text=f'"linear" with error_model "{ONE_ERROR}", "logistic" otherwise',
        choices=TRAINERS,
    ),
    Option(
        "method",
        "c",
        "number",
        "The classifier's regularisation constant C.",
        default_text=", ".join(f"{c:g} for {name}" for name, c in DEFAULT_C.items()),
    ),
    Option(
        "method",
        "training_records",
        "integer",
        "How many own records are corrupted to make training pairs.",
        default=_METHOD.training_records,
    ),
    Option(
        "method",
        "error_model",
        "string",
        f'How training corrupts records into matches: "{ONE_ERROR}" is one edit; "registers" '
        'adds nicknames, middle initials, swaps and blanks, 1-3 errors; "variants" nicknames, '
        'middle initials and edits only; "registers-movers" also people who moved; "multi" '
        "edits alone; each other model makes one kind of error.",
        default_text=f'"{REGISTERS_MODEL}" (`pprl demo` writes "{ONE_ERROR}" for its built-in '
        "records, made with one edit a copy)",
        choices=MODEL_NAMES,
    ),
    Option(
        "method",
        "negatives_per_positive",
        "integer",
        "Non-matching training pairs per matching pair.",
        default=_METHOD.negatives_per_positive,
    ),
    Option(
        "method",
        "hard_negatives",
        "integer",
        "How many of those negatives are the record's nearest look-alikes (at most "
        "negatives_per_positive); under noise they mislead.",
        default_text=f"{_METHOD.hard_negatives} without noise (at most negatives_per_positive), "
        "0 with noise",
    ),
    Option(
        "method",
        "saturation",
        "number",
        "Caps each entry's distance at this quantile of the non-matches' (0 to 1), so two "
        "agreeing fields can outweigh one that differs.",
        default_text=f'{DEFAULT_SATURATION} with any error_model but "{ONE_ERROR}" and no '
        f"noise, 0 otherwise{_fixed_by('saturation')}",
    ),
    Option(
        "method",
        "mover_odds",
        "number",
        "A pair whose address fields all disagree (a move) still links when its other fields "
        "give log-odds of at least this; 0 lets the address veto any pair.",
        default_text=f'{DEFAULT_MOVER_ODDS:g} with any error_model but "{ONE_ERROR}" and no '
        f"noise, 0 otherwise{_fixed_by('mover_odds')}",
    ),
    Option(
        "method",
        "class_weight",
        "string",
        "How the classifier weighs the matching and non-matching training pairs.",
        default=_METHOD.class_weight,
        choices=CLASS_WEIGHTS,
    ),
    Option(
        "method",
        "top_k",
        "integer",
        "Accepted pairs kept per own record before the one-to-one step.",
        default=_METHOD.top_k,
    ),
    Option(
        "method",
        "soft_top_k",
        "integer",
        "Also write soft_links.csv: each own record's K best peer records, as per-run tokens, "
        "for federated learning.",
        default_text="none (no soft links written)",
        example=5,
    ),
    Option(
        "method",
        "assignment",
        "string",
        "The one-to-one step: greedy by score, or the pairs of largest total score.",
        default_text=f'"{GREEDY}" with error_model "{ONE_ERROR}" and no noise, "{OPTIMAL}" '
        "otherwise",
        choices=ASSIGNMENTS,
    ),
    Option(
        "method",
        "feature",
        "string",
        "What the classifier scores: cosines of the two records' distance vectors, in one "
        "of these forms.",
        default_text='"projected-cosine" with noise, "cosine" (the paper\'s) without'
        + _fixed_by("feature"),
        choices=FEATURES,
    ),
    Option(
        "method",
        "release",
        "string",
        'What is sent per value: "distances", R distances, or "projected", k coordinates.',
        default_text=f'"projected" with the features {", ".join(PROJECTED)}, "distances" '
        "otherwise" + _fixed_by("release"),
        choices=RELEASES,
    ),
    Option(
        "method",
        "projected_components",
        "integer",
        "The k components the projected features keep per reference column; fewer send fewer "
        "bytes for a little F1.",
        default_text="sqrt(2R) for R reference rows, at least 30",
        example=30,
    ),
    Option(
        "method",
        "noise_sigma",
        '"auto" or number',
        "Gaussian noise on the released distances, in units of the reference set's sigma0 (0: "
        'none). "auto": AGREE finds the smallest sigma at which this party\'s release passes '
        "its own gate, and both parties take the larger of their two.",
        default_text='"auto" with the privacy gate on (max_reidentification below 1) and no '
        "attack_success; 0 otherwise",
        example="auto",
    ),
    Option(
        "method",
        "attack_success",
        "number",
        "Instead of noise_sigma: the target success (strictly between 0 and 1) of an attack "
        "on one distance; AGREE derives noise_sigma from it.",
        default_text="none (noise_sigma decides)",
        example=0.3,
    ),
    Option(
        "method",
        "bloom_bits",
        "integer",
        "Bits of each attribute's keyed q-gram Bloom filter (a power of two).",
        default=_METHOD.bloom_bits,
    ),
    Option(
        "method",
        "bloom_hashes",
        "integer",
        "Bit positions set per q-gram.",
        default=_METHOD.bloom_hashes,
    ),
    Option(
        "method",
        "bloom_q",
        "integer",
        "Letters per q-gram.",
        default=_METHOD.bloom_q,
    ),
)

_PRIVACY = (
    Option(
        "privacy",
        "max_reidentification",
        "number",
        "The privacy gate refuses to send a release when a dictionary attack on a sample "
        "re-identifies more than this share of records (1 turns the gate off); filters sent "
        "as they are take no noise, and for them the gate only reports.",
        default=DEFAULT_REIDENTIFICATION_LIMIT,
        encodings=_VECTORS,
    ),
    Option(
        "privacy",
        "audit_records",
        "integer",
        "How many records the gate attacks.",
        default=DEFAULT_AUDIT_RECORDS,
        encodings=_VECTORS,
    ),
    Option(
        "privacy",
        "dictionary",
        "path",
        "Public names to attack with: columns name,kind(,weight) with kind first or surname, "
        "or any other CSV as one list (pprl dictionary writes one).",
        default_text="the census first and last names",
        example="names.csv",
        encodings=_VECTORS,
    ),
    Option(
        "privacy",
        "population",
        "path",
        "A public list of people (a voter roll) with the attributes' columns: the gate also "
        "runs the attacker who compares every attribute of a record at once with each person.",
        default_text="none (that attacker does not run)",
        example="people.csv",
        encodings=_VECTORS,
    ),
    Option(
        "privacy",
        "measure",
        "string",
        'When a record counts as re-identified: "every-name", all its names recovered; '
        '"any-name", one.',
        default="every-name",
        choices=MEASURES,
        encodings=_VECTORS,
    ),
    Option(
        "privacy",
        "noise_key",
        "path",
        "The secret the release noise is derived from, so every run releases the same noisy "
        "vector for a value.",
        default_text="state_dir/noise.key, created on first start (back it up)",
        example="noise.key",
        encodings=_NOISY,
    ),
    Option(
        "privacy",
        "bloom_key",
        "path",
        "The key both parties hold for a Bloom encoding (hex digits, at least 16 bytes), "
        "exchanged out of band and never sent; required with those encodings.",
        default_text="none",
        example="bloom.key",
        encodings=_KEYED,
    ),
    Option(
        "privacy",
        "min_expected_f1",
        "number",
        "TRAIN stops the run, before anything is sent, when this party's classifier is "
        "expected to link worse than this F1 on held-out synthetic pairs (0: no minimum, no "
        "estimate).",
        default=DEFAULT_MIN_EXPECTED_F1,
    ),
)

_TLS = tuple(
    Option("tls", key, "path", description, required=True, example=example)
    for key, description, example in (
        ("cert", "This party's certificate (PEM); pprl certs makes development ones.", "alice.pem"),
        ("key", "Its private key (PEM).", "alice.key"),
        ("ca", "The CA certificate both parties and the coordinator trust (PEM).", "ca.pem"),
    )
)


def _peer_options(table: str, note: str) -> tuple[Option, ...]:
    return (
        Option(
            table,
            "identity",
            "string",
            "The peer's certificate identity: only it may call this daemon's Peer service." + note,
            required=True,
            example="bob",
        ),
        Option(
            table,
            "address",
            "HOST:PORT",
            "Where the peer's daemon listens.",
            required=True,
            example="b.example:50051",
        ),
        Option(
            table,
            "timeout_seconds",
            "number",
            "A peer silent (no answer, no next chunk) or unreachable this long fails the phase.",
            default=DEFAULT_PEER_TIMEOUT,
        ),
    )


_PEERS = _peer_options(
    "peer", " Give [peer] for one peer, or a [[peers]] table per peer for several, not both."
) + _peer_options("peers", "")

_REST = (
    Option(
        "coordinator",
        "identity",
        "string",
        "The coordinator's certificate identity: only it may call the Control service.",
        required=True,
        example="coordinator",
    ),
    Option(
        "wire_log",
        "path",
        "path",
        "Log every message this daemon receives or sends to this file.",
        default_text="none (no wire log)",
        example="wire.log",
    ),
    Option(
        "matching",
        "scheduler",
        "string",
        "tcp://HOST:PORT or tls://HOST:PORT of this party's own Dask scheduler (pip install "
        "'pprl[distributed]'): the matching blocks run there, and in sealed linkage the "
        "blinding of the keys, whose workers then hold the run's blinding scalar; keep it "
        "inside the party's network, tls:// across machines.",
        default_text="none (the daemon and its local workers do the work)",
        example="tcp://10.0.0.5:8786",
    ),
    Option(
        "matching",
        "workers",
        "integer",
        "Local worker processes for sealed linkage's blinding when no scheduler is set (0: "
        "one a core; 1: none, the daemon blinds). They start only for more keys than one "
        "chunk, each holding one chunk at a time.",
        default=0,
        encodings=_where(lambda e: e.sealed),
    ),
    Option(
        "matching",
        "chunk_values",
        "integer",
        "Blocking keys a worker (local or on the scheduler's cluster) blinds at once: 32 "
        "bytes each way a key, so this bounds a worker's memory whatever the file's size.",
        default=50_000,
        encodings=_where(lambda e: e.sealed),
    ),
    Option(
        "matching",
        "threshold",
        "number",
        "Keep the pairs this party's classifier accepts at or above this cut (0: all it "
        "accepts; higher: fewer, surer pairs). In sealed linkage a match probability below 1, "
        "applied at REVEAL; elsewhere a score, applied in MATCH. A coordinator may raise it "
        "for a run (`pprl coordinate --run-id RUN --threshold CUT`), never lower it.",
        default=0.0,
        encodings=_where(lambda e: e.cuts),
    ),
    Option(
        "matching",
        "review_band",
        "number",
        "Mark agreed pairs scoring within this much above the threshold for review in "
        "linkage.csv (in sealed linkage a match probability: 0.9 marks those below 0.9 at "
        "the cut 0); when both parties set one, review.csv also lists the pairs only one "
        "party accepted (0: none).",
        default=0.0,
    ),
    Option(
        "limits",
        "max_peer_records",
        "integer",
        "AGREE refuses a peer with more records than this.",
        default_text="as many as half the machine's memory holds at 3.4 KB a row",
        example=1000000,
    ),
    Option(
        "limits",
        "peer_records_ratio",
        "number",
        "The most records a peer may link, as a multiple of this party's own; AGREE refuses "
        "a peer over it (PEER_TOO_LARGE), within max_peer_records. A privacy limit: each "
        "record a peer declares is a guess about your file it may test. Raise it for a small "
        "file linked against a large register.",
        default=2.0,
    ),
    Option(
        "development",
        "seed",
        "integer",
        "Tests and benchmarks only, never in production: makes the secret shuffle, the noise "
        "and the training sample replayable by anyone who knows it.",
        default_text="none (drawn from the operating system)",
        example=42,
    ),
)

# A [method] key applies to the encodings the registry says it does.
_METHOD_OPTIONS = tuple(replace(o, encodings=_method_encodings(o.key)) for o in _METHOD_OPTIONS)

OPTIONS: tuple[Option, ...] = (
    _TOP + _RECORDS + _REFERENCE + _METHOD_OPTIONS + _PRIVACY + _TLS + _PEERS + _REST
)

# What each table is for, in the order the reference lists them.
TABLES: dict[str, str] = {
    "": "The top level: who this party is, where it serves and keeps its state.",
    "records": "This party's records and how each attribute is read.",
    "reference": "The public reference set both parties compare their records with.",
    "method": "How both parties link. All of it is part of the agreement digest: both "
    "parties must set the same values.",
    "privacy": "The privacy gate (for the encodings that send vectors) and the "
    "expected-quality check (for all).",
    "tls": "This party's certificate and the CA it trusts; every connection is mutual TLS.",
    "peer": "The party this daemon links with.",
    "peers": "Several peers, a [[peers]] table each, in place of [peer]; the coordinator "
    "names each run's peer.",
    "coordinator": "The coordinator allowed to drive runs.",
    "wire_log": "Optional: a log of every message.",
    "matching": "Optional: where the matching runs and what it accepts.",
    "limits": "Optional: what this daemon refuses.",
    "development": "Tests and benchmarks only.",
}


def known_keys() -> dict[str, tuple[str, ...]]:
    """Every key a party's file may hold, by table ("" is the top level)."""
    return {
        table: tuple(option.key for option in OPTIONS if option.table == table) for table in TABLES
    }


def option(table: str, key: str) -> Option:
    """The row of one key (KeyError: no such key)."""
    for row in OPTIONS:
        if (row.table, row.key) == (table, key):
            return row
    raise KeyError(f"{table}.{key}" if table else key)
