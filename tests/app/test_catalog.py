"""The Iceberg REST catalog under /iceberg, driven by PyIceberg's own `RestCatalog` (a client
nobody here wrote) and by raw HTTP where the spec's details matter: config, namespaces and
tables scoped to the key's org, paging, ETag/304, the error model, OAuth tokens, refused writes,
the audit trail. No Spark: tables get rows and tombstones through PyIceberg and `app.lake`
directly, and the served-snapshot rules (`app.catalog.served`) are checked on them.

The same against real processes, with restatements, the materializer, vacuum, expiry and
DuckDB: tests/e2e/test_catalog_e2e.py.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pyarrow as pa
import pytest
from fastapi.testclient import TestClient
from prometheus_client import REGISTRY
from pyiceberg.exceptions import (
    ForbiddenError,
    NoSuchNamespaceError,
    NoSuchTableError,
    OAuthError,
    UnauthorizedError,
)
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.table import Table

from app.lake.cdc import STAGING
from tests.fixtures.catalog import CatalogFor, key_of
from tests.fixtures.clients import ClientFactory
from tests.fixtures.datasets import EVENTS
from tests.fixtures.service import TLS

BATCH = "_batch_id"


def _dataset(client: TestClient, name: str = "events") -> dict[str, Any]:
    # unpartitioned: PyIceberg writes a day-partitioned table only with pyiceberg-core
    created = client.post("/v1/datasets", json={**EVENTS, "name": name, "partition": []})
    assert created.status_code == 201, created.text
    body: dict[str, Any] = created.json()
    return body


def _lake(identifier: str) -> Table:
    from app.lake.catalog import get_catalog

    return get_catalog().load_table(identifier.split(".", 1)[1])  # the dataset's "table" names
    # its Spark catalog first


def _rows(identifier: str, event_ids: list[int], user: str) -> pa.Table:
    data = pa.table(
        {
            "event_id": event_ids,
            "user_id": [user] * len(event_ids),
            "event_time": [datetime(2026, 1, 1)] * len(event_ids),
            "payload": ["p"] * len(event_ids),
            BATCH: ["b-setup"] * len(event_ids),
        }
    )
    return data.cast(schema_to_pyarrow(_lake(identifier).schema()))


def _append(identifier: str, event_ids: list[int], user: str = "u1") -> int:
    """Rows straight into the table (test setup: no worker here); the new snapshot's id."""
    _lake(identifier).append(_rows(identifier, event_ids, user))
    snapshot = _lake(identifier).current_snapshot()
    assert snapshot is not None
    return snapshot.snapshot_id


def _tombstone(identifier: str, user: str, operation: str) -> int:
    from app.lake import commit
    from app.lake.tombstones import NewTombstone

    table = _lake(identifier)
    field_id = table.schema().find_field("user_id").field_id
    snapshot = commit.commit(
        table,
        files=[],
        new_tombstones=[NewTombstone(field_id, user, "req", operation)],
        properties={},
    )
    return snapshot.snapshot_id


def _mark_materialized(identifier: str) -> int:
    """A materializer's mark commit (no rows here needed a delete file: the rule is checked)."""
    from app.lake import tombstones

    table = _lake(identifier)
    seq = table.metadata.next_sequence_number() - 1
    transaction = table.transaction()
    producer = transaction.update_snapshot().fast_append()
    written = tombstones.write_materialized(table, table.current_snapshot(), seq, tag="t")
    producer.snapshot_properties = written.properties
    producer.commit()
    transaction.commit_transaction()
    snapshot = _lake(identifier).current_snapshot()
    assert snapshot is not None
    return snapshot.snapshot_id


