"""The OpenAPI contract: the committed document is the app's, every operation is documented the
same way, and the rules of `app.openapi` reach routes they were never told about."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastapi import APIRouter, FastAPI
from fastapi.testclient import TestClient

from app.auth import Org, requires
from app.idempotency import Idempotent
from app.models import Scope
from app.openapi import PROBLEM, SPEC_PATH, render
from app.pagination import Paging
from tests.fixtures.datasets import EVENTS

ROOT = Path(__file__).resolve().parents[2]
OPERATION_ID = re.compile(r"^[a-z]+(_[a-z]+)+$")
KEYED_STATUSES = ("401", "403", "429", "503")
REGENERATE = ".venv/bin/python scripts/openapi.py"


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    from app.main import create_app

    return create_app().openapi()


def operations(spec: dict[str, Any], prefix: str = "/v1/") -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{method.upper()} {path}", operation)
        for path, item in spec["paths"].items()
        if path.startswith(prefix)
        for method, operation in item.items()
    ]


def resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    found: dict[str, Any] = spec
    for part in ref.removeprefix("#/").split("/"):
        found = found[part]
    return found


def test_the_committed_spec_is_the_apps(spec: dict[str, Any]) -> None:
    committed = (ROOT / SPEC_PATH).read_text()
    assert committed == render(spec), f"{SPEC_PATH} differs from the app's spec: run {REGENERATE}"


def test_the_spec_does_not_depend_on_settings(tmp_path: Path) -> None:
    """Generated under other settings (paths, limits, rates), the document is the same."""
    env = {
        **os.environ,
        "ICEBATCH_HOME": str(tmp_path / "elsewhere"),
        "ICEBATCH_STAGING_DIR": str(tmp_path / "staging"),
        "ICEBATCH_WAREHOUSE": f"file://{tmp_path}/warehouse",
        "ICEBATCH_MAX_FILE_BYTES": "1234",
        "ICEBATCH_MAX_BATCH_FILES": "3",
        "ICEBATCH_RATE_LIMIT_PER_SECOND": "2",
        "ICEBATCH_STORE_RETRY_AFTER_SECONDS": "9",
    }
    done = subprocess.run(
        [sys.executable, "scripts/openapi.py", "--check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "is up to date" in done.stdout
    text = (ROOT / SPEC_PATH).read_text()
    for machine_specific in (str(ROOT), str(Path.home()), "/tmp/"):
        assert machine_specific not in text


def test_every_v1_operation_is_documented(spec: dict[str, Any]) -> None:
    declared_tags = {tag["name"] for tag in spec["tags"]}
    assert all(tag.get("description") for tag in spec["tags"])
    assert spec["components"]["securitySchemes"]["ApiKey"] == {
        "type": "http",
        "scheme": "bearer",
        "description": spec["components"]["securitySchemes"]["ApiKey"]["description"],
    }
    seen = set()
    problems: list[str] = []
    for name, operation in operations(spec):
        seen.add(operation["operationId"])
        if not OPERATION_ID.match(operation["operationId"]):
            problems.append(f"{name}: operationId {operation['operationId']!r}")
        for field in ("summary", "description"):
            if not operation.get(field, "").strip():
                problems.append(f"{name}: no {field} (the endpoint's docstring)")
        tags = operation.get("tags", [])
        if not tags or not set(tags) <= declared_tags:
            problems.append(f"{name}: tags {tags} not declared in TAGS")
        if operation.get("security") != [{"ApiKey": [operation["x-icebatch-scope"]]}]:
            problems.append(f"{name}: security {operation.get('security')}")
        for status in KEYED_STATUSES:
            content = operation["responses"].get(status, {}).get("content", {})
            if content.get(PROBLEM, {}).get("schema") != {"$ref": "#/components/schemas/Problem"}:
                problems.append(f"{name}: no Problem response {status}")
        body = operation.get("requestBody")
        if body is not None:
            for media_type, content in body["content"].items():
                schema = resolve(spec, content.get("schema", {}))
                if not (
                    content.get("example") or content.get("examples") or schema.get("examples")
                ):
                    problems.append(f"{name}: no example of its {media_type} body")
    assert problems == []
    # the list covers what it should: the domains' operations, by their stable names
    assert {"datasets_create", "batches_upload_file", "rows_read", "keys_revoke"} <= seen
    assert len(seen) >= 32


def test_every_error_is_a_problem_and_every_response_names_its_request(
    spec: dict[str, Any],
) -> None:
    schemas = spec["components"]["schemas"]
    assert "HTTPValidationError" not in schemas
    assert "ValidationError" not in schemas
    problem = schemas["Problem"]
    assert problem["additionalProperties"] is True
    assert set(problem["required"]) == {"type", "title", "status", "detail"}
    assert {"instance", "errors", "retry_after_seconds", "limit", "batch_status"} <= set(
        problem["properties"]
    )
    for name, operation in operations(spec, prefix="/"):
        for status, response in operation["responses"].items():
            assert response["headers"]["X-Request-Id"] == {
                "$ref": "#/components/headers/X-Request-Id"
            }, (name, status)
            if int(status) >= 400 and name != "GET /readyz":
                assert list(response["content"]) == [PROBLEM], (name, status)
            if status in ("429", "503") and name.split()[1].startswith("/v1/"):
                assert "Retry-After" in response["headers"], (name, status)
    assert spec["components"]["headers"]["X-Request-Id"]["required"] is True


def test_the_services_errors_are_declared_where_they_are_raised(spec: dict[str, Any]) -> None:
    def statuses(path: str, method: str) -> set[str]:
        return set(spec["paths"][path][method]["responses"])

    assert {"409", "413", "507"} <= statuses("/v1/batches/{batch_id}/files/{name}", "put")
    assert {"404", "410"} <= statuses("/v1/datasets/{dataset_id}/changes", "get")
    assert {"404", "410"} <= statuses("/v1/datasets/{dataset_id}/consumers", "post")
    assert "409" in statuses("/v1/batches/{batch_id}/revert", "post")
    assert "409" in statuses("/v1/datasets", "post")  # a dataset of that name exists
    assert "404" in statuses("/v1/batches", "post")  # the body's dataset_id
    assert "404" in statuses("/v1/privacy/jobs", "post")  # the body's dataset_ids
    assert "404" not in statuses("/v1/datasets", "get")  # no id anywhere: no 404
    upload = spec["paths"]["/v1/batches/{batch_id}/files/{name}"]["put"]["requestBody"]
    assert upload["content"]["application/octet-stream"]["schema"]["format"] == "binary"


def test_streams_declare_their_media_types_and_headers(spec: dict[str, Any]) -> None:
    expected = {
        "/v1/datasets/{dataset_id}/rows": {"X-Icebatch-Snapshot-Id"},
        "/v1/datasets/{dataset_id}/changes": {
            "X-Icebatch-From-Snapshot",
            "X-Icebatch-To-Snapshot",
            "X-Icebatch-Change-Kind",
        },
    }
    for path, headers in expected.items():
        ok = spec["paths"][path]["get"]["responses"]["200"]
        assert ok["content"]["application/x-ndjson"]["schema"]["type"] == "string"
        arrow = ok["content"]["application/vnd.apache.arrow.stream"]["schema"]
        assert arrow == {**arrow, "type": "string", "format": "binary"}
        assert set(ok["content"]) == {"application/x-ndjson", "application/vnd.apache.arrow.stream"}
        assert headers <= set(ok["headers"])
        assert all(ok["headers"][h]["required"] for h in headers)
    listing = spec["paths"]["/v1/batches"]["get"]["responses"]["200"]["headers"]
    assert listing["Link"] == {"$ref": "#/components/headers/Link"}


def test_the_rules_reach_a_route_they_were_never_told_about() -> None:
    """A route added later (another module, another tag) gets the same treatment."""
    from app.main import create_app

    router = APIRouter(prefix="/v1/widgets", tags=["datasets"])

    @router.post("/{widget_id}", dependencies=[requires(Scope.WRITE, "widgets.poke")])
    def widgets_poke(widget_id: str, org: Org, idempotent: Idempotent) -> dict[str, str]:
        """Poke a widget."""
        return {"widget_id": widget_id}

    @router.get("")
    def widgets_list(org: Org, paging: Paging) -> dict[str, str]:
        """List widgets."""
        return {}

    app: FastAPI = create_app()
    app.include_router(router)
    spec = app.openapi()
    poke = spec["paths"]["/v1/widgets/{widget_id}"]["post"]
    assert poke["operationId"] == "widgets_poke"
    assert poke["security"] == [{"ApiKey": ["write"]}]
    assert set(poke["responses"]) >= {"200", "401", "403", "404", "409", "422", "429", "503"}
    assert poke["responses"]["409"]["content"] == {
        PROBLEM: {"schema": {"$ref": "#/components/schemas/Problem"}}
    }
    assert "Idempotent-Replayed" in poke["responses"]["200"]["headers"]
    listed = spec["paths"]["/v1/widgets"]["get"]
    assert "Link" in listed["responses"]["200"]["headers"]
    assert "404" not in listed["responses"]
    assert listed["responses"]["503"]["headers"]["Retry-After"] == {
        "$ref": "#/components/headers/Retry-After"
    }


def test_a_snapshot_id_beyond_a_long_is_invalid_input(client: TestClient) -> None:
    """Found by the fuzz run: such an id reached the SQL driver (a 500); it names no snapshot."""
    dataset = client.post("/v1/datasets", json=EVENTS).json()["id"]
    huge = 2**64
    answers = [
        client.get(
            f"/v1/datasets/{dataset}/changes", params={"kind": "appended", "from_snapshot": huge}
        ),
        client.post(
            f"/v1/datasets/{dataset}/exports", json={"kind": "deleted", "to_snapshot": huge}
        ),
        client.post(f"/v1/datasets/{dataset}/consumers", json={"name": "c", "snapshot_id": huge}),
    ]
    for response in answers:
        assert response.status_code == 422, response.text
        assert response.headers["content-type"] == PROBLEM
        assert "snapshot" in response.json()["errors"][0]["location"]


REDOCLY = ROOT / "tools" / "redocly" / "node_modules" / ".bin" / "redocly"


def test_the_document_passes_redocly_recommended_rules(
    spec: dict[str, Any], tmp_path: Path
) -> None:
    """Redocly CLI (pinned in tools/redocly, installed by scripts/setup.sh) with its
    `recommended` ruleset finds no error and no warning in the document."""
    assert REDOCLY.exists(), "no Redocly CLI: run scripts/setup.sh (it needs npm)"
    document = tmp_path / "openapi.json"
    document.write_text(render(spec))
    env = {**os.environ, "REDOCLY_TELEMETRY": "off", "REDOCLY_SUPPRESS_UPDATE_NOTICE": "true"}
    done = subprocess.run(
        [str(REDOCLY), "lint", "--extends=recommended", "--format=json", str(document)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(done.stdout)
    found = [f"{p['severity']} {p['ruleId']}: {p['message']}" for p in report["problems"]]
    assert found == []
    assert report["totals"] == {"errors": 0, "warnings": 0, "ignored": 0}
    assert done.returncode == 0, done.stderr


METHODS = ("get", "put", "post", "delete", "patch")


def test_every_405_lists_the_paths_declared_methods_in_allow(
    spec: dict[str, Any], client: TestClient
) -> None:
    """RFC 9110: a 405 carries `Allow`; here, for every path of the document, exactly the
    methods the document declares for it (several routes may share a path)."""
    wrong: list[str] = []
    for path, item in spec["paths"].items():
        declared = {method.upper() for method in item if method in METHODS}
        method = next(m for m in METHODS if m not in item)
        url = re.sub(r"\{[^}]+\}", "x", path)
        response = client.request(method.upper(), url)
        allow = {m.strip() for m in response.headers.get("allow", "").split(",") if m.strip()}
        if response.status_code != 405 or allow != declared:
            wrong.append(f"{method.upper()} {path}: {response.status_code}, Allow {allow}")
        else:
            assert response.headers["content-type"] == PROBLEM
            assert response.json()["detail"] == (
                f"{method.upper()} is not allowed here; allowed: {', '.join(sorted(declared))}"
            )
    assert wrong == []
    assert len(spec["paths"]) >= 30


def date_time_parameters(spec: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(path, method, name) of every query parameter declared as a date-time."""
    found = []
    for path, item in spec["paths"].items():
        for method, operation in item.items():
            for parameter in operation.get("parameters", []):
                schema = parameter["schema"]
                if any(s.get("format") == "date-time" for s in [schema, *schema.get("anyOf", [])]):
                    found.append((path, method, parameter["name"]))
    return found


