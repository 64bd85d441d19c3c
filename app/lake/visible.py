"""Rows visible at a snapshot: its data files, minus the rows its active tombstones hide.

The read rule (DESIGN.md §3): a tombstone `(namespace, id)` added at sequence number `s` hides a
row whose value in the namespace column is `id` when the row's data file has a data sequence
number lower than `s` (it was committed before the tombstone). A file whose column bounds cannot
hold any applicable tombstone is read without a filter; the others get an `is_in` mask.

Reads add every GDPR tombstone in force (`app.lake.gdpr_tombstones`) to the snapshot's active ones:
those hide their identity's older rows in every snapshot, before their commit too."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.conversions import from_bytes
from pyiceberg.expressions import AlwaysTrue
from pyiceberg.io.pyarrow import ArrowScan, schema_to_pyarrow
from pyiceberg.manifest import (
    DataFile,
    DataFileContent,
    ManifestContent,
    ManifestEntry,
    ManifestEntryStatus,
    ManifestFile,
)
from pyiceberg.schema import Schema
from pyiceberg.table import Table
from pyiceberg.table.delete_file_index import DeleteFileIndex
from pyiceberg.table.snapshots import Snapshot
from pyiceberg.types import IntegerType, LongType, PrimitiveType, StringType

from app.lake import column_index, position_deletes, tombstones
from app.lake.file_cache import FileCache
from app.lake.gdpr_tombstones import GdprTombstones
from app.lake.masks import hidden_mask, kept, kept_batches
from app.lake.read_ahead import read_ahead

NAMESPACE_TYPES = (StringType, IntegerType, LongType)


@dataclass(frozen=True)
class PlannedFile:
    data_file: DataFile
    sequence_number: int  # the data sequence number: rows are older than tombstones above it
    snapshot_id: int  # the snapshot that added the file
    # Iceberg position delete files that apply to it (app.lake.position_deletes): they only
    # mark rows an active tombstone hides, so applying them as well never changes a read
    delete_files: tuple[DataFile, ...] = ()


_MANIFEST_LISTS: FileCache[list[ManifestFile]] = FileCache(256)
_MANIFESTS: FileCache[list[ManifestEntry]] = FileCache(512)


def manifests(table: Table, snapshot: Snapshot) -> list[ManifestFile]:
    """The snapshot's manifests (its manifest list is read once per process, then cached)."""
    return _MANIFEST_LISTS.get(snapshot.manifest_list, lambda: list(snapshot.manifests(table.io)))


def entries(table: Table, manifest: ManifestFile) -> list[ManifestEntry]:
    """Every entry of a manifest, deleted ones included (read once per process, then cached:
    decoding Avro manifests is most of the fixed cost of a small read)."""
    return _MANIFESTS.get(
        manifest.manifest_path,
        lambda: list(manifest.fetch_manifest_entry(table.io, discard_deleted=False)),
    )


def plan(table: Table, snapshot: Snapshot | None) -> list[PlannedFile]:
    """The live data files of `snapshot` with their data sequence numbers, in manifest order."""
    if snapshot is None:
        return []
    files = []
    deletes = DeleteFileIndex()
    for manifest in manifests(table, snapshot):
        for entry in entries(table, manifest):
            if entry.status == ManifestEntryStatus.DELETED:
                continue
            if manifest.content == ManifestContent.DATA:
                files.append(
                    PlannedFile(entry.data_file, entry.sequence_number or 0, entry.snapshot_id or 0)
                )
            elif entry.data_file.content == DataFileContent.POSITION_DELETES:
                deletes.add_delete_file(entry, entry.data_file.partition)
            else:  # Icebatch never writes them; reading on without them would show their rows
                path = entry.data_file.file_path
                raise TypeError(f"equality delete files are unsupported: {path}")
    if deletes.is_empty():
        return files
    return [
        replace(
            p,
            delete_files=tuple(
                deletes.for_data_file(p.sequence_number, p.data_file, p.data_file.partition)
            ),
        )
        for p in files
    ]


