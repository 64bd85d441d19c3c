"""GDPR tombstones reach into the past: the one exception to exact time travel (DESIGN.md §3).

The rule. A GDPR tombstone `(identity column, value)` committed with sequence number S hides
every row of that identity whose data sequence number is lower than S in EVERY read: the current
view, `as_of` any snapshot (before S too), increments (`/changes`, exports) and Spark's
`read_dataset`. Revert and replay tombstones keep applying only to snapshots at or after their
commit, so time travel stays exact for them. Rows of the identity committed at or after S (a
re-registration) stay visible.

Where reads see it:
- `/rows`, `read_dataset`: a snapshot's filter is its active tombstones plus every GDPR
  tombstone in force (`visible.tombstone_filter(..., gdpr)`), with the usual sequence-number
  test: the tombstone hides rows of files older than it, whatever the snapshot read.
- `/changes`, exports: increments keep the shape of history, so a replica that consumed them
  before the delete is told about it (a GDPR `deleted` row) and one built after it ends up with
  the same rows; but a row of a GDPR-deleted identity (older than the delete) comes back with
  its identity columns and `_batch_id` only, other columns null: appended rows of a range that
  ends before the delete, and rows deleted by a revert or replay before it.

The source of "every GDPR tombstone that ever applied" is `GdprTombstones`, built by one
function (`app.privacy.reads.in_force`) from the metadata store's committed, not yet erased
GDPR restatements (column, ids, sequence number), united with the GDPR tombstones active at the
table's current snapshot. Why not the lake alone: vacuumed tombstones live only in the vacuum
snapshot's `tombstone.vacuum.file`, and a vacuum snapshot can be expired (its file deleted)
while an older snapshot, still holding the rows, is retained (a running job's start snapshot).
A restatement leaves that set only when `app.privacy.erasure` marks it erased, i.e. when no
retained snapshot's files hold its rows, so the set never drops a tombstone a read still needs.
The current snapshot's list covers a group that landed but is not yet recorded as committed.

Where they are already Iceberg deletes. A reader that applies the position delete files of the
snapshot S it reads (`/rows`, `read_dataset`) needs only the GDPR tombstones above S's
materialized mark (`tombstones.materialized_seq`, the mark the catalog serves by,
`app.catalog.served`): one at or below it is either listed at S, so its rows in S's files are
position-deleted, or was vacuumed before S, so its rows were rewritten away (it cannot be newer
than S: the mark is below S's own sequence number). At the current snapshot that leaves the
tombstones committed since the materializer's last pass; at an older one, every GDPR delete
since that snapshot's mark, those after it included. Increments read files without their
deletes and take the whole set.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.table import Table

from app.lake import tombstones

GDPR = "gdpr"


@dataclass(frozen=True)
class GdprTombstones:
    """GDPR tombstones in force on a table (rows of `tombstones.SCHEMA`); `key` names the set
    immutably (equal keys, equal rows), so what is built from it can be cached by it."""

    rows: pa.Table
    key: str

    @classmethod
    def none(cls) -> GdprTombstones:
        return cls(tombstones.SCHEMA.empty_table(), "none")


def active_gdpr(table: Table, after: int = 0) -> pa.Table:
    """The GDPR tombstones active at the table's current snapshot with a sequence number above
    `after`."""
    rows = tombstones.newer_than(table, table.current_snapshot(), after)
    return rows.filter(pc.equal(rows["operation"], GDPR))


def combine(table: Table, recorded: pa.Table, recorded_key: str, after: int = 0) -> GdprTombstones:
    """The recorded GDPR tombstones (from the metadata store) and those active at the current
    snapshot above `after`, as one set; its key joins the recorded set's key, the current
    list's path and `after`."""
    location = tombstones.list_location(table, table.current_snapshot()) or ""
    rows = pa.concat_tables([recorded.cast(tombstones.SCHEMA), active_gdpr(table, after)])
    digest = hashlib.sha256(f"{recorded_key}|{location}|{after}".encode()).hexdigest()[:32]
    return GdprTombstones(rows, f"gdpr-{digest}")


def lake_only(table: Table, after: int = 0) -> GdprTombstones:
    """The GDPR tombstones the current snapshot lists above `after` (for tables no metadata
    store knows, e.g. benchmarks; vacuumed tombstones are not in it)."""
    return combine(table, tombstones.SCHEMA.empty_table(), "lake", after)
