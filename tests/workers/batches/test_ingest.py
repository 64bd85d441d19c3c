"""Ingest through the API and an in-process worker: rows read back equal the input as an
independent reader (pandas, pyarrow, json) sees it; bad input fails precisely; one snapshot."""

from __future__ import annotations

import base64
import io
import json
import random
import re
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient

from tests.fixtures.batches import data_files, events_csv, ingest, rows
from tests.fixtures.datasets import ALL_TYPES, EVENTS
from tests.fixtures.spark import RunJobs

pytestmark = pytest.mark.spark


def pandas_model(*files: bytes) -> list[dict[str, Any]]:
    """The expected rows, as pandas reads the CSV files (empty cells are null)."""
    frame = pd.concat([pd.read_csv(io.BytesIO(f), dtype=str, keep_default_na=False) for f in files])
    expected = []
    for record in frame.to_dict("records"):
        expected.append(
            {
                "event_id": int(record["event_id"]),
                "user_id": record["user_id"] or None,
                "event_time": datetime.fromisoformat(record["event_time"]).isoformat(),
                "payload": record["payload"] or None,
            }
        )
    return sorted(expected, key=lambda r: r["event_id"])


def strip_batch(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        ({k: v for k, v in r.items() if k != "_batch_id"} for r in found),
        key=lambda r: r["event_id"],
    )


def test_csv_multi_file_batch_reads_back_equal(client: TestClient, run_jobs: RunJobs) -> None:
    dataset = client.post("/v1/datasets", json=EVENTS).json()
    first, second = events_csv(0, 500, seed=1), events_csv(500, 700, seed=2)
    # a file whose columns come in another order is still the same schema
    reordered = b"payload,event_time,event_id\nlate,2024-03-09T00:00:00,5000\n"
    batch = ingest(
        client,
        run_jobs,
        dataset["id"],
        "csv",
        {"a.csv": first, "b.csv": second, "c.csv": reordered},
    )
    assert batch["status"] == "success", batch
    assert batch["row_count"] == 1201
    expected = pandas_model(first, second) + [
        {"event_id": 5000, "user_id": None, "event_time": "2024-03-09T00:00:00", "payload": "late"}
    ]
    found = rows(client, dataset["id"])
    assert {r["_batch_id"] for r in found} == {batch["id"]}
    assert strip_batch(found) == sorted(expected, key=lambda r: r["event_id"])

    snapshots = client.get(f"/v1/datasets/{dataset['id']}/snapshots").json()["items"]
    assert len(snapshots) == 1
    assert len(data_files(client, "events")) == int(snapshots[0]["summary"]["added-data-files"])
    assert snapshots[0]["snapshot_id"] == batch["snapshot_id"]
    assert snapshots[0]["icebatch"]["icebatch.operation"] == "ingest"
    assert snapshots[0]["icebatch"]["icebatch.batch-id"] == batch["id"]
    job = client.get(f"/v1/jobs/{batch['job_id']}").json()
    assert snapshots[0]["icebatch"]["icebatch.request-id"] == job["request_id"]
    assert job["state"] == "succeeded"
    assert job["progress"] == 1.0
    assert job["attempt"] == 1
    assert job["result"] == {"snapshot_id": batch["snapshot_id"], "row_count": 1201}


def test_sorted_by_batch_within_day_partitions(
    client: TestClient, run_jobs: RunJobs, spark: Any
) -> None:
    dataset = client.post("/v1/datasets", json=EVENTS).json()
    ingest(client, run_jobs, dataset["id"], "csv", {"a.csv": events_csv(0, 300, seed=3)})
    ingest(client, run_jobs, dataset["id"], "csv", {"a.csv": events_csv(300, 300, seed=4)})
    table = client.get(f"/v1/datasets/{dataset['id']}").json()["table"]
    files = spark.sql(f"SELECT partition, lower_bounds, upper_bounds FROM {table}.files").collect()
    days = {f.partition.event_time_day for f in files}
    assert len(days) == 5
    # each batch wrote one file per day: the files' _batch_id bounds are one value each
    assert len(files) == 10
    for f in files:
        bounds = dict(f.lower_bounds.items())
        uppers = dict(f.upper_bounds.items())
        batch_field = max(bounds)  # _batch_id has the highest field id
        assert bounds[batch_field] == uppers[batch_field]


