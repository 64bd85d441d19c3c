"""GDPR erasure: a privacy job goes `complete → erased` once no retained file holds its rows.

A committed GDPR restatement R of a dataset is erased when, on the table as it is now:
- every snapshot has a sequence number >= R's (the snapshots before R, where the rows were
  visible, are expired), and no snapshot has R's tombstones active (the snapshots between R and
  the vacuum that purged them, whose files still held the rows, are expired);
- no readable vacuumed-tombstones file (`tombstone.vacuum.file`) holds R's tombstones (it names
  the erased identities). A vacuum snapshot's file serves only increments that start before
  it: once its parent is expired nothing can read it and expiry deletes it, even while the
  snapshot itself stays (it may own the tombstone list in force);
- no Parquet file under the table location that no snapshot references is left (a crashed
  write's output may hold the rows), except the staged files of replays still in flight.
Expiry deletes the files only expired snapshots referenced, so these conditions mean every copy
is physically gone. Called at the end of every expire job and every vacuum.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Any

import pyarrow.compute as pc
from pyiceberg.table import Table
from sqlalchemy.orm import Session

from app import clock
from app.db import session_scope
from app.lake import retention, tombstones
from app.lake.catalog import get_catalog
from app.models import Dataset, PrivacyJob, Restatement
from app.privacy import repository
from app.restatements import service as restatements
from app.retention import service as retention_service

log = logging.getLogger(__name__)
IN_FLIGHT = restatements.OPEN


def held_request_ids(table: Table) -> set[str]:
    """Request ids of the tombstones any snapshot holds, active or vacuumed."""
    held: set[str] = set()
    locations = {tombstones.list_location(table, s) for s in table.snapshots()}
    for location in locations - {None}:
        listed = tombstones.read_list(table.io, location)
        for segment in listed.segments:
            rows = tombstones.read_segment(table.io, segment.path)
            held.update(str(v) for v in pc.unique(rows["request_id"]).to_pylist() if v)
    ids = {s.snapshot_id for s in table.snapshots()}
    for snapshot in table.snapshots():
        vacuumed = retention.own_properties(snapshot).get(retention.VACUUM_FILE)
        # the oldest retained snapshot's vacuumed file is no longer readable (expiry removes it)
        if vacuumed and snapshot.parent_snapshot_id in ids:
            rows = tombstones.read_segment(table.io, vacuumed)
            held.update(str(v) for v in pc.unique(rows["request_id"]).to_pylist() if v)
    return held


def stray_parquet(table: Table, in_flight_batches: set[str]) -> list[str]:
    """Parquet files under the table location that no snapshot references."""
    index = retention.FileIndex(table)
    referenced = index.referenced(table.snapshots(), readable=True)
    stray = []
    for listed in retention.list_files(table):
        if not listed.path.endswith(".parquet") or listed.path in referenced:
            continue
        if retention.staged_batch(listed.path, table) in in_flight_batches:
            continue
        stray.append(listed.path)
    return stray


def receipt(parts: list[Restatement]) -> dict[str, Any]:
    erased = [p.erased_at for p in parts if p.erased_at]
    return {
        "files_rewritten": sum(p.files_rewritten or 0 for p in parts),
        "snapshots_expired": sum(p.snapshots_expired or 0 for p in parts),
        "last_physical_removal_at": max(erased).isoformat() if erased else None,
        "datasets": {
            p.dataset_id: {
                "files_rewritten": p.files_rewritten or 0,
                "snapshots_expired": p.snapshots_expired or 0,
                "purge_snapshot_ids": list(p.purge_snapshot_ids or []),
                "purged_at": p.purged_at.isoformat() if p.purged_at else None,
                "erased_at": p.erased_at.isoformat() if p.erased_at else None,
            }
            for p in parts
        },
    }


def settle_privacy_job(session: Session, privacy_job_id: str) -> bool:
    """Mark the privacy job erased, with its receipt, once every one of its datasets is."""
    return settle_privacy_jobs(session, [privacy_job_id]) == 1


def settle_privacy_jobs(session: Session, privacy_job_ids: Collection[str]) -> int:
    """`settle_privacy_job` for each of the privacy jobs, their rows read in a few queries: a
    vacuum or an expiry erases thousands at once, and two queries each were most of its
    erasure check at scale (bench/RESULTS.md, "Costs at scale"); how many it settled."""
    parts = repository.restatements_of_privacy_jobs(session, privacy_job_ids)
    jobs = repository.privacy_jobs_by_id(session, privacy_job_ids)
    return sum(_settle(job, parts.get(job.id, [])) for job in jobs)


def _settle(job: PrivacyJob, parts: list[Restatement]) -> bool:
    if not parts or not all(p.erased_at for p in parts):
        return False
    job.erased_at = max(p.erased_at for p in parts if p.erased_at)
    job.receipt = receipt(parts)
    return True


def check_erasure(dataset_id: str) -> list[str]:
    """Mark the dataset's GDPR restatements whose rows are physically gone as erased, and their
    privacy jobs once every dataset is; returns the restatement ids erased now."""
    with session_scope() as session:
        dataset = session.get(Dataset, dataset_id)
        if dataset is None:
            return []
        identifier = dataset.table_identifier
        candidates = repository.unerased_gdpr_restatements(session, dataset_id)
        in_flight = repository.restated_batch_ids(session, dataset_id, IN_FLIGHT)
    if not candidates:
        return []
    table = get_catalog().load_table(identifier)
    snapshots = table.snapshots()
    if not snapshots:
        return []
    oldest = min(s.sequence_number or 0 for s in snapshots)
    held = held_request_ids(table)
    stray = stray_parquet(table, in_flight)
    if stray:
        log.info(
            "dataset %s: %d unreferenced Parquet files delay erasure, such as %s",
            dataset_id,
            len(stray),
            ", ".join(sorted(stray)[:5]),
        )
        return []
    erasable = [
        rid for rid, request_id, seq in candidates if seq <= oldest and request_id not in held
    ]
    if not erasable:
        return []
    now = clock.now()
    with session_scope() as session:
        expired = retention_service.count_expired_before(session, dataset_id, oldest)
        jobs: set[str] = set()
        for row in repository.restatements_by_id(session, erasable):
            row.erased_at, row.snapshots_expired = now, expired
            if row.privacy_job_id:
                jobs.add(row.privacy_job_id)
        session.flush()
        settle_privacy_jobs(session, jobs)
    log.info("dataset %s: GDPR restatements erased: %s", dataset_id, erasable)
    return erasable
