"""The privacy gate in running daemons: it measures what a tensor would give away before the
tensor leaves, refuses over the limit, and the summary reports what it measured."""

from __future__ import annotations

import ast
import json
from dataclasses import replace
from pathlib import Path

import pytest

from pprl.party.local import PARTIES, Privacy, evaluate, read_truth
from pprl.party.service.wire_log import read_wire_log
from pprl.party.storage.artifacts import NOISE_CHOICE, OWN_TENSOR, PEER_TENSOR
from pprl.party.storage.gate_cache import CACHE_DIR, NOISE_HINT
from pprl.party.storage.state import run_dir
from tests.conftest import coordinate

pytestmark = pytest.mark.integration


def _methods_sent(deployment) -> set[str]:
    """Every RPC either daemon's wire log recorded, by method name."""
    return {
        method.rsplit("/", 1)[-1]
        for name in PARTIES
        for _, method, _ in read_wire_log(deployment.workdir / f"{name}.wire.log")
    }


def test_the_gate_refuses_a_raw_tensor_over_the_limit_and_nothing_is_sent(deploy):
    # The census dictionary attacks 60 of the 200 records, not the default 200 (the attack's
    # cost grows with the sample; the next test runs the default): a raw tensor gives every
    # one of them away all the same.
    privacy = Privacy(noise_sigma=0.0, max_reidentification=0.5, audit_records=60)
    deployment = deploy(encoding="reference", size=200, wire_log=True, privacy=privacy)
    result = coordinate(deployment)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    # Alice's records are census names: a raw tensor gives every one of them away.
    assert "privacy gate: a dictionary attack re-identified 100.0% of 60 sampled" in output
    assert "above the limit of 50.0%" in output
    assert "max_reidentification" in output
    assert "alice: FAILED_PRECONDITION [PRIVACY_GATE]: SMASH failed: privacy gate" in output
    assert "PushTensor" not in _methods_sent(deployment)
    # Alice kept no release; neither received one. (Bob's own SMASH may finish after the
    # run failed, and keeps a release he never sent: whether it has finished is a race.)
    assert not list(deployment.parties["alice"].state_dir.rglob(OWN_TENSOR))
    for name in PARTIES:
        state = deployment.parties[name].state_dir
        assert not list(state.rglob(PEER_TENSOR)), f"{name} stored {PEER_TENSOR}"


def test_noise_lowers_the_measured_rate_and_the_run_still_links(deploy):
    privacy = Privacy(noise_sigma=3.0, max_reidentification=1.0)
    deployment = deploy(encoding="reference", size=300, overlap=0.9, privacy=privacy)
    path = deployment.workdir / "summary.json"
    result = coordinate(deployment, "--json", str(path))
    assert result.returncode == 0, result.stderr
    summary = json.loads(path.read_text())
    alice = summary["parties"]["alice"]["privacy"]
    assert alice["audited_records"] == 200
    assert alice["noise_edits"] > 0.5
    # Raw, every one of them falls (test above); against the careful attacker it takes
    # sigma 3 (not 1, as with the earlier gate) for fewer to fall.
    assert alice["reidentified"] < 0.85
    assert alice["noise_choice"] == ""  # the noise was set, not chosen: no reason to print
    assert "\n  0\n" not in result.stdout
    assert "privacy gate: a dictionary attack re-identified" in result.stdout
    assert "Gaussian mechanism epsilon" in result.stdout
    truth = read_truth(deployment.workdir / "data" / "truth.csv")
    quality = evaluate(deployment, summary["run_id"], truth)
    assert quality["linkage"]["f1"] >= 0.9
    # The default noisy release is projected: each daemon sends k = 45 coordinates per value
    # of the built-in 1,000-row set instead of 1,000 distances, and the peer's check expects
    # exactly that width.
    for name in PARTIES:
        run = run_dir(deployment.parties[name].state_dir, summary["run_id"])
        for tensor in (OWN_TENSOR, PEER_TENSOR):
            assert (run / tensor).stat().st_size == 300 * 4 * 45


def test_the_daemon_draws_randomness_only_from_the_secret_generator() -> None:
    """No seeded or global generator in the daemon: noise a peer could replay protects
    nothing, and a shuffle it could replay would undo the secret row order. Its one source
    is Randomness, seeded by nothing but an explicit development seed."""
    built = []
    for path in Path("pprl/party").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute):
                assert node.attr not in {"default_rng", "seed", "RandomState"}, path
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Randomness":
                built.append(ast.unparse(node))
    assert built == ["Randomness(config.development_seed, config.identity, key)"]


