"""`pprl audit`: play the peer against one's own records before taking part in a run.

It computes the tensors the daemon would send with the party's configuration, once raw and
once with the configured noise, attacks a sample of each with a public name list, and prints
per attribute and per record what the attack recovers.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pprl.cli.summary import write_json
from pprl.party.config import load_config
from pprl.party.storage.inputs import load_dictionary, load_inputs, load_population
from pprl.protocol.errors import InputError
from pprl.protocol.gate import audit_rows, calibrate_noise
from pprl.protocol.linkage.released import Released
from pprl.protocol.privacy.audit import audit_tensor
from pprl.protocol.privacy.noise import CalibrationError
from pprl.protocol.release_attacks import attacked_entries
from pprl.protocol.vectors.randomness import Randomness, secret_generator
from pprl.protocol.vectors.release import Release
from pprl.protocol.vectors.smashing import Entry, smash

if TYPE_CHECKING:
    from pprl.protocol.agreement import Agreement
    from pprl.protocol.privacy.audit import AuditReport

GATED = {"every-name": "record_reidentified", "any-name": "record_exposed"}


@dataclass(frozen=True)
class AuditOptions:
    records: Path
    config: Path
    dictionary: Path | None = None
    sample: int = 1000
    seed: int | None = None
    population: Path | None = None


def _row(name: str, report: AuditReport) -> dict[str, Any]:
    return {
        "release": name,
        "records": report.records,
        "record_exact": report.record_exact,
        "record_reidentified": report.record_reidentified,
        "record_exposed": report.record_exposed,
        "attack": report.attack,
        "by_attack": report.by_attack,
        "attributes": {
            a.attribute: {
                "values": a.audited,
                "in_dictionary": a.in_dictionary,
                "exact": a.result.exact_rate,
                "nearest": a.result.nearest_rate,
                "median_candidates": a.result.median_candidates,
            }
            for a in report.attributes
        },
    }


def add_parser(sub: argparse._SubParsersAction) -> None:
    audit = sub.add_parser(
        "audit", help="attack the tensors this party would send, as its peer could"
    )
    audit.add_argument("--records", required=True, metavar="CSV", help="the records to audit")
    audit.add_argument("--config", required=True, help="the party's TOML file")
    audit.add_argument(
        "--dictionary",
        metavar="CSV",
        help="public names: columns name,kind(,weight) for first names and surnames apart "
        "with their frequencies (kind first or surname), or any CSV as one list (every value "
        "after the header row)",
    )
    audit.add_argument(
        "--population",
        metavar="CSV",
        help="a public list of people with the name columns: also attack every attribute of a "
        "record together (default: [privacy] population, if set)",
    )
    audit.add_argument("--sample", type=int, default=1000, help="records attacked")
    audit.add_argument("--seed", type=int, help="sample and noise seed (default: secret)")
    audit.add_argument("--json", metavar="PATH", help="also write the report as JSON")
    audit.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Exit 1 when the release the configuration sends is over the gate's limit."""
    options = AuditOptions(
        records=Path(args.records),
        config=Path(args.config),
        dictionary=Path(args.dictionary) if args.dictionary else None,
        sample=args.sample,
        seed=args.seed,
        population=Path(args.population) if args.population else None,
    )
    report = run_audit(options)
    print_audit(report)
    write_json(args.json, report)
    sent = report["results"][-1]
    if sent[GATED[report["measure"]]] > report["limit"]:
        print(
            f"pprl: the {sent['release']} release this configuration sends is over the limit; "
            "the daemon's privacy gate would refuse it",
            file=sys.stderr,
        )
        return 1
    return 0


