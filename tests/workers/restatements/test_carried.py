"""A restatement whose job rides on another job's message (a carried job) is never left without
a worker: the 300 s wait of bench.scale's 50k level (bench/RESULTS.md).

The race: request R2 finds job X (queued, its restatement ready) as its carrier and share-locks
it; before R2's transaction commits, the running committer D claims a group that takes X's
restatement. D records the group (settling X's job once R2 committed), then finds a maintenance
job waiting for the lease and hands it over. X's message finds X finished: nobody but D drains
R2. D once left there (its own restatement was committed) and R2's message-less job waited for
the reconciler's forgotten-job pass, 5 x `stale_after_seconds` = 300 s by default; then D sent
one of the jobs left a message as it left (`committer.pass_on`); now D takes the lease back
once the maintenance job has committed and commits R2 itself.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import exists, select, update
from sqlalchemy.orm import Session

from app import clock
from app.db import session_scope
from app.jobs.kinds import JobKind
from app.lake import lease
from app.models import Job, JobState, OutboxMessage, Restatement, RestatementState
from app.privacy import service as privacy
from tests.fixtures.datasets import EVENTS
from tests.fixtures.environments import Environment
from workers.celery_app import celery
from workers.restatements import committer

# the race needs two writers at once (a request's transaction open across the group's claim)
pytestmark = pytest.mark.parametrize("stack", ["postgres"], indirect=True)


def erase(org: str, did: str, value: str) -> str:
    """A GDPR delete of `value` as the API makes it: its restatement's job id."""
    with session_scope() as session:
        return submit(session, org, did, value)


def submit(session: Session, org: str, did: str, value: str) -> str:
    part = privacy.submit_privacy_job(session, org, [did], "user_id", [value]).datasets[0]
    assert part.job_id is not None
    return part.job_id


def state(job_id: str) -> str:
    """The state of the restatement of the job `job_id`."""
    with session_scope() as session:
        found = session.scalar(select(Restatement.state).where(Restatement.job_id == job_id))
        assert found is not None
        return str(found)


def has_message(job_id: str) -> bool:
    with session_scope() as session:
        return bool(session.scalar(select(exists().where(OutboxMessage.job_id == job_id))))


def run(job_id: str) -> None:
    """What a worker does with the job's message."""
    for module in celery.conf.include:
        importlib.import_module(module)
    with session_scope() as session:
        task_name = session.scalar(select(Job.task_name).where(Job.id == job_id))
    assert task_name is not None
    celery.tasks[task_name](job_id)


def deliver(org: str) -> list[str]:
    """The broker, for the org's jobs: every queued job of `org` that has a message runs, until
    none is left (a job without a message runs only once something sends one). Jobs that earlier
    tests left queued in this store are other orgs': they do not run (running them took minutes
    of Spark jobs when a suite left vacuums and ingests behind)."""
    ran: list[str] = []
    while True:
        with session_scope() as session:
            rows = session.scalars(
                select(Job.id)
                .where(
                    Job.org == org,
                    Job.state == JobState.QUEUED,
                    exists().where(OutboxMessage.job_id == Job.id),
                    Job.id.not_in(ran or [""]),
                )
                .order_by(Job.created_at, Job.id)
            ).all()
        if not rows:
            return ran
        for job_id in rows:
            run(job_id)
            ran.append(job_id)


def maintenance_waits(org: str, did: str) -> Callable[[], None]:
    """A materialize job of the dataset at its commit stage, as its worker leaves the row while
    waiting for the lease; the returned function finishes it."""
    with session_scope() as session:
        now = clock.db_now(session)
        job = Job(
            org=org,
            kind=JobKind.MATERIALIZE.value,
            task_name=JobKind.MATERIALIZE.task.value,
            subject_id=did,
            request_id="req-waiting-materializer",
            state=JobState.RUNNING,
            stage="commit",
            attempt=1,
            heartbeat_at=now + timedelta(seconds=3600),  # fresh for the whole test
            started_at=now,
        )
        session.add(job)
        session.flush()
        job_id = job.id

    def finish() -> None:
        with session_scope() as session:
            session.execute(update(Job).where(Job.id == job_id).values(state=JobState.SUCCEEDED))

    return finish


def test_a_carried_restatement_is_not_left_behind_by_a_committer_handing_over(
    client: TestClient, stack: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    org = client.org  # type: ignore[attr-defined]
    r_d = erase(org, did, "u0")  # D: the committer's own restatement, its job has a message
    race: dict[str, str] = {}
    claim = committer._claim_next_group
    finish_materializer: list[Callable[[], None]] = []

    def racing_claim(dataset_id: str) -> str | None:
        if not race:
            race["x"] = erase(org, did, "u1")  # D is running: X gets a message of its own
            assert has_message(race["x"])
            with session_scope() as session:  # R2's request, open across D's claim
                race["r2"] = submit(session, org, did, "u2")
                claimed = claim(dataset_id)  # D's group: R_D and X's restatement, not R2
            assert not has_message(race["r2"])  # R2 rode on X's message
            finish_materializer.append(maintenance_waits(org, did))
            return claimed
        return claim(dataset_id)

    monkeypatch.setattr(committer, "_claim_next_group", racing_claim)
    real_acquire = lease.acquire_unless_yielding
    seen: list[tuple[str, str, str]] = []

    def acquire(dataset_id: str) -> int | None:
        token = real_acquire(dataset_id)
        if token is None and finish_materializer and not seen:
            # D waits for the lease, its own restatement committed, R2 left ready; the
            # maintenance job commits and leaves meanwhile
            seen.append((state(r_d), state(race["x"]), state(race["r2"])))
            finish_materializer[0]()
        return token

    monkeypatch.setattr(lease, "acquire_unless_yielding", acquire)
    run(r_d)  # D commits its group, hands the lease over, takes it back and commits R2
    committed, ready = RestatementState.COMMITTED, RestatementState.READY
    assert seen == [(committed, committed, ready)]
    assert state(race["r2"]) == committed
    assert race["r2"] not in deliver(org)  # no message was needed: X's finds X finished
