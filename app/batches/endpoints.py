from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from app.auth import Org, requires
from app.batches import service
from app.batches.schemas import (
    BatchAction,
    BatchActionOut,
    BatchCreate,
    BatchFileOut,
    BatchList,
    BatchOut,
)
from app.db import DbSession
from app.deps import Offset
from app.idempotency import Idempotent
from app.models import BatchStatus, Scope

router = APIRouter(prefix="/v1/batches", tags=["batches"])


@router.post(
    "",
    status_code=201,
    response_model=BatchOut,
    dependencies=[requires(Scope.WRITE, "batches.open")],
)
def open_batch(
    body: BatchCreate, org: Org, session: DbSession, idempotent: Idempotent
) -> JSONResponse:
    """Open a batch; it accepts files while 'loading'."""

    def run() -> tuple[int, BatchOut]:
        return 201, service.to_out(session, service.open_batch(session, org, body))

    return idempotent.run(body, run)


@router.put(
    "/{batch_id}/files/{name}",
    status_code=201,
    response_model=BatchFileOut,
    responses={
        413: {"description": "The file exceeds the size limit; nothing of it was kept"},
        507: {"description": "Staging ran out of space; nothing of it was kept: upload again"},
    },
    dependencies=[requires(Scope.WRITE, "batches.upload")],
)
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
    dependencies=[requires(Scope.WRITE, "batches.act", by="action")],
)
def act_on_batch(
    batch_id: str, action: BatchAction, org: Org, session: DbSession, idempotent: Idempotent
) -> JSONResponse:
    """Complete, abort or revert a batch.

    COMPLETE promotes the batch (202, a job); ABORT drops a loading batch; REVERT hides a
    'success' batch's rows with a tombstone (202, a job; the batch becomes 'reverted').
    """
    return idempotent.run(None, lambda: service.act(session, org, batch_id, action))


@router.get("/{batch_id}", response_model=BatchOut)
def get_batch(batch_id: str, org: Org, session: DbSession) -> BatchOut:
    """Status, counts, errors, snapshot id and progress of a batch."""
    return service.describe(session, org, batch_id)


@router.get("", response_model=BatchList)
def list_batches(
    org: Org,
    session: DbSession,
    dataset_id: str | None = None,
    status: BatchStatus | None = None,
    offset: Offset = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> BatchList:
    """List batches, newest first, by dataset and status."""
    return service.list_batches(session, org, dataset_id, status, offset, limit)
