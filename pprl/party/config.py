"""A party daemon's TOML configuration, checked up front so a bad key fails before serving."""

from __future__ import annotations

import difflib
import json
import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from pprl.party.options import (
    DEFAULT_AUDIT_RECORDS,
    DEFAULT_PEER_TIMEOUT,
    DEFAULT_REIDENTIFICATION_LIMIT,
    known_keys,
)
from pprl.party.tls_files import TlsFiles
from pprl.protocol.data.error_model import DEFAULT_MODEL as REGISTERS_MODEL
from pprl.protocol.data.error_model import MODEL_NAMES
from pprl.protocol.data.kinds import (
    DEFAULT_DATE_FORMAT,
    DEFAULT_KIND,
    SCALED_KINDS,
    Attribute,
    kinds_of,
    scales_of,
)
from pprl.protocol.data.kinds import KINDS as ATTRIBUTE_KINDS
from pprl.protocol.data.records import BAD_VALUE_POLICIES
from pprl.protocol.data.reference import MappingEntry, default_mapping
from pprl.protocol.encodings.base import Encoding
from pprl.protocol.encodings.registry import DEFAULT_ENCODING, ENCODINGS, encoding_named
from pprl.protocol.errors import InputError, SettingError
from pprl.protocol.expectation import DEFAULT_MIN_EXPECTED_F1
from pprl.protocol.linkage.matching import ASSIGNMENTS
from pprl.protocol.method import method_params
from pprl.protocol.method_settings import BLOOM_SETTINGS as BLOOM_KEYS
from pprl.protocol.method_settings import SEALED_SETTINGS as SEALED_KEYS
from pprl.protocol.method_settings import MethodParams
from pprl.protocol.model.classifier import CLASS_WEIGHTS, TRAINERS
from pprl.protocol.model.features import FEATURES
from pprl.protocol.privacy.audit import MEASURES
from pprl.protocol.sealed import session
from pprl.protocol.sealed.joins import DEFAULT_SLOTS, default_join, join_named
from pprl.protocol.sealed.session import DEFAULT_KERNEL_FEATURES
from pprl.protocol.vectors.bloom import BloomParams
from pprl.protocol.vectors.release import RELEASES

# noise_sigma = "auto": chosen at AGREE (PartyConfig.auto_noise).
AUTO = "auto"
# Every key a party's file may hold, by table ("" is the top level), as pprl.party.options
# lists them. Loading refuses any other key, so a typo fails instead of silently leaving a
# default in place; the _Section accessors refuse to read a key missing here, so a key added
# later cannot be left out of the options, nor of docs/configuration.md.
KNOWN_KEYS: dict[str, tuple[str, ...]] = known_keys()
TABLES = tuple(t for t in KNOWN_KEYS if t)


@dataclass(frozen=True)
class PeerEndpoint:
    """A party this daemon may link with: where to reach it, the identity its certificate
    must carry, and how long to wait for it."""

    identity: str
    address: str
    timeout: float = DEFAULT_PEER_TIMEOUT


@dataclass(frozen=True)
class PrivacySettings:
    """The privacy gate: the share of sampled records a dictionary attack may re-identify,
    how many records it samples, and the public name list it attacks with (None: the census
    first and last names)."""

    max_reidentification: float = DEFAULT_REIDENTIFICATION_LIMIT
    audit_records: int = DEFAULT_AUDIT_RECORDS
    dictionary: Path | None = None
    # "every-name": a record counts when all its names are recovered; "any-name": when one is.
    measure: str = "every-name"
    # The secret release noise is derived from (None: state_dir/noise.key, made on first start).
    noise_key: Path | None = None
    # A public list of people (CSV with the attributes' columns) for the attacker who combines
    # a record's attributes (None: that attacker does not run; docs/research/privacy.md).
    population: Path | None = None
    # The key both parties hold for [method] encoding = "bloom" (pprl.party.credentials.bloom_key).
    bloom_key: Path | None = None
    # TRAIN stops the run, before anything is sent, when this party's classifier is expected
    # to link worse than this F1 (pprl.protocol.expectation); 0 estimates nothing.
    min_expected_f1: float = DEFAULT_MIN_EXPECTED_F1


