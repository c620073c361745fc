"""Before sending, a sealed party estimates how many true pairs its blocking keys will join,
from its own records and their corrupted copies: checked against the true pairs of data
whose truth is known."""

from __future__ import annotations

import numpy as np
import pytest

from pprl.protocol import pipeline
from pprl.protocol.agreement import Agreement
from pprl.protocol.data import synthetic
from pprl.protocol.data.reference import DEFAULT_MAPPING, ReferenceSet
from pprl.protocol.expectation import TYPICAL_ERROR_RATE, UNMATCHED_SHARE
from pprl.protocol.method import method_params
from pprl.protocol.sealed import session
from pprl.protocol.sealed.expectation import STRANGER, join, joins, simulate
from pprl.protocol.vectors.randomness import Randomness

ATTRIBUTES = ("first", "middle", "last")
LOOSE = "first:soundex+last:soundex,first:initial+last,first+last:initial"
STRICT = "first+middle+last"


def _true_completeness(recipes: str, data: synthetic.GeneratedData) -> float:
    alice = {a: [getattr(p, a) for p in data.alice] for a in ATTRIBUTES}
    bob = {a: [getattr(p, a) for p in data.bob] for a in ATTRIBUTES}
    chosen = session.recipes(recipes, list(ATTRIBUTES))
    keys_a = session.row_keys(chosen, alice, np.arange(len(data.alice)), first=True)
    keys_b = session.row_keys(chosen, bob, np.arange(len(data.bob)), first=False)
    row_a = {p.id: i for i, p in enumerate(data.alice)}
    row_b = {p.id: i for i, p in enumerate(data.bob)}
    shared = [bool(set(keys_a[row_a[a]]) & set(keys_b[row_b[b]])) for a, b in data.truth]
    return float(np.mean(shared))


def _sealed(recipes: str) -> Agreement:
    """Sealed linkage of the built-in names with these recipes and register training."""
    reference = ReferenceSet("built-in", synthetic.default_reference(200))
    method = method_params(encoding="sealed", sealed_keys=recipes, error_model="registers")
    return Agreement(reference, DEFAULT_MAPPING, method)


def _alice(data: synthetic.GeneratedData) -> dict[str, list[str]]:
    return {a: [getattr(p, a) for p in data.alice] for a in ATTRIBUTES}


@pytest.mark.parametrize(("recipes", "margin"), [(LOOSE, 0.2), (STRICT, 0.3)])
def test_the_estimate_is_near_the_share_of_true_pairs_sharing_a_key(
    recipes: str, margin: float
) -> None:
    """The generated registers change at least one name of every copy, where the estimate
    assumes the prior's rate (a third of copies unchanged): it errs on the optimistic side,
    by 0.12-0.15 with loose keys and 0.26-0.29 with keys no changed copy can share (seeds
    5-7)."""
    data = synthetic.generate(1000, 5, errors="registers", overlap=1.0)
    estimate = join(_sealed(recipes), _alice(data), Randomness(3, "alice")).keys_join()
    truth = _true_completeness(recipes, data)
    assert truth <= estimate <= truth + margin, (estimate, truth)


def test_keys_that_need_every_name_exact_join_fewer_pairs() -> None:
    alice = _alice(synthetic.generate(600, 7, errors="registers", overlap=1.0))
    found = {
        recipes: join(_sealed(recipes), alice, Randomness(3, "alice")).keys_join()
        for recipes in (LOOSE, STRICT)
    }
    assert found[STRICT] < found[LOOSE] - 0.2


def test_the_expected_linkage_counts_a_link_only_where_its_pair_shares_a_key() -> None:
    """Sealed MATCH scores only pairs that share a blocking key, and so does the simulation
    behind TRAIN's estimate: keys no changed copy can share (every name exact) leave about
    the unchanged copies linked, while loose keys keep most links. Judged together with the
    links, not as a product of two shares that would count the changed copies the classifier
    rejects twice."""
    alice = _alice(synthetic.generate(400, 5, errors="registers", overlap=1.0))
    linked = {}
    for recipes in (LOOSE, STRICT):
        agreement = _sealed(recipes)
        randomness = Randomness(3, "alice")
        model, _ = pipeline.train(agreement, alice, randomness)
        simulation, _ = simulate(agreement, join(agreement, alice, randomness), model, randomness)
        assert simulation.error_rate == TYPICAL_ERROR_RATE
        linked[recipes] = simulation.linked
    # A copy keeps every name with probability (1 - rate)^3 = 0.343 (or, changed, shares no
    # exact key): strict keys cannot link more than about that.
    assert linked[STRICT] <= (1 - TYPICAL_ERROR_RATE) ** 3 + 0.06
    assert linked[LOOSE] > linked[STRICT] + 0.2


