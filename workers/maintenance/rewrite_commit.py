"""COMMIT of a rewrite (through the pipeline: under the dataset's commit lease, fenced on the
parent).

The new tombstone list (the parent's minus the purged tombstones, matched on namespace, id and
sequence number, so tombstones committed while the rewrite ran stay) and the data-file swap land
in one snapshot. Only appends can move the parent while the lease is held; each time one does,
the list is recomputed on the new parent and the commit is tried again.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot
from pyspark.sql import SparkSession

from app.lake import commit as lake_commit
from app.lake import tombstones, visible
from app.lake.commit import ParentMoved
from app.lake.pipeline import Committed, Replan, Summary
from app.lake.rewrite_files import RewriteOutput
from workers.spark import iceberg_java
from workers.spark.iceberg_java import RewriteConflict, Staged


@dataclass
class RewriteCommit:
    dataset_id: str
    identifier: str
    operation: str  # vacuum | compact
    start: Snapshot
    outputs: list[RewriteOutput]
    purged: pa.Table  # tombstone rows to leave the active set (vacuum only)


@dataclass
class Prepared:
    """The rewrite's new metadata, built before the lease is taken: the Java table, the entries
    of the files it replaces (as of the start snapshot) and of the files it wrote (metrics read
    from their footers)."""

    java_table: object
    old: dict[str, object]
    added: list[object]
    old_deletes: list[object]  # the position delete files of the replaced files
    staged: Staged | None  # the Java update, applied once (its manifests written); None: no file


def prepare(spark: SparkSession, work: RewriteCommit) -> Prepared:
    """The purge-metadata stage: everything the commit needs that does not need the lease,
    down to the update's manifests (`iceberg_java.stage`)."""
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
    old_deletes = iceberg_java.delete_files_of(tasks.values())
    staged = None
    if old:
        update = iceberg_java.rewrite_update(
            java_table,
            start_snapshot_id=work.start.snapshot_id,
            start_sequence_number=work.start.sequence_number or 0,
            removed=list(old.values()),
            added=added,
            removed_deletes=old_deletes,
        )
        staged = iceberg_java.stage(update, "the rewrite")
    return Prepared(java_table, old, added, old_deletes, staged)


def commit(
    spark: SparkSession, work: RewriteCommit, prepared: Prepared, table: Table, summary: Summary
) -> Committed:
    """One attempt on `table`'s current snapshot (the pipeline holds the lease): the new
    tombstone list (the parent's less the purged ones) and the file swap in one snapshot.
    Raises ParentMoved or RewriteConflict (having removed the list it wrote)."""
    parent = table.current_snapshot()
    old = prepared.old
    if old and not prepared.added and not prepared.old_deletes:
        _no_new_deletes(table, parent, set(old))
    tag = f"{table.metadata.next_sequence_number():012d}"
    vacuum = work.operation == "vacuum"
    removal = work.purged if vacuum else tombstones.SCHEMA.empty_table()
    through = (work.start.sequence_number or 0) if vacuum else 0
    written = tombstones.write_removal(table, parent, removal, tag=tag, purged_through=through)
    properties = summary.properties() | written.properties
    try:
        if prepared.staged is not None:
            parent_id = parent.snapshot_id if parent else None
            return iceberg_java.swap_in(
                spark, prepared.java_table, prepared.staged, parent_id, properties
            )
        # nothing to rewrite, only tombstones to drop: a metadata-only snapshot
        snapshot = lake_commit.commit(table, files=[], new_tombstones=[], properties=properties)
        return Committed.of(snapshot)
    except (ParentMoved, Replan):
        tombstones.discard(table.io, written.written)
        raise


def _no_new_deletes(table: Table, parent: Snapshot | None, removed: set[str]) -> None:
    """A DELETE FILES rewrite removes data files only: refuse it (re-plan) when the materializer
    gave one of them a position delete file since the start, which it would leave dangling
    (a REWRITE FILES snapshot has Iceberg check this itself)."""
    for planned in visible.plan(table, parent):
        if planned.delete_files and planned.data_file.file_path in removed:
            raise RewriteConflict(f"{planned.data_file.file_path} got position deletes")
