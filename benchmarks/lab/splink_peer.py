"""Splink, the non-private Fellegi-Sunter linker, run on the same two files as the method.

Why: the method gives up seeing the records to keep them private; what that costs is only
known against the best linker that does see them, run on the same files in the same run. Splink
(a maintained Fellegi-Sunter implementation) is that ceiling. It is optional: the `registers`
extra installs it (`pip install 'pprl[registers]'`; 5 or later: its Linker takes tables
registered with the backend, unlike 4's). It runs on its DuckDB backend, in process.

The model is the one Splink's own guides build, trained without labels: one comparison per
field chosen by the field's kind, u by random sampling, m by expectation maximisation in two
sessions (the names blocked together, then a date; names alone: each name), so that each field
is estimated on pairs blocked by another. Like those guides it has no level for a first and a
last name written the wrong way round: with names alone, such a pair is not linked.
Values are cleaned first, as Splink asks its users to: spacing collapsed, accents and case
dropped, dates parsed with each file's own format into one form. The truth is used only after
scoring, to place the threshold (`best_one_to_one`), the same best case the anonlink peer gets.
"""

from __future__ import annotations

import csv
import logging
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime
from itertools import combinations
from pathlib import Path
from typing import Any, TypedDict

from pprl.bench.extra import MissingExtraError
from pprl.protocol.errors import InputError, SettingError

# Splink is typed, but is no extra of pprl: where it is not installed mypy must not fail.
try:
    import splink.comparison_library as cl  # type: ignore[import-not-found, unused-ignore]
    from splink import (  # type: ignore[import-not-found, unused-ignore]
        ColumnExpression,
        DuckDBAPI,
        Linker,
        SettingsCreator,
        block_on,
    )
except ImportError as error:  # the baseline is optional: best_one_to_one works without it
    _SPLINK_MISSING: ImportError | None = error
else:
    _SPLINK_MISSING = None

ID = "id"
# The project's attribute kinds (pprl.protocol.data.kinds) that have a Splink comparison here;
# a field without a kind is a name, as in the project's schema files.
KINDS = ("name", "text", "code", "number", "identifier", "date", "category")
DEFAULT_KIND = "name"
# The one form every date is put into: what Splink's date-of-birth comparison parses.
ISO_DATE = "%Y-%m-%d"
MIN_PROBABILITY = 0.001
# A blocking rule is kept while it gives at most this many candidate pairs per record of the
# two files: a rule on a value most records share (sex, a state) adds pairs, not true ones.
PAIRS_PER_RECORD = 20
# Names are also blocked on the first letters of two name fields at once: a typo in each
# name of a pair still leaves them, and every exact rule misses that pair.
NAME_PREFIX = 2
# Random pairs for u; Splink's default (1e6) warns that it is too few.
U_PAIRS = 1e7
_PUNCTUATION = re.compile(r"[^\w\s]")

Score = tuple[str, str, float]
# A blocking rule as plain data: (column, number of leading characters or None: all of it).
Rule = tuple[tuple[str, int | None], ...]
Columns = dict[str, list[str | None]]


class SplinkMissingError(MissingExtraError, ImportError):
    """The Splink baseline was asked for and Splink is not installed."""


class BestLinkage(TypedDict):
    """The greedy one-to-one linkage at its best threshold (None when no pair is true)."""

    threshold: float | None
    precision: float
    recall: float
    f1: float
    pairs: int
    linked: set[tuple[str, str]]


