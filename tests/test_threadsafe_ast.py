"""The daemon's serialised `ast.parse` (pprl.party.service.threadsafe_ast): NumPy's header reads and
every other literal_eval wait for a parse running in another thread."""

from __future__ import annotations

import ast
import sys
import threading

import numpy as np
import pytest

from pprl.party.service import threadsafe_ast


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12 keeps the depth per call")
def test_a_literal_eval_waits_while_another_thread_holds_the_parse(tmp_path, monkeypatch):
    monkeypatch.setattr(ast, "parse", ast.parse)  # restored after the test
    assert threadsafe_ast.install() and not threadsafe_ast.install()
    path = tmp_path / "a.npy"
    np.save(path, np.arange(3))
    done = threading.Event()
    loaded: list[np.ndarray] = []

    def load() -> None:
        loaded.append(np.load(path))  # its header goes through ast.literal_eval
        done.set()

    with threadsafe_ast.LOCK:
        worker = threading.Thread(target=load)
        worker.start()
        assert not done.wait(0.3)  # held: NumPy's header parse waits
    worker.join(5)
    assert done.is_set() and loaded[0].tolist() == [0, 1, 2]
    assert ast.literal_eval("{'a': (1, 2)}") == {"a": (1, 2)}
