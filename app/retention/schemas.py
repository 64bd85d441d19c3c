from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from app.lake.snapshots import SnapshotId
from app.pages import Page


class RetentionUpdate(BaseModel):
    """A dataset's retention policy; a field left out keeps its current value."""

    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"min_snapshots": 10, "max_snapshot_age_seconds": 2592000}]
        },
    )

    min_snapshots: int | None = Field(
        default=None, ge=1, le=100_000, description="The newest snapshots always kept"
    )
    max_snapshot_age_seconds: float | None = Field(
        default=None, ge=0, description="Snapshots younger than this are kept"
    )
    orphan_age_seconds: float | None = Field(
        default=None,
        ge=0,
        description="Unreferenced files younger than this are left alone (a write in progress)",
    )


class RetentionOut(BaseModel):
    min_snapshots: int = Field(description="The newest snapshots always kept")
    max_snapshot_age_seconds: float = Field(description="Snapshots younger than this are kept")
    orphan_age_seconds: float = Field(
        description="Unreferenced files younger than this are left alone (a write in progress)"
    )
    custom: list[str] = Field(description="The fields set on this dataset (others: defaults)")


class ConsumerCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [{"name": "billing", "snapshot_id": 3051729675574597004}, {"name": "bi"}]
        },
    )

    name: str = Field(
        min_length=1,
        max_length=128,
        pattern=r"^[A-Za-z0-9_.:-]+$",
        description="The consumer's name, unique per dataset",
    )
    snapshot_id: SnapshotId | None = Field(
        default=None,
        description="The snapshot the next increment starts after (default: current)",
    )


class ConsumerOut(BaseModel):
    name: str
    dataset_id: str
    snapshot_id: int | None
    sequence_number: int
    pinned: bool = Field(description="False once the checkpoint is older than the pin age")
    updated_at: datetime


class ConsumerList(Page):
    items: list[ConsumerOut]
