from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.jobs.schemas import JobOut
from app.lake.snapshots import SnapshotId

ChangeKind = Literal["appended", "deleted"]


class ExportCreate(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"kind": "appended", "from_snapshot": 3051729675574597004},
                {"kind": "deleted", "since": "2026-11-01T00:00:00Z"},
            ]
        }
    )

    kind: ChangeKind
    from_snapshot: SnapshotId | None = Field(default=None, description="Start after this snapshot")
    to_snapshot: SnapshotId | None = Field(
        default=None, description="End at this snapshot (current)"
    )
    since: str | None = Field(default=None, description="ISO 8601: start after the snapshot then")
    until: str | None = Field(default=None, description="ISO 8601: end at the snapshot then")


class ExportOut(BaseModel):
    kind: ChangeKind
    from_snapshot_id: int | None = Field(description="The resolved start, excluded")
    to_snapshot_id: int | None = Field(description="The resolved end, included")
    job: JobOut = Field(description="The Spark export job: its result names the folder written")
