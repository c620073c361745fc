"""Local daemons (two, or more) and a coordinator on one machine, over loopback mutual TLS.

`pprl demo`, the scale benchmark and the integration tests all deploy through these helpers,
so they run one code path.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pprl.files import generated
from pprl.files.atomic import write_text_atomic
from pprl.party.config import (
    DEFAULT_REIDENTIFICATION_LIMIT,
    KNOWN_KEYS,
    TlsFiles,
    attribute_kinds,
    attribute_scales,
    load_config,
    read_toml,
)
from pprl.party.coordination.coordinator import Coordinator, CoordinatorError, Endpoint
from pprl.party.credentials.bloom_key import load_bloom_key
from pprl.party.credentials.certs import make_development_pki
from pprl.party.reporting import facts as run_facts
from pprl.party.reporting.render import write_report
from pprl.party.storage.artifacts import LINKAGE_CSV, PEER_MATCHES_CSV, REPORT
from pprl.party.storage.inputs import load_inputs
from pprl.party.storage.state import run_dir
from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.error_model import ONE_ERROR
from pprl.protocol.errors import InputError, PprlError
from pprl.protocol.metrics import Quality, linkage_quality

DEFAULT_REFERENCE_ROWS = 1000
PARTIES = ("alice", "bob")
# Where a demo without --workdir keeps its run, one directory a run (named by its start
# time), relative to where it is started: `make demo` leaves each party's result there.
DEMO_RUNS = Path("demo-run")


class DemoError(PprlError):
    """A daemon of the demo failed; the message carries the tail of its log."""


def write_demo_data(
    out: Path,
    size: int,
    seed: int,
    side: str = "all",
    overlap: float = 1.0,
    reference_rows: int = DEFAULT_REFERENCE_ROWS,
    *,
    errors_per_row: int | tuple[int, int] = 1,
    error_model: str | None = None,
    namesakes: float = 0.0,
    parties: int = 2,
) -> list[Path]:
    """Built-in voter-like data; each side can write its own file alone from the same seed.
    Bob's copies carry `errors_per_row` single edits, or the errors of `error_model`.
    With `parties=3`, Carol holds copies of Alice's people too (truth files for each pair)."""
    if size < 2:
        raise InputError(f"--size must be at least 2, got {size}")
    if reference_rows < 2:
        raise InputError(f"--reference-rows must be at least 2, got {reference_rows}")
    if not 0.0 <= overlap <= 1.0:
        raise InputError(f"--overlap must be between 0 and 1, got {overlap}")
    if not 0.0 <= namesakes <= 1.0:
        raise InputError(f"--namesakes must be between 0 and 1, got {namesakes}")
    if parties not in (2, 3):
        raise InputError(f"--parties must be 2 or 3, got {parties}")
    if parties == 3 and (error_model is not None or not isinstance(errors_per_row, int)):
        raise InputError("with --parties 3, every copy takes --errors N single edits")
    if side == "carol" and parties != 3:
        raise InputError("--side carol needs --parties 3")
    out.mkdir(parents=True, exist_ok=True)
    data = synthetic.generate(
        size,
        seed,
        overlap=overlap,
        errors_per_row=errors_per_row,
        errors=error_model,
        namesakes=namesakes,
    )
    written = [out / "reference.csv"]
    generated.write_reference_csv(written[0], synthetic.default_reference(reference_rows))
    if side in ("alice", "all"):
        written.append(out / "alice.csv")
        generated.write_records_csv(written[-1], data.alice)
    if side in ("bob", "all"):
        written.append(out / "bob.csv")
        generated.write_records_csv(written[-1], data.bob)
    if side == "all":
        written.append(out / "truth.csv")
        generated.write_truth_csv(written[-1], data.truth)
    if parties == 3 and side in ("carol", "all"):
        assert isinstance(errors_per_row, int)
        carol, alice_carol = synthetic.generate_third(data, seed, overlap, errors_per_row)
        written.append(out / "carol.csv")
        generated.write_records_csv(written[-1], carol)
        if side == "all":
            bob_carol = synthetic.pair_truth(data.truth, alice_carol)
            for pair, truth in ((("alice", "carol"), alice_carol), (("bob", "carol"), bob_carol)):
                written.append(out / f"truth_{pair[0]}_{pair[1]}.csv")
                generated.write_truth_csv(written[-1], truth, pair)
    return written


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _toml(value: Any) -> str:
    """A TOML value: strings (and paths) quoted, numbers and booleans bare, lists and tables
    inline. JSON's string escapes are valid TOML basic strings."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(str(value))


# What a schema file may set, by table: the data's description, never paths or identities.
SCHEMA_KEYS = {
    "records": ("id_column", "attributes", "kinds", "date_formats", "scales", "on_bad_value"),
    "reference": ("mapping",),
    "method": tuple(KNOWN_KEYS["method"]),
}


def load_schema(path: Path) -> dict[str, dict[str, Any]]:
    """The [records], [reference] and [method] keys a demo writes into both parties' files;
    the daemons' own configuration loader checks the values."""
    data = read_toml(path, "schema file")
    for table, value in data.items():
        if table not in SCHEMA_KEYS or not isinstance(value, dict):
            tables = ", ".join(f"[{t}]" for t in SCHEMA_KEYS)
            raise InputError(
                f"a schema holds only the tables {tables}", path=str(path), field=table
            )
        for key in value:
            if key not in SCHEMA_KEYS[table]:
                known = ", ".join(SCHEMA_KEYS[table])
                message = f"not a schema key; [{table}] may set {known}"
                raise InputError(message, path=str(path), field=f"{table}.{key}")
    return data


