"""A staged replay does not hold a worker slot while it waits for its group commit when a queued
job will carry it (`workers/restatements/task.stage_replay`): the 0.9/0.05/0.05 mix's replays
each held a slot until their group committed (bench/RESULTS.md, goal 6), so the next replay's
staging waited behind them. Without Spark: both batches take the small-batch path."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from app.config import get_settings
from app.db import session_scope
from app.lake import lease
from app.models import CommitLease, Job, JobState, Restatement, RestatementState
from tests.fixtures.batches import rows
from tests.fixtures.datasets import EVENTS
from tests.fixtures.environments import Environment
from tests.fixtures.workload import reruns
from tests.workers.restatements.test_carried import deliver, erase, has_message, run, state
from workers.restatements import committer

HEADER = b"event_id,user_id,event_time,payload\n"
BASE = HEADER + b"1,u1,2026-11-01T10:00:00,a\n2,u2,2026-11-01T11:00:00,b\n"
FIXED = HEADER + b"1,u1,2026-11-01T10:00:00,a2\n3,u3,2026-11-01T12:00:00,c\n"


def batch(client: TestClient, dataset_id: str, body: bytes, **extra: Any) -> dict[str, Any]:
    """A batch of one CSV file, completed: (its id, its job's id)."""
    opened = client.post("/v1/batches", json={"dataset_id": dataset_id, "format": "csv", **extra})
    assert opened.status_code == 201, opened.text
    batch_id = opened.json()["id"]
    assert client.put(f"/v1/batches/{batch_id}/files/a.csv", content=body).status_code == 201
    done = client.post(f"/v1/batches/{batch_id}", params={"action": "COMPLETE"})
    assert done.status_code == 202, done.text
    return {"id": batch_id, "job": done.json()["job"]["id"], "kind": done.json()["job"]["kind"]}


def delivered(client: TestClient) -> list[str]:
    """The test's own jobs delivered (`deliver` of its client's org)."""
    return deliver(client.org)  # type: ignore[attr-defined]


def landed_base(client: TestClient) -> tuple[str, dict[str, Any]]:
    """A new dataset and its base batch, landed."""
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    base = batch(client, did, BASE)
    assert delivered(client) == [base["job"]]
    return did, base


def replay_of(client: TestClient, did: str, base: dict[str, Any]) -> dict[str, Any]:
    """FIXED as the replay of `base`, completed: its job queued."""
    return batch(client, did, FIXED, replay={"predecessors": [base["id"]], "reason": "corrected"})


def lease_token(dataset_id: str) -> int:
    with session_scope() as session:
        return (
            session.scalar(select(CommitLease.token).where(CommitLease.dataset_id == dataset_id))
            or 0
        )


def job(job_id: str) -> Job:
    with session_scope() as session:
        found = session.get(Job, job_id)
        assert found is not None
        session.expunge(found)
        return found


@pytest.fixture
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both batches are small: a job that asks for Spark fails the test."""
    from workers.spark import session

    def refused() -> None:
        raise AssertionError("a small batch's job asked for Spark")

    monkeypatch.setattr(session, "get_spark", refused)


def test_a_staged_replay_rides_on_a_queued_carrier_and_frees_its_slot(
    client: TestClient, stack: Environment, no_spark: None
) -> None:
    did, base = landed_base(client)
    carrier = erase(client.org, did, "u2")  # type: ignore[attr-defined]
    assert has_message(carrier)  # queued, its message on its way: a carrier
    replay = replay_of(client, did, base)
    assert replay["kind"] == "replay"
    token = lease_token(did)

    run(replay["job"])  # stages, then leaves its commit to the carrier's group

    handed = job(replay["job"])
    assert (handed.state, handed.stage) == (JobState.QUEUED, "committing")
    assert not has_message(replay["job"])  # carried: no message of its own, not a carrier
    assert state(replay["job"]) == RestatementState.READY
    assert lease_token(did) == token  # it never took the commit lease: nothing committed
    assert not (get_settings().staging_dir / replay["id"]).exists()  # inputs gone once staged

    assert delivered(client) == [carrier]  # the carrier's worker commits both (a group per kind)
    assert state(replay["job"]) == state(carrier) == RestatementState.COMMITTED
    done = job(replay["job"])
    assert done.state == JobState.SUCCEEDED
    # settled by the carrier, never claimed again: one attempt, its retries as they were
    assert (done.attempt, done.max_attempts) == (1, get_settings().job_max_attempts)
    with session_scope() as session:
        snapshot_id = session.scalar(
            select(Restatement.snapshot_id).where(Restatement.job_id == replay["job"])
        )
    assert done.result is not None
    assert done.result["snapshot_id"] == snapshot_id is not None
    assert client.get(f"/v1/batches/{replay['id']}").json()["status"] == "success"
    assert client.get(f"/v1/batches/{base['id']}").json()["status"] == "replaced"
    seen = sorted((r["event_id"], r["payload"]) for r in rows(client, did))
    assert seen == [(1, "a2"), (3, "c")]  # the replay's rows; u2's row was replaced anyway


def test_a_staged_replay_with_no_carrier_commits_itself(
    client: TestClient, stack: Environment, no_spark: None
) -> None:
    did, base = landed_base(client)
    replay = replay_of(client, did, base)
    run(replay["job"])
    assert job(replay["job"]).state == JobState.SUCCEEDED
    assert state(replay["job"]) == RestatementState.COMMITTED
    seen = sorted((r["event_id"], r["payload"]) for r in rows(client, did))
    assert seen == [(1, "a2"), (3, "c")]


def test_a_staged_replay_hands_off_to_the_committer_draining_its_dataset(
    client: TestClient, stack: Environment, no_spark: None
) -> None:
    """A burst's replays found no queued carrier (the committer's job was running), so each
    waited in its slot for its group: one replay a group commit through the other slot."""
    did, base = landed_base(client)
    replay = replay_of(client, did, base)
    token = lease.acquire(did, role=lease.DRAINER)  # a committer draining the dataset
    assert token is not None

    run(replay["job"])

    handed = job(replay["job"])
    assert (handed.state, handed.stage) == (JobState.QUEUED, "committing")
    assert not has_message(replay["job"])
    assert state(replay["job"]) == RestatementState.READY
    committer.drain(did, token)  # the committer's next group is the replay
    lease.release(did, token)
    assert state(replay["job"]) == RestatementState.COMMITTED
    assert job(replay["job"]).state == JobState.SUCCEEDED
    seen = sorted((r["event_id"], r["payload"]) for r in rows(client, did))
    assert seen == [(1, "a2"), (3, "c")]


def test_a_replay_handed_to_a_committer_that_lets_go_is_passed_on(
    client: TestClient, stack: Environment, no_spark: None
) -> None:
    """The committer had finished its last group when the replay became ready: after its
    release, `pass_on` sends the carried job's message, and a worker commits it."""
    did, base = landed_base(client)
    replay = replay_of(client, did, base)
    token = lease.acquire(did, role=lease.DRAINER)
    assert token is not None
    run(replay["job"])
    assert not has_message(replay["job"])
    lease.release(did, token)

    committer.pass_on(did)

    assert has_message(replay["job"])
    assert delivered(client) == [replay["job"]]
    assert state(replay["job"]) == RestatementState.COMMITTED
    assert job(replay["job"]).state == JobState.SUCCEEDED
    # the claim after the hand-off is the job's second attempt, though its work ran once: not a
    # retry, so it leaves the job its retries (one more allowed), and the fault tests' `reruns`
    # (what they call running again) does not count it
    seen = client.get(f"/v1/jobs/{replay['job']}").json()
    assert (seen["attempt"], seen["max_attempts"]) == (2, get_settings().job_max_attempts + 1)
    assert reruns([seen]) == {}
    assert reruns([{**seen, "kind": "revert"}]) == {replay["job"]: ["unexplained"]}


