from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Annotated, Literal

import pyarrow as pa
from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from app.db import DbSession
from app.deps import MAX_OFFSET, DatasetTable, Offset
from app.reads import encoding, service

router = APIRouter(prefix="/v1/datasets", tags=["reads"])

Format = Literal["jsonl", "arrow"]
MEDIA_TYPES = {"jsonl": "application/x-ndjson", "arrow": "application/vnd.apache.arrow.stream"}


def stream(
    format: Format,
    schema: pa.Schema,
    batches: Iterator[pa.RecordBatch],
    headers: Mapping[str, str],
) -> StreamingResponse:
    """Arrow batches as a JSON Lines or Arrow IPC stream response."""
    body = encoding.jsonl(batches) if format == "jsonl" else encoding.arrow_stream(schema, batches)
    return StreamingResponse(body, media_type=MEDIA_TYPES[format], headers=headers)


@router.get("/{dataset_id}/rows", response_class=StreamingResponse)
def rows_read(
    loaded: DatasetTable,
    session: DbSession,
    format: Format = "jsonl",
    as_of: Annotated[str | None, Query(description="A snapshot id or an ISO 8601 time")] = None,
    offset: Offset = 0,
    limit: Annotated[int | None, Query(ge=1, le=MAX_OFFSET)] = None,
) -> StreamingResponse:
    """Stream the rows visible now, or at `as_of`."""
    rows = service.read_rows(session, loaded.dataset.id, loaded.table, as_of, offset, limit)
    snapshot_id = str(rows.snapshot.snapshot_id) if rows.snapshot else ""
    return stream(format, rows.schema, rows.batches, {"X-Icebatch-Snapshot-Id": snapshot_id})
