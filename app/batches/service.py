"""Batches: open, receive files into staging, complete (queue the ingest job), abort."""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from pyiceberg.table.snapshots import Snapshot
from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from app import clock
from app.batches import repository
from app.batches.schemas import (
    BatchCreate,
)
from app.config import get_settings
from app.datasets import service as datasets
from app.errors import (
    BatchNotFound,
    BatchStateConflict,
    Conflict,
    InsufficientStorage,
    InvalidInput,
    PayloadTooLarge,
)
from app.jobs import service as jobs
from app.jobs.kinds import JobKind
from app.lake import snapshots
from app.models import (
    Batch,
    BatchFile,
    BatchStatus,
    CdcTenant,
    Job,
)
from app.models.base import utcnow

FILE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$")
# a batch the workers move: its job started, retried, or its replay is being staged
IN_FLIGHT = (BatchStatus.STAGED, BatchStatus.PROCESSING)
OUT_OF_SPACE = (errno.ENOSPC, errno.EDQUOT)


def open_batch(session: Session, org: str, request: BatchCreate) -> Batch:
    dataset_id = datasets.resolve(session, org, request.dataset_id).id  # its id or its name
    if session.scalar(select(CdcTenant.org).where(CdcTenant.raw_dataset_id == dataset_id)):
        raise Conflict(
            "this dataset is a CDC raw table: only its processor writes it (POST /v1/cdc/events)"
        )
    replay = request.replay.model_dump() if request.replay is not None else None
    batch = Batch(org=org, dataset_id=dataset_id, format=request.format, replay=replay)
    session.add(batch)
    session.flush()
    return batch


def staging_path(batch_id: str, name: str) -> Path:
    return get_settings().staging_dir / batch_id / name


async def store_file(
    session: Session, org: str, batch_id: str, name: str, body: AsyncIterator[bytes]
) -> BatchFile:
    """Stream one upload to staging, size-limited; a re-upload of a name replaces it.

    The database work runs in the thread pool: it may wait on the batch's row lock, which
    must never block the event loop that the lock holder needs to finish its request.
    """
    if not FILE_NAME_RE.match(name) or ".." in name:
        raise InvalidInput(
            "file names are 1-255 characters: letters, digits, '.', '_' and '-', "
            "starting with a letter or digit"
        )
    await run_in_threadpool(_check_upload, session, org, batch_id, name, False)
    target = staging_path(batch_id, name)
    partial = target.with_name(f".{name}.{uuid.uuid4().hex}.part")  # one per upload
    try:
        try:
            size, sha256 = await _stream_to(partial, body, name)
        except OSError as exc:
            if exc.errno not in OUT_OF_SPACE:
                raise
            partial.unlink(missing_ok=True)
            async for _ in body:  # read the rest, so the client gets this answer, not a reset
                pass
            raise InsufficientStorage(
                f"the staging area ran out of space while storing file {name!r}; nothing of "
                f"this upload was kept and batch {batch_id!r} is still 'loading': upload the "
                "file again once space is freed (an operator frees or grows the staging "
                "folder, ICEBATCH_STAGING_DIR)",
                batch_id=batch_id,
                file=name,
            ) from None
        return await run_in_threadpool(
            _record_upload, session, org, batch_id, name, partial, size, sha256
        )
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


async def _stream_to(partial: Path, body: AsyncIterator[bytes], name: str) -> tuple[int, str]:
    """Write the upload to `partial` unbuffered (a full disk fails the write that hit it, not
    a later flush); its size and sha256."""
    partial.parent.mkdir(parents=True, exist_ok=True)
    limit = get_settings().max_file_bytes
    digest, size = hashlib.sha256(), 0
    with partial.open("wb", buffering=0) as out:
        async for chunk in body:
            size += len(chunk)
            if size > limit:
                raise PayloadTooLarge(
                    f"file {name!r} exceeds {limit} bytes; "
                    "split it into several files of the same batch"
                )
            digest.update(chunk)
            view = memoryview(chunk)
            while view:  # a raw write may take part of the chunk
                view = view[out.write(view) :]
    if size == 0:
        raise InvalidInput(f"file {name!r} is empty")
    return size, digest.hexdigest()


def _check_upload(
    session: Session, org: str, batch_id: str, name: str, lock: bool
) -> tuple[Batch, BatchFile | None]:
    batch = repository.get(session, org, batch_id, for_update=lock)
    _require_loading(batch, "files can only be added while it is 'loading'")
    existing = repository.file_by_name(session, batch_id, name)
    limit = get_settings().max_batch_files
    if existing is None and batch.file_count >= limit:
        raise InvalidInput(f"a batch holds at most {limit} files")
    return batch, existing


def _record_upload(
    session: Session,
    org: str,
    batch_id: str,
    name: str,
    partial: Path,
    size: int,
    sha256: str,
) -> BatchFile:
    """Under the batch's lock (a COMPLETE, ABORT or another upload may have happened while the
    body streamed): check again, move the file in place, count it."""
    batch, existing = _check_upload(session, org, batch_id, name, True)
    target = staging_path(batch_id, name)
    os.replace(partial, target)
    if existing is None:
        existing = BatchFile(batch_id=batch_id, name=name, path=str(target), bytes=0, sha256="")
        session.add(existing)
        batch.file_count += 1
    batch.bytes += size - existing.bytes
    existing.bytes, existing.sha256 = size, sha256
    # the batch's row moves with every upload, even one replacing a file of the same size: its
    # `updated_at` is what its ETag (and the API's caches) see change
    batch.updated_at = utcnow()
    session.flush()
    return existing


