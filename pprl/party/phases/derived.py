"""Values a daemon derives from stored files and needs twice at once: MATCH's scoring and its
serving of the peer's evaluation both need the run's candidate pairs, which at a million a
side take two minutes to derive. The last value of each kind is kept, by the checksums of
what it was derived from, and derived once however many threads ask."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class Derived:
    """The last value of each kind, by its source."""

    def __init__(self) -> None:
        self._held: dict[str, tuple[tuple[str, ...], Any]] = {}
        self._lock = threading.Lock()

    def get(self, kind: str, source: tuple[str, ...], compute: Callable[[], Any]) -> Any:
        """`compute()`, or what it gave last for the same `source`; a thread asking while
        another derives waits for that value."""
        with self._lock:
            held = self._held.get(kind)
            if held is not None and held[0] == source:
                return held[1]
            value = compute()
            self._held[kind] = (source, value)
            return value