def run_audit(options: AuditOptions) -> dict[str, Any]:
    """The report as a dict (what --json writes); raises InputError for unusable inputs."""
    # lazy: the daemon's phases (gRPC, the run store) load only when an audit runs
    from pprl.party.phases.context import PhaseFailed, resolve_agreement

    config = load_config(options.config)
    if options.sample < 1:
        raise InputError(f"--sample must be at least 1, got {options.sample}")
    inputs = load_inputs(config, options.records)
    records, ref = inputs.records, inputs.reference
    try:
        agreement = resolve_agreement(config, inputs)
    except PhaseFailed as exc:
        raise InputError(str(exc), path=str(options.config)) from None
    method, sigma0, words = agreement.method, agreement.sigma0, agreement.noise_words()
    rng = secret_generator() if options.seed is None else np.random.default_rng(options.seed)
    size = min(options.sample, len(records))
    rows = np.sort(rng.choice(len(records), size, replace=False))
    truth = {name: [values[i] for i in rows] for name, values in records.attributes.items()}
    dictionary = load_dictionary(options.dictionary or config.privacy.dictionary, ref)
    names = list(dict.fromkeys(a for a, _ in attacked_mapping(agreement)))
    population_path = options.population or config.privacy.population
    population = load_population(population_path, names)
    randomness = Randomness(options.seed, "audit")
    choice = None
    if config.auto_noise:
        print(f"choosing the noise as AGREE would, on {size:,} sampled records", flush=True)
        try:
            choice = calibrate_noise(
                agreement,
                truth,
                np.arange(size),
                dictionary,
                randomness,
                config.privacy.max_reidentification,
                config.privacy.measure,
                population=population,
            )
        except CalibrationError as exc:
            raise InputError(f'noise_sigma = "auto": {exc}', path=str(options.config)) from None
        agreement = agreement.with_noise(choice.sigma)
        method, words = agreement.method, agreement.noise_words()
    if not agreement.encoding.takes_noise:
        # What the daemon sends takes no noise (the filters, whose key the peer holds): the
        # attack on it is the only one.
        print(f"attacking {size:,} sampled records, {words}", flush=True)
        identity = np.arange(size)
        released = Released(identity, agreement.smash(truth, rng))
        report = audit_rows(
            agreement, released, identity, truth, dictionary, config.privacy.measure
        )
        results = [_row(agreement.encoding.name, report)]
    else:
        print(f"attacking {size:,} sampled records, raw release", flush=True)
        attacked = attacked_mapping(agreement)
        raw_entries = [Entry(a, c, release=Release(), metric=agreement.metric) for a, c in attacked]
        raw = smash(truth, agreement.reference.columns, raw_entries, rng=rng)
        attacker = dictionary.under(agreement.metric)
        results = [_row("raw", audit_tensor(raw, truth, raw_entries, attacker))]
    if method.noise_sigma:
        print(f"attacking {size:,} sampled records, defended release", flush=True)
        # What the daemon would send: its release (projected or distances), its noise.
        tensor = agreement.smash(truth, rng, key=randomness.noise_key)
        identity = np.arange(size)
        released = Released(identity, tensor)
        report = audit_rows(
            agreement,
            released,
            identity,
            truth,
            dictionary,
            config.privacy.measure,
            population=population,
        )
        results.append(_row("defended", report))
    return {
        "records": str(options.records),
        "config": str(options.config),
        "dictionary": str(options.dictionary or config.privacy.dictionary or "census"),
        "dictionary_names": len(dictionary.names),
        "population": str(population_path) if population else "",
        "population_people": population.size if population else 0,
        "reference_rows": len(ref),
        "noise_sigma": method.noise_sigma,
        "noise_edits": method.noise_sigma * sigma0,
        "noise": words,
        "noise_choice": choice.words() if choice else "",
        "release": method.release,
        "limit": config.privacy.max_reidentification,
        "measure": config.privacy.measure,
        "results": results,
    }


def attacked_mapping(agreement: Agreement) -> list[tuple[str, str]]:
    """The mapping entries the attacks judge."""
    return [agreement.mapping[m] for m in attacked_entries(agreement)]


def print_audit(report: dict[str, Any]) -> None:
    print(
        f"\ndictionary: {report['dictionary']} ({report['dictionary_names']:,} names); "
        f"reference set: {report['reference_rows']:,} rows\n{report['noise']}\n"
    )
    if report["noise_choice"]:
        print(f"noise chosen automatically: {report['noise_choice']}\n")
    print(
        f"{'release':<9} {'attribute':<10} {'values':>7} {'in dict':>8} {'exact':>7} "
        f"{'nearest':>8} {'median cands':>12}"
    )
    for result in report["results"]:
        for attribute, a in result["attributes"].items():
            print(
                f"{result['release']:<9} {attribute:<10} {a['values']:>7,} "
                f"{a['in_dictionary']:>8.1%} {a['exact']:>7.1%} {a['nearest']:>8.1%} "
                f"{a['median_candidates']:>12g}"
            )
        rate = result[GATED[report["measure"]]]
        verdict = "over" if rate > report["limit"] else "within"
        print(
            f"{result['release']:<9} {'records':<10} {result['records']:>7,} {'':>8} "
            f"{result['record_exact']:>7.1%} {result['record_reidentified']:>8.1%}   "
            f"({result['record_exposed']:.1%} lose at least one name; {rate:.1%} is "
            f"{verdict} the gate's limit of {report['limit']:.1%} on {report['measure']})"
        )
        if len(result["by_attack"]) > 1:
            rates = ", ".join(f"{a} {r:.1%}" for a, r in result["by_attack"].items())
            print(f"{'':<20} strongest attacker: {result['attack']} ({rates})")
    print(
        "\nexact: the rounded vector names exactly one dictionary entry, the true one; nearest:"
        "\nthe closest dictionary vector is unique and within one edit of the true value; a"
        "\nrecord counts when every non-empty value of it falls to one of the two. Under noise"
        "\nthree attackers run: every name equally likely (uniform), names weighted by how"
        "\ncommon they are (prior), and also by how often each vector occurs (counts), the"
        "\nweighted ones with the list that fits each attribute best (first names, surnames,"
        "\neither); without noise the prior settles the uniform attacker's near ties. The"
        "\ndefended figures are the strongest one's."
    )
    if report["population"]:
        print(
            f"With the list of people {report['population']} "
            f"({report['population_people']:,} people) a fourth attacker (population) takes"
            "\nthe listed person nearest over every attribute of a record together."
        )
    else:
        print(
            "Not modelled here: an attacker holding a list of people (a voter roll) that"
            "\ncombines a record's attributes; give one with --population "
            "(docs/research/privacy.md)."
        )
