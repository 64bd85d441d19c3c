"""Host faults on PostgreSQL + Redis with real processes, nothing lost: the staging disk fills
up mid-upload, a worker's JVM is killed mid-job, API and workers' clocks disagree by a minute.
Each strikes in the middle of the mixed workload (`tests/fixtures/workload.py`: ingests,
reverts, a replay, a GDPR delete, a vacuum), checked against its model at the end, and each test
also checks what its fault must (not) do (the broker and the metadata store failing:
test_infra_faults.py). One worker with a local[2] SparkSession (two for the skew)."""

from __future__ import annotations

import hashlib
import os
import signal
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from tests.fixtures.e2e import Record, csv, log_shows
from tests.fixtures.faults import alive, fill, java_children, lease_rows, small_tmpfs
from tests.fixtures.service import SLOW, Service, new_org, wait_for
from tests.fixtures.workload import Workload, mixed_run, reruns

pytestmark = [pytest.mark.e2e, pytest.mark.spark]
ON_POSTGRES = pytest.mark.parametrize("service", ["postgres"], indirect=True)
SKEW = 30


def started(service: Service, failpoints: str = "") -> Workload:
    """The API and one worker (pausing at `failpoints`), and a workload of a new organization."""
    service.start_api()
    key = service.create_key(new_org())
    service.start_worker(env={"ICEBATCH_FAILPOINTS": failpoints} if failpoints else None)
    return Workload(service.client(key), explain=service.report)


@ON_POSTGRES
def test_disk_full_in_staging_keeps_nothing_partial(service: Service, tmp_path: Path) -> None:
    """The staging disk fills up while the mix's jobs run: uploads answer 507 and leave nothing
    partial, the batch keeps the file it had; once space returns the same batch takes the file
    and completes, and its rows count once."""
    with small_tmpfs(tmp_path / "staging-fs", "2m") as staging:
        service.env["ICEBATCH_STAGING_DIR"] = str(staging)
        workload = started(service)
        uploaded: list[tuple[str, list[Record]]] = []

        def fill_staging(w: Workload) -> None:
            batch_id = w.open_batch()
            first = w.rows_for([f"d{i % 7}" for i in range(50)])
            kept = csv(first)
            put = w.call("PUT", f"/v1/batches/{batch_id}/files/a.csv", content=kept)
            assert put.status_code == 201, put.text
            second = w.rows_for([f"d{i % 5}" for i in range(8000)])

            filler = fill(staging)
            states = {j["state"] for j in w.all_jobs()}
            assert states & {"queued", "running"}, states  # the disk is full mid-run
            for name in ("b.csv", "a.csv"):  # a new file, and one replacing a counted file
                full = w.client.put(f"/v1/batches/{batch_id}/files/{name}", content=csv(second))
                assert full.status_code == 507, full.text
                assert full.headers["content-type"] == "application/problem+json"
                problem = full.json()
                assert problem["title"] == "Insufficient storage"
                assert "ran out of space" in problem["detail"]
                assert "upload the file again once space is freed" in problem["detail"]
                assert (problem["batch_id"], problem["file"]) == (batch_id, name)
            paths = w.call("GET", "/openapi.json").json()["paths"]
            upload = paths["/v1/batches/{batch_id}/files/{name}"]
            assert "507" in upload["put"]["responses"]  # clients learn of it from the contract
            batch = w.call("GET", f"/v1/batches/{batch_id}").json()
            assert batch["status"] == "loading"
            assert (batch["file_count"], batch["bytes"]) == (1, len(kept))
            assert [(f["name"], f["sha256"]) for f in batch["files"]] == [
                ("a.csv", hashlib.sha256(kept).hexdigest())
            ]
            assert sorted(p.name for p in (staging / batch_id).iterdir()) == ["a.csv"]  # no .part
            assert (staging / batch_id / "a.csv").read_bytes() == kept

            filler.unlink()  # space returns: the same batch takes the file and completes
            put = w.call("PUT", f"/v1/batches/{batch_id}/files/b.csv", content=csv(second))
            assert put.status_code == 201, put.text
            w.complete(batch_id, first + second)
            uploaded.append((batch_id, first + second))

        mixed_run(workload, fill_staging)  # its check: the rows of that batch count once
        [(batch_id, records)] = uploaded
        batch = workload.call("GET", f"/v1/batches/{batch_id}").json()
        assert (batch["status"], batch["file_count"]) == ("success", 2), batch
        assert batch["row_count"] == len(records)
        service.stop()


