"""The dumper: a tenant's accepted chunks appended, in bulk, to the staging table.

One run per tenant at a time (the tenant's staging lease). The run reads the tenant's staged
watermark from the staging table's snapshots (the truth: `icebatch.cdc.staged.<tenant>` is
committed with the rows), marks the chunks at or below it staged (a previous run died after its
commit), then appends the next chunks in seq order, up to `cdc_max_events_per_run` events per
commit, until it has staged what was accepted when it began (the next run, queued by the CDC
scheduler's next pass, takes what came since). Appends of different tenants never conflict; a
lost compare-and-swap is retried on the new parent.
"""

from __future__ import annotations

import logging
from datetime import timedelta

import pyarrow as pa
from pydantic import BaseModel
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.table import Table

from app import clock
from app.cdc import repository, service
from app.config import get_settings
from app.db import session_scope
from app.jobs.kinds import JobKind
from app.jobs.results import CdcStageResult
from app.jobs.stages import Stage
from app.lake import pipeline
from app.lake import transaction as lake_transaction
from app.lake.catalog import get_catalog
from app.lake.cdc import EVENT_ARROW, STAGED, ensure_staging, staged_key, staged_seq
from app.lake.commit import ParentMoved
from app.lake.pipeline import Committed, OperationKind, Summary
from app.models import CdcTenant
from workers.cdc.tenant_lock import tenant_lock
from workers.runtime import JobContext

log = logging.getLogger(__name__)
COMMIT_ATTEMPTS = 5
STAGING_HISTORY = timedelta(minutes=5)
EXPIRE_BATCH = 50  # snapshots: one expiry commit per this many appends at most


def mark_staged(org: str, through: int) -> None:
    """Chunks up to `through` are in the staging table: drop their bodies, move the mirror."""
    with session_scope() as session:
        repository.mark_staged(session, org, through, clock.db_now(session))


def _pending(org: str, after: int, budget: int) -> list[tuple[int, int, bytes]]:
    """(first_seq, last_seq, body) of the next chunks, in order, within `budget` events."""
    out: list[tuple[int, int, bytes]] = []
    taken = 0
    with session_scope() as session:
        rows = repository.unstaged_chunks(session, org, after)
    expected = after + 1
    for first, last, count, body in rows:
        if first != expected or body is None or (out and taken + count > budget):
            break
        out.append((first, last, body))
        taken += count
        expected = last + 1
    return out


class StageAppend:
    """`pipeline.Operation` of one staging append: the chunks through `last`, with the tenant's
    staged watermark in the snapshot (the dumper's truth after a crash). Appends of different
    tenants commute: one that lost the compare-and-swap is made again on the new parent."""

    kind = OperationKind.CDC_STAGE

    def __init__(self, org: str, rows: pa.Table, last: int, request_id: str) -> None:
        self.org, self.rows, self.last, self.request_id = org, rows, last, request_id

    def plan(self, table: Table) -> pa.Table:
        return self.rows

    def summary(self, plan: pa.Table) -> Summary:
        return Summary(self.kind, self.request_id, extra={staged_key(self.org): str(self.last)})

    def commit(self, table: Table, plan: pa.Table, summary: Summary) -> Committed:
        try:
            lake_transaction.append(table, plan, summary.properties())
        except CommitFailedException as exc:
            log.info("staging append of %s lost a race; again", self.org)
            raise ParentMoved(str(exc)) from exc
        snapshot = table.current_snapshot()
        assert snapshot is not None
        return Committed.of(snapshot)

    def discard(self, plan: pa.Table) -> None:
        """Nothing: a failed append's files are the orphan cleanup's."""

    def record(self, committed: Committed, plan: pa.Table | None) -> Staged:
        mark_staged(self.org, self.last)
        return Staged(snapshot_id=committed.snapshot_id)

    def nothing(self) -> Staged:
        raise AssertionError("an append always has its chunks")


class Staged(BaseModel):
    snapshot_id: int