def test_a_replay_does_not_hand_off_to_a_lease_holder_that_is_not_a_committer(
    client: TestClient, stack: Environment, no_spark: None
) -> None:
    """An ingest or a maintenance job holding the lease drains nothing and passes nothing on:
    the replay waits for the lease and commits itself."""
    did, base = landed_base(client)
    replay = replay_of(client, did, base)
    token = lease.acquire(did)  # not a drainer
    assert token is not None
    releaser = threading.Timer(1.0, lease.release, args=(did, token))
    releaser.start()
    try:
        run(replay["job"])
    finally:
        releaser.join()
    assert job(replay["job"]).state == JobState.SUCCEEDED
    assert state(replay["job"]) == RestatementState.COMMITTED
    assert lease_token(did) > token  # it took the lease after the holder let go


def test_a_replay_with_more_replays_queued_behind_it_carries_them(
    client: TestClient, stack: Environment, no_spark: None
) -> None:
    """With no carrier and no committer, a staged replay whose dataset has other replays in the
    queue goes back to the queue behind them with a message: they stage and hand off to it, and
    one group commit lands them all (a burst's replays committed one by one before)."""
    did, base = landed_base(client)
    other = batch(client, did, BASE.replace(b"1,u1", b"4,u4").replace(b"2,u2", b"5,u5"))
    assert delivered(client) == [other["job"]]
    first = replay_of(client, did, base)
    second = batch(client, did, FIXED, replay={"predecessors": [other["id"]], "reason": "fix"})
    token = lease_token(did)

    run(first["job"])  # staged; the second waits in the queue: it becomes the carrier

    carrier = job(first["job"])
    assert (carrier.state, carrier.stage) == (JobState.QUEUED, "committing")
    assert has_message(first["job"])  # a new message, behind the second's
    assert state(first["job"]) == RestatementState.READY
    run(second["job"])  # staged; hands off to the first
    assert job(second["job"]).state == JobState.QUEUED
    assert not has_message(second["job"])
    assert lease_token(did) == token  # nothing committed yet

    assert delivered(client) == [first["job"]]  # one worker commits both
    assert state(first["job"]) == state(second["job"]) == RestatementState.COMMITTED
    assert job(first["job"]).state == job(second["job"]).state == JobState.SUCCEEDED
    # the carrier's second claim is no retry: its retries are left whole
    allowed = get_settings().job_max_attempts
    assert (job(first["job"]).attempt, job(first["job"]).max_attempts) == (2, allowed + 1)
    assert (job(second["job"]).attempt, job(second["job"]).max_attempts) == (1, allowed)
    with session_scope() as session:
        snapshots = set(
            session.scalars(
                select(Restatement.snapshot_id).where(
                    Restatement.job_id.in_([first["job"], second["job"]])
                )
            )
        )
    assert len(snapshots) == 1  # one group, one snapshot
    assert client.get(f"/v1/batches/{base['id']}").json()["status"] == "replaced"
    assert client.get(f"/v1/batches/{other['id']}").json()["status"] == "replaced"
