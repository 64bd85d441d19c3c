"""A privacy job's status is read at one point in time: the committer records a restatement
(its rows hidden) and ends its job in one transaction, so no reader sees the job complete with
the restatement not yet recorded (seen once in CI: the Privacy page said `complete` and
`rows hidden 0` for an identity that had a row)."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import event

from tests.fixtures.datasets import EVENTS


def record(restatement_id: str, job_id: str, rows_hidden: int) -> None:
    """What the committer's `_record` does to the two rows, in one transaction of its own."""
    from app import clock
    from app.db import session_scope
    from app.models import Job, JobState, Restatement, RestatementState

    with session_scope() as session:
        part = session.get(Restatement, restatement_id)
        job = session.get(Job, job_id)
        assert part is not None
        assert job is not None
        part.state = RestatementState.COMMITTED
        part.tombstones_written = len(part.ids)
        part.rows_hidden = rows_hidden
        job.state = JobState.SUCCEEDED
        job.finished_at = clock.db_now(session)


def test_a_restatement_recorded_while_its_status_is_read_is_seen_whole_or_not_at_all(
    client: TestClient,
) -> None:
    from app.db import get_engine, session_scope
    from app.privacy import repository, service

    dataset = client.post("/v1/datasets", json=EVENTS).json()["id"]
    body = {"dataset_ids": [dataset], "column": "user_id", "values": ["u1"]}
    submitted = client.post("/v1/privacy/jobs", json=body)
    assert submitted.status_code == 202, submitted.text
    privacy_id, job_id = submitted.json()["id"], submitted.json()["datasets"][0]["job_id"]
    with session_scope() as session:
        (part, _), *_ = repository.parts_with_jobs(session, privacy_id)
        restatement_id = part.id

    # the committer's transaction lands right after the status's first read of the parts
    landed: list[str] = []

    def commit_meanwhile(conn: Any, cursor: Any, statement: str, *_: Any) -> None:
        if not landed and "FROM restatements" in statement:
            landed.append(statement)
            record(restatement_id, job_id, rows_hidden=3)

    engine = get_engine()
    event.listen(engine, "after_cursor_execute", commit_meanwhile)
    try:
        with session_scope() as session:
            seen = service.privacy_job_status(session, client.org, privacy_id)  # type: ignore[attr-defined]
    finally:
        event.remove(engine, "after_cursor_execute", commit_meanwhile)
    assert landed, "the status was read without a statement on the restatements"
    # before the commit (nothing hidden yet, not complete) or after it: never a mix
    assert (seen.status, seen.rows_hidden) == ("submitted", 0), seen
    assert seen.datasets[0].rows_hidden is None

    after = client.get(f"/v1/privacy/jobs/{privacy_id}").json()
    assert (after["status"], after["rows_hidden"]) == ("complete", 3), after
    assert after["datasets"][0]["rows_hidden"] == 3


def test_privacy_jobs_settle_once_every_dataset_is_erased(client: TestClient) -> None:
    """`settle_privacy_jobs` (a vacuum's or an expiry's erasure check, jobs read in bulk) marks
    a privacy job erased exactly when each of its datasets is, with the receipt that
    `settle_privacy_job` (one job, as the doctor settles) gives it."""
    from app import clock
    from app.db import session_scope
    from app.models import PrivacyJob, Restatement
    from app.privacy import erasure

    datasets = [
        client.post("/v1/datasets", json={**EVENTS, "name": f"events{i}"}).json()["id"]
        for i in range(2)
    ]
    jobs = []
    for value in ("u1", "u2", "u3"):
        body = {"dataset_ids": datasets, "column": "user_id", "values": [value]}
        submitted = client.post("/v1/privacy/jobs", json=body)
        assert submitted.status_code == 202, submitted.text
        jobs.append(submitted.json()["id"])
    # u1 erased in both datasets, u2 in the first only, u3 in neither
    erased = {(jobs[0], datasets[0]), (jobs[0], datasets[1]), (jobs[1], datasets[0])}
    now = clock.now()
    with session_scope() as session:
        for part in session.query(Restatement).filter(Restatement.privacy_job_id.in_(jobs)):
            if (part.privacy_job_id, part.dataset_id) in erased:
                part.erased_at, part.files_rewritten = now, 2
    with session_scope() as session:
        assert erasure.settle_privacy_jobs(session, jobs) == 1
    with session_scope() as session:
        settled = {j.id: (j.erased_at, j.receipt) for j in session.query(PrivacyJob)}
        assert [j for j in jobs if settled[j][0] is not None] == [jobs[0]]
        receipt = settled[jobs[0]][1]
        assert receipt is not None
        assert receipt["files_rewritten"] == 4
        assert sorted(receipt["datasets"]) == sorted(datasets)
        # the single-job path agrees
        assert erasure.settle_privacy_job(session, jobs[0])
        assert session.get(PrivacyJob, jobs[0]).receipt == receipt  # type: ignore[union-attr]
        assert not erasure.settle_privacy_job(session, jobs[1])
