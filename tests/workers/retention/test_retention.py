"""Retention: snapshot expiry, consumer pins, orphan cleanup, the maintenance scheduler, and GDPR
erasure (vacuum + expiry), through the API and an in-process worker, on both stores."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.fixtures.batches import csv_rows, ids, ingest
from tests.fixtures.datasets import EVENTS
from tests.fixtures.spark import RunJobs

pytestmark = pytest.mark.spark


def snapshot_ids(client: TestClient, did: str) -> list[int]:
    """Oldest first."""
    items = client.get(f"/v1/datasets/{did}/snapshots").json()["items"]
    return [s["snapshot_id"] for s in reversed(items)]


def table_dir(client: TestClient, did: str) -> Path:
    from app.config import get_settings

    name = client.get(f"/v1/datasets/{did}").json()["name"]
    warehouse = Path(get_settings().warehouse.removeprefix("file://"))
    return warehouse / client.org / name  # type: ignore[attr-defined]


def expire(client: TestClient, run_jobs: RunJobs, did: str) -> dict[str, Any]:
    started = client.post(f"/v1/datasets/{did}/expire")
    assert started.status_code == 202, started.text
    assert started.json()["kind"] == "expire"
    run_jobs()
    job = client.get(f"/v1/jobs/{started.json()['id']}").json()
    assert job["state"] == "succeeded", job
    result: dict[str, Any] = job["result"]
    return result


def referenced_files(client: TestClient, did: str) -> set[str]:
    """Every file the table's snapshots reference (tombstone files included)."""
    from app.lake import retention
    from app.lake.catalog import get_catalog

    identifier = client.get(f"/v1/datasets/{did}").json()["table"].split(".", 1)[1]
    table = get_catalog().load_table(identifier)
    return retention.FileIndex(table).referenced(table.snapshots())


def add_restatement(did: str, org: str, batch_id: str, state: str) -> None:
    from app.db import session_scope
    from app.models import Restatement

    with session_scope() as session:
        session.add(
            Restatement(
                org=org,
                dataset_id=did,
                kind="replay",
                state=state,
                request_id=str(uuid.uuid4()),
                batch_id=batch_id,
                column="_batch_id",
                ids=[],
            )
        )


