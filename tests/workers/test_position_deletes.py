"""Tombstones copied into Iceberg position delete files (docs/position-deletes.md): every engine
hides the rows, Icebatch's readers apply the files, and newer rows of the same identity stay.

The materializer job is not built yet: the test resolves and commits the delete files with the
primitives it will use (`app.lake.position_deletes`, `iceberg_java.commit_position_deletes`)."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.fixtures.batches import csv_rows, ids, ingest
from tests.fixtures.datasets import EVENTS
from tests.fixtures.spark import RunJobs

pytestmark = pytest.mark.spark


def materialize(spark: Any, identifier: str) -> int:
    """Write and commit, for every data file, the positions its active tombstones hide;
    returns how many positions were written."""
    from app.lake import position_deletes, visible
    from app.lake.catalog import get_catalog
    from workers.spark import iceberg_java

    table = get_catalog().load_table(identifier)
    snapshot = table.current_snapshot()
    assert snapshot is not None
    filt = visible.tombstone_filter(table, snapshot)
    written, total = [], 0
    for planned in visible.plan(table, snapshot):
        path = planned.data_file.file_path
        positions = position_deletes.hidden_positions(table.io, path, filt.candidates(planned))
        if len(positions):
            written.append(
                (position_deletes.write(table.io, table.location(), path, positions), path)
            )
            total += len(positions)
    iceberg_java.commit_position_deletes(
        spark,
        iceberg_java.load_table(spark, identifier),
        parent_id=snapshot.snapshot_id,
        written=written,
        summary={"tombstone.materialized-seq": str(snapshot.sequence_number)},
    )
    return total


def plain_engines(spark: Any, table_name: str, identifier: str) -> dict[str, list[int]]:
    """The table's event ids as Spark SQL and PyIceberg read it, with no Icebatch helper."""
    from app.lake.catalog import get_catalog

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        by_spark = [r[0] for r in spark.sql(f"SELECT event_id FROM {table_name}").collect()]
    scanned = get_catalog().load_table(identifier).scan(selected_fields=("event_id",)).to_arrow()
    return {"spark": sorted(by_spark), "pyiceberg": sorted(scanned["event_id"].to_pylist())}


def test_every_engine_hides_materialized_tombstones(
    client: TestClient, run_jobs: RunJobs, spark: Any
) -> None:
    from app.lake import visible
    from app.lake.catalog import get_catalog
    from app.lake.commit import ParentMoved
    from workers.spark import iceberg_java

    dataset = client.post("/v1/datasets", json=EVENTS).json()
    did, table_name = dataset["id"], dataset["table"]
    identifier = table_name.split(".", 1)[1]
    rows = [(1, "u1"), (2, "u2"), (3, "u1"), (4, "u3"), (5, "u1"), (6, "u2"), (7, "u4")]
    model = dict(rows)
    ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows(rows[:4])})
    ingest(client, run_jobs, did, "csv", {"b.csv": csv_rows(rows[4:])})
    gdpr = client.post(
        "/v1/privacy/jobs", json={"dataset_ids": [did], "column": "user_id", "values": ["u1"]}
    )
    assert gdpr.status_code == 202, gdpr.text
    run_jobs()
    for event_id in [e for e, user in model.items() if user == "u1"]:
        del model[event_id]
    assert ids(client, did) == sorted(model)
    # before materialization only Icebatch's readers hide the erased rows
    assert plain_engines(spark, table_name, identifier)["spark"] == sorted(e for e, _ in rows)

    assert materialize(spark, identifier) == 3
    assert plain_engines(spark, table_name, identifier) == {
        "spark": sorted(model),
        "pyiceberg": sorted(model),
    }
    assert ids(client, did) == sorted(model)
    # Icebatch's planner applies the delete files on their own too: with no tombstone at all
    table = get_catalog().load_table(identifier)
    planned = visible.plan(table, table.current_snapshot())
    assert all(len(p.delete_files) == 1 for p in planned if p.delete_files)
    scan_rows = _read_without_tombstones(table, planned)
    assert sorted(scan_rows) == sorted(model)

    # a newer row of the erased identity is not hidden (delete files apply to older files only)
    ingest(client, run_jobs, did, "csv", {"c.csv": csv_rows([(8, "u1")])})
    model[8] = "u1"
    assert ids(client, did) == sorted(model)
    assert plain_engines(spark, table_name, identifier) == {
        "spark": sorted(model),
        "pyiceberg": sorted(model),
    }
    # a commit planned on an older parent is refused, never re-applied on the new one
    with pytest.raises(ParentMoved):
        iceberg_java.commit_position_deletes(
            spark,
            iceberg_java.load_table(spark, identifier),
            parent_id=table.current_snapshot().snapshot_id,  # type: ignore[union-attr]
            written=[],
            summary={},
        )


def _read_without_tombstones(table: Any, planned: list[Any]) -> list[int]:
    from pyiceberg.expressions import AlwaysTrue
    from pyiceberg.io.pyarrow import ArrowScan

    from app.lake.masks import kept_batches

    scan = ArrowScan(table.metadata, table.io, table.schema().select("event_id"), AlwaysTrue())
    out: list[int] = []
    for p in planned:
        for batch in kept_batches(scan, p.data_file, {}, p.delete_files):
            out += batch.column("event_id").to_pylist()
    return out
