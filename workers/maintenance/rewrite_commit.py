"""COMMIT of a rewrite: under the dataset's commit lease, fenced on the parent.

The new tombstone list (the parent's minus the purged tombstones, matched on namespace, id and
sequence number, so tombstones committed while the rewrite ran stay) and the data-file swap land
in one snapshot. Only appends can move the parent while the lease is held; each time one does,
the list is recomputed on the new parent and the commit is tried again.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import pyarrow as pa
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot
from pyspark.sql import SparkSession

from app.config import get_settings
from app.lake import commit as lake_commit
from app.lake import snapshots, tombstones, visible
from app.lake.catalog import get_catalog
from app.lake.commit import ParentMoved
from app.lake.rewrite_files import RewriteOutput
from workers import lease
from workers.failpoints import failpoint
from workers.lease import CommitLeaseLost
from workers.metrics import LEASE_TIMEOUTS, LEASE_WAIT
from workers.runtime import JobContext
from workers.spark import iceberg_java
from workers.spark.iceberg_java import Committed, RewriteConflict

log = logging.getLogger(__name__)
ATTEMPTS = 16


@dataclass
class RewriteCommit:
    dataset_id: str
    identifier: str
    operation: str  # vacuum | compact
    start: Snapshot
    outputs: list[RewriteOutput]
    purged: pa.Table  # tombstone rows to leave the active set (vacuum only)


def acquire_lease(ctx: JobContext, dataset_id: str) -> int:
    """Wait for the dataset's commit lease (restatement groups hold it for seconds at most)."""
    started = time.monotonic()
    deadline = started + 10 * get_settings().commit_lease_seconds
    pause = 0.05
    while time.monotonic() < deadline:
        token = lease.acquire(dataset_id)
        if token is not None:
            LEASE_WAIT.labels("rewrite").observe(time.monotonic() - started)
            return token
        ctx.check_lease()
        time.sleep(pause)
        pause = min(pause * 2, 0.25)  # the holder hands it over between groups: be there
    LEASE_TIMEOUTS.labels("rewrite").inc()
    raise TimeoutError(f"dataset {dataset_id}: the commit lease stayed taken")


@dataclass
class Prepared:
    """The rewrite's new metadata, built before the lease is taken: the Java table, the entries
    of the files it replaces (as of the start snapshot) and of the files it wrote (metrics read
    from their footers)."""

    java_table: object
    old: dict[str, object]
    added: list[object]
    old_deletes: list[object]  # the position delete files of the replaced files


def prepare(spark: SparkSession, work: RewriteCommit) -> Prepared:
    """The purge-metadata stage: everything the commit needs that does not need the lease."""
    java_table = iceberg_java.load_table(spark, work.identifier)
    replaced = [o for o in work.outputs if not o.unchanged]
    inputs = [path for output in replaced for path in output.inputs]
    tasks = iceberg_java.live_tasks(java_table, work.start.snapshot_id, inputs)
    old = {path: task.file() for path, task in tasks.items()}
    added = [
        iceberg_java.new_data_file(spark, java_table, o.output, old[o.inputs[0]])
        for o in replaced
        if o.output
    ]
    return Prepared(java_table, old, added, iceberg_java.delete_files_of(tasks.values()))


def commit(
    ctx: JobContext, spark: SparkSession, work: RewriteCommit, prepared: Prepared
) -> Committed:
    """Commit the rewrite once (a retried job finds its request id in the log and stops)."""
    token = acquire_lease(ctx, work.dataset_id)
    try:
        for _ in range(ATTEMPTS):
            table = get_catalog().load_table(work.identifier)
            done = snapshots.find_by_request_id(table, ctx.request_id)
            if done is not None:
                return Committed(
                    done.snapshot_id,
                    done.sequence_number or 0,
                    str(done.summary.operation) if done.summary else "replace",
                )
            try:
                return _attempt(ctx, spark, work, table, token, prepared)
            except ParentMoved as exc:
                log.info("rewrite %s: parent moved (%s); recomputing", ctx.request_id, exc)
        raise RuntimeError(f"rewrite {ctx.request_id}: the parent kept moving")
    finally:
        lease.release(work.dataset_id, token)


def _attempt(
    ctx: JobContext,
    spark: SparkSession,
    work: RewriteCommit,
    table: Table,
    token: int,
    prepared: Prepared,
) -> Committed:
    parent = table.current_snapshot()
    old = prepared.old
    if old and not prepared.added and not prepared.old_deletes:
        _no_new_deletes(table, parent, set(old))
    tag = f"{table.metadata.next_sequence_number():012d}"
    removal = work.purged if work.operation == "vacuum" else tombstones.SCHEMA.empty_table()
    written = tombstones.write_removal(table, parent, removal, tag=tag)
    summary = {
        snapshots.OPERATION: work.operation,
        snapshots.REQUEST_ID: ctx.request_id,
        snapshots.START_SNAPSHOT: str(work.start.snapshot_id),
        snapshots.START_SEQUENCE: str(work.start.sequence_number or 0),
        **written.properties,
    }
    if not lease.renew(work.dataset_id, token):
        tombstones.discard(table.io, written.written)
        raise CommitLeaseLost(work.dataset_id)
    ctx.check_lease()
    failpoint("before-rewrite-commit")
    try:
        if old:
            return iceberg_java.commit_rewrite(
                spark,
                prepared.java_table,
                parent_id=parent.snapshot_id if parent else None,
                start_snapshot_id=work.start.snapshot_id,
                start_sequence_number=work.start.sequence_number or 0,
                removed=list(old.values()),
                added=prepared.added,
                removed_deletes=prepared.old_deletes,
                summary=summary,
            )
        # nothing to rewrite, only tombstones to drop: a metadata-only snapshot
        snapshot = lake_commit.commit(table, files=[], new_tombstones=[], properties=summary)
        return Committed(snapshot.snapshot_id, snapshot.sequence_number or 0, "append")
    except ParentMoved:
        tombstones.discard(table.io, written.written)
        raise


def _no_new_deletes(table: Table, parent: Snapshot | None, removed: set[str]) -> None:
    """A DELETE FILES rewrite removes data files only: refuse it (re-plan) when the materializer
    gave one of them a position delete file since the start, which it would leave dangling
    (a REWRITE FILES snapshot has Iceberg check this itself)."""
    for planned in visible.plan(table, parent):
        if planned.delete_files and planned.data_file.file_path in removed:
            raise RewriteConflict(f"{planned.data_file.file_path} got position deletes")
