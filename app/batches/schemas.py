from __future__ import annotations

import enum
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.jobs.schemas import JobOut
from app.pages import Page
from app.stuck import StuckOut


class BatchAction(enum.StrEnum):
    COMPLETE = "COMPLETE"
    ABORT = "ABORT"
    REVERT = "REVERT"


class ReplaySpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    predecessors: list[str] = Field(
        min_length=1, description="The 'success' batches whose rows this batch replaces"
    )
    reason: str | None = Field(default=None, max_length=2000)


class BatchCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={
            "examples": [
                {"dataset_id": "0b1c9a52-6f0e-4d43-9a57-3f1f1b0c2d7e", "format": "csv"},
                {
                    "dataset_id": "0b1c9a52-6f0e-4d43-9a57-3f1f1b0c2d7e",
                    "format": "json",
                    "replay": {
                        "predecessors": ["5d6f7a1e-2b3c-4d5e-8f90-1a2b3c4d5e6f"],
                        "reason": "late corrections",
                    },
                },
            ]
        },
    )

    dataset_id: str = Field(description="The dataset the batch loads into: its id or its name")
    format: Literal["csv", "json", "parquet"] = Field(
        description="csv (with a header line), json (JSON lines), parquet"
    )
    replay: ReplaySpec | None = Field(
        default=None,
        description="Replace these batches: their tombstones and this batch's rows commit as "
        "one snapshot",
    )


class BatchFileOut(BaseModel):
    name: str
    bytes: int
    sha256: str


class BatchRestatement(BaseModel):
    """The revert or replay that restated (or is restating) a batch."""

    id: str = Field(description="The restatement's id")
    kind: Literal["revert", "replay"]
    state: str = Field(description="pending, ready, committing, committed (or failed)")
    batch_id: str | None = Field(
        description="A replay's new batch (the batch whose rows replace this one's); null for "
        "a revert"
    )
    job_id: str | None = Field(description="The job that commits it")


class BatchOut(BaseModel):
    id: str
    dataset_id: str
    format: str
    status: str = Field(
        description="loading → staged → processing → success | failed; aborted; a 'success' "
        "batch becomes reverted or replaced"
    )
    row_count: int | None = Field(description="Rows ingested (once processed)")
    file_count: int
    bytes: int
    snapshot_id: int | None = Field(description="The Iceberg snapshot that committed its rows")
    job_id: str | None = Field(description="Its ingest job (once completed)")
    progress: float | None = Field(description="The ingest job's progress, 0..1")
    errors: list[dict[str, Any]] | None = Field(
        description="A failed batch's row-level errors: {file, row, field, reason}"
    )
    replay: dict[str, Any] | None = Field(description="{predecessors, reason} of a replay batch")
    restated_by: str | None = Field(
        description="The id of the revert or replay restating (pending) or that restated this batch"
    )
    restatement: BatchRestatement | None = Field(
        default=None, description="That restatement: its kind, state, replay batch and job"
    )
    files: list[BatchFileOut]
    created_at: datetime
    updated_at: datetime
    completed_at: datetime | None = Field(
        description="When it landed (its snapshot's commit time), failed or was aborted; a "
        "later revert or replay never changes it"
    )
    restated_at: datetime | None = Field(
        default=None,
        description="When a revert or replay restated it (the commit time of the snapshot "
        "that made it reverted or replaced)",
    )
    stuck: StuckOut | None = Field(
        default=None,
        description="Set while it is 'loading' with no upload and no COMPLETE for "
        "ICEBATCH_BATCH_LOADING_TTL_SECONDS: why, and what resolves it (the scheduler aborts it)",
    )


class BatchActionOut(BaseModel):
    batch: BatchOut
    job: JobOut | None


class BatchList(Page):
    items: list[BatchOut]
