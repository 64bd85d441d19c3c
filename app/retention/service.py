"""Retention on the API side: a dataset's policy, expire jobs (one at a time), consumers."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.config import get_settings
from app.datasets import repository as datasets
from app.datasets import service as dataset_service
from app.errors import Conflict, Gone, NotFound, SnapshotNotFound
from app.jobs import service as jobs
from app.jobs.kinds import JobKind
from app.lake.catalog import get_catalog
from app.lake.retention import Pin, Policy, effective_policy
from app.models import Consumer, Dataset, ExpiredSnapshot, Job, JobState
from app.retention.schemas import ConsumerCreate, ConsumerOut, RetentionOut, RetentionUpdate

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


def set_retention(session: Session, org: str, dataset_id: str, update: RetentionUpdate) -> Dataset:
    dataset = datasets.get(session, org, dataset_id)
    merged = dict(dataset.retention or {})
    merged.update(update.model_dump(exclude_none=True))
    dataset.retention = merged
    session.flush()
    return dataset


def active_job(session: Session, dataset_id: str, kinds: tuple[JobKind, ...]) -> Job | None:
    """A queued or running job of one of `kinds` on the dataset."""
    return session.scalar(
        select(Job)
        .where(
            Job.subject_id == dataset_id,
            Job.kind.in_(kinds),
            Job.state.in_([JobState.QUEUED, JobState.RUNNING]),
        )
        .order_by(Job.created_at)
        .limit(1)
    )


def lock_dataset(session: Session, dataset_id: str) -> None:
    """Serialize maintenance requests of one dataset (PostgreSQL; SQLite has one writer)."""
    session.execute(select(Dataset.id).where(Dataset.id == dataset_id).with_for_update())


def start_expire(session: Session, dataset: Dataset) -> Job:
    """Queue the dataset's expire job; 409 with the running one's id when there is one."""
    lock_dataset(session, dataset.id)
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
    return (datetime.now(UTC) - aware).total_seconds()


def consumer_out(consumer: Consumer) -> ConsumerOut:
    return ConsumerOut(
        name=consumer.name,
        dataset_id=consumer.dataset_id,
        snapshot_id=consumer.snapshot_id,
        sequence_number=consumer.sequence_number,
        pinned=_age_seconds(consumer.updated_at) <= get_settings().consumer_pin_max_age_seconds,
        updated_at=consumer.updated_at,
    )


def consumers(session: Session, dataset_id: str) -> list[Consumer]:
    query = select(Consumer).where(Consumer.dataset_id == dataset_id).order_by(Consumer.name)
    return list(session.scalars(query).all())


def pins(session: Session, dataset_id: str) -> list[Pin]:
    """The dataset's checkpoints as retention sees them."""
    return [Pin(c.name, c.sequence_number, c.updated_at) for c in consumers(session, dataset_id)]


def expired(session: Session, dataset_id: str, snapshot_id: int) -> ExpiredSnapshot | None:
    return session.get(ExpiredSnapshot, (dataset_id, snapshot_id))


def upsert_consumer(session: Session, org: str, dataset_id: str, body: ConsumerCreate) -> Consumer:
    """Set a checkpoint (default: the current snapshot); an expired snapshot is 410."""
    dataset = datasets.get(session, org, dataset_id)
    table = dataset_service.load(get_catalog(), dataset)
    if body.snapshot_id is None:
        snapshot = table.current_snapshot()
    else:
        snapshot = table.snapshot_by_id(body.snapshot_id)
        if snapshot is None:
            if expired(session, dataset_id, body.snapshot_id) is not None:
                raise Gone(
                    f"snapshot {body.snapshot_id} of dataset {dataset_id!r} was expired by "
                    "retention; set the checkpoint to a retained snapshot and read the current "
                    "view again",
                    snapshot_id=body.snapshot_id,
                )
            raise SnapshotNotFound(
                f"snapshot {body.snapshot_id} is not a snapshot of dataset {dataset_id!r}"
            )
    consumer = session.scalar(
        select(Consumer).where(Consumer.dataset_id == dataset_id, Consumer.name == body.name)
    )
    if consumer is None:
        consumer = Consumer(org=org, dataset_id=dataset_id, name=body.name)
        session.add(consumer)
    consumer.snapshot_id = snapshot.snapshot_id if snapshot else None
    consumer.sequence_number = (snapshot.sequence_number or 0) if snapshot else 0
    consumer.updated_at = datetime.now(UTC)  # the pin's age restarts even when nothing changed
    session.flush()
    return consumer


def delete_consumer(session: Session, org: str, dataset_id: str, name: str) -> None:
    datasets.get(session, org, dataset_id)
    consumer = session.scalar(
        select(Consumer).where(Consumer.dataset_id == dataset_id, Consumer.name == name)
    )
    if consumer is None:
        raise NotFound(f"no consumer {name!r} on dataset {dataset_id!r}")
    session.delete(consumer)
    session.flush()
