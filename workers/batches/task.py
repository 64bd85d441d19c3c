"""Ingest: promote a batch's staged files into its dataset as exactly one snapshot."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path
from typing import Any

from app.batches import repository as batches
from app.batches import service as batch_service
from app.config import get_settings
from app.errors import BatchNotFound
from app.jobs.kinds import TaskName
from app.lake import snapshots
from app.lake.catalog import get_catalog
from app.lake.types import user_schema
from app.models import Dataset
from workers.celery_app import job_task
from workers.failpoints import failpoint
from workers.runtime import JobContext, PermanentJobError
from workers.uploads.inputs import StagedFile

log = logging.getLogger(__name__)


def ingest_batch(ctx: JobContext) -> dict[str, Any]:
    from workers.batches.spark_job import ingest
    from workers.spark.progress import SparkProgress
    from workers.spark.session import get_spark

    with ctx.fenced() as session:
        try:
            batch = batch_service.start_processing(session, ctx.subject_id or "")
        except BatchNotFound as exc:
            raise PermanentJobError(str(exc)) from exc
        dataset = session.get(Dataset, batch.dataset_id)
        assert dataset is not None
        files = [StagedFile(f.name, Path(f.path)) for f in batches.files(session, batch.id)]
        batch_id, fmt, identifier = batch.id, batch.format, dataset.table_identifier
    table = get_catalog().load_table(identifier)
    done = snapshots.find_by_request_id(table, ctx.request_id)
    if done is None:
        spark = get_spark()
        spark.sparkContext.setJobGroup(ctx.request_id, f"ingest batch {batch_id}", True)
        progress = SparkProgress(spark.sparkContext, ctx.request_id)
        ctx.progress_fn = progress.value
        ctx.set_stage("validating", 0.01)
        failpoint("ingest-spark")  # the session is up and about to be used

        def before_commit() -> None:
            ctx.check_lease()
            ctx.stage = "writing"

        outcome = ingest(
            spark,
            table=f"{get_settings().catalog_name}.{identifier}",
            schema=user_schema(table.schema()),
            files=files,
            fmt=fmt,
            batch_id=batch_id,
            snapshot_properties={
                snapshots.OPERATION: "ingest",
                snapshots.BATCH_ID: batch_id,
                snapshots.REQUEST_ID: ctx.request_id,
            },
            progress=progress,
            before_commit=before_commit,
            max_errors=get_settings().max_error_rows,
        )
        ctx.progress_fn = None
        if outcome.errors:
            with ctx.fenced() as session:
                batch_service.fail(session, batch_id, outcome.errors, outcome.row_count)
            raise PermanentJobError(
                f"batch {batch_id} has invalid input; see the batch's errors",
                {"errors": len(outcome.errors)},
            )
        ctx.set_stage("committed", 0.98)
        table = get_catalog().load_table(identifier)
        done = snapshots.find_by_request_id(table, ctx.request_id)
        if done is None:
            raise RuntimeError("the append finished but its snapshot is not in the log")
    rows = snapshots.added_records(done)
    with ctx.fenced() as session:
        batch_service.succeed(session, batch_id, snapshot=done, row_count=rows)
    shutil.rmtree(get_settings().staging_dir / batch_id, ignore_errors=True)
    return {"snapshot_id": done.snapshot_id, "row_count": rows}


ingest_task = job_task(TaskName.INGEST, ingest_batch)
