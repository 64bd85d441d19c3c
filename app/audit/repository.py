"""The audit trail's SQL: insert and read, nothing else (the store refuses the rest)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from app.models import AuditEvent


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
