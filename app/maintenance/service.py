"""Starting rewrite jobs (vacuum, compaction): at most one per dataset at a time."""

from __future__ import annotations

from pyiceberg.catalog import Catalog
from sqlalchemy.orm import Session

from app.config import get_settings
from app.datasets import repository as datasets
from app.datasets import service as dataset_service
from app.errors import Conflict, InvalidInput
from app.jobs import repository as jobs_repository
from app.jobs import service as jobs
from app.jobs.kinds import REWRITE_KINDS, CompactPayload, JobKind, Payload, VacuumPayload
from app.maintenance.schemas import CompactRequest, VacuumRequest
from app.models import Dataset, Job


def running_rewrite(session: Session, dataset_id: str) -> Job | None:
    """The dataset's queued or running vacuum/compaction, if any."""
    return jobs_repository.active_for_subject(session, dataset_id, REWRITE_KINDS)


def _start(session: Session, dataset: Dataset, kind: JobKind, payload: Payload) -> Job:
    # the dataset row is locked so two requests cannot both see no running rewrite
    datasets.lock(session, dataset.id)
    busy = running_rewrite(session, dataset.id)
    if busy is not None:
        raise Conflict(
            f"dataset {dataset.id} already has a {busy.kind} job ({busy.id}, {busy.state}); "
            "one rewrite runs at a time",
            job_id=busy.id,
        )
    return jobs.enqueue(session, kind, org=dataset.org, subject_id=dataset.id, payload=payload)


def start_vacuum(
    session: Session,
    dataset: Dataset,
    request: VacuumRequest | None = None,
    trigger: str | None = None,
) -> Job:
    """Queue a vacuum; `trigger` says why when the scheduler, not a caller, asked for it."""
    request = request or VacuumRequest()
    payload = VacuumPayload(**request.model_dump(mode="json"), trigger=trigger)
    return _start(session, dataset, JobKind.VACUUM, payload)


def start_compaction(
    session: Session, catalog: Catalog, dataset: Dataset, request: CompactRequest
) -> Job:
    """Queue a compaction; the columns of `sort_by` are checked against the table first."""
    if request.sort_by:
        table = dataset_service.load(catalog, dataset)
        names = {f.name for f in table.schema().fields}
        unknown = [c for c in request.sort_by if c not in names]
        if unknown:
            raise InvalidInput(f"sort_by names columns the dataset lacks: {unknown}")
    target = request.target_file_bytes or get_settings().rewrite_target_file_bytes
    payload = CompactPayload(
        **request.model_dump(mode="json", exclude={"target_file_bytes"}), target_file_bytes=target
    )
    return _start(session, dataset, JobKind.COMPACT, payload)
