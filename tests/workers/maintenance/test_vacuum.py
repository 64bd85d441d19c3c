"""Vacuum and compaction through the API and an in-process worker, on both stores: the rows
visible stay exactly the same, tombstoned rows leave the files, tombstones leave the active set
only when every file that may hold them was rewritten."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient

from tests.fixtures.batches import csv_rows, ingest, rows
from tests.fixtures.datasets import EVENTS
from tests.fixtures.spark import RunJobs

pytestmark = pytest.mark.spark


def run(client: TestClient, run_jobs: RunJobs, path: str, body: dict[str, Any]) -> dict[str, Any]:
    started = client.post(path, json=body)
    assert started.status_code == 202, started.text
    run_jobs()
    job = client.get(f"/v1/jobs/{started.json()['id']}").json()
    assert job["state"] == "succeeded", job
    return dict(job["result"])


def live_paths(dataset_id: str) -> list[str]:
    from app.db import session_scope
    from app.lake import visible
    from app.lake.catalog import get_catalog
    from app.models import Dataset

    with session_scope() as session:
        dataset = session.get(Dataset, dataset_id)
        assert dataset is not None
        identifier = dataset.table_identifier
    table = get_catalog().load_table(identifier)
    return [p.data_file.file_path for p in visible.plan(table, table.current_snapshot())]


def physical_ids(dataset_id: str) -> list[int]:
    """event_id of every row physically in the current snapshot's files, tombstones ignored."""
    found: list[int] = []
    for path in live_paths(dataset_id):
        found += pq.read_table(Path(path.removeprefix("file://")))["event_id"].to_pylist()
    return sorted(found)


def summary(client: TestClient, dataset_id: str) -> dict[str, Any]:
    return dict(client.get(f"/v1/datasets/{dataset_id}/snapshots").json()["items"][0])


def by_event(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(found, key=lambda r: r["event_id"])


def visible_ids(client: TestClient, dataset_id: str, **params: Any) -> list[int]:
    return sorted(r["event_id"] for r in rows(client, dataset_id, **params))


def test_vacuum_full_partial_and_dry_run(client: TestClient, run_jobs: RunJobs) -> None:
    from app.lake import column_index, tombstones
    from app.lake.catalog import get_catalog
    from app.privacy.reads import for_table

    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    batches = [
        ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows(recs, day=1)})
        for recs in ([(1, "u1"), (2, "u2")], [(3, "u2"), (4, "u3")], [(5, "u4"), (8, "u1")])
    ]
    reverted = client.post(f"/v1/batches/{batches[0]['id']}", params={"action": "REVERT"})
    assert reverted.status_code == 202
    gdpr = client.post(
        "/v1/privacy/jobs", json={"dataset_ids": [did], "column": "user_id", "values": ["u1"]}
    )
    assert gdpr.status_code == 202
    run_jobs()
    before = rows(client, did)
    assert sorted(r["event_id"] for r in before) == [3, 4, 5]
    assert physical_ids(did) == [1, 2, 3, 4, 5, 8]
    pre_vacuum = summary(client, did)["snapshot_id"]

    bad = client.post(f"/v1/datasets/{did}/vacuum", json={"mode": "partial"})
    assert bad.status_code == 422
    plan = run(client, run_jobs, f"/v1/datasets/{did}/vacuum", {"dry_run": True})
    assert plan["dry_run"] is True
    # rows go to day partitions by event_id % 3: batch 1 wrote 2 files (revert, u1), batch 3
    # one (events 5 and 8, u1); batch 2's files hold no tombstoned id
    assert plan["files"] == 3, plan
    assert plan["rows_to_purge"] == 3  # events 1, 2 (revert) and 8 (u1)
    assert plan["tombstones_to_purge"] == 2
    assert summary(client, did)["snapshot_id"] == pre_vacuum  # a dry run commits nothing

    # partial: the oldest tombstone only (the revert): batch 1's file; u1 stays active
    partial = run(
        client, run_jobs, f"/v1/datasets/{did}/vacuum", {"mode": "partial", "tombstones": 1}
    )
    assert partial["tombstones_purged"] == 1, partial
    assert partial["files_deleted"] == 2  # every row of batch 1 was hidden: DELETE FILES
    assert partial["iceberg_operation"] == "delete"
    assert physical_ids(did) == [3, 4, 5, 8]
    assert rows(client, did) == before
    head = summary(client, did)
    assert head["icebatch"]["icebatch.operation"] == "vacuum"
    assert head["tombstones"]["total"] == 1
    assert head["tombstones"]["vacuumed"] == 1

    start = summary(client, did)["snapshot_id"]  # where the full vacuum starts
    column_index.clear()
    old_paths = set(live_paths(did))
    full = run(client, run_jobs, f"/v1/datasets/{did}/vacuum", {"mode": "full"})
    assert full["files_rewritten"] == 1, full
    # the new file's identity and batch columns are indexed already (before the commit): the
    # next group commit's rows-hidden count and materializer find them without reading it
    (written,) = set(live_paths(did)) - old_paths
    for column in ("user_id", "_batch_id"):
        index, present = column_index._CACHE.peek((written, column))
        assert present, column
        assert index is not None
        values = pq.read_table(Path(written.removeprefix("file://")))[column].to_pylist()
        for value in set(values):
            expected = [p for p, v in enumerate(values) if v == value]
            assert index.positions(pa.array([value])).tolist() == expected
    assert full["rows_purged"] == 1
    assert full["iceberg_operation"] == "replace"
    assert physical_ids(did) == [3, 4, 5]
    assert rows(client, did) == before
    assert summary(client, did)["tombstones"]["total"] == 0
    # every tombstone up to its start is purged: the materialized mark moves there, and a read
    # of the current snapshot looks up no GDPR delete (u1's rows are rewritten away); the
    # delete stays in force for the snapshots before
    identifier = client.get(f"/v1/datasets/{did}").json()["table"].split(".", 1)[1]
    table = get_catalog().load_table(identifier)
    current, started = table.current_snapshot(), table.snapshot_by_id(start)
    assert started is not None
    assert tombstones.materialized_seq(table, current) == started.sequence_number
    assert for_table(identifier, table, with_deletes_of=current).rows.num_rows == 0
    assert for_table(identifier, table).rows["id"].to_pylist() == ["u1"]
    # the past stays readable until retention removes it, except the rows of u1: a GDPR
    # delete hides them in every snapshot, its vacuumed tombstone too
    assert visible_ids(client, did, as_of=str(pre_vacuum)) == [3, 4, 5]
    assert visible_ids(client, did, as_of=str(batches[2]["snapshot_id"])) == [2, 3, 4, 5]
    # nothing left: the job says so and commits nothing
    idle = run(client, run_jobs, f"/v1/datasets/{did}/vacuum", {})
    assert idle["nothing_to_do"] is True
    # rows of u1 ingested after the vacuum are visible (the purged tombstone is gone)
    ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(7, "u1")])})
    assert visible_ids(client, did) == [3, 4, 5, 7]


