"""Value rules of the ingest: whether a CSV cell's text or a decoded JSON value is a valid value
of an Iceberg type, and if not, why, in words a client can act on.

The rules mirror what the Spark ingest accepts; `explain` applies them row by row.
"""

from __future__ import annotations

import json
import re
from base64 import b64decode
from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from functools import partial
from typing import Any

from pyiceberg import types as ice

from workers.uploads.casts import FALSE_WORDS, TRUE_WORDS, base64_cast_fails, spark_decimal
from workers.uploads.spark_datetime import BLANKS, Undecided, spark_date, spark_timestamp

MISSING = "required field is missing"

Problem = tuple[str, str | None, str]  # (field path, offending raw value, reason)

_NUMBER = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_INT_RE = re.compile(r"[+-]?[0-9]+")
_HEX_FLOAT = r"[+-]?0x(?:[0-9a-f]+\.?|[0-9a-f]*\.[0-9a-f]+)p[+-]?[0-9]+"
# Java's Double.parseDouble reads a type suffix (1.5f, 2d) and hexadecimal floats (0x1.8p1)
_FLOAT_RE = re.compile(rf"(?:{_NUMBER}|{_HEX_FLOAT})[fd]?|[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
_DECIMAL_RE = re.compile(_NUMBER)
_DATE_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_TIMESTAMP_RE = re.compile(  # a date alone is its midnight, as Spark's cast reads it
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[ T][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]{1,6})?)?"
    r"(?:Z|[+-][0-9]{2}(?::?[0-9]{2})?)?)?"
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


def kind_of(value: object) -> str:
    """The JSON kind of a decoded value (`object`, `number`, …), as error messages name it."""
    return _KINDS[type(value)]


def _parses(parse: Callable[[str], object], text: str) -> bool:
    try:
        parse(text)
    except ValueError:  # includes binascii.Error
        return False
    return True


# Scalar text rules (CSV cells, JSON strings of dates/timestamps/binary, map keys):
# type -> (is the text valid?, what was expected).
_TEXT_RULES: dict[type, tuple[Callable[[str], object], str]] = {
    ice.BooleanType: (  # Spark's cast: StringUtils.isTrueString / isFalseString
        lambda s: s.isascii() and s.lower() in TRUE_WORDS | FALSE_WORDS,
        "true or false (or t, f, yes, no, y, n, 1, 0)",
    ),
    ice.FloatType: (_FLOAT_RE.fullmatch, "a number such as 1.5, -2e3 or NaN"),
    ice.DoubleType: (_FLOAT_RE.fullmatch, "a number such as 1.5, -2e3 or NaN"),
    ice.DateType: (
        lambda s: _DATE_RE.fullmatch(s) and _parses(date.fromisoformat, s),
        "a date as YYYY-MM-DD",
    ),
    ice.TimestampType: (
        lambda s: _TIMESTAMP_RE.fullmatch(s) and _parses(datetime.fromisoformat, s),
        "a timestamp as YYYY-MM-DD[[ T]HH:MM[:SS[.ffffff]][offset or Z]]",
    ),
    ice.BinaryType: (partial(_parses, partial(b64decode, validate=True)), "base64-encoded bytes"),
}
_TEXT_RULES[ice.TimestamptzType] = _TEXT_RULES[ice.TimestampType]
# A CSV cell is cast by Spark, which reads more forms than JSON's (`spark_datetime`)
_CSV_TIMESTAMP = (
    "a timestamp as YYYY-MM-DD[ HH[:MM[:SS[.ffffff]]]] (a zone, Z or ±HH:MM, after seconds)"
)
_CSV_DATETIMES: dict[type, tuple[Callable[[str], Any], str]] = {
    ice.DateType: (spark_date, "a date as YYYY-MM-DD"),
    ice.TimestampType: (partial(spark_timestamp, with_zone=False), _CSV_TIMESTAMP),
    ice.TimestamptzType: (partial(spark_timestamp, with_zone=True), _CSV_TIMESTAMP),
}


