"""A dataset's commit lease: one committer of tombstones at a time, with an expiry.

The lease is an optimization and a serializer, not the last line of defence: every tombstone
commit is also fenced on its parent snapshot by the catalog's compare-and-swap. The holder renews
right before each commit, so a commit starts with a full lease period ahead of it. Expiry is
written and judged on the database's clock (`app.clock.db_now`): holders on machines whose clocks
disagree still see the same deadline.

Restatement committers hand the lease over to maintenance: while a materializer or a rewrite
waits for it (its job running, at stage `commit`, heartbeat fresh), the holder stops draining
after the group it is committing, and a restatement job that takes the lease gives it back at
once. Otherwise a steady flow of restatements keeps the lease busy for as long as it lasts, and
the materializer (position deletes: what other engines see) lags by the length of the burst.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from app import clock
from app.config import get_settings
from app.db import session_scope
from app.jobs.kinds import JobKind
from app.models import CommitLease, Job, JobState
from workers.runtime import WORKER_NAME


class CommitLeaseLost(Exception):
    """The dataset's commit lease expired under us; the next holder finishes the work."""


def _expiry(now: datetime) -> datetime:
    return now + timedelta(seconds=get_settings().commit_lease_seconds)


def acquire(dataset_id: str) -> int | None:
    """The new fencing token, or None while someone else holds an unexpired lease."""
    with session_scope() as session:
        now = clock.db_now(session)
        taken = session.execute(
            update(CommitLease)
            .where(CommitLease.dataset_id == dataset_id, CommitLease.expires_at < now)
            .values(holder=WORKER_NAME, token=CommitLease.token + 1, expires_at=_expiry(now))
        ).rowcount
        if taken:
            token = session.scalar(
                select(CommitLease.token).where(CommitLease.dataset_id == dataset_id)
            )
            return int(token) if token is not None else None
        if session.get(CommitLease, dataset_id) is not None:
            return None
    try:
        with session_scope() as session:
            expires_at = _expiry(clock.db_now(session))
            session.add(
                CommitLease(
                    dataset_id=dataset_id, holder=WORKER_NAME, token=1, expires_at=expires_at
                )
            )
    except IntegrityError:
        return None
    return 1


def renew(dataset_id: str, token: int) -> bool:
    """Extend the lease by a full period; False when it expired or passed to another holder."""
    with session_scope() as session:
        now = clock.db_now(session)
        return bool(
            session.execute(
                update(CommitLease)
                .where(
                    CommitLease.dataset_id == dataset_id,
                    CommitLease.token == token,
                    CommitLease.expires_at > now,
                )
                .values(expires_at=_expiry(now))
            ).rowcount
        )


def release(dataset_id: str, token: int) -> None:
    with session_scope() as session:
        session.execute(
            update(CommitLease)
            .where(CommitLease.dataset_id == dataset_id, CommitLease.token == token)
            .values(expires_at=clock.db_now(session) - timedelta(seconds=1), holder=None)
        )


# maintenance jobs whose commit the restatement committers let go first
YIELD_TO = (JobKind.MATERIALIZE.value, JobKind.VACUUM.value, JobKind.COMPACT.value)


def maintenance_waiting(dataset_id: str) -> bool:
    """Whether a live maintenance job of the dataset is at its commit stage (it waits for the
    lease, or holds it). A job whose worker died stops counting once its heartbeat is stale."""
    settings = get_settings()
    with session_scope() as session:
        fresh = clock.db_now(session) - timedelta(seconds=3 * settings.heartbeat_seconds)
        found = session.scalar(
            select(Job.id)
            .where(
                Job.subject_id == dataset_id,
                Job.state == JobState.RUNNING,
                Job.kind.in_(YIELD_TO),
                Job.stage == "commit",
                Job.heartbeat_at > fresh,
            )
            .limit(1)
        )
    return found is not None
