from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query

from app.audit import service
from app.audit.schemas import AuditPage
from app.auth import Org, requires
from app.db import DbSession
from app.models import Scope

router = APIRouter(prefix="/v1/audit", tags=["audit"])


@router.get("", response_model=AuditPage, dependencies=[requires(Scope.ADMIN)])
def read_audit(
    org: Org,
    session: DbSession,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    cursor: Annotated[
        str | None, Query(max_length=19, description="`next_cursor` of the page before")
    ] = None,
    action: Annotated[
        str | None,
        Query(max_length=64, description="Only this action (`batches.*`: every batches action)"),
    ] = None,
    since: Annotated[
        datetime | None, Query(description="Only events at or after (ISO 8601)")
    ] = None,
) -> AuditPage:
    """Your organization's audit trail, newest first, a page at a time."""
    return service.page(session, org, cursor=cursor, action=action, since=since, limit=limit)