def test_expiry_consumers_and_orphans(client: TestClient, run_jobs: RunJobs) -> None:
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    org = client.org  # type: ignore[attr-defined]
    shown = client.get(f"/v1/datasets/{did}").json()["retention"]
    assert shown == {
        "min_snapshots": 5,
        "max_snapshot_age_seconds": 7 * 24 * 3600,
        "orphan_age_seconds": 24 * 3600,
    }
    b1 = ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(1, "u1"), (2, "u2")])})
    ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(3, "u1"), (4, "u3")])})
    assert client.post(f"/v1/batches/{b1['id']}", params={"action": "REVERT"}).status_code == 202
    run_jobs()
    gdpr = client.post(
        "/v1/privacy/jobs", json={"dataset_ids": [did], "column": "user_id", "values": ["u3"]}
    )
    assert gdpr.status_code == 202
    run_jobs()
    ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(5, "u3"), (6, "u4")])})
    s1, s2, s3, s4, s5 = snapshot_ids(client, did)  # ingest, ingest, revert, gdpr, ingest
    before = {s: ids(client, did, as_of=s) for s in (s1, s2, s3, s4, s5)}
    assert before[s5] == [3, 5, 6]
    tombstones_before = client.get(f"/v1/datasets/{did}/tombstones").json()

    policy = client.put(
        f"/v1/datasets/{did}/retention",
        json={"min_snapshots": 1, "max_snapshot_age_seconds": 0, "orphan_age_seconds": 3600},
    )
    assert policy.status_code == 200, policy.text
    assert policy.json()["custom"] == [
        "max_snapshot_age_seconds",
        "min_snapshots",
        "orphan_age_seconds",
    ]
    assert client.get(f"/v1/datasets/{did}").json()["retention"]["min_snapshots"] == 1

    consumer = client.post(f"/v1/datasets/{did}/consumers", json={"name": "c1", "snapshot_id": s3})
    assert consumer.status_code == 200, consumer.text
    assert consumer.json()["sequence_number"] == 3
    assert consumer.json()["pinned"] is True
    current = client.post(f"/v1/datasets/{did}/consumers", json={"name": "c2"})
    assert current.json()["snapshot_id"] == s5
    listed = client.get(f"/v1/datasets/{did}/consumers").json()["items"]
    assert [c["name"] for c in listed] == ["c1", "c2"]

    # orphans: a stray file, staged replay files of a failed and of a pending restatement
    folder = table_dir(client, did)
    stray = folder / "data" / "stray.parquet"
    stray.write_bytes(b"not referenced")
    failed_batch, pending_batch = str(uuid.uuid4()), str(uuid.uuid4())
    add_restatement(did, org, failed_batch, "failed")
    add_restatement(did, org, pending_batch, "pending")
    dead = folder / "data" / f"staged-{failed_batch}-0a1b2c3d" / "part-0.parquet"
    live = folder / "data" / f"staged-{pending_batch}-0a1b2c3d" / "part-0.parquet"
    for path in (dead, live):
        path.parent.mkdir(parents=True)
        path.write_bytes(b"staged")

    # one expire job at a time
    first = client.post(f"/v1/datasets/{did}/expire")
    second = client.post(f"/v1/datasets/{did}/expire")
    assert first.status_code == 202
    assert second.status_code == 409, second.text
    assert second.json()["job_id"] == first.json()["id"]
    run_jobs()
    result = client.get(f"/v1/jobs/{first.json()['id']}").json()["result"]
    assert sorted(result["expired"]) == sorted([s1, s2])
    assert sorted(result["retained"]) == sorted([s3, s4, s5])
    assert sorted(result["pinned_by"]["c1"]) == sorted([s3, s4, s5])
    assert result["files_deleted"] > 0
    assert not dead.exists()
    assert live.exists()
    assert stray.exists()  # younger than the orphan age
    assert snapshot_ids(client, did) == [s3, s4, s5]
    for snapshot in (s3, s4, s5):
        assert ids(client, did, as_of=snapshot) == before[snapshot]
    assert client.get(f"/v1/datasets/{did}/tombstones").json() == tombstones_before

    from app.db import session_scope
    from app.models import ExpiredSnapshot

    with session_scope() as session:
        recorded = session.query(ExpiredSnapshot).filter_by(dataset_id=did).all()
        assert sorted(r.snapshot_id for r in recorded) == sorted([s1, s2])
        assert {r.job_id for r in recorded} == {first.json()["id"]}

    back = client.post(f"/v1/datasets/{did}/consumers", json={"name": "c1", "snapshot_id": s1})
    assert back.status_code == 410, back.text
    assert back.json()["snapshot_id"] == s1

    # without the pins, only the current snapshot and its tombstone list's owner stay
    assert client.delete(f"/v1/datasets/{did}/consumers/c1").status_code == 204
    assert client.delete(f"/v1/datasets/{did}/consumers/c1").status_code == 404
    assert client.delete(f"/v1/datasets/{did}/consumers/c2").status_code == 204
    client.put(f"/v1/datasets/{did}/retention", json={"orphan_age_seconds": 0})
    result = expire(client, run_jobs, did)
    assert result["expired"] == [s3]
    assert sorted(result["retained"]) == sorted([s4, s5])  # s5 inherits s4's tombstone list
    assert result["orphans_deleted"] >= 1
    assert not stray.exists()
    assert live.exists()
    assert ids(client, did) == before[s5]
    assert ids(client, did, as_of=s4) == before[s4]
    assert client.get(f"/v1/datasets/{did}/tombstones").json() == tombstones_before
    # every file a retained snapshot references is still there, tombstone files included
    referenced = referenced_files(client, did)
    assert any("/tombstones/" in p for p in referenced)
    assert all(Path(p).exists() for p in referenced)
    on_disk = {str(p) for p in folder.rglob("*") if p.is_file()}
    assert not {p for p in on_disk if "/tombstones/" in p} - referenced  # none left over
    assert not {p for p in on_disk if "/data/" in p and "staged-" not in p} - referenced


