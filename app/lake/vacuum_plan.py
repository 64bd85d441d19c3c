"""Vacuum SCAN: which data files may hold tombstoned rows, from metadata only (seed 000).

A file is exposed when, for some namespace, its column bounds may hold an id whose tombstone is
newer than the file. A partial vacuum takes exposed files (oldest first) within a budget of files
and bytes. A tombstone may leave the active set only when every file it may still hide rows in
is rewritten: with the planned files chosen, the tombstones no unplanned exposed file can hold
are the ones the vacuum purges.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.table import Table
from pyiceberg.table.snapshots import Snapshot

from app.lake import tombstones, visible


@dataclass(frozen=True)
class PlannedRewrite:
    path: str
    bytes: int
    records: int
    sequence_number: int
    planned: visible.PlannedFile = field(compare=False, repr=False)


@dataclass
class VacuumPlan:
    snapshot_id: int | None
    files: list[PlannedRewrite] = field(default_factory=list)
    exposed_files: int = 0  # exposed files, planned or not
    purged: pa.Table = field(default_factory=tombstones.SCHEMA.empty_table)
    active: int = 0

    @property
    def bytes(self) -> int:
        return sum(f.bytes for f in self.files)

    @property
    def records(self) -> int:
        return sum(f.records for f in self.files)


def plan_vacuum(
    table: Table,
    snapshot: Snapshot | None,
    *,
    max_files: int | None = None,
    max_bytes: int | None = None,
    max_tombstones: int | None = None,
) -> VacuumPlan:
    """The files to rewrite and the tombstones that leave the active set if they are.

    `max_tombstones` limits the run to the oldest tombstones (by the sequence number that added
    them): only files they may hide rows in are planned, and only they may be purged. Every
    planned file is still rewritten with every active tombstone applied.
    """
    active = tombstones.active(table, snapshot)
    plan = VacuumPlan(snapshot.snapshot_id if snapshot else None, active=active.num_rows)
    if snapshot is None or not active.num_rows:
        return plan
    chosen = active if max_tombstones is None else _oldest(active, max_tombstones)
    filt = visible.TombstoneFilter(table.schema(), chosen)
    # per namespace: which ids an unplanned exposed file may still hold
    blocked = [np.zeros(len(ns.ids), dtype=bool) for ns in filt.namespaces]
    files = sorted(
        visible.plan(table, snapshot),
        key=lambda p: (p.sequence_number, p.data_file.file_path),
    )
    for planned in files:
        hits = [_positions(ns, planned) for ns in filt.namespaces]
        if not any(len(h) for h in hits):
            continue
        plan.exposed_files += 1
        data_file = planned.data_file
        fits = (max_files is None or len(plan.files) < max_files) and (
            max_bytes is None or plan.bytes + data_file.file_size_in_bytes <= max_bytes
        )
        if fits:
            plan.files.append(
                PlannedRewrite(
                    data_file.file_path,
                    data_file.file_size_in_bytes,
                    data_file.record_count,
                    planned.sequence_number,
                    planned,
                )
            )
        else:
            for mask, positions in zip(blocked, hits, strict=True):
                mask[positions] = True
    purged_keys = [
        (ns.field_id, ids)
        for ns, mask in zip(filt.namespaces, blocked, strict=True)
        if len(ids := pc.cast(pa.array(ns.ids[~mask]), pa.string()))
    ]
    plan.purged = _rows_of(active, purged_keys)
    return plan


def _oldest(active: pa.Table, limit: int) -> pa.Table:
    """Every tombstone row of the `limit` oldest (namespace, id) keys."""
    firsts = active.group_by(["namespace", "id"]).aggregate([("added_seq", "min")])
    keep = firsts.sort_by([("added_seq_min", "ascending"), ("namespace", "ascending")])
    keys = keep.slice(0, max(limit, 0)).select(["namespace", "id"])
    return active.join(keys, ["namespace", "id"], join_type="inner").select(active.schema.names)


def _positions(ns: visible.Namespace, planned: visible.PlannedFile) -> np.ndarray:
    """Positions in `ns.ids` of the ids this file may hold rows of, older than their tombstone."""
    window = visible.bounds_window(ns, planned.data_file, ns.ids)
    if window is None:
        return np.empty(0, dtype=np.int64)
    start, end = window
    applies = ns.max_seq[start:end] > planned.sequence_number
    return np.flatnonzero(applies) + start


def _rows_of(active: pa.Table, keys: list[tuple[int, pa.Array]]) -> pa.Table:
    """The tombstone rows of `active` whose (namespace, id) is among `keys`."""
    parts = []
    for field_id, ids in keys:
        mask = pc.and_(
            pc.equal(active["namespace"], field_id), pc.is_in(active["id"], value_set=ids)
        )
        parts.append(active.filter(mask))
    return pa.concat_tables(parts) if parts else active.schema.empty_table()
