"""Tombstones: immutable Parquet segments under `<table>/tombstones/`, named by a small list file.

A snapshot that changes tombstones names its list in the summary (`tombstone.file`); a snapshot
that does not inherits the list of its nearest ancestor that does. A commit writes one *delta*
segment holding only its new tombstones and a new list = the parent's segments + the delta. When
the delta would make `FANOUT` segments of one level, they are merged with it into one segment of
the next level instead (an LSM tier; every file a commit writes is in its list), so a commit
reads and writes O(new tombstones + list entries), never the whole active set; the merges cost
O(log n) per tombstone, amortized.

A tombstone row: `namespace` (the Iceberg field id of the column), `id` (the value, as text),
`added_seq` (the sequence number of the snapshot that added it: it hides rows of data files whose
data sequence number is lower), `added_snapshot_id`, `added_on`, `evict_by`, and its `meta`:
`request_id`, `operation`, `reason`.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyiceberg.io import FileIO
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

from app.lake.file_cache import FileCache
from app.lake.snapshots import own_properties

FILE = "tombstone.file"
ADDED = "tombstone.metrics.added.count"
DELETED = "tombstone.metrics.deleted.count"
TOTAL = "tombstone.metrics.total.count"
VACUUM_FILE = "tombstone.vacuum.file"
VACUUM_COUNT = "tombstone.metrics.vacuum.count"
# the highest tombstone sequence number whose hidden rows are in Iceberg position deletes
# (app.lake.materialize_plan): set by the materializer's snapshots, carried in every later list
MATERIALIZED = "tombstone.materialized-seq"
FOLDER = "tombstones"
FANOUT = 8

SCHEMA = pa.schema(
    [
        pa.field("namespace", pa.int32(), nullable=False),
        pa.field("id", pa.string(), nullable=False),
        pa.field("added_seq", pa.int64(), nullable=False),
        pa.field("added_snapshot_id", pa.int64(), nullable=False),
        pa.field("added_on", pa.timestamp("us", tz="UTC"), nullable=False),
        pa.field("evict_by", pa.timestamp("us", tz="UTC")),
        pa.field("request_id", pa.string()),
        pa.field("operation", pa.string()),
        pa.field("reason", pa.string()),
    ]
)


@dataclass(frozen=True)
class NewTombstone:
    """A tombstone to commit; the commit stamps its sequence number, snapshot and time."""

    namespace: int
    id: str
    request_id: str
    operation: str
    reason: str | None = None
    evict_by: datetime | None = None


@dataclass
class Segment:
    path: str
    level: int
    count: int
    min_seq: int
    max_seq: int
    namespaces: dict[str, int] = field(default_factory=dict)  # field id -> tombstone count


@dataclass
class TombstoneList:
    segments: list[Segment] = field(default_factory=list)
    # every row a tombstone of sequence number <= this hides in the snapshot's live data files
    # is in an Iceberg position delete file (app.lake.materialize_plan); 0: none are
    materialized_seq: int = 0

    @property
    def total(self) -> int:
        return sum(s.count for s in self.segments)

    def to_json(self) -> str:
        return json.dumps(
            {
                "version": 1,
                "segments": [asdict(s) for s in self.segments],
                "materialized_seq": self.materialized_seq,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> TombstoneList:
        parsed = json.loads(text)
        return cls(
            [Segment(**s) for s in parsed["segments"]], int(parsed.get("materialized_seq", 0))
        )


def list_location(table: Table, snapshot: Snapshot | None) -> str | None:
    """The tombstone list in force at `snapshot`: its own or its nearest ancestor's."""
    while snapshot is not None:
        own = own_properties(snapshot)
        if FILE in own:
            return own[FILE] or None
        if snapshot.parent_snapshot_id is None:
            return None
        snapshot = table.snapshot_by_id(snapshot.parent_snapshot_id)
    return None


_LISTS: FileCache[TombstoneList] = FileCache(256)
_SEGMENTS: FileCache[pa.Table] = FileCache(1024)


def read_list(io: FileIO, location: str | None) -> TombstoneList:
    if not location:
        return TombstoneList()

    def load() -> TombstoneList:
        with io.new_input(location).open() as stream:
            return TombstoneList.from_json(stream.read().decode())

    return _LISTS.get(location, load)


def read_segment(io: FileIO, path: str) -> pa.Table:
    """One segment's rows."""

    def load() -> pa.Table:
        with io.new_input(path).open() as stream:
            return pq.read_table(stream, schema=SCHEMA)

    return _SEGMENTS.get(path, load)


def active(table: Table, snapshot: Snapshot | None) -> pa.Table:
    """Every tombstone active at `snapshot`."""
    listed = read_list(table.io, list_location(table, snapshot))
    parts = [read_segment(table.io, s.path) for s in listed.segments]
    return pa.concat_tables(parts) if parts else SCHEMA.empty_table()