def _append(ctx: JobContext, token: int, org: str, rows: pa.Table, last: int) -> None:
    """Append the chunks through `last` through the pipeline, under the tenant's lock."""
    pipeline.run(
        StageAppend(org, rows, last, f"{ctx.request_id}:{ctx.job_id}:{last}"),
        pipeline.Tables(lambda: ensure_staging(get_catalog()), reuse_planned=True),
        job=ctx,
        lease=pipeline.Lease(service.lease_key("cdcstage", org), held=token),
        budget=pipeline.Budget(replans=1, attempts=COMMIT_ATTEMPTS),
    )


def expire_history(keep: timedelta = STAGING_HISTORY, batch: int = EXPIRE_BATCH) -> int:
    """Expire staging snapshots older than `keep`, once at least `batch` of them can go: every
    append rewrites the table metadata with all snapshots, so history must stay short. The
    current snapshot stays, and so does each tenant's newest snapshot that carries its staged
    watermark (the dumper's truth after a crash, whenever its next run comes). The data files
    stay (the table is append-only: the current snapshot holds them all). Best effort: a race
    with another tenant's append skips it until the next run."""
    staging = ensure_staging(get_catalog())
    current = staging.current_snapshot()
    keepers = {current.snapshot_id} if current is not None else set()
    marked: set[str] = set()
    for snapshot in sorted(staging.snapshots(), key=lambda s: s.sequence_number or 0, reverse=True):
        props = snapshot.summary.additional_properties if snapshot.summary else {}
        keys = {k for k in props if k.startswith(STAGED)} - marked
        if keys:
            keepers.add(snapshot.snapshot_id)
            marked |= keys
    cutoff = clock.now() - keep
    old = [
        s.snapshot_id
        for s in staging.snapshots()
        if s.timestamp_ms < cutoff.timestamp() * 1000 and s.snapshot_id not in keepers
    ]
    if len(old) < batch:
        return 0
    try:
        staging.maintenance.expire_snapshots().by_ids(old).commit()
    except CommitFailedException:
        return 0
    return len(old)


def stage(ctx: JobContext) -> CdcStageResult:
    org = ctx.org
    settings = get_settings()
    ctx.set_stage(Stage.LOCK, 0.02)
    with tenant_lock(ctx, service.lease_key("cdcstage", org), wait_seconds=120) as token:
        staging = ensure_staging(get_catalog())
        with session_scope() as session:
            tenant = session.get(CdcTenant, org)
            if tenant is None:
                return CdcStageResult(staged=0)
            mirrored, accepted = tenant.staged_seq, tenant.accepted_seq
        committed = staged_seq(staging, org)
        done = max(mirrored, committed or 0)
        mark_staged(org, done)
        staged = 0
        ctx.set_stage(Stage.APPEND, 0.05)
        while done < accepted:  # what was accepted when the run began: the scheduler's next
            # pass queues the next run, so a tenant posting without pause never holds a slot
            # (a run that followed its new chunks for 73 s left the processors no slot)
            chunks = _pending(org, done, settings.cdc_max_events_per_run)
            if not chunks:
                break
            table = pa.concat_tables(
                [service.from_ipc(body).cast(EVENT_ARROW) for _, _, body in chunks]
            )
            last = chunks[-1][1]
            _append(ctx, token, org, table, last)
            staged += table.num_rows
            done = last
            ctx.set_stage(Stage.APPEND, min(0.95, done / max(accepted, 1)))
        expired = expire_history()
    with session_scope() as session:
        tenant = session.get(CdcTenant, org)
        if tenant is not None and tenant.raw_dataset_id is not None:
            config = service.config_of(tenant)
            if tenant.staged_seq - tenant.processed_seq >= config.backlog_threshold:
                service.ensure_job(session, org, JobKind.CDC_PROCESS, tenant.raw_dataset_id)
    return CdcStageResult(staged=staged, staged_through=done, snapshots_expired=expired)
