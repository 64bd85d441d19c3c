"""A job that failed for good, and who reacts so its subject leaves its in-between state: a
batch stuck in `staged`/`processing` fails, a restatement frees the batches it reserved.

Called by whoever gives up on a job (the worker's runtime, the reconciler); imported by none of
the domains it calls, so no import cycle runs through it.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy.orm import Session

from app.batches import service as batches
from app.jobs import service as jobs
from app.jobs.kinds import JobKind
from app.models import Job
from app.restatements import service as restatements

FailureHook = Callable[[Session, Job, str], None]

# the hook of each kind that has one; kinds whose subject is a dataset need none
HOOKS: dict[JobKind, FailureHook] = {
    JobKind.INGEST: batches.ingest_failed,
    JobKind.REVERT: restatements.restatement_failed,
    JobKind.REPLAY: restatements.restatement_failed,
    JobKind.GDPR: restatements.restatement_failed,
}


def fail(session: Session, job: Job, error: str) -> None:
    """Mark a job failed for good and let its subject react."""
    jobs.mark_failed(session, job, error)
    hook = HOOKS.get(JobKind(job.kind))
    if hook is not None:
        hook(session, job, error)