@dataclass
class Namespace:
    column: str
    field_id: int
    field_type: PrimitiveType
    arrow_type: pa.DataType
    ids: np.ndarray  # sorted unique ids, typed like the column
    max_seq: np.ndarray  # per id: the highest sequence number of a tombstone on it
    arrow_ids: pa.Array  # `ids` as Arrow (sliced per file, never rebuilt)
    subsets: dict[int, tuple[np.ndarray, pa.Array]] = field(default_factory=dict)
    lists: dict[int, list[Any]] = field(default_factory=dict)  # `applicable` ids as Python

    def applicable(self, sequence_number: int) -> tuple[np.ndarray, pa.Array]:
        """The ids with a tombstone newer than `sequence_number` (cached per sequence number)."""
        if sequence_number < int(self.max_seq.min()):
            return self.ids, self.arrow_ids
        if sequence_number not in self.subsets:
            mask = self.max_seq > sequence_number
            self.subsets[sequence_number] = (self.ids[mask], pc.filter(self.arrow_ids, mask))
        return self.subsets[sequence_number]

    def applicable_list(self, sequence_number: int) -> list[Any]:
        """`applicable`'s ids as a Python list, converted once per filter (a file's candidates
        are a slice of it: no per-file conversion of up to 100k+ ids)."""
        key = -1 if sequence_number < self.min_seq else sequence_number
        if key not in self.lists:
            self.lists[key] = self.applicable(sequence_number)[1].to_pylist()
        return self.lists[key]

    @property
    def min_seq(self) -> int:
        return int(self.max_seq.min())


class TombstoneFilter:
    """Which ids of which columns to mask out of one data file."""

    def __init__(self, schema: Schema, active: pa.Table) -> None:
        self.namespaces: list[Namespace] = []
        if not active.num_rows:
            return
        grouped = active.group_by(["namespace", "id"]).aggregate([("added_seq", "max")])
        for field_id in pc.unique(grouped["namespace"]).to_pylist():
            source = schema.find_field(field_id)
            if not isinstance(source.field_type, NAMESPACE_TYPES):
                raise TypeError(
                    f"tombstones on {source.name!r} ({source.field_type}) are unsupported"
                )
            rows = grouped.filter(pc.equal(grouped["namespace"], field_id))
            arrow_type = schema_to_pyarrow(Schema(source)).field(0).type
            typed = rows.append_column("value", pc.cast(rows["id"], arrow_type)).sort_by("value")
            values = typed["value"].combine_chunks()
            self.namespaces.append(
                Namespace(
                    source.name,
                    field_id,
                    source.field_type,
                    arrow_type,
                    values.to_numpy(zero_copy_only=False),
                    typed["added_seq_max"].to_numpy(),
                    values,
                )
            )

    @classmethod
    def probe(cls, schema: Schema, column: str, ids: list[str]) -> TombstoneFilter:
        """A filter of `ids` on `column` as if tombstoned after every file: its candidates are
        the ids each file's bounds may hold (to find their rows, not to hide them)."""
        field_id = schema.find_field(column).field_id
        return cls(
            schema,
            pa.table(
                {
                    "namespace": pa.array([field_id] * len(ids), pa.int32()),
                    "id": pa.array(ids, pa.string()),
                    "added_seq": pa.array([2**62] * len(ids), pa.int64()),
                }
            ),
        )

    def candidates(self, planned: PlannedFile) -> dict[str, pa.Array]:
        """Per column, the tombstoned ids that may hide rows of this file (empty: read as is)."""
        found: dict[str, pa.Array] = {}
        for ns in self.namespaces:
            ids, arrow_ids = ns.applicable(planned.sequence_number)
            window = bounds_window(ns, planned.data_file, ids)
            if window is not None:
                found[ns.column] = arrow_ids.slice(window[0], window[1] - window[0])
        return found

    def candidate_values(self, planned: PlannedFile) -> dict[str, list[Any]]:
        """`candidates` as Python lists (for tasks that travel as JSON)."""
        found: dict[str, list[Any]] = {}
        for ns in self.namespaces:
            ids, _ = ns.applicable(planned.sequence_number)
            window = bounds_window(ns, planned.data_file, ids)
            if window is not None:
                found[ns.column] = ns.applicable_list(planned.sequence_number)[slice(*window)]
        return found

    @property
    def columns(self) -> list[str]:
        return [ns.column for ns in self.namespaces]


