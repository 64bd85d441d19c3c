"""A rewrite (vacuum, compaction) plans and writes its files outside the dataset's commit lease
and holds the lease for its commit only: a restatement group commits while a vacuum writes its
files, and the vacuum's hold is measured (`icebatch_commit_lease_held_seconds`)."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.db import session_scope
from app.lake import lease
from app.models import Job
from tests.fixtures.batches import csv_rows, ids, ingest
from tests.fixtures.datasets import EVENTS
from tests.fixtures.spark import RunJobs
from workers.celery_app import celery
from workers.maintenance import materialize, rewrite
from workers.spark import iceberg_java

pytestmark = pytest.mark.spark


def run(job_id: str) -> None:
    """What a worker does with the job's message."""
    with session_scope() as session:
        task_name = session.scalar(select(Job.task_name).where(Job.id == job_id))
    assert task_name is not None
    celery.tasks[task_name](job_id)


def held(operation: str) -> tuple[float, float]:
    """(count, sum) of the lease holds observed for `operation` so far in this process."""
    found = {
        s.name: s.value
        for m in lease.LEASE_HELD.collect()
        for s in m.samples
        if s.labels.get("operation") == operation
    }
    return (
        found.get("icebatch_commit_lease_held_seconds_count", 0.0),
        found.get("icebatch_commit_lease_held_seconds_sum", 0.0),
    )


def test_a_group_commits_while_a_vacuum_writes_and_the_vacuum_holds_the_lease_briefly(
    client: TestClient, run_jobs: RunJobs, monkeypatch: pytest.MonkeyPatch
) -> None:
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    for recs in ([(1, "u1"), (2, "u2")], [(3, "u3"), (4, "u1")]):
        ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows(recs, day=1)})
    client.post(
        "/v1/privacy/jobs", json={"dataset_ids": [did], "column": "user_id", "values": ["u1"]}
    )
    run_jobs()
    assert ids(client, did) == [2, 3]

    paused, resume = threading.Event(), threading.Event()
    real = rewrite.failpoint

    def pausing(name: str) -> None:
        real(name)
        if name == "after-purge-data":  # its new files are written; the lease is not taken yet
            paused.set()
            assert resume.wait(120)

    monkeypatch.setattr(rewrite, "failpoint", pausing)
    vacuum = client.post(f"/v1/datasets/{did}/vacuum", json={"mode": "full"}).json()["id"]
    vacuum_holds = held("vacuum")
    failed: list[BaseException] = []

    def run_vacuum() -> None:
        try:
            run(vacuum)
        except BaseException as exc:  # reported by the test's thread
            failed.append(exc)

    worker = threading.Thread(target=run_vacuum)
    began = time.monotonic()
    worker.start()
    try:
        assert paused.wait(120), failed
        # the vacuum has written its files: a GDPR delete commits now, without waiting for it
        gdpr: dict[str, Any] = client.post(
            "/v1/privacy/jobs",
            json={"dataset_ids": [did], "column": "user_id", "values": ["u2"]},
        ).json()
        group_holds = held("restate")
        run(gdpr["datasets"][0]["job_id"])
        assert client.get(f"/v1/privacy/jobs/{gdpr['id']}").json()["status"] == "complete"
        assert held("restate")[0] == group_holds[0] + 1
        group_hold = held("restate")[1] - group_holds[1]
        assert worker.is_alive()  # still paused: the group did not wait for the vacuum
    finally:
        resume.set()
        worker.join(300)
    assert not failed, failed
    total = time.monotonic() - began
    job = client.get(f"/v1/jobs/{vacuum}").json()
    assert job["state"] == "succeeded", job
    assert job["result"]["rows_purged"] == 2  # u1's rows; u2's tombstone came after its start
    assert ids(client, did) == [3]  # the tombstone committed during the vacuum still applies
    count, hold = held("vacuum")
    assert count == vacuum_holds[0] + 1
    vacuum_hold = hold - vacuum_holds[1]
    print(
        f"vacuum {total:.2f} s {job['result']['timings']}, lease held {vacuum_hold:.3f} s; "
        f"group commit {group_hold:.3f} s"
    )
    # the lease is held for the commit only: within the job's commit stage (from the end of
    # its plan, files written, to its record), never over the scan and the Spark rewrite
    timings = job["result"]["timings"]
    assert vacuum_hold <= timings["commit"], timings


