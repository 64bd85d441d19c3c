"""Fair use over HTTP (in process): the request rate per org, its headers and shortcut, and the
cap on jobs in flight."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from tests.fixtures.batches import CSV
from tests.fixtures.clients import ClientFactory
from tests.fixtures.datasets import EVENTS
from tests.fixtures.statements import Statements

SetLimits = Callable[[dict[str, dict[str, Any]]], None]


@pytest.fixture
def org_limits(client_for: ClientFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[SetLimits]:
    """`org_limits({org: {...}})` sets ICEBATCH_ORG_LIMITS for the rest of the test."""
    from app.config import get_settings

    def set_limits(limits: dict[str, dict[str, Any]]) -> None:
        monkeypatch.setenv("ICEBATCH_ORG_LIMITS", json.dumps(limits))
        get_settings.cache_clear()

    yield set_limits
    monkeypatch.delenv("ICEBATCH_ORG_LIMITS", raising=False)
    get_settings.cache_clear()


def _retry_afters(refilled_from: float, refilled_to: float, interval: float) -> set[str]:
    """The Retry-After values a refusal may carry when the bucket refilled for between
    `refilled_from` and `refilled_to` seconds since the first request took a token (a token
    every `interval` seconds): the test's requests take a variable time on a loaded machine."""
    low = max(1, math.ceil(interval - refilled_to))
    high = max(1, math.ceil(interval - refilled_from))
    return {str(s) for s in range(low, high + 1)}


def test_request_rate_per_org(client_for: ClientFactory, org_limits: SetLimits) -> None:
    flooder, quiet = client_for(), client_for()
    # one token every 10 s: the bucket does not refill a whole token while the test runs
    org_limits({flooder.org: {"rate_limit_per_second": 0.1, "rate_limit_burst": 3}})  # type: ignore[attr-defined]

    before_first = time.monotonic()
    admitted = [flooder.get("/v1/datasets") for _ in range(3)]
    assert [r.status_code for r in admitted] == [200] * 3
    assert [r.headers["RateLimit-Remaining"] for r in admitted] == ["2", "1", "0"]
    assert {r.headers["RateLimit-Limit"] for r in admitted} == {"3"}

    started = time.monotonic()
    with Statements() as first_lookup:
        refused = flooder.get("/v1/datasets")
    refused_at = time.monotonic()
    first_refusal = refused_at - started
    fourth_started = started
    assert refused.status_code == 429
    assert refused.headers["content-type"] == "application/problem+json"
    # one token every 10 s, less what refilled since the first request took one
    expected = _retry_afters(0, refused_at - before_first, 10)
    assert refused.headers["Retry-After"] in expected
    assert refused.headers["RateLimit-Remaining"] == "0"
    assert refused.headers["X-Request-Id"]
    body = refused.json()
    assert body["status"] == 429
    assert body["limit"] == "request_rate"
    assert str(body["retry_after_seconds"]) == refused.headers["Retry-After"]
    assert (
        f"0.1 requests a second (bursts of 3); retry after {refused.headers['Retry-After']} s"
        in body["detail"]
    )
    # found by the key lookup and the bucket, answered at once (the shortcut below holds it)
    assert first_refusal < 0.5
    from app.config import get_settings

    if get_settings().database_url.startswith("sqlite"):  # no key cache: the lookup is SQL
        assert first_lookup.count > 0

    # the refused key is now answered before routing (no SQL at all), and only once its bucket
    # admits again, at most a second later: a client ignoring Retry-After cannot spin
    with Statements() as later:
        started = time.monotonic()
        again = flooder.put("/v1/batches/b/files/a.csv", content=CSV)
        answered_at = time.monotonic()
    held = answered_at - started
    assert later.count == 0
    assert again.status_code == 429
    assert 0.9 <= held < 2.0  # held for the second, not for the 9 s left
    assert again.json()["limit"] == "request_rate"
    assert again.json()["instance"] == "/v1/batches/b/files/a.csv"
    # the 10 s interval, less the time since the first request took a token (a second of it held)
    assert again.headers["Retry-After"] in _retry_afters(
        started - fourth_started, answered_at - before_first, 10
    )
    assert int(again.headers["Retry-After"]) < int(refused.headers["Retry-After"])

    # other orgs keep their own bucket (the default: 100 a second, bursts of 200)
    calm = quiet.get("/v1/datasets")
    assert calm.status_code == 200
    assert calm.headers["RateLimit-Limit"] == "200"
    assert calm.headers["RateLimit-Remaining"] == "199"
    # no key: 401 (nothing to count against), with no rate headers
    anonymous = TestClient(flooder.app).get("/v1/datasets")
    assert anonymous.status_code == 401
    assert "RateLimit-Limit" not in anonymous.headers


