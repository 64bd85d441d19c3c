"""Cheap per-file checks before Spark reads anything: CSV headers, Parquet footers."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.schema import Schema

from workers.ingest.explain import RowError


@dataclass(frozen=True)
class StagedFile:
    name: str
    path: Path


def csv_header(path: Path) -> list[str]:
    with path.open(newline="", encoding="utf-8", errors="replace") as handle:
        return next(csv.reader(handle), [])


def parquet_schema(path: Path) -> pa.Schema:
    return pq.read_schema(path)


def parquet_file_errors(path: Path, name: str, schema: Schema) -> list[RowError]:
    """File-level problems of a Parquet file: unreadable, missing, unknown or mistyped columns."""
    try:
        found = pq.read_schema(path)
    except (pa.ArrowInvalid, OSError) as exc:
        return [RowError(name, None, None, None, f"not a Parquet file: {exc}")]
    expected = schema_to_pyarrow(schema, include_field_ids=False)
    errors = []
    columns = set(found.names)
    for field in schema.fields:
        if field.name not in columns and field.required:
            errors.append(
                RowError(name, None, field.name, None, f"required column {field.name!r} is missing")
            )
    known = {f.name for f in schema.fields}
    for column in found.names:
        if column not in known:
            errors.append(
                RowError(
                    name,
                    None,
                    column,
                    None,
                    f"unknown column {column!r} (dataset columns: {', '.join(sorted(known))})",
                )
            )
            continue
        target = expected.field(column).type
        source = found.field(column).type
        if not _castable(source, target):
            errors.append(
                RowError(
                    name,
                    None,
                    column,
                    None,
                    f"column {column!r} has type {source}, expected {target}",
                )
            )
    return errors


def _castable(source: pa.DataType, target: pa.DataType) -> bool:
    if source.equals(target):
        return True
    try:
        pa.array([], type=source).cast(target, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return False
    if pa.types.is_string(source) or pa.types.is_large_string(source):
        return pa.types.is_string(target) or pa.types.is_large_string(target)
    return True
