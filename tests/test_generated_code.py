"""The committed gRPC code must be exactly what `make proto` generates from proto/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROTO_DIR = ROOT / "proto"
LINKAGE = Path("pprl/wire/v1/linkage.proto")
SUFFIXES = ("_pb2.py", "_pb2_grpc.py", "_pb2.pyi")


def generated_names(proto: Path) -> list[Path]:
    """The files protoc writes for `proto` (relative to proto/), relative to the repository."""
    stem = proto.with_suffix("")
    return [stem.with_name(stem.name + suffix) for suffix in SUFFIXES]


def all_protos() -> list[Path]:
    return sorted(p.relative_to(PROTO_DIR) for p in PROTO_DIR.rglob("*.proto"))


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("protoc")
    command = [
        sys.executable,
        "-m",
        "grpc_tools.protoc",
        "-I",
        "proto",
        f"--python_out={out}",
        f"--grpc_python_out={out}",
        f"--pyi_out={out}",
        *(str(Path("proto") / p) for p in all_protos()),
    ]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"protoc failed: {result.stderr}"
    return out


def test_linkage_proto_is_among_the_protos() -> None:
    assert LINKAGE in all_protos()
    assert [p.name for p in generated_names(LINKAGE)] == [
        "linkage_pb2.py",
        "linkage_pb2_grpc.py",
        "linkage_pb2.pyi",
    ]


@pytest.mark.parametrize("name", generated_names(LINKAGE), ids=lambda p: p.name)
def test_committed_linkage_code_is_byte_identical(regenerated: Path, name: Path) -> None:
    fresh = regenerated / name
    committed = ROOT / name
    assert fresh.is_file(), f"protoc did not write {name}"
    assert committed.is_file(), f"{name} is missing: run make proto"
    assert fresh.read_bytes() == committed.read_bytes(), f"{name} is stale: run make proto"


def test_every_generated_file_is_committed_and_current(regenerated: Path) -> None:
    written = sorted(p.relative_to(regenerated) for p in regenerated.rglob("*") if p.is_file())
    expected = sorted(name for proto in all_protos() for name in generated_names(proto))
    assert written == expected
    for name in written:
        committed = ROOT / name
        assert committed.is_file(), f"{name} is missing: run make proto"
        assert (regenerated / name).read_bytes() == committed.read_bytes(), (
            f"{name} is stale: run make proto"
        )


def test_no_orphan_proto() -> None:
    missing = [
        str(name)
        for proto in all_protos()
        for name in generated_names(proto)
        if not (ROOT / name).is_file()
    ]
    assert all_protos(), "no .proto files found under proto/"
    assert not missing, f"generated files missing for: {missing}: run make proto"


def test_no_generated_code_without_its_proto() -> None:
    protos = {proto.with_suffix("") for proto in all_protos()}
    orphans = []
    for suffix in SUFFIXES:
        for path in (ROOT / "pprl").rglob(f"*{suffix}"):
            stem = path.relative_to(ROOT).as_posix().removesuffix(suffix)
            if Path(stem) not in protos:
                orphans.append(str(path.relative_to(ROOT)))
    assert not orphans, f"generated code whose .proto is gone: {orphans}"
