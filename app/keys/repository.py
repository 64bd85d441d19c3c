from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.errors import KeyNotFound
from app.models import ApiKey


def get(session: Session, org: str | None, key_id: str) -> ApiKey:
    """The key `key_id` of `org` (of any org when None); KeyNotFound otherwise."""
    query = select(ApiKey).where(ApiKey.id == key_id)
    if org is not None:
        query = query.where(ApiKey.org == org)
    key = session.scalar(query)
    if key is None:
        raise KeyNotFound(key_id)
    return key


def list_keys(session: Session, org: str | None) -> Sequence[ApiKey]:
    """Keys of `org` (every org when None), by org then oldest first."""
    query = select(ApiKey).order_by(ApiKey.org, ApiKey.created_at, ApiKey.id)
    if org is not None:
        query = query.where(ApiKey.org == org)
    return session.scalars(query).all()