# A peer may link at most twice as many records as this party by default: equal registers
# and one twice the other's size link without a setting, and a peer cannot declare a
# population list against a small file without the custodian raising it.
DEFAULT_PEER_RECORDS_RATIO = 2.0
# Values a worker blinds at once ([matching] chunk_values): 1.6 MB each way, about 3 s.
DEFAULT_CHUNK_VALUES = 50_000


@dataclass(frozen=True)
class PartyConfig:
    identity: str
    listen: str
    state_dir: Path
    records_path: Path
    id_column: str
    attributes: tuple[str, ...]
    reference_path: Path
    mapping: tuple[MappingEntry, ...]
    tls: TlsFiles
    # [peer], or every [[peers]] table, in the file's order; never empty, no identity twice.
    peers: tuple[PeerEndpoint, ...]
    coordinator_identity: str
    method: MethodParams = field(default_factory=MethodParams)
    wire_log: Path | None = None
    # A Dask scheduler of this party's own cluster for the matching blocks and the sealed
    # blinding; None: in-process, with `workers` local processes for the blinding (0: a core).
    scheduler: str | None = None
    workers: int = 0
    chunk_values: int = DEFAULT_CHUNK_VALUES  # values a worker blinds at once
    # [matching] threshold: this party's classifier accepts a pair scoring above it (0: the
    # classifier's own boundary; higher trades recall for precision). review_band: an agreed
    # pair scoring within this much above the threshold is marked for review in linkage.csv.
    threshold: float = 0.0
    review_band: float = 0.0
    # A target attack success tau; the agreement turns it into method.noise_sigma with the
    # reference set's sigma0 (FedSim appendix A). None: noise_sigma as configured.
    attack_success: float | None = None
    # noise_sigma = "auto": AGREE finds the smallest sigma at which this party's release
    # passes its own gate, and both parties take the larger of their two (method.noise_sigma
    # is 0 until then; the other noise-dependent defaults are already the noisy ones).
    auto_noise: bool = False
    privacy: PrivacySettings = field(default_factory=PrivacySettings)
    # Each attribute's kind, date format and scale; attributes not listed are names.
    schema: tuple[Attribute, ...] = ()
    # "error": a cell its kind cannot read stops the run; "missing": counted as missing.
    on_bad_value: str = "error"
    # Whether the register error model was chosen because [records] names its own
    # attributes (no [method] error_model): AGREE says so.
    registers_by_default: bool = False
    # [development] seed: makes a daemon's linkage replayable for tests and benchmarks. Anyone
    # who knows it can replay the shuffle, the noise and the training sample, so it must never
    # be set in production. None: the daemon draws them from the operating system.
    development_seed: int | None = None
    # [limits] max_peer_records: the most records a peer may link with this daemon, refused at
    # AGREE above it (matching holds the peer's rows in memory).
    max_peer_records: int = field(default_factory=lambda: default_max_peer_records())
    # [limits] peer_records_ratio: the most records a peer may link, as a multiple of this
    # party's own: a privacy limit, since each record a peer declares is a guess it may test.
    peer_records_ratio: float = DEFAULT_PEER_RECORDS_RATIO
    source: str = ""

    def accepted_peer_records(self, own_records: int) -> int:
        """The most records this party accepts from a peer when it links `own_records`: the
        ratio's share of them (at least one), within what matching can hold."""
        by_ratio = max(1, math.ceil(self.peer_records_ratio * own_records))
        return min(self.max_peer_records, by_ratio)

    def peer(self, identity: str) -> PeerEndpoint:
        """The configured peer with this identity (KeyError: not one of them)."""
        for peer in self.peers:
            if peer.identity == identity:
                return peer
        raise KeyError(identity)

    @property
    def peer_identities(self) -> tuple[str, ...]:
        return tuple(peer.identity for peer in self.peers)


def attribute_schema(config: PartyConfig) -> tuple[Attribute, ...]:
    """Every configured attribute with its kind (names unless configured otherwise)."""
    given = {attribute.name: attribute for attribute in config.schema}
    return tuple(given.get(name, Attribute(name)) for name in config.attributes)


def attribute_kinds(config: PartyConfig) -> dict[str, str]:
    return kinds_of(attribute_schema(config))


def attribute_scales(config: PartyConfig) -> dict[str, float]:
    return scales_of(attribute_schema(config))


def _dotted(table: str, key: str) -> str:
    return f"{table}.{key}" if table else key


