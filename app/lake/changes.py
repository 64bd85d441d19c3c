"""Incremental reads: the rows appended and the rows deleted over a range (S1, S2] (DESIGN.md §3).

Rows are identified by content plus batch, not by file (vacuum and compaction move them):
- appended = V(S2) minus V(S1): rows of batches committed by an ingest/replay/CDC snapshot of the
  range that are still visible at S2. Only files of S2 with a data sequence number above seq(S1)
  can hold them (a rewrite's new files carry its start sequence number, which is at least the
  sequence number of every batch they hold), so those are read, filtered to the range's batches
  and to the rows no tombstone active at S2 hides.
- deleted = rows visible at S1 or committed in the range that are not visible at S2. Rows leave
  only by tombstones; with T_range the tombstones added in the range that are active at S2 or
  purged by a vacuum of the range:
  (a) each live file F of S2: rows a T of T_range hides (T.added_seq > F.seq);
  (b) each file F_old a rewrite R of the range removed: rows a T of T_range with
      F_old.seq < T.added_seq <= start_seq(R) hides (exactly the rows R dropped; the others are
      in R's new files and (a) sees them);
  minus rows already hidden at S1 (a tombstone active at S1 newer than the file).

GDPR tombstones reach into the past (`app.lake.gdpr_tombstones`): a row of either kind whose
identity a GDPR tombstone in force hides (the tombstone newer than the row's file, whenever it
committed) comes back with its identity columns and `_batch_id` only. Increments keep the shape of
history (a replica that consumed them before the delete still gets the delete's `deleted` rows),
never the erased person's other values. `FileTask.erased` carries, per identity column, those ids.

The driver builds the plan from metadata only (`plan_changes`): one `FileTask` per data file,
serialisable, holding every id and sequence number the read needs. `FileReader.read(task)` is a
pure function of the task and a `ReadContext` (app.lake.changes_read: the table's schema, no
snapshot history): the API streams it file by file and the export job runs it in Spark tasks.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.conversions import from_bytes
from pyiceberg.expressions import AlwaysTrue
from pyiceberg.io.pyarrow import ArrowScan
from pyiceberg.manifest import (
    ManifestContent,
    ManifestEntryStatus,
)
from pyiceberg.schema import Schema
from pyiceberg.table import FileScanTask, Table
from pyiceberg.table.snapshots import Snapshot
from pyiceberg.types import StringType

from app.lake import snapshots, tombstones, visible
from app.lake.gdpr_tombstones import GDPR, GdprTombstones
from app.lake.types import BATCH_COLUMN

CHANGE_FIELDS = [  # the columns a change row adds to the table's columns
    pa.field("_change_type", pa.string()),
    pa.field("_operation", pa.string()),
    pa.field("_request_id", pa.string()),
    pa.field("_snapshot_id", pa.int64()),
]
_NOT_GDPR = 1 << 40  # a GDPR tombstone ranks before any other, then the earliest wins
NO_MATCH = np.iinfo(np.int64).max


class MissingSnapshot(Exception):
    """A snapshot of the range's ancestry is not in the table's metadata (expired)."""

    def __init__(self, snapshot_id: int) -> None:
        super().__init__(f"snapshot {snapshot_id} is not in the table's metadata")
        self.snapshot_id = snapshot_id


class NotAncestor(Exception):
    """The range's start is not an ancestor of its end."""


@dataclass(frozen=True)
class ChangeRange:
    start: Snapshot | None
    end: Snapshot | None
    chain: tuple[Snapshot, ...]  # the snapshots of (start, end], oldest first

    @property
    def start_seq(self) -> int:
        return (self.start.sequence_number or 0) if self.start else 0

    @property
    def end_seq(self) -> int:
        return (self.end.sequence_number or 0) if self.end else 0


