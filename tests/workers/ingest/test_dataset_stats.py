"""`GET /v1/datasets/{id}/stats` (the UI's datasets list) against a model of what happened."""

from __future__ import annotations

from datetime import datetime

import pytest
from fastapi.testclient import TestClient

from tests.fixtures.batches import csv_rows, ingest
from tests.fixtures.datasets import EVENTS
from tests.fixtures.spark import RunJobs

pytestmark = pytest.mark.spark


def test_stats_count_batches_rows_and_tombstones(client: TestClient, run_jobs: RunJobs) -> None:
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    empty = client.get(f"/v1/datasets/{did}/stats").json()
    assert empty["batches"] == {}
    assert (empty["rows"], empty["active_tombstones"], empty["last_ingest_at"]) == (0, 0, None)

    first = ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(1, "u1"), (2, "u2")])})
    second = ingest(client, run_jobs, did, "csv", {"b.csv": csv_rows([(3, "u3")])})
    bad = b"event_id,user_id,event_time,payload\nx,u,2024-03-01T10:00:00,p\n"
    ingest(client, run_jobs, did, "csv", {"bad.csv": bad})
    client.post("/v1/batches", json={"dataset_id": did, "format": "csv"})  # still loading
    client.post(f"/v1/batches/{first['id']}/revert")
    run_jobs()
    client.post(
        "/v1/privacy/jobs", json={"dataset_ids": [did], "column": "user_id", "values": ["u3", "u9"]}
    )
    run_jobs()

    stats = client.get(f"/v1/datasets/{did}/stats").json()
    batches = client.get("/v1/batches", params={"dataset_id": did}).json()["items"]
    model: dict[str, int] = {}
    for batch in batches:
        model[batch["status"]] = model.get(batch["status"], 0) + 1
    assert stats["batches"] == model == {"reverted": 1, "success": 1, "failed": 1, "loading": 1}
    assert stats["rows"] == 1  # the live batch's one row (its rows before GDPR hides one)
    tombstones = client.get(f"/v1/datasets/{did}/tombstones").json()["total"]
    assert stats["active_tombstones"] == tombstones == 3  # the revert's one, GDPR's two
    snapshots = client.get(f"/v1/datasets/{did}/snapshots").json()["items"]
    assert stats["snapshots"] == len(snapshots)
    assert stats["current_snapshot_id"] == snapshots[0]["snapshot_id"]
    landed = client.get(f"/v1/batches/{second['id']}").json()["completed_at"]
    assert datetime.fromisoformat(stats["last_ingest_at"]) >= datetime.fromisoformat(landed)
