from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse

from app import conditional
from app.auth import Org, requires
from app.db import DbSession
from app.deps import DatasetTable
from app.idempotency import Idempotent
from app.models import Scope
from app.openapi import problems
from app.pagination import PageRequest, Paging, paging
from app.restatements import service
from app.restatements.schemas import PrivacyJobCreate, PrivacyJobList, PrivacyJobOut, TombstonePage

privacy_router = APIRouter(prefix="/v1/privacy/jobs", tags=["privacy"])
tombstones_router = APIRouter(prefix="/v1/datasets", tags=["restatements"])
# tombstones come by the thousand (a GDPR delete of many ids): larger pages than other lists
TombstonePaging = Annotated[PageRequest, paging(default=1000, maximum=10_000)]


@privacy_router.post(
    "",
    status_code=202,
    response_model=PrivacyJobOut,
    responses=problems({404: "A dataset of `dataset_ids` does not exist in your organization"}),
    dependencies=[requires(Scope.WRITE, "privacy.submit")],
)
def privacy_jobs_create(
    body: PrivacyJobCreate, org: Org, session: DbSession, idempotent: Idempotent
) -> JSONResponse:
    """GDPR delete: tombstone every row whose identity column holds one of `values`.

    One restatement per dataset; the rows are hidden from every read (at every snapshot) once
    it commits, and physically erased by a later vacuum and expiry (the job's `receipt`).
    """

    def run() -> PrivacyJobOut:
        return service.submit_privacy_job(
            session, org, body.dataset_ids, body.column, list(body.values)
        )

    return idempotent.run(body, 202, run)


@privacy_router.get("", response_model=PrivacyJobList)
def privacy_jobs_list(org: Org, session: DbSession, paging: Paging) -> PrivacyJobList:
    """List your organization's privacy jobs with their status, newest first.

    Each item is what `GET /v1/privacy/jobs/{job_id}` answers (status per dataset, and the
    erasure receipt once erased); a page at a time (`cursor`, `Link`).
    """
    page = service.list_privacy_jobs(session, org, paging.offset, paging.limit)
    return paging.respond(page)


@privacy_router.get(
    "/{job_id}",
    response_model=PrivacyJobOut,
    responses=conditional.RESPONSES,
    openapi_extra=conditional.OPENAPI,
)
def privacy_jobs_get(job_id: str, org: Org, session: DbSession, request: Request) -> Response:
    """Status per dataset, tombstones written and rows hidden.

    `submitted → processing → complete` (logically deleted) `→ erased` (physically gone), or
    `failed`; the receipt says what the erasure rewrote and expired. Carries an `ETag`: with
    `If-None-Match` an unchanged job answers `304 Not Modified`.
    """
    status = service.privacy_job_status(session, org, job_id)
    # its status gathers several rows: the tag is the body's own (the 304 saves the transfer)
    tag = conditional.etag("privacy", status.model_dump_json())
    return conditional.respond(request, tag, lambda: status)


@tombstones_router.get(
    "/{dataset_id}/tombstones",
    response_model=TombstonePage,
    responses=problems({404: "No such dataset in your organization, or `as_of` names no snapshot"}),
)
def tombstones_list(
    loaded: DatasetTable,
    paging: TombstonePaging,
    namespace: Annotated[str | None, Query(description="Only tombstones on this column")] = None,
    as_of: Annotated[str | None, Query(description="A snapshot id or an ISO 8601 time")] = None,
) -> TombstonePage:
    """The tombstones active now (or at `as_of`), oldest first.

    A tombstone hides the rows whose `namespace` column holds its `id` (a batch id for a
    revert, an identity for a GDPR delete) until a vacuum purges them.
    """
    page = service.list_tombstones(
        loaded.dataset,
        loaded.table,
        namespace=namespace,
        as_of=as_of,
        offset=paging.offset,
        limit=paging.limit,
    )
    return paging.respond(page)