def running_job(org: str, subject_id: str, started_ago: float) -> str:
    """A job of `org` a worker is running (as its row shows), started `started_ago` s ago."""
    from datetime import timedelta

    from app import clock
    from app.db import session_scope
    from app.jobs.kinds import JobKind
    from app.models import Job, JobState

    with session_scope() as session:
        now = clock.db_now(session)
        job = Job(
            org=org,
            kind=JobKind.INGEST.value,
            task_name=JobKind.INGEST.task.value,
            subject_id=subject_id,
            request_id=f"req-{uuid.uuid4().hex[:8]}",
            state=JobState.RUNNING,
            stage="writing",
            attempt=1,
            heartbeat_at=now,
            started_at=now - timedelta(seconds=started_ago),
        )
        session.add(job)
        session.flush()
        return job.id


def finish_job(job_id: str) -> None:
    from app.db import session_scope
    from app.models import Job, JobState

    with session_scope() as session:
        job = session.get(Job, job_id)
        assert job is not None
        job.state = JobState.SUCCEEDED


def test_orphan_cleanup_waits_for_its_own_orgs_running_jobs(
    client: TestClient, run_jobs: RunJobs
) -> None:
    """A file younger than a running job of the dataset's org may be that job's uncommitted
    output and stays; another org's running job (it writes only to its own tables) holds
    nothing back, so one tenant's stuck job does not stop every tenant's cleanup."""
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(1, "u1")])})
    policy = {"min_snapshots": 1, "max_snapshot_age_seconds": 0, "orphan_age_seconds": 0}
    assert client.put(f"/v1/datasets/{did}/retention", json=policy).status_code == 200
    other = running_job(f"org_{uuid.uuid4().hex[:8]}", str(uuid.uuid4()), started_ago=3600)
    own = running_job(client.org, str(uuid.uuid4()), started_ago=3600)  # type: ignore[attr-defined]
    stray = table_dir(client, did) / "data" / "stray.parquet"
    try:
        stray.write_bytes(b"written by the running job, maybe")
        assert expire(client, run_jobs, did)["orphans_deleted"] == 0
        assert stray.exists()
        finish_job(own)
        assert expire(client, run_jobs, did)["orphans_deleted"] == 1
        assert not stray.exists()
    finally:
        for job in (other, own):
            finish_job(job)
    assert ids(client, did) == [1]


