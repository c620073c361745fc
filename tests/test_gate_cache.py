"""The gate's dictionary coordinates kept on disk: computed once per public input, reused,
and recomputed when the file cannot be read."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pprl.party.storage.gate_cache import DiskProjections, read_noise_hint, write_noise_hint
from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.reference import DEFAULT_MAPPING, ReferenceSet
from pprl.protocol.method import method_params
from pprl.protocol.privacy.audit import Dictionary
from pprl.protocol.vectors import release

NAMES = ["ADA", "ALAN", "GRACE", "EDSGER", "BARBARA", "DONALD"]


def _grid(rows: int = 60):
    reference = synthetic.default_reference(rows)
    agreement = Agreement(
        ReferenceSet("built-in", reference), DEFAULT_MAPPING, method_params(noise_sigma=1.0)
    )
    return reference, agreement.releases[0]


def test_a_second_dictionary_reads_what_the_first_computed(tmp_path: Path) -> None:
    reference, grid = _grid()
    store = DiskProjections(tmp_path / "cache")
    first = Dictionary(NAMES, reference, store).projected("first", grid)
    files = list((tmp_path / "cache").glob("*.npy"))
    assert len(files) == 1
    # The file, not a recomputation, is what the next daemon run gets.
    planted = np.full_like(first, 7.0)
    np.save(files[0], planted)
    again = Dictionary(NAMES, reference, store).projected("first", grid)
    assert np.array_equal(again, planted)
    assert np.allclose(Dictionary(NAMES, reference).projected("first", grid), first)


def test_other_names_or_another_reference_column_get_their_own_entry(tmp_path: Path) -> None:
    reference, grid = _grid()
    store = DiskProjections(tmp_path)
    Dictionary(NAMES, reference, store).projected("first", grid)
    Dictionary([*NAMES, "KEN"], reference, store).projected("first", grid)
    Dictionary(NAMES, reference, store).projected("last", grid)
    assert len(list(tmp_path.glob("*.npy"))) == 3


def test_an_unreadable_or_misshapen_file_is_computed_again(tmp_path: Path) -> None:
    reference, grid = _grid()
    store = DiskProjections(tmp_path)
    expected = Dictionary(NAMES, reference).projected("first", grid)
    Dictionary(NAMES, reference, store).projected("first", grid)
    (path,) = tmp_path.glob("*.npy")
    path.write_bytes(b"not numpy")
    assert store.get(path.stem) is None
    assert np.allclose(Dictionary(NAMES, reference, store).projected("first", grid), expected)
    np.save(path, np.zeros((2, 2)))
    assert np.allclose(Dictionary(NAMES, reference, store).projected("first", grid), expected)
    with pytest.raises(ValueError, match="not a cache key"):
        store.get("../../etc/passwd")


def test_the_reference_sets_principal_directions_are_kept_and_read_back(tmp_path: Path) -> None:
    """An SVD per reference column per run cost seconds at 2,000 rows; a daemon keeps the
    directions in its cache, and a later agreement on the same set reads them."""
    reference = ReferenceSet("built-in", synthetic.default_reference(60))
    store = DiskProjections(tmp_path)

    def agreed() -> Agreement:
        method = method_params(noise_sigma=1.0)
        return Agreement(reference, DEFAULT_MAPPING, method, store=store)

    first = agreed().releases
    k = first[0].basis.shape[1]
    files = sorted(f for f in tmp_path.glob("*.npy") if np.load(f).shape == (k, 60))
    assert len(files) == 2  # one per mapped column: first and last
    uncached = Agreement(reference, DEFAULT_MAPPING, method_params(noise_sigma=1.0))
    for ours, theirs in zip(first, uncached.releases, strict=True):
        assert np.array_equal(ours.basis, theirs.basis)
    planted = np.load(files[0])[::-1]  # the same directions, reordered: read, not recomputed
    np.save(files[0], planted)
    again = agreed().releases
    assert any(not np.array_equal(a.basis, b.basis) for a, b in zip(again, first, strict=True))
    files[1].write_bytes(b"not numpy")  # unreadable: computed again, and rewritten
    assert agreed().releases[1].basis.shape == first[1].basis.shape
    assert np.load(files[1]).shape == planted.shape


def test_a_warm_cache_gives_the_same_reference_figures_without_a_distance_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The R x R distance tables behind centre, spread, sigma0 and the reference values'
    projections took 0.8 s of every run's noise choice at 2,000 rows. A warm cache must give
    the figures bit for bit (a party with a cold cache must agree with one with a warm one)
    and compute no table."""
    columns = synthetic.default_reference(80)
    mapping = [("first", "first"), ("last", "last")]
    fresh = release.reference_statistics(columns, mapping)
    store = DiskProjections(tmp_path)
    release.reference_statistics(columns, mapping, store=store)

    def no_table(*args: object, **kwargs: object) -> None:
        raise AssertionError("a distance table was computed with every figure in the cache")

    monkeypatch.setattr(release, "kind_distances", no_table)
    warm = release.reference_statistics(columns, mapping, store=store)
    assert warm.sigma0 == fresh.sigma0
    for column in ("first", "last"):
        for figure in ("centre", "spread", "components", "projections"):
            assert np.array_equal(getattr(warm, figure)[column], getattr(fresh, figure)[column])
    other = {"first": columns["first"][::-1], "last": columns["last"]}
    with pytest.raises(AssertionError, match="distance table"):  # another set: not in the cache
        release.reference_statistics(other, mapping, store=store)


def test_the_noise_hint_is_read_back_and_a_bad_one_is_no_hint(tmp_path: Path) -> None:
    assert read_noise_hint(tmp_path) is None
    write_noise_hint(tmp_path / "cache", 2.25)
    assert read_noise_hint(tmp_path / "cache") == 2.25
    hint = tmp_path / "cache" / "last-noise.json"
    for text in ("not json", '{"sigma": "high"}', "[]", "{}"):
        hint.write_text(text, encoding="utf-8")
        assert read_noise_hint(tmp_path / "cache") is None
