"""The REST catalog's error model: `{"error": {"message", "type", "code"}}`, with the spec's
exception types, so each client raises its own typed exception (PyIceberg's
`NoSuchTableError`, `ForbiddenError`, ...)."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.config import get_settings
from app.errors import AppError

TYPES = {
    400: "BadRequestException",
    401: "NotAuthorizedException",
    403: "ForbiddenException",
    404: "NoSuchEndpointException",
    405: "MethodNotAllowedException",
    406: "UnsupportedOperationException",
    409: "CommitFailedException",
    429: "TooManyRequestsException",
    503: "ServiceUnavailableException",
}


class CatalogError(Exception):
    def __init__(
        self, code: int, type_: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.code, self.type, self.message, self.headers = code, type_, message, headers


def no_such_namespace(namespace: str) -> CatalogError:
    return CatalogError(404, "NoSuchNamespaceException", f"Namespace does not exist: {namespace}")


def no_such_table(namespace: str, table: str) -> CatalogError:
    return CatalogError(404, "NoSuchTableException", f"Table does not exist: {namespace}.{table}")


def forbidden(message: str) -> CatalogError:
    return CatalogError(403, "ForbiddenException", message)


def body(code: int, type_: str, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "code": code}}


def _answer(
    code: int, type_: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(body(code, type_, message), status_code=code, headers=headers)


async def catalog_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, CatalogError)
    return _answer(exc.code, exc.type, exc.message, exc.headers)


async def app_error(request: Request, exc: Exception) -> JSONResponse:
    """Icebatch's own errors (a refused key, a fair-use 429) in the catalog's model."""
    assert isinstance(exc, AppError)
    headers = dict(exc.headers or {})
    if exc.status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    type_ = TYPES.get(exc.status, "RESTException")
    return _answer(exc.status, type_, exc.detail, headers)


async def store_unavailable(request: Request, exc: Exception) -> JSONResponse:
    retry_after = str(get_settings().store_retry_after_seconds)
    message = "the metadata store is unavailable; retry shortly"
    return _answer(503, TYPES[503], message, {"Retry-After": retry_after})


async def validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    detail = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
    return _answer(400, TYPES[400], detail)


async def http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    type_ = TYPES.get(exc.status_code, "RESTException")
    message = (
        f"{request.method} {request.url.path} is not part of Icebatch's catalog: it serves the "
        "read operations GET /iceberg/v1/config lists in 'endpoints'"
        if exc.status_code in (404, 405)
        else str(exc.detail)
    )
    return _answer(exc.status_code, type_, message, dict(exc.headers or {}) or None)