def splink_scores(
    records_a: Path,
    records_b: Path,
    fields: Sequence[str],
    kinds: Mapping[str, str] | None = None,
    date_formats_a: Mapping[str, str] | None = None,
    date_formats_b: Mapping[str, str] | None = None,
    min_probability: float = MIN_PROBABILITY,
    seed: int = 0,
) -> list[Score]:
    """Splink's (id_a, id_b, match_probability) for every candidate pair above
    `min_probability`, from a "link_only" model trained on these two files without labels.

    Each file is a CSV with a header, an `id` column and every column in `fields`; a blank
    cell is missing. `kinds` maps a field to its kind (KINDS, default "name"); the date
    formats map a date field to the strptime format of that file (default ISO, YYYY-MM-DD).
    """
    if _SPLINK_MISSING is not None:
        raise SplinkMissingError(
            f"the Splink baseline needs splink ({_SPLINK_MISSING}): pip install splink"
        ) from _SPLINK_MISSING
    if len(set(fields)) < 2:
        raise SettingError("Splink needs two fields or more: EM estimates each on another")
    kind_of = {field: (kinds or {}).get(field, DEFAULT_KIND) for field in fields}
    for field, kind in kind_of.items():
        if kind not in KINDS:
            raise SettingError(f"field {field!r}: kind {kind!r} is not one of {', '.join(KINDS)}")
    a = _read(records_a, kind_of, date_formats_a or {})
    b = _read(records_b, kind_of, date_formats_b or {})
    if not a[ID] or not b[ID]:
        return []
    cap = PAIRS_PER_RECORD * (len(a[ID]) + len(b[ID]))
    pairs = {rule: _pairs(rule, a, b) for rule in _candidate_rules(kind_of)}
    kept = [rule for rule, count in pairs.items() if count <= cap]
    blocking = kept or [min(pairs, key=lambda rule: pairs[rule])]  # all too big: the smallest
    settings = SettingsCreator(
        link_type="link_only",
        unique_id_column_name=ID,
        comparisons=[_comparison(field, kind) for field, kind in kind_of.items()],
        blocking_rules_to_generate_predictions=[_block_on(rule) for rule in blocking],
        # The most true pairs two files can hold: each record has one partner at most.
        probability_two_random_records_match=1 / max(len(a[ID]), len(b[ID])),
        retain_matching_columns=False,
    )
    db_api = DuckDBAPI()
    tables = [
        db_api.register(a, dataset_display_name="a"),
        db_api.register(b, dataset_display_name="b"),
    ]
    linker = Linker(tables, settings, log_level=logging.WARNING)
    linker.training.estimate_u_using_random_sampling(max_pairs=U_PAIRS, seed=seed)
    for rule in _em_rules(kind_of, pairs):
        size = pairs[rule] if rule in pairs else _pairs(rule, a, b)
        linker.training.estimate_parameters_using_expectation_maximisation(
            _block_on(rule), max_pairs=cap if size > cap else None
        )
    predictions = linker.inference.predict(threshold_match_probability=min_probability)
    scores = []
    for row in predictions.as_record_list():
        ids = (str(row[f"{ID}_l"]), str(row[f"{ID}_r"]))
        id_a, id_b = ids if row["source_dataset_l"] == "a" else ids[::-1]
        scores.append((id_a, id_b, float(row["match_probability"])))
    return scores


def best_one_to_one(scored: Sequence[Score], truth: set[tuple[str, str]]) -> BestLinkage:
    """Greedy one-to-one linkage (highest probability first, each id once) cut at the threshold
    with the best F1 against `truth`: the linker's best case, chosen with the answer in hand.

    Every true pair not linked is a false negative, whether Splink scored it or not. Ties in
    F1 go to the higher threshold; `linked` lets a caller count recall per kind of true pair.
    """
    taken_a: set[str] = set()
    taken_b: set[str] = set()
    greedy: list[Score] = []
    for id_a, id_b, probability in sorted(scored, key=lambda s: (-s[2], s[0], s[1])):
        if id_a not in taken_a and id_b not in taken_b:
            taken_a.add(id_a)
            taken_b.add(id_b)
            greedy.append((id_a, id_b, probability))
    best: BestLinkage = {
        "threshold": None,
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
        "pairs": 0,
        "linked": set(),
    }
    true_positives = 0
    for kept, (id_a, id_b, probability) in enumerate(greedy, start=1):
        true_positives += (id_a, id_b) in truth
        if kept < len(greedy) and greedy[kept][2] == probability:
            continue  # a threshold keeps every pair of its probability
        precision = true_positives / kept
        recall = true_positives / len(truth)
        f1 = 2 * precision * recall / (precision + recall) if true_positives else 0.0
        if f1 > best["f1"]:
            best = {
                "threshold": probability,
                "precision": precision,
                "recall": recall,
                "f1": f1,
                "pairs": kept,
                "linked": set(),
            }
    best["linked"] = {(id_a, id_b) for id_a, id_b, _ in greedy[: best["pairs"]]}
    return best


