"""Staged write: a batch's rows as plain Parquet files in the table's data folder, uncommitted.

A replay must commit its rows and its predecessors' tombstones in one snapshot, under the
dataset's commit lease, without an engine retrying on another parent. So Spark only writes the
files (one Iceberg partition per file: the rows are split by Iceberg's own transform functions)
and the group committer registers them later, together with the tombstones. A small replay
(`ICEBATCH_SMALL_BATCH_BYTES`) is read, checked and written in Python instead (`stage_small`,
the small ingest's reader and writer: `workers.uploads.small`).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from typing import Any

from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.transforms import BucketTransform, IdentityTransform, Transform, TruncateTransform
from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from app.lake.tables import TIME_TRANSFORMS
from workers.spark.progress import SparkProgress
from workers.uploads import small
from workers.uploads.inputs import StagedFile
from workers.uploads.outcome import file_level_errors
from workers.uploads.rows import (
    INVALID,
    checked_rows,
    explain_invalid,
    validated_frame,
)

log = logging.getLogger(__name__)
# Iceberg's Spark functions for the time transforms: year -> system.years, …
FUNCTIONS: dict[type, str] = {type(t): f"{name}s" for name, t in TIME_TRANSFORMS.items()}


@dataclass
class StageOutcome:
    paths: list[str] = field(default_factory=list)
    folder: str | None = None
    errors: list[dict[str, Any]] = field(default_factory=list)
    row_count: int = 0


def staged_folder(table: Table, batch_id: str) -> str:
    return f"{table.location().rstrip('/')}/data/staged-{batch_id}-{uuid.uuid4().hex[:8]}"


def stage_small(
    table: Table,
    *,
    schema: Schema,
    files: list[StagedFile],
    fmt: str,
    batch_id: str,
    limit: int,
    max_errors: int = 100,
) -> StageOutcome | None:
    """`stage` without Spark for a small batch: the same rows, files and errors, or None when
    the batch needs Spark (too large, a layout or a value only Spark reads exactly)."""
    if not small.eligible(files, fmt, schema, table.spec(), limit):
        return None
    try:
        read = small.read_small(files, fmt, schema, max_errors)
    except small.NeedsSpark as exc:
        log.info("replay batch %s goes to Spark: %s", batch_id, exc)
        return None
    if read.rows is None:
        return StageOutcome(errors=read.outcome.errors, row_count=read.outcome.row_count)
    folder = staged_folder(table, batch_id)
    written = small.data_files(table, read.rows, batch_id, folder=folder)
    return StageOutcome(paths=sorted(f.file_path for f in written), folder=folder)


def partition_column(catalog: str, transform: Transform[Any, Any], source: str) -> Column:
    """The partition value of a row, computed by Iceberg's own Spark function for `transform`."""
    column = f"`{source}`"
    if isinstance(transform, IdentityTransform):
        return F.col(column)
    if isinstance(transform, BucketTransform):
        return F.expr(f"{catalog}.system.bucket({transform.num_buckets}, {column})")
    if isinstance(transform, TruncateTransform):
        return F.expr(f"{catalog}.system.truncate({transform.width}, {column})")
    return F.expr(f"{catalog}.system.{FUNCTIONS[type(transform)]}({column})")


def stage(
    spark: SparkSession,
    *,
    catalog: str,
    table: Table,
    schema: Schema,
    files: list[StagedFile],
    fmt: str,
    batch_id: str,
    progress: SparkProgress,
    max_errors: int = 100,
) -> StageOutcome:
    """Validate and write the batch's rows; nothing is written when a row is invalid."""
    progress.phase("validating", 0.02, 0.05)
    file_errors = file_level_errors(files, fmt, schema)
    if file_errors:
        return StageOutcome(errors=[e.as_dict() for e in file_errors[:max_errors]])
    frame = validated_frame(spark, files, fmt, schema)
    rows = checked_rows(frame, batch_id)
    table_schema = table.schema()
    keys = []
    for position, spec_field in enumerate(table.spec().fields):
        name = f"__p{position}"
        source = table_schema.find_column_name(spec_field.source_id)
        assert source is not None
        rows = rows.withColumn(name, partition_column(catalog, spec_field.transform, source))
        keys.append(name)
    if keys:
        rows = rows.repartition(*keys).sortWithinPartitions(*keys)
    folder = staged_folder(table, batch_id)
    progress.phase("writing", 0.05, 0.95)
    try:
        rows.write.partitionBy(*keys).option("compression", "zstd").parquet(folder)
    except Exception as exc:
        if INVALID not in str(exc):
            raise
        progress.phase("explaining", 0.5, 0.9)
        outcome = explain_invalid(frame, files, fmt, schema, max_errors)
        return StageOutcome(errors=outcome.errors, row_count=outcome.row_count, folder=folder)
    written = spark.read.parquet(folder)
    paths = sorted(written.inputFiles())
    return StageOutcome(paths=paths, folder=folder)
