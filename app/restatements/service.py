"""Restatements on the API side: revert, replay and GDPR requests become restatements + jobs.

A batch being reverted or replaced is reserved (`restated_by`) in the request's transaction, so a
second revert or replay of it is a 409 at once rather than a duplicate tombstone later.
"""

from __future__ import annotations

import pyarrow.compute as pc
from pyiceberg.table import Table
from sqlalchemy.orm import Session

from app.batches import service as batch_service
from app.errors import BatchStateConflict, Conflict, InvalidInput
from app.jobs import service as jobs
from app.jobs.kinds import JobKind
from app.lake import tombstones
from app.lake.types import BATCH_COLUMN
from app.models import (
    Batch,
    BatchStatus,
    Dataset,
    Job,
    Restatement,
    RestatementKind,
    RestatementState,
)
from app.models.base import new_id
from app.pages import next_cursor
from app.reads.service import resolve_as_of
from app.restatements import repository, states
from app.restatements.schemas import (
    TombstoneOut,
    TombstonePage,
)

MAX_PREDECESSORS = 100
OPEN = states.OPEN  # not decided yet: what holds a batch or keeps an erasure waiting


def _require_restatable(batch: Batch, action: str) -> None:
    if batch.status != BatchStatus.SUCCESS:
        raise BatchStateConflict(batch.id, batch.status, f"only a 'success' batch can be {action}")
    if batch.restated_by is not None:
        raise Conflict(
            f"batch {batch.id!r} already has a pending revert or replay "
            f"(restatement {batch.restated_by!r}); wait for it to finish",
            restatement_id=batch.restated_by,
        )


def _enqueue(session: Session, restatement: Restatement) -> Job:
    """The restatement's job; with no message of its own when a queued job will carry it (one
    message per burst rather than per request: at hundreds of requests a second, a message per
    request would keep the workers busy skipping jobs a group commit already finished).

    The carrier is a queued restatement job of the dataset whose message is on its way, share-
    locked until this transaction commits: its worker will commit every ready restatement, this
    one included. Its claim (an UPDATE) waits for the lock, so it cannot start draining before this
    request's restatement is visible. Only ready restatements carry others: a replay may fail in
    staging.
    """
    carried = (
        restatement.state == RestatementState.READY
        and repository.carrier_job(session, restatement.dataset_id) is not None
    )
    job = jobs.enqueue(
        session,
        JobKind(restatement.kind),
        org=restatement.org,
        subject_id=restatement.id,
        publish=not carried,
    )
    restatement.job_id, restatement.request_id = job.id, job.request_id
    session.add(restatement)  # inserted whole at the next flush: no UPDATE for its job
    return job


def _new(**values: object) -> Restatement:
    """A restatement with its id, added to the session by `_enqueue` once its job exists."""
    return Restatement(id=new_id(), request_id="", **values)


def revert(session: Session, org: str, batch_id: str) -> tuple[Batch, Job]:
    batch = batch_service.get(session, org, batch_id, for_update=True)
    _require_restatable(batch, "reverted")
    restatement = _new(
        org=org,
        dataset_id=batch.dataset_id,
        kind=RestatementKind.REVERT,
        state=states.initial(RestatementKind.REVERT),
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
        batch = batch_service.get(session, org, batch_id, for_update=lock)
        if batch.dataset_id != dataset_id:
            raise InvalidInput(
                f"predecessor {batch_id!r} belongs to dataset {batch.dataset_id!r}, "
                f"not {dataset_id!r}"
            )
        _require_restatable(batch, "replayed")
        found.append(batch)
    return found


def check_replay(session: Session, batch: Batch) -> None:
    """A new replay batch's predecessors: 'success' batches of its dataset, not being restated
    (checked again, locked, when it is completed)."""
    predecessors = list((batch.replay or {}).get("predecessors", []))
    check_predecessors(session, batch.org, batch.dataset_id, predecessors, lock=False)


def complete_replay(session: Session, batch: Batch) -> Job:
    """COMPLETE of a replay batch: reserve its predecessors and queue the replay job."""
    replay = batch.replay or {}
    predecessors = check_predecessors(
        session, batch.org, batch.dataset_id, list(replay.get("predecessors", [])), lock=True
    )
    restatement = _new(
        org=batch.org,
        dataset_id=batch.dataset_id,
        kind=RestatementKind.REPLAY,
        state=states.initial(RestatementKind.REPLAY),
        batch_id=batch.id,
        column=BATCH_COLUMN,
        ids=[p.id for p in predecessors],
        reason=replay.get("reason"),
    )
    for predecessor in predecessors:
        predecessor.restated_by = restatement.id
    return _enqueue(session, restatement)


def erase(
    session: Session, org: str, dataset_id: str, column: str, ids: list[str], privacy_job_id: str
) -> tuple[Restatement, Job]:
    """A GDPR restatement of the dataset for a privacy job: tombstones for `ids` of `column`."""
    restatement = _new(
        org=org,
        dataset_id=dataset_id,
        kind=RestatementKind.GDPR,
        state=states.initial(RestatementKind.GDPR),
        privacy_job_id=privacy_job_id,
        column=column,
        ids=ids,
        reason=f"privacy job {privacy_job_id}",
    )
    return restatement, _enqueue(session, restatement)


def list_tombstones(
    dataset: Dataset,
    table: Table,
    *,
    namespace: str | None,
    as_of: str | None,
    offset: int,
    limit: int,
) -> TombstonePage:
    """A page of the tombstones active at `as_of` (default: now), oldest first; `namespace`
    keeps those on one column."""
    snapshot = resolve_as_of(table, as_of)
    rows = tombstones.active(table, snapshot)
    schema = table.schema()
    if namespace is not None:
        try:
            field_id = schema.find_field(namespace).field_id
        except ValueError:
            raise InvalidInput(f"no column {namespace!r} in dataset {dataset.id!r}") from None
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
    return TombstonePage(
        snapshot_id=snapshot.snapshot_id if snapshot else None,
        total=rows.num_rows,
        items=items,
        next=next_cursor(offset, limit, offset + limit < rows.num_rows),
    )


def release(session: Session, restatement: Restatement, error: str) -> None:
    """A restatement that failed for good: free its batches, fail a replay's new batch."""
    states.move(restatement, states.FAILED)
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
    if restatement is not None and states.may_fail(restatement):
        release(session, restatement, error)