@dataclass
class PartySetup:
    identity: str
    port: int
    config: Path
    state_dir: Path
    log: Path


@dataclass
class Deployment:
    """Everything the local daemons and a coordinator need, written under one directory."""

    workdir: Path
    parties: dict[str, PartySetup]
    coordinator_tls: TlsFiles
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)

    def endpoints(self) -> list[Endpoint]:
        return [Endpoint(n, f"127.0.0.1:{p.port}", n) for n, p in self.parties.items()]


@dataclass(frozen=True)
class Privacy:
    """The noise and gate written into both daemons' configurations. By default the gate only
    reports (a limit of 100%), so the daemons release raw distances; `pprl demo` sets the
    daemons' own default limit, under which they choose their noise."""

    noise_sigma: float | str | None = None  # None: the daemon's default; "auto": chosen at AGREE
    feature: str | None = None  # None: the daemon's default for the noise
    max_reidentification: float = 1.0
    release: str | None = None  # None: the daemon's default for the feature
    # 0: no minimum, and TRAIN estimates nothing (the gate's 100% default: only report);
    # None: the daemon's default.
    min_expected_f1: float | None = 0.0
    # Records the gate attacks (None: the daemon's default).
    audit_records: int | None = None
    # The gate's list of names (None: the daemon's default, the census lists).
    dictionary: Path | None = None
    # What each party sends (None: the daemon's default, or the schema's).
    encoding: str | None = None


def prepare(
    workdir: Path,
    records: dict[str, Path],
    reference: Path,
    classifier: str | None = None,
    wire_log: bool = False,
    privacy: Privacy | None = None,
    schema: dict[str, dict[str, Any]] | None = None,
    matching: dict[str, Any] | None = None,
    date_formats: dict[str, dict[str, str]] | None = None,
    built_in: bool = False,
) -> Deployment:
    """Certificates and each party's configuration; `date_formats` gives a party's own
    formats of date attributes over the schema's (registers write dates each their way).
    `built_in`: the records are the built-in generated ones, made with one edit a copy, so
    TRAIN corrupts them so (error_model = "one-error") where a register's get the daemon's
    default, the register model."""
    # The daemons run in their own state directories: every path in their configurations
    # must hold from there (a relative --workdir put their certificates out of reach).
    workdir = workdir.resolve()
    privacy = privacy or Privacy()
    schema = schema or {}
    # No classifier given: the daemon's default for the error model.
    method: dict[str, Any] = {} if classifier is None else {"classifier": classifier}
    if privacy.feature:
        method["feature"] = privacy.feature
    if privacy.noise_sigma is not None:
        method["noise_sigma"] = privacy.noise_sigma
    if privacy.release:
        method["release"] = privacy.release
    method.update(schema.get("method", {}))
    if built_in:
        method.setdefault("error_model", ONE_ERROR)
    if privacy.encoding:
        method["encoding"] = privacy.encoding
    names = list(records)
    certs = make_development_pki(workdir / "certs", [*names, "coordinator"])
    ports = {name: free_port() for name in names}
    parties = {}
    for name in names:
        cert, key = certs[name]
        state = workdir / "state" / name
        lines = [
            f"identity = {_toml(name)}",
            f'listen = "127.0.0.1:{ports[name]}"',
            f"state_dir = {_toml(state)}",
            "[records]",
            f"path = {_toml(records[name].resolve())}",
            *(f"{k} = {_toml(v)}" for k, v in _own_records(schema, date_formats, name).items()),
            "[reference]",
            f"path = {_toml(reference.resolve())}",
            *(f"{k} = {_toml(v)}" for k, v in schema.get("reference", {}).items()),
            "[method]",
            *(f"{k} = {_toml(v)}" for k, v in method.items()),
            "[privacy]",
            "# The demo shows the gate's measurement; a custodian's default limit is "
            f"{DEFAULT_REIDENTIFICATION_LIMIT}.",
            f"max_reidentification = {privacy.max_reidentification!r}",
            *_setting("min_expected_f1", privacy.min_expected_f1),
            *_setting("audit_records", privacy.audit_records),
            *_setting("dictionary", privacy.dictionary),
            "[tls]",
            f"cert = {_toml(cert)}",
            f"key = {_toml(key)}",
            f"ca = {_toml(workdir / 'certs' / 'ca.pem')}",
            *_peer_tables(name, ports),
            "[coordinator]",
            'identity = "coordinator"',
        ]
        if wire_log:
            lines += ["[wire_log]", f"path = {_toml(workdir / f'{name}.wire.log')}"]
        if matching:
            lines += ["[matching]", *(f"{k} = {_toml(v)}" for k, v in matching.items())]
        config = workdir / f"{name}.toml"
        config.write_text("\n".join(lines) + "\n", encoding="utf-8")
        parties[name] = PartySetup(name, ports[name], config, state, workdir / f"{name}.log")
    cert, key = certs["coordinator"]
    return Deployment(workdir, parties, TlsFiles(cert, key, workdir / "certs" / "ca.pem"))


