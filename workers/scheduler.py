"""Automatic maintenance (Celery beat → `icebatch.schedule`): vacuum, compact, expire and
materialize where needed; abort the batches left `loading` past their TTL (`app.batches.expiry`).
Its own beat entry (`icebatch.prune`, every `prune_seconds`) prunes the metadata store
(`app.pruning.service.prune`) and moves old audit events to their orgs' Iceberg tables
(`workers.audit.archive.move_old`).

A dataset gets a full vacuum when its current snapshot has `auto_vacuum_tombstones` active
tombstones or more, or a tombstone whose `evict_by` falls within `auto_vacuum_evict_lead_seconds`;
else a bin-pack compaction when a partition holds `auto_compact_small_files` small files or more
(every replay and small batch adds one: a scan opens them all, and their delete files);
it gets an expire job when it holds snapshots its retention policy would expire (`auto_expire`),
and a materialize job when tombstones are past its materialized mark and none is queued or
running (`materialize_deletes`; normally the tombstone commit queued it).
Never two jobs of a kind per dataset: one already queued or running is left to finish.
Compaction and expire are held back while the dataset's restatements are in flight (a burst's
group commits first), for at most `maintenance_defer_seconds` since the last one started.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from datetime import timedelta

import pyarrow.compute as pc
from pyiceberg.table import Table
from sqlalchemy import select
from sqlalchemy.orm import Session

from app import clock
from app.batches import expiry
from app.config import get_settings
from app.db import session_scope
from app.errors import Conflict
from app.jobs import service as jobs
from app.jobs.kinds import REWRITE_KINDS, JobKind, TaskName
from app.lake import lease, retention, rewrite_plan, tombstones, visible
from app.lake.catalog import get_catalog
from app.maintenance import service as maintenance
from app.maintenance.schemas import (
    CompactRequest,
    CompactStrategy,
    VacuumMode,
    VacuumRequest,
)
from app.models import Dataset
from app.pruning import service as pruning
from app.restatements import repository as restatements
from app.retention import service
from workers import slots
from workers.audit import archive
from workers.celery_app import celery

log = logging.getLogger(__name__)
PRUNE_PASS = "prune"


@celery.task(name=TaskName.SCHEDULE)
def schedule_task() -> dict[str, list[str]]:
    return schedule_once()


@celery.task(name=TaskName.PRUNE)
def prune_task(until: float | None = None) -> dict[str, int]:
    """The beat's pruning pass (every `prune_seconds`): rows deleted per table, and the audit
    events moved to Iceberg (`audit_events`). One pass at a time across the workers: a pass
    that outlasts the interval makes the next one a no-op ({}), not a second pass holding
    another worker slot over the same rows.

    The pass is maintenance (`workers/slots.py`): it runs in the share of slots vacuums and
    expiries may take, never in the slot kept for restatements. Uncounted, a pass (about 12 s
    at 100k restatements in the scale run) and a vacuum could hold both slots of a
    `--concurrency 2` worker, and a burst's next group commit wait for them. With the share
    taken, the message is sent again in `maintenance_slot_retry_seconds` ({} now), until the
    beat's next pass is due (`until`, epoch seconds), which then takes over."""
    deadline = until if until is not None else time.time() + get_settings().prune_seconds

    def later(retry: float) -> None:
        if time.time() + retry < deadline:
            log.info("the pruning pass waits for a maintenance slot: sent again in %.1f s", retry)
            prune_task.apply_async(kwargs={"until": deadline}, countdown=retry)
        else:
            log.info("no maintenance slot for the pruning pass: the beat's next one takes over")

    done = slots.SLOTS.run_or_later(_prune_pass, later)
    return {} if done is None else done


def _prune_pass() -> dict[str, int]:
    with lease.exclusive(PRUNE_PASS) as mine:
        if not mine:
            log.info("the previous pruning pass is still running: this one is skipped")
            return {}
        return pruning.prune() | {"audit_events": archive.move_old()}


def vacuum_reason(table: Table) -> str | None:
    """Why the dataset needs a vacuum now, or None."""
    settings = get_settings()
    snapshot = table.current_snapshot()
    total = tombstones.metrics(table, snapshot)["total"]
    if not total:
        return None
    if total >= settings.auto_vacuum_tombstones:
        return f"{total} active tombstones"
    evict_by = tombstones.active(table, snapshot)["evict_by"]
    earliest = pc.min(evict_by).as_py()
    if earliest is None:
        return None
    if earliest <= clock.now() + timedelta(seconds=settings.auto_vacuum_evict_lead_seconds):
        return f"a tombstone must be evicted by {earliest.isoformat()}"
    return None


