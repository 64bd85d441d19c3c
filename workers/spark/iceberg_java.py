"""Iceberg's Java API from the worker's Spark JVM: commits PyIceberg cannot make (DESIGN.md §2).

A rewrite (vacuum, compaction) is a REWRITE FILES snapshot whose new files keep the start
snapshot's data sequence number, or a DELETE FILES snapshot when no row is left. Its summary
names a tombstone list computed against one parent, so it must never be re-applied on another
parent the way `SnapshotProducer.commit()` retries: the snapshot is built with `apply()` and
swapped in with one `TableOperations.commit(base, updated)`, the catalog's compare-and-swap, after
checking that `base` is the parent the list was computed for.

Such an update is built and applied once before the commit lease is taken (`stage`): Iceberg
writes its manifests then and keeps them on the update object (the new files' manifests, and
each existing manifest it filtered, by path), so the apply under the lease reuses them and
writes only the manifest list, whatever parent it meets.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession

from app.config import get_settings
from app.lake import position_deletes
from app.lake.commit import ParentMoved
from app.lake.pipeline import Committed, Replan
from app.lake.position_deletes import Written

JavaObject = Any


class RewriteConflict(Replan):
    """Files the rewrite replaces were removed by another commit: plan the rewrite again."""


def _iceberg(spark: SparkSession) -> JavaObject:
    """The `org.apache.iceberg` Java package of the session's JVM."""
    jvm: Any = spark._jvm
    return jvm.org.apache.iceberg


def load_table(spark: SparkSession, identifier: str) -> JavaObject:
    """The Iceberg table `<namespace>.<name>` of the settings' catalog, as a Java Table."""
    jvm: Any = spark._jvm
    name = f"{get_settings().catalog_name}.{identifier}"
    return jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, name)


def live_files(table: JavaObject, snapshot_id: int, paths: Iterable[str]) -> dict[str, JavaObject]:
    """The Java DataFile objects of `paths` among the live files of a snapshot."""
    return {path: task.file() for path, task in live_tasks(table, snapshot_id, paths).items()}


def live_tasks(table: JavaObject, snapshot_id: int, paths: Iterable[str]) -> dict[str, JavaObject]:
    """The Java FileScanTasks (data file and its delete files) of `paths` among the live files
    of a snapshot; RewriteConflict when one is not live. A table that does not know the
    snapshot (loaded before it was committed: a materializer loads its Java table once for all
    its attempts, and one that met a moved parent retries on the new one) is refreshed first."""
    if table.snapshot(snapshot_id) is None:
        table.refresh()
    wanted, found = set(paths), dict[str, JavaObject]()
    tasks = table.newScan().useSnapshot(snapshot_id).planFiles()
    try:
        iterator = tasks.iterator()
        while iterator.hasNext() and len(found) < len(wanted):
            task = iterator.next()
            path = task.file().location()
            if path in wanted:
                found[path] = task
    finally:
        tasks.close()
    missing = wanted - set(found)
    if missing:
        raise RewriteConflict(f"{len(missing)} planned files are not live, e.g. {min(missing)}")
    return found


def delete_files_of(tasks: Iterable[JavaObject]) -> list[JavaObject]:
    """The Java DeleteFiles that apply to the tasks' data files (each once)."""
    found: dict[str, JavaObject] = {}
    for task in tasks:
        for delete_file in task.deletes():
            found.setdefault(str(delete_file.location()), delete_file)
    return list(found.values())


def new_data_file(
    spark: SparkSession, table: JavaObject, path: str, like: JavaObject
) -> JavaObject:
    """Describe a Parquet file written for `table` with metrics from its footer, in the
    partition of `like` (the rewritten file whose rows it holds)."""
    ice = _iceberg(spark)
    input_file = table.io().newInputFile(path)
    mapping_json = table.properties().get("schema.name-mapping.default")
    mapping = (
        ice.mapping.NameMappingParser.fromJson(mapping_json)
        if mapping_json
        else ice.mapping.MappingUtil.create(table.schema())
    )
    metrics = ice.parquet.ParquetUtil.fileMetrics(
        input_file, ice.MetricsConfig.forTable(table), mapping
    )
    spec = table.specs().get(like.specId())
    return (
        ice.DataFiles.builder(spec)
        .withInputFile(input_file)
        .withMetrics(metrics)
        .withPartition(like.partition())
        .withFormat(ice.FileFormat.PARQUET)
        .build()
    )


