"""The job wrapper: claim atomically, heartbeat, report progress, finish or fail (fenced).

Every write to a job row after the claim carries `attempt = <ours>` in its WHERE clause: a worker
that lost its lease (the reconciler re-queued the job) can no longer change it.
"""

from __future__ import annotations

import contextvars
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import BaseModel
from sqlalchemy.orm import Session
from structlog.contextvars import bound_contextvars

from app import clock
from app.config import get_settings
from app.db import session_scope
from app.jobs import failures, repository, stages
from app.jobs import service as jobs
from app.jobs.kinds import JobKind, Payload
from app.models import Dataset, JobState
from workers.metrics import JOB_DURATION, QUEUE_WAIT
from workers.outage import describe, is_outage, through_outages, wait_for_store
from workers.spark import warmup

log = logging.getLogger(__name__)
WORKER_NAME = f"{socket.gethostname()}:{os.getpid()}"
MAX_OUTAGE_RESUMES = 5


class LeaseLost(Exception):
    """The job was re-queued or finished elsewhere; stop without touching it."""


class HandedOff(Exception):
    """The job's work is left to a job that another worker will run: this attempt put the job
    back in the queue without a message, in the transaction that made its subject ready for
    that worker (a group commit carries it: `workers/restatements/task.stage_replay`), and that
    worker settles it. Stop without touching the job."""


class PermanentJobError(Exception):
    """A failure that retrying cannot fix (bad input); `result` is kept on the job."""

    def __init__(self, message: str, result: dict[str, Any] | BaseModel | None = None) -> None:
        super().__init__(message)
        self.result = result


# What a handler returns: its result model (`app/jobs/results.py`), or during the move to those
# models a plain dict. Stored as JSON on the job row.
HandlerResult = BaseModel | dict[str, Any]
Handler = Callable[["JobContext"], HandlerResult]


def stored(result: HandlerResult | None) -> dict[str, Any] | None:
    """A result as the job row keeps it: a model's JSON with the fields it was given (a field
    left at its default is left out, so a stored result has the keys its handler set)."""
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json", exclude_unset=True)
    return result


@dataclass(frozen=True)
class Succeeded:
    """The handler returned: the job succeeded with its result."""

    result: dict[str, Any] | None


@dataclass(frozen=True)
class Failed:
    """A PermanentJobError: the job failed for good, whatever attempts are left; its result is
    kept."""

    error: str
    result: dict[str, Any] | None = None


@dataclass(frozen=True)
class Errored:
    """Any other error: the job is queued again while it has attempts left, else failed."""

    error: str


JobOutcome = Succeeded | Failed | Errored


def dataset_identifier(dataset_id: str) -> str:
    """The Iceberg identifier of a job's dataset (PermanentJobError when it is gone)."""
    with session_scope() as session:
        dataset = session.get(Dataset, dataset_id)
        if dataset is None:
            raise PermanentJobError(f"dataset {dataset_id} no longer exists")
        return dataset.table_identifier


P = TypeVar("P", bound=Payload)


@dataclass
class JobContext:
    job_id: str
    attempt: int
    request_id: str
    subject_id: str | None
    org: str
    kind: JobKind
    payload: Payload
    stage: str = "starting"
    progress_fn: Callable[[], float] | None = None
    _progress: float = 0.0
    _lost: threading.Event = field(default_factory=threading.Event)
    # one heartbeat at a time, each reading the stage once it holds this: the heartbeat thread's
    # beat that read the old stage cannot commit after the handler's beat of the new one
    _beating: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def set_stage(self, stage: str, progress: float | None = None) -> None:
        if stage != self.stage:
            self._record_stage(stage)
        self.stage = stage
        if progress is not None:
            self._progress = max(self._progress, progress)
        self.beat()

    def _record_stage(self, stage: str) -> None:
        """Close the stage in the job's history and open `stage` (while this attempt holds it)."""
        with session_scope() as session:
            job = repository.held(session, self.job_id, self.attempt)
            if job is not None:
                stages.record(job, stage, clock.db_now(session))

    def current_progress(self) -> float:
        if self.progress_fn is not None:
            try:
                self._progress = max(self._progress, self.progress_fn())
            except Exception:  # progress is best effort; never fail a job over it
                log.debug("progress probe failed", exc_info=True)
        return self._progress

    def beat(self) -> None:
        """Heartbeat with stage and progress; flags the lease lost when the row moved on."""
        with self._beating, session_scope() as session:
            held = repository.beat(
                session,
                self.job_id,
                self.attempt,
                now=clock.db_now(session),  # judged by other processes' reconcilers
                stage=self.stage,
                progress=self.current_progress(),
            )
        if not held:
            self._lost.set()

    def check_lease(self) -> None:
        """Raise LeaseLost unless this attempt still owns the job (call before committing)."""
        self.beat()
        if self._lost.is_set():
            raise LeaseLost(self.job_id)

    def payload_as(self, model: type[P]) -> P:
        """The payload as the model its kind registers (`app.jobs.kinds`)."""
        if not isinstance(self.payload, model):
            raise TypeError(f"job {self.job_id} ({self.kind}) carries {type(self.payload)}")
        return self.payload

    @contextmanager
    def fenced(self) -> Iterator[Session]:
        """A transaction that holds this attempt's job row: what a task changes in it (its
        subject's status) commits only while the job is still this attempt's; else LeaseLost."""
        with session_scope() as session:
            if not repository.hold(session, self.job_id, self.attempt):
                raise LeaseLost(self.job_id)
            yield session


