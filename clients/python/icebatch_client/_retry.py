"""Retries below the generated client: an httpx transport that retries connection errors, 429
and 503 with backoff, honouring `Retry-After`.

Only requests that are safe to send again are retried: reads, PUT/DELETE, and POSTs that carry
an `Idempotency-Key` (the facade gives every logical POST one, so its retries get the first
answer instead of acting twice). A streamed body cannot be sent twice: uploads retry above.
"""

from __future__ import annotations

import httpx
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_random_exponential,
)

RETRY_STATUSES = frozenset({429, 503})
MAX_RETRY_AFTER = 60.0
_backoff = wait_random_exponential(multiplier=0.25, max=8)


class _RetryableAnswer(Exception):
    def __init__(self, response: httpx.Response) -> None:
        super().__init__(response.status_code)
        self.response = response


def retry_after(headers: httpx.Headers) -> float | None:
    """The seconds `Retry-After` asks for (delta form), when it says."""
    value = headers.get("Retry-After", "")
    try:
        return min(max(float(value), 0.0), MAX_RETRY_AFTER)
    except ValueError:
        return None


def _wait(state: RetryCallState) -> float:
    failure = state.outcome.exception() if state.outcome else None
    if isinstance(failure, _RetryableAnswer):
        asked = retry_after(failure.response.headers)
        if asked is not None:
            return asked
    return float(_backoff(state))


def replayable(request: httpx.Request) -> bool:
    """Whether sending `request` again cannot do its work twice, and its body can be resent."""
    if not isinstance(request.stream, httpx.ByteStream):
        return False
    if request.method in ("GET", "HEAD", "PUT", "DELETE", "OPTIONS"):
        return True
    return "Idempotency-Key" in request.headers


class RetryTransport(httpx.BaseTransport):
    """`inner`, with up to `max_retries` more tries of a replayable request."""

    def __init__(self, inner: httpx.BaseTransport, max_retries: int) -> None:
        self.inner, self.max_retries = inner, max_retries

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self.max_retries <= 0 or not replayable(request):
            return self.inner.handle_request(request)
        retrying = Retrying(
            stop=stop_after_attempt(self.max_retries + 1),
            wait=_wait,
            retry=retry_if_exception_type((_RetryableAnswer, httpx.TransportError)),
            reraise=True,
        )
        try:
            for attempt in retrying:
                with attempt:
                    response = self.inner.handle_request(request)
                    if response.status_code in RETRY_STATUSES:
                        response.read()
                        response.close()
                        raise _RetryableAnswer(response)
                    return response
        except _RetryableAnswer as last:  # out of tries: the caller sees the last answer
            return last.response
        raise AssertionError("unreachable: tenacity returns or raises")

    def close(self) -> None:
        self.inner.close()
