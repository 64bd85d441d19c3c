"""Domain errors, rendered as RFC 9457 problem+json in one place (app.main)."""

from __future__ import annotations

from typing import Any


class AppError(Exception):
    """Base of every error the API reports; `detail` says what to fix."""

    status: int = 400
    title: str = "Bad request"
    type_slug: str = "bad-request"
    headers: dict[str, str] | None = None  # sent with the problem (e.g. Retry-After)

    def __init__(self, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extra = extra

    def problem(self, instance: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "type": f"https://icebatch.dev/problems/{self.type_slug}",
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
        }
        if instance:
            body["instance"] = instance
        body.update(self.extra)
        return body


class Unauthorized(AppError):
    status, title, type_slug = 401, "Unauthorized", "unauthorized"


class Forbidden(AppError):
    """The key is valid but its scope is too small for the call."""

    status, title, type_slug = 403, "Forbidden", "forbidden"


class NotFound(AppError):
    status, title, type_slug = 404, "Not found", "not-found"


class Conflict(AppError):
    status, title, type_slug = 409, "Conflict", "conflict"


class Gone(AppError):
    """What was asked for existed once and was removed (e.g. a snapshot expired by retention)."""

    status, title, type_slug = 410, "Gone", "gone"


class InvalidInput(AppError):
    status, title, type_slug = 422, "Invalid input", "invalid-input"


class PayloadTooLarge(AppError):
    status, title, type_slug = 413, "Payload too large", "payload-too-large"


class InsufficientStorage(AppError):
    """The server ran out of space for what it was asked to keep (RFC 4918 §11.5)."""

    status, title, type_slug = 507, "Insufficient storage", "insufficient-storage"


class TooManyRequests(AppError):
    """A fair-use limit of the org (`app.limits`): `Retry-After` says when to try again."""

    status, title, type_slug = 429, "Too many requests", "too-many-requests"

    def __init__(
        self, detail: str, *, limit: str, retry_after: int, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(detail, limit=limit, retry_after_seconds=retry_after)
        self.headers = {"Retry-After": str(retry_after), **(headers or {})}


class DatasetNotFound(NotFound):
    def __init__(self, dataset_id: str) -> None:
        super().__init__(f"dataset {dataset_id!r} does not exist in your organization")


class DatasetExists(Conflict):
    def __init__(self, name: str) -> None:
        super().__init__(f"a dataset named {name!r} already exists; pick another name")


class BatchNotFound(NotFound):
    def __init__(self, batch_id: str) -> None:
        super().__init__(f"batch {batch_id!r} does not exist in your organization")


class BatchStateConflict(Conflict):
    def __init__(self, batch_id: str, status: str, wanted: str) -> None:
        super().__init__(
            f"batch {batch_id!r} is {status!r}; {wanted}",
            batch_status=status,
        )


class JobNotFound(NotFound):
    def __init__(self, job_id: str) -> None:
        super().__init__(f"job {job_id!r} does not exist in your organization")


class KeyNotFound(NotFound):
    def __init__(self, key_id: str) -> None:
        super().__init__(f"API key {key_id!r} does not exist in your organization")


class SnapshotNotFound(NotFound):
    def __init__(self, detail: str) -> None:
        super().__init__(detail)


class StoreUnavailable(AppError):
    """The metadata store did not answer (down, restarting, out of connections): retry later."""

    status, title, type_slug = 503, "Service unavailable", "store-unavailable"

    def __init__(self, retry_after: int) -> None:
        super().__init__(
            "the metadata store is unavailable; nothing was changed: retry the request after "
            f"{retry_after} s (with the same Idempotency-Key, if it had one)",
            retry_after_seconds=retry_after,
        )
        self.retry_after = retry_after
