"""Jobs: a row in SQL first, a broker message second (transactional outbox)."""

from __future__ import annotations

import logging
from collections.abc import Collection
from datetime import UTC, datetime

from sqlalchemy import update
from sqlalchemy.orm import Session, object_session

from app import clock, etags
from app.config import get_settings
from app.db import after_commit, session_scope
from app.errors import JobNotFound
from app.jobs import repository, stages
from app.jobs.broker import QUEUE, get_celery
from app.jobs.kinds import JobKind, Payload
from app.jobs.links import Links, links_for
from app.jobs.schemas import JobList, JobOut, JobStageOut
from app.limits.inflight import broker_priority, job_backlog
from app.models import Job, JobState, OutboxMessage
from app.pages import next_cursor
from app.request_context import current_key_id, current_request_id, new_request_id
from app.stuck import StuckOut

log = logging.getLogger(__name__)


def enqueue(
    session: Session,
    kind: JobKind,
    *,
    org: str,
    subject_id: str | None,
    payload: Payload | None = None,
    publish: bool = True,
    first: bool = False,
    countdown: float = 0.0,
) -> Job:
    """Write the job and its outbox message; the message is published after commit.

    `payload` must be the kind's payload model (see `app.jobs.kinds`). `publish=False` writes no
    message: for a job another queued job's worker will finish (the reconciler still sends one
    if it stays queued, see `forgotten_queued`).

    A job an HTTP request asks for counts against its org's cap of jobs in flight (429 beyond
    it); the scheduler's jobs (no request) are never refused. The org's jobs in flight set the
    message's broker priority: an org's first jobs overtake another's backlog (`app.limits`);
    `first`: the highest priority whatever the backlog (short maintenance that keeps reads
    right, which the org's own backlog must not starve); `countdown`: seconds before a worker
    runs it (the broker's ETA; a message the reconciler re-publishes runs at once).
    """
    payload = payload if payload is not None else kind.spec.payload()
    if type(payload) is not kind.spec.payload:
        raise TypeError(f"a {kind} job takes {kind.spec.payload.__name__}, not {type(payload)}")
    backlog = job_backlog(session, org, enforce=current_request_id() is not None)
    job = Job(
        org=org,
        kind=kind.value,
        task_name=kind.task.value,
        subject_id=subject_id,
        request_id=current_request_id() or new_request_id(),
        payload=payload.model_dump(mode="json"),
        max_attempts=get_settings().job_max_attempts,
        key_id=current_key_id(),
    )
    session.add(job)
    session.flush()
    stages.record(job, "queued", job.created_at)
    if publish:
        priority = 0 if first else broker_priority(backlog)
        add_outbox(session, job, priority=priority, countdown=countdown)
    return job


def add_outbox(session: Session, job: Job, priority: int = 0, countdown: float = 0.0) -> None:
    """The job's message, published after commit (`priority`: 0 first, 9 last; a message the
    reconciler re-publishes goes first). Its grace period is judged on the database's clock
    (see app.clock)."""
    message = OutboxMessage(
        job_id=job.id, task_name=job.task_name, created_at=clock.db_now(session)
    )
    session.add(message)
    session.flush()
    message_id, job_id, task_name = message.id, job.id, job.task_name
    after_commit(session, lambda: publish(message_id, job_id, task_name, priority, countdown))


def wait_for_slot(job_id: str, countdown: float) -> bool:
    """Send the queued job `job_id` again in `countdown` seconds, its stage `waiting-for-slot`:
    the worker its message reached keeps its free slots for other work
    (`workers/slots.py`). False, and nothing written, when the job is no longer queued."""
    with session_scope() as session:
        job = session.get(Job, job_id, with_for_update=True)
        if job is None or job.state != JobState.QUEUED:
            return False
        if job.stage != stages.Stage.WAITING_FOR_SLOT:
            job.stage = stages.Stage.WAITING_FOR_SLOT
            stages.record(job, job.stage, clock.db_now(session))
        add_outbox(session, job, countdown=countdown)
    return True


def publish(
    message_id: str, job_id: str, task_name: str, priority: int = 0, countdown: float = 0.0
) -> bool:
    """Send one outbox message; on failure it stays unpublished for the reconciler."""
    try:
        get_celery().send_task(
            task_name,
            args=[job_id],
            queue=QUEUE,
            priority=priority,
            countdown=countdown if countdown > 0 else None,
        )
    except Exception:  # the broker may be down: the reconciler will retry
        log.warning("could not publish job %s; the reconciler will retry", job_id, exc_info=True)
        return False
    with session_scope() as session:
        session.execute(
            update(OutboxMessage)
            .where(OutboxMessage.id == message_id)
            .values(published_at=clock.db_now(session))
        )
    return True


