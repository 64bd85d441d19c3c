"""Processes whose clocks disagree by a minute (`clock_offset_seconds` ±30 s) on the real
metadata stores: heartbeats, stale jobs and commit leases are judged on the database's clock."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app import clock
from app.config import get_settings
from app.db import session_scope
from app.jobs import reconciler
from app.lake import lease
from app.models import CommitLease, Job
from tests.fixtures.batches import CSV, open_batch
from workers import runtime

SKEW = 30.0


def skew(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """This process's clock, as if it ran on a machine `seconds` ahead."""
    monkeypatch.setattr(get_settings(), "clock_offset_seconds", seconds)


def queued_job(client: TestClient) -> str:
    _, batch_id = open_batch(client)
    client.put(f"/v1/batches/{batch_id}/files/a.csv", content=CSV)
    job_id: str = client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"}).json()[
        "job"
    ]["id"]
    return job_id


def test_the_offset_moves_the_process_clock_only(monkeypatch: pytest.MonkeyPatch) -> None:
    with session_scope() as session:
        before = clock.db_now(session)
    skew(monkeypatch, SKEW)
    ahead = clock.now()
    with session_scope() as session:
        database = clock.db_now(session)
    assert ahead - database > timedelta(seconds=SKEW - 5)
    assert timedelta(0) <= database - before < timedelta(seconds=5)


@pytest.mark.parametrize("worker", [-SKEW, SKEW])
def test_a_live_job_is_not_stale_to_a_reconciler_with_another_clock(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, worker: float
) -> None:
    settings = get_settings()
    monkeypatch.setattr(settings, "stale_after_seconds", 5.0)
    job_id = queued_job(client)
    skew(monkeypatch, worker)
    ctx = runtime.claim(job_id)
    assert ctx is not None
    ctx.beat()
    skew(monkeypatch, -worker)  # the reconciler of another worker, a minute apart
    reconciler.reconcile_once()  # (the counts include other tests' jobs of this store)
    ctx.check_lease()  # still this attempt's
    assert state(job_id) == ("running", 1)

    # a heartbeat that really stops is still noticed, after stale_after_seconds of DB time
    with session_scope() as session:
        job = session.get(Job, job_id)
        assert job is not None
        job.heartbeat_at = clock.db_now(session) - timedelta(seconds=6)
    reconciler.reconcile_once()
    assert state(job_id) == ("queued", 1)


def state(job_id: str) -> tuple[str, int]:
    with session_scope() as session:
        job = session.get(Job, job_id)
        assert job is not None
        return job.state, job.attempt


@pytest.mark.parametrize("holder", [-SKEW, SKEW])
def test_commit_lease_is_neither_stolen_nor_held_forever(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, holder: float
) -> None:
    dataset_id = str(uuid.uuid4())  # the lease table needs no dataset row
    monkeypatch.setattr(get_settings(), "commit_lease_seconds", 30.0)
    skew(monkeypatch, holder)
    token = lease.acquire(dataset_id)
    assert token is not None
    skew(monkeypatch, -holder)
    assert lease.acquire(dataset_id) is None  # live holder: not stolen by a clock a minute off
    skew(monkeypatch, holder)
    assert lease.renew(dataset_id, token)
    lease.release(dataset_id, token)
    skew(monkeypatch, -holder)
    again = lease.acquire(dataset_id)  # released: free at once, whoever's clock is ahead
    assert again == token + 1
    with session_scope() as session:
        row = session.scalar(select(CommitLease).where(CommitLease.dataset_id == dataset_id))
        assert row is not None
        left = row.expires_at - clock.db_now(session)
    assert timedelta(seconds=25) < left <= timedelta(seconds=30)  # a lease period, DB time
