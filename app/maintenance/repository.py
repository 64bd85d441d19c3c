from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Job, JobState


def active_job(session: Session, dataset_id: str, kinds: Collection[str]) -> Job | None:
    """A queued or running job of one of `kinds` on the dataset, if any."""
    return session.scalar(
        select(Job)
        .where(
            Job.subject_id == dataset_id,
            Job.kind.in_(kinds),
            Job.state.in_((JobState.QUEUED, JobState.RUNNING)),
        )
        .limit(1)
    )
