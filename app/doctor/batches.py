"""Batches and their snapshots: every committed batch names a snapshot stamped with its request id,
and every ingest, replay or restatement snapshot belongs to a batch or restatement the metadata
store knows."""

from __future__ import annotations

import shutil

from pyiceberg.table.snapshots import Snapshot

from app.batches import expiry
from app.batches import service as batch_service
from app.config import get_settings
from app.db import session_scope
from app.doctor import repository
from app.doctor.findings import Finding, Subject, finding
from app.lake import snapshots
from app.models import Batch, BatchStatus, Job, JobState, Restatement, RestatementKind

CHECK = "batches"
# statuses of batches whose rows were committed (a restated batch keeps its snapshot)
COMMITTED = (BatchStatus.SUCCESS, BatchStatus.REPLACED, BatchStatus.REVERTED)
LIVE = (JobState.QUEUED, JobState.RUNNING)
RESTATING = frozenset(RestatementKind)


def expected_request_id(
    batch: Batch, jobs: dict[str, Job], restatements: list[Restatement]
) -> str | None:
    """The `icebatch.request-id` of the snapshot that committed the batch: its ingest job's
    request id, or for a replay batch the commit id of its replay's group commit."""
    if batch.replay:
        for restatement in restatements:
            if restatement.kind == RestatementKind.REPLAY and restatement.batch_id == batch.id:
                return restatement.commit_id
        return None
    job = jobs.get(batch.job_id or "")
    return job.request_id if job is not None else None


def check(subject: Subject) -> list[Finding]:
    table = subject.table
    with session_scope() as session:
        batches = repository.batches(session, subject.dataset_id)
        restatements = repository.restatements(session, subject.dataset_id)
        jobs = repository.jobs(session, (b.job_id for b in batches))
        expired = repository.expired_snapshot_ids(session, subject.dataset_id)
    by_id = {s.snapshot_id: s for s in table.snapshots()}
    by_request = {
        request_id: s
        for s in table.snapshots()
        if (request_id := snapshots.summary_value(s, snapshots.REQUEST_ID))
    }
    out: list[Finding] = []
    for batch in batches:
        if batch.status in COMMITTED:
            out += _committed_batch(subject, batch, jobs, restatements, by_id, by_request, expired)
        elif batch.status in batch_service.IN_FLIGHT and not batch.replay:
            out += _stuck_batch(subject, batch, jobs.get(batch.job_id or ""), by_request)
        elif (stuck := expiry.stuck(batch)) is not None:
            out.append(
                finding(
                    subject,
                    CHECK,
                    f"batch {batch.id} is stuck: {stuck.reason}",
                    f"{stuck.action}; --repair aborts it (and every other batch past the TTL) "
                    "as the scheduler does",
                    repair=_abort_expired,
                )
            )
    by_batch = {b.id: b for b in batches}
    commit_ids = {r.commit_id for r in restatements if r.commit_id}
    for snapshot in table.snapshots():
        operation = snapshots.summary_value(snapshot, snapshots.OPERATION)
        if operation == "ingest":
            out += _ingest_snapshot(subject, snapshot, by_batch, jobs)
            out += _twice(subject, snapshot, by_batch, by_id)
        elif operation in RESTATING:
            request_id = snapshots.summary_value(snapshot, snapshots.REQUEST_ID)
            if request_id not in commit_ids:
                out.append(
                    finding(
                        subject,
                        CHECK,
                        f"snapshot {snapshot.snapshot_id} ({operation}, request id "
                        f"{request_id}) was committed by no restatement the metadata store "
                        "knows: its tombstones hide rows no request accounts for",
                        "find who committed it (the snapshot log: GET /v1/datasets/"
                        f"{subject.dataset_id}/snapshots); restore the restatement's row from a "
                        "backup of the metadata store",
                    )
                )
    return out


def _committed_batch(
    subject: Subject,
    batch: Batch,
    jobs: dict[str, Job],
    restatements: list[Restatement],
    by_id: dict[int, Snapshot],
    by_request: dict[str, Snapshot],
    expired: set[int],
) -> list[Finding]:
    request_id = expected_request_id(batch, jobs, restatements)
    landed = by_request.get(request_id or "")
    where = (
        f"; its request id {request_id} is in snapshot {landed.snapshot_id}"
        if landed is not None and landed.snapshot_id != batch.snapshot_id
        else ""
    )
    human = (
        "do not change the batch blindly: compare its rows with the table (GET /v1/datasets/"
        f"{subject.dataset_id}/rows); if they are missing, send them again as a new batch or "
        "restore the table's metadata from a backup"
    )
    if batch.snapshot_id is None:
        problem = f"batch {batch.id} is '{batch.status}' but names no snapshot{where}"
        return [finding(subject, CHECK, problem, human)]
    snapshot = by_id.get(batch.snapshot_id)
    if snapshot is None:
        if batch.snapshot_id in expired:
            return []  # retention expired it; its rows live on in later snapshots
        problem = (
            f"batch {batch.id} is '{batch.status}' but its snapshot {batch.snapshot_id} is "
            f"neither in the table's snapshot log nor recorded as expired by retention{where}"
        )
        return [finding(subject, CHECK, problem, human)]
    stamped = snapshots.summary_value(snapshot, snapshots.REQUEST_ID)
    if request_id is not None and stamped != request_id:
        problem = (
            f"batch {batch.id} names snapshot {batch.snapshot_id}, which carries request id "
            f"{stamped}, not the batch's {request_id}{where}"
        )
        return [finding(subject, CHECK, problem, human)]
    return []


