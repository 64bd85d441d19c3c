"""Vacuums, compactions and expiries never take every slot of a worker (`workers/slots.py`): at
100k restatements a compaction and an expiry took both slots of a `--concurrency 2` worker for
13 s while a burst's GDPR deletes waited for one; the materializer, a second's work, is not
counted. Without Spark: the handlers here are the test's own."""

from __future__ import annotations

import threading
import time

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.config import get_settings
from app.db import session_scope
from app.jobs import service as jobs
from app.jobs.kinds import CompactPayload, JobKind, TaskName
from app.models import JobState, OutboxMessage
from tests.fixtures.datasets import EVENTS
from tests.fixtures.environments import Environment
from tests.workers.restatements.test_replay_handoff import job
from workers import runtime, slots


def queued_job(org: str, did: str, kind: JobKind) -> str:
    """A job of `kind` on the dataset, queued, with no message sent."""
    payload = CompactPayload(target_file_bytes=1 << 20) if kind == JobKind.COMPACT else None
    with session_scope() as session:
        queued = jobs.enqueue(
            session, kind, org=org, subject_id=did, payload=payload, publish=False
        )
        return queued.id


def messages(job_id: str) -> list[OutboxMessage]:
    with session_scope() as session:
        return list(session.scalars(select(OutboxMessage).where(OutboxMessage.job_id == job_id)))


@pytest.mark.parametrize(
    ("concurrency", "reserved", "limit"), [(1, 1, 1), (2, 1, 1), (4, 1, 3), (3, 0, 3), (2, 5, 1)]
)
def test_maintenance_may_take_all_but_the_reserved_slots_and_always_one(
    monkeypatch: pytest.MonkeyPatch, concurrency: int, reserved: int, limit: int
) -> None:
    monkeypatch.setattr(get_settings(), "worker_reserved_slots", reserved)
    pool = slots.Slots(concurrency)
    assert pool.limit == limit
    held = []
    for _ in range(limit):
        taking = pool.maintenance()
        assert taking.__enter__() is True
        held.append(taking)
    with pool.maintenance() as taken:
        assert not taken  # all the share is running
    held.pop().__exit__(None, None, None)
    with pool.maintenance() as taken:
        assert taken  # one ended: its slot is free again


def test_a_process_that_is_no_worker_runs_every_maintenance_task_at_once() -> None:
    pool = slots.Slots()  # not sized: tasks called in-process (the tests' `run_jobs`)
    with pool.maintenance() as first, pool.maintenance() as second:
        assert first
        assert second


