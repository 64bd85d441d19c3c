from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse, StreamingResponse

from app.auth import Org, requires
from app.changes import service
from app.changes.schemas import ChangeKind, ExportCreate, ExportOut
from app.db_session import DbSession
from app.deps import DatasetTable
from app.idempotency import Idempotent
from app.lake.snapshots import MAX_SNAPSHOT_ID, MIN_SNAPSHOT_ID
from app.models import Scope
from app.openapi import header, problems
from app.reads.endpoints import SNAPSHOT_HEADER, Format, stream, streamed

router = APIRouter(prefix="/v1/datasets", tags=["changes"])

RANGE_PROBLEMS = problems(
    {
        404: "No such dataset in your organization, or a snapshot of the range is not in its "
        "snapshot log",
        410: "The range reaches a snapshot that retention expired (`snapshot_id`; read from "
        "`oldest_retained_snapshot_id` on)",
    }
)


@router.get(
    "/{dataset_id}/changes",
    response_class=StreamingResponse,
    responses={
        **streamed(
            "The changed rows, in the `format` asked for",
            {
                "X-Icebatch-From-Snapshot": header(
                    "The range's start, excluded (empty: before the first snapshot)",
                    SNAPSHOT_HEADER,
                    required=True,
                ),
                "X-Icebatch-To-Snapshot": header(
                    "The range's end, included: the next increment's start (empty: none yet)",
                    SNAPSHOT_HEADER,
                    required=True,
                ),
                "X-Icebatch-Change-Kind": header(
                    "The `kind` read",
                    {"type": "string", "enum": ["appended", "deleted"]},
                    required=True,
                ),
            },
        ),
        **RANGE_PROBLEMS,
    },
)
def changes_read(
    loaded: DatasetTable,
    session: DbSession,
    kind: ChangeKind,
    from_snapshot: Annotated[
        int | None,
        Query(ge=MIN_SNAPSHOT_ID, le=MAX_SNAPSHOT_ID, description="Start after this snapshot"),
    ] = None,
    to_snapshot: Annotated[
        int | None,
        Query(ge=MIN_SNAPSHOT_ID, le=MAX_SNAPSHOT_ID, description="End at this snapshot"),
    ] = None,
    since: Annotated[
        str | None, Query(description="ISO 8601: start after the snapshot then")
    ] = None,
    until: Annotated[str | None, Query(description="ISO 8601: end at the snapshot then")] = None,
    format: Format = "jsonl",
) -> StreamingResponse:
    """Stream the rows appended or deleted between two snapshots (from excluded, to included).

    No start means the empty table before the first snapshot; no end means the current
    snapshot. The resolved range is in `X-Icebatch-From-Snapshot` / `X-Icebatch-To-Snapshot`:
    the next increment starts from the `To` of this one.
    """
    changes = service.read_changes(
        session,
        loaded.dataset,
        loaded.table,
        kind,
        from_snapshot=from_snapshot,
        to_snapshot=to_snapshot,
        since=since,
        until=until,
    )
    start, end = changes.range.start, changes.range.end
    headers = {
        "X-Icebatch-From-Snapshot": str(start.snapshot_id) if start else "",
        "X-Icebatch-To-Snapshot": str(end.snapshot_id) if end else "",
        "X-Icebatch-Change-Kind": kind,
    }
    return stream(format, changes.schema, changes.batches, headers)


@router.post(
    "/{dataset_id}/exports",
    status_code=202,
    response_model=ExportOut,
    responses=RANGE_PROBLEMS,
    dependencies=[requires(Scope.WRITE, "exports.create")],
)
def exports_create(
    loaded: DatasetTable,
    body: ExportCreate,
    org: Org,
    session: DbSession,
    idempotent: Idempotent,
) -> JSONResponse:
    """Export the rows appended or deleted over a range as Parquet, in a Spark job.

    The range is resolved now (the job's result names the folder, rows and files written under
    `<warehouse>/exports/<org>/<job id>/`).
    """

    def run() -> ExportOut:
        return service.start_export(session, org, loaded.dataset, loaded.table, body)

    return idempotent.run(body, 202, run)
