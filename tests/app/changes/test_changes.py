"""Incremental reads (`GET /changes`) and exports against an independent model: plain Python
sets of rows keyed by a unique event id, and the tombstones that hide them."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient

from tests.fixtures.batches import csv_rows, ingest, replay
from tests.fixtures.datasets import EVENTS
from tests.fixtures.spark import RunJobs

pytestmark = pytest.mark.spark

CHANGE_COLUMNS = ("_change_type", "_operation", "_batch_id", "_request_id", "_snapshot_id")


@dataclass
class Row:
    event_id: int
    user: str | None
    batch: str
    step: int


@dataclass
class Tombstone:
    step: int
    operation: str
    column: str  # "_batch_id" or "user_id"
    value: str
    snapshot_id: int


@dataclass
class Model:
    """What each snapshot shows, computed from the operations alone (no Icebatch code)."""

    rows: dict[int, Row] = field(default_factory=dict)
    tombstones: list[Tombstone] = field(default_factory=list)
    snapshots: list[int | None] = field(default_factory=lambda: [None])  # step -> snapshot
    operations: list[str] = field(default_factory=lambda: [""])  # step -> operation

    @property
    def step(self) -> int:
        return len(self.snapshots) - 1

    def commit(self, snapshot_id: int, operation: str) -> None:
        self.snapshots.append(snapshot_id)
        self.operations.append(operation)

    def add(self, batch: str, records: list[tuple[int, str | None]]) -> None:
        for event_id, user in records:
            self.rows[event_id] = Row(event_id, user, batch, self.step + 1)

    def hide(self, operation: str, column: str, values: list[str], snapshot_id: int) -> None:
        for value in values:
            self.tombstones.append(Tombstone(self.step + 1, operation, column, value, snapshot_id))

    def hits(self, row: Row, after: int, upto: int) -> list[Tombstone]:
        """Tombstones committed in (after, upto] that hide `row` (newer than the row)."""
        return [
            t
            for t in self.tombstones
            if after < t.step <= upto
            and t.step > row.step
            and (row.batch if t.column == "_batch_id" else row.user) == t.value
        ]

    def visible(self, step: int) -> set[int]:
        return {e for e, r in self.rows.items() if r.step <= step and not self.hits(r, 0, step)}

    def appended(self, start: int, end: int) -> dict[int, tuple[str, int | None]]:
        return {
            e: (self.operations[self.rows[e].step], self.snapshots[self.rows[e].step])
            for e in self.visible(end) - self.visible(start)
        }

    def deleted(self, start: int, end: int) -> dict[int, tuple[str, int | None]]:
        committed = {e for e, r in self.rows.items() if start < r.step <= end}
        out: dict[int, tuple[str, int | None]] = {}
        for e in (self.visible(start) | committed) - self.visible(end):
            hits = self.hits(self.rows[e], start, end)
            gdpr = [t for t in hits if t.operation == "gdpr"]
            why = min(gdpr or hits, key=lambda t: t.step)
            out[e] = (why.operation, why.snapshot_id)
        return out


def current(client: TestClient, did: str) -> int:
    snapshot_id = client.get(f"/v1/datasets/{did}").json()["current_snapshot_id"]
    assert snapshot_id is not None
    return int(snapshot_id)


def changes(
    client: TestClient, did: str, kind: str, **params: Any
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    response = client.get(f"/v1/datasets/{did}/changes", params={"kind": kind, **params})
    assert response.status_code == 200, response.text
    return [json.loads(line) for line in response.text.splitlines()], dict(response.headers)


def span(start: int | None, end: int | None) -> dict[str, int]:
    params = {}
    if start is not None:
        params["from_snapshot"] = start
    if end is not None:
        params["to_snapshot"] = end
    return params


def build(client: TestClient, run_jobs: RunJobs) -> tuple[str, Model]:
    """Ingests, a revert, a replay, a GDPR delete, then more ingests, each in the model."""
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    model = Model()

    def load(records: list[tuple[int, str | None]]) -> str:
        batch = ingest(client, run_jobs, did, "csv", {"a.csv": csv_rows(records)})
        assert batch["status"] == "success", batch
        model.add(batch["id"], records)
        model.commit(batch["snapshot_id"], "ingest")
        return str(batch["id"])

    b1 = load([(1, "u1"), (2, "u2"), (3, "u3")])
    b2 = load([(4, "u1"), (5, "u4"), (11, None)])
    assert client.post(f"/v1/batches/{b1}", params={"action": "REVERT"}).status_code == 202
    run_jobs()
    model.hide("revert", "_batch_id", [b1], current(client, did))
    model.commit(current(client, did), "revert")
    records: list[tuple[int, str | None]] = [(6, "u5"), (7, "u1")]
    new = replay(client, run_jobs, did, [b2], csv_rows(records))
    assert new["status"] == "success", new
    model.hide("replay", "_batch_id", [b2], new["snapshot_id"])
    model.add(new["id"], records)
    model.commit(new["snapshot_id"], "replay")
    load([(8, "u1"), (9, "u6")])
    gdpr = client.post(
        "/v1/privacy/jobs", json={"dataset_ids": [did], "column": "user_id", "values": ["u1"]}
    )
    assert gdpr.status_code == 202, gdpr.text
    run_jobs()
    model.hide("gdpr", "user_id", ["u1"], current(client, did))
    model.commit(current(client, did), "gdpr")
    load([(10, "u1"), (12, "u2")])
    b6 = load([(13, "u7")])
    assert client.post(f"/v1/batches/{b6}", params={"action": "REVERT"}).status_code == 202
    run_jobs()
    model.hide("revert", "_batch_id", [b6], current(client, did))
    model.commit(current(client, did), "revert")
    return did, model


def request_ids(client: TestClient, did: str) -> tuple[dict[int, str], dict[str, str]]:
    """The request id of each snapshot, and of each tombstone (by value)."""
    snaps = client.get(f"/v1/datasets/{did}/snapshots").json()["items"]
    by_snapshot = {s["snapshot_id"]: s["icebatch"].get("icebatch.request-id") for s in snaps}
    by_value = {}
    for snapshot_id in by_snapshot:  # vacuums purge tombstones: look at every snapshot
        params = {"as_of": snapshot_id}
        listed = client.get(f"/v1/datasets/{did}/tombstones", params=params).json()["items"]
        by_value.update({t["id"]: t["meta"]["request_id"] for t in listed})
    return by_snapshot, by_value


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
    assert len(added) == len({r["event_id"] for r in added}), where
    kept = [r["event_id"] for r in gone if r["_operation"] != "gdpr"]
    assert len(kept) == len(set(kept)), where
    expected_added = model.appended(start, end)
    assert {r["event_id"]: (r["_operation"], r["_snapshot_id"]) for r in added} == (
        expected_added
    ), where
    for row in added:
        source = model.rows[row["event_id"]]
        assert row["_change_type"] == "appended"
        assert row["_batch_id"] == source.batch
        assert row["user_id"] == source.user
        assert row["payload"] == f"p{row['event_id']}"
        assert row["_request_id"] == by_snapshot[row["_snapshot_id"]]
    expected_gone = model.deleted(start, end)
    assert {r["event_id"]: (r["_operation"], r["_snapshot_id"]) for r in gone if r["event_id"]} == {
        e: why for e, why in expected_gone.items() if why[0] != "gdpr"
    }, where
    erased = [r for r in gone if r["_operation"] == "gdpr"]
    assert sorted((r["user_id"], r["_batch_id"], r["_snapshot_id"]) for r in erased) == sorted(
        (model.rows[e].user, model.rows[e].batch, why[1])
        for e, why in expected_gone.items()
        if why[0] == "gdpr"
    ), where
    for row in gone:
        assert row["_change_type"] == "deleted"
        if row["_operation"] == "gdpr":  # only the identity columns, the batch, the why
            assert row["event_id"] is None
            assert row["payload"] is None
            assert row["event_time"] is None
            assert row["_request_id"] == by_value[row["user_id"]]
        else:
            assert row["_batch_id"] == model.rows[row["event_id"]].batch
            assert row["payload"] == f"p{row['event_id']}"
            assert row["_request_id"] == by_value[row["_batch_id"]]
    return added, gone


def test_changes_of_every_range_match_the_model(client: TestClient, run_jobs: RunJobs) -> None:
    did, model = build(client, run_jobs)
    requests = request_ids(client, did)
    steps = range(len(model.snapshots))
    for start in steps:
        for end in steps:
            if start < end:
                check(client, did, model, start, end, requests)
    # a row appended and deleted inside the range is deleted, not appended
    replayed, gdpr = model.operations.index("replay"), model.operations.index("gdpr")
    added, gone = check(client, did, model, replayed - 1, gdpr, requests)
    assert 7 not in {r["event_id"] for r in added}
    assert {"u1"} == {r["user_id"] for r in gone if r["_operation"] == "gdpr"}
    # rows 7 and 8, and row 4, replaced and erased in the range: the GDPR tombstone wins
    assert len([r for r in gone if r["_operation"] == "gdpr"]) == 3
    # the replica invariant at every checkpoint: apply deleted, then appended
    replica: set[tuple[Any, ...]] = set()
    for step in steps[1:]:
        added, gone = check(client, did, model, step - 1, step, requests)
        apply(replica, added, gone)
        assert replica == snapshot_rows(client, did, model.snapshots[step]), step
        assert {k[0] for k in replica} == model.visible(step)


FULL = ("event_id", "user_id", "event_time", "payload", "_batch_id")


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
    gdpr = client.post(
        "/v1/privacy/jobs", json={"dataset_ids": [did], "column": "user_id", "values": ["u2"]}
    )
    assert gdpr.status_code == 202, gdpr.text
    run_jobs()
    model.hide("gdpr", "user_id", ["u2"], current(client, did))
    model.commit(current(client, did), "gdpr")
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
    requests = request_ids(client, did)
    steps = range(len(model.snapshots))
    for start in steps:
        for end in steps:
            if start < end:
                check(client, did, model, start, end, requests)
    replica: set[tuple[Any, ...]] = set()
    for step in steps[1:]:
        added, gone = check(client, did, model, step - 1, step, requests)
        apply(replica, added, gone)
        assert replica == snapshot_rows(client, did, model.snapshots[step]), step
    # every second checkpoint: increments spanning vacuums and the compaction
    replica = set()
    for start, end in zip(steps[::2], [*steps[2::2], steps[-1]], strict=False):
        added, gone = check(client, did, model, start, end, requests)
        apply(replica, added, gone)
        assert replica == snapshot_rows(client, did, model.snapshots[end]), end


@pytest.mark.parametrize("stack", ["embedded"], indirect=True)  # one store is enough here
def test_times_errors_formats_and_exports(client: TestClient, run_jobs: RunJobs) -> None:
    import workers.exports.task  # noqa: F401  (registers the task)

    did, model = build(client, run_jobs)
    requests = request_ids(client, did)
    url = f"/v1/datasets/{did}/changes"
    snaps = {
        s["snapshot_id"]: s["committed_at"]
        for s in client.get(f"/v1/datasets/{did}/snapshots").json()["items"]
    }
    # since/until resolve to the latest snapshot at or before the time
    first, last = model.snapshots[2], model.snapshots[6]
    assert first is not None
    assert last is not None
    for kind in ("appended", "deleted"):
        by_time, headers = changes(client, did, kind, since=snaps[first], until=snaps[last])
        assert headers["x-icebatch-from-snapshot"] == str(first)
        assert headers["x-icebatch-to-snapshot"] == str(last)
        by_id, _ = changes(client, did, kind, from_snapshot=first, to_snapshot=last)
        assert by_time == by_id
    _, headers = changes(client, did, "appended", since="2000-01-01T00:00:00Z")
    assert headers["x-icebatch-from-snapshot"] == ""
    assert headers["x-icebatch-to-snapshot"] == str(model.snapshots[-1])
    # errors
    assert client.get(url, params={"kind": "appended", "to_snapshot": 42}).status_code == 404
    backwards = client.get(
        url, params={"kind": "deleted", "from_snapshot": last, "to_snapshot": first}
    )
    assert backwards.status_code == 422
    assert "ancestor" in backwards.json()["detail"]
    both = client.get(
        url, params={"kind": "deleted", "from_snapshot": first, "since": snaps[first]}
    )
    assert both.status_code == 422
    assert client.get(url, params={"kind": "nothing"}).status_code == 422
    assert client.get(url, params={"kind": "deleted", "since": "yesterday"}).status_code == 422
    other = client.get(f"/v1/datasets/{did}/changes", params={"kind": "appended"}, headers={})
    assert other.status_code == 200
    from app.db import session_scope
    from app.models import ExpiredSnapshot

    now = datetime.now(UTC)
    with session_scope() as session:
        session.add(
            ExpiredSnapshot(
                dataset_id=did, snapshot_id=7, sequence_number=0, committed_at=now, expired_at=now
            )
        )
    gone = client.get(url, params={"kind": "appended", "from_snapshot": 7})
    assert gone.status_code == 410, gone.text
    assert gone.json()["oldest_retained_snapshot_id"] == model.snapshots[1]
    assert str(model.snapshots[1]) in gone.json()["detail"]
    # Arrow: the table's columns and the change columns
    arrow = client.get(url, params={"kind": "deleted", "format": "arrow"})
    assert arrow.status_code == 200
    table = pa.ipc.open_stream(io.BytesIO(arrow.content)).read_all()
    assert table.schema.names == [*FULL[:4], "_batch_id", *CHANGE_COLUMNS[:2], *CHANGE_COLUMNS[3:]]
    assert table.num_rows == len(changes(client, did, "deleted")[0])
    # exports: the Spark job writes what the API returns
    for kind, params in (("deleted", {}), ("appended", {"from_snapshot": first})):
        started = client.post(f"/v1/datasets/{did}/exports", json={"kind": kind, **params})
        assert started.status_code == 202, started.text
        body = started.json()
        assert body["job"]["kind"] == "export"
        assert body["to_snapshot_id"] == model.snapshots[-1]
        run_jobs()
        job = client.get(f"/v1/jobs/{body['job']['id']}").json()
        assert job["state"] == "succeeded", job
        result = job["result"]
        assert result["path"].endswith(f"/exports/{client.org}/{body['job']['id']}")  # type: ignore[attr-defined]
        written = pq.read_table(Path(result["path"].removeprefix("file://"))).to_pylist()
        api, _ = changes(client, did, kind, **params)
        assert result["rows"] == len(api) == len(written) > 0
        assert result["files"] >= 1
        columns = [*FULL, *CHANGE_COLUMNS]
        normal = [
            {**r, "event_time": r["event_time"] and r["event_time"].isoformat()} for r in written
        ]
        assert sorted(map(str, ({c: r[c] for c in columns} for r in normal))) == sorted(
            map(str, ({c: r[c] for c in columns} for r in api))
        )
    missing = client.post(f"/v1/datasets/{did}/exports", json={"kind": "deleted", "to_snapshot": 3})
    assert missing.status_code == 404
    _ = requests


def test_a_broken_chain_is_missing_snapshot() -> None:
    from types import SimpleNamespace

    from app.lake import changes as lake_changes

    def snap(sid: int, parent: int | None, seq: int) -> Any:
        return SimpleNamespace(snapshot_id=sid, parent_snapshot_id=parent, sequence_number=seq)

    kept = {3: snap(3, 2, 3), 4: snap(4, 3, 4)}
    table: Any = SimpleNamespace(snapshot_by_id=kept.get)
    with pytest.raises(lake_changes.MissingSnapshot) as missing:
        lake_changes.snapshot_range(table, None, kept[4])
    assert missing.value.snapshot_id == 2
    assert [s.snapshot_id for s in lake_changes.snapshot_range(table, kept[3], kept[4]).chain] == [
        4
    ]
    with pytest.raises(lake_changes.NotAncestor):
        lake_changes.snapshot_range(table, kept[4], kept[3])


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