def test_the_expected_linkage_sees_the_look_alikes_of_a_file_larger_than_its_sample() -> None:
    """The sampled records are linked against copies of every own record, not of the sample
    alone: a larger file puts more look-alikes behind each key, and the expected precision
    falls with it (at 50,000 a side of generated names: 0.91-0.94 where 5,000 against 5,000
    said 1.00; docs/research/privacy.md)."""
    # Loose keys on first names and initials: many look-alikes share one.
    loose = "first:soundex,last:initial"
    alice = _alice(synthetic.generate(3000, 9, errors="registers", overlap=1.0))
    agreement = _sealed(loose)
    randomness = Randomness(3, "alice")
    model, _ = pipeline.train(agreement, alice, randomness)
    small = {a: values[:300] for a, values in alice.items()}
    in_small, _ = simulate(agreement, join(agreement, small, randomness, 300), model, randomness)
    in_large, _ = simulate(agreement, join(agreement, alice, randomness, 300), model, randomness)
    wrong_small = in_small.mislinked + in_small.stray
    wrong_large = in_large.mislinked + in_large.stray
    assert wrong_large > wrong_small + 0.2
    assert in_large.quality().precision < in_small.quality().precision - 0.05


def test_the_simulated_peer_file_holds_strangers_in_place_of_the_copies_left_out() -> None:
    """The peer's file is as large as the own one: the copies kept and, for those left out,
    people drawn attribute by attribute from the own records. A file of one name shows it:
    every stranger shares the sampled records' key, none counts as anyone's copy, and a
    sampled record without a partner links to one."""
    size = 400
    alice = {"first": ["JOHN"] * size, "middle": [""] * size, "last": ["SMITH"] * size}
    agreement = _sealed("first+last")
    joined = join(agreement, alice, Randomness(3, "alice"), size=50, rate=1e-9)
    strangers = np.count_nonzero(joined.copy_rows == STRANGER)
    copies = np.count_nonzero(joined.copy_rows != STRANGER)
    assert copies + strangers == size
    assert abs(strangers - UNMATCHED_SHARE * size) < 4 * np.sqrt(size * 0.2 * 0.8)
    assert all(joined.peer["last"][row] == "SMITH" for row in np.flatnonzero(joined.copy_rows < 0))
    # Every sampled record is a candidate of every peer row; only a copy is a true pair.
    assert len(joined.pairs) == 50 * size
    assert joined.keys_join() == 1.0


def test_agree_tells_the_keys_order_and_the_model() -> None:
    """AGREE's line names what the defaults chose: keys read in either order, and a kernel
    model or a linear one, so an operator sees why two runs differ."""
    either = _sealed("~first:soundex+last:soundex,middle:soundex+last:soundex")
    kernel = Agreement(
        either.reference,
        either.mapping,
        method_params(
            encoding="sealed",
            sealed_keys="~first:soundex+last:soundex",
            sealed_kernel_features=64,
            error_model="registers",
        ),
    )
    words = either.noise_words()
    assert "(~: parts in either order" in words and "model: linear" in words
    assert "model: a kernel, 64 random features an entry" in kernel.noise_words()
    assert "~:" not in _sealed(STRICT).noise_words()


def test_a_large_file_is_copied_once_for_every_rate() -> None:
    """From `shared_from` records a rate, the rates share one simulated file: each rate's
    sample is its own records (no record's copy is at two rates), as many as asked, and the
    keys join fewer of a rate's copies the more it changes them, as separate files do."""
    alice = _alice(synthetic.generate(2400, 5, errors="registers", overlap=1.0))
    agreement = _sealed(LOOSE)
    rates = (0.15, 0.6)
    shared = joins(agreement, alice, Randomness(3, "alice"), rates, size=300, shared_from=600)
    apart = joins(agreement, alice, Randomness(3, "alice"), rates, size=300, shared_from=10**6)
    assert set(shared) == set(apart) == set(rates)
    low, high = shared[0.15], shared[0.6]
    assert len(low.own_rows) == len(high.own_rows) == 300
    assert not set(low.own_rows.tolist()) & set(high.own_rows.tolist())
    for joined in shared.values():
        assert joined.pairs[:, 0].max() < 300
        assert joined.pairs[:, 1].max() < len(joined.copy_rows)
        assert len(joined.peer["last"]) == len(joined.copy_rows)
    assert low.keys_join() > high.keys_join() + 0.1
    for rate in rates:
        assert abs(shared[rate].keys_join() - apart[rate].keys_join()) < 0.08, rate
