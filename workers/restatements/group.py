"""One restatement group's commit: its tombstones (and a replay's files) in one snapshot, then
its record on every member. The group committer (`committer.py`) claims groups and runs them
under the dataset's commit lease.

A group is first marked `committing` with its commit id, then committed with that id as
`icebatch.request-id`, then recorded. Every attempt first looks that id up in the snapshot log
(on the table state the attempt is planned on), so a group that landed by another committer's
hand is recorded, never committed twice; a commit that meets a new parent is planned again on
it, never replayed as it was.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from pydantic import BaseModel
from pyiceberg.manifest import DataFile
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot
from sqlalchemy.orm import Session

from app import clock
from app.batches import service as batch_service
from app.config import get_settings
from app.db import session_scope
from app.lake import commit as lake_commit
from app.lake import lease, pipeline, snapshots, visible
from app.lake.pipeline import Committed, OperationKind, Summary
from app.lake.tombstones import NewTombstone
from app.maintenance import service as maintenance
from app.models import BatchStatus, Dataset, Restatement, RestatementKind
from app.restatements import repository as restatements
from app.restatements import states
from workers import runtime

log = logging.getLogger(__name__)
COMMIT_ATTEMPTS = 8
REQUEST_COUNT = "icebatch.request-count"
# a group's snapshot lists its requests' ids up to this many: every commit rewrites metadata.json
# with every retained snapshot's summary, so a list per snapshot as long as a burst's groups
# (hundreds of ids) would make each commit pay for the bursts before it; a larger group has
# its count, and each request its snapshot on its job (`result.snapshot_id`)
MAX_LISTED_REQUESTS = 8


class GroupCommit:
    """`pipeline.Operation` of a restatement group: its tombstones (and a replay's files) in one
    snapshot, fenced on the parent; recorded for every member."""

    kind = OperationKind.RESTATE

    def __init__(self, table: Table, commit_id: str, members: list[dict[str, Any]]) -> None:
        self.table, self.request_id, self.members = table, commit_id, members
        self.began = self.committed = time.monotonic()
        self.group: Group | None = None

    def plan(self, table: Table) -> Group:
        if self.group is None:  # the same group on any parent: the tombstone list is built
            self.group = _group(table, self.request_id, self.members)  # at the commit
        return self.group

    def summary(self, plan: Group) -> Summary:
        return plan.summary

    def commit(self, table: Table, plan: Group, summary: Summary) -> Committed:
        snapshot = lake_commit.commit(
            table, files=plan.files, new_tombstones=plan.tombstones, properties=summary.properties()
        )
        self.committed = time.monotonic()
        return Committed.of(snapshot)

    def discard(self, plan: Group) -> None:
        """Nothing: a replay's files belong to its restatement until a group commits them."""

    def record(self, committed: Committed, plan: Group | None) -> GroupRecorded:
        table = self.table  # current: the pipeline refreshed it or committed through it
        snapshot = table.snapshot_by_id(committed.snapshot_id)
        assert snapshot is not None
        _record(table, [m["id"] for m in self.members], snapshot)
        if committed.recovered:
            log.info(
                "group %s already landed as snapshot %s", self.request_id, snapshot.snapshot_id
            )
        else:
            log.info(
                "group %s committed as snapshot %s for requests %s (commit %.3fs, record %.3fs)",
                self.request_id,
                snapshot.snapshot_id,
                plan.listed if plan else "",
                self.committed - self.began,
                time.monotonic() - self.committed,
            )
        return GroupRecorded(snapshot_id=snapshot.snapshot_id)

    def nothing(self) -> GroupRecorded:
        raise AssertionError("a group always has something to commit")


class GroupRecorded(BaseModel):
    snapshot_id: int


@dataclass(frozen=True)
class Group:
    files: list[DataFile]
    tombstones: list[NewTombstone]
    summary: Summary
    listed: str  # the requests, for the log


def _group(table: Table, commit_id: str, members: list[dict[str, Any]]) -> Group:
    kind = members[0]["kind"]
    schema = table.schema()
    evict_by = None
    if kind == RestatementKind.GDPR:
        evict_by = clock.now() + timedelta(days=get_settings().gdpr_evict_days)
    new = [
        NewTombstone(
            schema.find_field(m["column"]).field_id,
            value,
            m["request_id"],
            kind,
            m["reason"],
            evict_by,
        )
        for m in members
        for value in m["ids"]
    ]
    files = lake_commit.data_files(table, [p for m in members for p in m["data_files"]])
    request_ids = sorted({m["request_id"] for m in members})
    extra = {REQUEST_COUNT: str(len(members))}
    if len(request_ids) <= MAX_LISTED_REQUESTS:
        extra[snapshots.REQUEST_IDS] = ",".join(request_ids)
    batch_ids = [m["batch_id"] for m in members if m["batch_id"] and kind == RestatementKind.REPLAY]
    summary = Summary(kind, commit_id, batch_ids[0] if len(batch_ids) == 1 else None, extra)
    listed = extra.get(snapshots.REQUEST_IDS) or f"({len(members)}, not listed)"
    return Group(files, new, summary, listed)


def commit_group(table: Table, dataset_id: str, token: int, commit_id: str) -> Snapshot:
    """Commit the group `commit_id` once, through the pipeline under the lease `token`: before
    each attempt, the snapshot log is checked on the very table state the attempt is planned on
    (and fenced to by the catalog's compare-and-swap), so a group that landed by another
    committer's hand is recorded, not committed again."""
    with session_scope() as session:
        members = [_member(r) for r in restatements.group(session, commit_id)]
    if not members:
        raise RuntimeError(f"group {commit_id} has no member left to commit")
    began = time.monotonic()
    recorded = pipeline.run(
        GroupCommit(table, commit_id, members),
        pipeline.Tables(lambda: table, reload=lambda t: t.refresh(), reuse_planned=True),
        job=None,
        lease=pipeline.Lease(dataset_id, held=token),
        budget=pipeline.Budget(replans=1, attempts=COMMIT_ATTEMPTS),
    )
    # a group is the longest a maintenance job waiting for the lease waits (`drain` hands the
    # lease over between groups): its hold is the one to compare a rewrite's commit with
    lease.LEASE_HELD.labels("restate").observe(time.monotonic() - began)
    snapshot = table.snapshot_by_id(recorded.snapshot_id)
    assert snapshot is not None
    return snapshot


def _member(r: Restatement) -> dict[str, Any]:
    return {
        "id": r.id,
        "kind": r.kind,
        "column": r.column,
        "ids": list(r.ids),
        "request_id": r.request_id,
        "reason": r.reason,
        "batch_id": r.batch_id,
        "data_files": list(r.data_files or []),
    }


def _record(table: Table, ids: list[str], snapshot: Snapshot) -> None:
    """Mark the group committed, move its batches, count hidden rows, finish queued jobs."""
    parent = (
        table.snapshot_by_id(snapshot.parent_snapshot_id)
        if snapshot.parent_snapshot_id is not None
        else None
    )
    now = snapshots.committed_at(snapshot)
    with session_scope() as session:
        rows = restatements.committing(session, ids)
        hidden = _hidden_counts(table, parent, [_member(r) for r in rows])
        dataset_id = None
        settled = []
        for row in rows:
            dataset_id = row.dataset_id
            states.move(row, states.COMMITTED)
            row.snapshot_id = snapshot.snapshot_id
            row.parent_snapshot_id = snapshot.parent_snapshot_id
            row.sequence_number = snapshot.sequence_number
            row.tombstones_written = len(row.ids)
            row.rows_hidden = hidden[row.id]
            row.committed_at = now
            _move_batches(session, row, snapshot)
            if row.job_id is not None:
                settled.append((row.job_id, outcome(row)))
        runtime.settle_many(session, settled)
        dataset = session.get(Dataset, dataset_id) if dataset_id else None
        if dataset is not None:  # the new tombstones become position deletes, asynchronously
            maintenance.request_materialize(session, dataset)


def _hidden_counts(
    table: Table, parent: Snapshot | None, members: list[dict[str, Any]]
) -> dict[str, int]:
    """Per restatement: rows visible at the parent that its tombstones hide."""
    by_column: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for m in members:
        by_column[m["column"]].append(m)
    counts: dict[str, int] = {}
    for column, group in by_column.items():
        values = sorted({v for m in group for v in m["ids"]})
        per_value = visible.count_by_value(table, parent, column, values)
        for m in group:
            counts[m["id"]] = sum(per_value.get(v, 0) for v in m["ids"])
    return counts


def _move_batches(session: Session, row: Restatement, snapshot: Snapshot) -> None:
    if row.kind == RestatementKind.REVERT:
        batch_service.restated(session, row.id, list(row.ids), BatchStatus.REVERTED, snapshot)
    elif row.kind == RestatementKind.REPLAY:
        assert row.batch_id is not None
        row_count = (row.result or {}).get("row_count")
        batch_service.succeed(session, row.batch_id, snapshot=snapshot, row_count=row_count)
        batch_service.restated(session, row.id, list(row.ids), BatchStatus.REPLACED, snapshot)


def outcome(row: Restatement) -> dict[str, Any]:
    """A restatement's job result."""
    return {
        "restatement_id": row.id,
        "kind": row.kind,
        "snapshot_id": row.snapshot_id,
        "sequence_number": row.sequence_number,
        "commit_id": row.commit_id,
        "tombstones_written": row.tombstones_written,
        "rows_hidden": row.rows_hidden,
        "batch_id": row.batch_id,
        "predecessors": row.ids if row.kind == RestatementKind.REPLAY else None,
    }