def test_scheduler_picks_datasets(
    client: TestClient, run_jobs: RunJobs, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sqlalchemy import update

    from app.config import get_settings
    from app.db import session_scope
    from app.models import Job, JobState
    from workers.scheduler import schedule_once

    settings = get_settings()
    monkeypatch.setattr(settings, "auto_vacuum_tombstones", 1000)
    monkeypatch.setattr(settings, "auto_vacuum_evict_lead_seconds", 0)

    def dataset(name: str) -> str:
        body = {**EVENTS, "name": name}
        did: str = client.post("/v1/datasets", json=body).json()["id"]
        return did

    quiet, reverted, gdpr, history = (dataset(n) for n in ("quiet", "reverted", "gdpr", "hist"))
    for did in (quiet, reverted, gdpr, history):
        ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(1, "u1"), (2, "u2")])})
    batch = client.get("/v1/batches", params={"dataset_id": reverted}).json()["items"][0]
    client.post(f"/v1/batches/{batch['id']}", params={"action": "REVERT"})
    client.post(
        "/v1/privacy/jobs", json={"dataset_ids": [gdpr], "column": "user_id", "values": ["u1"]}
    )
    ingest(client, run_jobs, history, "csv", {"a.csv": csv_rows([(3, "u3")])})
    client.put(
        f"/v1/datasets/{history}/retention",
        json={"min_snapshots": 1, "max_snapshot_age_seconds": 0},
    )
    run_jobs()

    mine = {quiet, reverted, gdpr, history}

    def scheduled() -> dict[str, list[str]]:
        """This test's datasets in one scheduler pass (the store holds other tests' too)."""
        return {k: [d for d in v if d in mine] for k, v in schedule_once().items()}

    nothing: dict[str, list[str]] = {
        "vacuum": [],
        "compact": [],
        "expire": [],
        "materialize": [],
        "failed": [],
        "aborted": [],
    }
    assert scheduled() == {**nothing, "expire": [history]}
    # one expire job per dataset: the queued one is left alone
    assert scheduled() == nothing
    # a GDPR tombstone must be evicted within 30 days: closer than the lead time
    monkeypatch.setattr(settings, "auto_vacuum_evict_lead_seconds", 31 * 24 * 3600)
    assert scheduled()["vacuum"] == [gdpr]
    monkeypatch.setattr(settings, "auto_vacuum_tombstones", 1)
    assert scheduled()["vacuum"] == [reverted]
    assert scheduled()["vacuum"] == []
    with session_scope() as session:
        queued = session.query(Job).filter(Job.state == JobState.QUEUED).all()
        kinds = sorted((j.kind, j.subject_id) for j in queued if j.subject_id in mine)
        assert kinds == sorted([("expire", history), ("vacuum", gdpr), ("vacuum", reverted)])
        # only the expire job runs here (vacuums are tests/workers/test_vacuum*.py's business)
        others = [j.id for j in queued if (j.kind, j.subject_id) != ("expire", history)]
        session.execute(update(Job).where(Job.id.in_(others)).values(state=JobState.FAILED))
    run_jobs()
    assert len(snapshot_ids(client, history)) == 1


