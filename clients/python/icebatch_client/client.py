"""`Icebatch`: the flows people write, one call each, over the generated client.

Every call raises a typed `IcebatchError` (errors.py) for an answer that is not a success;
reads, PUTs and POSTs with their `Idempotency-Key` are retried on connection errors, 429 and
503 (_retry.py). Waiting polls with backoff and `If-None-Match`, so an unchanged batch or job
costs the server a 304.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, Any, TypeVar

import httpx
import pyarrow as pa

from icebatch_client import _generated as gen
from icebatch_client._files import FileSpec, Upload, uploads
from icebatch_client._generated.api.batches import (
    batches_abort,
    batches_complete,
    batches_create,
    batches_revert,
)
from icebatch_client._generated.api.datasets import (
    datasets_create,
    datasets_get,
    datasets_list,
    datasets_snapshots,
)
from icebatch_client._generated.api.maintenance import maintenance_compact, maintenance_vacuum
from icebatch_client._generated.api.privacy import privacy_jobs_create, privacy_jobs_get
from icebatch_client._generated.api.retention import consumers_list, consumers_set
from icebatch_client._generated.models import (
    BatchCreate,
    BatchOut,
    CompactRequest,
    ConsumerCreate,
    DatasetCreate,
    DatasetOut,
    JobOut,
    PrivacyJobCreate,
    PrivacyJobOut,
    SnapshotOut,
    VacuumRequest,
)
from icebatch_client._generated.types import Response
from icebatch_client._retry import RetryTransport
from icebatch_client.errors import BatchFailed, JobFailed, from_response, raise_for

T = TypeVar("T")
IN_FLIGHT_BATCH = frozenset({"loading", "staged", "processing"})
IN_FLIGHT_JOB = frozenset({"queued", "running"})
# a privacy job is done for a caller once its rows are hidden ('complete') or gone ('erased')
PRIVACY_DONE = frozenset({"complete", "erased", "failed"})


@dataclass(frozen=True)
class Changes:
    """An increment: the rows, and the range it covers, (from_snapshot, to_snapshot]."""

    table: pa.Table
    from_snapshot: int | None
    to_snapshot: int | None


@dataclass(frozen=True)
class Increment:
    """What a consumer has not read yet: rows appended and rows deleted over the range."""

    appended: pa.Table
    deleted: pa.Table
    from_snapshot: int | None
    to_snapshot: int | None


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


class Icebatch:
    """A client of one Icebatch API with one API key.

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

    def __enter__(self) -> Icebatch:
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

    # -- datasets -----------------------------------------------------------------------------

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

    def create_dataset(
        self,
        name: str,
        schema: Sequence[dict[str, Any]],
        *,
        partition: Sequence[dict[str, Any]] | None = None,
        identity_columns: Sequence[str] | None = None,
    ) -> DatasetOut:
        """Create a dataset and its Iceberg table."""
        body = DatasetCreate.from_dict(
            {
                "name": name,
                "schema": list(schema),
                "partition": list(partition or []),
                "identity_columns": list(identity_columns or []),
            }
        )
        response = datasets_create.sync_detailed(
            client=self._api, body=body, idempotency_key=_key()
        )
        created: DatasetOut = self._ok(response)
        return created

    def get_dataset(self, dataset: str) -> DatasetOut:
        """One dataset, by id or name."""
        found: DatasetOut = self._ok(
            datasets_get.sync_detailed(self.dataset_id(dataset), client=self._api)
        )
        return found

    def iter_datasets(self) -> Iterator[DatasetOut]:
        """Every dataset of your organization, oldest first."""
        return self._pages(
            lambda cursor: datasets_list.sync_detailed(client=self._api, limit=100, cursor=cursor)
        )

    def snapshots(self, dataset: str) -> list[SnapshotOut]:
        """The dataset's snapshot log, newest first."""
        did = self.dataset_id(dataset)
        return list(
            self._pages(
                lambda cursor: datasets_snapshots.sync_detailed(
                    did, client=self._api, limit=500, cursor=cursor
                )
            )
        )

    # -- batches ------------------------------------------------------------------------------

    def get_batch(self, batch_id: str) -> BatchOut:
        """A batch as it is now (a 304 when it did not change since this client last read it)."""
        return BatchOut.from_dict(self._get_json(f"/v1/batches/{batch_id}"))

    def iter_batches(
        self,
        dataset: str | None = None,
        *,
        status: str | None = None,
        updated_since: datetime | str | None = None,
    ) -> Iterator[BatchOut]:
        """Batches, newest first, of one dataset and status when given."""
        did = self.dataset_id(dataset) if dataset else None
        params: dict[str, Any] = {"limit": 100}
        if did:
            params["dataset_id"] = did
        if status:
            params["status"] = status
        if updated_since is not None:
            params["updated_since"] = (
                updated_since.isoformat() if isinstance(updated_since, datetime) else updated_since
            )
        return self._raw_pages("/v1/batches", params, BatchOut.from_dict)

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

    def wait_batch(
        self,
        batch_id: str,
        *,
        timeout: float | None = None,
        on_progress: Callable[[BatchOut], None] | None = None,
    ) -> BatchOut:
        """Poll the batch until it leaves loading/staged/processing; BatchFailed when it fails."""
        batch = self._wait(
            lambda: self.get_batch(batch_id),
            lambda b: str(b.status) not in IN_FLIGHT_BATCH,
            timeout,
            on_progress,
            f"batch {batch_id}",
        )
        if str(batch.status) == "failed":
            raise BatchFailed(batch)
        return batch

    def open_batch(
        self,
        dataset: str,
        format: str,
        *,
        replay: Sequence[str] | None = None,
        reason: str | None = None,
    ) -> BatchOut:
        """Open a 'loading' batch (upload_batch does this, the files and the rest)."""
        body: dict[str, Any] = {"dataset_id": self.dataset_id(dataset), "format": format}
        if replay:
            body["replay"] = {"predecessors": list(replay), "reason": reason}
        opened: BatchOut = self._ok(
            batches_create.sync_detailed(
                client=self._api, body=BatchCreate.from_dict(body), idempotency_key=_key()
            )
        )
        return opened

    def upload_file(
        self,
        batch_id: str,
        upload: Upload,
        on_upload: Callable[[str, int, int | None], None] | None = None,
    ) -> dict[str, Any]:
        """Stream one file into a loading batch (again from its start on a connection error,
        429 or 503: the same name replaces what a broken try left)."""
        tries = 0
        while True:
            tries += 1
            try:
                response = self._http.put(
                    f"/v1/batches/{batch_id}/files/{upload.name}",
                    content=upload.chunks(on_upload),
                    headers={"Content-Type": "application/octet-stream"},
                    timeout=httpx.Timeout(
                        self._api._timeout.read if self._api._timeout else 30.0, write=None
                    ),
                )
            except httpx.TransportError:
                if tries > 3 or not upload.rewindable:
                    raise
                time.sleep(0.5 * tries)
                continue
            if response.status_code in (429, 503) and tries <= 3 and upload.rewindable:
                time.sleep(float(response.headers.get("Retry-After") or 1))
                continue
            raise_for(response)
            stored: dict[str, Any] = response.json()
            return stored

    def upload_batch(
        self,
        dataset: str,
        files: Iterable[FileSpec],
        *,
        format: str | None = None,
        replay: Sequence[str] | None = None,
        reason: str | None = None,
        wait: bool = True,
        timeout: float | None = None,
        on_upload: Callable[[str, int, int | None], None] | None = None,
        on_progress: Callable[[BatchOut], None] | None = None,
    ) -> BatchOut:
        """Upload `files` as one batch: open it, stream each file, complete it, and (with
        `wait`) return it once it has landed; BatchFailed carries the row-level errors.

        `files`: paths, or `(name, bytes | binary file)` pairs. `format`: csv, json (JSON
        lines) or parquet, from the first file's extension when None. `replay`: the batches
        this one replaces (one snapshot commits its rows and their tombstones).
        """
        items, fmt = uploads(files, format)
        batch = self.open_batch(dataset, fmt, replay=replay, reason=reason)
        for item in items:
            self.upload_file(str(batch.id), item, on_upload)
        completed = self._ok(
            batches_complete.sync_detailed(str(batch.id), client=self._api, idempotency_key=_key())
        )
        if not wait:
            landed: BatchOut = completed.batch
            return landed
        return self.wait_batch(str(batch.id), timeout=timeout, on_progress=on_progress)

    def abort(self, batch_id: str) -> BatchOut:
        """Abort a loading batch."""
        acted = self._ok(
            batches_abort.sync_detailed(batch_id, client=self._api, idempotency_key=_key())
        )
        aborted: BatchOut = acted.batch
        return aborted

    def revert(
        self,
        batch_id: str,
        *,
        wait: bool = True,
        timeout: float | None = None,
        on_progress: Callable[[JobOut], None] | None = None,
    ) -> BatchOut:
        """Revert a 'success' batch (a tombstone hides its rows); with `wait`, once committed."""
        acted = self._ok(
            batches_revert.sync_detailed(batch_id, client=self._api, idempotency_key=_key())
        )
        if wait and acted.job:
            self.wait_job(str(acted.job.id), timeout=timeout, on_progress=on_progress)
            return self.get_batch(batch_id)
        reverted: BatchOut = acted.batch
        return reverted

    def replay(
        self,
        dataset: str,
        predecessors: Sequence[str],
        files: Iterable[FileSpec],
        *,
        format: str | None = None,
        reason: str | None = None,
        wait: bool = True,
        timeout: float | None = None,
        on_upload: Callable[[str, int, int | None], None] | None = None,
        on_progress: Callable[[BatchOut], None] | None = None,
    ) -> BatchOut:
        """Replace `predecessors`' rows with `files`' in one snapshot (a replay batch)."""
        return self.upload_batch(
            dataset,
            files,
            format=format,
            replay=predecessors,
            reason=reason,
            wait=wait,
            timeout=timeout,
            on_upload=on_upload,
            on_progress=on_progress,
        )

    # -- privacy ------------------------------------------------------------------------------

    def gdpr_delete(
        self,
        dataset_ids: Sequence[str] | str,
        column: str,
        values: Iterable[Any],
        *,
        wait: bool = True,
        timeout: float | None = None,
        on_progress: Callable[[PrivacyJobOut], None] | None = None,
    ) -> PrivacyJobOut:
        """Hide every row whose `column` holds one of `values` in these datasets (ids or
        names); with `wait`, return once 'complete' (then a vacuum makes it 'erased')."""
        names = [dataset_ids] if isinstance(dataset_ids, str) else list(dataset_ids)
        body = PrivacyJobCreate.from_dict(
            {
                "dataset_ids": [self.dataset_id(d) for d in names],
                "column": column,
                "values": [str(v) for v in values],
            }
        )
        job: PrivacyJobOut = self._ok(
            privacy_jobs_create.sync_detailed(client=self._api, body=body, idempotency_key=_key())
        )
        if not wait:
            return job
        done = self._wait(
            lambda: self.get_privacy_job(str(job.id)),
            lambda j: str(j.status) in PRIVACY_DONE,
            timeout,
            on_progress,
            f"privacy job {job.id}",
        )
        if str(done.status) == "failed":
            raise JobFailed(done)
        return done

    def get_privacy_job(self, job_id: str) -> PrivacyJobOut:
        """A privacy job: status per dataset, tombstones, rows hidden, the erasure receipt."""
        found: PrivacyJobOut = self._ok(privacy_jobs_get.sync_detailed(job_id, client=self._api))
        return found

    # -- jobs and maintenance -----------------------------------------------------------------

    def get_job(self, job_id: str) -> JobOut:
        """A job as it is now (304-cheap when unchanged)."""
        return JobOut.from_dict(self._get_json(f"/v1/jobs/{job_id}"))

    def iter_jobs(self, *, state: str | None = None, kind: str | None = None) -> Iterator[JobOut]:
        """Your organization's jobs, newest first."""
        params: dict[str, Any] = {"limit": 100}
        if state:
            params["state"] = state
        if kind:
            params["kind"] = kind
        return self._raw_pages("/v1/jobs", params, JobOut.from_dict)

    def wait_job(
        self,
        job_id: str,
        *,
        timeout: float | None = None,
        on_progress: Callable[[JobOut], None] | None = None,
    ) -> JobOut:
        """Poll the job until it ends; JobFailed when it failed."""
        job = self._wait(
            lambda: self.get_job(job_id),
            lambda j: str(j.state) not in IN_FLIGHT_JOB,
            timeout,
            on_progress,
            f"job {job_id}",
        )
        if str(job.state) == "failed":
            raise JobFailed(job)
        return job

    def vacuum(
        self,
        dataset: str,
        *,
        mode: str = "full",
        max_files: int | None = None,
        dry_run: bool = False,
        wait: bool = True,
        timeout: float | None = None,
        on_progress: Callable[[JobOut], None] | None = None,
        **budgets: int,
    ) -> JobOut:
        """Purge tombstoned rows and tombstones (admin key); `budgets`: max_bytes, tombstones."""
        body: dict[str, Any] = {"mode": mode, "dry_run": dry_run, **budgets}
        if max_files is not None:
            body["max_files"] = max_files
        job: JobOut = self._ok(
            maintenance_vacuum.sync_detailed(
                self.dataset_id(dataset),
                client=self._api,
                body=VacuumRequest.from_dict(body),
                idempotency_key=_key(),
            )
        )
        return self.wait_job(str(job.id), timeout=timeout, on_progress=on_progress) if wait else job

    def compact(
        self,
        dataset: str,
        *,
        wait: bool = True,
        timeout: float | None = None,
        on_progress: Callable[[JobOut], None] | None = None,
        **options: Any,
    ) -> JobOut:
        """Bin-pack or sort the dataset's files (admin key); `options` as the API's body."""
        job: JobOut = self._ok(
            maintenance_compact.sync_detailed(
                self.dataset_id(dataset),
                client=self._api,
                body=CompactRequest.from_dict(options),
                idempotency_key=_key(),
            )
        )
        return self.wait_job(str(job.id), timeout=timeout, on_progress=on_progress) if wait else job

    # -- reads --------------------------------------------------------------------------------

    def _arrow(self, path: str, params: dict[str, Any]) -> tuple[pa.Table, httpx.Headers]:
        with self._http.stream("GET", path, params={**params, "format": "arrow"}) as response:
            raise_for(response)
            data = response.read()
        if not data:
            return pa.table({}), response.headers
        return pa.ipc.open_stream(data).read_all(), response.headers

    def read_rows(self, dataset: str, *, as_of: int | str | datetime | None = None) -> pa.Table:
        """The rows visible now, or at `as_of` (a snapshot id or a time)."""
        params: dict[str, Any] = {}
        if as_of is not None:
            params["as_of"] = as_of.isoformat() if isinstance(as_of, datetime) else str(as_of)
        table, _ = self._arrow(f"/v1/datasets/{self.dataset_id(dataset)}/rows", params)
        return table

    def changes(
        self,
        dataset: str,
        *,
        since_snapshot: int | None = None,
        to_snapshot: int | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        kind: str = "appended",
    ) -> Changes:
        """The rows `kind` (appended or deleted) over (since_snapshot, to_snapshot]; the range
        the server resolved comes back with them."""
        params: dict[str, Any] = {"kind": kind}
        for name, value in (
            ("from_snapshot", since_snapshot),
            ("to_snapshot", to_snapshot),
            ("since", since),
            ("until", until),
        ):
            if value is not None:
                params[name] = value.isoformat() if isinstance(value, datetime) else value
        table, headers = self._arrow(f"/v1/datasets/{self.dataset_id(dataset)}/changes", params)
        return Changes(
            table,
            _snapshot(headers.get("X-Icebatch-From-Snapshot")),
            _snapshot(headers.get("X-Icebatch-To-Snapshot")),
        )

    def consumer(self, dataset: str, name: str) -> Consumer:
        """A consumer reading the dataset's increments from its server-side checkpoint."""
        return Consumer(self, self.dataset_id(dataset), name)


