"""The audit trail: one append-only row per mutating call, read back by admins page by page;
old events move to the org's Iceberg table (`workers/audit/archive.py`) and are read from there."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from app.audit import repository
from app.audit.schemas import AuditEventOut, AuditPage
from app.errors import InvalidInput
from app.lake import audit as lake
from app.lake.catalog import get_catalog
from app.models import AuditEvent
from app.models.base import utcnow

_CURSOR = re.compile(r"^[1-9][0-9]{0,18}$")


def outcome(status_code: int) -> str:
    if status_code in (401, 403):
        return "denied"
    return "ok" if status_code < 400 else "error"


def event_row(
    *,
    org: str,
    key_id: str | None,
    action: str,
    method: str,
    path: str,
    target: dict[str, Any],
    request_id: str | None,
    status_code: int,
) -> dict[str, Any]:
    """One event's columns, for `app.audit.writer` to store (the call's own transaction has
    ended, either way)."""
    return {
        "at": utcnow(),
        "org": org,
        "key_id": key_id,
        "action": action[:64],
        "method": method,
        "path": path[:512],
        "target": target,
        "request_id": request_id,
        "status_code": status_code,
        "outcome": outcome(status_code),
    }


def to_out(event: AuditEvent | dict[str, Any]) -> AuditEventOut:
    if isinstance(event, dict):
        return AuditEventOut.model_validate(event)
    return AuditEventOut.model_validate(event, from_attributes=True)


def page(
    session: Session,
    org: str,
    *,
    cursor: str | None,
    action: str | None,
    since: datetime | None,
    limit: int,
) -> AuditPage:
    """A page of the org's trail, newest first; `next` continues with older events.

    SQL holds the events above the org's mark, its Iceberg table those at or below it; a page
    that reaches the mark is merged from both, by `seq` (a move running meanwhile may have a
    `seq` in both for a moment: it is listed once). The table is read after SQL, so an event
    SQL no longer had was already in the table."""
    if cursor is not None and not _CURSOR.match(cursor):
        raise InvalidInput(f"cursor {cursor!r} is not one this API returned (a page's `next`)")
    before_seq = int(cursor) if cursor is not None else None
    wanted = limit + 1
    events = [
        to_out(event)
        for event in repository.page(
            session, org, before_seq=before_seq, action=action, since=since, limit=wanted
        )
    ]
    # SQL deletes an event only once the table holds it and the mark says so: with no mark
    # (nothing moved, or a move not yet settled) SQL holds the whole trail
    mark = repository.mark(session, org)
    if mark and (len(events) < wanted or events[-1].seq <= mark):
        table = lake.load(get_catalog(), org)
        if table is not None:
            archived = lake.page(
                table, before_seq=before_seq, action=action, since=since, limit=wanted
            )
            merged = {event.seq: event for event in map(to_out, archived)}
            merged.update((event.seq, event) for event in events)
            events = sorted(merged.values(), key=lambda event: event.seq, reverse=True)
    more = len(events) > limit
    items = events[:limit]
    return AuditPage(items=items, next=str(items[-1].seq) if more else None)
