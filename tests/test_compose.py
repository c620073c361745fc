"""Compose wiring checked statically: CI has no Docker engine to run the deployment."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = ROOT / "docker-compose.yml"
# The same demo with every written volume a bind mount on the host (make compose-up).
HOST = ROOT / "docker-compose.host.yml"
MAKEFILE = ROOT / "Makefile"
PARTIES = {"alice": "bob", "bob": "alice"}
# The three-party profile's services, by the identity each serves.
THREE = {"three-alice": "alice", "three-bob": "bob", "three-carol": "carol"}
CERTS_MOUNT = PurePosixPath("/certs")
PORT = 50051


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def services(compose: dict[str, Any]) -> dict[str, Any]:
    return compose["services"]


def mounts(service: dict[str, Any]) -> dict[str, tuple[str, bool]]:
    """{container path: (source, read_only)} from short ("src:dst[:ro]") or long syntax."""
    result = {}
    for volume in service.get("volumes", []):
        if isinstance(volume, str):
            source, target, *options = volume.split(":")
            read_only = "ro" in ",".join(options).split(",")
        else:
            source, target = volume["source"], volume["target"]
            read_only = bool(volume.get("read_only", False))
        result[target] = (source, read_only)
    return result


def named(source: str) -> bool:
    """Bind mounts start with a path; anything else is a named volume."""
    return not source.startswith((".", "/", "~"))


def command(service: dict[str, Any]) -> str:
    parts = service.get("command", [])
    return " ".join(parts) if isinstance(parts, list) else parts


def party_config(name: str, folder: str = "deploy") -> dict[str, Any]:
    with (ROOT / folder / f"{name}.toml").open("rb") as f:
        return tomllib.load(f)


def compose_cli() -> list[str] | None:
    """Either Compose front end that actually works here, or None."""
    candidates = [["docker", "compose"], ["docker-compose"]]
    for cli in candidates:
        if shutil.which(cli[0]) is None:
            continue
        probe = subprocess.run([*cli, "version"], capture_output=True, timeout=60, check=False)
        if probe.returncode == 0:
            return cli
    return None


def test_compose_config_is_accepted_by_compose() -> None:
    cli = compose_cli()
    if cli is None:
        pytest.skip("neither `docker compose` nor `docker-compose` is available")
    for files in (["-f", str(COMPOSE)], ["-f", str(COMPOSE), "-f", str(HOST)]):
        result = subprocess.run(
            [*cli, *files, "config", "--quiet"],
            cwd=ROOT,
            env={**os.environ, "PPRL_UID": "1000", "PPRL_GID": "1000"},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, result.stderr


def test_services_exist(services: dict[str, Any]) -> None:
    assert {"certs", "alice", "bob", "coordinator"} <= services.keys()


def test_certs_service_issues_every_identity(services: dict[str, Any]) -> None:
    certs = services["certs"]
    assert command(certs).split()[:3] == ["certs", "--out", str(CERTS_MOUNT)]
    assert set(command(certs).split()[3:]) == {"alice", "bob", "carol", "coordinator"}
    assert mounts(certs)[str(CERTS_MOUNT)] == ("certs", False)


def test_parties_have_their_own_records_and_state(services: dict[str, Any]) -> None:
    sources = {}
    for party in [*PARTIES, *THREE]:
        party_mounts = mounts(services[party])
        records, state = party_mounts["/records"], party_mounts["/state"]
        assert named(records[0]) and named(state[0])
        assert not records[1] and not state[1]
        assert records[0] != state[0]
        sources[party] = {records[0], state[0]}
    for a, b in itertools.combinations(sources, 2):
        assert not sources[a] & sources[b], (a, b)


@pytest.mark.parametrize("name", ["alice", "bob", "coordinator"])
def test_certs_are_mounted_read_only(services: dict[str, Any], name: str) -> None:
    assert mounts(services[name])[str(CERTS_MOUNT)] == ("certs", True)


def test_every_named_volume_is_declared(compose: dict[str, Any]) -> None:
    declared = set(compose.get("volumes") or {})
    used = {
        source
        for service in compose["services"].values()
        for source, _ in mounts(service).values()
        if named(source)
    }
    assert used <= declared, f"undeclared volumes: {sorted(used - declared)}"


def test_bind_mounted_files_exist(services: dict[str, Any]) -> None:
    for service in services.values():
        for source, read_only in mounts(service).values():
            if not named(source):
                assert (ROOT / source).is_file(), source
                assert read_only, f"{source} should be mounted read-only"


@pytest.mark.parametrize("party", sorted(PARTIES))
def test_party_waits_for_certs_and_serves_its_config(services: dict[str, Any], party: str) -> None:
    service = services[party]
    assert service["depends_on"]["certs"]["condition"] == "service_completed_successfully"
    assert mounts(service)["/config/party.toml"] == (f"./deploy/{party}.toml", True)
    assert f"--side {party}" in command(service)
    assert "pprl party serve --config /config/party.toml" in command(service)


def test_parties_generate_the_same_demo_data(services: dict[str, Any]) -> None:
    def data_arguments(party: str) -> list[str]:
        generate = command(services[party]).split("&&")[0]
        return generate.replace(f"--side {party}", "").split()

    assert data_arguments("alice") == data_arguments("bob")


def test_coordinator_dials_both_parties(services: dict[str, Any]) -> None:
    coordinator = services["coordinator"]
    conditions = {name: dep["condition"] for name, dep in coordinator["depends_on"].items()}
    # Healthy, not only started: the image's HEALTHCHECK asks the daemon itself.
    assert conditions["alice"] == "service_healthy"
    assert conditions["bob"] == "service_healthy"
    args = coordinator["command"]
    assert args[0] == "coordinate"
    option = dict(zip(args[1::2], args[2::2], strict=True))
    assert option["--alice"] == f"alice:{PORT}"
    assert option["--bob"] == f"bob:{PORT}"
    assert option.get("--alice-identity", "alice") == "alice"
    assert option.get("--bob-identity", "bob") == "bob"
    for flag, name in [("--cert", "coordinator.pem"), ("--key", "coordinator.key")]:
        assert PurePosixPath(option[flag]) == CERTS_MOUNT / name
    assert PurePosixPath(option["--ca"]) == CERTS_MOUNT / "ca.pem"
    out_dir = PurePosixPath(option["--json"]).parent
    source, read_only = mounts(coordinator)[str(out_dir)]
    assert named(source) and not read_only


@pytest.mark.parametrize(("party", "peer"), sorted(PARTIES.items()))
def test_party_config_matches_compose(party: str, peer: str) -> None:
    config = party_config(party)
    assert config["identity"] == party
    assert config["peer"]["identity"] == peer
    assert config["peer"]["address"] == f"{peer}:{PORT}"
    assert party_config(peer)["listen"].rpartition(":")[2] == str(PORT)
    assert config["coordinator"]["identity"] == "coordinator"
    assert PurePosixPath(config["state_dir"]) == PurePosixPath("/state")
    assert PurePosixPath(config["records"]["path"]) == PurePosixPath(f"/records/{party}.csv")
    assert PurePosixPath(config["reference"]["path"]).parent == PurePosixPath("/records")
    tls = {key: PurePosixPath(value) for key, value in config["tls"].items()}
    assert tls == {
        "cert": CERTS_MOUNT / f"{party}.pem",
        "key": CERTS_MOUNT / f"{party}.key",
        "ca": CERTS_MOUNT / "ca.pem",
    }


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with continuation lines joined and comments dropped."""
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
    joined = "\n".join(lines).replace("\\\n", " ")
    result = []
    for line in joined.splitlines():
        if line.strip():
            instruction, _, arguments = line.strip().partition(" ")
            result.append((instruction.upper(), arguments.strip()))
    return result


