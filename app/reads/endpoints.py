from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from app.auth import DbSession, Org
from app.datasets import repository as datasets
from app.datasets import service as dataset_service
from app.lake.catalog import get_catalog
from app.reads import encoding, service

router = APIRouter(prefix="/v1/datasets", tags=["reads"])

MEDIA_TYPES = {"jsonl": "application/x-ndjson", "arrow": "application/vnd.apache.arrow.stream"}


@router.get("/{dataset_id}/rows", response_class=StreamingResponse)
def read_rows(
    dataset_id: str,
    org: Org,
    session: DbSession,
    format: Literal["jsonl", "arrow"] = "jsonl",
    as_of: Annotated[str | None, Query(description="A snapshot id or an ISO 8601 time")] = None,
    offset: Annotated[int, Query(ge=0)] = 0,
    limit: Annotated[int | None, Query(ge=1)] = None,
) -> StreamingResponse:
    """Stream the rows visible now, or at `as_of`."""
    dataset = datasets.get(session, org, dataset_id)
    table = dataset_service.load(get_catalog(), dataset)
    snapshot = service.resolve_as_of(table, as_of)
    schema, batches = service.row_batches(table, snapshot, offset, limit)
    body = encoding.jsonl(batches) if format == "jsonl" else encoding.arrow_stream(schema, batches)
    headers = {"X-Icebatch-Snapshot-Id": str(snapshot.snapshot_id) if snapshot else ""}
    return StreamingResponse(body, media_type=MEDIA_TYPES[format], headers=headers)
