"""Snapshot-log lookups shared by the API and the workers."""

from __future__ import annotations

from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

REQUEST_ID = "icebatch.request-id"
BATCH_ID = "icebatch.batch-id"
OPERATION = "icebatch.operation"
# rewrite snapshots (vacuum, compaction): the snapshot the rewrite read; its new files carry that
# snapshot's sequence number as their data sequence number
START_SNAPSHOT = "icebatch.start-snapshot-id"
START_SEQUENCE = "icebatch.start-sequence-number"
# values of OPERATION: those that commit new batches, and those that only re-write live rows
APPENDING = frozenset({"ingest", "replay", "cdc"})
REWRITING = frozenset({"vacuum", "compact"})


def summary_value(snapshot: Snapshot, key: str) -> str | None:
    summary = snapshot.summary
    return summary.additional_properties.get(key) if summary else None


def find_by_request_id(table: Table, request_id: str) -> Snapshot | None:
    """The snapshot a request committed, if any: how a retried job sees its work is done."""
    for snapshot in table.snapshots():
        if summary_value(snapshot, REQUEST_ID) == request_id:
            return snapshot
    return None


def added_records(snapshot: Snapshot) -> int:
    summary = snapshot.summary
    return int(summary.additional_properties.get("added-records", 0)) if summary else 0
