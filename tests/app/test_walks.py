"""Two walks over every route of the app (enumerated from `app.routes`, so a new endpoint
cannot escape): another org's key on every id-bearing call answers 404, a read key on every
mutating call 403 naming the scope it needs. A route in neither walk must be listed as exempt.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from tests.fixtures.batches import CSV
from tests.fixtures.clients import ClientFactory
from tests.fixtures.datasets import EVENTS
from tests.fixtures.debezium import pg_event

MUTATING = {"POST", "PUT", "PATCH", "DELETE"}


@dataclass(frozen=True)
class Objects:
    """Org A's objects the walks aim at."""

    dataset: str
    batch: str
    privacy_job: str
    job: str
    key: str


Request = Callable[[Objects], tuple[str, dict[str, Any]]]


@dataclass(frozen=True)
class Walk:
    scope: str  # the smallest scope that may make the call (this test's own model)
    request: Request  # a valid call on org A's objects: url and request arguments
    names_ids: bool  # it names A's objects (404 to another org) or lists (none of A's)


def at(url: str, **kwargs: Any) -> Request:
    return lambda o: (url.format(o=o), kwargs)


D = "/v1/datasets/{o.dataset}"
CDC_EVENT = json.dumps(
    {"op": "PUT", "entity_id": "p9", "record_type": "r", "timestamp": 1e12 * 2, "payload": {}}
)
WALKS: dict[tuple[str, str], Walk] = {
    ("POST", "/v1/datasets"): Walk("write", at("/v1/datasets", json=EVENTS), False),
    ("GET", "/v1/datasets"): Walk("read", at("/v1/datasets"), False),
    ("GET", "/v1/datasets/{dataset_id}"): Walk("read", at(D), True),
    ("GET", "/v1/datasets/{dataset_id}/snapshots"): Walk("read", at(D + "/snapshots"), True),
    ("GET", "/v1/datasets/{dataset_id}/rows"): Walk("read", at(D + "/rows"), True),
    ("GET", "/v1/datasets/{dataset_id}/stats"): Walk("read", at(D + "/stats"), True),
    ("GET", "/v1/datasets/{dataset_id}/batch-timeline"): Walk(
        "read", at(D + "/batch-timeline"), True
    ),
    ("GET", "/v1/datasets/{dataset_id}/errors"): Walk("read", at(D + "/errors"), True),
    ("GET", "/v1/datasets/{dataset_id}/consumer-lag"): Walk("read", at(D + "/consumer-lag"), True),
    ("GET", "/v1/datasets/{dataset_id}/changes"): Walk(
        "read", at(D + "/changes", params={"kind": "appended"}), True
    ),
    ("POST", "/v1/datasets/{dataset_id}/exports"): Walk(
        "write", at(D + "/exports", json={"kind": "appended"}), True
    ),
    ("GET", "/v1/datasets/{dataset_id}/tombstones"): Walk("read", at(D + "/tombstones"), True),
    ("PUT", "/v1/datasets/{dataset_id}/retention"): Walk(
        "admin", at(D + "/retention", json={"min_snapshots": 3}), True
    ),
    ("GET", "/v1/datasets/{dataset_id}/retention"): Walk("read", at(D + "/retention"), True),
    ("POST", "/v1/datasets/{dataset_id}/expire"): Walk("admin", at(D + "/expire"), True),
    ("POST", "/v1/datasets/{dataset_id}/consumers"): Walk(
        "write", at(D + "/consumers", json={"name": "c2"}), True
    ),
    ("GET", "/v1/datasets/{dataset_id}/consumers"): Walk("read", at(D + "/consumers"), True),
    ("DELETE", "/v1/datasets/{dataset_id}/consumers/{name}"): Walk(
        "write", at(D + "/consumers/c1"), True
    ),
    ("POST", "/v1/datasets/{dataset_id}/vacuum"): Walk("admin", at(D + "/vacuum", json={}), True),
    ("POST", "/v1/datasets/{dataset_id}/compact"): Walk("admin", at(D + "/compact", json={}), True),
    ("POST", "/v1/batches"): Walk(
        "write",
        lambda o: ("/v1/batches", {"json": {"dataset_id": o.dataset, "format": "csv"}}),
        True,
    ),
    ("GET", "/v1/batches"): Walk(
        "read", lambda o: ("/v1/batches", {"params": {"dataset_id": o.dataset}}), False
    ),
    ("PUT", "/v1/batches/{batch_id}/files/{name}"): Walk(
        "write", at("/v1/batches/{o.batch}/files/b.csv", content=CSV), True
    ),
    ("POST", "/v1/batches/{batch_id}"): Walk(
        "write", at("/v1/batches/{o.batch}", params={"action": "ABORT"}), True
    ),
    ("POST", "/v1/batches/{batch_id}/abort"): Walk(
        "write", at("/v1/batches/{o.batch}/abort"), True
    ),
    ("POST", "/v1/batches/{batch_id}/complete"): Walk(
        "write", at("/v1/batches/{o.batch}/complete"), True
    ),
    ("POST", "/v1/batches/{batch_id}/revert"): Walk(
        "write", at("/v1/batches/{o.batch}/revert"), True
    ),
    ("GET", "/v1/batches/{batch_id}"): Walk("read", at("/v1/batches/{o.batch}"), True),
    ("GET", "/v1/jobs"): Walk("read", at("/v1/jobs"), False),
    ("GET", "/v1/jobs/{job_id}"): Walk("read", at("/v1/jobs/{o.job}"), True),
    ("POST", "/v1/privacy/jobs"): Walk(
        "write",
        lambda o: (
            "/v1/privacy/jobs",
            {"json": {"dataset_ids": [o.dataset], "column": "user_id", "values": ["u9"]}},
        ),
        True,
    ),
    ("GET", "/v1/privacy/jobs"): Walk("read", at("/v1/privacy/jobs"), False),
    ("GET", "/v1/privacy/jobs/{job_id}"): Walk(
        "read", at("/v1/privacy/jobs/{o.privacy_job}"), True
    ),
    ("POST", "/v1/keys"): Walk("admin", at("/v1/keys", json={"scope": "read"}), False),
    ("GET", "/v1/keys"): Walk("admin", at("/v1/keys"), False),
    ("DELETE", "/v1/keys/{key_id}"): Walk("admin", at("/v1/keys/{o.key}"), True),
    ("GET", "/v1/audit"): Walk("admin", at("/v1/audit"), False),
    ("POST", "/v1/cdc/events"): Walk("write", at("/v1/cdc/events", content=CDC_EVENT), False),
    ("POST", "/v1/cdc/debezium"): Walk(
        "write",
        at(
            "/v1/cdc/debezium",
            content=json.dumps(pg_event("c", 9, 100)),
            headers={"Content-Type": "application/json"},
        ),
        False,
    ),
    ("GET", "/v1/cdc/lag"): Walk("read", at("/v1/cdc/lag"), False),
    ("GET", "/v1/cdc/lag/history"): Walk("read", at("/v1/cdc/lag/history"), False),
    ("GET", "/v1/cdc/config"): Walk("read", at("/v1/cdc/config"), False),
    ("PUT", "/v1/cdc/config"): Walk(
        "admin", at("/v1/cdc/config", json={"retention_days": 7}), False
    ),
    ("POST", "/v1/cdc/process"): Walk("write", at("/v1/cdc/process"), False),
    ("GET", "/v1/cdc/profiles/{entity_id}"): Walk("read", at("/v1/cdc/profiles/p1"), True),
}
# routes without a key: nothing of an org to reach, nothing to mutate
EXEMPT = {("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/metrics")}
# the web UI's page shells: they hold no data; their script reads /v1 with the user's key
EXEMPT |= {
    ("GET", path)
    for path in (
        "/ui",
        "/ui/login",
        "/ui/datasets",
        "/ui/datasets/{dataset_id}",
        "/ui/batches/{batch_id}",
        "/ui/jobs",
        "/ui/jobs/{job_id}",
        "/ui/privacy",
        "/ui/privacy/{job_id}",
        "/ui/cdc",
    )
}