def rewrite_update(
    table: JavaObject,
    *,
    start_snapshot_id: int,
    start_sequence_number: int,
    removed: list[JavaObject],
    added: list[JavaObject],
    removed_deletes: list[JavaObject],
) -> JavaObject:
    """The update replacing `removed` by `added` (REWRITE FILES; DELETE FILES when nothing is
    added and no delete file goes); the position delete files of the removed files
    (`removed_deletes`, as of the start) leave with them. Iceberg's validation from the start
    snapshot refuses it (RewriteConflict, at `stage` or `swap_in`) when a delete file for a
    removed file came since."""
    if added or removed_deletes:
        update = table.newRewrite().validateFromSnapshot(start_snapshot_id)
        update = update.dataSequenceNumber(start_sequence_number)
        for data_file in removed:
            update = update.deleteFile(data_file)
        for delete_file in removed_deletes:
            update = update.deleteFile(delete_file)
        for data_file in added:
            update = update.addFile(data_file)
        return update
    update = table.newDelete()
    for data_file in removed:
        update = update.deleteFile(data_file)
    return update.validateFilesExist()


def position_deletes_update(
    spark: SparkSession,
    table: JavaObject,
    *,
    snapshot_id: int,
    written: list[Written],
    replaced: Iterable[str] = (),
) -> JavaObject:
    """The ROW DELTA adding position delete files (each names one data file, live in
    `snapshot_id`) and removing the delete files `replaced` (their positions are in the new
    ones). Validated from `snapshot_id` when applied: RewriteConflict when a data file named is
    no longer live or a replaced delete file no longer applies to it."""
    jvm: Any = spark._jvm
    tasks = live_tasks(table, snapshot_id, {w.data_path for w in written})
    existing = {str(d.location()): d for d in delete_files_of(tasks.values())}
    gone = set(replaced) - set(existing)
    if gone:
        raise RewriteConflict(f"{len(gone)} delete files to replace are gone, e.g. {min(gone)}")
    paths = jvm.java.util.ArrayList()
    update = table.newRowDelta().validateFromSnapshot(snapshot_id)
    for path in set(replaced):
        update = update.removeDeletes(existing[path])
    for w in written:
        update = update.addDeletes(_delete_file(spark, table, w, tasks[w.data_path].file()))
        paths.add(w.data_path)
    return update.validateDataFilesExist(paths).validateDeletedFiles()


@dataclass
class Staged:
    """A Java update applied once before the commit lease (`stage`), and the summary keys set
    on it by `swap_in` since (Iceberg's summary builder cannot unset one)."""

    update: JavaObject
    what: str
    keys: set[str] = field(default_factory=set)


def stage(update: JavaObject, what: str) -> Staged:
    """Apply `update` once on the table's current state, before the commit lease is taken: its
    manifests are written now and reused by `swap_in`. RewriteConflict when its validation
    already fails."""
    _apply(update, what)
    return Staged(update, what)


