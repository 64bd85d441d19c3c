"""A batch left `loading` (no upload, no COMPLETE) for ICEBATCH_BATCH_LOADING_TTL_SECONDS: the
API flags it `stuck`, the doctor reports it, the scheduler aborts it (audited, staged files
removed). On both stores, with a TTL of a fraction of a second set through the settings."""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from tests.fixtures.datasets import EVENTS
from tests.fixtures.doctor import assert_clean, found

TTL = 0.3


def test_loading_batch_past_ttl_is_flagged_reported_and_aborted(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.config import get_settings
    from workers.scheduler import schedule_once

    settings = get_settings()
    org = client.org  # type: ignore[attr-defined]
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    # one batch that got a file and one that got nothing, both left 'loading'
    with_file = client.post("/v1/batches", json={"dataset_id": did, "format": "csv"}).json()["id"]
    up = client.put(f"/v1/batches/{with_file}/files/a.csv", content=b"event_id,user_id\n")
    assert up.status_code == 201, up.text
    empty = client.post("/v1/batches", json={"dataset_id": did, "format": "csv"}).json()["id"]
    staged = settings.staging_dir / with_file
    assert [p.name for p in staged.iterdir()] == ["a.csv"]

    # within the TTL (the default, a day): not stuck, nothing to report, nothing aborted
    assert client.get(f"/v1/batches/{with_file}").json()["stuck"] is None
    assert_clean(org)
    assert not {with_file, empty} & set(schedule_once()["aborted"])

    monkeypatch.setattr(settings, "batch_loading_ttl_seconds", TTL)
    time.sleep(TTL + 0.1)
    for batch_id in (with_file, empty):
        body = client.get(f"/v1/batches/{batch_id}").json()
        assert body["status"] == "loading"
        assert body["stuck"]["reason"].startswith("'loading' with no upload and no COMPLETE")
        assert f"POST /v1/batches/{batch_id}?action=COMPLETE" in body["stuck"]["action"]
    findings = found(org, "batches")
    assert sorted(f["problem"].split(" is stuck: ")[0] for f in findings) == sorted(
        f"batch {b}" for b in (with_file, empty)
    )
    for f in findings:
        assert "is stuck: 'loading' with no upload and no COMPLETE for " in f["problem"]
        assert f["repairable"] is True
        assert "--repair aborts it" in f["action"]

    aborted = schedule_once()["aborted"]
    assert {with_file, empty} <= set(aborted)
    for batch_id in (with_file, empty):
        body = client.get(f"/v1/batches/{batch_id}").json()
        assert (body["status"], body["stuck"]) == ("aborted", None)
        assert body["completed_at"] is not None
    assert not staged.exists()
    trail = client.get("/v1/audit", params={"action": "batches.act.ABORT"}).json()["items"]
    by_batch = {e["target"]["batch_id"]: e for e in trail}
    assert set(by_batch) == {with_file, empty}
    for event in by_batch.values():
        assert (event["key_id"], event["target"]["by"], event["outcome"]) == (
            None,
            "scheduler",
            "ok",
        )
        assert event["target"]["reason"].startswith("no upload and no COMPLETE since ")
    assert_clean(org)
    # a second pass finds nothing left to abort
    assert not {with_file, empty} & set(schedule_once()["aborted"])


def test_upload_keeps_a_loading_batch_alive(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The TTL runs from the batch's last activity: an upload restarts it."""
    from app.config import get_settings
    from workers.scheduler import schedule_once

    monkeypatch.setattr(get_settings(), "batch_loading_ttl_seconds", TTL)
    did = client.post("/v1/datasets", json=EVENTS).json()["id"]
    bid = client.post("/v1/batches", json={"dataset_id": did, "format": "csv"}).json()["id"]
    time.sleep(TTL + 0.1)
    client.put(f"/v1/batches/{bid}/files/a.csv", content=b"event_id,user_id\n")
    assert bid not in schedule_once()["aborted"]
    assert client.get(f"/v1/batches/{bid}").json()["status"] == "loading"
