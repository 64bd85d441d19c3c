"""Host faults on PostgreSQL + Redis with real processes, nothing lost: the staging disk fills
up mid-upload, a worker's JVM is killed mid-job, API and workers' clocks disagree by a minute.
Each test keeps a plain model of what it drove and checks the rows against it (the broker and
the metadata store failing: test_infra_faults.py)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from tests.fixtures.datasets import EVENTS
from tests.fixtures.e2e import Record, csv, done_job, finished, log_shows, revert, upload_batch
from tests.fixtures.faults import alive, fill, java_children, lease_rows, small_tmpfs
from tests.fixtures.service import Service, new_org, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.spark]
ON_POSTGRES = pytest.mark.parametrize("service", ["postgres"], indirect=True)
SKEW = 30


def rows_of(records: list[Record], batch_id: str) -> dict[int, tuple[str, str]]:
    """The model: event_id → (user_id, batch id) for the rows a batch of `records` adds."""
    return {e: (u, batch_id) for e, u in records}


def table_rows(client: httpx.Client, dataset_id: str, as_of: str | None = None) -> dict[int, Any]:
    params = {"as_of": as_of} if as_of is not None else {}
    response = client.get(f"/v1/datasets/{dataset_id}/rows", params=params)
    assert response.status_code == 200, response.text
    rows = [json.loads(line) for line in response.text.splitlines()]
    got = {r["event_id"]: (r["user_id"], r["_batch_id"]) for r in rows}
    assert len(got) == len(rows)  # no row twice
    return got


def snapshot_log(client: httpx.Client, dataset_id: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = client.get(f"/v1/datasets/{dataset_id}/snapshots").json()["items"]
    return items


def request_ids(client: httpx.Client, dataset_id: str) -> list[str]:
    return [s["icebatch"]["icebatch.request-id"] for s in snapshot_log(client, dataset_id)]


def job_of(client: httpx.Client, job_id: str) -> dict[str, Any]:
    job: dict[str, Any] = client.get(f"/v1/jobs/{job_id}").json()
    return job


@ON_POSTGRES
def test_disk_full_in_staging_keeps_nothing_partial(service: Service, tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "staging-fs", "2m") as staging:
        service.env["ICEBATCH_STAGING_DIR"] = str(staging)
        key = service.create_key(new_org())
        service.start_api()
        service.start_worker()
        client = service.client(key)
        dataset_id = client.post("/v1/datasets", json=EVENTS).json()["id"]
        batch_id = client.post(
            "/v1/batches", json={"dataset_id": dataset_id, "format": "csv"}
        ).json()["id"]
        first = [(i, f"u{i % 7}") for i in range(50)]
        second = [(i, f"u{i % 5}") for i in range(50, 8050)]
        kept = csv(first)
        assert client.put(f"/v1/batches/{batch_id}/files/a.csv", content=kept).status_code == 201

        filler = fill(staging)
        for name in ("b.csv", "a.csv"):  # a new file, and one replacing a counted file
            full = client.put(f"/v1/batches/{batch_id}/files/{name}", content=csv(second))
            assert full.status_code == 507, full.text
            assert full.headers["content-type"] == "application/problem+json"
            problem = full.json()
            assert problem["title"] == "Insufficient storage"
            assert "ran out of space" in problem["detail"]
            assert "upload the file again once space is freed" in problem["detail"]
            assert (problem["batch_id"], problem["file"]) == (batch_id, name)
        upload = client.get("/openapi.json").json()["paths"]["/v1/batches/{batch_id}/files/{name}"]
        assert "507" in upload["put"]["responses"]  # clients learn of it from the contract
        batch = client.get(f"/v1/batches/{batch_id}").json()
        assert batch["status"] == "loading"
        assert (batch["file_count"], batch["bytes"]) == (1, len(kept))
        assert [(f["name"], f["sha256"]) for f in batch["files"]] == [
            ("a.csv", hashlib.sha256(kept).hexdigest())
        ]
        assert sorted(p.name for p in (staging / batch_id).iterdir()) == ["a.csv"]  # no .part
        assert (staging / batch_id / "a.csv").read_bytes() == kept

        filler.unlink()  # space returns: the same batch takes the file and completes
        put = client.put(f"/v1/batches/{batch_id}/files/b.csv", content=csv(second))
        assert put.status_code == 201, put.text
        done = client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"})
        assert done.status_code == 202, done.text
        batch = finished(client, batch_id)
        assert batch["status"] == "success", (batch, service.logs())
        assert batch["row_count"] == len(first) + len(second)
        assert table_rows(client, dataset_id) == rows_of(first + second, batch_id)
        job = job_of(client, batch["job_id"])
        assert request_ids(client, dataset_id) == [job["request_id"]]
        service.stop()


@ON_POSTGRES
def test_worker_jvm_killed_mid_job_fails_over_to_a_new_session(service: Service) -> None:
    key = service.create_key(new_org())
    service.start_api()
    # the job pauses right after it took the SparkSession: the moment the JVM is killed
    service.start_worker(env={"ICEBATCH_FAILPOINTS": "ingest-spark=4"})
    client = service.client(key)
    dataset_id = client.post("/v1/datasets", json=EVENTS).json()["id"]
    records = [(i, f"u{i % 9}") for i in range(300)]
    batch_id = upload_batch(client, dataset_id, "csv", {"a.csv": csv(records)})
    job_id = client.get(f"/v1/batches/{batch_id}").json()["job_id"]

    def in_spark() -> bool:
        job = job_of(client, job_id)
        return job["state"] == "running" and job["stage"] == "validating"

    wait_for(in_spark, 180, "the ingest job to hold its SparkSession", every=0.2)
    worker = service.processes["worker"].pid
    [jvm] = java_children(worker)
    os.kill(jvm, signal.SIGKILL)

    batch = finished(client, batch_id)
    assert batch["status"] == "success", (batch, service.logs())
    job = job_of(client, job_id)
    assert (job["state"], job["attempt"]) == ("succeeded", 2)
    log = service.log("worker")
    assert "the Spark JVM of this worker is gone; starting a new SparkSession" in log
    assert alive(worker)  # the same worker process carried on, with a new JVM
    assert service.processes["worker"].poll() is None
    assert jvm not in java_children(worker)
    assert len(java_children(worker)) == 1
    assert request_ids(client, dataset_id) == [job["request_id"]]  # committed exactly once
    assert table_rows(client, dataset_id) == rows_of(records, batch_id)


def worker_of(service: Service, job_id: str) -> str:
    with psycopg.connect(service.env["ICEBATCH_DATABASE_URL"]) as conn:
        row = conn.execute("SELECT worker FROM jobs WHERE id = %s", (job_id,)).fetchone()
    assert row is not None
    return str(row[0])


@ON_POSTGRES
@pytest.mark.parametrize("api", [SKEW, -SKEW], ids=["api-ahead", "api-behind"])
def test_clock_skew_between_api_and_workers(service: Service, api: int) -> None:
    """The API `api` s off, one worker the other way, one worker with the API: each worker's
    reconciler judges the other's heartbeats, commit leases pass between them."""
    key = service.create_key(new_org())
    service.env["ICEBATCH_CLOCK_OFFSET_SECONDS"] = str(api)
    service.start_api()
    slow = {"ICEBATCH_FAILPOINTS": "ingest-spark=3"}  # each ingest outlives stale_after by far
    workers = {"w-against": -api, "w-with": api}
    for name, offset in workers.items():
        service.start_worker(name, env={**slow, "ICEBATCH_CLOCK_OFFSET_SECONDS": str(offset)})
    for name in workers:
        wait_for(log_shows(service, name, " ready."), 120, f"worker {name} to be ready")
    client = service.client(key)
    d1 = client.post("/v1/datasets", json={**EVENTS, "name": "events_one"}).json()["id"]
    d2 = client.post("/v1/datasets", json={**EVENTS, "name": "events_two"}).json()["id"]

    r1 = [(i, f"u{i % 4}") for i in range(40)]
    r2 = [(i, f"u{i % 3}") for i in range(100, 130)]
    b1 = upload_batch(client, d1, "csv", {"a.csv": csv(r1)})
    b2 = upload_batch(client, d2, "csv", {"a.csv": csv(r2)})  # queued while b1 runs
    f1, f2 = finished(client, b1), finished(client, b2)
    assert (f1["status"], f2["status"]) == ("success", "success"), service.logs()
    # both workers ran a job at once, each judged by a reconciler a minute apart
    assert worker_of(service, f1["job_id"]) != worker_of(service, f2["job_id"])
    model = {d1: rows_of(r1, b1), d2: rows_of(r2, b2)}

    # time travel: the batch's completed_at, and the client's own clock after success
    assert table_rows(client, d1, f1["completed_at"]) == model[d1]
    assert table_rows(client, d2, f2["completed_at"]) == model[d2]
    seen = datetime.now(UTC).isoformat()
    r3 = [(i, f"u{i % 4}") for i in range(40, 60)]
    b3 = upload_batch(client, d1, "csv", {"a.csv": csv(r3)})
    f3 = finished(client, b3)
    assert f3["status"] == "success", service.logs()
    assert table_rows(client, d1, seen) == model[d1]
    assert table_rows(client, d1, f3["completed_at"]) == {**model[d1], **rows_of(r3, b3)}

    # commit leases, one per dataset, taken by whichever worker: released for real
    reverts = [revert(client, b1), revert(client, b2)]
    for restated in reverts:
        done_job(client, restated.job_id, timeout=120)
    for dataset_id, token, holder, expires_at, now in lease_rows(service):
        assert holder is None, (dataset_id, token)
        assert expires_at <= now, (dataset_id, expires_at, now)  # free to every clock
    model = {d1: rows_of(r3, b3), d2: {}}
    for dataset_id, rows in model.items():
        assert table_rows(client, dataset_id) == rows

    jobs = [f1["job_id"], f2["job_id"], f3["job_id"], *(r.job_id for r in reverts)]
    for job_id in jobs:
        job = job_of(client, job_id)
        # nothing re-queued as stale, no lease lost: one attempt each
        assert (job["state"], job["attempt"]) == ("succeeded", 1), job
        assert job["duration_seconds"] >= 0
    # each accepted request committed exactly once: an ingest by its request id, a revert as
    # the snapshot its result names (a group commit stamps its own commit id)
    ingests = [job_of(client, j["job_id"])["request_id"] for j in (f1, f2, f3)]
    snapshots = {d: snapshot_log(client, d) for d in (d1, d2)}
    logged = [s["icebatch"]["icebatch.request-id"] for log in snapshots.values() for s in log]
    assert sorted(r for r in logged if r in ingests) == sorted(ingests)
    for restated, dataset_id in zip(reverts, (d1, d2), strict=True):
        result = job_of(client, restated.job_id)["result"]
        reverting = [
            s for s in snapshots[dataset_id] if s["icebatch"]["icebatch.operation"] == "revert"
        ]
        assert [s["snapshot_id"] for s in reverting] == [result["snapshot_id"]]
    assert (len(snapshots[d1]), len(snapshots[d2])) == (3, 2)
    for name in workers:
        assert "re-queueing" not in service.log(name)
