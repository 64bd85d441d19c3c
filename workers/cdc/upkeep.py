"""After a processor run's commit: the tenant's processed mirror moved, and the raw table's
compaction queued when runs have fragmented it."""

from __future__ import annotations

import logging
from typing import Any

from app import clock
from app.cdc import repository
from app.config import get_settings
from app.db import session_scope
from app.errors import Conflict
from app.lake.catalog import get_catalog
from app.maintenance import service as maintenance
from app.maintenance.schemas import CompactRequest
from app.models import Dataset
from workers.runtime import JobContext

log = logging.getLogger(__name__)


def data_files(table: Any) -> int:
    snapshot = table.current_snapshot()
    summary = snapshot.summary if snapshot is not None and snapshot.summary else None
    return int(summary.additional_properties.get("total-data-files", 0)) if summary else 0


def mirror(org: str, seq: int, newest: Any) -> None:
    with session_scope() as session:
        tenant = repository.locked_tenant(session, org)
        if tenant is None:
            return
        if seq >= tenant.processed_seq:
            tenant.processed_seq = seq
            tenant.processed_max_ts = newest
        tenant.processed_at = clock.db_now(session)


def compact_when_fragmented(ctx: JobContext, table: Any) -> None:
    """Queue a bin-pack compaction of the raw table when a partition holds more than
    `cdc_compact_files` data files. A copy-on-write merge rewrites the files of the entities it
    updates, but new entities land in new files: runs that mostly insert fragment it."""
    if data_files(table) <= get_settings().cdc_compact_files:
        return  # no partition can hold more (and PyIceberg's inspect fails on an empty table)
    files = table.inspect.files().select(["partition"]).column("partition").to_pylist()
    per_partition: dict[str, int] = {}
    for partition in files:
        key = repr(sorted(partition.items())) if isinstance(partition, dict) else repr(partition)
        per_partition[key] = per_partition.get(key, 0) + 1
    most = max(per_partition.values(), default=0)
    if most <= get_settings().cdc_compact_files:
        return
    with session_scope() as session:
        dataset = session.get(Dataset, ctx.subject_id)
        if dataset is None:
            return
        try:
            job = maintenance.start_compaction(
                session, get_catalog(), dataset, CompactRequest(min_input_files=2)
            )
        except Conflict:
            return  # a rewrite of the raw table is already queued or running
        log.info(
            "raw table of %s: %s files in a partition; compaction job %s", ctx.org, most, job.id
        )
