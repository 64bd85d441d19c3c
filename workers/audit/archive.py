"""The move of old audit events to the org's Iceberg table (`app/lake/audit.py`), run by the
beat's pruning pass (`workers.scheduler.prune_task`, after `app.pruning.service.prune`): moved,
never lost, never twice. No job and no commit lease: the table is the org's own, written by
this pass only, and every append is fenced on the table's mark.

Per org, the events older than `audit_retention_days` go in `seq` order, a prefix of the trail
at a time (`audit_archive_chunk_rows` events): one Iceberg append carrying the chunk's last
`seq` (`icebatch.audit.through`) and the request id `audit-<org>-<through>` (the commit
pipeline's once-only check), then, in one SQL transaction, the mark (`audit_archives`) and the
DELETE of the rows at or below it. The table is the truth: a move that died between its append
and its DELETE is finished by the next pass (the table's mark above the store's), and a move
that finds the table moved by another starts over from the table's mark. SQL and the table
never hold the same `seq` for long and never miss one: `GET /v1/audit` lists both
(`app/audit/service.page`).
"""

from __future__ import annotations

import contextlib
import logging
from datetime import datetime, timedelta

import pyarrow as pa
from prometheus_client import Counter
from pydantic import BaseModel
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.table import Table

from app import clock
from app.audit import repository
from app.config import Settings, get_settings
from app.db import session_scope
from app.lake import audit as lake
from app.lake import pipeline
from app.lake import transaction as lake_transaction
from app.lake.catalog import get_catalog
from app.lake.commit import ParentMoved
from app.lake.pipeline import Committed, OperationKind, Summary

log = logging.getLogger(__name__)
MOVED = Counter(
    "icebatch_audit_events_moved",
    "Audit events moved from the metadata store to their org's Iceberg table",
)
# an event moves once this old at least, whatever the setting: its `seq` was given at INSERT,
# and a transaction still open with a lower one must never commit below the mark
SETTLE = timedelta(minutes=1)
KEEP_SNAPSHOTS = 10  # the table's history: every snapshot is an append of rows it still holds


class MovedElsewhere(Exception):
    """The table's mark is not the one this chunk starts after: another move got there."""


class Moved(BaseModel):
    snapshot_id: int
    deleted: int


def settle(org: str, through: int) -> int:
    """The table holds every event through `through`: the mark, and the SQL rows deleted."""
    with session_scope() as session:
        return repository.archived(session, org, through)


class AuditAppend:
    """`pipeline.Operation`: one chunk of an org's trail appended to its audit table, fenced on
    the table's mark (the chunk must start right after it)."""

    kind = OperationKind.AUDIT_ARCHIVE

    def __init__(self, org: str, rows: pa.Table, after: int, through: int) -> None:
        self.org, self.rows, self.after, self.through = org, rows, after, through
        self.request_id = f"audit-{org}-{through}"

    def plan(self, table: Table) -> pa.Table:
        if lake.archived_through(table) != self.after:
            raise MovedElsewhere(self.org)
        return self.rows

    def summary(self, plan: pa.Table) -> Summary:
        return Summary(self.kind, self.request_id, extra={lake.THROUGH: str(self.through)})

    def commit(self, table: Table, plan: pa.Table, summary: Summary) -> Committed:
        if lake.archived_through(table) != self.after:
            raise MovedElsewhere(self.org)
        try:
            lake_transaction.append(table, plan, summary.properties())
        except CommitFailedException as exc:  # one attempt (the table's retries are 0)
            raise ParentMoved(str(exc)) from exc
        snapshot = table.current_snapshot()
        assert snapshot is not None
        return Committed.of(snapshot)

    def discard(self, plan: pa.Table) -> None:
        """Nothing: a failed append's files are unreferenced (the table's orphans)."""

    def record(self, committed: Committed, plan: pa.Table | None) -> Moved:
        return Moved(snapshot_id=committed.snapshot_id, deleted=settle(self.org, self.through))

    def nothing(self) -> Moved:
        raise AssertionError("a chunk always has its events")


def move_org(org: str, before: datetime, chunk: int) -> int:
    """Move the org's events older than `before` (a prefix of its trail); events moved."""
    catalog = get_catalog()
    table = lake.ensure(catalog, org)
    landed = lake.archived_through(table)
    with session_scope() as session:
        marked = repository.mark(session, org)
    if landed > marked:  # a move died after its append: finish it
        log.info("audit archive of %s: finishing the move through %s", org, landed)
        settle(org, landed)
    done = max(landed, marked)
    moved = 0
    while True:
        with session_scope() as session:
            events = repository.oldest(session, org, done, before, chunk)
        if not events:
            break
        through = events[-1]["seq"]
        try:
            pipeline.run(
                AuditAppend(org, lake.to_arrow(events), done, through),
                lambda: lake.ensure(catalog, org),
                job=None,
                budget=pipeline.Budget(replans=1, attempts=3),
            )
        except (MovedElsewhere, pipeline.GaveUp):
            log.info("audit archive of %s: moved by another pass meanwhile", org)
            break
        moved += len(events)
        done = through
        if len(events) < chunk:
            break
    expire_history(lake.ensure(catalog, org))
    return moved


def expire_history(table: Table, keep: int = KEEP_SNAPSHOTS) -> int:
    """Expire all but the newest `keep` snapshots once twice as many exist (each append
    rewrites `metadata.json` with every snapshot); data files stay (the current snapshot holds
    every row), the expired snapshots' manifest lists go. Best effort: a race skips it."""
    history = sorted(table.snapshots(), key=lambda s: s.sequence_number or 0)
    if len(history) < 2 * keep:
        return 0
    old = history[:-keep]
    try:
        table.maintenance.expire_snapshots().by_ids([s.snapshot_id for s in old]).commit()
    except CommitFailedException:
        return 0
    for snapshot in old:
        with contextlib.suppress(OSError):  # already gone
            table.io.delete(snapshot.manifest_list)
    return len(old)


def move(before: datetime, chunk: int) -> int:
    """Move every org's events older than `before`; events moved."""
    with session_scope() as session:
        orgs = repository.orgs_with_events_before(session, before)
    return sum(move_org(org, before, chunk) for org in orgs)


def move_old(settings: Settings | None = None) -> int:
    """The pass: every org's events older than `audit_retention_days` (by the store's clock)
    moved, `audit_archive_chunk_rows` per append; events moved."""
    settings = settings or get_settings()
    with session_scope() as session:
        now = clock.db_now(session)
    before = min(now - timedelta(days=settings.audit_retention_days), now - SETTLE)
    moved = move(before, settings.audit_archive_chunk_rows)
    if moved:
        MOVED.inc(moved)
        log.info("moved %s audit events to their orgs' Iceberg tables", moved)
    return moved
