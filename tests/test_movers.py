"""Movers: a pair whose address disagrees still links when its other fields make it near
certain (classifier.lenient_alternatives), with candidate matching still exact."""

from __future__ import annotations

import numpy as np
import pytest

from pprl.protocol.agreement import Agreement
from pprl.protocol.data.reference import ReferenceSet
from pprl.protocol.errors import SettingError
from pprl.protocol.linkage.candidates import accepted_pairs
from pprl.protocol.linkage.matching import Selection
from pprl.protocol.method import DEFAULT_MOVER_ODDS, method_params
from pprl.protocol.model.classifier import LENIENT, Model, train, with_alternatives
from pprl.protocol.model.features import MISSING_CODE
from pprl.protocol.own_training import address_entries
from tests.oracles import all_pair_features, pair_list

# Entries: a name, a date of birth, a street, a postcode and a town (the last three: the
# address).
ENTRIES = 5
ADDRESS = (2, 3, 4)


def _pairs(rng: np.random.Generator, n: int, close: tuple[bool, ...]) -> np.ndarray:
    """(n, 15) features: per entry a distance near 0 where `close`, a stranger's otherwise."""
    distances = np.column_stack(
        [rng.uniform(0.0, 0.05, n) if near else rng.uniform(0.3, 1.0, n) for near in close]
    )
    return np.concatenate([distances, np.zeros((n, 2 * ENTRIES))], axis=1)


