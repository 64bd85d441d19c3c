"""Snapshot-log lookups shared by the API and the workers."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated

from pydantic import Field
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

# a snapshot id is a Java long: a larger number names no snapshot and fits no SQL BIGINT (422,
# not a driver error)
MIN_SNAPSHOT_ID, MAX_SNAPSHOT_ID = -(2**63), 2**63 - 1
SnapshotId = Annotated[int, Field(ge=MIN_SNAPSHOT_ID, le=MAX_SNAPSHOT_ID)]
REQUEST_ID = "icebatch.request-id"
# a group commit's REQUEST_ID is its own commit id: the requests it carries, comma-separated
REQUEST_IDS = "icebatch.request-ids"
BATCH_ID = "icebatch.batch-id"
OPERATION = "icebatch.operation"
# rewrite snapshots (vacuum, compaction): the snapshot the rewrite read; its new files carry that
# snapshot's sequence number as their data sequence number
START_SNAPSHOT = "icebatch.start-snapshot-id"
START_SEQUENCE = "icebatch.start-sequence-number"
# values of OPERATION: those that commit new batches, and those that only re-write live rows
APPENDING = frozenset({"ingest", "replay", "cdc"})
REWRITING = frozenset({"vacuum", "compact"})


def own_properties(snapshot: Snapshot | None) -> Mapping[str, str]:
    """The summary properties `snapshot` itself set (none inherited; none without a snapshot)."""
    summary = snapshot.summary if snapshot is not None else None
    return summary.additional_properties if summary is not None else {}


def summary_value(snapshot: Snapshot, key: str) -> str | None:
    """One summary property of `snapshot` itself, if it set it."""
    return own_properties(snapshot).get(key)


def parse_time(text: str) -> datetime:
    """An ISO 8601 time (`Z` allowed; no offset means UTC) for naming a snapshot by time.

    Raises ValueError when `text` is not one.
    """
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def committed_at(snapshot: Snapshot) -> datetime:
    """When `snapshot` was committed, by the clock of the engine that wrote it: the time an
    `as_of` names it by (a batch's `completed_at` is this, so `as_of=completed_at` reads it)."""
    return datetime.fromtimestamp(snapshot.timestamp_ms / 1000, UTC)


def snapshot_at(table: Table, moment: datetime) -> Snapshot | None:
    """The latest snapshot committed at or before `moment` (None: before the first)."""
    millis = int(moment.timestamp() * 1000)
    before = [s for s in table.snapshots() if s.timestamp_ms <= millis]
    if not before:
        return None
    return max(before, key=lambda s: (s.timestamp_ms, s.sequence_number or 0))


def find_by_request_id(table: Table, request_id: str) -> Snapshot | None:
    """The snapshot a request committed, if any: how a retried job sees its work is done."""
    for snapshot in table.snapshots():
        if summary_value(snapshot, REQUEST_ID) == request_id:
            return snapshot
    return None


def added_records(snapshot: Snapshot) -> int:
    """How many rows `snapshot` added (Iceberg's own summary count)."""
    return int(own_properties(snapshot).get("added-records", 0))
