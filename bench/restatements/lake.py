"""The lake of parts (a)-(c), in this process: one SparkSession and the Iceberg catalog of a
fresh database; the tables written like Icebatch's ingest writes them, and tombstone commits."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import DAY, SCHEMA
from bench.restatements.data import Data, without_users
from bench.restatements.shared import COLUMNS, LEVELS, MODES, NS, PG, log, timed


@dataclass
class Lake:
    spark: Any
    catalog: Any
    catalog_name: str

    def name(self, table: str) -> str:
        return f"{self.catalog_name}.{NS}.{table}"

    def load(self, table: str) -> Any:
        return self.catalog.load_table(f"{NS}.{table}")


def open_lake(home: Path, database: str) -> Lake:
    os.environ["ICEBATCH_HOME"] = str(home)
    os.environ["ICEBATCH_DATABASE_URL"] = f"{PG}/{database}"
    from app.cli import migrate
    from app.config import get_settings
    from app.lake.catalog import get_catalog
    from workers.spark.session import build_session

    migrate()
    settings = get_settings()
    return Lake(build_session(settings), get_catalog(), settings.catalog_name)


def create(lake: Lake, table: str, properties: dict[str, str] | None = None) -> Any:
    from app.lake.tables import create_table
    from app.lake.types import schema_from_specs

    created = create_table(lake.catalog, f"{NS}.{table}", schema_from_specs(SCHEMA), DAY)
    if properties:
        with created.transaction() as transaction:
            transaction.set_properties(properties)
    return created


def append(lake: Lake, table: str, path: Path, batch_id: str | None) -> None:
    """One batch as one append, as Icebatch's ingest writes it (hash by day, sorted by batch);
    `batch_id` None: the file holds its rows' own `_batch_id` (rows of several batches)."""
    from pyspark.sql import functions as F

    frame = lake.spark.read.parquet(str(path)).select(
        "event_id",
        "user_id",
        F.col("event_time").cast("timestamp_ntz").alias("event_time"),
        "payload",
        (F.col("_batch_id") if batch_id is None else F.lit(batch_id)).alias("_batch_id"),
    )
    writer = frame.writeTo(lake.name(table))
    writer = writer.option("snapshot-property.icebatch.operation", "ingest")
    if batch_id is not None:
        writer = writer.option("snapshot-property.icebatch.batch-id", batch_id)
    writer.append()


def delete_modes(mode: str) -> dict[str, str]:
    return {f"write.{op}.mode": MODES[mode] for op in ("delete", "update", "merge")}


def file_stats(lake: Lake, table: str) -> str:
    files = lake.spark.sql(
        f"SELECT count(*) AS n, avg(record_count) AS r, sum(file_size_in_bytes) AS b "
        f"FROM {lake.name(table)}.data_files"
    ).collect()[0]
    return f"{files['n']} files, {files['r']:,.0f} rows/file, {files['b'] / 1e6:,.0f} MB"


def write_tables(
    lake: Lake, data: Data, work: Path, parts: str, compacted: bool
) -> tuple[dict[str, Any], list[str]]:
    """The base table `events`, for (a) its DELETE twins (`batch_*`, and `compact_*` when
    `compacted`), for (b) the `absent_*` twins without the hidden rows: the setup's seconds
    and each table's layout, and the DELETE twins."""
    out: dict[str, Any] = {}
    tables: dict[str, list[Path]] = {"events": data.files}
    if "a" in parts:
        tables |= {f"batch_{m}": data.files for m in MODES}
    if "b" in parts:
        for level in LEVELS[1:]:
            hidden = data.hidden_users(level)
            tables[f"absent_{level}"] = without_users(data, hidden, work / f"absent-{level}")
    log(f"writing {len(tables)} tables x {len(data.files)} appends: {', '.join(tables)}")
    setup = time.perf_counter()
    for name in tables:
        create(lake, name, delete_modes(name[-3:]) if name.startswith("batch_") else None)
    for i, batch_id in enumerate(data.batch_ids):
        for name, files in tables.items():
            append(lake, name, files[i], batch_id)
        if (i + 1) % 10 == 0:
            log(f"  appended batch {i + 1}/{len(data.batch_ids)}")
    twins = [f"batch_{m}" for m in MODES] if "a" in parts else []
    if "a" in parts and compacted:
        for mode in MODES:
            create(lake, f"compact_{mode}", delete_modes(mode))
            frame = lake.spark.table(lake.name("events")).select(*COLUMNS)
            frame.writeTo(lake.name(f"compact_{mode}")).append()
            twins.append(f"compact_{mode}")
    out["setup_seconds"] = time.perf_counter() - setup
    out["layout"] = {name: file_stats(lake, name) for name in [*tables, *twins]}
    for name, stats in out["layout"].items():
        log(f"  {name}: {stats}")
    return out, twins


def commit_tombstones(
    lake: Lake, table_name: str, namespace: str, ids: list[str], request: str
) -> tuple[float, float]:
    """Load the table and commit `ids` as tombstones of `namespace` (none: a commit that only
    adds a snapshot); seconds of load + commit, and of the commit alone."""
    from app.lake.commit import commit
    from app.lake.tombstones import NewTombstone

    began = time.perf_counter()
    table = lake.load(table_name)
    field_id = table.schema().find_field(namespace).field_id
    operation = "revert" if namespace == "_batch_id" else "gdpr"
    new = [NewTombstone(field_id, value, request, operation) for value in ids]
    props = {"icebatch.operation": operation, "icebatch.request-id": request}
    seconds, _ = timed(lambda: commit(table, files=[], new_tombstones=new, properties=props))
    return time.perf_counter() - began, seconds