def test_json_lines_with_every_type(client: TestClient, run_jobs: RunJobs) -> None:
    dataset = client.post("/v1/datasets", json={"name": "all_types", "schema": ALL_TYPES}).json()
    records: list[dict[str, Any]] = [
        {
            "b": i % 2 == 0,
            "i": i,
            "l": 10**12 + i,
            "f": 1.5,
            "d": i / 3,
            "dec": f"{i}.125",
            "day": str(date(2024, 1, 1) + timedelta(days=i)),
            "ts": f"2024-01-01T00:00:{i:02d}.123456",
            "tstz": f"2024-01-01T00:00:{i:02d}+02:00",
            "s": f"s{i}",
            "bin": base64.b64encode(bytes([i, 255])).decode(),
            "address": {"city": f"c{i}", "geo": {"lat": i * 1.5}},
            "tags": [f"t{i}", None],
            "attrs": {"k": [i, i + 1]},
        }
        for i in range(20)
    ]
    records.append({"l": 7})  # only the required field
    body = "\n".join(json.dumps(r) for r in records).encode()
    batch = ingest(client, run_jobs, dataset["id"], "json", {"part.json": body})
    assert batch["status"] == "success", batch
    found = sorted(rows(client, dataset["id"]), key=lambda r: r["l"])
    assert len(found) == 21
    assert found[0] == {**{f["name"]: None for f in ALL_TYPES}, "l": 7, "_batch_id": batch["id"]}
    for record, got in zip(sorted(records[:-1], key=lambda r: r["l"]), found[1:], strict=True):
        assert got["b"] == record["b"]
        assert got["i"] == record["i"]
        assert got["l"] == record["l"]
        assert got["d"] == pytest.approx(record["d"])
        assert Decimal(got["dec"]) == Decimal(record["dec"])
        assert got["day"] == record["day"]
        assert got["ts"] == record["ts"]
        expected_tstz = datetime.fromisoformat(record["tstz"]).astimezone(UTC)
        assert datetime.fromisoformat(got["tstz"]) == expected_tstz
        assert got["bin"] == record["bin"]
        assert got["address"] == record["address"]
        assert got["tags"] == record["tags"]
        assert got["attrs"] == record["attrs"]


