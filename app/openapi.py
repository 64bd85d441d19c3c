"""The OpenAPI document: what FastAPI derives from the routes, completed here by rules that hold
for every operation, so a new route gets them without listing it anywhere.

- Errors are RFC 9457 problems: the `Problem` schema under `application/problem+json`, for
  401/403/429/503 on every keyed operation, 422 where there is input, 404 where the path names
  an object, 409 where an `Idempotency-Key` is taken, and what a route declares itself with
  `problems({status: description})` (the errors its service raises: 409, 410, 413, 507, …).
- Headers: `X-Request-Id` on every response, `Retry-After` on 429/503, `WWW-Authenticate` on
  401, `Link` on list pages, `Idempotent-Replayed` and `RateLimit-*` where they are sent.
- Security: `ApiKey` (HTTP bearer) with the operation's scope (`app.auth.document_scopes`);
  `security: []` on the operations that take no key (health).
- Servers: the one that serves the document (a relative `/`).
- A keyless operation declares the 429 `app.limits.rate.FairUseMiddleware` sends, before any
  route, to a request bearing a key still over its org's rate.

The result passes Redocly CLI's `recommended` rules (tools/redocly, tests/app/test_openapi.py).

`render` is the committed file's text (`clients/openapi.json`, written by
`python scripts/openapi.py`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field

from app.auth import document_scopes
from app.idempotency import idempotency

PROBLEM = "application/problem+json"
PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}
SPEC_PATH = "clients/openapi.json"

TAGS: list[dict[str, str]] = [
    {
        "name": "cdc",
        "description": "CDC replication: post change events (PUT, PATCH, DELETE), watch the "
        "tenant's lag, read merged profiles; the raw table is a dataset named cdc_raw.",
    },
    {
        "name": "datasets",
        "description": "Datasets: an Iceberg table each, with its schema, partitioning, identity "
        "columns and snapshot log.",
    },
    {
        "name": "batches",
        "description": "Batches: open one, upload its files, complete it (an ingest job commits "
        "them as one snapshot, all or nothing); abort, revert or replay it.",
    },
    {
        "name": "jobs",
        "description": "Background jobs (ingest, restatements, maintenance, exports): state, "
        "stage, progress, attempts and result.",
    },
    {
        "name": "reads",
        "description": "The rows of a dataset now or at a snapshot, streamed as JSON Lines or "
        "an Arrow IPC stream.",
    },
    {
        "name": "changes",
        "description": "Increments: the rows appended or deleted between two snapshots, "
        "streamed or exported as Parquet.",
    },
    {
        "name": "restatements",
        "description": "Tombstones: the merge-on-read deletes that reverts, replays and GDPR "
        "deletes write.",
    },
    {
        "name": "privacy",
        "description": "GDPR deletes across datasets, their status and erasure receipt.",
    },
    {
        "name": "retention",
        "description": "Snapshot retention, expiry, and the consumers whose checkpoints pin "
        "snapshots.",
    },
    {
        "name": "maintenance",
        "description": "Vacuum (purge tombstoned rows) and compaction jobs.",
    },
    {"name": "keys", "description": "API keys of your organization (admin scope)."},
    {"name": "audit", "description": "The audit trail of your organization (admin scope)."},
    {
        "name": "health",
        "description": "Liveness, readiness and Prometheus metrics (no API key).",
    },
]


class ProblemError(BaseModel):
    """One invalid input of a 422: a request field, or a line of a CDC event body."""

    location: str = Field(
        description="Where: `body.format`, `query.limit`, `path.batch_id`, `line 3: op`, …"
    )
    message: str = Field(description="What is wrong with it")
    line: int | None = Field(
        default=None, description="CDC events: the 1-based line (or array element) at fault"
    )
    field: str | None = Field(
        default=None, description="CDC events: the event's field at fault (`` for the line)"
    )


class Problem(BaseModel):
    """An error, as RFC 9457 problem details. Members beyond the five of the RFC are
    extensions; those below are the ones the API sends, others may be added."""

    model_config = ConfigDict(
        extra="allow",
        json_schema_extra={
            "examples": [
                {
                    "type": "https://icebatch.dev/problems/conflict",
                    "title": "Conflict",
                    "status": 409,
                    "detail": "batch '5d6f7a1e-2b3c-4d5e-8f90-1a2b3c4d5e6f' is 'success'; "
                    "only a 'loading' batch can be completed",
                    "instance": "/v1/batches/5d6f7a1e-2b3c-4d5e-8f90-1a2b3c4d5e6f/complete",
                    "batch_status": "success",
                }
            ]
        },
    )

    type: str = Field(
        description="A URI naming the kind of problem (`https://icebatch.dev/problems/<slug>`, "
        "or `about:blank` for plain HTTP errors)"
    )
    title: str = Field(description="A short summary of the kind of problem")
    status: int = Field(description="The HTTP status code")
    detail: str = Field(description="What happened here and what to do about it")
    instance: str | None = Field(default=None, description="The path of the request")
    errors: list[ProblemError] | None = Field(default=None, description="422: each invalid input")
    retry_after_seconds: int | None = Field(
        default=None, description="429 and 503: seconds to wait (also in `Retry-After`)"
    )
    limit: str | None = Field(
        default=None,
        description="429: the fair-use limit reached (`request_rate`, `inflight_jobs`)",
    )
    required_scope: str | None = Field(default=None, description="403: the scope the call needs")
    key_scope: str | None = Field(default=None, description="403: the scope of your key")
    batch_status: str | None = Field(
        default=None, description="409 on a batch: the batch's status, which forbids the call"
    )
    job_id: str | None = Field(
        default=None, description="409: the job already running that blocks this one"
    )
    restatement_id: str | None = Field(
        default=None, description="409: the pending revert or replay of the batch"
    )
    snapshot_id: int | None = Field(
        default=None, description="410: the snapshot that retention expired"
    )
    oldest_retained_snapshot_id: int | None = Field(
        default=None, description="410: where reading can start again"
    )
    dataset_id: str | None = Field(default=None, description="The dataset the problem is about")
    batch_id: str | None = Field(default=None, description="The batch the problem is about")
    file: str | None = Field(default=None, description="507: the file that was not kept")


def header(description: str, schema: dict[str, Any], *, required: bool = False) -> dict[str, Any]:
    """An OpenAPI header object."""
    return {"description": description, "schema": schema, "required": required}


RATE_LIMIT_HEADERS = {
    "RateLimit-Limit": header("Your org's request burst", {"type": "integer"}),
    "RateLimit-Remaining": header("Requests left in the burst now", {"type": "integer"}),
    "RateLimit-Reset": header("Seconds until the burst is full again", {"type": "integer"}),
}
HEADERS: dict[str, dict[str, Any]] = {
    "X-Request-Id": header(
        "The server's id of this request (a UUID): quote it when you report a problem",
        {"type": "string", "format": "uuid"},
        required=True,
    ),
    "Retry-After": header(
        "Seconds to wait before retrying", {"type": "integer", "minimum": 1}, required=True
    ),
    "WWW-Authenticate": header("`Bearer`: send an API key", {"type": "string"}, required=True),
    "Link": header(
        'The next page, RFC 8288: `<url>; rel="next"` (absent on the last page)',
        {"type": "string"},
    ),
    "Idempotent-Replayed": header(
        "`true` when this is the stored response of an earlier request with the same "
        "`Idempotency-Key`",
        {"type": "string", "enum": ["true"]},
    ),
    **RATE_LIMIT_HEADERS,
}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/headers/{name}"}


def problems(described: Mapping[int, str]) -> dict[int | str, dict[str, Any]]:
    """`responses=` of a route: the problems its service raises, by status, each described
    (the statuses every operation shares are added by `complete`)."""
    return {
        status: {"description": text, "content": {PROBLEM: {"schema": PROBLEM_REF}}}
        for status, text in described.items()
    }


# status -> (description, headers): the problems of every operation called with a key
KEYED_PROBLEMS: dict[str, tuple[str, list[str]]] = {
    "401": (
        "No API key, or an unknown, revoked or expired one",
        ["WWW-Authenticate"],
    ),
    "403": (
        "The key's scope is too small for this call (`required_scope` names the one it needs)",
        [],
    ),
    "429": (
        "A fair-use limit of your org (`limit`: `request_rate` or `inflight_jobs`): retry "
        "after `Retry-After` seconds",
        ["Retry-After", *RATE_LIMIT_HEADERS],
    ),
    "503": (
        "The metadata store is unavailable; nothing was changed: retry after `Retry-After` "
        "seconds (with the same `Idempotency-Key`, if it had one)",
        ["Retry-After"],
    ),
}
INVALID = "Invalid input: a parameter or the body (`errors` lists each one), or a value the "
IDEMPOTENCY_CONFLICT = "A request with the same `Idempotency-Key` is still in progress"
KEYLESS_429 = (
    "Sent with an API key its org's request rate still refuses: refused before any work, like "
    "a keyed call (a probe sends no key, and is never refused)"
)
SERVERS = [{"url": "/", "description": "The service that serves this document"}]


def _calls(dependant: Dependant) -> Iterator[Any]:
    """Every dependency function a route runs, nested ones included."""
    for sub in dependant.dependencies:
        yield sub.call
        yield from _calls(sub)


def _takes_idempotency_key(route: APIRoute) -> bool:
    return any(call is idempotency for call in _calls(route.dependant))


def _is_paged(route: APIRoute) -> bool:
    """Whether the route takes `limit` + `cursor` (`app.pagination.paging`'s dependency, a
    closure per page size: known by its name)."""
    return any(getattr(call, "__name__", "") == "page_request" for call in _calls(route.dependant))


def _add(responses: dict[str, Any], status: str, description: str) -> dict[str, Any]:
    """The operation's response for `status`: a problem, `description` unless it has one."""
    response: dict[str, Any] = responses.setdefault(status, {})
    if not response.get("description") or response["description"] == "Validation Error":
        response["description"] = description
    return response