class Consumer:
    """Reads each increment once: from its checkpoint (kept by the server, which pins the
    snapshots it needs) to the current snapshot; `commit` moves the checkpoint on."""

    def __init__(self, client: Icebatch, dataset_id: str, name: str) -> None:
        self.client, self.dataset_id, self.name = client, dataset_id, name

    def checkpoint(self) -> int | None:
        """The snapshot the next increment starts after (None: from the empty table)."""
        for consumer in self.client._pages(
            lambda cursor: consumers_list.sync_detailed(
                self.dataset_id, client=self.client._api, limit=500, cursor=cursor
            )
        ):
            if consumer.name == self.name:
                found = consumer.snapshot_id
                return found if isinstance(found, int) else None
        return None

    def next_increment(self) -> Increment:
        """The rows appended and deleted since the checkpoint, up to the current snapshot."""
        start = self.checkpoint()
        appended = self.client.changes(self.dataset_id, since_snapshot=start, kind="appended")
        deleted = self.client.changes(
            self.dataset_id, since_snapshot=start, to_snapshot=appended.to_snapshot, kind="deleted"
        )
        return Increment(appended.table, deleted.table, start, appended.to_snapshot)

    def commit(self, increment: Increment) -> None:
        """Move the checkpoint to the increment's end: the next read starts after it."""
        if increment.to_snapshot is None:
            return
        body = ConsumerCreate.from_dict({"name": self.name, "snapshot_id": increment.to_snapshot})
        self.client._ok(
            consumers_set.sync_detailed(self.dataset_id, client=self.client._api, body=body)
        )


__all__ = ["Changes", "Consumer", "Icebatch", "Increment", "IO", "Path"]