def test_dockerfile_checks_a_partys_health_with_the_daemons_own_check() -> None:
    lines = (ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("HEALTHCHECK"))
    check = " ".join(line.rstrip("\\").strip() for line in lines[at : at + 2])
    assert "CMD [ ! -f /config/party.toml ] || pprl party health --config /config/party.toml" in (
        check
    )


def test_dockerfile_entrypoint_is_pprl() -> None:
    entrypoints = [args for name, args in dockerfile_instructions() if name == "ENTRYPOINT"]
    assert entrypoints, "no ENTRYPOINT"
    assert json.loads(entrypoints[-1]) == ["pprl"]


def test_dockerfile_does_not_run_as_root(services: dict[str, Any]) -> None:
    users = [args for name, args in dockerfile_instructions() if name == "USER"]
    assert users, "no USER: the image would run as root"
    user = users[-1].split(":")[0]
    assert user not in {"root", "0"}
    # One uid everywhere, or the daemons could not read the 0600 keys the certs service writes.
    overrides = {str(service["user"]) for service in services.values() if "user" in service}
    assert not overrides, f"services override the image's user: {overrides}"


def test_named_volume_mount_points_belong_to_the_image_user(services: dict[str, Any]) -> None:
    """Docker seeds a new named volume with the owner of the image directory it is mounted on."""
    owned = {
        path
        for name, args in dockerfile_instructions()
        if name == "RUN"
        for step in args.split("&&")
        if step.split()[:1] == ["chown"]
        for path in step.split()
        if path.startswith("/")
    }
    targets = {
        target
        for service in services.values()
        for target, (source, _) in mounts(service).items()
        if named(source)
    }
    assert targets <= owned, f"not created for the image user: {sorted(targets - owned)}"