def snapshot_range(table: Table, start: Snapshot | None, end: Snapshot | None) -> ChangeRange:
    """(start, end] as the chain of snapshots between them; `start` None is the empty table."""
    if end is None:
        if start is not None:
            raise NotAncestor(f"snapshot {start.snapshot_id} is not an ancestor of an empty table")
        return ChangeRange(None, None, ())
    target = start.snapshot_id if start else None
    floor = (start.sequence_number or 0) if start else -1
    chain: list[Snapshot] = []
    current = end
    while current.snapshot_id != target:
        if start is not None and (current.sequence_number or 0) <= floor:
            raise NotAncestor(
                f"snapshot {start.snapshot_id} is not an ancestor of snapshot {end.snapshot_id}"
            )
        chain.append(current)
        parent_id = current.parent_snapshot_id
        if parent_id is None:
            if start is None:
                break
            raise NotAncestor(
                f"snapshot {start.snapshot_id} is not an ancestor of snapshot {end.snapshot_id}"
            )
        parent = table.snapshot_by_id(parent_id)
        if parent is None:
            raise MissingSnapshot(parent_id)
        current = parent
    chain.reverse()
    return ChangeRange(start, end, tuple(chain))


class TaskTombstone(NamedTuple):
    """A tombstone as a FileTask carries it (a JSON list, in this order)."""

    value: Any  # typed like the column
    added_seq: int
    operation: str
    request_id: str | None
    snapshot_id: int  # the snapshot that added it
    earliest_seq: int  # the earliest added_seq of the value's tombstones in the window


class TaskBatch(NamedTuple):
    """A batch the range committed, as a FileTask carries it (a JSON list, in this order)."""

    batch_id: str
    operation: str
    request_id: str | None
    snapshot_id: int  # the snapshot that committed it


@dataclass
class FileTask:
    """Everything the read of one data file needs; JSON-serialisable."""

    change: str  # appended | deleted
    path: str
    sequence_number: int
    record_count: int
    batches: list[TaskBatch] = field(default_factory=list)  # appended: the range's batches
    # appended: ids hiding rows at the end; deleted: ids hiding rows at the start (per column)
    hidden: dict[str, list[Any]] = field(default_factory=dict)
    # deleted: per column, the tombstone of the range that says why rows holding each id are
    # deleted (GDPR first, else the earliest); a row is deleted when a tombstone of one of its
    # values was added at or before `limit` (a rewrite's start; else the range's end)
    matches: dict[str, list[TaskTombstone]] = field(default_factory=dict)
    limit: int = 0
    # per identity column, the ids of GDPR tombstones in force newer than the file: rows
    # holding one come back with the identity columns and `_batch_id` only
    erased: dict[str, list[Any]] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> FileTask:
        raw = json.loads(text)
        raw["batches"] = [TaskBatch(*b) for b in raw["batches"]]
        raw["matches"] = {c: [TaskTombstone(*t) for t in ts] for c, ts in raw["matches"].items()}
        return cls(**raw)


def plan_changes(table: Table, rng: ChangeRange, kind: str, gdpr: GdprTombstones) -> list[FileTask]:
    """The per-file work of one kind of change over `rng` (metadata and tombstone lists only);
    `gdpr`: the GDPR tombstones in force (`app.privacy.reads.in_force`)."""
    erased = visible.gdpr_filter(table, gdpr)
    if kind == "appended":
        return plan_appended(table, rng, erased)
    if kind == "deleted":
        return plan_deleted(table, rng, erased)
    raise ValueError(f"unknown change kind {kind!r}")


def erased_ids(
    erased: visible.TombstoneFilter, planned: visible.PlannedFile
) -> dict[str, list[Any]]:
    """Per column, the ids of GDPR tombstones in force that may hide rows of the file."""
    return erased.candidate_values(planned)


