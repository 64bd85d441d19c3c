"""Row-by-row explanations of why an input file's rows were rejected by the Spark ingest.

Runs on the failure path only: re-reads one uploaded file (CSV, JSON lines or Parquet) as a
stream and reports each problem as a `RowError`, in file order, stopping at `limit`.
The rules mirror the ingest's (see `explain_file`; the value rules are in `values`). Pure
Python: no PySpark. The file-level checks (`check_csv_header`, `parquet_file_errors`) also run
before the ingest reads anything.
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
import json
import re
from collections.abc import Generator, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Literal, TextIO

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyiceberg import types as ice
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.schema import Schema

from app.lake.types import BATCH_COLUMN
from workers.uploads.values import (
    MISSING,
    Problem,
    check_cell,
    check_value,
    kind_of,
    missing_reason,
    type_name,
)

MAX_VALUE_CHARS = 100
Errors = Generator["RowError", None, None]
Format = Literal["csv", "json", "parquet"]

_BAD_BYTE_RE = re.compile("[\udc80-\udcff]")  # undecodable bytes (surrogateescape)


@dataclasses.dataclass(frozen=True)
class RowError:
    """One problem in an input file; `row` is None for file-level problems, `field` is None
    when the whole row (or file) is bad. `value` is truncated to 100 characters."""

    file: str
    row: int | None
    field: str | None
    value: str | None
    reason: str

    def __post_init__(self) -> None:
        if self.value is not None and len(self.value) > MAX_VALUE_CHARS:
            object.__setattr__(self, "value", self.value[: MAX_VALUE_CHARS - 3] + "...")

    def as_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def explain_file(
    path: Path, name: str, fmt: Format, schema: Schema, limit: int = 100
) -> list[RowError]:
    """The first `limit` problems of the file at `path` (uploaded as `name`), in file order.

    File-level problems (row None) come first, then row problems by row number: CSV rows are
    counted after the header (one per record, blank lines included), JSON lines by line
    number, Parquet rows by 1-based index. A `_batch_id` field in `schema` is ignored.
    """
    if limit <= 0:
        return []
    readers = {"csv": _explain_csv, "json": _explain_json, "parquet": _explain_parquet}
    if fmt not in readers:
        raise ValueError(f"unknown format {fmt!r}; expected csv, json or parquet")
    found = readers[fmt](path, name, _fields(schema), limit)
    try:
        return list(itertools.islice(found, limit))
    except OSError as exc:
        return [RowError(name, None, None, None, f"cannot read the file: {exc}")]
    finally:
        found.close()  # closes the file now, when stopping at the limit


def check_csv_header(path: Path, name: str, schema: Schema) -> list[RowError]:
    """File-level problems of a CSV header: a required column missing, an unknown column, or a
    repeated one. Columns may come in any order; optional columns may be absent."""
    with _open_text(path) as handle:
        return _read_header(csv.reader(handle), name, _fields(schema))[1]


def _fields(schema: Schema) -> list[ice.NestedField]:
    return [f for f in schema.fields if f.name != BATCH_COLUMN]


def _open_text(path: Path) -> TextIO:
    """UTF-8 text, without a BOM; invalid bytes become lone surrogates (see `_utf8_error`)."""
    return path.open(newline="", encoding="utf-8-sig", errors="surrogateescape")


def _utf8_error(text: str) -> str | None:
    bad = _BAD_BYTE_RE.search(text)
    return None if bad is None else f"not valid UTF-8 (byte 0x{ord(bad[0]) - 0xDC00:02x})"


def _column_errors(
    columns: list[str], fields: list[ice.NestedField], name: str, where: str
) -> Iterator[RowError]:
    """Unknown, repeated, and missing required columns (in `where`: the header, the file)."""
    known = [f.name for f in fields]
    for i, column in enumerate(columns):
        if column in columns[:i]:
            reason = f"column {column!r} appears more than once in the {where}"
        elif column not in known:
            reason = f"unknown column {column!r} (dataset columns: {', '.join(known)})"
            same = [n for n in known if n.lower() == column.lower()]
            reason += f"; did you mean {same[0]!r}?" if same else ""
        else:
            continue
        yield RowError(name, None, column, None, reason)
    for f in fields:
        if f.required and f.name not in columns:
            reason = f"column {f.name!r} is missing from the {where} (the column is required)"
            yield RowError(name, None, f.name, None, reason)


# --- CSV -----------------------------------------------------------------------------------
def _read_header(
    reader: Iterator[list[str]], name: str, fields: list[ice.NestedField]
) -> tuple[list[str] | None, list[RowError]]:
    try:
        header = next(reader, None)
    except csv.Error as exc:
        return None, [RowError(name, None, None, None, f"malformed CSV header: {exc}")]
    if not header:
        return None, [RowError(name, None, None, None, "file is empty: expected a header line")]
    errors = []
    if bad := _utf8_error(",".join(header)):
        errors.append(RowError(name, None, None, None, f"header is {bad}"))
    return header, errors + list(_column_errors(header, fields, name, "header"))


def _explain_csv(path: Path, name: str, fields: list[ice.NestedField], limit: int) -> Errors:
    with _open_text(path) as handle:
        reader = csv.reader(handle)
        header, header_errors = _read_header(reader, name, fields)
        yield from header_errors
        if header is None:
            return
        columns = sorted((header.index(f.name), f) for f in fields if f.name in header)
        for row in itertools.count(1):
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                yield RowError(name, row, None, None, f"malformed CSV: {exc}")
                continue
            if not cells:  # a blank line
                continue
            if bad := _utf8_error("".join(cells)):
                yield RowError(name, row, None, None, f"row is {bad}")
            elif len(cells) != len(header):
                reason = f"row has {len(cells)} cells but the header has {len(header)} columns"
                yield RowError(name, row, None, ",".join(cells), reason)
            else:
                for i, f in columns:
                    for field, value, reason in check_cell(f, cells[i]):
                        yield RowError(name, row, field, value, reason)


# --- JSON lines ----------------------------------------------------------------------------
def _explain_json(path: Path, name: str, fields: list[ice.NestedField], limit: int) -> Errors:
    with path.open(encoding="utf-8-sig", errors="surrogateescape") as handle:
        for row, line in enumerate(handle, 1):
            text = line.strip()
            if not text:
                continue
            if bad := _utf8_error(text):
                yield RowError(name, row, None, None, f"line is {bad}")
                continue
            try:
                obj = json.loads(text, parse_float=Decimal)
            except json.JSONDecodeError as exc:
                reason = f"malformed JSON: {exc.msg} (column {exc.colno})"
                yield RowError(name, row, None, text, reason)
                continue
            except (ValueError, RecursionError) as exc:  # e.g. an integer of 5000 digits
                yield RowError(name, row, None, text, f"malformed JSON: {exc}")
                continue
            if not isinstance(obj, dict):
                reason = f"expected a JSON object on each line, got {kind_of(obj)}"
                yield RowError(name, row, None, text, reason)
                continue
            problems: list[Problem] = []
            for f in fields:  # keys not in the schema are ignored
                check_value(f.field_type, obj.get(f.name), f.name, missing_reason(f), problems)
            for field, value, reason in problems:
                yield RowError(name, row, field, value, reason)


# --- Parquet -------------------------------------------------------------------------------
def parquet_file_errors(path: Path, name: str, schema: Schema) -> list[RowError]:
    """File-level problems of a Parquet file, from its footer: unreadable, or columns unknown,
    repeated, missing (when required) or of a type that does not cast to the dataset's."""
    try:
        with pq.ParquetFile(path) as parquet:
            file_schema = parquet.schema_arrow
    except (pa.ArrowException, ValueError, OSError) as exc:
        return [RowError(name, None, None, None, f"not a Parquet file: {exc}")]
    return list(_schema_errors(file_schema, name, _fields(schema)))


