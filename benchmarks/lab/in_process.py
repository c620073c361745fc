"""Our method on two record files in one process, under [method] variants.

The benchmark scripts compare method choices on real or generated files without starting
daemons: both parties run the daemons' own pipeline functions (pipeline.link_in_process), so
a variant's figures are what a deployment with those [method] keys would link.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pprl.files.records import load_records
from pprl.files.reference import load_reference
from pprl.party.config import DEFAULT_AUDIT_RECORDS, records_schema
from pprl.party.local import load_schema, read_truth
from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data.error_model import DEFAULT_MODEL
from pprl.protocol.data.kinds import kinds_of, scales_of
from pprl.protocol.data.records import RecordTable
from pprl.protocol.data.reference import ReferenceSet
from pprl.protocol.gate import calibrate_noise, gate_sample
from pprl.protocol.linkage.released import Released
from pprl.protocol.method import method_params
from pprl.protocol.metrics import Quality, linkage_quality
from pprl.protocol.model.classifier import Model
from pprl.protocol.model.features import RAW_JOINS, unit_vectors
from pprl.protocol.privacy.audit import Dictionary
from pprl.protocol.sealed import linear_form, session
from pprl.protocol.sealed.exact_entries import evaluator_plaintext
from pprl.protocol.sealed.recipes import Recipe, parse_recipes
from pprl.protocol.sealed.session import default_kernel_features, default_recipes
from pprl.protocol.vectors.randomness import Randomness


def _value(text: str) -> object:
    """A [method] value as TOML would type it: a whole number, a number, else text."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def method_choices(base: Mapping[str, Any], variant: str) -> dict[str, Any]:
    """`base` with the KEY=VALUE[,KEY=VALUE] changes of `variant` (empty: `base` itself)."""
    choices = dict(base)
    for item in filter(None, variant.split(",")):
        key, _, value = item.partition("=")
        choices[key] = _value(value)
    return choices


@dataclass(frozen=True)
class SchemaTables:
    """Two record files read as a schema file describes them (benchmarks/febrl4/*.toml)."""

    tables: tuple[RecordTable, RecordTable]
    kinds: dict[str, str]
    scales: dict[str, float]
    mapping: list[tuple[str, str]]
    method: dict[str, Any]  # the schema's [method] keys

    @property
    def error_model(self) -> str:
        return schema_error_model(self.method)


def schema_error_model(method: Mapping[str, Any]) -> str:
    """Training's error model, as a daemon reads it from a file that names its records'
    attributes: the register model unless the schema's [method] names another."""
    return str(method.get("error_model", DEFAULT_MODEL))


def schema_kernel_features(method: Mapping[str, Any], kinds: Mapping[str, str]) -> int:
    """Sealed linkage's random features an entry, as a daemon reads them from a schema's
    [method]: those it names, or the default for its kinds and error model."""
    default = default_kernel_features(kinds, schema_error_model(method))
    return int(method.get("sealed_kernel_features", default))


def schema_tables(schema_path: Path, records_a: Path, records_b: Path) -> SchemaTables:
    schema = load_schema(schema_path)
    records = schema.get("records", {})
    attributes = records_schema(records, schema_path)
    id_column, policy = records.get("id_column", "id"), records.get("on_bad_value", "error")
    return SchemaTables(
        (
            load_records(records_a, id_column, attributes, policy),
            load_records(records_b, id_column, attributes, policy),
        ),
        kinds_of(attributes),
        scales_of(attributes),
        [(attribute, column) for attribute, column in schema["reference"]["mapping"]],
        schema_method(schema.get("method", {})),
    )


def schema_method(method: Mapping[str, Any]) -> dict[str, Any]:
    """A schema's [method] as the benchmarks read it: the agreed thresholds, which a party's
    file writes as a list of numbers, as the comma-separated text the method keeps."""
    out = dict(method)
    thresholds = out.get("sealed_thresholds")
    if isinstance(thresholds, list):
        out["sealed_thresholds"] = session.thresholds_text(thresholds)
    return out


