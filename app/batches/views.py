"""What a batch looks like to a client: its description (`BatchOut`), read in one statement
with its ETag for a GET (`read`) or query by query for a batch in hand (`to_out`), its tag
alone for a poller's `If-None-Match` (`version`), and pages of batches."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app import clock, etags
from app.batches import expiry, repository
from app.batches.schemas import (
    BatchActionOut,
    BatchFileOut,
    BatchList,
    BatchOut,
    BatchRestatement,
)
from app.errors import BatchNotFound
from app.jobs import service as jobs
from app.models import Batch, BatchFile, BatchStatus, Job, Restatement, RestatementKind
from app.pages import next_cursor


def to_out(session: Session, batch: Batch) -> BatchOut:
    progress = None
    if batch.job_id:
        progress = session.scalar(select(Job.progress).where(Job.id == batch.job_id))
    restatement = None if batch.restated_by is None else session.get(Restatement, batch.restated_by)
    return _out(batch, progress, restatement, repository.files(session, batch.id))


def _out(
    batch: Batch,
    progress: float | None,
    restatement: Restatement | None,
    files: Sequence[BatchFile],
) -> BatchOut:
    return BatchOut(
        id=batch.id,
        dataset_id=batch.dataset_id,
        format=batch.format,
        status=batch.status,
        row_count=batch.row_count,
        file_count=batch.file_count,
        bytes=batch.bytes,
        snapshot_id=batch.snapshot_id,
        job_id=batch.job_id,
        progress=progress,
        errors=batch.errors,
        replay=batch.replay,
        restated_by=batch.restated_by,
        restatement=None if restatement is None else _restatement(restatement),
        files=[BatchFileOut(name=f.name, bytes=f.bytes, sha256=f.sha256) for f in files],
        created_at=batch.created_at,
        updated_at=batch.updated_at,
        completed_at=batch.completed_at,
        stuck=expiry.stuck(batch),
        restated_at=batch.restated_at,
    )


def _restatement(found: Restatement) -> BatchRestatement:
    return BatchRestatement(
        id=found.id,
        kind=RestatementKind(found.kind).value,
        state=found.state,
        batch_id=found.batch_id if found.kind == RestatementKind.REPLAY else None,
        job_id=found.job_id,
    )


def action_out(session: Session, batch: Batch, job: Job | None) -> BatchActionOut:
    """What a batch action answers: the batch, and the job it queued."""
    return BatchActionOut(batch=to_out(session, batch), job=jobs.to_out(job) if job else None)


def version(session: Session, org: str, batch_id: str) -> etags.Tag:
    """The batch's entity tag (BatchNotFound when the org has no such batch)."""
    found = repository.version(session, org, batch_id)
    if found is None:
        raise BatchNotFound(batch_id)
    return _tag(
        batch_id,
        found.updated_at,
        found.status,
        found.job_id,
        found.progress,
        found.restated_by,
        found.restatement_state,
    )


def read(session: Session, org: str, batch_id: str) -> tuple[etags.Tag, BatchOut]:
    """One batch of the organization and its entity tag, both from one statement: the tag is
    the version of the very state the body shows (BatchNotFound otherwise)."""
    found = repository.described(session, org, batch_id)
    if found is None:
        raise BatchNotFound(batch_id)
    batch, progress, restatement, files = found
    tag = _tag(
        batch.id,
        batch.updated_at,
        batch.status,
        batch.job_id,
        progress,
        batch.restated_by,
        None if restatement is None else restatement.state,
    )
    return tag, _out(batch, progress, restatement, files)


def _tag(
    batch_id: str,
    updated_at: datetime,
    status: str,
    job_id: str | None,
    progress: float | None,
    restated_by: str | None,
    restatement_state: str | None,
) -> etags.Tag:
    """A batch's tag from what its description moves with: its row, its job's progress and
    the state of the restatement that restated it. A `loading` batch's tag is kept until it
    would turn `stuck` (then its body moves with the clock)."""
    rows = [("batch", batch_id)]
    if job_id:
        rows.append(("job", job_id))
    if restated_by:
        rows.append(("restatement", restated_by))
    lasts = None
    if status == BatchStatus.LOADING:

        def lasts() -> bool:  # not stuck yet (the TTL read now: a setting may change)
            return clock.now() < expiry.stuck_at(updated_at)

    stuck = lasts is not None and not lasts()
    value = etags.etag(
        "batch", batch_id, updated_at, progress, restated_by, restatement_state, stuck
    )
    return etags.Tag(value, tuple(rows), lasts)


def list_batches(
    session: Session,
    org: str,
    dataset_id: str | None,
    status: BatchStatus | None,
    offset: int,
    limit: int,
    updated_since: datetime | None = None,
) -> BatchList:
    """A page of the organization's batches, newest first (changed since `updated_since`)."""
    rows = repository.page(session, org, dataset_id, status, offset, limit + 1, updated_since)
    return BatchList(
        items=[to_out(session, b) for b in rows[:limit]],
        next=next_cursor(offset, limit, len(rows) > limit),
    )
