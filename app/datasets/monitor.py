"""What the dataset page monitors: batches over time by status, row errors grouped by reason,
and how far each consumer's checkpoint is behind the current snapshot."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta

from pyiceberg.table import Table
from sqlalchemy import select
from sqlalchemy.orm import Session

from app import clock
from app.datasets.schemas import (
    BatchBucket,
    BatchTimeline,
    ConsumerLag,
    ConsumerLagList,
    ErrorGroup,
    ErrorGroups,
    TimelineBucket,
)
from app.lake import snapshots
from app.models import Batch, BatchStatus, Consumer, Dataset

SPAN = {TimelineBucket.HOUR: timedelta(hours=1), TimelineBucket.DAY: timedelta(days=1)}
BUCKETS = 48  # the timeline's length: two days by hour, 48 days by day
FAILED_BATCHES = 1000  # errors are grouped over the newest failed batches
MAX_GROUPS = 50
SAMPLE = 5


def _floor(moment: datetime, bucket: TimelineBucket) -> datetime:
    moment = moment.astimezone(UTC)
    hour = moment.replace(minute=0, second=0, microsecond=0)
    return hour if bucket is TimelineBucket.HOUR else hour.replace(hour=0)


def batch_timeline(session: Session, dataset: Dataset, bucket: TimelineBucket) -> BatchTimeline:
    """Batches created per bucket, by their status now, over the last BUCKETS buckets (oldest
    first; every bucket listed, empty ones too)."""
    end = _floor(clock.now(), bucket)
    start = end - SPAN[bucket] * (BUCKETS - 1)
    query = select(Batch.created_at, Batch.status).where(
        Batch.dataset_id == dataset.id, Batch.created_at >= start
    )
    counts: dict[datetime, dict[str, int]] = defaultdict(dict)
    for created_at, status in session.execute(query):
        slot = counts[_floor(created_at, bucket)]
        slot[status] = slot.get(status, 0) + 1
    items = [
        BatchBucket(start=at, counts=dict(counts.get(at, {})))
        for at in (start + SPAN[bucket] * i for i in range(BUCKETS))
    ]
    return BatchTimeline(dataset_id=dataset.id, bucket=bucket, buckets=items)


def error_groups(session: Session, dataset: Dataset) -> ErrorGroups:
    """The row-level errors of the newest failed batches, grouped by reason, most first."""
    query = (
        select(Batch.id, Batch.errors, Batch.completed_at)
        .where(Batch.dataset_id == dataset.id, Batch.status == BatchStatus.FAILED)
        .order_by(Batch.created_at.desc())
        .limit(FAILED_BATCHES)
    )
    groups: dict[str, ErrorGroup] = {}
    seen: dict[str, str] = {}  # per reason, the batch last counted (rows come batch by batch)
    for batch_id, errors, completed_at in session.execute(query):  # newest first
        for error in errors or []:
            reason = str(error.get("reason") or "unknown")
            group = groups.get(reason)
            if group is None:
                group = groups[reason] = ErrorGroup(
                    reason=reason, errors=0, batches=0, last_at=completed_at, batch_ids=[]
                )
            group.errors += 1
            if seen.get(reason) != batch_id:
                seen[reason] = batch_id
                group.batches += 1
                if len(group.batch_ids) < SAMPLE:
                    group.batch_ids.append(batch_id)
    items = sorted(groups.values(), key=lambda g: (-g.errors, g.reason))[:MAX_GROUPS]
    return ErrorGroups(dataset_id=dataset.id, failed_batches_read=FAILED_BATCHES, groups=items)


def consumer_lag(session: Session, dataset: Dataset, table: Table) -> ConsumerLagList:
    """Each consumer's checkpoint and how far behind the current snapshot it is: the snapshots
    committed after it, and the seconds between its snapshot's commit and the current one's."""
    current = table.current_snapshot()
    lineage = []
    at = current
    while at is not None:
        lineage.append(at)
        at = table.snapshot_by_id(at.parent_snapshot_id) if at.parent_snapshot_id else None
    query = select(Consumer).where(Consumer.dataset_id == dataset.id).order_by(Consumer.name)
    items = []
    for consumer in session.scalars(query):
        behind = sum(1 for s in lineage if (s.sequence_number or 0) > consumer.sequence_number)
        seconds = None
        checkpoint = (
            table.snapshot_by_id(consumer.snapshot_id) if consumer.snapshot_id is not None else None
        )
        if current is not None and checkpoint is not None:
            seconds = max(
                0.0,
                (
                    snapshots.committed_at(current) - snapshots.committed_at(checkpoint)
                ).total_seconds(),
            )
        elif behind == 0:
            seconds = 0.0
        items.append(
            ConsumerLag(
                name=consumer.name,
                snapshot_id=consumer.snapshot_id,
                sequence_number=consumer.sequence_number,
                snapshots_behind=behind,
                seconds_behind=seconds,
                updated_at=consumer.updated_at,
            )
        )
    return ConsumerLagList(
        dataset_id=dataset.id,
        current_snapshot_id=current.snapshot_id if current else None,
        consumers=items,
    )
