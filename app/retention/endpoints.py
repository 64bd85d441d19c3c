from __future__ import annotations

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse

from app.auth import requires
from app.db_session import DbSession
from app.deps import DatasetTable, OrgDataset
from app.idempotency import Idempotent
from app.jobs import service as jobs
from app.jobs.schemas import JobOut
from app.models import Scope
from app.openapi import problems
from app.pagination import Paging, window
from app.retention import service
from app.retention.schemas import (
    ConsumerCreate,
    ConsumerList,
    ConsumerOut,
    RetentionOut,
    RetentionUpdate,
)

router = APIRouter(prefix="/v1/datasets", tags=["retention"])


@router.put(
    "/{dataset_id}/retention",
    response_model=RetentionOut,
    dependencies=[requires(Scope.ADMIN, "retention.set")],
)
def retention_set(dataset: OrgDataset, body: RetentionUpdate, session: DbSession) -> RetentionOut:
    """Set the dataset's snapshot retention policy (fields left out keep their value).

    It applies from the next expiry (`POST /v1/datasets/{dataset_id}/expire`).
    """
    return service.set_retention(session, dataset, body)


@router.get("/{dataset_id}/retention", response_model=RetentionOut)
def retention_get(dataset: OrgDataset) -> RetentionOut:
    """The dataset's retention policy in force.

    `custom` names the fields set on this dataset; the others are the deployment's defaults.
    """
    return service.retention_out(dataset)


@router.post(
    "/{dataset_id}/expire",
    status_code=202,
    response_model=JobOut,
    responses=problems({409: "An expire job of the dataset is queued or running (`job_id`)"}),
    dependencies=[requires(Scope.ADMIN, "retention.expire")],
)
def retention_expire(
    dataset: OrgDataset, session: DbSession, idempotent: Idempotent
) -> JSONResponse:
    """Expire snapshots beyond the policy and delete orphan files (409 while one runs).

    A job: snapshots pinned by a consumer's checkpoint are kept.
    """

    def run() -> JobOut:
        return jobs.to_out(service.start_expire(session, dataset))

    return idempotent.run(None, 202, run)


@router.post(
    "/{dataset_id}/consumers",
    response_model=ConsumerOut,
    responses=problems(
        {
            404: "No such dataset in your organization, or `snapshot_id` is not one of its "
            "snapshots",
            410: "`snapshot_id` was expired by retention",
        }
    ),
    dependencies=[requires(Scope.WRITE, "consumers.set")],
)
def consumers_set(loaded: DatasetTable, body: ConsumerCreate, session: DbSession) -> ConsumerOut:
    """Register or move a consumer's checkpoint; it pins the snapshots its next read needs.

    The checkpoint is the snapshot its next increment starts after (default: the current one).
    """
    return service.upsert_consumer(session, loaded.dataset, loaded.table, body)


@router.get("/{dataset_id}/consumers", response_model=ConsumerList)
def consumers_list(dataset: OrgDataset, session: DbSession, paging: Paging) -> ConsumerList:
    """The dataset's consumers and their checkpoints, by name.

    A page at a time (`cursor`, `Link`).
    """
    items, after = window(service.consumers(session, dataset), paging.offset, paging.limit)
    return paging.respond(ConsumerList(items=items, next=after))


@router.delete(
    "/{dataset_id}/consumers/{name}",
    status_code=204,
    responses=problems({404: "No such dataset in your organization, or no such consumer on it"}),
    dependencies=[requires(Scope.WRITE, "consumers.delete")],
)
def consumers_delete(dataset: OrgDataset, name: str, session: DbSession) -> Response:
    """Forget a consumer: its snapshots are no longer pinned.

    The next expiry may remove the snapshots its checkpoint kept.
    """
    service.delete_consumer(session, dataset, name)
    return Response(status_code=204)
