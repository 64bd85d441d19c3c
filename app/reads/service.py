"""Reads of a dataset's rows at a snapshot, with PyArrow in the API process (no Spark)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot
from sqlalchemy.orm import Session

from app.errors import InvalidInput, SnapshotNotFound
from app.lake import snapshots, visible
from app.lake.gdpr_tombstones import GdprTombstones
from app.privacy import reads as gdpr


def resolve_as_of(table: Table, as_of: str | None) -> Snapshot | None:
    """The snapshot named by `as_of` (a snapshot id or an ISO time); None means current."""
    if as_of is None or as_of == "":
        return table.current_snapshot()
    if as_of.lstrip("-").isdigit():
        snapshot = table.snapshot_by_id(int(as_of))
        if snapshot is None:
            raise SnapshotNotFound(f"snapshot {as_of} is not in this dataset's snapshot log")
        return snapshot
    try:
        moment = snapshots.parse_time(as_of)
    except ValueError:
        raise InvalidInput(
            f"as_of={as_of!r} is neither a snapshot id nor an ISO 8601 time"
        ) from None
    found = snapshots.snapshot_at(table, moment)
    if found is None:
        raise SnapshotNotFound(f"the dataset has no snapshot at or before {moment.isoformat()}")
    return found


def row_batches(
    table: Table,
    snapshot: Snapshot | None,
    offset: int,
    limit: int | None,
    erased: GdprTombstones,
) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    """The rows visible at `snapshot` (its tombstones and every GDPR tombstone in force
    applied), sliced to [offset, offset + limit)."""
    schema, batches = visible.row_batches(table, snapshot, gdpr=erased)
    return schema, _slice(batches, offset, limit)


@dataclass(frozen=True)
class RowStream:
    """The rows visible at a snapshot (None: the table has none yet), as Arrow batches."""

    snapshot: Snapshot | None
    schema: pa.Schema
    batches: Iterator[pa.RecordBatch]


def read_rows(
    session: Session,
    dataset_id: str,
    table: Table,
    as_of: str | None,
    offset: int,
    limit: int | None,
) -> RowStream:
    """The rows visible now or at `as_of`, sliced to [offset, offset + limit). A GDPR-deleted
    identity's older rows are hidden at every snapshot, those before the delete too."""
    snapshot = resolve_as_of(table, as_of)
    erased = gdpr.in_force(session, dataset_id, table, with_deletes_of=snapshot)
    schema, batches = row_batches(table, snapshot, offset, limit, erased)
    return RowStream(snapshot, schema, batches)


def _slice(
    batches: Iterator[pa.RecordBatch], offset: int, limit: int | None
) -> Iterator[pa.RecordBatch]:
    skip, left = offset, limit
    for batch in batches:
        if skip >= batch.num_rows:
            skip -= batch.num_rows
            continue
        batch = batch.slice(skip)
        skip = 0
        if left is not None:
            batch = batch.slice(0, left)
            left -= batch.num_rows
        if batch.num_rows:
            yield batch
        if left is not None and left <= 0:
            return
