"""Restatement committers hand the commit lease to a maintenance job waiting for it
(app/lake/lease.py): the materializer's lag is not the length of a restatement burst."""

from __future__ import annotations

from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from app import clock
from app.db import session_scope
from app.jobs.kinds import JobKind
from app.lake import lease
from app.models import Job, JobState, Restatement, RestatementState
from tests.fixtures.batches import csv_rows, ids, ingest
from tests.fixtures.datasets import EVENTS
from tests.fixtures.spark import RunJobs
from workers.restatements import committer

pytestmark = pytest.mark.spark


def states(dataset_id: str) -> list[str]:
    with session_scope() as session:
        return list(
            session.scalars(
                select(Restatement.state).where(Restatement.dataset_id == dataset_id)
            ).all()
        )


def waiting_job(dataset_id: str, kind: JobKind, stage: str, beat_ago: float) -> None:
    """A maintenance job of the dataset as a worker running it leaves its row."""
    with session_scope() as session:
        now = clock.db_now(session)
        job = Job(
            org="acme",
            kind=kind.value,
            task_name=kind.task.value,
            subject_id=dataset_id,
            request_id=f"req-{kind.value}-{stage}",
            state=JobState.RUNNING,
            stage=stage,
            attempt=1,
            heartbeat_at=now - timedelta(seconds=beat_ago),
            started_at=now,
        )
        session.add(job)


def set_job(dataset_id: str, **values: object) -> None:
    with session_scope() as session:
        session.execute(update(Job).where(Job.subject_id == dataset_id).values(**values))


def test_a_committer_yields_to_maintenance_waiting_to_commit(
    client: TestClient, run_jobs: RunJobs
) -> None:
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    batches = [
        ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(i, f"u{i}")])}) for i in (1, 2)
    ]
    assert not lease.maintenance_waiting(did)
    for kind, stage, beat_ago in [
        (JobKind.MATERIALIZE, "resolve", 0.0),  # not at the lease yet
        (JobKind.EXPIRE, "commit", 0.0),  # not one the committers yield to
        (JobKind.VACUUM, "commit", 3600.0),  # its worker died: stale heartbeat
    ]:
        waiting_job(did, kind, stage, beat_ago)
        assert not lease.maintenance_waiting(did), (kind, stage, beat_ago)
    waiting_job(did, JobKind.MATERIALIZE, "commit", 0.0)
    assert lease.maintenance_waiting(did)

    client.post(f"/v1/batches/{batches[0]['id']}", params={"action": "REVERT"})
    assert states(did) == [RestatementState.READY]
    token = lease.acquire(did)
    assert token is not None
    committer.drain(did, token)  # hands over: commits nothing while the materializer waits
    assert states(did) == [RestatementState.READY]

    set_job(did, state=JobState.SUCCEEDED)  # the materializer committed and finished
    assert not lease.maintenance_waiting(did)
    committer.drain(did, token)
    lease.release(did, token)
    assert states(did) == [RestatementState.COMMITTED]
    assert ids(client, did) == [2]


class Attempt:
    """What `wait_until_committed` asks of the job running it: that it still owns its attempt."""

    def check_lease(self) -> None:
        return None


def test_a_committer_that_handed_over_comes_back_for_the_groups_left(
    client: TestClient, run_jobs: RunJobs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its own restatement committed before it handed the lease to a materializer; the GDPR
    group left behind is committed by it once the materializer is done, before it returns."""
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    batch = ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(1, "u1"), (2, "u2")])})
    client.post(f"/v1/batches/{batch['id']}", params={"action": "REVERT"})
    body = {"dataset_ids": [did], "column": "user_id", "values": ["u2"]}
    assert client.post("/v1/privacy/jobs", json=body).status_code == 202
    with session_scope() as session:
        rows = session.execute(
            select(Restatement.id, Restatement.kind).where(Restatement.dataset_id == did)
        ).all()
    revert = next(r for r, kind in rows if kind == "revert")
    gdpr = next(r for r, kind in rows if kind == "gdpr")

    real_commit_group = committer.commit_group
    waited: list[bool] = []

    def commit_group(*args: object) -> None:
        real_commit_group(*args)  # type: ignore[arg-type]
        if not waited:  # after the first group (the revert): a materializer comes to commit
            waiting_job(did, JobKind.MATERIALIZE, "commit", 0.0)
            waited.append(True)

    monkeypatch.setattr(committer, "commit_group", commit_group)
    real_acquire = lease.acquire_unless_yielding

    def acquire(dataset_id: str) -> int | None:
        token = real_acquire(dataset_id)
        if token is None and lease.maintenance_waiting(dataset_id):
            # the materializer commits and finishes while the committer waits for the lease
            assert state_of(revert) == RestatementState.COMMITTED
            assert state_of(gdpr) == RestatementState.READY
            set_job_state(did, JobKind.MATERIALIZE, JobState.SUCCEEDED)
        return token

    monkeypatch.setattr(lease, "acquire_unless_yielding", acquire)
    committer.wait_until_committed(Attempt(), revert, did)  # type: ignore[arg-type]
    assert waited
    assert state_of(gdpr) == RestatementState.COMMITTED
    assert state_of(revert) == RestatementState.COMMITTED


def state_of(restatement_id: str) -> str | None:
    with session_scope() as session:
        return session.scalar(select(Restatement.state).where(Restatement.id == restatement_id))


def set_job_state(dataset_id: str, kind: JobKind, state: JobState) -> None:
    with session_scope() as session:
        session.execute(
            update(Job)
            .where(Job.subject_id == dataset_id, Job.kind == kind.value)
            .values(state=state)
        )
