"""Re-publishes messages that never left and re-queues jobs whose worker went silent."""

from __future__ import annotations

import logging
from datetime import timedelta

from app import clock
from app.config import get_settings
from app.db import session_scope
from app.jobs import repository, service
from app.models import JobState

log = logging.getLogger(__name__)


def reconcile_once() -> dict[str, int]:
    """One pass; safe to run from several processes at once. Returns what it did."""
    settings = get_settings()
    counts = {"republished": 0, "requeued": 0, "failed": 0}
    with session_scope() as session:
        # heartbeats and outbox times are the database's: skewed process clocks do not matter
        now = clock.db_now(session)
        stale_before = now - timedelta(seconds=settings.stale_after_seconds)
        for job in repository.stale_running(session, stale_before):
            if job.attempt >= job.max_attempts:
                service.fail(
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
            service.add_outbox(session, job)
            counts["requeued"] += 1
        forgotten_before = now - timedelta(seconds=5 * settings.stale_after_seconds)
        for job in repository.forgotten_queued(session, forgotten_before):
            service.add_outbox(session, job)
            counts["requeued"] += 1
    grace = now - timedelta(seconds=settings.outbox_grace_seconds)
    with session_scope() as session:
        pending = [(m.id, m.job_id, m.task_name) for m in repository.unpublished(session, grace)]
    for message_id, job_id, task_name in pending:
        counts["republished"] += service.publish(message_id, job_id, task_name)
    return counts