def test_parquet_with_nested_types_reads_back_equal(client: TestClient, run_jobs: RunJobs) -> None:
    dataset = client.post("/v1/datasets", json={"name": "all_types", "schema": ALL_TYPES}).json()
    rng = random.Random(7)
    n = 2000
    table = pa.table(
        {
            "b": pa.array([rng.random() < 0.5 for _ in range(n)]),
            "i": pa.array([rng.randrange(-1000, 1000) for _ in range(n)], pa.int32()),
            "l": pa.array(range(n), pa.int64()),
            "f": pa.array([float(rng.randrange(100)) for _ in range(n)], pa.float32()),
            "d": pa.array([rng.random() for _ in range(n)]),
            "dec": pa.array(
                [Decimal(rng.randrange(10**6)) / 1000 for _ in range(n)], pa.decimal128(12, 3)
            ),
            "day": pa.array(
                [date(2020, 1, 1) + timedelta(days=rng.randrange(1000)) for _ in range(n)]
            ),
            "ts": pa.array(
                [datetime(2024, 1, 1) + timedelta(seconds=rng.randrange(10**6)) for _ in range(n)],
                pa.timestamp("us"),
            ),
            "tstz": pa.array(
                [datetime(2024, 1, 1, tzinfo=UTC) + timedelta(seconds=i) for i in range(n)],
                pa.timestamp("us", tz="UTC"),
            ),
            "s": pa.array([None if i % 10 == 0 else f"s{i}" for i in range(n)]),
            "bin": pa.array([bytes([i % 256]) * 3 for i in range(n)], pa.binary()),
            "address": pa.array([{"city": f"c{i % 7}", "geo": {"lat": i / 2}} for i in range(n)]),
            "tags": pa.array([[f"t{j}" for j in range(i % 4)] for i in range(n)]),
            "attrs": pa.array(
                [[("k", [i]), ("z", [])] for i in range(n)],
                pa.map_(pa.string(), pa.list_(pa.int64())),
            ),
        }
    )
    halves = []
    for part in (table.slice(0, n // 2), table.slice(n // 2)):
        sink = io.BytesIO()
        pq.write_table(part, sink)
        halves.append(sink.getvalue())
    batch = ingest(
        client,
        run_jobs,
        dataset["id"],
        "parquet",
        {"p1.parquet": halves[0], "p2.parquet": halves[1]},
    )
    assert batch["status"] == "success", batch
    assert batch["row_count"] == n
    response = client.get(f"/v1/datasets/{dataset['id']}/rows", params={"format": "arrow"})
    assert response.headers["content-type"] == "application/vnd.apache.arrow.stream"
    got = pa.ipc.open_stream(response.content).read_all().sort_by("l")
    expected = (
        pq.read_table(io.BytesIO(halves[0])).to_pylist()
        + pq.read_table(io.BytesIO(halves[1])).to_pylist()
    )
    got_rows = got.drop_columns(["_batch_id"]).to_pylist()
    assert len(got_rows) == n
    for want, have in zip(sorted(expected, key=lambda r: r["l"]), got_rows, strict=True):
        assert have == want


def test_as_of_reads_earlier_snapshots(client: TestClient, run_jobs: RunJobs) -> None:
    dataset = client.post("/v1/datasets", json=EVENTS).json()
    first = ingest(client, run_jobs, dataset["id"], "csv", {"a.csv": events_csv(0, 10, seed=8)})
    second = ingest(client, run_jobs, dataset["id"], "csv", {"a.csv": events_csv(10, 5, seed=9)})
    assert len(rows(client, dataset["id"])) == 15
    assert len(rows(client, dataset["id"], as_of=first["snapshot_id"])) == 10
    snapshots = client.get(f"/v1/datasets/{dataset['id']}/snapshots").json()["items"]
    assert [s["snapshot_id"] for s in snapshots] == [second["snapshot_id"], first["snapshot_id"]]
    assert snapshots[0]["parent_id"] == first["snapshot_id"]
    first_time = snapshots[1]["committed_at"]
    assert len(rows(client, dataset["id"], as_of=first_time)) == 10
    assert len(rows(client, dataset["id"], limit=4, offset=12)) == 3
    missing = client.get(f"/v1/datasets/{dataset['id']}/rows", params={"as_of": "123"})
    assert missing.status_code == 404
    assert "snapshot 123" in missing.json()["detail"]
    before = client.get(
        f"/v1/datasets/{dataset['id']}/rows", params={"as_of": "2000-01-01T00:00:00Z"}
    )
    assert before.status_code == 404
    garbage = client.get(f"/v1/datasets/{dataset['id']}/rows", params={"as_of": "soon"})
    assert garbage.status_code == 422
    assert "ISO 8601" in garbage.json()["detail"]


def test_csv_nested_cells_are_json_and_checked(client: TestClient, run_jobs: RunJobs) -> None:
    schema = [
        {"name": "id", "type": "long", "required": True},
        {
            "name": "address",
            "type": "struct",
            "fields": [{"name": "city", "type": "string"}, {"name": "lat", "type": "double"}],
        },
        {
            "name": "attrs",
            "type": "map",
            "key": {"type": "string"},
            "value": {"type": "list", "element": {"type": "long"}},
        },
    ]
    dataset = client.post("/v1/datasets", json={"name": "nested", "schema": schema}).json()
    good = b'id,address,attrs\n1,"{""city"": ""Paris"", ""lat"": 48.85}","{""k"": [1, 2]}"\n2,,\n'
    batch = ingest(client, run_jobs, dataset["id"], "csv", {"good.csv": good})
    assert batch["status"] == "success", batch
    found = sorted(rows(client, dataset["id"]), key=lambda r: r["id"])
    assert [(r["id"], r["address"], r["attrs"]) for r in found] == [
        (1, {"city": "Paris", "lat": 48.85}, {"k": [1, 2]}),
        (2, None, None),
    ]
    bad = (
        b"id,address,attrs\n"
        b'3,"{""city"": ""Oslo"", ""lat"": ""north""}",\n'
        b'4,,"{""k"": [""x""]}"\n'
        b"5,not json,\n"
    )
    failed = ingest(client, run_jobs, dataset["id"], "csv", {"bad.csv": bad})
    assert failed["status"] == "failed"
    assert [(e["row"], re.split(r"[.{\[]", e["field"])[0]) for e in failed["errors"]] == [
        (1, "address"),
        (2, "attrs"),
        (3, "address"),
    ]
    assert len(rows(client, dataset["id"])) == 2


def test_a_header_only_csv_is_a_valid_empty_batch(client: TestClient, run_jobs: RunJobs) -> None:
    """A CSV with its header and no row: a 'success' batch of 0 rows that commits a snapshot of
    its own (adding no row, the table's rows unchanged); a 0-byte file is refused (422)."""
    from app.config import get_settings

    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    first = ingest(client, run_jobs, did, "csv", {"a.csv": events_csv(0, 3, seed=3)})
    empty = client.post("/v1/batches", json={"dataset_id": did, "format": "csv"}).json()["id"]
    refused = client.put(f"/v1/batches/{empty}/files/z.csv", content=b"")
    assert refused.status_code == 422
    assert refused.json()["detail"] == "file 'z.csv' is empty"
    assert client.get(f"/v1/batches/{empty}").json()["file_count"] == 0
    assert not list((get_settings().staging_dir / empty).glob("*"))  # nothing of it kept
    header = ingest(
        client, run_jobs, did, "csv", {"h.csv": b"event_id,user_id,event_time,payload\n"}
    )
    assert (header["status"], header["row_count"], header["errors"]) == ("success", 0, None)
    snapshots = client.get(f"/v1/datasets/{did}/snapshots").json()["items"]
    assert [s["snapshot_id"] for s in snapshots] == [header["snapshot_id"], first["snapshot_id"]]
    assert snapshots[0]["parent_id"] == first["snapshot_id"]
    summary = snapshots[0]["summary"]
    assert (summary.get("added-records", "0"), summary["total-records"]) == ("0", "3")
    assert summary.get("added-data-files", "0") == "0"
    assert snapshots[0]["icebatch"]["icebatch.batch-id"] == header["id"]
    assert len(rows(client, did)) == 3
    assert len(rows(client, did, as_of=header["snapshot_id"])) == 3
