"""`pprl party serve`: one organisation's daemon, until stopped."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import sys

from pprl.protocol.errors import PprlError

LOG_LEVELS = ("debug", "info", "warning", "error")


def add_parser(sub: argparse._SubParsersAction) -> None:
    party = sub.add_parser("party", help="one organisation's daemon")
    party_sub = party.add_subparsers(dest="party_command", required=True)
    serve = party_sub.add_parser("serve", help="serve until stopped")
    serve.add_argument("--config", required=True, help="the party's TOML file")
    serve.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default="info",
        help="the least severe lines logged (default info)",
    )
    serve.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="text lines, or one JSON object a line for a log collector (default text)",
    )
    serve.set_defaults(handler=run_serve)
    health = party_sub.add_parser(
        "health",
        help="ask the party's daemon whether it serves (the standard gRPC health check, over "
        "mutual TLS with the party's own certificate); exit 0 when it does, 1 when not",
    )
    health.add_argument("--config", required=True, help="the party's TOML file")
    health.add_argument(
        "--timeout",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="how long to wait for the answer (default 5)",
    )
    health.set_defaults(handler=run_health)
    check = party_sub.add_parser(
        "check",
        help="check configuration, certificates, state directory, records and reference set, "
        "as start-up and AGREE would, without serving",
    )
    check.add_argument("--config", required=True, help="the party's TOML file")
    check.add_argument(
        "--probe",
        action="store_true",
        help="also dial each peer (mutual TLS, its health check: is it there, and is it who "
        "the configuration says) and the Dask scheduler, if one is configured",
    )
    check.set_defaults(handler=run_check)


def run_serve(args: argparse.Namespace) -> int:
    # lazy: the daemon (gRPC, the method's libraries) loads only when it is to serve
    from pprl.party.config import load_config
    from pprl.party.service.server import serve

    config = load_config(args.config)
    handler = logging.StreamHandler(sys.stderr)
    if args.log_format == "json":
        handler.setFormatter(JsonLines(config.identity))
    else:
        handler.setFormatter(
            logging.Formatter(f"%(asctime)s {config.identity} %(levelname)s %(message)s")
        )
    logging.basicConfig(level=args.log_level.upper(), handlers=[handler])
    serve(config)
    return 0


class JsonLines(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), party, level, logger, message."""

    def __init__(self, party: str) -> None:
        super().__init__()
        self.party = party

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(),
            "party": self.party,
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            line["traceback"] = self.formatException(record.exc_info)
        return json.dumps(line)


def run_health(args: argparse.Namespace) -> int:
    # lazy: gRPC and the configuration load only when a health check runs
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from pprl.party.config import load_config
    from pprl.party.credentials.tls import secure_channel

    config = load_config(args.config)
    host, _, port = config.listen.rpartition(":")
    # A daemon listening on every address answers on this machine's loopback.
    address = f"127.0.0.1:{port}" if host in ("0.0.0.0", "[::]", "") else config.listen
    with secure_channel(address, config.tls, config.identity) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=args.timeout)
        except grpc.RpcError as error:
            raise PprlError(
                f"{config.identity} at {address}: no answer ({error.code().name}: "
                f"{error.details()})"
            ) from None
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        raise PprlError(f"{config.identity} at {address}: {status}")
    print(f"{config.identity} at {address}: {status}")
    return 0


def run_check(args: argparse.Namespace) -> int:
    # lazy: the daemon's checks and the method load only when a check runs
    from pprl.party.config import load_config
    from pprl.party.phases.agree import data_report
    from pprl.party.phases.context import resolve_agreement
    from pprl.party.phases.words import data_words
    from pprl.party.service.startup import check_startup
    from pprl.party.storage.inputs import load_inputs

    config = load_config(args.config)
    check_startup(config)
    inputs = load_inputs(config)
    agreement = resolve_agreement(config, inputs)
    print(
        f"{config.identity}: configuration, certificate and state directory are fine; "
        f"{len(inputs.records):,} records, {len(inputs.reference):,} reference rows, "
        f"{len(agreement.mapping)} mapping entries"
    )
    print(f"{config.identity}: {data_words(data_report(inputs, agreement))}")
    if args.probe:
        # lazy: the peers' and the scheduler's probes load only with --probe
        from pprl.party.service.probes import probe_peers, probe_scheduler

        failed = [line for line in [*probe_peers(config), *probe_scheduler(config)] if line]
        if failed:
            raise PprlError("; ".join(failed))
    return 0