def test_a_maintenance_job_with_no_slot_waits_in_the_queue_and_others_run(
    client: TestClient, stack: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    org = client.org  # type: ignore[attr-defined]
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    monkeypatch.setattr(get_settings(), "worker_reserved_slots", 1)
    monkeypatch.setattr(get_settings(), "maintenance_slot_retry_seconds", 30.0)
    pool = slots.Slots(2)  # a `--concurrency 2` worker: one maintenance job at a time
    compaction, expiry = queued_job(org, did, JobKind.COMPACT), queued_job(org, did, JobKind.EXPIRE)
    gdpr = queued_job(org, did, JobKind.GDPR)
    materialize = queued_job(org, did, JobKind.MATERIALIZE)
    running, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def handler(ctx: runtime.JobContext) -> dict[str, str]:
        ran.append(ctx.job_id)
        if ctx.job_id == compaction:
            running.set()
            assert release.wait(30)
        return {}

    def deliver(name: TaskName, job_id: str) -> None:
        slots.run(name, job_id, lambda: runtime.run_job(job_id, handler), pool)

    first = threading.Thread(target=deliver, args=(TaskName.REWRITE, compaction))
    first.start()
    try:
        assert running.wait(30)
        before = len(messages(expiry))
        deliver(TaskName.EXPIRE, expiry)  # returns at once: its slot is free for other work
        waiting = job(expiry)
        assert (waiting.state, waiting.stage, waiting.attempt) == (
            JobState.QUEUED,
            "waiting-for-slot",
            0,
        )
        assert len(messages(expiry)) == before + 1  # sent again, not lost
        deliver(TaskName.EXPIRE, expiry)  # a second delivery while still busy: one stage entry
        assert [s["stage"] for s in job(expiry).stages or []].count("waiting-for-slot") == 1
        deliver(TaskName.RESTATE, gdpr)  # the reserved slot: not maintenance, runs meanwhile
        assert job(gdpr).state == JobState.SUCCEEDED
        deliver(TaskName.MATERIALIZE, materialize)  # a second's work that other engines wait for
        assert job(materialize).state == JobState.SUCCEEDED
        assert ran == [compaction, gdpr, materialize]
    finally:
        release.set()
        first.join(30)
    assert job(compaction).state == JobState.SUCCEEDED
    deliver(TaskName.EXPIRE, expiry)  # the slot is free now: the message runs it
    done = job(expiry)
    assert done.state == JobState.SUCCEEDED
    assert [s["stage"] for s in done.stages or []][:3] == ["queued", "waiting-for-slot", "starting"]
    assert ran == [compaction, gdpr, materialize, expiry]


def test_a_message_for_a_job_no_longer_queued_is_not_sent_again(
    client: TestClient, stack: Environment
) -> None:
    org = client.org  # type: ignore[attr-defined]
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    expiry = queued_job(org, did, JobKind.EXPIRE)
    runtime.run_job(expiry, lambda ctx: {})
    before = len(messages(expiry))
    assert not jobs.wait_for_slot(expiry, 1.0)  # a duplicate delivery of a finished job
    assert len(messages(expiry)) == before
    assert job(expiry).stage == "done"


def test_the_pruning_pass_runs_in_the_maintenance_share(
    stack: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The beat's pruning pass takes a maintenance slot: with the share taken (a vacuum running
    on a `--concurrency 2` worker) it leaves the reserved slot free and is sent again, until the
    beat's next pass is due; with a slot free it runs, holding the share while it does."""
    from app.pruning import service
    from workers import scheduler

    monkeypatch.setattr(get_settings(), "worker_reserved_slots", 1)
    monkeypatch.setattr(get_settings(), "maintenance_slot_retry_seconds", 2.0)
    pool = slots.Slots(2)
    monkeypatch.setattr(slots, "SLOTS", pool)
    passes: list[bool] = []  # per pass: whether the share was free for another job meanwhile
    real = service.prune

    def prune(settings: object = None) -> dict[str, int]:
        with pool.maintenance() as free:
            passes.append(free)
        return real()

    monkeypatch.setattr(service, "prune", prune)
    sent: list[dict[str, object]] = []
    monkeypatch.setattr(scheduler.prune_task, "apply_async", lambda **options: sent.append(options))
    vacuum = pool.maintenance()
    assert vacuum.__enter__() is True  # the one maintenance slot of two
    try:
        began = time.time()
        assert scheduler.prune_task() == {}
        assert passes == []  # no pass: the reserved slot stays free for restatements
        [again] = sent
        assert again["countdown"] == 2.0
        until = again["kwargs"]["until"]  # type: ignore[index]
        assert (
            began + get_settings().prune_seconds
            <= until
            <= time.time() + get_settings().prune_seconds
        )
        assert scheduler.prune_task(until=until) == {}  # still taken: sent again, same deadline
        assert sent[1] == again
        assert scheduler.prune_task(until=time.time() + 1.0) == {}  # the beat's next is due
        assert len(sent) == 2
        assert passes == []
    finally:
        vacuum.__exit__(None, None, None)
    result = scheduler.prune_task(until=time.time() + 60)
    assert set(service.TABLES) | {"audit_events"} == result.keys()
    assert passes == [False]  # it ran holding the share
    assert len(sent) == 2
