"""What an engine may load: the table metadata the catalog serves.

Icebatch's own reads apply tombstones at once; other engines only see Iceberg deletes, which the
materializer writes a few seconds later (`app.lake.materialize_plan`). So the catalog serves a
snapshot only when

1. every tombstone active at it is materialized (the list's highest tombstone sequence number
   is at most its `materialized_seq`): an engine applying the position deletes hides exactly
   what Icebatch hides, and
2. it is not older than any GDPR delete still in force (`erased_through`, the highest sequence
   number among the dataset's committed, not yet erased GDPR restatements and the GDPR
   tombstones active now): a snapshot at or after a GDPR tombstone either holds it (then
   materialized, by 1) or had it vacuumed (the rows rewritten away). Older snapshots, which
   still show the person, are never served: engines lose time travel to before the newest
   erasure until it is `erased` (then the older snapshots are expired anyway).

The newest such ancestor of the current snapshot is served as current (`main`); the others
are the served history (each one's parent is its nearest served ancestor); the rest of the
metadata (schemas, specs, properties, sequence numbers) is the table's own. The metadata file
is never rewritten: the served document exists only in answers, cached by its ETag.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pyarrow.compute as pc
from pyiceberg.table import Table
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.table.refs import MAIN_BRANCH, SnapshotRef
from pyiceberg.table.snapshots import Snapshot

from app.lake import gdpr_tombstones as gdpr
from app.lake import tombstones
from app.lake.file_cache import FileCache
from app.lake.snapshots import own_properties


@dataclass(frozen=True)
class Served:
    metadata: TableMetadata
    snapshot_id: int | None  # the served current snapshot; None: the table has none yet
    withheld: int  # snapshots of the table's history not served


def etag(metadata_location: str, gdpr_through: int, mode: str) -> str:
    """The served document's tag: the table's metadata file, the newest GDPR delete in force
    recorded in the metadata store (all the served history depends on besides the file) and
    the snapshot mode."""
    digest = hashlib.sha256(f"{metadata_location}|{gdpr_through}|{mode}".encode()).hexdigest()
    return f'"{digest[:32]}"'


def erased_through(table: Table, recorded: int) -> int:
    """The highest sequence number of a GDPR delete in force on the table (0: none): the
    recorded ones' (`recorded`) and those active at its current snapshot (a delete that landed
    but is not yet recorded as committed)."""
    active = gdpr.active_gdpr(table)["added_seq"]
    newest_active = int(pc.max(active).as_py() or 0) if len(active) else 0
    return max(newest_active, recorded)


def _ancestry(table: Table) -> list[Snapshot]:
    """The current snapshot and its retained ancestors, oldest first."""
    by_id = {s.snapshot_id: s for s in table.metadata.snapshots}  # snapshot_by_id is a scan
    chain = []
    snapshot = table.current_snapshot()
    while snapshot is not None:
        chain.append(snapshot)
        parent = snapshot.parent_snapshot_id
        snapshot = by_id.get(parent) if parent is not None else None
    return chain[::-1]


def servable(table: Table, erased: int) -> list[Snapshot]:
    """The ancestors of the current snapshot an engine may read, oldest first."""
    location: str | None = None
    kept = []
    for snapshot in _ancestry(table):
        own = own_properties(snapshot)
        if tombstones.FILE in own:  # else the list of its parent, carried along
            location = own[tombstones.FILE] or None
        if _materialized(table, location) and (snapshot.sequence_number or 0) >= erased:
            kept.append(snapshot)
    return kept


# by tombstone list (immutable): whether each of its tombstones is in position deletes; small
# entries, so a whole history's lists stay cached and a new table version reads only its own
_MATERIALIZED: FileCache[bool] = FileCache(65536)


def _materialized(table: Table, location: str | None) -> bool:
    if location is None:
        return True

    def load() -> bool:
        listed = tombstones.read_list(table.io, location)
        return max((s.max_seq for s in listed.segments), default=0) <= listed.materialized_seq

    return _MATERIALIZED.get(location, load)


def serve(table: Table, erased: int, mode: str) -> Served:
    """The metadata an engine loads: `mode` `all` (the served history) or `refs` (the served
    current snapshot only)."""
    metadata = table.metadata
    kept = servable(table, erased)
    withheld = len(metadata.snapshots) - len(kept)
    if not kept:
        return Served(_with(metadata, [], None), None, withheld)
    reparented, parent = [], None
    for snapshot in kept:
        reparented.append(snapshot.model_copy(update={"parent_snapshot_id": parent}))
        parent = snapshot.snapshot_id
    current = reparented[-1]
    return Served(
        _with(metadata, reparented if mode == "all" else [current], current.snapshot_id),
        current.snapshot_id,
        withheld,
    )


def _with(metadata: TableMetadata, snapshots: list[Snapshot], current: int | None) -> TableMetadata:
    ids = {s.snapshot_id for s in snapshots}
    refs = {}
    if current is not None:
        refs[MAIN_BRANCH] = SnapshotRef.model_validate({"snapshot-id": current, "type": "branch"})
    update = {
        "snapshots": snapshots,
        "current_snapshot_id": current,
        "refs": refs,
        "snapshot_log": [e for e in metadata.snapshot_log if e.snapshot_id in ids],
        "metadata_log": [],
        "statistics": [s for s in metadata.statistics if s.snapshot_id in ids],
        "partition_statistics": [s for s in metadata.partition_statistics if s.snapshot_id in ids],
    }
    return metadata.model_copy(update=update)
