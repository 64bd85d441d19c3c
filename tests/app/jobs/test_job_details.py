"""A job's page data: its stages with their timings, the key and request that created it, what it
serves (dataset, batch), the `stuck` flag of a stale heartbeat; GET /v1/jobs filtered by kind,
state, dataset and creation time. On both stores; the worker's side (claim, stage, finish) is
run in process, with no Spark."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi.testclient import TestClient

from tests.fixtures.datasets import EVENTS


def completed_batch(client: TestClient, did: str) -> dict[str, Any]:
    bid = client.post("/v1/batches", json={"dataset_id": did, "format": "csv"}).json()["id"]
    client.put(f"/v1/batches/{bid}/files/a.csv", content=b"event_id,user_id\n1,u1\n")
    done = client.post(f"/v1/batches/{bid}", params={"action": "COMPLETE"})
    assert done.status_code == 202, done.text
    job: dict[str, Any] = done.json()["job"]
    return job


def test_job_stages_links_key_and_stuck(client: TestClient) -> None:
    from sqlalchemy import select, update

    from app.db import session_scope
    from app.models import ApiKey, Job, JobState
    from workers.runtime import Succeeded, claim, finish, settle

    org = client.org  # type: ignore[attr-defined]
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    created = completed_batch(client, did)
    with session_scope() as session:
        key_id = session.scalar(select(ApiKey.id).where(ApiKey.org == org))
    job = client.get(f"/v1/jobs/{created['id']}").json()
    batch_id = job["subject_id"]
    assert (job["key_id"], job["dataset_id"], job["batch_id"]) == (key_id, did, batch_id)
    assert client.get(f"/v1/batches/{batch_id}").json()["job_id"] == job["id"]
    assert (job["restatement_id"], job["privacy_job_id"], job["stuck"]) == (None, None, None)
    assert [(s["stage"], s["ended_at"]) for s in job["stages"]] == [("queued", None)]
    assert job["stages"][0]["started_at"] == job["created_at"]

    # a worker claims it, moves through a stage, finishes: each stage ends where the next begins
    ctx = claim(job["id"])
    assert ctx is not None
    ctx.set_stage("reading", 0.5)
    ctx.set_stage("reading", 0.6)  # the same stage again is no new entry
    assert finish(ctx, Succeeded(None)) == JobState.SUCCEEDED
    done = client.get(f"/v1/jobs/{job['id']}").json()
    names = [s["stage"] for s in done["stages"]]
    assert names == ["queued", "starting", "reading", "done"]
    for before, after in zip(done["stages"], done["stages"][1:], strict=False):
        assert before["ended_at"] == after["started_at"]
        assert before["seconds"] == round(
            (
                datetime.fromisoformat(before["ended_at"])
                - datetime.fromisoformat(before["started_at"])
            ).total_seconds(),
            3,
        )
    assert done["stages"][1]["started_at"] == done["started_at"]
    assert done["stages"][-1]["started_at"] == done["stages"][-1]["ended_at"] == done["finished_at"]

    # a running job whose heartbeat is stale is flagged, with the action that resolves it
    other = completed_batch(client, did)
    stale = datetime.now(UTC) - timedelta(seconds=600)
    with session_scope() as session:
        session.execute(
            update(Job)
            .where(Job.id == other["id"])
            .values(state=JobState.RUNNING, attempt=1, heartbeat_at=stale, stage="reading")
        )
    flagged = client.get(f"/v1/jobs/{other['id']}").json()
    assert flagged["stuck"]["reason"].startswith("no heartbeat for 6")
    assert "stale after 60 s" in flagged["stuck"]["reason"]
    assert "re-queues it (attempt 1 of 3" in flagged["stuck"]["action"]
    listed = {j["id"]: j for j in client.get("/v1/jobs").json()["items"]}
    assert listed[other["id"]]["stuck"] == flagged["stuck"]
    assert listed[job["id"]]["stuck"] is None

    # a job a group commit settled (one batched UPDATE, no history written): its open stage
    # ends when it finished
    carried = completed_batch(client, did)
    with session_scope() as session:
        settle(session, carried["id"], {})
    settled = client.get(f"/v1/jobs/{carried['id']}").json()
    assert settled["state"] == "succeeded"
    assert [s["stage"] for s in settled["stages"]] == ["queued"]
    assert settled["stages"][0]["ended_at"] == settled["finished_at"]


def test_jobs_filters(client: TestClient) -> None:
    one = client.post("/v1/datasets", json={**EVENTS, "name": "one"}).json()["id"]
    two = client.post("/v1/datasets", json={**EVENTS, "name": "two"}).json()["id"]
    a = completed_batch(client, one)
    b = completed_batch(client, two)
    vacuum = client.post(f"/v1/datasets/{two}/vacuum", json={"mode": "full"})
    assert vacuum.status_code == 202, vacuum.text
    v = vacuum.json()
    c = completed_batch(client, two)

    def listed(**params: str) -> list[str]:
        return [j["id"] for j in client.get("/v1/jobs", params=params).json()["items"]]

    assert listed() == [c["id"], v["id"], b["id"], a["id"]]
    assert listed(dataset_id=one) == [a["id"]]
    assert listed(dataset_id=two) == [c["id"], v["id"], b["id"]]
    assert listed(dataset_id=two, kind="ingest") == [c["id"], b["id"]]
    assert listed(kind="vacuum") == [v["id"]]
    assert listed(state="queued", dataset_id=one) == [a["id"]]
    assert listed(state="running") == []
    assert listed(since=b["created_at"]) == [c["id"], v["id"], b["id"]]
    assert listed(until=b["created_at"]) == [a["id"]]
    assert listed(since=b["created_at"], until=c["created_at"]) == [v["id"], b["id"]]
    rows = {j["id"]: j for j in client.get("/v1/jobs").json()["items"]}
    assert rows[v["id"]]["dataset_id"] == two
    assert rows[v["id"]]["batch_id"] is None
    assert rows[a["id"]]["dataset_id"] == one
    bad = client.get("/v1/jobs", params={"since": "yesterday"})
    assert bad.status_code == 422
