"""The group committer: the holder of a dataset's commit lease commits every ready restatement.

Restatements that are ready together (of one kind) become one snapshot; each keeps its own
result. A group is first marked `committing` with its commit id, then committed with that id as
`icebatch.request-id`, then recorded. A committer that dies in between leaves the group
`committing`; the next holder commits it under the same id, and every attempt first looks that id
up in the snapshot log (on the table state the attempt is planned on), so a group that landed is
recorded, never committed twice. A commit that meets a new parent is planned again on it, never
replayed as it was.
"""

from __future__ import annotations

import logging
import time
import uuid
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
from app.jobs import service as jobs
from app.jobs.kinds import JobKind
from app.lake import commit as lake_commit
from app.lake import lease, pipeline, snapshots, visible
from app.lake.catalog import get_catalog
from app.lake.pipeline import Committed, OperationKind, Summary
from app.lake.tombstones import NewTombstone
from app.maintenance import service as maintenance
from app.models import (
    BatchStatus,
    Dataset,
    Restatement,
    RestatementKind,
    RestatementState,
)
from app.restatements import repository as restatements
from app.restatements import states
from workers import runtime
from workers.runtime import JobContext, PermanentJobError

log = logging.getLogger(__name__)
COMMIT_ATTEMPTS = 8
REQUEST_COUNT = "icebatch.request-count"
# a group's snapshot lists its requests' ids up to this many: every commit rewrites metadata.json
# with every retained snapshot's summary, so a list per snapshot as long as a burst's groups
# (hundreds of ids) would make each commit pay for the bursts before it; a larger group has
# its count, and each request its snapshot on its job (`result.snapshot_id`)
MAX_LISTED_REQUESTS = 8


def wait_until_committed(ctx: JobContext, restatement_id: str, dataset_id: str) -> None:
    """Return once the restatement is committed, committing it (and others) if need be.

    A committer that handed the lease to a maintenance job with groups left to commit takes it
    back once that job has committed, even when its own restatement is committed already: were
    it to leave, the groups left would wait for a worker slot to take a new message, behind
    the jobs queued meanwhile (at scale, seconds a burst: bench/RESULTS.md, "Costs at scale").
    Its own job was settled by its group's record then: it no longer checks the job's attempt,
    and waits as long as the maintenance job is at its commit stage (a dead one stops counting
    once its heartbeat is stale: `lease.maintenance_waiting`)."""
    last_beat, pause = time.monotonic(), 0.02
    waiting_since: float | None = last_beat  # until the lease is first ours (a metric)
    handed_over = False  # the last drain stopped for a maintenance job, with groups left
    while True:
        with session_scope() as session:
            state = restatements.state_of(session, restatement_id)
        committed = state == RestatementState.COMMITTED
        if committed and not handed_over:
            pass_on(dataset_id)
            return
        if state == RestatementState.FAILED:
            pass_on(dataset_id)
            raise PermanentJobError(f"restatement {restatement_id} failed")
        token = lease.acquire_unless_yielding(dataset_id)
        if token is not None:
            if waiting_since is not None:
                lease.LEASE_WAIT.labels("restate").observe(time.monotonic() - waiting_since)
                waiting_since = None
            try:
                handed_over = drain(dataset_id, token)
            finally:
                lease.release(dataset_id, token)
            pause = 0.02
            continue
        if time.monotonic() - last_beat > 1.0:
            if not committed:  # once it is, the job is over: the group's record settled it
                ctx.check_lease()
            last_beat = time.monotonic()
        time.sleep(pause)
        pause = min(pause * 2, 0.25)


def pass_on(dataset_id: str) -> None:
    """Before a committer leaves: when ready restatements of the dataset are left whose jobs
    ride on no message (carried: `app/restatements/service._enqueue`) and no queued job of a
    ready one has a message, send the oldest such job's message, so a worker drains them.

    A committer leaves once its own restatement is committed. A restatement carried by a job X
    whose restatement this committer's group took (its request raced the group's claim) is
    left ready when the drain handed the lease to a maintenance job (`drain`): X's worker finds
    X finished, and no message would come for it until the reconciler's forgotten-job pass,
    5 x `stale_after_seconds` (300 s by default) later."""
    with session_scope() as session:
        job = restatements.carried_without_carrier(session, dataset_id)
        if job is None:
            return
        log.info(
            "dataset %s: ready restatements left without a message; sending job %s's",
            dataset_id,
            job.id,
        )
        jobs.add_outbox(session, job)


