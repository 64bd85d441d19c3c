"""An error answered by a pure ASGI middleware, before the app (and its exception handlers):
problem+json, or the Iceberg REST catalog's error model under `/iceberg/` (app/catalog)."""

from __future__ import annotations

import json
from typing import Any

from starlette.types import Scope, Send

from app.errors import AppError


async def send_error(scope: Scope, send: Send, error: AppError, iceberg_type: str) -> None:
    path = str(scope.get("path", ""))
    if path.startswith("/iceberg/"):
        document: dict[str, Any] = {
            "error": {"message": error.detail, "type": iceberg_type, "code": error.status}
        }
        content_type = b"application/json"
    else:
        document, content_type = error.problem(path), b"application/problem+json"
    body = json.dumps(document).encode()
    headers = [
        (b"content-type", content_type),
        (b"content-length", str(len(body)).encode()),
        *((k.lower().encode(), v.encode()) for k, v in (error.headers or {}).items()),
    ]
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
