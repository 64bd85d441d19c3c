"""Pruning the metadata store (issue 26): without it every job, outbox message, idempotency key,
restatement and privacy job stays forever (about four rows per restatement).

The rules, one per table; each keeps what an answer or a guarantee still needs:

- `outbox`: a message published more than `outbox_retention_days` ago whose job is over.
- `jobs`: a job that succeeded or failed more than `job_retention_days` ago (`GET /v1/jobs/{id}`
  answers for that long), unless a restatement names it (a revert's or replay's receipt, and a
  privacy job's status, read it) or its batch is still in flight.
- `idempotency_keys`: first used more than `idempotency_key_retention_days` ago (a retry after
  that runs again).
- `privacy_jobs`, with their GDPR `restatements` and those restatements' jobs: once every
  restatement is done (failed, or erased with its commit snapshot expired, so no tombstone of it
  can hide a row: `app.privacy.reads.in_force` never reads it again) and nothing of them changed
  for `privacy_job_retention_days` (the receipt of `GET /v1/privacy/jobs/{id}` lives that long).
- `restatements` of reverts and replays: only a failed one that no batch names, after
  `restatement_retention_days`. A committed one is the receipt of the batch it restated
  (`GET /v1/batches/{id}` → `restatement`) and is kept as long as that batch.
- `audit_events`: never deleted here, moved: the beat's same pass (`workers.scheduler.prune_task`)
  then moves events older than `audit_retention_days` to the org's Iceberg table, still listed
  by `GET /v1/audit` (`workers/audit/archive.py`: an Iceberg commit, so the worker's side).
- `expired_snapshots`: the record of a snapshot retention expired (what makes a checkpoint or
  an increment that needs it a 410, not a 404) is forgotten `expired_snapshot_retention_days`
  after the expiry, unless a batch names the snapshot (the doctor checks a committed batch's
  snapshot is in the log or recorded), a restatement does (its receipt; a GDPR one's privacy job
  is pruned only once its snapshot is recorded expired) or a consumer does (its checkpoint is a
  410), or it is the dataset's oldest record: a time before every retained snapshot is then still
  a 410 (`app/changes/service.RangeResolver.by_time`), since expiry always takes a prefix of the
  dataset's linear history. The dataset's count of forgotten records (`forgotten_snapshots`)
  keeps an erasure's `snapshots_expired` exact; a forgotten id is a 404 that says so.
- `cdc_chunks`: an accepted chunk of CDC events staged more than `cdc_chunk_retention_days`
  ago whose every event the processor has applied (one row per accepted request: 25,000 in a
  full-size `bench.cdc` run). A chunk not staged yet, or holding an event past the tenant's
  processed watermark, is what the lag and the dumper read.
- never: batches, datasets, keys, consumers, leases, the other CDC rows (mirrors, counters and
  the Debezium keys; CDC lag samples have their own retention).

Each rule deletes in chunks of `prune_chunk_rows`, one transaction per chunk, so a large
backlog never holds locks long; cutoffs are read from the store's clock once per pass.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta

from prometheus_client import Counter as PromCounter

from app import clock
from app.config import Settings, get_settings
from app.db import session_scope
from app.pruning import repository

log = logging.getLogger(__name__)

TABLES = (
    "privacy_jobs",
    "restatements",
    "jobs",
    "outbox",
    "idempotency_keys",
    "expired_snapshots",
    "cdc_chunks",
)
PRUNED = PromCounter(
    "icebatch_store_rows_pruned",
    "Rows of the metadata store deleted by the pruning pass, by table",
    ["table"],
)


def _cutoff(now: datetime, days: float) -> datetime:
    return now - timedelta(days=days)


def _drain(step: Callable[[], dict[str, int]], driver: str, limit: int, out: Counter[str]) -> None:
    """Run `step` (one chunk, its own transaction) until a chunk deletes fewer than `limit`
    rows of its `driver` table."""
    while True:
        counts = step()
        out.update(counts)
        if counts.get(driver, 0) < limit:
            return


def prune(settings: Settings | None = None) -> dict[str, int]:
    """One pass of every rule over the whole store; rows deleted per table (every table of
    `TABLES`, zeros included). Running it again at once deletes nothing."""
    settings = settings or get_settings()
    limit = settings.prune_chunk_rows
    with session_scope() as session:
        now = clock.db_now(session)
    privacy_before = _cutoff(now, settings.privacy_job_retention_days)
    restatements_before = _cutoff(now, settings.restatement_retention_days)
    outbox_before = _cutoff(now, settings.outbox_retention_days)
    jobs_before = _cutoff(now, settings.job_retention_days)
    keys_before = _cutoff(now, settings.idempotency_key_retention_days)
    snapshots_before = _cutoff(now, settings.expired_snapshot_retention_days)
    chunks_before = _cutoff(now, settings.cdc_chunk_retention_days)

    def restatements() -> dict[str, int]:
        with session_scope() as session:
            done, jobs, outbox = repository.failed_restatements(session, restatements_before, limit)
        return {"restatements": done, "jobs": jobs, "outbox": outbox}

    def outbox() -> dict[str, int]:
        with session_scope() as session:
            return {"outbox": repository.delivered_outbox(session, outbox_before, limit)}

    def jobs() -> dict[str, int]:
        with session_scope() as session:
            done, outbox = repository.finished_jobs(session, jobs_before, limit)
        return {"jobs": done, "outbox": outbox}

    def keys() -> dict[str, int]:
        with session_scope() as session:
            return {"idempotency_keys": repository.idempotency_keys(session, keys_before, limit)}

    def chunks() -> dict[str, int]:
        with session_scope() as session:
            return {"cdc_chunks": repository.applied_cdc_chunks(session, chunks_before, limit)}

    pruned: Counter[str] = Counter(dict.fromkeys(TABLES, 0))
    # owners first: a restatement's job is only free to go once the restatement has gone.
    # The privacy jobs are selected once a pass (a grouped scan of every privacy job and its
    # restatements: 45 % of a 12,000-job pass when it ran once per chunk); each chunk is
    # checked again where it is deleted
    with session_scope() as session:
        finished = repository.finished_privacy_job_ids(session, privacy_before)
    for start in range(0, len(finished), limit):
        with session_scope() as session:
            chunk = finished[start : start + limit]
            pruned.update(repository.finished_privacy_jobs(session, privacy_before, chunk))
    _drain(restatements, "restatements", limit, pruned)
    _drain(outbox, "outbox", limit, pruned)
    _drain(jobs, "jobs", limit, pruned)
    _drain(keys, "idempotency_keys", limit, pruned)
    _drain(chunks, "cdc_chunks", limit, pruned)
    # last: a record frees once the restatements naming it are gone. Read in key order, as a
    # named or oldest record is kept for good and would fill every first chunk
    after: repository.Key | None = None
    while True:
        with session_scope() as session:
            forgotten, after, read = repository.forget_expired_snapshots(
                session, snapshots_before, after, limit
            )
        pruned["expired_snapshots"] += forgotten
        if read < limit:
            break
    for table, count in pruned.items():
        if count:
            PRUNED.labels(table=table).inc(count)
    level = logging.INFO if any(pruned.values()) else logging.DEBUG
    log.log(level, "pruned the metadata store: %s", dict(pruned))
    return dict(pruned)