def plan_appended(
    table: Table, rng: ChangeRange, erased: visible.TombstoneFilter
) -> list[FileTask]:
    committed = batches_in_range(table, rng)
    if not committed or rng.end is None:
        return []
    probe = visible.TombstoneFilter.probe(table.schema(), BATCH_COLUMN, list(committed))
    hiding = visible.tombstone_filter(table, rng.end)
    tasks = []
    for planned in visible.plan(table, rng.end):
        if planned.sequence_number <= rng.start_seq:
            continue
        wanted = probe.candidates(planned).get(BATCH_COLUMN)
        if wanted is None:
            continue
        tasks.append(
            FileTask(
                "appended",
                planned.data_file.file_path,
                planned.sequence_number,
                planned.data_file.record_count,
                batches=[committed[b] for b in wanted.to_pylist()],
                hidden=hiding.candidate_values(planned),
                erased=erased_ids(erased, planned),
            )
        )
    return tasks


def batches_in_range(table: Table, rng: ChangeRange) -> dict[str, TaskBatch]:
    """Every batch the range committed, by id, with who committed it."""
    found: dict[str, TaskBatch] = {}
    for snapshot in rng.chain:
        operation = snapshots.summary_value(snapshot, snapshots.OPERATION)
        if operation not in snapshots.APPENDING:
            continue
        request_id = snapshots.summary_value(snapshot, snapshots.REQUEST_ID)
        named = snapshots.summary_value(snapshot, snapshots.BATCH_ID)
        for batch_id in [named] if named else added_batches(table, snapshot):
            found[batch_id] = TaskBatch(batch_id, operation, request_id, snapshot.snapshot_id)
    return found


def added_batches(table: Table, snapshot: Snapshot) -> set[str]:
    """The batches in the files `snapshot` added, from exact `_batch_id` bounds (or the column
    itself for a file whose bounds span several batches)."""
    field_id = table.schema().find_field(BATCH_COLUMN).field_id
    found: set[str] = set()
    for manifest in visible.manifests(table, snapshot):
        if manifest.content != ManifestContent.DATA:
            continue
        if manifest.added_snapshot_id != snapshot.snapshot_id:
            continue
        for entry in visible.entries(table, manifest):
            if entry.status != ManifestEntryStatus.ADDED:
                continue
            if entry.snapshot_id != snapshot.snapshot_id:
                continue
            data_file = entry.data_file
            lower = (data_file.lower_bounds or {}).get(field_id)
            upper = (data_file.upper_bounds or {}).get(field_id)
            if lower is not None and lower == upper:
                found.add(str(from_bytes(StringType(), lower)))
                continue
            scan = ArrowScan(
                table.metadata, table.io, table.schema().select(BATCH_COLUMN), AlwaysTrue()
            )
            column = scan.to_table([FileScanTask(data_file)]).column(BATCH_COLUMN)
            found.update(v for v in pc.unique(column).to_pylist() if v is not None)
    return found


def range_tombstones(table: Table, rng: ChangeRange) -> pa.Table:
    """T_range: tombstones added in the range, active at its end or purged by a vacuum in it."""
    parts = [tombstones.active(table, rng.end)]
    for snapshot in rng.chain:
        path = snapshots.summary_value(snapshot, tombstones.VACUUM_FILE)
        if path:
            parts.append(tombstones.read_segment(table.io, path))
    rows = pa.concat_tables(parts)
    seqs = rows["added_seq"]
    rows = rows.filter(pc.and_(pc.greater(seqs, rng.start_seq), pc.less_equal(seqs, rng.end_seq)))
    if not rows.num_rows:
        return rows
    keys = rows.select(["namespace", "id", "added_seq"]).to_pylist()
    seen: set[tuple[int, str, int]] = set()
    first = []
    for position, key in enumerate(keys):
        marker = (key["namespace"], key["id"], key["added_seq"])
        if marker not in seen:
            seen.add(marker)
            first.append(position)
    return rows.take(pa.array(first, pa.int64()))


