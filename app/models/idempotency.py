from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.base import IdMixin, UTCDateTime, utcnow


class IdempotencyKey(IdMixin, Base):
    """The first response to a POST sent with `Idempotency-Key`, replayed to its retries."""

    __tablename__ = "idempotency_keys"
    __table_args__ = (UniqueConstraint("org", "key", name="uq_idempotency_keys_org_key"),)

    org: Mapped[str] = mapped_column(String(63))
    key: Mapped[str] = mapped_column(String(255))
    fingerprint: Mapped[str] = mapped_column(String(64))
    status_code: Mapped[int | None] = mapped_column(Integer)
    response: Mapped[Any] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
