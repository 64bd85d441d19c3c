"""Privacy jobs: a GDPR delete across datasets (one GDPR restatement each, committed by the
restatements domain), its status from those restatements and their jobs, and its erasure
(`app/privacy/erasure.py`). The read rule every reader applies is `app/privacy/reads.py`."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from sqlalchemy.orm import Session

from app import clock
from app.datasets import service as datasets
from app.errors import InvalidInput
from app.lake import tombstones
from app.lake.catalog import get_catalog
from app.models import Dataset, Job, JobState, PrivacyJob, Restatement, RestatementState
from app.models.base import new_id
from app.pages import next_cursor
from app.privacy import repository
from app.privacy.schemas import (
    MAX_GDPR_VALUES,
    PrivacyDatasetStatus,
    PrivacyJobList,
    PrivacyJobOut,
)
from app.restatements import service as restatements

JOB_TO_STATUS = {
    JobState.QUEUED: "submitted",
    JobState.RUNNING: "processing",
    JobState.SUCCEEDED: "complete",
    JobState.FAILED: "failed",
}


def canonical_values(
    dataset: Dataset, column: str, values: list[object], type_name: str
) -> list[str]:
    """GDPR values as the text a tombstone stores, checked against the column's type."""
    out = []
    for value in values:
        if type_name in ("int", "long"):
            if isinstance(value, bool) or not isinstance(value, int | str):
                raise InvalidInput(f"value {value!r} is not an integer ({column} is {type_name})")
            try:
                out.append(str(int(value)))
            except ValueError:
                raise InvalidInput(
                    f"value {value!r} is not an integer ({column} is {type_name})"
                ) from None
        elif isinstance(value, str):
            out.append(value)
        else:
            raise InvalidInput(f"value {value!r} is not a string ({column} is a string column)")
    return list(dict.fromkeys(out))


def submit_privacy_job(
    session: Session, org: str, dataset_ids: list[str], column: str, values: list[object]
) -> PrivacyJobOut:
    """One restatement and job per dataset; the job's status as `privacy_job_out` gives it."""
    if not dataset_ids:
        raise InvalidInput("dataset_ids names at least one dataset")
    if not values:
        raise InvalidInput("values holds at least one value")
    if len(values) > MAX_GDPR_VALUES:
        raise InvalidInput(f"a privacy job deletes at most {MAX_GDPR_VALUES} values")
    targets = []
    for dataset_id in dict.fromkeys(dataset_ids):
        dataset = datasets.get(session, org, dataset_id)
        if column not in dataset.identity_columns:
            raise InvalidInput(
                f"{column!r} is not an identity column of dataset {dataset_id!r} "
                f"(its identity columns: {dataset.identity_columns})",
                dataset_id=dataset_id,
            )
        spec = next(f for f in dataset.schema_fields if f["name"] == column)
        if spec["type"] not in ("string", "int", "long"):
            raise InvalidInput(
                f"GDPR deletes work on string, int or long identity columns; "
                f"{column!r} is {spec['type']}"
            )
        targets.append((dataset, canonical_values(dataset, column, values, spec["type"])))
    job = PrivacyJob(
        id=new_id(),
        org=org,
        column=column,
        dataset_ids=[d.id for d, _ in targets],
        value_count=len(values),
    )
    session.add(job)  # flushed with the first restatement's job
    parts, job_rows = [], {}
    for dataset, ids in targets:
        restatement, queued = restatements.erase(session, org, dataset.id, column, ids, job.id)
        parts.append(restatement)
        job_rows[queued.id] = queued
    return describe_privacy_job(job, parts, job_rows)


def privacy_job_out(session: Session, job: PrivacyJob) -> PrivacyJobOut:
    """The privacy job's status: each dataset's from its restatement and job, then overall."""
    found = repository.parts_with_jobs(session, job.id)
    job_rows = {job_row.id: job_row for _, job_row in found if job_row is not None}
    return describe_privacy_job(job, [part for part, _ in found], job_rows)


def describe_privacy_job(
    job: PrivacyJob, parts: list[Restatement], job_rows: dict[str, Job]
) -> PrivacyJobOut:
    """`privacy_job_out` from the rows in hand (a job just submitted needs no query)."""
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
    seen = {s.status for s in statuses}
    overall = (
        "failed"
        if "failed" in seen
        else "erased"
        if job.erased_at is not None and seen == {"erased"}
        else "complete"
        if seen <= {"complete", "erased"}
        else "submitted"
        if seen == {"submitted"}
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


def privacy_job_status(session: Session, org: str, privacy_job_id: str) -> PrivacyJobOut:
    """The status of one of the organization's privacy jobs (404 when it has none such)."""
    return privacy_job_out(session, repository.get_privacy_job(session, org, privacy_job_id))


def list_privacy_jobs(session: Session, org: str, offset: int, limit: int) -> PrivacyJobList:
    """A page of the organization's privacy jobs with their status, newest first."""
    rows = repository.privacy_jobs_page(session, org, offset, limit + 1)
    return PrivacyJobList(
        items=[privacy_job_out(session, job) for job in rows[:limit]],
        next=next_cursor(offset, limit, len(rows) > limit),
    )


def gdpr_in_force_through(session: Session, dataset_id: str) -> int:
    """The highest sequence number of the dataset's GDPR restatements in force (0: none): what
    the catalog's served history depends on (`app/catalog/served.py`)."""
    return repository.gdpr_in_force_through(session, dataset_id)


def record_vacuum(
    session: Session,
    dataset_id: str,
    identifier: str,
    purged: pa.Table,
    snapshot_id: int,
    files: int,
) -> list[str]:
    """After a vacuum: note it on each GDPR restatement it purged tombstones of; a restatement is
    `purged` once none of its tombstones is active at the vacuum's snapshot. Returns the
    request ids the vacuum purged tombstones of."""
    requests = sorted(r for r in pc.unique(purged["request_id"]).to_pylist() if r)
    if not requests:
        return []
    table = get_catalog().load_table(identifier)
    still = tombstones.active(table, table.snapshot_by_id(snapshot_id))
    remaining = set(pc.unique(still["request_id"]).to_pylist()) if still.num_rows else set()
    now = clock.now()
    rows = repository.committed_gdpr_of_requests(session, dataset_id, requests)
    for row in rows:
        ids = list(row.purge_snapshot_ids or [])
        if snapshot_id in ids:
            continue
        row.purge_snapshot_ids = [*ids, snapshot_id]
        row.files_rewritten = (row.files_rewritten or 0) + files
        if row.request_id not in remaining:
            row.purged_at = now
    return requests
