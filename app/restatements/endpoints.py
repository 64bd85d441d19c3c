from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from app.auth import Org, requires
from app.db import DbSession
from app.deps import DatasetTable, Offset
from app.idempotency import Idempotent
from app.models import Scope
from app.restatements import service
from app.restatements.schemas import PrivacyJobCreate, PrivacyJobOut, TombstoneList

privacy_router = APIRouter(prefix="/v1/privacy/jobs", tags=["privacy"])
tombstones_router = APIRouter(prefix="/v1/datasets", tags=["restatements"])


@privacy_router.post(
    "",
    status_code=202,
    response_model=PrivacyJobOut,
    dependencies=[requires(Scope.WRITE, "privacy.submit")],
)
def submit(
    body: PrivacyJobCreate, org: Org, session: DbSession, idempotent: Idempotent
) -> JSONResponse:
    """GDPR delete: tombstone every row whose identity column holds one of `values`."""

    def run() -> tuple[int, PrivacyJobOut]:
        job = service.submit_privacy_job(
            session, org, body.dataset_ids, body.column, list(body.values)
        )
        return 202, service.privacy_job_out(session, job)

    return idempotent.run(body, run)


@privacy_router.get("/{job_id}", response_model=PrivacyJobOut)
def get_privacy_job(job_id: str, org: Org, session: DbSession) -> PrivacyJobOut:
    """Status per dataset, tombstones written and rows hidden."""
    return service.privacy_job_status(session, org, job_id)


@tombstones_router.get("/{dataset_id}/tombstones", response_model=TombstoneList)
def list_tombstones(
    loaded: DatasetTable,
    namespace: Annotated[str | None, Query(description="Only tombstones on this column")] = None,
    as_of: Annotated[str | None, Query(description="A snapshot id or an ISO 8601 time")] = None,
    offset: Offset = 0,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 1000,
) -> TombstoneList:
    """The tombstones active now (or at `as_of`), oldest first."""
    return service.list_tombstones(
        loaded.dataset, loaded.table, namespace=namespace, as_of=as_of, offset=offset, limit=limit
    )
