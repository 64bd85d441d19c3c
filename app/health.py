"""Liveness, readiness (database, broker, catalog) and Prometheus metrics: HTTP counters here,
the operator metrics (jobs, outbox, leases, tombstones, privacy, vacuum) in `app.metrics`."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter, Response
from fastapi.responses import JSONResponse, PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Counter, Histogram, generate_latest
from pydantic import BaseModel, Field
from sqlalchemy import text
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.db import get_engine
from app.jobs.broker import get_celery
from app.lake.catalog import get_catalog
from app.metrics import OPERATOR_METRICS

router = APIRouter(tags=["health"])

REQUESTS = Counter("icebatch_http_requests_total", "HTTP requests", ["method", "route", "status"])
LATENCY = Histogram("icebatch_http_request_seconds", "HTTP request latency", ["method", "route"])
REGISTRY.register(OPERATOR_METRICS)


class MetricsMiddleware:
    """Pure ASGI (a `BaseHTTPMiddleware` costs every request a task group and a streamed
    copy of its body): counts each answer by route and status when its head is sent, and
    observes the time to that head."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()

        async def observe(message: Message) -> None:
            if message["type"] == "http.response.start":
                path = getattr(scope.get("route"), "path", "unmatched")
                REQUESTS.labels(scope["method"], path, str(message["status"])).inc()
                LATENCY.labels(scope["method"], path).observe(time.perf_counter() - started)
            await send(message)

        await self.app(scope, receive, observe)


class Liveness(BaseModel):
    status: str = Field(examples=["ok"])


class Readiness(BaseModel):
    status: str = Field(description="`ready` or `not ready`")
    checks: dict[str, str] = Field(
        description="database, broker, catalog: `ok` or `down: <error>`",
        examples=[{"database": "ok", "broker": "ok", "catalog": "ok"}],
    )


@router.get("/healthz", response_model=Liveness)
def health_live() -> dict[str, str]:
    """The process is up.

    Answers without touching the database, the broker or the catalog.
    """
    return {"status": "ok"}


def _check(name: str, probe: Any) -> tuple[str, str]:
    try:
        probe()
    except Exception as exc:  # readiness reports any failure rather than raising
        return name, f"down: {type(exc).__name__}: {exc}"[:300]
    return name, "ok"


def _broker() -> None:
    with get_celery().connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)


def _database() -> None:
    with get_engine().connect() as conn:
        conn.execute(text("SELECT 1"))


@router.get(
    "/readyz",
    response_model=Readiness,
    responses={503: {"model": Readiness, "description": "Something it needs is down"}},
)
def health_ready() -> JSONResponse:
    """Ready when the database, the broker and the Iceberg catalog answer.

    503 with the failing check's error otherwise: a load balancer stops sending requests.
    """
    checks = dict(
        [
            _check("database", _database),
            _check("broker", _broker),
            _check("catalog", lambda: get_catalog().list_namespaces()),
        ]
    )
    ready = all(v == "ok" for v in checks.values())
    body = {"status": "ready" if ready else "not ready", "checks": checks}
    return JSONResponse(body, status_code=200 if ready else 503)


@router.get("/metrics", response_class=PlainTextResponse)
def health_metrics() -> Response:
    """Prometheus metrics.

    The text exposition format: HTTP counters and latencies, jobs, outbox, leases, tombstones,
    privacy and vacuum metrics.
    """
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
