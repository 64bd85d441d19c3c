"""The batch lifecycle over HTTP, without running the ingest job."""

from __future__ import annotations

import hashlib

from fastapi.testclient import TestClient

from tests.fixtures.batches import CSV, open_batch
from tests.fixtures.clients import ClientFactory
from tests.fixtures.datasets import EVENTS


def test_files_complete_and_job(client: TestClient) -> None:
    _, batch_id = open_batch(client)
    first = client.put(f"/v1/batches/{batch_id}/files/a.csv", content=CSV)
    assert first.status_code == 201
    assert first.json() == {
        "name": "a.csv",
        "bytes": len(CSV),
        "sha256": hashlib.sha256(CSV).hexdigest(),
    }
    client.put(f"/v1/batches/{batch_id}/files/b.csv", content=CSV)
    replaced = CSV + b"2,u2,2024-01-01T11:00:00,x\n"
    client.put(f"/v1/batches/{batch_id}/files/b.csv", content=replaced)
    batch = client.get(f"/v1/batches/{batch_id}").json()
    assert batch["file_count"] == 2
    assert batch["bytes"] == len(CSV) + len(replaced)
    assert {f["name"]: f["bytes"] for f in batch["files"]} == {
        "a.csv": len(CSV),
        "b.csv": len(replaced),
    }

    response = client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"})
    assert response.status_code == 202
    body = response.json()
    assert body["batch"]["status"] == "staged"
    job = body["job"]
    assert job["state"] == "queued"
    assert job["kind"] == "ingest"
    assert job["subject_id"] == batch_id
    assert client.get(f"/v1/jobs/{job['id']}").json()["state"] == "queued"
    assert [j["id"] for j in client.get("/v1/jobs", params={"kind": "ingest"}).json()["items"]] == [
        job["id"]
    ]

    late = client.put(f"/v1/batches/{batch_id}/files/c.csv", content=CSV)
    assert late.status_code == 409
    assert "'staged'" in late.json()["detail"]
    again = client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"})
    assert again.status_code == 409
    assert client.post(f"/v1/batches/{batch_id}", params={"action": "ABORT"}).status_code == 409


def test_bad_uploads_and_actions(client: TestClient) -> None:
    _, batch_id = open_batch(client)
    # the endpoint refuses bad names (422); `a%2Fb.csv` is the path `files/a/b.csv`, which no
    # route matches (404), and `..` resolves to the batch itself, which takes no PUT (405)
    expected = {".hidden": 422, "a%2Fb.csv": 404, "..": 405, "x" * 300: 422}
    for name, status in expected.items():
        response = client.put(f"/v1/batches/{batch_id}/files/{name}", content=CSV)
        assert response.status_code == status, (name, response.text)
    assert client.get(f"/v1/batches/{batch_id}").json()["file_count"] == 0
    empty = client.put(f"/v1/batches/{batch_id}/files/e.csv", content=b"")
    assert empty.status_code == 422
    assert "empty" in empty.json()["detail"]
    nothing = client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"})
    assert nothing.status_code == 422
    assert "no files" in nothing.json()["detail"]
    unknown = client.post(f"/v1/batches/{batch_id}", params={"action": "EXPLODE"})
    assert unknown.status_code == 422
    assert "action" in unknown.json()["detail"]
    wrong_format = client.post("/v1/batches", json={"dataset_id": "x", "format": "xml"})
    assert wrong_format.status_code == 422
    assert (
        client.post("/v1/batches", json={"dataset_id": "nope", "format": "csv"}).status_code == 404
    )


def test_size_limit(client: TestClient, monkeypatch: object) -> None:
    from app.config import get_settings

    _, batch_id = open_batch(client)
    settings = get_settings()
    saved = settings.max_file_bytes
    settings.max_file_bytes = 100
    try:
        response = client.put(f"/v1/batches/{batch_id}/files/big.csv", content=b"x" * 101)
    finally:
        settings.max_file_bytes = saved
    assert response.status_code == 413
    assert "split it" in response.json()["detail"]
    assert client.get(f"/v1/batches/{batch_id}").json()["file_count"] == 0
    staged = settings.staging_dir / batch_id
    assert not staged.exists() or not any(staged.iterdir())


