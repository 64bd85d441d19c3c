from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from app.auth import requires
from app.db_session import DbSession
from app.deps import IcebergCatalog, OrgDataset
from app.idempotency import Idempotent
from app.jobs import service as jobs
from app.jobs.schemas import JobOut
from app.maintenance import service
from app.maintenance.schemas import CompactRequest, VacuumRequest
from app.models import Scope
from app.openapi import problems

BUSY = problems({409: "A vacuum or compaction of the dataset is queued or running (`job_id`)"})

router = APIRouter(prefix="/v1/datasets", tags=["maintenance"])


@router.post(
    "/{dataset_id}/vacuum",
    status_code=202,
    response_model=JobOut,
    responses=BUSY,
    dependencies=[requires(Scope.ADMIN, "maintenance.vacuum")],
)
def maintenance_vacuum(
    dataset: OrgDataset, body: VacuumRequest, session: DbSession, idempotent: Idempotent
) -> JSONResponse:
    """Purge tombstoned rows and tombstones (a job: scan, purge data, purge metadata, commit).

    A dry run's job result is the plan: files, bytes, rows to purge. 409 while another
    vacuum or compaction of the dataset is queued or running.
    """

    def run() -> JobOut:
        return jobs.to_out(service.start_vacuum(session, dataset, body))

    return idempotent.run(body, 202, run)


@router.post(
    "/{dataset_id}/compact",
    status_code=202,
    response_model=JobOut,
    responses=BUSY,
    dependencies=[requires(Scope.ADMIN, "maintenance.compact")],
)
def maintenance_compact(
    dataset: OrgDataset,
    body: CompactRequest,
    session: DbSession,
    catalog: IcebergCatalog,
    idempotent: Idempotent,
) -> JSONResponse:
    """Bin-pack small files or sort each partition (a rewrite job).

    The job is the vacuum's rewrite job: tombstoned rows are dropped and tombstones committed
    meanwhile keep applying. 409 while another vacuum or compaction of the dataset is queued
    or running.
    """

    def run() -> JobOut:
        return jobs.to_out(service.start_compaction(session, catalog, dataset, body))

    return idempotent.run(body, 202, run)
