"""CSV dates and timestamps read as the Spark ingest's own cast reads them: wherever
`workers.uploads.spark_datetime` decides a cell (the small path writes that value without
Spark), it is Spark's value, or Spark's null; and a failed batch's row explanations never call
bad a date, a timestamp or a number that Spark read, and call a binary cell bad exactly when
Spark's base64 cannot read it."""

from __future__ import annotations

import base64
from datetime import UTC, date, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyiceberg.types import DateType, NestedField, TimestampType, TimestamptzType

from tests.fixtures.profile import budget
from workers.uploads import casts
from workers.uploads.values import check_cell

pytestmark = pytest.mark.spark

COLUMNS = {
    "day": DateType(),
    "ts": TimestampType(),
    "tstz": TimestamptzType(),
}
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def digits(low: int, high: int) -> st.SearchStrategy[str]:
    return st.integers(low, high).flatmap(
        lambda n: st.text("0123456789", min_size=n, max_size=n) if n else st.just("")
    )


def two(top: int) -> st.SearchStrategy[str]:
    """A month, day, hour, ...: mostly 1 or 2 digits near the range, sometimes 0 or 3."""
    return st.one_of(
        st.integers(0, top + 1).map(str),
        st.integers(0, 9).map(lambda n: f"0{n}"),
        digits(0, 3),
    )


# the parts of the grammar, near and across its edges
years = st.one_of(st.integers(1, 9999).map(lambda y: f"{y:04d}"), digits(1, 8))
zones = st.sampled_from(
    ["", "Z", "+02:00", "-05:30", "+18:00", "-18:01", "+2:00", "+0200", "+02", "UTC", " UTC",
     "z", "GMT+1", "Europe/Paris", "x", "+25:00", " ", "+02:60", "+99:99"]
)  # fmt: skip
times = (
    st.tuples(two(24), two(60), two(60), digits(0, 8), zones)
    .map(
        lambda p: st.sampled_from(
            [
                "",
                f"{p[0]}",
                f"{p[0]}:{p[1]}",
                f"{p[0]}:{p[1]}{p[4]}",
                f"{p[0]}:{p[1]}:{p[2]}{p[4]}",
                f"{p[0]}:{p[1]}:{p[2]}.{p[3]}{p[4]}",
            ]
        )
    )
    .flatmap(lambda s: s)
)


def written(moment: datetime, padded: bool, sep: str, parts: int, fraction: int, zone: str) -> str:
    """A real date and time as a client may write it: `parts` of the time (0-4: none, hour,
    minutes, seconds, a fraction of `fraction` digits), then a zone."""
    day = f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
    if not padded:
        day = f"{moment.year:04d}-{moment.month}-{moment.day}"
    clock = [f"{moment.hour:02d}", f":{moment.minute:02d}", f":{moment.second:02d}"]
    clock = clock[: min(parts, 3)]
    if parts == 4:
        clock.append("." + f"{moment.microsecond:06d}{moment.microsecond % 97:02d}"[:fraction])
    return day + (sep + "".join(clock) + (zone if parts >= 3 else "") if parts else "")


# mostly real dates and times, written in every form the cast reads
well_formed = st.builds(
    written,
    st.datetimes(datetime(1, 1, 2), datetime(9999, 12, 30)),
    st.booleans(),
    st.sampled_from([" ", "T"]),
    st.integers(0, 4),
    st.integers(0, 8),
    zones,
)
texts = st.one_of(
    well_formed,
    well_formed,
    st.tuples(
        st.sampled_from(["", "", "", "+", "-"]),
        years,
        st.sampled_from(["-", "-", "-", "/", ""]),
        two(13),
        st.sampled_from(["-", "-", "-", ""]),
        two(32),
        st.sampled_from([" ", "T", "T", "", "t", "x", "-"]),
        times,
    ).map(lambda p: "".join(p)),
    st.builds(lambda y, m, t: f"{y}-{m}{t}", years, two(13), st.sampled_from(["", "T", " 10"])),
    st.builds(lambda t, z: f"{t}{z}", st.sampled_from(["10:00", "T10:00:00", "1:2:3", "x"]), zones),
    st.text(st.sampled_from("0123456789-: T.Z+"), max_size=14),
)
cells = st.builds(
    lambda before, text, after: f"{before}{text}{after}",
    st.sampled_from(["", "", "", " ", "\t"]),
    texts,
    st.sampled_from(["", "", "", " ", "\n"]),
).filter(lambda c: c != "")