def _known_in(table: str) -> tuple[str, ...]:
    """The keys a table may hold ("peers[1]" holds those of "peers"); the top level also
    holds the tables."""
    return KNOWN_KEYS[table.split("[")[0]] + (TABLES if not table else ())


def _unknown(path: Path, table: str, key: str, value: Any) -> InputError:
    """An unknown key, with the known key it most likely meant."""
    if not table and key == "audit":
        # The wire log's table until it was renamed: "audit" is the dictionary attack.
        old = value.get("wire_log") if isinstance(value, dict) else None
        example = json.dumps(old if isinstance(old, str) else "wire.log")
        return InputError(
            f"[audit] wire_log is now [wire_log] path: write [wire_log] path = {example}",
            path=str(path),
            field=key,
        )
    known = _known_in(table)
    # [[peers]] repeats [peer]'s keys: pointing at [peer] is enough.
    elsewhere = [
        _dotted(t, key)
        for t, keys in KNOWN_KEYS.items()
        if t not in (table, "peers") and key in keys
    ]
    close = difflib.get_close_matches(key, known, n=1)
    if elsewhere:
        hint = "did you mean " + " or ".join(repr(k) for k in elsewhere) + "?"
    elif close:
        hint = f"did you mean {close[0]!r}?"
    elif table:
        hint = f"the keys of [{table}] are {', '.join(sorted(known))}"
    else:
        tables = ", ".join(f"[{t}]" for t in TABLES)
        hint = f"the top-level keys are {', '.join(KNOWN_KEYS[''])} and the tables {tables}"
    kind = "table" if isinstance(value, dict) else "key"
    return InputError(f"unknown {kind}; {hint}", path=str(path), field=_dotted(table, key))


def _check_known(data: dict[str, Any], path: Path) -> None:
    """Refuse any key or table KNOWN_KEYS does not list, before a single value is read."""
    for key, value in data.items():
        if key not in _known_in(""):
            raise _unknown(path, "", key, value)
    for table in TABLES:
        value = data.get(table)
        if table == "peers" and isinstance(value, list):
            for index, entry in enumerate(value):
                stray = (
                    [k for k in entry if k not in KNOWN_KEYS[table]]
                    if isinstance(entry, dict)
                    else []
                )
                if stray:
                    raise _unknown(path, f"peers[{index}]", stray[0], entry[stray[0]])
            continue
        if not isinstance(value, dict):
            continue
        for key in value:
            if key not in KNOWN_KEYS[table]:
                raise _unknown(path, table, key, value[key])


