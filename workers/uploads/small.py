"""Small batches without Spark: a batch's files read, typed and checked in Python, as the Spark
ingest (`workers.uploads.rows`) would, for inputs small enough that a Spark job's fixed cost
dominates (`ICEBATCH_SMALL_BATCH_BYTES`).

The rule is parity, not a second dialect: every value is decided exactly as the Spark ingest
decides it (Spark's reader and casts, `spark.sql.ansi.enabled=false`, session time zone UTC, and
the ingest's own checks, such as whole numbers only for an integer), or not at all — input whose
meaning in Spark is not certain here (a timestamp with an offset, a CSV line with a stray quote,
…) raises `NeedsSpark`, and the batch goes through the Spark job as before. Rejections are
explained by the same code as Spark's (`explain_bad_files`), so outcomes and messages are the
same.
"""

from __future__ import annotations

import csv
import random
import re
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyiceberg import types as ice
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.manifest import DataFile
from pyiceberg.partitioning import (
    PartitionFieldValue,
    PartitionKey,
    PartitionSpec,
    partition_record_value,
)
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.table.locations import load_location_provider
from pyiceberg.table.snapshots import Snapshot
from pyiceberg.transforms import (
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    YearTransform,
)

from app.lake import commit as lake_commit
from app.lake.parquet_encoding import dictionary_columns
from app.lake.transaction import begin
from app.lake.types import BATCH_COLUMN
from workers.uploads.casts import REJECTED, NeedsSpark, cast_cell
from workers.uploads.inputs import StagedFile
from workers.uploads.outcome import IngestOutcome, explain_bad_files, file_level_errors

FORMATS = ("csv", "parquet")
UNSORTED_ORDER_ID = 0
_ARROW_TRANSFORMS = (IdentityTransform, YearTransform, MonthTransform, DayTransform, HourTransform)


@dataclass
class SmallRead:
    """A small batch read: its typed rows (user columns, no `_batch_id`) when every row is
    valid; else the outcome Spark's ingest would report. `file_level` says the errors came from
    the files' headers or footers (found before any row is read, as in Spark's job)."""

    rows: pa.Table | None
    outcome: IngestOutcome
    file_level: bool = False


def eligible(
    files: list[StagedFile], fmt: str, schema: Schema, spec: PartitionSpec, limit: int
) -> bool:
    """Whether a batch may take the small path: CSV or Parquet, at most `limit` bytes in all,
    a schema of top-level primitives, a partition spec PyArrow can compute (identity, time)."""
    if limit <= 0 or fmt not in FORMATS or not files:
        return False
    if any(not isinstance(f.field_type, ice.PrimitiveType) for f in schema.fields):
        return False
    if not all(isinstance(p.transform, _ARROW_TRANSFORMS) for p in spec.fields):
        return False
    try:
        return sum(f.path.stat().st_size for f in files) <= limit
    except OSError:
        return False


def read_small(files: list[StagedFile], fmt: str, schema: Schema, max_errors: int) -> SmallRead:
    """The batch's rows typed to `schema` (without `_batch_id`), or its rejection.

    Raises NeedsSpark when a value's fate in Spark is not certain here.
    """
    file_errors = file_level_errors(files, fmt, schema)
    if file_errors:
        return SmallRead(
            None, IngestOutcome(errors=[e.as_dict() for e in file_errors[:max_errors]]), True
        )
    reader = _read_csv if fmt == "csv" else _read_parquet
    tables, per_file = [], {}
    for f in files:
        table, bad = reader(f.path, schema)
        tables.append(table)
        per_file[f.path.name] = (table.num_rows, bad)
    if any(bad for _, bad in per_file.values()):
        return SmallRead(None, explain_bad_files(files, fmt, schema, per_file, max_errors))
    rows = pa.concat_tables(tables) if tables else schema_to_pyarrow(schema).empty_table()
    return SmallRead(rows, IngestOutcome(row_count=rows.num_rows))


# --- CSV: Spark's reader (header, PERMISSIVE, one record a line, `"` quotes and escapes) ------
_SIMPLE_FIELD = r'(?:"(?:[^"]|"")*"|[^",]*)'
_SIMPLE_LINE = re.compile(rf"{_SIMPLE_FIELD}(?:,{_SIMPLE_FIELD})*")


def _cells(line: str) -> list[str]:
    if '"' not in line:
        return line.split(",")
    if not _SIMPLE_LINE.fullmatch(line):  # a quote inside an unquoted field, an open quote, …
        raise NeedsSpark("a CSV line whose quoting only Spark's parser decides")
    return next(csv.reader([line]))


