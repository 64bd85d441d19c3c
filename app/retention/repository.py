from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.models import (
    Consumer,
    Dataset,
    ExpiredSnapshot,
    ForgottenSnapshots,
    Job,
    JobState,
    Restatement,
)


def consumers(session: Session, dataset_id: str) -> list[Consumer]:
    """The dataset's consumers by name."""
    query = select(Consumer).where(Consumer.dataset_id == dataset_id).order_by(Consumer.name)
    return list(session.scalars(query).all())


def consumer(session: Session, dataset_id: str, name: str) -> Consumer | None:
    query = select(Consumer).where(Consumer.dataset_id == dataset_id, Consumer.name == name)
    return session.scalar(query)


def expired_snapshot(session: Session, dataset_id: str, snapshot_id: int) -> ExpiredSnapshot | None:
    """The record of a snapshot retention expired, if it was one of the dataset's."""
    return session.get(ExpiredSnapshot, (dataset_id, snapshot_id))


def count_expired_before(session: Session, dataset_id: str, sequence_number: int) -> int:
    """How many of the dataset's expired snapshots came before `sequence_number`: those still
    recorded, and those whose record the pruning pass forgot (every one of them came before any
    snapshot retained when it was forgotten)."""
    count = session.scalar(
        select(func.count())
        .select_from(ExpiredSnapshot)
        .where(
            ExpiredSnapshot.dataset_id == dataset_id,
            ExpiredSnapshot.sequence_number < sequence_number,
        )
    )
    return int(count or 0) + forgotten_count(session, dataset_id)


def forgotten_count(session: Session, dataset_id: str) -> int:
    """How many records of the dataset's expired snapshots the pruning pass forgot."""
    tally = session.get(ForgottenSnapshots, dataset_id)
    return tally.count if tally is not None else 0


def running_job_starts(
    session: Session, dataset_id: str, *, exclude_job: str | None = None
) -> list[datetime]:
    """When each running job (but `exclude_job`) of the dataset's org started: files written
    after that may be its uncommitted output. A job writes only to its own org's tables (every
    job carries its subject's org), so another org's jobs, stuck or slow, are no reason to wait."""
    org = select(Dataset.org).where(Dataset.id == dataset_id).scalar_subquery()
    query = select(Job.started_at).where(Job.state == JobState.RUNNING, Job.org == org)
    if exclude_job is not None:
        query = query.where(Job.id != exclude_job)
    return [started for started in session.scalars(query) if started is not None]


def restated_batch_states(session: Session, dataset_id: str) -> list[tuple[str, str]]:
    """(batch id, restatement state) of each of the dataset's restatements that names a batch."""
    query = select(Restatement.batch_id, Restatement.state).where(
        Restatement.dataset_id == dataset_id, Restatement.batch_id.is_not(None)
    )
    return [(batch_id, state) for batch_id, state in session.execute(query) if batch_id]