def _setting(key: str, value: Any) -> list[str]:
    """A `key = value` line, or none where the value is None (the daemon's default)."""
    return [] if value is None else [f"{key} = {_toml(value)}"]


def _peer_tables(name: str, ports: dict[str, int]) -> list[str]:
    """`[peer]` beside one other party, `[[peers]]` beside several."""
    others = [other for other in ports if other != name]
    header = "[peer]" if len(others) == 1 else "[[peers]]"
    lines = []
    for other in others:
        lines += [header, f"identity = {_toml(other)}", f'address = "127.0.0.1:{ports[other]}"']
    return lines


@contextmanager
def running(deployment: Deployment, wait_seconds: float = 60) -> Iterator[Coordinator]:
    """Every party's daemon started and a coordinator that found them ready; the coordinator
    closed and the daemons stopped after, whatever happened."""
    try:
        for name in deployment.parties:
            start_daemon(deployment, name)
        coordinator = Coordinator(deployment.endpoints(), deployment.coordinator_tls)
        try:
            coordinator.wait_ready(wait_seconds)
            yield coordinator
        finally:
            coordinator.close()
    finally:
        for name in deployment.parties:
            stop_daemon(deployment, name)


def _own_records(
    schema: dict[str, dict[str, Any]], date_formats: dict[str, dict[str, str]] | None, name: str
) -> dict[str, Any]:
    """The schema's [records] keys, with `name`'s own date formats over its date_formats."""
    records = dict(schema.get("records", {}))
    own = (date_formats or {}).get(name)
    if own:
        records["date_formats"] = {**records.get("date_formats", {}), **own}
    return records


def check_inputs(deployment: Deployment) -> None:
    """What the daemons would refuse at AGREE (records, reference set, kinds, mapping),
    found before starting them."""
    for setup in deployment.parties.values():
        config = load_config(setup.config)
        inputs = load_inputs(config)
        kinds, scales = attribute_kinds(config), attribute_scales(config)
        key = load_bloom_key(config.privacy.bloom_key) if config.privacy.bloom_key else None
        Agreement(inputs.reference, config.mapping, config.method, kinds, scales, bloom_key=key)


def generated_deployment(
    workdir: Path,
    size: int,
    seed: int,
    reference_rows: int,
    overlap: float = 1.0,
    encoding: str | None = None,
) -> Deployment:
    """Built-in data for both parties with certificates and configurations; no daemon
    started (the tests' and the soak benchmark's deployments). `encoding`: None for the
    daemons' default."""
    data = workdir / "data"
    write_demo_data(data, size, seed, overlap=overlap, reference_rows=reference_rows)
    return prepare(
        workdir,
        {name: data / f"{name}.csv" for name in PARTIES},
        data / "reference.csv",
        privacy=Privacy(encoding=encoding),
        built_in=True,
    )


