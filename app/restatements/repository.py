from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Any

from sqlalchemy import Row, bindparam, exists, func, select, update
from sqlalchemy.orm import Session

from app.chunks import in_chunks
from app.errors import NotFound
from app.models import (
    Dataset,
    Job,
    JobState,
    OutboxMessage,
    PrivacyJob,
    Restatement,
    RestatementKind,
    RestatementState,
)
from app.restatements import states

_CARRIER = (
    select(Job.id)
    .join(Restatement, Restatement.job_id == Job.id)
    .where(
        Restatement.dataset_id == bindparam("dataset_id"),
        Restatement.state == RestatementState.READY,
        Job.state == JobState.QUEUED,
        exists().where(OutboxMessage.job_id == Job.id),
    )
    .limit(1)
    .with_for_update(read=True, of=Job)
)  # built once: it keeps its cache key (a request's CPU)


def carrier_job(session: Session, dataset_id: str) -> str | None:
    """The id of a queued job of a ready restatement of the dataset whose message is on its
    way, locked until the transaction commits: FOR SHARE of the job row, so requests to one
    dataset share the lock (FOR UPDATE made every request of a dataset wait for the one before
    it to commit: the hot row bench/scaling.py found) while the worker's claim, an UPDATE,
    still waits for all of them; a request that finds the carrier claimed meanwhile carries
    itself."""
    # on the session's connection, not through the ORM: a plain column needs none of its work
    found: str | None = (
        session.connection().execute(_CARRIER, {"dataset_id": dataset_id}).scalars().first()
    )
    return found


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


def by_privacy_job(session: Session, privacy_job_id: str) -> list[Restatement]:
    """The privacy job's restatements (one per dataset), oldest first."""
    query = select(Restatement).where(Restatement.privacy_job_id == privacy_job_id)
    return list(session.scalars(query.order_by(Restatement.created_at)).all())


def jobs_by_id(session: Session, job_ids: Iterable[str | None]) -> dict[str, Job]:
    """The jobs of `job_ids` that exist, by id."""
    ids = [job_id for job_id in job_ids if job_id is not None]
    rows: Sequence[Job] = session.scalars(select(Job).where(Job.id.in_(ids))).all()
    return {job.id: job for job in rows}


def gdpr_in_force(session: Session, dataset_id: str) -> list[Row[Any]]:
    """The dataset's committed GDPR restatements not yet erased (their rows may still be in a
    retained snapshot's files): id, column, sequence number, snapshot, request id, commit time."""
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


# the group committer's (workers/restatements/committer.py); its moves are the machine's
# (app/restatements/states.py): a WHERE clause on the states that may make them


def state_of(session: Session, restatement_id: str) -> RestatementState | None:
    found = session.scalar(select(Restatement.state).where(Restatement.id == restatement_id))
    return RestatementState(found) if found is not None else None


def interrupted_commit_ids(session: Session, dataset_id: str) -> list[str]:
    """Commit ids of the dataset's groups left `committing` (their committer died or lost the
    lease before recording them)."""
    found = session.scalars(
        select(Restatement.commit_id)
        .where(
            Restatement.dataset_id == dataset_id,
            Restatement.state == RestatementState.COMMITTING,
        )
        .distinct()
    ).all()
    return sorted(c for c in found if c)


def ready(session: Session, dataset_id: str) -> Sequence[Row[Any]]:
    """(id, kind, ids) of the dataset's ready restatements, oldest first."""
    return session.execute(
        select(Restatement.id, Restatement.kind, Restatement.ids)
        .where(Restatement.dataset_id == dataset_id, Restatement.state == RestatementState.READY)
        .order_by(Restatement.created_at, Restatement.id)
    ).all()


def claim(session: Session, ids: list[str], commit_id: str) -> None:
    """Move `ids` to `committing` under `commit_id` (those still allowed to)."""
    session.execute(
        update(Restatement)
        .where(Restatement.id.in_(ids), Restatement.state.in_(states.sources(states.COMMITTING)))
        .values(state=states.COMMITTING, commit_id=commit_id)
    )


def group(session: Session, commit_id: str) -> Sequence[Restatement]:
    """The members of the group `commit_id` not recorded yet."""
    return session.scalars(
        select(Restatement).where(
            Restatement.commit_id == commit_id,
            Restatement.state == RestatementState.COMMITTING,
        )
    ).all()


def committing(session: Session, ids: list[str]) -> Sequence[Restatement]:
    """Those of `ids` still `committing` (a group another committer recorded is left alone)."""
    return session.scalars(
        select(Restatement).where(
            Restatement.id.in_(ids), Restatement.state == RestatementState.COMMITTING
        )
    ).all()
