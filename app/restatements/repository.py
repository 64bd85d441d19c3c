from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row, bindparam, exists, select, update
from sqlalchemy.orm import Session

from app.models import (
    Job,
    JobState,
    OutboxMessage,
    Restatement,
    RestatementKind,
    RestatementState,
)
from app.restatements import states

_CARRIER = (
    select(Job.id)
    .join(Restatement, Restatement.job_id == Job.id)
    .where(
        Restatement.dataset_id == bindparam("dataset_id"),
        Restatement.state == RestatementState.READY,
        Job.state == JobState.QUEUED,
        exists().where(OutboxMessage.job_id == Job.id),
    )
    .limit(1)
    .with_for_update(read=True, of=Job)
)  # built once: it keeps its cache key (a request's CPU)


def carrier_job(session: Session, dataset_id: str) -> str | None:
    """The id of a queued job of a ready restatement of the dataset whose message is on its
    way, locked until the transaction commits: FOR SHARE of the job row, so requests to one
    dataset share the lock (FOR UPDATE made every request of a dataset wait for the one before
    it to commit: the hot row bench/scaling.py found) while the worker's claim, an UPDATE,
    still waits for all of them; a request that finds the carrier claimed meanwhile carries
    itself."""
    # on the session's connection, not through the ORM: a plain column needs none of its work
    found: str | None = (
        session.connection().execute(_CARRIER, {"dataset_id": dataset_id}).scalars().first()
    )
    return found


def replays_queued(session: Session, dataset_id: str, besides: str) -> bool:
    """Whether a replay of the dataset other than `besides` waits in the queue, not yet staged."""
    found = session.scalar(
        select(Restatement.id)
        .join(Job, Restatement.job_id == Job.id)
        .where(
            Restatement.dataset_id == dataset_id,
            Restatement.kind == RestatementKind.REPLAY,
            Restatement.state == RestatementState.PENDING,
            Restatement.id != besides,
            Job.state == JobState.QUEUED,
        )
        .limit(1)
    )
    return found is not None


def carried_without_carrier(session: Session, dataset_id: str) -> Job | None:
    """The queued job of the dataset's oldest ready restatement when no queued job of a ready
    restatement of the dataset has a message: ready work no worker is on its way to (see
    `workers/restatements/committer.pass_on`); None otherwise."""
    queued_ready = (
        select(Job)
        .join(Restatement, Restatement.job_id == Job.id)
        .where(
            Restatement.dataset_id == dataset_id,
            Restatement.state == RestatementState.READY,
            Job.state == JobState.QUEUED,
        )
    )
    carrier = queued_ready.where(exists().where(OutboxMessage.job_id == Job.id)).limit(1)
    if session.scalar(carrier) is not None:
        return None
    return session.scalar(queued_ready.order_by(Restatement.created_at, Restatement.id).limit(1))


# the group committer's (workers/restatements/committer.py); its moves are the machine's
# (app/restatements/states.py): a WHERE clause on the states that may make them


def state_of(session: Session, restatement_id: str) -> RestatementState | None:
    found = session.scalar(select(Restatement.state).where(Restatement.id == restatement_id))
    return RestatementState(found) if found is not None else None


def interrupted_commit_ids(session: Session, dataset_id: str) -> list[str]:
    """Commit ids of the dataset's groups left `committing` (their committer died or lost the
    lease before recording them)."""
    found = session.scalars(
        select(Restatement.commit_id)
        .where(
            Restatement.dataset_id == dataset_id,
            Restatement.state == RestatementState.COMMITTING,
        )
        .distinct()
    ).all()
    return sorted(c for c in found if c)


def in_flight(session: Session, dataset_id: str) -> bool:
    """Whether a restatement of the dataset is not committed (or failed) yet."""
    unsettled = (RestatementState.PENDING, RestatementState.READY, RestatementState.COMMITTING)
    return (
        session.scalar(
            select(Restatement.id)
            .where(Restatement.dataset_id == dataset_id, Restatement.state.in_(unsettled))
            .limit(1)
        )
        is not None
    )


def ready(session: Session, dataset_id: str) -> Sequence[Row[Any]]:
    """(id, kind, ids) of the dataset's ready restatements, oldest first."""
    return session.execute(
        select(Restatement.id, Restatement.kind, Restatement.ids)
        .where(Restatement.dataset_id == dataset_id, Restatement.state == RestatementState.READY)
        .order_by(Restatement.created_at, Restatement.id)
    ).all()


def any_ready(session: Session, dataset_id: str) -> bool:
    """Whether the dataset has a ready restatement."""
    found = session.scalar(
        select(Restatement.id)
        .where(Restatement.dataset_id == dataset_id, Restatement.state == RestatementState.READY)
        .limit(1)
    )
    return found is not None


def claim(session: Session, ids: list[str], commit_id: str) -> None:
    """Move `ids` to `committing` under `commit_id` (those still allowed to)."""
    session.execute(
        update(Restatement)
        .where(Restatement.id.in_(ids), Restatement.state.in_(states.sources(states.COMMITTING)))
        .values(state=states.COMMITTING, commit_id=commit_id)
    )


def group(session: Session, commit_id: str) -> Sequence[Restatement]:
    """The members of the group `commit_id` not recorded yet."""
    return session.scalars(
        select(Restatement).where(
            Restatement.commit_id == commit_id,
            Restatement.state == RestatementState.COMMITTING,
        )
    ).all()


def committing(session: Session, ids: list[str]) -> Sequence[Restatement]:
    """Those of `ids` still `committing` (a group another committer recorded is left alone)."""
    return session.scalars(
        select(Restatement).where(
            Restatement.id.in_(ids), Restatement.state == RestatementState.COMMITTING
        )
    ).all()
