"""The Iceberg REST catalog's routes: one FastAPI sub-application, mounted at `/iceberg` by
`app.main` (its own error model, outside Icebatch's OpenAPI document: the spec is apache/iceberg's
`open-api/rest-catalog-open-api.yaml`).

Authorization is Icebatch's: a key (or an OAuth token standing for one) sees its org's
namespace and that org's datasets; anything else is "does not exist". Every write route answers
403 naming the Icebatch operation to use instead.
"""

from __future__ import annotations

import base64
from typing import Annotated, Any, Literal
from urllib.parse import parse_qs, unquote_plus

from fastapi import APIRouter, FastAPI, Header, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from prometheus_client import Counter
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.audit import service as audit
from app.audit.writer import WRITER
from app.auth import CurrentPrincipal, find_key, rejection
from app.catalog import errors, tables
from app.catalog.errors import CatalogError
from app.config import get_settings
from app.db import STORE_OUTAGE_ERRORS
from app.errors import AppError
from app.keys import tokens
from app.models import Scope
from app.models.base import utcnow
from app.request_context import current_request_id

REPORTS = Counter(
    "icebatch_catalog_metrics_reports_total",
    "Scan and commit reports engines sent to the catalog (POST .../metrics)",
    ["org"],
)
LOADS = Counter(
    "icebatch_catalog_table_loads_total", "loadTable answers of the catalog", ["org", "status"]
)
READ_ENDPOINTS = [
    "GET /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "HEAD /v1/{prefix}/namespaces/{namespace}",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
]
DEFAULT_PAGE = 100
MAX_PAGE = 1000

router = APIRouter(prefix="/v1")


def _page(items: list[Any], token: str | None, size: int | None) -> tuple[list[Any], str | None]:
    """One page of `items` and the next page's token (an offset; an empty token: the first)."""
    if token and not token.isdigit():
        raise CatalogError(400, "BadRequestException", f"invalid pageToken {token!r}")
    if size is not None and size < 1:
        raise CatalogError(400, "BadRequestException", "pageSize must be at least 1")
    start, size = int(token or 0), min(size or DEFAULT_PAGE, MAX_PAGE)
    end = start + size
    return items[start:end], (str(end) if end < len(items) else None)


def _listing(name: str, items: list[Any], token: str | None) -> dict[str, Any]:
    answer: dict[str, Any] = {name: items}
    if token is not None:
        answer["next-page-token"] = token
    return answer


@router.get("/config")
async def get_config(principal: CurrentPrincipal, warehouse: str | None = None) -> dict[str, Any]:
    """Catalog configuration; `warehouse` is accepted and ignored (one warehouse)."""
    return {"defaults": {}, "overrides": {}, "endpoints": READ_ENDPOINTS}


