"""The pruning's SQL: each function deletes at most `limit` rows of its rule (plus what goes
with them) and returns how many it deleted per table. The rules themselves, and why each row
they keep is kept, are `app/pruning/service.py`'s."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, case, delete, exists, func, not_, or_, select
from sqlalchemy.orm import Session

from app.models import (
    Batch,
    BatchStatus,
    CdcChunk,
    CdcTenant,
    Consumer,
    ExpiredSnapshot,
    ForgottenSnapshots,
    IdempotencyKey,
    Job,
    JobState,
    OutboxMessage,
    PrivacyJob,
    Restatement,
    RestatementKind,
    RestatementState,
)

FINISHED = (JobState.SUCCEEDED, JobState.FAILED)
LIVE = (JobState.QUEUED, JobState.RUNNING)
IN_FLIGHT = (BatchStatus.STAGED, BatchStatus.PROCESSING)


def _live_job() -> ColumnElement[bool]:
    """A queued or running job works on the restatement."""
    return exists().where(Job.subject_id == Restatement.id, Job.state.in_(LIVE))


def _delete_jobs(session: Session, job_ids: Sequence[str]) -> tuple[int, int]:
    """The jobs and their outbox rows (foreign-key cascades are off on SQLite): (jobs, outbox)."""
    if not job_ids:
        return 0, 0
    outbox = session.execute(delete(OutboxMessage).where(OutboxMessage.job_id.in_(job_ids)))
    jobs = session.execute(delete(Job).where(Job.id.in_(job_ids)))
    return jobs.rowcount, outbox.rowcount


def _delete_first(
    session: Session,
    entity: type[OutboxMessage | IdempotencyKey | CdcChunk],
    ids: Select[Any],
    limit: int,
) -> int:
    """Delete the first `limit` rows of `entity` whose ids `ids` selects; how many went."""
    chosen = list(session.scalars(ids.limit(limit)))
    if not chosen:
        return 0
    return session.execute(delete(entity).where(entity.id.in_(chosen))).rowcount


def delivered_outbox(session: Session, before: datetime, limit: int) -> int:
    """Outbox rows published before `before` whose job is over: nothing reads them again (the
    reconciler only looks at unpublished rows and at queued jobs' latest ones)."""
    ids = select(OutboxMessage.id).where(
        OutboxMessage.published_at < before,
        exists().where(Job.id == OutboxMessage.job_id, Job.state.in_(FINISHED)),
    )
    return _delete_first(session, OutboxMessage, ids, limit)


def finished_jobs(session: Session, before: datetime, limit: int) -> tuple[int, int]:
    """Jobs that succeeded or failed before `before`, with their outbox rows, except a job a
    restatement names (its receipt's job, kept as long as the restatement) and the job of a
    batch still in flight (the doctor's verdict on that batch reads it): (jobs, outbox)."""
    ids = select(Job.id).where(
        Job.state.in_(FINISHED),
        func.coalesce(Job.finished_at, Job.updated_at) < before,
        not_(exists().where(Restatement.job_id == Job.id)),
        not_(exists().where(Batch.job_id == Job.id, Batch.status.in_(IN_FLIGHT))),
    )
    return _delete_jobs(session, list(session.scalars(ids.limit(limit))))


def idempotency_keys(session: Session, before: datetime, limit: int) -> int:
    """Idempotency keys first used before `before`."""
    ids = select(IdempotencyKey.id).where(IdempotencyKey.created_at < before)
    return _delete_first(session, IdempotencyKey, ids, limit)


def applied_cdc_chunks(session: Session, before: datetime, limit: int) -> int:
    """CDC chunks staged before `before` whose every event the processor has applied: up to
    the tenant's processed mirror, which never runs ahead of the raw table's watermark. Their
    bodies went when they were staged; the lag reads only chunks from the one holding a
    watermark on (`app/cdc/repository._from_chunk_holding`), and the one holding
    `processed_seq + 1` ends past it, so it stays."""
    ids = (
        select(CdcChunk.id)
        .join(CdcTenant, CdcTenant.org == CdcChunk.org)
        .where(CdcChunk.staged_at < before, CdcChunk.last_seq <= CdcTenant.processed_seq)
    )
    return _delete_first(session, CdcChunk, ids, limit)


def _gdpr_done(before: datetime) -> ColumnElement[bool]:
    """A GDPR restatement that can no longer hide a row and no snapshot needs: failed (it never
    committed), or erased with its commit snapshot expired; unchanged since `before`."""
    snapshot_expired = exists().where(
        ExpiredSnapshot.dataset_id == Restatement.dataset_id,
        ExpiredSnapshot.snapshot_id == Restatement.snapshot_id,
    )
    return and_(
        Restatement.updated_at < before,
        or_(
            Restatement.state == RestatementState.FAILED,
            and_(
                Restatement.state == RestatementState.COMMITTED,
                Restatement.erased_at.is_not(None),
                snapshot_expired,
            ),
        ),
        not_(_live_job()),
    )


def finished_privacy_job_ids(
    session: Session, before: datetime, among: Sequence[str] | None = None
) -> list[str]:
    """Privacy jobs unchanged since `before` whose every GDPR restatement is done
    (`_gdpr_done`), oldest first; only those of `among` when given (a chunk of an earlier
    selection, checked again in the transaction that deletes it).

    One grouped pass over the privacy jobs' restatements, not an anti-join: with the store's
    statistics stale under load, PostgreSQL planned `NOT EXISTS (… not done …)` as a nested
    loop over both tables (100,000 privacy jobs: 195 s, past the statement timeout, every pass)."""
    not_done = func.sum(case((_gdpr_done(before), 0), (Restatement.id.is_(None), 0), else_=1))
    query = (
        select(PrivacyJob.id)
        .outerjoin(Restatement, Restatement.privacy_job_id == PrivacyJob.id)
        .where(PrivacyJob.updated_at < before)
        .group_by(PrivacyJob.id, PrivacyJob.updated_at)
        .having(not_done == 0)
        .order_by(PrivacyJob.updated_at, PrivacyJob.id)
    )
    if among is not None:
        query = query.where(PrivacyJob.id.in_(among))
    return list(session.scalars(query))


def finished_privacy_jobs(
    session: Session, before: datetime, among: Sequence[str]
) -> dict[str, int]:
    """Those of `among` (a chunk of `finished_privacy_job_ids`) still finished, each with its
    restatements and their jobs (and outbox rows): rows deleted per table."""
    chosen = finished_privacy_job_ids(session, before, among)
    counts = {"privacy_jobs": 0, "restatements": 0, "jobs": 0, "outbox": 0}
    if not chosen:
        return counts
    parts = session.execute(
        select(Restatement.id, Restatement.job_id).where(Restatement.privacy_job_id.in_(chosen))
    ).all()
    restatement_ids = [row.id for row in parts]
    job_ids = {row.job_id for row in parts if row.job_id}
    if restatement_ids:
        job_ids |= set(session.scalars(select(Job.id).where(Job.subject_id.in_(restatement_ids))))
    counts["jobs"], counts["outbox"] = _delete_jobs(session, sorted(job_ids))
    if restatement_ids:
        counts["restatements"] = session.execute(
            delete(Restatement).where(Restatement.id.in_(restatement_ids))
        ).rowcount
    counts["privacy_jobs"] = session.execute(
        delete(PrivacyJob).where(PrivacyJob.id.in_(chosen))
    ).rowcount
    return counts


def failed_restatements(session: Session, before: datetime, limit: int) -> tuple[int, int, int]:
    """Reverts and replays that failed before `before`, no batch names and no job still works
    on, with their jobs (and outbox rows): (restatements, jobs, outbox)."""
    query = select(Restatement.id, Restatement.job_id).where(
        Restatement.kind.in_((RestatementKind.REVERT, RestatementKind.REPLAY)),
        Restatement.state == RestatementState.FAILED,
        Restatement.updated_at < before,
        not_(exists().where(Batch.restated_by == Restatement.id)),
        not_(_live_job()),
    )
    rows = session.execute(query.limit(limit)).all()
    if not rows:
        return 0, 0, 0
    restatement_ids = [row.id for row in rows]
    job_ids = {row.job_id for row in rows if row.job_id}
    job_ids |= set(session.scalars(select(Job.id).where(Job.subject_id.in_(restatement_ids))))
    jobs, outbox = _delete_jobs(session, sorted(job_ids))
    restatements = session.execute(
        delete(Restatement).where(Restatement.id.in_(restatement_ids))
    ).rowcount
    return restatements, jobs, outbox


Key = tuple[str, int]


def _named(session: Session, keys: set[Key]) -> set[Key]:
    """Those of `keys` (dataset, snapshot) a batch, a restatement or a consumer names."""
    ids = {snapshot_id for _, snapshot_id in keys}
    named: set[Key] = set()
    for model in (Batch, Restatement, Consumer):
        query = select(model.dataset_id, model.snapshot_id).where(model.snapshot_id.in_(ids))
        named.update((row[0], row[1]) for row in session.execute(query))
    return named & keys


def forget_expired_snapshots(
    session: Session, before: datetime, after: Key | None, limit: int
) -> tuple[int, Key | None, int]:
    """Of the next `limit` records of snapshots expired before `before` (in key order, past
    `after`), forget those no batch, restatement or consumer names that are not their
    dataset's oldest, and add them to the dataset's count: (forgotten, last key read, read)."""
    query = select(
        ExpiredSnapshot.dataset_id, ExpiredSnapshot.snapshot_id, ExpiredSnapshot.sequence_number
    ).where(ExpiredSnapshot.expired_at < before)
    if after is not None:
        dataset_id, snapshot_id = after
        query = query.where(
            or_(
                ExpiredSnapshot.dataset_id > dataset_id,
                and_(
                    ExpiredSnapshot.dataset_id == dataset_id,
                    ExpiredSnapshot.snapshot_id > snapshot_id,
                ),
            )
        )
    order = (ExpiredSnapshot.dataset_id, ExpiredSnapshot.snapshot_id)
    rows = session.execute(query.order_by(*order).limit(limit)).all()
    if not rows:
        return 0, None, 0
    keys = {(row.dataset_id, row.snapshot_id) for row in rows}
    oldest: dict[str, int] = {
        row[0]: row[1]
        for row in session.execute(
            select(ExpiredSnapshot.dataset_id, func.min(ExpiredSnapshot.sequence_number))
            .where(ExpiredSnapshot.dataset_id.in_({dataset for dataset, _ in keys}))
            .group_by(ExpiredSnapshot.dataset_id)
        )
    }
    named = _named(session, keys)
    by_dataset: dict[str, list[int]] = {}
    for row in rows:
        if (row.dataset_id, row.snapshot_id) not in named and row.sequence_number != oldest.get(
            row.dataset_id
        ):
            by_dataset.setdefault(row.dataset_id, []).append(row.snapshot_id)
    forgotten = 0
    for dataset_id, snapshot_ids in by_dataset.items():
        done = session.execute(
            delete(ExpiredSnapshot).where(
                ExpiredSnapshot.dataset_id == dataset_id,
                ExpiredSnapshot.snapshot_id.in_(snapshot_ids),
            )
        ).rowcount
        tally = session.get(ForgottenSnapshots, dataset_id)
        if tally is None:
            session.add(ForgottenSnapshots(dataset_id=dataset_id, count=done))
        else:
            tally.count += done
        forgotten += done
    last = rows[-1]
    return forgotten, (last.dataset_id, last.snapshot_id), len(rows)
