from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from app.pages import Page
from app.stuck import StuckOut


class JobStageOut(BaseModel):
    stage: str
    started_at: datetime
    ended_at: datetime | None = Field(description="None while the job is at this stage")
    seconds: float | None = Field(description="ended_at - started_at")


class JobOut(BaseModel):
    id: str
    kind: str = Field(description="ingest, revert, replay, gdpr, vacuum, compact, expire or export")
    subject_id: str | None = Field(
        description="What the job works on: a batch (ingest), a restatement (revert, replay, "
        "gdpr) or a dataset (vacuum, compact, expire, export)"
    )
    request_id: str = Field(description="The X-Request-Id of the request that created it")
    key_id: str | None = Field(
        default=None,
        description="The API key whose request created it (None: the scheduler or the "
        "system started it, or it predates this field)",
    )
    dataset_id: str | None = Field(
        default=None, description="The dataset it works on (of its batch or restatement)"
    )
    batch_id: str | None = Field(
        default=None, description="The batch it serves (ingest; the reverted or replay batch)"
    )
    restatement_id: str | None = Field(
        default=None, description="The restatement it serves (revert, replay, gdpr)"
    )
    privacy_job_id: str | None = Field(
        default=None, description="The privacy job (GDPR delete) its restatement belongs to"
    )
    state: str = Field(description="queued → running → succeeded | failed")
    stage: str = Field(description="The step it is at while running (its kind's own names)")
    progress: float = Field(description="0..1")
    attempt: int = Field(
        description="Attempts so far; a failed attempt is retried. A replay whose staged rows "
        "were handed to another job's group commit and that was claimed again to commit them "
        "spends one without running again, and `max_attempts` grows by one with it: `stages` "
        "tells a retry (`retrying`, `requeued`)"
    )
    max_attempts: int
    created_at: datetime
    updated_at: datetime = Field(description="Last write to the job (state, progress, heartbeat)")
    started_at: datetime | None
    heartbeat_at: datetime | None
    finished_at: datetime | None
    duration_seconds: float | None
    result: dict[str, Any] | None = Field(description="What a succeeded job did (per kind)")
    error: str | None = Field(description="Why a failed job (or its last attempt) failed")
    worker: str | None = Field(default=None, description="host:pid of the worker that ran it")
    stages: list[JobStageOut] = Field(
        default_factory=list, description="Each stage it went through, with its timings"
    )
    stuck: StuckOut | None = Field(
        default=None,
        description="Set while it is running with a stale heartbeat (no beat for "
        "ICEBATCH_STALE_AFTER_SECONDS): why, and what resolves it",
    )


class JobList(Page):
    items: list[JobOut]
