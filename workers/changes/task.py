"""Export jobs: the rows appended or deleted over a resolved range, as Parquet written by Spark."""

from __future__ import annotations

from app.config import get_settings
from app.db import session_scope
from app.jobs.kinds import ExportPayload, TaskName
from app.jobs.results import ExportResult
from app.lake import changes
from app.lake.catalog import get_catalog
from app.lake.changes_read import ReadContext
from app.models import Dataset
from app.privacy import reads as gdpr
from workers.celery_app import job_task
from workers.runtime import JobContext, PermanentJobError


def export_path(org: str, job_id: str) -> str:
    return f"{get_settings().warehouse.rstrip('/')}/exports/{org}/{job_id}"


def export(ctx: JobContext) -> ExportResult:
    from workers.changes.spark_job import export_changes
    from workers.spark.progress import tracked
    from workers.spark.session import get_spark

    payload = ctx.payload_as(ExportPayload)
    kind, first, last = payload.kind, payload.from_snapshot_id, payload.to_snapshot_id
    with session_scope() as session:
        dataset = session.get(Dataset, ctx.subject_id)
        if dataset is None:
            raise PermanentJobError(f"dataset {ctx.subject_id} no longer exists")
        identifier, identity = dataset.table_identifier, list(dataset.identity_columns)
        dataset_id = dataset.id
    ctx.set_stage("planning", 0.01)
    table = get_catalog().load_table(identifier)
    with session_scope() as session:
        erased = gdpr.in_force(session, dataset_id, table)
    ends = []
    for snapshot_id in (first, last):
        snapshot = None if snapshot_id is None else table.snapshot_by_id(int(snapshot_id))
        if snapshot_id is not None and snapshot is None:
            raise PermanentJobError(
                f"snapshot {snapshot_id} was expired before the export ran; export again"
            )
        ends.append(snapshot)
    try:
        rng = changes.snapshot_range(table, ends[0], ends[1])
    except (changes.MissingSnapshot, changes.NotAncestor) as exc:
        raise PermanentJobError(f"the range can no longer be read: {exc}") from None
    tasks = changes.plan_changes(table, rng, kind, erased)
    spark = get_spark()
    with tracked(ctx, spark, f"export {kind} of {identifier}") as progress:
        progress.phase("exporting", 0.05, 0.98)
        ctx.set_stage("exporting", 0.05)
        done = export_changes(
            spark,
            context=ReadContext.of(table, identity),
            tasks=tasks,
            path=export_path(ctx.org, ctx.job_id),
        )
    ctx.set_stage("written", 0.99)
    return ExportResult(
        path=done.path,
        rows=done.rows,
        files=done.files,
        kind=kind,
        from_snapshot_id=first,
        to_snapshot_id=last,
        data_files_read=len(tasks),
    )


export_task = job_task(TaskName.EXPORT, export)