def mark_failed(session: Session, job: Job, error: str) -> None:
    """Mark a job failed for good (`app/jobs/failures.fail` also lets its subject react)."""
    job.state = JobState.FAILED
    job.error = error
    job.finished_at = clock.db_now(session)
    stages.record(job, "failed", job.finished_at, final=True)


def describe(session: Session, org: str, job_id: str) -> JobOut:
    """One job of the organization (JobNotFound otherwise)."""
    return to_out(repository.get(session, org, job_id))


def version(session: Session, org: str, job_id: str) -> etags.Tag:
    """The job's entity tag (JobNotFound when the org has no such job)."""
    found = repository.version(session, org, job_id)
    if found is None:
        raise JobNotFound(job_id)
    return etags.Tag(etags.etag("job", job_id, found), (("job", job_id),))


def list_jobs(
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
) -> JobList:
    """A page of the organization's jobs, newest first (changed since `updated_since`; of one
    dataset; created in [`since`, `until`))."""
    rows = repository.page(
        session, org, state, kind, offset, limit + 1, updated_since, dataset_id, since, until
    )
    found = links_for(session, rows[:limit])
    return JobList(
        items=[to_out(j, found[j.id]) for j in rows[:limit]],
        next=next_cursor(offset, limit, len(rows) > limit),
    )


def stuck(job: Job, now: datetime | None = None) -> StuckOut | None:
    """Why a running job is stuck (its heartbeat is stale) and what resolves it; else None."""
    if job.state != JobState.RUNNING or job.heartbeat_at is None:
        return None
    stale_after = get_settings().stale_after_seconds
    silent = ((now or clock.now()) - _aware(job.heartbeat_at)).total_seconds()
    if silent < stale_after:
        return None
    return StuckOut(
        reason=f"no heartbeat for {silent:.0f} s (stale after {stale_after:g} s, "
        f"ICEBATCH_STALE_AFTER_SECONDS): its worker {job.worker or ''} stopped or hangs "
        f"at stage {job.stage!r}",
        action="a running worker's reconciler re-queues it (attempt "
        f"{job.attempt} of {job.max_attempts}; it fails after the last): if none runs, start "
        "one (icebatch worker, or icebatch up)",
    )


def _stages(job: Job) -> list[JobStageOut]:
    """The stage history; a finished job's open stage ends when it finished (a group commit
    settles the jobs it carried in one UPDATE, which writes no history)."""
    out = []
    entries = job.stages or []
    for i, entry in enumerate(entries):
        started = datetime.fromisoformat(entry["started_at"])
        ended = datetime.fromisoformat(entry["ended_at"]) if entry.get("ended_at") else None
        if ended is None and i == len(entries) - 1 and job.finished_at is not None:
            ended = max(started, _aware(job.finished_at))
        seconds = None if ended is None else round((ended - started).total_seconds(), 3)
        out.append(
            JobStageOut(stage=entry["stage"], started_at=started, ended_at=ended, seconds=seconds)
        )
    return out


def to_out(job: Job, found: Links | None = None) -> JobOut:
    """The job as the API shows it; `found`: its links, when looked up with others'."""
    if found is None:
        found = links_for(object_session(job), [job])[job.id]
    duration = None
    if job.started_at and job.finished_at:
        duration = (_aware(job.finished_at) - _aware(job.started_at)).total_seconds()
    return JobOut(
        id=job.id,
        kind=job.kind,
        subject_id=job.subject_id,
        request_id=job.request_id,
        state=job.state,
        stage=job.stage,
        progress=round(job.progress, 4),
        attempt=job.attempt,
        max_attempts=job.max_attempts,
        created_at=job.created_at,
        updated_at=job.updated_at,
        started_at=job.started_at,
        heartbeat_at=job.heartbeat_at,
        finished_at=job.finished_at,
        duration_seconds=duration,
        result=job.result,
        error=job.error,
        key_id=job.key_id,
        dataset_id=found.dataset_id,
        batch_id=found.batch_id,
        restatement_id=found.restatement_id,
        privacy_job_id=found.privacy_job_id,
        worker=job.worker,
        stages=_stages(job),
        stuck=stuck(job),
    )


def _aware(value: datetime) -> datetime:
    """SQLite hands back naive datetimes; they were written in UTC."""
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def active_for_subject(session: Session, subject_id: str, kinds: Collection[str]) -> Job | None:
    """The subject's queued or running job of one of `kinds`, if any."""
    return repository.active_for_subject(session, subject_id, kinds)


def last_started(session: Session, subject_id: str, kind: JobKind) -> datetime | None:
    """When the subject's most recently started job of `kind` started, if one has."""
    return repository.last_started(session, subject_id, kind)


def queued_for_subject(session: Session, subject_id: str, kind: JobKind) -> Job | None:
    """The subject's job of `kind` that has not started yet, if any."""
    return repository.queued_for_subject(session, subject_id, kind)