def test_automatic_noise_takes_the_larger_of_the_two_choices_and_passes_both_gates(deploy):
    # The census dictionary on 60 sampled records instead of the default 200 (each step the
    # search tries attacks the whole sample): in seven runs Alice chose sigma 3.125 or 3.25
    # (3.375 on 200; sigma 1.875 re-identifies 88-98% of hers), Bob 0 to 2.5, and the run
    # linked at F1 0.92-0.96.
    privacy = Privacy(noise_sigma="auto", max_reidentification=0.5, audit_records=60)
    deployment = deploy(encoding="reference", size=300, overlap=0.9, privacy=privacy)
    path = deployment.workdir / "summary.json"
    result = coordinate(deployment, "--json", str(path))
    assert result.returncode == 0, result.stderr
    summary = json.loads(path.read_text())
    own = {}
    for name in PARTIES:
        run = run_dir(deployment.parties[name].state_dir, summary["run_id"])
        own[name] = json.loads((run / NOISE_CHOICE).read_text())
    agreed = max(choice["sigma"] for choice in own.values())
    assert agreed > 0  # census names: no noise would fail a 50% gate
    for name in PARTIES:
        privacy_report = summary["parties"][name]["privacy"]
        assert privacy_report["noise_sigma"] == agreed
        assert privacy_report["reidentified"] <= 0.5
        assert f"noise chosen for this run: sigma {agreed:g}" in privacy_report["noise_choice"]
        assert own[name]["rates"][f"{own[name]['sigma']:g}"] <= 0.5
    assert "noise chosen for this run" in result.stdout
    truth = read_truth(deployment.workdir / "data" / "truth.csv")
    assert evaluate(deployment, summary["run_id"], truth)["linkage"]["f1"] >= 0.8
    # Each daemon remembers its own choice, where its next run's search starts.
    for name in PARTIES:
        hint = deployment.parties[name].state_dir / CACHE_DIR / NOISE_HINT
        assert json.loads(hint.read_text(encoding="utf-8")) == {"sigma": own[name]["sigma"]}


def _bob_fixed_noise(deployment) -> None:
    config = deployment.parties["bob"].config
    text = config.read_text(encoding="utf-8").replace('noise_sigma = "auto"', "noise_sigma = 1.0")
    config.write_text(text, encoding="utf-8")


def test_automatic_noise_on_one_side_only_is_a_mismatch_named_at_agree(
    deploy, trial_privacy: Privacy
):
    privacy = replace(trial_privacy, noise_sigma="auto", max_reidentification=0.10)
    deployment = deploy(encoding="reference", size=200, configure=_bob_fixed_noise, privacy=privacy)
    result = coordinate(deployment)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "agreement digests differ" in output and "noise" in output
    for name in PARTIES:
        assert not list(deployment.parties[name].state_dir.rglob(OWN_TENSOR))


def _gate_on_any_name(deployment) -> None:
    for name in PARTIES:
        config = deployment.parties[name].config
        text = config.read_text(encoding="utf-8").replace(
            "max_reidentification = 0.0", 'max_reidentification = 0.0\nmeasure = "any-name"'
        )
        config.write_text(text, encoding="utf-8")


def test_automatic_noise_no_step_can_pass_is_refused_at_agree_and_nothing_is_sent(deploy):
    # A limit of 0 on any recovered name: even the largest step leaves some common first name
    # to the frequency-weighted attacker, so no noise on the grid passes.
    privacy = Privacy(noise_sigma="auto", max_reidentification=0.0)
    deployment = deploy(
        encoding="reference", size=200, wire_log=True, configure=_gate_on_any_name, privacy=privacy
    )
    result = coordinate(deployment)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "[PRIVACY_GATE]" in output and "AGREE failed" in output
    assert 'noise_sigma = "auto" in ' in output and "alice.toml" in output
    assert "even sigma 8 re-identifies" in output and "nothing was sent" in output
    assert "PushTensor" not in _methods_sent(deployment)
    for name in PARTIES:
        assert not list(deployment.parties[name].state_dir.rglob(OWN_TENSOR))


