"""A job's stage history: each stage it went through, when it started and when it ended.

Stored on the job row (`jobs.stages`, a JSON list, oldest first) as the job moves: queued when it
is written, then each stage its worker reports, then done / retrying / failed / requeued. Each
entry is `{"stage", "started_at", "ended_at"}` (ISO 8601, UTC; the last one's `ended_at` is
null until the job moves on or ends).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from app.models import Job


class Stage(StrEnum):
    """The stages a worker reports (stored as their value; a stage's name is written once)."""

    STARTING = "starting"
    # the commit pipeline's (app/lake/pipeline.py) and its operations' plans
    VALIDATING = "validating"  # ingest: the Spark write that checks every row
    WRITING = "writing"  # ingest: its append commits
    COMMITTED = "committed"
    STAGING = "staging"  # replay: its rows written as uncommitted files
    COMMITTING = "committing"  # restatement: waiting for (or running) its group's commit
    SCAN = "scan"  # rewrite: which files, which tombstones (metadata only)
    PURGE_DATA = "purge-data"  # rewrite: Spark writes the files without the hidden rows
    PURGE_METADATA = "purge-metadata"  # rewrite: the new files' entries, before the lease
    RESOLVE = "resolve"  # materialize: the positions the new tombstones hide
    COMMIT = "commit"  # under the dataset's commit lease (maintenance jobs the lease yields to)
    # the other jobs'
    PLANNING = "planning"
    PLAN = "plan"
    EXPORTING = "exporting"
    WRITTEN = "written"
    EXPIRE = "expire"
    ORPHANS = "orphans"
    ERASURE = "erasure"
    LOCK = "lock"
    APPEND = "append"
    LINK = "link"
    FOLD = "fold"
    MERGE = "merge"
    # how a job ends or leaves a worker
    WAITING_FOR_SLOT = "waiting-for-slot"  # vacuum, compaction, expire: the others' slots kept
    RETRYING = "retrying"
    REQUEUED = "requeued"
    DONE = "done"
    FAILED = "failed"


FINAL = (Stage.DONE, Stage.FAILED)


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