def start_daemon(deployment: Deployment, name: str) -> subprocess.Popen:
    party = deployment.parties[name]
    # Both daemons share this machine: one BLAS thread each (unless the caller chose) keeps
    # their concurrent matrix work from spinning against each other on the same cores.
    env = {**os.environ}
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        env.setdefault(variable, "1")
    with party.log.open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "pprl", "party", "serve", "--config", str(party.config)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
    deployment.processes[name] = process
    return process


def stop_daemon(deployment: Deployment, name: str, sig: int = signal.SIGTERM) -> None:
    process = deployment.processes.pop(name, None)
    if process is None or process.poll() is not None:
        return
    process.send_signal(sig)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def log_tail(deployment: Deployment, name: str, lines: int = 15) -> str:
    path = deployment.parties[name].log
    text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    return "\n".join(text.splitlines()[-lines:])


def read_pairs(path: Path, flip: bool = False) -> set[tuple[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))[1:]
    return {(b, a) if flip else (a, b) for a, b, *_ in rows}


def read_truth(path: Path, parties: tuple[str, str] = ("alice", "bob")) -> set[tuple[str, str]]:
    columns = [f"{name}_id" for name in parties]
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        if reader.fieldnames is None or not set(columns) <= set(reader.fieldnames):
            raise InputError(f"needs the columns {','.join(columns)}", path=str(path), row=1)
        return {(row[columns[0]], row[columns[1]]) for row in reader}


def evaluate(
    deployment: Deployment,
    run_id: str,
    truth: set[tuple[str, str]],
    pair: tuple[str, str] = ("alice", "bob"),
) -> dict:
    """Each classifier's match set and the agreed linkage of `pair`'s run against the truth
    (pairs of the first party's id and the second's), over all pairs.

    The first party's accepted pairs, with its ids revealed, sit in the second's state, and
    the other way round.
    """
    first, second = pair
    first_state = run_dir(deployment.parties[first].state_dir, run_id)
    second_state = run_dir(deployment.parties[second].state_dir, run_id)
    sets = {
        first: read_pairs(second_state / PEER_MATCHES_CSV, flip=True),
        second: read_pairs(first_state / PEER_MATCHES_CSV),
        "linkage": read_pairs(first_state / LINKAGE_CSV),
    }
    return {name: _quality(linkage_quality(pairs, truth)) for name, pairs in sets.items()}


def _quality(quality: Quality) -> dict[str, float | int]:
    return {
        "precision": round(quality.precision, 4),
        "recall": round(quality.recall, 4),
        "f1": round(quality.f1, 4),
        "true_positives": quality.true_positives,
        "false_positives": quality.false_positives,
        "false_negatives": quality.false_negatives,
    }


@dataclass(frozen=True)
class DemoOptions:
    size: int = 2000
    data_seed: int = 7  # of the built-in data; the daemons draw their randomness secretly
    records_a: Path | None = None
    records_b: Path | None = None
    truth: Path | None = None
    reference: Path | None = None
    classifier: str | None = None
    workdir: Path | None = None
    reference_rows: int = DEFAULT_REFERENCE_ROWS
    privacy: Privacy = field(default_factory=lambda: Privacy())
    schema: Path | None = None  # attributes, kinds and mapping of the given records
    matching: dict[str, Any] = field(default_factory=dict)  # both parties' [matching] keys
    # Bob's own formats of date attributes, over the schema's (--date-format-b)
    date_formats_b: dict[str, str] = field(default_factory=dict)


def _inputs(options: DemoOptions, workdir: Path) -> tuple[dict[str, Path], Path, Path | None]:
    if options.records_a is not None or options.records_b is not None:
        if options.records_a is None or options.records_b is None:
            raise InputError("--records-a and --records-b go together")
        records = {"alice": options.records_a, "bob": options.records_b}
        for path in [*records.values(), options.reference, options.truth]:
            if path is not None and not path.is_file():
                raise InputError("file not found", path=str(path))
        reference = options.reference
        if reference is None:
            built_in = synthetic.default_reference(DEFAULT_REFERENCE_ROWS)
            _check_built_in_reference(options.schema, set(built_in))
            reference = workdir / "reference.csv"
            generated.write_reference_csv(reference, built_in)
        return records, reference, options.truth
    data = workdir / "data"
    print(f"generating {options.size} voter-like records a side (seed {options.data_seed})")
    write_demo_data(data, options.size, options.data_seed, reference_rows=options.reference_rows)
    reference = options.reference or data / "reference.csv"
    return {"alice": data / "alice.csv", "bob": data / "bob.csv"}, reference, data / "truth.csv"


