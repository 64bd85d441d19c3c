from __future__ import annotations

from fastapi import APIRouter

from app.auth import Org
from app.db import DbSession
from app.jobs import service
from app.jobs.schemas import JobList, JobOut
from app.models import JobState
from app.pagination import Paging

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])


@router.get("/{job_id}", response_model=JobOut)
def jobs_get(job_id: str, org: Org, session: DbSession) -> JobOut:
    """State, stage, progress, attempt, timings and error of one job.

    A job is queued, then running (its `stage` and `progress` move), then succeeded (with its
    `result`) or failed (with its `error`, after its attempts).
    """
    return service.describe(session, org, job_id)


@router.get("", response_model=JobList)
def jobs_list(
    org: Org,
    session: DbSession,
    paging: Paging,
    state: JobState | None = None,
    kind: str | None = None,
) -> JobList:
    """List your organization's jobs, newest first.

    Filter by `state` and `kind`; a page at a time (`cursor`, `Link`).
    """
    return paging.respond(service.list_jobs(session, org, state, kind, paging.offset, paging.limit))
