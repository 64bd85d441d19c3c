"""Requests in flight per API process: at most `db_pool_size + db_max_overflow` at once, so each
can hold a pooled connection and none waits for a connection held by a request that waits for a
thread. A request beyond them waits its turn (it holds nothing meanwhile) for up to
`api_queue_seconds`, then answers 503 with `Retry-After`.

Counting requests, not connections: uvicorn's `--limit-concurrency`, used before, counts open
connections too, idle keep-alive ones included, and drops a finished request only on the next
turn of its loop; 1,000 UI tabs on keep-alive connections got 503s with no request waiting
(issue 26). `/healthz` is never queued (it touches no store).
"""

from __future__ import annotations

import asyncio
import weakref

from prometheus_client import Counter, Gauge
from starlette.types import ASGIApp, Receive, Scope, Send

from app.config import get_settings
from app.errors import AppError
from app.limits.answers import send_error

UNQUEUED = frozenset({"/healthz"})
WAITING = Gauge(
    "icebatch_api_requests_waiting",
    "Requests waiting for one of the API process's request slots",
)
OVERLOADED = Counter(
    "icebatch_api_overloaded",
    "Requests answered 503 after waiting api_queue_seconds for a request slot",
)


class Overloaded(AppError):
    status, title, type_slug = 503, "Service unavailable", "api-overloaded"

    def __init__(self, waited: float, retry_after: int = 1) -> None:
        super().__init__(
            f"this API process had no free request slot for {waited:g} s; nothing was done: "
            f"retry after {retry_after} s",
            retry_after_seconds=retry_after,
        )
        self.headers = {"Retry-After": str(retry_after)}


class AdmissionMiddleware:
    """Pure ASGI: a request runs once one of the process's slots is free."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        # one semaphore per event loop (a test client runs its own loop)
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        slots = self._slots.get(loop)
        if slots is None:
            settings = get_settings()
            slots = self._slots[loop] = asyncio.Semaphore(
                settings.db_pool_size + settings.db_max_overflow
            )
        return slots

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in UNQUEUED:
            await self.app(scope, receive, send)
            return
        slots = self._semaphore()
        if slots.locked():
            waited = get_settings().api_queue_seconds
            WAITING.inc()
            try:
                async with asyncio.timeout(waited):
                    await slots.acquire()
            except TimeoutError:
                OVERLOADED.inc()
                await send_error(scope, send, Overloaded(waited), "ServiceUnavailableException")
                return
            finally:
                WAITING.dec()
        else:
            await slots.acquire()
        try:
            await self.app(scope, receive, send)
        finally:
            slots.release()