def routes() -> set[tuple[str, str]]:
    from app.main import create_app

    return {
        (method, route.path)
        for route in create_app().routes
        if isinstance(route, APIRoute)
        for method in route.methods
    }


def test_every_route_is_walked_or_exempt() -> None:
    found = routes()
    assert found - set(WALKS) - EXEMPT == set(), "add the new route to WALKS (or EXEMPT)"
    assert set(WALKS) | EXEMPT <= found, "WALKS names a route the app no longer has"
    for method, path in found:
        # an exempt route names no object, except the UI's shells (no data: tests/app/test_ui.py)
        assert ("_id}" not in path) or (method, path) not in EXEMPT or path.startswith("/ui/")
        assert method not in MUTATING or (method, path) not in EXEMPT
    # every path id is aimed at another org's object
    assert all(walk.names_ids for (_, path), walk in WALKS.items() if "_id}" in path)


def linked(a: TestClient) -> None:
    """A's CDC tenant (its raw table: a second dataset) with identities p1 and p2 linked, as
    its processor would have left them (this test runs no worker)."""
    from app.db import session_scope
    from app.models import CdcIdentity

    assert a.put("/v1/cdc/config", json={}).status_code == 200
    with session_scope() as session:
        for entity in ("p1", "p2"):
            session.add(CdcIdentity(org=a.org, entity_id=entity, cluster_id="p1"))  # type: ignore[attr-defined]


