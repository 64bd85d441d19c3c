from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.base import IdMixin, TimestampMixin, UTCDateTime


class Consumer(IdMixin, TimestampMixin, Base):
    """A reader's checkpoint: the snapshot its next incremental read starts after.

    Retention keeps every snapshot from the checkpoint on (and the files they reference), so the
    consumer's next increment can be computed; a checkpoint older than the pin age is not honoured.
    """

    __tablename__ = "consumers"
    __table_args__ = (UniqueConstraint("dataset_id", "name", name="uq_consumers_dataset_name"),)

    org: Mapped[str] = mapped_column(String(63), index=True)
    dataset_id: Mapped[str] = mapped_column(ForeignKey("datasets.id"), index=True)
    name: Mapped[str] = mapped_column(String(128))
    snapshot_id: Mapped[int | None] = mapped_column(BigInteger)
    sequence_number: Mapped[int] = mapped_column(BigInteger, default=0)


class ExpiredSnapshot(Base):
    """A snapshot removed by retention: an increment that needs it is a 410, not a 404."""

    __tablename__ = "expired_snapshots"

    dataset_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    snapshot_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    sequence_number: Mapped[int] = mapped_column(BigInteger)
    committed_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expired_at: Mapped[datetime] = mapped_column(UTCDateTime())
    job_id: Mapped[str | None] = mapped_column(String(36))


class ForgottenSnapshots(Base):
    """How many of a dataset's expired-snapshot records the pruning pass forgot: an erasure's
    receipt counts the snapshots expired before it (`snapshots_expired`), forgotten ones too."""

    __tablename__ = "forgotten_snapshots"

    dataset_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    count: Mapped[int] = mapped_column(BigInteger, default=0)
