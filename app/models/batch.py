from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.base import IdMixin, TimestampMixin, UTCDateTime, utcnow


class BatchStatus(enum.StrEnum):
    LOADING = "loading"
    STAGED = "staged"
    PROCESSING = "processing"
    SUCCESS = "success"
    FAILED = "failed"
    ABORTED = "aborted"
    REPLACED = "replaced"
    REVERTED = "reverted"


class Batch(IdMixin, TimestampMixin, Base):
    """Input files promoted into a dataset as one snapshot or not at all."""

    __tablename__ = "batches"

    org: Mapped[str] = mapped_column(String(63), index=True)
    dataset_id: Mapped[str] = mapped_column(ForeignKey("datasets.id"), index=True)
    format: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16), index=True, default=BatchStatus.LOADING)
    replay: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    row_count: Mapped[int | None] = mapped_column(BigInteger)
    file_count: Mapped[int] = mapped_column(Integer, default=0)
    bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    snapshot_id: Mapped[int | None] = mapped_column(BigInteger)
    job_id: Mapped[str | None] = mapped_column(String(36))
    # the revert or replay reserving it, then the one that restated it (cleared if it fails)
    restated_by: Mapped[str | None] = mapped_column(String(36))
    errors: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)
    completed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())  # landed, forever
    restated_at: Mapped[datetime | None] = mapped_column(UTCDateTime())  # reverted|replaced


class BatchFile(IdMixin, Base):
    """One uploaded input file of a batch, waiting in the staging area."""

    __tablename__ = "batch_files"
    __table_args__ = (UniqueConstraint("batch_id", "name", name="uq_batch_files_batch_id_name"),)

    batch_id: Mapped[str] = mapped_column(ForeignKey("batches.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(255))
    path: Mapped[str] = mapped_column(String(1024))
    bytes: Mapped[int] = mapped_column(BigInteger)
    sha256: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