def check_cell(f: ice.NestedField, cell: str) -> list[Problem]:
    """A CSV cell: empty is null; nested types are JSON text, checked with the JSON rules."""
    if cell == "":
        return [(f.name, None, MISSING)] if f.required else []
    if type(f.field_type) is ice.BinaryType:  # Spark's lenient base64 (`base64_cast_fails`)
        if not base64_cast_fails(cell):
            return []
        expected = "expected base64-encoded bytes"
        return [(f.name, cell, f"cannot parse {_quote(cell)} as binary: {expected}")]
    if type(f.field_type) in _CSV_DATETIMES:
        reason = _csv_datetime_error(f.field_type, cell)
        return [] if reason is None else [(f.name, cell, reason)]
    if type(f.field_type) not in _NESTED:
        text = cell if type(f.field_type) is ice.BinaryType else cell.strip(BLANKS)
        reason = _text_error(f.field_type, text)
        return [] if reason is None else [(f.name, cell, reason)]
    try:
        value = json.loads(cell, parse_float=Decimal)
    except (ValueError, RecursionError) as exc:
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        return [(f.name, cell, f"malformed JSON for {type_name(f.field_type)}: {detail}")]
    problems: list[Problem] = []
    check_value(f.field_type, value, f.name, missing_reason(f), problems)
    return problems


def _csv_datetime_error(t: ice.IcebergType, cell: str) -> str | None:
    """Why Spark's cast rejects a date or timestamp cell; None when it reads it, or when only
    Spark can say (the row is then not listed: the job's count of bad rows still holds it)."""
    read, expected = _CSV_DATETIMES[type(t)]
    try:
        if read(cell) is not None:
            return None
    except Undecided:
        return None
    return f"cannot parse {_quote(cell.strip(BLANKS))} as {t}: expected {expected}"


def missing_reason(f: ice.NestedField) -> str | None:
    """What a null in `f` is called: MISSING when the field is required, else None (allowed)."""
    return MISSING if f.required else None


def check_value(
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
        reason = f"expected a JSON {what} for {type_name(t)}, got {kind_of(value)}"
        out.append((path, _raw(value), reason))
    elif isinstance(t, ice.StructType) and isinstance(value, dict):
        for f in t.fields:
            check_value(f.field_type, value.get(f.name), f"{path}.{f.name}", missing_reason(f), out)
    elif isinstance(t, ice.ListType) and isinstance(value, list):
        null = "list element is null, but the elements are required" if t.element_required else None
        for i, element in enumerate(value):
            check_value(t.element_type, element, f"{path}[{i}]", null, out)
    elif isinstance(t, ice.MapType) and isinstance(value, dict):
        null = "map value is null, but the values are required" if t.value_required else None
        for key, item in value.items():
            where = f"{path}{{{key}}}"
            if type(t.key_type) not in _NESTED and (bad := _text_error(t.key_type, key)):
                out.append((where, key, f"bad map key: {bad}"))
            check_value(t.value_type, item, where, null, out)


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
    return None if ok else f"expected {expected} for {t}, got {kind_of(value)} {shown}"


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
        ok, expected = False, "a number such as 1.5 or -2"
    else:
        return None  # a type the ingest does not produce
    return None if ok else f"cannot parse {_quote(text)} as {t}: expected {expected}"


def _range_error(t: ice.IcebergType, number: int, text: str) -> str | None:
    low, high = _INT_RANGES[type(t)]
    if low <= number <= high:
        return None
    return f"{_quote(text)} is out of range for {t}: expected a whole number from {low} to {high}"


def _decimal_error(t: ice.DecimalType, number: Decimal, text: str) -> str | None:
    """As Spark reads a decimal (CSV cell, JSON number or string): rounded half up to the scale,
    then too many digits is bad."""
    if spark_decimal(t, number) is not None:
        return None
    return (
        f"{_quote(text)} does not fit {t}: expected at most {t.precision - t.scale} digits before "
        f"the decimal point (the digits after it are rounded to {t.scale})"
    )


# --- Formatting ----------------------------------------------------------------------------
def type_name(t: ice.IcebergType) -> str:
    """An Iceberg type as error messages name it (`list<string>`, `struct<a: int>`, …)."""
    if isinstance(t, ice.StructType):
        return "struct<" + ", ".join(f"{f.name}: {type_name(f.field_type)}" for f in t.fields) + ">"
    if isinstance(t, ice.ListType):
        return f"list<{type_name(t.element_type)}>"
    if isinstance(t, ice.MapType):
        return f"map<{type_name(t.key_type)}, {type_name(t.value_type)}>"
    return str(t)


def _raw(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=float, ensure_ascii=False)


def _quote(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "...")
