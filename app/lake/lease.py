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

import contextlib
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from prometheus_client import Counter, Histogram
from sqlalchemy import bindparam, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app import clock
from app.config import get_settings
from app.db import session_scope
from app.jobs.kinds import JobKind
from app.jobs.stages import Stage
from app.models import CommitLease, Job, JobState
from app.models.restatement import PASS_LEASE_PREFIX

WAIT_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)
# a worker's metrics (its default registry, served on ICEBATCH_WORKER_METRICS_PORT)
LEASE_WAIT = Histogram(
    "icebatch_commit_lease_wait_seconds",
    "Time a worker waited for a dataset's commit lease, by user (restate, rewrite)",
    ["operation"],
    buckets=WAIT_BUCKETS,
)
HOLD_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
LEASE_HELD = Histogram(
    "icebatch_commit_lease_held_seconds",
    "Time a worker held a dataset's commit lease, by holder: one restatement group commit "
    "(restate), a rewrite's commit (vacuum, compact), the materializer's (materialize), …",
    ["operation"],
    buckets=HOLD_BUCKETS,
)
LEASE_TIMEOUTS = Counter(
    "icebatch_commit_lease_timeouts_total",
    "Waits for a dataset's commit lease that gave up, by user (restate, rewrite)",
    ["operation"],
)


# appended to a restatement committer's holder: it drains the dataset's ready restatements and,
# once it lets go, passes what is left on (`workers/restatements/committer.pass_on`)
DRAINER = " drains"


def holder() -> str:
    """This process, as a lease's holder (host:pid)."""
    return f"{socket.gethostname()}:{os.getpid()}"


class CommitLeaseLost(Exception):
    """The dataset's commit lease expired under us; the next holder finishes the work."""


def _expiry(now: datetime) -> datetime:
    return now + timedelta(seconds=get_settings().commit_lease_seconds)


def acquire(dataset_id: str, *, role: str = "") -> int | None:
    """The new fencing token, or None while someone else holds an unexpired lease; `role` is
    appended to the holder (`DRAINER`)."""
    who = holder() + role
    with session_scope() as session:
        now = clock.db_now(session)
        taken = session.execute(
            update(CommitLease)
            .where(CommitLease.dataset_id == dataset_id, CommitLease.expires_at < now)
            .values(holder=who, token=CommitLease.token + 1, expires_at=_expiry(now))
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
                CommitLease(dataset_id=dataset_id, holder=who, token=1, expires_at=expires_at)
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


def acquire_unless_yielding(dataset_id: str) -> int | None:
    """`acquire` for a restatement committer: None while another holds the lease, and when a
    maintenance job waits for it (taken, then given back at once: it goes next)."""
    token = acquire(dataset_id, role=DRAINER)
    if token is not None and maintenance_waiting(dataset_id):
        release(dataset_id, token)
        return None
    return token


_DRAINING = (
    select(CommitLease.dataset_id)
    .where(
        CommitLease.dataset_id == bindparam("dataset_id"),
        CommitLease.holder.like("%" + DRAINER),
        CommitLease.expires_at > bindparam("now"),
    )
    .with_for_update(read=True)
)


def draining(session: Session, dataset_id: str) -> bool:
    """Whether a restatement committer holds the dataset's lease now, locked until the
    transaction commits (FOR SHARE: its release, an UPDATE, waits for it). A restatement made
    ready in this transaction is then either in one of its groups or, once it lets go, passed on
    (`workers/restatements/committer.pass_on` runs after the release). On SQLite, which has no
    row locks, the caller writes first: the transaction then holds the database's write lock."""
    found = session.connection().execute(
        _DRAINING, {"dataset_id": dataset_id, "now": clock.db_now(session)}
    )
    return found.first() is not None


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
                Job.stage == Stage.COMMIT,
                Job.heartbeat_at > fresh,
            )
            .limit(1)
        )
    return found is not None


class LeaseTimeout(TimeoutError):
    """The commit lease stayed taken for as long as the caller would wait."""


def wait(
    dataset_id: str,
    *,
    seconds: float,
    check: Callable[[], None],
    user: str,
    max_pause: float = 0.25,
) -> int:
    """Wait up to `seconds` for the dataset's commit lease (its holders keep it for seconds at
    most and hand it over between groups); `check` runs between tries (the job's own lease).
    `user` labels the wait's metrics; the pause between tries grows to `max_pause`."""
    started = time.monotonic()
    deadline = started + seconds
    pause = 0.05
    while time.monotonic() < deadline:
        token = acquire(dataset_id)
        if token is not None:
            LEASE_WAIT.labels(user).observe(time.monotonic() - started)
            return token
        check()
        time.sleep(pause)
        pause = min(pause * 2, max_pause)  # the holder hands it over between groups: be there
    LEASE_TIMEOUTS.labels(user).inc()
    raise LeaseTimeout(f"dataset {dataset_id}: the commit lease stayed taken")


@contextmanager
def holding(
    dataset_id: str,
    *,
    seconds: float,
    check: Callable[[], None],
    user: str,
    operation: str | None = None,
) -> Iterator[int]:
    """The lease for the length of the block (waited for as `wait` does), then released; the
    hold is observed in `icebatch_commit_lease_held_seconds` under `operation` (default: `user`)."""
    token = wait(dataset_id, seconds=seconds, check=check, user=user)
    began = time.monotonic()
    try:
        yield token
    finally:
        release(dataset_id, token)
        LEASE_HELD.labels(operation or user).observe(time.monotonic() - began)


@contextmanager
def renewed(key: str, token: int) -> Iterator[None]:
    """Keep the held lease `key` renewed every third of its period for the length of the block,
    then release it. A renewal that finds the lease lost stops renewing (the holder's next
    fenced step finds out); one that meets a store blip tries again at the next period."""
    stop = threading.Event()
    period = get_settings().commit_lease_seconds / 3

    def keep() -> None:
        while not stop.wait(period):
            try:
                if not renew(key, token):
                    return
            except Exception:  # the next renewal, or the holder's own fenced step, decides
                continue

    keeper = threading.Thread(target=keep, name=f"lease-{key}", daemon=True)
    keeper.start()
    try:
        yield
    finally:
        stop.set()
        keeper.join(timeout=period + 1)
        with contextlib.suppress(Exception):  # it expires on its own
            release(key, token)


def busy(name: str) -> bool:
    """Whether the pass `name`'s lease (`exclusive`) is held now."""
    with session_scope() as session:
        found = session.scalar(
            select(CommitLease.dataset_id).where(
                CommitLease.dataset_id == PASS_LEASE_PREFIX + name,
                CommitLease.expires_at > clock.db_now(session),
            )
        )
    return found is not None


@contextmanager
def exclusive(name: str) -> Iterator[bool]:
    """The lease of the pass `name` (`pass:<name>`, in the same table as the datasets' commit
    leases), `renewed` for the length of the block: yields True, or False at once when another
    process's block holds it (the caller skips its pass). A holder that dies stops renewing: the
    next pass takes it over within `commit_lease_seconds`."""
    token = acquire(PASS_LEASE_PREFIX + name)
    if token is None:
        yield False
        return
    with renewed(PASS_LEASE_PREFIX + name, token):
        yield True
