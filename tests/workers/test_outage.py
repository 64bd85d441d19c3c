"""A metadata store outage as the runtime lives through it: a job the outage broke resumes in the
same attempt, and heartbeats missed while the store was down never make a worker look dead. A
broker restart: the queued jobs' messages are sent again at once.

The outage itself is the real thing in `tests/e2e/test_infra_faults.py`; here the errors it
raises are handed to the runtime directly, so each rule is checked in a second, on both stores.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update
from sqlalchemy.exc import OperationalError

from app.config import get_settings
from app.db import is_store_outage, session_scope
from app.jobs import reconciler
from app.jobs import service as jobs
from app.jobs.kinds import JobKind
from app.models import Job, OutboxMessage
from tests.fixtures.batches import CSV, open_batch
from tests.fixtures.environments import Environment, reset_caches
from tests.fixtures.private_servers import PrivatePostgres, PrivateRedis
from workers import outage, runtime

REFUSED = OperationalError("SELECT 1", {}, psycopg.OperationalError("connection refused"))
JVM_ERROR = RuntimeError(
    "An error occurred while calling o747.append.\n: org.apache.iceberg.jdbc."
    "UncheckedSQLException: Failed to get table\nCaused by: org.postgresql.util.PSQLException: "
    "FATAL: terminating connection due to administrator command"
)


def outbox(job_id: str) -> list[OutboxMessage]:
    with session_scope() as session:
        return list(session.scalars(select(OutboxMessage).where(OutboxMessage.job_id == job_id)))


def completed_batch(client: TestClient) -> str:
    _, batch_id = open_batch(client)
    client.put(f"/v1/batches/{batch_id}/files/a.csv", content=CSV)
    job: dict[str, str] = client.post(
        f"/v1/batches/{batch_id}", params={"action": "COMPLETE"}
    ).json()["job"]
    return job["id"]


@pytest.fixture
def own_postgres(private_postgres: PrivatePostgres, tmp_path: Path) -> Iterator[PrivatePostgres]:
    """The runtime of this process on a PostgreSQL of the test's own (it will be restarted)."""
    saved = dict(os.environ)
    url = private_postgres.create_database("icebatch")
    env = {"ICEBATCH_HOME": str(tmp_path), "ICEBATCH_DATABASE_URL": url}
    Environment("postgres", {**env, "ICEBATCH_BROKER_URL": "", "ICEBATCH_WAREHOUSE": ""}).activate()
    try:
        yield private_postgres
    finally:
        os.environ.clear()
        os.environ.update(saved)
        reset_caches()


@pytest.mark.postgres
def test_a_worker_waits_out_a_postgres_restart(own_postgres: PrivatePostgres) -> None:
    """The real thing, in process: PostgreSQL stops while a job runs (the handler stops it) and
    while the next job is claimed; each waits, and both finish on their first attempt."""
    with session_scope() as session:
        first, second = (
            jobs.enqueue(session, JobKind.VACUUM, org="acme", subject_id=f"d{i}", publish=False).id
            for i in (1, 2)
        )
    calls: list[str] = []
    # each restart's thread is joined before the test ends: one still waiting for the server
    # when the fixture stops it would raise in whatever test runs next on this xdist worker
    restarts: list[threading.Timer] = []

    def restart_in_3_s() -> None:
        restarts.append(threading.Timer(3, own_postgres.start))
        restarts[-1].start()

    def stops_the_store_once(ctx: runtime.JobContext) -> dict[str, object]:
        calls.append(ctx.job_id)
        if len(calls) == 1:
            own_postgres.stop()
            restart_in_3_s()
        with session_scope() as session:
            return {"jobs": len(session.scalars(select(Job)).all())}

    runtime.run_job(first, stops_the_store_once)
    assert calls == [first, first]
    own_postgres.stop()
    restart_in_3_s()
    started = time.monotonic()
    runtime.run_job(second, stops_the_store_once)  # claims once the store is back
    assert time.monotonic() - started >= 2.5
    assert calls == [first, first, second]
    for restart in restarts:
        restart.join(timeout=90)
        assert not restart.is_alive()
    with session_scope() as session:
        done = {j.id: (j.state, j.attempt, j.result) for j in session.scalars(select(Job))}
    assert done == {
        first: ("succeeded", 1, {"jobs": 2}),
        second: ("succeeded", 1, {"jobs": 2}),
    }


