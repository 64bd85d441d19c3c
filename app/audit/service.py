"""The audit trail: one append-only row per mutating call, read back by admins page by page."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from app.audit import repository
from app.audit.schemas import AuditEventOut, AuditPage
from app.errors import InvalidInput
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


def to_out(event: AuditEvent) -> AuditEventOut:
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
    """A page of the org's trail, newest first; `next` continues with older events."""
    if cursor is not None and not _CURSOR.match(cursor):
        raise InvalidInput(f"cursor {cursor!r} is not one this API returned (a page's `next`)")
    events = repository.page(
        session,
        org,
        before_seq=int(cursor) if cursor is not None else None,
        action=action,
        since=since,
        limit=limit + 1,
    )
    more = len(events) > limit
    items = [to_out(event) for event in events[:limit]]
    return AuditPage(items=items, next=str(items[-1].seq) if more else None)
