from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

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


CONFIG_EXAMPLE: dict[str, Any] = {
    "pushdown": [
        {"name": "country", "path": "address.country", "type": "string"},
        {"name": "score", "path": "score", "type": "double"},
    ],
    "retention_days": 7,
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