@ON_POSTGRES
def test_worker_jvm_killed_mid_job_fails_over_to_a_new_session(service: Service) -> None:
    """The JVM of the only worker is killed while an ingest of the mix holds the SparkSession:
    the same worker process starts a new session, that job's second attempt commits it once,
    no other job runs again, and the run matches its model."""
    # every ingest runs in Spark (none through the small-batch path) and pauses right after it
    # took the SparkSession: the moment the JVM is killed
    service.env["ICEBATCH_SMALL_BATCH_BYTES"] = "0"
    workload = started(service, failpoints="ingest-spark=2")
    worker = service.processes["worker"].pid
    killed: list[tuple[str, int]] = []

    def kill_jvm(w: Workload) -> None:
        def in_spark() -> str | None:
            for job in w.all_jobs():
                if (job["kind"], job["state"], job["stage"]) == ("ingest", "running", "validating"):
                    return str(job["id"])
            return None

        job_id = wait_for(in_spark, 180, "an ingest job to hold its SparkSession", every=0.2)
        [jvm] = java_children(worker)
        os.kill(jvm, signal.SIGKILL)
        killed.append((job_id, jvm))

    mixed_run(workload, kill_jvm)
    [(job_id, jvm)] = killed
    job = workload.call("GET", f"/v1/jobs/{job_id}").json()
    assert (job["state"], job["attempt"]) == ("succeeded", 2), job
    again = reruns(workload.all_jobs())
    assert again == {job_id: ["retrying"]}, f"{again}\n{service.lines_about(again)}"
    log = service.log("worker")
    assert "the Spark JVM of this worker is gone; starting a new SparkSession" in log
    assert alive(worker)  # the same worker process carried on, with a new JVM
    assert service.processes["worker"].poll() is None
    assert jvm not in java_children(worker)
    assert len(java_children(worker)) == 1
    committed = [
        s
        for s in workload.snapshot_log()
        if s["icebatch"].get("icebatch.request-id") == job["request_id"]
    ]
    assert len(committed) == 1, committed  # committed exactly once


def worker_of(service: Service, job_id: str) -> str:
    with psycopg.connect(service.env["ICEBATCH_DATABASE_URL"]) as conn:
        row = conn.execute("SELECT worker FROM jobs WHERE id = %s", (job_id,)).fetchone()
    assert row is not None
    return str(row[0])


def landed_by(workload: Workload, batches: list[str], moment: str) -> Counter[tuple[int, str, str]]:
    """The model at `moment`: the rows of those of `batches` that landed by then, but for the
    GDPR-deleted users' (hidden at every snapshot)."""
    at = datetime.fromisoformat(moment)
    return Counter(
        (event, user, batch)
        for batch in batches
        if datetime.fromisoformat(workload.completed_at[batch]) <= at
        for event, user in workload.records[batch]
        if user not in workload.gdpr_users
    )


@ON_POSTGRES
@pytest.mark.parametrize("api", [SKEW, -SKEW], ids=["api-ahead", "api-behind"])
def test_clock_skew_between_api_and_workers(service: Service, api: int) -> None:
    """The API `api` s off, one worker the other way, one worker with the API, through the mix:
    each worker's reconciler judges the other's heartbeats, commit leases pass between them;
    nothing is re-queued, no lease is lost, `as_of` at a batch's `completed_at` is exact."""
    key = service.create_key(new_org())
    service.env["ICEBATCH_CLOCK_OFFSET_SECONDS"] = str(api)
    service.start_api()
    slow = {"ICEBATCH_FAILPOINTS": "ingest-spark=2"}  # ingests overlap: both workers busy
    workers = {"w-against": -api, "w-with": api}
    for name, offset in workers.items():
        service.start_worker(name, env={**slow, "ICEBATCH_CLOCK_OFFSET_SECONDS": str(offset)})
    for name in workers:
        wait_for(log_shows(service, name, " ready."), SLOW, f"worker {name} to be ready")
    workload = Workload(service.client(key), explain=service.report)

    def both_busy(w: Workload) -> None:
        def two_running() -> bool:
            return sum(j["state"] == "running" for j in w.all_jobs()) >= 2

        wait_for(two_running, SLOW, "both workers to run a job at once", every=0.3)

    base = mixed_run(workload, both_busy)
    jobs = workload.all_jobs()
    # both workers ran jobs, each judged by a reconciler a minute apart (a job committed in
    # another's group commit never ran on its own: attempt 0, no worker)
    assert len({worker_of(service, j["id"]) for j in jobs if j["attempt"] > 0}) == 2
    # nothing re-queued as stale, no lease lost: no job ran again
    again = reruns(jobs)
    assert again == {}, f"{again}\n{service.lines_about(again)}"
    for name in workers:
        assert "re-queueing" not in service.log(name)
        assert "lease lost" not in service.log(name)
    # commit leases, taken by whichever worker: released for real
    for dataset_id, token, holder, expires_at, now in lease_rows(service):
        assert holder is None, (dataset_id, token)
        assert expires_at <= now, (dataset_id, expires_at, now)  # free to every clock

    # time travel: each first batch's completed_at shows exactly the batches landed by then
    for batch_id in base:
        moment = workload.completed_at[batch_id]
        assert workload.rows(moment) == landed_by(workload, base, moment), batch_id
    # the client's own clock after the run, then a batch's completed_at after it
    seen = datetime.now(UTC).isoformat()
    before = workload.model_rows()
    batch_id = workload.ingest(["u70"])
    workload.wait_batches([batch_id])
    assert workload.rows(seen) == before
    assert workload.rows(workload.completed_at[batch_id]) == workload.model_rows()
    workload.check()
