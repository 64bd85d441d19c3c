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
