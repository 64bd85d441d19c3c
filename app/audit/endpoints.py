from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.audit import service
from app.audit.schemas import AuditPage
from app.auth import Org, requires
from app.db_session import DbSession
from app.models import Scope
from app.pagination import Paging
from app.strict import DateTime

router = APIRouter(prefix="/v1/audit", tags=["audit"])


@router.get("", response_model=AuditPage, dependencies=[requires(Scope.ADMIN)])
def audit_list(
    org: Org,
    session: DbSession,
    paging: Paging,
    action: Annotated[
        str | None,
        Query(max_length=64, description="Only this action (`batches.*`: every batches action)"),
    ] = None,
    since: Annotated[
        DateTime | None, Query(description="Only events at or after (ISO 8601)")
    ] = None,
) -> AuditPage:
    """Your organization's audit trail, newest first, a page at a time.

    Every mutating call and every denied one: who (key id), what (`action`), on what (`target`)
    and how it ended. Filter by `action` (`batches.*` for a prefix) and `since`. Events older
    than the audit retention are read from your organization's Iceberg table `<org>._audit`, in
    the same order and pages.
    """
    page = service.page(
        session, org, cursor=paging.cursor, action=action, since=since, limit=paging.limit
    )
    return paging.respond(page)
