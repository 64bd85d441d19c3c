"""Row-by-row explanations of bad input rows (workers/uploads/explain.py)."""

from __future__ import annotations

import csv
import json
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from pyiceberg.schema import Schema
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
)

from tests.fixtures.cells import CELLS
from tests.fixtures.explain import assert_errors
from tests.fixtures.profile import budget
from workers.uploads import casts
from workers.uploads.explain import RowError, check_csv_header, explain_file
from workers.uploads.values import check_cell

SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "name", StringType()),
    NestedField(3, "qty", IntegerType()),
    NestedField(4, "price", DecimalType(6, 2)),
    NestedField(5, "day", DateType()),
    NestedField(6, "seen_at", TimestampType()),
    NestedField(7, "seen_tz", TimestamptzType()),
    NestedField(8, "active", BooleanType()),
    NestedField(9, "score", DoubleType()),
    NestedField(10, "blob", BinaryType()),
    NestedField(
        11,
        "address",
        StructType(
            NestedField(12, "city", StringType(), required=True),
            NestedField(13, "zip", IntegerType()),
        ),
    ),
    NestedField(14, "tags", ListType(15, StringType(), element_required=True)),
    NestedField(16, "attrs", MapType(17, StringType(), 18, LongType(), value_required=False)),
    NestedField(19, "_batch_id", StringType(), required=True),  # must be ignored
)
COLUMNS = [f.name for f in SCHEMA.fields if f.name != "_batch_id"]
GOOD = {
    "id": "1",
    "name": "Ada",
    "qty": "-7",
    "price": "0012.50",
    "day": "2024-02-29",
    "seen_at": "2024-01-31 10:00",
    "seen_tz": "2024-01-31T10:00:00.123456+05:30",
    "active": "TRUE",
    "score": "-2.5e3",
    "blob": "aGVsbG8=",
    "address": '{"city": "Oslo", "zip": 150}',
    "tags": '["a", "b"]',
    "attrs": '{"k": 1, "nothing": null}',
}


def write_csv(path: Path, rows: list[dict[str, str]], header: list[str] = COLUMNS) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows([row.get(column, "") for column in header] for row in rows)
    return path


def write_json(path: Path, lines: list[object]) -> Path:
    text = [line if isinstance(line, str) else json.dumps(line) for line in lines]
    path.write_text("\n".join(text), encoding="utf-8")
    return path


# --- CSV ---------------------------------------------------------------------------------


def test_csv_rows_are_explained_at_their_row(tmp_path: Path) -> None:
    rows = [
        GOOD,  # 1
        {"id": "2"},  # 2: every optional column empty
        {**GOOD, "id": "abc"},  # 3
        {**GOOD, "qty": "3000000000", "price": "12345.6"},  # 4
        {**GOOD, "day": "2024-02-30", "seen_at": "2024-01-31T25:00"},  # 5
        {**GOOD, "address": '{"zip": 1}', "tags": '["a", null]'},  # 6
        {**GOOD, "id": "", "attrs": '{"k": "x"}'},  # 7
        {**GOOD, "active": "maybe", "blob": "not base64!", "score": "1,5"},  # 8
        {**GOOD, "name": "two\nlines", "price": "9999.995"},  # 9: one record over two lines
        # 10: as Spark's casts read them, a date alone is a timestamp (midnight), a decimal is
        # rounded to the scale, blanks around a number are trimmed: none of those is an error
        {**GOOD, "address": "{bad", "seen_tz": "2024-01-31", "price": "1.234", "qty": " 7 "},
        {**GOOD, "address": '{"city": "Oslo", "zip": 99999999999}'},  # 11
    ]
    path = write_csv(tmp_path / "upload.csv", rows)
    with path.open("a", encoding="utf-8") as handle:
        handle.write("1,2,3\n")  # 12: too few cells

    errors = explain_file(path, "orders.csv", "csv", SCHEMA)

    assert_errors(
        errors,
        [
            (3, "id", "cannot parse 'abc' as long: expected a whole number"),
            (4, "qty", "'3000000000' is out of range for int"),
            (4, "price", "'12345.6' does not fit decimal(6, 2): expected at most 4 digits before"),
            (5, "day", "cannot parse '2024-02-30' as date: expected a date as YYYY-MM-DD"),
            (5, "seen_at", "cannot parse '2024-01-31T25:00' as timestamp"),
            (6, "address.city", "required field is missing"),
            (6, "tags[1]", "list element is null, but the elements are required"),
            (7, "id", "required field is missing"),
            (7, "attrs{k}", "expected a JSON integer for long, got string 'x'"),
            (8, "active", "cannot parse 'maybe' as boolean: expected true or false"),
            (8, "score", "cannot parse '1,5' as double"),
            (8, "blob", "cannot parse 'not base64!' as binary: expected base64-encoded bytes"),
            (9, "price", "'9999.995' does not fit decimal(6, 2): expected at most 4 digits"),
            (10, "address", "malformed JSON for struct<city: string, zip: int>"),
            (11, "address.zip", "'99999999999' is out of range for int"),
            (12, None, "row has 3 cells but the header has 13 columns"),
        ],
    )
    assert {e.file for e in errors} == {"orders.csv"}
    assert (errors[0].value, errors[5].value, errors[-1].value) == ("abc", None, "1,2,3")


