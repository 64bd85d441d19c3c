"""Who reacts when a job fails for good, so its subject leaves its in-between state: a batch
stuck in `staged`/`processing` fails, a restatement frees the batches it reserved."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from sqlalchemy.orm import Session

from app.jobs.kinds import JobKind
from app.models import Job

FailureHook = Callable[[Session, Job, str], None]


@cache
def failure_hooks() -> dict[JobKind, FailureHook]:
    """The hook of each kind that has one; kinds whose subject is a dataset need none."""
    # imported here, not at the top: these services enqueue jobs through app.jobs.service
    from app.batches import service as batches
    from app.restatements import service as restatements

    return {
        JobKind.INGEST: batches.ingest_failed,
        JobKind.REVERT: restatements.restatement_failed,
        JobKind.REPLAY: restatements.restatement_failed,
        JobKind.GDPR: restatements.restatement_failed,
    }
