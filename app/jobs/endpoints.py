from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.auth import Org
from app.db import DbSession
from app.deps import Offset
from app.jobs import service
from app.jobs.schemas import JobList, JobOut
from app.models import JobState

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])


@router.get("/{job_id}", response_model=JobOut)
def get_job(job_id: str, org: Org, session: DbSession) -> JobOut:
    """State, stage, progress, attempt, timings and error of one job."""
    return service.describe(session, org, job_id)


@router.get("", response_model=JobList)
def list_jobs(
    org: Org,
    session: DbSession,
    state: JobState | None = None,
    kind: str | None = None,
    offset: Offset = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> JobList:
    """List your organization's jobs, newest first."""
    return service.list_jobs(session, org, state, kind, offset, limit)
