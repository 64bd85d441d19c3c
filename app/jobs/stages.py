"""A job's stage history: each stage it went through, when it started and when it ended.

Stored on the job row (`jobs.stages`, a JSON list, oldest first) as the job moves: queued when it
is written, then each stage its worker reports, then done / retrying / failed / requeued. Each
entry is `{"stage", "started_at", "ended_at"}` (ISO 8601, UTC; the last one's `ended_at` is
null until the job moves on or ends).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from app.models import Job

FINAL = ("done", "failed")


def advanced(
    stages: list[dict[str, Any]] | None, stage: str, at: datetime, *, final: bool = False
) -> list[dict[str, Any]]:
    """`stages` with the open stage ended at `at` and `stage` begun then (a new list: the ORM
    sees a JSON column change only when it is assigned). The same stage again is no change;
    a `final` stage ends as it begins."""
    out = [dict(entry) for entry in stages or []]
    if out and out[-1]["stage"] == stage and out[-1]["ended_at"] is None:
        if final:
            out[-1]["ended_at"] = at.isoformat()
        return out
    if out and out[-1]["ended_at"] is None:
        out[-1]["ended_at"] = at.isoformat()
    out.append(
        {
            "stage": stage,
            "started_at": at.isoformat(),
            "ended_at": at.isoformat() if final else None,
        }
    )
    return out


def record(job: Job, stage: str, at: datetime, *, final: bool = False) -> None:
    """Move the loaded job's history to `stage` at `at`."""
    job.stages = advanced(job.stages, stage, at, final=final)
