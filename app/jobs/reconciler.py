"""Re-publishes messages that never left and re-queues jobs whose worker went silent."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

from app.config import get_settings
from app.db import session_scope
from app.jobs import repository, service
from app.models import JobState

log = logging.getLogger(__name__)


def reconcile_once(store_back_at: datetime | None = None) -> dict[str, int]:
    """One pass; safe to run from several processes at once. Returns what it did.

    `store_back_at`: when the metadata store came back from an outage this process saw. No
    heartbeat could land while it was down, so a job counts as stale only after a full
    `stale_after_seconds` of store uptime: a live worker is never taken for a dead one.
    """
    settings = get_settings()
    now = datetime.now(UTC)
    stale_after = timedelta(seconds=settings.stale_after_seconds)
    store_up_long_enough = store_back_at is None or now - store_back_at >= stale_after
    counts = {"republished": 0, "requeued": 0, "failed": 0}
    with session_scope() as session:
        stale = repository.stale_running(session, now - stale_after) if store_up_long_enough else []
        for job in stale:
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
