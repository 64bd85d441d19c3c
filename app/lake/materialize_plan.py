"""The materializer's plan: tombstones not yet in Iceberg position deletes, resolved to positions.

A tombstone commit writes only its tombstones (no read on the write path). Afterwards the
materializer (workers/maintenance/materialize.py) resolves the tombstones past the snapshot's
materialized mark (`tombstones.MATERIALIZED`) to the rows they hide, data file by data file:
only files whose data sequence number is lower than a tombstone's and whose column bounds may
hold its id (`visible.TombstoneFilter.candidates`), reading only the tombstoned columns. Each
such file gets one position delete file holding its new positions united with those of the
delete file it had (replaced in the same commit), so a data file never has more than one delete
file of Icebatch's.

Invariant (docs/position-deletes.md): a position delete only marks a row that an active
tombstone hides, so readers that apply every tombstone to raw files stay exact, and readers that
apply the delete files may leave out the tombstones up to the mark.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.io import FileIO
from pyiceberg.manifest import DataFile
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

from app.lake import position_deletes, tombstones, visible


@dataclass
class FileDeletes:
    written: position_deletes.Written  # the new delete file: every position Icebatch deletes
    replaced: list[str]  # the delete files it had (their positions are in the new one)
    added: int  # positions the new tombstones hide that were not deleted yet

    @property
    def data_path(self) -> str:
        return self.written.data_path

    @property
    def delete_path(self) -> str:
        return self.written.path


@dataclass
class Resolution:
    """Position delete files written for the tombstones of `parent` up to `seq`."""

    parent: Snapshot
    seq: int  # the new mark: the highest sequence number of a tombstone resolved
    previous_seq: int  # the parent's mark
    tombstones: int  # how many tombstones were resolved
    files: list[FileDeletes] = field(default_factory=list)
    files_read: int = 0  # data files whose tombstoned columns were read

    @property
    def written(self) -> list[str]:
        return [f.delete_path for f in self.files]

    @property
    def positions(self) -> int:
        return sum(f.added for f in self.files)


def resolve(table: Table, parent: Snapshot | None) -> Resolution | None:
    """Write the position delete files of the tombstones of `parent` past its mark (none: None).

    The files are written, not committed: the caller commits them on `parent` or discards them.
    """
    if parent is None:
        return None
    pending = tombstones.unmaterialized(table, parent)
    if not pending.num_rows:
        return None
    resolution = Resolution(
        parent,
        seq=int(pc.max(pending["added_seq"]).as_py()),
        previous_seq=tombstones.materialized_seq(table, parent),
        tombstones=pending.num_rows,
    )
    filt = visible.TombstoneFilter(table.schema(), pending)
    try:
        for planned in visible.plan(table, parent):
            hidden = filt.candidates(planned)
            if not hidden:
                continue
            resolution.files_read += 1
            path = planned.data_file.file_path
            new = position_deletes.hidden_positions(table, planned.data_file, hidden)
            if not len(new):
                continue
            old, own = _positions(table.io, path, planned.delete_files)
            added = pc.sum(pc.invert(pc.is_in(new, old))).as_py() if len(old) else len(new)
            if not added:
                continue
            merged = pa.concat_arrays([*(p for _, p in own), new])
            written = position_deletes.write(table.io, table.location(), path, merged)
            replaced = [d for d, _ in own]
            resolution.files.append(FileDeletes(written, replaced, int(added)))
    except BaseException:
        tombstones.discard(table.io, resolution.written)
        raise
    return resolution


def _positions(
    io: FileIO, data_path: str, delete_files: tuple[DataFile, ...]
) -> tuple[pa.Array, list[tuple[str, pa.Array]]]:
    """The positions of `data_path` its delete files name (int64), and those of its delete
    files that name no other data file (Icebatch's: the new delete file replaces them, with
    their positions), each with its positions. A delete file of another writer that spans
    several data files stays as it is."""
    every, own = [], []
    for delete_file in delete_files:
        named = position_deletes.by_data_file(io, delete_file.file_path)
        positions = pa.array(named.get(data_path, []), pa.int64())
        every.append(positions)
        if set(named) <= {data_path}:
            own.append((delete_file.file_path, positions))
    empty = pa.array([], pa.int64())
    return (pa.concat_arrays(every) if every else empty), own