def _twice(
    subject: Subject, snapshot: Snapshot, by_batch: dict[str, Batch], by_id: dict[int, Snapshot]
) -> list[Finding]:
    """An ingest snapshot of a committed batch that names another (existing) snapshot: the
    batch's rows were committed twice."""
    batch_id = snapshots.summary_value(snapshot, snapshots.BATCH_ID) or ""
    batch = by_batch.get(batch_id)
    if batch is None or batch.status not in COMMITTED or batch.snapshot_id is None:
        return []
    own = by_id.get(batch.snapshot_id)
    if own is None or own.snapshot_id == snapshot.snapshot_id:
        return []
    if snapshots.summary_value(own, snapshots.BATCH_ID) != batch_id:
        return []  # the batch names a snapshot of another batch: `_committed_batch` says so
    return [
        finding(
            subject,
            CHECK,
            f"batch {batch.id} was committed twice: snapshot {snapshot.snapshot_id} "
            f"({snapshots.added_records(snapshot)} rows) holds its rows besides its own snapshot "
            f"{batch.snapshot_id}",
            f"its rows are duplicated: revert the batch (POST /v1/batches/{batch.id}"
            "?action=REVERT hides both copies) and send its rows again as a new batch",
        )
    ]


def _stuck_batch(
    subject: Subject, batch: Batch, job: Job | None, by_request: dict[str, Snapshot]
) -> list[Finding]:
    """An ingest in flight whose job is over and whose snapshot never landed (a landed one is
    found from the snapshot's side, `_ingest_snapshot`)."""
    if job is not None and (job.state in LIVE or job.request_id in by_request):
        return []
    if job is None or job.state != JobState.FAILED:
        whose = f"its job {job.id} is '{job.state}'" if job is not None else "it has no job"
        return [
            finding(
                subject,
                CHECK,
                f"batch {batch.id} is '{batch.status}' but {whose} and nothing of it landed in "
                "the table",
                "look at the job (GET /v1/jobs/…); the batch can only be sent again as a new batch",
            )
        ]
    return [
        finding(
            subject,
            CHECK,
            f"batch {batch.id} is '{batch.status}' but its ingest job {job.id} failed for good "
            f"({job.error or 'no error recorded'}) and nothing of it landed in the table",
            "--repair fails the batch with the job's error, as the job's failure hook does",
            repair=lambda: _record_failure(job.id),
        )
    ]


def _abort_expired() -> str:
    aborted = expiry.abort_expired()
    return f"aborted {len(aborted)} batch(es) left 'loading' past the TTL: {', '.join(aborted)}"


def _record_failure(job_id: str) -> str:
    with session_scope() as session:
        job = session.get(Job, job_id)
        assert job is not None
        batch_service.ingest_failed(session, job, job.error or "the ingest job failed")
        return f"failed batch {job.subject_id} with the error of its job {job_id}"


def _ingest_snapshot(
    subject: Subject, snapshot: Snapshot, by_batch: dict[str, Batch], jobs: dict[str, Job]
) -> list[Finding]:
    batch_id = snapshots.summary_value(snapshot, snapshots.BATCH_ID) or ""
    request_id = snapshots.summary_value(snapshot, snapshots.REQUEST_ID)
    rows = snapshots.added_records(snapshot)
    batch = by_batch.get(batch_id)
    named = f"snapshot {snapshot.snapshot_id} (the ingest of batch {batch_id}, {rows} rows)"
    if batch is None:
        return [
            finding(
                subject,
                CHECK,
                f"{named} belongs to no batch the metadata store knows: its rows are visible "
                "but can be neither reverted nor replayed",
                "restore the batch's row from a backup of the metadata store",
            )
        ]
    if batch.status in COMMITTED:
        return []  # its own side is checked from the batch (`_committed_batch`)
    job = jobs.get(batch.job_id or "")
    own = job is not None and job.request_id == request_id
    if batch.status in batch_service.IN_FLIGHT and own and job is not None:
        if job.state in LIVE:
            return []  # its job is still at work and will record the snapshot itself
        return [
            finding(
                subject,
                CHECK,
                f"batch {batch.id} is '{batch.status}' but its ingest landed as {named}; its "
                f"job {job.id} is '{job.state}' and will not record it",
                "--repair marks the batch 'success' with that snapshot, as its ingest job does "
                "when it finds its request id in the snapshot log",
                repair=lambda: _record_success(batch.id, snapshot, rows),
            )
        ]
    return [
        finding(
            subject,
            CHECK,
            f"batch {batch.id} is '{batch.status}' but {named} holds its rows, visible to "
            "every reader",
            "decide whether the rows should stay: if so, set the batch to 'success' with that "
            "snapshot id (then it can be reverted or replayed); if not, delete them with a "
            "GDPR delete or restore the table's metadata from a backup",
        )
    ]


def _record_success(batch_id: str, snapshot: Snapshot, rows: int) -> str:
    """What the ingest job does once its request id is in the log (a batch another hand moved
    meanwhile is a BatchStateConflict, reported as a failed repair)."""
    with session_scope() as session:
        batch_service.succeed(session, batch_id, snapshot=snapshot, row_count=rows)
    shutil.rmtree(get_settings().staging_dir / batch_id, ignore_errors=True)
    return f"marked batch {batch_id} 'success' with snapshot {snapshot.snapshot_id} ({rows} rows)"
