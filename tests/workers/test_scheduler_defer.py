"""The scheduler holds a dataset's automatic compaction and expire back while its restatements
are in flight (`maintenance_defer_seconds`): in the 0.9/0.05/0.05 mix (bench/RESULTS.md) they
ran inside the bursts, 5-12 s of a worker slot and the commit lease each, ahead of the burst's
group commits. Without Spark: the batches take the small-batch path."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from app import clock
from app.config import get_settings
from app.db import session_scope
from app.jobs.kinds import JobKind
from app.models import Job, JobState, Restatement, RestatementState
from tests.fixtures.datasets import EVENTS
from tests.fixtures.environments import Environment
from tests.workers.restatements.test_carried import deliver
from tests.workers.restatements.test_replay_handoff import batch
from workers.scheduler import held_back, schedule_once

HEADER = b"event_id,user_id,event_time,payload\n"


def restatement(org: str, did: str) -> str:
    """A GDPR restatement of the dataset, ready (waiting for its group commit)."""
    with session_scope() as session:
        row = Restatement(
            org=org,
            dataset_id=did,
            kind="gdpr",
            state=RestatementState.READY,
            request_id=str(uuid.uuid4()),
            column="user_id",
            ids=["nobody"],
        )
        session.add(row)
        session.flush()
        return row.id


def last_job(org: str, did: str, kind: JobKind, seconds_ago: float) -> None:
    """A finished job of `kind` on the dataset that started `seconds_ago`."""
    with session_scope() as session:
        now = clock.db_now(session)
        session.add(
            Job(
                org=org,
                kind=kind.value,
                task_name=kind.task.value,
                subject_id=did,
                request_id=f"req-{uuid.uuid4()}",
                state=JobState.SUCCEEDED,
                started_at=now - timedelta(seconds=seconds_ago),
                finished_at=now,
            )
        )


def settle(restatement_id: str) -> None:
    with session_scope() as session:
        session.execute(
            update(Restatement)
            .where(Restatement.id == restatement_id)
            .values(state=RestatementState.COMMITTED)
        )


def test_held_back_only_while_restatements_are_in_flight_and_not_for_long(
    client: TestClient, stack: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    org = client.org  # type: ignore[attr-defined]
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    defer = get_settings().maintenance_defer_seconds
    assert defer >= 60

    def held(kind: JobKind) -> bool:
        with session_scope() as session:
            return held_back(session, did, kind)

    last_job(org, did, JobKind.COMPACT, seconds_ago=10)
    assert not held(JobKind.COMPACT)  # nothing in flight
    pending = restatement(org, did)
    assert held(JobKind.COMPACT)
    assert not held(JobKind.EXPIRE)  # none ever ran: not held back
    last_job(org, did, JobKind.EXPIRE, seconds_ago=defer + 5)
    assert not held(JobKind.EXPIRE)  # held back long enough: runs although restatements wait
    monkeypatch.setattr(get_settings(), "maintenance_defer_seconds", 0)
    assert not held(JobKind.COMPACT)  # off
    monkeypatch.setattr(get_settings(), "maintenance_defer_seconds", defer)
    settle(pending)
    assert not held(JobKind.COMPACT)


def test_the_scheduler_compacts_once_the_burst_is_committed(
    client: TestClient, stack: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(get_settings(), "auto_compact_small_files", 3)
    org = client.org  # type: ignore[attr-defined]
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    for n in range(3):  # small batches of one day: one partition, a file each
        batch(client, did, HEADER + f"{n},u{n},2026-11-01T10:00:00,x\n".encode())
        deliver(org)
    last_job(org, did, JobKind.COMPACT, seconds_ago=30)  # an earlier compaction
    pending = restatement(org, did)
    assert did not in schedule_once()["compact"]  # the restatement goes first
    settle(pending)
    assert did in schedule_once()["compact"]
