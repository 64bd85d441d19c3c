"""The audit trail's SQL: insert and read; and, for the move to the org's Iceberg table, the
mark and the DELETE of the rows at or below it (the store refuses every other change)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import Session

from app.models import AuditArchive, AuditEvent

COLUMNS = (
    "seq",
    "at",
    "org",
    "key_id",
    "action",
    "method",
    "path",
    "target",
    "request_id",
    "status_code",
    "outcome",
)


def append(session: Session, rows: list[dict[str, Any]]) -> None:
    """Insert events (their columns), in order: one multi-row INSERT."""
    session.execute(insert(AuditEvent), rows)


def page(
    session: Session,
    org: str,
    *,
    before_seq: int | None,
    action: str | None,
    since: datetime | None,
    limit: int,
) -> Sequence[AuditEvent]:
    """Up to `limit` events of `org`, newest first, older than `before_seq`."""
    query = select(AuditEvent).where(AuditEvent.org == org)
    if before_seq is not None:
        query = query.where(AuditEvent.seq < before_seq)
    if action is not None:
        if action.endswith(".*"):
            query = query.where(AuditEvent.action.startswith(action[:-1], autoescape=True))
        else:
            query = query.where(AuditEvent.action == action)
    if since is not None:
        query = query.where(AuditEvent.at >= since)
    return session.scalars(query.order_by(AuditEvent.seq.desc()).limit(limit)).all()


def mark(session: Session, org: str) -> int:
    """The highest `seq` of `org` in its Iceberg table, as the store records it (0: none)."""
    found = session.scalar(select(AuditArchive.archived_through_seq).where(AuditArchive.org == org))
    return found or 0


def orgs_with_events_before(session: Session, before: datetime) -> list[str]:
    """Orgs with an event in SQL older than `before`."""
    query = select(AuditEvent.org).where(AuditEvent.at < before).distinct().order_by(AuditEvent.org)
    return list(session.scalars(query))


def oldest(
    session: Session, org: str, after_seq: int, before: datetime, limit: int
) -> list[dict[str, Any]]:
    """The org's events after `after_seq`, in `seq` order, up to the first one at or after
    `before` (a prefix of the trail: the archive and SQL never interleave), at most `limit`."""
    query = (
        select(AuditEvent)
        .where(AuditEvent.org == org, AuditEvent.seq > after_seq)
        .order_by(AuditEvent.seq)
        .limit(limit)
    )
    out = []
    for event in session.scalars(query):
        if event.at >= before:
            break
        out.append({name: getattr(event, name) for name in COLUMNS})
    return out


def archived(session: Session, org: str, through: int) -> int:
    """Record that the org's Iceberg table holds every event through `through`, and delete
    them from SQL (the store lets a DELETE through at or below the mark only): rows deleted."""
    row = session.get(AuditArchive, org, with_for_update=True)
    if row is None:
        session.add(AuditArchive(org=org, archived_through_seq=through))
    elif row.archived_through_seq < through:
        row.archived_through_seq = through
    session.flush()
    gone = session.execute(
        delete(AuditEvent).where(AuditEvent.org == org, AuditEvent.seq <= through)
    )
    return gone.rowcount


def count(session: Session, org: str) -> int:
    """The org's events still in SQL."""
    return session.scalar(select(func.count(AuditEvent.seq)).where(AuditEvent.org == org)) or 0
