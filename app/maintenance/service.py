"""Starting rewrite jobs (vacuum, compaction): at most one per dataset at a time."""

from __future__ import annotations

from typing import Any

from pyiceberg.catalog import Catalog
from sqlalchemy.orm import Session

from app.config import get_settings
from app.datasets import repository as datasets
from app.datasets import service as dataset_service
from app.errors import Conflict, InvalidInput
from app.jobs import service as jobs
from app.maintenance import repository
from app.maintenance.schemas import CompactRequest, VacuumRequest
from app.models import Dataset, Job

REWRITE_KINDS = ("vacuum", "compact")
TASK = "icebatch.rewrite"


def running_rewrite(session: Session, dataset_id: str) -> Job | None:
    """The dataset's queued or running vacuum/compaction, if any."""
    return repository.active_job(session, dataset_id, REWRITE_KINDS)


def _start(session: Session, dataset: Dataset, kind: str, payload: dict[str, Any]) -> Job:
    # the dataset row is locked so two requests cannot both see no running rewrite
    datasets.lock(session, dataset.id)
    busy = running_rewrite(session, dataset.id)
    if busy is not None:
        raise Conflict(
            f"dataset {dataset.id} already has a {busy.kind} job ({busy.id}, {busy.state}); "
            "one rewrite runs at a time",
            job_id=busy.id,
        )
    return jobs.enqueue(
        session,
        org=dataset.org,
        kind=kind,
        task_name=TASK,
        subject_id=dataset.id,
        payload={"operation": kind, **payload},
    )


def start_vacuum(
    session: Session, dataset: Dataset, request: VacuumRequest | None = None, **reason: Any
) -> Job:
    request = request or VacuumRequest()
    return _start(session, dataset, "vacuum", {**request.model_dump(mode="json"), **reason})


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
    payload = request.model_dump(mode="json")
    payload["target_file_bytes"] = (
        request.target_file_bytes or get_settings().rewrite_target_file_bytes
    )
    return _start(session, dataset, "compact", payload)
