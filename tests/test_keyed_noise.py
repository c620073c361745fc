"""Keyed noise: the same value gets the same noisy release in every run, so a peer gains
nothing by averaging runs; the key file is the party's, private, and checked at start."""

from __future__ import annotations

import stat
from pathlib import Path

import numpy as np
import pytest

from pprl.party.credentials.noise_key import KEY_FILE, party_noise_key
from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.reference import DEFAULT_MAPPING, ReferenceSet
from pprl.protocol.errors import InputError
from pprl.protocol.method import method_params
from pprl.protocol.privacy.audit import audit_tensor, census_dictionary
from pprl.protocol.vectors.keyed_noise import KEY_BYTES, NoiseKey
from pprl.protocol.vectors.randomness import Randomness

ATTRIBUTES = ("first", "middle", "last")


def test_draws_depend_on_key_label_and_value_only() -> None:
    key = NoiseKey(bytes(range(KEY_BYTES)))
    once = key.draws("entry", ["ADA", "BOB"], 50)
    assert np.array_equal(once, key.draws("entry", ["ADA", "BOB"], 50))
    assert np.array_equal(once[1], key.draws("entry", ["BOB"], 50)[0])  # not the row order
    assert not np.allclose(once, key.draws("other entry", ["ADA", "BOB"], 50))
    assert not np.allclose(once, NoiseKey.generate().draws("entry", ["ADA", "BOB"], 50))
    assert abs(float(key.draws("x", [str(i) for i in range(400)], 50).std()) - 1.0) < 0.02
    with pytest.raises(ValueError, match="32 bytes"):
        NoiseKey(b"short")


def _release(agreement: Agreement, columns, randomness: Randomness) -> np.ndarray:
    released = pipeline.release(agreement, columns, randomness)
    # Back in the records' own order, so two runs' rows describe the same records.
    tensor = np.empty_like(released.tensor)
    tensor[released.order] = released.tensor
    return tensor


@pytest.mark.parametrize("release", ["distances", "projected"])
def test_averaging_ten_runs_helps_against_fresh_noise_and_not_against_keyed(release) -> None:
    reference = synthetic.default_reference(300)
    params = method_params(noise_sigma=3.0, feature="projected-cosine", release=release)
    agreement = Agreement(ReferenceSet("built-in", reference), DEFAULT_MAPPING, params)
    people = synthetic.generate(120, 9).alice
    columns = {name: [getattr(p, name) for p in people] for name in ATTRIBUTES}
    dictionary = census_dictionary(reference)
    key = NoiseKey(bytes(KEY_BYTES))
    keyed = [_release(agreement, columns, Randomness(noise_key=key)) for _ in range(10)]
    fresh = [_release(agreement, columns, Randomness()) for _ in range(10)]
    assert all(np.array_equal(keyed[0], tensor) for tensor in keyed)
    assert not np.array_equal(fresh[0], fresh[1])

    # Only the surname's entries are attacked: each attribute's figure comes from its own
    # entries alone, and the others' attacks took two thirds of the time.
    entries = agreement.entries()
    last = [m for m, entry in enumerate(entries) if entry.attribute == "last"]

    def surnames(tensors: list[np.ndarray]) -> float:
        """Surnames recovered from the rounded mean of the runs' codes, by one attacker
        (the uniform one: what averaging gains does not depend on which)."""
        mean = np.rint(np.mean(tensors, axis=0)).astype(np.uint8)
        report = audit_tensor(mean[:, last], columns, [entries[m] for m in last], dictionary)
        (surname,) = report.attributes
        assert surname.attribute == "last"
        return surname.recovered

    one = surnames(fresh[:1])
    assert surnames(fresh) > one + 0.1  # the noise a peer could average away
    assert surnames(keyed) == surnames(keyed[:1])  # keyed: ten runs are one run


def test_a_replayable_run_derives_its_key_from_the_seed() -> None:
    assert Randomness().noise_key is None
    derived = Randomness(3, "alice").noise_key
    assert derived is not None and derived.secret() == Randomness(3, "alice").noise_key.secret()
    assert derived.secret() != Randomness(3, "bob").noise_key.secret()
    own = NoiseKey.generate()
    assert Randomness(noise_key=own).noise_key is own


def test_the_state_directory_key_is_made_once_private_and_then_kept(tmp_path: Path) -> None:
    key = party_noise_key(tmp_path, None)
    path = tmp_path / KEY_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(path.read_bytes()) == KEY_BYTES == len(key.secret())
    assert party_noise_key(tmp_path, None).secret() == key.secret()
    assert not list(tmp_path.glob(".*.tmp"))


def test_a_configured_key_must_be_there_readable_and_32_bytes(tmp_path: Path) -> None:
    missing = tmp_path / "absent.key"
    with pytest.raises(InputError, match="noise key not found") as error:
        party_noise_key(tmp_path, missing)
    assert str(missing) in str(error.value) and "privacy.noise_key" in str(error.value)
    assert not missing.exists()  # never made up in place of the configured one
    short = tmp_path / "short.key"
    short.write_bytes(b"x" * 16)
    with pytest.raises(InputError, match="32 bytes, this file holds 16"):
        party_noise_key(tmp_path, short)
    directory = tmp_path / "a-directory"
    directory.mkdir()
    with pytest.raises(InputError, match="cannot read the noise key"):
        party_noise_key(tmp_path, directory)