def _load(dataset_id: str) -> Table:
    with session_scope() as session:
        dataset = session.get(Dataset, dataset_id)
        assert dataset is not None
        identifier = dataset.table_identifier
    return get_catalog().load_table(identifier)


def drain(dataset_id: str, token: int) -> bool:
    """Under the lease: finish interrupted groups, then commit ready groups until none is left,
    or until a maintenance job waits for the lease (it goes next; app/lake/lease.py): whether
    it stopped for one with ready restatements left. Between
    groups, a materialize job of the dataset queued for longer than
    `materialize_inline_after_seconds` is run here, under this lease: the worker's slots may all
    be held by committers draining a flood (a solo worker's one slot is this one), and the
    materializer's lag must not last as long as the flood."""
    table = _load(dataset_id)
    for commit_id in _interrupted(dataset_id):
        commit_group(table, dataset_id, token, commit_id)
    while not lease.maintenance_waiting(dataset_id):
        claimed = _claim_next_group(dataset_id)
        if claimed is None:
            return False
        commit_group(table, dataset_id, token, claimed)
        if _materialize_overdue(dataset_id, token):
            table = _load(dataset_id)  # the materializer's snapshot is the next parent
    log.info("dataset %s: handing the commit lease to a waiting maintenance job", dataset_id)
    with session_scope() as session:
        return restatements.any_ready(session, dataset_id)


# per dataset, the materialize job this process last found queued and when it first did (its
# own monotonic clock: a job's created_at is its creator's clock, which may be skewed)
_queued_since: dict[str, tuple[str, float]] = {}


def _materialize_overdue(dataset_id: str, token: int) -> bool:
    """Run the dataset's materialize job under `token` when this process has seen it queued for
    `materialize_inline_after_seconds`; whether one ran."""
    after = get_settings().materialize_inline_after_seconds
    if after <= 0:
        return False
    with session_scope() as session:
        job = maintenance.queued_materialize(session, dataset_id)
        job_id = job.id if job is not None else None
    if job_id is None:
        _queued_since.pop(dataset_id, None)
        return False
    now = time.monotonic()
    seen, since = _queued_since.get(dataset_id, (None, now))
    if seen != job_id:
        _queued_since[dataset_id] = (job_id, now)
        since = now
    if now - since < after:
        return False
    _queued_since.pop(dataset_id, None)
    log.info(
        "dataset %s: materialize job %s overdue, running it between groups", dataset_id, job_id
    )
    runtime.run_inline(JobKind.MATERIALIZE, job_id, token)
    return True


def _interrupted(dataset_id: str) -> list[str]:
    """Commit ids of groups a previous committer marked `committing` and did not record.

    Such a group keeps its commit id for life: whether it landed is decided by the snapshot log
    (checked before every attempt), so it can never be committed twice under two ids.
    """
    with session_scope() as session:
        return restatements.interrupted_commit_ids(session, dataset_id)


def _claim_next_group(dataset_id: str) -> str | None:
    """Mark the next group `committing` under a new commit id: the oldest ready restatement's
    kind, and every ready one of that kind (capped in tombstones)."""
    cap = get_settings().max_group_tombstones
    with session_scope() as session:
        rows = restatements.ready(session, dataset_id)
        if not rows:
            return None
        kind, count = rows[0].kind, 0
        group: list[str] = []
        for row in rows:
            if row.kind != kind:
                continue
            if group and count + len(row.ids) > cap:
                break
            group.append(row.id)
            count += len(row.ids)
        commit_id = f"group-{uuid.uuid4()}"
        restatements.claim(session, group, commit_id)
    return commit_id


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
