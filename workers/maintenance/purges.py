"""After a vacuum: which GDPR restatements had their tombstones purged (their rows rewritten
out of every live file), for the privacy job's erasure receipt."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from sqlalchemy import select

from app import clock
from app.chunks import in_chunks
from app.db import session_scope
from app.lake import tombstones
from app.lake.catalog import get_catalog
from app.models import Restatement, RestatementKind, RestatementState


def record(
    dataset_id: str, identifier: str, purged: pa.Table, snapshot_id: int, files: int
) -> list[str]:
    """Note the vacuum on each GDPR restatement it purged tombstones of; a restatement is
    `purged` once none of its tombstones is active at the vacuum's snapshot. Returns the
    request ids the vacuum purged tombstones of."""
    requests = sorted(r for r in pc.unique(purged["request_id"]).to_pylist() if r)
    if not requests:
        return []
    table = get_catalog().load_table(identifier)
    still = tombstones.active(table, table.snapshot_by_id(snapshot_id))
    remaining = set(pc.unique(still["request_id"]).to_pylist()) if still.num_rows else set()
    now = clock.now()
    with session_scope() as session:
        rows = [
            row
            for part in in_chunks(requests)
            for row in session.scalars(
                select(Restatement).where(
                    Restatement.dataset_id == dataset_id,
                    Restatement.kind == RestatementKind.GDPR,
                    Restatement.state == RestatementState.COMMITTED,
                    Restatement.request_id.in_(part),
                )
            )
        ]
        for row in rows:
            ids = list(row.purge_snapshot_ids or [])
            if snapshot_id in ids:
                continue
            row.purge_snapshot_ids = [*ids, snapshot_id]
            row.files_rewritten = (row.files_rewritten or 0) + files
            if row.request_id not in remaining:
                row.purged_at = now
    return requests