def compact_at(table: Table) -> int | None:
    """The small files a partition must hold to be compacted (`auto_compact_small_files`)
    when one of the current snapshot's partitions holds that many; None otherwise."""
    settings = get_settings()
    threshold = settings.auto_compact_small_files
    if threshold <= 0:
        return None
    small = rewrite_plan.SMALL * settings.rewrite_target_file_bytes
    per_partition: Counter[str] = Counter(
        str(p.data_file.partition)
        for p in visible.plan(table, table.current_snapshot())
        if p.data_file.file_size_in_bytes < small
    )
    return threshold if per_partition and max(per_partition.values()) >= threshold else None


def needs_expire(table: Table, dataset: Dataset, pins: list[retention.Pin]) -> bool:
    plan = retention.plan_retention(
        table,
        service.policy_for(dataset),
        pins,
        now=clock.now(),
        pin_max_age_seconds=get_settings().consumer_pin_max_age_seconds,
    )
    return bool(plan.expired)


def held_back(session: Session, dataset_id: str, kind: JobKind) -> bool:
    """Whether the dataset's automatic `kind` (compaction, expire) waits for a later pass: its
    restatements are in flight and its last one started under `maintenance_defer_seconds` ago
    (one never run is not held back, nor one held back that long)."""
    defer = get_settings().maintenance_defer_seconds
    if not defer or not restatements.in_flight(session, dataset_id):
        return False
    started = jobs.last_started(session, dataset_id, kind)
    return started is not None and clock.db_now(session) - started < timedelta(seconds=defer)


def _schedule_dataset(dataset_id: str, out: dict[str, list[str]]) -> None:
    with session_scope() as session:
        dataset = session.get(Dataset, dataset_id)
        if dataset is None:
            return
        table = get_catalog().load_table(dataset.table_identifier)
        if service.active_job(session, dataset_id, REWRITE_KINDS) is None:
            reason = vacuum_reason(table)
            if reason is not None:
                try:
                    job = maintenance.start_vacuum(
                        session, dataset, VacuumRequest(mode=VacuumMode.FULL), trigger=reason
                    )
                except Conflict:
                    pass
                else:
                    log.info("scheduler: vacuum of %s (%s): job %s", dataset_id, reason, job.id)
                    out["vacuum"].append(dataset_id)
            elif (small := compact_at(table)) is not None and not held_back(
                session, dataset_id, JobKind.COMPACT
            ):
                request = CompactRequest(strategy=CompactStrategy.BINPACK, min_input_files=small)
                try:
                    job = maintenance.start_compaction(session, get_catalog(), dataset, request)
                except Conflict:
                    pass
                else:
                    log.info("scheduler: compaction of %s: job %s", dataset_id, job.id)
                    out["compact"].append(dataset_id)
        if (
            get_settings().materialize_deletes
            and tombstones.unmaterialized(table, table.current_snapshot()).num_rows
            and service.active_job(session, dataset_id, (JobKind.MATERIALIZE,)) is None
        ):
            queued = maintenance.request_materialize(session, dataset)
            log.info("scheduler: materialize %s: job %s", dataset_id, queued and queued.id)
            out["materialize"].append(dataset_id)
        if (
            get_settings().auto_expire
            and service.active_job(session, dataset_id, (JobKind.EXPIRE,)) is None
            and needs_expire(table, dataset, service.pins(session, dataset_id))
            and not held_back(session, dataset_id, JobKind.EXPIRE)
        ):
            job = service.start_expire(session, dataset)
            log.info("scheduler: expire of %s: job %s", dataset_id, job.id)
            out["expire"].append(dataset_id)


def schedule_once() -> dict[str, list[str]]:
    """One pass: abort the `loading` batches past their TTL (`aborted`: their ids), then every
    dataset; returns the dataset ids given a vacuum or an expire job."""
    out: dict[str, list[str]] = {
        "vacuum": [],
        "compact": [],
        "expire": [],
        "materialize": [],
        "failed": [],
        "aborted": [],
    }
    try:
        out["aborted"] = expiry.abort_expired()
    except Exception:  # the datasets' maintenance goes on
        log.warning("scheduler: aborting expired loading batches failed", exc_info=True)
    with session_scope() as session:
        dataset_ids = list(session.scalars(select(Dataset.id).order_by(Dataset.created_at)))
    for dataset_id in dataset_ids:
        try:
            _schedule_dataset(dataset_id, out)
        except Exception:  # one broken dataset must not stop maintenance of the others
            log.warning("scheduler: dataset %s skipped", dataset_id, exc_info=True)
            out["failed"].append(dataset_id)
    return out
