"""The expire job: snapshot expiry by the dataset's policy, then orphan cleanup, then erasure.

Phases (the job's stages): `plan` (the retained set: policy, consumer pins, running jobs' start
snapshots, tombstone-list chains), `expire` (Iceberg's Java API removes the snapshots from the
table metadata; the files only they referenced are deleted here, tombstone files included, since
Iceberg knows nothing of those), `orphans` (unreferenced files older than the orphan age, and
staged replay files of restatements no longer in flight), then the GDPR erasure check.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from pyiceberg.table import Table
from sqlalchemy import delete

from app import clock
from app.config import get_settings
from app.db import session_scope
from app.jobs import repository as jobs
from app.jobs.kinds import TaskName
from app.jobs.results import ExpireResult
from app.lake import retention
from app.lake.catalog import get_catalog
from app.models import Dataset, ExpiredSnapshot
from app.privacy.erasure import check_erasure
from app.retention import service
from workers.celery_app import job_task
from workers.runtime import JobContext, PermanentJobError

log = logging.getLogger(__name__)


def _job_pins(dataset_id: str, own_job: str) -> list[datetime]:
    """Start times of the dataset's other running jobs (a vacuum, an export): the snapshot
    current when they started, and every later one, stay."""
    with session_scope() as session:
        return jobs.running_since(session, dataset_id, but=own_job)


def expire(ctx: JobContext) -> ExpireResult:
    settings = get_settings()
    now = clock.now()
    ctx.set_stage("plan", 0.05)
    with session_scope() as session:
        dataset = session.get(Dataset, ctx.subject_id)
        if dataset is None:
            raise PermanentJobError(f"dataset {ctx.subject_id} no longer exists")
        dataset_id, identifier = dataset.id, dataset.table_identifier
        policy = service.policy_for(dataset)
        pins = service.pins(session, dataset_id)
        in_flight, finished = service.staged_batches(session, dataset_id)
    catalog = get_catalog()
    table = catalog.load_table(identifier)
    job_pins = [
        retention.Pin(f"job-{i}", seq, now)
        for i, seq in enumerate(_sequence_at(table, t) for t in _job_pins(dataset_id, ctx.job_id))
    ]
    plan = retention.plan_retention(
        table,
        policy,
        [*pins, *job_pins],
        now=now,
        pin_max_age_seconds=settings.consumer_pin_max_age_seconds,
    )
    existing = {s.snapshot_id for s in table.snapshots()}
    with session_scope() as session:  # rows of an expiry whose commit never landed
        session.execute(
            delete(ExpiredSnapshot).where(
                ExpiredSnapshot.dataset_id == dataset_id,
                ExpiredSnapshot.snapshot_id.in_(existing - {s.snapshot_id for s in plan.expired}),
            )
        )

    ctx.set_stage("expire", 0.2)
    index = retention.FileIndex(table)
    files_deleted = bytes_deleted = 0
    expired_ids = [s.snapshot_id for s in plan.expired]
    if expired_ids:
        candidates = index.referenced(plan.expired)
        with session_scope() as session:
            for snapshot in plan.expired:
                session.merge(
                    ExpiredSnapshot(
                        dataset_id=dataset_id,
                        snapshot_id=snapshot.snapshot_id,
                        sequence_number=snapshot.sequence_number or 0,
                        committed_at=datetime.fromtimestamp(snapshot.timestamp_ms / 1000, UTC),
                        expired_at=now,
                        job_id=ctx.job_id,
                    )
                )
        ctx.check_lease()
        from workers.spark import iceberg_java
        from workers.spark.session import get_spark

        spark = get_spark()
        iceberg_java.expire_snapshots(
            spark, iceberg_java.load_table(spark, identifier), expired_ids
        )
        table = catalog.load_table(identifier)
        left = {s.snapshot_id for s in table.snapshots()} & set(expired_ids)
        if left:
            raise RuntimeError(f"snapshots {sorted(left)} are still in the table after expiry")
        readable = index.referenced(table.snapshots(), readable=True)
        # a retained vacuum snapshot whose parent just expired: its vacuumed-tombstones file
        # (it names the erased identities) can no longer be read, and goes now, not with the
        # orphans a day later (it held GDPR erasure back until then)
        unreadable = index.referenced(table.snapshots()) - readable
        dead = (candidates | unreadable) - readable
        sized = {
            **retention.sizes(table, dead),
            **{p: index.sizes[p] for p in dead if p in index.sizes},
        }
        for path in retention.delete_files(table, sorted(dead)):
            files_deleted += 1
            bytes_deleted += sized.get(path, 0)

    ctx.set_stage("orphans", 0.6)
    with session_scope() as session:
        cutoff = service.orphan_cutoff(
            session, dataset_id, policy.orphan_age_seconds, clock.now(), own_job=ctx.job_id
        )
    referenced = index.referenced(table.snapshots(), readable=True)
    referenced |= retention.metadata_in_use(table)
    orphans = retention.orphans(
        table, referenced, cutoff=cutoff, in_flight=in_flight, finished=finished
    )
    sizes = {o.path: o.size for o in orphans}
    removed = retention.delete_files(table, [o.path for o in orphans])
    orphan_bytes = sum(sizes[p] for p in removed)

    ctx.set_stage("erasure", 0.95)
    erased = check_erasure(dataset_id)
    return ExpireResult(
        retained=[s.snapshot_id for s in plan.retained],
        expired=expired_ids,
        files_deleted=files_deleted + len(removed),
        bytes_deleted=bytes_deleted + orphan_bytes,
        orphans_deleted=len(removed),
        pinned_by=plan.pinned_by,
        ignored_pins=plan.ignored_pins,
        erased_restatements=erased,
    )


def _sequence_at(table: Table, when: datetime) -> int:
    """The sequence number of the snapshot current at `when` (0 before the first)."""
    at_ms = when.timestamp() * 1000
    older = [s for s in table.snapshots() if s.timestamp_ms <= at_ms]
    if not older:
        return 0
    return max(s.sequence_number or 0 for s in older)


expire_task = job_task(TaskName.EXPIRE, expire)