def _schema_errors(
    file_schema: pa.Schema, name: str, fields: list[ice.NestedField]
) -> Iterator[RowError]:
    yield from _column_errors(file_schema.names, fields, name, "file")
    for f in fields:
        if f.name not in file_schema.names:
            continue
        actual = file_schema.field(f.name).type
        if not _castable(actual, schema_to_pyarrow(f.field_type)):
            expected = type_name(f.field_type)
            reason = f"column {f.name!r} has type {actual}, expected {expected}"
            yield RowError(name, None, f.name, None, reason)


def _explain_parquet(path: Path, name: str, fields: list[ice.NestedField], limit: int) -> Errors:
    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, ValueError) as exc:
        yield RowError(name, None, None, None, f"not a Parquet file: {exc}")
        return
    with parquet:
        file_schema = parquet.schema_arrow
        yield from _schema_errors(file_schema, name, fields)
        present = [f for f in fields if f.name in file_schema.names]
        required = [f.name for f in present if f.required]  # nulls: checked at top level only
        try:
            offset = 0
            for batch in parquet.iter_batches(columns=required) if required else ():
                nulls: list[tuple[int, int, str]] = []
                for position, column in enumerate(required):
                    array = batch.column(column)
                    if array.null_count:
                        rows = pc.indices_nonzero(array.is_null())[:limit].to_pylist()
                        nulls.extend((offset + i + 1, position, column) for i in rows)
                for row, _, column in sorted(nulls):
                    yield RowError(name, row, column, None, MISSING)
                offset += batch.num_rows
        except (pa.ArrowException, ValueError) as exc:
            yield RowError(name, None, None, None, f"cannot read the Parquet data: {exc}")