def test_the_three_party_profile_stays_out_of_the_default_demo(services: dict[str, Any]) -> None:
    profiled = {name for name, service in services.items() if service.get("profiles")}
    assert profiled == {*THREE, "three-coordinator"}
    for name in profiled:
        assert services[name]["profiles"] == ["three"]
        # Nothing of the default demo depends on the profile, nor the profile on the demo's
        # parties.
        assert set(services[name].get("depends_on", {})) <= {"certs", *THREE}
    for name in set(services) - profiled:
        assert not set(services[name].get("depends_on", {})) & profiled


@pytest.mark.parametrize("service", sorted(THREE))
def test_three_party_daemons_serve_their_own_config(services: dict[str, Any], service: str) -> None:
    party = THREE[service]
    assert mounts(services[service])["/config/party.toml"] == (f"./deploy/three/{party}.toml", True)
    assert f"--side {party}" in command(services[service])
    generate = command(services[service]).split("&&")[0]
    assert "--parties 3" in generate
    config = party_config(party, "deploy/three")
    assert config["identity"] == party
    assert "peer" not in config
    peers = {p["identity"]: p["address"] for p in config["peers"]}
    assert peers == {THREE[s]: f"{s}:{PORT}" for s in THREE if s != service}
    assert config["coordinator"]["identity"] == "coordinator"
    assert config["tls"]["cert"] == f"{CERTS_MOUNT}/{party}.pem"
    assert PurePosixPath(config["records"]["path"]) == PurePosixPath(f"/records/{party}.csv")


def test_three_party_daemons_generate_the_same_data(services: dict[str, Any]) -> None:
    def data_arguments(service: str) -> list[str]:
        generate = command(services[service]).split("&&")[0]
        return generate.replace(f"--side {THREE[service]}", "").split()

    assert len({tuple(data_arguments(s)) for s in THREE}) == 1


def test_three_party_coordinator_dials_every_party(services: dict[str, Any]) -> None:
    coordinator = services["three-coordinator"]
    args = coordinator["command"]
    assert args[0] == "coordinate"
    listed = [args[i + 1] for i, arg in enumerate(args) if arg == "--party"]
    assert listed == [f"{party}={service}:{PORT}" for service, party in THREE.items()]
    option = dict(zip(args[1::2], args[2::2], strict=True))
    assert option["--primary"] == "alice"
    assert {n: d["condition"] for n, d in coordinator["depends_on"].items()} == {
        "certs": "service_completed_successfully",
        **dict.fromkeys(THREE, "service_healthy"),
    }
    source, read_only = mounts(coordinator)[str(PurePosixPath(option["--json"]).parent)]
    assert named(source) and not read_only and source != mounts(services["coordinator"])["/out"][0]