class _Section:
    """Typed access to one TOML table, with errors that name the file and the key."""

    def __init__(self, data: dict[str, Any], path: Path, table: str = "") -> None:
        self.data = data
        self.path = path
        self.table = table
        self.prefix = f"{table}." if table else ""

    def _error(self, key: str, message: str) -> InputError:
        return InputError(message, path=str(self.path), field=f"{self.prefix}{key}")

    def _get(self, key: str, default: Any = None) -> Any:
        """The value of a key KNOWN_KEYS lists; reading any other is a bug in this module."""
        if key not in _known_in(self.table):
            raise KeyError(f"{self.prefix}{key} is read but missing from KNOWN_KEYS")
        return self.data.get(key, default)

    def has(self, key: str) -> bool:
        return self._get(key) is not None

    def section(self, key: str, required: bool = True) -> _Section:
        value = self._get(key, {} if not required else None)
        if not isinstance(value, dict):
            raise self._error(key, "missing table" if value is None else "must be a table")
        return _Section(value, self.path, key)

    def string(self, key: str, default: str | None = None) -> str:
        value = self._get(key, default)
        if value is None:
            raise self._error(key, "missing key")
        if not isinstance(value, str) or not value.strip():
            raise self._error(key, "must be a non-empty string")
        return value

    def file(self, key: str, default: str | None = None) -> Path:
        value = Path(self.string(key, default))
        return value if value.is_absolute() else (self.path.parent / value).resolve()

    def strings(self, key: str, default: list[str] | None = None) -> tuple[str, ...]:
        value = self._get(key, default)
        if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
            raise self._error(key, "must be a non-empty list of strings")
        return tuple(value)

    def mapping(self, key: str, default: tuple[MappingEntry, ...]) -> tuple[MappingEntry, ...]:
        value = self._get(key)
        if value is None:
            return default
        ok = isinstance(value, list) and bool(value)
        ok = ok and all(
            isinstance(e, list) and len(e) == 2 and all(isinstance(s, str) for s in e)
            for e in value
        )
        if not ok:
            raise self._error(key, 'must be a list of ["attribute", "reference column"] pairs')
        return tuple((a, c) for a, c in value)

    def table_of_strings(self, key: str) -> dict[str, str]:
        value = self._get(key, {})
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) and v for k, v in value.items()
        ):
            raise self._error(key, 'must be a table of attribute = "text", e.g. { dob = "date" }')
        return dict(value)

    def number(self, key: str, default: float) -> float:
        return self._positive(key, self._get(key, default))

    def at_least_zero(self, key: str, default: float) -> float:
        value = self._get(key, default)
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or value < 0:
            raise self._error(key, "must be a number >= 0")
        return float(value)

    def table_of_numbers(self, key: str) -> dict[str, float]:
        """attribute = positive number, each value checked under its own dotted key."""
        value = self._get(key, {})
        if not isinstance(value, dict):
            raise self._error(key, "must be a table of attribute = number, e.g. { height = 0.5 }")
        return {name: self._positive(f"{key}.{name}", v) for name, v in value.items()}

    def _positive(self, key: str, value: Any) -> float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or value <= 0:
            raise self._error(key, "must be a positive number")
        return float(value)

    def share(self, key: str, default: float | None, low_open: bool = False) -> float | None:
        """A number within [0, 1] (or (0, 1) with `low_open`)."""
        value = self._get(key, default)
        if value is None:
            return None
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        ok = ok and math.isfinite(value) and (0 < value < 1 if low_open else 0 <= value <= 1)
        if not ok:
            span = "strictly between 0 and 1" if low_open else "within 0..1"
            raise self._error(key, f"must be a number {span}")
        return float(value)

    def limit(self, key: str, default: float) -> float:
        """A share within [0, 1] that always has a value."""
        value = self.share(key, default)
        return default if value is None else value

    def count(self, key: str, default: int, minimum: int = 1) -> int:
        value = self._get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            need = "a positive whole number" if minimum == 1 else f"a whole number >= {minimum}"
            raise self._error(key, f"must be {need}")
        return value


def _address(section: _Section, key: str, default: str | None = None) -> str:
    value = section.string(key, default)
    host, _, port = value.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise section._error(key, f"must be HOST:PORT, got {value!r}")
    return value


def _peer(section: _Section) -> PeerEndpoint:
    return PeerEndpoint(
        identity=section.string("identity"),
        address=_address(section, "address"),
        timeout=section.number("timeout_seconds", DEFAULT_PEER_TIMEOUT),
    )


def _peers(data: dict[str, Any], path: Path) -> tuple[PeerEndpoint, ...]:
    """[peer] for one peer, or [[peers]] for several: never both, never one identity twice."""
    listed = data.get("peers")
    if listed is None:
        return (_peer(_Section(data, path).section("peer")),)
    if "peer" in data:
        raise InputError(
            "give [peer] for one peer or [[peers]] for several, not both",
            path=str(path),
            field="peers",
        )
    if not isinstance(listed, list) or not listed or not all(isinstance(e, dict) for e in listed):
        raise InputError(
            "must be one or more [[peers]] tables, each with identity and address",
            path=str(path),
            field="peers",
        )
    peers: list[PeerEndpoint] = []
    for index, entry in enumerate(listed):
        peer = _peer(_Section(entry, path, f"peers[{index}]"))
        if peer.identity in (p.identity for p in peers):
            raise InputError(
                f"{peer.identity!r} is listed twice: each peer once",
                path=str(path),
                field=f"peers[{index}].identity",
            )
        peers.append(peer)
    return tuple(peers)


def _scheduler(section: _Section) -> str | None:
    """The party's Dask scheduler, for MATCH's blocks and the sealed blinding."""
    if not section.has("scheduler"):
        return None
    value = section.string("scheduler")
    scheme, _, rest = value.partition("://")
    host, _, port = rest.rpartition(":")
    if scheme not in ("tcp", "tls") or not host or not port.isdigit():
        raise section._error(
            "scheduler", f"must be tcp://HOST:PORT or tls://HOST:PORT, got {value!r}"
        )
    return value