@dataclass(frozen=True)
class Outcome:
    """The agreed linkage's quality and the seconds both parties' phases took together."""

    quality: Quality
    seconds: float
    found: frozenset[tuple[str, str]] = frozenset()  # the agreed pairs, as (A id, B id)


def link_tables(
    tables: tuple[RecordTable, RecordTable],
    truth: set[tuple[str, str]],
    agreement: Agreement,
    seed: int = 1,
) -> Outcome:
    """Alice's and Bob's tables linked under `agreement`, scored on `truth`."""
    alice, bob = tables
    began = time.perf_counter()
    seeds = (Randomness(seed, "alice"), Randomness(seed, "bob"))
    linkage = pipeline.link_in_process(agreement, alice.attributes, bob.attributes, seeds)
    seconds = time.perf_counter() - began
    found = {(alice.ids[a], bob.ids[b]) for a, b in linkage.agreed}
    return Outcome(linkage_quality(found, truth), seconds, frozenset(found))


def add_table_arguments(parser: argparse.ArgumentParser) -> None:
    """The five files a run on real records takes: both record files, the truth, the
    reference set and the schema that reads them (schema_tables)."""
    for name in ("--records-a", "--records-b", "--truth", "--reference", "--schema"):
        parser.add_argument(name, type=Path, required=True)


def run_command(args: argparse.Namespace) -> dict[str, Any]:
    """The arguments a benchmark ran with, for its JSON: files by name only, so that a result
    names its inputs without the machine's paths."""
    return {k: (v.name if isinstance(v, Path) else v) for k, v in vars(args).items()}


@dataclass(frozen=True)
class SealedInputs:
    """What a sealed benchmark reads from its command line: both files by the schema, keyed
    "alice" and "bob", the truth, the reference set and the recipes it runs."""

    read: SchemaTables
    tables: dict[str, RecordTable]
    truth: set[tuple[str, str]]
    reference: ReferenceSet
    recipes: str

    def parsed_recipes(self) -> tuple[Recipe, ...]:
        """The recipes read against the records' attributes."""
        return parse_recipes(self.recipes, list(self.tables["alice"].attributes))

    def daemon_agreement(self, **changes: Any) -> Agreement:
        """The agreement two daemons make from the schema in sealed mode: its [method], these
        recipes, and the random features a daemon derives for its kinds, unless `changes`
        (other [method] settings) say otherwise."""
        read = self.read
        settings = {
            **read.method,
            "encoding": "sealed",
            "sealed_keys": self.recipes,
            "sealed_kernel_features": schema_kernel_features(read.method, read.kinds),
            **changes,
        }
        return Agreement(
            self.reference, read.mapping, method_params(**settings), read.kinds, read.scales
        )


def sealed_inputs(args: argparse.Namespace, recipes: str = "") -> SealedInputs:
    """The inputs named by `add_table_arguments`' options; `recipes` as `sealed_recipes`."""
    read = schema_tables(args.schema, args.records_a, args.records_b)
    return SealedInputs(
        read,
        dict(zip(("alice", "bob"), read.tables, strict=True)),
        read_truth(args.truth),
        load_reference(args.reference),
        sealed_recipes(read, recipes),
    )


def sealed_recipes(read: SchemaTables, given: str = "") -> str:
    """The recipes a sealed benchmark runs: those given on its command line, the schema's, or
    the ones the daemons derive from the schema's kinds and error model."""
    default = default_recipes(read.kinds, read.error_model)
    written = given or read.method.get("sealed_keys") or default
    return ",".join(written) if isinstance(written, list) else str(written)