def spark_readings(spark: Any, column: list[str]) -> dict[str, list[tuple[Any, bool]]]:
    """Per column type: each cell's value as the ingest's cast reads it (days or microseconds
    since the epoch, None for null) and whether the ingest calls it bad."""
    from pyspark.sql import functions as F

    from workers.uploads.rows import typed_csv_column

    frame = spark.createDataFrame([(i, c) for i, c in enumerate(column)], "i long, cell string")
    picks = []
    for name, t in COLUMNS.items():
        typed, bad = typed_csv_column(NestedField(1, "cell", t, required=False))
        number = F.unix_date(typed) if name == "day" else F.unix_micros(typed.cast("timestamp"))
        picks += [number.alias(name), bad.alias(f"{name}_bad")]
    rows = frame.select("i", *picks).orderBy("i").collect()
    return {name: [(r[name], r[f"{name}_bad"]) for r in rows] for name in COLUMNS}


def as_number(value: date | datetime) -> int:
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        delta = moment - EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return (value - date(1970, 1, 1)).days


@budget(4)
@given(st.lists(cells, min_size=300, max_size=300))
def test_dates_and_timestamps_are_read_as_spark_reads_them(spark: Any, column: list[str]) -> None:
    readings = spark_readings(spark, column)
    decided = 0
    for name, t in COLUMNS.items():
        field = NestedField(1, name, t, required=False)
        for cell, (spark_value, spark_bad) in zip(column, readings[name], strict=True):
            explained = check_cell(field, cell)
            assert not explained or spark_bad, (name, cell, explained, spark_value)
            try:
                ours = casts.cast_cell(t, cell)
            except casts.NeedsSpark:
                continue
            decided += 1
            if ours is casts.REJECTED:
                assert (spark_value, spark_bad) == (None, True), (name, cell)
                assert explained, (name, cell)
            else:
                assert spark_value == as_number(ours), (name, cell, ours)
                assert not spark_bad
                assert not explained, (name, cell, explained)
    assert decided >= len(column)  # most cells of the three columns are decided here


numbers = st.one_of(
    st.floats().map(repr),
    st.builds(
        lambda n, suffix: f"{n}{suffix}",
        st.sampled_from(["1.5", "-2", "3e4", ".5", "1.", "0x1.8p1", "0X.8P-2", "0x1p3", "7"]),
        st.sampled_from(["", "f", "D", "ff", "x"]),
    ),
    st.sampled_from(["NaN", "-Infinity", "+inf", "nan", "INF", "1e", "0x1.8", "--1", " 1.5 "]),
)


@budget(2)
@given(st.lists(numbers, min_size=200, max_size=200))
def test_a_number_java_reads_is_never_explained_as_bad(spark: Any, column: list[str]) -> None:
    from pyiceberg.types import DoubleType, FloatType

    from workers.uploads.rows import typed_csv_column

    frame = spark.createDataFrame(list(enumerate(column)), "i long, cell string")
    for t in (DoubleType(), FloatType()):
        typed, bad = typed_csv_column(NestedField(1, "cell", t, required=False))
        rows = frame.select("i", bad.alias("bad")).orderBy("i").collect()
        field = NestedField(1, "n", t, required=False)
        for cell, row in zip(column, rows, strict=True):
            explained = check_cell(field, cell)
            assert not explained or row["bad"], (str(t), cell, explained)


def spoiled(data: bytes, at: int, junk: str) -> str:
    """Base64 text with `junk` put in at `at` (a blank, a character outside the alphabet, ...)."""
    text = base64.b64encode(data).decode()
    at %= len(text) + 1
    return text[:at] + junk + text[at:]


base64_cells = st.one_of(
    st.text("ABab09+/====!x -\u00e9\u4e2d\u3000\u00a0\t", min_size=1, max_size=10),
    st.binary(max_size=7).map(lambda b: base64.b64encode(b).decode()),
    st.binary(min_size=1, max_size=7).map(lambda b: base64.b64encode(b).decode().rstrip("=")),
    st.builds(
        spoiled,
        st.binary(min_size=1, max_size=7),
        st.integers(0, 12),
        st.sampled_from([" ", "\t", "\u3000", "\u00a0", "!", "=", "A", "==", "\u00e9"]),
    ),
)


@budget(2)
@given(st.lists(base64_cells, min_size=300, max_size=300))
def test_a_binary_cell_is_explained_as_bad_exactly_when_spark_cannot_read_it(
    spark: Any, column: list[str]
) -> None:
    from pyiceberg.types import BinaryType

    from workers.uploads.rows import typed_csv_column

    frame = spark.createDataFrame(list(enumerate(column)), "i long, cell string")
    typed, bad = typed_csv_column(NestedField(1, "cell", BinaryType(), required=False))
    rows = frame.select("i", bad.alias("bad")).orderBy("i").collect()
    field = NestedField(1, "bin", BinaryType(), required=False)
    for cell, row in zip(column, rows, strict=True):
        assert casts.base64_cast_fails(cell) == row["bad"], cell
        assert bool(check_cell(field, cell)) == row["bad"], cell
