"""Incremental reads (`GET /changes`) against an independent model (tests/fixtures/changes.py):
plain Python sets of rows keyed by a unique event id, and the tombstones that hide them."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.fixtures.batches import csv_rows, ingest
from tests.fixtures.changes import (
    FULL,
    Model,
    build,
    changes,
    current,
    gdpr_delete,
    request_ids,
    span,
)
from tests.fixtures.datasets import EVENTS
from tests.fixtures.spark import RunJobs

pytestmark = pytest.mark.spark


def check(
    client: TestClient, did: str, model: Model, start: int, end: int, requests: Any
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Both kinds over (start, end] equal the model, with the change columns filled in."""
    by_snapshot, by_value = requests
    params = span(model.snapshots[start], model.snapshots[end])
    added, headers = changes(client, did, "appended", **params)
    assert headers["x-icebatch-from-snapshot"] == str(model.snapshots[start] or "")
    assert headers["x-icebatch-to-snapshot"] == str(model.snapshots[end])
    gone, _ = changes(client, did, "deleted", **params)
    where = f"range ({start}, {end}]"
    plain = [r["event_id"] for r in added if r["event_id"] is not None]
    assert len(plain) == len(set(plain)), where
    kept = [r["event_id"] for r in gone if r["event_id"] is not None]
    assert len(kept) == len(set(kept)), where
    # rows of an identity a GDPR delete erased (whenever it committed) keep only the identity
    # columns and the batch, in both kinds
    expected_added = model.appended(start, end)
    assert whys(added) == {e: why for e, why in expected_added.items() if not model.erased(e)}, (
        where
    )
    assert masked(added) == sorted(
        (model.rows[e].user, model.rows[e].batch, *why)
        for e, why in expected_added.items()
        if model.erased(e)
    ), where
    for row in added:
        assert row["_change_type"] == "appended"
        assert row["_request_id"] == by_snapshot[row["_snapshot_id"]]
        if row["event_id"] is None:
            assert row["payload"] is None
            assert row["event_time"] is None
            continue
        source = model.rows[row["event_id"]]
        assert row["_batch_id"] == source.batch
        assert row["user_id"] == source.user
        assert row["payload"] == f"p{row['event_id']}"
    expected_gone = model.deleted(start, end)
    assert whys(gone) == {e: why for e, why in expected_gone.items() if not model.erased(e)}, where
    assert masked(gone) == sorted(
        (model.rows[e].user, model.rows[e].batch, *why)
        for e, why in expected_gone.items()
        if model.erased(e)
    ), where
    for row in gone:
        assert row["_change_type"] == "deleted"
        if row["event_id"] is None:  # only the identity columns, the batch, the why
            assert row["payload"] is None
            assert row["event_time"] is None
            value = row["user_id"] if row["_operation"] == "gdpr" else row["_batch_id"]
            assert row["_request_id"] == by_value[value]
        else:
            assert row["_operation"] != "gdpr"
            assert row["_batch_id"] == model.rows[row["event_id"]].batch
            assert row["payload"] == f"p{row['event_id']}"
            assert row["_request_id"] == by_value[row["_batch_id"]]
    return added, gone


def whys(found: list[dict[str, Any]]) -> dict[int, tuple[str, int]]:
    """The change rows with all their columns: (operation, snapshot) by event id."""
    return {
        r["event_id"]: (r["_operation"], r["_snapshot_id"])
        for r in found
        if r["event_id"] is not None
    }