def _check_built_in_reference(schema_path: Path | None, columns: set[str]) -> None:
    """A schema whose mapping needs columns the built-in reference set (first and last names)
    lacks cannot run without --reference: say so, and how to make one, before any file is
    written."""
    if schema_path is None:
        return
    mapping = load_schema(schema_path).get("reference", {}).get("mapping", [])
    needed = {part for _, column in mapping for part in str(column).split("+")}
    lacking = sorted(needed - columns)
    if lacking:
        raise InputError(
            f"the mapping names reference column(s) {', '.join(map(repr, lacking))}, which the "
            f"built-in reference set ({', '.join(sorted(columns))} only) lacks: give a "
            "reference set with --reference FILE, made for instance with `pprl reference "
            "--column COLUMN=KIND ...` (docs/research/reference-sets.md)",
            path=str(schema_path),
        )


def fresh_workdir(base: Path = DEMO_RUNS) -> Path:
    """A new directory under `base` named by the time, made here: never one that exists (a
    run started within the same second gets a suffix), so no earlier result is written over."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path, attempt = base / stamp, 1
    while True:
        try:
            path.mkdir(parents=True)
            return path
        except FileExistsError:
            attempt += 1
            path = base / f"{stamp}-{attempt}"


def _place_results(summary: dict[str, Any], deployment: Deployment) -> None:
    """Each party's result file and report by their full paths, to be found on this machine."""
    for name, party in summary["parties"].items():
        if party.get("result"):
            result = deployment.parties[name].state_dir / party["result"]
            party["result_path"] = str(result)
            party["report_path"] = str(result.with_name(REPORT[0]))


def _report_against(deployment: Deployment, run_id: str, truth_path: Path) -> None:
    """Each party's run report written again with the truth, which the daemons never see:
    the demo knows it, and the report then shows precision and recall as measured."""
    for name in PARTIES:
        facts = run_facts.read_facts(deployment.parties[name].state_dir, run_id)
        write_report(facts, facts.directory, run_facts.read_truth(truth_path, facts))


def run_demo(options: DemoOptions) -> dict[str, Any]:
    """The whole run on a fresh deployment, kept in the working directory with its summary
    (summary.json); a directory made here goes again if the demo fails before any daemon
    ran, as it then holds nothing to look at."""
    made = options.workdir is None
    workdir = fresh_workdir() if options.workdir is None else options.workdir
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"working directory: {workdir}")
    failed = True
    deployment = None
    try:
        started = time.perf_counter()
        records, reference, truth_path = _inputs(options, workdir)
        truth = read_truth(truth_path) if truth_path else None
        schema = load_schema(options.schema) if options.schema else None
        deployment = prepare(
            workdir,
            records,
            reference,
            options.classifier,
            privacy=options.privacy,
            schema=schema,
            matching=options.matching,
            date_formats={"bob": options.date_formats_b},
            built_in=options.records_a is None,
        )
        try:
            check_inputs(deployment)
        except PprlError:
            deployment = None  # no daemon ran: nothing to keep
            raise
        for name in PARTIES:
            start_daemon(deployment, name)
            print(
                f"started {name} daemon (pid {deployment.processes[name].pid}) "
                f"on 127.0.0.1:{deployment.parties[name].port}"
            )
        coordinator = Coordinator(deployment.endpoints(), deployment.coordinator_tls)
        try:
            try:
                coordinator.wait_ready(30)
            except CoordinatorError as error:
                logs = "\n".join(f"--- {n}:\n{log_tail(deployment, n)}" for n in PARTIES)
                raise DemoError(f"daemons did not come up: {error}\n{logs}") from None
            summary = coordinator.run(new=True)
        finally:
            coordinator.close()
        if truth is not None:
            summary.update(evaluate(deployment, summary["run_id"], truth))
            if truth_path is not None:
                _report_against(deployment, summary["run_id"], truth_path)
        summary["demo_seconds"] = round(time.perf_counter() - started, 3)
        _place_results(summary, deployment)
        summary["workdir"] = str(workdir.resolve())
        write_text_atomic(workdir / "summary.json", json.dumps(summary, indent=2) + "\n")
        failed = False
        return summary
    finally:
        if deployment is not None:
            for name in PARTIES:
                stop_daemon(deployment, name)
        if failed and deployment is not None:
            print(f"logs kept in {workdir}", file=sys.stderr)
        elif failed and made:
            shutil.rmtree(workdir, ignore_errors=True)