def test_csv_blank_lines_count_and_bad_utf8_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "f.csv"
    path.write_bytes(b"\xef\xbb\xbfid,name\n1,a\n\n2,caf\xe9\nx,b\n")  # BOM, blank line, latin-1

    errors = explain_file(path, "f.csv", "csv", SCHEMA)

    assert_errors(
        errors,
        [
            (3, None, "row is not valid UTF-8 (byte 0xe9)"),
            (4, "id", "cannot parse 'x' as long"),
        ],
    )


def test_csv_header_columns_in_any_order_optional_ones_absent(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "f.csv", [{"id": "1", "day": "2024-01-01"}], ["day", "id"])

    assert check_csv_header(path, "f.csv", SCHEMA) == []
    assert explain_file(path, "f.csv", "csv", SCHEMA) == []


def test_csv_header_reports_missing_unknown_and_repeated_columns(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "f.csv", [], ["Name", "foo", "qty", "qty"])

    errors = check_csv_header(path, "in.csv", SCHEMA)

    assert [(e.file, e.row, e.field, e.reason) for e in errors] == [
        (
            "in.csv",
            None,
            "Name",
            f"unknown column 'Name' (dataset columns: {', '.join(COLUMNS)}); did you mean 'name'?",
        ),
        ("in.csv", None, "foo", f"unknown column 'foo' (dataset columns: {', '.join(COLUMNS)})"),
        ("in.csv", None, "qty", "column 'qty' appears more than once in the header"),
        ("in.csv", None, "id", "column 'id' is missing from the header (the column is required)"),
    ]


def test_csv_header_of_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.csv"
    path.write_bytes(b"")

    assert_errors(check_csv_header(path, "e.csv", SCHEMA), [(None, None, "file is empty")])
    assert_errors(explain_file(path, "e.csv", "csv", SCHEMA), [(None, None, "file is empty")])


def test_csv_file_level_errors_come_before_row_errors(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "f.csv", [{"qty": "1"}, {"qty": "x"}], ["qty", "extra"])

    assert_errors(
        explain_file(path, "f.csv", "csv", SCHEMA),
        [
            (None, "extra", "unknown column 'extra'"),
            (None, "id", "column 'id' is missing from the header"),
            (2, "qty", "cannot parse 'x' as int"),
        ],
    )


def test_csv_stops_at_limit(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "f.csv", [{"id": str(i) if i % 2 else "bad"} for i in range(40)])

    errors = explain_file(path, "f.csv", "csv", SCHEMA, limit=3)

    assert [(e.row, e.field, e.value) for e in errors] == [
        (1, "id", "bad"),
        (3, "id", "bad"),
        (5, "id", "bad"),
    ]
    assert explain_file(path, "f.csv", "csv", SCHEMA, limit=0) == []


