from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Annotated, Any, Literal

import pyarrow as pa
from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from app.db_session import DbSession
from app.deps import MAX_OFFSET, DatasetTable, Offset
from app.openapi import header, problems
from app.reads import encoding, service

router = APIRouter(prefix="/v1/datasets", tags=["reads"])

Format = Literal["jsonl", "arrow"]
MEDIA_TYPES = {"jsonl": "application/x-ndjson", "arrow": "application/vnd.apache.arrow.stream"}
SNAPSHOT_HEADER = {"type": "string", "pattern": "^(-?[0-9]+)?$"}  # empty: no snapshot yet


def streamed(description: str, headers: Mapping[str, dict[str, Any]]) -> dict[int | str, Any]:
    """The OpenAPI 200 response of a streamed read: one media type per `format`."""
    content = {
        MEDIA_TYPES["jsonl"]: {
            "schema": {"type": "string", "description": "JSON Lines: one JSON object per row"},
            "example": '{"event_id": 1, "user_id": "u1"}\n{"event_id": 2, "user_id": "u2"}\n',
        },
        MEDIA_TYPES["arrow"]: {
            "schema": {
                "type": "string",
                "format": "binary",
                "description": "An Apache Arrow IPC stream: the schema, then record batches",
            }
        },
    }
    return {200: {"description": description, "content": content, "headers": dict(headers)}}


def stream(
    format: Format,
    schema: pa.Schema,
    batches: Iterator[pa.RecordBatch],
    headers: Mapping[str, str],
) -> StreamingResponse:
    """Arrow batches as a JSON Lines or Arrow IPC stream response."""
    body = encoding.jsonl(batches) if format == "jsonl" else encoding.arrow_stream(schema, batches)
    return StreamingResponse(body, media_type=MEDIA_TYPES[format], headers=headers)


@router.get(
    "/{dataset_id}/rows",
    response_class=StreamingResponse,
    responses={
        **streamed(
            "The rows, in the `format` asked for",
            {
                "X-Icebatch-Snapshot-Id": header(
                    "The snapshot read (empty when the dataset has none yet)",
                    SNAPSHOT_HEADER,
                    required=True,
                )
            },
        ),
        **problems({404: "No such dataset in your organization, or `as_of` names no snapshot"}),
    },
)
def rows_read(
    loaded: DatasetTable,
    session: DbSession,
    format: Format = "jsonl",
    as_of: Annotated[str | None, Query(description="A snapshot id or an ISO 8601 time")] = None,
    offset: Offset = 0,
    limit: Annotated[int | None, Query(ge=1, le=MAX_OFFSET)] = None,
) -> StreamingResponse:
    """Stream the rows visible now, or at `as_of`.

    Tombstoned rows are hidden, and so are the rows of a GDPR-deleted identity at every snapshot.
    `offset` and `limit` slice the rows (in file order); the snapshot read is in
    `X-Icebatch-Snapshot-Id`, so the next pages can ask for the same one with `as_of`.
    """
    rows = service.read_rows(session, loaded.dataset.id, loaded.table, as_of, offset, limit)
    snapshot_id = str(rows.snapshot.snapshot_id) if rows.snapshot else ""
    return stream(format, rows.schema, rows.batches, {"X-Icebatch-Snapshot-Id": snapshot_id})
