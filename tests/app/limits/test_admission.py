"""Requests in flight per API process (`app.limits.admission`): never more than the pooled
connections at once; the others wait their turn, and only a wait longer than
`api_queue_seconds` answers 503. Driven through the middleware with a stand-in endpoint that
holds each request until the test lets it go."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
from starlette.types import Receive, Scope, Send

from app.config import get_settings
from app.limits.admission import AdmissionMiddleware

SLOTS = 3  # ICEBATCH_DB_POOL_SIZE 2 + ICEBATCH_DB_MAX_OVERFLOW 1


@pytest.fixture
def small_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("ICEBATCH_DB_POOL_SIZE", "2")
    monkeypatch.setenv("ICEBATCH_DB_MAX_OVERFLOW", "1")
    monkeypatch.setenv("ICEBATCH_API_QUEUE_SECONDS", "3")
    get_settings.cache_clear()
    yield
    monkeypatch.undo()
    get_settings.cache_clear()


class Held:
    """An endpoint that counts requests inside it and answers each when `release` says
    (`/healthz` at once)."""

    def __init__(self) -> None:
        self.inside = self.most = self.served = 0
        self.gate = asyncio.Semaphore(0)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.inside += 1
        self.most = max(self.most, self.inside)
        try:
            if scope["path"] != "/healthz":
                await self.gate.acquire()
        finally:
            self.inside -= 1
        self.served += 1
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    def release(self, n: int) -> None:
        for _ in range(n):
            self.gate.release()


def _client(app: Held) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=AdmissionMiddleware(app))
    return httpx.AsyncClient(transport=transport, base_url="http://api")


async def _settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0.01)


@pytest.mark.timeout(60)
@pytest.mark.usefixtures("small_process")
def test_requests_beyond_the_slots_wait_their_turn_and_all_succeed() -> None:
    async def scenario() -> None:
        held = Held()
        async with _client(held) as client:
            calls = [asyncio.create_task(client.get(f"/v1/batches/{i}")) for i in range(10)]
            await _settle()
            assert held.inside == SLOTS  # seven wait outside the endpoint
            for _ in range(4):  # let them through a few at a time, well within 3 s
                held.release(3)
                await _settle()
            answers = await asyncio.gather(*calls)
        assert [a.status_code for a in answers] == [200] * 10
        assert held.most == SLOTS
        assert held.served == 10

    asyncio.run(scenario())


@pytest.mark.timeout(60)
@pytest.mark.usefixtures("small_process")
def test_a_wait_longer_than_the_queue_time_is_a_503_that_ran_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ICEBATCH_API_QUEUE_SECONDS", "0.5")
    get_settings.cache_clear()

    async def scenario() -> None:
        held = Held()
        async with _client(held) as client:
            busy = [asyncio.create_task(client.get("/v1/jobs/x")) for _ in range(SLOTS)]
            await _settle()
            refused = await client.get("/v1/batches/late")
            catalog = await client.get("/iceberg/v1/config")
            health = await client.get("/healthz")  # never queued: it answers while all wait
            held.release(SLOTS + 1)  # the busy ones and the one after
            await asyncio.gather(*busy)
            after = await client.get("/v1/batches/after")
        assert refused.status_code == 503
        assert refused.headers["retry-after"] == "1"
        assert refused.headers["content-type"] == "application/problem+json"
        problem = refused.json()
        assert problem["type"].endswith("/api-overloaded")
        assert problem["instance"] == "/v1/batches/late"
        assert "0.5 s" in problem["detail"]
        assert catalog.status_code == 503
        assert catalog.json()["error"]["type"] == "ServiceUnavailableException"
        assert health.status_code == 200
        assert after.status_code == 200
        assert held.served == SLOTS + 2  # the busy ones, /healthz and the one after: not the 503s

    asyncio.run(scenario())