def _training(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Matches close on every entry, or far on the name or the date (no match in register
    training has moved); non-matches: strangers, family members (same address, another name
    and date) and namesakes (same name)."""
    matches = [_pairs(rng, 420, (True,) * ENTRIES)]
    matches += [_pairs(rng, 60, tuple(e != k for e in range(ENTRIES))) for k in range(2)]
    strangers = _pairs(rng, 1200, (False,) * ENTRIES)
    family = _pairs(rng, 200, (False, False, True, True, True))
    namesakes = _pairs(rng, 200, (True, False, False, False, False))
    x = np.concatenate([*matches, strangers, family, namesakes])
    y = np.concatenate([np.ones(540), np.zeros(1600)]).astype(int)
    return x, y


# Raw distances (no caps, as sealed linkage's): log-odds run lower, and the bar is what three
# in four true training pairs reach (MOVER_QUANTILE) where that is below DEFAULT_MOVER_ODDS.
@pytest.mark.parametrize("saturation", [0.25, 0.0])
def test_a_mover_links_when_name_and_date_agree_and_a_namesake_does_not(saturation: float) -> None:
    rng = np.random.default_rng(3)
    x, y = _training(rng)
    strict = train(x, y, "logistic", class_weight="balanced", saturation=saturation)
    lenient = train(
        x, y, "logistic", class_weight="balanced", saturation=saturation, lenient=(ADDRESS,),
        lenient_odds=DEFAULT_MOVER_ODDS,
    )  # fmt: skip
    assert strict.kind == "linear" and lenient.kind == LENIENT
    movers = _pairs(rng, 200, (True, True, False, False, False))
    namesakes = _pairs(rng, 200, (True, False, False, False, False))
    strangers = _pairs(rng, 200, (False,) * ENTRIES)
    # With the alternative nearly every mover links. (Here the strict model accepts them too:
    # these features separate easily. On real registers it vetoes nearly all; the European
    # benchmark in docs/research/results.md measures that.)
    assert (lenient.decision(movers) > 0).mean() > 0.95
    # The alternative alone, which never sees the address, links them from name and date.
    alternative = Model(
        "linear",
        {
            "weights": lenient.arrays["alternative_weights"][0],
            "bias": lenient.arrays["alternative_bias"][0],
            **({} if lenient.caps is None else {"caps": lenient.caps}),
        },
    )
    assert (alternative.decision(movers) > 0).mean() > 0.9
    assert np.all(lenient.arrays["alternative_weights"][0][[2, 3, 4, 7, 8, 9, 12, 13, 14]] == 0)
    for others in (namesakes, strangers):
        assert (lenient.decision(others) > 0).mean() < 0.01
    # The alternative only adds: a pair the strict model accepts, the lenient one accepts.
    assert np.all(lenient.decision(x) >= strict.decision(x) - 1e-9)
    # Without a group or without odds, nothing changes.
    unchanged = train(x, y, "logistic", class_weight="balanced", lenient=(ADDRESS,))
    assert unchanged.kind == "linear"


def test_the_decision_is_the_highest_part_and_survives_saving() -> None:
    base = Model("linear", {"weights": np.array([-10.0, -20.0, 0, 0, 0, 0]), "bias": np.array(2.0)})
    model = with_alternatives(base, np.array([[-30.0, 0, 0, 0, 0, 0]]), np.array([1.0]))
    x = np.array([[0.01, 0.5, 0, 0, 0, 0], [0.5, 0.01, 0, 0, 0, 0]])
    expected = np.maximum(2.0 - 10 * x[:, 0] - 20 * x[:, 1], 1.0 - 30 * x[:, 0])
    np.testing.assert_allclose(model.decision(x), expected)
    np.testing.assert_allclose(Model.from_bytes(model.to_bytes()).decision(x), expected)
    np.testing.assert_allclose(model.arrays["envelope_weights"], [-10, 0, 0, 0, 0, 0])
    assert float(model.arrays["envelope_bias"]) == 2.0


def _tensors(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    tensor_a = rng.integers(0, 6, size=(70, 3, 6), dtype=np.uint8)
    tensor_b = rng.integers(0, 6, size=(60, 3, 6), dtype=np.uint8)
    tensor_b[:20] = tensor_a[:20]
    tensor_b[20:30, :2] = tensor_a[20:30, :2]  # ten movers: the third entry differs
    tensor_a[rng.random((70, 3)) < 0.1] = MISSING_CODE
    tensor_b[rng.random((60, 3)) < 0.1] = MISSING_CODE
    return tensor_a, tensor_b


def _all_pairs(tensor_a: np.ndarray, tensor_b: np.ndarray, model: Model) -> np.ndarray:
    """Every pair's decision, from every pair's features: the oracle."""
    features = all_pair_features(tensor_a, tensor_b)
    return model.decision(features).reshape(len(tensor_a), len(tensor_b))


@pytest.mark.parametrize("caps", [None, np.array([0.2, 0.2, 0.05])], ids=["dense", "caps"])
def test_candidates_of_a_lenient_model_equal_all_pairs_scoring(caps: np.ndarray | None) -> None:
    tensor_a, tensor_b = _tensors(5)
    weights = np.array([-60.0, -40.0, -50.0, -0.5, -0.2, -1.0, 0.3, 0.1, 0.2])
    alternative = np.array([[-90.0, -70.0, 0.0, -0.8, -0.4, 0.0, 0.2, 0.1, 0.0]])
    extra = {} if caps is None else {"caps": caps}
    # Biases that make each part alone accept about 3% of the pairs.
    probe = Model("linear", {"weights": weights, "bias": np.array(0.0), **extra})
    bias = -np.quantile(_all_pairs(tensor_a, tensor_b, probe), 0.97)
    probe = Model("linear", {"weights": alternative[0], "bias": np.array(0.0), **extra})
    other = -np.quantile(_all_pairs(tensor_a, tensor_b, probe), 0.97)
    base = Model("linear", {"weights": weights, "bias": np.array(bias), **extra})
    model = with_alternatives(base, alternative, np.array([other]))
    got = accepted_pairs(tensor_a, tensor_b, Selection(model, None))
    scores = _all_pairs(tensor_a, tensor_b, model)
    expected = set(zip(*np.nonzero(scores > 1e-4), strict=True))
    borderline = set(zip(*np.nonzero(np.abs(scores) <= 1e-4), strict=True))
    found = set(pair_list(got.matches))
    strict = _all_pairs(tensor_a, tensor_b, base)
    # The alternative accepts pairs the strict part alone would not: the test has teeth.
    assert len(expected - set(zip(*np.nonzero(strict > 1e-4), strict=True))) > 0
    assert expected <= found <= expected | borderline


def test_register_models_get_the_movers_default_and_the_others_do_not() -> None:
    assert method_params(error_model="registers").mover_odds == DEFAULT_MOVER_ODDS
    assert method_params(error_model="registers", noise_sigma=1.0).mover_odds == 0.0
    assert method_params().mover_odds == 0.0
    assert method_params(error_model="registers", mover_odds=0).mover_odds == 0.0
    sealed = method_params(error_model="registers", encoding="sealed", sealed_keys="a:soundex")
    assert sealed.mover_odds == DEFAULT_MOVER_ODDS  # a second linear form (sealed/linear_form.py)
    assert method_params(error_model="registers", encoding="bloom").mover_odds == 0.0
    with pytest.raises(SettingError, match="mover_odds"):
        method_params(error_model="registers", encoding="bloom", mover_odds=6.0)
    with pytest.raises(SettingError, match=">= 0"):
        method_params(mover_odds=-1.0)
    # Off, it stays out of the agreement description: earlier digests are unchanged.
    assert "mover_odds" not in method_params().to_dict()
    assert method_params(error_model="registers").to_dict()["mover_odds"] == DEFAULT_MOVER_ODDS


def test_the_address_group_is_the_entries_of_address_parts_only() -> None:
    names = ["ANNA", "BEN", "CARL", "DORA", "EVA", "FINN", "GUS", "HANS", "IDA", "JON"]
    columns = {
        "given_name": names,
        "postcode": [str(2000 + i) for i in range(10)],
        "suburb": [f"TOWN {name}" for name in names],
    }
    reference = ReferenceSet("reference.csv", columns)
    mapping = [
        ("given_name", "given_name"),
        ("postcode", "postcode"),
        ("suburb", "suburb"),
        ("given_name+suburb", "given_name+suburb"),
    ]
    kinds = {"given_name": "name", "postcode": "number", "suburb": "text"}
    agreement = Agreement(reference, mapping, method_params(error_model="registers"), kinds)
    assert address_entries(agreement) == (1, 2)
    only_address = Agreement(reference, mapping[1:3], method_params(), kinds)
    assert address_entries(only_address) == ()
