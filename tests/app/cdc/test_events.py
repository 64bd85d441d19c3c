"""`POST /v1/cdc/events`: what is accepted, what is refused and why, and nothing in between."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.fixtures.clients import ClientFactory

NOW = datetime.now(UTC)


def line(**fields: Any) -> str:
    event = {
        "op": "PUT",
        "entity_id": "u1",
        "record_type": "profile",
        "timestamp": (NOW - timedelta(minutes=5)).isoformat(),
        "payload": {"a": 1},
    }
    event.update(fields)
    return json.dumps({k: v for k, v in event.items() if v is not ...})


def post(client: TestClient, body: str, **headers: str) -> Any:
    return client.post(
        "/v1/cdc/events", content=body, headers={"Content-Type": "application/x-ndjson", **headers}
    )


def accepted(client: TestClient) -> int:
    return int(client.get("/v1/cdc/lag").json()["accepted"])


def test_sequence_numbers_are_dense_per_tenant(client_for: ClientFactory) -> None:
    a, b = client_for(), client_for()
    assert post(a, "\n".join([line(), line(op="DELETE", payload=...)])).json() == {
        "accepted": 2,
        "first_sequence": 1,
        "last_sequence": 2,
    }
    array = json.dumps([json.loads(line()), json.loads(line(op="PATCH"))])
    answer = a.post("/v1/cdc/events", content=array, headers={"Content-Type": "application/json"})
    assert answer.status_code == 202
    assert answer.json() == {"accepted": 2, "first_sequence": 3, "last_sequence": 4}
    assert post(b, line()).json()["first_sequence"] == 1  # another tenant counts apart
    assert (accepted(a), accepted(b)) == (4, 1)


def test_a_bad_line_names_line_and_field_and_nothing_is_accepted(client: TestClient) -> None:
    body = "\n".join(
        [
            line(),
            line(op="UPSERT", payload=...),  # no payload: the op is the one error
            "",
            line(timestamp="yesterday"),
            "{not json",
            line(op="PATCH", payload=[1]),
            line(entity_id=""),
        ]
    )
    answer = post(client, body)
    assert answer.status_code == 422
    problem = answer.json()
    assert answer.headers["content-type"] == "application/problem+json"
    assert [(e["line"], e["field"]) for e in problem["errors"]] == [
        (2, "op"),
        (4, "timestamp"),
        (5, ""),
        (6, "payload"),
        (7, "entity_id"),
    ]
    assert "line 2, field op" in problem["detail"]
    assert accepted(client) == 0


def test_payloads_other_engines_could_not_read_are_refused(client: TestClient) -> None:
    """NaN and Infinity (Python's parser takes them, JSON does not) and a lone surrogate escape
    (not UTF-8 text): a raw table holding them would break Spark's and PyIceberg's readers."""
    body = "\n".join(
        [
            line(payload={"big": 2**70, "text": "\u00e9\u2028"}),  # both are fine
            line().replace('{"a": 1}', '{"a": NaN}'),
            line().replace('{"a": 1}', '{"a": -Infinity}'),
            line().replace('{"a": 1}', '{"a": "\\ud800"}'),
        ]
    )
    answer = post(client, body)
    assert answer.status_code == 422
    errors = answer.json()["errors"]
    assert [(e["line"], e["field"]) for e in errors] == [(2, ""), (3, ""), (4, "payload")]
    assert "NaN is not a JSON value" in errors[0]["message"]
    assert "surrogate" in errors[2]["message"]
    assert accepted(client) == 0
    assert post(client, line(payload={"big": 2**70})).status_code == 202


def test_events_older_than_the_retention_window_are_refused(client: TestClient) -> None:
    assert client.put("/v1/cdc/config", json={"retention_days": 1}).status_code == 200
    old = (NOW - timedelta(days=1, minutes=5)).isoformat()
    answer = post(client, "\n".join([line(), line(timestamp=old)]))
    assert answer.status_code == 422
    assert answer.json()["errors"][0]["line"] == 2
    assert "retention window (1 days" in answer.json()["errors"][0]["message"]
    assert accepted(client) == 0
    millis = int((NOW - timedelta(hours=20)).timestamp() * 1000)  # epoch ms inside the window
    assert post(client, line(timestamp=millis)).status_code == 202


def test_an_oversized_body_is_413_and_nothing_is_accepted(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.config import get_settings

    monkeypatch.setattr(get_settings(), "cdc_max_request_bytes", 2048)
    answer = post(client, "\n".join([line()] * 40))
    assert answer.status_code == 413
    assert "at most 2048 bytes" in answer.json()["detail"]
    assert accepted(client) == 0
    assert post(client, "\n".join([line()] * 5)).status_code == 202


def test_a_retry_with_its_key_is_accepted_once(client: TestClient) -> None:
    body = "\n".join([line(), line(entity_id="u2")])
    first = post(client, body, **{"Idempotency-Key": "k1"})
    again = post(client, body, **{"Idempotency-Key": "k1"})
    assert again.json() == first.json() == {"accepted": 2, "first_sequence": 1, "last_sequence": 2}
    assert again.headers["Idempotent-Replayed"] == "true"
    assert post(client, body).json()["first_sequence"] == 3  # without a key: new events
    assert post(client, body, **{"Idempotency-Key": "k1"}).status_code == 202
    assert accepted(client) == 4
    other = post(client, line(entity_id="u9"), **{"Idempotency-Key": "k1"})
    assert other.status_code == 422  # the key was first used for another body


def test_pushdown_columns_are_added_not_changed(client: TestClient) -> None:
    column = {"name": "country", "path": "address.country", "type": "string"}
    config = client.put("/v1/cdc/config", json={"pushdown": [column]}).json()
    raw = client.get(f"/v1/datasets/{config['raw_dataset_id']}").json()
    assert "country" in [f["name"] for f in raw["schema"]]
    assert post(client, line()).status_code == 202
    changed = {**column, "type": "long"}
    answer = client.put("/v1/cdc/config", json={"pushdown": [changed]})
    assert answer.status_code == 409
    assert "country" in answer.json()["detail"]
    more = [column, {"name": "score", "path": "score", "type": "double"}]
    assert client.put("/v1/cdc/config", json={"pushdown": more}).status_code == 200
    raw = client.get(f"/v1/datasets/{config['raw_dataset_id']}").json()
    assert {"country", "score"} <= {f["name"] for f in raw["schema"]}
    reserved = {"name": "document", "path": "x", "type": "string"}
    assert client.put("/v1/cdc/config", json={"pushdown": [reserved]}).status_code == 422


def test_batches_cannot_write_the_raw_table(client: TestClient) -> None:
    dataset = client.put("/v1/cdc/config", json={}).json()["raw_dataset_id"]
    answer = client.post("/v1/batches", json={"dataset_id": dataset, "format": "csv"})
    assert answer.status_code == 409
    assert "CDC" in answer.json()["detail"]