def materialized_seq(table: Table, snapshot: Snapshot | None) -> int:
    """How far `snapshot`'s tombstones are in Iceberg position deletes (0: not at all)."""
    return read_list(table.io, list_location(table, snapshot)).materialized_seq


def unmaterialized(table: Table, snapshot: Snapshot | None) -> pa.Table:
    """The tombstones active at `snapshot` that are not yet in position deletes."""
    return newer_than(table, snapshot, materialized_seq(table, snapshot))


def newer_than(table: Table, snapshot: Snapshot | None, seq: int) -> pa.Table:
    """The tombstones active at `snapshot` with a sequence number above `seq` (only the
    segments that can hold one are read)."""
    listed = read_list(table.io, list_location(table, snapshot))
    parts = [read_segment(table.io, s.path) for s in listed.segments if s.max_seq > seq]
    rows = pa.concat_tables(parts) if parts else SCHEMA.empty_table()
    return rows.filter(pc.greater(rows["added_seq"], seq)) if seq else rows


def _write_segment(io: FileIO, folder: str, rows: pa.Table, level: int, tag: str) -> Segment:
    rows = rows.sort_by([("namespace", "ascending"), ("id", "ascending")])
    path = f"{folder}/L{level}-{tag}-{uuid.uuid4().hex}.parquet"
    with io.new_output(path).create(overwrite=False) as stream:
        pq.write_table(rows, stream, compression="zstd")
    counts = pc.value_counts(rows["namespace"]).to_pylist() if rows.num_rows else []
    seqs = rows["added_seq"]
    return Segment(
        path=path,
        level=level,
        count=rows.num_rows,
        min_seq=int(pc.min(seqs).as_py() or 0),
        max_seq=int(pc.max(seqs).as_py() or 0),
        namespaces={str(c["values"]): int(c["counts"]) for c in counts},
    )


def _add(
    io: FileIO, folder: str, segments: list[Segment], delta: pa.Table, tag: str
) -> list[Segment]:
    """`segments` with `delta` added at level 0, each level that then holds FANOUT segments
    merged into one segment of the next. The rows being merged stay in memory up to the level
    where they settle, so every file written is listed: a delta written and then merged at once
    was referenced by no snapshot, and such files (one per FANOUT commits) stayed under the table
    until orphan cleanup, holding back every GDPR erasure of the dataset."""
    pending, level = delta, 0
    while True:
        same = [s for s in segments if s.level == level]
        if len(same) + 1 < FANOUT:
            return [*segments, _write_segment(io, folder, pending, level, tag)]
        merged = [read_segment(io, s.path).select(SCHEMA.names).cast(SCHEMA) for s in same]
        pending = pa.concat_tables([*merged, pending.cast(SCHEMA)])
        segments = [s for s in segments if s.level != level]
        level += 1


@dataclass
class WrittenCommit:
    """The files a tombstone commit wrote, and the summary keys that reference them."""

    list_path: str
    written: list[str]
    properties: dict[str, str]


def write_commit(
    table: Table,
    parent: Snapshot | None,
    new: Iterable[NewTombstone],
    *,
    snapshot_id: int,
    sequence_number: int,
    now: datetime,
) -> WrittenCommit:
    """Write the delta segment (and any tier merges) and the new list for one commit."""
    io, folder = table.io, f"{table.location().rstrip('/')}/{FOLDER}"
    base = read_list(io, list_location(table, parent))
    rows = list(new)
    delta = pa.Table.from_pylist(
        [
            {
                "namespace": t.namespace,
                "id": t.id,
                "added_seq": sequence_number,
                "added_snapshot_id": snapshot_id,
                "added_on": now,
                "evict_by": t.evict_by,
                "request_id": t.request_id,
                "operation": t.operation,
                "reason": t.reason,
            }
            for t in rows
        ],
        schema=SCHEMA,
    )
    tag = f"{sequence_number:012d}"
    segments = _add(io, folder, list(base.segments), delta, tag)
    known = {s.path for s in base.segments}
    written = [s.path for s in segments if s.path not in known]
    listed = TombstoneList(segments, base.materialized_seq)
    list_path = _write_list(io, folder, listed, tag)
    return WrittenCommit(
        list_path=list_path,
        written=[*written, list_path],
        properties={
            FILE: list_path,
            ADDED: str(len(rows)),
            DELETED: "0",
            TOTAL: str(listed.total),
        },
    )


KEY = ["namespace", "id", "added_seq"]