def test_abort_and_list(client: TestClient) -> None:
    dataset_id, first = open_batch(client)
    second = client.post("/v1/batches", json={"dataset_id": dataset_id, "format": "json"}).json()[
        "id"
    ]
    client.put(f"/v1/batches/{first}/files/a.csv", content=CSV)
    aborted = client.post(f"/v1/batches/{first}", params={"action": "ABORT"})
    assert aborted.status_code == 200
    assert aborted.json()["batch"]["status"] == "aborted"
    from app.config import get_settings

    assert not (get_settings().staging_dir / first).exists()
    listed = client.get("/v1/batches", params={"dataset_id": dataset_id}).json()
    assert {b["id"] for b in listed["items"]} == {first, second}
    only_loading = client.get("/v1/batches", params={"status": "loading"}).json()["items"]
    assert [b["id"] for b in only_loading] == [second]
    page = client.get("/v1/batches", params={"dataset_id": dataset_id, "limit": 1}).json()
    assert len(page["items"]) == 1
    assert page["next"] is not None
    rest = client.get("/v1/batches", params={"dataset_id": dataset_id, "cursor": page["next"]})
    assert len(rest.json()["items"]) == 1
    assert rest.json()["next"] is None
    assert "Link" not in rest.headers
    rest = rest.json()
    assert {page["items"][0]["id"], rest["items"][0]["id"]} == {first, second}


def test_idempotency_key_replays_the_first_response(client: TestClient) -> None:
    dataset = client.post("/v1/datasets", json=EVENTS).json()
    body = {"dataset_id": dataset["id"], "format": "csv"}
    headers = {"Idempotency-Key": "open-batch-1"}
    first = client.post("/v1/batches", json=body, headers=headers)
    again = client.post("/v1/batches", json=body, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true"
    listed = client.get("/v1/batches", params={"dataset_id": dataset["id"]}).json()["items"]
    assert [b["id"] for b in listed] == [first.json()["id"]]  # one batch, not two

    other = client.post("/v1/batches", json={**body, "format": "json"}, headers=headers)
    assert other.status_code == 422
    assert "another request" in other.json()["detail"]

    batch_id = first.json()["id"]
    client.put(f"/v1/batches/{batch_id}/files/a.csv", content=CSV)
    complete = {"Idempotency-Key": "complete-1"}
    done = client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"}, headers=complete)
    retry = client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"}, headers=complete)
    assert done.status_code == retry.status_code == 202
    assert retry.json()["job"]["id"] == done.json()["job"]["id"]
    assert len(client.get("/v1/jobs").json()["items"]) == 1
    # without the key, a second COMPLETE is a conflict that says why
    assert client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"}).status_code == 409


def test_a_failed_request_leaves_its_idempotency_key_free(client: TestClient) -> None:
    """The retry of a refused request runs again (it is refused again, or succeeds once the
    cause is gone), never a 409 'in progress' for a key nothing holds."""
    _, batch_id = open_batch(client)
    headers = {"Idempotency-Key": "complete-empty"}
    action = {"action": "COMPLETE"}
    refused = client.post(f"/v1/batches/{batch_id}", params=action, headers=headers)
    assert refused.status_code == 422, refused.json()  # a batch with no file cannot complete
    again = client.post(f"/v1/batches/{batch_id}", params=action, headers=headers)
    assert again.status_code == 422
    assert again.json()["detail"] == refused.json()["detail"]
    client.put(f"/v1/batches/{batch_id}/files/a.csv", content=CSV)
    done = client.post(f"/v1/batches/{batch_id}", params=action, headers=headers)
    assert done.status_code == 202
    replayed = client.post(f"/v1/batches/{batch_id}", params=action, headers=headers)
    assert replayed.headers["idempotent-replayed"] == "true"
    assert replayed.json()["job"]["id"] == done.json()["job"]["id"]


def test_idempotency_keys_are_per_org(client_for: ClientFactory) -> None:
    alice, bob = client_for(), client_for()
    headers = {"Idempotency-Key": "same"}
    a = alice.post("/v1/datasets", json=EVENTS, headers=headers)
    b = bob.post("/v1/datasets", json=EVENTS, headers=headers)
    assert a.status_code == b.status_code == 201
    assert a.json()["id"] != b.json()["id"]


def test_batches_and_jobs_of_another_org_are_404(client_for: ClientFactory) -> None:
    alice, bob = client_for(), client_for()
    _, batch_id = open_batch(alice)
    alice.put(f"/v1/batches/{batch_id}/files/a.csv", content=CSV)
    job_id = alice.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"}).json()["job"][
        "id"
    ]
    for path in (f"/v1/batches/{batch_id}", f"/v1/jobs/{job_id}"):
        response = bob.get(path)
        assert response.status_code == 404
        assert "does not exist in your organization" in response.json()["detail"]
    assert bob.put(f"/v1/batches/{batch_id}/files/b.csv", content=CSV).status_code == 404
    assert bob.post(f"/v1/batches/{batch_id}", params={"action": "ABORT"}).status_code == 404
    assert bob.get("/v1/batches").json()["items"] == []
    assert bob.get("/v1/jobs").json()["items"] == []
    assert alice.get(f"/v1/batches/{batch_id}").json()["file_count"] == 1
