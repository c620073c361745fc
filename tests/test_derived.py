"""A value two threads need at once is derived once, and again when its source changes."""

from __future__ import annotations

import threading
import time

from pprl.party.phases.derived import Derived


def test_two_threads_asking_at_once_derive_once() -> None:
    derived, calls = Derived(), []

    def compute() -> list[int]:
        calls.append(1)
        time.sleep(0.2)
        return [1, 2, 3]

    got: list[object] = []
    threads = [
        threading.Thread(target=lambda: got.append(derived.get("pairs", ("run", "a"), compute)))
        for _ in range(2)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and got[0] is got[1]


def test_another_source_is_derived_again_and_replaces_the_last() -> None:
    derived = Derived()
    assert derived.get("pairs", ("run", "a"), lambda: "first") == "first"
    assert derived.get("pairs", ("run", "a"), lambda: "unused") == "first"
    assert derived.get("pairs", ("run", "b"), lambda: "second") == "second"
    assert derived.get("pairs", ("run", "a"), lambda: "third") == "third"
    assert derived.get("other", ("run", "a"), lambda: "own kind") == "own kind"
