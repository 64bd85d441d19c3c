from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.chunks import in_chunks
from app.models import (
    Consumer,
    ExpiredSnapshot,
    Job,
    JobState,
    PrivacyJob,
    Restatement,
    RestatementKind,
    RestatementState,
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
    """How many of the dataset's expired snapshots came before `sequence_number`."""
    count = session.scalar(
        select(func.count())
        .select_from(ExpiredSnapshot)
        .where(
            ExpiredSnapshot.dataset_id == dataset_id,
            ExpiredSnapshot.sequence_number < sequence_number,
        )
    )
    return int(count or 0)


def unerased_gdpr_restatements(session: Session, dataset_id: str) -> list[Restatement]:
    """The dataset's committed GDPR restatements whose rows are not yet known to be erased."""
    query = select(Restatement).where(
        Restatement.dataset_id == dataset_id,
        Restatement.kind == RestatementKind.GDPR,
        Restatement.state == RestatementState.COMMITTED,
        Restatement.erased_at.is_(None),
    )
    return list(session.scalars(query).all())


def restated_batch_ids(session: Session, dataset_id: str, states: Collection[str]) -> set[str]:
    """The batches named by the dataset's restatements in one of `states`."""
    query = select(Restatement.batch_id).where(
        Restatement.dataset_id == dataset_id,
        Restatement.state.in_(states),
        Restatement.batch_id.is_not(None),
    )
    return {batch_id for batch_id in session.scalars(query) if batch_id}


def restatements(session: Session, restatement_ids: Collection[str]) -> list[Restatement]:
    return [
        row
        for part in in_chunks(restatement_ids)
        for row in session.scalars(select(Restatement).where(Restatement.id.in_(part)))
    ]


def privacy_job(session: Session, privacy_job_id: str) -> PrivacyJob | None:
    return session.get(PrivacyJob, privacy_job_id)


def restatements_of_privacy_job(session: Session, privacy_job_id: str) -> list[Restatement]:
    """Every restatement (one per dataset) of the privacy job."""
    query = select(Restatement).where(Restatement.privacy_job_id == privacy_job_id)
    return list(session.scalars(query).all())


def running_job_starts(session: Session, *, exclude_job: str | None = None) -> list[datetime]:
    """When each running job (but `exclude_job`) started: files written after that may be its
    uncommitted output."""
    query = select(Job.started_at).where(Job.state == JobState.RUNNING)
    if exclude_job is not None:
        query = query.where(Job.id != exclude_job)
    return [started for started in session.scalars(query) if started is not None]


def restated_batch_states(session: Session, dataset_id: str) -> list[tuple[str, str]]:
    """(batch id, restatement state) of each of the dataset's restatements that names a batch."""
    query = select(Restatement.batch_id, Restatement.state).where(
        Restatement.dataset_id == dataset_id, Restatement.batch_id.is_not(None)
    )
    return [(batch_id, state) for batch_id, state in session.execute(query) if batch_id]
