"""A TCP proxy on loopback between two daemons: it forwards bytes, late or not at all.

Started and stopped by the test that uses it; it only listens on and connects to 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time

_BLOCK = 64 << 10


class Proxy:
    """Listens on a free loopback port and forwards each connection to `target_port`.

    `delay` seconds are added before each forwarded block; `cut_after` bytes sent towards
    the target end the first connection that carries that many (both sides see it drop).
    """

    def __init__(self, target_port: int, delay: float = 0.0, cut_after: int | None = None):
        self.target_port = target_port
        self.delay = delay
        self.cut_after = cut_after
        self.cuts = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, name="proxy-accept", daemon=True).start()

    def close(self) -> None:
        self._stop.set()
        self._listener.close()
        with self._lock:
            for sock in self._sockets:
                _close(sock)

    def __enter__(self) -> Proxy:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.target_port), timeout=10)
            except OSError:
                _close(client)
                continue
            server.settimeout(None)
            with self._lock:
                self._sockets += [client, server]
            pair = (client, server)
            threading.Thread(
                target=self._pump, args=(client, server, pair, True), daemon=True
            ).start()
            threading.Thread(
                target=self._pump, args=(server, client, pair, False), daemon=True
            ).start()

    def _pump(self, source, sink, pair, towards_target: bool) -> None:
        sent = 0
        try:
            while not self._stop.is_set():
                data = source.recv(_BLOCK)
                if not data:
                    break
                if self.delay:
                    time.sleep(self.delay)
                sent += len(data)
                if towards_target and self._should_cut(sent):
                    break
                sink.sendall(data)
        except OSError:
            pass
        for sock in pair:
            _close(sock)

    def _should_cut(self, sent: int) -> bool:
        with self._lock:
            if self.cut_after is None or self.cuts or sent < self.cut_after:
                return False
            self.cuts += 1
            return True


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