def test_rate_limit_zero_is_off(client_for: ClientFactory, org_limits: SetLimits) -> None:
    client = client_for()
    org_limits({client.org: {"rate_limit_per_second": 0}})  # type: ignore[attr-defined]
    responses = [client.get("/v1/jobs") for _ in range(5)]
    assert {r.status_code for r in responses} == {200}
    assert "RateLimit-Limit" not in responses[0].headers


def _loaded_batch(client: TestClient, dataset_id: str) -> str:
    batch_id: str = client.post(
        "/v1/batches", json={"dataset_id": dataset_id, "format": "csv"}
    ).json()["id"]
    assert client.put(f"/v1/batches/{batch_id}/files/a.csv", content=CSV).status_code == 201
    return batch_id


def test_jobs_in_flight_per_org(client_for: ClientFactory, org_limits: SetLimits) -> None:
    from app.db import session_scope
    from app.jobs import repository
    from app.jobs import service as jobs
    from app.jobs.kinds import JobKind
    from app.models import Job, JobState

    client, other = client_for(), client_for()
    org: str = client.org  # type: ignore[attr-defined]
    org_limits({org: {"max_inflight_jobs": 2}, other.org: {"max_inflight_jobs": 2}})  # type: ignore[attr-defined]
    dataset_id = client.post("/v1/datasets", json=EVENTS).json()["id"]
    first, second, third = (_loaded_batch(client, dataset_id) for _ in range(3))

    def complete(batch_id: str, key: str | None = None) -> Any:
        headers = {"Idempotency-Key": key} if key else {}
        return client.post(
            f"/v1/batches/{batch_id}", params={"action": "COMPLETE"}, headers=headers
        )

    accepted = complete(first, "complete-first")
    assert accepted.status_code == 202
    assert complete(second).status_code == 202
    refused = complete(third)
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "10"
    body = refused.json()
    assert body["limit"] == "inflight_jobs"
    assert "has 2 jobs queued or running, its limit; retry after 10 s" in body["detail"]
    # nothing of the refused request is left: the batch is still loading, no third job
    assert client.get(f"/v1/batches/{third}").json()["status"] == "loading"
    assert len(client.get("/v1/jobs").json()["items"]) == 2
    # a retry of an accepted request still gets its stored response
    replayed = complete(first, "complete-first")
    assert replayed.status_code == 202
    assert replayed.headers["Idempotent-Replayed"] == "true"
    assert replayed.json()["job"]["id"] == accepted.json()["job"]["id"]
    # the other org's jobs are its own
    other_dataset = other.post("/v1/datasets", json=EVENTS).json()["id"]
    other_batch = _loaded_batch(other, other_dataset)
    assert (
        other.post(f"/v1/batches/{other_batch}", params={"action": "COMPLETE"}).status_code == 202
    )

    with session_scope() as session:  # one job finishes
        session.execute(
            update(Job)
            .where(Job.id == accepted.json()["job"]["id"])
            .values(state=JobState.SUCCEEDED)
        )
    retried = complete(third)
    assert retried.status_code == 202, retried.text
    assert retried.json()["batch"]["status"] == "staged"

    # the scheduler's jobs (no request) are never refused, though they count
    with session_scope() as session:
        jobs.enqueue(session, JobKind.EXPIRE, org=org, subject_id=dataset_id)
        assert repository.count_active(session, org, up_to=100) == 3
    assert complete(_loaded_batch(client, dataset_id)).status_code == 429
