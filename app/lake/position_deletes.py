"""Iceberg v2 position delete files: the engine-neutral copy of tombstones.

See docs/position-deletes.md. A position delete file names rows by `(file_path, pos)`; every
engine that reads Iceberg v2 hides them (Spark, Trino, DuckDB, PyIceberg). Icebatch writes one
per data file, holding the positions of the rows its tombstones hide there, found by reading
only the tombstoned columns. Invariant: a position delete only ever marks a row an active
tombstone hides, so tombstones stay the source of truth and readers that apply them to raw
files stay exact.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyiceberg.io import FileIO
from pyiceberg.manifest import DataFile
from pyiceberg.table import Table

from app.lake import column_index
from app.lake.file_cache import FileCache
from app.lake.masks import hidden_mask
from app.lake.parquet_encoding import dictionary_columns

FILE_PATH_ID = 2147483546  # the Iceberg spec's reserved field ids of a position delete file
POS_ID = 2147483545
SCHEMA = pa.schema(
    [
        pa.field("file_path", pa.string(), False, {"PARQUET:field_id": str(FILE_PATH_ID)}),
        pa.field("pos", pa.int64(), False, {"PARQUET:field_id": str(POS_ID)}),
    ]
)
FOLDER = "data"


def hidden_positions(table: Table, data_file: DataFile, hidden: Mapping[str, pa.Array]) -> pa.Array:
    """The positions (int64, ascending) of the rows of one data file that `hidden`'s ids hide:
    from the file's column indexes (`app.lake.column_index`), else by reading those columns."""
    if not hidden:
        return pa.array([], pa.int64())
    indexed = column_index.hidden(table, data_file, dict(hidden), wait=False)
    if indexed is not None:
        return pa.array(indexed, pa.int64())
    with table.io.new_input(data_file.file_path).open() as stream:
        columns = pq.read_table(stream, columns=list(hidden))
    if not columns.num_rows:
        return pa.array([], pa.int64())
    typed = {c: pc.cast(ids, columns.column(c).type) for c, ids in hidden.items()}
    return pc.indices_nonzero(hidden_mask(columns, typed)).cast(pa.int64())


@dataclass(frozen=True)
class Written:
    """A position delete file as its metadata entry needs it (no footer read back)."""

    path: str
    data_path: str
    count: int
    size: int
    first: int  # the lowest position
    last: int  # the highest


def write(io: FileIO, table_location: str, data_path: str, positions: pa.Array) -> Written:
    """Write the position delete file of `positions` in `data_path`."""
    if not len(positions):
        raise ValueError("a position delete file needs at least one position")
    pos = pc.unique(pc.take(positions, pc.sort_indices(positions)))  # ascending, no repeats
    rows = pa.table(
        {"file_path": pa.array([data_path] * len(pos), pa.string()), "pos": pos.cast(pa.int64())},
        schema=SCHEMA,
    )
    path = f"{table_location.rstrip('/')}/{FOLDER}/pos-deletes-{uuid.uuid4().hex}.parquet"
    with io.new_output(path).create(overwrite=False) as stream:
        pq.write_table(rows, stream, compression="zstd", use_dictionary=dictionary_columns(rows))
    first, last = pos[0].as_py(), pos[-1].as_py()
    return Written(path, data_path, len(pos), len(io.new_input(path)), first, last)


# per delete file, its positions by data file path: delete files are immutable, so a reader
# decodes each once per process (a scan then costs what a scan without deletes costs)
_POSITIONS: FileCache[dict[str, np.ndarray]] = FileCache(4096)


def deleted(io: FileIO, data_path: str, delete_files: Iterable[DataFile]) -> np.ndarray | None:
    """The sorted positions of `data_path` that its position delete files name (None: none)."""
    parts = []
    for delete_file in delete_files:
        path = delete_file.file_path
        found = by_data_file(io, path).get(data_path)
        if found is not None and len(found):
            parts.append(found)
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else np.unique(np.concatenate(parts))


def by_data_file(io: FileIO, path: str) -> dict[str, np.ndarray]:
    """A delete file's sorted positions per data file it names (decoded once per process)."""
    return _POSITIONS.get(path, partial(_read, io, path))


def _read(io: FileIO, path: str) -> dict[str, np.ndarray]:
    with io.new_input(path).open() as stream:
        rows = pq.read_table(stream, columns=["file_path", "pos"])
    paths = pc.unique(rows["file_path"]).to_pylist()
    if len(paths) == 1:  # Icebatch's: one data file per delete file
        return {paths[0]: np.unique(rows["pos"].to_numpy())}
    out = {}
    for data_path in paths:
        mine = rows.filter(pc.equal(rows["file_path"], data_path))["pos"]
        out[data_path] = np.unique(mine.to_numpy())
    return out
