"""The API: routers, RFC 9457 error handling, metrics."""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from app import health
from app.allow import allowed_methods
from app.audit.endpoints import router as audit_router
from app.audit.middleware import AuditMiddleware
from app.batches.endpoints import router as batches_router
from app.catalog.endpoints import create_catalog_app
from app.cdc.endpoints import router as cdc_router
from app.changes.endpoints import router as changes_router
from app.config import get_settings
from app.datasets.endpoints import router as datasets_router
from app.db import STORE_OUTAGE_ERRORS, get_engine, prefill
from app.errors import AppError, StoreUnavailable
from app.jobs.endpoints import router as jobs_router
from app.keys.endpoints import router as keys_router
from app.limits.admission import AdmissionMiddleware
from app.limits.rate import FairUseMiddleware
from app.maintenance.endpoints import router as maintenance_router
from app.openapi import TAGS, complete
from app.privacy.endpoints import router as privacy_router
from app.reads.endpoints import router as reads_router
from app.request_context import RequestIdMiddleware
from app.restatements.endpoints import tombstones_router
from app.retention.endpoints import router as retention_router
from app.ui import endpoints as ui

PROBLEM = "application/problem+json"
log = logging.getLogger(__name__)


def _problem(
    status: int,
    title: str,
    detail: str,
    instance: str,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    body = {
        "type": "about:blank",
        "title": title,
        "status": status,
        "detail": detail,
        "instance": instance,
        **extra,
    }
    return JSONResponse(body, status_code=status, media_type=PROBLEM, headers=headers)


async def _app_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AppError)
    headers = dict(exc.headers or {})
    if exc.status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return JSONResponse(
        exc.problem(request.url.path), status_code=exc.status, media_type=PROBLEM, headers=headers
    )


async def _store_unavailable(request: Request, exc: Exception) -> JSONResponse:
    """The metadata store is away: 503 with Retry-After, never a 500 (the request changed
    nothing: its transaction never committed)."""
    retry_after = get_settings().store_retry_after_seconds
    error = StoreUnavailable(retry_after)
    log.warning("%s %s: metadata store unavailable: %s", request.method, request.url.path, exc)
    return JSONResponse(
        error.problem(request.url.path),
        status_code=error.status,
        media_type=PROBLEM,
        headers={"Retry-After": str(retry_after)},
    )


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [
        {"location": ".".join(str(p) for p in e["loc"]), "message": e["msg"]} for e in exc.errors()
    ]
    detail = "; ".join(f"{e['location']}: {e['message']}" for e in errors)
    return _problem(422, "Invalid input", detail, request.url.path, errors=errors)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        allowed = allowed_methods(request.app.router.routes, request.scope["path"])
        headers["Allow"] = ", ".join(allowed)
    detail = str(exc.detail)
    if exc.status_code == 405:
        detail = f"{request.method} is not allowed here; allowed: {headers['Allow']}"
    return _problem(exc.status_code, str(exc.detail), detail, request.url.path, headers)


def _summaries_from_docstrings(app: FastAPI) -> None:
    """An operation's OpenAPI summary is its endpoint's docstring's first line; the rest of the
    docstring, when there is more, is its description."""
    for route in app.routes:
        if isinstance(route, APIRoute) and route.summary is None and route.description:
            summary, _, rest = route.description.partition("\n")
            route.summary, route.description = summary.strip(), rest.strip()


def operation_id(route: APIRoute) -> str:
    """An operation's OpenAPI `operationId` is its endpoint function's name (`batches_get`):
    stable, readable, and the name of the SDK's function for it."""
    return route.name


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """An API process fills its connection pool to PostgreSQL while it starts serving
    (ICEBATCH_DB_POOL_PREFILL), in a thread of its own: startup does not wait for it."""
    settings = get_settings()
    if settings.db_pool_prefill and settings.sqlalchemy_url.startswith("postgresql"):
        threading.Thread(
            target=prefill,
            args=(get_engine(), settings.db_pool_size),
            name="icebatch-pool-prefill",
            daemon=True,
        ).start()
    yield


def create_app() -> FastAPI:
    app = FastAPI(
        lifespan=lifespan,
        generate_unique_id_function=operation_id,
        title="Icebatch",
        version="0.1.0",
        description="Batch control plane for Apache Iceberg: ingest, restate, read increments.",
        openapi_tags=TAGS,
        # the repository grants no license: say so rather than leave the document silent
        license_info={
            "name": "All rights reserved",
            "identifier": "LicenseRef-All-Rights-Reserved",
        },
    )
    app.add_middleware(AuditMiddleware)  # inside the request id, outside the error handlers
    app.add_middleware(health.MetricsMiddleware)
    # outside the metrics: a remembered over-rate key is refused before any other work
    # outside the metrics (a 503 of a full process is counted apart, icebatch_api_overloaded),
    # inside fair use (a refusal held back takes no slot)
    app.add_middleware(AdmissionMiddleware)
    app.add_middleware(FairUseMiddleware)
    app.add_middleware(RequestIdMiddleware)  # added last: outermost, so every response has it
    app.add_exception_handler(AppError, _app_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    for outage in STORE_OUTAGE_ERRORS:
        app.add_exception_handler(outage, _store_unavailable)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    for router in (
        health.router,
        datasets_router,
        batches_router,
        jobs_router,
        reads_router,
        changes_router,
        tombstones_router,
        privacy_router,
        retention_router,
        maintenance_router,
        keys_router,
        audit_router,
        cdc_router,
    ):
        app.include_router(router)
    app.include_router(ui.router)
    app.mount("/ui/static", StaticFiles(directory=ui.STATIC), name="ui-static")
    app.mount("/iceberg", create_catalog_app(), name="iceberg")
    _summaries_from_docstrings(app)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = complete(app, FastAPI.openapi(app))
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


app = create_app()