@pytest.mark.timeout(30)
def test_csv_with_200k_rows_explains_the_one_bad_row_near_the_end(tmp_path: Path) -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "name", StringType()),
        NestedField(3, "amount", DecimalType(10, 2)),
        NestedField(4, "day", DateType()),
    )
    lines = ["id,name,amount,day"]
    lines += [f"{i},name {i},{i % 1000}.25,2024-03-{i % 28 + 1:02d}" for i in range(1, 200_001)]
    lines[199_990] = "199990,name,12.5,2024-13-01"
    path = tmp_path / "big.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")

    errors = explain_file(path, "big.csv", "csv", schema)

    assert [(e.row, e.field, e.value) for e in errors] == [(199_990, "day", "2024-13-01")]


# --- JSON lines --------------------------------------------------------------------------

GOOD_JSON = {
    "id": 1,
    "name": "Ada",
    "qty": 5,
    "price": 12.5,
    "day": "2024-01-31",
    "seen_at": "2024-01-31T10:00:00",
    "seen_tz": "2024-01-31 10:00Z",
    "active": True,
    "score": 1,
    "blob": "aGk=",
    "address": {"city": "Oslo", "zip": 1},
    "tags": ["x"],
    "attrs": {"a": 1, "b": None},
    "not_in_schema": "ignored",
}


def test_json_lines_are_explained_at_their_line(tmp_path: Path) -> None:
    lines: list[object] = [
        GOOD_JSON,  # 1
        "",  # 2: blank, still counts
        {"id": "12"},  # 3
        {"id": 1.5},  # 4
        {"id": 1, "qty": 2147483648},  # 5
        {"id": 1, "price": "123.456", "score": "1.5"},  # 6
        {"id": 1, "address": {"zip": "x"}},  # 7
        {"id": 1, "tags": ["a", None, 3]},  # 8: a number is accepted as a string, like Spark
        {"id": 1, "attrs": {"k": "v"}},  # 9
        {"id": 1, "day": "31/01/2024", "active": "true"},  # 10
        '{"id": 1 "name": "x"}',  # 11
        "[1, 2]",  # 12
        {"name": "no id", "id": None},  # 13
        {"id": 1, "tags": "a", "seen_tz": 5},  # 14
        {"id": 1, "price": 1e2, "blob": "@@@"},  # 15
        {"id": 9223372036854775808},  # 16
        "null",  # 17
    ]
    path = write_json(tmp_path / "f.jsonl", lines)

    errors = explain_file(path, "f.json", "json", SCHEMA)

    assert_errors(
        errors,
        [
            (3, "id", "expected a JSON integer for long, got string '12'"),
            (4, "id", "expected a JSON integer for long, got number 1.5"),
            (5, "qty", "'2147483648' is out of range for int"),
            (6, "score", "expected a JSON number for double, got string '1.5'"),
            (7, "address.city", "required field is missing"),
            (7, "address.zip", "expected a JSON integer for int, got string 'x'"),
            (8, "tags[1]", "list element is null, but the elements are required"),
            (9, "attrs{k}", "expected a JSON integer for long, got string 'v'"),
            (10, "day", "cannot parse '31/01/2024' as date"),
            (10, "active", "expected a JSON boolean (true or false) for boolean, got string"),
            (11, None, "malformed JSON: Expecting ',' delimiter (column 10)"),
            (12, None, "expected a JSON object on each line, got array"),
            (13, "id", "required field is missing"),
            (14, "seen_tz", "expected a JSON string for timestamptz, got integer 5"),
            (14, "tags", "expected a JSON array for list<string>, got string"),
            (15, "blob", "cannot parse '@@@' as binary"),
            (16, "id", "'9223372036854775808' is out of range for long"),
            (17, None, "expected a JSON object on each line, got null"),
        ],
    )
    assert errors[10].value == '{"id": 1 "name": "x"}'
    assert errors[3].value == "1.5"  # "123.456" for decimal(6, 2) is 123.46, as in Spark


def test_json_stops_at_limit(tmp_path: Path) -> None:
    path = write_json(tmp_path / "f.jsonl", [{"id": "x"}, GOOD_JSON, "{", {"qty": 1}] * 5)

    errors = explain_file(path, "f.json", "json", SCHEMA, limit=4)

    assert [(e.row, e.field) for e in errors] == [(1, "id"), (3, None), (4, "id"), (5, "id")]


