from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.base import IdMixin, TimestampMixin, UTCDateTime


class RestatementKind(enum.StrEnum):
    REVERT = "revert"
    REPLAY = "replay"
    GDPR = "gdpr"


class RestatementState(enum.StrEnum):
    PENDING = "pending"  # a replay whose new data is not staged yet
    READY = "ready"  # waiting for the dataset's group commit
    COMMITTING = "committing"  # in a commit whose outcome is decided by the snapshot log
    COMMITTED = "committed"
    FAILED = "failed"


class Restatement(IdMixin, TimestampMixin, Base):
    """One request to hide rows with tombstones (and, for a replay, to add a batch's rows).

    Restatements of a dataset that are ready together are committed in one snapshot; `commit_id`
    is that group commit's `icebatch.request-id`, written here before the commit so that a
    committer taking over can tell from the snapshot log whether it landed.
    """

    __tablename__ = "restatements"

    org: Mapped[str] = mapped_column(String(63), index=True)
    dataset_id: Mapped[str] = mapped_column(ForeignKey("datasets.id"), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    state: Mapped[str] = mapped_column(String(16), index=True, default=RestatementState.READY)
    job_id: Mapped[str | None] = mapped_column(String(36), index=True)
    request_id: Mapped[str] = mapped_column(String(64))
    batch_id: Mapped[str | None] = mapped_column(String(36), index=True)
    privacy_job_id: Mapped[str | None] = mapped_column(String(36), index=True)
    column: Mapped[str] = mapped_column(String(128))
    ids: Mapped[list[str]] = mapped_column(JSON)
    reason: Mapped[str | None] = mapped_column(Text)
    data_files: Mapped[list[str] | None] = mapped_column(JSON)
    commit_id: Mapped[str | None] = mapped_column(String(64), index=True)
    snapshot_id: Mapped[int | None] = mapped_column(BigInteger)
    parent_snapshot_id: Mapped[int | None] = mapped_column(BigInteger)
    sequence_number: Mapped[int | None] = mapped_column(BigInteger)
    tombstones_written: Mapped[int | None] = mapped_column(Integer)
    rows_hidden: Mapped[int | None] = mapped_column(BigInteger)
    committed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    error: Mapped[str | None] = mapped_column(Text)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    # physical removal (GDPR): the vacuums that purged its tombstones, then the expiry that
    # removed the last retained snapshot still holding its rows
    purge_snapshot_ids: Mapped[list[int] | None] = mapped_column(JSON)
    files_rewritten: Mapped[int | None] = mapped_column(Integer)
    purged_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    snapshots_expired: Mapped[int | None] = mapped_column(Integer)
    erased_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class PrivacyJob(IdMixin, TimestampMixin, Base):
    """A GDPR delete across datasets: one restatement per dataset."""

    __tablename__ = "privacy_jobs"

    org: Mapped[str] = mapped_column(String(63), index=True)
    column: Mapped[str] = mapped_column(String(128))
    dataset_ids: Mapped[list[str]] = mapped_column(JSON)
    value_count: Mapped[int] = mapped_column(Integer)
    erased_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    receipt: Mapped[dict[str, Any] | None] = mapped_column(JSON)


# a lease that names a pass, not a dataset (`app.lake.lease.exclusive`)
PASS_LEASE_PREFIX = "pass:"


class CommitLease(Base):
    """Who may commit tombstones to a dataset now; `token` grows with every new holder."""

    __tablename__ = "commit_leases"

    dataset_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    holder: Mapped[str | None] = mapped_column(String(255))
    token: Mapped[int] = mapped_column(BigInteger, default=0)
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
