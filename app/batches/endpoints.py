from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import JSONResponse

from app import conditional
from app.auth import Org, requires
from app.batches import service, views
from app.batches.schemas import (
    BatchAction,
    BatchActionOut,
    BatchCreate,
    BatchFileOut,
    BatchList,
    BatchOut,
)
from app.conditional import UpdatedSince
from app.datasets import service as datasets
from app.db_session import DbSession
from app.idempotency import Idempotent
from app.models import BatchStatus, Scope
from app.openapi import problems
from app.pagination import Paging
from app.restatements import service as restatements

router = APIRouter(prefix="/v1/batches", tags=["batches"])
STATE_CONFLICT = problems(
    {
        409: "The batch's status does not allow this action (`batch_status`), or it already has a "
        "pending revert or replay"
    }
)
UPLOAD_BODY = {
    "required": True,
    "description": "The file's bytes, as stored (any content type)",
    "content": {
        "application/octet-stream": {
            "schema": {"type": "string", "format": "binary", "minLength": 1},  # empty: 422
            "example": "event_id,user_id,event_time\n1,u1,2026-11-01T10:00:00Z\n",
        }
    },
}


@router.post(
    "",
    status_code=201,
    response_model=BatchOut,
    responses=problems(
        {
            404: "No such dataset, or a replay's predecessor batch, in your organization",
            409: "A replay's predecessor is not 'success', or already has a pending revert or "
            "replay; or the dataset is a CDC raw table (its processor writes it)",
        }
    ),
    dependencies=[requires(Scope.WRITE, "batches.open")],
)
def batches_create(
    body: BatchCreate, org: Org, session: DbSession, idempotent: Idempotent
) -> JSONResponse:
    """Open a batch; it accepts files while 'loading'.

    Upload its files (`PUT /v1/batches/{batch_id}/files/{name}`), then complete it. With
    `replay`, the batch replaces its predecessors: their tombstones and its rows commit as one
    snapshot.
    """

    def run() -> BatchOut:
        batch = service.open_batch(session, org, body)
        if batch.replay:  # what a replay replaces is the restatements domain's to check
            restatements.check_replay(session, batch)
        return views.to_out(session, batch)

    return idempotent.run(body, 201, run)


@router.put(
    "/{batch_id}/files/{name}",
    status_code=201,
    response_model=BatchFileOut,
    responses=problems(
        {
            409: "The batch is not 'loading' (`batch_status`)",
            413: "The file exceeds the size limit; nothing of it was kept",
            507: "Staging ran out of space; nothing of it was kept: upload again",
        }
    ),
    openapi_extra={"requestBody": UPLOAD_BODY},
    dependencies=[requires(Scope.WRITE, "batches.upload")],
)
async def batches_upload_file(
    batch_id: str, name: str, request: Request, org: Org, session: DbSession
) -> BatchFileOut:
    """Upload one file of the batch (the raw file as the request body).

    The body is streamed to staging, in the batch's format (CSV with a header line, JSON lines
    or Parquet). A second upload of a name replaces the first. 422 for an empty file or a bad
    name (letters, digits, '.', '_', '-').
    """
    stored = await service.store_file(session, org, batch_id, name, request.stream())
    return BatchFileOut(name=stored.name, bytes=stored.bytes, sha256=stored.sha256)


@router.post(
    "/{batch_id}",
    response_model=BatchActionOut,
    responses={
        202: {"model": BatchActionOut, "description": "COMPLETE or REVERT: the job"},
        **STATE_CONFLICT,
    },
    dependencies=[requires(Scope.WRITE, "batches.act", by="action")],
)
def batches_act(
    batch_id: str, action: BatchAction, org: Org, session: DbSession, idempotent: Idempotent
) -> JSONResponse:
    """Complete, abort or revert a batch.

    COMPLETE promotes the batch (202, a job); ABORT drops a loading batch; REVERT hides a
    'success' batch's rows with a tombstone (202, a job; the batch becomes 'reverted').
    """
    status = 200 if action is BatchAction.ABORT else 202
    return idempotent.run(None, status, lambda: _act(session, org, batch_id, action))


