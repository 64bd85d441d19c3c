from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from app.auth import DbSession, Org
from app.datasets import repository as datasets
from app.idempotency import IdempotencyHeader, run_once
from app.jobs import service as jobs
from app.jobs.schemas import JobOut
from app.maintenance import service
from app.maintenance.schemas import CompactRequest, VacuumRequest

router = APIRouter(prefix="/v1/datasets", tags=["maintenance"])


@router.post("/{dataset_id}/vacuum", status_code=202, response_model=JobOut)
def vacuum(
    dataset_id: str,
    body: VacuumRequest,
    org: Org,
    session: DbSession,
    request: Request,
    key: IdempotencyHeader = None,
) -> Any:
    """Purge tombstoned rows and tombstones (a job: scan, purge data, purge metadata, commit).
    A dry run's job result is the plan: files, bytes, rows to purge. 409 while another
    vacuum or compaction of the dataset is queued or running."""

    def run() -> tuple[int, JobOut]:
        dataset = datasets.get(session, org, dataset_id)
        return 202, jobs.to_out(service.start_vacuum(session, dataset, body))

    return run_once(session, org, key, request, body, run)


@router.post("/{dataset_id}/compact", status_code=202, response_model=JobOut)
def compact(
    dataset_id: str,
    body: CompactRequest,
    org: Org,
    session: DbSession,
    request: Request,
    key: IdempotencyHeader = None,
) -> Any:
    """Bin-pack small files or sort each partition, with the same rewrite job as the vacuum:
    tombstoned rows are dropped and tombstones committed meanwhile keep applying."""

    def run() -> tuple[int, JobOut]:
        dataset = datasets.get(session, org, dataset_id)
        return 202, jobs.to_out(service.start_compaction(session, dataset, body))

    return run_once(session, org, key, request, body, run)