def test_outage_errors_are_told_from_other_errors() -> None:
    assert is_store_outage(REFUSED)
    assert outage.is_outage(JVM_ERROR)
    wrapped = RuntimeError("committing the batch failed")
    wrapped.__cause__ = REFUSED
    assert outage.is_outage(wrapped)  # through the cause chain
    assert not outage.is_outage(RuntimeError("spark went away"))
    spark_master_down = "java.net.ConnectException: Connection refused (spark://master:7077)"
    assert not outage.is_outage(RuntimeError(spark_master_down))
    assert not outage.is_outage(ValueError("invalid literal for int() with base 10: 'abc'"))
    assert outage.describe(JVM_ERROR) == (
        "RuntimeError: terminating connection due to administrator command"
    )


def test_a_job_broken_by_an_outage_resumes_in_the_same_attempt(client: TestClient) -> None:
    job_id = completed_batch(client)
    calls: list[int] = []

    def broken_twice(ctx: runtime.JobContext) -> dict[str, object]:
        calls.append(ctx.attempt)
        if len(calls) == 1:
            raise REFUSED
        if len(calls) == 2:
            raise JVM_ERROR
        return {"done": True}

    runtime.run_job(job_id, broken_twice)
    assert calls == [1, 1, 1]
    job = client.get(f"/v1/jobs/{job_id}").json()
    assert (job["state"], job["attempt"], job["result"]) == ("succeeded", 1, {"done": True})


def test_an_outage_that_never_ends_for_the_job_counts_as_a_failure(client: TestClient) -> None:
    """A handler that keeps failing with outage errors while the store answers is not paused
    forever: after MAX_OUTAGE_RESUMES resumes its error is retried like any other."""
    job_id = completed_batch(client)
    calls: list[int] = []

    def always(ctx: runtime.JobContext) -> dict[str, object]:
        calls.append(ctx.attempt)
        raise REFUSED

    runtime.run_job(job_id, always)
    assert calls == [1] * (runtime.MAX_OUTAGE_RESUMES + 1)
    job = client.get(f"/v1/jobs/{job_id}").json()
    assert (job["state"], job["stage"], job["attempt"]) == ("queued", "retrying", 1)
    assert "connection refused" in job["error"]


def test_a_broker_restart_resends_the_queued_jobs_messages_at_once(
    client: TestClient, private_redis: PrivateRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis keeps nothing on disk here: a restart loses every message. The reconciler sees
    the new server (its run id) and re-sends the messages of jobs still queued, without
    waiting the 5 × stale_after_seconds after which a message counts as forgotten."""
    job_id = completed_batch(client)  # queued; its message went out a moment ago
    monkeypatch.setattr(get_settings(), "broker_url", private_redis.url)
    watcher = reconciler.Reconciler()
    assert watcher.run_once() is not None
    assert len(outbox(job_id)) == 1

    private_redis.kill()
    assert watcher.run_once() is not None  # the broker is away: nothing to tell yet
    private_redis.start()
    counts = watcher.run_once()
    assert counts is not None
    assert counts["requeued"] >= 1
    assert len(outbox(job_id)) == 2
    assert watcher.run_once() is not None
    assert len(outbox(job_id)) == 2  # once per restart, not once per pass


def test_heartbeats_missed_during_an_outage_do_not_requeue_a_live_job(client: TestClient) -> None:
    reconciler.reconcile_once()  # re-queues what other tests left stale: the counts below are ours
    job_id = completed_batch(client)
    ctx = runtime.claim(job_id)
    assert ctx is not None
    stale_after = timedelta(seconds=get_settings().stale_after_seconds)
    now = datetime.now(UTC)
    with session_scope() as session:  # the last beat before the store went away; last attempt
        session.execute(
            update(Job)
            .where(Job.id == job_id)
            .values(heartbeat_at=now - 2 * stale_after, max_attempts=1)
        )

    # the store came back a moment ago: the job's worker has not had a chance to beat yet
    counts = reconciler.reconcile_once(store_back_at=now - stale_after / 2)
    assert (counts["requeued"], counts["failed"]) == (0, 0)
    job = client.get(f"/v1/jobs/{job_id}").json()
    assert (job["state"], job["attempt"]) == ("running", 1)  # still this attempt's

    # a full stale period of store uptime with no beat: now the worker is taken for dead
    counts = reconciler.reconcile_once(store_back_at=now - stale_after)
    assert counts["failed"] == 1
    job = client.get(f"/v1/jobs/{job_id}").json()
    assert job["state"] == "failed"
