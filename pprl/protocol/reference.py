"""The public reference set, the attribute mapping and the parameters both parties must agree on."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pprl.protocol.errors import InputError
from pprl.protocol.records import CsvTable, normalise, read_table

MappingEntry = tuple[str, str]
DEFAULT_MAPPING: tuple[MappingEntry, ...] = (
    ("first", "first"),
    ("last", "last"),
    ("middle", "first"),
    ("middle", "last"),
)
DESCRIPTION_VERSION = 1

_LABELS = {
    "reference.columns": "reference columns",
    "reference.rows": "reference rows",
    "reference.sha256": "reference values",
}


@dataclass(frozen=True)
class ReferenceSet:
    """Public names both parties compare their records against; values are normalised."""

    path: str
    columns: dict[str, list[str]]

    def __len__(self) -> int:
        return len(next(iter(self.columns.values()), []))


@dataclass(frozen=True)
class MethodParams:
    """Parameters both parties must share; they go into the agreement digest."""

    distance: str = "levenshtein"
    clamp: int = 255
    dtype: str = "uint8"
    feature: str = "cosine"
    # Gaussian noise on released distances in FedSim's standardised units (times sigma0 of the
    # reference set gives edits); 0 releases the raw distances.
    noise_sigma: float = 0.0
    classifier: str = "linear"
    c: float = 100.0
    training_records: int = 5000
    negatives_per_positive: int = 4
    hard_negatives: int = 2
    class_weight: str = "balanced"
    top_k: int = 10
    assignment: str = "greedy-one-to-one"
    normalisation: str = "upper-collapse-whitespace"

    def to_dict(self) -> dict[str, Any]:
        """C and sigma as floats, so that 100 and 100.0 give the same digest."""
        return {**asdict(self), "c": float(self.c), "noise_sigma": float(self.noise_sigma)}


def load_reference(path: str | Path) -> ReferenceSet:
    """Load the reference set; duplicate rows are allowed, unusable columns are not."""
    table = read_table(path)
    _check_header(table)
    if not table.rows:
        raise InputError("no data rows (only a header)", path=table.path)
    columns = {
        name: [normalise(fields[i]) for _, fields in table.rows]
        for i, name in enumerate(table.header)
    }
    for name, values in columns.items():
        if not any(values):
            raise InputError("every value in this column is empty", path=table.path, field=name)
    return ReferenceSet(table.path, columns)


def _check_header(table: CsvTable) -> None:
    """Every reference column can be named in a mapping, so each needs one unique name."""
    for position, name in enumerate(table.header, start=1):
        if not name:
            message = f"column {position} of the header has no name"
            raise InputError(message, path=table.path, row=table.header_row)
        if table.header.count(name) > 1:
            message = "column appears more than once in the header"
            raise InputError(message, path=table.path, row=table.header_row, field=name)


def validate_mapping(
    mapping: Sequence[MappingEntry], attributes: Sequence[str], reference: ReferenceSet
) -> None:
    """Refuse a mapping the method cannot compute, before any data is exchanged."""
    if not mapping:
        raise InputError("the mapping is empty; it needs at least one attribute->column entry")
    for attribute, column in mapping:
        if attribute not in attributes:
            message = (
                f"mapping entry {attribute}->{column} names an attribute that is not configured "
                f"(attributes: {', '.join(attributes)})"
            )
            raise InputError(message, field=attribute)
        if column not in reference.columns:
            message = (
                f"mapping entry {attribute}->{column} names a column the reference set lacks "
                f"(columns: {', '.join(reference.columns)})"
            )
            raise InputError(message, path=reference.path, field=column)
    repeated = [entry for entry in mapping if list(mapping).count(entry) > 1]
    if repeated:
        attribute, column = repeated[0]
        raise InputError(f"mapping entry {attribute}->{column} appears more than once")


def agreement_description(
    reference: ReferenceSet, mapping: Sequence[MappingEntry], params: MethodParams
) -> dict[str, Any]:
    """What the digest covers: a hash of the reference values, never the values; column order
    in the file does not matter, row order does."""
    return {
        "reference": {
            "columns": sorted(reference.columns),
            "rows": len(reference),
            "sha256": hashlib.sha256(_canonical(reference.columns)).hexdigest(),
        },
        "mapping": [[attribute, column] for attribute, column in mapping],
        "params": params.to_dict(),
        "version": DESCRIPTION_VERSION,
    }


def agreement_digest(
    reference: ReferenceSet, mapping: Sequence[MappingEntry], params: MethodParams
) -> str:
    """Equal digests mean both parties would compute comparable features."""
    description = agreement_description(reference, mapping, params)
    return hashlib.sha256(_canonical(description)).hexdigest()


def _canonical(value: object) -> bytes:
    """One byte string per value, independent of process, platform and hash seed."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8")


def reference_overlap(
    attributes: dict[str, list[str]], reference: ReferenceSet, mapping: Sequence[MappingEntry]
) -> dict[str, int]:
    """Shared values mean the reference is not disjoint from the data, which the method needs."""
    validate_mapping(mapping, list(attributes), reference)
    overlap = {}
    for attribute, column in mapping:
        values = {value for value in attributes[attribute] if value}
        overlap[f"{attribute}->{column}"] = len(values & set(reference.columns[column]))
    return overlap


def explain_mismatch(ours: dict[str, Any], theirs: dict[str, Any]) -> str:
    """Tell the operator which agreed input differs, since the digests alone cannot."""
    mine, peer = _flatten(ours), _flatten(theirs)
    keys = list(mine) + [key for key in peer if key not in mine]
    differences = [
        _difference(key, mine.get(key), peer.get(key))
        for key in keys
        if mine.get(key) != peer.get(key)
    ]
    return "; ".join(differences) if differences else "the agreement descriptions are identical"


def _flatten(description: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested keys as dotted paths, so differences can be named precisely."""
    flat: dict[str, Any] = {}
    for key, value in description.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _difference(key: str, ours: Any, theirs: Any) -> str:
    """One difference as 'what differs: ours X, peer Y'."""
    verb = "differ" if key in _LABELS else "differs"
    label = _LABELS.get(key, key)
    return f"{label} {verb}: ours {_show(key, ours)}, peer {_show(key, theirs)}"


def _show(key: str, value: Any) -> str:
    """Values short enough to read on one line."""
    if value is None:
        return "(missing)"
    if key == "reference.sha256":
        return f"sha256 {str(value)[:12]}..."
    if key == "mapping":
        return ", ".join(f"{attribute}->{column}" for attribute, column in value) or "(empty)"
    return repr(value)
