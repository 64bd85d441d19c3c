from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.errors import DatasetNotFound
from app.models import Dataset


def get(session: Session, org: str, dataset_id: str) -> Dataset:
    dataset = session.scalar(select(Dataset).where(Dataset.id == dataset_id, Dataset.org == org))
    if dataset is None:
        raise DatasetNotFound(dataset_id)
    return dataset


def lock(session: Session, dataset_id: str) -> None:
    """Lock the dataset's row until the transaction ends (PostgreSQL; SQLite has one writer)."""
    session.execute(select(Dataset.id).where(Dataset.id == dataset_id).with_for_update())


def by_name(session: Session, org: str, name: str) -> Dataset | None:
    return session.scalar(select(Dataset).where(Dataset.org == org, Dataset.name == name))


def page(session: Session, org: str, offset: int, limit: int) -> Sequence[Dataset]:
    query = (
        select(Dataset)
        .where(Dataset.org == org)
        .order_by(Dataset.created_at, Dataset.id)
        .offset(offset)
        .limit(limit)
    )
    return session.scalars(query).all()
