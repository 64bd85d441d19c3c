"""CDC's Celery entry points: the dumper and processor jobs, and the beat's CDC pass."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import asdict
from datetime import datetime, timedelta

from app import clock
from app.cdc import lag_history, repository, service
from app.config import get_settings
from app.db import session_scope
from app.jobs.kinds import JobKind, TaskName
from app.lake import lease
from workers.cdc import streams
from workers.cdc.process import process
from workers.cdc.stage import stage
from workers.celery_app import celery, job_task

log = logging.getLogger(__name__)

stage_task = job_task(TaskName.CDC_STAGE, stage)
process_task = job_task(TaskName.CDC_PROCESS, process)


@celery.task(name=TaskName.CDC_SCHEDULE)
def cdc_schedule_task() -> dict[str, list[str]]:
    return schedule_cdc()


@celery.task(name=TaskName.CDC_STREAMS)
def cdc_streams_task(org: str) -> dict[str, object]:
    return streams_pass(org)


def streams_lease(org: str) -> str:
    """The pass lease of the tenant's stream reader: one reader per tenant at a time."""
    return f"streams-{hashlib.sha256(org.encode()).hexdigest()[:22]}"


def streams_pass(org: str) -> dict[str, object]:
    """Read the tenant's Debezium Redis streams for a while (`workers/cdc/streams.py`), unless
    another worker is reading them."""
    with lease.exclusive(streams_lease(org)) as mine:
        if not mine:
            return {}
        names = streams.tenant_streams(org)
        if not names:
            return {}
        run = streams.consume(org, names)
    if run.entries:
        log.info("cdc streams of %s: %s", org, run)
    return asdict(run)


def _due(processed_at: datetime | None, now: datetime, interval: float) -> bool:
    return processed_at is None or now - processed_at >= timedelta(seconds=interval)


def schedule_cdc() -> dict[str, list[str]]:
    """One pass over the tenants: a dumper for each with events to stage, a processor for each
    with staged events whose interval has passed or whose backlog crossed its threshold. A
    tenant's job already queued or running is left alone, so a tenant with a backlog holds
    one worker at a time and the others' jobs go to the other workers."""
    out: dict[str, list[str]] = {"stage": [], "process": [], "streams": []}
    readable = bool(get_settings().cdc_streams_redis_url)
    with session_scope() as session:
        now = clock.db_now(session)
        tenants = repository.tenants(session)
        for tenant in tenants:
            if lag_history.due(session, tenant.org, now):  # the lag over time, for the UI
                lag_history.record(session, service.lag_of(session, tenant, now), now)
            config = service.config_of(tenant)
            if config.streams and readable:
                out["streams"].append(tenant.org)
            if tenant.accepted_seq > tenant.staged_seq and not service.active_job(
                session, tenant.org, JobKind.CDC_STAGE
            ):
                service.ensure_job(session, tenant.org, JobKind.CDC_STAGE, None)
                out["stage"].append(tenant.org)
            backlog = tenant.staged_seq - tenant.processed_seq
            if (
                backlog > 0
                and tenant.raw_dataset_id is not None
                and (
                    backlog >= config.backlog_threshold
                    or _due(tenant.processed_at, now, config.process_interval_seconds)
                )
                and not service.active_job(session, tenant.org, JobKind.CDC_PROCESS)
            ):
                service.ensure_job(session, tenant.org, JobKind.CDC_PROCESS, tenant.raw_dataset_id)
                out["process"].append(tenant.org)
    for org in out["streams"]:
        if not lease.busy(streams_lease(org)):
            cdc_streams_task.delay(org)
    if out["stage"] or out["process"]:  # an empty pass is silent (workers/periodic_logs.py)
        log.info("cdc scheduler: staging for %s, processing for %s", out["stage"], out["process"])
    return out
