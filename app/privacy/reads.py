"""The GDPR tombstones every read applies, whatever snapshot it reads (the rule, and why the
metadata store is its source: `app.lake.gdpr_tombstones`).

`in_force` is the one function every reader calls: `/rows`, `/changes`, exports and Spark's
`read_dataset` (through `for_table`). A committed restatement's column, ids and sequence number
never change, so its tombstone rows are cached by its id, and the whole set by the ids of the
restatements in it: a read costs one small query (no ids) while no GDPR delete commits or is
erased, even with 100k+ GDPR ids.

A reader that applies the position delete files of the snapshot it reads (`/rows`,
`read_dataset`) names it (`with_deletes_of`) and gets only the GDPR deletes past that snapshot's
materialized mark, the others being Iceberg deletes there already (`app.lake.gdpr_tombstones`):
at the current snapshot, those since the materializer's last pass, whatever the number in force.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot
from sqlalchemy import Row
from sqlalchemy.orm import Session

from app.db import session_scope
from app.lake import gdpr_tombstones as gdpr
from app.lake import tombstones
from app.lake.file_cache import FileCache
from app.lake.gdpr_tombstones import GdprTombstones
from app.privacy import repository

_BY_RESTATEMENT: FileCache[pa.Table] = FileCache(4096)
_SETS: FileCache[GdprTombstones] = FileCache(64)


def in_force(
    session: Session, dataset_id: str, table: Table, with_deletes_of: Snapshot | None = None
) -> GdprTombstones:
    """Every GDPR tombstone that may still hide rows of one of the table's retained snapshots:
    the dataset's committed, not yet erased GDPR restatements, and the GDPR tombstones active
    at the current snapshot.

    `with_deletes_of`: the snapshot a reader reads with its position delete files applied; only
    the tombstones above its materialized mark are returned (the others hide nothing there
    that its delete files do not). None: all of them (increments, which read files as they are).
    """
    after = _materialized(table, with_deletes_of)
    recorded = repository.gdpr_in_force(session, dataset_id, after)
    table_id = str(table.metadata.table_uuid)
    keys = [f"{table_id}|{r.id}" for r in recorded]
    recorded_key = hashlib.sha256("|".join(keys).encode()).hexdigest()
    location = tombstones.list_location(table, table.current_snapshot()) or ""

    def build() -> GdprTombstones:
        parts = {key: _BY_RESTATEMENT.peek(key) for key in keys}
        missing = [r for r, key in zip(recorded, keys, strict=True) if parts[key] is None]
        values = repository.ids_of(session, [r.id for r in missing]) if missing else {}
        for row in missing:
            key = f"{table_id}|{row.id}"
            parts[key] = _rows(table, row, values[row.id])
            _BY_RESTATEMENT.put(key, parts[key])
        found = [p for p in parts.values() if p is not None]
        rows = pa.concat_tables(found) if found else tombstones.SCHEMA.empty_table()
        return gdpr.combine(table, rows, recorded_key, after)

    return _SETS.get(f"{table_id}|{recorded_key}|{location}|{after}", build)


def for_table(
    identifier: str, table: Table, with_deletes_of: Snapshot | None = None
) -> GdprTombstones:
    """`in_force` for the dataset whose table is `identifier`; a table the metadata store does
    not know (not an Icebatch dataset) has only the GDPR tombstones its current snapshot lists."""
    with session_scope() as session:
        dataset = repository.dataset_by_table(session, identifier)
        if dataset is None:
            return gdpr.lake_only(table, _materialized(table, with_deletes_of))
        return in_force(session, dataset.id, table, with_deletes_of)


def _materialized(table: Table, snapshot: Snapshot | None) -> int:
    """The sequence number up to which `snapshot`'s tombstones are position deletes (None: 0)."""
    return tombstones.materialized_seq(table, snapshot) if snapshot is not None else 0


def _rows(table: Table, restatement: Row[Any], values: list[str]) -> pa.Table:
    """A committed GDPR restatement as the tombstone rows its commit wrote."""
    field_id = table.schema().find_field(restatement.column).field_id
    count = len(values)
    committed = restatement.committed_at or datetime.fromtimestamp(0, UTC)
    return pa.table(
        {
            "namespace": pa.array([field_id] * count, pa.int32()),
            "id": pa.array([str(v) for v in values], pa.string()),
            "added_seq": pa.array([int(restatement.sequence_number or 0)] * count, pa.int64()),
            "added_snapshot_id": pa.array([int(restatement.snapshot_id or 0)] * count, pa.int64()),
            "added_on": pa.array([committed] * count, pa.timestamp("us", tz="UTC")),
            "evict_by": pa.nulls(count, pa.timestamp("us", tz="UTC")),
            "request_id": pa.array([restatement.request_id] * count, pa.string()),
            "operation": pa.array([gdpr.GDPR] * count, pa.string()),
            "reason": pa.nulls(count, pa.string()),
        },
        schema=tombstones.SCHEMA,
    )
