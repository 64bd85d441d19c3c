from __future__ import annotations

from typing import Annotated, Any

import pyarrow.compute as pc
from fastapi import APIRouter, Query, Request
from sqlalchemy import select

from app.auth import DbSession, Org
from app.datasets import repository as datasets
from app.datasets import service as dataset_service
from app.errors import InvalidInput, NotFound
from app.idempotency import IdempotencyHeader, run_once
from app.lake import tombstones
from app.lake.catalog import get_catalog
from app.models import Job, JobState, PrivacyJob, RestatementState
from app.reads.service import resolve_as_of
from app.restatements import service
from app.restatements.schemas import (
    PrivacyDatasetStatus,
    PrivacyJobCreate,
    PrivacyJobOut,
    TombstoneList,
    TombstoneOut,
)

privacy_router = APIRouter(prefix="/v1/privacy/jobs", tags=["privacy"])
tombstones_router = APIRouter(prefix="/v1/datasets", tags=["restatements"])

JOB_TO_STATUS = {
    JobState.QUEUED: "submitted",
    JobState.RUNNING: "processing",
    JobState.SUCCEEDED: "complete",
    JobState.FAILED: "failed",
}


def _privacy_out(session: DbSession, job: PrivacyJob) -> PrivacyJobOut:
    parts = service.by_privacy_job(session, job.id)
    job_rows = {
        j.id: j for j in session.scalars(select(Job).where(Job.id.in_([p.job_id for p in parts])))
    }
    statuses = []
    for part in parts:
        job_row = job_rows.get(part.job_id or "")
        status = JOB_TO_STATUS[JobState(job_row.state)] if job_row else "submitted"
        if status == "submitted" and part.state == RestatementState.COMMITTED:
            status = "processing"
        if part.erased_at is not None:
            status = "erased"
        statuses.append(
            PrivacyDatasetStatus(
                dataset_id=part.dataset_id,
                status=status,
                job_id=part.job_id,
                snapshot_id=part.snapshot_id,
                tombstones_written=part.tombstones_written,
                rows_hidden=part.rows_hidden,
                error=part.error or (job_row.error if job_row else None),
            )
        )
    states = {s.status for s in statuses}
    overall = (
        "failed"
        if "failed" in states
        else "erased"
        if job.erased_at is not None and states == {"erased"}
        else "complete"
        if states <= {"complete", "erased"}
        else "submitted"
        if states == {"submitted"}
        else "processing"
    )
    finished = [j.finished_at for j in job_rows.values() if j.finished_at]
    return PrivacyJobOut(
        id=job.id,
        status=overall,
        column=job.column,
        value_count=job.value_count,
        tombstones_written=sum(s.tombstones_written or 0 for s in statuses),
        rows_hidden=sum(s.rows_hidden or 0 for s in statuses),
        datasets=statuses,
        created_at=job.created_at,
        completed_at=max(finished) if overall in ("complete", "erased") and finished else None,
        erased_at=job.erased_at if overall == "erased" else None,
        receipt=job.receipt if overall == "erased" else None,
    )


@privacy_router.post("", status_code=202, response_model=PrivacyJobOut)
def submit(
    body: PrivacyJobCreate,
    org: Org,
    session: DbSession,
    request: Request,
    key: IdempotencyHeader = None,
) -> Any:
    """GDPR delete: tombstone every row whose identity column holds one of `values`."""

    def run() -> tuple[int, PrivacyJobOut]:
        job = service.submit_privacy_job(
            session, org, body.dataset_ids, body.column, list(body.values)
        )
        return 202, _privacy_out(session, job)

    return run_once(session, org, key, request, body, run)


@privacy_router.get("/{job_id}", response_model=PrivacyJobOut)
def get_privacy_job(job_id: str, org: Org, session: DbSession) -> PrivacyJobOut:
    """Status per dataset, tombstones written and rows hidden."""
    job = session.get(PrivacyJob, job_id)
    if job is None or job.org != org:
        raise NotFound(f"privacy job {job_id!r} does not exist in your organization")
    return _privacy_out(session, job)


@tombstones_router.get("/{dataset_id}/tombstones", response_model=TombstoneList)
def list_tombstones(
    dataset_id: str,
    org: Org,
    session: DbSession,
    namespace: Annotated[str | None, Query(description="Only tombstones on this column")] = None,
    as_of: Annotated[str | None, Query(description="A snapshot id or an ISO 8601 time")] = None,
    offset: Annotated[int, Query(ge=0)] = 0,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 1000,
) -> TombstoneList:
    """The tombstones active now (or at `as_of`), oldest first."""
    dataset = datasets.get(session, org, dataset_id)
    table = dataset_service.load(get_catalog(), dataset)
    snapshot = resolve_as_of(table, as_of)
    rows = tombstones.active(table, snapshot)
    schema = table.schema()
    if namespace is not None:
        try:
            field_id = schema.find_field(namespace).field_id
        except ValueError:
            raise InvalidInput(f"no column {namespace!r} in dataset {dataset_id!r}") from None
        rows = rows.filter(pc.equal(rows["namespace"], field_id))
    rows = rows.sort_by(
        [("added_seq", "ascending"), ("namespace", "ascending"), ("id", "ascending")]
    )
    page = rows.slice(offset, limit).to_pylist()
    items = [
        TombstoneOut(
            namespace=schema.find_column_name(r["namespace"]) or str(r["namespace"]),
            namespace_field_id=r["namespace"],
            id=r["id"],
            added_on=r["added_on"],
            added_snapshot_id=r["added_snapshot_id"],
            added_sequence_number=r["added_seq"],
            evict_by=r["evict_by"],
            meta={k: r[k] for k in ("request_id", "operation", "reason")},
        )
        for r in page
    ]
    return TombstoneList(
        snapshot_id=snapshot.snapshot_id if snapshot else None,
        total=rows.num_rows,
        items=items,
        next_offset=offset + limit if offset + limit < rows.num_rows else None,
    )
