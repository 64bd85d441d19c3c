from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Row, bindparam, select, update
from sqlalchemy.orm import Session

from app import clock
from app.errors import BatchNotFound
from app.models import Batch, BatchFile, Job, Restatement


def get(session: Session, org: str, batch_id: str, *, for_update: bool = False) -> Batch:
    """The batch; `for_update` locks its row for the rest of the transaction.

    The lock is a write to the row, not only FOR UPDATE: SQLite ignores FOR UPDATE, but a write
    takes its database lock, so what is read next is current on both databases.
    """
    if for_update:
        session.execute(
            update(Batch)
            .where(Batch.id == batch_id, Batch.org == org)
            .values(updated_at=clock.now())
        )
    query = select(Batch).where(Batch.id == batch_id, Batch.org == org)
    if for_update:
        query = query.with_for_update().execution_options(populate_existing=True)
    batch = session.scalar(query)
    if batch is None:
        raise BatchNotFound(batch_id)
    return batch


def file_by_name(session: Session, batch_id: str, name: str) -> BatchFile | None:
    """The file row as the database has it now (not a stale copy from this session)."""
    query = select(BatchFile).where(BatchFile.batch_id == batch_id, BatchFile.name == name)
    return session.scalar(query.execution_options(populate_existing=True))


def files(session: Session, batch_id: str) -> Sequence[BatchFile]:
    query = select(BatchFile).where(BatchFile.batch_id == batch_id).order_by(BatchFile.name)
    return session.scalars(query).all()


_RESTATEMENT = (Restatement.kind, Restatement.state, Restatement.batch_id, Restatement.job_id)
_FILE = (BatchFile.name, BatchFile.bytes, BatchFile.sha256)
# built once: a poller's cold GET runs it, and building a statement costs more than running it
_DESCRIBED = (
    select(
        *Batch.__table__.c,
        Job.progress.label("job_progress"),
        *(column.label(f"restatement_{column.key}") for column in _RESTATEMENT),
        *(column.label(f"file_{column.key}") for column in _FILE),
    )
    .outerjoin(Job, Job.id == Batch.job_id)
    .outerjoin(Restatement, Restatement.id == Batch.restated_by)
    .outerjoin(BatchFile, BatchFile.batch_id == Batch.id)
    .where(Batch.id == bindparam("batch_id"), Batch.org == bindparam("org"))
    .order_by(BatchFile.name)
)


def described(
    session: Session, org: str, batch_id: str
) -> tuple[Batch, float | None, Restatement | None, list[BatchFile]] | None:
    """The batch and what its description shows besides — its job's progress, the restatement
    that restated it, its files by name — read in one statement, so all of one state of the
    store (None when the org has no such batch). The objects are detached copies: read-only."""
    rows = session.execute(_DESCRIBED, {"batch_id": batch_id, "org": org}).mappings().all()
    if not rows:
        return None
    first = rows[0]
    batch = Batch(**{column.key: first[column.key] for column in Batch.__table__.c})
    restatement = None
    if first["restatement_kind"] is not None:
        restatement = Restatement(
            id=batch.restated_by,
            **{column.key: first[f"restatement_{column.key}"] for column in _RESTATEMENT},
        )
    files = [
        BatchFile(batch_id=batch.id, **{column.key: row[f"file_{column.key}"] for column in _FILE})
        for row in rows
        if row["file_name"] is not None
    ]
    return batch, first["job_progress"], restatement, files


def version(session: Session, org: str, batch_id: str) -> Row[Any] | None:
    """What changes whenever the batch's description does: its `updated_at` and status, its
    job's progress and the state of the restatement that restated it, with the ids of those
    rows (one query; None when the org has no such batch)."""
    query = (
        select(
            Batch.updated_at,
            Batch.status,
            Batch.job_id,
            Job.progress,
            Batch.restated_by,
            Restatement.state.label("restatement_state"),
        )
        .outerjoin(Job, Job.id == Batch.job_id)
        .outerjoin(Restatement, Restatement.id == Batch.restated_by)
        .where(Batch.id == batch_id, Batch.org == org)
    )
    return session.execute(query).first()


def page(
    session: Session,
    org: str,
    dataset_id: str | None,
    status: str | None,
    offset: int,
    limit: int,
    updated_since: datetime | None = None,
) -> Sequence[Batch]:
    query = select(Batch).where(Batch.org == org)
    if updated_since is not None:
        query = query.where(Batch.updated_at >= updated_since)
    if dataset_id:
        query = query.where(Batch.dataset_id == dataset_id)
    if status:
        query = query.where(Batch.status == status)
    query = query.order_by(Batch.created_at.desc(), Batch.id).offset(offset).limit(limit)
    return session.scalars(query).all()


def by_id(session: Session, batch_id: str, *, for_update: bool = False) -> Batch | None:
    """Any org's batch, for the workers (they act on ids their job names)."""
    query = select(Batch).where(Batch.id == batch_id)
    if for_update:
        query = query.with_for_update().execution_options(populate_existing=True)
    return session.scalar(query)


def reserved_by(session: Session, restatement_id: str, batch_ids: list[str]) -> Sequence[Batch]:
    """Those of `batch_ids` that `restatement_id` reserved, locked."""
    query = select(Batch).where(Batch.id.in_(batch_ids), Batch.restated_by == restatement_id)
    return session.scalars(query.with_for_update()).all()


def release(session: Session, restatement_id: str) -> None:
    """Clear the reservation `restatement_id` holds on its batches."""
    session.execute(
        update(Batch).where(Batch.restated_by == restatement_id).values(restated_by=None)
    )
