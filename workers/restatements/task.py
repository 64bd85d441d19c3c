"""Restatement jobs (revert, replay, GDPR delete): prepare, then commit in the dataset's group."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from sqlalchemy import delete

from app import clock
from app.batches import repository as batches
from app.batches import service as batch_service
from app.config import get_settings
from app.db import session_scope
from app.jobs import service as jobs
from app.jobs import stages as job_stages
from app.jobs.kinds import TaskName
from app.jobs.results import RestatementResult
from app.jobs.stages import Stage
from app.lake import commit as lake_commit
from app.lake import lease, tables
from app.lake.catalog import get_catalog
from app.lake.types import user_schema
from app.models import (
    Dataset,
    Job,
    JobState,
    OutboxMessage,
    Restatement,
    RestatementKind,
    RestatementState,
)
from app.restatements import repository as restatements
from app.restatements import states
from workers.celery_app import job_task
from workers.restatements.committer import wait_until_committed
from workers.restatements.group import outcome
from workers.runtime import HandedOff, JobContext, PermanentJobError
from workers.uploads.inputs import StagedFile

log = logging.getLogger(__name__)
DRAINING_COMMITTER = "the committer draining the dataset"


def restate(ctx: JobContext) -> RestatementResult:
    with session_scope() as session:
        restatement = session.get(Restatement, ctx.subject_id)
        if restatement is None:
            raise PermanentJobError(f"restatement {ctx.subject_id} no longer exists")
        state, kind, dataset_id = restatement.state, restatement.kind, restatement.dataset_id
    if state == RestatementState.PENDING and kind == RestatementKind.REPLAY:
        carrier = stage_replay(ctx)
        if carrier is not None:
            _remove_inputs(ctx.subject_id or "")
            if carrier == ctx.job_id:
                raise HandedOff("staged; back in the queue to commit the replays queued before it")
            raise HandedOff(f"staged; its commit rides on {_carrier_name(carrier)}'s group commit")
    ctx.set_stage(Stage.COMMITTING, 0.9)
    wait_until_committed(ctx, ctx.subject_id or "", dataset_id)
    with session_scope() as session:
        restatement = session.get(Restatement, ctx.subject_id)
        assert restatement is not None
        result = RestatementResult(**outcome(restatement))
    if kind == RestatementKind.REPLAY:
        _remove_inputs(ctx.subject_id or "")
    return result


def _carrier_name(carrier: str) -> str:
    return carrier if carrier == DRAINING_COMMITTER else f"job {carrier}"


def _remove_inputs(restatement_id: str) -> None:
    """The replay batch's uploaded files, once its rows are staged (a retry of the job finds
    the restatement ready and does not read them again)."""
    with session_scope() as session:
        restatement = session.get(Restatement, restatement_id)
        batch_id = restatement.batch_id if restatement is not None else None
    if batch_id:
        shutil.rmtree(get_settings().staging_dir / batch_id, ignore_errors=True)


def stage_replay(ctx: JobContext) -> str | None:
    """Write the replay batch's rows as uncommitted files; the restatement becomes ready.

    In the same transaction, when a queued job of a ready restatement of the dataset has its
    message on its way (a carrier: `app.restatements.repository.carrier_job`, share-locked
    until this commits, so its worker cannot start draining without this restatement), or a
    restatement committer holds the dataset's lease (`app.lake.lease.draining`, share-locked:
    it drains this restatement, or passes it on once it lets go), this job goes back to the
    queue without a message, as a request's job does when a carrier takes it
    (`app.restatements.service._enqueue`): that group commit settles it, and this worker's slot
    is free for the next job instead of waiting for the commit lease. When neither is there but
    other replays of the dataset wait in the queue, this job becomes their carrier: back in the
    queue with a new message, behind them, so they stage and hand off to it, and its worker
    commits them all as one group. A burst's replays used to pass one by one through the slots
    (a group commit each, ~1 s). Returns the carrier's id (this job's own, or
    `DRAINING_COMMITTER`) then, else None (this job waits for its group commit itself)."""
    from workers.restatements.replay import stage, stage_small

    with ctx.fenced() as session:
        restatement = session.get(Restatement, ctx.subject_id)
        assert restatement is not None
        assert restatement.batch_id is not None
        batch = batch_service.start_processing(session, restatement.batch_id)
        dataset = session.get(Dataset, restatement.dataset_id)
        assert dataset is not None
        files = [StagedFile(f.name, Path(f.path)) for f in batches.files(session, batch.id)]
        batch_id, fmt, identifier = batch.id, batch.format, dataset.table_identifier
    table = tables.ensure_properties(get_catalog().load_table(identifier))
    settings = get_settings()
    ctx.set_stage(Stage.STAGING, 0.01)
    staged = stage_small(
        table,
        schema=user_schema(table.schema()),
        files=files,
        fmt=fmt,
        batch_id=batch_id,
        limit=settings.small_batch_bytes,
        max_errors=settings.max_error_rows,
    )
    if staged is None:
        from workers.spark.progress import SparkProgress
        from workers.spark.session import get_spark

        spark = get_spark()
        spark.sparkContext.setJobGroup(ctx.request_id, f"replay batch {batch_id}", True)
        progress = SparkProgress(spark.sparkContext, ctx.request_id)
        ctx.progress_fn = progress.value
        staged = stage(
            spark,
            catalog=settings.catalog_name,
            table=table,
            schema=user_schema(table.schema()),
            files=files,
            fmt=fmt,
            batch_id=batch_id,
            progress=progress,
            max_errors=settings.max_error_rows,
        )
        ctx.progress_fn = None
    if staged.errors:
        with ctx.fenced() as session:  # the batch fails when the job does (restatement release)
            batch_service.record_errors(session, batch_id, staged.errors, staged.row_count)
        raise PermanentJobError(
            f"batch {batch_id} has invalid input; see the batch's errors",
            {"errors": len(staged.errors)},
        )
    described = lake_commit.data_files(table, staged.paths)
    paths = [f.file_path for f in described if f.record_count > 0]
    rows = sum(f.record_count for f in described)
    with ctx.fenced() as session:
        restatement = session.get(Restatement, ctx.subject_id)
        assert restatement is not None
        restatement.data_files = paths
        restatement.result = {"row_count": rows, "staged_folder": staged.folder}
        states.move(restatement, states.READY)
        session.flush()  # SQLite: the write lock first, so the reads below stay true until commit
        dataset_id = restatement.dataset_id
        carrier = restatements.carrier_job(session, dataset_id)
        if carrier is None and lease.draining(session, dataset_id):
            carrier = DRAINING_COMMITTER
        last = carrier is None and restatements.replays_queued(session, dataset_id, restatement.id)
        if carrier is not None or last:
            job = session.get(Job, ctx.job_id)
            assert job is not None
            job.state, job.stage = JobState.QUEUED, Stage.COMMITTING
            job_stages.record(job, Stage.COMMITTING, clock.db_now(session))
            # its message was delivered (to this worker): a queued job with one is a carrier
            session.execute(delete(OutboxMessage).where(OutboxMessage.job_id == job.id))
            if last:  # the carrier of the replays queued before it: back of the queue
                jobs.add_outbox(session, job)
                carrier = job.id
    return carrier


restate_task = job_task(TaskName.RESTATE, restate)