def _read(path: Path, kind_of: Mapping[str, str], date_formats: Mapping[str, str]) -> Columns:
    """The id and every field of one file, cleaned, as columns (None: missing)."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            header = reader.fieldnames or []
            rows = list(reader)
    except FileNotFoundError:
        raise InputError("records file not found", path=str(path)) from None
    for column in (ID, *kind_of):
        if column not in header:
            raise InputError("the records lack this column", path=str(path), field=column)
    columns: Columns = {ID: [row[ID] for row in rows]}
    for field, kind in kind_of.items():
        date_format = date_formats.get(field, ISO_DATE)
        columns[field] = [_clean(row[field] or "", kind, date_format) for row in rows]
    return columns


def _clean(raw: str, kind: str, date_format: str) -> str | None:
    """One cell as Splink should compare it; None when blank or not a date of the format."""
    text = " ".join(raw.split())
    if not text:
        return None
    if kind == "date":
        try:
            return datetime.strptime(text, date_format).date().isoformat()
        except ValueError:
            return None
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    if kind in ("code", "number", "identifier"):
        return "".join(c for c in plain if c.isalnum()) or None
    return " ".join(_PUNCTUATION.sub(" ", plain).split()) or None


def _candidate_rules(kind_of: Mapping[str, str]) -> list[Rule]:
    """Each field alone (but categories, too coarse while another field exists), and the
    leading letters of each two name fields together."""
    keyed = [field for field, kind in kind_of.items() if kind != "category"] or list(kind_of)
    names = [field for field, kind in kind_of.items() if kind == "name"]
    singles: list[Rule] = [((field, None),) for field in keyed]
    prefixes: list[Rule] = [
        ((first, NAME_PREFIX), (second, NAME_PREFIX)) for first, second in combinations(names, 2)
    ]
    return singles + prefixes


def _em_rules(kind_of: Mapping[str, str], pairs: Mapping[Rule, int]) -> list[Rule]:
    """The blocks EM estimates m on, each field on a block of another: Splink's usual two,
    the names together and a date, when there are both; else the two smallest one-field blocks.

    Not simply the two smallest: two address fields block out the same people (those who
    moved), and m of every address field then says that a true pair never moves."""
    names = [field for field, kind in kind_of.items() if kind == "name"]
    singles: list[Rule] = sorted(
        (r for r in pairs if len(r) == 1 and pairs[r]), key=lambda r: pairs[r]
    )
    # A date first, else the smallest block on a field that is not a name.
    seconds = sorted(
        (rule for rule in singles if rule[0][0] not in names),
        key=lambda rule: (kind_of[rule[0][0]] != "date", pairs[rule]),
    )
    if names and seconds:
        return [tuple((field, None) for field in names), seconds[0]]
    return singles[:2]


def _pairs(rule: Rule, a: Columns, b: Columns) -> int:
    """How many pairs of A and B records the rule blocks together."""
    counts_a, counts_b = _keys(rule, a), _keys(rule, b)
    return sum(count * counts_b[key] for key, count in counts_a.items())


def _keys(rule: Rule, columns: Columns) -> Counter[tuple[str, ...]]:
    """Each record's blocking key under the rule, counted; a record missing a part has none."""
    keys: Counter[tuple[str, ...]] = Counter()
    for row in range(len(columns[ID])):
        key = tuple(
            value[:length] for field, length in rule if (value := columns[field][row]) is not None
        )
        if len(key) == len(rule):
            keys[key] += 1
    return keys


def _block_on(rule: Rule) -> Any:
    """The rule as Splink's blocking rule."""
    return block_on(
        *(
            field if length is None else ColumnExpression(field).substr(1, length)
            for field, length in rule
        )
    )


def _comparison(field: str, kind: str) -> Any:
    """Splink's comparison for a field of this kind."""
    if kind == "name":
        return cl.NameComparison(field)
    if kind == "text":
        return cl.JaroWinklerAtThresholds(field, [0.9, 0.7])
    if kind in ("code", "number", "identifier"):
        return cl.LevenshteinAtThresholds(field, [1, 2])
    if kind == "date":
        return cl.DateOfBirthComparison(field, input_is_string=True, datetime_format=ISO_DATE)
    return cl.ExactMatch(field)
