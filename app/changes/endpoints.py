from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from app.auth import DbSession, Org
from app.changes import service
from app.changes.schemas import ChangeKind, ExportCreate, ExportOut
from app.datasets import repository as datasets
from app.datasets import service as dataset_service
from app.idempotency import IdempotencyHeader, run_once
from app.lake.catalog import get_catalog
from app.reads import encoding
from app.reads.endpoints import MEDIA_TYPES

router = APIRouter(prefix="/v1/datasets", tags=["changes"])


@router.get("/{dataset_id}/changes", response_class=StreamingResponse)
def read_changes(
    dataset_id: str,
    org: Org,
    session: DbSession,
    kind: ChangeKind,
    from_snapshot: Annotated[int | None, Query(description="Start after this snapshot")] = None,
    to_snapshot: Annotated[int | None, Query(description="End at this snapshot")] = None,
    since: Annotated[
        str | None, Query(description="ISO 8601: start after the snapshot then")
    ] = None,
    until: Annotated[str | None, Query(description="ISO 8601: end at the snapshot then")] = None,
    format: Literal["jsonl", "arrow"] = "jsonl",
) -> StreamingResponse:
    """Stream the rows appended or deleted between two snapshots (from excluded, to included).

    No start means the empty table before the first snapshot; no end means the current
    snapshot. The resolved range is in `X-Icebatch-From-Snapshot` / `X-Icebatch-To-Snapshot`:
    the next increment starts from the `To` of this one.
    """
    dataset = datasets.get(session, org, dataset_id)
    table = dataset_service.load(get_catalog(), dataset)
    rng = service.resolve(
        session,
        dataset,
        table,
        from_snapshot=from_snapshot,
        to_snapshot=to_snapshot,
        since=since,
        until=until,
    )
    schema, batches = service.change_batches(table, dataset, rng, kind)
    body = encoding.jsonl(batches) if format == "jsonl" else encoding.arrow_stream(schema, batches)
    headers = {
        "X-Icebatch-From-Snapshot": str(rng.start.snapshot_id) if rng.start else "",
        "X-Icebatch-To-Snapshot": str(rng.end.snapshot_id) if rng.end else "",
        "X-Icebatch-Change-Kind": kind,
    }
    return StreamingResponse(body, media_type=MEDIA_TYPES[format], headers=headers)


@router.post("/{dataset_id}/exports", status_code=202, response_model=ExportOut)
def export_changes(
    dataset_id: str,
    body: ExportCreate,
    org: Org,
    session: DbSession,
    request: Request,
    key: IdempotencyHeader = None,
) -> Any:
    """Export the rows appended or deleted over a range as Parquet, in a Spark job.

    The range is resolved now (the job's result names the folder, rows and files written under
    `<warehouse>/exports/<org>/<job id>/`).
    """

    def run() -> tuple[int, ExportOut]:
        dataset = datasets.get(session, org, dataset_id)
        table = dataset_service.load(get_catalog(), dataset)
        return 202, service.start_export(session, org, dataset, table, body)

    return run_once(session, org, key, request, body, run)
