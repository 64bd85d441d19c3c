"""What each job serves: its dataset, and its batch, restatement or privacy job (the UI links
them). Looked up for many jobs at once: one query per subject table, not per job."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import Session

from app.jobs.kinds import RESTATEMENT_KINDS, JobKind
from app.models import Batch, Job, Restatement


@dataclass(frozen=True)
class Links:
    dataset_id: str | None = None
    batch_id: str | None = None
    restatement_id: str | None = None
    privacy_job_id: str | None = None


RESTATING = {k.value for k in RESTATEMENT_KINDS}
NO_DATASET = {JobKind.CDC_STAGE.value}


def links_for(session: Session | None, jobs: Sequence[Job]) -> dict[str, Links]:
    """Each job's links, by job id."""
    ingests = [j.subject_id for j in jobs if j.kind == JobKind.INGEST and j.subject_id]
    restating = [j.subject_id for j in jobs if j.kind in RESTATING and j.subject_id]
    batches: dict[str, str] = {}
    restatements: dict[str, tuple[str, str | None, str | None]] = {}
    if session is not None and ingests:
        query = select(Batch.id, Batch.dataset_id).where(Batch.id.in_(ingests))
        batches = {row.id: row.dataset_id for row in session.execute(query)}
    if session is not None and restating:
        restated = select(
            Restatement.id, Restatement.dataset_id, Restatement.batch_id, Restatement.privacy_job_id
        ).where(Restatement.id.in_(restating))
        restatements = {
            row.id: (row.dataset_id, row.batch_id, row.privacy_job_id)
            for row in session.execute(restated)
        }
    out: dict[str, Links] = {}
    for job in jobs:
        subject = job.subject_id
        if subject is None or job.kind in NO_DATASET:
            out[job.id] = Links()
        elif job.kind == JobKind.INGEST:
            out[job.id] = Links(dataset_id=batches.get(subject), batch_id=subject)
        elif job.kind in RESTATING:
            dataset_id, batch_id, privacy_job_id = restatements.get(subject, (None, None, None))
            out[job.id] = Links(dataset_id, batch_id, subject, privacy_job_id)
        else:
            out[job.id] = Links(dataset_id=subject)
    return out


def of_dataset(dataset_id: str) -> ColumnElement[bool]:
    """A WHERE clause: the job works on the dataset, directly or through a batch or restatement."""
    return (
        (Job.subject_id == dataset_id)
        | Job.subject_id.in_(select(Batch.id).where(Batch.dataset_id == dataset_id))
        | Job.subject_id.in_(select(Restatement.id).where(Restatement.dataset_id == dataset_id))
    )