def test_a_date_time_parameter_refuses_a_number(spec: dict[str, Any], client: TestClient) -> None:
    """Declared `date-time`, so `0.5` is refused (pydantic's lax mode read it as seconds since
    1970), while an RFC 3339 date-time, with its offset or `Z`, is taken."""
    parameters = date_time_parameters(spec)
    assert {(path, name) for path, _, name in parameters} == {
        ("/v1/audit", "since"),
        ("/v1/batches", "updated_since"),
        ("/v1/jobs", "updated_since"),
        ("/v1/jobs", "since"),
        ("/v1/jobs", "until"),
    }
    for path, method, name in parameters:
        refused = client.request(method.upper(), path, params={name: "0.5"})
        assert refused.status_code == 422, f"{path}?{name}=0.5: {refused.text}"
        assert refused.json()["errors"] == [
            {
                "location": f"query.{name}",
                "message": "Value error, '0.5' is not a date-time: expected an RFC 3339 "
                "date-time such as 2024-01-31T09:30:00Z",
            }
        ]
        for taken in ("2024-01-31T09:30:00Z", "2024-01-31T09:30:00.25+02:00"):
            response = client.request(method.upper(), path, params={name: taken})
            assert response.status_code == 200, f"{path}?{name}={taken}: {response.text}"
