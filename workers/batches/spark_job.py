"""The ingest Spark job: read a batch's files, enforce the schema, write one Iceberg snapshot."""

from __future__ import annotations

from collections.abc import Callable

from pyiceberg.schema import Schema
from pyspark.sql import SparkSession

from workers.spark.progress import SparkProgress
from workers.uploads.inputs import StagedFile
from workers.uploads.outcome import IngestOutcome, file_level_errors
from workers.uploads.rows import (
    INVALID,
    checked_rows,
    explain_invalid,
    validated_frame,
)


def ingest(
    spark: SparkSession,
    *,
    table: str,
    schema: Schema,
    files: list[StagedFile],
    fmt: str,
    batch_id: str,
    snapshot_properties: dict[str, str],
    progress: SparkProgress,
    before_commit: Callable[[], None],
    max_errors: int = 100,
) -> IngestOutcome:
    """Append every row in one snapshot, or none when any row is invalid.

    Validation happens inside the write, in a single pass: a bad row raises in Spark, which
    aborts the write (Iceberg deletes the files it wrote, nothing commits). Only then does a
    second pass count bad rows per file, and the files are explained row by row.
    `schema` is the dataset's schema without `_batch_id`. `before_commit` is called right
    before the write starts (the lease check) and may raise to stop it.
    """
    progress.phase("validating", 0.02, 0.05)
    file_errors = file_level_errors(files, fmt, schema)
    if file_errors:
        return IngestOutcome(errors=[e.as_dict() for e in file_errors[:max_errors]])
    frame = validated_frame(spark, files, fmt, schema)
    writer = checked_rows(frame, batch_id).writeTo(table)
    for key, value in snapshot_properties.items():
        writer = writer.option(f"snapshot-property.{key}", value)
    before_commit()
    progress.phase("writing", 0.05, 0.97)
    try:
        writer.append()
    except Exception as exc:
        if INVALID not in str(exc):
            raise
    else:
        return IngestOutcome()
    progress.phase("explaining", 0.5, 0.9)
    return explain_invalid(frame, files, fmt, schema, max_errors)
