"""Changes by time, their errors and formats, and exports: the Spark job writes what
`GET /changes` returns."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from fastapi.testclient import TestClient

from tests.fixtures.changes import CHANGE_COLUMNS, FULL, build, changes, request_ids
from tests.fixtures.spark import RunJobs

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("stack", ["embedded"], indirect=True)  # one store is enough here
def test_times_errors_formats_and_exports(client: TestClient, run_jobs: RunJobs) -> None:
    import workers.changes.task  # noqa: F401  (registers the task)

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
