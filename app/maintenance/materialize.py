"""Queueing the materializer (tombstones → Iceberg position deletes, app.lake.materialize_plan).

Coalesced: a dataset never has two materialize jobs queued; one queued while another runs is
right (the running one may have planned before the newest tombstones). Queued after every
tombstone commit, and by the scheduler for a dataset whose tombstones are past its mark with no
job queued (a commit whose worker died before queueing)."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.config import get_settings
from app.jobs import service as jobs
from app.jobs.kinds import JobKind
from app.models import Dataset, Job, JobState


def queued(session: Session, dataset_id: str) -> Job | None:
    """The dataset's materialize job that has not started yet, if any."""
    return session.scalar(
        select(Job)
        .where(
            Job.subject_id == dataset_id,
            Job.kind == JobKind.MATERIALIZE.value,
            Job.state == JobState.QUEUED,
        )
        .limit(1)
    )


def request(session: Session, dataset: Dataset) -> Job | None:
    """Queue the dataset's materializer unless one is queued already (or it is off)."""
    if not get_settings().materialize_deletes:
        return None
    # first in the queue: behind a flood of restatements it would wait for all of them
    return queued(session, dataset.id) or jobs.enqueue(
        session, JobKind.MATERIALIZE, org=dataset.org, subject_id=dataset.id, first=True
    )