def _bound(ns: Namespace, raw: bytes) -> Any:
    return from_bytes(ns.field_type, raw)


def bounds_window(ns: Namespace, data_file: DataFile, ids: np.ndarray) -> tuple[int, int] | None:
    """[start, end) of the sorted `ids` that the file's bounds on the column may hold; None when
    none can be there (no ids, an all-null column, or bounds around none of them)."""
    if not len(ids):
        return None
    nulls = (data_file.null_value_counts or {}).get(ns.field_id)
    if nulls is not None and nulls >= data_file.record_count:
        return None
    lower = (data_file.lower_bounds or {}).get(ns.field_id)
    upper = (data_file.upper_bounds or {}).get(ns.field_id)
    start = 0 if lower is None else int(np.searchsorted(ids, _bound(ns, lower), "left"))
    end = len(ids) if upper is None else int(np.searchsorted(ids, _bound(ns, upper), "right"))
    return (start, end) if end > start else None


_FILTERS: FileCache[TombstoneFilter] = FileCache(64)


def tombstone_filter(
    table: Table,
    snapshot: Snapshot | None,
    gdpr: GdprTombstones | None = None,
    *,
    with_position_deletes: bool = False,
) -> TombstoneFilter:
    """The filter of every tombstone active at `snapshot`, plus the GDPR tombstones `gdpr` (in
    force whatever the snapshot: they hide rows older than them, DESIGN.md §3). Cached by the
    snapshot's tombstone list and the GDPR set's key: both name immutable sets.

    `with_position_deletes`: for a reader that applies the snapshot's position delete files
    (`PlannedFile.delete_files`, Iceberg's own readers): the tombstones up to the snapshot's
    materialized mark are in them and are left out. A GDPR tombstone up to the mark is too: at
    this snapshot its rows are either position-deleted (it is listed) or were rewritten away
    by the vacuum that purged it."""
    location = tombstones.list_location(table, snapshot)
    mark = tombstones.materialized_seq(table, snapshot) if with_position_deletes else 0

    def build() -> TombstoneFilter:
        active = tombstones.active(table, snapshot)
        if gdpr is not None and gdpr.rows.num_rows:
            active = pa.concat_tables([active, gdpr.rows.cast(tombstones.SCHEMA)])
        if mark:
            active = active.filter(pc.greater(active["added_seq"], mark))
        return TombstoneFilter(table.schema(), active)

    key = f"{table.metadata.table_uuid}|{location}|{gdpr.key if gdpr else ''}|{mark}"
    return _FILTERS.get(key, build)


def gdpr_filter(table: Table, gdpr: GdprTombstones) -> TombstoneFilter:
    """The filter of the GDPR tombstones alone: which rows of a file are of an erased identity."""
    key = f"{table.metadata.table_uuid}|gdpr-only|{gdpr.key}"
    return _FILTERS.get(key, lambda: TombstoneFilter(table.schema(), gdpr.rows))


def row_batches(
    table: Table,
    snapshot: Snapshot | None,
    columns: list[str] | None = None,
    gdpr: GdprTombstones | None = None,
) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    """The rows visible at `snapshot` (projected to `columns`), file by file; `gdpr`: the GDPR
    tombstones in force (`app.privacy.reads.in_force`), applied to every snapshot (those up to
    its materialized mark are left to its position delete files, so `in_force`'s for this
    snapshot, `with_deletes_of=snapshot`, reads the same as the whole set)."""
    schema = table.schema()
    projected = schema if columns is None else schema.select(*columns)
    target = schema_to_pyarrow(projected)
    if snapshot is None:
        return target, iter(())
    filt = tombstone_filter(table, snapshot, gdpr, with_position_deletes=True)
    names = [f.name for f in projected.fields]
    read_schema = schema.select(*dict.fromkeys([*names, *filt.columns]))
    scan = ArrowScan(table.metadata, table.io, read_schema, AlwaysTrue())

    def batches() -> Iterator[pa.RecordBatch]:
        for planned, read in read_ahead(scan, plan(table, snapshot)):  # the next file meanwhile
            hidden = filt.candidates(planned)
            deleted = position_deletes.deleted(
                table.io, planned.data_file.file_path, planned.delete_files
            )
            for batch in kept(read, hidden, deleted):
                if batch.num_rows:
                    yield batch.select(names)

    reader = pa.RecordBatchReader.from_batches(target, batches()).cast(target)
    return target, iter(reader)


