"""Loading records: every refusal names the file, the row and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from pprl.files.records import load_records
from pprl.protocol.data.kinds import Attribute
from pprl.protocol.data.records import normalise
from pprl.protocol.errors import InputError

HEADER = "id,first,middle,last\n"


def write(tmp_path: Path, text: str | bytes, name: str = "records.csv") -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        text = text.encode("utf-8")
    path.write_bytes(text)
    return path


def refusal(path: Path, **kwargs: object) -> InputError:
    with pytest.raises(InputError) as caught:
        load_records(path, **kwargs)
    assert path.name in str(caught.value)
    return caught.value


def test_normalise_upper_cases_and_collapses_whitespace() -> None:
    assert normalise(" ada  lovelace ") == "ADA LOVELACE"
    assert normalise("a\t b\n") == "A B"
    assert normalise("") == ""


def test_loads_ids_and_normalised_attributes(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "r1, ada ,,lovelace\nr2,Alan,Mathison,turing\n")
    table = load_records(path)
    assert table.path == str(path)
    assert table.ids == ["r1", "r2"]
    assert table.attributes == {
        "first": ["ADA", "ALAN"],
        "middle": ["", "MATHISON"],
        "last": ["LOVELACE", "TURING"],
    }
    assert len(table) == 2
    assert table.rows() == [("ADA", "", "LOVELACE"), ("ALAN", "MATHISON", "TURING")]


def test_empty_middle_stays_empty_string(tmp_path: Path) -> None:
    table = load_records(write(tmp_path, HEADER + "1,NaN,,None\n"))
    assert table.attributes["middle"] == [""]
    assert table.rows() == [("NAN", "", "NONE")]


def test_accepts_bom_quotes_and_crlf(tmp_path: Path) -> None:
    text = HEADER + '1,"Smith, Jr",,"O""Brien"\n'
    table = load_records(write(tmp_path, b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()))
    assert table.ids == ["1"]
    # the quoted comma and doubled quote are read as the cell's; a name then reads punctuation
    # as a space (pprl.protocol.data.kinds.Name)
    assert table.rows() == [("SMITH JR", "", "O BRIEN")]


def test_custom_columns_and_extra_columns(tmp_path: Path) -> None:
    path = write(tmp_path, "key,given,notes,family\nk1,ada,x,lovelace\n")
    table = load_records(path, id_column="key", attributes=("given", "family"))
    assert table.ids == ["k1"]
    assert table.rows() == [("ADA", "LOVELACE")]


def test_missing_file(tmp_path: Path) -> None:
    error = refusal(tmp_path / "absent.csv")
    assert "no such file" in str(error)


def test_directory(tmp_path: Path) -> None:
    (tmp_path / "dir.csv").mkdir()
    assert "directory" in str(refusal(tmp_path / "dir.csv"))


def test_invalid_utf8_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER.encode() + b"1,ada,,x\n2,b\xffd,,y\n")
    error = refusal(path)
    assert error.row == 3
    assert "row 3" in str(error)
    assert "UTF-8" in str(error)


def test_empty_file(tmp_path: Path) -> None:
    assert "no header" in str(refusal(write(tmp_path, "")))


def test_header_only(tmp_path: Path) -> None:
    assert "no data rows" in str(refusal(write(tmp_path, HEADER)))


def test_missing_column_lists_the_header(tmp_path: Path) -> None:
    error = refusal(write(tmp_path, "id,first,last\n1,a,b\n"))
    assert error.row == 1
    assert error.field == "middle"
    assert "field 'middle'" in str(error)
    assert "'id', 'first', 'last'" in str(error)


def test_missing_id_column(tmp_path: Path) -> None:
    error = refusal(write(tmp_path, "first,middle,last\na,b,c\n"), id_column="rid")
    assert error.field == "rid"


def test_configured_column_twice_in_header(tmp_path: Path) -> None:
    error = refusal(write(tmp_path, "id,first,middle,last,first\n1,a,b,c,d\n"))
    assert (error.row, error.field) == (1, "first")


def test_ragged_row(tmp_path: Path) -> None:
    error = refusal(write(tmp_path, HEADER + "1,a,b,c\n2,a,b\n"))
    assert error.row == 3
    assert "3 fields" in str(error)
    assert "row 3" in str(error)


def test_row_numbers_count_lines_of_multiline_fields(tmp_path: Path) -> None:
    error = refusal(write(tmp_path, HEADER + '1,"a\nb",,c\n\n2,x\n'))
    assert error.row == 5


def test_malformed_quotes(tmp_path: Path) -> None:
    error = refusal(write(tmp_path, HEADER + '1,a,,b\n2,"unterminated,,c\n'))
    assert error.row == 3
    assert "malformed CSV" in str(error)


def test_empty_id(tmp_path: Path) -> None:
    error = refusal(write(tmp_path, HEADER + "1,a,,b\n  ,c,,d\n"))
    assert (error.row, error.field) == (3, "id")
    assert "row 3, field 'id'" in str(error)


def test_duplicate_ids_name_rows_and_count(tmp_path: Path) -> None:
    rows = ["a,p,,q", "b,r,,s", "a,t,,u", "c,v,,w", "b,x,,y", "a,z,,z"]
    error = refusal(write(tmp_path, HEADER + "\n".join(rows) + "\n"))
    text = str(error)
    assert (error.row, error.field) == (4, "id")
    # Rows, never the ids themselves (an error may leave the party).
    assert "one id in rows 2, 4 and 7" in text
    assert "one id in rows 3 and 6" in text
    assert "2 duplicated ids in all" in text
    assert "'a'" not in text and "'b'" not in text


def test_records_sharing_every_value_are_kept_and_counted(tmp_path: Path) -> None:
    """Two people called Ada Lovelace are normal; normalisation decides what is the same."""
    rows = [
        "1,Ada,,Lovelace",
        "2,x,,y",
        "3,p,,q",
        "4, ada ,,LOVELACE",
        "5,P,,Q",
        "6,x,,y",
        "7,z,,z",
    ]
    table = load_records(write(tmp_path, HEADER + "\n".join(rows) + "\n"))
    assert len(table) == 7
    assert table.sharing() == [2, 2, 2, 2, 2, 2, 1]
    assert table.repeated() == (3, 6)


def test_blank_cells_are_missing_values(tmp_path: Path) -> None:
    table = load_records(write(tmp_path, HEADER + "1,Ada,,Lovelace\n2,  ,Jo,Ng\n"))
    assert table.attributes["middle"] == ["", "JO"]
    assert table.missing() == {"first": 1, "middle": 1, "last": 0}


def test_repeated_configuration_is_a_programming_error(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER + "1,a,,b\n")
    with pytest.raises(ValueError, match="repeat"):
        load_records(path, attributes=("first", "first"))
    with pytest.raises(ValueError, match="at least one"):
        load_records(path, attributes=())


def _typed(tmp_path: Path, text: str, policy: str = "error"):
    path = tmp_path / "typed.csv"
    path.write_text("id,name,dob,zip\n" + text, encoding="utf-8")
    schema = [Attribute("name"), Attribute("dob", "date", "%d/%m/%Y"), Attribute("zip", "number")]
    return load_records(path, "id", schema, policy)


def test_dates_and_numbers_are_read_into_their_canonical_form(tmp_path: Path) -> None:
    table = _typed(tmp_path, "1,Ann,23/11/1987,2600\n2,Bo,,26 01\n")
    assert table.attributes["dob"] == ["19871123", ""]
    assert table.attributes["zip"] == ["2600", "2601"]


@pytest.mark.parametrize(
    ("row", "field", "words"),
    [
        ("1,Ann,1987-11-23,2600", "dob", "not a date in the format '%d/%m/%Y'"),
        ("1,Ann,23/11/1987,26A0", "zip", "not a number"),
    ],
)
def test_an_unreadable_cell_names_file_row_and_field(
    tmp_path: Path, row: str, field: str, words: str
) -> None:
    with pytest.raises(InputError) as caught:
        _typed(tmp_path, "2,Bo,01/01/1990,2000\n" + row + "\n")
    assert (caught.value.row, caught.value.field) == (3, field)
    assert words in str(caught.value) and "typed.csv" in str(caught.value)
    assert 'on_bad_value = "missing"' in str(caught.value)


def test_unreadable_cells_can_be_counted_as_missing(tmp_path: Path) -> None:
    table = _typed(tmp_path, "1,Ann,31/02/1987,26A0\n2,Bo,01/01/1990,2000\n", "missing")
    assert table.attributes["dob"] == ["", "19900101"]
    assert table.attributes["zip"] == ["", "2000"]
    assert table.unreadable == {"dob": 1, "zip": 1}
    assert table.missing() == {"name": 0, "dob": 1, "zip": 1}


def _weighed(tmp_path: Path, text: str, policy: str = "error"):
    path = tmp_path / "weighed.csv"
    path.write_text("id,name,weight\n" + text, encoding="utf-8")
    schema = [Attribute("name"), Attribute("weight", "quantity", scale=0.5)]
    return load_records(path, "id", schema, policy)


def test_quantities_are_read_into_their_canonical_form(tmp_path: Path) -> None:
    table = _weighed(tmp_path, "1,Ann,72.50\n2,Bo,\n3,Cy,+80\n")
    assert table.attributes["weight"] == ["72.5", "", "80"]


@pytest.mark.parametrize("cell", ['"72,5"', "heavy", "1e2"])
def test_an_unreadable_quantity_names_file_row_and_field(tmp_path: Path, cell: str) -> None:
    with pytest.raises(InputError) as caught:
        _weighed(tmp_path, f"1,Ann,72.5\n2,Bo,{cell}\n3,Cy,80\n")
    assert (caught.value.row, caught.value.field) == (3, "weight")
    assert "not a decimal number" in str(caught.value) and "weighed.csv" in str(caught.value)
    assert 'on_bad_value = "missing"' in str(caught.value)


def test_unreadable_quantities_can_be_counted_as_missing(tmp_path: Path) -> None:
    table = _weighed(tmp_path, '1,Ann,"72,5"\n2,Bo,heavy\n3,Cy,80\n4,Di,\n', "missing")
    assert table.attributes["weight"] == ["", "", "80", ""]
    assert table.unreadable == {"weight": 2}
    assert table.missing() == {"name": 0, "weight": 3}