def _threshold(section: _Section, method: MethodParams) -> float:
    """The party's own cut, >= 0 (the candidates' bounds hold above 0); only for an encoding
    whose MATCH can apply it."""
    value = section.at_least_zero("threshold", 0.0)
    if value and not encoding_named(method.encoding).cuts:
        raise section._error(
            "threshold",
            f"applies to encoding = {_cutting()} only (its MATCH cuts before the one-to-one "
            "step); the others accept above 0",
        )
    if value >= 1 and encoding_named(method.encoding).cuts_at_reveal:
        raise section._error(
            "threshold", f"is a match probability in sealed linkage: below 1, got {value:g}"
        )
    return value


def _cutting() -> str:
    return " or ".join(f'"{e.name}"' for e in ENCODINGS.values() if e.cuts)


def _optional_file(section: _Section, key: str) -> Path | None:
    return section.file(key) if section.has(key) else None


def _encoding(section: _Section) -> Encoding:
    return ENCODINGS[_choice(section, "encoding", tuple(ENCODINGS), DEFAULT_ENCODING)]


def _bloom(section: _Section) -> dict[str, Any]:
    """The encoding and its filter settings, refusing the keys it does not take (the filters
    sent as they are take no noise, nor the noise-dependent settings)."""
    encoding = _encoding(section)
    keys = [key for key in BLOOM_KEYS if key in section.data]
    if not encoding.keyed:
        if keys:
            keyed = " or ".join(f'"{e.name}"' for e in ENCODINGS.values() if e.keyed)
            raise section._error(keys[0], f"applies to encoding = {keyed} only")
        return {}
    for key in encoding.refused_keys:
        if key in section.data and not (key == "noise_sigma" and section.data[key] == 0):
            raise section._error(
                key,
                f'does not apply to encoding = "{encoding.name}" (the filters are sent as they '
                'are; encoding = "bloom-distances" releases their noisy distances)',
            )
    defaults = MethodParams()
    settings = {key: section.count(key, getattr(defaults, key)) for key in BLOOM_KEYS}
    try:
        BloomParams(settings["bloom_bits"], settings["bloom_hashes"], settings["bloom_q"])
    except ValueError as error:
        raise section._error(keys[0] if keys else "encoding", str(error)) from None
    return {"encoding": encoding.name, **settings}


def _default_hint(section: _Section) -> str:
    """Said where a setting meets the default encoding without naming it: the way back to
    the reference release, and what it costs."""
    if "encoding" in section.data:
        return ""
    return (
        '; "sealed" is the default encoding: encoding = "reference" releases noisy vectors '
        "instead, which a peer can attack with a dictionary (docs/research/privacy.md)"
    )


def _sealed(
    section: _Section, attributes: tuple[str, ...], kinds: Mapping[str, str], error_model: str
) -> dict[str, Any]:
    """The sealed encoding's recipes (a list of strings, each checked against the records'
    attributes; the schema's default ones, for its kinds and training's `error_model`, when
    none are named), thresholds (a list of numbers) and parameter set; refused for any other
    encoding."""
    keys = [key for key in SEALED_KEYS if key in section.data]
    if not _encoding(section).sealed:
        if keys:
            raise section._error(keys[0], 'applies to encoding = "sealed" only')
        return {}
    for key in _encoding(section).refused_keys:
        if key in section.data and section.data[key] != 0:
            raise section._error(
                key,
                'does not apply to encoding = "sealed" (no vectors are sent, no scores read)'
                + _default_hint(section),
            )
    out: dict[str, Any] = {"encoding": _encoding(section).name}
    own_kinds = {a: kinds[a] for a in attributes}
    if "sealed_keys" in section.data:
        written = ",".join(section.strings("sealed_keys"))
        try:
            session.recipes(written, attributes)
        except SettingError as error:
            raise section._error("sealed_keys", str(error)) from None
        out["sealed_keys"] = written
    else:
        try:
            hidden = join_named(_join(section, own_kinds)).hidden
            out["sealed_keys"] = session.default_recipes(own_kinds, error_model, hidden)
        except SettingError as error:
            raise section._error("sealed_keys", str(error) + _default_hint(section)) from None
    if "sealed_thresholds" in section.data:
        value = section.data["sealed_thresholds"]
        numbers = isinstance(value, list) and all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in value
        )
        if not numbers or not value:
            raise section._error("sealed_thresholds", "must be a non-empty list of numbers")
        out["sealed_thresholds"] = session.thresholds_text(value)
    if "sealed_crypto" in section.data:
        out["sealed_crypto"] = section.string("sealed_crypto")
    if "sealed_kernel_features" in section.data:
        out["sealed_kernel_features"] = section.count(
            "sealed_kernel_features", DEFAULT_KERNEL_FEATURES, minimum=0
        )
    else:
        out["sealed_kernel_features"] = session.default_kernel_features(own_kinds, error_model)
    out["sealed_join"] = _join(section, own_kinds)
    if "sealed_names_within" in section.data:
        if not join_named(out["sealed_join"]).hidden:
            raise section._error("sealed_names_within", 'needs sealed_join = "hidden"')
        out["sealed_names_within"] = section.count("sealed_names_within", 0, minimum=0)
    if "sealed_slots" in section.data:
        if not join_named(out["sealed_join"]).hidden:
            raise section._error("sealed_slots", 'needs sealed_join = "hidden"')
        out["sealed_slots"] = section.count("sealed_slots", DEFAULT_SLOTS, minimum=0)
    return out


