from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from app.auth import Org, requires
from app.datasets import service
from app.datasets.schemas import DatasetCreate, DatasetList, DatasetOut, SnapshotList
from app.db import DbSession
from app.deps import DatasetTable, IcebergCatalog, Offset
from app.idempotency import Idempotent
from app.models import Scope

router = APIRouter(prefix="/v1/datasets", tags=["datasets"])


@router.post(
    "",
    status_code=201,
    response_model=DatasetOut,
    response_model_by_alias=True,
    dependencies=[requires(Scope.WRITE, "datasets.create")],
)
def create_dataset(
    body: DatasetCreate,
    org: Org,
    session: DbSession,
    catalog: IcebergCatalog,
    idempotent: Idempotent,
) -> JSONResponse:
    """Create a dataset and its Iceberg table."""

    def run() -> tuple[int, DatasetOut]:
        dataset = service.create(session, catalog, org, body)
        return 201, service.describe(dataset, service.load(catalog, dataset))

    return idempotent.run(body, run)


@router.get("", response_model=DatasetList, response_model_by_alias=True)
def list_datasets(
    org: Org,
    session: DbSession,
    catalog: IcebergCatalog,
    offset: Offset = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> DatasetList:
    """List the datasets of your organization."""
    return service.list_datasets(session, catalog, org, offset, limit)


@router.get("/{dataset_id}", response_model=DatasetOut, response_model_by_alias=True)
def get_dataset(loaded: DatasetTable) -> DatasetOut:
    """Show one dataset."""
    return service.describe(loaded.dataset, loaded.table)


@router.get("/{dataset_id}/snapshots", response_model=SnapshotList)
def list_snapshots(loaded: DatasetTable) -> SnapshotList:
    """The dataset's snapshot log, newest first."""
    return SnapshotList(items=service.snapshots(loaded.table))
