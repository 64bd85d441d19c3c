"""A dumper run stages what was accepted when it began, then leaves its worker slot: in
bench.cdc's sustained phase (Debezium arrays of 200, a request every few milliseconds) one run
followed the new chunks for 73 s, and with two slots the tenants' processors waited for them.
The CDC scheduler's next pass queues the next run. Without Spark: the dumper appends with
PyIceberg."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.cdc import service
from app.db import session_scope
from app.jobs.kinds import JobKind
from app.models import CdcTenant, Job
from tests.fixtures.clients import ClientFactory
from tests.fixtures.environments import Environment
from tests.workers.restatements.test_carried import run
from workers.cdc import stage
from workers.cdc.task import schedule_cdc

NOW = datetime.now(UTC) - timedelta(minutes=1)


def events(first: int, count: int) -> bytes:
    return "".join(
        json.dumps(
            {
                "op": "PUT",
                "entity_id": f"e{n}",
                "record_type": "profile",
                "timestamp": (NOW + timedelta(milliseconds=n)).isoformat(),
                "payload": {"n": n},
            }
        )
        + "\n"
        for n in range(first, first + count)
    ).encode()


def post(client: TestClient, body: bytes) -> dict[str, Any]:
    answer = client.post(
        "/v1/cdc/events", content=body, headers={"Content-Type": "application/x-ndjson"}
    )
    assert answer.status_code == 202, answer.text
    accepted: dict[str, Any] = answer.json()
    return accepted


def seqs(org: str) -> tuple[int, int]:
    with session_scope() as session:
        tenant = session.get(CdcTenant, org)
        assert tenant is not None
        return tenant.accepted_seq, tenant.staged_seq


def test_a_run_stages_what_was_accepted_when_it_began(
    client_for: ClientFactory, stack: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = client_for()
    org = client.org  # type: ignore[attr-defined]
    assert post(client, events(0, 30))["last_sequence"] == 30
    with session_scope() as session:
        job_id = service.ensure_job(session, org, JobKind.CDC_STAGE, None).id

    appended = stage._append
    calls: list[int] = []

    def append_while_posting(*args: Any) -> None:
        appended(*args)
        calls.append(args[-1])
        if len(calls) == 1:  # a client posts on while the run appends
            post(client, events(30, 20))

    monkeypatch.setattr(stage, "_append", append_while_posting)
    run(job_id)
    with session_scope() as session:
        result = session.scalar(select(Job.result).where(Job.id == job_id))
    assert result is not None
    assert result["staged"] == 30
    assert calls == [30]  # one append, then the run left
    assert seqs(org) == (50, 30)

    # the next pass queues the next run, which takes the rest
    assert org in schedule_cdc()["stage"]
    with session_scope() as session:
        nxt = service.active_job(session, org, JobKind.CDC_STAGE)
        assert nxt is not None
        next_id = nxt.id
    assert next_id != job_id
    run(next_id)
    assert seqs(org) == (50, 50)
