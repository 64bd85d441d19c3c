from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.errors import BatchNotFound
from app.models import Batch, BatchFile


def get(session: Session, org: str, batch_id: str, *, for_update: bool = False) -> Batch:
    query = select(Batch).where(Batch.id == batch_id, Batch.org == org)
    if for_update:
        query = query.with_for_update()
    batch = session.scalar(query)
    if batch is None:
        raise BatchNotFound(batch_id)
    return batch


def files(session: Session, batch_id: str) -> Sequence[BatchFile]:
    query = select(BatchFile).where(BatchFile.batch_id == batch_id).order_by(BatchFile.name)
    return session.scalars(query).all()


def file_by_name(session: Session, batch_id: str, name: str) -> BatchFile | None:
    query = select(BatchFile).where(BatchFile.batch_id == batch_id, BatchFile.name == name)
    return session.scalar(query)


def page(
    session: Session,
    org: str,
    dataset_id: str | None,
    status: str | None,
    offset: int,
    limit: int,
) -> Sequence[Batch]:
    query = select(Batch).where(Batch.org == org)
    if dataset_id:
        query = query.where(Batch.dataset_id == dataset_id)
    if status:
        query = query.where(Batch.status == status)
    query = query.order_by(Batch.created_at.desc(), Batch.id).offset(offset).limit(limit)
    return session.scalars(query).all()