def _served(client: TestClient, table: str, **params: str) -> dict[str, Any]:
    org = client.org  # type: ignore[attr-defined]
    answer = client.get(f"/iceberg/v1/namespaces/{org}/tables/{table}", params=params)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def test_config_lists_exactly_the_read_endpoints_and_pyiceberg_uses_them(
    client: TestClient, catalog_for: CatalogFor
) -> None:
    config = client.get("/iceberg/v1/config", params={"warehouse": "anything"})
    assert config.status_code == 200, config.text
    endpoints = config.json()["endpoints"]
    assert "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}" in endpoints
    assert "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}" in endpoints
    assert not [e for e in endpoints if e.startswith(("DELETE", "PUT"))], endpoints
    assert not [e for e in endpoints if e.startswith("POST") and not e.endswith("/metrics")]
    catalog = catalog_for(key_of(client))
    assert catalog.namespace_exists(client.org)  # type: ignore[attr-defined]


def test_a_key_sees_its_own_org_only(client_for: ClientFactory, catalog_for: CatalogFor) -> None:
    acme, other = client_for(), client_for()
    mine = _dataset(acme)
    _dataset(acme, "clicks")
    _dataset(other)
    _append(mine["table"], [1, 2, 3])
    catalog = catalog_for(key_of(acme))
    org = acme.org  # type: ignore[attr-defined]
    assert catalog.list_namespaces() == [(org,)]
    assert sorted(catalog.list_tables(org)) == [(org, "clicks"), (org, "events")]
    table = catalog.load_table(f"{org}.events")
    assert sorted(table.scan().to_arrow()["event_id"].to_pylist()) == [1, 2, 3]
    assert catalog.table_exists(f"{org}.events")

    theirs = other.org  # type: ignore[attr-defined]
    with pytest.raises(NoSuchNamespaceError):
        catalog.list_tables(theirs)
    with pytest.raises(NoSuchTableError):
        catalog.load_table(f"{theirs}.events")
    assert not catalog.table_exists(f"{theirs}.events")
    assert not catalog.namespace_exists(theirs)
    with pytest.raises(NoSuchTableError):
        catalog.load_table(f"{org}.nothing")
    with pytest.raises(NoSuchTableError):  # every tenant's CDC events: never served
        catalog.load_table(STAGING)
    # raw: the spec's error model, and existence does not leak (same answer as a missing table)
    for path in (f"{theirs}/tables/events", f"{org}/tables/nothing"):
        answer = acme.get(f"/iceberg/v1/namespaces/{path}")
        assert answer.status_code == 404
        error = answer.json()["error"]
        assert (error["type"], error["code"]) == ("NoSuchTableException", 404)
        assert "events" not in error["message"] or theirs in error["message"]


def test_lists_page_and_an_empty_page_token_is_the_first_page(client: TestClient) -> None:
    for name in ("a1", "a2", "a3"):
        _dataset(client, name)
    org = client.org  # type: ignore[attr-defined]
    path = f"/iceberg/v1/namespaces/{org}/tables"
    first = client.get(path, params={"pageToken": "", "pageSize": 2}).json()
    assert [i["name"] for i in first["identifiers"]] == ["a1", "a2"]
    rest = client.get(path, params={"pageToken": first["next-page-token"], "pageSize": 2}).json()
    assert [i["name"] for i in rest["identifiers"]] == ["a3"]
    assert "next-page-token" not in rest
    everything = client.get(path).json()
    assert [i["namespace"] for i in everything["identifiers"]] == [[org]] * 3
    spaces = client.get("/iceberg/v1/namespaces", params={"pageToken": ""}).json()
    assert spaces == {"namespaces": [[org]]}
    bad = client.get(path, params={"pageToken": "zz"})
    assert (bad.status_code, bad.json()["error"]["type"]) == (400, "BadRequestException")


