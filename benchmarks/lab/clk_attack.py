"""The key holder's dictionary attack on the anonlink stack's CLKs, as bloom_audit runs it on
our Bloom release: the other party of an anonlink linkage holds the secret the CLKs are
keyed with, so it can hash any name into any field as the owner did.

A CLK is the union of its fields' bits. The attacker hashes each dictionary name in a name
field of a fixed row (one record's other values, which some fields need: a postcode may not be
blank), takes that row's bits without the name away, and reads a
field's value as the longest listed name (most bits) whose bits all lie in the record's CLK:
a record's own name is always contained, and a longer contained name is the likelier one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pprl.bench.peer import Records, encode

_NAME_ROWS = 8192


@dataclass(frozen=True)
class ClkLeakage:
    """Shares of the attacked records: per field recovered exactly, all fields, any field."""

    by_field: dict[str, float]
    records_reidentified: float
    records_exposed: float


def _bits(clks: Sequence[object]) -> np.ndarray:
    packed = np.array([np.frombuffer(clk.tobytes(), dtype=np.uint8) for clk in clks])  # type: ignore[attr-defined]
    return np.unpackbits(packed, axis=1)


def attack_clks(
    records: Records, fields: Sequence[str], attacked: Sequence[str], names: Sequence[str]
) -> ClkLeakage:
    """`records` (their `fields`, as encoded) attacked on the fields `attacked` with `names`."""
    own = _bits(encode(records, fields, None)).astype(np.float32)
    listed = sorted({name.lower() for name in names if name})
    found: dict[str, np.ndarray] = {}
    for name in attacked:
        column = list(fields).index(name)
        base = [value if k != column else "" for k, value in enumerate(records.values[0])]
        empty = _bits(encode(Records(records.path, ["-"], [base]), fields, None))[0]
        best_count = np.zeros(len(own), dtype=np.float32)
        best_name = np.full(len(own), -1)
        for start in range(0, len(listed), _NAME_ROWS):
            block = listed[start : start + _NAME_ROWS]
            rows = [[value if k == column else v for k, v in enumerate(base)] for value in block]
            ids = [str(i) for i in range(len(block))]
            bits = _bits(encode(Records(records.path, ids, rows), fields, None)) & (1 - empty)
            counts = bits.sum(axis=1).astype(np.float32)
            contained = (own @ bits.T.astype(np.float32)) >= counts[None, :]
            score = np.where(contained, counts[None, :], -1.0)
            top = score.argmax(axis=1)
            better = score[np.arange(len(own)), top] > best_count
            best_count[better] = score[np.arange(len(own)), top][better]
            best_name[better] = start + top[better]
        truth = [values[column].strip().lower() for values in records.values]
        found[name] = np.array(
            [k >= 0 and listed[k] == value for k, value in zip(best_name, truth, strict=True)]
        )
    every = np.logical_and.reduce(list(found.values()))
    some = np.logical_or.reduce(list(found.values()))
    return ClkLeakage(
        {name: float(hit.mean()) for name, hit in found.items()},
        float(every.mean()),
        float(some.mean()),
    )
