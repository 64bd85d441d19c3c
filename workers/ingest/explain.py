"""Row-by-row explanations of why an input file's rows were rejected by the Spark ingest.

Runs on the failure path only: re-reads one uploaded file (CSV, JSON lines or Parquet) as a
stream and reports each problem as a `RowError`, in file order, stopping at `limit`.
The rules mirror the ingest's (see `explain_file`). Pure Python: no PySpark.
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
import json
import re
from base64 import b64decode
from collections.abc import Callable, Generator, Iterator
from datetime import date, datetime
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import Literal, TextIO

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyiceberg import types as ice
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.schema import Schema

BATCH_COLUMN = "_batch_id"
MAX_VALUE_CHARS = 100
MISSING = "required field is missing"

Problem = tuple[str, str | None, str]  # (field path, offending raw value, reason)
Errors = Generator["RowError", None, None]
Format = Literal["csv", "json", "parquet"]

_NUMBER = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_INT_RE = re.compile(r"[+-]?[0-9]+")
_FLOAT_RE = re.compile(rf"{_NUMBER}|[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
_DECIMAL_RE = re.compile(_NUMBER)
_BAD_BYTE_RE = re.compile("[\udc80-\udcff]")  # undecodable bytes (surrogateescape)
_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TIMESTAMP_RE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,6})?)?"
    r"(?:Z|[+-][0-9]{2}(?::?[0-9]{2})?)?"
)
# Types are dispatched with `type(t) in ...`: `isinstance` on pyiceberg's (pydantic) types is
# slow enough to double the time spent on a file of a million cells.
_NESTED = (ice.StructType, ice.ListType, ice.MapType)
_INT_RANGES: dict[type, tuple[int, int]] = {
    ice.IntegerType: (-(2**31), 2**31 - 1),
    ice.LongType: (-(2**63), 2**63 - 1),
}
_KINDS = {bool: "boolean", int: "integer", float: "number", Decimal: "number", str: "string"}
_KINDS |= {list: "array", dict: "object", type(None): "null"}


def _parses(parse: Callable[[str], object], text: str) -> bool:
    try:
        parse(text)
    except ValueError:  # includes binascii.Error
        return False
    return True


# Scalar text rules (CSV cells, JSON strings of dates/timestamps/binary, map keys):
# type -> (is the text valid?, what was expected).
_TEXT_RULES: dict[type, tuple[Callable[[str], object], str]] = {
    ice.BooleanType: (lambda s: s.lower() in ("true", "false", "1", "0"), "true, false, 1 or 0"),
    ice.FloatType: (_FLOAT_RE.fullmatch, "a number such as 1.5, -2e3 or NaN"),
    ice.DoubleType: (_FLOAT_RE.fullmatch, "a number such as 1.5, -2e3 or NaN"),
    ice.DateType: (
        lambda s: _DATE_RE.fullmatch(s) and _parses(date.fromisoformat, s),
        "a date as YYYY-MM-DD",
    ),
    ice.TimestampType: (
        lambda s: _TIMESTAMP_RE.fullmatch(s) and _parses(datetime.fromisoformat, s),
        "a timestamp as YYYY-MM-DD[ T]HH:MM[:SS[.ffffff]] with an optional offset or Z",
    ),
    ice.BinaryType: (partial(_parses, partial(b64decode, validate=True)), "base64-encoded bytes"),
}
_TEXT_RULES[ice.TimestamptzType] = _TEXT_RULES[ice.TimestampType]


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
                    for field, value, reason in _check_cell(f, cells[i]):
                        yield RowError(name, row, field, value, reason)


def _check_cell(f: ice.NestedField, cell: str) -> list[Problem]:
    """A CSV cell: empty is null; nested types are JSON text, checked with the JSON rules."""
    if cell == "":
        return [(f.name, None, MISSING)] if f.required else []
    if type(f.field_type) not in _NESTED:
        reason = _text_error(f.field_type, cell)
        return [] if reason is None else [(f.name, cell, reason)]
    try:
        value = json.loads(cell, parse_float=Decimal)
    except (ValueError, RecursionError) as exc:
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        return [(f.name, cell, f"malformed JSON for {_type_name(f.field_type)}: {detail}")]
    problems: list[Problem] = []
    _check_value(f.field_type, value, f.name, _missing(f), problems)
    return problems


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
                reason = f"expected a JSON object on each line, got {_KINDS[type(obj)]}"
                yield RowError(name, row, None, text, reason)
                continue
            problems: list[Problem] = []
            for f in fields:  # keys not in the schema are ignored
                _check_value(f.field_type, obj.get(f.name), f.name, _missing(f), problems)
            for field, value, reason in problems:
                yield RowError(name, row, field, value, reason)


def _missing(f: ice.NestedField) -> str | None:
    return MISSING if f.required else None


def _check_value(
    t: ice.IcebergType, value: object, path: str, missing: str | None, out: list[Problem]
) -> None:
    """Appends the problems of a decoded JSON value; `missing` is the reason if null is bad."""
    if value is None:
        if missing:
            out.append((path, None, missing))
    elif type(t) not in _NESTED:
        if reason := _json_error(t, value):
            out.append((path, _raw(value), reason))
    elif not isinstance(value, list if isinstance(t, ice.ListType) else dict):
        what = "array" if isinstance(t, ice.ListType) else "object"
        reason = f"expected a JSON {what} for {_type_name(t)}, got {_KINDS[type(value)]}"
        out.append((path, _raw(value), reason))
    elif isinstance(t, ice.StructType) and isinstance(value, dict):
        for f in t.fields:
            _check_value(f.field_type, value.get(f.name), f"{path}.{f.name}", _missing(f), out)
    elif isinstance(t, ice.ListType) and isinstance(value, list):
        null = "list element is null, but the elements are required" if t.element_required else None
        for i, element in enumerate(value):
            _check_value(t.element_type, element, f"{path}[{i}]", null, out)
    elif isinstance(t, ice.MapType) and isinstance(value, dict):
        null = "map value is null, but the values are required" if t.value_required else None
        for key, item in value.items():
            where = f"{path}{{{key}}}"
            if type(t.key_type) not in _NESTED and (bad := _text_error(t.key_type, key)):
                out.append((where, key, f"bad map key: {bad}"))
            _check_value(t.value_type, item, where, null, out)


def _json_error(t: ice.IcebergType, value: object) -> str | None:
    """Why a JSON value (not null) is not a valid value of the primitive type `t`."""
    kind = type(t)
    if kind is ice.StringType:
        return None  # like Spark, any JSON value is accepted (as its JSON text) for a string
    is_integer = isinstance(value, int) and not isinstance(value, bool)
    if kind is ice.BooleanType:
        ok, expected = isinstance(value, bool), "a JSON boolean (true or false)"
    elif kind in _INT_RANGES:
        if isinstance(value, int) and is_integer:
            return _range_error(t, value, str(value))
        ok, expected = False, "a JSON integer"
    elif kind in (ice.FloatType, ice.DoubleType):
        ok, expected = is_integer or isinstance(value, float | Decimal), "a JSON number"
    elif isinstance(t, ice.DecimalType) and (is_integer or isinstance(value, Decimal)):
        return _decimal_error(t, Decimal(str(value)), str(value))
    elif isinstance(value, str):  # decimal, date, timestamp(tz), binary as text
        return _text_error(t, value)
    else:
        what = "number or a numeric string" if isinstance(t, ice.DecimalType) else "string"
        ok, expected = False, f"a JSON {what}"
    shown = _quote(value) if isinstance(value, str) else _raw(value)[:40]
    return None if ok else f"expected {expected} for {t}, got {_KINDS[type(value)]} {shown}"


def _text_error(t: ice.IcebergType, text: str) -> str | None:
    """Why `text` is not a valid value of the primitive type `t`, or None if it is."""
    kind = type(t)
    if kind in _TEXT_RULES:
        check, expected = _TEXT_RULES[kind]
        ok = bool(check(text))
    elif kind in _INT_RANGES:
        if _INT_RE.fullmatch(text):
            return _range_error(t, int(text) if len(text) < 40 else 2**128, text)
        ok, expected = False, "a whole number"
    elif kind is ice.StringType:
        return None
    elif isinstance(t, ice.DecimalType):
        if _DECIMAL_RE.fullmatch(text):
            return _decimal_error(t, Decimal(text), text)
        ok, expected = False, f"a number with at most {t.scale} decimal places"
    else:
        return None  # a type the ingest does not produce
    return None if ok else f"cannot parse {_quote(text)} as {t}: expected {expected}"


def _range_error(t: ice.IcebergType, number: int, text: str) -> str | None:
    low, high = _INT_RANGES[type(t)]
    if low <= number <= high:
        return None
    return f"{_quote(text)} is out of range for {t}: expected a whole number from {low} to {high}"


def _decimal_error(t: ice.DecimalType, number: Decimal, text: str) -> str | None:
    """Counts significant digits: leading zeros and trailing fractional zeros do not count."""
    _, digit_tuple, exponent = number.as_tuple()
    digits, exp = list(digit_tuple), int(exponent)
    while len(digits) > 1 and digits[-1] == 0 and exp < 0:
        digits.pop()
        exp += 1
    whole = 0 if digits == [0] else max(0, len(digits) + exp)
    max_whole = t.precision - t.scale
    if whole <= max_whole and max(0, -exp) <= t.scale:
        return None
    return (
        f"{_quote(text)} does not fit {t}: expected at most {max_whole} digits before "
        f"and {t.scale} after the decimal point"
    )


# --- Parquet -------------------------------------------------------------------------------
def _explain_parquet(path: Path, name: str, fields: list[ice.NestedField], limit: int) -> Errors:
    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, ValueError) as exc:
        yield RowError(name, None, None, None, f"not a Parquet file: {exc}")
        return
    with parquet:
        file_schema = parquet.schema_arrow
        yield from _column_errors(file_schema.names, fields, name, "file")
        present = [f for f in fields if f.name in file_schema.names]
        for f in present:
            actual = file_schema.field(f.name).type
            if not _castable(actual, schema_to_pyarrow(f.field_type)):
                expected = _type_name(f.field_type)
                reason = f"column {f.name!r} has type {actual}, expected {expected}"
                yield RowError(name, None, f.name, None, reason)
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


# --- Formatting ----------------------------------------------------------------------------
def _type_name(t: ice.IcebergType) -> str:
    if isinstance(t, ice.StructType):
        return (
            "struct<" + ", ".join(f"{f.name}: {_type_name(f.field_type)}" for f in t.fields) + ">"
        )
    if isinstance(t, ice.ListType):
        return f"list<{_type_name(t.element_type)}>"
    if isinstance(t, ice.MapType):
        return f"map<{_type_name(t.key_type)}, {_type_name(t.value_type)}>"
    return str(t)


def _raw(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=float, ensure_ascii=False)


def _quote(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")
