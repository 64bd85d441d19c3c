"""`read_dataset`, Spark's reader of a dataset, on the sequence-number corner of the read rule,
through both of its forms (broadcast joins, and the filter expression of a few ids)."""

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
    from workers.spark.read import INLINE_IDS, read_dataset

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
    for inline_ids in (0, INLINE_IDS):  # the joins, then the filter expression
        frame = read_dataset(spark, dataset["table"], inline_ids=inline_ids)
        assert sorted(r.event_id for r in frame.collect()) == [6, 103, 106], inline_ids


def test_a_tombstone_not_yet_materialized_hides_only_older_files_in_spark(
    client: TestClient, run_jobs: RunJobs, spark: Any
) -> None:
    """A tail of tombstones past the materialized mark, with files on both sides of it: rows of
    the tombstoned id in older files are hidden, in a newer file they stay, on both forms."""
    from app.lake import commit, tombstones
    from app.lake.catalog import get_catalog
    from app.lake.tombstones import NewTombstone
    from workers.spark.read import INLINE_IDS, read_dataset

    dataset = client.post("/v1/datasets", json=EVENTS).json()
    did, identifier = dataset["id"], dataset["table"].split(".", 1)[1]
    ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(1, "u1"), (2, "u2"), (4, None)])})
    table = get_catalog().load_table(identifier)
    field_id = table.schema().find_field("user_id").field_id
    commit.commit(
        table,
        files=[],
        new_tombstones=[NewTombstone(field_id, "u1", "req", "gdpr")],
        properties={},
    )
    ingest(client, run_jobs, did, "csv", {"b.csv": csv_rows([(5, "u1"), (6, "u3")])})
    table = get_catalog().load_table(identifier)
    assert tombstones.unmaterialized(table, table.current_snapshot()).num_rows == 1
    assert ids(client, did) == [2, 4, 5, 6]
    for inline_ids in (0, INLINE_IDS):
        frame = read_dataset(spark, dataset["table"], inline_ids=inline_ids)
        assert sorted(r.event_id for r in frame.collect()) == [2, 4, 5, 6], inline_ids
