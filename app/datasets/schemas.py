from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.pages import Page


class DatasetCreate(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "events",
                    "schema": [
                        {"name": "event_id", "type": "long", "required": True},
                        {"name": "user_id", "type": "string", "required": True},
                        {"name": "event_time", "type": "timestamptz"},
                        {"name": "amount", "type": "decimal(10,2)", "doc": "In euros"},
                    ],
                    "partition": [{"column": "event_time", "transform": "day"}],
                    "identity_columns": ["user_id"],
                }
            ]
        }
    )

    name: str = Field(examples=["events"], description="Lowercase letters, digits and '_'.")
    schema_: list[dict[str, Any]] = Field(
        alias="schema",
        description="Fields: {name, type, required?, doc?}; nested struct/list/map allowed.",
        examples=[[{"name": "event_id", "type": "long", "required": True}]],
    )
    partition: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Partition fields: {column, transform} with transform identity, year, "
        "month, day, hour, bucket (with `width`) or truncate (with `width`)",
        examples=[[{"column": "event_time", "transform": "day"}]],
    )
    identity_columns: list[str] = Field(
        default_factory=list,
        description="Top-level columns naming a person or entity: what GDPR deletes match",
        examples=[["user_id"]],
    )


class DatasetOut(BaseModel):
    id: str
    name: str
    table: str = Field(description="The Iceberg table, as Spark names it: catalog.org.name")
    schema_: list[dict[str, Any]] = Field(serialization_alias="schema")
    partition: list[dict[str, Any]]
    identity_columns: list[str]
    sort_order: list[str] = Field(description="The table's sort order: columns, in order")
    current_snapshot_id: int | None = Field(
        description="The snapshot reads see now (null until the first commit)"
    )
    retention: dict[str, Any] = Field(
        default_factory=dict,
        description="Snapshot retention in force: {min_snapshots, max_snapshot_age_seconds, "
        "orphan_age_seconds} (PUT /v1/datasets/{id}/retention; defaults from the settings)",
    )
    created_at: datetime


class DatasetList(Page):
    items: list[DatasetOut]


class SnapshotOut(BaseModel):
    snapshot_id: int
    parent_id: int | None
    sequence_number: int | None
    committed_at: datetime
    operation: str = Field(description="Iceberg's: append, overwrite, delete or replace")
    icebatch: dict[str, str] = Field(
        description="What committed it: Icebatch's summary keys (batch id, restatement, "
        "request id, …)"
    )
    tombstone: dict[str, str] = Field(description="The tombstone.* keys this snapshot set")
    tombstones: dict[str, Any] = Field(
        description="Tombstones in force: {file, inherited, added, deleted, total}"
    )
    summary: dict[str, str]


class SnapshotList(Page):
    items: list[SnapshotOut]


class DatasetStats(BaseModel):
    """What a monitoring page shows of a dataset (the web UI's datasets list)."""

    dataset_id: str
    batches: dict[str, int] = Field(
        description="Batches by status (loading, staged, processing, success, failed, …)"
    )
    rows: int = Field(
        description="The rows a read of the current snapshot returns: from metadata (the "
        "snapshot summary's records less its position deletes, less the rows the tombstones "
        "not yet materialized hide), never a scan; GDPR-hidden, reverted and replaced rows "
        "are not counted"
    )
    rows_ingested: int = Field(
        description="Rows the batches whose rows are live ('success') ingested: what was "
        "ingested, hidden rows included (0 for a CDC raw table, which no batch writes)"
    )
    active_tombstones: int = Field(description="Tombstones in force at the current snapshot")
    snapshots: int = Field(description="Snapshots the table keeps")
    current_snapshot_id: int | None
    last_ingest_at: datetime | None = Field(description="When the newest batch landed")


class TimelineBucket(enum.StrEnum):
    HOUR = "hour"
    DAY = "day"


class BatchBucket(BaseModel):
    start: datetime = Field(description="The bucket's start (UTC)")
    counts: dict[str, int] = Field(
        description="Batches created in the bucket, by their status now (absent: none)"
    )


class BatchTimeline(BaseModel):
    """Batches over time by status: the last 48 buckets, oldest first, empty ones included."""

    dataset_id: str
    bucket: TimelineBucket
    buckets: list[BatchBucket]


class ErrorGroup(BaseModel):
    reason: str = Field(description="The row-level error's reason, as the batches report it")
    errors: int = Field(description="Row-level errors with this reason")
    batches: int = Field(description="Failed batches with at least one")
    last_at: datetime | None = Field(description="When the newest of them failed")
    batch_ids: list[str] = Field(description="The newest of them (at most 5)")


class ErrorGroups(BaseModel):
    """Row-level errors of the dataset's failed batches, grouped by reason, most first."""

    dataset_id: str
    failed_batches_read: int = Field(description="At most this many newest failed batches read")
    groups: list[ErrorGroup]


class ConsumerLag(BaseModel):
    name: str
    snapshot_id: int | None = Field(description="The checkpoint: the snapshot read last")
    sequence_number: int
    snapshots_behind: int = Field(description="Snapshots committed after the checkpoint")
    seconds_behind: float | None = Field(
        description="The current snapshot's commit time less the checkpoint's (null when the "
        "checkpoint's snapshot is expired or none)"
    )
    updated_at: datetime


class ConsumerLagList(BaseModel):
    """Each consumer's checkpoint and how far behind the current snapshot it is."""

    dataset_id: str
    current_snapshot_id: int | None
    consumers: list[ConsumerLag]
