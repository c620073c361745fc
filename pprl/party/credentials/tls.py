"""Mutual TLS for every connection, and the certificate identity of whoever calls."""

from __future__ import annotations

from pathlib import Path

import grpc

from pprl.party.tls_files import TlsFiles
from pprl.protocol.errors import InputError

CHUNK_BYTES = 4 << 20
# A tensor chunk plus its envelope must fit; nothing else on the wire comes close.
MAX_MESSAGE_BYTES = CHUNK_BYTES + (1 << 20)
# A process that is stopped (SIGSTOP, a hung host) keeps its TCP connections open but
# answers no HTTP/2 ping: every channel pings while a call is open and gives the call up
# when a ping goes unanswered, so no call waits on a silent peer for ever.
KEEPALIVE_MS = 10_000
CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.keepalive_time_ms", KEEPALIVE_MS),
    ("grpc.keepalive_timeout_ms", KEEPALIVE_MS),
    ("grpc.http2.max_pings_without_data", 0),
]
SERVER_OPTIONS = [
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    # Two daemons on one port would split the connections between them: bind exclusively.
    ("grpc.so_reuseport", 0),
    # Accept the clients' keepalive pings during long phases that send no data.
    ("grpc.http2.min_recv_ping_interval_without_data_ms", KEEPALIVE_MS // 2),
    ("grpc.http2.max_ping_strikes", 0),
    ("grpc.keepalive_time_ms", KEEPALIVE_MS),
    ("grpc.keepalive_timeout_ms", KEEPALIVE_MS),
]


def _read(path: Path, what: str) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror}", path=str(path)) from None
    if b"-----BEGIN" not in data:
        raise InputError(f"{what} is not a PEM file", path=str(path))
    return data


def server_credentials(tls: TlsFiles) -> grpc.ServerCredentials:
    """Server side of mutual TLS: a client without a certificate from our CA never gets in."""
    return grpc.ssl_server_credentials(
        [(_read(tls.key, "TLS key"), _read(tls.cert, "TLS certificate"))],
        root_certificates=_read(tls.ca, "CA certificate"),
        require_client_auth=True,
    )


def secure_channel(address: str, tls: TlsFiles, server_identity: str) -> grpc.Channel:
    """A channel that only talks to a server whose certificate names `server_identity`."""
    credentials = grpc.ssl_channel_credentials(
        root_certificates=_read(tls.ca, "CA certificate"),
        private_key=_read(tls.key, "TLS key"),
        certificate_chain=_read(tls.cert, "TLS certificate"),
    )
    options = [*CHANNEL_OPTIONS, ("grpc.ssl_target_name_override", server_identity)]
    return grpc.secure_channel(address, credentials, options=options)


def caller_identity(context: grpc.ServicerContext) -> str | None:
    """The common name of the client certificate that TLS verified against our CA."""
    names = context.auth_context().get("x509_common_name") or []
    return names[0].decode("utf-8", "replace") if names else None