def _join(section: _Section, kinds: Mapping[str, str]) -> str:
    """The join the operator names, or the kinds' default (pprl.protocol.sealed.joins)."""
    if "sealed_join" not in section.data:
        return default_join(kinds)
    name = section.string("sealed_join")
    try:
        join_named(name)
    except SettingError as error:
        raise section._error("sealed_join", str(error)) from None
    return name


def _method(
    section: _Section,
    gate_on: bool,
    attributes: tuple[str, ...] = ("first", "middle", "last"),
    kinds: Mapping[str, str] | None = None,
) -> MethodParams:
    """The [method] table. TRAIN corrupts the records with the register error model unless
    error_model says otherwise: a custodian's records are a register's, with or without
    [records] attributes (the built-in demo data, made with one edit a record, says
    "one-error": pprl.party.local.prepare)."""
    defaults = MethodParams()
    bloom = _bloom(section)
    default_model = REGISTERS_MODEL
    error_model = _choice(section, "error_model", MODEL_NAMES, default_model)
    sealed = _sealed(section, attributes, kinds or {a: "name" for a in attributes}, error_model)
    negatives = section.count("negatives_per_positive", defaults.negatives_per_positive)
    sigma = section.data.get("noise_sigma", 0.0)
    auto = is_auto_noise(section, gate_on)
    if auto:
        sigma = 0.0
    ok = isinstance(sigma, int | float) and not isinstance(sigma, bool) and math.isfinite(sigma)
    if not ok or sigma < 0:
        raise section._error("noise_sigma", 'must be a number >= 0 or "auto"')
    if (sigma or auto) and "attack_success" in section.data:
        raise section._error("attack_success", "set either noise_sigma or attack_success, not both")
    # A target attack success, or automatic noise, always means noise; its sigma is found at
    # AGREE.
    noisy = float(sigma) or (1.0 if section.has("attack_success") or auto else 0.0)
    # Defaults that depend on each other (on the noise, the error model, the feature) come
    # from method_params, as for every other caller: only the keys the file sets are passed.
    given: dict[str, Any] = {
        key: _choice(section, key, choices, "")
        for key, choices in (
            ("classifier", TRAINERS),
            ("feature", FEATURES),
            ("release", RELEASES),
            ("assignment", ASSIGNMENTS),
        )
        if key in section.data
    }
    if "hard_negatives" in section.data:
        given["hard_negatives"] = section.count("hard_negatives", 0, minimum=0)
    if "c" in section.data:
        given["c"] = section.number("c", 1.0)
    if "saturation" in section.data:
        given["saturation"] = section.share("saturation", None)
    if "mover_odds" in section.data:
        given["mover_odds"] = section.at_least_zero("mover_odds", 0.0)
    if "projected_components" in section.data:
        given["projected_components"] = section.count("projected_components", 0, minimum=1)
    try:
        params = method_params(
            noise_sigma=noisy,
            error_model=error_model,
            training_records=section.count("training_records", defaults.training_records),
            negatives_per_positive=negatives,
            class_weight=_choice(section, "class_weight", CLASS_WEIGHTS, defaults.class_weight),
            top_k=section.count("top_k", defaults.top_k),
            soft_top_k=section.count("soft_top_k", 0) if "soft_top_k" in section.data else 0,
            **given,
            **bloom,
            **sealed,
        )
    except SettingError as error:
        # The method's own checks, made once (method_params), named at this file's key.
        raise section._error(error.setting or "encoding", str(error)) from None
    # The defaults are the noisy ones whenever there will be noise; its sigma is set here, or
    # found at AGREE.
    return replace(params, noise_sigma=float(sigma))