def _as_problem(response: dict[str, Any]) -> None:
    content = response.get("content")
    if not content or "application/json" in content and _is_fastapi_validation(content):
        response["content"] = {PROBLEM: {"schema": PROBLEM_REF}}


def _is_fastapi_validation(content: dict[str, Any]) -> bool:
    schema = content.get("application/json", {}).get("schema", {})
    return bool(schema.get("$ref", "").endswith("/HTTPValidationError"))


def _headers(response: dict[str, Any], names: list[str]) -> None:
    headers = response.setdefault("headers", {})
    for name in names:
        headers.setdefault(name, _ref(name))


def _complete_operation(route: APIRoute, operation: dict[str, Any]) -> None:
    responses: dict[str, Any] = operation["responses"]
    idempotent, paged = _takes_idempotency_key(route), _is_paged(route)
    keyed = "security" in operation
    if operation.get("parameters") or operation.get("requestBody"):
        _add(responses, "422", INVALID + "service refused (`detail` says which)")
    if "application/json" in operation.get("requestBody", {}).get("content", {}):
        _add(responses, "400", "The body could not be parsed: not JSON, or not UTF-8")
    if any(p["in"] == "path" for p in operation.get("parameters", [])):
        _add(responses, "404", "What the path names does not exist in your organization")
    if idempotent:
        _add(responses, "409", IDEMPOTENCY_CONFLICT)
    if keyed:
        for status, (description, _) in KEYED_PROBLEMS.items():
            _add(responses, status, description)
    else:
        operation["security"] = []
        _add(responses, "429", KEYLESS_429)
    for status, response in responses.items():
        success = status.startswith("2")
        if not success and status.isdigit() and int(status) >= 400:
            _as_problem(response)
        extra = ["X-Request-Id"]
        if success and paged:
            extra.append("Link")
        if success and idempotent:
            extra.append("Idempotent-Replayed")
        if keyed and success:
            extra.extend(RATE_LIMIT_HEADERS)
        if status == "429" or keyed and status in KEYED_PROBLEMS:
            extra.extend(KEYED_PROBLEMS[status][1])
        _headers(response, extra)


def _drop_unused(spec: dict[str, Any], names: tuple[str, ...]) -> None:
    text = json.dumps(spec["paths"])
    schemas = spec["components"]["schemas"]
    for name in names:
        if f'"#/components/schemas/{name}"' not in text:
            schemas.pop(name, None)


def complete(app: FastAPI, spec: dict[str, Any]) -> dict[str, Any]:
    """`spec` (FastAPI's document of `app`) with the rules of this module applied."""
    document_scopes(app.routes, spec)
    components = spec.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    problem = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
    schemas.update(problem.pop("$defs", {}))
    schemas["Problem"] = problem
    components["headers"] = dict(HEADERS)
    for route in app.routes:
        if isinstance(route, APIRoute) and route.include_in_schema:
            for method in route.methods:
                _complete_operation(route, spec["paths"][route.path_format][method.lower()])
    _drop_unused(spec, ("HTTPValidationError", "ValidationError"))
    spec["servers"] = SERVERS
    return spec


def render(spec: Mapping[str, Any]) -> str:
    """The committed file's text: pretty-printed, keys sorted, a trailing newline."""
    return json.dumps(spec, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
