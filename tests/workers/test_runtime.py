"""The job runtime on the real metadata stores: outbox, claim, fencing, stale heartbeats."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from app.db import session_scope
from app.jobs import reconciler, repository
from app.jobs.broker import get_celery, make_celery
from app.models import Batch, Job, OutboxMessage
from tests.fixtures.batches import CSV, open_batch
from tests.fixtures.datasets import EVENTS
from workers import runtime


def completed_batch(client: TestClient) -> tuple[str, str]:
    _, batch_id = open_batch(client)
    client.put(f"/v1/batches/{batch_id}/files/a.csv", content=CSV)
    job = client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"}).json()["job"]
    return batch_id, job["id"]


def outbox(job_id: str) -> list[OutboxMessage]:
    with session_scope() as session:
        return list(session.scalars(select(OutboxMessage).where(OutboxMessage.job_id == job_id)))


def test_broker_down_keeps_the_message_for_the_reconciler(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.config import get_settings

    settings = get_settings()
    down = make_celery(settings.model_copy(update={"broker_url": "redis://127.0.0.1:1/0"}))
    monkeypatch.setattr("app.jobs.service.get_celery", lambda: down)
    _, job_id = completed_batch(client)
    [message] = outbox(job_id)
    assert message.published_at is None  # the request still succeeded, nothing was lost

    monkeypatch.setattr("app.jobs.service.get_celery", get_celery)
    monkeypatch.setattr(settings, "outbox_grace_seconds", 0.0)
    counts = reconciler.reconcile_once()
    assert counts["republished"] >= 1
    [message] = outbox(job_id)
    assert message.published_at is not None


def test_claim_is_exclusive_and_fenced(client: TestClient) -> None:
    reconciler.reconcile_once()  # re-queues what other tests left stale: the count below is ours
    _, job_id = completed_batch(client)
    first = runtime.claim(job_id)
    assert first is not None
    assert first.attempt == 1
    assert runtime.claim(job_id) is None  # a duplicate delivery gets nothing

    # the worker goes silent; the reconciler hands the job to a new attempt
    with session_scope() as session:
        session.execute(
            update(Job)
            .where(Job.id == job_id)
            .values(heartbeat_at=datetime.now(UTC) - timedelta(hours=1))
        )
    # ours, and any job another test on this store left running whose heartbeat went stale since
    # the first pass (CI: one did while this test's batch completed under load)
    assert reconciler.reconcile_once()["requeued"] >= 1
    with session_scope() as session:
        requeued = session.get(Job, job_id)
        assert requeued is not None
        assert (requeued.state, requeued.stage) == ("queued", "requeued")
    second = runtime.claim(job_id)
    assert second is not None
    assert second.attempt == 2
    with pytest.raises(runtime.LeaseLost):
        first.check_lease()  # the old attempt can no longer commit ...
    assert not runtime.finish(first, runtime.Succeeded({"stale": True}))  # ... nor write its result
    second.check_lease()
    assert runtime.finish(second, runtime.Succeeded({"ok": True}))
    with session_scope() as session:
        job = session.get(Job, job_id)
        assert job is not None
        assert (job.state, job.result, job.attempt) == ("succeeded", {"ok": True}, 2)


def test_the_last_heartbeat_carries_the_latest_stage(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The heartbeat thread's beat read the old stage; the handler moves to a new one and beats:
    the job row ends at the new stage, whichever beat reached the store first (a failed small
    ingest once showed `validating`, its heartbeat's, instead of `writing`)."""
    _, job_id = completed_batch(client)
    ctx = runtime.claim(job_id)
    assert ctx is not None
    ctx.set_stage("validating")
    real, read_old_stage, go_on = repository.beat, threading.Event(), threading.Event()

    def held_up(*args: Any, **kwargs: Any) -> bool:
        if threading.current_thread().name == "heartbeat" and not go_on.is_set():
            read_old_stage.set()  # its stage argument is read: the old one
            assert go_on.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(repository, "beat", held_up)
    heartbeat = threading.Thread(target=ctx.beat, name="heartbeat")
    heartbeat.start()
    assert read_old_stage.wait(30)
    ctx.stage = "writing"
    handler = threading.Thread(target=ctx.beat, name="handler")
    handler.start()
    handler.join(1.0)  # a beat that need not wait has written its stage by now
    go_on.set()
    heartbeat.join(30)
    handler.join(30)
    with session_scope() as session:
        job = session.get(Job, job_id)
        assert job is not None
        assert job.stage == "writing"