def new_manifests_written_at(table: Any) -> list[float]:
    """When the manifests the current snapshot added (not its manifest list) were written."""
    current = table.current_snapshot()
    parent = table.snapshot_by_id(current.parent_snapshot_id)
    known = {m.manifest_path for m in parent.manifests(table.io)}
    added = [m.manifest_path for m in current.manifests(table.io) if m.manifest_path not in known]
    assert added, "the snapshot added no manifest"
    return [os.stat(path.removeprefix("file:")).st_mtime for path in added]


@pytest.mark.usefixtures("materializer")
def test_a_materializer_and_a_vacuum_write_their_manifests_before_taking_the_lease(
    client: TestClient, run_jobs: RunJobs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under the lease, a ROW DELTA or REWRITE FILES commit writes its manifest list and the
    table's metadata only: the manifests of the files it adds and removes were written by its
    staged apply (`iceberg_java.stage`), and Iceberg reuses them. Each commit's new manifests
    are older than the moment its job took the lease."""
    from app.config import get_settings
    from app.lake.catalog import get_catalog

    monkeypatch.setattr(get_settings(), "materialize_inline_after_seconds", 3600)
    dataset = client.post("/v1/datasets", json=EVENTS).json()
    did, identifier = dataset["id"], dataset["table"].split(".", 1)[1]
    for day, recs in ((1, [(1, "u1"), (2, "u2"), (3, "u1")]), (2, [(4, "u1"), (5, "u3")])):
        ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows(recs, day=day)})

    taken: list[tuple[str, float]] = []
    real_wait = lease.wait
    # whether the restatement committers yield (`lease.maintenance_waiting`) at each step of
    # the maintenance jobs: while one waits for the lease, and not while it stages its
    # manifests or records its outcome (the lease is not its yet, or free again)
    yielding: list[tuple[str, bool]] = []

    def wait(dataset_id: str, **kwargs: Any) -> int:
        yielding.append(("waits", lease.maintenance_waiting(dataset_id)))
        token = real_wait(dataset_id, **kwargs)
        taken.append((kwargs["user"], time.time()))
        return token

    def observed(step: str, real: Any, *, before: bool = True) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            if before:
                yielding.append((step, lease.maintenance_waiting(did)))
            out = real(*args, **kwargs)
            yielding.append((step, lease.maintenance_waiting(did)))
            return out

        return call

    monkeypatch.setattr(lease, "wait", wait)
    monkeypatch.setattr(iceberg_java, "stage", observed("stages", iceberg_java.stage))
    for op in (materialize.Materialize, rewrite.Rewrite):
        monkeypatch.setattr(op, "record", observed("records", op.record, before=False))
    body = {"dataset_ids": [did], "column": "user_id", "values": ["u1"]}
    assert client.post("/v1/privacy/jobs", json=body).status_code == 202
    run_jobs()  # the group commit, then the materializer's job
    table = get_catalog().load_table(identifier)
    summary = table.current_snapshot().summary.additional_properties  # type: ignore[union-attr]
    assert summary["icebatch.operation"] == "materialize", summary
    materialized = [at for user, at in taken if user == "rewrite"][-1]
    assert max(new_manifests_written_at(table)) < materialized

    vacuum = client.post(f"/v1/datasets/{did}/vacuum", json={"mode": "full"}).json()["id"]
    run(vacuum)
    assert client.get(f"/v1/jobs/{vacuum}").json()["result"]["rows_purged"] == 3
    table = get_catalog().load_table(identifier)
    summary = table.current_snapshot().summary.additional_properties  # type: ignore[union-attr]
    assert summary["icebatch.operation"] == "vacuum", summary
    vacuumed = [at for user, at in taken if user == "rewrite"][-1]
    assert vacuumed > materialized
    assert max(new_manifests_written_at(table)) < vacuumed
    assert ids(client, did) == [2, 5]
    # each job: staged (seen before and after), waited for the lease, recorded (seen after)
    steps = ["stages", "stages", "waits", "records"]
    assert [s for s, _ in yielding] == steps * 2, yielding
    assert [y for _, y in yielding] == [False, False, True, False] * 2, yielding
