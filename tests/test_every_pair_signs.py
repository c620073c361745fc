"""Every pair's sign under CKKS with no keys (lab.every_pair, what
benchmarks/sealed_every_pair.py measures): the decrypted signs are the plaintext classifier's
away from the boundary, over several blocks and an odd count of peer rows, and what the
agreed counts and parameters do not give is refused."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from lab import every_pair
from lab.in_process import with_partners
from pprl.files.sealed_bytes import dumped, dumped_ciphertext, evaluation_keys, loaded_ciphertext
from pprl.protocol.data.records import RecordTable
from pprl.protocol.sealed import scoring
from pprl.protocol.sealed.parameters import CkksSetting
from tests.scripts import benchmark_script

ROWS, PEER_ROWS, WIDTH = 4096 + 37, 5, 12


@pytest.fixture(scope="module")
def run() -> dict[str, Any]:
    rng = np.random.default_rng(3)
    setting = CkksSetting()
    x = rng.normal(size=(ROWS, WIDTH)) / np.sqrt(WIDTH)
    c = rng.normal(size=ROWS) * 0.3
    y = rng.normal(size=(PEER_ROWS, WIDTH)) / np.sqrt(WIDTH)
    y[1, 3] = 0.0  # a coordinate 0 is skipped, not multiplied
    keys = scoring.secret_keys(setting)
    columns, peer = every_pair.columns_of(x, c), every_pair.peer_columns(y)
    sent = [
        [dumped_ciphertext(item, keys.context) for item in block]
        for block in every_pair.encrypted_blocks(keys, columns)
    ]
    context = scoring.seal_context(setting)
    held = evaluation_keys(context, dumped(keys.public), dumped(keys.conjugation))
    received = [[loaded_ciphertext(context, d, seeded=True) for d in block] for block in sent]
    results = list(every_pair.evaluated(context, held, received, ROWS, peer, setting, rng))
    return {
        "keys": keys,
        "context": context,
        "held": held,
        "received": received,
        "results": results,
        "scores": columns @ peer.T,
        "peer": peer,
        "setting": setting,
    }


def test_signs_are_the_plaintext_decisions_away_from_the_boundary(run: dict[str, Any]) -> None:
    keys, results, scores = run["keys"], run["results"], run["scores"]
    assert len(run["received"]) == 2  # two blocks of rows
    assert len(results) == every_pair.returned_count(ROWS, PEER_ROWS, run["setting"]) == 6
    signs = every_pair.Signs(keys, ROWS, PEER_ROWS)
    for result in results:
        signs.add(result)
    assert signs.complete
    clear = np.abs(scores) > 0.1
    assert np.array_equal(signs.accepted[clear], scores[clear] > 0)
    assert 0.3 < signs.accepted.mean() < 0.7  # both decisions occur
    with pytest.raises(ValueError, match="more evaluated ciphertexts"):
        signs.add(results[0])


def test_each_score_is_blinded_by_its_own_factor(run: dict[str, Any]) -> None:
    """The two peer rows a ciphertext holds are multiplied by independent factors: the ratio
    of the decrypted parts is not the ratio of the scores."""
    keys, result, scores = run["keys"], run["results"][0], run["scores"]
    from tenseal import sealapi as seal

    plain = seal.Plaintext()
    seal.Decryptor(keys.context, keys.secret).decrypt(result, plain)
    values = np.asarray(seal.CKKSEncoder(keys.context).decode_complex(plain))[:1000]
    big = (np.abs(scores[:1000, 0]) > 0.2) & (np.abs(scores[:1000, 1]) > 0.2)
    read = values.real[big] / values.imag[big]
    true = scores[:1000, 0][big] / scores[:1000, 1][big]
    spread = np.log2(np.abs(read / true))
    assert spread.std() > 1.0  # log-uniform factors over 8 bits: about 2.3 apart
    assert np.abs(values.real[big]).min() > 2.0**9 * 0.2


def test_counts_and_parameters_other_than_agreed_are_refused(run: dict[str, Any]) -> None:
    context, held, received, peer = run["context"], run["held"], run["received"], run["peer"]
    setting, rng = run["setting"], np.random.default_rng(0)

    def evaluate(blocks: Any, rows: int = ROWS, columns: np.ndarray = peer) -> None:
        next(every_pair.evaluated(context, held, blocks, rows, columns, setting, rng))

    with pytest.raises(ValueError, match="1 blocks where 2 were agreed"):
        evaluate(received[:1])
    with pytest.raises(ValueError, match="block 0: 12 ciphertexts where 13 were agreed"):
        evaluate([received[0][:-1], received[1]])
    from tenseal import sealapi as seal

    lowered = seal.Ciphertext()
    seal.Evaluator(context).mod_switch_to_next(received[0][0], lowered)
    with pytest.raises(ValueError, match="block 0, ciphertext 0: not a fresh one"):
        evaluate([[lowered, *received[0][1:]], received[1]])
    signs = every_pair.Signs(run["keys"], ROWS, PEER_ROWS)
    with pytest.raises(ValueError, match="result 0 is not an evaluated score"):
        signs.add(received[0][0])


def test_the_signs_attack_names_a_row_from_its_accepted_records_never_its_partner() -> None:
    """guessed_from_signs: each peer row named as the most common name among the own
    records accepted with it, its partner left out; blanks count as no name."""
    guess = benchmark_script("sealed_every_pair").guessed_from_signs
    own = {"first": ["ann", "ann", "bob", "cy"], "last": ["lee", "ray", "lee", "ng"]}
    peer = {"first": ["ann", "bob", ""], "last": ["lee", "lee", "ng"]}
    accepted = np.array(
        [
            [True, False, False],
            [True, True, False],
            [False, True, True],
            [False, True, True],
        ]
    )
    # Peer row 0 is own row 0's partner: from row 1 alone, "ann" right and "ray" wrong.
    # Peer row 1 (partner: own row 2): rows 1 and 3 tie, the first seen wins (ann, ray).
    # Peer row 2 (partner: own row 3): row 2 alone, last name "lee" wrong; first is blank.
    out = guess(accepted, own, peer, np.array([0, 2, 3]))
    assert out["first_right"] == 0.5  # 1 of the 2 rows with a first name
    assert out["last_right"] == 0.0
    assert out["every_name_right"] == 0.0
    accepted[2, 0] = True  # own row 2 (bob lee) accepted with peer row 0 too
    out = guess(accepted, own, peer, np.array([-1, 2, 3]))  # row 0 without its partner
    # Row 0 now from own rows 0-2: ann twice, lee twice: both names right.
    assert (out["first_right"], out["last_right"]) == (0.5, round(1 / 3, 4))
    assert out["every_name_right"] == round(1 / 3, 4)
    assert out["last_right_without_signs"] == round(2 / 3, 4)  # "lee" is the file's mode


def test_a_smaller_problem_keeps_alices_first_rows_and_their_partners_in_bobs_order() -> None:
    alice = RecordTable("a.csv", ["a1", "a2", "a3"], {"name": ["x", "y", "z"]})
    bob = RecordTable("b.csv", ["b3", "b1", "b9", "b2"], {"name": ["z", "x", "q", "y"]})
    truth = {("a1", "b1"), ("a2", "b2"), ("a3", "b3")}
    smaller = with_partners({"alice": alice, "bob": bob}, truth, 2)
    assert smaller["alice"].ids == ["a1", "a2"]
    assert smaller["bob"].ids == ["b1", "b2"]
    assert smaller["bob"].attributes == {"name": ["x", "y"]}
    assert with_partners({"alice": alice, "bob": bob}, truth, 0)["bob"] is bob
