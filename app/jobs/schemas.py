from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from app.pagination import Page


class JobOut(BaseModel):
    id: str
    kind: str
    subject_id: str | None
    request_id: str
    state: str
    stage: str
    progress: float
    attempt: int
    max_attempts: int
    created_at: datetime
    updated_at: datetime = Field(description="Last write to the job (state, progress, heartbeat)")
    started_at: datetime | None
    heartbeat_at: datetime | None
    finished_at: datetime | None
    duration_seconds: float | None
    result: dict[str, Any] | None
    error: str | None


class JobList(Page):
    items: list[JobOut]
