"""Row masks of the read rule: which rows of a batch the tombstoned ids of its columns hide.

Shared by every reader of data files (visible reads, rewrites, change reads) so a row is hidden
by the same test everywhere: its value in a column is among that column's ids (never a null).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.io.pyarrow import ArrowScan
from pyiceberg.manifest import DataFile
from pyiceberg.table import FileScanTask


def hidden_mask(rows: pa.RecordBatch | pa.Table, ids: Mapping[str, pa.Array]) -> pa.Array:
    """True for the rows whose value in some column of `ids` is among that column's ids."""
    hidden: pa.Array | None = None
    for column, value_set in ids.items():
        hit = pc.fill_null(pc.is_in(rows.column(column), value_set=value_set), False)
        hidden = hit if hidden is None else pc.or_(hidden, hit)
    assert hidden is not None, "no column to mask on"
    return hidden


def keep_mask(rows: pa.RecordBatch | pa.Table, ids: Mapping[str, pa.Array]) -> pa.Array:
    """True for the rows no id of `ids` hides: what a read keeps."""
    return pc.invert(hidden_mask(rows, ids))


def typed_ids(rows: pa.RecordBatch | pa.Table, ids: Mapping[str, list[Any]]) -> dict[str, pa.Array]:
    """Plain id lists (as a task carries them) as Arrow arrays typed like their columns."""
    return {column: pa.array(values, rows.column(column).type) for column, values in ids.items()}


def kept_batches(
    scan: ArrowScan,
    data_file: DataFile,
    hidden: Mapping[str, pa.Array],
    deleted: np.ndarray | None = None,
) -> Iterator[pa.RecordBatch]:
    """The record batches of one data file without the rows `hidden` hides (empty: as read)
    and without the rows at the sorted positions `deleted` (its position delete files',
    `app.lake.position_deletes.deleted`). Batches come in file order, so a batch's rows are
    at positions `offset .. offset + num_rows`."""
    return kept(scan.to_record_batches([FileScanTask(data_file)]), hidden, deleted)


def kept(
    batches: Iterable[pa.RecordBatch],
    hidden: Mapping[str, pa.Array],
    deleted: np.ndarray | None = None,
) -> Iterator[pa.RecordBatch]:
    """`kept_batches` of one file's record batches, already read (in file order). A batch's
    hidden rows join its deleted positions, and the batch goes without them once: as it was
    read when none is hidden (a tail of a few tombstoned ids hides no row of most batches),
    else sliced around them or filtered (`_without`)."""
    offset = 0
    for batch in batches:
        size = batch.num_rows
        positions = None
        if deleted is not None:
            low, high = np.searchsorted(deleted, [offset, offset + size])
            if high > low:
                positions = deleted[low:high] - offset
        offset += size
        if hidden and size:
            hit = np.flatnonzero(hidden_mask(batch, hidden).to_numpy(zero_copy_only=False))
            if len(hit):
                positions = hit if positions is None else np.union1d(positions, hit)
        if positions is not None:
            yield from _without(batch, positions)
        else:
            yield batch


SPARSE = 0.001  # below this share of a batch's rows deleted, it is sliced around them (measured:
# a 250k-row batch sliced around 250 positions 1.8 ms, filtered 4 ms; around 2,500: 19 ms, 4 ms)


def _without(batch: pa.RecordBatch, positions: np.ndarray) -> list[pa.RecordBatch]:
    """`batch` without the rows at the sorted `positions`: zero-copy slices between them when
    they are few (a filter copies every column of the batch, for a handful of rows), a filter
    otherwise."""
    if len(positions) > SPARSE * batch.num_rows:
        keep = np.ones(batch.num_rows, dtype=bool)
        keep[positions] = False
        kept = batch.filter(pa.array(keep))
        return [kept] if kept.num_rows else []
    starts = np.concatenate(([0], positions + 1))
    ends = np.concatenate((positions, [batch.num_rows]))
    return [
        batch.slice(a, b - a) for a, b in zip(starts.tolist(), ends.tolist(), strict=True) if b > a
    ]
