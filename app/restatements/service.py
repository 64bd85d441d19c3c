"""Restatements on the API side: revert, replay and GDPR requests become restatements + jobs.

A batch being reverted or replaced is reserved (`restated_by`) in the request's transaction, so a
second revert or replay of it is a 409 at once rather than a duplicate tombstone later.
"""

from __future__ import annotations

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from app.batches import repository as batches
from app.batches import service as batch_service
from app.datasets import repository as datasets
from app.errors import BatchStateConflict, Conflict, InvalidInput
from app.jobs import service as jobs
from app.jobs.kinds import JobKind
from app.lake.types import BATCH_COLUMN
from app.models import (
    Batch,
    BatchStatus,
    Dataset,
    Job,
    JobState,
    OutboxMessage,
    PrivacyJob,
    Restatement,
    RestatementKind,
    RestatementState,
)

MAX_PREDECESSORS = 100
MAX_GDPR_VALUES = 100_000


def _require_restatable(batch: Batch, action: str) -> None:
    if batch.status != BatchStatus.SUCCESS:
        raise BatchStateConflict(batch.id, batch.status, f"only a 'success' batch can be {action}")
    if batch.restated_by is not None:
        raise Conflict(
            f"batch {batch.id!r} already has a pending revert or replay "
            f"(restatement {batch.restated_by!r}); wait for it to finish",
            restatement_id=batch.restated_by,
        )


def _carrier(session: Session, dataset_id: str) -> Job | None:
    """A queued restatement job of the dataset whose message is on its way, locked until this
    transaction commits: its worker will commit every ready restatement, this one included.

    Its claim (an UPDATE) waits for the lock, so it cannot start draining before this request's
    restatement is visible. Only ready restatements carry others: a replay may fail in staging.
    """
    query = (
        select(Job)
        .join(Restatement, Restatement.job_id == Job.id)
        .where(
            Restatement.dataset_id == dataset_id,
            Restatement.state == RestatementState.READY,
            Job.state == JobState.QUEUED,
            exists().where(OutboxMessage.job_id == Job.id),
        )
        .limit(1)
        .with_for_update(of=Job)
    )
    return session.scalars(query).first()


def _enqueue(session: Session, restatement: Restatement) -> Job:
    """The restatement's job; with no message of its own when a queued job will carry it (one
    message per burst rather than per request: at hundreds of requests a second, a message per
    request would keep the workers busy skipping jobs a group commit already finished)."""
    carried = (
        restatement.state == RestatementState.READY
        and _carrier(session, restatement.dataset_id) is not None
    )
    job = jobs.enqueue(
        session,
        JobKind(restatement.kind),
        org=restatement.org,
        subject_id=restatement.id,
        publish=not carried,
    )
    restatement.job_id, restatement.request_id = job.id, job.request_id
    return job


def _new(session: Session, **values: object) -> Restatement:
    restatement = Restatement(request_id="", **values)
    session.add(restatement)
    session.flush()
    return restatement


def revert(session: Session, org: str, batch_id: str) -> tuple[Batch, Job]:
    batch = batches.get(session, org, batch_id, for_update=True)
    _require_restatable(batch, "reverted")
    restatement = _new(
        session,
        org=org,
        dataset_id=batch.dataset_id,
        kind=RestatementKind.REVERT,
        state=RestatementState.READY,
        batch_id=batch.id,
        column=BATCH_COLUMN,
        ids=[batch.id],
        reason=f"revert of batch {batch.id}",
    )
    batch.restated_by = restatement.id
    return batch, _enqueue(session, restatement)


def check_predecessors(
    session: Session, org: str, dataset_id: str, predecessors: list[str], *, lock: bool
) -> list[Batch]:
    """The batches a replay replaces: same dataset, 'success', not being restated."""
    if not predecessors:
        raise InvalidInput("a replay names at least one predecessor batch")
    if len(set(predecessors)) != len(predecessors):
        raise InvalidInput("replay.predecessors lists a batch twice")
    if len(predecessors) > MAX_PREDECESSORS:
        raise InvalidInput(f"a replay replaces at most {MAX_PREDECESSORS} batches")
    found = []
    for batch_id in sorted(predecessors):  # one lock order: concurrent replays cannot deadlock
        batch = batches.get(session, org, batch_id, for_update=lock)
        if batch.dataset_id != dataset_id:
            raise InvalidInput(
                f"predecessor {batch_id!r} belongs to dataset {batch.dataset_id!r}, "
                f"not {dataset_id!r}"
            )
        _require_restatable(batch, "replayed")
        found.append(batch)
    return found


def complete_replay(session: Session, batch: Batch) -> Job:
    """COMPLETE of a replay batch: reserve its predecessors and queue the replay job."""
    replay = batch.replay or {}
    predecessors = check_predecessors(
        session, batch.org, batch.dataset_id, list(replay.get("predecessors", [])), lock=True
    )
    restatement = _new(
        session,
        org=batch.org,
        dataset_id=batch.dataset_id,
        kind=RestatementKind.REPLAY,
        state=RestatementState.PENDING,
        batch_id=batch.id,
        column=BATCH_COLUMN,
        ids=[p.id for p in predecessors],
        reason=replay.get("reason"),
    )
    for predecessor in predecessors:
        predecessor.restated_by = restatement.id
    return _enqueue(session, restatement)


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
) -> PrivacyJob:
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
        org=org, column=column, dataset_ids=[d.id for d, _ in targets], value_count=len(values)
    )
    session.add(job)
    session.flush()
    for dataset, ids in targets:
        restatement = _new(
            session,
            org=org,
            dataset_id=dataset.id,
            kind=RestatementKind.GDPR,
            state=RestatementState.READY,
            privacy_job_id=job.id,
            column=column,
            ids=ids,
            reason=f"privacy job {job.id}",
        )
        _enqueue(session, restatement)
    return job


def release(session: Session, restatement: Restatement, error: str) -> None:
    """A restatement that failed for good: free its batches, fail a replay's new batch."""
    restatement.state = RestatementState.FAILED
    restatement.error = error
    batch_service.release(session, restatement.id)
    if restatement.kind == RestatementKind.REPLAY and restatement.batch_id:
        batch = session.get(Batch, restatement.batch_id)
        if batch is not None and batch.status in batch_service.IN_FLIGHT:
            reason = [{"file": None, "row": None, "field": None, "reason": error}]
            batch_service.fail(session, batch.id, batch.errors or reason)


def restatement_failed(session: Session, job: Job, error: str) -> None:
    """A restatement job failed for good (see `app.jobs.failures`)."""
    restatement = session.get(Restatement, job.subject_id)
    # a 'committing' restatement may have landed: only the snapshot log can tell, and the next
    # committer of the dataset settles it (recover); failing it here could undo a commit
    if restatement is not None and restatement.state not in (
        RestatementState.COMMITTED,
        RestatementState.COMMITTING,
    ):
        release(session, restatement, error)


def by_privacy_job(session: Session, privacy_job_id: str) -> list[Restatement]:
    query = select(Restatement).where(Restatement.privacy_job_id == privacy_job_id)
    return list(session.scalars(query.order_by(Restatement.created_at)).all())