def swap_in(
    spark: SparkSession,
    table: JavaObject,
    staged: Staged,
    parent_id: int | None,
    summary: dict[str, str],
) -> Committed:
    """Build the staged update's snapshot with `apply()` and make it current with one
    compare-and-swap on `parent_id`: never re-applied on another parent, as
    `SnapshotProducer.commit()` would. Raises RewriteConflict when its validation fails,
    ParentMoved when the parent moved, Replan when an earlier attempt set a summary key this
    one has not (its update cannot be reused)."""
    stale = staged.keys - set(summary)
    if stale:
        raise Replan(f"{staged.what}: an earlier attempt's summary set {sorted(stale)}")
    update, what = staged.update, staged.what
    for key, value in summary.items():
        update = update.set(key, value)
    staged.keys |= set(summary)
    ops = table.operations()
    snapshot = _apply(update, what)  # refreshes, validates, writes what `stage` did not
    base = ops.current()
    current = base.currentSnapshot()
    if (current.snapshotId() if current is not None else None) != parent_id:
        raise ParentMoved(f"the table moved past {parent_id} while {what} was planned")
    ice = _iceberg(spark)
    updated = ice.TableMetadata.buildFrom(base).setBranchSnapshot(snapshot, "main").build()
    try:
        ops.commit(base, updated)
    except Py4JJavaError as exc:
        if "CommitFailedException" in str(exc.java_exception):
            raise ParentMoved(str(exc.java_exception)) from None
        raise
    return Committed(
        int(snapshot.snapshotId()), int(snapshot.sequenceNumber()), str(snapshot.operation())
    )


def _apply(update: JavaObject, what: str) -> JavaObject:
    """`update.apply()` (a refresh, the validation, the manifests not written yet), its
    ValidationException as RewriteConflict."""
    try:
        return update.apply()
    except Py4JJavaError as exc:
        if "ValidationException" in str(exc.java_exception):
            raise RewriteConflict(f"the files of {what} changed: {exc.java_exception}") from None
        raise


def _delete_file(
    spark: SparkSession, table: JavaObject, written: Written, data_file: JavaObject
) -> JavaObject:
    """The metadata entry of a position delete file, from what its writer knows: the footer
    is not read back. Its `file_path` bounds are the one data file it names, so every engine
    indexes it by that path (file-scoped)."""
    ice = _iceberg(spark)
    jvm: Any = spark._jvm

    def bound(value: bytes) -> JavaObject:  # Iceberg's single-value serialization
        return jvm.java.nio.ByteBuffer.wrap(bytearray(value))

    path = written.data_path.encode()
    lower, upper = jvm.java.util.HashMap(), jvm.java.util.HashMap()
    lower.put(position_deletes.FILE_PATH_ID, bound(path))
    upper.put(position_deletes.FILE_PATH_ID, bound(path))
    lower.put(position_deletes.POS_ID, bound(struct.pack("<q", written.first)))
    upper.put(position_deletes.POS_ID, bound(struct.pack("<q", written.last)))
    metrics = ice.Metrics(None, None, None, None, None, lower, upper)
    return (
        ice.FileMetadata.deleteFileBuilder(table.specs().get(data_file.specId()))
        .ofPositionDeletes()
        .withPath(written.path)
        .withFileSizeInBytes(written.size)
        .withFormat(ice.FileFormat.PARQUET)
        .withMetrics(metrics)
        .withRecordCount(written.count)  # after withMetrics, which sets it from the metrics
        .withPartition(data_file.partition())
        .build()
    )


def expire_snapshots(spark: SparkSession, table: JavaObject, snapshot_ids: list[int]) -> None:
    """Remove exactly `snapshot_ids` from the table metadata.

    `expireOlderThan(0)` keeps Iceberg's own age rule (table property, 5 days by default) from
    expiring more than the policy decided; files are left to the caller (`cleanExpiredFiles`
    false), which knows the tombstone files Iceberg does not.
    """
    action = table.expireSnapshots()
    for snapshot_id in snapshot_ids:
        action = action.expireSnapshotId(snapshot_id)
    action.expireOlderThan(0).cleanExpiredFiles(False).commit()


def commit_empty(spark: SparkSession, identifier: str, properties: dict[str, str]) -> None:
    """A snapshot that changes no file, carrying `properties` in its summary (a CDC run whose
    events changed no row still moves its watermark)."""
    append = load_table(spark, identifier).newFastAppend()
    for key, value in properties.items():
        append.set(key, value)
    append.commit()