def test_exhausted_attempts_fail_the_job_and_the_batch(client: TestClient) -> None:
    batch_id, job_id = completed_batch(client)
    for _ in range(3):
        assert runtime.claim(job_id) is not None
        with session_scope() as session:
            session.execute(
                update(Job)
                .where(Job.id == job_id)
                .values(heartbeat_at=datetime.now(UTC) - timedelta(hours=1))
            )
        reconciler.reconcile_once()
    job = client.get(f"/v1/jobs/{job_id}").json()
    assert job["state"] == "failed"
    assert job["attempt"] == 3
    assert "stopped responding on each of 3 attempts" in job["error"]
    batch = client.get(f"/v1/batches/{batch_id}").json()
    assert batch["status"] == "failed"
    assert "stopped responding" in batch["errors"][0]["reason"]
    with session_scope() as session:
        assert session.get(Batch, batch_id) is not None


def test_handler_errors_retry_then_fail(client: TestClient) -> None:
    _, job_id = completed_batch(client)
    calls: list[int] = []

    def flaky(ctx: runtime.JobContext) -> dict[str, object]:
        calls.append(ctx.attempt)
        raise RuntimeError("spark went away")

    for _ in range(3):
        runtime.run_job(job_id, flaky)
    runtime.run_job(job_id, flaky)  # nothing left to run
    assert calls == [1, 2, 3]
    job = client.get(f"/v1/jobs/{job_id}").json()
    assert job["state"] == "failed"
    assert job["error"] == "RuntimeError: spark went away"


def test_a_queued_job_whose_message_was_lost_is_published_again(client: TestClient) -> None:
    """E.g. the embedded broker's message vanished with a killed worker before any claim."""
    # jobs other tests left in this store (a running one whose heartbeat went stale) are
    # re-queued now, with fresh messages, so that the counts below are this job's
    reconciler.reconcile_once()
    _, job_id = completed_batch(client)
    [first] = outbox(job_id)
    assert first.published_at is not None
    long_ago = datetime.now(UTC) - timedelta(hours=1)
    with session_scope() as session:
        session.execute(update(Job).where(Job.id == job_id).values(updated_at=long_ago))
        session.execute(
            update(OutboxMessage).where(OutboxMessage.id == first.id).values(published_at=long_ago)
        )
    assert reconciler.reconcile_once()["requeued"] == 1
    messages = outbox(job_id)
    assert len(messages) == 2
    assert all(m.published_at is not None for m in messages)
    # a fresh message stops further re-publishing until it, too, grows old
    assert reconciler.reconcile_once()["requeued"] == 0
    assert len(outbox(job_id)) == 2


def test_a_result_model_is_stored_with_the_fields_its_handler_set(client: TestClient) -> None:
    """A handler's model is stored as JSON with the fields it set (a default left out), a
    PermanentJobError's model too; a plain dict is stored as it is."""
    from app.jobs.results import CdcProcessResult, CdcStageResult

    def staged(ctx: runtime.JobContext) -> CdcStageResult:
        return CdcStageResult(staged=0)

    def invalid(ctx: runtime.JobContext) -> CdcStageResult:
        raise runtime.PermanentJobError("bad", CdcProcessResult(applied=0, watermark=3))

    def plain(ctx: runtime.JobContext) -> dict[str, object]:
        return {"applied": 1, "seconds": None}

    cases: list[tuple[runtime.Handler, str, dict[str, object]]] = [
        (staged, "succeeded", {"staged": 0}),
        (invalid, "failed", {"applied": 0, "watermark": 3}),
        (plain, "succeeded", {"applied": 1, "seconds": None}),
    ]
    dataset_id = client.post("/v1/datasets", json=EVENTS).json()["id"]
    for handler, state, result in cases:
        batch_id = client.post("/v1/batches", json={"dataset_id": dataset_id, "format": "csv"})
        batch_id = batch_id.json()["id"]
        client.put(f"/v1/batches/{batch_id}/files/a.csv", content=CSV)
        done = client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"})
        job_id = done.json()["job"]["id"]
        runtime.run_job(job_id, handler)
        job = client.get(f"/v1/jobs/{job_id}").json()
        assert (job["state"], job["result"]) == (state, result)
