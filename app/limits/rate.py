"""The request rate of an org: `admit` (called by the auth dependency once the key's org is
known) counts the request in the org's bucket and raises 429 beyond it.

A refused key is remembered in the process until its bucket admits again: `FairUseMiddleware`
answers that key's next requests with the same 429 before routing, the key lookup (SQL) or
Redis, holding the answer until then, so a flood costs the other orgs as little CPU as
possible. The shortcut never refuses a request the bucket would admit: other processes can only
push a bucket's next admission later, never sooner. Every other response gets
`RateLimit-Limit/Remaining/Reset` headers.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import threading
import time
from dataclasses import dataclass

from fastapi import Request
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.config import Settings, get_settings
from app.errors import TooManyRequests
from app.limits.answers import send_error
from app.limits.buckets import Decision, RatePolicy, buckets_for
from app.limits.rejections import REJECTIONS

STATE_KEY = "icebatch_rate_limit_headers"
MAX_REMEMBERED = 10_000
# A remembered key's refusal is sent when its bucket admits again (at most HOLD_SECONDS later):
# a client that ignores Retry-After then sends one request per interval and connection rather
# than as many as the server can refuse. A held request costs no thread, SQL connection, CPU or
# request slot (app.limits.admission admits inside fair use), only an open connection: at most a
# quarter of the slots (ICEBATCH_DB_POOL_SIZE + ICEBATCH_DB_MAX_OVERFLOW) is held at once per
# process.
HOLD_SECONDS = 1.0


def rate_policy(settings: Settings, org: str) -> RatePolicy | None:
    """The org's request rate (its override, else the default); None when unlimited."""
    per_second, burst = settings.rate_limit_per_second, settings.rate_limit_burst
    own = settings.org_limits.get(org)
    if own is not None:
        if own.rate_limit_per_second is not None:
            per_second = own.rate_limit_per_second
        burst = own.rate_limit_burst or burst
    return RatePolicy(per_second, burst) if per_second > 0 else None


def _headers(policy: RatePolicy, remaining: int, reset: float) -> dict[str, str]:
    return {
        "RateLimit-Limit": str(policy.burst),
        "RateLimit-Remaining": str(max(0, remaining)),
        "RateLimit-Reset": str(math.ceil(reset)),
    }


def _refusal(org: str, policy: RatePolicy, retry_after: float, reset: float) -> TooManyRequests:
    seconds = max(1, math.ceil(retry_after))
    return TooManyRequests(
        f"org {org!r} sends more than {policy.per_second:g} requests a second "
        f"(bursts of {policy.burst}); retry after {seconds} s",
        limit="request_rate",
        retry_after=seconds,
        headers=_headers(policy, 0, reset),
    )


@dataclass(frozen=True)
class _Refused:
    org: str
    policy: RatePolicy
    until: float  # time.monotonic() at which the bucket admits again
    full_at: float  # time.monotonic() at which the bucket is full again


_refused: dict[bytes, _Refused] = {}
_refused_lock = threading.Lock()
_held = 0  # refusals waiting in this process (touched by the event loop only)


def _digest(authorization: bytes) -> bytes:
    return hashlib.sha256(authorization).digest()


def _remember(authorization: str, refused: _Refused) -> None:
    with _refused_lock:
        if len(_refused) >= MAX_REMEMBERED:
            now = time.monotonic()
            for key in [k for k, v in _refused.items() if v.until <= now]:
                del _refused[key]
        if len(_refused) < MAX_REMEMBERED:
            _refused[_digest(authorization.encode("latin-1"))] = refused


def _still_refused(authorization: bytes) -> _Refused | None:
    digest = _digest(authorization)
    refused = _refused.get(digest)
    if refused is None:
        return None
    if refused.until <= time.monotonic():
        _refused.pop(digest, None)
        return None
    return refused


async def admit(request: Request, org: str) -> None:
    """Count the request in its org's bucket; TooManyRequests (429) beyond the org's rate. A
    token of this process's share costs no I/O; Redis is called from a worker thread."""
    policy = rate_policy(get_settings(), org)
    if policy is None:
        return
    asked_at = time.monotonic()  # before the bucket's clock read: `until` is never too late
    store = buckets_for(get_settings().broker_url)
    decision: Decision | None = store.take_held(org, policy)
    if decision is None:
        decision = await run_in_threadpool(store.take, org, policy)
    if decision.allowed:
        setattr(request.state, STATE_KEY, _headers(policy, decision.remaining, decision.reset))
        return
    REJECTIONS.labels("request_rate").inc()
    authorization = request.headers.get("authorization")
    if authorization:
        until, full_at = asked_at + decision.retry_after, asked_at + decision.reset
        _remember(authorization, _Refused(org, policy, until, full_at))
    raise _refusal(org, policy, decision.retry_after, decision.reset)


class FairUseMiddleware:
    """Pure ASGI: refuses a remembered key before any other work (the answer held until its
    bucket admits again); adds `RateLimit-*` to the other responses."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if _refused:
            authorization = next((v for k, v in scope["headers"] if k == b"authorization"), None)
            refused = _still_refused(authorization) if authorization else None
            if refused is not None:
                await _hold(refused)
                await _send_refusal(scope, send, refused)
                return
        state = scope.setdefault("state", {})

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = state.get(STATE_KEY)
                if extra:
                    headers = list(message.get("headers", []))
                    headers += [(k.lower().encode(), v.encode()) for k, v in extra.items()]
                    message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


def max_held(settings: Settings) -> int:
    """Refusals a process holds at once (a quarter of the requests it admits at once)."""
    return max(1, (settings.db_pool_size + settings.db_max_overflow) // 4)


async def _hold(refused: _Refused) -> None:
    global _held
    wait = min(refused.until - time.monotonic(), HOLD_SECONDS)
    if wait <= 0 or _held >= max_held(get_settings()):
        return
    _held += 1
    try:
        await asyncio.sleep(wait)
    finally:
        _held -= 1


async def _send_refusal(scope: Scope, send: Send, refused: _Refused) -> None:
    now = time.monotonic()
    error = _refusal(refused.org, refused.policy, refused.until - now, refused.full_at - now)
    REJECTIONS.labels("request_rate").inc()
    await send_error(scope, send, error, "TooManyRequestsException")
