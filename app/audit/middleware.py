"""Records every mutating call under `/v1/` in the audit trail, in one place.

Pure ASGI, inside the request-id middleware and outside the error handlers, so it sees the
final status of every call, errors included. The response is held until its event is stored
(mutating calls answer small JSON bodies; past `MAX_HELD_BYTES` it is stored and streamed on):
an answer a client has seen is in the trail, unless storing its event failed (logged).
Denied attempts are recorded when the key is known (a revoked or expired key: 401; a
too-small scope: 403); calls without a known key have no org to record them under.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from fastapi.routing import APIRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.audit import service
from app.audit.writer import WRITER
from app.auth import MUTATING, known_caller, requirement
from app.request_context import current_request_id

log = logging.getLogger(__name__)

MAX_HELD_BYTES = 64 * 1024
_VERB = re.compile(r"^[A-Z][A-Z_]{0,15}$")


def action_of(route: APIRoute, query: dict[str, str]) -> str:
    """The route's declared action (`requires(scope, action, by=...)`), else its name."""
    needed = requirement(route)
    if needed is None or not needed.action:
        return f"{route.tags[0] if route.tags else 'api'}.{route.name}"
    if needed.by is not None and _VERB.match(query.get(needed.by, "")):
        return f"{needed.action}.{query[needed.by]}"
    return needed.action


def _query(scope: Scope) -> dict[str, str]:
    raw = scope.get("query_string", b"").decode("latin-1")
    pairs = (part.partition("=") for part in raw.split("&") if part)
    return {name: value for name, _, value in pairs}


def _result_id(body: bytes) -> str | None:
    try:
        document = json.loads(body)
    except ValueError:
        return None
    found = document.get("id") if isinstance(document, dict) else None
    return found if isinstance(found, str) else None


class AuditMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] not in MUTATING
            or not scope["path"].startswith("/v1/")
        ):
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        held: list[Message] = []
        size = 0
        recorded = False

        async def record(status: int, body: bytes) -> None:
            nonlocal recorded
            recorded = True
            await self._record(scope, status, body)

        async def hold(message: Message) -> None:
            nonlocal start, size
            if recorded:
                await send(message)
                return
            if message["type"] == "http.response.start":
                start = message
                return
            held.append(message)
            size += len(message.get("body", b""))
            if message.get("more_body", False) and size <= MAX_HELD_BYTES:
                return
            assert start is not None
            await record(start["status"], b"".join(m.get("body", b"") for m in held))
            await send(start)
            for kept in held:
                await send(kept)

        try:
            await self.app(scope, receive, hold)
        except Exception:
            if not recorded:
                await record(500, b"")
            raise

    async def _record(self, scope: Scope, status: int, body: bytes) -> None:
        route = scope.get("route")
        if not isinstance(route, APIRoute):
            return  # no such endpoint (404/405): nothing was called
        caller = known_caller(scope.get("state") or {})
        if caller is None:
            return
        org, key_id = caller
        target: dict[str, Any] = {k: str(v) for k, v in scope.get("path_params", {}).items()}
        result_id = _result_id(body) if status < 300 else None
        if result_id is not None and result_id not in target.values():
            target["result_id"] = result_id
        row = service.event_row(
            org=org,
            key_id=key_id,
            action=action_of(route, _query(scope)),
            method=scope["method"],
            path=scope["path"],
            target=target,
            request_id=current_request_id(),
            status_code=status,
        )
        try:
            await WRITER.store(row)
        except Exception:
            # the call itself is done and committed: its answer still goes out
            log.exception("could not record the audit event of %s %s", scope["method"], route)
