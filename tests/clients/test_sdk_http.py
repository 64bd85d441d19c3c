"""The SDK against a real `icebatch api` (embedded): typed errors from problem+json, retries
that honour a real 429's Retry-After, and an Idempotency-Key that makes a retried POST act once."""

from __future__ import annotations

import time

import httpx
import pytest
from icebatch_client import Conflict, Icebatch, NotFound, Unauthorized, ValidationFailed

from tests.fixtures.datasets import EVENTS
from tests.fixtures.service import Service, new_org

pytestmark = pytest.mark.e2e


class LoseFirstAnswer(httpx.BaseTransport):
    """The server gets and answers the first POST, but its answer never reaches the client."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.sent: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        response = self.inner.handle_request(request)
        if request.method == "POST" and len([r for r in self.sent if r.method == "POST"]) == 1:
            response.read()
            raise httpx.ReadError("connection reset after the server answered", request=request)
        return response


@pytest.mark.parametrize("service", ["embedded"], indirect=True)
def test_errors_retries_and_idempotency(service: Service) -> None:
    service.env["ICEBATCH_RATE_LIMIT_PER_SECOND"] = "2"
    service.env["ICEBATCH_RATE_LIMIT_BURST"] = "2"
    service.start_api()
    key = service.create_key(new_org())

    # typed errors carry the problem's detail and the request id
    with pytest.raises(Unauthorized) as denied:
        Icebatch(service.url, "ib_0_wrong").get_batch("x")
    assert "unknown" in denied.value.detail
    ib = Icebatch(service.url, key, max_retries=8)
    with pytest.raises(NotFound) as missing:
        ib.get_batch("00000000-0000-0000-0000-000000000000")
    assert missing.value.status == 404
    assert missing.value.problem["status"] == 404
    assert len(missing.value.request_id or "") >= 8

    # a lost answer: the POST is sent again with the same Idempotency-Key; one dataset exists
    lossy = LoseFirstAnswer()
    created = Icebatch(service.url, key, transport=lossy).create_dataset(
        "events", EVENTS["schema"], partition=EVENTS["partition"]
    )
    posts = [r for r in lossy.sent if r.method == "POST"]
    assert len(posts) >= 2  # the lost one, its retry (and any retry of a 429 on the way)
    assert len({p.headers["Idempotency-Key"] for p in posts}) == 1
    assert [d.id for d in ib.iter_datasets()] == [created.id]
    with pytest.raises(Conflict):  # a new logical POST gets a new key: the name is taken
        ib.create_dataset("events", EVENTS["schema"])
    with pytest.raises(ValidationFailed) as invalid:
        ib.create_dataset("Bad Name", EVENTS["schema"])
    assert "name" in invalid.value.detail.lower()

    # 2 requests a second: a burst of 12 calls meets real 429s, waits as told, and all succeed
    time.sleep(1.5)
    started = time.monotonic()
    for _ in range(12):
        assert ib.get_dataset(created.id).id == created.id
    assert time.monotonic() - started >= 3.5  # ~10 calls beyond the burst, 2 a second
    no_retries = Icebatch(service.url, key, max_retries=0)
    answers = []
    for _ in range(6):
        try:
            no_retries.get_dataset(created.id)
            answers.append(200)
        except Exception as exc:  # noqa: BLE001
            answers.append(getattr(exc, "status", 0))
    assert 429 in answers  # the limit is real: without retries it shows


@pytest.mark.parametrize("service", ["embedded"], indirect=True)
def test_debezium_values_sent_again_after_a_lost_answer_count_as_duplicates(
    service: Service,
) -> None:
    """The SDK posts Debezium values as the HTTP sink does; an answer lost on the way makes it
    send the array again, and the log positions make that second delivery change nothing."""
    from tests.fixtures.debezium import pg_event

    service.start_api()
    key = service.create_key(new_org())
    lossy = LoseFirstAnswer()
    ib = Icebatch(service.url, key, transport=lossy)
    values = [pg_event("c", 1, 100), None, pg_event("u", 1, 110), pg_event("c", 2, 120)]
    (answer,) = ib.post_debezium(values)
    posts = [r for r in lossy.sent if r.method == "POST"]
    assert len(posts) == 2  # the first reached the server, its answer did not reach us
    assert (answer.accepted, answer.duplicates, answer.skipped) == (0, 3, 1)
    assert ib.cdc_lag().accepted == 3  # each change once
