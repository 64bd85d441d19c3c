"""Deleted entities (`cdc_deletions`): what the processor knows of an entity that has no raw
row, without reading the staged history. See `app.models.CdcDeletion` for why a row can be
trusted only up to the raw table's watermark."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from app.models import CdcDeletion
from workers.cdc.keyed import CHUNK, postgres, rows_in


@dataclass(frozen=True)
class Deleted:
    """The event that deleted an entity, and the links the entity had."""

    timestamp_us: int
    sequence: int
    related_ids: list[str]


def known(session: Session, org: str, ids: Iterable[str]) -> dict[str, Deleted]:
    """{entity: its deletion} for those of `ids` that have one."""
    query = select(
        CdcDeletion.entity_id,
        CdcDeletion.timestamp_us,
        CdcDeletion.sequence,
        CdcDeletion.related_ids,
    ).where(CdcDeletion.org == org)
    return {
        str(entity): Deleted(int(ts), int(seq), list(related or []))
        for entity, ts, seq, related in rows_in(session, query, CdcDeletion.entity_id, ids)
    }


def record(session: Session, org: str, deleted: dict[str, Deleted]) -> None:
    """Upsert the deletions a run is about to commit."""
    rows = [
        {
            "org": org,
            "entity_id": entity,
            "timestamp_us": d.timestamp_us,
            "sequence": d.sequence,
            "related_ids": d.related_ids,
        }
        for entity, d in sorted(deleted.items())
    ]
    if not rows:
        return
    statement = (postgresql if postgres(session) else sqlite).insert(CdcDeletion.__table__)
    upsert = statement.on_conflict_do_update(
        index_elements=["org", "entity_id"],
        set_={
            "timestamp_us": statement.excluded.timestamp_us,
            "sequence": statement.excluded.sequence,
            "related_ids": statement.excluded.related_ids,
        },
    )
    session.execute(upsert, rows)  # executemany: batched VALUES, compiled once


def forget(session: Session, org: str, ids: Iterable[str]) -> None:
    """Drop the deletions of entities a committed run re-created."""
    wanted = sorted(set(ids))
    for start in range(0, len(wanted), CHUNK):
        session.execute(
            delete(CdcDeletion).where(
                CdcDeletion.org == org, CdcDeletion.entity_id.in_(wanted[start : start + CHUNK])
            )
        )
