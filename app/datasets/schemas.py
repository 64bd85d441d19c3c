from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.pagination import Page


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
    rows: int = Field(description="Rows of the batches whose rows are live ('success')")
    active_tombstones: int = Field(description="Tombstones in force at the current snapshot")
    snapshots: int = Field(description="Snapshots the table keeps")
    current_snapshot_id: int | None
    last_ingest_at: datetime | None = Field(description="When the newest batch landed")
