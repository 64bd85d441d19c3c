"""Restatements in flight: each has a live job, or nothing will ever commit (or record) it.

A restatement left `committing` by a dead committer is settled by the next group commit of its
dataset, which first looks its commit id up in the snapshot log (recorded if it landed, committed
under the same id if not, never twice); the repair queues a job that runs that committer.
"""

from __future__ import annotations

import functools
from datetime import datetime

from pyiceberg.table.snapshots import Snapshot

from app.db import session_scope
from app.doctor import repository
from app.doctor.findings import Finding, Subject, finding
from app.jobs import service as jobs
from app.jobs.kinds import JobKind
from app.lake import snapshots
from app.models import JobState, Restatement, RestatementState
from app.privacy import erasure
from app.restatements import service as restatements_service

CHECK = "restatements"
LIVE = (JobState.QUEUED, JobState.RUNNING)


def check(subject: Subject) -> list[Finding]:
    with session_scope() as session:
        every = repository.restatements(session, subject.dataset_id)
        restatements = [r for r in every if r.state in restatements_service.OPEN]
        job_rows = repository.jobs(session, (r.job_id for r in restatements))
    out = _failed_but_held(subject, [r for r in every if r.state == RestatementState.FAILED])
    for restatement in restatements:
        job = job_rows.get(restatement.job_id or "")
        if job is not None and job.state in LIVE:
            continue  # its job will commit it (or a group commit carrying it will)
        whose = f"its job {job.id} is '{job.state}'" if job is not None else "it has no job"
        since = _when(restatement.updated_at)
        problem = (
            f"{restatement.kind} restatement {restatement.id} has been '{restatement.state}' "
            f"since {since} and no job will move it ({whose})"
        )
        if restatement.state == RestatementState.COMMITTING:
            if not restatement.commit_id:
                out.append(
                    finding(
                        subject,
                        CHECK,
                        f"{problem}; it has no commit id, so no committer can tell whether it "
                        "landed",
                        "look for its request id in the snapshot log and the tombstones "
                        f"(GET /v1/datasets/{subject.dataset_id}/tombstones); set it 'committed' "
                        "with that snapshot, or 'ready' if it never landed",
                    )
                )
                continue
            landed = snapshots.find_by_request_id(subject.table, restatement.commit_id)
            problem += "; " + _commit_state(restatement.commit_id, landed)
        out.append(
            finding(
                subject,
                CHECK,
                problem,
                f"--repair queues a new {restatement.kind} job for it; its worker runs the "
                "dataset's group committer, which records a landed commit from the snapshot log "
                "or commits it under the same commit id (never twice)",
                repair=functools.partial(requeue, restatement.id),
            )
        )
    return out


def _failed_but_held(subject: Subject, failed: list[Restatement]) -> list[Finding]:
    """Failed restatements whose tombstones a retained snapshot holds anyway."""
    if not failed:
        return []
    try:
        held = erasure.held_request_ids(subject.table)
    except Exception:
        return []  # unreadable tombstone files: the tombstones check reports them
    return [
        finding(
            subject,
            CHECK,
            f"{r.kind} restatement {r.id} is 'failed', yet the table holds its tombstones "
            f"(request id {r.request_id}): its rows are hidden while its request reports a "
            "failure",
            "find the snapshot that committed them (GET /v1/datasets/"
            f"{subject.dataset_id}/tombstones); set the restatement 'committed' with that "
            "snapshot, or tell the requester the request took effect",
        )
        for r in failed
        if r.request_id in held
    ]


def _commit_state(commit_id: str, landed: Snapshot | None) -> str:
    if landed is not None:
        return f"its commit {commit_id} landed as snapshot {landed.snapshot_id}, unrecorded"
    return f"its commit {commit_id} is not in the snapshot log (it never landed)"


def _when(moment: datetime | None) -> str:
    return moment.isoformat(timespec="seconds") if moment is not None else "an unknown time"


def requeue(restatement_id: str) -> str:
    """A new job for a restatement in flight that no job will move (its own job's request id,
    stamped on its tombstones, stays the restatement's)."""
    with session_scope() as session:
        restatement = session.get(Restatement, restatement_id, with_for_update=True)
        if restatement is None or restatement.state not in restatements_service.OPEN:
            state = restatement.state if restatement is not None else "gone"
            return f"nothing to do: restatement {restatement_id} is now {state}"
        job = jobs.enqueue(
            session, JobKind(restatement.kind), org=restatement.org, subject_id=restatement.id
        )
        restatement.job_id = job.id
        return (
            f"queued {restatement.kind} job {job.id} for restatement {restatement_id}; "
            "a worker settles it"
        )
