"""The audit trail over HTTP: one event per mutating call, denied attempts, paging."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.fixtures.batches import CSV
from tests.fixtures.clients import ClientFactory
from tests.fixtures.datasets import EVENTS


def key_id(admin: TestClient, client: TestClient) -> str:
    prefix = client.headers["authorization"].split("_")[1]
    return next(k["id"] for k in admin.get("/v1/keys").json()["items"] if k["prefix"] == prefix)


def trail(admin: TestClient, **params: Any) -> list[dict[str, Any]]:
    response = admin.get("/v1/audit", params=params)
    assert response.status_code == 200, response.text
    items: list[dict[str, Any]] = response.json()["items"]
    return items


def test_each_mutating_call_is_recorded_once(client_for: ClientFactory) -> None:
    admin = client_for()
    expected: list[tuple[str, dict[str, str], int, str, str]] = []  # newest last

    def call(method: str, path: str, action: str, target: dict[str, str], **kw: Any) -> Any:
        response = admin.request(method, path, **kw)
        expected.append(
            (action, target, response.status_code, response.headers["x-request-id"], path)
        )
        return response

    dataset = call("POST", "/v1/datasets", "datasets.create", {}, json=EVENTS).json()
    expected[-1][1]["result_id"] = dataset["id"]
    admin.get(f"/v1/datasets/{dataset['id']}")  # reads are not recorded
    batch = call(
        "POST",
        "/v1/batches",
        "batches.open",
        {},
        json={"dataset_id": dataset["id"], "format": "csv"},
    ).json()
    expected[-1][1]["result_id"] = batch["id"]
    bid = batch["id"]
    call(
        "PUT",
        f"/v1/batches/{bid}/files/a.csv",
        "batches.upload",
        {"batch_id": bid, "name": "a.csv"},
        content=CSV,
    )
    refused = call(
        "POST",
        f"/v1/batches/{bid}",
        "batches.act.REVERT",
        {"batch_id": bid},
        params={"action": "REVERT"},
    )
    assert refused.status_code == 409
    done = call(
        "POST",
        f"/v1/batches/{bid}",
        "batches.act.COMPLETE",
        {"batch_id": bid},
        params={"action": "COMPLETE"},
    )
    assert done.status_code == 202  # {batch, job}: no top-level id, so no result_id
    call("POST", f"/v1/batches/{bid}", "batches.act", {"batch_id": bid}, params={"action": "nope"})
    call(
        "POST",
        "/v1/datasets/missing/vacuum",
        "maintenance.vacuum",
        {"dataset_id": "missing"},
        json={},
    )

    events = trail(admin)
    me = key_id(admin, admin)
    assert [
        (e["action"], e["target"], e["status_code"], e["request_id"], e["path"])
        for e in reversed(events)
    ] == expected
    assert {e["key_id"] for e in events} == {me}
    assert {e["org"] for e in events} == {admin.org}  # type: ignore[attr-defined]
    outcomes = [e["outcome"] for e in reversed(events)]
    assert outcomes == ["ok", "ok", "ok", "error", "ok", "error", "error"]


def test_denied_attempts_of_known_keys_are_recorded(client_for: ClientFactory) -> None:
    admin = client_for()
    reader = client_for(admin.org, "read")  # type: ignore[attr-defined]
    reader_id = key_id(admin, reader)
    assert reader.post("/v1/datasets", json=EVENTS).status_code == 403
    admin.delete(f"/v1/keys/{reader_id}")
    assert reader.post("/v1/datasets", json=EVENTS).status_code == 401
    stranger = TestClient(admin.app, headers={"Authorization": "Bearer ib_000000000000_x"})
    assert stranger.post("/v1/datasets", json=EVENTS).status_code == 401

    events = trail(admin)
    assert [(e["action"], e["key_id"], e["status_code"], e["outcome"]) for e in events] == [
        ("datasets.create", reader_id, 401, "denied"),
        ("keys.revoke", key_id(admin, admin), 200, "ok"),
        ("datasets.create", reader_id, 403, "denied"),
    ]
    assert events[1]["target"] == {"key_id": reader_id}
    assert reader.get("/v1/audit").status_code == 401


def test_audit_pages_filters_and_orgs(client_for: ClientFactory) -> None:
    admin = client_for()
    other = client_for()
    writer = client_for(admin.org, "write")  # type: ignore[attr-defined]
    for index in range(5):
        writer.post("/v1/datasets", json={**EVENTS, "name": f"d{index}"})
    writer.post("/v1/keys", json={"scope": "read"})  # denied: 403
    other.post("/v1/datasets", json=EVENTS)

    everything = trail(admin)
    assert len(everything) == 6
    seqs = [e["seq"] for e in everything]
    assert seqs == sorted(seqs, reverse=True)
    paged: list[dict[str, Any]] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        page = admin.get("/v1/audit", params=params).json()
        paged += page["items"]
        cursor = page["next"]
        if cursor is None:
            break
    assert paged == everything
    creates = trail(admin, action="datasets.create")
    datasets = admin.get("/v1/datasets").json()["items"]
    assert {e["target"]["result_id"] for e in creates} == {d["id"] for d in datasets}
    assert len(creates) == 5
    assert [e["action"] for e in trail(admin, action="keys.*")] == ["keys.create"]
    assert trail(admin, since=everything[0]["at"]) == everything[:1]
    assert trail(admin, since="2999-01-01T00:00:00Z") == []
    assert [e["org"] for e in trail(other)] == [other.org]  # type: ignore[attr-defined]
    denied = writer.get("/v1/audit")
    assert denied.status_code == 403
    assert "needs a 'admin' key" in denied.json()["detail"]
    assert admin.get("/v1/audit", params={"cursor": "x"}).status_code == 422


def test_the_store_refuses_to_change_the_trail(client_for: ClientFactory) -> None:
    import pytest
    from sqlalchemy import delete, update
    from sqlalchemy.exc import DBAPIError

    from app.db import session_scope
    from app.models import AuditEvent

    admin = client_for()
    admin.post("/v1/datasets", json=EVENTS)
    for statement in (update(AuditEvent).values(outcome="ok"), delete(AuditEvent)):
        with pytest.raises(DBAPIError, match="append-only"), session_scope() as session:
            session.execute(statement.where(AuditEvent.org == admin.org))  # type: ignore[attr-defined]
    assert len(trail(admin)) == 1