def write_removal(
    table: Table, parent: Snapshot | None, removed: pa.Table, *, tag: str, purged_through: int = 0
) -> WrittenCommit:
    """The list of `parent` without the `removed` tombstones (matched on namespace, id and
    added_seq), plus a *vacuumed tombstones* file holding them, for a vacuum commit.

    Only segments that hold a removed tombstone are rewritten (at their level); the others are
    listed as they are. With nothing removed, the parent's list is restated as it is.

    `purged_through`: the vacuum's start sequence number. When every tombstone up to it that is
    left in the list is materialized already, the mark moves up to it: the rows of the others
    were rewritten away, and so were those of every GDPR delete up to it (each was listed, or
    purged by an earlier vacuum). Readers of the snapshot's position deletes then stop looking
    up the GDPR deletes the vacuum made moot (a read after a vacuum cost what a read of its whole
    GDPR set costs until the next materializer pass, which a quiet dataset never gets).
    """
    io, folder = table.io, f"{table.location().rstrip('/')}/{FOLDER}"
    location = list_location(table, parent)
    base = read_list(io, location)
    if not removed.num_rows:
        path = location or _write_list(io, folder, TombstoneList(), tag)
        return WrittenCommit(
            path,
            [] if location else [path],
            {FILE: path, ADDED: "0", DELETED: "0", TOTAL: str(base.total)},
        )
    keys = removed.select(KEY)
    segments, written, gone = [], [], 0
    for segment in base.segments:
        rows = read_segment(io, segment.path)
        kept = rows.join(keys, KEY, join_type="left anti")
        if kept.num_rows == rows.num_rows:
            segments.append(segment)
            continue
        gone += rows.num_rows - kept.num_rows
        if kept.num_rows:
            new = _write_segment(io, folder, kept.select(SCHEMA.names), segment.level, tag)
            segments.append(new)
            written.append(new.path)
    vacuum_path = f"{folder}/vacuum-{tag}-{uuid.uuid4().hex}.parquet"
    with io.new_output(vacuum_path).create(overwrite=False) as stream:
        pq.write_table(removed.select(SCHEMA.names).cast(SCHEMA), stream, compression="zstd")
    mark = base.materialized_seq
    if purged_through > mark and not _listed_between(io, segments, mark, purged_through):
        mark = purged_through
    listed = TombstoneList(segments, mark)
    list_path = _write_list(io, folder, listed, tag)
    properties = {
        FILE: list_path,
        ADDED: "0",
        DELETED: str(gone),
        TOTAL: str(listed.total),
        VACUUM_FILE: vacuum_path,
        VACUUM_COUNT: str(gone),
    }
    if mark != base.materialized_seq:
        properties[MATERIALIZED] = str(mark)
    return WrittenCommit(list_path, [*written, vacuum_path, list_path], properties)


def _listed_between(io: FileIO, segments: list[Segment], low: int, high: int) -> bool:
    """Whether a tombstone of the segments has a sequence number in (low, high]."""
    for segment in segments:
        if segment.max_seq <= low or segment.min_seq > high:
            continue
        seqs = read_segment(io, segment.path)["added_seq"]
        if pc.any(pc.and_(pc.greater(seqs, low), pc.less_equal(seqs, high))).as_py():
            return True
    return False


def write_materialized(
    table: Table, parent: Snapshot | None, seq: int, *, tag: str
) -> WrittenCommit:
    """`parent`'s list with its tombstones up to `seq` marked materialized (the materializer's
    commit: the same segments, a new mark)."""
    io, folder = table.io, f"{table.location().rstrip('/')}/{FOLDER}"
    base = read_list(io, list_location(table, parent))
    if seq < base.materialized_seq:
        raise ValueError(f"the mark only moves forward: {seq} < {base.materialized_seq}")
    list_path = _write_list(io, folder, TombstoneList(base.segments, seq), tag)
    return WrittenCommit(
        list_path,
        [list_path],
        {FILE: list_path, ADDED: "0", DELETED: "0", TOTAL: str(base.total), MATERIALIZED: str(seq)},
    )


def _write_list(io: FileIO, folder: str, listed: TombstoneList, tag: str) -> str:
    list_path = f"{folder}/list-{tag}-{uuid.uuid4().hex}.json"
    with io.new_output(list_path).create(overwrite=False) as stream:
        stream.write(listed.to_json().encode())
    return list_path


def discard(io: FileIO, paths: Iterable[str]) -> None:
    """Delete files of a commit that did not land (best effort: orphan cleanup catches the rest)."""
    for path in paths:
        with contextlib.suppress(Exception):  # nothing references them
            io.delete(path)


def metrics(table: Table, snapshot: Snapshot | None) -> dict[str, Any]:
    """The tombstone keys in force at `snapshot` (inherited from an ancestor when unchanged)."""
    location = list_location(table, snapshot)
    own = own_properties(snapshot)
    return {
        "file": location,
        "inherited": FILE not in own,
        "added": int(own.get(ADDED, 0)),
        "deleted": int(own.get(DELETED, 0)),
        "total": read_list(table.io, location).total if location else 0,
        "vacuum_file": own.get(VACUUM_FILE),
        "vacuumed": int(own.get(VACUUM_COUNT, 0)),
        "materialized_seq": read_list(table.io, location).materialized_seq if location else 0,
    }
