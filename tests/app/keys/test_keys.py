"""Keys over HTTP and the CLI: scopes, expiry, revocation at once, never a secret listed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from tests.fixtures.clients import ClientFactory
from tests.fixtures.datasets import EVENTS


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_create_list_revoke_over_http(client_for: ClientFactory) -> None:
    admin = client_for()
    created = admin.post(
        "/v1/keys", json={"scope": "read", "name": "dashboards", "expires_in": "30d"}
    )
    assert created.status_code == 201, created.text
    body = created.json()
    assert body["key"].startswith(f"ib_{body['prefix']}_")
    assert (body["org"], body["scope"], body["name"]) == (admin.org, "read", "dashboards")  # type: ignore[attr-defined]
    expires = datetime.fromisoformat(body["expires_at"])
    assert abs(expires - (datetime.now(UTC) + timedelta(days=30))) < timedelta(minutes=1)

    reader = bearer(body["key"])
    assert admin.get("/v1/datasets", headers=reader).status_code == 200
    listed = admin.get("/v1/keys").json()["items"]
    assert body["id"] in {k["id"] for k in listed}
    assert all("key" not in k and "secret_hash" not in k for k in listed)
    assert body["key"] not in admin.get("/v1/keys").text
    mine = next(k for k in listed if k["id"] == body["id"])
    assert mine["last_used_at"] is not None  # the read above

    revoked = admin.delete(f"/v1/keys/{body['id']}")
    assert revoked.status_code == 200
    assert revoked.json()["revoked_at"] is not None
    denied = admin.get("/v1/datasets", headers=reader)  # the very next request
    assert denied.status_code == 401
    assert "revoked" in denied.json()["detail"]
    # revoking again changes nothing
    again = admin.delete(f"/v1/keys/{body['id']}").json()
    assert again["revoked_at"] == revoked.json()["revoked_at"]


def test_keys_need_admin_and_stay_in_their_org(client_for: ClientFactory) -> None:
    admin = client_for()
    other = client_for()
    writer = client_for(admin.org, "write")  # type: ignore[attr-defined]
    for method, path, json in (
        ("POST", "/v1/keys", {"scope": "read"}),
        ("GET", "/v1/keys", None),
        ("DELETE", "/v1/keys/whatever", None),
    ):
        response = writer.request(method, path, json=json)
        assert response.status_code == 403, (method, path)
        assert response.json()["detail"] == "this call needs a 'admin' key; yours is 'write'"
    theirs = other.post("/v1/keys", json={"scope": "write"}).json()
    assert admin.delete(f"/v1/keys/{theirs['id']}").status_code == 404
    assert theirs["id"] not in {k["id"] for k in admin.get("/v1/keys").json()["items"]}
    assert other.get("/v1/datasets", headers=bearer(theirs["key"])).status_code == 200
    bad = admin.post("/v1/keys", json={"scope": "root", "expires_in": "soon"})
    assert bad.status_code == 422
    assert {e["location"] for e in bad.json()["errors"]} == {"body.scope", "body.expires_in"}


def test_expired_and_unknown_keys_answer_401(client_for: ClientFactory) -> None:
    from app.db import session_scope
    from app.keys.issue import issue_key
    from app.models import Scope

    admin = client_for()
    with session_scope() as session:
        _, expired = issue_key(
            session,
            admin.org,  # type: ignore[attr-defined]
            Scope.ADMIN,
            expires_at=datetime.now(UTC) - timedelta(seconds=1),
        )
    response = admin.get("/v1/datasets", headers=bearer(expired))
    assert response.status_code == 401
    assert "expired" in response.json()["detail"]
    assert response.headers["www-authenticate"] == "Bearer"
    forged = expired[:-4] + "AAAA"
    assert admin.get("/v1/datasets", headers=bearer(forged)).json()["detail"] == (
        "this API key is unknown"
    )
    assert admin.get("/v1/datasets", headers={"Authorization": ""}).status_code == 401


def test_read_key_reads_but_cannot_mutate(client_for: ClientFactory) -> None:
    admin = client_for()
    reader = client_for(admin.org, "read")  # type: ignore[attr-defined]
    dataset = admin.post("/v1/datasets", json=EVENTS).json()
    assert reader.get(f"/v1/datasets/{dataset['id']}").json()["id"] == dataset["id"]
    denied = reader.post("/v1/datasets", json={**EVENTS, "name": "other"})
    assert denied.status_code == 403
    assert denied.headers["content-type"] == "application/problem+json"
    assert denied.json()["detail"] == "this call needs a 'write' key; yours is 'read'"
    assert denied.json()["required_scope"] == "write"
    names = [d["name"] for d in admin.get("/v1/datasets").json()["items"]]
    assert names == ["events"]


def test_openapi_states_each_operation_scope(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert paths["/v1/datasets"]["post"]["security"] == [{"ApiKey": ["write"]}]
    assert paths["/v1/datasets"]["get"]["security"] == [{"ApiKey": ["read"]}]
    assert paths["/v1/datasets/{dataset_id}/vacuum"]["post"]["x-icebatch-scope"] == "admin"
    assert paths["/v1/keys"]["post"]["x-icebatch-action"] == "keys.create"
    assert paths["/healthz"]["get"]["security"] == []  # open: declared so (no key), not left out


@pytest.mark.parametrize("scope", ["read", "admin"])
def test_cli_create_list_revoke(client_for: ClientFactory, scope: str) -> None:
    from app.cli import cli

    admin = client_for()
    org = admin.org  # type: ignore[attr-defined]
    runner = CliRunner(mix_stderr=False)
    made = runner.invoke(
        cli, ["keys", "create", "--org", org, "--scope", scope, "--expires-in", "12h"]
    )
    assert made.exit_code == 0, made.stderr
    key = made.stdout.strip().splitlines()[-1]
    key_id = made.stderr.split()[2]
    assert f"({scope}, expires " in made.stderr
    assert admin.get("/v1/datasets", headers=bearer(key)).status_code == 200

    listed = runner.invoke(cli, ["keys", "list", "--org", org])
    assert listed.exit_code == 0
    assert key not in listed.stdout
    rows = [line.split() for line in listed.stdout.splitlines() if key_id in line]
    assert len(rows) == 1
    assert rows[0][2:4] == [org, scope]
    assert rows[0][-3] == "-"  # not revoked
    assert key_id in {k["id"] for k in admin.get("/v1/keys").json()["items"]}

    revoked = runner.invoke(cli, ["keys", "revoke", key_id])
    assert revoked.exit_code == 0, revoked.stderr
    assert admin.get("/v1/datasets", headers=bearer(key)).status_code == 401
    unknown = runner.invoke(cli, ["keys", "revoke", "nope"])
    assert unknown.exit_code == 2
    assert "'nope' does not exist" in unknown.stderr
    assert runner.invoke(cli, ["keys", "create", "--org", org, "--scope", "x"]).exit_code == 2
