"""`bench.cdc`'s merge step (its phase 4): with the workers stopped, more events for one tenant
are staged and processed in this process, timed after a warm-up run; then the raw table is set
back to the snapshot before that run and a plain Spark `MERGE INTO` of the same folded rows is
timed on it, and the two results are compared row for row."""

from __future__ import annotations

import argparse
import os
import time
import warnings
from datetime import UTC, datetime, timedelta

from bench.cdc_tenants import Tenant


def merge_step(args: argparse.Namespace, env: dict[str, str], tenant: Tenant) -> None:
    body_count = args.merge_events
    base = datetime.now(UTC) - timedelta(minutes=30)
    lines = []
    for i in range(body_count):
        op = tenant.rng.choices(("PUT", "PATCH", "DELETE"), (30, 60, 10))[0]
        at = base + timedelta(microseconds=i)
        lines.append(tenant.event(op, tenant.rng.randrange(tenant.entities), at, i))
    warm = [
        tenant.event("PATCH", tenant.rng.randrange(tenant.entities), base, i) for i in range(5000)
    ]

    os.environ.update({k: v for k, v in env.items() if k.startswith("ICEBATCH_")})
    warnings.simplefilter("ignore", DeprecationWarning)
    from pyspark.sql import functions as F
    from sqlalchemy import select

    from app.config import get_settings
    from app.db import session_scope
    from app.jobs.kinds import JobKind
    from app.models import CdcTenant, Dataset, Job, JobState
    from workers.cdc import task as cdc_task  # noqa: F401 - registers the CDC tasks
    from workers.cdc.merge import quoted
    from workers.celery_app import celery
    from workers.spark.session import get_spark

    assert tenant.client is not None

    def run_job(job_id: str) -> float:
        with session_scope() as session:
            task_name = session.get(Job, job_id).task_name  # type: ignore[union-attr]
        started = time.monotonic()
        celery.tasks[task_name](job_id)
        with session_scope() as session:
            state = session.get(Job, job_id).state  # type: ignore[union-attr]
        assert state == JobState.SUCCEEDED, state
        return time.monotonic() - started

    def force() -> list[str]:
        """Stage what was posted (run here); the processor jobs it queued, not yet run."""
        forced = tenant.client.post("/v1/cdc/process").json()  # type: ignore[union-attr]
        if forced["stage_job_id"]:
            run_job(forced["stage_job_id"])
        with session_scope() as session:
            return list(
                session.scalars(
                    select(Job.id).where(
                        Job.org == tenant.org,
                        Job.kind == JobKind.CDC_PROCESS,
                        Job.state == JobState.QUEUED,
                    )
                ).all()
            )

    # warm-up: this process's first run pays the JVM's start and JIT; the timed one must not
    for job_id in force():
        run_job(job_id)
    tenant.post("\n".join(warm).encode())
    for job_id in force():
        run_job(job_id)
    for i in range(0, body_count, args.chunk):
        tenant.post("\n".join(lines[i : i + args.chunk]).encode())
    queued = force()
    with session_scope() as session:
        t = session.get(CdcTenant, tenant.org)
        assert t is not None
        assert t.raw_dataset_id is not None
        identifier = session.get(Dataset, t.raw_dataset_id).table_identifier  # type: ignore[union-attr]
        low, high = t.processed_seq, t.staged_seq
    spark = get_spark()
    raw = quoted(identifier)
    newest = spark.sql(f"SELECT snapshot_id FROM {raw}.snapshots ORDER BY committed_at DESC")
    before_id = newest.first()["snapshot_id"]  # type: ignore[index]
    # materialized apart from the table: the MERGE below would invalidate a cached read of it
    before = spark.table(raw).drop("_batch_id").localCheckpoint()  # also warms the session
    processor_s = sum(run_job(job_id) for job_id in queued)
    processed = spark.table(raw).drop("_batch_id").localCheckpoint()
    after_id = spark.sql(f"SELECT snapshot_id FROM {raw}.snapshots ORDER BY committed_at DESC")
    after_id = after_id.first()["snapshot_id"]  # type: ignore[index]
    with session_scope() as session:
        results = [session.get(Job, job_id).result for job_id in queued]  # type: ignore[union-attr]

    # the processor's net effect, as one row per entity: what a plain MERGE INTO is given
    upserts = processed.exceptAll(before).withColumn("_action", F.lit("u"))
    deletes = before.select("entity_id").join(processed, "entity_id", "left_anti")
    deletes = deletes.withColumn("_action", F.lit("d"))
    source = upserts.unionByName(deletes, allowMissingColumns=True).withColumn(
        "_batch_id", F.lit("plain")
    )
    source = source.localCheckpoint()  # the pre-folded rows, materialized before the timing
    rows, gone = source.where("_action = 'u'").count(), source.where("_action = 'd'").count()
    catalog = get_settings().catalog_name
    name = identifier
    spark.sql(f"CALL `{catalog}`.system.set_current_snapshot('{name}', {before_id})")
    columns = spark.table(raw).columns
    started = time.monotonic()
    source.createOrReplaceTempView("plain_source")
    sets = ", ".join(f"t.`{c}` = s.`{c}`" for c in columns)
    names = ", ".join(f"`{c}`" for c in columns)
    values = ", ".join(f"s.`{c}`" for c in columns)
    spark.sql(
        f"""MERGE INTO {raw} t USING plain_source s ON t.entity_id = s.entity_id
        WHEN MATCHED AND s._action = 'd' THEN DELETE
        WHEN MATCHED THEN UPDATE SET {sets}
        WHEN NOT MATCHED AND s._action = 'u' THEN INSERT ({names}) VALUES ({values})"""
    )
    plain_s = time.monotonic() - started
    plain = spark.table(raw).drop("_batch_id")
    differ = plain.exceptAll(processed).count() + processed.exceptAll(plain).count()
    spark.sql(f"CALL `{catalog}`.system.set_current_snapshot('{name}', {after_id})")
    merge_s = sum(r["seconds"]["merge"] for r in results if r and "seconds" in r)
    print(
        f"merge step: {high - low:,} staged events of tenant {tenant.name} -> {rows:,} upserts "
        f"+ {gone:,} deletes; the processor's MERGE step {merge_s:.1f} s, a plain MERGE INTO of "
        f"the same folded rows {plain_s:.1f} s: ratio plain/processor {plain_s / merge_s:.2f} "
        f"(goal >= 0.7); rows differing between the two results: {differ}; the whole processor "
        f"run {processor_s:.1f} s (ratio {plain_s / processor_s:.2f}), its steps: "
        f"{[r.get('seconds') if r else None for r in results]}"
    )
