from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from app.jobs.schemas import JobOut

ChangeKind = Literal["appended", "deleted"]


class ExportCreate(BaseModel):
    kind: ChangeKind
    from_snapshot: int | None = Field(default=None, description="Start after this snapshot")
    to_snapshot: int | None = Field(default=None, description="End at this snapshot (current)")
    since: str | None = Field(default=None, description="ISO 8601: start after the snapshot then")
    until: str | None = Field(default=None, description="ISO 8601: end at the snapshot then")


class ExportOut(BaseModel):
    kind: ChangeKind
    from_snapshot_id: int | None
    to_snapshot_id: int | None
    job: JobOut
