import pytest

from pprl.protocol.phases import LAST_PHASE, Phase, PhaseOrderError, check_advance, next_phase


def test_wire_numbering() -> None:
    assert [p.name for p in Phase] == [
        "NEW",
        "AGREE",
        "SMASH",
        "TRAIN",
        "EXCHANGE",
        "MATCH",
        "REVEAL",
        "LINK",
    ]
    assert [int(p) for p in Phase] == list(range(8))
    assert LAST_PHASE is Phase.LINK


def test_next_phase_walks_in_order() -> None:
    seen, phase = [], Phase.NEW
    while (phase := next_phase(phase)) is not None:
        seen.append(phase)
    assert seen == list(Phase)[1:]


def test_advance_to_next() -> None:
    assert check_advance(Phase.NEW, Phase.AGREE) is True
    assert check_advance(Phase.MATCH, Phase.REVEAL) is True


def test_redo_returns_false() -> None:
    assert check_advance(Phase.TRAIN, Phase.TRAIN) is False
    assert check_advance(Phase.TRAIN, Phase.AGREE) is False
    assert check_advance(Phase.LINK, Phase.LINK) is False


def test_skip_ahead_names_both_phases() -> None:
    with pytest.raises(PhaseOrderError, match=r"MATCH.*SMASH"):
        check_advance(Phase.SMASH, Phase.MATCH)
    with pytest.raises(PhaseOrderError, match="SMASH"):
        check_advance(Phase.NEW, Phase.SMASH)


def test_new_cannot_be_requested() -> None:
    with pytest.raises(PhaseOrderError, match="NEW"):
        check_advance(Phase.TRAIN, Phase.NEW)


def test_the_wire_numbers_phases_as_the_protocol_does() -> None:
    from pprl.wire.v1 import linkage_pb2 as pb

    assert pb.Phase.Value("PHASE_UNSPECIFIED") == int(Phase.NEW)
    for phase in Phase:
        if phase is not Phase.NEW:
            assert pb.Phase.Value(f"PHASE_{phase.name}") == int(phase)


def test_every_phase_but_new_is_run_by_one_module_of_the_daemon() -> None:
    """The daemon's phases are a registry: a phase without a step would fail a run only
    when it is reached."""
    from pprl.party.phases.work import STEPS

    assert sorted(STEPS) == [phase for phase in Phase if phase != Phase.NEW]
    assert len({step.__module__ for step in STEPS.values()}) == len(STEPS)
