from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from app.auth import DbSession, Org
from app.batches import repository, service
from app.batches.schemas import (
    BatchAction,
    BatchActionOut,
    BatchCreate,
    BatchFileOut,
    BatchList,
    BatchOut,
)
from app.idempotency import IdempotencyHeader, run_once
from app.jobs import service as jobs
from app.models import BatchStatus
from app.restatements import service as restatements

router = APIRouter(prefix="/v1/batches", tags=["batches"])


@router.post("", status_code=201, response_model=BatchOut)
def open_batch(
    body: BatchCreate, org: Org, session: DbSession, request: Request, key: IdempotencyHeader = None
) -> Any:
    """Open a batch; it accepts files while 'loading'."""

    def run() -> tuple[int, BatchOut]:
        return 201, service.to_out(session, service.open_batch(session, org, body))

    return run_once(session, org, key, request, body, run)


@router.put("/{batch_id}/files/{name}", status_code=201, response_model=BatchFileOut)
async def upload_file(
    batch_id: str, name: str, request: Request, org: Org, session: DbSession
) -> BatchFileOut:
    """Upload one file of the batch (the raw file as the request body)."""
    stored = await service.store_file(session, org, batch_id, name, request.stream())
    return BatchFileOut(name=stored.name, bytes=stored.bytes, sha256=stored.sha256)


@router.post(
    "/{batch_id}",
    response_model=BatchActionOut,
    responses={202: {"model": BatchActionOut, "description": "COMPLETE or REVERT: the job"}},
)
def act_on_batch(
    batch_id: str,
    action: BatchAction,
    org: Org,
    session: DbSession,
    request: Request,
    key: IdempotencyHeader = None,
) -> Any:
    """COMPLETE promotes the batch (202, a job); ABORT drops a loading batch; REVERT hides a
    'success' batch's rows with a tombstone (202, a job; the batch becomes 'reverted')."""

    def run() -> tuple[int, BatchActionOut]:
        if action is BatchAction.COMPLETE:
            batch, job = service.complete(session, org, batch_id)
            return 202, BatchActionOut(batch=service.to_out(session, batch), job=jobs.to_out(job))
        if action is BatchAction.REVERT:
            batch, job = restatements.revert(session, org, batch_id)
            return 202, BatchActionOut(batch=service.to_out(session, batch), job=jobs.to_out(job))
        batch = service.abort(session, org, batch_id)
        return 200, BatchActionOut(batch=service.to_out(session, batch), job=None)

    return run_once(session, org, key, request, None, run)


@router.get("/{batch_id}", response_model=BatchOut)
def get_batch(batch_id: str, org: Org, session: DbSession) -> BatchOut:
    """Status, counts, errors, snapshot id and progress of a batch."""
    return service.to_out(session, repository.get(session, org, batch_id))


@router.get("", response_model=BatchList)
def list_batches(
    org: Org,
    session: DbSession,
    dataset_id: str | None = None,
    status: BatchStatus | None = None,
    offset: Annotated[int, Query(ge=0)] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> BatchList:
    """List batches, newest first, by dataset and status."""
    rows = repository.page(session, org, dataset_id, status, offset, limit + 1)
    return BatchList(
        items=[service.to_out(session, b) for b in rows[:limit]],
        next_offset=offset + limit if len(rows) > limit else None,
    )
