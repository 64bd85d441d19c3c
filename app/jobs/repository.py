from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, bindparam, case, func, or_, select, update
from sqlalchemy.orm import Session

from app.errors import JobNotFound
from app.jobs.kinds import JobKind
from app.jobs.links import of_dataset
from app.jobs.stages import Stage
from app.models import Job, JobState, OutboxMessage


def get(session: Session, org: str, job_id: str) -> Job:
    job = session.scalar(select(Job).where(Job.id == job_id, Job.org == org))
    if job is None:
        raise JobNotFound(job_id)
    return job


def active_for_subject(session: Session, subject_id: str, kinds: Collection[str]) -> Job | None:
    """The oldest queued or running job of one of `kinds` on the subject (a dataset, …)."""
    return session.scalar(
        select(Job)
        .where(
            Job.subject_id == subject_id,
            Job.kind.in_(kinds),
            Job.state.in_([JobState.QUEUED, JobState.RUNNING]),
        )
        .order_by(Job.created_at)
        .limit(1)
    )


_ACTIVE = (
    select(Job.id)
    .where(Job.org == bindparam("org"), Job.state.in_([JobState.QUEUED, JobState.RUNNING]))
    .limit(bindparam("up_to"))
    .subquery()
)
_COUNT_ACTIVE = select(func.count()).select_from(_ACTIVE)  # built once (see datasets' _BY_ID)


def count_active(session: Session, org: str, up_to: int) -> int:
    """The org's queued and running jobs, counted up to `up_to` (the scan stops there)."""
    # on the session's connection, not through the ORM: a count needs none of its work
    counted = session.connection().execute(_COUNT_ACTIVE, {"org": org, "up_to": up_to})
    return int(counted.scalar() or 0)


def version(session: Session, org: str, job_id: str) -> datetime | None:
    """The job's `updated_at` (every write to the row moves it), None when not the org's."""
    query = select(Job.updated_at).where(Job.id == job_id, Job.org == org)
    found: datetime | None = session.scalar(query)
    return found


