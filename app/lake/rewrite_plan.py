"""Rewrite planners: which live files a vacuum or a compaction replaces, as rewrite tasks.

Both produce the same tasks for the same rewrite job: every task reads files of one partition,
drops the rows the tombstones active at the start snapshot hide, and writes one new file. The
vacuum takes the files SCAN found exposed (`vacuum_plan`), one task per file; compaction groups
small files of a partition (bin-pack) or every file of a partition (sort) up to a target size.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass

import pyarrow as pa
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

from app.lake import visible
from app.lake.rewrite_files import RewriteTask, input_for
from app.lake.vacuum_plan import VacuumPlan

SMALL = 0.75  # bin-pack: a file under this share of the target size is small


@dataclass(frozen=True)
class CompactionOptions:
    strategy: str = "binpack"  # or "sort"
    target_bytes: int = 128 * 1024**2
    min_input_files: int = 2
    sort_by: tuple[str, ...] = ()


def _schema_bytes(table: Table) -> bytes:
    schema: pa.Schema = schema_to_pyarrow(table.schema())
    return bytes(schema.serialize().to_pybytes())


def _output(table: Table, operation: str, tag: str, index: int) -> str:
    return f"{table.location().rstrip('/')}/data/{operation}-{tag}-{index:05d}.parquet"


def vacuum_tasks(
    table: Table, snapshot: Snapshot | None, plan: VacuumPlan, filt: visible.TombstoneFilter
) -> list[RewriteTask]:
    """One task per exposed file the plan took; `filt` holds every tombstone active at start.

    A file whose bounds hold a single tombstoned id (and no null) is dropped unread; the others
    are checked on their tombstoned columns first and left alone if no row is hidden."""
    schema, tag = _schema_bytes(table), uuid.uuid4().hex[:12]
    return [
        RewriteTask(
            i,
            [input_for(f.planned, filt)],
            _output(table, "vacuum", tag, i),
            schema,
            drop=all_hidden(f.planned, filt),
            keep_if_clean=True,
        )
        for i, f in enumerate(plan.files)
    ]


def all_hidden(planned: visible.PlannedFile, filt: visible.TombstoneFilter) -> bool:
    """True when the file's bounds prove every row hidden: on some tombstoned column, lower =
    upper = an id tombstoned after the file, and no null."""
    data_file = planned.data_file
    for ns in filt.namespaces:
        lower = (data_file.lower_bounds or {}).get(ns.field_id)
        upper = (data_file.upper_bounds or {}).get(ns.field_id)
        nulls = (data_file.null_value_counts or {}).get(ns.field_id)
        if lower is None or lower != upper or nulls != 0:
            continue
        ids, _ = ns.applicable(planned.sequence_number)
        if visible.bounds_window(ns, data_file, ids) is not None:
            return True
    return False


def compaction_groups(
    table: Table, snapshot: Snapshot | None, options: CompactionOptions
) -> list[list[visible.PlannedFile]]:
    """Files to merge, per partition, each group at most about the target size."""
    by_partition: dict[tuple[int, str], list[visible.PlannedFile]] = defaultdict(list)
    for planned in visible.plan(table, snapshot):
        data_file = planned.data_file
        small = data_file.file_size_in_bytes < SMALL * options.target_bytes
        if options.strategy == "sort" or small:
            by_partition[(data_file.spec_id, repr(data_file.partition))].append(planned)
    groups: list[list[visible.PlannedFile]] = []
    for files in by_partition.values():
        files.sort(key=lambda p: (p.sequence_number, p.data_file.file_path))
        current: list[visible.PlannedFile] = []
        size = 0
        for planned in files:
            length = planned.data_file.file_size_in_bytes
            if current and size + length > options.target_bytes:
                groups.append(current)
                current, size = [], 0
            current.append(planned)
            size += length
        if current:
            groups.append(current)
    minimum = 1 if options.strategy == "sort" else options.min_input_files
    return [g for g in groups if len(g) >= minimum]


def compaction_tasks(
    table: Table,
    groups: list[list[visible.PlannedFile]],
    filt: visible.TombstoneFilter,
    options: CompactionOptions,
) -> list[RewriteTask]:
    schema, tag = _schema_bytes(table), uuid.uuid4().hex[:12]
    sort_by = list(options.sort_by) or default_sort(table)
    return [
        RewriteTask(
            i,
            [input_for(p, filt) for p in group],
            _output(table, "compact", tag, i),
            schema,
            sort_by if options.strategy == "sort" else [],
        )
        for i, group in enumerate(groups)
    ]


def default_sort(table: Table) -> list[str]:
    """The table's sort order within one partition, as column names: Icebatch tables sort by
    (partition, _batch_id), and the partition part is constant inside a task."""
    schema, spec = table.schema(), table.spec()
    partition = {(f.source_id, str(f.transform)) for f in spec.fields}
    return [
        schema.find_field(f.source_id).name
        for f in table.sort_order().fields
        if (f.source_id, str(f.transform)) not in partition
    ]
