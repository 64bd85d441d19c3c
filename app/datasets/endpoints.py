from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from app.auth import Org, requires
from app.datasets import monitor, service
from app.datasets.schemas import (
    BatchTimeline,
    ConsumerLagList,
    DatasetCreate,
    DatasetList,
    DatasetOut,
    DatasetStats,
    ErrorGroups,
    SnapshotList,
    TimelineBucket,
)
from app.db_session import DbSession
from app.deps import DatasetTable, IcebergCatalog, OrgDataset
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

    def run() -> DatasetOut:
        dataset = service.create(session, catalog, org, body)
        return service.describe(dataset, service.load(catalog, dataset))

    return idempotent.run(body, 201, run)


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
    """Batch counts by status, rows, active tombstones and the newest ingest of a dataset.

    `rows` is what a read of the current snapshot returns, counted from metadata;
    `rows_ingested` what the live batches ingested.

    What a monitoring page shows per dataset (the web UI's datasets list reads it).
    """
    return service.stats(session, loaded.dataset, loaded.table)


@router.get("/{dataset_id}/batch-timeline", response_model=BatchTimeline)
def datasets_batch_timeline(
    dataset: OrgDataset, session: DbSession, bucket: TimelineBucket = TimelineBucket.HOUR
) -> BatchTimeline:
    """Batches over time by status: per hour (the last 48) or per day (the last 48).

    Each bucket counts the batches created in it, by their status now.
    """
    return monitor.batch_timeline(session, dataset, bucket)


@router.get("/{dataset_id}/errors", response_model=ErrorGroups)
def datasets_errors(dataset: OrgDataset, session: DbSession) -> ErrorGroups:
    """Row-level errors of the dataset's failed batches, grouped by reason, most first.

    Over the newest 1,000 failed batches; at most 50 reasons.
    """
    return monitor.error_groups(session, dataset)


@router.get("/{dataset_id}/consumer-lag", response_model=ConsumerLagList)
def datasets_consumer_lag(loaded: DatasetTable, session: DbSession) -> ConsumerLagList:
    """Each consumer's checkpoint and how far behind the current snapshot it is.

    In snapshots committed after the checkpoint and in seconds between the two commits.
    """
    return monitor.consumer_lag(session, loaded.dataset, loaded.table)