def org_a(client_for: ClientFactory) -> tuple[TestClient, Objects]:
    a = client_for()
    dataset = a.post("/v1/datasets", json=EVENTS).json()["id"]
    batch = a.post("/v1/batches", json={"dataset_id": dataset, "format": "csv"}).json()["id"]
    assert a.put(f"/v1/batches/{batch}/files/a.csv", content=CSV).status_code == 201
    privacy = a.post(
        "/v1/privacy/jobs", json={"dataset_ids": [dataset], "column": "user_id", "values": ["u1"]}
    ).json()
    key = a.post("/v1/keys", json={"scope": "read"}).json()["id"]
    linked(a)
    assert a.post(f"/v1/datasets/{dataset}/consumers", json={"name": "c1"}).status_code == 200
    objects = Objects(dataset, batch, privacy["id"], privacy["datasets"][0]["job_id"], key)
    return a, objects


def test_another_orgs_key_gets_404_on_every_id(client_for: ClientFactory) -> None:
    a, objects = org_a(client_for)
    b = client_for()  # an admin key: no call is refused for its scope
    ids = [objects.dataset, objects.batch, objects.privacy_job, objects.job, objects.key]
    for (method, _), walk in WALKS.items():
        url, kwargs = walk.request(objects)
        response = b.request(method, url, **kwargs)
        if walk.names_ids:
            assert response.status_code == 404, (method, url, response.text)
            assert response.headers["content-type"] == "application/problem+json"
        elif method == "GET":
            assert response.status_code == 200, (method, url, response.text)
            assert not any(i in response.text for i in ids) or url == "/v1/audit", url
    # ids in bodies too: a replay of B's own dataset naming A's batch
    own = b.post("/v1/datasets", json={**EVENTS, "name": "own"}).json()["id"]
    replay = {"dataset_id": own, "format": "csv", "replay": {"predecessors": [objects.batch]}}
    assert b.post("/v1/batches", json=replay).status_code == 404
    # B's audit trail holds B's calls only; A's objects are as A left them
    assert {e["org"] for e in b.get("/v1/audit").json()["items"]} == {b.org}  # type: ignore[attr-defined]
    for (method, _), walk in WALKS.items():
        if method == "GET" and walk.names_ids:
            url, kwargs = walk.request(objects)
            assert a.get(url, **kwargs).status_code == 200, url
    batch = a.get(f"/v1/batches/{objects.batch}").json()
    assert (batch["status"], batch["file_count"]) == ("loading", 1)
    assert [
        c["name"] for c in a.get(f"/v1/datasets/{objects.dataset}/consumers").json()["items"]
    ] == ["c1"]
    keys = {k["id"]: k for k in a.get("/v1/keys").json()["items"]}
    assert keys[objects.key]["revoked_at"] is None
    assert a.get(f"/v1/datasets/{objects.dataset}/retention").json()["min_snapshots"] != 3
    assert len(a.get("/v1/jobs").json()["items"]) == 1  # the privacy job's only
    assert [p["id"] for p in a.get("/v1/privacy/jobs").json()["items"]] == [objects.privacy_job]


@pytest.mark.parametrize("scope", ["read", "write"])
def test_too_small_a_key_gets_403_naming_the_scope(client_for: ClientFactory, scope: str) -> None:
    a, objects = org_a(client_for)
    small = client_for(a.org, scope)  # type: ignore[attr-defined]
    rank = ["read", "write", "admin"]
    for (method, _), walk in WALKS.items():
        url, kwargs = walk.request(objects)
        response = small.request(method, url, **kwargs)
        if rank.index(walk.scope) > rank.index(scope):
            assert response.status_code == 403, (method, url, response.text)
            assert response.json()["detail"] == (
                f"this call needs a '{walk.scope}' key; yours is '{scope}'"
            )
        elif method == "GET":
            assert response.status_code == 200, (method, url, response.text)
    # nothing a read key tried happened: the batch still loads its one file
    if scope == "read":
        batch = a.get(f"/v1/batches/{objects.batch}").json()
        assert (batch["status"], batch["file_count"]) == ("loading", 1)
        names = [d["name"] for d in a.get("/v1/datasets").json()["items"]]
        assert sorted(names) == ["cdc_raw", "events"]