_FAMILIES = [  # Arrow types that hold the same values: casts within a family are lossless
    (pa.types.is_string, pa.types.is_large_string, pa.types.is_string_view),
    (pa.types.is_binary, pa.types.is_large_binary, pa.types.is_binary_view),
    (pa.types.is_timestamp,),  # any unit, with or without a time zone
    (pa.types.is_date,),
    (pa.types.is_time,),
]
_LISTS = (pa.types.is_list, pa.types.is_large_list, pa.types.is_fixed_size_list)


def _castable(actual: pa.DataType, expected: pa.DataType) -> bool:
    """Whether pyarrow can cast `actual` to `expected` without losing values or meaning."""
    types = pa.types
    actual = actual.storage_type if isinstance(actual, pa.ExtensionType) else actual
    expected = expected.storage_type if isinstance(expected, pa.ExtensionType) else expected
    actual = actual.value_type if types.is_dictionary(actual) else actual
    if types.is_null(actual) or actual.equals(expected):
        return True
    if types.is_integer(actual) and types.is_integer(expected):  # expected is signed
        return bool(actual.bit_width + types.is_unsigned_integer(actual) <= expected.bit_width)
    if types.is_floating(actual) and types.is_floating(expected):
        return bool(actual.bit_width <= expected.bit_width)
    if types.is_decimal(expected) and (types.is_integer(actual) or types.is_decimal(actual)):
        whole = expected.precision - expected.scale
        if types.is_integer(actual):  # e.g. int32 holds up to 10 digits
            digits = len(str(2 ** (actual.bit_width - types.is_signed_integer(actual))))
            return bool(digits <= whole)
        return bool(actual.scale <= expected.scale and actual.precision - actual.scale <= whole)
    if types.is_struct(actual) and types.is_struct(expected):
        children = {field.name: field.type for field in actual}
        return all(
            _castable(children[child.name], child.type)
            if child.name in children
            else child.nullable
            for child in expected
        )
    if types.is_map(actual) and types.is_map(expected):
        return _castable(actual.key_type, expected.key_type) and _castable(
            actual.item_type, expected.item_type
        )
    if types.is_map(actual) or types.is_map(expected):
        return False
    if any(is_list(actual) for is_list in _LISTS) and any(is_list(expected) for is_list in _LISTS):
        return _castable(actual.value_type, expected.value_type)
    return any(
        any(check(expected) for check in family) and any(check(actual) for check in family)
        for family in _FAMILIES
    )