def page(
    session: Session,
    org: str,
    state: str | None,
    kind: str | None,
    offset: int,
    limit: int,
    updated_since: datetime | None = None,
    dataset_id: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> Sequence[Job]:
    query = select(Job).where(Job.org == org)
    if dataset_id:
        query = query.where(of_dataset(dataset_id))
    if since is not None:
        query = query.where(Job.created_at >= since)
    if until is not None:
        query = query.where(Job.created_at < until)
    if updated_since is not None:
        query = query.where(Job.updated_at >= updated_since)
    if state:
        query = query.where(Job.state == state)
    if kind:
        query = query.where(Job.kind == kind)
    query = query.order_by(Job.created_at.desc(), Job.id).offset(offset).limit(limit)
    return session.scalars(query).all()


def running_since(session: Session, subject_id: str, but: str) -> list[datetime]:
    """When the subject's running jobs (other than `but`) started."""
    query = select(Job.started_at).where(
        Job.subject_id == subject_id, Job.state == JobState.RUNNING, Job.id != but
    )
    return [started for started in session.scalars(query) if started is not None]


def unpublished(session: Session, before: datetime) -> Sequence[OutboxMessage]:
    query = select(OutboxMessage).where(
        OutboxMessage.published_at.is_(None), OutboxMessage.created_at < before
    )
    return session.scalars(query.order_by(OutboxMessage.created_at).limit(500)).all()


def stale_running(session: Session, before: datetime) -> Sequence[Job]:
    query = select(Job).where(Job.state == JobState.RUNNING, Job.heartbeat_at < before)
    return session.scalars(query.with_for_update(skip_locked=True)).all()


def forgotten_queued(session: Session, before: datetime) -> Sequence[Job]:
    """Queued jobs whose every message went out before `before` and was never claimed."""
    latest = (
        select(OutboxMessage.job_id)
        .where(OutboxMessage.published_at.is_(None) | (OutboxMessage.published_at >= before))
        .scalar_subquery()
    )
    query = select(Job).where(
        Job.state == JobState.QUEUED, Job.updated_at < before, Job.id.not_in(latest)
    )
    return session.scalars(query.with_for_update(skip_locked=True)).all()


# A worker's writes to its job: each one (after the claim) only while the job is RUNNING in the
# attempt the worker claimed (`workers.runtime`); they are the only SQL of the job runtime.


def _attempt(job_id: str, attempt: int) -> ColumnElement[bool]:
    return and_(Job.id == job_id, Job.attempt == attempt, Job.state == JobState.RUNNING)


def claim(session: Session, job_id: str, worker: str, now: datetime) -> Job | None:
    """Take the job for `worker` when it is queued: running, its next attempt, stage `starting`;
    None when it is not queued (a duplicate delivery, or taken already).

    A job queued at stage `committing` after an attempt is a replay that handed its staged rows
    to a group commit (`workers/restatements/task.stage_replay`): this claim commits them, and
    its attempt, new for the fencing, is not a retry, so `max_attempts` grows by one with it."""
    handed_off = and_(Job.stage == Stage.COMMITTING, Job.attempt > 0)
    changed = session.execute(
        update(Job)
        .where(Job.id == job_id, Job.state == JobState.QUEUED)
        .values(
            state=JobState.RUNNING,
            attempt=Job.attempt + 1,
            max_attempts=case((handed_off, Job.max_attempts + 1), else_=Job.max_attempts),
            heartbeat_at=now,
            started_at=now,
            stage="starting",
            worker=worker,
            error=None,
        )
    ).rowcount
    if not changed:
        return None
    return session.scalar(select(Job).where(Job.id == job_id))


def beat(
    session: Session, job_id: str, attempt: int, *, now: datetime, stage: str, progress: float
) -> bool:
    """The attempt's heartbeat with its stage and progress; False when it no longer holds the
    job (re-queued or finished elsewhere)."""
    changed = session.execute(
        update(Job)
        .where(_attempt(job_id, attempt))
        .values(heartbeat_at=now, stage=stage, progress=progress)
    ).rowcount
    return bool(changed)


def held(session: Session, job_id: str, attempt: int) -> Job | None:
    """The job, locked until the transaction ends, while `attempt` holds it; else None."""
    return session.scalar(select(Job).where(_attempt(job_id, attempt)).with_for_update())


def hold(session: Session, job_id: str, attempt: int) -> bool:
    """Lock the job's row (its id only: nothing loaded) while `attempt` holds it; False when it
    does not."""
    return (
        session.scalar(select(Job.id).where(_attempt(job_id, attempt)).with_for_update())
        is not None
    )


_SETTLE = (
    update(Job)
    .where(
        Job.id == bindparam("job_id"),
        # not `in_`: an expanding IN cannot be sent as one batched statement
        or_(Job.state == JobState.QUEUED, Job.state == JobState.RUNNING),
    )
    .values(
        state=JobState.SUCCEEDED,
        stage="done",
        progress=1.0,
        result=bindparam("result"),
        started_at=func.coalesce(Job.started_at, bindparam("now")),
        finished_at=bindparam("now"),
    )
)


def settle_many(session: Session, settled: list[tuple[str, dict[str, Any]]], now: datetime) -> None:
    """Jobs whose work another job's worker did, queued or running, succeeded with their
    results: one batched UPDATE."""
    session.connection().execute(
        _SETTLE, [{"job_id": job_id, "result": result, "now": now} for job_id, result in settled]
    )


def last_started(session: Session, subject_id: str, kind: JobKind) -> datetime | None:
    """When the subject's most recently started job of `kind` started (None: none has)."""
    return session.scalar(
        select(func.max(Job.started_at)).where(Job.subject_id == subject_id, Job.kind == kind.value)
    )


def queued_for_subject(session: Session, subject_id: str, kind: JobKind) -> Job | None:
    """A job of `kind` for the subject that has not started yet, if any."""
    return session.scalar(
        select(Job)
        .where(Job.subject_id == subject_id, Job.kind == kind.value, Job.state == JobState.QUEUED)
        .limit(1)
    )
