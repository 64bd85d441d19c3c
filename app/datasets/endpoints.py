from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from app.auth import DbSession, Org
from app.datasets import repository, service
from app.datasets.schemas import DatasetCreate, DatasetList, DatasetOut, SnapshotList
from app.idempotency import IdempotencyHeader, run_once
from app.lake.catalog import get_catalog

router = APIRouter(prefix="/v1/datasets", tags=["datasets"])


@router.post("", status_code=201, response_model=DatasetOut, response_model_by_alias=True)
def create_dataset(
    body: DatasetCreate,
    org: Org,
    session: DbSession,
    request: Request,
    key: IdempotencyHeader = None,
) -> Any:
    """Create a dataset and its Iceberg table."""

    def run() -> tuple[int, DatasetOut]:
        catalog = get_catalog()
        dataset = service.create(session, catalog, org, body)
        return 201, service.describe(dataset, service.load(catalog, dataset))

    return run_once(session, org, key, request, body, run)


@router.get("", response_model=DatasetList, response_model_by_alias=True)
def list_datasets(
    org: Org,
    session: DbSession,
    offset: Annotated[int, Query(ge=0)] = 0,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> DatasetList:
    """List the datasets of your organization."""
    catalog = get_catalog()
    rows = repository.page(session, org, offset, limit + 1)
    items = [service.describe(d, service.load(catalog, d)) for d in rows[:limit]]
    return DatasetList(items=items, next_offset=offset + limit if len(rows) > limit else None)


@router.get("/{dataset_id}", response_model=DatasetOut, response_model_by_alias=True)
def get_dataset(dataset_id: str, org: Org, session: DbSession) -> DatasetOut:
    """Show one dataset."""
    dataset = repository.get(session, org, dataset_id)
    return service.describe(dataset, service.load(get_catalog(), dataset))


@router.get("/{dataset_id}/snapshots", response_model=SnapshotList)
def list_snapshots(dataset_id: str, org: Org, session: DbSession) -> SnapshotList:
    """The dataset's snapshot log, newest first."""
    dataset = repository.get(session, org, dataset_id)
    return SnapshotList(items=service.snapshots(service.load(get_catalog(), dataset)))
