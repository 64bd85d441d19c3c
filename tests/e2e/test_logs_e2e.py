"""Logs and metrics of real processes: an ingest and a revert followed by their request ids from
the HTTP response through the API's and the worker's JSON log lines to the snapshot summary; no
API key in any log; the worker's own metrics port counts the jobs it ran."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.fixtures.datasets import EVENTS
from tests.fixtures.e2e import csv, done_job, finished, start
from tests.fixtures.service import TLS, Service, free_port, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.spark]


def log_lines(service: Service) -> dict[str, list[dict[str, Any]]]:
    """Every line of every process's log, each parsed as JSON (a line that is not fails)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(service.home.glob("*.log")):
        lines = [line for line in path.read_text().splitlines() if line.strip()]
        parsed = []
        for number, line in enumerate(lines, 1):
            try:
                parsed.append(json.loads(line))
            except json.JSONDecodeError:
                raise AssertionError(f"{path.name}:{number} is not JSON: {line[:300]}") from None
        out[path.name] = parsed
    return out


def worker_metric(port: int, name: str, **labels: str) -> float:
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5, verify=TLS).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return float(sample.value)
    return 0.0


def test_one_request_id_from_http_to_job_to_snapshot(service: Service) -> None:
    metrics_port = free_port()
    service.env["ICEBATCH_WORKER_METRICS_PORT"] = str(metrics_port)
    client = start(service)
    key = client.headers["Authorization"].removeprefix("Bearer ")
    assert (
        httpx.get(
            f"{service.url}/v1/datasets",
            headers={"Authorization": "Bearer ib_x_" + "y" * 40},
            verify=TLS,
        ).status_code
        == 401
    )

    dataset_id = client.post("/v1/datasets", json=EVENTS).json()["id"]
    batch_id = client.post("/v1/batches", json={"dataset_id": dataset_id, "format": "csv"}).json()[
        "id"
    ]
    assert client.put(f"/v1/batches/{batch_id}/files/a.csv", content=csv([(1, "u1")])).is_success
    completed = client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"})
    assert completed.status_code == 202, completed.text
    ingest_request = completed.headers["x-request-id"]
    ingest_job = completed.json()["job"]["id"]
    assert finished(client, batch_id)["status"] == "success"
    reverted = client.post(f"/v1/batches/{batch_id}", params={"action": "REVERT"})
    assert reverted.status_code == 202, reverted.text
    revert_request = reverted.headers["x-request-id"]
    revert_job = reverted.json()["job"]["id"]
    done_job(client, revert_job)

    snapshots = client.get(f"/v1/datasets/{dataset_id}/snapshots").json()["items"]
    by_operation = {s["icebatch"]["icebatch.operation"]: s["icebatch"] for s in snapshots}
    assert by_operation["ingest"]["icebatch.request-id"] == ingest_request
    assert by_operation["revert"]["icebatch.request-ids"] == revert_request

    # the worker's own port: the two jobs it ran and the commit lease the revert waited for
    assert (
        worker_metric(
            metrics_port, "icebatch_job_duration_seconds_count", kind="ingest", outcome="succeeded"
        )
        == 1
    )
    assert worker_metric(metrics_port, "icebatch_job_queue_wait_seconds_count", kind="ingest") == 1
    assert (
        worker_metric(metrics_port, "icebatch_commit_lease_wait_seconds_count", operation="restate")
        >= 1
    )

    def revert_logged() -> bool:
        return any(
            r.get("job_id") == revert_job and "succeeded after" in r["event"]
            for lines in log_lines(service).values()
            for r in lines
        )

    # read while the processes run: on SIGTERM Celery's signal handler prints a plain
    # "worker: Warm shutdown" (it cannot log from a signal handler)
    wait_for(revert_logged, 30, "the revert job's last line")
    logs = log_lines(service)
    everything = "\n".join(p.read_text() for p in service.home.glob("*.log"))
    assert key not in everything
    # not even the secret part alone (`ib_<hex id>_<token_urlsafe>`: the secret may hold "_"
    # itself, so it is what follows the second one)
    secret = key.split("_", 2)[2]
    assert len(secret) >= 40
    assert secret not in everything
    assert "y" * 40 not in everything
    records = [r for lines in logs.values() for r in lines]

    access = [r for r in records if r.get("logger") == "uvicorn.access"]
    assert access, "no access line was logged"
    assert all(r.get("request_id") for r in access)
    assert len({r["request_id"] for r in access}) == len(access)  # one id per request
    complete_lines = [r for r in access if r["request_id"] == ingest_request]
    assert [(r["method"], r["path"], r["status"]) for r in complete_lines] == [
        ("POST", f"/v1/batches/{batch_id}?action=COMPLETE", 202)
    ]

    for job_id, request_id in ((ingest_job, ingest_request), (revert_job, revert_request)):
        job_lines = [r for r in records if r.get("job_id") == job_id]
        events = " | ".join(r["event"] for r in job_lines)
        assert "started" in events, events
        assert "succeeded after" in events, events
        assert {r.get("request_id") for r in job_lines} == {request_id}
        assert {r.get("job_kind") for r in job_lines} == {
            "ingest" if job_id == ingest_job else "revert"
        }
    assert any("for requests" in r["event"] and revert_request in r["event"] for r in records)
