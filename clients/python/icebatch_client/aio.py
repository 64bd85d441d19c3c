"""`AsyncIcebatch`: the same calls as `Icebatch`, awaitable.

Each call runs the synchronous client's in a worker thread (anyio), so both share one
implementation of every flow, retry and wait; many calls may be awaited at once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import anyio.to_thread

from icebatch_client.client import Icebatch

T = TypeVar("T")


class AsyncIcebatch:
    """The async twin of `Icebatch` (same arguments, same methods, awaited).

    `iter_*` methods return lists here (every page read).
    """

    def __init__(self, base_url: str | None = None, api_key: str | None = None, **options: Any):
        self.sync = Icebatch(base_url, api_key, **options)

    async def aclose(self) -> None:
        await anyio.to_thread.run_sync(self.sync.close)

    async def __aenter__(self) -> AsyncIcebatch:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.sync, name)
        if not callable(method) or name.startswith("_"):
            raise AttributeError(name)

        @functools.wraps(method)
        async def call(*args: Any, **kwargs: Any) -> Any:
            def run() -> Any:
                result = method(*args, **kwargs)
                return list(result) if isinstance(result, Iterator) else result

            return await anyio.to_thread.run_sync(run)

        return call
