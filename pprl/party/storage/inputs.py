"""A party's files, read and checked: its records, the reference set and the attack list."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pprl.files.records import load_records
from pprl.files.reference import load_reference
from pprl.files.tables import CsvTable, read_table
from pprl.party.config import PartyConfig, attribute_schema
from pprl.protocol.data import reference
from pprl.protocol.data.kinds import normalise_value
from pprl.protocol.data.records import RecordTable, normalise
from pprl.protocol.errors import InputError
from pprl.protocol.model.training import MIN_TRAINING_RECORDS
from pprl.protocol.privacy.audit import Dictionary, census_dictionary, role_dictionary
from pprl.protocol.privacy.population_attack import Population
from pprl.protocol.vectors.release import ArrayStore


@dataclass
class Inputs:
    records: RecordTable
    reference: reference.ReferenceSet


def load_inputs(config: PartyConfig, records_path: Path | None = None) -> Inputs:
    """The configured records (or those at `records_path`) and the checked reference set."""
    records = load_records(
        records_path or config.records_path,
        config.id_column,
        attribute_schema(config),
        config.on_bad_value,
    )
    if len(records) < MIN_TRAINING_RECORDS:
        raise InputError(
            f"holds {len(records)} record(s); TRAIN needs at least {MIN_TRAINING_RECORDS} of "
            "the party's own to make matching and non-matching pairs",
            path=records.path,
        )
    ref = load_reference(config.reference_path)
    reference.validate_mapping(config.mapping, config.attributes, ref)
    return Inputs(records, ref)


# A dictionary CSV with a "kind" column says which list each name belongs to (first names for
# first and middle name attributes, surnames for the last), as the census default does.
KIND_COLUMN = "kind"
WEIGHT_COLUMN = "weight"
NAME_KINDS = {"first": 0, "surname": 1, "last": 1}


def load_dictionary(
    path: Path | None, reference_set: reference.ReferenceSet, store: ArrayStore | None = None
) -> Dictionary:
    """The attacker's name list: the census first names and surnames by default; or a CSV.
    With columns `name` and `kind` (first or surname) and optionally `weight` (how common
    the name is, any non-negative scale), it is two lists with their frequencies, as the
    census default is; otherwise every value of the CSV (after its header row), one list.
    `store` keeps its projected coordinates between runs."""
    if path is None:
        return census_dictionary(reference_set.columns, store)
    table = read_table(path)
    header = [column.lower() for column in table.header]
    if "name" in header and KIND_COLUMN in header:
        return _role_lists(table, header, reference_set, store)
    # read as the records' names are (accents folded, punctuation as spaces): a listed MÜLLER
    # must meet a register's MULLER as the attacker would
    names = [normalise_value("name", field) or "" for _, fields in table.rows for field in fields]
    if not any(names):
        raise InputError(
            "the dictionary holds no names (only a header or blank cells)", path=str(path)
        )
    return Dictionary(names, reference_set.columns, store)


def _role_lists(
    table: CsvTable,
    header: list[str],
    reference_set: reference.ReferenceSet,
    store: ArrayStore | None,
) -> Dictionary:
    """A `name,kind[,weight]` dictionary as a first-name list and a surname list."""
    at = {
        column: header.index(column)
        for column in ("name", KIND_COLUMN, WEIGHT_COLUMN)
        if column in header
    }
    lists: tuple[tuple[list[str], list[float]], ...] = (([], []), ([], []))
    for line, fields in table.rows:
        name = normalise_value("name", fields[at["name"]]) or ""
        if not name:
            continue
        kind = fields[at[KIND_COLUMN]].strip().lower()
        if kind not in NAME_KINDS:
            raise InputError(
                f"must be first or surname, got {kind!r}",
                path=table.path,
                row=line,
                field=KIND_COLUMN,
            )
        weight = 1.0
        if WEIGHT_COLUMN in at:
            try:
                weight = float(fields[at[WEIGHT_COLUMN]])
            except ValueError:
                weight = -1.0
            if not math.isfinite(weight) or weight < 0:
                raise InputError(
                    "must be a number >= 0", path=table.path, row=line, field=WEIGHT_COLUMN
                )
        names, weights = lists[NAME_KINDS[kind]]
        names.append(name)
        weights.append(weight)
    (first, first_weights), (last, last_weights) = lists
    if not sum(first_weights) or not sum(last_weights):
        raise InputError(
            "the dictionary needs first names and surnames (kind first and kind surname, with "
            "weights that are not all 0)",
            path=table.path,
        )
    return role_dictionary(
        (first, np.asarray(first_weights)),
        (last, np.asarray(last_weights)),
        reference_set.columns,
        store,
    )


def load_population(path: Path | None, attributes: list[str]) -> Population | None:
    """The attacker's list of people: a CSV with a column for each attacked attribute (other
    columns are ignored), values normalised as records are."""
    if path is None or not attributes:
        return None
    table = read_table(path)
    absent = [a for a in attributes if a not in table.header]
    if absent:
        raise InputError(
            f"the population list has no column {', '.join(absent)} (its header: "
            f"{', '.join(table.header)})",
            path=str(path),
        )
    if not table.rows:
        raise InputError("the population list holds no people (only a header)", path=str(path))
    where = {a: table.header.index(a) for a in attributes}
    return Population(
        {a: [normalise(fields[i]) for _, fields in table.rows] for a, i in where.items()}
    )