def _lines(path: Path) -> list[str]:
    raw = path.read_bytes()
    if raw.startswith(b"\xef\xbb\xbf") or b"\x00" in raw:
        raise NeedsSpark("a byte-order mark or a NUL byte")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NeedsSpark("not valid UTF-8") from exc
    text = text.replace("\r\n", "\n")
    if "\r" in text:
        raise NeedsSpark("a lone carriage return")
    return text.split("\n")


def _read_csv(path: Path, schema: Schema) -> tuple[pa.Table, int]:
    lines = _lines(path)
    if not lines[0]:
        raise NeedsSpark("a blank line before the header")
    header = _cells(lines[0])
    columns = {f.name: header.index(f.name) for f in schema.fields if f.name in header}
    values: dict[str, list[Any]] = {f.name: [] for f in schema.fields}
    bad_rows = 0
    for line in lines[1:]:
        if not line:
            continue  # Spark skips blank lines
        if not line.strip():
            raise NeedsSpark("a line of whitespace")
        cells = _cells(line)
        if len(cells) != len(header):
            raise NeedsSpark("a row whose cells do not match the header")
        bad = False
        for f in schema.fields:
            position = columns.get(f.name)
            value = None if position is None else cast_cell(f.field_type, cells[position])
            if value is REJECTED:
                bad, value = True, None
            if value is None and f.required:
                bad = True
            values[f.name].append(value)
        bad_rows += bad
    arrow = schema_to_pyarrow(schema)
    if bad_rows:  # the rows are never written: only the count matters
        return pa.table({"n": pa.nulls(len(values[schema.fields[0].name]))}), bad_rows
    return pa.table(
        [pa.array(values[f.name], type=arrow.field(f.name).type) for f in schema.fields],
        schema=arrow,
    ), 0


_REBASE_DAYS = (date(1582, 10, 15) - date(1970, 1, 1)).days
_REBASE_MICROS = int((datetime(1900, 1, 1, tzinfo=UTC).timestamp()) * 1_000_000)


def _ancient(column: pa.ChunkedArray, source: pa.DataType) -> bool:
    """Whether Spark's Parquet reader would stop at a value of the column (its rebase check
    of old dates and timestamps, `spark.sql.parquet.datetimeRebaseModeInRead=EXCEPTION`)."""
    if pa.types.is_date(source):
        low = pc.min(column.cast(pa.date32()).cast(pa.int32())).as_py()
        return low is not None and low < _REBASE_DAYS
    if pa.types.is_timestamp(source):
        low = pc.min(column.cast(pa.timestamp("us", tz="UTC")).cast(pa.int64())).as_py()
        return low is not None and low < _REBASE_MICROS
    return False


def _read_parquet(path: Path, schema: Schema) -> tuple[pa.Table, int]:
    arrow = schema_to_pyarrow(schema)
    table = pq.read_table(path)
    columns = []
    for f in schema.fields:
        target = arrow.field(f.name).type
        if f.name not in table.column_names:
            columns.append(pa.nulls(table.num_rows, target))
            continue
        column = table.column(f.name)
        source = column.type.value_type if pa.types.is_dictionary(column.type) else column.type
        if pa.types.is_null(source) or (pa.types.is_timestamp(source) and source.unit == "ns"):
            raise NeedsSpark(f"a Parquet column of type {source}")
        if pa.types.is_dictionary(column.type):
            column = column.cast(source)
        if _ancient(column, source):
            # Spark refuses to read these from a file it did not write (READ_ANCIENT_DATETIME)
            raise NeedsSpark("a date before 1582-10-15 or a timestamp before 1900")
        # lossless casts only (the file checks refused the rest); time zones as Spark's UTC
        columns.append(column.cast(target))
    required = [c for f, c in zip(schema.fields, columns, strict=True) if f.required]
    bad = 0
    if required:
        mask = required[0].is_null()
        for extra in required[1:]:
            mask = pc.or_(mask, extra.is_null())
        bad = pc.sum(mask).as_py() or 0
    if bad:
        return pa.table({"n": pa.nulls(table.num_rows)}), bad
    safe = pa.schema([a.with_nullable(True) for a in arrow])
    out = pa.table(columns, schema=safe)
    return out.cast(arrow), 0


