"""The materialize operation: a dataset's new tombstones become Iceberg position deletes.

Plan (`resolve`): the positions the tombstones past the mark hide, one delete file per data
file, written before the lease is taken (`app/lake/materialize_plan.py`). Commit (under the
dataset's commit lease, through the pipeline): a ROW DELTA snapshot adding them and removing the
delete files they replace, with the tombstone list re-marked, fenced on the parent. When the
parent moved meanwhile: an append or a tombstone commit leaves the resolution valid (its data
files are live, the mark unmoved), so it is committed on the new parent; a rewrite that removed
one of its files (RewriteConflict), or another materializer (MarkMoved), makes it plan again.
"""

from __future__ import annotations

import time
from typing import Any

from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

from app.config import get_settings
from app.jobs.results import MaterializeResult
from app.jobs.stages import Stage
from app.lake import commit as lake_commit
from app.lake import materialize_plan, pipeline, tombstones
from app.lake.catalog import get_catalog
from app.lake.materialize_plan import Resolution
from app.lake.pipeline import Committed, OperationKind, Replan, Summary
from workers.runtime import JobContext, dataset_identifier
from workers.spark import iceberg_java

PLANS = 8


class MarkMoved(Replan):
    """Another materializer committed since this one resolved: resolve again."""


class Materialize:
    """`pipeline.Operation` of a materialize job."""

    kind = OperationKind.MATERIALIZE

    def __init__(self, ctx: JobContext, identifier: str) -> None:
        self.ctx, self.identifier, self.request_id = ctx, identifier, ctx.request_id
        self.started = self.resolved = time.monotonic()
        self.java_table: Any = None
        self.spark: Any = None
        self.table: Table | None = None
        self.staged: iceberg_java.Staged | None = None

    def plan(self, table: Table) -> Resolution | None:
        from workers.spark.session import get_spark

        self.ctx.set_stage(Stage.RESOLVE, 0.05)
        self.table = table
        resolution = materialize_plan.resolve(table, table.current_snapshot())
        if resolution is None:
            return None
        self.resolved = time.monotonic()
        self.spark = get_spark()  # the session its Java table and commit belong to
        self.java_table = iceberg_java.load_table(self.spark, self.identifier)
        try:  # the commit's manifests too, before the lease: under it, the manifest list only
            self.staged = stage(self.spark, self.java_table, resolution, resolution.parent)
        except Replan:
            self.discard(resolution)
            raise
        # only now does it wait for the lease: the committers yield to a job in this stage
        # (`lease.maintenance_waiting`), not while it stages its manifests
        self.ctx.set_stage(Stage.COMMIT, 0.8)
        return resolution

    def summary(self, plan: Resolution) -> Summary:
        return Summary(self.kind, self.request_id)

    def commit(self, table: Table, plan: Resolution, summary: Summary) -> Committed:
        properties = summary.properties()
        return commit_resolution(self.spark, self.java_table, table, plan, properties, self.staged)

    def discard(self, plan: Resolution) -> None:
        assert self.table is not None
        tombstones.discard(self.table.io, plan.written)

    def record(self, committed: Committed, plan: Resolution | None) -> MaterializeResult:
        self.ctx.set_stage(Stage.COMMITTED, 0.95)  # the lease is free: no committer yields now
        if plan is None:
            return MaterializeResult(snapshot_id=committed.snapshot_id, recovered=True)
        return MaterializeResult(
            snapshot_id=committed.snapshot_id,
            materialized_seq=plan.seq,
            previous_seq=plan.previous_seq,
            tombstones=plan.tombstones,
            files_read=plan.files_read,
            delete_files_written=len(plan.files),
            delete_files_replaced=sum(len(f.replaced) for f in plan.files),
            positions=plan.positions,
            timings={
                "resolve": round(self.resolved - self.started, 3),
                "commit": round(time.monotonic() - self.resolved, 3),
            },
        )

    def nothing(self) -> MaterializeResult:
        return MaterializeResult(snapshot_id=None, nothing_to_do=True)


def run(ctx: JobContext, token: int | None = None) -> MaterializeResult:
    """The job; `token`: the dataset's commit lease, when the caller holds it (a restatement
    committer running the materializer between its groups), else taken for the commit."""
    dataset_id = ctx.subject_id or ""
    identifier = dataset_identifier(dataset_id)
    wait = 10 * get_settings().commit_lease_seconds
    return pipeline.run(
        Materialize(ctx, identifier),
        lambda: get_catalog().load_table(identifier),
        job=ctx,
        lease=pipeline.Lease(dataset_id, wait_seconds=wait, held=token),
        budget=pipeline.Budget(replans=PLANS, attempts=PLANS),
    )


def stage(
    spark: Any, java_table: Any, resolution: Resolution, parent: Snapshot
) -> iceberg_java.Staged | None:
    """The ROW DELTA of `resolution`'s files, validated from `parent` and applied once (its
    manifests written); None when it has no file (only the mark moves)."""
    if not resolution.files:
        return None
    update = iceberg_java.position_deletes_update(
        spark,
        java_table,
        snapshot_id=parent.snapshot_id,
        written=[f.written for f in resolution.files],
        replaced=[path for f in resolution.files for path in f.replaced],
    )
    return iceberg_java.stage(update, "the position deletes")


def commit_resolution(
    spark: Any,
    java_table: Any,
    table: Table,
    resolution: Resolution,
    properties: dict[str, str],
    staged: iceberg_java.Staged | None = None,
) -> Committed:
    """Commit `resolution` on `table`'s current snapshot with the list re-marked (the caller
    holds the commit lease), with its update as `stage` left it (staged here, on the current
    snapshot, when not given). Raises MarkMoved when another materializer committed since it
    was resolved, RewriteConflict when its files changed, ParentMoved when the parent moved
    during the commit."""
    parent = table.current_snapshot()
    mark = tombstones.materialized_seq(table, parent)
    if mark != resolution.previous_seq:
        raise MarkMoved(f"the mark moved from {resolution.previous_seq} to {mark}")
    assert parent is not None  # the resolution's parent is an ancestor of it
    tag = f"{table.metadata.next_sequence_number():012d}"
    marked = tombstones.write_materialized(table, parent, resolution.seq, tag=tag)
    summary = {**properties, **marked.properties}
    try:
        if staged is None:
            staged = stage(spark, java_table, resolution, parent)
        if staged is None:  # nothing hidden in any live file: only the mark moves
            snapshot = lake_commit.commit(table, files=[], new_tombstones=[], properties=summary)
            return Committed.of(snapshot)
        return iceberg_java.swap_in(spark, java_table, staged, parent.snapshot_id, summary)
    except BaseException:
        tombstones.discard(table.io, marked.written)
        raise