def test_a_missing_revoked_or_expired_credential_is_refused_at_once(
    client_for: ClientFactory, catalog_for: CatalogFor
) -> None:
    admin = client_for()
    created = admin.post("/v1/keys", json={"scope": "read"}).json()
    catalog = catalog_for(created["key"])
    assert catalog.list_namespaces() == [(admin.org,)]  # type: ignore[attr-defined]
    assert admin.delete(f"/v1/keys/{created['id']}").status_code == 200
    with pytest.raises(UnauthorizedError, match="revoked"):
        catalog.list_namespaces()
    for headers in ({}, {"Authorization": "Bearer ib_nope_nope"}):
        answer = httpx.get(f"{catalog.uri}/v1/namespaces", headers=headers, verify=TLS)
        assert answer.status_code == 401
        assert answer.json()["error"]["type"] == "NotAuthorizedException"
        assert answer.headers["WWW-Authenticate"] == "Bearer"


def test_oauth_client_credentials_give_a_token_that_dies_with_its_key(
    client_for: ClientFactory, catalog_for: CatalogFor
) -> None:
    from app.auth import find_key_by_id
    from app.keys import tokens

    admin = client_for()
    created = admin.post("/v1/keys", json={"scope": "read"}).json()
    catalog = catalog_for(credential=f"{created['id']}:{created['key']}")
    assert catalog.list_namespaces() == [(admin.org,)]  # type: ignore[attr-defined]
    form = {
        "grant_type": "client_credentials",
        "client_id": created["id"],
        "client_secret": created["key"],
    }
    issued = admin.post("/iceberg/v1/oauth/tokens", data=form)
    assert issued.status_code == 200, issued.text
    assert issued.json()["token_type"] == "bearer"
    assert issued.json()["expires_in"] == 3600
    token = issued.json()["access_token"]
    assert token.startswith("ibt.")
    assert created["key"] not in token
    spaces = admin.get("/iceberg/v1/namespaces", headers={"Authorization": f"Bearer {token}"})
    assert spaces.json() == {"namespaces": [[admin.org]]}  # type: ignore[attr-defined]
    unsupported = admin.post("/iceberg/v1/oauth/tokens", data={**form, "grant_type": "password"})
    assert (unsupported.status_code, unsupported.json()["error"]) == (400, "unsupported_grant_type")

    with pytest.raises(OAuthError, match="invalid_client"):
        catalog_for(credential=f"{created['id']}:ib_wrong_secret")
    other = admin.post("/v1/keys", json={"scope": "read"}).json()
    with pytest.raises(OAuthError, match="invalid_client"):  # another key's id
        catalog_for(credential=f"{other['id']}:{created['key']}")

    found = find_key_by_id(created["id"])
    assert found is not None
    past = datetime.now(UTC) - timedelta(hours=2)
    expired = tokens.issue(created["id"], found[1], past, 60)
    answer = admin.get("/iceberg/v1/namespaces", headers={"Authorization": f"Bearer {expired}"})
    assert answer.status_code == 401
    assert "expired" in answer.json()["error"]["message"]
    forged = token[:-3] + ("AAA" if not token.endswith("AAA") else "BBB")
    answer = admin.get("/iceberg/v1/namespaces", headers={"Authorization": f"Bearer {forged}"})
    assert answer.status_code == 401

    assert admin.delete(f"/v1/keys/{created['id']}").status_code == 200
    # PyIceberg asks for a new token on a 401: refused too
    with pytest.raises((UnauthorizedError, OAuthError), match="revoked"):
        catalog.list_namespaces()  # its token was valid an hour more
    answer = admin.get("/iceberg/v1/namespaces", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 401
    assert "revoked" in answer.json()["error"]["message"]


def test_every_write_is_refused_naming_the_icebatch_operation_and_changes_nothing(
    client: TestClient, catalog_for: CatalogFor
) -> None:
    from app.catalog.endpoints import WRITES

    dataset = _dataset(client)
    _append(dataset["table"], [1, 2])
    before = _lake(dataset["table"]).metadata_location
    org = client.org  # type: ignore[attr-defined]
    for method, template in WRITES:
        path = template.format(namespace=org, table="events", view="v")
        answer = client.request(method, f"/iceberg/v1{path}", json={})
        assert answer.status_code == 403, (method, path, answer.text)
        error = answer.json()["error"]
        assert (error["type"], error["code"]) == ("ForbiddenException", 403)
        assert "read-only" in error["message"]
    commit = client.post(f"/iceberg/v1/namespaces/{org}/tables/events", json={})
    assert "POST /v1/batches" in commit.json()["error"]["message"]

    table = catalog_for(key_of(client)).load_table(f"{org}.events")
    with pytest.raises((NotImplementedError, ForbiddenError)):
        table.append(_rows(dataset["table"], [9], "x"))
    assert _lake(dataset["table"]).metadata_location == before
    refused = client.get("/v1/audit", params={"action": "catalog.write_refused"}).json()["items"]
    assert len(refused) == len(WRITES) + 1


def test_load_table_answers_an_etag_and_304_and_is_audited(client: TestClient) -> None:
    dataset = _dataset(client)
    first = _append(dataset["table"], [1])
    org = client.org  # type: ignore[attr-defined]
    path = f"/iceberg/v1/namespaces/{org}/tables/events"
    loaded = client.get(path)
    tag = loaded.headers["ETag"]
    assert loaded.json()["metadata"]["current-snapshot-id"] == first
    again = client.get(path, headers={"If-None-Match": tag})
    assert (again.status_code, again.content) == (304, b"")
    second = _append(dataset["table"], [2])
    moved = client.get(path, headers={"If-None-Match": tag})
    assert moved.status_code == 200
    assert moved.headers["ETag"] != tag
    assert moved.json()["metadata"]["current-snapshot-id"] == second
    assert len(moved.json()["metadata"]["snapshots"]) == 2
    refs = _served(client, "events", snapshots="refs")["metadata"]
    assert [s["snapshot-id"] for s in refs["snapshots"]] == [second]
    assert refs["refs"] == {"main": {"snapshot-id": second, "type": "branch"}}

    events = client.get("/v1/audit", params={"action": "catalog.load_table"}).json()["items"]
    served = [(e["target"]["snapshot_id"], e["status_code"]) for e in events]  # newest first
    assert served == [(str(second), 200), (str(second), 200), (str(first), 304), (str(first), 200)]
    assert {e["target"]["table"] for e in events} == {f"{org}.events"}
    assert {e["key_id"] for e in events} == {e["key_id"] for e in events[:1]}
    assert all(e["request_id"] for e in events)


def test_credentials_are_empty_and_metrics_are_counted_by_org(client: TestClient) -> None:
    _dataset(client)
    org = client.org  # type: ignore[attr-defined]
    base = f"/iceberg/v1/namespaces/{org}/tables/events"
    assert client.get(f"{base}/credentials").json() == {"storage-credentials": []}

    def reports() -> float:
        value = REGISTRY.get_sample_value("icebatch_catalog_metrics_reports_total", {"org": org})
        return value or 0.0

    before = reports()
    report = {"report-type": "scan-report", "table-name": f"{org}.events", "snapshot-id": 1}
    assert client.post(f"{base}/metrics", json=report).status_code == 204
    assert reports() == before + 1
    assert (
        client.post(f"/iceberg/v1/namespaces/{org}/tables/other/metrics", json=report).status_code
        == 404
    )


def test_only_snapshots_whose_tombstones_are_iceberg_deletes_are_served(
    client: TestClient,
) -> None:
    """A tombstone commit is not served until a materializer's mark covers it; a GDPR delete
    withholds every older snapshot for good (they still show the person)."""
    dataset = _dataset(client)
    name = dataset["table"]
    s1 = _append(name, [1], "u1")
    s2 = _append(name, [2], "u2")
    t1 = _tombstone(name, "b-x", "revert")
    served = _served(client, "events")["metadata"]
    assert served["current-snapshot-id"] == s2
    assert [s["snapshot-id"] for s in served["snapshots"]] == [s1, s2]
    m1 = _mark_materialized(name)
    served = _served(client, "events")["metadata"]
    assert served["current-snapshot-id"] == m1
    assert t1 not in [s["snapshot-id"] for s in served["snapshots"]]
    chain = {s["snapshot-id"]: s.get("parent-snapshot-id") for s in served["snapshots"]}
    assert chain == {s1: None, s2: s1, m1: s2}  # the withheld snapshot is skipped
    assert served["refs"]["main"]["snapshot-id"] == m1

    s3 = _append(name, [3], "u3")
    _tombstone(name, "u1", "gdpr")
    unserved = client.get(f"/iceberg/v1/namespaces/{client.org}/tables/events")  # type: ignore[attr-defined]
    assert unserved.status_code == 503, unserved.text
    assert unserved.json()["error"]["type"] == "ServiceUnavailableException"
    assert unserved.headers["Retry-After"]
    m2 = _mark_materialized(name)
    served = _served(client, "events")["metadata"]
    assert [s["snapshot-id"] for s in served["snapshots"]] == [m2]
    assert s3 not in {e["snapshot-id"] for e in served["snapshot-log"]}
    s4 = _append(name, [4], "u1")  # a re-registration after the delete: served
    served = _served(client, "events")["metadata"]
    assert [s["snapshot-id"] for s in served["snapshots"]] == [m2, s4]


def test_duckdb_reads_the_served_snapshot_not_the_newest_file(
    client_for: ClientFactory, duckdb_for: CatalogFor, catalog_for: CatalogFor
) -> None:
    """DuckDB's iceberg extension attached to /iceberg reads what the catalog serves: rows
    appended after a tombstone that is not yet an Iceberg delete wait for the materializer.
    Another org's key sees no table of this org."""
    import duckdb

    client = client_for()
    dataset = _dataset(client)
    name, org = dataset["table"], client.org  # type: ignore[attr-defined]
    _append(name, [1, 2], "u1")
    query = f"SELECT event_id FROM lake.{org}.events ORDER BY 1"
    assert [r[0] for r in duckdb_for(key_of(client)).execute(query).fetchall()] == [1, 2]
    _tombstone(name, "b-x", "revert")
    _append(name, [3], "u3")  # in the table's newest metadata file, not yet served
    assert [r[0] for r in duckdb_for(key_of(client)).execute(query).fetchall()] == [1, 2]
    table = catalog_for(key_of(client)).load_table(f"{org}.events")
    assert sorted(table.scan().to_arrow()["event_id"].to_pylist()) == [1, 2]
    _mark_materialized(name)
    assert [r[0] for r in duckdb_for(key_of(client)).execute(query).fetchall()] == [1, 2, 3]

    other = duckdb_for(key_of(client_for()))
    with pytest.raises(duckdb.Error):
        other.execute(query).fetchall()


def test_fair_use_applies_in_the_catalogs_error_model(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over its org's rate a key is refused 429 in the catalog's model: first by the bucket
    (in `authenticate`), then by the middleware that remembers the refused key."""
    from app.config import get_settings

    limits = {client.org: {"rate_limit_per_second": 0.5, "rate_limit_burst": 2}}  # type: ignore[attr-defined]
    monkeypatch.setenv("ICEBATCH_ORG_LIMITS", json.dumps(limits))
    get_settings.cache_clear()
    try:
        answers = [client.get("/iceberg/v1/namespaces") for _ in range(4)]
    finally:
        monkeypatch.delenv("ICEBATCH_ORG_LIMITS")
        get_settings.cache_clear()
    assert [a.status_code for a in answers] == [200, 200, 429, 429]
    for refused in answers[2:]:
        error = refused.json()["error"]
        assert (error["type"], error["code"]) == ("TooManyRequestsException", 429)
        assert "requests a second" in error["message"]
        assert int(refused.headers["Retry-After"]) >= 1
