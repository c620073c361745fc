"""GeCo-style corruption of name values: one typing, OCR or phonetic error at a time.

Used to make Bob's noisy copy of the demo data and, in training, to corrupt one's own records so
the model learns which small differences still mean "same person".

Every edit is a splice ``value[:start] + replacement + value[end:]`` with a replacement that
differs from ``value[start:end]``, so a corrupted value always differs from the original. Values
are never emptied: ``delete`` needs at least two characters, and no other kind shortens a value
to nothing.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import TypeVar

import numpy as np

from pprl.protocol.errors import SettingError

ERROR_KINDS: tuple[str, ...] = ("keyboard", "insert", "delete", "transpose", "ocr", "phonetic")

# Horizontal and diagonal neighbours of each letter on a QWERTY keyboard.
QWERTY_NEIGHBOURS: dict[str, str] = {
    "Q": "WA",
    "W": "QEAS",
    "E": "WRSD",
    "R": "ETDF",
    "T": "RYFG",
    "Y": "TUGH",
    "U": "YIHJ",
    "I": "UOJK",
    "O": "IPKL",
    "P": "OL",
    "A": "QWSZ",
    "S": "WEADZX",
    "D": "ERSFXC",
    "F": "RTDGCV",
    "G": "TYFHVB",
    "H": "YUGJBN",
    "J": "UIHKNM",
    "K": "IOJLM",
    "L": "OPK",
    "Z": "ASX",
    "X": "SDZC",
    "C": "DFXV",
    "V": "FGCB",
    "B": "GHVN",
    "N": "HJBM",
    "M": "JKN",
}

# Letter-only shapes a scanner confuses; each pair is used in both directions.
OCR_PAIRS: tuple[tuple[str, str], ...] = (
    ("RN", "M"),
    ("CL", "D"),
    ("VV", "W"),
    ("LI", "U"),
    ("I", "L"),
    ("O", "Q"),
    ("E", "F"),
    ("C", "G"),
    ("U", "V"),
    ("H", "N"),
)

# Spellings that sound alike; each pair is used in both directions.
PHONETIC_PAIRS: tuple[tuple[str, str], ...] = (
    ("PH", "F"),
    ("CK", "K"),
    ("KS", "X"),
    ("Z", "S"),
    ("EE", "EA"),
    ("IE", "Y"),
    ("C", "K"),
    ("GH", "G"),
    ("QU", "KW"),
    ("I", "Y"),
    ("TH", "T"),
    ("SCH", "SH"),
    ("AY", "AI"),
)

T = TypeVar("T")

Site = tuple[int, int, str]
"""An edit as (start, end, replacement) for ``value[start:end]``."""


def _both_ways(pairs: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    return tuple(pairs) + tuple((b, a) for a, b in pairs)


_OCR_RULES = _both_ways(OCR_PAIRS)
_PHONETIC_RULES = _both_ways(PHONETIC_PAIRS)


def _pattern_sites(value: str, rules: Sequence[tuple[str, str]]) -> list[Site]:
    """Every (overlapping) occurrence of every rule's source, so each is equally likely."""
    sites = []
    for source, target in rules:
        start = value.find(source)
        while start != -1:
            sites.append((start, start + len(source), target))
            start = value.find(source, start + 1)
    return sites


def _keyboard_sites(value: str) -> list[Site]:
    return [(i, i + 1, n) for i, c in enumerate(value) for n in QWERTY_NEIGHBOURS.get(c, "")]


class _InsertSites(Sequence[Site]):
    """Every (position, letter) insertion, computed on access: listing them would dominate."""

    def __init__(self, value: str) -> None:
        self._n = (len(value) + 1) * len(string.ascii_uppercase)

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index: int) -> Site:  # type: ignore[override]
        position, letter = divmod(index, len(string.ascii_uppercase))
        return position, position, string.ascii_uppercase[letter]


def _delete_sites(value: str) -> list[Site]:
    return [(i, i + 1, "") for i in range(len(value))] if len(value) >= 2 else []


