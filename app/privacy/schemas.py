from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.pages import Page

MAX_GDPR_VALUES = 100_000


class PrivacyJobCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {
                    "dataset_ids": ["0b1c9a52-6f0e-4d43-9a57-3f1f1b0c2d7e"],
                    "column": "user_id",
                    "values": ["u1", "u2"],
                }
            ]
        },
    )

    dataset_ids: list[str] = Field(
        min_length=1, max_length=1000, description="The datasets to delete from"
    )
    column: str = Field(description="A declared identity column of every dataset, e.g. user_id")
    values: list[str | int] = Field(
        min_length=1,
        max_length=MAX_GDPR_VALUES,
        description="The identities whose rows are deleted (strings, or integers for an int or "
        "long column)",
    )


class PrivacyDatasetStatus(BaseModel):
    dataset_id: str
    status: str = Field(description="submitted | processing | complete | erased | failed")
    job_id: str | None
    snapshot_id: int | None
    tombstones_written: int | None
    rows_hidden: int | None = Field(description="Rows visible before the commit that it hides")
    error: str | None


class PrivacyJobOut(BaseModel):
    id: str
    status: str = Field(
        description="submitted → processing → complete (logically deleted) → erased "
        "(physically gone from every retained file), or failed"
    )
    column: str
    value_count: int
    tombstones_written: int
    rows_hidden: int
    datasets: list[PrivacyDatasetStatus]
    created_at: datetime
    completed_at: datetime | None
    erased_at: datetime | None = None
    receipt: dict[str, Any] | None = Field(
        default=None,
        description="Once erased: {files_rewritten, snapshots_expired, "
        "last_physical_removal_at, datasets: {id: {...}}}",
    )


class PrivacyJobList(Page):
    items: list[PrivacyJobOut]