def test_compaction_applies_tombstones_and_keeps_sequence_rule(
    client: TestClient, run_jobs: RunJobs, spark: Any
) -> None:
    from workers.spark.read import read_dataset

    created = client.post("/v1/datasets", json=EVENTS).json()
    did = created["id"]
    first = ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(1, "u1"), (2, "u2")])})
    for n in range(3, 7):
        ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(n, f"u{n}")])})
    client.post(f"/v1/batches/{first['id']}", params={"action": "REVERT"})
    run_jobs()
    before = by_event(rows(client, did))
    files_before = len(live_paths(did))
    result = run(client, run_jobs, f"/v1/datasets/{did}/compact", {"strategy": "binpack"})
    assert result["operation"] == "compact"
    assert result["files_written"] < files_before
    assert len(live_paths(did)) < files_before
    assert by_event(rows(client, did)) == before
    assert 1 not in physical_ids(did)  # compaction drops hidden rows too
    head = summary(client, did)
    assert head["icebatch"]["icebatch.operation"] == "compact"
    # a GDPR delete committed after compaction hides rows of the compacted files
    client.post(
        "/v1/privacy/jobs", json={"dataset_ids": [did], "column": "user_id", "values": ["u3"]}
    )
    run_jobs()
    assert visible_ids(client, did) == [4, 5, 6]
    # Spark readers apply the later tombstone to the compacted files too (their data sequence
    # number is the compaction's start)
    frame = read_dataset(spark, created["table"]).select("event_id")
    assert sorted(r.event_id for r in frame.collect()) == [4, 5, 6]
    sort = run(
        client,
        run_jobs,
        f"/v1/datasets/{did}/compact",
        {"strategy": "sort", "sort_by": ["user_id"]},
    )
    assert sort["files_written"] >= 1
    assert visible_ids(client, did) == [4, 5, 6]
    for path in live_paths(did):
        users = pq.read_table(Path(path.removeprefix("file://")))["user_id"].to_pylist()
        assert users == sorted(users)


@pytest.mark.parametrize("stack", ["embedded"], indirect=True)
def test_vacuum_leaves_files_whose_bounds_only_straddle_a_tombstone(
    client: TestClient, run_jobs: RunJobs
) -> None:
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    # events 1 and 4 share a day file: its user_id bounds [u0, u2] straddle u1 without it
    ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(1, "u0"), (4, "u2")])})
    ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(7, "u1"), (10, "u1")])})
    straddling = live_paths(did)
    client.post(
        "/v1/privacy/jobs", json={"dataset_ids": [did], "column": "user_id", "values": ["u1"]}
    )
    run_jobs()
    plan = run(client, run_jobs, f"/v1/datasets/{did}/vacuum", {"dry_run": True})
    assert plan["files"] == 2  # both files are exposed by their bounds
    assert plan["rows_to_purge"] == 2
    result = run(client, run_jobs, f"/v1/datasets/{did}/vacuum", {})
    assert result["files_unchanged"] == 1, result  # read on user_id only, then left alone
    assert result["files_deleted"] == 1  # batch 2's file: bounds [u1, u1], dropped unread
    assert result["files_rewritten"] == 0
    assert result["tombstones_purged"] == 1
    assert live_paths(did) == [p for p in straddling if p in live_paths(did)]
    assert len(live_paths(did)) == 1
    assert physical_ids(did) == [1, 4]
    assert summary(client, did)["tombstones"]["total"] == 0
