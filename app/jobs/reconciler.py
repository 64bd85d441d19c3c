"""Re-publishes messages that never left and re-queues jobs whose worker went silent."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

import redis

from app import clock
from app.config import get_settings
from app.db import is_store_outage, session_scope, store_answers
from app.jobs import failures, repository, service, stages
from app.jobs.broker import broker_instance
from app.models import JobState

log = logging.getLogger(__name__)


def reconcile_once(
    store_back_at: datetime | None = None, broker_restarted_at: datetime | None = None
) -> dict[str, int]:
    """One pass; safe to run from several processes at once. Returns what it did.

    `store_back_at`: when the metadata store came back from an outage this process saw. No
    heartbeat could land while it was down, so a job counts as stale only after a full
    `stale_after_seconds` of store uptime: a live worker is never taken for a dead one.
    `broker_restarted_at`: when this process saw the broker restart. A queued job's message
    sent before then may be gone with it: it is sent again now rather than after the usual
    wait for a forgotten message (a duplicate is harmless: a claim takes a job once).
    """
    settings = get_settings()
    stale_after = timedelta(seconds=settings.stale_after_seconds)
    counts = {"republished": 0, "requeued": 0, "failed": 0}
    with session_scope() as session:
        # heartbeats and outbox times are the database's: skewed process clocks do not matter
        now = clock.db_now(session)
        store_up_long_enough = store_back_at is None or now - store_back_at >= stale_after
        stale = repository.stale_running(session, now - stale_after) if store_up_long_enough else []
        for job in stale:
            if job.attempt >= job.max_attempts:
                failures.fail(
                    session,
                    job,
                    f"the worker stopped responding on each of {job.attempt} attempts "
                    f"(last stage: {job.stage})",
                )
                counts["failed"] += 1
                continue
            log.warning("job %s: heartbeat stale since %s, re-queueing", job.id, job.heartbeat_at)
            job.state = JobState.QUEUED
            job.stage = "requeued"
            stages.record(job, "requeued", now)
            service.add_outbox(session, job)
            counts["requeued"] += 1
        forgotten_before = now - timedelta(seconds=5 * settings.stale_after_seconds)
        if broker_restarted_at is not None:
            forgotten_before = max(forgotten_before, broker_restarted_at)
        for job in repository.forgotten_queued(session, forgotten_before):
            service.add_outbox(session, job)
            counts["requeued"] += 1
    grace = now - timedelta(seconds=settings.outbox_grace_seconds)
    with session_scope() as session:
        pending = [(m.id, m.job_id, m.task_name) for m in repository.unpublished(session, grace)]
    for message_id, job_id, task_name in pending:
        counts["republished"] += service.publish(message_id, job_id, task_name)
    return counts


def _store_now() -> datetime:
    """The metadata store's clock, which `reconcile_once` judges every time by."""
    with session_scope() as session:
        return clock.db_now(session)


class Reconciler:
    """The reconciler of one worker process: `run_once` every `reconcile_seconds`. It remembers
    what it saw between passes: the end of a metadata store outage, a broker restart."""

    def __init__(self) -> None:
        self.store_down = False
        self.store_back_at: datetime | None = None
        self.broker_id: str | None = None
        self.broker_restarted_at: datetime | None = None

    def run_once(self) -> dict[str, int] | None:
        """One pass; None when it could not run (the store or the broker is away)."""
        try:
            self._watch_broker()
            if self.store_down and store_answers():
                self.store_down, self.store_back_at = False, _store_now()
                log.warning("reconciler: the metadata store is back")
            counts = reconcile_once(self.store_back_at, self.broker_restarted_at)
        except Exception as exc:
            outage = is_store_outage(exc)  # expected while the store is away: one line
            self.store_down = self.store_down or outage
            first_line = (str(exc).splitlines() or [""])[0]
            log.warning("reconciler pass failed: %s", first_line, exc_info=not outage)
            return None
        if any(counts.values()):
            log.info("reconciler: %s", counts)
        return counts

    def _watch_broker(self) -> None:
        try:
            seen = broker_instance(get_settings())
        except redis.RedisError as exc:  # down: its restart shows as a new id once it is back
            log.warning("reconciler: the broker does not answer: %s", exc)
            return
        if seen is not None and self.broker_id is not None and seen != self.broker_id:
            self.broker_restarted_at = _store_now()
            log.warning("reconciler: the broker restarted; re-sending the queued jobs' messages")
        self.broker_id = seen or self.broker_id