def complete(
    session: Session, org: str, batch_id: str, *, replay: Callable[[Session, Batch], Job]
) -> tuple[Batch, Job]:
    """Seal the batch and queue its job (published after this transaction commits): an ingest
    job, or for a replay batch the job `replay` queues (the restatements domain's)."""
    batch = repository.get(session, org, batch_id, for_update=True)
    _require_loading(batch, "only a 'loading' batch can be completed")
    if batch.file_count == 0:
        raise InvalidInput(f"batch {batch_id!r} has no files; upload at least one first")
    if batch.replay:
        job = replay(session, batch)
    else:
        job = jobs.enqueue(session, JobKind.INGEST, org=org, subject_id=batch.id)
    _move(batch, BatchStatus.STAGED, (BatchStatus.LOADING,))
    batch.job_id = job.id
    return batch, job


def abort(session: Session, org: str, batch_id: str) -> Batch:
    batch = repository.get(session, org, batch_id, for_update=True)
    _require_loading(batch, "only a 'loading' batch can be aborted")
    _move(batch, BatchStatus.ABORTED, (BatchStatus.LOADING,))
    batch.completed_at = clock.now()
    shutil.rmtree(get_settings().staging_dir / batch.id, ignore_errors=True)
    return batch


# Transitions made by the workers, each from the states it may start from. A worker calls them
# inside its job's fenced transaction (`JobContext.fenced`), so one that lost its job cannot
# move the batch. An unexpected state is a bug or a race lost: BatchStateConflict, never a
# silent overwrite.


def start_processing(session: Session, batch_id: str) -> Batch:
    """staged → processing (a retried attempt finds it processing already)."""
    batch = _locked(session, batch_id)
    _move(batch, BatchStatus.PROCESSING, IN_FLIGHT)
    return batch


def succeed(session: Session, batch_id: str, *, snapshot: Snapshot, row_count: int | None) -> None:
    """processing → success: its rows are in `snapshot`, whose commit time it completed at
    (not this worker's clock, which may disagree with the one snapshots are named by)."""
    batch = _locked(session, batch_id)
    _move(batch, BatchStatus.SUCCESS, IN_FLIGHT)
    batch.snapshot_id, batch.row_count, batch.errors = snapshot.snapshot_id, row_count, None
    batch.completed_at = snapshots.committed_at(snapshot)


def fail(
    session: Session, batch_id: str, errors: list[dict[str, Any]], row_count: int | None = None
) -> None:
    """staged|processing → failed, with its row-level errors; the table is untouched."""
    batch = _locked(session, batch_id)
    _move(batch, BatchStatus.FAILED, IN_FLIGHT)
    batch.errors = errors
    if row_count is not None:
        batch.row_count = row_count
    batch.completed_at = clock.now()


def record_errors(
    session: Session, batch_id: str, errors: list[dict[str, Any]], row_count: int
) -> None:
    """Row-level errors of an in-flight batch whose failure its job's hook will record."""
    batch = _locked(session, batch_id)
    if batch.status not in IN_FLIGHT:
        raise BatchStateConflict(batch.id, batch.status, "errors are recorded while in flight")
    batch.errors, batch.row_count = errors, row_count


def restated(
    session: Session, restatement_id: str, batch_ids: list[str], to: BatchStatus, at: Snapshot
) -> None:
    """success → reverted|replaced, for the batches `restatement_id` reserved, by snapshot `at`:
    their `restated_at` is its commit time (`completed_at` stays when they landed)."""
    for batch in repository.reserved_by(session, restatement_id, batch_ids):
        _move(batch, to, (BatchStatus.SUCCESS,))
        batch.restated_at = snapshots.committed_at(at)


def release(session: Session, restatement_id: str) -> None:
    """The batches a failed restatement reserved can be restated again."""
    repository.release(session, restatement_id)


def ingest_failed(session: Session, job: Job, error: str) -> None:
    """An ingest job failed for good: its batch fails with the job's error, unless it already
    failed with row-level errors."""
    batch = session.get(Batch, job.subject_id)
    if batch is not None and batch.status in IN_FLIGHT:
        fail(session, batch.id, [{"file": None, "row": None, "field": None, "reason": error}])


def _locked(session: Session, batch_id: str) -> Batch:
    batch = repository.by_id(session, batch_id, for_update=True)
    if batch is None:
        raise BatchNotFound(batch_id)
    return batch


def _move(batch: Batch, to: BatchStatus, allowed: tuple[BatchStatus, ...]) -> None:
    if batch.status not in allowed:
        raise BatchStateConflict(
            batch.id, batch.status, f"only {' or '.join(map(repr, allowed))} can become {to!r}"
        )
    batch.status = to


def _require_loading(batch: Batch, wanted: str) -> None:
    if batch.status != BatchStatus.LOADING:
        raise BatchStateConflict(batch.id, batch.status, wanted)


def get(session: Session, org: str, batch_id: str, *, for_update: bool = False) -> Batch:
    """One of the organization's batches (BatchNotFound otherwise), locked when asked."""
    return repository.get(session, org, batch_id, for_update=for_update)