def is_auto_noise(section: _Section, gate_on: bool) -> bool:
    """noise_sigma = "auto", or, with the privacy gate on (a limit below 100%), no noise
    setting at all: a release without noise fails any such gate on names
    (docs/research/privacy.md)."""
    if "noise_sigma" in section.data:
        return section.data["noise_sigma"] == AUTO
    if not _encoding(section).takes_noise:
        return False  # no noise to choose: the gate measures, and refuses above its limit
    return gate_on and "attack_success" not in section.data


def _schema(section: _Section, attributes: tuple[str, ...]) -> tuple[Attribute, ...]:
    """Kinds, date formats and scales of the configured attributes; all name only those."""
    kinds = section.table_of_strings("kinds")
    formats = section.table_of_strings("date_formats")
    scales = section.table_of_numbers("scales")
    for key, table in (("kinds", kinds), ("date_formats", formats), ("scales", scales)):
        stray = [name for name in table if name not in attributes]
        if stray:
            raise section._error(
                f"{key}.{stray[0]}",
                f"names no configured attribute (attributes: {', '.join(attributes)})",
            )
    schema = []
    for name in attributes:
        kind = kinds.get(name, DEFAULT_KIND)
        if kind not in ATTRIBUTE_KINDS:
            raise section._error(
                f"kinds.{name}", f"must be one of {', '.join(ATTRIBUTE_KINDS)}, got {kind!r}"
            )
        if name in formats and not ATTRIBUTE_KINDS[kind].formatted:
            raise section._error(
                f"date_formats.{name}", f"is set but {name} is a {kind}, not a date"
            )
        date_format = formats.get(name, DEFAULT_DATE_FORMAT)
        if ATTRIBUTE_KINDS[kind].formatted:
            _check_date_format(section, name, date_format)
        _check_scale(section, name, kind, scales)
        schema.append(Attribute(name, kind, date_format, scales.get(name)))
    return tuple(schema)


def _check_scale(section: _Section, name: str, kind: str, scales: dict[str, float]) -> None:
    """The distances of a quantity and of coordinates are counted in its scale, so it needs
    one; any other kind has none, so a scale set on the wrong attribute is told rather than
    ignored."""
    if name in scales and kind not in SCALED_KINDS:
        raise section._error(
            f"scales.{name}", f"is set but {name} is a {kind}, not a quantity or coordinates"
        )
    if ATTRIBUTE_KINDS[kind].scaled and name not in scales:
        message = f"missing: {ATTRIBUTE_KINDS[kind].scale_example(name)}"
        raise section._error(f"scales.{name}", message)


def records_schema(records: dict[str, Any], path: Path) -> tuple[Attribute, ...]:
    """The attributes a [records] table describes, checked as load_config checks them (for
    tools that read a schema file rather than a whole party configuration)."""
    section = _Section(records, path, "records")
    return _schema(section, section.strings("attributes", ["first", "middle", "last"]))


def _check_date_format(section: _Section, name: str, date_format: str) -> None:
    """A format that loses the day, month or year would parse nonsense: it must give a date
    back unchanged."""
    probe = datetime(1987, 11, 23)
    try:
        ok = datetime.strptime(probe.strftime(date_format), date_format) == probe
    except ValueError:
        ok = False
    if not ok:
        raise section._error(
            f"date_formats.{name}",
            f"must give day, month and year as strptime codes (e.g. %d/%m/%Y), got {date_format!r}",
        )


def _privacy(section: _Section) -> PrivacySettings:
    return PrivacySettings(
        max_reidentification=section.limit("max_reidentification", DEFAULT_REIDENTIFICATION_LIMIT),
        audit_records=section.count("audit_records", DEFAULT_AUDIT_RECORDS),
        dictionary=_optional_file(section, "dictionary"),
        measure=_choice(section, "measure", MEASURES, "every-name"),
        noise_key=_optional_file(section, "noise_key"),
        population=_optional_file(section, "population"),
        bloom_key=_optional_file(section, "bloom_key"),
        min_expected_f1=section.limit("min_expected_f1", DEFAULT_MIN_EXPECTED_F1),
    )


