"""Tombstones materialized as Iceberg position deletes (docs/position-deletes.md): once the
materializer has run, plain Spark SQL, PyIceberg's scan and DuckDB's `iceberg_scan` return exactly
the rows Icebatch's API returns, through revert, replay, GDPR delete, vacuum, compaction and
expiry; before it runs, Icebatch's own reads are already right."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.fixtures.batches import csv_rows, ids, ingest, replay
from tests.fixtures.datasets import EVENTS
from tests.fixtures.spark import RunJobs

pytestmark = pytest.mark.spark


def engines(
    spark: Any, table_name: str, identifier: str, snapshot_id: int | None = None
) -> dict[str, list[int]]:
    """The table's event ids as Spark SQL, PyIceberg and DuckDB read it, with no Icebatch code
    (at `snapshot_id`, else the current snapshot)."""
    import duckdb
    import duckdb_ext

    from app.lake.catalog import get_catalog

    table = get_catalog().load_table(identifier)
    at = f" VERSION AS OF {snapshot_id}" if snapshot_id else ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        by_spark = [r[0] for r in spark.sql(f"SELECT event_id FROM {table_name}{at}").collect()]
    scan = table.scan(selected_fields=("event_id",), snapshot_id=snapshot_id)
    by_pyiceberg = scan.to_arrow()["event_id"].to_pylist()
    con = duckdb.connect()
    duckdb_ext.init(con)
    con.execute("LOAD iceberg")
    version = ""
    if snapshot_id:
        version = f", snapshot_from_id => {snapshot_id}"
    metadata = table.metadata_location.removeprefix("file://")
    by_duckdb = [
        r[0]
        for r in con.execute(f"SELECT event_id FROM iceberg_scan('{metadata}'{version})").fetchall()
    ]
    con.close()
    return {
        "spark": sorted(by_spark),
        "pyiceberg": sorted(by_pyiceberg),
        "duckdb": sorted(by_duckdb),
    }


def everyone(client: TestClient, did: str, **params: Any) -> dict[str, list[int]]:
    """What every engine must return: the API's rows."""
    expected = ids(client, did, **params)
    return {"spark": expected, "pyiceberg": expected, "duckdb": expected}


def materialize_jobs(client: TestClient) -> list[dict[str, Any]]:
    listed = client.get("/v1/jobs", params={"kind": "materialize", "limit": 200}).json()
    return list(listed["items"])


