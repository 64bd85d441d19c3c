"""What every call of the SDK shares: the generated client under the retrying transport,
problem+json errors, conditional GETs, pages, waits, and datasets named by id or name."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import httpx

from icebatch_client import _generated as gen
from icebatch_client._generated.api.datasets import datasets_list
from icebatch_client._generated.models import DatasetOut
from icebatch_client._generated.types import Response
from icebatch_client._retry import RetryTransport
from icebatch_client.errors import from_response, raise_for

T = TypeVar("T")


def _is_id(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _key() -> str:
    return str(uuid.uuid4())


def _snapshot(value: str | None) -> int | None:
    return int(value) if value else None


class Base:
    """A client of one Icebatch API with one API key (`Icebatch` adds the flows).

    Args:
        base_url: e.g. `http://127.0.0.1:8000` (default: `ICEBATCH_URL`).
        api_key: `ib_…` (default: `ICEBATCH_API_KEY`).
        timeout: seconds for one HTTP request (uploads and reads stream within it per chunk).
        max_retries: tries after the first on connection errors, 429 and 503.
        poll_interval: the first wait between two polls of a batch or job (it doubles to
            `max_poll_interval`).
        transport: the httpx transport under the retries (default: plain HTTP).
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        max_retries: int = 5,
        poll_interval: float = 0.25,
        max_poll_interval: float = 5.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        base_url = base_url or os.environ.get("ICEBATCH_URL")
        api_key = api_key or os.environ.get("ICEBATCH_API_KEY")
        if not base_url or not api_key:
            raise ValueError("pass base_url and api_key, or set ICEBATCH_URL and ICEBATCH_API_KEY")
        retrying = RetryTransport(transport or httpx.HTTPTransport(), max_retries)
        self._api = gen.AuthenticatedClient(
            base_url=base_url.rstrip("/"),
            token=api_key,
            timeout=httpx.Timeout(timeout),
            raise_on_unexpected_status=False,
            headers={"User-Agent": "icebatch-client"},
            httpx_args={"transport": retrying},
        )
        self._http = self._api.get_httpx_client()
        self.poll_interval, self.max_poll_interval = poll_interval, max_poll_interval
        self._etags: dict[str, tuple[str, dict[str, Any]]] = {}

    # -- plumbing ---------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def __enter__(self: T) -> T:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @staticmethod
    def _ok(response: Response[Any]) -> Any:
        """The parsed body of a success; the typed error otherwise."""
        if int(response.status_code) >= 400:
            raise from_response(int(response.status_code), response.content, response.headers)
        return response.parsed

    def _get_json(self, path: str) -> dict[str, Any]:
        """GET `path`, conditionally when it was read before: an unchanged object is a 304."""
        known = self._etags.get(path)
        headers = {"If-None-Match": known[0]} if known else {}
        response = self._http.get(path, headers=headers)
        raise_for(response)
        if response.status_code == 304 and known:
            return known[1]
        data: dict[str, Any] = response.json()
        etag = response.headers.get("ETag")
        if etag:
            self._etags[path] = (etag, data)
        return data

    def _pages(self, fetch: Callable[[str | None], Response[Any]]) -> Iterator[Any]:
        """Every item of a list, following `next` page by page."""
        cursor: str | None = None
        while True:
            page = self._ok(fetch(cursor))
            yield from page.items
            cursor = page.next_ if hasattr(page, "next_") else page.next
            if not cursor:
                return

    def _wait(
        self,
        read: Callable[[], T],
        done: Callable[[T], bool],
        timeout: float | None,
        on_progress: Callable[[T], None] | None,
        what: str,
    ) -> T:
        """Poll `read` with backoff until `done`; TimeoutError after `timeout` seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = self.poll_interval
        while True:
            current = read()
            if on_progress is not None:
                on_progress(current)
            if done(current):
                return current
            if deadline is not None and time.monotonic() + pause > deadline:
                raise TimeoutError(f"{what} did not finish within {timeout} s")
            time.sleep(pause)
            pause = min(pause * 2, self.max_poll_interval)

    def _raw_pages(
        self, path: str, params: dict[str, Any], parse: Callable[[dict[str, Any]], T]
    ) -> Iterator[T]:
        """Every item of a list read without the generated function (query parameters it may
        not know yet, such as `updated_since`)."""
        params = dict(params)
        while True:
            response = self._http.get(path, params=params)
            raise_for(response)
            page = response.json()
            yield from (parse(item) for item in page["items"])
            if not page.get("next"):
                return
            params["cursor"] = page["next"]

    # -- datasets by id or name -------------------------------------------------------------

    def dataset_id(self, dataset: str) -> str:
        """The id of a dataset given by id or by name (NotFound-like KeyError otherwise)."""
        if _is_id(dataset):
            return dataset
        for found in self.iter_datasets():
            if found.name == dataset:
                return str(found.id)
        raise from_response(
            404,
            f'{{"title": "Not found", "detail": "no dataset named {dataset!s} in your '
            f'organization"}}'.encode(),
            httpx.Headers(),
        )

    def iter_datasets(self) -> Iterator[DatasetOut]:
        """Every dataset of your organization, oldest first."""
        return self._pages(
            lambda cursor: datasets_list.sync_detailed(client=self._api, limit=100, cursor=cursor)
        )
