"""Row-by-row explanations of bad Parquet input (workers/uploads/explain.py): nulls in required
columns, unsafe casts, missing and unknown columns, files that are not Parquet."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.schema import Schema
from pyiceberg.types import (
    DateType,
    DecimalType,
    DoubleType,
    ListType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
)

from tests.fixtures.explain import assert_errors
from workers.uploads.explain import explain_file

PARQUET_SCHEMA = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "name", StringType()),
    NestedField(3, "score", DoubleType()),
    NestedField(4, "seen_at", TimestampType()),
    NestedField(5, "seen_tz", TimestamptzType()),
    NestedField(6, "price", DecimalType(6, 2)),
    NestedField(7, "day", DateType(), required=True),
    NestedField(8, "tags", ListType(9, StringType())),
)


def good_table(rows: int) -> dict[str, pa.Array]:
    """Columns in types that differ from, but cast losslessly to, the schema's types."""
    return {
        "id": pa.array(range(rows), pa.int32()),
        "name": pa.array([f"n{i}" for i in range(rows)], pa.large_string()),
        "score": pa.array([i / 2 for i in range(rows)], pa.float32()),
        "seen_at": pa.array(range(rows), pa.timestamp("ns")),
        "seen_tz": pa.array(range(rows), pa.timestamp("ms", tz="Europe/Oslo")),
        "price": pa.array([None] * rows, pa.decimal128(5, 2)),
        "day": pa.array(range(rows), pa.date32()),
        "tags": pa.array([["a"]] * rows, pa.list_(pa.string())),
    }


def write_parquet(path: Path, columns: dict[str, pa.Array], row_group_size: int = 4) -> Path:
    pq.write_table(pa.table(columns), path, row_group_size=row_group_size)
    return path


def test_parquet_nulls_in_required_columns_across_batches(tmp_path: Path) -> None:
    columns = good_table(70_000)
    ids = [None if i in (2, 6, 69_998) else i for i in range(70_000)]
    days = [None if i == 6 else i for i in range(70_000)]
    columns |= {"id": pa.array(ids, pa.int64()), "day": pa.array(days, pa.date32())}
    path = write_parquet(tmp_path / "f.parquet", columns, row_group_size=10_000)

    errors = explain_file(path, "f.parquet", "parquet", PARQUET_SCHEMA)

    assert [(e.row, e.field, e.reason) for e in errors] == [
        (3, "id", "required field is missing"),
        (7, "id", "required field is missing"),
        (7, "day", "required field is missing"),
        (69_999, "id", "required field is missing"),
    ]


def test_parquet_with_safely_castable_types_has_no_errors(tmp_path: Path) -> None:
    path = write_parquet(tmp_path / "f.parquet", good_table(10))

    assert explain_file(path, "f.parquet", "parquet", PARQUET_SCHEMA) == []


def test_parquet_types_that_cannot_be_cast_safely(tmp_path: Path) -> None:
    columns = good_table(3) | {
        "id": pa.array(["1", "2", "3"]),
        "score": pa.array([1, 2, 3], pa.int64()),
        "price": pa.array([None] * 3, pa.decimal128(10, 4)),
        "tags": pa.array([[1]] * 3, pa.list_(pa.int64())),
        "day": pa.array(["2024-01-01"] * 3),
    }
    path = write_parquet(tmp_path / "f.parquet", columns)

    errors = explain_file(path, "f.parquet", "parquet", PARQUET_SCHEMA)

    assert [(e.row, e.field, e.reason) for e in errors] == [
        (None, "id", "column 'id' has type string, expected long"),
        (None, "score", "column 'score' has type int64, expected double"),
        (None, "price", "column 'price' has type decimal128(10, 4), expected decimal(6, 2)"),
        (None, "day", "column 'day' has type string, expected date"),
        (None, "tags", "column 'tags' has type list<element: int64>, expected list<string>"),
    ]


def test_parquet_missing_required_and_unknown_columns(tmp_path: Path) -> None:
    columns = {k: v for k, v in good_table(5).items() if k not in ("id", "name")}
    columns["Extra"] = pa.array(range(5))
    columns["day"] = pa.array([1, None, 3, None, 5], pa.date32())
    path = write_parquet(tmp_path / "f.parquet", columns)

    errors = explain_file(path, "f.parquet", "parquet", PARQUET_SCHEMA)

    assert_errors(
        errors,
        [
            (None, "Extra", "unknown column 'Extra' (dataset columns: id, name, score, seen_at"),
            (None, "id", "column 'id' is missing from the file (the column is required)"),
            (2, "day", "required field is missing"),
            (4, "day", "required field is missing"),
        ],
    )
    assert [e.row for e in explain_file(path, "p", "parquet", PARQUET_SCHEMA, limit=3)] == [
        None,
        None,
        2,
    ]


def test_not_a_parquet_file(tmp_path: Path) -> None:
    path = tmp_path / "f.parquet"
    path.write_text("id,name\n1,a\n", encoding="utf-8")

    errors = explain_file(path, "f.parquet", "parquet", PARQUET_SCHEMA)

    assert_errors(errors, [(None, None, "not a Parquet file: ")])
