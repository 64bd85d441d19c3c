"""The rewrite job: vacuum and compaction are one job with two file planners (DESIGN.md §4).

Phases (the job's stage): `scan` (metadata only: which files, which tombstones), `purge-data`
(Spark rewrites the files without the rows the start snapshot's tombstones hide), `purge-metadata`
(the new data files' Iceberg entries with their metrics, the old files' entries, the
tombstones that leave the active set, and the update's manifests, all built before the lease is
taken), `commit` (REWRITE FILES / DELETE FILES with the new tombstone list, under the commit
lease). A dry run stops after `scan` with the plan.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

from app.config import get_settings
from app.db import session_scope
from app.failpoints import failpoint
from app.jobs.kinds import CompactPayload, JobKind, VacuumPayload
from app.jobs.results import RewriteResult
from app.jobs.stages import Stage
from app.lake import (
    column_index,
    pipeline,
    rewrite_files,
    rewrite_plan,
    snapshots,
    tombstones,
    vacuum_plan,
    visible,
)
from app.lake.catalog import get_catalog
from app.lake.pipeline import Committed, OperationKind, Replan, Summary
from app.lake.rewrite_files import RewriteOutput, RewriteTask
from app.lake.types import BATCH_COLUMN
from app.models import Dataset
from app.privacy import erasure
from app.privacy import service as privacy
from workers.maintenance import rewrite_commit
from workers.maintenance.rewrite_commit import Prepared, RewriteCommit, prepare
from workers.runtime import JobContext, dataset_identifier
from workers.spark.progress import tracked
from workers.spark.session import get_spark

REPLANS = 4  # plans: a rewrite whose files another commit changed (RewriteConflict) plans again
ATTEMPTS = 16  # commits of one plan: appends may move the parent while the lease is held


class Rewrite:
    """`pipeline.Operation` of a vacuum or compaction job."""

    def __init__(self, ctx: JobContext, dataset_id: str, identifier: str) -> None:
        self.ctx, self.dataset_id, self.identifier = ctx, dataset_id, identifier
        self.kind = OperationKind(ctx.kind.value)  # vacuum | compact
        self.request_id = ctx.request_id
        self.finished: RewriteResult | None = None  # a dry run's, or nothing to do
        self.scan: dict[str, Any] = {}
        self.timings: dict[str, float] = {}
        self.table: Table | None = None
        self.committing = time.monotonic()
        self.spark: Any = None

    def plan(self, table: Table) -> Plan | None:
        """Scan, purge data (Spark), purge metadata: everything the commit needs but the lease."""
        ctx, operation, timings = self.ctx, self.kind.value, self.timings
        self.table = table
        began = time.monotonic()
        ctx.set_stage(Stage.SCAN, 0.02)
        start = table.current_snapshot()
        filt = visible.tombstone_filter(table, start)
        tasks, purged, self.scan = _plan(ctx, table, start, filt)
        timings["scan"] = round(time.monotonic() - began, 3)
        if _dry_run(ctx):
            rows = sum(rewrite_files.count_hidden(t) for t in tasks)
            self.finished = RewriteResult(
                dry_run=True, operation=operation, **self.scan, rows_to_purge=rows
            )
            return None
        if start is None or (not tasks and not purged.num_rows):
            self.finished = RewriteResult(
                operation=operation, snapshot_id=None, nothing_to_do=True, **self.scan
            )
            return None
        began = time.monotonic()
        ctx.set_stage(Stage.PURGE_DATA, 0.1)
        outputs = _purge_data(ctx, tasks)
        failpoint("after-purge-data")  # new files written, lease not held yet (tests race here)
        timings["purge_data"] = round(time.monotonic() - began, 3)
        began = time.monotonic()
        ctx.set_stage(Stage.PURGE_METADATA, 0.8)
        self.spark = get_spark()  # the one session of its metadata and commit
        work = RewriteCommit(self.dataset_id, self.identifier, operation, start, outputs, purged)
        plan = Plan(work, None)
        try:
            plan.prepared = prepare(self.spark, work)
        except Replan:
            self.discard(plan)
            raise
        timings["purge_metadata"] = round(time.monotonic() - began, 3)
        began = time.monotonic()
        # the new files by their paths as the manifests hold them (Iceberg's `file:/...`)
        written = [str(f.location()) for f in plan.prepared.added]  # type: ignore[attr-defined]
        column_index.warm(table.io, written, _restated_columns(self.dataset_id))
        timings["index"] = round(time.monotonic() - began, 3)
        ctx.set_stage(Stage.COMMIT, 0.9)
        self.committing = time.monotonic()
        return plan

    def summary(self, plan: Plan) -> Summary:
        start = plan.work.start
        return Summary(
            self.kind,
            self.request_id,
            extra={
                snapshots.START_SNAPSHOT: str(start.snapshot_id),
                snapshots.START_SEQUENCE: str(start.sequence_number or 0),
            },
        )

    def commit(self, table: Table, plan: Plan, summary: Summary) -> Committed:
        assert plan.prepared is not None
        return rewrite_commit.commit(self.spark, plan.work, plan.prepared, table, summary)

    def discard(self, plan: Plan) -> None:
        assert self.table is not None
        tombstones.discard(self.table.io, [o.output for o in plan.work.outputs if o.output])

    def nothing(self) -> RewriteResult:
        assert self.finished is not None
        return self.finished

    def record(self, committed: Committed, plan: Plan | None) -> RewriteResult:
        # the lease is free: no committer yields to this job while it records (its own
        # bookkeeping, seconds after a vacuum of thousands of GDPR deletes)
        self.ctx.set_stage(Stage.COMMITTED, 0.95)
        operation = self.kind.value
        if plan is None:  # a retry of a job whose commit landed
            return RewriteResult(
                snapshot_id=committed.snapshot_id, operation=operation, recovered=True
            )
        self.timings["commit"] = round(time.monotonic() - self.committing, 3)
        outputs, purged = plan.work.outputs, plan.work.purged
        rewritten = sum(len(o.inputs) for o in outputs if not o.unchanged)
        requests = []
        if operation == "vacuum":
            began = time.monotonic()
            with session_scope() as session:
                requests = privacy.record_vacuum(
                    session,
                    self.dataset_id,
                    self.identifier,
                    purged,
                    committed.snapshot_id,
                    rewritten,
                )
            self.timings["record_purges"] = round(time.monotonic() - began, 3)
            began = time.monotonic()
            erasure.check_erasure(self.dataset_id)
            self.timings["check_erasure"] = round(time.monotonic() - began, 3)
        return RewriteResult(
            operation=operation,
            snapshot_id=committed.snapshot_id,
            sequence_number=committed.sequence_number,
            iceberg_operation=committed.operation,
            start_snapshot_id=plan.work.start.snapshot_id,
            files_rewritten=sum(len(o.inputs) for o in outputs if o.output),
            files_deleted=sum(len(o.inputs) for o in outputs if not o.output and not o.unchanged),
            files_unchanged=sum(len(o.inputs) for o in outputs if o.unchanged),
            files_written=sum(1 for o in outputs if o.output),
            bytes_rewritten=sum(o.bytes_in for o in outputs),
            bytes_read=sum(o.bytes_read for o in outputs),
            bytes_written=sum(o.bytes_out for o in outputs),
            rows_read=sum(o.rows_in for o in outputs),
            rows_written=sum(o.rows_out for o in outputs),
            rows_purged=sum(o.rows_in - o.rows_out for o in outputs),
            tombstones_purged=purged.num_rows,
            purged_request_ids=requests,
            timings=self.timings,
            **{k: v for k, v in self.scan.items() if k not in ("files", "bytes")},
        )


@dataclass
class Plan:
    work: RewriteCommit
    prepared: Prepared | None


def rewrite(ctx: JobContext) -> RewriteResult:
    dataset_id = ctx.subject_id or ""
    identifier = dataset_identifier(dataset_id)
    return pipeline.run(
        Rewrite(ctx, dataset_id, identifier),
        lambda: get_catalog().load_table(identifier),
        job=ctx,
        lease=pipeline.Lease(dataset_id, wait_seconds=10 * get_settings().commit_lease_seconds),
        budget=pipeline.Budget(replans=REPLANS, attempts=ATTEMPTS),
    )


def _restated_columns(dataset_id: str) -> list[str]:
    """The columns restatements look rows up by: the identity columns (GDPR) and the batch
    column (reverts, replays)."""
    with session_scope() as session:
        dataset = session.get(Dataset, dataset_id)
        identity = list(dataset.identity_columns or []) if dataset is not None else []
    return [*identity, BATCH_COLUMN]


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

    spark = get_spark()
    with tracked(ctx, spark, f"rewrite {ctx.subject_id}") as progress:
        progress.phase("purge-data", 0.1, 0.8)
        return run_tasks(spark, tasks)