@pytest.mark.usefixtures("materializer")
def test_every_engine_reads_what_the_api_reads(
    client: TestClient, run_jobs: RunJobs, spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.config import get_settings
    from app.lake import tombstones, visible
    from app.lake.catalog import get_catalog

    dataset = client.post("/v1/datasets", json=EVENTS).json()
    did, table_name = dataset["id"], dataset["table"]
    identifier = table_name.split(".", 1)[1]

    def table() -> Any:
        return get_catalog().load_table(identifier)

    users = ["u1", "u2", "u3", "u4"]
    a = ingest(
        client, run_jobs, did, "csv", {"a.csv": csv_rows([(i, users[i % 4]) for i in range(1, 9)])}
    )
    b = ingest(
        client, run_jobs, did, "csv", {"b.csv": csv_rows([(i, users[i % 3]) for i in range(9, 17)])}
    )
    c = ingest(
        client,
        run_jobs,
        did,
        "csv",
        {"c.csv": csv_rows([(i, users[i % 2]) for i in range(17, 25)])},
    )
    all_rows = list(range(1, 25))
    assert engines(spark, table_name, identifier) == everyone(client, did)

    # a revert whose materializer has not run: only Icebatch's reads hide the batch
    monkeypatch.setattr(get_settings(), "materialize_deletes", False)
    reverted = client.post(f"/v1/batches/{b['id']}", params={"action": "REVERT"})
    assert reverted.status_code == 202, reverted.text
    run_jobs()
    assert ids(client, did) == [i for i in all_rows if not 9 <= i <= 16]
    assert engines(spark, table_name, identifier)["spark"] == all_rows
    assert tombstones.materialized_seq(table(), table().current_snapshot()) == 0
    # the scheduler's pass finds it (a commit whose worker died before queueing it)
    monkeypatch.setattr(get_settings(), "materialize_deletes", True)
    from workers.scheduler import schedule_once

    assert did in schedule_once()["materialize"]
    run_jobs()
    assert engines(spark, table_name, identifier) == everyone(client, did)
    current = table().current_snapshot()
    assert tombstones.materialized_seq(table(), current) == current.sequence_number - 1
    assert current.summary.additional_properties["icebatch.operation"] == "materialize"
    (done,) = [j for j in materialize_jobs(client) if j["subject_id"] == did]
    assert done["state"] == "succeeded", done
    assert done["result"]["positions"] == 8  # batch b's rows, in the files that hold them
    holding_b = [p for p in visible.plan(table(), current) if p.delete_files]
    assert done["result"]["delete_files_written"] == len(holding_b) >= 1

    # replay a corrected batch a (without event 1), then erase u2: queued by the commits
    replay(client, run_jobs, did, [a["id"]], csv_rows([(i, users[i % 4]) for i in range(2, 9)]))
    assert engines(spark, table_name, identifier) == everyone(client, did)
    gdpr = client.post(
        "/v1/privacy/jobs", json={"dataset_ids": [did], "column": "user_id", "values": ["u2"]}
    )
    assert gdpr.status_code == 202, gdpr.text
    run_jobs()
    expected = everyone(client, did)
    assert {5, 17}.isdisjoint(expected["spark"])
    assert 2 in expected["spark"]
    assert engines(spark, table_name, identifier) == expected
    # one delete file per data file: the second materialization replaced the first's
    planned = visible.plan(table(), table().current_snapshot())
    assert max(len(p.delete_files) for p in planned) == 1
    gdpr_seq = table().current_snapshot().sequence_number - 1

    # the API's own reads left the materialized tombstones to the delete files
    filt = visible.tombstone_filter(table(), table().current_snapshot(), with_position_deletes=True)
    assert filt.namespaces == []

    # compaction and vacuum remove the delete files of the files they rewrite
    compacted = client.post(f"/v1/datasets/{did}/compact", json={})
    assert compacted.status_code == 202, compacted.text
    run_jobs()
    assert engines(spark, table_name, identifier) == expected
    vacuum = client.post(f"/v1/datasets/{did}/vacuum", json={"mode": "full"})
    assert vacuum.status_code == 202, vacuum.text
    run_jobs()
    assert client.get(f"/v1/jobs/{vacuum.json()['id']}").json()["state"] == "succeeded"
    planned = visible.plan(table(), table().current_snapshot())
    assert [p.delete_files for p in planned if p.delete_files] == []
    assert engines(spark, table_name, identifier) == expected
    # a revert after the vacuum, and expiry of the history
    reverted = client.post(f"/v1/batches/{c['id']}", params={"action": "REVERT"})
    assert reverted.status_code == 202, reverted.text
    run_jobs()
    assert engines(spark, table_name, identifier) == everyone(client, did)
    client.put(
        f"/v1/datasets/{did}/retention", json={"min_snapshots": 3, "max_snapshot_age_seconds": 0}
    )
    assert client.post(f"/v1/datasets/{did}/expire").status_code == 202
    run_jobs()
    assert engines(spark, table_name, identifier) == everyone(client, did)

    # every retained snapshot taken after the GDPR delete and fully materialized reads the same
    # in every engine as through the API's `as_of`
    checked = 0
    t = table()
    for snapshot in t.snapshots():
        listed = tombstones.read_list(t.io, tombstones.list_location(t, snapshot))
        newest = max((s.max_seq for s in listed.segments), default=0)
        if (snapshot.sequence_number or 0) > gdpr_seq and listed.materialized_seq >= newest:
            sid = snapshot.snapshot_id
            assert engines(spark, table_name, identifier, sid) == everyone(
                client, did, as_of=sid
            ), sid
            checked += 1
    assert checked >= 2


@pytest.mark.usefixtures("materializer")
@pytest.mark.parametrize("adds_files", [True, False], ids=["rewrite", "delete-files"])
def test_a_delete_materialized_while_a_vacuum_runs_is_never_dropped(
    client: TestClient,
    run_jobs: RunJobs,
    spark: Any,
    monkeypatch: pytest.MonkeyPatch,
    adds_files: bool,
) -> None:
    """The vacuum has written its new files (lease not held) when the materializer commits
    position deletes for files the vacuum replaces: with `adds_files`, a GDPR delete of u2
    sent then, on files the vacuum rewrites (u1 erased); else the materialization of the revert
    that makes the vacuum delete batch a's files whole. The vacuum's commit is refused (Iceberg's
    validation, or Icebatch's own check for a DELETE FILES snapshot), it plans again on the new
    state, and every engine still hides every restated row; no delete file is left for a data
    file that is gone."""
    from pyiceberg.manifest import DataFileContent, ManifestEntryStatus

    from app.config import get_settings
    from app.lake import visible
    from app.lake.catalog import get_catalog
    from workers.maintenance import rewrite as rewrite_task
    from workers.scheduler import schedule_once

    dataset = client.post("/v1/datasets", json=EVENTS).json()
    did, table_name = dataset["id"], dataset["table"]
    identifier = table_name.split(".", 1)[1]
    users = ["u1", "u2", "u3"]  # every file (one per day) holds rows of the three users
    a_rows = [(i, users[(i // 3) % 3]) for i in range(1, 10)]
    b_rows = [(i, users[(i // 3) % 3]) for i in range(10, 19)]
    a = ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows(a_rows)})
    ingest(client, run_jobs, did, "csv", {"b.csv": csv_rows(b_rows)})
    if adds_files:  # u1 erased and materialized: the vacuum rewrites every file without u1
        gdpr = {"dataset_ids": [did], "column": "user_id", "values": ["u1"]}
        assert client.post("/v1/privacy/jobs", json=gdpr).status_code == 202
    else:  # batch a reverted, not yet materialized: the vacuum deletes a's files whole
        monkeypatch.setattr(get_settings(), "materialize_deletes", False)
        assert client.post(f"/v1/batches/{a['id']}", params={"action": "REVERT"}).status_code == 202
    run_jobs()

    # the dataset of each rewrite plan, in order: `run_jobs` below also runs what the scheduler
    # queued for other tests' datasets, their vacuums among them
    plans: list[str] = []
    real_plan, real_failpoint = rewrite_task.Rewrite.plan, rewrite_task.failpoint

    def plan(self: Any, table: Any) -> Any:
        plans.append(self.dataset_id)
        return real_plan(self, table)

    def race(name: str) -> None:
        real_failpoint(name)
        if name != "after-purge-data" or plans[-1] != did or plans.count(did) > 1:
            return
        if adds_files:  # a GDPR delete of u2 and its materializer, while the vacuum waits
            body = {"dataset_ids": [did], "column": "user_id", "values": ["u2"]}
            assert client.post("/v1/privacy/jobs", json=body).status_code == 202
        else:  # the revert's materializer, while the vacuum waits
            monkeypatch.setattr(get_settings(), "materialize_deletes", True)
            assert did in schedule_once()["materialize"]  # (it queues other tests' work too)
        run_jobs()
        ran = [j for j in materialize_jobs(client) if j["subject_id"] == did]
        assert [j["state"] for j in ran] == ["succeeded"] * (2 if adds_files else 1)

    monkeypatch.setattr(rewrite_task.Rewrite, "plan", plan)
    monkeypatch.setattr(rewrite_task, "failpoint", race)
    vacuum = client.post(f"/v1/datasets/{did}/vacuum", json={"mode": "full"})
    assert vacuum.status_code == 202, vacuum.text
    run_jobs()
    job = client.get(f"/v1/jobs/{vacuum.json()['id']}").json()
    assert job["state"] == "succeeded", job
    assert job["attempt"] == 1
    assert plans.count(did) == 2  # refused once, planned again
    assert job["result"]["files_rewritten" if adds_files else "files_deleted"] > 0

    expected = everyone(client, did)
    erased = ("u1", "u2") if adds_files else ()
    gone = {i for i, user in a_rows + b_rows if user in erased or (not adds_files and i < 10)}
    assert gone
    assert set(expected["spark"]).isdisjoint(gone)
    assert engines(spark, table_name, identifier) == expected
    table = get_catalog().load_table(identifier)
    live = {p.data_file.file_path for p in visible.plan(table, table.current_snapshot())}
    deletes = [
        (p.data_file.file_path, d.file_path)
        for p in visible.plan(table, table.current_snapshot())
        for d in p.delete_files
    ]
    assert all(path in live for path, _ in deletes)
    # no delete file of the table names a data file that is gone
    snapshot = table.current_snapshot()
    assert snapshot is not None
    for manifest in visible.manifests(table, snapshot):
        for entry in visible.entries(table, manifest):
            content, status = entry.data_file.content, entry.status
            if (
                content == DataFileContent.POSITION_DELETES
                and status != ManifestEntryStatus.DELETED
            ):
                assert entry.data_file.file_path in {d for _, d in deletes}, entry


@pytest.mark.usefixtures("materializer")
def test_a_committer_runs_an_overdue_materializer_between_its_groups(
    client: TestClient, run_jobs: RunJobs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker whose slots all drain restatements has none for the materializer: the committer
    runs a materialize job it has seen queued for `materialize_inline_after_seconds` itself,
    under its lease, between two groups; the job's own message then finds it done."""
    from app.config import get_settings

    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(i, f"u{i % 2}") for i in range(6)])})
    side = ingest(client, run_jobs, did, "csv", {"b.csv": csv_rows([(10, "u2"), (11, "u2")])})

    def restate(user: str, batch_id: str | None = None) -> list[str]:
        """A GDPR delete of `user` and a revert of `batch_id`: two groups (one per kind)."""
        body = {"dataset_ids": [did], "column": "user_id", "values": [user]}
        assert client.post("/v1/privacy/jobs", json=body).status_code == 202
        if batch_id is not None:
            reverted = client.post(f"/v1/batches/{batch_id}", params={"action": "REVERT"})
            assert reverted.status_code == 202, reverted.text
        return run_jobs()

    def operations() -> list[str]:
        """The snapshots' operations, oldest first."""
        items = client.get(f"/v1/datasets/{did}/snapshots").json()["items"]
        ordered = sorted(items, key=lambda s: s["sequence_number"])
        return [str(s["icebatch"].get("icebatch.operation", "")) for s in ordered]

    def materialize_of_mine(exclude: set[str]) -> list[dict[str, Any]]:
        return [
            j for j in materialize_jobs(client) if j["subject_id"] == did and j["id"] not in exclude
        ]

    # seen queued after the first group, overdue after the second: run by the committer
    monkeypatch.setattr(get_settings(), "materialize_inline_after_seconds", 1e-6)
    ran = restate("u0", side["id"])
    (inline,) = materialize_of_mine(set())
    assert inline["state"] == "succeeded", inline
    assert inline["id"] not in ran  # the committer ran it: its message found it done
    assert inline["result"]["positions"] == 5  # u0's 3 rows and the reverted batch's 2
    assert operations()[-3:] == ["gdpr", "revert", "materialize"]
    assert ids(client, did) == [1, 3, 5]

    # off: the job waits for a slot of its own, as before
    monkeypatch.setattr(get_settings(), "materialize_inline_after_seconds", 0)
    ran = restate("u1")
    (later,) = materialize_of_mine({inline["id"]})
    assert later["id"] in ran
    assert ids(client, did) == []


def test_a_materializer_commits_through_a_java_table_loaded_before_the_parent_moved(
    client: TestClient, run_jobs: RunJobs, spark: Any
) -> None:
    """A materializer loads its Java table once for all its attempts: after a moved parent, it
    plans on a parent the table was loaded before (another commit landed since); the commit
    still lands, on that parent."""
    from app.lake import materialize_plan as materialize
    from app.lake.catalog import get_catalog
    from workers.maintenance.materialize import commit_resolution
    from workers.spark import iceberg_java

    dataset = client.post("/v1/datasets", json=EVENTS).json()
    did, identifier = dataset["id"], dataset["table"].split(".", 1)[1]
    ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(i, f"u{i % 2}") for i in range(6)])})
    stale = iceberg_java.load_table(spark, identifier)
    stale.refresh()  # it knows the table as of batch a, and nothing after
    ingest(client, run_jobs, did, "csv", {"b.csv": csv_rows([(10, "u0"), (11, "u1")])})
    body = {"dataset_ids": [did], "column": "user_id", "values": ["u0"]}
    assert client.post("/v1/privacy/jobs", json=body).status_code == 202
    run_jobs()  # the materializer is off in-process: the tombstones wait for this test

    table = get_catalog().load_table(identifier)
    resolution = materialize.resolve(table, table.current_snapshot())
    assert resolution is not None
    properties = {"icebatch.operation": "materialize", "icebatch.request-id": "test"}
    committed = commit_resolution(spark, stale, table, resolution, properties)
    after = get_catalog().load_table(identifier)
    assert after.current_snapshot().snapshot_id == committed.snapshot_id  # type: ignore[union-attr]
    assert resolution.positions == 4  # u0's 3 rows of a and 1 of b
    assert engines(spark, dataset["table"], identifier) == everyone(client, did)
