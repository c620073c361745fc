"""A peer's file of near-variants under the hidden join (benchmarks/sealed_near_variant_attack.py):
the variant changes one letter of one name, and on a small generated set the script's figures
are shares, sound (no one in neither file placed in the file), and no channel alone places
more than the channels together."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pytest

from pprl.party.local import write_demo_data
from tests.scripts import BENCHMARKS, benchmark_script

attack = benchmark_script("sealed_near_variant_attack")


def test_a_near_variant_changes_one_letter_of_one_name() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        names = ["KATHERINE", "", "LEE"]
        changed = attack.near_variant(names, rng)
        assert changed[1] == ""  # a blank stays blank
        differing = [
            (a, b) for pair in zip(names, changed, strict=True) for a, b in zip(*pair, strict=True)
        ]
        assert [len(n) for n in changed] == [len(n) for n in names]
        assert sum(a != b for a, b in differing) == 1
    assert attack.near_variant(["", ""], rng) == ["", ""]


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("near_variants")
    write_demo_data(out, 150, seed=5)
    return out


def _run(data: Path, **changes: object) -> dict:
    args = argparse.Namespace(
        records_a=data / "alice.csv",
        records_b=data / "bob.csv",
        truth=data / "truth.csv",
        reference=data / "reference.csv",
        schema=BENCHMARKS / "sealed_demo.toml",
        recipes="",
        alice_only=0.3,
        absent=0.15,
        slots=0,
        honest=False,
        seed=1,
    )
    for key, value in changes.items():
        setattr(args, key, value)
    return attack.run(args)


CERTAIN = ("at_risk_in_file_certain", "alice_only_in_file_certain", "absent_outside_certain")


def _consistent(result: dict) -> None:
    channels = result["channels"]
    for row in channels.values():
        for key, value in row.items():
            assert value is None or 0.0 <= value <= 1.0, key
        assert row["absent_in_file_certain"] == 0.0  # sound: no one in neither file placed
        assert row["at_risk_outside_certain"] == 0.0
    brief = [name for name in channels if name[0] in "123" and "combined" not in name]
    for key in CERTAIN:
        for name in brief:
            assert channels["1-3 combined"][key] >= channels[name][key], (name, key)
        for name in channels:
            assert channels["all combined"][key] >= channels[name][key], (name, key)


@pytest.mark.parametrize("slots", [0, 1])
def test_the_figures_are_shares_sound_and_combined_at_least_each_channel(
    generated: Path, slots: int
) -> None:
    crafted = _run(generated, slots=slots)
    honest = _run(generated, slots=slots, honest=True)
    for result in (crafted, honest):
        _consistent(result)
        assert ("1 counts" in result["channels"]) == (slots == 0)
    assert crafted["near_variants"] == crafted["alice_only"] + crafted["absent"]
    assert honest["near_variants"] == 0 and honest["linked_to_own_near_variant"] == 0.0
    assert honest["at_risk"] == honest["alice_only"]
    # The near-variants place at least as many of her people as the honest file does.
    assert crafted["alice_only_linked_or_certain"] >= honest["alice_only_linked_or_certain"]
