"""The rewrite job: vacuum and compaction are one job with two file planners (DESIGN.md §4).

Phases (the job's stage): `scan` (metadata only: which files, which tombstones), `purge-data`
(Spark rewrites the files without the rows the start snapshot's tombstones hide), `purge-metadata`
(the new data files' Iceberg entries with their metrics, the old files' entries, and the
tombstones that leave the active set, all built before the lease is taken), `commit` (REWRITE
FILES / DELETE FILES with the new tombstone list, under the commit lease). A dry run stops
after `scan` with the plan.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import pyarrow as pa
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

from app.jobs.kinds import CompactPayload, JobKind, TaskName, VacuumPayload
from app.lake import rewrite_files, rewrite_plan, snapshots, tombstones, vacuum_plan, visible
from app.lake.catalog import get_catalog
from app.lake.rewrite_files import RewriteOutput, RewriteTask
from app.retention import erasure
from workers.celery_app import job_task
from workers.failpoints import failpoint
from workers.maintenance import purges
from workers.maintenance.rewrite_commit import RewriteCommit, commit, prepare
from workers.runtime import JobContext, dataset_identifier
from workers.spark.iceberg_java import RewriteConflict

log = logging.getLogger(__name__)
REPLANS = 4


def rewrite(ctx: JobContext) -> dict[str, Any]:
    operation = ctx.kind.value  # vacuum | compact
    dataset_id = ctx.subject_id or ""
    identifier = dataset_identifier(dataset_id)
    for attempt in range(1, REPLANS + 1):
        table = get_catalog().load_table(identifier)
        done = snapshots.find_by_request_id(table, ctx.request_id)
        if done is not None:  # a retry of a job whose commit landed
            return {"snapshot_id": done.snapshot_id, "operation": operation, "recovered": True}
        try:
            return _rewrite_once(ctx, operation, dataset_id, identifier, table)
        except RewriteConflict as exc:
            # the materializer gave a file this rewrite replaces new position deletes (their
            # rows are not purged from its output) or removed one: plan again on the new state
            log.info("rewrite %s: %s; planning again (%s)", ctx.request_id, exc, attempt)
    raise RuntimeError(f"rewrite {ctx.request_id}: its files kept changing ({REPLANS} plans)")


def _rewrite_once(
    ctx: JobContext, operation: str, dataset_id: str, identifier: str, table: Table
) -> dict[str, Any]:
    timings: dict[str, float] = {}
    clock = time.monotonic()
    ctx.set_stage("scan", 0.02)
    start = table.current_snapshot()
    filt = visible.tombstone_filter(table, start)
    tasks, purged, scan = _plan(ctx, table, start, filt)
    timings["scan"] = round(time.monotonic() - clock, 3)
    if _dry_run(ctx):
        rows = sum(rewrite_files.count_hidden(t) for t in tasks)
        return {"dry_run": True, "operation": operation, **scan, "rows_to_purge": rows}
    if start is None or (not tasks and not purged.num_rows):
        return {"operation": operation, "snapshot_id": None, "nothing_to_do": True, **scan}
    clock = time.monotonic()
    ctx.set_stage("purge-data", 0.1)
    outputs = _purge_data(ctx, tasks)
    failpoint("after-purge-data")  # new files written, lease not held yet (tests race here)
    timings["purge_data"] = round(time.monotonic() - clock, 3)
    clock = time.monotonic()
    ctx.set_stage("purge-metadata", 0.8)
    from workers.spark.session import get_spark

    spark = get_spark()
    work = RewriteCommit(dataset_id, identifier, operation, start, outputs, purged)
    try:
        prepared = prepare(spark, work)
        timings["purge_metadata"] = round(time.monotonic() - clock, 3)
        clock = time.monotonic()
        ctx.set_stage("commit", 0.9)
        committed = commit(ctx, spark, work, prepared)
    except RewriteConflict:
        tombstones.discard(table.io, [o.output for o in outputs if o.output])
        raise
    timings["commit"] = round(time.monotonic() - clock, 3)
    rewritten = sum(len(o.inputs) for o in outputs if not o.unchanged)
    requests = []
    if operation == "vacuum":
        requests = purges.record(dataset_id, identifier, purged, committed.snapshot_id, rewritten)
        erasure.check_erasure(dataset_id)
    return {
        "operation": operation,
        "snapshot_id": committed.snapshot_id,
        "sequence_number": committed.sequence_number,
        "iceberg_operation": committed.operation,
        "start_snapshot_id": start.snapshot_id,
        "files_rewritten": sum(len(o.inputs) for o in outputs if o.output),
        "files_deleted": sum(len(o.inputs) for o in outputs if not o.output and not o.unchanged),
        "files_unchanged": sum(len(o.inputs) for o in outputs if o.unchanged),
        "files_written": sum(1 for o in outputs if o.output),
        "bytes_rewritten": sum(o.bytes_in for o in outputs),
        "bytes_read": sum(o.bytes_read for o in outputs),
        "bytes_written": sum(o.bytes_out for o in outputs),
        "rows_read": sum(o.rows_in for o in outputs),
        "rows_written": sum(o.rows_out for o in outputs),
        "rows_purged": sum(o.rows_in - o.rows_out for o in outputs),
        "tombstones_purged": purged.num_rows,
        "purged_request_ids": requests,
        "timings": timings,
        **{k: v for k, v in scan.items() if k not in ("files", "bytes")},
    }


def _dry_run(ctx: JobContext) -> bool:
    if ctx.kind is JobKind.VACUUM:
        return ctx.payload_as(VacuumPayload).dry_run
    return ctx.payload_as(CompactPayload).dry_run


def _plan(
    ctx: JobContext,
    table: Table,
    start: Snapshot | None,
    filt: visible.TombstoneFilter,
) -> tuple[list[RewriteTask], pa.Table, dict[str, Any]]:
    if ctx.kind is JobKind.VACUUM:
        vacuum = ctx.payload_as(VacuumPayload)
        plan = vacuum_plan.plan_vacuum(
            table,
            start,
            max_files=vacuum.max_files,
            max_bytes=vacuum.max_bytes,
            max_tombstones=vacuum.tombstones,
        )
        tasks = rewrite_plan.vacuum_tasks(table, start, plan, filt)
        scan = {
            "files": len(plan.files),
            "bytes": plan.bytes,
            "rows_in_files": plan.records,
            "exposed_files": plan.exposed_files,
            "active_tombstones": plan.active,
            "tombstones_to_purge": plan.purged.num_rows,
        }
        return tasks, plan.purged, scan
    compact = ctx.payload_as(CompactPayload)
    options = rewrite_plan.CompactionOptions(
        strategy=compact.strategy,
        target_bytes=compact.target_file_bytes,
        min_input_files=compact.min_input_files,
        sort_by=tuple(compact.sort_by or ()),
    )
    groups = rewrite_plan.compaction_groups(table, start, options)
    tasks = rewrite_plan.compaction_tasks(table, groups, filt, options)
    files = [p for g in groups for p in g]
    scan = {
        "files": len(files),
        "bytes": sum(p.data_file.file_size_in_bytes for p in files),
        "rows_in_files": sum(p.data_file.record_count for p in files),
        "groups": len(groups),
        "strategy": options.strategy,
    }
    return tasks, tombstones.SCHEMA.empty_table(), scan


def _purge_data(ctx: JobContext, tasks: list[RewriteTask]) -> list[RewriteOutput]:
    from workers.maintenance.spark_job import run_tasks
    from workers.spark.progress import SparkProgress
    from workers.spark.session import get_spark

    spark = get_spark()
    spark.sparkContext.setJobGroup(ctx.request_id, f"rewrite {ctx.subject_id}", True)
    progress = SparkProgress(spark.sparkContext, ctx.request_id)
    progress.phase("purge-data", 0.1, 0.8)
    ctx.progress_fn = progress.value
    try:
        return run_tasks(spark, tasks)
    finally:
        ctx.progress_fn = None


rewrite_task = job_task(TaskName.REWRITE, rewrite)
