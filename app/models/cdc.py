"""CDC replication's metadata: a tenant's counters and config, the accepted chunks of events
waiting for the dumper, and the identity clusters."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Float, Index, Integer, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.base import IdMixin, TimestampMixin, UTCDateTime, utcnow


class CdcTenant(TimestampMixin, Base):
    """One org's replica: config, the last sequence number given out, and the progress figures.

    `accepted_seq` is the truth (sequence numbers are dense: it is also the count of accepted
    events). `staged_*` and `processed_*` mirror the watermarks committed in the staging and raw
    tables' snapshot summaries, written after each commit and repaired from the summaries by the
    next run when a worker died in between.
    """

    __tablename__ = "cdc_tenants"

    org: Mapped[str] = mapped_column(String(63), primary_key=True)
    config: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    raw_dataset_id: Mapped[str | None] = mapped_column(String(36))
    accepted_seq: Mapped[int] = mapped_column(BigInteger, default=0)
    accepted_max_ts: Mapped[datetime | None] = mapped_column(UTCDateTime())
    staged_seq: Mapped[int] = mapped_column(BigInteger, default=0)
    staged_max_ts: Mapped[datetime | None] = mapped_column(UTCDateTime())
    processed_seq: Mapped[int] = mapped_column(BigInteger, default=0)
    processed_max_ts: Mapped[datetime | None] = mapped_column(UTCDateTime())
    processed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class CdcChunk(IdMixin, Base):
    """The events of one accepted request, durable before the 202: Arrow IPC (zstd) in `body`
    until the dumper has appended them to the staging table (then `body` is dropped)."""

    __tablename__ = "cdc_chunks"
    __table_args__ = (
        Index("ix_cdc_chunks_org_first_seq", "org", "first_seq", unique=True),
        Index("ix_cdc_chunks_staged_at", "staged_at"),
    )

    org: Mapped[str] = mapped_column(String(63))
    first_seq: Mapped[int] = mapped_column(BigInteger)
    last_seq: Mapped[int] = mapped_column(BigInteger)
    count: Mapped[int] = mapped_column(Integer)
    min_ts: Mapped[datetime] = mapped_column(UTCDateTime())
    max_ts: Mapped[datetime] = mapped_column(UTCDateTime())
    accepted_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    staged_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    body: Mapped[bytes | None] = mapped_column(LargeBinary)


class CdcIdentity(Base):
    """An identity that takes part in a link, and its cluster: the smallest id of its connected
    component (links accumulate; they are never removed)."""

    __tablename__ = "cdc_identities"
    __table_args__ = (Index("ix_cdc_identities_org_cluster", "org", "cluster_id"),)

    org: Mapped[str] = mapped_column(String(63), primary_key=True)
    entity_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    cluster_id: Mapped[str] = mapped_column(String(255))


class CdcDeletion(Base):
    """An entity whose last applied event deleted it: that event's (timestamp, sequence) and the
    links it had, so the processor tells a late event of a deleted entity (re-fold) from a
    re-creation (start from nothing, keep the links) without reading the staged history.

    Written in the processor's transaction before its raw-table commit; a row whose `sequence`
    is past the raw table's watermark comes from a run that never committed and is not trusted
    (the entity is re-folded from its staged history). Rows of re-created entities are dropped
    after the commit that re-created them.
    """

    __tablename__ = "cdc_deletions"

    org: Mapped[str] = mapped_column(String(63), primary_key=True)
    entity_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    timestamp_us: Mapped[int] = mapped_column(BigInteger)  # event time, epoch microseconds
    sequence: Mapped[int] = mapped_column(BigInteger)
    related_ids: Mapped[list[str]] = mapped_column(JSON, default=list)


class CdcLagSample(Base):
    """A tenant's lag as the beat's CDC pass saw it (`app.cdc.lag_history`): at most one per
    `cdc_lag_sample_seconds`, kept for `cdc_lag_retention_seconds`."""

    __tablename__ = "cdc_lag_samples"

    org: Mapped[str] = mapped_column(String(63), primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime(), primary_key=True)
    accepted: Mapped[int] = mapped_column(BigInteger)
    staged: Mapped[int] = mapped_column(BigInteger)
    processed: Mapped[int] = mapped_column(BigInteger)
    staging_lag_seconds: Mapped[float] = mapped_column(Float)
    replication_lag_seconds: Mapped[float] = mapped_column(Float)
    oldest_unprocessed_age_seconds: Mapped[float] = mapped_column(Float)


class CdcSourceKey(Base):
    """A source row's latest accepted change (Debezium, `app/cdc/debezium_accept.py`): its log
    position (encoded to sort as text), its event time as staged, and whether it deleted the row.

    A change at or below this position is not applied again: at it or at one of the row's last
    few accepted positions (`recent`), a redelivery (a duplicate); otherwise below it, an older
    change that arrived late (superseded: full row images make the newest change the row's
    whole state). `key` "" holds the table's last truncate: any change below it
    is superseded. Kept for the life of the tenant (bounded by the source tables' keys).
    """

    __tablename__ = "cdc_source_keys"

    org: Mapped[str] = mapped_column(String(63), primary_key=True)
    source: Mapped[str] = mapped_column(String(255), primary_key=True)
    table_name: Mapped[str] = mapped_column(String(255), primary_key=True)
    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    position: Mapped[str] = mapped_column(String(128))
    timestamp_us: Mapped[int] = mapped_column(BigInteger)
    deleted: Mapped[bool] = mapped_column(Boolean, default=False)
    # digests of the row's last few accepted positions: a redelivery of one is a duplicate
    recent: Mapped[list[str]] = mapped_column(JSON, default=list)
