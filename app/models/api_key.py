from __future__ import annotations

import enum
from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.base import IdMixin, UTCDateTime, utcnow


class Scope(enum.StrEnum):
    """What a key may do; each scope includes the ones before it (read < write < admin)."""

    READ = "read"
    WRITE = "write"
    ADMIN = "admin"

    @property
    def rank(self) -> int:
        return list(Scope).index(self)

    def allows(self, needed: Scope) -> bool:
        return self.rank >= needed.rank


class ApiKey(IdMixin, Base):
    """An API key of one org; only the SHA-256 of the secret is stored."""

    __tablename__ = "api_keys"

    org: Mapped[str] = mapped_column(String(63), index=True)
    prefix: Mapped[str] = mapped_column(String(16), unique=True)
    secret_hash: Mapped[str] = mapped_column(String(64))
    # keys made before scopes existed could do everything: they are admin keys (migration 0005)
    scope: Mapped[str] = mapped_column(String(8), server_default=Scope.ADMIN.value)
    name: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    last_used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
