"""The Icebatch Python SDK: `Icebatch` (and its async twin `AsyncIcebatch`) over a client
generated from the API's OpenAPI contract (`icebatch_client._generated`, never edited by hand).

    from icebatch_client import Icebatch
    ib = Icebatch("http://127.0.0.1:8000", "ib_…")
    batch = ib.upload_batch("events", ["day1.csv"])       # waits; BatchFailed on bad rows
    ib.read_rows("events", as_of=batch.snapshot_id)       # a pyarrow.Table
"""

from typing import TYPE_CHECKING, Any

from icebatch_client.client import Icebatch
from icebatch_client.errors import (
    BatchFailed,
    Conflict,
    Forbidden,
    Gone,
    IcebatchError,
    JobFailed,
    NotFound,
    PayloadTooLarge,
    RateLimited,
    ServiceUnavailable,
    Unauthorized,
    ValidationFailed,
)
from icebatch_client.reads import Changes, Consumer, Increment

if TYPE_CHECKING:
    from icebatch_client import _generated as generated
    from icebatch_client.aio import AsyncIcebatch


def __getattr__(name: str) -> Any:
    """`AsyncIcebatch` (anyio) and `generated` are imported when first used: a synchronous
    client (the `icebatch` CLI) starts without them."""
    if name == "AsyncIcebatch":
        from icebatch_client.aio import AsyncIcebatch

        return AsyncIcebatch
    if name == "generated":
        from icebatch_client import _generated

        return _generated
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AsyncIcebatch",
    "BatchFailed",
    "Changes",
    "Conflict",
    "Consumer",
    "Forbidden",
    "Gone",
    "Icebatch",
    "IcebatchError",
    "Increment",
    "JobFailed",
    "NotFound",
    "PayloadTooLarge",
    "RateLimited",
    "ServiceUnavailable",
    "Unauthorized",
    "ValidationFailed",
    "generated",
]
