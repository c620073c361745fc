"""Sealed linkage through two real daemons over loopback mutual TLS: blinded keys and
encrypted scores on the wire, no vector, and what its configuration refuses."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import grpc
import numpy as np
import pytest

from lab.crafted_keys_attack import crafted_keys
from pprl.failpoints import FAILPOINT_ENV
from pprl.files.sealed_bytes import dumped, dumped_ciphertext, loaded_ciphertext
from pprl.party.local import Deployment, evaluate, read_truth, start_daemon, stop_daemon
from pprl.party.reasons import reason_of
from pprl.party.storage.artifacts import (
    MODEL,
    OWN_ENTRIES,
    OWN_KEYS,
    OWN_KEYS_TWICE,
    OWN_MATCHES,
    PEER_ENTRIES_TWICE,
    PEER_JOIN,
    PEER_KEYS_TWICE,
    PEER_MATCHES,
    PEER_NAMED,
    PEER_TENSOR,
)
from pprl.party.storage.state import run_dir
from pprl.protocol.model.classifier import Model
from pprl.protocol.sealed import scoring, session
from pprl.protocol.sealed.hidden_join import NAMES_PER_ROW
from pprl.protocol.sealed.parameters import DEFAULT_CRYPTO, CkksSetting
from pprl.protocol.sealed.recipes import NEIGHBOUR_LETTERS, group_size, most_keys
from pprl.protocol.sealed.session import DEFAULT_THRESHOLDS
from pprl.wire.v1 import linkage_pb2 as pb
from tests.conftest import coordinate, coordinate_summary, stub_as, tensor_stream
from tests.sealed_keys import held_public

pytestmark = pytest.mark.integration

# Keys for the built-in demo's first, middle and last names: each needs two of them to agree
# (a code or an initial), so that a typo in one name still leaves a key in common.
RECIPES = [
    "first:soundex+last:soundex",
    "first:initial+last",
    "first+last:initial",
    "first:initial+middle:initial+last:initial",
]


def _sealed(
    recipes: list[str] = RECIPES, extra: str = "", join: str = "graph"
) -> Callable[[Deployment], None]:
    """A configure hook: sealed linkage on both daemons, by the keys' graph unless `join`
    says otherwise (the demo's names alone would take the hidden join by default)."""

    def configure(deployment: Deployment) -> None:
        keys = "[" + ", ".join(json.dumps(r) for r in recipes) + "]"
        head = f'[method]\nencoding = "sealed"\nsealed_keys = {keys}\nsealed_join = "{join}"\n'
        for party in deployment.parties.values():
            text = party.config.read_text(encoding="utf-8")
            if "error_model" in extra:  # in place of the built-in data's one edit a copy
                text = text.replace('error_model = "one-error"\n', "")
            text = text.replace("[method]\n", head + extra, 1)
            party.config.write_text(text, encoding="utf-8")

    return configure


# The default model, linear in the distances, and a kernel model scored through random
# features (the evaluator maps its vectors with the scorer's widths from the score header);
# with register training the mapping holds two initials, which both daemons score exactly
# by their letters, leaving the rest of those entries' features out of the stream.
@pytest.mark.parametrize(
    ("features", "training"),
    [(0, "one-error"), (64, "one-error"), (64, "registers")],
    ids=["linear", "kernel", "kernel-initials-exact"],
)
def test_two_daemons_link_sealed_and_send_no_vectors(deploy, features, training):
    extra = f'sealed_kernel_features = {features}\nerror_model = "{training}"\n'
    deployment = deploy(size=300, overlap=0.9, configure=_sealed(extra=extra))
    result, summary = coordinate_summary(deployment)
    assert result.returncode == 0, result.stderr
    assert "candidate pairs" in result.stdout and "under encryption" in result.stdout
    exact = "(middle:initial, first:initial exactly, by their values)"
    assert (exact in result.stdout) == (training == "registers"), result.stdout
    quality = evaluate(
        deployment, summary["run_id"], read_truth(deployment.workdir / "data/truth.csv")
    )
    assert quality["linkage"]["f1"] >= 0.9, quality
    # The summary names the mode and its settings as agreed; MATCH fitted no estimate to
    # sealed decisions, so there is none to read (not zeros).
    method = summary["method"]
    assert method["encoding"] == "sealed" and method["sealed_join"] == "graph"
    assert method["sealed_keys"] == ",".join(RECIPES)
    assert method["sealed_kernel_features"] == features
    assert method["sealed_thresholds"] == DEFAULT_THRESHOLDS
    assert method["sealed_crypto"] == DEFAULT_CRYPTO and method["error_model"] == training
    assert "method: encoding sealed\n  sealed_keys " in result.stdout
    assert "fitted to its accepted pairs" not in result.stdout
    for name in ("alice", "bob"):
        assert "fitted" not in summary["parties"][name]
        state = run_dir(deployment.parties[name].state_dir, summary["run_id"])
        # No tensor was received; the peer's keys arrived blinded twice, one set per row.
        assert not (state / PEER_TENSOR).exists()
        assert (state / PEER_KEYS_TWICE).exists() and (state / OWN_KEYS).exists()
        # The model is what the agreement asks for: kernel widths exactly when it has features.
        model = Model.from_bytes((state / MODEL).read_bytes())
        assert (model.widths is not None) == bool(features)


@pytest.fixture
def exchanged(deploy):
    """Both sealed daemons have completed EXCHANGE for one run; (deployment, run_id, digest)."""
    return _exchanged(deploy, _sealed())


def _exchanged(deploy, configure: Callable[[Deployment], None]) -> tuple[Deployment, str, str]:
    deployment = deploy(size=120, overlap=0.9, configure=configure)
    path = deployment.workdir / "exchanged.json"
    result = coordinate(deployment, "--until", "exchange", "--json", str(path))
    assert result.returncode == 0, result.stderr
    # Nothing is matched yet: the records are counted, no classifier's pairs.
    assert "alice: 120 records\n" in result.stdout
    assert "classifier accepted" not in result.stdout
    run_id = json.loads(path.read_text())["run_id"]
    stub, channel = stub_as(deployment, "alice", "bob")
    with channel:
        digest = stub.peer.GetAgreement(pb.GetAgreementRequest(run_id=run_id), timeout=10).digest
    return deployment, run_id, digest


def _refusal(call) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    return caught.value


def _keys(run_id: str, digest: str, counts: list[int], values: bytes, **extra) -> list:
    return [
        pb.BlindedKeys(
            run_id=run_id,
            digest=digest,
            first_row=extra.get("first_row", 0),
            counts=counts,
            values=values,
            last=True,
        )
    ]


def test_bad_blinded_keys_are_refused_with_their_reason_and_nothing_replaced(exchanged):
    deployment, run_id, digest = exchanged
    state = run_dir(deployment.parties["alice"].state_dir, run_id)
    held = state / PEER_KEYS_TWICE
    before = held.read_bytes()
    with np.load(state / OWN_KEYS) as data:
        own_counts, own_values = data["counts"].tolist(), data["values"].tobytes()
    point = bytes([9]) + bytes(31)  # the X25519 base point: a valid value
    attempts = {
        "another run": (_keys(uuid.uuid4().hex, digest, [1], point), pb.UNKNOWN_RUN),
        "another digest": (_keys(run_id, "0" * 64, [1], point), pb.DIGEST_MISMATCH),
        "short values": (_keys(run_id, digest, [2], point), pb.BAD_CIPHERTEXT),
        "rows skipped": (_keys(run_id, digest, [1], point, first_row=5), pb.BAD_CIPHERTEXT),
        "small order": (_keys(run_id, digest, [1], bytes(32)), pb.BAD_CIPHERTEXT),
        # More keys for a row than the four RECIPES give one: guesses, not keys.
        "too many for a row": (_keys(run_id, digest, [5], point * 5), pb.KEY_BOUND),
        # More rows than Bob declared at AGREE (120), refused as they arrive.
        "more rows than declared": (_keys(run_id, digest, [1] * 121, point * 121), pb.KEY_BOUND),
        # Every key one value: every row would join every row.
        "one value for every key": (
            _keys(run_id, digest, [1] * 120, point * 120),
            pb.DEGENERATE_KEYS,
        ),
        # Alice's own once-blinded keys sent back as Bob's.
        "reflected": (_keys(run_id, digest, own_counts, own_values), pb.REFLECTED),
        # Well-formed, but not the keys this run already holds from Bob.
        "replaced": (_keys(run_id, digest, [1], point), pb.ALREADY_RECEIVED),
    }
    stub, channel = stub_as(deployment, "alice", "bob")
    with channel:
        for why, (messages, reason) in attempts.items():
            error = _refusal(lambda m=messages: list(stub.peer.BlindKeys(iter(m), timeout=30)))
            assert reason_of(error) == reason, (why, error.details())
            assert held.read_bytes() == before, why
        # A sealed run takes no tensor.
        error = _refusal(
            lambda: stub.peer.PushTensor(tensor_stream(run_id, digest, (1, 4, 45), bytes(180)))
        )
        assert reason_of(error) == pb.OUT_OF_ORDER and "sealed" in error.details()


def _score_header(deployment, run_id: str, digest: str) -> tuple[pb.ScoreHeader, int]:
    """The header of Bob's scoring as Alice derives it from her state, and its coordinates."""
    state = run_dir(deployment.parties["alice"].state_dir, run_id)

    def keys(name: str) -> list[list[bytes]]:
        with np.load(state / name) as data:
            return session.grouped(data["counts"], data["values"].tobytes())

    pairs = session.candidates(keys(OWN_KEYS_TWICE), keys(PEER_KEYS_TWICE))[:, ::-1]
    ckks = session.setting(DEFAULT_CRYPTO, DEFAULT_THRESHOLDS)
    entries, width = 4, 45  # the demo's mapping entries, each's projected coordinates
    coordinates = ckks.ciphertexts(entries * (width + 1) + 1)
    placed = session.score_layout(pairs, ckks, coordinates)
    keys = scoring.secret_keys(ckks)
    header = pb.ScoreHeader(
        run_id=run_id,
        digest=digest,
        public_key=dumped(keys.public),
        conjugation_key=dumped(keys.conjugation),
        batches=placed.batches,
        coordinates=coordinates,
        candidates_sha256=session.candidates_sha256(pairs),
    )
    return header, coordinates


def _rotating_keys(ckks: CkksSetting) -> Any:
    """Galois keys for conjugation and a slot rotation: more than evaluation needs."""
    from tenseal import sealapi

    keys = scoring.secret_keys(ckks)
    generator = sealapi.KeyGenerator(keys.context, keys.secret)
    return generator.create_galois_keys([2 * ckks.poly_modulus_degree - 1, 3])


def _unseeded_public_key(ckks: CkksSetting) -> Any:
    """A public key as TenSEAL's generator makes one, both polynomials stored."""
    from tenseal import sealapi

    keys = scoring.secret_keys(ckks)
    whole = sealapi.PublicKey()
    sealapi.KeyGenerator(keys.context, keys.secret).create_public_key(whole)
    return whole


def _unseeded_conjugation_key(ckks: CkksSetting) -> Any:
    """The conjugation key alone, its parts stored whole: not as SEAL sends it seeded."""
    from tenseal import sealapi

    keys = scoring.secret_keys(ckks)
    whole = sealapi.GaloisKeys()
    sealapi.KeyGenerator(keys.context, keys.secret).create_galois_keys(
        [2 * ckks.poly_modulus_degree - 1], whole
    )
    return whole


def _fresh_ciphertexts(ckks: CkksSetting) -> tuple[Any, Any, Any]:
    """A fresh ciphertext at the agreed parameters, seeded as a scoring party sends it, the
    same values encrypted under the public key (two polynomials, none from a seed), and the
    context they are under."""
    from tenseal import sealapi

    keys = scoring.secret_keys(ckks)
    plain = sealapi.Plaintext()
    sealapi.CKKSEncoder(keys.context).encode([0.5] * ckks.slots, 2.0**ckks.scale_bits, plain)
    seeded = sealapi.Encryptor(keys.context, keys.secret).encrypt_symmetric(plain)
    whole = sealapi.Ciphertext()
    sealapi.Encryptor(keys.context, held_public(keys)).encrypt(plain, whole)
    return seeded, whole, keys.context


def _seeded_ciphertexts(ckks: CkksSetting, count: int) -> list[bytes]:
    """`count` fresh ciphertexts at the agreed parameters, each from its own seed, packed as a
    scoring party sends them."""
    from tenseal import sealapi

    keys = scoring.secret_keys(ckks)
    plain = sealapi.Plaintext()
    sealapi.CKKSEncoder(keys.context).encode([0.5] * ckks.slots, 2.0**ckks.scale_bits, plain)
    encryptor = sealapi.Encryptor(keys.context, keys.secret)
    return [
        dumped_ciphertext(encryptor.encrypt_symmetric(plain), keys.context) for _ in range(count)
    ]


def _batch(header: pb.ScoreHeader, data: list[bytes]) -> list[pb.SealedScores]:
    """The header, then batch 0's ciphertexts in order."""
    return [pb.SealedScores(header=header)] + [
        pb.SealedScores(ciphertext=pb.Ciphertext(batch=0, index=i, data=one))
        for i, one in enumerate(data)
    ]


def test_bad_encrypted_scores_are_refused_with_their_reason(exchanged):
    deployment, run_id, digest = exchanged
    header, coordinates = _score_header(deployment, run_id, digest)
    assert header.batches == 1 and coordinates > 1
    other = CkksSetting(coeff_mod_bit_sizes=(60, 40, 40, 60))
    junk = pb.SealedScores(ciphertext=pb.Ciphertext(batch=0, index=0, data=b"not a ciphertext"))
    fresh, unseeded, context = _fresh_ciphertexts(CkksSetting())
    packed = dumped_ciphertext(fresh, context)
    assert loaded_ciphertext(context, packed, seeded=True) is not None  # whole, it reads

    def changed(**fields) -> pb.SealedScores:
        copy = pb.ScoreHeader()
        copy.CopyFrom(header)
        for name, value in fields.items():
            if isinstance(value, list):
                getattr(copy, name).extend(value)
            else:
                setattr(copy, name, value)
        return pb.SealedScores(header=copy)

    extra = pb.SealedScores(
        ciphertext=pb.Ciphertext(batch=1, index=0, data=_seeded_ciphertexts(CkksSetting(), 1)[0])
    )
    attempts = {
        "no header": ([junk], pb.BAD_CIPHERTEXT),
        "other candidates": ([changed(candidates_sha256=bytes(32))], pb.DIGEST_MISMATCH),
        "other layout": ([changed(batches=3)], pb.BAD_CIPHERTEXT),
        # No address entry in this agreement: no movers' alternative, no ratios.
        "movers' ratios not agreed": ([changed(alternative_ratios=[1.0, 2.0])], pb.BAD_CIPHERTEXT),
        # No random features agreed: no kernel, no widths.
        "kernel widths not agreed": ([changed(kernel_widths=[0.1] * 6)], pb.BAD_CIPHERTEXT),
        "other digest": ([changed(digest="0" * 64)], pb.DIGEST_MISMATCH),
        "unreadable public key": ([changed(public_key=b"junk")], pb.BAD_CIPHERTEXT),
        "other parameters": (
            [changed(public_key=dumped(scoring.secret_keys(other).public))],
            pb.BAD_CIPHERTEXT,
        ),
        # SEAL reads it, but its encryptions would add no mask (lab.crafted_keys_attack).
        "a public key of zeros": (
            [changed(public_key=crafted_keys(context)[0])],
            pb.BAD_CIPHERTEXT,
        ),
        # An honest key, but its second polynomial stored whole: the sender could choose it.
        "a public key not seeded": (
            [changed(public_key=dumped(_unseeded_public_key(CkksSetting())))],
            pb.BAD_CIPHERTEXT,
        ),
        "no conjugation key": ([changed(conjugation_key=b"")], pb.BAD_CIPHERTEXT),
        "a conjugation key under other parameters": (
            [changed(conjugation_key=dumped(scoring.secret_keys(other).conjugation))],
            pb.BAD_CIPHERTEXT,
        ),
        "a key that also rotates": (
            [changed(conjugation_key=dumped(_rotating_keys(CkksSetting())))],
            pb.BAD_CIPHERTEXT,
        ),
        # Its second parts not SEAL's from seeds: the sender could have chosen them.
        "a conjugation key not seeded": (
            [changed(conjugation_key=dumped(_unseeded_conjugation_key(CkksSetting())))],
            pb.BAD_CIPHERTEXT,
        ),
        # In order, so that reading them is what refuses them.
        "unreadable ciphertexts": (
            _batch(header, [b"not a ciphertext"] * coordinates),
            pb.BAD_CIPHERTEXT,
        ),
        # A party writing ciphertexts as SEAL compresses them, not packed (a party on earlier
        # code, were its digest to pass), and packed ones cut short.
        "ciphertexts as SEAL saves them": (
            _batch(header, [dumped(fresh)] * coordinates),
            pb.BAD_CIPHERTEXT,
        ),
        "packed ciphertexts cut short": (
            _batch(header, [packed[:-8]] * coordinates),
            pb.BAD_CIPHERTEXT,
        ),
        # Both polynomials sent, the second not SEAL's from a seed: the sender could have
        # chosen it (lab.crafted_keys_attack).
        "ciphertexts not seeded": (
            _batch(header, [dumped_ciphertext(unseeded, context)] * coordinates),
            pb.BAD_CIPHERTEXT,
        ),
        # Each as SEAL makes one, but one seed for all: a conjugation key crafted for their
        # shared second polynomial reads the evaluator's plaintext sum
        # (lab.crafted_conjugation_attack).
        "ciphertexts sharing a seed": (_batch(header, [packed] * coordinates), pb.BAD_CIPHERTEXT),
        # A whole batch as declared, then one ciphertext more: refused, not ignored.
        "more ciphertexts than declared": (
            [*_batch(header, _seeded_ciphertexts(CkksSetting(), coordinates)), extra],
            pb.BAD_CIPHERTEXT,
        ),
        "out of order": (
            [
                pb.SealedScores(header=header),
                pb.SealedScores(ciphertext=pb.Ciphertext(batch=0, index=1, data=b"x")),
            ],
            pb.BAD_CIPHERTEXT,
        ),
    }
    stub, channel = stub_as(deployment, "alice", "bob")
    with channel:
        for why, (messages, reason) in attempts.items():
            error = _refusal(lambda m=messages: list(stub.peer.EvaluateScores(iter(m), timeout=60)))
            assert reason_of(error) == reason, (why, error.details())
            assert "not a ciphertext" not in error.details()
            if why == "more ciphertexts than declared":
                assert "more ciphertexts than the 1 batches" in error.details()


def test_an_evaluator_returning_values_of_its_own_is_caught_under_the_keys_graph(
    deploy, monkeypatch
):
    """Under the keys' graph, bob evaluating alice's pairs returns fresh encryptions of values
    of his own (the tamper-scores failpoint): the pairs of alice's check rows decrypt to other
    buckets than they must, and her MATCH fails with BAD_CIPHERTEXT before she keeps a match;
    no match crosses."""
    deployment = deploy(size=120, overlap=0.9, configure=_sealed())
    stop_daemon(deployment, "bob")
    monkeypatch.setenv(FAILPOINT_ENV, "tamper-scores")
    start_daemon(deployment, "bob")
    monkeypatch.delenv(FAILPOINT_ENV)
    result = coordinate(deployment)
    assert result.returncode != 0 and "MATCH failed" in result.stderr, result.stderr
    assert "BAD_CIPHERTEXT" in result.stderr and "fail this party's checks" in result.stderr
    assert "pairs this party can check decrypt to another bucket" in result.stderr
    alice = deployment.parties["alice"].state_dir
    assert not list(alice.rglob(OWN_MATCHES)) and not list(alice.rglob(PEER_MATCHES))


def test_keys_that_join_few_true_pairs_stop_the_run_before_anything_is_sent(deploy):
    """Keys needing every name's code to agree join few pairs the registers changed: TRAIN's
    estimate (candidates by the keys, as MATCH would score them) stops the run, naming the
    keys' share and the recipes that would join more."""

    def configure(deployment: Deployment) -> None:
        _sealed(["first:soundex+middle:soundex+last:soundex"])(deployment)
        for party in deployment.parties.values():
            text = party.config.read_text(encoding="utf-8")
            text = text.replace("min_expected_f1 = 0.0", "min_expected_f1 = 0.9")
            party.config.write_text(text, encoding="utf-8")

    deployment = deploy(size=200, overlap=0.9, configure=configure)
    result, _ = coordinate_summary(deployment)
    assert result.returncode != 0
    assert "POOR_LINKAGE" in result.stderr and "[method] sealed_keys" in result.stderr
    wider = '"first:soundex+middle:soundex+last:soundex", "first:prefix+middle:prefix+last:prefix"'
    assert f"sealed_keys = [{wider}]" in result.stderr
    assert "max_reidentification" not in result.stderr  # no noise to lower in sealed linkage
    # How far the estimate hangs on the prior's error rate, told with it.
    assert "if the pairs differ in 60% of their compared values" in result.stderr
    for party in deployment.parties.values():
        assert not list(party.state_dir.rglob(OWN_KEYS_TWICE))
        assert not list(party.state_dir.rglob(PEER_KEYS_TWICE))


# Beside RECIPES, a grouped recipe: a row's first names one edit apart travel as one entry.
NEIGHBOURS = "first:neighbours+last:soundex"


def test_two_daemons_link_by_the_hidden_join_and_neither_holds_the_keys_graph(deploy):
    recipes = [*RECIPES, NEIGHBOURS]
    deployment = deploy(size=300, overlap=0.9, configure=_sealed(recipes, join="hidden"))
    result, summary = coordinate_summary(deployment)
    assert result.returncode == 0, result.stderr
    assert (
        "joins this party's key entries" in result.stdout and "best buckets named" in result.stdout
    )
    quality = evaluate(
        deployment, summary["run_id"], read_truth(deployment.workdir / "data/truth.csv")
    )
    assert quality["linkage"]["f1"] >= 0.9, quality
    states = {
        name: run_dir(deployment.parties[name].state_dir, summary["run_id"])
        for name in ("alice", "bob")
    }
    for name, peer in (("alice", "bob"), ("bob", "alice")):
        state = states[name]
        # The peer's row keys came one to a message: no row's key count, no grouping.
        with np.load(state / PEER_KEYS_TWICE) as data:
            assert set(data["counts"].tolist()) == {1}
        # The join of the peer's entries is held here, the evaluator, and its slots are the
        # ones the peer scored (a pair once per key it shares).
        with np.load(state / PEER_JOIN) as data:
            slots = len(data["rows"])
            assert len(data["starts"]) - 1 == len(np.load(states[peer] / OWN_ENTRIES)["rows"])
        # The peer's entries: one value each, or a row's neighbours padded to the group size,
        # one such entry a row with a first name (recipes.entry_groups).
        with np.load(state / PEER_ENTRIES_TWICE) as data:
            sizes = data["counts"]
        group = group_size(",".join(recipes))
        assert set(sizes.tolist()) == {1, group} and group == NEIGHBOUR_LETTERS + 1
        assert np.count_nonzero(sizes == group) == 300
        with np.load(states[peer] / OWN_MATCHES) as data:
            matched = len(data["own"])
        assert 0 < matched <= slots
        # Each party's doubly blinded own keys meet none of the peer's: only the evaluator of
        # each direction joins, against entries without rows.
        with (
            np.load(states[name] / OWN_KEYS_TWICE) as a,
            np.load(states[peer] / OWN_KEYS_TWICE) as b,
        ):
            mine = set(a["values"].reshape(-1, 32).view("V32").ravel().tolist())
            theirs = set(b["values"].reshape(-1, 32).view("V32").ravel().tolist())
        assert not mine & theirs


# Keys on one name each: many of the peer's rows share each, more slots than entries; and a
# grouped recipe, whose entries are agreed to hold 1 or its group's values.
LOOSE = ["first:soundex", "last:soundex", NEIGHBOURS]


def test_rows_name_slots_within_the_agreed_buckets_of_their_best(deploy):
    """[method] sealed_names_within is agreed and reaches MATCH, whose naming reads it
    (what best_slots names at each margin: tests/test_sealed_hidden_join.py); the run links
    as the default does, and each evaluator resolves no more slots than it was sent entries."""
    configure = _sealed([*RECIPES, NEIGHBOURS], "sealed_names_within = 2\n", "hidden")
    deployment = deploy(size=300, overlap=0.9, configure=configure)
    result, summary = coordinate_summary(deployment)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("best buckets or within 2 below them named") == 2, result.stdout
    quality = evaluate(
        deployment, summary["run_id"], read_truth(deployment.workdir / "data/truth.csv")
    )
    assert quality["linkage"]["f1"] >= 0.9, quality
    states = {n: run_dir(p.state_dir, summary["run_id"]) for n, p in deployment.parties.items()}
    for name, peer in (("alice", "bob"), ("bob", "alice")):
        named = np.load(states[name] / PEER_NAMED)
        entries = len(np.load(states[peer] / OWN_ENTRIES)["rows"])
        assert 0 < len(named) <= entries


@pytest.fixture
def exchanged_hidden(deploy):
    """Both daemons have completed EXCHANGE of a hidden-join run on loose keys, one slot an
    entry; (deployment, run_id, digest)."""
    return _exchanged(deploy, _sealed(LOOSE, "sealed_slots = 1\n", join="hidden"))


def test_bad_entries_and_named_slots_are_refused_with_their_reason(exchanged_hidden):
    deployment, run_id, digest = exchanged_hidden
    state = run_dir(deployment.parties["alice"].state_dir, run_id)
    held = state / PEER_ENTRIES_TWICE
    before = held.read_bytes()
    with np.load(state / OWN_ENTRIES) as data:
        own_entries = data["values"].tobytes()
    point = bytes([9]) + bytes(31)
    # Bob's declared rows times the keys a row can have (a grouped recipe's padded group).
    bound = 120 * most_keys(",".join(LOOSE))
    group = group_size(",".join(LOOSE))
    entries = {
        "grouped in rows": (_keys(run_id, digest, [2], point * 2), pb.BAD_CIPHERTEXT),
        "a group short of the agreed size": (
            _keys(run_id, digest, [group - 1], point * (group - 1)),
            pb.BAD_CIPHERTEXT,
        ),
        "more than the rows' keys": (
            _keys(run_id, digest, [1] * (bound + 1), point * (bound + 1)),
            pb.KEY_BOUND,
        ),
        "one value for every entry": (
            _keys(run_id, digest, [1] * 120, point * 120),
            pb.DEGENERATE_KEYS,
        ),
        "reflected": (
            _keys(run_id, digest, [1] * (len(own_entries) // 32), own_entries),
            pb.REFLECTED,
        ),
        "replaced": (_keys(run_id, digest, [1], point), pb.ALREADY_RECEIVED),
        "another digest": (_keys(run_id, "0" * 64, [1], point), pb.DIGEST_MISMATCH),
    }
    stub, channel = stub_as(deployment, "alice", "bob")
    with channel:
        for why, (messages, reason) in entries.items():
            error = _refusal(lambda m=messages: stub.peer.SendEntries(iter(m), timeout=30))
            assert reason_of(error) == reason, (why, error.details())
            assert held.read_bytes() == before, why
        counts = [
            c
            for m in stub.peer.JoinCounts(
                pb.JoinCountsRequest(run_id=run_id, digest=digest), timeout=30
            )
            for c in m.counts
        ]
        assert len(counts) == len(
            np.load(run_dir(deployment.parties["bob"].state_dir, run_id) / OWN_ENTRIES)["rows"]
        )
        # Every entry the agreed slot, whoever holds its key: the counts tell Bob nothing of
        # who is in Alice's file ([method] sealed_slots; hidden_join.fixed).
        assert set(counts) == {1}
        full = next(e for e, c in enumerate(counts) if c > 0)
        request = lambda e, s: pb.ResolveSlotsRequest(  # noqa: E731
            run_id=run_id, digest=digest, entries=e, slots=s
        )
        rows = [
            r
            for m in stub.peer.ResolveSlots(iter([request([full], [0])]), timeout=30)
            for r in m.rows
        ]
        assert len(rows) == 1 and rows[0] < 120
        slots = {
            "beyond its entry's count": request([full], [counts[full]]),
            "no such entry": request([len(counts)], [0]),
            "named twice": request([full, full], [0, 0]),
            "entries without slots": request([full], []),
        }
        for why, message in slots.items():
            error = _refusal(lambda m=message: list(stub.peer.ResolveSlots(iter([m]), timeout=30)))
            assert reason_of(error) == pb.BAD_MATCHES, (why, error.details())
        # Over all calls, no more slots than Bob's declared rows need (NAMES_PER_ROW each),
        # nor than his entries: naming every slot would give the keys' graph back.
        bound = min(len(counts), 120 * NAMES_PER_ROW)
        every = [(e, k) for e, c in enumerate(counts) for k in range(c) if (e, k) != (full, 0)]
        assert len(every) >= bound
        over = {
            "more than the rows need": request(
                [e for e, _ in every[: bound + 1]], [k for _, k in every[: bound + 1]]
            ),
            "more than the rows need over two calls": request(
                [e for e, _ in every[:bound]], [k for _, k in every[:bound]]
            ),
        }
        for why, message in over.items():
            error = _refusal(lambda m=message: list(stub.peer.ResolveSlots(iter([m]), timeout=30)))
            assert reason_of(error) == pb.NAMING_BOUND, (why, error.details())
        # The same join answers every time: the slots the scores and the names refer to.
        again = stub.peer.JoinCounts(pb.JoinCountsRequest(run_id=run_id, digest=digest), timeout=30)
        assert [c for m in again for c in m.counts] == list(counts)


def test_a_graph_run_takes_no_entries(exchanged):
    deployment, run_id, digest = exchanged
    stub, channel = stub_as(deployment, "alice", "bob")
    with channel:
        point = bytes([9]) + bytes(31)
        for call in (
            lambda: stub.peer.SendEntries(iter(_keys(run_id, digest, [1], point)), timeout=30),
            lambda: list(
                stub.peer.JoinCounts(pb.JoinCountsRequest(run_id=run_id, digest=digest), timeout=30)
            ),
            lambda: list(
                stub.peer.ResolveSlots(
                    iter([pb.ResolveSlotsRequest(run_id=run_id, digest=digest)]), timeout=30
                )
            ),
        ):
            error = _refusal(call)
            assert reason_of(error) == pb.OUT_OF_ORDER and "graph" in error.details()