def sealed_agreement(
    read: SchemaTables, reference: ReferenceSet, *, caps: bool, kernel: tuple[str, int] = ("", 0)
) -> Agreement:
    """A schema's method as sealed linkage scores it: no noise, the projected vectors (a joined
    entry's read raw, features.RAW_JOINS), and either the schema's caps or none (the linear
    form sealed scoring evaluates holds none).
    `kernel` (recipes, random features an entry), when it has features, agrees sealed linkage
    itself with a kernel model (sealed_kernel_features), so that training gives one."""
    changes: dict[str, Any] = {"noise_sigma": 0.0, "feature": RAW_JOINS}
    if not caps:
        changes["saturation"] = 0.0
    # A schema written for the daemon's sealed mode: its encoding and recipes are what these
    # benchmarks model themselves (the recipes come on their command line).
    own = {k: v for k, v in read.method.items() if k != "encoding" and not k.startswith("sealed_")}
    recipes, features = kernel
    if features:
        changes |= {
            "encoding": "sealed",
            "sealed_keys": recipes,
            "sealed_kernel_features": features,
        }
    method = method_params(**{**own, **changes}, release="projected")
    return Agreement(reference, read.mapping, method, read.kinds, read.scales)


def plain_agreement(read: SchemaTables, reference: ReferenceSet) -> Agreement:
    """The reference release without noise, under the schema's method otherwise: the
    non-private linker sealed linkage is measured against (every pair scored, gate off)."""
    own = {k: v for k, v in read.method.items() if k != "encoding" and not k.startswith("sealed_")}
    method = method_params(**{**own, "noise_sigma": 0.0})
    return Agreement(reference, read.mapping, method, read.kinds, read.scales)


def gate_sigmas(
    agreement: Agreement,
    parties: Mapping[str, Mapping[str, Sequence[str]]],
    dictionary: Dictionary,
    randomness: Mapping[str, Randomness],
    limit: float,
) -> dict[str, float]:
    """Each party's smallest sigma that passes a gate at `limit`, on the records its gate
    samples, as AGREE chooses it (a run takes the larger of the two)."""
    chosen = {}
    for name, columns in parties.items():
        size = len(next(iter(columns.values())))
        rows = gate_sample(size, DEFAULT_AUDIT_RECORDS, randomness[name])
        chosen[name] = calibrate_noise(
            agreement, columns, rows, dictionary, randomness[name], limit, "every-name"
        ).sigma
    return chosen


@dataclass(frozen=True)
class WithoutPartners:
    """Alice's records with the partners of a share of Bob's rows taken out, so that some of
    Bob's rows have no partner in her file (the rows an attack on what she receives puts at
    risk), and Bob's records as they are."""

    alice: dict[str, list[str]]
    bob: dict[str, list[str]]
    unpartnered: np.ndarray  # per Bob row: its partner was taken out of Alice's file


def without_partners(
    alice: RecordTable,
    bob: RecordTable,
    truth: set[tuple[str, str]],
    share: float,
    rng: np.random.Generator,
) -> WithoutPartners:
    """Each of Bob's partnered rows loses its partner with probability `share` (one draw per
    partnered row, in Bob's order)."""
    partner_of_b = {b: a for a, b in truth}
    alone = {b for b in bob.ids if b in partner_of_b and rng.random() < share}
    removed = {partner_of_b[b] for b in alone}
    keep = [i for i, record in enumerate(alice.ids) if record not in removed]
    return WithoutPartners(
        alice={k: [v[i] for i in keep] for k, v in alice.attributes.items()},
        bob={k: list(v) for k, v in bob.attributes.items()},
        unpartnered=np.array([record in alone for record in bob.ids]),
    )


def released_units(
    agreement: Agreement,
    tables: Mapping[str, RecordTable],
    randomness: Mapping[str, Randomness],
) -> tuple[dict[str, Released], dict[str, np.ndarray]]:
    """Each party's release of its records, as its daemon makes it (in its secret row order),
    and the unit vectors sealed scoring reads from it."""
    released = {
        name: pipeline.release(agreement, table.attributes, randomness[name])
        for name, table in tables.items()
    }
    units = {n: unit_vectors(r.tensor, agreement.standardise) for n, r in released.items()}
    return released, units


