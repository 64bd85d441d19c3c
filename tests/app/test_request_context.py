"""Every response carries the server's request id, and a job created by a request carries it."""

from __future__ import annotations

import uuid

from fastapi.testclient import TestClient

from tests.fixtures.batches import CSV, open_batch


def test_each_response_has_its_own_request_id(client: TestClient) -> None:
    ids = [client.get("/v1/datasets").headers["x-request-id"] for _ in range(3)]
    assert len(set(ids)) == 3
    assert all(uuid.UUID(i) for i in ids)
    missing = client.get("/v1/batches/nope")
    assert missing.status_code == 404
    assert uuid.UUID(missing.headers["x-request-id"])


def test_a_caller_cannot_choose_the_request_id(client: TestClient) -> None:
    response = client.get("/v1/datasets", headers={"X-Request-Id": "mine"})
    assert response.headers["x-request-id"] != "mine"


def test_a_job_carries_the_id_of_the_request_that_made_it(client: TestClient) -> None:
    _, batch_id = open_batch(client)
    client.put(f"/v1/batches/{batch_id}/files/a.csv", content=CSV)
    response = client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"})
    assert response.status_code == 202
    job = client.get(f"/v1/jobs/{response.json()['job']['id']}").json()
    assert job["request_id"] == response.headers["x-request-id"]
