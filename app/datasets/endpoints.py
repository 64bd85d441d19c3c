from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from app.auth import Org, requires
from app.datasets import service
from app.datasets.schemas import (
    DatasetCreate,
    DatasetList,
    DatasetOut,
    DatasetStats,
    SnapshotList,
)
from app.db import DbSession
from app.deps import DatasetTable, IcebergCatalog
from app.idempotency import Idempotent
from app.models import Scope
from app.openapi import problems
from app.pagination import Paging, window

router = APIRouter(prefix="/v1/datasets", tags=["datasets"])


@router.post(
    "",
    status_code=201,
    response_model=DatasetOut,
    response_model_by_alias=True,
    responses=problems({409: "A dataset of that name exists in your organization"}),
    dependencies=[requires(Scope.WRITE, "datasets.create")],
)
def datasets_create(
    body: DatasetCreate,
    org: Org,
    session: DbSession,
    catalog: IcebergCatalog,
    idempotent: Idempotent,
) -> JSONResponse:
    """Create a dataset and its Iceberg table.

    The table is `<catalog>.<org>.<name>`, with the schema's fields, the partition spec and
    the identity columns (the columns GDPR deletes match, e.g. `user_id`). Names are unique in
    your organization.
    """

    def run() -> tuple[int, DatasetOut]:
        dataset = service.create(session, catalog, org, body)
        return 201, service.describe(dataset, service.load(catalog, dataset))

    return idempotent.run(body, run)


@router.get("", response_model=DatasetList, response_model_by_alias=True)
def datasets_list(
    org: Org,
    session: DbSession,
    catalog: IcebergCatalog,
    paging: Paging,
) -> DatasetList:
    """List the datasets of your organization, oldest first.

    A page at a time: pass a page's `next` as `cursor` (or follow its `Link` header).
    """
    return paging.respond(service.list_datasets(session, catalog, org, paging.offset, paging.limit))


@router.get("/{dataset_id}", response_model=DatasetOut, response_model_by_alias=True)
def datasets_get(loaded: DatasetTable) -> DatasetOut:
    """Show one dataset.

    Its schema, partitioning, identity columns, current snapshot and retention policy.
    """
    return service.describe(loaded.dataset, loaded.table)


@router.get("/{dataset_id}/snapshots", response_model=SnapshotList)
def datasets_snapshots(loaded: DatasetTable, paging: Paging) -> SnapshotList:
    """The dataset's snapshot log, newest first.

    Each snapshot with its operation, the batch or restatement that committed it (`icebatch`)
    and the tombstones in force at it.
    """
    items, after = window(service.snapshots(loaded.table), paging.offset, paging.limit)
    return paging.respond(SnapshotList(items=items, next=after))


@router.get("/{dataset_id}/stats", response_model=DatasetStats)
def datasets_stats(loaded: DatasetTable, session: DbSession) -> DatasetStats:
    """Batch counts by status, live rows, active tombstones and the newest ingest of a dataset.

    What a monitoring page shows per dataset (the web UI's datasets list reads it).
    """
    return service.stats(session, loaded.dataset, loaded.table)