def _development_seed(section: _Section) -> int | None:
    return section.count("seed", 0, minimum=0) if section.has("seed") else None


def _choice(section: _Section, key: str, choices: tuple[str, ...], default: str) -> str:
    value = section.string(key, default)
    if value not in choices:
        raise section._error(key, f"must be one of {', '.join(choices)}, got {value!r}")
    return value


# The most records either party may link, whatever the machine.
MAX_RECORDS = 50_000_000
# MATCH's memory per peer row when it held the whole peer at once (about 3.4 GB per million
# rows of the projected release). It now reads the peer in slices (candidates.PEER_SLICE_BYTES)
# and its peak no longer grows with the peer's rows; the default limit keeps this figure
# until a million-row peer is measured through the daemons.
MATCH_BYTES_PER_PEER_ROW = 3400
# The share of the machine's memory the default limit lets MATCH take.
MATCH_MEMORY_SHARE = 0.5


def default_max_peer_records() -> int:
    """As many peer records as MATCH can hold in half the machine's memory."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return MAX_RECORDS
    return max(1, min(MAX_RECORDS, int(memory * MATCH_MEMORY_SHARE / MATCH_BYTES_PER_PEER_ROW)))


def read_toml(path: Path, what: str) -> dict[str, Any]:
    """A TOML file's tables, or an InputError naming the file (`what` it is when missing)."""
    try:
        # utf-8-sig: editors on Windows start a file with a byte-order mark.
        return tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raise InputError(f"{what} not found", path=str(path)) from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"not a valid TOML file: {exc}", path=str(path)) from None


def load_config(path: str | Path) -> PartyConfig:
    path = Path(path)
    data = read_toml(path, "configuration file")
    _check_known(data, path)
    top = _Section(data, path)
    records = top.section("records")
    reference = top.section("reference")
    tls = top.section("tls")
    coordinator = top.section("coordinator")
    method = top.section("method", required=False)
    attributes = records.strings("attributes", ["first", "middle", "last"])
    privacy = _privacy(top.section("privacy", required=False))
    gate_on = privacy.max_reidentification < 1
    schema = _schema(records, attributes)
    method_params = _method(method, gate_on, attributes, kinds_of(schema))
    if method_params.keyed and privacy.bloom_key is None:
        raise InputError(
            f"encoding = {method_params.encoding!r} needs the key file both parties hold "
            "([privacy] bloom_key)",
            path=str(path),
            field="privacy.bloom_key",
        )
    return PartyConfig(
        identity=top.string("identity"),
        listen=_address(top, "listen"),
        state_dir=top.file("state_dir"),
        records_path=records.file("path"),
        id_column=records.string("id_column", "id"),
        attributes=attributes,
        schema=schema,
        on_bad_value=_choice(records, "on_bad_value", BAD_VALUE_POLICIES, "error"),
        reference_path=reference.file("path"),
        mapping=reference.mapping("mapping", default_mapping(method_params.error_model)),
        tls=TlsFiles(cert=tls.file("cert"), key=tls.file("key"), ca=tls.file("ca")),
        peers=_peers(data, path),
        coordinator_identity=coordinator.string("identity"),
        method=method_params,
        attack_success=method.share("attack_success", None, low_open=True),
        auto_noise=is_auto_noise(method, gate_on),
        privacy=privacy,
        registers_by_default=not method.has("error_model"),
        wire_log=_optional_file(top.section("wire_log", required=False), "path"),
        scheduler=_scheduler(top.section("matching", required=False)),
        workers=top.section("matching", required=False).count("workers", 0, minimum=0),
        chunk_values=top.section("matching", required=False).count(
            "chunk_values", DEFAULT_CHUNK_VALUES
        ),
        threshold=_threshold(top.section("matching", required=False), method_params),
        review_band=top.section("matching", required=False).at_least_zero("review_band", 0.0),
        development_seed=_development_seed(top.section("development", required=False)),
        max_peer_records=top.section("limits", required=False).count(
            "max_peer_records", default_max_peer_records()
        ),
        peer_records_ratio=top.section("limits", required=False).number(
            "peer_records_ratio", DEFAULT_PEER_RECORDS_RATIO
        ),
        source=str(path),
    )
