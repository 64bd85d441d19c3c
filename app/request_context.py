"""The request id: one per HTTP request, sent back as `X-Request-Id`, stamped on every job the
request creates (and so on the snapshot summary the job commits) and on every log line.

The id is always the server's own (a UUID): job request ids must be unique per table, because a
worker finds the snapshot its job already committed by it. A caller's own `X-Request-Id` is kept
as `client_request_id` for correlation only.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from contextvars import ContextVar
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger(__name__)
HEADER = "x-request-id"
_CLIENT_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")

_request_id: ContextVar[str | None] = ContextVar("icebatch_request_id", default=None)
_client_request_id: ContextVar[str | None] = ContextVar("icebatch_client_request_id", default=None)
# the request's ASGI state: authentication puts its principal there after this middleware ran
_state: ContextVar[dict[str, Any] | None] = ContextVar("icebatch_request_state", default=None)


def current_request_id() -> str | None:
    """The id of the HTTP request being served, or None outside of one."""
    return _request_id.get()


def client_request_id() -> str | None:
    """The caller's own `X-Request-Id`, when it sent a well-formed one."""
    return _client_request_id.get()


def current_key_id() -> str | None:
    """The id of the API key that authenticated the HTTP request being served, or None."""
    state = _state.get()
    principal = None if state is None else state.get("principal")
    key_id = getattr(principal, "key_id", None)
    return key_id if isinstance(key_id, str) else None


def new_request_id() -> str:
    return str(uuid.uuid4())


class RequestIdMiddleware:
    """Pure ASGI (no response buffering): sets the ids for the request, adds the header."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = new_request_id()
        sent = dict(scope.get("headers") or []).get(HEADER.encode(), b"").decode("latin-1")
        token = _request_id.set(request_id)
        client_token = _client_request_id.set(sent if _CLIENT_ID.match(sent) else None)
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        state_token = _state.set(state)

        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers", []))
                headers.append((HEADER.encode(), request_id.encode()))
                message["headers"] = headers
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            # logged here, while the request id is set (the server logs it again without it)
            log.exception("unhandled error in %s %s", scope.get("method"), scope.get("path"))
            if not started:  # the 500 carries the id too; the error still reaches the server
                await _internal_error(send_with_id, request_id)
            raise
        finally:
            _request_id.reset(token)
            _client_request_id.reset(client_token)
            _state.reset(state_token)


async def _internal_error(send: Send, request_id: str) -> None:
    body = json.dumps(
        {
            "type": "about:blank",
            "title": "Internal Server Error",
            "status": 500,
            "detail": f"an unexpected error; quote request id {request_id} when you report it",
        }
    ).encode()
    headers = [(b"content-type", b"application/problem+json")]
    await send({"type": "http.response.start", "status": 500, "headers": headers})
    await send({"type": "http.response.body", "body": body})
