"""Typed exceptions built from the API's problem+json answers (RFC 9457)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx


class IcebatchError(Exception):
    """An answer of the API that is not a success.

    Attributes:
        status: the HTTP status. title, detail: the problem's (detail says what to fix).
        request_id: the `X-Request-Id` of the answer (quote it when asking for help).
        problem: the whole problem+json body (extension members included).
    """

    def __init__(
        self, status: int, title: str, detail: str, request_id: str | None, problem: dict[str, Any]
    ) -> None:
        super().__init__(f"{status} {title}: {detail}" + (f" [{request_id}]" if request_id else ""))
        self.status, self.title, self.detail = status, title, detail
        self.request_id, self.problem = request_id, problem


class Unauthorized(IcebatchError):
    """401: the key is missing, unknown, revoked or expired."""


class Forbidden(IcebatchError):
    """403: the key's scope is too small for the call."""


class NotFound(IcebatchError):
    """404: no such object in your organization."""


class Conflict(IcebatchError):
    """409: the object's state does not allow the call (e.g. completing a finished batch)."""


class Gone(IcebatchError):
    """410: it existed once and was removed (e.g. a snapshot expired by retention)."""


class PayloadTooLarge(IcebatchError):
    """413: the file exceeds the upload limit."""


class ValidationFailed(IcebatchError):
    """422 (or 400): the input is invalid; `problem["errors"]` lists the fields when known."""


class RateLimited(IcebatchError):
    """429 after the retries: the organization's fair-use limit."""


class ServiceUnavailable(IcebatchError):
    """503 (or 507, or another 5xx) after the retries."""


class BatchFailed(Exception):
    """The batch ended 'failed': `errors` are its row-level errors ({file, row, field, value,
    reason})."""

    def __init__(self, batch: Any) -> None:
        self.batch = batch
        data = batch.to_dict() if hasattr(batch, "to_dict") else dict(batch)
        self.errors: list[dict[str, Any]] = list(data.get("errors") or [])
        first = self.errors[0].get("reason") if self.errors else "no error reported"
        super().__init__(f"batch {data.get('id')} failed: {len(self.errors)} error(s); {first}")


class JobFailed(Exception):
    """The job ended 'failed' (its `error` says why)."""

    def __init__(self, job: Any) -> None:
        self.job = job
        data = job.to_dict() if hasattr(job, "to_dict") else dict(job)
        super().__init__(f"job {data.get('id')} ({data.get('kind')}) failed: {data.get('error')}")


_BY_STATUS: dict[int, type[IcebatchError]] = {
    400: ValidationFailed,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    410: Gone,
    413: PayloadTooLarge,
    422: ValidationFailed,
    429: RateLimited,
}


def from_response(status: int, content: bytes, headers: Mapping[str, str]) -> IcebatchError:
    """The typed exception for a failed answer (its problem+json, or whatever came)."""
    try:
        problem = json.loads(content) if content else {}
    except ValueError:
        problem = {}
    if not isinstance(problem, dict):
        problem = {"detail": problem}
    text = content.decode(errors="replace")[:500]
    title = str(problem.get("title") or httpx.codes.get_reason_phrase(status) or "Error")
    detail = str(problem.get("detail") or text or title)
    kind = _BY_STATUS.get(status, ServiceUnavailable if status >= 500 else IcebatchError)
    return kind(status, title, detail, headers.get("X-Request-Id"), problem)


def raise_for(response: httpx.Response) -> None:
    """Raise the typed exception when `response` is not a success (2xx or 304)."""
    if response.is_success or response.status_code == 304:
        return
    response.read()
    raise from_response(response.status_code, response.content, response.headers)
