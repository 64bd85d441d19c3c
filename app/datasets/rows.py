"""How many rows a read of a dataset's current snapshot returns, from metadata alone.

Iceberg's snapshot summary counts the rows of the live data files (`total-records`) and the
rows its position delete files mark (`total-position-deletes`: the tombstones up to the
materialized mark, and the deletes a CDC merge wrote). The tombstones past the mark hide rows
that no delete file marks yet: each restatement recorded at its commit how many rows visible
at its parent it hid (`rows_hidden`), so the unmaterialized remainder is the sum of those of
the restatements whose sequence numbers the current list holds past the mark. No data file
is read.
"""

from __future__ import annotations

import pyarrow.compute as pc
from pyiceberg.table import Table
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.chunks import in_chunks
from app.lake import snapshots, tombstones
from app.models import Restatement, RestatementState


def readable(session: Session, dataset_id: str, table: Table) -> int:
    """The rows a read of `table`'s current snapshot returns (0 before the first commit)."""
    current = table.current_snapshot()
    if current is None:
        return 0
    summary = snapshots.own_properties(current)
    total = int(summary.get("total-records", 0))
    deleted = int(summary.get("total-position-deletes", 0))
    return max(0, total - deleted - unmaterialized_hidden(session, dataset_id, table))


def unmaterialized_hidden(session: Session, dataset_id: str, table: Table) -> int:
    """Rows the current snapshot's tombstones past the materialized mark hide."""
    pending = tombstones.unmaterialized(table, table.current_snapshot())
    if not pending.num_rows:
        return 0
    seqs = [int(s) for s in pc.unique(pending["added_seq"]).to_pylist()]
    hidden = 0
    for chunk in in_chunks(seqs):
        query = select(func.coalesce(func.sum(Restatement.rows_hidden), 0)).where(
            Restatement.dataset_id == dataset_id,
            Restatement.state == RestatementState.COMMITTED,
            Restatement.sequence_number.in_(chunk),
        )
        hidden += int(session.scalar(query) or 0)
    return hidden
