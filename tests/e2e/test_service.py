"""End to end: `icebatch` processes on loopback driven over HTTP, as a user would.

Embedded mode runs `icebatch up` (what a new user runs first); PostgreSQL + Redis run
`icebatch api` and `icebatch worker` apart. The worker is killed with SIGKILL mid-ingest.
"""

from __future__ import annotations

import io
import json
import os
import signal
import time
from typing import Any

import httpx
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.fixtures.datasets import EVENTS
from tests.fixtures.e2e import done_job, finished, read_rows, start, upload_batch
from tests.fixtures.service import SLOW, TLS, Service, new_org, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.spark]


def big_parquet(rows: int) -> bytes:
    rng = np.random.default_rng(11)
    start = np.datetime64("2024-01-01T00:00:00", "us")
    table = pa.table(
        {
            "event_id": pa.array(np.arange(rows, dtype=np.int64)),
            "user_id": pa.array(np.char.add("u", rng.integers(0, 5000, rows).astype(str))),
            "event_time": pa.array(start + rng.integers(0, 30 * 86400 * 10**6, rows)),
            "payload": pa.array(np.full(rows, "x" * 40)),
        }
    )
    sink = io.BytesIO()
    pq.write_table(table, sink, row_group_size=200_000)
    return sink.getvalue()


def test_walkthrough(service: Service) -> None:
    client = start(service)
    ready = httpx.get(f"{service.url}/readyz", verify=TLS).json()
    assert ready == {
        "status": "ready",
        "checks": {"database": "ok", "broker": "ok", "catalog": "ok"},
    }
    assert (
        "/v1/batches/{batch_id}/files/{name}"
        in httpx.get(f"{service.url}/openapi.json", verify=TLS).json()["paths"]
    )
    assert httpx.get(f"{service.url}/v1/datasets", verify=TLS).status_code == 401

    dataset = client.post("/v1/datasets", json=EVENTS).json()
    csv = (
        b"event_id,user_id,event_time,payload\n"
        b"1,u1,2024-01-01T10:00:00,a\n2,u2,2024-01-02T10:00:00,b\n"
    )
    jsonl = b'{"event_id": 3, "user_id": "u3", "event_time": "2024-01-03T10:00:00"}\n'
    first = finished(client, upload_batch(client, dataset["id"], "csv", {"a.csv": csv}))
    second = finished(client, upload_batch(client, dataset["id"], "json", {"b.json": jsonl}))
    assert first["status"] == "success", first
    assert second["status"] == "success", second
    got = sorted(read_rows(client, dataset["id"]), key=lambda r: r["event_id"])
    assert [(r["event_id"], r["user_id"], r["event_time"], r["_batch_id"]) for r in got] == [
        (1, "u1", "2024-01-01T10:00:00", first["id"]),
        (2, "u2", "2024-01-02T10:00:00", first["id"]),
        (3, "u3", "2024-01-03T10:00:00", second["id"]),
    ]
    snapshots = client.get(f"/v1/datasets/{dataset['id']}/snapshots").json()["items"]
    assert [s["icebatch"]["icebatch.batch-id"] for s in snapshots] == [second["id"], first["id"]]
    job = client.get(f"/v1/jobs/{first['job_id']}").json()
    assert job["state"] == "succeeded"
    assert job["duration_seconds"] > 0
    metrics = httpx.get(f"{service.url}/metrics", verify=TLS).text
    assert (
        'icebatch_http_requests_total{method="POST",route="/v1/datasets",status="201"}' in metrics
    )

    if service.mode == "embedded":  # type: ignore[attr-defined]
        # SIGTERM to `icebatch up` alone stops the API and the worker it started (and its JVM)
        up = service.processes["up"]
        os.kill(up.pid, signal.SIGTERM)
        code = up.wait(timeout=60)
        assert code == 0, f"`icebatch up` exited {code}; its log ends:\n{service.log('up')[-4000:]}"

        def group_gone() -> bool:
            try:
                os.killpg(up.pid, 0)
            except ProcessLookupError:
                return True
            return False

        wait_for(group_gone, 60, "the API, the worker and the JVM to exit")


