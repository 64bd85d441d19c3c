"""`icebatch doctor`: a real dataset (ingests, a GDPR delete, a revert, a vacuum and an expiry run
by an in-process worker, on both stores), each invariant broken by hand, then the command's
finding and, where it may, its repair (after which the doctor is clean)."""

from __future__ import annotations

import os
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import delete, insert, select
from typer.testing import CliRunner

from tests.fixtures.batches import csv_rows, ids, ingest
from tests.fixtures.datasets import EVENTS
from tests.fixtures.doctor import (
    assert_clean,
    found,
    repair,
    restatement_of,
    snapshot_ids,
    sql,
    table_of,
)
from tests.fixtures.service import BIN
from tests.fixtures.spark import RunJobs

pytestmark = pytest.mark.spark


def test_doctor_finds_and_repairs(client: TestClient, run_jobs: RunJobs) -> None:
    org = client.org  # type: ignore[attr-defined]
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    b1 = ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(1, "u1"), (2, "u2")])})
    b2 = ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(3, "u3"), (4, "u2")])})
    privacy = client.post(
        "/v1/privacy/jobs", json={"dataset_ids": [did], "column": "user_id", "values": ["u3"]}
    ).json()
    run_jobs()
    assert ids(client, did) == [1, 2, 4]

    # a healthy dataset: no finding, exit 0, in words too
    assert_clean(org)
    from app.cli import cli

    words = CliRunner(mix_stderr=False).invoke(cli, ["doctor", "--dataset", did])
    assert words.exit_code == 0, words.output
    assert "1 dataset checked, 0 problems found." in words.stdout
    missing = CliRunner(mix_stderr=False).invoke(cli, ["doctor", "--dataset", "no-such-dataset"])
    assert (missing.exit_code, missing.stderr) == (2, "error: no dataset 'no-such-dataset'\n")

    # the catalog lost the dataset's table
    from app.models import Dataset

    identifier = f"{org}.events"
    sql(Dataset, Dataset.id == did, table_identifier=f"{org}.gone")
    [problem] = found(org, "catalog")
    assert problem["problem"].startswith(
        f"the Iceberg catalog has no readable table {org}.gone for this dataset (NoSuchTableError"
    )
    sql(Dataset, Dataset.id == did, table_identifier=identifier)
    assert_clean(org)

    check_batches(client, org, did, b1, b2)
    check_restatements(client, run_jobs, org, did, b1, privacy["id"])
    check_tombstones(client, org, did)
    check_orphans(client, org, did)
    check_privacy(client, run_jobs, org, did, b2, privacy["id"])