def test_scheduler_compacts_a_partition_of_small_files(
    client: TestClient, run_jobs: RunJobs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Small batches (a file each) pile up in a partition: the scheduler bin-packs it once it
    holds `auto_compact_small_files` of them, and the rows stay what they were."""
    from app.config import get_settings
    from workers.scheduler import schedule_once

    monkeypatch.setattr(get_settings(), "auto_compact_small_files", 3)
    did = client.post("/v1/datasets", json={**EVENTS, "name": "smalls"}).json()["id"]

    def compacted() -> bool:
        return did in schedule_once()["compact"]

    expected = []
    for n in range(3):
        assert not compacted()  # fewer small files than the threshold
        rows = [(30 * n + 3, f"u{n}"), (30 * n + 6, "u9")]  # one day: one partition
        ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows(rows)})
        expected += [r[0] for r in rows]
    before = snapshot_ids(client, did)
    assert compacted()
    assert not compacted()  # its job is queued: no second one
    run_jobs()
    after = client.get(f"/v1/datasets/{did}/snapshots").json()["items"]
    operations = [s["icebatch"].get("icebatch.operation") for s in after]
    assert len(after) == len(before) + 1
    assert operations.count("compact") == 1
    assert ids(client, did) == sorted(expected)
    assert not compacted()  # one file now


def parquet_values(folder: Path) -> set[str]:
    """Every string value of every Parquet file under `folder`."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    found: set[str] = set()
    for path in folder.rglob("*.parquet"):
        table = pq.read_table(path)
        for column in table.columns:
            if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
                found.update(v for v in pc.unique(column).to_pylist() if v is not None)
    return found


def test_gdpr_delete_vacuum_expire_is_erased(client: TestClient, run_jobs: RunJobs) -> None:
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(1, "u1"), (2, "u2")])})
    ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(3, "u1"), (4, "u3")])})
    folder = table_dir(client, did)
    assert "u1" in parquet_values(folder)
    gdpr = client.post(
        "/v1/privacy/jobs", json={"dataset_ids": [did], "column": "user_id", "values": ["u1"]}
    ).json()
    run_jobs()
    assert client.get(f"/v1/privacy/jobs/{gdpr['id']}").json()["status"] == "complete"

    vacuum = client.post(f"/v1/datasets/{did}/vacuum", json={"mode": "full"})
    assert vacuum.status_code == 202, vacuum.text
    run_jobs()
    assert client.get(f"/v1/jobs/{vacuum.json()['id']}").json()["state"] == "succeeded"
    assert ids(client, did) == [2, 4]
    # the snapshots before the vacuum still hold u1's rows: not erased yet
    status = client.get(f"/v1/privacy/jobs/{gdpr['id']}").json()
    assert status["status"] == "complete"
    assert status["receipt"] is None

    client.put(
        f"/v1/datasets/{did}/retention",
        json={"min_snapshots": 1, "max_snapshot_age_seconds": 0, "orphan_age_seconds": 0},
    )
    # the vacuum snapshot owns the tombstone list (and names the vacuumed tombstones, u1
    # included) until a later snapshot owns the list: here a revert
    b3 = ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(5, "u2")])})
    client.post(f"/v1/batches/{b3['id']}", params={"action": "REVERT"})
    run_jobs()
    result = expire(client, run_jobs, did)
    assert len(result["retained"]) == 1
    assert result["erased_restatements"]
    status = client.get(f"/v1/privacy/jobs/{gdpr['id']}").json()
    assert status["status"] == "erased", status
    assert status["datasets"][0]["status"] == "erased"
    receipt = status["receipt"]
    assert receipt["snapshots_expired"] == len(result["expired"]) >= 4
    assert receipt["last_physical_removal_at"] is not None
    assert set(receipt["datasets"]) == {did}
    assert receipt["files_rewritten"] == receipt["datasets"][did]["files_rewritten"] >= 1
    assert ids(client, did) == [2, 4]
    values = parquet_values(folder)
    assert "u1" not in values
    assert {"u2", "u3"} <= values


def test_gdpr_erased_while_the_vacuum_is_the_current_snapshot(
    client: TestClient, run_jobs: RunJobs
) -> None:
    """The usual first erasure: delete, vacuum, expire, nothing committed since. The vacuum
    snapshot stays (it is current, and owns the tombstone list), but its vacuumed-tombstones
    file, which names u1, can no longer be read once its parent expired: expiry deletes it (the
    orphan age, a day, would have held erasure back that long)."""
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(1, "u1"), (2, "u2")])})
    gdpr = client.post(
        "/v1/privacy/jobs", json={"dataset_ids": [did], "column": "user_id", "values": ["u1"]}
    ).json()
    run_jobs()
    vacuum = client.post(f"/v1/datasets/{did}/vacuum", json={"mode": "full"})
    run_jobs()
    assert client.get(f"/v1/jobs/{vacuum.json()['id']}").json()["state"] == "succeeded"
    folder = table_dir(client, did)
    vacuumed = list((folder / "tombstones").glob("vacuum-*.parquet"))
    assert len(vacuumed) == 1
    assert "u1" in parquet_values(folder / "tombstones")
    client.put(
        f"/v1/datasets/{did}/retention",
        json={"min_snapshots": 1, "max_snapshot_age_seconds": 0, "orphan_age_seconds": 86400},
    )

    result = expire(client, run_jobs, did)

    current = client.get(f"/v1/datasets/{did}").json()["current_snapshot_id"]
    assert result["retained"] == [current]  # the vacuum snapshot itself stays
    assert result["orphans_deleted"] == 0
    assert not vacuumed[0].exists()
    assert result["erased_restatements"]
    assert client.get(f"/v1/privacy/jobs/{gdpr['id']}").json()["status"] == "erased"
    assert "u1" not in parquet_values(folder)
    assert ids(client, did) == [2]
