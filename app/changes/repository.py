from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.models import ExpiredSnapshot


def expired_snapshot(session: Session, dataset_id: str, snapshot_id: int) -> ExpiredSnapshot | None:
    """The record of a snapshot retention expired, if it was one of the dataset's."""
    return session.get(ExpiredSnapshot, (dataset_id, snapshot_id))


def any_expired(session: Session, dataset_id: str) -> bool:
    """Whether retention ever expired a snapshot of the dataset."""
    count = session.scalar(select(func.count()).where(ExpiredSnapshot.dataset_id == dataset_id))
    return bool(count)


def last_expired_after(
    session: Session, dataset_id: str, sequence_number: int, committed_by: datetime
) -> ExpiredSnapshot | None:
    """The latest expired snapshot committed by `committed_by` with a sequence number above
    `sequence_number`."""
    return session.scalar(
        select(ExpiredSnapshot)
        .where(
            ExpiredSnapshot.dataset_id == dataset_id,
            ExpiredSnapshot.committed_at <= committed_by,
            ExpiredSnapshot.sequence_number > sequence_number,
        )
        .order_by(ExpiredSnapshot.sequence_number.desc())
        .limit(1)
    )
