"""Revert, replay and GDPR delete through the API and an in-process worker, on both stores."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.pagination import offset_cursor
from tests.fixtures.batches import csv_rows, ids, ingest, replay
from tests.fixtures.datasets import EVENTS
from tests.fixtures.spark import RunJobs

pytestmark = pytest.mark.spark


def test_revert_replay_and_gdpr(client: TestClient, run_jobs: RunJobs, spark: Any) -> None:
    dataset = client.post("/v1/datasets", json=EVENTS).json()
    did = dataset["id"]
    b1 = ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(1, "u1"), (2, "u2")])})
    b2 = ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(3, "u1"), (4, "u3")])})
    assert ids(client, did) == [1, 2, 3, 4]
    before_revert = b2["snapshot_id"]

    reverted = client.post(f"/v1/batches/{b1['id']}", params={"action": "REVERT"})
    assert reverted.status_code == 202, reverted.text
    again = client.post(f"/v1/batches/{b1['id']}", params={"action": "REVERT"})
    assert again.status_code == 409
    assert "pending" in again.json()["detail"]
    run_jobs()
    job = client.get(f"/v1/jobs/{reverted.json()['job']['id']}").json()
    assert job["state"] == "succeeded", job
    assert job["result"]["rows_hidden"] == 2
    assert job["result"]["tombstones_written"] == 1
    assert client.get(f"/v1/batches/{b1['id']}").json()["status"] == "reverted"
    assert ids(client, did) == [3, 4]
    assert ids(client, did, as_of=before_revert) == [1, 2, 3, 4]
    third = client.post(f"/v1/batches/{b1['id']}", params={"action": "REVERT"})
    assert third.status_code == 409
    assert "'reverted'" in third.json()["detail"]

    new = replay(client, run_jobs, did, [b2["id"]], csv_rows([(30, "u1"), (40, "u4")]))
    assert new["status"] == "success", new
    assert new["row_count"] == 2
    assert client.get(f"/v1/batches/{b2['id']}").json()["status"] == "replaced"
    assert ids(client, did) == [30, 40]
    snapshot = client.get(f"/v1/datasets/{did}/snapshots").json()["items"][0]
    assert snapshot["snapshot_id"] == new["snapshot_id"]
    assert snapshot["icebatch"]["icebatch.operation"] == "replay"
    assert snapshot["summary"]["added-records"] == "2"
    assert snapshot["tombstone"]["tombstone.metrics.added.count"] == "1"
    assert snapshot["tombstones"]["total"] == 2

    gdpr = client.post(
        "/v1/privacy/jobs", json={"dataset_ids": [did], "column": "user_id", "values": ["u1"]}
    )
    assert gdpr.status_code == 202, gdpr.text
    assert gdpr.json()["status"] == "submitted"
    run_jobs()
    status = client.get(f"/v1/privacy/jobs/{gdpr.json()['id']}").json()
    assert status["status"] == "complete", status
    assert status["tombstones_written"] == 1
    assert status["rows_hidden"] == 1
    assert ids(client, did) == [40]
    # rows of u1 appended after the GDPR tombstone stay visible
    ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(50, "u1")])})
    assert ids(client, did) == [40, 50]

    listed = client.get(f"/v1/datasets/{did}/tombstones", params={"namespace": "user_id"}).json()
    assert [(t["namespace"], t["id"], t["meta"]["operation"]) for t in listed["items"]] == [
        ("user_id", "u1", "gdpr")
    ]
    everything = client.get(f"/v1/datasets/{did}/tombstones").json()
    assert everything["total"] == 3

    # the Spark helper sees what the API sees, at every snapshot
    from workers.spark.read import read_dataset

    for snap in client.get(f"/v1/datasets/{did}/snapshots").json()["items"]:
        frame = read_dataset(spark, dataset["table"], as_of=snap["snapshot_id"])
        assert sorted(r.event_id for r in frame.select("event_id").collect()) == ids(
            client, did, as_of=snap["snapshot_id"]
        )
    assert sorted(r.event_id for r in read_dataset(spark, dataset["table"]).collect()) == [40, 50]


def test_replay_and_revert_need_a_success_batch(client: TestClient, run_jobs: RunJobs) -> None:
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    loading = client.post("/v1/batches", json={"dataset_id": did, "format": "csv"}).json()
    refused = client.post(f"/v1/batches/{loading['id']}", params={"action": "REVERT"})
    assert refused.status_code == 409
    assert "'loading'" in refused.json()["detail"]
    assert "success" in refused.json()["detail"]
    opened = client.post(
        "/v1/batches",
        json={"dataset_id": did, "format": "csv", "replay": {"predecessors": [loading["id"]]}},
    )
    assert opened.status_code == 409
    gdpr = client.post(
        "/v1/privacy/jobs", json={"dataset_ids": [did], "column": "payload", "values": ["x"]}
    )
    assert gdpr.status_code == 422
    assert "identity column" in gdpr.json()["detail"]


def carried_jobs(privacy: list[dict[str, Any]]) -> list[str]:
    return [d["job_id"] for p in privacy for d in p["datasets"]]


def test_restatements_ready_together_commit_as_one_snapshot(
    client: TestClient, run_jobs: RunJobs
) -> None:
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    batches = [
        ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(i, f"u{i % 3}")])})
        for i in range(3)
    ]
    before = len(client.get(f"/v1/datasets/{did}/snapshots").json()["items"])
    jobs = [
        client.post(f"/v1/batches/{b['id']}", params={"action": "REVERT"}).json()["job"]["id"]
        for b in batches[:2]
    ]
    privacy = [
        client.post(
            "/v1/privacy/jobs", json={"dataset_ids": [did], "column": "user_id", "values": [u]}
        ).json()
        for u in ("u2", "nobody")
    ]
    # one message carries the burst: later jobs ride on the first queued one
    from sqlalchemy import func, select

    from app.db import session_scope
    from app.models import OutboxMessage

    with session_scope() as session:
        messages = session.scalar(
            select(func.count()).where(OutboxMessage.job_id.in_([*jobs, *carried_jobs(privacy)]))
        )
    assert messages == 1
    ran = run_jobs()
    # the first job's committer took every ready restatement and finished the other jobs
    attempts = sorted(client.get(f"/v1/jobs/{j}").json()["attempt"] for j in ran)
    assert attempts == [0, 0, 0, 1]
    results = [client.get(f"/v1/jobs/{j}").json() for j in jobs]
    assert all(r["state"] == "succeeded" for r in results)
    assert [r["result"]["rows_hidden"] for r in results] == [1, 1]
    snapshots = client.get(f"/v1/datasets/{did}/snapshots").json()["items"]
    # reverts and GDPR deletes are different operations: one snapshot per kind
    assert len(snapshots) == before + 2
    revert_snapshot = next(s for s in snapshots if s["icebatch"]["icebatch.operation"] == "revert")
    assert revert_snapshot["icebatch"]["icebatch.request-count"] == "2"
    carried = sorted(r["request_id"] for r in results)
    assert revert_snapshot["icebatch"]["icebatch.request-ids"] == ",".join(carried)
    assert {r["result"]["snapshot_id"] for r in results} == {revert_snapshot["snapshot_id"]}
    statuses = [client.get(f"/v1/privacy/jobs/{p['id']}").json() for p in privacy]
    assert [s["rows_hidden"] for s in statuses] == [1, 0]
    assert [s["status"] for s in statuses] == ["complete", "complete"]
    assert ids(client, did) == []
    listed = client.get(f"/v1/datasets/{did}/tombstones").json()
    assert sorted((t["namespace"], t["id"]) for t in listed["items"]) == sorted(
        [
            ("_batch_id", batches[0]["id"]),
            ("_batch_id", batches[1]["id"]),
            ("user_id", "u2"),
            ("user_id", "nobody"),
        ]
    )


def test_replay_files_carry_their_partition(
    client: TestClient, run_jobs: RunJobs, spark: Any
) -> None:
    """Staged replay files are registered with the partition Iceberg would give them: queries
    that prune on the partition (bucket, truncate, day) find every row."""
    body = {
        **EVENTS,
        "name": "partitioned",
        "partition": [
            {"column": "user_id", "transform": "bucket", "width": 4},
            {"column": "payload", "transform": "truncate", "width": 2},
            {"column": "event_time", "transform": "day"},
        ],
    }
    dataset = client.post("/v1/datasets", json=body).json()
    old = ingest(client, run_jobs, dataset["id"], "csv", {"a.csv": csv_rows([(0, "u0")])})
    records = [(i, f"user-{i % 7}") for i in range(1, 60)]
    new = replay(client, run_jobs, dataset["id"], [old["id"]], csv_rows(records))
    assert new["status"] == "success", new
    assert ids(client, dataset["id"]) == [i for i, _ in records]
    table = dataset["table"]
    for user in sorted({u for _, u in records}):
        expected = sorted(i for i, u in records if u == user)
        pruned = spark.sql(f"SELECT event_id FROM {table} WHERE user_id = '{user}'").collect()
        assert sorted(r.event_id for r in pruned) == expected, user
    day = spark.sql(
        f"SELECT count(*) AS n FROM {table} WHERE event_time >= '2024-03-02' "
        f"AND event_time < '2024-03-03' AND _batch_id = '{new['id']}'"
    ).collect()[0]
    assert day.n == sum(1 for i, _ in records if 1 + i % 3 == 2)


def test_a_replay_with_bad_rows_fails_and_frees_its_predecessors(
    client: TestClient, run_jobs: RunJobs
) -> None:
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    old = ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(1, "u1")])})
    bad = b"event_id,user_id,event_time,payload\nnot-a-number,u1,2024-03-01T00:00:00,x\n"
    failed = replay(client, run_jobs, did, [old["id"]], bad)
    assert failed["status"] == "failed"
    assert failed["errors"][0]["field"] == "event_id"
    assert client.get(f"/v1/batches/{old['id']}").json()["restated_by"] is None
    assert ids(client, did) == [1]
    # the predecessor can be replayed again
    good = replay(client, run_jobs, did, [old["id"]], csv_rows([(2, "u1")]))
    assert good["status"] == "success"
    assert ids(client, did) == [2]


@pytest.mark.parametrize("stack", ["embedded"], indirect=True)  # one store is enough here
def test_gdpr_delete_of_100k_values(client: TestClient, run_jobs: RunJobs) -> None:
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(i, f"v{i}") for i in range(50)])})
    values = [f"v{i}" for i in range(0, 100_000, 1)]
    too_many = client.post(
        "/v1/privacy/jobs",
        json={"dataset_ids": [did], "column": "user_id", "values": [*values, "one-more"]},
    )
    assert too_many.status_code == 422
    submitted = client.post(
        "/v1/privacy/jobs", json={"dataset_ids": [did], "column": "user_id", "values": values}
    )
    assert submitted.status_code == 202, submitted.text
    run_jobs()
    status = client.get(f"/v1/privacy/jobs/{submitted.json()['id']}").json()
    assert status["status"] == "complete"
    assert status["tombstones_written"] == 100_000
    assert status["rows_hidden"] == 50
    assert ids(client, did) == []
    page = client.get(
        f"/v1/datasets/{did}/tombstones", params={"limit": 10, "cursor": offset_cursor(99_995)}
    )
    assert page.json()["total"] == 100_000
    assert len(page.json()["items"]) == 5
    assert page.json()["next"] is None
