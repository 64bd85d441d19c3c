"""`GET /v1/cdc/lag/history`: the samples the scheduler's CDC pass keeps, at most one per
interval, none past the retention."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from fastapi.testclient import TestClient


def test_samples_are_spaced_and_pruned(client: TestClient) -> None:
    from app.cdc import lag_history, service
    from app.config import get_settings
    from app.db import session_scope

    now = datetime.now(UTC).replace(microsecond=0)
    event = {"op": "PUT", "entity_id": "u1", "record_type": "p", "payload": {}}
    body = "\n".join(
        json.dumps(event | {"timestamp": (now - timedelta(minutes=m)).isoformat()}) for m in (1, 2)
    )
    answer = client.post(
        "/v1/cdc/events", content=body, headers={"Content-Type": "application/x-ndjson"}
    )
    assert answer.status_code == 202, answer.text
    org = client.org  # type: ignore[attr-defined]
    settings = get_settings()
    interval, retention = settings.cdc_lag_sample_seconds, settings.cdc_lag_retention_seconds
    moments = [
        now,
        now + timedelta(seconds=interval / 2),  # too soon: no sample
        now + timedelta(seconds=interval),
        now + timedelta(seconds=retention + interval / 2),  # the first falls out
    ]
    kept = []
    for moment in moments:
        with session_scope() as session:
            if lag_history.due(session, org, moment):
                lag_history.record(session, service.lag(session, org), moment)
                kept.append(moment)
    assert kept == [moments[0], moments[2], moments[3]]

    history = client.get("/v1/cdc/lag/history").json()
    assert [datetime.fromisoformat(p["at"]) for p in history["samples"]] == kept[1:]
    assert {(p["accepted"], p["staged"], p["processed"]) for p in history["samples"]} == {(2, 0, 0)}
    assert (history["sample_seconds"], history["retention_seconds"]) == (interval, retention)