def masked(found: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """The change rows reduced to identity and batch: (user, batch, operation, snapshot)."""
    return sorted(
        (r["user_id"], r["_batch_id"], r["_operation"], r["_snapshot_id"])
        for r in found
        if r["event_id"] is None
    )


def check_replica(
    client: TestClient, did: str, model: Model, replica: set[tuple[Any, ...]], step: int
) -> None:
    """The replica equals the full read at `step`, plus the erased rows of the exact history
    reduced to identity and batch (a later increment deletes them)."""
    full = {k for k in replica if k[0] is not None}
    assert full == snapshot_rows(client, did, model.snapshots[step]), step
    assert {k[0] for k in full} == model.readable(step), step
    reduced = {(k[1], k[4]) for k in replica if k[0] is None}
    erased = [model.rows[e] for e in model.visible(step) if model.erased(e)]
    assert reduced == {(r.user, r.batch) for r in erased}, step


def check_every_range(client: TestClient, did: str, model: Model) -> Any:
    """`check` on every range (start, end] of the model's snapshots; the request ids read."""
    requests = request_ids(client, did)
    steps = range(len(model.snapshots))
    for start in steps:
        for end in steps:
            if start < end:
                check(client, did, model, start, end, requests)
    return requests


def test_changes_of_every_range_match_the_model(client: TestClient, run_jobs: RunJobs) -> None:
    did, model = build(client, run_jobs)
    requests = check_every_range(client, did, model)
    # a row appended and deleted inside the range is deleted, not appended
    replayed, gdpr = model.operations.index("replay"), model.operations.index("gdpr")
    added, gone = check(client, did, model, replayed - 1, gdpr, requests)
    assert 7 not in {r["event_id"] for r in added}
    assert {"u1"} == {r["user_id"] for r in gone if r["_operation"] == "gdpr"}
    # rows 7 and 8, and row 4, replaced and erased in the range: the GDPR tombstone wins
    assert len([r for r in gone if r["_operation"] == "gdpr"]) == 3
    # the replica invariant at every checkpoint: apply deleted, then appended
    replica: set[tuple[Any, ...]] = set()
    for step in range(1, len(model.snapshots)):
        added, gone = check(client, did, model, step - 1, step, requests)
        apply(replica, added, gone)
        check_replica(client, did, model, replica, step)


def key(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(row[c] for c in FULL)


def apply(
    replica: set[tuple[Any, ...]], added: list[dict[str, Any]], gone: list[dict[str, Any]]
) -> None:
    """What a consumer does with an increment: remove the deleted rows, add the appended."""
    for row in gone:
        if row["_operation"] == "gdpr":  # identity + batch: remove every row of both
            replica -= {k for k in replica if (k[1], k[4]) == (row["user_id"], row["_batch_id"])}
        else:
            replica.remove(key(row))
    for row in added:
        assert key(row) not in replica
        replica.add(key(row))


def snapshot_rows(client: TestClient, did: str, snapshot_id: int | None) -> set[tuple[Any, ...]]:
    response = client.get(f"/v1/datasets/{did}/rows", params={"as_of": snapshot_id})
    assert response.status_code == 200, response.text
    return {key(json.loads(line)) for line in response.text.splitlines()}


def maintain(
    client: TestClient, run_jobs: RunJobs, did: str, model: Model, path: str, body: dict[str, Any]
) -> dict[str, Any]:
    """A vacuum or compaction: a snapshot that changes no visible row."""
    started = client.post(f"/v1/datasets/{did}/{path}", json=body)
    assert started.status_code == 202, started.text
    run_jobs()
    job = client.get(f"/v1/jobs/{started.json()['id']}").json()
    assert job["state"] == "succeeded", job
    model.commit(current(client, did), path)
    return dict(job["result"])


def test_changes_across_vacuum_and_compaction(client: TestClient, run_jobs: RunJobs) -> None:
    """Vacuums (partial and full) and a compaction inside and across ranges: appended never
    holds re-written rows, deleted rows of rewritten files are counted once."""
    did, model = build(client, run_jobs)
    partial = maintain(client, run_jobs, did, model, "vacuum", {"mode": "partial", "tombstones": 1})
    assert partial["tombstones_purged"] == 1, partial
    batch = ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(20, "u2"), (21, "u8")])})
    model.add(batch["id"], [(20, "u2"), (21, "u8")])
    model.commit(batch["snapshot_id"], "ingest")
    gdpr_delete(client, run_jobs, did, model, "u2")
    compacted = maintain(client, run_jobs, did, model, "compact", {})
    assert compacted.get("files_rewritten", 0) > 0, compacted
    late = ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(22, "u9")])})
    model.add(late["id"], [(22, "u9")])
    model.commit(late["snapshot_id"], "ingest")
    assert client.post(f"/v1/batches/{late['id']}", params={"action": "REVERT"}).status_code == 202
    run_jobs()
    model.hide("revert", "_batch_id", [late["id"]], current(client, did))
    model.commit(current(client, did), "revert")
    full = maintain(client, run_jobs, did, model, "vacuum", {"mode": "full"})
    assert full["tombstones_purged"] > 0, full
    requests = check_every_range(client, did, model)
    steps = range(len(model.snapshots))
    replica: set[tuple[Any, ...]] = set()
    for step in steps[1:]:
        added, gone = check(client, did, model, step - 1, step, requests)
        apply(replica, added, gone)
        check_replica(client, did, model, replica, step)
    # every second checkpoint: increments spanning vacuums and the compaction
    replica = set()
    for start, end in zip(steps[::2], [*steps[2::2], steps[-1]], strict=False):
        added, gone = check(client, did, model, start, end, requests)
        apply(replica, added, gone)
        check_replica(client, did, model, replica, end)