# --- RowError ----------------------------------------------------------------------------


def test_row_error_truncates_value_and_converts_to_dict() -> None:
    error = RowError("f.csv", 4, "name", "x" * 150, "too long")

    assert error.value == "x" * 97 + "..."
    assert error.as_dict() == {
        "file": "f.csv",
        "row": 4,
        "field": "name",
        "value": "x" * 97 + "...",
        "reason": "too long",
    }


def test_long_values_are_truncated_in_errors(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "f.csv", [{"id": "9" * 300}])

    (error,) = explain_file(path, "f.csv", "csv", SCHEMA)

    assert error.value == "9" * 97 + "..."
    assert error.reason.startswith(f"'{'9' * 37}...' is out of range for long")


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("2024-01-31 10:00", True),
        ("2024-01-31T10:00:59.5Z", True),
        ("2024-01-31T10:00:00-0800", True),
        ("2024-01-31T10:00:00.1234567", True),  # Spark drops the digits past the sixth
        ("2024-01-31", True),
        (" 2024-01-31 10:00 ", True),
        ("2024-01-31 ", True),
        ("2024-1-31 9", True),
        ("10:00", True),  # today's, for a timestamptz
        ("2024-01-31T10:00+02:00", False),  # a zone only after the seconds
        ("2024-01-31T10:00+24:00", False),
        ("2024-01-31T10:00:00+99:99", False),  # an offset Java refuses
        ("2024-01-31T", False),
    ],
)
def test_timestamp_formats(tmp_path: Path, text: str, ok: bool) -> None:
    path = write_csv(tmp_path / "f.csv", [{"id": "1", "seen_tz": text}])

    errors = explain_file(path, "f.csv", "csv", SCHEMA)

    assert [(e.field, e.value) for e in errors] == ([] if ok else [("seen_tz", text)])


# every primitive type of the ingest, as the casts and the explanations take them
PRIMITIVES = {
    "b": BooleanType(),
    "i": IntegerType(),
    "id": LongType(),
    "f": FloatType(),
    "d": DoubleType(),
    "dec": DecimalType(9, 2),
    "day": DateType(),
    "ts": TimestampType(),
    "tstz": TimestamptzType(),
    "s": StringType(),
    "bin": BinaryType(),
}
EDGES = [" 7 ", "7 ", "+7", "1.5", "2.0", "1e3", "yes", "t", "N", "2024-03-01", "2024-03-01 ", "x"]


@budget(600)
@given(data=st.data(), column=st.sampled_from(sorted(PRIMITIVES)))
def test_a_cell_is_explained_as_bad_exactly_when_the_ingest_rejects_it(
    data: st.DataObject, column: str
) -> None:
    """The small path decides a cell as Spark's casts do (its parity with Spark is tested in
    test_small_batches.py); where it decides, the explanation agrees: a failed batch lists the
    rows the ingest rejected, and no row it would have taken."""
    cell = data.draw(st.one_of(CELLS[column], st.sampled_from(EDGES)), label="cell")
    t = PRIMITIVES[column]
    try:
        value = casts.cast_cell(t, cell)
    except casts.NeedsSpark:
        assume(False)
    problems = check_cell(NestedField(1, column, t, required=False), cell)
    assert bool(problems) == (value is casts.REJECTED), (cell, t, value, problems)


def test_a_decimal_in_another_script_s_digits_is_left_to_spark() -> None:
    """Java's BigDecimal, under Spark's cast to a decimal, reads any script's digits
    ("\u0661\u0662.5" is 12.5; checked against Spark 3.5): the small path sends such a cell to
    Spark instead of rejecting it, so a small batch and a big one with it end alike."""
    with pytest.raises(casts.NeedsSpark):
        casts.cast_cell(DecimalType(9, 2), "\u0661\u0662.5")
    assert casts.cast_cell(DecimalType(9, 2), "12.5") == Decimal("12.50")
    assert casts.cast_cell(DecimalType(9, 2), "x1") is casts.REJECTED
