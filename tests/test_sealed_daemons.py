"""Sealed linkage through two real daemons over loopback mutual TLS: blinded keys and
encrypted scores on the wire, no vector, and what its configuration refuses."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable

import grpc
import numpy as np
import pytest

from pprl.files.sealed_bytes import dumped
from pprl.party.local import Deployment, evaluate, read_truth
from pprl.party.reasons import reason_of
from pprl.party.storage.artifacts import (
    MODEL,
    OWN_KEYS,
    OWN_KEYS_TWICE,
    PEER_KEYS_TWICE,
    PEER_TENSOR,
)
from pprl.party.storage.state import run_dir
from pprl.protocol.model.classifier import Model
from pprl.protocol.sealed import scoring, session
from pprl.protocol.sealed.parameters import DEFAULT_CRYPTO, CkksSetting
from pprl.protocol.sealed.session import DEFAULT_THRESHOLDS
from pprl.wire.v1 import linkage_pb2 as pb
from tests.conftest import coordinate, coordinate_summary, stub_as, tensor_stream

pytestmark = pytest.mark.integration

# Keys for the built-in demo's first, middle and last names: each needs two of them to agree
# (a code or an initial), so that a typo in one name still leaves a key in common.
RECIPES = [
    "first:soundex+last:soundex",
    "first:initial+last",
    "first+last:initial",
    "first:initial+middle:initial+last:initial",
]


def _sealed(recipes: list[str] = RECIPES, extra: str = "") -> Callable[[Deployment], None]:
    """A configure hook: sealed linkage on both daemons."""

    def configure(deployment: Deployment) -> None:
        keys = "[" + ", ".join(json.dumps(r) for r in recipes) + "]"
        for party in deployment.parties.values():
            text = party.config.read_text(encoding="utf-8")
            text = text.replace(
                "[method]\n", f'[method]\nencoding = "sealed"\nsealed_keys = {keys}\n{extra}', 1
            )
            party.config.write_text(text, encoding="utf-8")

    return configure


# The default model, linear in the distances, and a kernel model scored through random
# features (the evaluator maps its vectors with the scorer's widths from the score header).
@pytest.mark.parametrize("features", [0, 64], ids=["linear", "kernel"])
def test_two_daemons_link_sealed_and_send_no_vectors(deploy, features):
    extra = f"sealed_kernel_features = {features}\n"
    deployment = deploy(size=300, overlap=0.9, configure=_sealed(extra=extra))
    result, summary = coordinate_summary(deployment)
    assert result.returncode == 0, result.stderr
    assert "candidate pairs" in result.stdout and "under encryption" in result.stdout
    quality = evaluate(
        deployment, summary["run_id"], read_truth(deployment.workdir / "data/truth.csv")
    )
    assert quality["linkage"]["f1"] >= 0.9, quality
    for name in ("alice", "bob"):
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
    deployment = deploy(size=120, overlap=0.9, configure=_sealed())
    path = deployment.workdir / "exchanged.json"
    result = coordinate(deployment, "--until", "exchange", "--json", str(path))
    assert result.returncode == 0, result.stderr
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
        "too many for a row": (_keys(run_id, digest, [5], point * 5), pb.BAD_CIPHERTEXT),
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
    coordinates = entries * (width + 1) + 1
    placed = session.score_layout(pairs, ckks, coordinates)
    public = dumped(scoring.secret_keys(ckks).public)
    header = pb.ScoreHeader(
        run_id=run_id,
        digest=digest,
        public_key=public,
        batches=placed.batches,
        coordinates=coordinates,
        candidates_sha256=session.candidates_sha256(pairs),
    )
    return header, coordinates


def test_bad_encrypted_scores_are_refused_with_their_reason(exchanged):
    deployment, run_id, digest = exchanged
    header, coordinates = _score_header(deployment, run_id, digest)
    assert header.batches == 1
    other = CkksSetting(coeff_mod_bit_sizes=(60, 40, 40, 60))
    junk = pb.SealedScores(ciphertext=pb.Ciphertext(batch=0, index=0, data=b"not a ciphertext"))

    def changed(**fields) -> pb.SealedScores:
        copy = pb.ScoreHeader()
        copy.CopyFrom(header)
        for name, value in fields.items():
            if isinstance(value, list):
                getattr(copy, name).extend(value)
            else:
                setattr(copy, name, value)
        return pb.SealedScores(header=copy)

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
        "unreadable ciphertexts": (
            [pb.SealedScores(header=header)] + [junk] * coordinates,
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
    for party in deployment.parties.values():
        assert not list(party.state_dir.rglob(OWN_KEYS_TWICE))
        assert not list(party.state_dir.rglob(PEER_KEYS_TWICE))