def test_the_systemd_unit_serves_a_party_with_options_the_command_takes() -> None:
    import configparser
    import shlex

    from pprl.cli import build_parser

    unit = configparser.ConfigParser(interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read(ROOT / "deploy" / "systemd" / "pprl-party.service", encoding="utf-8")
    service = unit["Service"]
    command = shlex.split(service["ExecStart"])
    assert command[0].endswith("/pprl") and command[1:3] == ["party", "serve"]
    build_parser().parse_args(command[1:])  # every option exists (argparse exits if not)
    assert service["StateDirectoryMode"] == "0700" and service["UMask"] == "0077"
    assert service["KillSignal"] == "SIGTERM" and service["User"] != "root"


# -- the demo with its results on the host (docker-compose.host.yml, make compose-up) --------

DEMO = ("certs", "alice", "bob", "coordinator")


@pytest.fixture(scope="module")
def host() -> dict[str, Any]:
    return yaml.safe_load(HOST.read_text(encoding="utf-8"))["services"]


def merged_mounts(base: dict[str, Any], override: dict[str, Any]) -> dict[str, tuple[str, bool]]:
    """A service's mounts as compose merges an override file: by container path."""
    return {**mounts(base), **mounts(override)}


def test_the_host_override_runs_every_demo_service_as_one_given_non_root_user(
    services: dict[str, Any], host: dict[str, Any]
) -> None:
    # Every service of the default demo, so the one uid that writes the 0600 keys reads them.
    assert set(host) == set(DEMO) and not any(services[name].get("profiles") for name in DEMO)
    users = {host[name]["user"] for name in DEMO}
    assert len(users) == 1
    (user,) = users
    # Required variables without a default: never a silent fallback to root or to 10001.
    assert user.startswith("${PPRL_UID:?") and ":${PPRL_GID:?" in user


def test_with_the_host_override_every_written_volume_is_a_directory_make_creates(
    services: dict[str, Any], host: dict[str, Any]
) -> None:
    shown = subprocess.run(
        ["make", "-s", "-f", str(MAKEFILE), "--eval", "dirs: ; @echo $(COMPOSE_DIRS)", "dirs"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    made = set(shown.stdout.split())
    bound = set()
    for name in DEMO:
        for target, (source, read_only) in merged_mounts(services[name], host[name]).items():
            if read_only and source.startswith("./deploy/"):
                continue  # the party's configuration, read only
            assert not named(source), f"{name}:{target} stays on the named volume {source}"
            assert source.startswith("./compose-data/"), (name, target, source)
            bound.add(source.removeprefix("./"))
    assert bound == made
    # The results: each party's state directory, where its daemon writes runs/<id>/.
    for party in PARTIES:
        source, read_only = merged_mounts(services[party], host[party])["/state"]
        assert source == f"./compose-data/{party}/state" and not read_only


def test_make_compose_up_creates_the_directories_and_never_runs_the_containers_as_root(
    tmp_path: Path,
) -> None:
    """`make compose-up` with a stand-in `docker` that records what it was asked."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "docker.txt"
    fake = bin_dir / "docker"
    fake.write_text(f'#!/bin/sh\necho "$PPRL_UID:$PPRL_GID $*" > {record}\n')
    fake.chmod(0o755)
    work = tmp_path / "clone"
    work.mkdir()
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["make", "-s", "-f", str(MAKEFILE), "compose-up"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    user, args = record.read_text().split(" ", 1)
    uid, gid = (int(part) for part in user.split(":"))
    expected = (10001, 10001) if os.getuid() == 0 else (os.getuid(), os.getgid())
    assert (uid, gid) == expected and uid != 0
    assert args.split() == [
        "compose",
        "-f",
        "docker-compose.yml",
        "-f",
        "docker-compose.host.yml",
        "up",
        "--build",
        "-d",
    ]
    for party in PARTIES:
        state = work / "compose-data" / party / "state"
        assert state.is_dir() and state.stat().st_uid == uid
    assert "compose-data/alice/state/runs/" in done.stdout
