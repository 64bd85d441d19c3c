from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from app import conditional
from app.auth import Org, requires
from app.db_session import DbSession
from app.idempotency import Idempotent
from app.models import Scope
from app.openapi import problems
from app.pagination import Paging
from app.privacy import service
from app.privacy.schemas import PrivacyJobCreate, PrivacyJobList, PrivacyJobOut

router = APIRouter(prefix="/v1/privacy/jobs", tags=["privacy"])


@router.post(
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


@router.get("", response_model=PrivacyJobList)
def privacy_jobs_list(org: Org, session: DbSession, paging: Paging) -> PrivacyJobList:
    """List your organization's privacy jobs with their status, newest first.

    Each item is what `GET /v1/privacy/jobs/{job_id}` answers (status per dataset, and the
    erasure receipt once erased); a page at a time (`cursor`, `Link`).
    """
    page = service.list_privacy_jobs(session, org, paging.offset, paging.limit)
    return paging.respond(page)


@router.get(
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