def check_batches(
    client: TestClient, org: str, did: str, b1: dict[str, Any], b2: dict[str, Any]
) -> None:
    from app.models import Batch, Job

    # a worker died after its ingest committed: the batch stays 'processing', its job failed
    sql(Batch, Batch.id == b2["id"], status="processing", snapshot_id=None)
    sql(Job, Job.id == b2["job_id"], state="failed")
    [problem] = found(org, "batches")
    assert problem["problem"] == (
        f"batch {b2['id']} is 'processing' but its ingest landed as snapshot "
        f"{b2['snapshot_id']} (the ingest of batch {b2['id']}, 2 rows); its job "
        f"{b2['job_id']} is 'failed' and will not record it"
    )
    assert problem["repairable"] is True
    report = repair(org)
    assert report["findings"][0]["repaired"] == (
        f"marked batch {b2['id']} 'success' with snapshot {b2['snapshot_id']} (2 rows)"
    )
    again = client.get(f"/v1/batches/{b2['id']}").json()
    assert (again["status"], again["snapshot_id"], again["row_count"]) == (
        "success",
        b2["snapshot_id"],
        2,
    )
    assert_clean(org)

    # a 'success' batch whose snapshot is gone is never flipped: a human decides
    request_id = client.get(f"/v1/jobs/{b1['job_id']}").json()["request_id"]
    sql(Batch, Batch.id == b1["id"], snapshot_id=12345)
    [problem] = found(org, "batches")
    assert problem["problem"] == (
        f"batch {b1['id']} is 'success' but its snapshot 12345 is neither in the table's "
        f"snapshot log nor recorded as expired by retention; its request id {request_id} is in "
        f"snapshot "
        f"{b1['snapshot_id']}"
    )
    assert problem["repairable"] is False
    report = repair(org)
    assert [f["problem"] for f in report["remaining"]] == [problem["problem"]]
    assert report["findings"][0]["repaired"] is None
    assert client.get(f"/v1/batches/{b1['id']}").json()["snapshot_id"] == 12345
    sql(Batch, Batch.id == b1["id"], snapshot_id=b1["snapshot_id"])
    assert_clean(org)

    # a batch that names another batch's snapshot
    sql(Batch, Batch.id == b2["id"], snapshot_id=b1["snapshot_id"])
    [problem] = found(org, "batches")
    b2_request = client.get(f"/v1/jobs/{b2['job_id']}").json()["request_id"]
    assert problem["problem"] == (
        f"batch {b2['id']} names snapshot {b1['snapshot_id']}, which carries request id "
        f"{request_id}, not the batch's {b2_request}; its request id {b2_request} is in "
        f"snapshot {b2['snapshot_id']}"
    )
    sql(Batch, Batch.id == b2["id"], snapshot_id=b2["snapshot_id"])
    assert_clean(org)

    # an ingest job failed for good but its failure hook never ran: the batch stays 'staged'
    b3 = client.post("/v1/batches", json={"dataset_id": did, "format": "csv"}).json()["id"]
    client.put(f"/v1/batches/{b3}/files/a.csv", content=csv_rows([(9, "u9")]))
    job = client.post(f"/v1/batches/{b3}", params={"action": "COMPLETE"}).json()["job"]["id"]
    sql(Job, Job.id == job, state="failed", error="the worker gave up")
    [problem] = found(org, "batches")
    assert problem["problem"] == (
        f"batch {b3} is 'staged' but its ingest job {job} failed for good (the worker gave up) "
        "and nothing of it landed in the table"
    )
    assert repair(org)["findings"][0]["repaired"] == (
        f"failed batch {b3} with the error of its job {job}"
    )
    again = client.get(f"/v1/batches/{b3}").json()
    assert again["status"] == "failed"
    assert again["errors"][0]["reason"] == "the worker gave up"
    assert_clean(org)

    # the batch row is lost: its snapshot's rows belong to no batch
    from app.db import session_scope

    with session_scope() as session:
        row = session.execute(select(Batch.__table__).where(Batch.id == b2["id"])).mappings().one()
        session.execute(delete(Batch).where(Batch.id == b2["id"]))
    [problem] = found(org, "batches")
    assert problem["problem"] == (
        f"snapshot {b2['snapshot_id']} (the ingest of batch {b2['id']}, 2 rows) belongs to no "
        "batch the metadata store knows: its rows are visible but can be neither reverted nor "
        "replayed"
    )
    assert problem["action"] == "restore the batch's row from a backup of the metadata store"
    with session_scope() as session:
        session.execute(insert(Batch).values(**row))
    assert_clean(org)


def check_restatements(
    client: TestClient, run_jobs: RunJobs, org: str, did: str, b1: dict[str, Any], privacy: str
) -> None:
    from app.models import Job, Restatement

    # a committer died after its commit landed: the GDPR delete stays 'committing'
    gdpr = restatement_of(privacy_job_id=privacy)
    sql(Restatement, Restatement.id == gdpr.id, state="committing")
    sql(Job, Job.id == gdpr.job_id, state="failed")
    [problem] = found(org, "restatements")
    assert problem["problem"].startswith(f"gdpr restatement {gdpr.id} has been 'committing' since")
    assert problem["problem"].endswith(
        f"no job will move it (its job {gdpr.job_id} is 'failed'); its commit {gdpr.commit_id} "
        f"landed as snapshot {gdpr.snapshot_id}, unrecorded"
    )
    before = snapshot_ids(client, did)
    report = repair(org)
    assert report["remaining"] == []  # the new job is live: nothing to do but run it
    run_jobs()
    again = restatement_of(id=gdpr.id)
    assert (again.state, again.snapshot_id) == ("committed", gdpr.snapshot_id)
    assert again.job_id != gdpr.job_id
    assert snapshot_ids(client, did) == before  # recorded from the log, not committed twice
    assert client.get(f"/v1/privacy/jobs/{privacy}").json()["status"] == "complete"
    assert_clean(org)

    # a committer died before its commit landed: the revert is committed by the repair's job
    reverted = client.post(f"/v1/batches/{b1['id']}", params={"action": "REVERT"})
    assert reverted.status_code == 202, reverted.text
    job_id = reverted.json()["job"]["id"]
    revert = restatement_of(job_id=job_id)
    sql(Restatement, Restatement.id == revert.id, state="committing", commit_id="group-lost")
    sql(Job, Job.id == job_id, state="failed")
    [problem] = found(org, "restatements")
    assert problem["problem"].endswith(
        "its commit group-lost is not in the snapshot log (it never landed)"
    )
    repair(org)
    run_jobs()
    assert client.get(f"/v1/batches/{b1['id']}").json()["status"] == "reverted"
    from app.lake import snapshots

    landed = snapshots.find_by_request_id(table_of(client, did), "group-lost")
    assert landed is not None
    assert restatement_of(id=revert.id).snapshot_id == landed.snapshot_id
    assert ids(client, did) == [4]
    assert_clean(org)

    # a restatement marked failed whose tombstones are in the table
    sql(Restatement, Restatement.id == revert.id, state="failed")
    [problem] = found(org, "restatements")
    assert problem["problem"] == (
        f"revert restatement {revert.id} is 'failed', yet the table holds its tombstones "
        f"(request id {revert.request_id}): its rows are hidden while its request reports a "
        "failure"
    )
    sql(Restatement, Restatement.id == revert.id, state="committed")
    assert_clean(org)


