"""`GET /v1/datasets/{id}/stats` (the UI's datasets list) against a model of what happened."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.fixtures.batches import csv_rows, ingest, replay, rows
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
    assert stats["rows"] == len(rows(client, did)) == 0  # GDPR hid the live batch's one row
    assert stats["rows_ingested"] == 1  # what the live batch ingested
    tombstones = client.get(f"/v1/datasets/{did}/tombstones").json()["total"]
    assert stats["active_tombstones"] == tombstones == 3  # the revert's one, GDPR's two
    snapshots = client.get(f"/v1/datasets/{did}/snapshots").json()["items"]
    assert stats["snapshots"] == len(snapshots)
    assert stats["current_snapshot_id"] == snapshots[0]["snapshot_id"]
    landed = client.get(f"/v1/batches/{second['id']}").json()["completed_at"]
    assert datetime.fromisoformat(stats["last_ingest_at"]) >= datetime.fromisoformat(landed)


def _gdpr(client: TestClient, run_jobs: RunJobs, did: str, values: list[str]) -> None:
    body = {"dataset_ids": [did], "column": "user_id", "values": values}
    assert client.post("/v1/privacy/jobs", json=body).status_code == 202
    run_jobs()


def _readable(client: TestClient, did: str) -> dict[str, Any]:
    """The stats, checked against an independent count: the rows a read returns."""
    stats: dict[str, Any] = client.get(f"/v1/datasets/{did}/stats").json()
    assert stats["rows"] == len(rows(client, did)), stats
    return stats


def test_rows_are_what_a_read_returns_materialized_or_not(
    client: TestClient, run_jobs: RunJobs
) -> None:
    # issue 24: 5 rows shown where 2 were readable (GDPR-hidden rows counted as live)
    from app.config import get_settings

    settings = get_settings()
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    first = ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(1, "u1"), (2, "u2")])})
    ingest(client, run_jobs, did, "csv", {"b.csv": csv_rows([(3, "u3"), (4, "u4"), (5, "u3")])})
    ingest(client, run_jobs, did, "csv", {"c.csv": csv_rows([(6, "u5")])})
    client.post(f"/v1/batches/{first['id']}/revert")
    run_jobs()
    _gdpr(client, run_jobs, did, ["u3"])  # the materializer is off: no position deletes yet
    stats = _readable(client, did)
    assert (stats["rows"], stats["rows_ingested"]) == (2, 4)
    snapshots = client.get(f"/v1/datasets/{did}/snapshots").json()["items"]
    assert snapshots[0]["tombstones"]["materialized_seq"] == 0

    settings.materialize_deletes = True  # now every tombstone becomes position deletes
    try:
        _gdpr(client, run_jobs, did, ["u4"])
    finally:
        settings.materialize_deletes = False
    snapshots = client.get(f"/v1/datasets/{did}/snapshots").json()["items"]
    assert snapshots[0]["tombstones"]["materialized_seq"] > 0
    assert int(snapshots[0]["summary"].get("total-position-deletes", 0)) == 5
    assert _readable(client, did)["rows"] == 1

    _gdpr(client, run_jobs, did, ["u5"])  # past the mark again: materialized and not, mixed
    stats = _readable(client, did)
    assert (stats["rows"], stats["rows_ingested"]) == (0, 4)


def test_a_restated_batch_keeps_when_it_landed(client: TestClient, run_jobs: RunJobs) -> None:
    # issue 24: a revert or replay rewrote the restated batch's completed_at (a 3 s ingest
    # showed a 46 s duration); now it keeps it and says when and by what it was restated
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    reverted = ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(1, "u1")])})
    replaced = ingest(client, run_jobs, did, "csv", {"b.csv": csv_rows([(2, "u2")])})
    client.post(f"/v1/batches/{reverted['id']}/revert")
    run_jobs()
    new = replay(client, run_jobs, did, [replaced["id"]], csv_rows([(2, "u2"), (3, "u3")]))
    snapshots = client.get(f"/v1/datasets/{did}/snapshots").json()["items"]
    by_op = {s["icebatch"].get("icebatch.operation"): s for s in snapshots}

    after = client.get(f"/v1/batches/{reverted['id']}").json()
    assert after["status"] == "reverted"
    assert after["completed_at"] == reverted["completed_at"]
    assert (reverted["restated_at"], reverted["restatement"]) == (None, None)
    assert _moment(after["restated_at"]) == _moment(by_op["revert"]["committed_at"])
    revert = after["restatement"]
    assert (revert["id"], revert["kind"], revert["state"]) == (
        after["restated_by"],
        "revert",
        "committed",
    )
    assert revert["batch_id"] is None
    assert client.get(f"/v1/jobs/{revert['job_id']}").json()["kind"] == "revert"

    after = client.get(f"/v1/batches/{replaced['id']}").json()
    assert after["status"] == "replaced"
    assert after["completed_at"] == replaced["completed_at"]
    assert _moment(after["restated_at"]) == _moment(by_op["replay"]["committed_at"])
    assert after["restatement"]["kind"] == "replay"
    assert after["restatement"]["batch_id"] == new["id"]
    assert _moment(new["completed_at"]) == _moment(by_op["replay"]["committed_at"])


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text)
