"""Datasets over HTTP: every type, nested ones too, the Iceberg table it creates, errors."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pyiceberg.types import (
    DecimalType,
    ListType,
    MapType,
    StructType,
    TimestampType,
    TimestamptzType,
)

from tests.fixtures.clients import ClientFactory
from tests.fixtures.datasets import ALL_TYPES, EVENTS


def table_of(client: TestClient, dataset_id: str) -> Any:
    from app.datasets import service
    from app.db import session_scope
    from app.lake.catalog import get_catalog
    from app.models import Dataset

    with session_scope() as session:
        dataset = session.get(Dataset, dataset_id)
        assert dataset is not None
        return service.load(get_catalog(), dataset)


def test_create_events_dataset_makes_the_iceberg_table(client: TestClient) -> None:
    response = client.post("/v1/datasets", json=EVENTS)
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["name"] == "events"
    assert [f["name"] for f in body["schema"]] == [
        "event_id",
        "user_id",
        "event_time",
        "payload",
        "_batch_id",
    ]
    assert body["sort_order"] == ["day(event_time)", "identity(_batch_id)"]
    table = table_of(client, body["id"])
    assert table.format_version == 2
    assert table.properties["commit.manifest-merge.enabled"] == "true"
    spec = table.spec()
    assert [str(f.transform) for f in spec.fields] == ["day"]
    assert table.schema().find_field("_batch_id").required
    assert table.schema().find_field("event_id").required
    assert body["table"].endswith(f".{client.org}.events")  # type: ignore[attr-defined]

    listed = client.get("/v1/datasets").json()["items"]
    assert [d["id"] for d in listed] == [body["id"]]
    assert client.get(f"/v1/datasets/{body['id']}").json() == body
    assert client.get(f"/v1/datasets/{body['id']}/snapshots").json() == {"items": [], "next": None}


def test_every_type_including_nested_round_trips(client: TestClient) -> None:
    response = client.post("/v1/datasets", json={"name": "all_types", "schema": ALL_TYPES})
    assert response.status_code == 201, response.text
    returned = response.json()["schema"][:-1]
    for sent, got in zip(ALL_TYPES, returned, strict=True):
        assert got["name"] == sent["name"]
        assert got["type"] == sent["type"]
        assert got["required"] == sent.get("required", False)
    schema = table_of(client, response.json()["id"]).schema()
    assert schema.find_field("dec").field_type == DecimalType(12, 3)
    assert schema.find_field("ts").field_type == TimestampType()
    assert schema.find_field("tstz").field_type == TimestamptzType()
    address = schema.find_field("address").field_type
    assert isinstance(address, StructType)
    assert schema.find_field("address.city").required
    assert isinstance(schema.find_field("address.geo").field_type, StructType)
    assert isinstance(schema.find_field("tags").field_type, ListType)
    attrs = schema.find_field("attrs").field_type
    assert isinstance(attrs, MapType)
    assert isinstance(attrs.value_type, ListType)
    assert attrs.value_type.element_required


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        ({"name": "Bad-Name"}, "dataset names"),
        ({"schema": []}, "non-empty list"),
        ({"schema": [{"name": "x", "type": "varchar"}]}, "unknown type 'varchar'"),
        ({"schema": [{"name": "_x", "type": "long"}]}, "reserved"),
        ({"schema": [{"name": "x", "type": "long"}, {"name": "X", "type": "int"}]}, "duplicate"),
        ({"schema": [{"name": "x", "type": "decimal(50,2)"}]}, "precision"),
        ({"schema": [{"name": "x", "type": "struct"}]}, "'fields'"),
        ({"partition": [{"column": "nope", "transform": "day"}]}, "no column 'nope'"),
        ({"partition": [{"column": "user_id", "transform": "day"}]}, "date or timestamp"),
        ({"partition": [{"column": "event_id", "transform": "bucket"}]}, "'width'"),
        ({"identity_columns": ["nope"]}, "identity column 'nope'"),
    ],
)
def test_invalid_dataset_is_a_problem_that_says_what_to_fix(
    client: TestClient, change: dict[str, Any], fragment: str
) -> None:
    response = client.post("/v1/datasets", json={**EVENTS, **change})
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    assert problem["status"] == 422
    assert fragment in problem["detail"]


def test_duplicate_name_is_409(client: TestClient) -> None:
    assert client.post("/v1/datasets", json=EVENTS).status_code == 201
    response = client.post("/v1/datasets", json=EVENTS)
    assert response.status_code == 409
    assert "already exists" in response.json()["detail"]


def test_auth_and_org_isolation(client_for: ClientFactory) -> None:
    alice, bob = client_for(), client_for()
    dataset = alice.post("/v1/datasets", json=EVENTS).json()
    assert bob.get(f"/v1/datasets/{dataset['id']}").status_code == 404
    assert bob.get(f"/v1/datasets/{dataset['id']}/snapshots").status_code == 404
    assert bob.get(f"/v1/datasets/{dataset['id']}/rows").status_code == 404
    assert bob.get("/v1/datasets").json()["items"] == []
    assert (
        bob.post("/v1/batches", json={"dataset_id": dataset["id"], "format": "csv"}).status_code
        == 404
    )
    # the same name in another org is another dataset
    assert bob.post("/v1/datasets", json=EVENTS).status_code == 201

    anonymous = TestClient(alice.app)
    response = anonymous.get("/v1/datasets")
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert "Authorization: Bearer" in response.json()["detail"]
    forged = TestClient(alice.app, headers={"Authorization": "Bearer ib_000000000000_nope"})
    assert forged.get("/v1/datasets").status_code == 401


def test_a_path_takes_the_datasets_id_or_its_name_in_your_org_only(
    client_for: ClientFactory,
) -> None:
    """`/v1/datasets/{dataset_id}...` resolves an id or a name of the key's org; another org's
    name is a 404 like an unknown id; a name that looks like an id (32 hex digits, a UUID
    without its dashes) is a name, since stored ids are dashed and names cannot hold a '-'."""
    client, other = client_for(), client_for()
    events = client.post("/v1/datasets", json=EVENTS).json()
    hexlike = "d" + uuid.uuid4().hex[1:]
    looks_like_id = client.post("/v1/datasets", json={**EVENTS, "name": hexlike}).json()
    theirs = other.post("/v1/datasets", json={**EVENTS, "name": "theirs"}).json()

    assert client.get("/v1/datasets/events").json() == events
    assert client.get(f"/v1/datasets/{events['id']}").json() == events
    assert client.get(f"/v1/datasets/{hexlike}").json()["id"] == looks_like_id["id"]
    assert client.get(f"/v1/datasets/{looks_like_id['id']}").json()["name"] == hexlike
    by_name = client.put("/v1/datasets/events/retention", json={"min_snapshots": 3})
    assert by_name.status_code == 200, by_name.text
    kept = client.get(f"/v1/datasets/{events['id']}/retention").json()
    assert kept["min_snapshots"] == 3
    assert client.get("/v1/datasets/events/snapshots").json() == {"items": [], "next": None}
    for path in ("theirs", theirs["id"], "nosuch", str(uuid.uuid4())):
        refused = client.get(f"/v1/datasets/{path}/stats")
        assert refused.status_code == 404, refused.text
        assert refused.json()["detail"] == f"dataset {path!r} does not exist in your organization"
    assert other.get("/v1/datasets/theirs").json() == theirs


def test_a_batch_and_the_lists_take_a_datasets_name_too(client_for: ClientFactory) -> None:
    """Where the CLI takes a name (`batches upload events`, `batches list --dataset events`,
    `jobs list`), HTTP does too: a batch opened by name belongs to the dataset's id, and the
    lists filtered by name are those filtered by id; another org's name matches nothing."""
    client, other = client_for(), client_for()
    events = client.post("/v1/datasets", json=EVENTS).json()
    other.post("/v1/datasets", json=EVENTS)  # the same name in another org
    opened = client.post("/v1/batches", json={"dataset_id": "events", "format": "csv"})
    assert opened.status_code == 201, opened.text
    batch = opened.json()
    assert batch["dataset_id"] == events["id"]
    body = b"event_id,user_id,event_time,payload\n1,u1,2024-01-01T10:00:00,x\n"
    assert client.put(f"/v1/batches/{batch['id']}/files/a.csv", content=body).status_code == 201
    completed = client.post(f"/v1/batches/{batch['id']}", params={"action": "COMPLETE"})
    job_id = completed.json()["job"]["id"]
    expected = {"/v1/batches": [batch["id"]], "/v1/jobs": [job_id]}
    for path, ids in expected.items():
        by_id = client.get(path, params={"dataset_id": events["id"]}).json()["items"]
        by_name = client.get(path, params={"dataset_id": "events"}).json()["items"]
        assert [item["id"] for item in by_name] == [item["id"] for item in by_id] == ids
        assert other.get(path, params={"dataset_id": "events"}).json()["items"] == []
    refused = client.post("/v1/batches", json={"dataset_id": "nosuch", "format": "csv"})
    assert refused.status_code == 404, refused.text
