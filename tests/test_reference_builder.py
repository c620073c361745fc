"""`pprl reference` and its builder: the same spec and seed give the same set, byte for byte,
so two parties that build it apart reach the same agreement digest."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from pprl.cli import main
from pprl.files.reference import load_reference
from pprl.protocol.data.kinds import REFERENCE_DATE_FORMAT, normalise_value
from pprl.protocol.data.reference_builder import (
    GENERATORS,
    STREET_TYPES,
    build_reference,
    parse_column,
    reference_csv,
)
from pprl.protocol.data.synthetic import census_names
from pprl.protocol.errors import InputError
from pprl.protocol.method import _canonical, agreement_digest, method_params, reference_sha256

SPEC = (
    "first=first-name",
    "last=surname",
    "dob=date",
    "postcode=number:4",
    "phone=number:10",
    "ssn=number:7-9",
    "licence=code:6",
    "street=street",
    "suburb=suburb",
    "state=category:NSW,VIC,QLD,SA,WA,TAS,NT,ACT",
    "sex=category:f, m",
    "height=quantity:140-210",
    "pos=coordinates:48.8,2.25:48.89,2.39",
)
ROWS = 300


def build(spec=SPEC, rows: int = ROWS, seed: int = 7) -> dict[str, list[str]]:
    return build_reference([parse_column(text) for text in spec], rows, seed)


def write(path: Path, columns: dict[str, list[str]]) -> Path:
    path.write_text(reference_csv(columns), encoding="utf-8", newline="")
    return path


# --- determinism ----------------------------------------------------------------------------


def test_the_same_seed_gives_the_same_bytes_and_digest(tmp_path: Path) -> None:
    one, two = reference_csv(build()), reference_csv(build())
    assert one == two
    a = load_reference(write(tmp_path / "a.csv", build()))
    b = load_reference(write(tmp_path / "b.csv", build()))
    assert reference_sha256(a) == reference_sha256(b)
    mapping = [("first", "first"), ("last", "last")]
    params = method_params()
    assert agreement_digest(a, mapping, params) == agreement_digest(b, mapping, params)


def test_the_bytes_do_not_depend_on_the_process(tmp_path: Path) -> None:
    """A fresh interpreter (another hash seed) writes what this one does."""
    script = (
        "import sys\n"
        "from pprl.protocol.data.reference_builder import build_reference, parse_column, "
        "reference_csv\n"
        f"spec = {SPEC!r}\n"
        f"sys.stdout.write(reference_csv(build_reference([parse_column(t) for t in spec], "
        f"{ROWS}, 7)))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, env=env, check=True, timeout=60
    )
    assert result.stdout == reference_csv(build()).encode("utf-8")


def test_the_bytes_are_pinned_across_versions() -> None:
    """Two parties may run different numpy releases: a change in numpy's streams (or in the
    census lists) would make their sets differ, so a known spec's bytes are pinned here (the
    columns pinned before quantities existed, then the quantity and coordinates columns on
    their own)."""
    text = reference_csv(build(spec=SPEC[:-2]))
    assert text.splitlines()[1] == (
        "AUGUST,PRESEREN,1945-10-29,4202,8561339406,359857557,PW1DHR,BALTRIP ROAD,"
        "CREITZ GARDENS,VIC,F"
    )
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == (
        "a69e332e5780c9f9f30c3804dc2f20512b6102cb364c8d8798a49a1b0ca5044f"
    )
    assert build(spec=SPEC[-2:-1])["height"][:5] == [
        "173.96",
        "207.1",
        "164.1",
        "153.39",
        "199.91",
    ]
    assert build(spec=SPEC[-1:])["pos"][:4] == [
        "48.88094,2.26451",
        "48.80392,2.29335",
        "48.82532,2.32331",
        "48.86353,2.27619",
    ]


def test_a_different_seed_gives_a_different_set() -> None:
    one, two = build(seed=7), build(seed=8)
    for name in one:
        if name != "sex":  # two values over 300 rows could coincide only by a miracle anyway
            assert one[name] != two[name], name
    assert reference_csv(one) != reference_csv(two)


def test_adding_removing_or_reordering_columns_leaves_the_others_unchanged() -> None:
    full = build()
    fewer = build(spec=SPEC[1:5])
    reordered = build(spec=tuple(reversed(SPEC)))
    extended = build(spec=(*SPEC, "extra=code:3-5"))
    for name, values in fewer.items():
        assert values == full[name], name
    assert reordered == full and list(reordered) == list(reversed(full))
    assert {name: extended[name] for name in full} == full


def test_the_column_name_keys_the_stream() -> None:
    """Two columns with the same generator are not copies of each other."""
    columns = build(spec=("a=number:6", "b=number:6"))
    assert columns["a"] != columns["b"]


# --- each generator's values are what its kind reads ----------------------------------------


def test_every_generator_is_exercised() -> None:
    assert {parse_column(text).generator for text in SPEC} == set(GENERATORS)


@pytest.mark.parametrize("text", SPEC)
def test_values_are_canonical_in_their_kind(text: str) -> None:
    spec = parse_column(text)
    values = build(spec=(text,))[spec.name]
    assert len(values) == ROWS
    date_format = REFERENCE_DATE_FORMAT if spec.kind == "date" else "%Y-%m-%d"
    for value in values:
        normalised = normalise_value(spec.kind, value, date_format)
        assert normalised is not None, value
        if spec.kind == "date":
            assert normalised == value.replace("-", ""), value
        else:
            assert normalised == value, value  # already canonical: nothing to undo


def test_dates_lie_within_the_year_range() -> None:
    default = build(spec=("dob=date",))["dob"]
    years = {datetime.strptime(v, REFERENCE_DATE_FORMAT).year for v in default}
    assert min(years) >= 1920 and max(years) <= 2010 and len(years) > 50
    narrow = build_reference([parse_column("dob=date", (1990, 1991))], ROWS, 7)["dob"]
    assert {v[:4] for v in narrow} == {"1990", "1991"}
    own = build(spec=("dob=date:1800-1800",))["dob"]
    assert {v[:4] for v in own} == {"1800"}


@pytest.mark.parametrize(("text", "lengths"), [("p=number:4", {4}), ("s=number:7-9", {7, 8, 9})])
def test_numbers_are_digits_of_the_stated_length(text: str, lengths: set[int]) -> None:
    values = build(spec=(text,))[text[0]]
    assert all(value.isascii() and value.isdigit() for value in values)
    assert {len(value) for value in values} == lengths
    assert any(value.startswith("0") for value in values)  # leading zeros are kept


def test_codes_are_letters_and_digits_of_the_stated_length() -> None:
    values = build(spec=("c=code:5-6",))["c"]
    assert {len(value) for value in values} == {5, 6}
    assert all(value.isalnum() and value.isascii() and value == value.upper() for value in values)
    joined = "".join(values)
    assert any(c.isalpha() for c in joined) and any(c.isdigit() for c in joined)


def test_names_come_from_the_census_lists_without_repeats() -> None:
    columns = build(spec=("first=first-name", "last=surname"))
    census = census_names()
    assert set(columns["first"]) <= set(census.first.names)
    assert set(columns["last"]) <= set(census.last.names)
    assert len(set(columns["first"])) == len(set(columns["last"])) == ROWS


def test_a_longer_set_than_the_list_uses_every_name_equally_often() -> None:
    n = len(census_names().first)
    values = build(spec=("first=first-name",), rows=2 * n + 5)["first"]
    counts = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    assert len(counts) == n and set(counts.values()) <= {2, 3}


def test_streets_and_suburbs_are_built_from_surnames() -> None:
    columns = build(spec=("street=street", "suburb=suburb"))
    surnames = set(census_names().last.names)
    for street in columns["street"]:
        *name, kind = street.split(" ")
        assert kind in STREET_TYPES and " ".join(name) in surnames, street
    assert len(set(columns["suburb"])) > ROWS * 0.95
    assert any(" " in suburb for suburb in columns["suburb"])
    assert any(" " not in suburb for suburb in columns["suburb"])


@pytest.mark.parametrize(
    ("text", "low", "high", "decimals"),
    [
        ("h=quantity:140-210", 140, 210, 2),  # a range of 70: steps of 0.01
        ("h=quantity:-90-90", -90, 90, 1),
        ("h=quantity:-40--10", -40, -10, 2),
        ("h=quantity:51.4-51.6", 51.4, 51.6, 4),
        ("h=quantity:0-1000000", 0, 1_000_000, 0),
    ],
)
def test_quantities_are_uniform_decimals_within_their_bounds(
    text: str, low: float, high: float, decimals: int
) -> None:
    values = build(spec=(text,), rows=2000)["h"]
    numbers = [float(value) for value in values]
    assert low <= min(numbers) and max(numbers) <= high
    assert max(len(value.partition(".")[2]) for value in values) == decimals
    assert len(set(values)) > 800  # a grid of at least 1,000 steps, not a handful of values
    middle = (low + high) / 2
    assert 900 < sum(number < middle for number in numbers) < 1100
    if decimals == 0:
        assert all(number % 1000 == 0 for number in numbers)  # steps of 1,000 across a million


def test_categories_are_the_given_values_uniformly() -> None:
    values = build(spec=("sex=category:F,M",), rows=2000)["sex"]
    assert set(values) == {"F", "M"}
    assert 900 < values.count("F") < 1100


def test_the_csv_loads_as_a_reference_set(tmp_path: Path) -> None:
    columns = build()
    reference = load_reference(write(tmp_path / "ref.csv", columns))
    assert reference.columns == columns
    assert reference_sha256(reference) == hashlib.sha256(_canonical(columns)).hexdigest()


# --- bad input in the builder ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("dob=datum", "unknown generator 'datum'"),
        ("postcode", "is not NAME=GENERATOR"),
        ("=date", "is not NAME=GENERATOR"),
        ("1st=first-name", "a column name is letters"),
        ("p=number", "needs a length"),
        ("p=number:0", "must lie within 1-32"),
        ("p=number:9-7", "needs low <= high"),
        ("p=number:four", "is not N or N-M"),
        ("p=code:40", "must lie within 1-32"),
        ("s=category:", "a category needs its values"),
        ("s=category", "a category needs its values"),
        ("s=category:F,,M", "a category needs its values"),
        ("s=category:F,f", "category value 'F' is given twice"),
        ("d=date:900-1000", "must lie within 1000-9999"),
        ("d=date:2010-1920", "needs low <= high"),
        ("f=first-name:3", "takes no parameter"),
        ("h=quantity", "'' is not LOW-HIGH"),
        ("h=quantity:170", "'170' is not LOW-HIGH"),
        ("h=quantity:210-140", "needs low < high"),
        ("h=quantity:5-5", "needs low < high"),
        ("h=quantity:1,5-3", "is not LOW-HIGH"),
        ("h=quantity:1.2.3-5", "'1.2.3' is not a decimal number"),
        ("p=coordinates", "needs a box"),
        ("p=coordinates:48.8,2.25", "is not LAT1,LON1:LAT2,LON2"),
        ("p=coordinates:48.8,2.25:48.89,181", "longitude 181, outside -180 to 180"),
        ("p=coordinates:48.8,2.25:48.89,2.25", "is empty"),
        ("p=coordinates:48.8-48.89", "is not LAT1,LON1:LAT2,LON2"),
    ],
)
def test_a_bad_column_is_named(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_column(text)


def test_bad_sizes_and_duplicates_are_refused() -> None:
    spec = [parse_column("a=number:4")]
    with pytest.raises(InputError, match="rows must lie within 2-"):
        build_reference(spec, 1, 7)
    with pytest.raises(InputError, match="seed must be >= 0"):
        build_reference(spec, 10, -1)
    with pytest.raises(InputError, match="no columns"):
        build_reference([], 10, 7)
    with pytest.raises(InputError, match="appears more than once") as caught:
        build_reference([*spec, parse_column("a=date")], 10, 7)
    assert caught.value.field == "a"


# --- the command ----------------------------------------------------------------------------


def command(out: Path, *extra: str, columns=SPEC, rows: int = ROWS) -> list[str]:
    flags = [item for text in columns for item in ("--column", text)]
    return ["reference", "--out", str(out), "--rows", str(rows), "--seed", "7", *flags, *extra]


def test_the_command_end_to_end_in_a_process(tmp_path: Path) -> None:
    out = tmp_path / "sub" / "ref.csv"
    args = [sys.executable, "-m", "pprl", *command(out, "--years", "1930-2000")]
    result = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == str(out)
    assert lines[1] == f"rows: {ROWS}"
    assert lines[2].startswith("columns: first=first-name last=surname dob=date:1930-2000 ")
    assert "sex=category:F,M" in lines[2]
    reference = load_reference(out)
    assert lines[3] == f"sha256: {reference_sha256(reference)}"
    specs = [parse_column(text, (1930, 2000)) for text in SPEC]
    assert out.read_text(encoding="utf-8") == reference_csv(build_reference(specs, ROWS, 7))
    assert [p.name for p in out.parent.iterdir()] == ["ref.csv"]  # no temporary file left


def test_two_operators_get_the_same_file_and_digest(tmp_path: Path, capsys) -> None:
    assert main(command(tmp_path / "alice.csv")) == 0
    alice = capsys.readouterr().out.splitlines()
    assert main(command(tmp_path / "bob.csv")) == 0
    bob = capsys.readouterr().out.splitlines()
    assert (tmp_path / "alice.csv").read_bytes() == (tmp_path / "bob.csv").read_bytes()
    assert alice[1:] == bob[1:]


@pytest.mark.parametrize(
    ("extra", "columns", "rows", "message"),
    [
        ((), ("x=nonsense",), ROWS, "field 'x': unknown generator 'nonsense'"),
        ((), ("p=number:0",), ROWS, "field 'p': length '0' must lie within 1-32"),
        ((), ("s=category:",), ROWS, "field 's': a category needs its values"),
        ((), SPEC, 1, "rows must lie within 2-"),
        ((), ("a=number:4", "a=surname"), ROWS, "field 'a': column name appears more than once"),
        (("--years", "20-10"), ("d=date",), ROWS, "year range '20-10' needs low <= high"),
        (("--years", "1920-"), ("d=date",), ROWS, "year range '1920-' is not N or N-M"),
    ],
)
def test_bad_input_exits_2_naming_the_problem_and_writes_nothing(
    tmp_path: Path, capsys, extra, columns, rows, message
) -> None:
    out = tmp_path / "ref.csv"
    assert main(command(out, *extra, columns=columns, rows=rows)) == 2
    err = capsys.readouterr().err
    assert err.startswith("pprl: error: ") and message in err, err
    assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_out_path_exits_2_and_keeps_the_old_file(tmp_path: Path, capsys) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory\n", encoding="utf-8")
    assert main(command(blocker / "ref.csv")) == 2
    err = capsys.readouterr().err
    assert f"pprl: error: {blocker / 'ref.csv'}: cannot write the reference set" in err
    assert main(command(tmp_path)) == 2
    assert "is a directory" in capsys.readouterr().err
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir()
        (locked / "ref.csv").write_text("old\n", encoding="utf-8")
        locked.chmod(0o500)
        try:
            assert main(command(locked / "ref.csv")) == 2
            assert "Permission denied" in capsys.readouterr().err
            assert (locked / "ref.csv").read_text(encoding="utf-8") == "old\n"
            assert [p.name for p in locked.iterdir()] == ["ref.csv"]
        finally:
            locked.chmod(0o700)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["file", *(["locked"] if os.geteuid() != 0 else [])]
    )


def test_help_lists_the_generators(capsys) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["reference", "--help"])
    assert caught.value.code == 0
    out = capsys.readouterr().out
    for name in GENERATORS:
        assert name in out
