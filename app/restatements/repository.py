from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from app.errors import NotFound
from app.models import (
    Job,
    JobState,
    OutboxMessage,
    PrivacyJob,
    Restatement,
    RestatementState,
)


def carrier_job(session: Session, dataset_id: str) -> Job | None:
    """A queued job of a ready restatement of the dataset whose message is on its way, locked
    until the transaction commits (FOR UPDATE of the job row)."""
    query = (
        select(Job)
        .join(Restatement, Restatement.job_id == Job.id)
        .where(
            Restatement.dataset_id == dataset_id,
            Restatement.state == RestatementState.READY,
            Job.state == JobState.QUEUED,
            exists().where(OutboxMessage.job_id == Job.id),
        )
        .limit(1)
        .with_for_update(of=Job)
    )
    return session.scalars(query).first()


def get_privacy_job(session: Session, org: str, privacy_job_id: str) -> PrivacyJob:
    job = session.get(PrivacyJob, privacy_job_id)
    if job is None or job.org != org:
        raise NotFound(f"privacy job {privacy_job_id!r} does not exist in your organization")
    return job


def by_privacy_job(session: Session, privacy_job_id: str) -> list[Restatement]:
    """The privacy job's restatements (one per dataset), oldest first."""
    query = select(Restatement).where(Restatement.privacy_job_id == privacy_job_id)
    return list(session.scalars(query.order_by(Restatement.created_at)).all())


def jobs_by_id(session: Session, job_ids: Iterable[str | None]) -> dict[str, Job]:
    """The jobs of `job_ids` that exist, by id."""
    ids = [job_id for job_id in job_ids if job_id is not None]
    rows: Sequence[Job] = session.scalars(select(Job).where(Job.id.in_(ids))).all()
    return {job.id: job for job in rows}
