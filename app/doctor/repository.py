"""The doctor's SQL: every row it compares with the lake, by dataset."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Batch, Dataset, ExpiredSnapshot, Job, PrivacyJob, Restatement


def datasets(session: Session, org: str | None, dataset: str | None) -> list[Dataset]:
    """The datasets to check: all, an org's, or one (by id, or by name within `org`)."""
    query = select(Dataset)
    if org is not None:
        query = query.where(Dataset.org == org)
    if dataset is not None:
        by_name = Dataset.name == dataset if org is not None else Dataset.id == dataset
        query = query.where((Dataset.id == dataset) | by_name)
    return list(session.scalars(query.order_by(Dataset.org, Dataset.name)).all())


def batches(session: Session, dataset_id: str) -> list[Batch]:
    query = select(Batch).where(Batch.dataset_id == dataset_id).order_by(Batch.created_at)
    return list(session.scalars(query).all())


def restatements(session: Session, dataset_id: str) -> list[Restatement]:
    query = select(Restatement).where(Restatement.dataset_id == dataset_id)
    return list(session.scalars(query.order_by(Restatement.created_at)).all())


def jobs(session: Session, job_ids: Iterable[str | None]) -> dict[str, Job]:
    """The jobs of `job_ids` that exist, by id."""
    ids = {job_id for job_id in job_ids if job_id}
    if not ids:
        return {}
    return {job.id: job for job in session.scalars(select(Job).where(Job.id.in_(ids)))}


def expired_snapshot_ids(session: Session, dataset_id: str) -> set[int]:
    """Snapshots of the dataset that retention expired (and recorded)."""
    query = select(ExpiredSnapshot.snapshot_id).where(ExpiredSnapshot.dataset_id == dataset_id)
    return set(session.scalars(query))


def privacy_jobs(session: Session, job_ids: Iterable[str | None]) -> dict[str, PrivacyJob]:
    ids = {job_id for job_id in job_ids if job_id}
    if not ids:
        return {}
    query = select(PrivacyJob).where(PrivacyJob.id.in_(ids))
    return {job.id: job for job in session.scalars(query)}
