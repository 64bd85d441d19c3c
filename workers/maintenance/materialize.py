"""The materialize job: a dataset's new tombstones become Iceberg position deletes.

Stages: `resolve` (app.lake.materialize: the positions the tombstones past the mark hide, one
delete file per data file, written before the lease is taken), `commit` (under the dataset's
commit lease: a ROW DELTA snapshot adding them and removing the delete files they replace, with
the tombstone list re-marked, fenced on the parent). When the parent moved meanwhile: an append
or a tombstone commit leaves the resolution valid (its data files are live, the mark unmoved),
so it is committed on the new parent; a rewrite that removed one of its files, or another
materializer, makes it plan again.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from pyiceberg.table import Table

from app.jobs.kinds import TaskName
from app.lake import commit as lake_commit
from app.lake import materialize, snapshots, tombstones
from app.lake.catalog import get_catalog
from app.lake.commit import ParentMoved
from app.lake.materialize import Resolution
from workers import lease
from workers.celery_app import job_task
from workers.failpoints import failpoint
from workers.lease import CommitLeaseLost
from workers.maintenance.rewrite_commit import acquire_lease
from workers.runtime import JobContext, dataset_identifier, run_job
from workers.spark import iceberg_java
from workers.spark.iceberg_java import Committed, RewriteConflict

log = logging.getLogger(__name__)
PLANS = 8


def run(ctx: JobContext, token: int | None = None) -> dict[str, Any]:
    """The job; `token`: the dataset's commit lease, when the caller holds it (a restatement
    committer running the materializer between its groups), else taken for the commit."""
    dataset_id = ctx.subject_id or ""
    identifier = dataset_identifier(dataset_id)
    started = time.monotonic()
    for _ in range(PLANS):
        table = get_catalog().load_table(identifier)
        done = snapshots.find_by_request_id(table, ctx.request_id)
        if done is not None:  # a retry of a job whose commit landed
            return {"snapshot_id": done.snapshot_id, "recovered": True}
        ctx.set_stage("resolve", 0.05)
        resolution = materialize.resolve(table, table.current_snapshot())
        if resolution is None:
            return {"snapshot_id": None, "nothing_to_do": True}
        resolved = time.monotonic()
        ctx.set_stage("commit", 0.8)
        try:
            committed = _commit(ctx, dataset_id, identifier, resolution, token)
        except (RewriteConflict, MarkMoved) as exc:
            tombstones.discard(table.io, resolution.written)
            log.info("materialize %s: %s; resolving again", dataset_id, exc)
            continue
        except BaseException:
            tombstones.discard(table.io, resolution.written)
            raise
        return {
            "snapshot_id": committed.snapshot_id,
            "materialized_seq": resolution.seq,
            "previous_seq": resolution.previous_seq,
            "tombstones": resolution.tombstones,
            "files_read": resolution.files_read,
            "delete_files_written": len(resolution.files),
            "delete_files_replaced": sum(len(f.replaced) for f in resolution.files),
            "positions": resolution.positions,
            "timings": {
                "resolve": round(resolved - started, 3),
                "commit": round(time.monotonic() - resolved, 3),
            },
        }
    raise RuntimeError(f"materialize {dataset_id}: the table kept changing ({PLANS} plans)")


class MarkMoved(Exception):
    """Another materializer committed since this one resolved: resolve again."""


def _commit(
    ctx: JobContext, dataset_id: str, identifier: str, resolution: Resolution, held: int | None
) -> Committed:
    from workers.spark.session import get_spark

    spark = get_spark()
    java_table = iceberg_java.load_table(spark, identifier)
    token = held if held is not None else acquire_lease(ctx, dataset_id)
    try:
        for _ in range(PLANS):
            table = get_catalog().load_table(identifier)
            try:
                return _attempt(ctx, spark, java_table, table, token, dataset_id, resolution)
            except ParentMoved as exc:
                log.info("materialize %s: parent moved (%s)", dataset_id, exc)
        raise RuntimeError(f"materialize {dataset_id}: the parent kept moving")
    finally:
        if held is None:
            lease.release(dataset_id, token)


def _attempt(
    ctx: JobContext,
    spark: Any,
    java_table: Any,
    table: Table,
    token: int,
    dataset_id: str,
    resolution: Resolution,
) -> Committed:
    if not lease.renew(dataset_id, token):
        raise CommitLeaseLost(dataset_id)
    ctx.check_lease()
    failpoint("before-materialize-commit")
    properties = {snapshots.OPERATION: "materialize", snapshots.REQUEST_ID: ctx.request_id}
    return commit_resolution(spark, java_table, table, resolution, properties)


def commit_resolution(
    spark: Any, java_table: Any, table: Table, resolution: Resolution, properties: dict[str, str]
) -> Committed:
    """Commit `resolution` on `table`'s current snapshot with the list re-marked (the caller
    holds the commit lease). Raises MarkMoved when another materializer committed since it
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
        if not resolution.files:  # nothing hidden in any live file: only the mark moves
            snapshot = lake_commit.commit(table, files=[], new_tombstones=[], properties=summary)
            return Committed(snapshot.snapshot_id, snapshot.sequence_number or 0, "append")
        return iceberg_java.commit_position_deletes(
            spark,
            java_table,
            parent_id=parent.snapshot_id,
            written=[f.written for f in resolution.files],
            replaced=[path for f in resolution.files for path in f.replaced],
            summary=summary,
        )
    except BaseException:
        tombstones.discard(table.io, marked.written)
        raise


def run_queued(job_id: str, token: int) -> None:
    """Run a queued materialize job here and now, under the commit lease `token` the caller
    holds: the public entry of a restatement committer that found the job waiting too long
    (its message then finds it done). A failure is the job's (retried or failed as usual)."""
    run_job(job_id, lambda ctx: run(ctx, token))


materialize_task = job_task(TaskName.MATERIALIZE, run)
