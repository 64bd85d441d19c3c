from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from app.pagination import Page


class JobOut(BaseModel):
    id: str
    kind: str = Field(description="ingest, revert, replay, gdpr, vacuum, compact, expire or export")
    subject_id: str | None = Field(
        description="What the job works on: a batch (ingest), a restatement (revert, replay, "
        "gdpr) or a dataset (vacuum, compact, expire, export)"
    )
    request_id: str = Field(description="The X-Request-Id of the request that created it")
    state: str = Field(description="queued → running → succeeded | failed")
    stage: str = Field(description="The step it is at while running (its kind's own names)")
    progress: float = Field(description="0..1")
    attempt: int = Field(description="Attempts so far; a failed attempt is retried")
    max_attempts: int
    created_at: datetime
    updated_at: datetime = Field(description="Last write to the job (state, progress, heartbeat)")
    started_at: datetime | None
    heartbeat_at: datetime | None
    finished_at: datetime | None
    duration_seconds: float | None
    result: dict[str, Any] | None = Field(description="What a succeeded job did (per kind)")
    error: str | None = Field(description="Why a failed job (or its last attempt) failed")


class JobList(Page):
    items: list[JobOut]
