"""The privacy jobs' rows: a privacy job, its restatements (one per dataset) and their jobs."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from sqlalchemy import Row, func, select
from sqlalchemy.orm import Session

from app.chunks import in_chunks
from app.errors import NotFound
from app.models import (
    Dataset,
    Job,
    PrivacyJob,
    Restatement,
    RestatementKind,
    RestatementState,
)


def get_privacy_job(session: Session, org: str, privacy_job_id: str) -> PrivacyJob:
    job = session.get(PrivacyJob, privacy_job_id)
    if job is None or job.org != org:
        raise NotFound(f"privacy job {privacy_job_id!r} does not exist in your organization")
    return job


def privacy_jobs_page(session: Session, org: str, offset: int, limit: int) -> Sequence[PrivacyJob]:
    """The organization's privacy jobs at `offset`, newest first."""
    query = select(PrivacyJob).where(PrivacyJob.org == org)
    query = query.order_by(PrivacyJob.created_at.desc(), PrivacyJob.id)
    return session.scalars(query.offset(offset).limit(limit)).all()


def parts_with_jobs(session: Session, privacy_job_id: str) -> list[tuple[Restatement, Job | None]]:
    """The privacy job's restatements (one per dataset), oldest first, each with its job, read
    in one statement: a restatement's record (its rows hidden) and its job's end commit
    together, and two statements could see them apart (the job ended, the part not yet
    recorded: a status `complete` with nothing hidden)."""
    query = (
        select(Restatement, Job)
        .outerjoin(Job, Job.id == Restatement.job_id)
        .where(Restatement.privacy_job_id == privacy_job_id)
        .order_by(Restatement.created_at)
    )
    return [(part, job) for part, job in session.execute(query).tuples()]


def gdpr_in_force(session: Session, dataset_id: str, after: int = 0) -> list[Row[Any]]:
    """The dataset's committed GDPR restatements not yet erased (their rows may still be in a
    retained snapshot's files) with a sequence number above `after`: id, column, sequence
    number, snapshot, request id, commit time."""
    query = select(
        Restatement.id,
        Restatement.column,
        Restatement.sequence_number,
        Restatement.snapshot_id,
        Restatement.request_id,
        Restatement.committed_at,
    ).where(
        Restatement.dataset_id == dataset_id,
        Restatement.kind == RestatementKind.GDPR,
        Restatement.state == RestatementState.COMMITTED,
        Restatement.erased_at.is_(None),
    )
    if after:  # one with no sequence number hides nothing (it is older than every file)
        query = query.where(Restatement.sequence_number > after)
    return list(session.execute(query.order_by(Restatement.id)).all())


def gdpr_in_force_through(session: Session, dataset_id: str) -> int:
    """The highest sequence number among `gdpr_in_force` (0: none), in one aggregate: what the
    catalog's served history depends on (`app.catalog.served`)."""
    query = select(func.max(Restatement.sequence_number)).where(
        Restatement.dataset_id == dataset_id,
        Restatement.kind == RestatementKind.GDPR,
        Restatement.state == RestatementState.COMMITTED,
        Restatement.erased_at.is_(None),
    )
    return int(session.scalar(query) or 0)


def ids_of(session: Session, restatement_ids: Collection[str]) -> dict[str, list[str]]:
    """The tombstoned values of each restatement."""
    found: dict[str, list[str]] = {}
    for part in in_chunks(restatement_ids):
        query = select(Restatement.id, Restatement.ids).where(Restatement.id.in_(part))
        found.update((row.id, list(row.ids)) for row in session.execute(query))
    return found


def dataset_by_table(session: Session, table_identifier: str) -> Dataset | None:
    """The dataset whose Iceberg table is `table_identifier` (any organization)."""
    query = select(Dataset).where(Dataset.table_identifier == table_identifier)
    return session.scalars(query).first()


def restatements_of_privacy_job(session: Session, privacy_job_id: str) -> list[Restatement]:
    """Every restatement (one per dataset) of the privacy job."""
    query = select(Restatement).where(Restatement.privacy_job_id == privacy_job_id)
    return list(session.scalars(query).all())


def privacy_jobs_by_id(session: Session, privacy_job_ids: Collection[str]) -> list[PrivacyJob]:
    return [
        row
        for part in in_chunks(privacy_job_ids)
        for row in session.scalars(select(PrivacyJob).where(PrivacyJob.id.in_(part)))
    ]


def restatements_of_privacy_jobs(
    session: Session, privacy_job_ids: Collection[str]
) -> dict[str, list[Restatement]]:
    """Every restatement (one per dataset) of each of the privacy jobs, by privacy job."""
    out: dict[str, list[Restatement]] = {}
    for part in in_chunks(privacy_job_ids):
        query = select(Restatement).where(Restatement.privacy_job_id.in_(part))
        for row in session.scalars(query):
            out.setdefault(row.privacy_job_id or "", []).append(row)
    return out


def unerased_gdpr_restatements(session: Session, dataset_id: str) -> list[tuple[str, str, int]]:
    """(id, request id, sequence number) of the dataset's committed GDPR restatements whose rows
    are not yet known to be erased."""
    query = select(Restatement.id, Restatement.request_id, Restatement.sequence_number).where(
        Restatement.dataset_id == dataset_id,
        Restatement.kind == RestatementKind.GDPR,
        Restatement.state == RestatementState.COMMITTED,
        Restatement.erased_at.is_(None),
    )
    return [(r.id, r.request_id, r.sequence_number or 0) for r in session.execute(query)]


def restated_batch_ids(session: Session, dataset_id: str, states: Collection[str]) -> set[str]:
    """The batches named by the dataset's restatements in one of `states`."""
    query = select(Restatement.batch_id).where(
        Restatement.dataset_id == dataset_id,
        Restatement.state.in_(states),
        Restatement.batch_id.is_not(None),
    )
    return {batch_id for batch_id in session.scalars(query) if batch_id}


def restatements_by_id(session: Session, restatement_ids: Collection[str]) -> list[Restatement]:
    return [
        row
        for part in in_chunks(restatement_ids)
        for row in session.scalars(select(Restatement).where(Restatement.id.in_(part)))
    ]


def committed_gdpr_of_requests(
    session: Session, dataset_id: str, request_ids: list[str]
) -> list[Restatement]:
    """The dataset's committed GDPR restatements of `request_ids`."""
    return [
        row
        for part in in_chunks(request_ids)
        for row in session.scalars(
            select(Restatement).where(
                Restatement.dataset_id == dataset_id,
                Restatement.kind == RestatementKind.GDPR,
                Restatement.state == RestatementState.COMMITTED,
                Restatement.request_id.in_(part),
            )
        )
    ]
