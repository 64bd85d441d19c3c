from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Index, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.base import UTCDateTime, utcnow

# SQLite only auto-increments an INTEGER PRIMARY KEY
SEQ = BigInteger().with_variant(Integer(), "sqlite")


class AuditEvent(Base):
    """One mutating API call (or a denied attempt by a known key): append-only.

    The store refuses UPDATE on this table, and DELETE of a row above its org's
    `AuditArchive` mark (triggers, see migrations 0005 and 0011); `seq` orders the trail and is
    the cursor of `GET /v1/audit`, never re-used (AUTOINCREMENT on SQLite).
    """

    __tablename__ = "audit_events"
    __table_args__ = (
        Index("ix_audit_events_org_seq", "org", "seq"),
        Index("ix_audit_events_at", "at"),
        {"sqlite_autoincrement": True},
    )

    seq: Mapped[int] = mapped_column(SEQ, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    org: Mapped[str] = mapped_column(String(63))
    key_id: Mapped[str | None] = mapped_column(String(36))
    action: Mapped[str] = mapped_column(String(64))
    method: Mapped[str] = mapped_column(String(8))
    path: Mapped[str] = mapped_column(String(512))
    target: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    request_id: Mapped[str | None] = mapped_column(String(64))
    status_code: Mapped[int] = mapped_column(Integer)
    outcome: Mapped[str] = mapped_column(String(8))


class AuditArchive(Base):
    """How far an org's trail has moved to its Iceberg table (`app/audit/archive.py`): every
    event with `seq <= archived_through_seq` is there, and only those may leave `audit_events`.
    The store refuses to lower the mark or delete it (migration 0011)."""

    __tablename__ = "audit_archives"

    org: Mapped[str] = mapped_column(String(63), primary_key=True)
    archived_through_seq: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)