class _RangeIndex:
    """T_range by column and typed id, for picking each file's matching tombstones."""

    def __init__(self, schema: Schema, rows: pa.Table) -> None:
        self.filter = visible.TombstoneFilter(schema, rows)
        self.by_column: dict[str, dict[Any, list[TaskTombstone]]] = {}
        for ns in self.filter.namespaces:
            mine = rows.filter(pc.equal(rows["namespace"], ns.field_id))
            values = pc.cast(mine["id"], ns.arrow_type).to_pylist()
            index: dict[Any, list[TaskTombstone]] = {}
            for value, row in zip(values, mine.to_pylist(), strict=True):
                index.setdefault(value, []).append(
                    TaskTombstone(
                        value,
                        row["added_seq"],
                        row["operation"] or "",
                        row["request_id"],
                        row["added_snapshot_id"],
                        row["added_seq"],
                    )
                )
            self.by_column[ns.column] = index

    def matches(
        self, planned: visible.PlannedFile, low: int, high: int
    ) -> dict[str, list[TaskTombstone]]:
        """Per column, for each id the file's bounds may hold with a tombstone above `low`: the
        tombstone that says why (GDPR first, else the earliest: the row is logically deleted
        by each of them) and the earliest added_seq. Empty when no id has a tombstone in
        (low, high] (nothing of the file is deleted)."""
        probe = visible.PlannedFile(planned.data_file, low, planned.snapshot_id)
        found: dict[str, list[TaskTombstone]] = {}
        for column, ids in self.filter.candidates(probe).items():
            index = self.by_column[column]
            picked = []
            for value in ids.to_pylist():
                fitting = [t for t in index.get(value, ()) if low < t.added_seq]
                if fitting:
                    earliest = min(t.added_seq for t in fitting)
                    picked.append(min(fitting, key=rank)._replace(earliest_seq=earliest))
            if picked:
                found[column] = picked
        if not any(t.earliest_seq <= high for picked in found.values() for t in picked):
            return {}
        return found


def rank(tombstone: TaskTombstone) -> int:
    """The order in which tombstones say why a row is deleted: GDPR first, then the earliest."""
    return tombstone.added_seq + (0 if tombstone.operation == GDPR else _NOT_GDPR)


def plan_deleted(table: Table, rng: ChangeRange, erased: visible.TombstoneFilter) -> list[FileTask]:
    rows = range_tombstones(table, rng)
    if not rows.num_rows or rng.end is None:
        return []
    schema = table.schema()
    index = _RangeIndex(schema, rows)
    at_start = visible.tombstone_filter(table, rng.start)
    tasks: list[FileTask] = []

    def add(planned: visible.PlannedFile, high: int) -> None:
        low = max(planned.sequence_number, rng.start_seq)
        if high <= low:
            return
        matches = index.matches(planned, low, high)
        if not matches:
            return
        hidden = {}
        if planned.sequence_number < rng.start_seq:
            hidden = at_start.candidate_values(planned)
        tasks.append(
            FileTask(
                "deleted",
                planned.data_file.file_path,
                planned.sequence_number,
                planned.data_file.record_count,
                hidden=hidden,
                matches=matches,
                limit=high,
                erased=erased_ids(erased, planned),
            )
        )

    for planned in visible.plan(table, rng.end):  # (a)
        add(planned, rng.end_seq)
    for rewrite in rng.chain:  # (b)
        if snapshots.summary_value(rewrite, snapshots.OPERATION) not in snapshots.REWRITING:
            continue
        start = snapshots.summary_value(rewrite, snapshots.START_SEQUENCE)
        parent = (
            table.snapshot_by_id(rewrite.parent_snapshot_id)
            if rewrite.parent_snapshot_id is not None
            else None
        )
        if start is None or parent is None:
            continue
        kept = {p.data_file.file_path for p in visible.plan(table, rewrite)}
        for planned in visible.plan(table, parent):
            if planned.data_file.file_path not in kept:
                add(planned, int(start))
    return tasks