def _act(session: DbSession, org: str, batch_id: str, action: BatchAction) -> BatchActionOut:
    """COMPLETE (the ingest job, or a replay batch's restatement job), REVERT (a restatement
    job: the restatements domain's) or ABORT (no job)."""
    if action is BatchAction.REVERT:
        batch, job = restatements.revert(session, org, batch_id)
    elif action is BatchAction.COMPLETE:
        batch, job = service.complete(session, org, batch_id, replay=restatements.complete_replay)
    else:
        batch, job = service.abort(session, org, batch_id), None
    return views.action_out(session, batch, job)


def _acting(action: BatchAction, status_code: int) -> Any:
    """The route of `POST /v1/batches/{batch_id}/<action>`: the same call as `?action=`."""
    return router.post(
        f"/{{batch_id}}/{action.value.lower()}",
        status_code=status_code,
        response_model=BatchActionOut,
        responses=STATE_CONFLICT,
        dependencies=[requires(Scope.WRITE, f"batches.act.{action.value}")],
    )


@_acting(BatchAction.COMPLETE, 202)
def batches_complete(
    batch_id: str, org: Org, session: DbSession, idempotent: Idempotent
) -> JSONResponse:
    """Complete a loading batch: an ingest job promotes its files as one snapshot.

    The batch becomes 'staged'; the response carries the job to follow (`GET /v1/jobs/{id}`).
    The same call as `POST /v1/batches/{batch_id}?action=COMPLETE`.
    """
    return idempotent.run(None, 202, lambda: _act(session, org, batch_id, BatchAction.COMPLETE))


@_acting(BatchAction.ABORT, 200)
def batches_abort(
    batch_id: str, org: Org, session: DbSession, idempotent: Idempotent
) -> JSONResponse:
    """Abort a loading batch: its files are dropped and it becomes 'aborted'.

    The same call as `POST /v1/batches/{batch_id}?action=ABORT`.
    """
    return idempotent.run(None, 200, lambda: _act(session, org, batch_id, BatchAction.ABORT))


@_acting(BatchAction.REVERT, 202)
def batches_revert(
    batch_id: str, org: Org, session: DbSession, idempotent: Idempotent
) -> JSONResponse:
    """Revert a 'success' batch: a tombstone hides its rows and it becomes 'reverted'.

    Merge-on-read: no data file is rewritten until a vacuum purges the rows. The response
    carries the restatement job. The same call as `POST /v1/batches/{batch_id}?action=REVERT`.
    """
    return idempotent.run(None, 202, lambda: _act(session, org, batch_id, BatchAction.REVERT))


@router.get(
    "/{batch_id}",
    response_model=BatchOut,
    responses=conditional.RESPONSES,
    openapi_extra=conditional.OPENAPI,
)
async def batches_get(batch_id: str, org: Org, request: Request) -> Response:
    """Status, counts, errors, snapshot id and progress of a batch.

    Poll it while the batch is 'staged' or 'processing'; a 'failed' batch lists its row-level
    errors (`errors`: file, row, field, value, reason). Poll it cheaply: send the `ETag` of the
    last answer as `If-None-Match`; while nothing
    changed the answer is `304 Not Modified`, without a body.
    """
    return await conditional.get(
        request,
        ("batch", org, batch_id),
        lambda session: views.version(session, org, batch_id),
        lambda session: views.read(session, org, batch_id),
    )


@router.get("", response_model=BatchList)
def batches_list(
    org: Org,
    session: DbSession,
    paging: Paging,
    dataset_id: Annotated[
        str | None, Query(description="Only this dataset's batches: its id or its name")
    ] = None,
    status: BatchStatus | None = None,
    updated_since: UpdatedSince = None,
) -> BatchList:
    """List batches, newest first, by dataset and status.

    A page at a time: pass a page's `next` as `cursor` (or follow its `Link` header). A poller
    passes `updated_since` (the time of its last poll) to get only what changed.
    """
    dataset_id = datasets.filter_id(session, org, dataset_id)
    page = views.list_batches(
        session, org, dataset_id, status, paging.offset, paging.limit, updated_since
    )
    return paging.respond(page)
