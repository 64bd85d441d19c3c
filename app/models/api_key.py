from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.base import IdMixin, UTCDateTime, utcnow


class ApiKey(IdMixin, Base):
    """An API key of one org; only the SHA-256 of the secret is stored."""

    __tablename__ = "api_keys"

    org: Mapped[str] = mapped_column(String(63), index=True)
    prefix: Mapped[str] = mapped_column(String(16), unique=True)
    secret_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