@dataclass(frozen=True)
class SealedParties:
    """Both parties of an in-process sealed run at one training draw, keyed "alice" and
    "bob": their releases (in their secret row orders), unit vectors, trained models and each
    released row's blocking keys."""

    released: dict[str, Released]
    units: dict[str, np.ndarray]
    models: dict[str, Model]
    keys: dict[str, list[list[str]]]


def sealed_parties(
    agreement: Agreement, tables: Mapping[str, RecordTable], recipes: str, seed: int
) -> SealedParties:
    """What each party holds before EXCHANGE, as its daemon would make it from `seed`'s
    draws: the set-up every in-process sealed benchmark starts from."""
    randomness = {name: Randomness(seed, name) for name in tables}
    released, units = released_units(agreement, tables, randomness)
    models = {
        name: pipeline.train(agreement, table.attributes, randomness[name])[0]
        for name, table in tables.items()
    }
    chosen = session.recipes(recipes, list(tables["alice"].attributes))
    keys = {
        name: session.row_keys(chosen, table.attributes, released[name].order, name == "alice")
        for name, table in tables.items()
    }
    return SealedParties(released, units, models, keys)


@dataclass(frozen=True)
class ScoringForm:
    """One party's classifier as its daemon encrypts it for sealed scoring (no movers'
    alternative): (x, c) scaled as MATCH scales them, the evaluator's plaintext side of the
    form (`Peer`: its kernel features, if any) and the columns scored (`live`)."""

    x: np.ndarray
    c: np.ndarray
    evaluator: linear_form.Peer
    live: np.ndarray

    def buckets(
        self, y: np.ndarray, own: np.ndarray, peer: np.ndarray, thresholds: Sequence[float]
    ) -> np.ndarray:
        """Each (own row, peer row) pair's bucket among `thresholds` from the scaled score in
        the clear, as CKKS computes it up to its rare sign errors near a threshold; `y` is the
        peer's evaluator side (`linear_form.evaluator_part`)."""
        scores = self.c[own] + np.einsum("ij,ij->i", self.x[own], y[peer])
        return np.searchsorted(np.asarray(thresholds), scores, side="left")


def scoring_forms(agreement: Agreement, parties: SealedParties) -> dict[str, ScoringForm]:
    """Each party's `ScoringForm` from its trained model and unit vectors."""
    digest = agreement.digest()
    forms = {}
    for name, model in parties.models.items():
        units = parties.units[name]
        evaluator = evaluator_plaintext(agreement, model, digest)
        x, c = linear_form.scorer_part(model, units, evaluator)
        own_y = linear_form.evaluator_part(units, evaluator)
        x, c, _ = linear_form.scaled_forms(x, c, None, own_y, units.shape[1])
        # The columns encrypted: an initial entry's exact features, not D (sealed.exact_entries).
        forms[name] = ScoringForm(x, c, evaluator, evaluator.live(*units.shape[1:]))
    return forms


def noise_free_units(agreement: Agreement, columns: Mapping[str, Sequence[str]]) -> np.ndarray:
    """The unit vectors a party scores and keys with in sealed linkage (no noise)."""
    tensor = agreement.smash(columns, np.random.default_rng(0))
    return unit_vectors(tensor, agreement.standardise)


def with_partners(
    tables: dict[str, RecordTable], truth: set[tuple[str, str]], rows: int
) -> dict[str, RecordTable]:
    """Alice's first `rows` records and Bob's partners of them, in his order (both whole
    when 0): a smaller problem with the same share of partners as FEBRL4's."""
    if not rows:
        return tables
    alice, bob = tables["alice"], tables["bob"]
    kept_a = set(alice.ids[:rows])
    partners = {b for a, b in truth if a in kept_a}
    keep: dict[str, Sequence[int]] = {"alice": range(min(rows, len(alice.ids)))}
    keep["bob"] = [i for i, record in enumerate(bob.ids) if record in partners]
    return {
        name: RecordTable(
            table.path,
            [table.ids[i] for i in keep[name]],
            {k: [v[i] for i in keep[name]] for k, v in table.attributes.items()},
        )
        for name, table in tables.items()
    }
