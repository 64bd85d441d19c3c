"""Ingest failures through the API and an in-process worker: bad input fails precisely and
leaves no snapshot or file; a duplicate delivery commits once."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.fixtures.batches import data_files, events_csv, ingest, rows
from tests.fixtures.datasets import EVENTS
from tests.fixtures.spark import RunJobs

pytestmark = pytest.mark.spark


def test_bad_rows_fail_precisely_and_leave_no_snapshot(
    client: TestClient, run_jobs: RunJobs
) -> None:
    dataset = client.post("/v1/datasets", json=EVENTS).json()
    good = events_csv(0, 50, seed=5)
    bad = (
        b"event_id,user_id,event_time,payload\n"
        b"1,u1,2024-01-01T00:00:00,ok\n"
        b"abc,u1,2024-01-01T00:00:00,not a long\n"
        b"3,u1,yesterday,bad time\n"
        b",u1,2024-01-01T00:00:00,missing id\n"
    )
    batch = ingest(client, run_jobs, dataset["id"], "csv", {"good.csv": good, "bad.csv": bad})
    assert batch["status"] == "failed"
    errors = [(e["file"], e["row"], e["field"]) for e in batch["errors"]]
    assert errors == [
        ("bad.csv", 2, "event_id"),
        ("bad.csv", 3, "event_time"),
        ("bad.csv", 4, "event_id"),
    ]
    reasons = [e["reason"] for e in batch["errors"]]
    assert "abc" in reasons[0]
    assert "long" in reasons[0]
    assert "required" in reasons[2]
    assert client.get(f"/v1/datasets/{dataset['id']}/snapshots").json()["items"] == []
    assert rows(client, dataset["id"]) == []
    assert data_files(client, "events") == []  # the aborted write left no file behind
    job = client.get(f"/v1/jobs/{batch['job_id']}").json()
    assert job["state"] == "failed"
    assert "invalid input" in job["error"]
    assert job["attempt"] == 1


def test_header_mismatch_is_a_file_error(client: TestClient, run_jobs: RunJobs) -> None:
    dataset = client.post("/v1/datasets", json=EVENTS).json()
    batch = ingest(
        client,
        run_jobs,
        dataset["id"],
        "csv",
        {"h.csv": b"event_id,usr,event_time\n1,u,2024-01-01T00:00:00\n"},
    )
    assert batch["status"] == "failed"
    assert any(e["file"] == "h.csv" and "usr" in e["reason"] for e in batch["errors"])
    assert client.get(f"/v1/datasets/{dataset['id']}/snapshots").json()["items"] == []


def test_duplicate_delivery_commits_once(client: TestClient, run_jobs: RunJobs) -> None:
    """The same message twice, and a retry after a crash between commit and bookkeeping."""
    from sqlalchemy import update

    import workers.batches.task as tasks
    from app.db import session_scope
    from app.models import Batch, Job

    dataset = client.post("/v1/datasets", json=EVENTS).json()
    batch = ingest(client, run_jobs, dataset["id"], "csv", {"a.csv": events_csv(0, 100, seed=6)})
    assert batch["status"] == "success"
    tasks.ingest_task(batch["job_id"])  # a duplicate message: the job is no longer queued
    # a worker that committed and died before recording it: the job is queued again
    with session_scope() as session:
        session.execute(update(Job).where(Job.id == batch["job_id"]).values(state="queued"))
        session.execute(update(Batch).where(Batch.id == batch["id"]).values(status="staged"))
    tasks.ingest_task(batch["job_id"])
    after = client.get(f"/v1/batches/{batch['id']}").json()
    assert after["status"] == "success"
    assert after["snapshot_id"] == batch["snapshot_id"]
    assert len(client.get(f"/v1/datasets/{dataset['id']}/snapshots").json()["items"]) == 1
    assert len(rows(client, dataset["id"])) == 100


def test_bad_row_in_one_of_many_splits_writes_no_file(
    client: TestClient, run_jobs: RunJobs, spark: Any
) -> None:
    """Many input tasks, one bad row: the check runs before the write's exchange, so the
    stage that writes data files never starts and no orphan file is left behind."""
    dataset = client.post("/v1/datasets", json=EVENTS).json()
    good = events_csv(0, 3000, seed=12)
    bad = good.replace(b"\n2999,", b"\nnot-a-number,")
    assert bad != good
    saved = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "16k")  # ~10 input tasks per file
    try:
        batch = ingest(client, run_jobs, dataset["id"], "csv", {"good.csv": good, "bad.csv": bad})
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", saved)
    assert batch["status"] == "failed"
    assert [(e["file"], e["field"]) for e in batch["errors"]] == [("bad.csv", "event_id")]
    assert data_files(client, "events") == []