def count_by_value(
    table: Table, snapshot: Snapshot | None, column: str, ids: list[str]
) -> dict[str, int]:
    """Per id, how many rows visible at `snapshot` hold it in `column` (what a new tombstone on
    it would hide). Looked up in the files' column indexes (`app.lake.column_index`); a file
    whose columns cannot be indexed is read."""
    if snapshot is None or not ids:
        return {}
    schema = table.schema()
    probe = TombstoneFilter.probe(schema, column, ids)
    filt = tombstone_filter(table, snapshot, with_position_deletes=True)
    counts: dict[str, int] = {}
    for planned in plan(table, snapshot):
        wanted = probe.candidates(planned)
        if not wanted:
            continue
        hidden = filt.candidates(planned)
        deleted = position_deletes.deleted(
            table.io, planned.data_file.file_path, planned.delete_files
        )
        found = _indexed_counts(table, planned, column, wanted[column], hidden, deleted)
        if found is None:
            found = _read_counts(table, planned, column, wanted, hidden, deleted, filt.columns)
        for key, count in found.items():
            counts[key] = counts.get(key, 0) + count
    return counts


def _indexed_counts(
    table: Table,
    planned: PlannedFile,
    column: str,
    ids: pa.Array,
    hidden: dict[str, pa.Array],
    deleted: np.ndarray | None,
) -> dict[str, int] | None:
    """`count_by_value` in one file from its column indexes; None when one cannot be built.

    Only the rows holding an id are looked at: a tombstone on `column` hides them when it is
    on their id (no lookup), one on another column when its index puts the row among its
    ids', a position delete when it names them."""
    index = column_index.for_file(table, planned.data_file, column, wait=False)
    if index is None:
        return None
    positions, which = index.lookup(ids)
    if not len(positions):
        return {}
    keep = np.ones(len(positions), dtype=bool)
    for other, other_ids in hidden.items():
        if other == column:
            blocked = pc.is_in(ids, value_set=other_ids).to_numpy(zero_copy_only=False)
            keep &= ~blocked[which]
            continue
        other_index = column_index.for_file(table, planned.data_file, other, wait=False)
        if other_index is None:
            return None
        keep &= ~np.isin(positions, other_index.lookup(other_ids)[0])
    if deleted is not None:
        keep &= ~np.isin(positions, deleted)
    per_id = np.bincount(which[keep], minlength=len(ids))
    hit = np.flatnonzero(per_id)
    values = ids.take(pa.array(hit)).to_pylist()  # only the ids found: a file holds few
    return {str(value): int(per_id[i]) for value, i in zip(values, hit, strict=True)}


def _read_counts(
    table: Table,
    planned: PlannedFile,
    column: str,
    wanted: dict[str, pa.Array],
    hidden: dict[str, pa.Array],
    deleted: np.ndarray | None,
    filter_columns: list[str],
) -> dict[str, int]:
    """`count_by_value` in one file by reading its columns."""
    schema = table.schema()
    scan = ArrowScan(
        table.metadata, table.io, schema.select(*{column, *filter_columns}), AlwaysTrue()
    )
    counts: dict[str, int] = {}
    for batch in kept_batches(scan, planned.data_file, hidden, deleted):
        matched = batch.filter(hidden_mask(batch, wanted)).column(column)
        for entry in pc.value_counts(matched).to_pylist():
            key = str(entry["values"])
            counts[key] = counts.get(key, 0) + int(entry["counts"])
    return counts