def claim(job_id: str) -> JobContext | None:
    """Take a queued job for this worker; None when it is not queued (duplicate delivery)."""
    with session_scope() as session:
        now = clock.db_now(session)
        job = repository.claim(session, job_id, WORKER_NAME, now)
        if job is None:
            return None
        stages.record(job, "starting", now)
        kind = JobKind(job.kind)
        if job.attempt == 1:  # a retry's wait starts at its re-queue, which no column records
            waited = (now - _aware(job.created_at)).total_seconds()
            QUEUE_WAIT.labels(kind.value).observe(max(0.0, waited))
        return JobContext(
            job.id,
            job.attempt,
            job.request_id,
            job.subject_id,
            job.org,
            kind,
            kind.parse(dict(job.payload)),
        )


def finish(ctx: JobContext, outcome: JobOutcome) -> JobState | None:
    """End the job as `outcome` says while this attempt holds it; the job's new state (None
    when the attempt no longer holds it: nothing is written)."""
    with session_scope() as session:
        job = repository.held(session, ctx.job_id, ctx.attempt)
        if job is None:
            return None
        match outcome:
            case Succeeded(result):
                job.finished_at = clock.db_now(session)  # the clock its started_at was read from
                job.state, job.stage, job.progress, job.result = (
                    JobState.SUCCEEDED,
                    "done",
                    1.0,
                    result,
                )
                stages.record(job, "done", job.finished_at, final=True)
            case Failed(error, result):
                job.result = result
                failures.fail(session, job, error)
            case Errored(error) if job.attempt < job.max_attempts:
                job.state, job.stage, job.error = JobState.QUEUED, "retrying", error
                stages.record(job, "retrying", clock.db_now(session))
                jobs.add_outbox(session, job)
            case Errored(error):
                failures.fail(session, job, error)
        return JobState(job.state)


def settle(session: Session, job_id: str | None, result: dict[str, Any]) -> None:
    """Finish a job whose work another job's worker did (a group commit carried it): a queued
    job's message becomes a no-op, and a running one (its worker may be dead, or waiting for
    this commit) finds itself finished; its own fenced finish is then a no-op."""
    if job_id is not None:
        settle_many(session, [(job_id, result)])


def settle_many(session: Session, settled: list[tuple[str, dict[str, Any]]]) -> None:
    """`settle` for many jobs at once (a group commit's): one clock read, one batched UPDATE."""
    if settled:
        repository.settle_many(session, settled, clock.db_now(session))


def run_job(job_id: str, handler: Handler) -> None:
    """Claim, heartbeat and run `handler`; record its result or error on the job row.

    Every line logged meanwhile carries the job's id, kind and request id (the HTTP request
    that created it), so one id follows a call from the API to the job to its snapshot.
    A metadata store outage pauses the worker (`workers.outage`) instead of failing the job:
    the claim and the finish wait for the store, and a handler the outage interrupted runs again
    in the same attempt once the store is back (handlers are safe to repeat: at-least-once).
    """
    with bound_contextvars(job_id=job_id):
        warmup.wait()  # claimed once the worker's Spark is warm: its time is the job's own
        ctx = through_outages(lambda: claim(job_id), f"claiming job {job_id}")
        if ctx is None:
            log.info(
                "job %s is not queued (a duplicate delivery or already taken); skipping", job_id
            )
            return
        with bound_contextvars(request_id=ctx.request_id, job_kind=ctx.kind.value):
            _run(ctx, handler)


