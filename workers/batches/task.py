"""Ingest: promote a batch's staged files into its dataset as exactly one snapshot."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from pyiceberg.table import Table

from app.batches import repository as batches
from app.batches import service as batch_service
from app.config import get_settings
from app.errors import BatchNotFound
from app.jobs.kinds import TaskName
from app.jobs.results import IngestResult
from app.jobs.stages import Stage
from app.lake import pipeline, snapshots
from app.lake.catalog import get_catalog
from app.lake.pipeline import Committed, OperationKind, Summary
from app.lake.types import user_schema
from app.models import Dataset
from workers.celery_app import job_task
from workers.runtime import JobContext, PermanentJobError
from workers.spark.progress import tracked
from workers.uploads import small
from workers.uploads.inputs import StagedFile
from workers.uploads.outcome import IngestOutcome

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Batch:
    id: str
    format: str
    identifier: str
    files: list[StagedFile]


class Ingest:
    """`pipeline.Operation` of an ingest: one Spark append (its rows checked inside the write)
    with the batch's id in the snapshot summary. No commit lease: appends commute.

    A small batch (`ICEBATCH_SMALL_BATCH_BYTES`) is read and checked in Python instead and
    appended with PyIceberg (`workers.uploads.small`): the same rows, layout and outcomes,
    without a Spark job; input whose reading only Spark decides goes to Spark after all."""

    kind = OperationKind.INGEST

    def __init__(self, ctx: JobContext, batch: Batch) -> None:
        self.ctx, self.batch, self.request_id = ctx, batch, ctx.request_id
        self.spark: Any = None
        self.small: small.SmallRead | None = None
        self.written: list[str] = []  # the small path's data files, until they commit
        self.io: Any = None

    def plan(self, table: Table) -> Batch:
        self.ctx.set_stage(Stage.VALIDATING, 0.01)
        self.small = self._read_small(table)
        if self.small is None:
            from workers.spark.session import get_spark

            # the job's session from here to its commit (a JVM lost meanwhile fails this attempt)
            self.spark = get_spark()
        return self.batch

    def _read_small(self, table: Table) -> small.SmallRead | None:
        settings, batch = get_settings(), self.batch
        schema = user_schema(table.schema())
        limit = settings.small_batch_bytes
        if not small.eligible(batch.files, batch.format, schema, table.spec(), limit):
            return None
        try:
            return small.read_small(batch.files, batch.format, schema, settings.max_error_rows)
        except small.NeedsSpark as exc:
            log.info("batch %s goes to Spark: %s", batch.id, exc)
            return None

    def summary(self, plan: Batch) -> Summary:
        return Summary(self.kind, self.request_id, batch_id=plan.id)

    def commit(self, table: Table, plan: Batch, summary: Summary) -> Committed | None:
        from workers.batches.spark_job import ingest

        def before_commit() -> None:
            # the lease check's beat records `writing` at once, not the next heartbeat: a batch
            # whose rows are rejected while writing ends at `writing` on either path
            self.ctx.stage = Stage.WRITING
            self.ctx.check_lease()

        if self.small is not None:
            return self._commit_small(table, plan, summary, self.small, before_commit)
        spark = self.spark
        with tracked(self.ctx, spark, f"ingest batch {plan.id}") as progress:
            outcome = ingest(
                spark,
                table=f"{get_settings().catalog_name}.{plan.identifier}",
                schema=user_schema(table.schema()),
                files=plan.files,
                fmt=plan.format,
                batch_id=plan.id,
                snapshot_properties=summary.properties(),
                progress=progress,
                before_commit=before_commit,
                max_errors=get_settings().max_error_rows,
            )
        if outcome.errors:
            self._reject(plan, outcome)
        self.ctx.set_stage(Stage.COMMITTED, 0.98)
        return None  # Spark's append says no snapshot: the pipeline finds it by request id

    def _commit_small(
        self,
        table: Table,
        plan: Batch,
        summary: Summary,
        read: small.SmallRead,
        before_commit: Callable[[], None],
    ) -> Committed:
        """The small path's write, at the points Spark's has them: file-level errors before
        the lease check, bad rows after it (Spark finds them while writing)."""
        if read.file_level:
            self._reject(plan, read.outcome)
        before_commit()
        if read.rows is None:
            self._reject(plan, read.outcome)
        assert read.rows is not None
        files = small.data_files(table, read.rows, plan.id)
        self.io, self.written = table.io, [f.file_path for f in files]
        snapshot = small.append(table, files, summary.properties())
        self.ctx.set_stage(Stage.COMMITTED, 0.98)
        return Committed.of(snapshot)

    def _reject(self, plan: Batch, outcome: IngestOutcome) -> NoReturn:
        with self.ctx.fenced() as session:
            batch_service.fail(session, plan.id, outcome.errors, outcome.row_count)
        raise PermanentJobError(
            f"batch {plan.id} has invalid input; see the batch's errors",
            {"errors": len(outcome.errors)},
        )

    def discard(self, plan: Batch) -> None:
        """The small path's written files; nothing of Spark's (Spark removes a failed append's
        files). The staged files serve a retry."""
        for path in self.written:
            self.io.delete(path)
        self.written = []

    def record(self, committed: Committed, plan: Batch | None) -> IngestResult:
        assert committed.snapshot is not None
        rows = snapshots.added_records(committed.snapshot)
        with self.ctx.fenced() as session:
            batch_service.succeed(
                session, self.batch.id, snapshot=committed.snapshot, row_count=rows
            )
        shutil.rmtree(get_settings().staging_dir / self.batch.id, ignore_errors=True)
        return IngestResult(snapshot_id=committed.snapshot_id, row_count=rows)

    def nothing(self) -> IngestResult:
        raise AssertionError("an ingest always has its batch to append")


def _load(identifier: str) -> Table:
    return get_catalog().load_table(identifier)


def ingest_batch(ctx: JobContext) -> IngestResult:
    with ctx.fenced() as session:
        try:
            batch = batch_service.start_processing(session, ctx.subject_id or "")
        except BatchNotFound as exc:
            raise PermanentJobError(str(exc)) from exc
        dataset = session.get(Dataset, batch.dataset_id)
        assert dataset is not None
        files = [StagedFile(f.name, Path(f.path)) for f in batches.files(session, batch.id)]
        work = Batch(batch.id, batch.format, dataset.table_identifier, files)
    return pipeline.run(
        Ingest(ctx, work),
        pipeline.Tables(lambda: _load(work.identifier), reuse_planned=True),
        job=ctx,
        budget=pipeline.Budget(replans=1, attempts=1),
    )


ingest_task = job_task(TaskName.INGEST, ingest_batch)
