from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.lake.cdc import PUSHDOWN_TYPES

PushdownType = Literal["string", "long", "double", "boolean", "timestamptz"]
assert set(PushdownType.__args__) == set(PUSHDOWN_TYPES)  # type: ignore[attr-defined]


class Pushdown(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        pattern=r"^[a-z][a-z0-9_]{0,62}$",
        description="Column of the raw table (lowercase letters, digits, '_')",
        examples=["country"],
    )
    path: str = Field(
        min_length=1,
        max_length=512,
        description="Dotted path into the document (`address.country` or `$.address.country`)",
        examples=["address.country"],
    )
    type: PushdownType = Field(description="The column's type; a value that does not fit is null")


class Source(BaseModel):
    """A source table of Debezium's change events (`POST /v1/cdc/debezium`)."""

    model_config = ConfigDict(extra="forbid")

    table: str = Field(
        min_length=1,
        max_length=255,
        description="The table as its connector names it: `<schema>.<table>` (PostgreSQL, SQL "
        "Server), `<db>.<table>` (MySQL, MariaDB), `<db>.<collection>` (MongoDB)",
        examples=["inventory.customers"],
    )
    key: list[str] = Field(
        default_factory=lambda: ["id"],
        min_length=1,
        max_length=16,
        description="The key columns: their values make the entity id (one column: its value; "
        "several: the JSON array of their values)",
    )
    record_type: str | None = Field(
        default=None,
        min_length=1,
        max_length=255,
        description="The raw rows' record_type (default: the table's name)",
    )
    entity_prefix: str = Field(
        default="",
        max_length=64,
        description="Put before the entity id: the raw table has one row per entity id, so two "
        "tables whose keys share values need different prefixes (e.g. `customer:`)",
    )


CONFIG_EXAMPLE: dict[str, Any] = {
    "pushdown": [
        {"name": "country", "path": "address.country", "type": "string"},
        {"name": "score", "path": "score", "type": "double"},
    ],
    "retention_days": 7,
    "sources": [{"table": "inventory.customers", "key": ["id"], "record_type": "customer"}],
}


class CdcConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [CONFIG_EXAMPLE]})

    pushdown: list[Pushdown] = Field(
        default_factory=list,
        max_length=64,
        description="Typed columns pulled from the document at merge time, so filters prune "
        "files. Columns can be added later (rows get them when next written), not changed.",
    )
    retention_days: float = Field(
        default=7,
        gt=0,
        le=365,
        description="Staging retention window: events older than this are refused (422)",
    )
    sources: list[Source] = Field(
        default_factory=list,
        max_length=1000,
        description="Debezium source tables: key columns and record type. A table not listed "
        "has the key `id` (`_id` for MongoDB) and its name as record type",
    )
    streams: list[Annotated[str, Field(min_length=1, max_length=512)]] = Field(
        default_factory=list,
        max_length=1000,
        description="Redis Streams Debezium Server's Redis sink writes (one per table, named "
        "`<topic.prefix>.<schema>.<table>`), read with the consumer group `icebatch.<org>`",
    )
    process_interval_seconds: float = Field(
        default=5, ge=0.5, le=3600, description="How often the processor runs with work waiting"
    )
    backlog_threshold: int = Field(
        default=50_000,
        ge=1,
        description="Unprocessed events that start a run at once, without waiting the interval",
    )


class CdcConfigOut(CdcConfig):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    **CONFIG_EXAMPLE,
                    "process_interval_seconds": 5,
                    "backlog_threshold": 50000,
                    "raw_dataset_id": "0b6a3f4e-2c1d-4e5f-9a8b-7c6d5e4f3a2b",
                    "raw_table": "icebatch.acme.cdc_raw",
                }
            ]
        },
    )

    raw_dataset_id: str | None = Field(
        description="The raw table's dataset: `/v1/datasets/{id}/rows` and `/changes` read it"
    )
    raw_table: str | None = Field(description="The raw table as Spark names it")


class EventsAccepted(BaseModel):
    accepted: int = Field(description="Events accepted (durable) by this request")
    first_sequence: int = Field(description="Sequence number of the request's first event")
    last_sequence: int = Field(description="Sequence number of the request's last event")


