"""pprl.bench.in_process reads a schema's [method] as a daemon reads a party's file: the
thresholds written as a list of numbers reach the method as its comma-separated text."""

from __future__ import annotations

from pprl.bench.in_process import schema_method
from pprl.protocol.sealed import session


def test_listed_thresholds_become_the_methods_text_and_the_rest_stays() -> None:
    read = schema_method({"sealed_thresholds": [0, 0.8, 1.6], "error_model": "registers"})
    assert session.thresholds(read["sealed_thresholds"]) == (0.0, 0.8, 1.6)
    assert read["error_model"] == "registers"
    written = schema_method({"sealed_thresholds": "0,1.6"})
    assert written["sealed_thresholds"] == "0,1.6"
    assert schema_method({}) == {}