@pytest.mark.parametrize("stack", ["embedded"], indirect=True)  # one store is enough here
def test_a_range_reaching_expired_snapshots_is_gone(client: TestClient, run_jobs: RunJobs) -> None:
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    snapshots = [
        ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(i, f"u{i}")])})["snapshot_id"]
        for i in range(4)
    ]
    policy = {"min_snapshots": 2, "max_snapshot_age_seconds": 0}
    assert client.put(f"/v1/datasets/{did}/retention", json=policy).status_code == 200
    started = client.post(f"/v1/datasets/{did}/expire")
    assert started.status_code == 202, started.text
    run_jobs()
    job = client.get(f"/v1/jobs/{started.json()['id']}").json()
    assert job["state"] == "succeeded", job
    retained = {
        s["snapshot_id"] for s in client.get(f"/v1/datasets/{did}/snapshots").json()["items"]
    }
    assert snapshots[0] not in retained
    oldest = min(retained, key=snapshots.index)
    url = f"/v1/datasets/{did}/changes"
    for params in (
        {"kind": "appended"},  # from the empty table: the chain reaches an expired snapshot
        {"kind": "deleted", "from_snapshot": snapshots[0]},
        {"kind": "appended", "since": "2000-01-01T00:00:00Z"},
    ):
        gone = client.get(url, params=params)
        assert gone.status_code == 410, (params, gone.text)
        assert gone.json()["oldest_retained_snapshot_id"] == oldest
        assert str(oldest) in gone.json()["detail"]
    rows, headers = changes(client, did, "appended", from_snapshot=oldest)
    assert headers["x-icebatch-from-snapshot"] == str(oldest)
    assert [r["event_id"] for r in rows] == list(range(snapshots.index(oldest) + 1, 4))


@pytest.mark.parametrize("stack", ["embedded"], indirect=True)  # the rule runs on both stores
def test_forgotten_records_of_expired_snapshots(
    client: TestClient, run_jobs: RunJobs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pruning pass forgets the record of an expired snapshot nothing names (here a
    vacuum's) but keeps a batch's, a restatement's and the dataset's oldest: a time before every
    retained snapshot stays a 410, the forgotten id becomes a 404 that says it may have expired,
    a batch's expired snapshot is still a 410, and the count of expired snapshots an erasure
    reports does not change."""
    from app.config import get_settings
    from app.db import session_scope
    from app.pruning import service as pruning
    from app.retention import repository as retention_records
    from app.retention import service as retention

    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    model = Model()
    batches, vacuums = [], []
    for i in range(2):  # two batches, the second reverted, then a vacuum; twice
        for j in (2 * i, 2 * i + 1):
            batches.append(
                ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(j, f"u{j}")])})
            )
        revert = client.post(f"/v1/batches/{batches[-1]['id']}", params={"action": "REVERT"})
        assert revert.status_code == 202, revert.text
        run_jobs()
        vacuumed = maintain(client, run_jobs, did, model, "vacuum", {"mode": "full"})
        assert vacuumed["tombstones_purged"] > 0, vacuumed
        vacuums.append(current(client, did))
    vacuum = vacuums[0]  # the second owns the tombstone list of every later snapshot: kept
    for i in (4, 5):
        ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows([(i, f"u{i}")])})
    policy = {"min_snapshots": 2, "max_snapshot_age_seconds": 0}
    assert client.put(f"/v1/datasets/{did}/retention", json=policy).status_code == 200
    assert client.post(f"/v1/datasets/{did}/expire").status_code == 202
    run_jobs()
    retained = client.get(f"/v1/datasets/{did}/snapshots").json()["items"]
    first = min(retained, key=lambda s: s["sequence_number"])
    committed = datetime.fromisoformat(first["committed_at"])
    url = f"/v1/datasets/{did}/changes"
    asked = {
        "vacuum": {"kind": "appended", "from_snapshot": vacuum},
        "batch": {"kind": "appended", "from_snapshot": batches[1]["snapshot_id"]},
        "time": {"kind": "appended", "since": (committed - timedelta(milliseconds=1)).isoformat()},
    }
    gone = {"vacuum": 410, "batch": 410, "time": 410}
    assert {name: client.get(url, params=p).status_code for name, p in asked.items()} == gone
    with session_scope() as session:
        expired = retention.count_expired_before(session, did, 2**62)
    assert expired >= 7  # four batches', two reverts', a vacuum's (and materializers')

    monkeypatch.setattr(get_settings(), "expired_snapshot_retention_days", 1e-9)
    pruned = pruning.prune()["expired_snapshots"]  # every dataset's: the store is the worker's
    with session_scope() as session:
        forgotten = retention_records.forgotten_count(session, did)
    assert 1 <= forgotten <= min(pruned, expired - 6)  # the batches' and the reverts' are kept
    answers = {name: client.get(url, params=p) for name, p in asked.items()}
    assert {name: a.status_code for name, a in answers.items()} == gone | {"vacuum": 404}
    assert f"{forgotten} snapshots expired more than" in answers["vacuum"].json()["detail"]
    assert answers["time"].json()["oldest_retained_snapshot_id"] == first["snapshot_id"]
    moved = client.post(f"/v1/datasets/{did}/consumers", json={"name": "c", "snapshot_id": vacuum})
    assert moved.status_code == 404, moved.text
    assert "no longer kept" in moved.json()["detail"]
    with session_scope() as session:
        assert retention.count_expired_before(session, did, 2**62) == expired
