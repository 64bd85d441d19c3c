from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request, Response

from app.auth import DbSession, Org
from app.datasets import repository as datasets
from app.idempotency import IdempotencyHeader, run_once
from app.jobs import service as jobs
from app.jobs.schemas import JobOut
from app.retention import service
from app.retention.schemas import (
    ConsumerCreate,
    ConsumerList,
    ConsumerOut,
    RetentionOut,
    RetentionUpdate,
)

router = APIRouter(prefix="/v1/datasets", tags=["retention"])


@router.put("/{dataset_id}/retention", response_model=RetentionOut)
def set_retention(
    dataset_id: str, body: RetentionUpdate, org: Org, session: DbSession
) -> RetentionOut:
    """Set the dataset's snapshot retention policy (fields left out keep their value)."""
    return service.retention_out(service.set_retention(session, org, dataset_id, body))


@router.get("/{dataset_id}/retention", response_model=RetentionOut)
def get_retention(dataset_id: str, org: Org, session: DbSession) -> RetentionOut:
    """The dataset's retention policy in force."""
    return service.retention_out(datasets.get(session, org, dataset_id))


@router.post("/{dataset_id}/expire", status_code=202, response_model=JobOut)
def expire(
    dataset_id: str, org: Org, session: DbSession, request: Request, key: IdempotencyHeader = None
) -> Any:
    """Expire snapshots beyond the policy and delete orphan files (409 while one runs)."""

    def run() -> tuple[int, JobOut]:
        job = service.start_expire(session, datasets.get(session, org, dataset_id))
        return 202, jobs.to_out(job)

    return run_once(session, org, key, request, None, run)


@router.post("/{dataset_id}/consumers", response_model=ConsumerOut)
def set_consumer(
    dataset_id: str, body: ConsumerCreate, org: Org, session: DbSession
) -> ConsumerOut:
    """Register or move a consumer's checkpoint; it pins the snapshots its next read needs."""
    return service.consumer_out(service.upsert_consumer(session, org, dataset_id, body))


@router.get("/{dataset_id}/consumers", response_model=ConsumerList)
def list_consumers(dataset_id: str, org: Org, session: DbSession) -> ConsumerList:
    """The dataset's consumers and their checkpoints."""
    datasets.get(session, org, dataset_id)
    return ConsumerList(
        items=[service.consumer_out(c) for c in service.consumers(session, dataset_id)]
    )


@router.delete("/{dataset_id}/consumers/{name}", status_code=204)
def delete_consumer(dataset_id: str, name: str, org: Org, session: DbSession) -> Response:
    """Forget a consumer: its snapshots are no longer pinned."""
    service.delete_consumer(session, org, dataset_id, name)
    return Response(status_code=204)
