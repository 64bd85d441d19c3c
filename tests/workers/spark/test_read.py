"""`read_dataset`, Spark's reader of a dataset, on the sequence-number corner of the read rule."""

from __future__ import annotations

from typing import Any

import pyarrow.parquet as pq
from fastapi.testclient import TestClient

from tests.fixtures.batches import csv_rows, data_files, ids, ingest
from tests.fixtures.datasets import EVENTS
from tests.fixtures.spark import RunJobs


def test_rows_committed_with_a_tombstone_stay_visible_in_spark(
    client: TestClient, run_jobs: RunJobs, spark: Any
) -> None:
    """A tombstone hides rows of files strictly older than it. Rows committed in the same
    snapshot as a tombstone on their own id stay visible, in Spark as through the API."""
    from app.lake import commit
    from app.lake.catalog import get_catalog
    from app.lake.tombstones import NewTombstone
    from workers.spark.read import read_dataset

    dataset = client.post("/v1/datasets", json=EVENTS).json()
    did = dataset["id"]
    ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(3, "u1"), (6, "u2")])})  # one day
    [older] = data_files(client, EVENTS["name"])
    # the same rows as a new file in the same partition, renumbered, committed together with a
    # tombstone on user u1: the old u1 row is hidden, the new one is not
    rows = pq.ParquetFile(older).read()  # not read_table: no hive partition column
    renumbered = [n + 100 for n in rows.column("event_id").to_pylist()]
    rows = rows.set_column(0, rows.schema.field(0), [renumbered])  # keeps the field id
    path = older.with_name("same-snapshot.parquet")
    pq.write_table(rows, path)
    table = get_catalog().load_table(dataset["table"].split(".", 1)[1])
    field_id = table.schema().find_field("user_id").field_id
    commit.commit(
        table,
        files=commit.data_files(table, [f"file://{path}"]),
        new_tombstones=[NewTombstone(field_id, "u1", "req", "gdpr")],
        properties={},
    )
    assert ids(client, did) == [6, 103, 106]
    spark_ids = sorted(r.event_id for r in read_dataset(spark, dataset["table"]).collect())
    assert spark_ids == [6, 103, 106]
