from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from app.errors import DatasetNotFound
from app.models import Batch, Dataset

# built once: a statement object keeps its cache key, so each request skips building the query
# and computing the key (a fair share of a small request's CPU)
_BY_ID = select(Dataset).where(Dataset.id == bindparam("id"), Dataset.org == bindparam("org"))
_BY_NAME = select(Dataset).where(Dataset.name == bindparam("name"), Dataset.org == bindparam("org"))


def get(session: Session, org: str, dataset_id: str) -> Dataset:
    dataset = session.scalar(_BY_ID, {"id": dataset_id, "org": org})
    if dataset is None:
        raise DatasetNotFound(dataset_id)
    return dataset


def resolve(session: Session, org: str, id_or_name: str) -> Dataset:
    """The dataset of `org` whose id is `id_or_name`, else the one so named (names are unique per
    org, and cannot hold the '-' of an id, so the two never compete: an exact id wins)."""
    dataset = session.scalar(_BY_ID, {"id": id_or_name, "org": org})
    if dataset is None:
        dataset = session.scalar(_BY_NAME, {"name": id_or_name, "org": org})
    if dataset is None:
        raise DatasetNotFound(id_or_name)
    return dataset


def filter_id(session: Session, org: str, id_or_name: str | None) -> str | None:
    """A list's `dataset_id` filter as an id: a name of `org` becomes its dataset's id (a name
    cannot hold an id's '-'); anything else is kept as given (an unknown id matches nothing)."""
    if id_or_name is None:
        return None
    found = session.scalar(_BY_NAME, {"name": id_or_name, "org": org})
    return found.id if found is not None else id_or_name


def lock(session: Session, dataset_id: str) -> None:
    """Lock the dataset's row until the transaction ends (PostgreSQL; SQLite has one writer)."""
    session.execute(select(Dataset.id).where(Dataset.id == dataset_id).with_for_update())


def by_name(session: Session, org: str, name: str) -> Dataset | None:
    return session.scalar(_BY_NAME, {"name": name, "org": org})


def page(session: Session, org: str, offset: int, limit: int) -> Sequence[Dataset]:
    query = (
        select(Dataset)
        .where(Dataset.org == org)
        .order_by(Dataset.created_at, Dataset.id)
        .offset(offset)
        .limit(limit)
    )
    return session.scalars(query).all()


def batch_counts(session: Session, dataset_id: str) -> list[tuple[str, int, int]]:
    """(status, batches, rows) of a dataset's batches."""
    query = (
        select(Batch.status, func.count(), func.coalesce(func.sum(Batch.row_count), 0))
        .where(Batch.dataset_id == dataset_id)
        .group_by(Batch.status)
    )
    return [(status, int(n), int(rows)) for status, n, rows in session.execute(query)]


def last_batch_landed(
    session: Session, dataset_id: str, statuses: Sequence[str]
) -> datetime | None:
    """When the newest of the dataset's batches in `statuses` landed."""
    query = select(func.max(Batch.completed_at)).where(
        Batch.dataset_id == dataset_id, Batch.status.in_(statuses)
    )
    found: datetime | None = session.scalar(query)
    return found
