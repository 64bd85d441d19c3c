"""A CSV cell of a primitive column as the Spark ingest reads it (`workers.uploads.rows`: Spark's
casts under `spark.sql.ansi.enabled=false`, session time zone UTC, and the ingest's own checks,
such as whole numbers only for an integer), for the small path (`workers.uploads.small`): the
value, None (an empty cell), REJECTED (a bad row), or NeedsSpark where only Spark's own parsing
can say (a value between blanks, a timestamp with a zone name, a decimal in exponent notation,
...). Dates and timestamps: `workers.uploads.spark_datetime`."""

from __future__ import annotations

import base64
import re
import unicodedata
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np
from pyiceberg import types as ice

from workers.uploads.spark_datetime import Undecided, spark_date, spark_timestamp


class NeedsSpark(Exception):
    """The input holds something only Spark can decide exactly: run the Spark job."""


class _Rejected:
    """A cell Spark's cast turns into null (a bad value)."""


REJECTED: Any = _Rejected()
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_DECIMAL = re.compile(r"[+-]?[0-9]{1,38}(?:\.[0-9]{1,38})?")
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
# Spark's cast of a string to a boolean (StringUtils.isTrueString / isFalseString), ASCII only
TRUE_WORDS, FALSE_WORDS = {"t", "true", "y", "yes", "1"}, {"f", "false", "n", "no", "0"}
_INT_RANGES: dict[type, int] = {ice.IntegerType: 2**31, ice.LongType: 2**63}
_SPECIAL = {"inf": np.inf, "+inf": np.inf, "infinity": np.inf, "+infinity": np.inf}
_SPECIAL |= {"-inf": -np.inf, "-infinity": -np.inf, "nan": np.nan}
_JAVA_NAN = {"NaN", "+NaN", "-NaN", "Infinity", "+Infinity", "-Infinity"}
_FLOAT32_OVERFLOW = Fraction(2**128 - 2**103)  # Float.parseFloat rounds to infinity from here


def cast_cell(t: ice.IcebergType, cell: str) -> Any:
    """A CSV cell as Spark's cast of the string reads it: a value, None (empty cell: null), or
    REJECTED (the cast gives null). Raises NeedsSpark where Spark's lenient parsing might differ."""
    if cell == "":
        return None
    kind = type(t)
    if kind is ice.StringType:
        return cell
    if kind is ice.DateType:
        return _cast_datetime(spark_date, cell)
    if kind in (ice.TimestampType, ice.TimestamptzType):
        return _cast_datetime(partial(spark_timestamp, with_zone=kind is ice.TimestamptzType), cell)
    if cell[0] <= " " or cell[-1] <= " ":  # Spark trims these first; keep to the plain forms
        raise NeedsSpark("a value with leading or trailing whitespace")
    if kind is ice.BooleanType:
        lowered = cell.lower() if cell.isascii() else ""
        return True if lowered in TRUE_WORDS else False if lowered in FALSE_WORDS else REJECTED
    if kind in _INT_RANGES:
        if _INT.fullmatch(cell):
            number, bound = int(cell), _INT_RANGES[kind]
            return number if -bound <= number < bound else REJECTED
        return REJECTED  # "1.5" too: the Spark ingest takes whole numbers only (WHOLE_NUMBER)
    if kind in (ice.FloatType, ice.DoubleType):
        return _cast_float(cell, kind is ice.FloatType)
    if isinstance(t, ice.DecimalType):
        return _cast_decimal(t, cell)
    if kind is ice.BinaryType:
        if len(cell) % 4 == 0 and _BASE64.fullmatch(cell):
            return base64.b64decode(cell, validate=True)
        raise NeedsSpark("binary text that is not plain padded base64")
    raise NeedsSpark(f"a {t} column")


_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_JAVA_SPACE_CONTROLS = frozenset("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f")


def _java_whitespace(char: str) -> bool:
    """Java's Character.isWhitespace."""
    if char in _JAVA_SPACE_CONTROLS:
        return True
    return unicodedata.category(char) in ("Zs", "Zl", "Zp") and char not in "\xa0\u2007\u202f"


def base64_cast_fails(cell: str) -> bool:
    """Whether the Spark ingest's `try_to_binary(cell, 'base64')` is null: Spark takes Java
    whitespace anywhere before the padding, the base64 alphabet, a last unit of two or three
    characters (never one), and one or two `=` after a last unit of three or two, ending the
    text (checked against Spark 3.5 by tests/workers/batches/test_spark_casts.py)."""
    units = padding = 0
    for char in cell:
        if char == "=":
            padding += 1
        elif padding:
            return True
        elif char in _ALPHABET:
            units = (units + 1) % 4
        elif not _java_whitespace(char):
            return True
    return (units, padding) not in ((0, 0), (2, 0), (3, 0), (2, 2), (3, 1))


def _cast_datetime(read: Callable[[str], Any], cell: str) -> Any:
    try:
        value = read(cell)
    except Undecided as exc:
        raise NeedsSpark(str(exc)) from None
    return REJECTED if value is None else value


def _cast_float(cell: str, single: bool) -> Any:
    lowered = cell.lower()
    if lowered in _SPECIAL:
        return _SPECIAL[lowered]
    if cell in _JAVA_NAN:  # java.lang.Double.parseDouble's own spellings
        return np.nan if "NaN" in cell else -np.inf if cell[0] == "-" else np.inf
    if not _FLOAT.fullmatch(cell):
        if "nan" in lowered or "inf" in lowered or "0x" in lowered or lowered[-1] in "fd":
            raise NeedsSpark("a number only Java's parser reads")
        return REJECTED
    if not single:
        return float(cell)
    exact = Fraction(Decimal(cell))
    if abs(exact) >= _FLOAT32_OVERFLOW:
        return -np.inf if exact < 0 else np.inf
    return float(_nearest_float32(exact, float(cell)))


def _nearest_float32(exact: Fraction, approx: float) -> np.float32:
    """The float32 nearest `exact` (ties to even), as Float.parseFloat rounds it: rounding the
    double first can be one ulp off."""
    with np.errstate(over="ignore", under="ignore"):
        guess = np.float32(approx)
        candidates = [
            guess,
            np.nextafter(guess, np.float32(-np.inf)),
            np.nextafter(guess, np.float32(np.inf)),
        ]
    finite = [c for c in candidates if np.isfinite(c)]

    def key(c: np.float32) -> tuple[Fraction, int]:
        return abs(Fraction(float(c)) - exact), int(np.float32(c).view(np.uint32)) & 1

    return min(finite, key=key)


def _cast_decimal(t: ice.DecimalType, cell: str) -> Any:
    if not _DECIMAL.fullmatch(cell):
        if set(cell) <= set("0123456789+-.eE") or not cell.isascii():
            # Java's BigDecimal also reads other scripts' digits ("\u0661" is 1)
            raise NeedsSpark("a decimal only Java's BigDecimal reads")
        return REJECTED
    value = spark_decimal(t, Decimal(cell))
    return REJECTED if value is None else value


def spark_decimal(t: ice.DecimalType, number: Decimal) -> Decimal | None:
    """`number` as Spark keeps it in `t`: rounded half up to the scale; None (null) when the
    digits do not fit."""
    try:
        value = number.quantize(Decimal(1).scaleb(-t.scale), rounding=ROUND_HALF_UP)
    except InvalidOperation:  # more digits than the context holds
        return None
    return value if len(value.as_tuple().digits) <= t.precision else None


# --- Parquet: Spark's reader, each column cast to the dataset's type ------------------------
