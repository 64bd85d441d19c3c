"""Row masks of the read rule: which rows of a batch the tombstoned ids of its columns hide.

Shared by every reader of data files (visible reads, rewrites, change reads) so a row is hidden
by the same test everywhere: its value in a column is among that column's ids (never a null).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
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
    offset = 0
    for batch in scan.to_record_batches([FileScanTask(data_file)]):
        size = batch.num_rows
        if deleted is not None:
            low, high = np.searchsorted(deleted, [offset, offset + size])
            if high > low:
                keep = np.ones(size, dtype=bool)
                keep[deleted[low:high] - offset] = False
                batch = batch.filter(pa.array(keep))
        offset += size
        yield batch.filter(keep_mask(batch, hidden)) if hidden else batch
