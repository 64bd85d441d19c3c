"""Retention on the API side: a dataset's policy, expire jobs (one at a time), consumers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pyiceberg.table import Table
from sqlalchemy.orm import Session

from app import clock
from app.config import get_settings
from app.datasets import service as datasets
from app.errors import Conflict, Gone, NotFound, SnapshotNotFound
from app.jobs import service as jobs
from app.jobs.kinds import JobKind
from app.lake.retention import Pin, Policy, effective_policy
from app.models import Consumer, Dataset, Job, RestatementState
from app.restatements import service as restatements
from app.retention import repository
from app.retention.schemas import (
    ConsumerCreate,
    ConsumerOut,
    RetentionOut,
    RetentionUpdate,
)

POLICY_FIELDS = ("min_snapshots", "max_snapshot_age_seconds", "orphan_age_seconds")


def policy_for(dataset: Dataset) -> Policy:
    """The dataset's own values over the settings' defaults."""
    return effective_policy(dataset.retention)


def retention_out(dataset: Dataset) -> RetentionOut:
    policy = policy_for(dataset)
    return RetentionOut(
        min_snapshots=policy.min_snapshots,
        max_snapshot_age_seconds=policy.max_snapshot_age_seconds,
        orphan_age_seconds=policy.orphan_age_seconds,
        custom=sorted(k for k in (dataset.retention or {}) if k in POLICY_FIELDS),
    )


def set_retention(session: Session, dataset: Dataset, update: RetentionUpdate) -> RetentionOut:
    """Merge `update` into the dataset's own policy values; returns the policy in force."""
    merged = dict(dataset.retention or {})
    merged.update(update.model_dump(exclude_none=True))
    dataset.retention = merged
    session.flush()
    return retention_out(dataset)


def active_job(session: Session, dataset_id: str, kinds: tuple[JobKind, ...]) -> Job | None:
    """A queued or running job of one of `kinds` on the dataset (the scheduler starts none
    while one is)."""
    return jobs.active_for_subject(session, dataset_id, kinds)


def start_expire(session: Session, dataset: Dataset) -> Job:
    """Queue the dataset's expire job; 409 with the running one's id when there is one."""
    datasets.lock(session, dataset.id)  # serializes maintenance requests of the dataset
    running = active_job(session, dataset.id, (JobKind.EXPIRE,))
    if running is not None:
        raise Conflict(
            f"an expire job of dataset {dataset.id!r} is already {running.state} "
            f"(job {running.id!r}); wait for it to finish",
            job_id=running.id,
        )
    return jobs.enqueue(session, JobKind.EXPIRE, org=dataset.org, subject_id=dataset.id)


def _age_seconds(when: datetime) -> float:
    aware = when if when.tzinfo else when.replace(tzinfo=UTC)
    return (clock.now() - aware).total_seconds()


def consumer_out(consumer: Consumer) -> ConsumerOut:
    return ConsumerOut(
        name=consumer.name,
        dataset_id=consumer.dataset_id,
        snapshot_id=consumer.snapshot_id,
        sequence_number=consumer.sequence_number,
        pinned=_age_seconds(consumer.updated_at) <= get_settings().consumer_pin_max_age_seconds,
        updated_at=consumer.updated_at,
    )


def consumers(session: Session, dataset: Dataset) -> list[ConsumerOut]:
    """The dataset's consumers and their checkpoints, by name."""
    return [consumer_out(c) for c in repository.consumers(session, dataset.id)]


def pins(session: Session, dataset_id: str) -> list[Pin]:
    """The dataset's checkpoints as retention sees them."""
    return [
        Pin(c.name, c.sequence_number, c.updated_at)
        for c in repository.consumers(session, dataset_id)
    ]


def upsert_consumer(
    session: Session, dataset: Dataset, table: Table, body: ConsumerCreate
) -> ConsumerOut:
    """Set a checkpoint (default: the current snapshot); an expired snapshot is 410."""
    dataset_id = dataset.id
    if body.snapshot_id is None:
        snapshot = table.current_snapshot()
    else:
        snapshot = table.snapshot_by_id(body.snapshot_id)
        if snapshot is None:
            if repository.expired_snapshot(session, dataset_id, body.snapshot_id) is not None:
                raise Gone(
                    f"snapshot {body.snapshot_id} of dataset {dataset_id!r} was expired by "
                    "retention; set the checkpoint to a retained snapshot and read the current "
                    "view again",
                    snapshot_id=body.snapshot_id,
                )
            raise SnapshotNotFound(
                f"snapshot {body.snapshot_id} is not a snapshot of dataset {dataset_id!r}"
                + forgotten_hint(session, dataset_id)
            )
    consumer = repository.consumer(session, dataset_id, body.name)
    if consumer is None:
        consumer = Consumer(org=dataset.org, dataset_id=dataset_id, name=body.name)
        session.add(consumer)
    consumer.snapshot_id = snapshot.snapshot_id if snapshot else None
    consumer.sequence_number = (snapshot.sequence_number or 0) if snapshot else 0
    consumer.updated_at = clock.now()  # the pin's age restarts even when nothing changed
    session.flush()
    return consumer_out(consumer)


def delete_consumer(session: Session, dataset: Dataset, name: str) -> None:
    """Forget the consumer: its checkpoint no longer pins snapshots."""
    consumer = repository.consumer(session, dataset.id, name)
    if consumer is None:
        raise NotFound(f"no consumer {name!r} on dataset {dataset.id!r}")
    session.delete(consumer)
    session.flush()


FINISHED = (RestatementState.COMMITTED, RestatementState.FAILED)


def orphan_cutoff(
    session: Session,
    dataset_id: str,
    orphan_age_seconds: float,
    now: datetime,
    *,
    own_job: str | None = None,
) -> datetime:
    """Files of the dataset younger than this are never orphans: the orphan age, and no file
    created after a running job of its org (but `own_job`) started (it may be that job's
    output, not committed yet)."""
    cutoff = now - timedelta(seconds=orphan_age_seconds)
    starts = repository.running_job_starts(session, dataset_id, exclude_job=own_job)
    return min([cutoff, *starts])


def staged_batches(session: Session, dataset_id: str) -> tuple[set[str], set[str]]:
    """Batches whose staged replay files orphan cleanup keeps (their restatement is in flight)
    and those whose files it deletes at any age (their restatement finished)."""
    states = repository.restated_batch_states(session, dataset_id)
    in_flight = {batch for batch, state in states if state in restatements.OPEN}
    finished = {batch for batch, state in states if state in FINISHED} - in_flight
    return in_flight, finished


def forgotten_hint(session: Session, dataset_id: str) -> str:
    """What a 404 for an unknown snapshot adds once records of expired ones were forgotten: the
    id may have been one of them."""
    count = repository.forgotten_count(session, dataset_id)
    if not count:
        return ""
    days = get_settings().expired_snapshot_retention_days
    return (
        f" (or one of the {count} snapshots expired more than {days:g} days ago, whose records "
        "are no longer kept: read the rows at a retained snapshot and take increments from there)"
    )


def count_expired_before(session: Session, dataset_id: str, sequence_number: int) -> int:
    """How many of the dataset's snapshots below `sequence_number` were expired (an erasure's
    receipt)."""
    return repository.count_expired_before(session, dataset_id, sequence_number)