def check_tombstones(client: TestClient, org: str, did: str) -> None:
    from app.cli import cli
    from app.lake import tombstones

    table = table_of(client, did)
    location = tombstones.list_location(table, table.current_snapshot())
    assert location is not None
    segment = tombstones.read_list(table.io, location).segments[0]
    for path, text in (
        (segment.path, "the tombstone segment " + segment.path),
        (location, "the tombstone list " + location),
    ):
        file = Path(path.removeprefix("file://").removeprefix("file:"))
        saved = file.read_bytes()
        file.write_bytes(b"not parquet" if path == segment.path else b"{}")
        problems = [f["problem"] for f in found(org, "tombstones")]
        assert len(problems) == 1, problems
        assert problems[0].startswith(text), problems
        assert "cannot be read" in problems[0]
        report = repair(org)
        assert report["remaining"], "a lost tombstone is never rebuilt by the doctor"
        if path == location:
            words = CliRunner(mix_stderr=False).invoke(
                cli, ["doctor", "--org", org, "--dataset", "events", "--repair"]
            )
            assert words.exit_code == 1
            assert words.stdout.splitlines()[:4] == [
                "icebatch doctor: 1 dataset checked, 1 problem found.",
                "",
                f"{org}/events (dataset {did})",
                f"  [tombstones] {problems[0]}",
            ]
            assert "      needs a human" in words.stdout
            assert "After repair, 1 problem remains:" in words.stdout
            # a fresh process has no cached copy of the list: the checks that need it (orphan
            # selection among them) stop instead of taking its segments for orphans
            fresh = subprocess.run(
                [str(BIN), "doctor", "--org", org, "--repair"],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert fresh.returncode == 1, fresh.stdout + fresh.stderr
            assert f"[tombstones] {problems[0]}" in fresh.stdout
            assert "[files] the files check could not run" in fresh.stdout
            assert "deleted" not in fresh.stdout
            assert Path(segment.path.removeprefix("file://").removeprefix("file:")).exists()
        file.write_bytes(saved)
        assert_clean(org)


def check_orphans(client: TestClient, org: str, did: str) -> None:
    table = table_of(client, did)
    data = Path(table.location().removeprefix("file://").removeprefix("file:")) / "data"
    old, young = data / "lost-write.parquet", data / "in-progress.parquet"
    for path in (old, young):
        path.write_bytes(b"PAR1 unreferenced")
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(old, (two_days_ago, two_days_ago))
    [problem] = found(org, "orphans")
    assert problem["problem"] == (
        "1 files (17 bytes) under the table location are referenced by no retained snapshot "
        "and older than the orphan age (86400 s), or staged by a replay that finished: "
        f"{old}"
    )
    report = repair(org)
    assert report["findings"][0]["repaired"] == "deleted 1 orphan files (17 bytes)"
    assert not old.exists()
    assert young.exists()  # younger than the orphan age: it may be a write in progress
    assert_clean(org)
    young.unlink()

    # a data file the current snapshot reads is gone from the warehouse
    from app.lake import retention

    lost = sorted(retention.FileIndex(table).data_files(table.current_snapshot()))[0]
    aside = data.parent / "aside.bin"
    Path(lost).rename(aside)
    [problem] = found(org, "files")
    assert problem["problem"] == (
        "1 files that retained snapshots reference are missing from the warehouse: "
        f"{lost}; reads that touch them fail"
    )
    aside.rename(lost)
    assert_clean(org)


def check_privacy(
    client: TestClient, run_jobs: RunJobs, org: str, did: str, b2: dict[str, Any], privacy: str
) -> None:
    from app.models import Job, PrivacyJob, Restatement

    gdpr = restatement_of(privacy_job_id=privacy)
    # marked erased while the table still holds its tombstones: a wrong receipt, for a human
    now = datetime.now(UTC)
    sql(Restatement, Restatement.id == gdpr.id, erased_at=now)
    [problem] = found(org, "privacy")
    assert problem["problem"].startswith(
        f"the GDPR delete of privacy job {privacy} (restatement {gdpr.id}) is marked erased at "
    )
    assert problem["problem"].endswith(
        "but the table still holds its tombstones (a vacuum has not purged every file that may "
        "hold its rows)"
    )
    assert problem["repairable"] is False
    sql(Restatement, Restatement.id == gdpr.id, erased_at=None)
    assert_clean(org)

    # its job failed for good though the delete is committed: the privacy job says 'failed'
    sql(Job, Job.id == gdpr.job_id, state="failed")
    [problem] = found(org, "privacy")
    assert problem["problem"] == (
        f"privacy job {privacy} reports 'failed' for this dataset (its job {gdpr.job_id} "
        f"failed), but the GDPR delete of privacy job {privacy} (restatement {gdpr.id}) is "
        f"committed in snapshot {gdpr.snapshot_id}: its rows are hidden"
    )
    sql(Job, Job.id == gdpr.job_id, state="succeeded")
    assert_clean(org)

    # vacuum and expiry erase it (the recipe of the retention tests) ...
    assert client.post(f"/v1/datasets/{did}/vacuum", json={"mode": "full"}).status_code == 202
    run_jobs()
    policy = {"min_snapshots": 1, "max_snapshot_age_seconds": 0, "orphan_age_seconds": 0}
    client.put(f"/v1/datasets/{did}/retention", json=policy)
    assert client.post(f"/v1/batches/{b2['id']}", params={"action": "REVERT"}).status_code == 202
    run_jobs()
    assert client.post(f"/v1/datasets/{did}/expire").status_code == 202
    run_jobs()
    status = client.get(f"/v1/privacy/jobs/{privacy}").json()
    assert status["status"] == "erased", status
    assert_clean(org)

    # ... but the erasure was not recorded: the repair runs the erasure check again
    sql(Restatement, Restatement.id == gdpr.id, erased_at=None)
    sql(PrivacyJob, PrivacyJob.id == privacy, erased_at=None, receipt=None)
    [problem] = found(org, "privacy")
    assert problem["problem"] == (
        f"the GDPR delete of privacy job {privacy} (restatement {gdpr.id}) is 'complete', but "
        "every copy of its rows is gone (its tombstones were vacuumed and every snapshot before "
        "it expired) and its erasure was never recorded"
    )
    assert client.get(f"/v1/privacy/jobs/{privacy}").json()["status"] == "complete"
    report = repair(org)
    assert report["findings"][0]["repaired"] == (
        f"the erasure check marked restatement {gdpr.id} erased"
    )
    status = client.get(f"/v1/privacy/jobs/{privacy}").json()
    assert status["status"] == "erased", status
    assert status["receipt"]["datasets"][did]["files_rewritten"] >= 1
    assert_clean(org)

    # the privacy job alone lost its mark: recorded again from its erased datasets
    sql(PrivacyJob, PrivacyJob.id == privacy, erased_at=None, receipt=None)
    [problem] = found(org, "privacy")
    assert problem["problem"] == (
        f"privacy job {privacy} is erased on every dataset, but the job itself is not marked "
        "erased (no receipt)"
    )
    repair(org)
    assert client.get(f"/v1/privacy/jobs/{privacy}").json()["status"] == "erased"
    assert_clean(org)
