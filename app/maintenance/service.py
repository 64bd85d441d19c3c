"""Starting rewrite jobs (vacuum, compaction): at most one per dataset at a time; queueing the
materializer (tombstones → Iceberg position deletes, `app/lake/materialize_plan.py`).

The materializer is coalesced: a dataset never has two materialize jobs queued; one queued while
another runs is right (the running one may have planned before the newest tombstones). Queued
after every tombstone commit, and by the scheduler for a dataset whose tombstones are past its
mark with no job queued (a commit whose worker died before queueing). One queued within
`materialize_debounce_seconds` of the dataset's last one starting runs when that time is up:
the group commits of a burst share it."""

from __future__ import annotations

from pyiceberg.catalog import Catalog
from sqlalchemy.orm import Session

from app import clock
from app.config import get_settings
from app.datasets import service as dataset_service
from app.datasets import service as datasets
from app.errors import Conflict, InvalidInput
from app.jobs import service as jobs
from app.jobs.kinds import REWRITE_KINDS, CompactPayload, JobKind, Payload, VacuumPayload
from app.maintenance.schemas import CompactRequest, VacuumRequest
from app.models import Dataset, Job


def running_rewrite(session: Session, dataset_id: str) -> Job | None:
    """The dataset's queued or running vacuum/compaction, if any."""
    return jobs.active_for_subject(session, dataset_id, REWRITE_KINDS)


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


def queued_materialize(session: Session, dataset_id: str) -> Job | None:
    """The dataset's materialize job that has not started yet, if any."""
    return jobs.queued_for_subject(session, dataset_id, JobKind.MATERIALIZE)


def request_materialize(session: Session, dataset: Dataset) -> Job | None:
    """Queue the dataset's materializer unless one is queued already (or it is off)."""
    if not get_settings().materialize_deletes:
        return None
    queued = queued_materialize(session, dataset.id)
    if queued is not None:
        return queued
    # first in the queue: behind a flood of restatements it would wait for all of them
    return jobs.enqueue(
        session,
        JobKind.MATERIALIZE,
        org=dataset.org,
        subject_id=dataset.id,
        first=True,
        countdown=materialize_countdown(session, dataset.id),
    )


def materialize_countdown(session: Session, dataset_id: str) -> float:
    """Seconds a new materialize job of the dataset waits: what is left of the debounce since
    its last one started (0 when that is longer ago, or none has)."""
    debounce = get_settings().materialize_debounce_seconds
    started = jobs.last_started(session, dataset_id, JobKind.MATERIALIZE) if debounce else None
    if started is None:
        return 0.0
    since = (clock.db_now(session) - started).total_seconds()
    return max(0.0, min(debounce, debounce - since))
