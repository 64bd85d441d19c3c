"""The rows a CDC raw table's MERGEs removed over a range: its `deleted` increment.

A CDC snapshot (`icebatch.operation = cdc`) is a copy-on-write MERGE: it removes the files that
held the entities it changed and writes their untouched rows again with the new versions. Rows
are identified by content plus batch (DESIGN.md §3); in a raw table a version is
(`entity_id`, `_batch_id`: the run that wrote it), so:

deleted over (S1, S2] = the rows of every file a CDC snapshot of the range removed whose
(entity, batch) is not visible at S2 — an entity's previous version after an update, an entity
after its DELETE, a version written and replaced within the range — each once, annotated with
the snapshot that removed it first. A consumer that removes these and adds the appended rows
(the new versions, `_operation = cdc`) keeps an exact replica.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pyarrow as pa
from pyiceberg.expressions import AlwaysTrue
from pyiceberg.io.pyarrow import ArrowScan
from pyiceberg.manifest import ManifestContent, ManifestEntryStatus
from pyiceberg.table import FileScanTask, Table
from pyiceberg.table.snapshots import Snapshot

from app.lake import snapshots, visible
from app.lake.changes import ChangeRange
from app.lake.types import BATCH_COLUMN

KEY = "entity_id"


def is_cdc(rng: ChangeRange) -> bool:
    return any(snapshots.summary_value(s, snapshots.OPERATION) == "cdc" for s in rng.chain)


def _live_keys(table: Table, snapshot: Snapshot | None) -> set[tuple[str, str]]:
    if snapshot is None:
        return set()
    _, batches = visible.row_batches(table, snapshot, columns=[KEY, BATCH_COLUMN])
    keys: set[tuple[str, str]] = set()
    for batch in batches:
        keys.update(zip(batch.column(0).to_pylist(), batch.column(1).to_pylist(), strict=True))
    return keys


def _removed(table: Table, snapshot: Snapshot) -> list[FileScanTask]:
    """The data files `snapshot` removed."""
    found = []
    for manifest in visible.manifests(table, snapshot):
        if manifest.content != ManifestContent.DATA:
            continue
        for entry in visible.entries(table, manifest):
            if (
                entry.status == ManifestEntryStatus.DELETED
                and entry.snapshot_id == snapshot.snapshot_id
            ):
                found.append(FileScanTask(entry.data_file))
    return found


Annotate = Callable[[pa.RecordBatch, str, np.ndarray, np.ndarray, np.ndarray], pa.RecordBatch]


def deleted(table: Table, rng: ChangeRange, annotate: Annotate) -> Iterator[pa.RecordBatch]:
    """The range's rows removed by CDC merges and not visible at its end (see the module)."""
    cdc = [s for s in rng.chain if snapshots.summary_value(s, snapshots.OPERATION) == "cdc"]
    if not cdc:
        return
    live = _live_keys(table, rng.end)
    seen: set[tuple[str, str]] = set()
    scan = ArrowScan(table.metadata, table.io, table.schema(), AlwaysTrue())
    for snapshot in cdc:
        request = snapshots.summary_value(snapshot, snapshots.REQUEST_ID)
        for task in _removed(table, snapshot):
            for batch in scan.to_record_batches([task]):
                keys = zip(
                    batch.column(KEY).to_pylist(),
                    batch.column(BATCH_COLUMN).to_pylist(),
                    strict=True,
                )
                mask = []
                for key in keys:
                    gone = key not in live and key not in seen
                    seen.add(key)
                    mask.append(gone)
                if not any(mask):
                    continue
                part = batch.filter(pa.array(mask))
                n = part.num_rows
                yield annotate(
                    part,
                    "deleted",
                    np.array(["cdc"] * n, dtype=object),
                    np.array([request] * n, dtype=object),
                    np.full(n, snapshot.snapshot_id, dtype=np.int64),
                )
