"""A GDPR delete hides the identity from every read (DESIGN.md §3, issue 10): `/rows` at every
snapshot (before the delete too), `/changes` and exports (the identity's rows reduced to the
identity columns and the batch), Spark's `read_dataset`; after a vacuum purged the tombstone and
its vacuumed-tombstones file is gone; rows of the identity appended after the delete stay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient

from tests.fixtures.batches import csv_rows, ids, ingest
from tests.fixtures.datasets import EVENTS
from tests.fixtures.spark import RunJobs

pytestmark = pytest.mark.spark

REDUCED = ("event_id", "event_time", "payload")  # null in a GDPR-reduced change row


def changes(client: TestClient, did: str, kind: str, **params: Any) -> list[dict[str, Any]]:
    response = client.get(f"/v1/datasets/{did}/changes", params={"kind": kind, **params})
    assert response.status_code == 200, response.text
    return [json.loads(line) for line in response.text.splitlines()]


def brief(found: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """(event id, user, batch, operation), sorted; reduced rows have no event id."""
    return sorted(
        ((r["event_id"] or 0), r["user_id"], r["_batch_id"], r["_operation"]) for r in found
    )


def run_job(client: TestClient, run_jobs: RunJobs, path: str, body: dict[str, Any]) -> Any:
    started = client.post(path, json=body)
    assert started.status_code == 202, started.text
    run_jobs()
    body = started.json()
    job = client.get(f"/v1/jobs/{body.get('job', body)['id']}").json()  # an export nests it
    assert job["state"] == "succeeded", job
    return job["result"]


def spark_ids(spark: Any, table: str, as_of: int | None = None) -> list[int]:
    from workers.spark.read import read_dataset

    return sorted(r.event_id for r in read_dataset(spark, table, as_of=as_of).collect())


@pytest.mark.parametrize("stack", ["embedded"], indirect=True)  # test_changes runs both stores
def test_gdpr_delete_hides_the_identity_from_every_read(
    client: TestClient, run_jobs: RunJobs, spark: Any
) -> None:
    import workers.changes.task  # noqa: F401  (registers the task)
    from app.lake import snapshots, tombstones
    from app.lake.catalog import get_catalog

    dataset = client.post("/v1/datasets", json=EVENTS).json()
    did, name = dataset["id"], dataset["table"]
    b1 = ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(1, "u1"), (2, "u2")])})
    b2 = ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(3, "u1"), (4, "u3")])})
    s1, s2 = b1["snapshot_id"], b2["snapshot_id"]
    assert client.post(f"/v1/batches/{b2['id']}", params={"action": "REVERT"}).status_code == 202
    run_jobs()
    s3 = client.get(f"/v1/datasets/{did}").json()["current_snapshot_id"]
    job = client.post(
        "/v1/privacy/jobs", json={"dataset_ids": [did], "column": "user_id", "values": ["u1"]}
    )
    assert job.status_code == 202, job.text
    run_jobs()
    status = client.get(f"/v1/privacy/jobs/{job.json()['id']}").json()
    assert status["status"] == "complete", status
    s4 = status["datasets"][0]["snapshot_id"]
    again = ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(5, "u1")])})  # re-registers
    s5 = again["snapshot_id"]

    # /rows and read_dataset: u1's rows older than the delete are gone at every snapshot, the
    # revert still travels in time exactly (4 is back before it), the new u1 row stays
    expected = {s1: [2], s2: [2, 4], s3: [2], s4: [2], s5: [2, 5]}
    for snapshot_id, visible in expected.items():
        assert ids(client, did, as_of=snapshot_id) == visible, snapshot_id
    for snapshot_id in (s1, s2):  # Spark: the snapshots before the delete (the rest as /rows)
        assert spark_ids(spark, name, snapshot_id) == expected[snapshot_id], snapshot_id
    committed = client.get(f"/v1/datasets/{did}/snapshots").json()["items"]
    at = {s["snapshot_id"]: s["committed_at"] for s in committed}
    assert ids(client, did, as_of=at[s2]) == [2, 4]  # as_of a time
    assert ids(client, did) == spark_ids(spark, name) == [2, 5]

    # /changes: the shape of history stays (a replica learns of the revert and of the delete),
    # but u1's rows older than the delete keep only the identity columns and the batch
    b1_id, b2_id, b5_id = b1["id"], b2["id"], again["id"]
    history = changes(client, did, "appended", to_snapshot=s2)
    assert brief(history) == sorted(
        [
            (0, "u1", b1_id, "ingest"),
            (0, "u1", b2_id, "ingest"),
            (2, "u2", b1_id, "ingest"),
            (4, "u3", b2_id, "ingest"),
        ]
    )
    for row in history:
        if row["user_id"] == "u1":
            assert all(row[c] is None for c in REDUCED), row
        else:
            assert row["payload"] == f"p{row['event_id']}", row
    reverted = changes(client, did, "deleted", from_snapshot=s2, to_snapshot=s3)
    assert brief(reverted) == sorted([(0, "u1", b2_id, "revert"), (4, "u3", b2_id, "revert")])
    assert all(r[c] is None for r in reverted if r["user_id"] == "u1" for c in REDUCED)
    erased = changes(client, did, "deleted", from_snapshot=s3, to_snapshot=s4)
    assert brief(erased) == [(0, "u1", b1_id, "gdpr")]
    later = changes(client, did, "appended", from_snapshot=s4)
    assert brief(later) == [(5, "u1", b5_id, "ingest")]
    assert later[0]["payload"] == "p5"
    across = changes(client, did, "deleted", from_snapshot=s1)  # the revert and the delete
    assert brief(across) == sorted(
        [
            (0, "u1", b1_id, "gdpr"),
            (0, "u1", b2_id, "gdpr"),
            (4, "u3", b2_id, "revert"),
        ]
    )

    # the export job writes what the API returns: a range before the delete, reduced
    body = {"kind": "appended", "to_snapshot": s2}
    result = run_job(client, run_jobs, f"/v1/datasets/{did}/exports", body)
    written = pq.read_table(Path(result["path"].removeprefix("file://"))).to_pylist()
    assert brief(written) == brief(history)
    reduced = {(r["event_id"], r["payload"], r["user_id"]) for r in written}
    assert reduced == {(None, None, "u1"), (2, "p2", "u2"), (4, "p4", "u3")}

    # a vacuum purges the tombstone from the active set; then its vacuumed-tombstones file is
    # deleted, as expiry would while an older snapshot stays: the past still hides u1
    vacuum = run_job(client, run_jobs, f"/v1/datasets/{did}/vacuum", {"mode": "full"})
    assert vacuum["tombstones_purged"] == 2, vacuum
    table = get_catalog().load_table(name.split(".", 1)[1])
    head = table.current_snapshot()
    assert head is not None
    assert not tombstones.active(table, head).num_rows
    vacuumed = snapshots.summary_value(head, tombstones.VACUUM_FILE)
    assert vacuumed
    Path(vacuumed.removeprefix("file://")).unlink()
    for snapshot_id, visible in expected.items():
        assert ids(client, did, as_of=snapshot_id) == visible, snapshot_id
    assert spark_ids(spark, name, s2) == [2, 4]
    assert brief(changes(client, did, "appended", to_snapshot=s2)) == brief(history)
    assert ids(client, did) == [2, 5]