def _run(ctx: JobContext, handler: Handler) -> None:
    job_id = ctx.job_id
    stop = threading.Event()
    interval = get_settings().heartbeat_seconds

    def heartbeat() -> None:
        while not stop.wait(interval):
            try:
                ctx.beat()
            except Exception as exc:
                outage = is_outage(exc)  # expected while the store is away: one line
                log.warning(
                    "heartbeat of job %s failed: %s", job_id, describe(exc), exc_info=not outage
                )

    def end(outcome: JobOutcome) -> JobState | None:
        return through_outages(lambda: finish(ctx, outcome), f"finishing job {job_id}")

    context = contextvars.copy_context()  # the heartbeat's lines carry the job's ids too
    beater = threading.Thread(
        target=context.run, args=(heartbeat,), name=f"heartbeat-{job_id}", daemon=True
    )
    beater.start()
    started, outcome = time.monotonic(), "failed"
    log.info("job %s (%s) attempt %s started", job_id, ctx.kind.value, ctx.attempt)
    try:
        result = _run_through_outages(ctx, handler)
    except LeaseLost:
        outcome = "lease_lost"
        log.warning("job %s: lease lost, leaving it to its new owner", job_id)
    except HandedOff as exc:
        outcome = "carried"
        log.info("job %s: %s", job_id, exc)
    except PermanentJobError as exc:
        log.warning("job %s failed: %s", job_id, exc)
        end(Failed(str(exc), stored(exc.result)))
    except Exception as exc:
        log.exception("job %s attempt %s failed", job_id, ctx.attempt)
        state = end(Errored(f"{type(exc).__name__}: {exc}"[:4000]))
        outcome = "retried" if state == JobState.QUEUED else "failed"
    else:
        outcome = "succeeded"
        end(Succeeded(stored(result)))
    finally:
        stop.set()
        beater.join(timeout=interval + 1)
        elapsed = time.monotonic() - started
        JOB_DURATION.labels(ctx.kind.value, outcome).observe(elapsed)
        log.info("job %s %s after %.3fs", job_id, outcome, elapsed)


def _aware(value: datetime) -> datetime:
    """SQLite hands back naive datetimes; they were written in UTC."""
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _run_through_outages(ctx: JobContext, handler: Handler) -> HandlerResult:
    """`handler(ctx)`, run again (same attempt) after each metadata store outage that broke
    it, up to MAX_OUTAGE_RESUMES times; then its error counts as any other."""
    for resumes in range(MAX_OUTAGE_RESUMES + 1):
        try:
            return handler(ctx)
        except (LeaseLost, HandedOff, PermanentJobError):
            raise
        except Exception as exc:
            if resumes == MAX_OUTAGE_RESUMES or not is_outage(exc):
                raise
            log.warning("job %s: metadata store away (%s); pausing", ctx.job_id, describe(exc))
            waited = wait_for_store()
            through_outages(ctx.check_lease, f"job {ctx.job_id}")  # LeaseLost: re-queued
            log.warning("job %s: store back after %.1f s; resuming the job", ctx.job_id, waited)
    raise AssertionError("unreachable")


# handlers another job's worker may run in its own process, given a commit lease it holds
# (a restatement committer runs an overdue materializer between its groups)
Inline = Callable[[JobContext, int], HandlerResult]
_INLINE: dict[JobKind, Inline] = {}


def inline(kind: JobKind, handler: Inline) -> None:
    """Let `run_inline` run jobs of `kind` with `handler` (registered by the kind's task)."""
    _INLINE[kind] = handler


def run_inline(kind: JobKind, job_id: str, token: int) -> None:
    """Run the queued job `job_id` here and now, under the commit lease `token` the caller
    holds (its message then finds it done); a failure is the job's, retried or failed as usual."""
    handler = _INLINE[kind]
    run_job(job_id, lambda ctx: handler(ctx, token))