def _basic(header: str | None) -> tuple[str, str] | None:
    """(client_id, client_secret) of an HTTP Basic `Authorization` header (each part
    form-urlencoded before the base64, as RFC 6749 2.3.1 says), or None."""
    scheme, _, value = (header or "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        return None
    client_id, colon, secret = decoded.partition(":")
    return (unquote_plus(client_id), unquote_plus(secret)) if colon else None


@router.post("/oauth/tokens")
async def oauth_tokens(request: Request) -> JSONResponse:
    """OAuth2 client credentials: `client_id` = an Icebatch key's id, `client_secret` = the key
    (form fields, or HTTP Basic); a bearer token for that key, valid
    `ICEBATCH_CATALOG_TOKEN_SECONDS`."""
    form = {k: v[0] for k, v in parse_qs((await request.body()).decode()).items()}

    def oauth_error(status: int, error: str, description: str) -> JSONResponse:
        return JSONResponse({"error": error, "error_description": description}, status)

    if form.get("grant_type") != "client_credentials":
        return oauth_error(400, "unsupported_grant_type", "only client_credentials is supported")
    client_id, secret = form.get("client_id", ""), form.get("client_secret", "")
    basic = _basic(request.headers.get("authorization"))
    if basic is not None and not secret:  # RFC 6749 2.3.1 (Debezium's HTTP sink's default)
        client_id, secret = basic
    row = await run_in_threadpool(find_key, secret) if secret else None
    if row is None or row.id != client_id:
        return oauth_error(401, "invalid_client", "client_id is not the id of the key given")
    refused = rejection(row, utcnow())
    if refused is not None:
        return oauth_error(401, "invalid_client", refused)
    found = await run_in_threadpool(tables.secret_hash, row.id)
    seconds = get_settings().catalog_token_seconds
    token = tokens.issue(row.id, found, utcnow(), seconds)
    return JSONResponse(
        {
            "access_token": token,
            "token_type": "bearer",
            "expires_in": seconds,
            "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
        },
        headers={"Cache-Control": "no-store"},
    )


@router.get("/namespaces")
async def list_namespaces(
    principal: CurrentPrincipal,
    parent: str | None = None,
    page_token: Annotated[str | None, Query(alias="pageToken")] = None,
    page_size: Annotated[int | None, Query(alias="pageSize")] = None,
) -> dict[str, Any]:
    """The key's org is its one namespace (no nested namespaces)."""
    if parent and parent != principal.org:
        raise errors.no_such_namespace(parent)
    found = [] if parent else [[principal.org]]
    page, token = _page(found, page_token, page_size)
    return _listing("namespaces", page, token)


def _admin(principal: CurrentPrincipal) -> bool:
    """Whether the key sees the org's audit table (the audit trail is for admin keys only)."""
    return principal.scope.allows(Scope.ADMIN)


def _own(principal: CurrentPrincipal, namespace: str) -> None:
    if namespace != principal.org:
        raise errors.no_such_namespace(namespace)


@router.get("/namespaces/{namespace}")
async def load_namespace(principal: CurrentPrincipal, namespace: str) -> dict[str, Any]:
    _own(principal, namespace)
    return {"namespace": [namespace], "properties": {}}


@router.head("/namespaces/{namespace}", status_code=204)
async def namespace_exists(principal: CurrentPrincipal, namespace: str) -> Response:
    _own(principal, namespace)
    return Response(status_code=204)


@router.get("/namespaces/{namespace}/tables")
async def list_tables(
    principal: CurrentPrincipal,
    namespace: str,
    page_token: Annotated[str | None, Query(alias="pageToken")] = None,
    page_size: Annotated[int | None, Query(alias="pageSize")] = None,
) -> dict[str, Any]:
    _own(principal, namespace)
    names = await run_in_threadpool(tables.names, principal.org, _admin(principal))
    page, token = _page(names, page_token, page_size)
    return _listing("identifiers", [{"namespace": [namespace], "name": n} for n in page], token)


@router.head("/namespaces/{namespace}/tables/{table}", status_code=204)
async def table_exists(principal: CurrentPrincipal, namespace: str, table: str) -> Response:
    await run_in_threadpool(tables.check, principal.org, _admin(principal), namespace, table)
    return Response(status_code=204)


@router.get("/namespaces/{namespace}/tables/{table}")
async def load_table(
    request: Request,
    principal: CurrentPrincipal,
    namespace: str,
    table: str,
    snapshots: Literal["all", "refs"] = "all",
    if_none_match: Annotated[str | None, Header()] = None,
) -> Response:
    """The table's served metadata (`app.catalog.served`); `If-None-Match` with its `ETag`: 304.
    Each answer goes into the audit trail with the snapshot it served."""
    loaded = await run_in_threadpool(
        tables.load, principal.org, namespace, table, snapshots, if_none_match, _admin(principal)
    )
    LOADS.labels(principal.org, str(loaded.status)).inc()
    await _audit(request, principal, "catalog.load_table", loaded.status, loaded.target)
    headers = {"ETag": loaded.etag}
    if loaded.status == 304:
        return Response(status_code=304, headers=headers)
    return Response(loaded.body, media_type="application/json", headers=headers)


@router.get("/namespaces/{namespace}/tables/{table}/credentials")
async def load_credentials(principal: CurrentPrincipal, namespace: str, table: str) -> Any:
    """Nothing to vend: the warehouse is a file system the engine reads directly."""
    await run_in_threadpool(tables.check, principal.org, _admin(principal), namespace, table)
    return {"storage-credentials": []}


@router.post("/namespaces/{namespace}/tables/{table}/metrics", status_code=204)
async def report_metrics(principal: CurrentPrincipal, namespace: str, table: str) -> Response:
    await run_in_threadpool(tables.check, principal.org, _admin(principal), namespace, table)
    REPORTS.labels(principal.org).inc()
    return Response(status_code=204)


# What to use instead of each write an engine may try.
WRITES: dict[tuple[str, str], str] = {
    ("POST", "/namespaces"): "a namespace is an Icebatch organization: it exists from its "
    "first API key (icebatch keys create --org ...)",
    ("DELETE", "/namespaces/{namespace}"): "organizations are not dropped through the catalog",
    ("POST", "/namespaces/{namespace}/properties"): "namespace properties are not settable",
    ("POST", "/namespaces/{namespace}/tables"): "create a dataset: POST /v1/datasets "
    "(icebatch datasets create)",
    ("POST", "/namespaces/{namespace}/register"): "create a dataset: POST /v1/datasets",
    ("POST", "/namespaces/{namespace}/tables/{table}"): "write through Icebatch: a batch "
    "(POST /v1/batches), a revert or replay (POST /v1/batches/{batch_id}?action=REVERT|REPLAY), "
    "a GDPR delete (POST /v1/privacy/jobs), vacuum or compaction "
    "(POST /v1/datasets/{dataset_id}/vacuum|compact), expiry (POST "
    "/v1/datasets/{dataset_id}/expire)",
    ("DELETE", "/namespaces/{namespace}/tables/{table}"): "datasets are not dropped through "
    "the catalog; a GDPR delete (POST /v1/privacy/jobs) removes a person's rows",
    ("POST", "/tables/rename"): "datasets are not renamed",
    ("POST", "/transactions/commit"): "write through Icebatch: batches (POST /v1/batches)",
    ("POST", "/namespaces/{namespace}/views"): "the catalog serves no views",
    ("POST", "/namespaces/{namespace}/views/{view}"): "the catalog serves no views",
    ("DELETE", "/namespaces/{namespace}/views/{view}"): "the catalog serves no views",
    ("POST", "/views/rename"): "the catalog serves no views",
}


def _refuse_write(instead: str) -> Any:
    async def refuse(request: Request, principal: CurrentPrincipal) -> Response:
        await _audit(request, principal, "catalog.write_refused", 403, {})
        raise errors.forbidden(f"the Icebatch catalog is read-only for engines; {instead}")

    return refuse


for (method, path), instead in WRITES.items():
    router.add_api_route(path, _refuse_write(instead), methods=[method], name="catalog_write")


async def _audit(
    request: Request, principal: CurrentPrincipal, action: str, status: int, target: dict[str, str]
) -> None:
    row = audit.event_row(
        org=principal.org,
        key_id=principal.key_id,
        action=action,
        method=request.method,
        path=request.url.path,
        target={**request.path_params, **target},
        request_id=current_request_id(),
        status_code=status,
    )
    await WRITER.store(row)


def create_catalog_app() -> FastAPI:
    catalog = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    catalog.add_exception_handler(CatalogError, errors.catalog_error)
    catalog.add_exception_handler(AppError, errors.app_error)
    catalog.add_exception_handler(RequestValidationError, errors.validation_error)
    catalog.add_exception_handler(StarletteHTTPException, errors.http_error)
    for outage in STORE_OUTAGE_ERRORS:
        catalog.add_exception_handler(outage, errors.store_unavailable)
    catalog.include_router(router)
    return catalog
