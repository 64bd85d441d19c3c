"""`Icebatch`: the flows people write, one call each, over the generated client (the shared
plumbing is in _base.py, reads in reads.py).

Every call raises a typed `IcebatchError` (errors.py) for an answer that is not a success;
reads, PUTs and POSTs with their `Idempotency-Key` are retried on connection errors, 429 and
503 (_retry.py). Waiting polls with backoff and `If-None-Match`, so an unchanged batch or job
costs the server a 304.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any, TypeVar

import httpx

from icebatch_client._base import _key
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
    datasets_snapshots,
)
from icebatch_client._generated.api.maintenance import maintenance_compact, maintenance_vacuum
from icebatch_client._generated.api.privacy import privacy_jobs_create, privacy_jobs_get
from icebatch_client._generated.models import (
    BatchCreate,
    BatchOut,
    CompactRequest,
    DatasetCreate,
    DatasetOut,
    JobOut,
    PrivacyJobCreate,
    PrivacyJobOut,
    SnapshotOut,
    VacuumRequest,
)
from icebatch_client.cdc import Cdc
from icebatch_client.errors import BatchFailed, JobFailed, raise_for
from icebatch_client.reads import Reads

T = TypeVar("T")
IN_FLIGHT_BATCH = frozenset({"loading", "staged", "processing"})
IN_FLIGHT_JOB = frozenset({"queued", "running"})
# a privacy job is done for a caller once its rows are hidden ('complete') or gone ('erased')
PRIVACY_DONE = frozenset({"complete", "erased", "failed"})


class Icebatch(Reads, Cdc):
    """A client of one Icebatch API with one API key: datasets, batches, restatements, jobs and
    maintenance here; reads in `Reads`, CDC replication in `Cdc`, the shared plumbing in `Base`
    (same arguments).
    """

    # -- datasets -----------------------------------------------------------------------------

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