# --- Writing: the table's own layout, as Spark's append writes it ---------------------------
def data_files(
    table: Table, rows: pa.Table, batch_id: str, folder: str | None = None
) -> list[DataFile]:
    """Write `rows` (typed, without `_batch_id`) with the batch column as the table's data
    files: one file per partition, Parquet with the table's codec (zstd), field ids, metrics as
    the table's properties say, the sort order id Spark's append records (0). Every row of a
    file has the same partition and batch, so each file is in the table's sort order.
    `folder` puts the files there instead of the table's data folder."""
    with_batch = rows.append_column(
        pa.field(BATCH_COLUMN, pa.large_string(), nullable=False),
        pa.array([batch_id] * rows.num_rows, pa.large_string()),
    )
    schema = table.schema()
    with_batch = with_batch.cast(schema_to_pyarrow(schema))
    metadata = table.metadata
    if folder is not None:
        properties = {**metadata.properties, "write.data.path": folder}
        metadata = metadata.model_copy(update={"properties": properties})
    locations = load_location_provider(table.location(), metadata.properties)
    codec = metadata.properties.get("write.parquet.compression-codec", "zstd")
    write_uuid, paths = uuid.uuid4(), []
    for task, (key, part) in enumerate(_partitions(table.spec(), schema, with_batch)):
        path = locations.new_data_location(f"00000-{task}-{write_uuid}.parquet", key)
        output = table.io.new_output(path)
        with output.create() as stream:
            # no Arrow schema in the footer, as Spark writes none: readers see the
            # Parquet types (string, not large_string)
            pq.write_table(
                part,
                stream,
                compression=codec,
                store_schema=False,
                use_dictionary=dictionary_columns(part),
            )
        paths.append(path)
    files = lake_commit.data_files(table, paths)
    for data_file in files:
        data_file[15] = UNSORTED_ORDER_ID  # what Spark's append records (Iceberg 1.10)
    return files


def _partitions(
    spec: PartitionSpec, schema: Schema, rows: pa.Table
) -> list[tuple[PartitionKey | None, pa.Table]]:
    """The rows split by partition (PyArrow's transforms need pyiceberg-core: the small
    batch's values go through PyIceberg's Python transforms instead)."""
    if spec.is_unpartitioned():
        return [(None, rows)]
    keyed: dict[tuple[Any, ...], list[int]] = {}
    transforms = []
    for f in spec.fields:
        source_type = schema.find_field(f.source_id).field_type
        transforms.append((f, f.transform.transform(source_type)))
    sources = [rows.column(schema.find_column_name(f.source_id)).to_pylist() for f in spec.fields]
    for position, raw in enumerate(zip(*sources, strict=True)):
        key = tuple(
            apply(partition_record_value(f, value, schema))
            for (f, apply), value in zip(transforms, raw, strict=True)
        )
        keyed.setdefault(key, []).append(position)
    out: list[tuple[PartitionKey | None, pa.Table]] = []
    for key, positions in keyed.items():
        values = [PartitionFieldValue(f, v) for f, v in zip(spec.fields, key, strict=True)]
        partition = PartitionKey(field_values=values, partition_spec=spec, schema=schema)
        out.append((partition, rows.take(positions)))
    return out


# whole appends tried on a refreshed table, each with PyIceberg's own retries
APPEND_ATTEMPTS = 5


def append(table: Table, files: list[DataFile], properties: dict[str, str]) -> Snapshot:
    """Commit `files` as one append snapshot carrying `properties`, like Spark's append (a
    merge append when the table merges manifests; retried on a new parent, as appends commute).

    PyIceberg retries a commit that met a new parent 4 times within about 1.5 s (the table's
    `commit.retry.*`); a table that a flood of restatements commits to several times a second
    outran that (bench.scale's 0.9 mix: 14 of 675 small ingests failed an attempt, each then
    re-run from the start), so the append is tried again whole, up to APPEND_ATTEMPTS times.
    A `CommitFailedException` means the commit did not land."""
    for attempt in range(1, APPEND_ATTEMPTS + 1):
        try:
            return _append_once(table, files, properties)
        except CommitFailedException:
            if attempt == APPEND_ATTEMPTS:
                raise
            time.sleep(random.uniform(0.05, 0.25) * attempt)
            table.refresh()
    raise AssertionError("unreachable")


def _append_once(table: Table, files: list[DataFile], properties: dict[str, str]) -> Snapshot:
    with begin(table) as transaction:
        update = transaction.update_snapshot(snapshot_properties=properties)
        merging = metadata_bool(table.properties, "commit.manifest-merge.enabled")
        with update.merge_append() if merging else update.fast_append() as producer:
            for data_file in files:
                producer.append_data_file(data_file)
            snapshot_id = producer.snapshot_id
    snapshot = table.snapshot_by_id(snapshot_id)
    assert snapshot is not None
    return snapshot


def metadata_bool(properties: dict[str, str], key: str) -> bool:
    return properties.get(key, "false").lower() == "true"