def _transpose_sites(value: str) -> list[Site]:
    return [(i, i + 2, b + a) for i, (a, b) in enumerate(pairwise(value)) if a != b]


_SITES: dict[str, Callable[[str], Sequence[Site]]] = {
    "keyboard": _keyboard_sites,
    "insert": _InsertSites,
    "delete": _delete_sites,
    "transpose": _transpose_sites,
    "ocr": lambda value: _pattern_sites(value, _OCR_RULES),
    "phonetic": lambda value: _pattern_sites(value, _PHONETIC_RULES),
}

# Cheap applicability tests, so a random kind is chosen without listing every kind's sites.
_APPLIES: dict[str, Callable[[str], bool]] = {
    "keyboard": lambda value: any(c in QWERTY_NEIGHBOURS for c in value),
    "insert": lambda value: True,
    "delete": lambda value: len(value) >= 2,
    "transpose": lambda value: any(a != b for a, b in pairwise(value)),
    "ocr": lambda value: any(source in value for source, _ in _OCR_RULES),
    "phonetic": lambda value: any(source in value for source, _ in _PHONETIC_RULES),
}

# Enough retries that only a degenerate set of kinds (say, transposes alone) exhausts them.
_MAX_RECORD_ATTEMPTS = 100


class Corrupter:
    """Applies random single edits; all randomness comes from ``rng`` so runs are reproducible."""

    def __init__(self, rng: np.random.Generator, kinds: Sequence[str] = ERROR_KINDS) -> None:
        unknown = [kind for kind in kinds if kind not in ERROR_KINDS]
        if unknown or not kinds:
            raise SettingError(f"kinds must be a non-empty subset of {ERROR_KINDS}, got {kinds!r}")
        self.rng = rng
        self._kinds = tuple(kinds)

    def applicable_kinds(self, value: str) -> list[str]:
        """Kinds (among this corrupter's) that can edit ``value``, in the order given."""
        return [kind for kind in self._kinds if _APPLIES[kind](value)]

    def corrupt_value(self, value: str, kind: str | None = None) -> str:
        """Exactly one edit of the given kind (or of a random applicable kind); result != value.

        An explicit ``kind`` may be any of ERROR_KINDS, even one outside this corrupter's
        ``kinds``, which only restrict the random choice.
        """
        if kind is None:
            kind = self._pick(self.applicable_kinds(value), f"no error kind applies to {value!r}")
        elif kind not in ERROR_KINDS:
            raise SettingError(f"unknown error kind {kind!r}; expected one of {ERROR_KINDS}")
        sites = _SITES[kind](value)
        start, end, replacement = self._pick(sites, f"a {kind} error cannot apply to {value!r}")
        return value[:start] + replacement + value[end:]

    def corrupt_record(self, values: Sequence[str], n_errors: int = 1) -> list[str]:
        """n_errors edits spread over the fields; the result differs from the input.

        Each error picks a field uniformly among those some kind applies to (an empty field can
        only take an insert). Several errors may hit one field and could undo each other, so the
        record is redrawn until it differs.
        """
        if n_errors < 1:
            raise SettingError(f"n_errors must be at least 1, got {n_errors}")
        original = list(values)
        for _ in range(_MAX_RECORD_ATTEMPTS):
            record = list(original)
            for _ in range(n_errors):
                editable = [i for i, value in enumerate(record) if self._editable(value)]
                field = self._pick(editable, f"no field of {original!r} can take an error")
                record[field] = self.corrupt_value(record[field])
            if record != original:
                return record
        raise ValueError(f"{n_errors} errors of kinds {self._kinds} keep cancelling out")

    def _editable(self, value: str) -> bool:
        return any(_APPLIES[kind](value) for kind in self._kinds)

    def _pick(self, options: Sequence[T], why_none: str) -> T:
        if not options:
            raise SettingError(why_none)
        return options[int(self.rng.integers(len(options)))]