def _alice_lists_people(deployment) -> None:
    config = deployment.parties["alice"].config
    people = deployment.workdir / "data" / "alice.csv"
    text = config.read_text(encoding="utf-8").replace(
        "[privacy]\n", f'[privacy]\npopulation = "{people.as_posix()}"\n'
    )
    config.write_text(text, encoding="utf-8")


def test_a_configured_list_of_people_adds_the_attacker_who_combines_attributes(
    deploy, trial_privacy: Privacy
):
    # The name attackers it is compared with use the trial gate (conftest): a list holding
    # every one of Alice's people re-identifies all of them, more than any name list can.
    privacy = replace(trial_privacy, noise_sigma=3.0, max_reidentification=1.0)
    deployment = deploy(
        encoding="reference", size=200, configure=_alice_lists_people, privacy=privacy
    )
    result = coordinate(deployment)
    assert result.returncode == 0, result.stderr
    alice = [line for line in result.stdout.splitlines() if "alice  privacy gate passed" in line]
    bob = [line for line in result.stdout.splitlines() if "bob    privacy gate passed" in line]
    # A list that holds every one of Alice's people: it beats the name dictionary.
    assert "strongest attacker: a list of people, every attribute of a record together" in alice[0]
    assert "population" not in bob[0]


def test_a_run_expected_to_link_badly_stops_at_train_and_nothing_is_sent(
    deploy, trial_privacy: Privacy
):
    """Noise that leaves the classifier guessing: each party's estimate on held-out synthetic
    pairs of its own records falls below its minimum, TRAIN fails with POOR_LINKAGE naming
    the estimate and the remedies, and no tensor leaves either party."""
    privacy = replace(trial_privacy, noise_sigma=6.0, max_reidentification=1.0, min_expected_f1=0.9)
    deployment = deploy(encoding="reference", size=300, wire_log=True, privacy=privacy)
    result = coordinate(deployment)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "[POOR_LINKAGE]: TRAIN failed: expected F1 about 0." in output
    assert "below the minimum of 0.90; nothing was sent" in output
    assert "max_reidentification" in output and "min_expected_f1" in output
    assert "PushTensor" not in _methods_sent(deployment)
    for name in PARTIES:
        assert not list(deployment.parties[name].state_dir.rglob(PEER_TENSOR))


def test_the_summary_reports_what_the_attack_recovers_and_the_linkage_expected(
    deploy, trial_privacy: Privacy
):
    # What the summary holds, not the gate's figure: the trial gate (conftest) is enough.
    privacy = replace(trial_privacy, noise_sigma=1.0, max_reidentification=1.0, min_expected_f1=0.5)
    deployment = deploy(encoding="reference", size=300, privacy=privacy)
    path = deployment.workdir / "summary.json"
    result = coordinate(deployment, "--json", str(path))
    assert result.returncode == 0, result.stderr
    summary = json.loads(path.read_text())
    # The mode and the noise it releases with, as agreed.
    assert summary["method"]["encoding"] == "reference"
    assert summary["method"]["noise_sigma"] == 1.0
    alice = summary["parties"]["alice"]
    recovered = alice["privacy"]["recovered"]
    assert set(recovered) == {"first", "middle", "last"}
    assert all(0 <= rate <= 1 for rate in recovered.values())
    assert alice["privacy"]["exposed"] >= alice["privacy"]["reidentified"]
    expected = alice["expected"]
    assert expected["minimum"] == 0.5 and 0.5 <= expected["f1"] <= 1
    line = next(x for x in result.stdout.splitlines() if "what that attack recovered" in x)
    assert all(f"{attribute} " in line for attribute in ("first", "middle", "last"))
    assert "records with any name" in line
    assert "expected before sending: F1 about" in result.stdout
    # With it, how it moves over the simulated error rates (the summary's words).
    assert (
        expected["spread"].startswith("the mean over 15% to 60%")
        and "if in 15%" in expected["spread"]
    )
    assert f"; {expected['spread']}; minimum 0.50" in result.stdout
    # MATCH fitted the simulations to the pairs alice accepted (pprl.protocol.expectation)
    fitted = alice["fitted"]
    assert 0.5 <= fitted["f1"] <= 1 and 0.15 <= fitted["error_rate"] <= 0.6
    assert fitted["partnered"] == 0 or 0 < fitted["partnered"] <= 300
    assert "expected, fitted to its accepted pairs: F1 about" in result.stdout