def test_worker_killed_mid_ingest_loses_nothing(service: Service) -> None:
    """SIGKILL the worker while its Spark job runs: no partial data, then success on retry."""
    service.start_api()
    key = service.create_key(new_org())
    service.start_worker()
    client = service.client(key)
    dataset = client.post("/v1/datasets", json=EVENTS).json()
    rows = 1_500_000
    batch_id = upload_batch(client, dataset["id"], "parquet", {"big.parquet": big_parquet(rows)})
    job_id = client.get(f"/v1/batches/{batch_id}").json()["job_id"]

    progress: list[float] = []

    def in_spark() -> bool:
        job = client.get(f"/v1/jobs/{job_id}").json()
        progress.append(job["progress"])
        return job["state"] == "running" and job["stage"] in ("validating", "writing")

    wait_for(in_spark, SLOW, "the ingest job to be inside its Spark job", every=0.1)
    time.sleep(1.0)
    progress.append(client.get(f"/v1/batches/{batch_id}").json()["progress"])
    assert 0 < progress[-1] < 1  # progress moves while Spark works
    assert progress == sorted(progress)
    service.kill("worker", signal.SIGKILL)
    assert client.get(f"/v1/datasets/{dataset['id']}/snapshots").json()["items"] == []
    assert client.get(f"/v1/batches/{batch_id}").json()["status"] == "processing"

    service.start_worker()  # its reconciler sees the stale heartbeat and re-queues the job
    batch = finished(client, batch_id)
    assert batch["status"] == "success", (batch, service.report())
    assert batch["row_count"] == rows
    job = done_job(client, job_id)  # its finish is written just after the batch's success
    assert job["attempt"] == 2
    snapshots = client.get(f"/v1/datasets/{dataset['id']}/snapshots").json()["items"]
    assert len(snapshots) == 1
    assert snapshots[0]["summary"]["added-records"] == str(rows)
    # the rows as Arrow, not 1.5M JSON lines to encode and parse
    answer = client.get(f"/v1/datasets/{dataset['id']}/rows", params={"format": "arrow"})
    assert answer.status_code == 200, answer.text
    ids = set(pa.ipc.open_stream(answer.content).read_all()["event_id"].to_pylist())
    assert ids == set(range(rows))


def test_duplicate_message_commits_once(service: Service) -> None:
    from app.jobs.broker import QUEUE, make_celery

    client = start(service)
    dataset = client.post("/v1/datasets", json=EVENTS).json()
    csv = b"event_id,user_id,event_time,payload\n1,u1,2024-01-01T10:00:00,a\n"
    batch = finished(client, upload_batch(client, dataset["id"], "csv", {"a.csv": csv}))
    assert batch["status"] == "success"
    from app.config import Settings

    # the service's settings, empty values included: an empty URL means the embedded default,
    # while a missing one would fall back to whatever ICEBATCH_* this test process inherited
    values: dict[str, Any] = {
        k.removeprefix("ICEBATCH_").lower(): v
        for k, v in service.env.items()
        if k.startswith("ICEBATCH_")
    }
    values["spark_conf"] = json.loads(values.get("spark_conf") or "{}")  # JSON in the environment
    settings = Settings(**values)
    celery = make_celery(settings)
    for _ in range(2):
        celery.send_task("icebatch.ingest", args=[batch["job_id"]], queue=QUEUE)
    # proof that the worker consumed both duplicates before anything is checked: its log says so
    worker = "up" if service.mode == "embedded" else "worker"  # type: ignore[attr-defined]
    skipped = f"job {batch['job_id']} is not queued (a duplicate delivery or already taken)"
    wait_for(
        lambda: service.log(worker).count(skipped) >= 2, 60, "the worker to skip both duplicates"
    )
    assert service.log(worker).count(skipped) == 2
    job = client.get(f"/v1/jobs/{batch['job_id']}").json()
    assert job["attempt"] == 1
    assert job["state"] == "succeeded"
    assert len(client.get(f"/v1/datasets/{dataset['id']}/snapshots").json()["items"]) == 1
    assert len(read_rows(client, dataset["id"])) == 1