class DebeziumAccepted(BaseModel):
    accepted: int = Field(description="Changes accepted (durable) by this request")
    duplicates: int = Field(
        description="Changes already accepted (redeliveries: same source, table, key, position)"
    )
    superseded: int = Field(
        description="Changes older than what their row already holds (a late or reordered "
        "delivery, or one before the table's truncate): not applied, the newer state stands"
    )
    truncates: int = Field(description="Truncate events accepted (each a table's rows deleted)")
    deleted_by_truncate: int = Field(
        description="Rows deleted by the request's truncate events (counted in `accepted`)"
    )
    skipped: int = Field(
        description="Values that change no row: Kafka tombstones (null), `m` messages, schema "
        "changes, transaction boundaries, heartbeats"
    )
    first_sequence: int | None = Field(
        description="Sequence number of the request's first accepted change (null: none)"
    )
    last_sequence: int | None = Field(
        description="Sequence number of the request's last accepted change (null: none)"
    )


class StreamLag(BaseModel):
    """A Debezium Redis stream as the tenant's consumer group sees it."""

    stream: str
    length: int = Field(description="Entries in the stream (XLEN)")
    pending: int = Field(description="Delivered to a consumer, not yet acknowledged")
    undelivered: int | None = Field(
        description="Entries not yet delivered to the group (null: Redis cannot tell)"
    )
    oldest_pending_age_seconds: float = Field(
        description="Age of the oldest delivered, unacknowledged entry (by its stream id)"
    )
    oldest_undelivered_age_seconds: float = Field(
        description="Age of the oldest entry not yet delivered (by its stream id)"
    )
    dead_letters: int = Field(
        description="Entries set aside as unreadable, in `<stream>:icebatch-dead` with the reason"
    )
    error: str | None = Field(default=None, description="Why the stream could not be read")


class CdcLag(BaseModel):
    """The tenant's progress (the seed's ProgressMap) and its two lags."""

    tenant: str
    accepted: int = Field(description="Events accepted (= the last sequence number given)")
    staged: int = Field(description="Events appended to the staging table")
    processed: int = Field(description="Events applied to the raw table")
    newest_accepted_timestamp: datetime | None
    newest_staged_timestamp: datetime | None
    newest_processed_timestamp: datetime | None
    staging_lag_seconds: float = Field(
        description="Newest accepted event time minus newest staged event time"
    )
    oldest_unstaged_age_seconds: float = Field(
        description="How long the oldest event not yet staged has waited since it was accepted"
    )
    replication_lag_seconds: float = Field(
        description="Newest staged event time minus newest processed event time (the seed's lag)"
    )
    oldest_unprocessed_age_seconds: float = Field(
        description="How long the oldest event not yet applied has waited since it was accepted"
    )
    processed_at: datetime | None = Field(description="When the processor last committed")
    streams: list[StreamLag] = Field(
        default_factory=list, description="The Debezium Redis streams the tenant reads"
    )


class CdcLagPoint(BaseModel):
    at: datetime = Field(description="When the beat's CDC pass took the sample")
    accepted: int
    staged: int
    processed: int
    staging_lag_seconds: float
    replication_lag_seconds: float
    oldest_unprocessed_age_seconds: float


class CdcLagHistory(BaseModel):
    """Your tenant's lag over time, oldest first: a sample per `sample_seconds` at most, kept
    `retention_seconds` (ICEBATCH_CDC_LAG_SAMPLE_SECONDS, ICEBATCH_CDC_LAG_RETENTION_SECONDS)."""

    tenant: str
    sample_seconds: float
    retention_seconds: float
    samples: list[CdcLagPoint]


class ProfileRecord(BaseModel):
    entity_id: str
    record_type: str | None
    timestamp: datetime | None
    related_ids: list[str]
    document: dict[str, Any]


class Profile(BaseModel):
    entity_id: str
    cluster_id: str = Field(description="The cluster's smallest identity")
    members: list[str] = Field(description="Every identity linked to this one, itself included")
    records: list[ProfileRecord] = Field(description="The members' live records")
    merged: dict[str, Any] = Field(
        description="The records' documents deep-merged, the newer timestamp winning per field"
    )


class ProcessStarted(BaseModel):
    stage_job_id: str | None = Field(description="The dumper job (null: nothing to stage)")
    process_job_id: str = Field(description="The processor job")
