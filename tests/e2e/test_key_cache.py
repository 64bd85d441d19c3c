"""The API processes' caches against real processes: two API processes (`icebatch api
--workers 2`) on PostgreSQL keep keys and batch versions in memory, and a change made by another
process — the CLI, a plain SQL UPDATE — reaches both within a second.

Each request opens its own connection, so the kernel spreads them over both processes; 40 of
them all answering the same, after a warm-up in which both processes cached the key, is what
"every process" means here.
"""

from __future__ import annotations

import time

import httpx
import psycopg
import pytest

from tests.fixtures.batches import CSV
from tests.fixtures.datasets import EVENTS
from tests.fixtures.service import TLS, Service, new_org

pytestmark = pytest.mark.e2e
SPREAD = 40  # requests, each on a fresh connection


def statuses(
    service: Service, path: str, key: str, headers: dict[str, str] | None = None
) -> set[int]:
    return {
        httpx.get(
            f"{service.url}{path}",
            headers={"Authorization": f"Bearer {key}", **(headers or {})},
            verify=TLS,
        ).status_code
        for _ in range(SPREAD)
    }


def one_second_after(changed_at: float) -> None:
    """Wait until a second after `changed_at` (time.monotonic())."""
    time.sleep(max(0.0, changed_at + 1.0 - time.monotonic()))


@pytest.mark.parametrize("service", ["postgres"], indirect=True)
def test_a_revocation_and_an_expiry_reach_every_api_process_within_a_second(
    service: Service,
) -> None:
    service.api_processes = 2
    org = new_org()
    service.start_api()
    key = service.create_key(org)
    expiring = service.client(key).post("/v1/keys", json={"scope": "read", "expires_in": "20s"})
    assert expiring.status_code == 201, expiring.text
    short, short_id = expiring.json()["key"], expiring.json()["id"]
    with service.client(key) as c:
        victim = c.post("/v1/keys", json={"scope": "read"}).json()
    # both processes have both keys cached (and the channel is up: a key read once is kept)
    time.sleep(1.5)
    assert statuses(service, "/v1/datasets", victim["key"]) == {200}
    assert statuses(service, "/v1/datasets", short) == {200}

    service.cli("keys", "revoke", victim["id"])  # another process: the CLI, on the store
    one_second_after(time.monotonic())
    assert statuses(service, "/v1/datasets", victim["key"]) == {401}
    assert statuses(service, "/v1/datasets", key) == {200}  # the others keep working

    # expiry: checked on every request against the cached expiry, no message needed
    with psycopg.connect(service.env["ICEBATCH_DATABASE_URL"]) as conn:
        expires_at = conn.execute(
            "SELECT expires_at FROM api_keys WHERE id = %s", (short_id,)
        ).fetchone()
    assert expires_at is not None
    time.sleep(max(0.0, expires_at[0].timestamp() - time.time()))
    one_second_after(time.monotonic())
    assert statuses(service, "/v1/datasets", short) == {401}


@pytest.mark.parametrize("service", ["postgres"], indirect=True)
def test_a_batch_changed_by_another_process_is_never_304_for_long(service: Service) -> None:
    """A batch's tag is cached on both processes; a write by another process (here plain SQL,
    as a worker or an operator's fix would) makes its old tag answer 200, with the new body,
    on both within a second."""
    service.api_processes = 2
    service.start_api()
    key = service.create_key(new_org())
    with service.client(key) as c:
        dataset = c.post("/v1/datasets", json=EVENTS).json()["id"]
        batch = c.post("/v1/batches", json={"dataset_id": dataset, "format": "csv"}).json()["id"]
        assert c.put(f"/v1/batches/{batch}/files/a.csv", content=CSV).status_code == 201
        assert c.post(f"/v1/batches/{batch}?action=COMPLETE").status_code == 202  # staged
        first = c.get(f"/v1/batches/{batch}")
    assert first.json()["status"] == "staged"
    tag = first.headers["etag"]
    time.sleep(1.5)
    assert statuses(service, f"/v1/batches/{batch}", key, {"If-None-Match": tag}) == {304}

    with psycopg.connect(service.env["ICEBATCH_DATABASE_URL"]) as conn:
        conn.execute(
            "UPDATE batches SET row_count = 41, updated_at = now() WHERE id = %s", (batch,)
        )
    one_second_after(time.monotonic())
    assert statuses(service, f"/v1/batches/{batch}", key, {"If-None-Match": tag}) == {200}
    bodies = {
        httpx.get(
            f"{service.url}/v1/batches/{batch}",
            headers={"Authorization": f"Bearer {key}"},
            verify=TLS,
        ).json()["row_count"]
        for _ in range(SPREAD)
    }
    assert bodies == {41}
