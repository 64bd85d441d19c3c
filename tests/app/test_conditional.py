"""Polling that stays cheap: ETag + If-None-Match → 304 on a batch, a job and a privacy job,
a new tag whenever the body changes, and `updated_since` on the batch and job lists."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import update

from tests.fixtures.batches import CSV
from tests.fixtures.clients import ClientFactory
from tests.fixtures.datasets import EVENTS


def conditional(client: TestClient, url: str, tag: str | None) -> tuple[int, str, Any]:
    response = client.get(url, headers={"If-None-Match": tag} if tag else {})
    body = response.json() if response.status_code == 200 else None
    if response.status_code == 304:
        assert response.content == b""
    assert response.headers["Cache-Control"] == "private, no-cache"
    return response.status_code, response.headers["ETag"], body


def heartbeat(job_id: str, progress: float, stage: str) -> None:
    """What a worker's heartbeat writes (workers/runtime.py `beat`)."""
    from app.db import session_scope
    from app.models import Job

    with session_scope() as session:
        session.execute(update(Job).where(Job.id == job_id).values(progress=progress, stage=stage))


def test_batch_and_job_answer_304_until_they_change(client: TestClient) -> None:
    dataset = client.post("/v1/datasets", json=EVENTS).json()["id"]
    batch = client.post("/v1/batches", json={"dataset_id": dataset, "format": "csv"}).json()
    url = f"/v1/batches/{batch['id']}"

    status, tag, body = conditional(client, url, None)
    assert (status, body["status"], body["file_count"]) == (200, "loading", 0)
    assert conditional(client, url, tag)[:2] == (304, tag)
    assert conditional(client, url, f'"other", {tag}')[0] == 304  # a list of tags
    assert conditional(client, url, "*")[0] == 304
    assert conditional(client, url, '"garbled')[0] == 200

    seen = {tag}
    client.put(f"{url}/files/a.csv", content=CSV)  # the files change
    status, tag, body = conditional(client, url, tag)
    assert (status, body["file_count"]) == (200, 1)
    same_size = CSV.replace(b"u1", b"u9")  # the file replaced by one of the same size
    assert len(same_size) == len(CSV)
    assert same_size != CSV
    client.put(f"{url}/files/a.csv", content=same_size)
    status, tag_replaced, replaced = conditional(client, url, tag)
    assert (status, replaced["file_count"], replaced["bytes"]) == (200, 1, body["bytes"])
    assert replaced["files"][0]["sha256"] != body["files"][0]["sha256"]
    seen.add(tag)
    tag = tag_replaced
    client.post(f"{url}/complete")  # the status changes, a job appears
    status, tag2, body = conditional(client, url, tag)
    assert (status, body["status"], body["progress"]) == (200, "staged", 0.0)
    seen |= {tag, tag2}
    job_url = f"/v1/jobs/{body['job_id']}"
    _, job_tag, job = conditional(client, job_url, None)
    assert conditional(client, job_url, job_tag)[0] == 304

    heartbeat(body["job_id"], 0.5, "writing")  # progress moves: both bodies change
    status, tag3, body = conditional(client, url, tag2)
    assert (status, body["progress"]) == (200, 0.5)
    status, job_tag2, job = conditional(client, job_url, job_tag)
    assert (status, job["progress"], job["stage"]) == (200, 0.5, "writing")
    assert conditional(client, url, tag3)[0] == 304
    assert conditional(client, job_url, job_tag2)[0] == 304

    from app.batches import service
    from app.db import session_scope

    errors = [{"file": "a.csv", "row": 2, "field": "event_id", "value": "x", "reason": "bad"}]
    with session_scope() as session:  # the ingest records row errors
        service.record_errors(session, batch["id"], errors, 3)
    status, tag4, body = conditional(client, url, tag3)
    assert (status, body["errors"], body["row_count"]) == (200, errors, 3)
    seen |= {tag3, tag4}
    assert len(seen) == 6  # every change, a new tag


def test_another_orgs_tag_is_404_not_304(client_for: ClientFactory) -> None:
    a, b = client_for(), client_for()
    dataset = a.post("/v1/datasets", json=EVENTS).json()["id"]
    batch = a.post("/v1/batches", json={"dataset_id": dataset, "format": "csv"}).json()["id"]
    tag = a.get(f"/v1/batches/{batch}").headers["ETag"]
    for url in (f"/v1/batches/{batch}", "/v1/jobs/x", "/v1/privacy/jobs/x"):
        response = b.get(url, headers={"If-None-Match": tag})
        assert response.status_code == 404, url
        assert "ETag" not in response.headers


def test_privacy_job_answers_304_while_unchanged(client: TestClient) -> None:
    dataset = client.post("/v1/datasets", json=EVENTS).json()["id"]
    job = client.post(
        "/v1/privacy/jobs", json={"dataset_ids": [dataset], "column": "user_id", "values": ["u1"]}
    ).json()
    url = f"/v1/privacy/jobs/{job['id']}"
    status, tag, body = conditional(client, url, None)
    assert (status, body["status"]) == (200, "submitted")
    assert conditional(client, url, tag)[0] == 304


def test_updated_since_keeps_what_changed(client: TestClient) -> None:
    dataset = client.post("/v1/datasets", json=EVENTS).json()["id"]
    ids = [
        client.post("/v1/batches", json={"dataset_id": dataset, "format": "csv"}).json()["id"]
        for _ in range(4)
    ]
    for batch in ids[:2]:
        client.put(f"/v1/batches/{batch}/files/a.csv", content=CSV)
        client.post(f"/v1/batches/{batch}/complete")  # their ingest jobs
    client.post(f"/v1/batches/{ids[3]}/abort")
    everything = client.get("/v1/batches", params={"dataset_id": dataset}).json()["items"]
    jobs = client.get("/v1/jobs").json()["items"]
    times = sorted({b["updated_at"] for b in everything} | {j["updated_at"] for j in jobs})
    for since in times:
        got = client.get("/v1/batches", params={"dataset_id": dataset, "updated_since": since})
        model = [b["id"] for b in everything if parse(b["updated_at"]) >= parse(since)]
        assert [b["id"] for b in got.json()["items"]] == model, since
        got_jobs = client.get("/v1/jobs", params={"updated_since": since}).json()["items"]
        assert [j["id"] for j in got_jobs] == [
            j["id"] for j in jobs if parse(j["updated_at"]) >= parse(since)
        ]
    assert client.get("/v1/batches", params={"updated_since": "yesterday"}).status_code == 422


def parse(value: str) -> datetime:
    return datetime.fromisoformat(value)
