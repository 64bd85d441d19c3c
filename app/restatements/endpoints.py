from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.deps import DatasetTable
from app.openapi import problems
from app.pagination import PageRequest, paging
from app.restatements import service
from app.restatements.schemas import TombstonePage

tombstones_router = APIRouter(prefix="/v1/datasets", tags=["restatements"])
# tombstones come by the thousand (a GDPR delete of many ids): larger pages than other lists
TombstonePaging = Annotated[PageRequest, paging(default=1000, maximum=10_000)]


@tombstones_router.get(
    "/{dataset_id}/tombstones",
    response_model=TombstonePage,
    responses=problems({404: "No such dataset in your organization, or `as_of` names no snapshot"}),
)
def tombstones_list(
    loaded: DatasetTable,
    paging: TombstonePaging,
    namespace: Annotated[str | None, Query(description="Only tombstones on this column")] = None,
    as_of: Annotated[str | None, Query(description="A snapshot id or an ISO 8601 time")] = None,
) -> TombstonePage:
    """The tombstones active now (or at `as_of`), oldest first.

    A tombstone hides the rows whose `namespace` column holds its `id` (a batch id for a
    revert, an identity for a GDPR delete) until a vacuum purges them.
    """
    page = service.list_tombstones(
        loaded.dataset,
        loaded.table,
        namespace=namespace,
        as_of=as_of,
        offset=paging.offset,
        limit=paging.limit,
    )
    return paging.respond(page)
