from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from app import conditional
from app.auth import Org
from app.conditional import UpdatedSince
from app.datasets import service as datasets
from app.db_session import DbSession
from app.jobs import service
from app.jobs.schemas import JobList, JobOut
from app.models import JobState
from app.pagination import Paging
from app.strict import DateTime

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])


@router.get(
    "/{job_id}",
    response_model=JobOut,
    responses=conditional.RESPONSES,
    openapi_extra=conditional.OPENAPI,
)
async def jobs_get(job_id: str, org: Org, request: Request) -> Response:
    """State, stage, progress, attempt, timings and error of one job.

    A job is queued, then running (its `stage` and `progress` move), then succeeded (with its
    `result`) or failed (with its `error`, after its attempts). Poll it cheaply: send the `ETag`
    of the last answer as `If-None-Match`; while nothing
    changed the answer is `304 Not Modified`, without a body.
    """
    return await conditional.get(
        request,
        ("job", org, job_id),
        lambda session: service.version(session, org, job_id),
        lambda session: (
            service.version(session, org, job_id),
            service.describe(session, org, job_id),
        ),
    )


@router.get("", response_model=JobList)
def jobs_list(
    org: Org,
    session: DbSession,
    paging: Paging,
    state: JobState | None = None,
    kind: str | None = None,
    updated_since: UpdatedSince = None,
    dataset_id: Annotated[
        str | None,
        Query(
            description="Only the jobs of this dataset, its id or its name (directly, or "
            "through its batches and restatements)"
        ),
    ] = None,
    since: Annotated[
        DateTime | None, Query(description="Only jobs created at or after this time (RFC 3339)")
    ] = None,
    until: Annotated[
        DateTime | None, Query(description="Only jobs created before this time (RFC 3339)")
    ] = None,
) -> JobList:
    """List your organization's jobs, newest first.

    Filter by `state`, `kind`, `dataset_id` and creation time (`since`, `until`); a page at a
    time (`cursor`, `Link`). A poller passes `updated_since` (the time of its last poll) to get
    only what changed.
    """
    page = service.list_jobs(
        session,
        org,
        state,
        kind,
        paging.offset,
        paging.limit,
        updated_since,
        dataset_id=datasets.filter_id(session, org, dataset_id),
        since=since,
        until=until,
    )
    return paging.respond(page)
