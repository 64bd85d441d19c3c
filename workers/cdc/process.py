"""The processor: a tenant's staged events past its watermark, folded per entity and MERGEd
into its raw table, the new watermark committed in the same snapshot.

Under the tenant's lock (the raw dataset's commit lease) one run:
1. reads the watermark W from the raw table's snapshots and takes the staged events
   W < seq <= H (H: the staged watermark, at most `cdc_max_events_per_run` past W), pruned by
   the staging partition (tenant) and the files' `seq` bounds;
2. for each touched entity finds its base: its raw row when every new event sorts after the
   row's last applied (timestamp, seq); nothing when it never existed or was deleted before
   the new events; otherwise (a late event) it re-folds the entity from its whole staged
   history;
3. folds base + events in Spark (`workers/cdc/fold.py`), unions the new links into the
   identity clusters (SQL) and relabels every record of a cluster that changed;
4. MERGEs one row per entity (copy-on-write), the snapshot carrying `icebatch.cdc.watermark`
   = H. A crash before the commit leaves W, so the run is redone; after it, the next run
   starts at H: no event is lost or applied twice.
"""

from __future__ import annotations

import logging
import time
import uuid
import warnings
from datetime import UTC, datetime
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from sqlalchemy import select

from app import clock
from app.cdc import service
from app.config import get_settings
from app.db import session_scope
from app.errors import Conflict
from app.lake import cdc as lake
from app.lake.catalog import get_catalog
from app.lake.snapshots import BATCH_ID, OPERATION, REQUEST_ID
from app.maintenance import service as maintenance
from app.maintenance.schemas import CompactRequest
from app.models import CdcTenant, Dataset
from workers.cdc import clusters
from workers.cdc.fold import BASE, EVENT, GONE, INPUT_COLUMNS, folder, output_ddl
from workers.cdc.tenant_lock import tenant_lock
from workers.failpoints import failpoint
from workers.runtime import JobContext, PermanentJobError
from workers.spark import iceberg_java
from workers.spark.session import get_spark

log = logging.getLogger(__name__)


def quoted(identifier: str) -> str:
    catalog = get_settings().catalog_name
    return ".".join(f"`{part}`" for part in [catalog, *identifier.split(".")])


def _before(ts_a: Any, seq_a: Any, ts_b: Any, seq_b: Any) -> Any:
    return (ts_a < ts_b) | ((ts_a == ts_b) & (seq_a < seq_b))


def fold_input(
    spark: SparkSession, org: str, raw_name: str, low: int, high: int
) -> tuple[DataFrame, DataFrame, list[DataFrame]]:
    """(the fold's input rows, the new events, the frames cached for them: unpersist those
    when done) for events low < seq <= high. The tenant's staged history is scanned only when
    some entity needs it (absent from the raw table, or late)."""
    staging = spark.table(quoted(lake.STAGING)).where(F.col("tenant") == org)
    new = staging.where((F.col("seq") > low) & (F.col("seq") <= high)).select(
        "entity_id", "timestamp", "seq", "op", "record_type", "related_ids", "payload"
    )
    new = new.persist()
    cached = [new]
    first = new.groupBy("entity_id").agg(F.min(F.struct("timestamp", "seq")).alias("first"))
    raw = spark.table(raw_name).select(
        "entity_id",
        F.col("timestamp").alias("r_ts"),
        F.col("sequence").alias("r_seq"),
        "record_type",
        "related_ids",
        "document",
    )
    joined = first.join(raw, "entity_id", "left").persist()
    cached.append(joined)
    present = joined.where(F.col("r_seq").isNotNull())
    is_late = _before(F.col("first.timestamp"), F.col("first.seq"), F.col("r_ts"), F.col("r_seq"))
    late_present = present.where(is_late).select("entity_id")
    base_rows = present.where(~is_late).select(
        "entity_id",
        F.lit(BASE).alias("kind"),
        F.col("r_ts").alias("timestamp"),
        F.col("r_seq").alias("seq"),
        F.lit("PUT").alias("op"),
        "record_type",
        "related_ids",
        F.col("document").alias("payload"),
    )
    absent = joined.where(F.col("r_seq").isNull()).select("entity_id", "first")
    if absent.isEmpty():
        staging_before = staging.where(F.lit(False))
    else:
        staging_before = staging.where(F.col("seq") <= low)
    history = (
        staging_before.select("entity_id", "timestamp", "seq", "related_ids")
        .join(absent.select("entity_id"), "entity_id", "left_semi")
        .groupBy("entity_id")
        .agg(
            F.max(F.struct("timestamp", "seq")).alias("last"),
            F.array_distinct(
                F.flatten(
                    F.collect_list(F.coalesce("related_ids", F.array().cast("array<string>")))
                )
            ).alias("rel"),
        )
    )
    seen = absent.join(history, "entity_id")
    is_late_gone = _before(
        F.col("first.timestamp"), F.col("first.seq"), F.col("last.timestamp"), F.col("last.seq")
    )
    late_gone = seen.where(is_late_gone).select("entity_id")
    gone_rows = seen.where(~is_late_gone).select(
        "entity_id",
        F.lit(GONE).alias("kind"),
        F.lit(None).cast("timestamp").alias("timestamp"),
        F.lit(None).cast("bigint").alias("seq"),
        F.lit(None).cast("string").alias("op"),
        F.lit(None).cast("string").alias("record_type"),
        F.col("rel").alias("related_ids"),
        F.lit(None).cast("string").alias("payload"),
    )
    late = late_present.unionByName(late_gone).persist()
    cached.append(late)
    events = new.join(late, "entity_id", "left_anti")
    refold = (
        staging.where(F.col("seq") <= high if not late.isEmpty() else F.lit(False))
        .select("entity_id", "timestamp", "seq", "op", "record_type", "related_ids", "payload")
        .join(late, "entity_id", "left_semi")
    )
    as_events = [
        df.select(
            "entity_id",
            F.lit(EVENT).alias("kind"),
            "timestamp",
            "seq",
            "op",
            "record_type",
            "related_ids",
            "payload",
        )
        for df in (events, refold)
    ]
    rows = base_rows.unionByName(gone_rows).unionByName(as_events[0]).unionByName(as_events[1])
    return rows.select(*INPUT_COLUMNS), new, cached


def _commit_properties(spark: SparkSession, properties: dict[str, str]) -> Any:
    """Iceberg's per-thread commit properties (`CommitMetadata`), which Spark's writes add to
    their snapshot summary; py4j runs this thread's calls on one JVM thread."""
    jvm: Any = spark._jvm
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    cls = jvm.java.lang.Class.forName("org.apache.iceberg.spark.CommitMetadata", True, loader)
    field = cls.getDeclaredField("COMMIT_PROPERTIES")
    field.setAccessible(True)
    local = field.get(None)
    values = jvm.java.util.HashMap()
    for key, value in properties.items():
        values.put(key, value)
    local.set(values)
    return local


def merge(
    spark: SparkSession,
    raw_name: str,
    source: DataFrame,
    columns: list[str],
    properties: dict[str, str],
) -> None:
    view = f"cdc_source_{uuid.uuid4().hex}"
    source.createOrReplaceTempView(view)
    updates = ", ".join(f"t.`{c}` = s.`{c}`" for c in columns)
    names = ", ".join(f"`{c}`" for c in columns)
    values = ", ".join(f"s.`{c}`" for c in columns)
    statement = f"""
        MERGE INTO {raw_name} t USING {view} s ON t.entity_id = s.entity_id
        WHEN MATCHED AND s._action = 'delete' THEN DELETE
        WHEN MATCHED AND s._action = 'upsert' THEN UPDATE SET {updates}
        WHEN MATCHED AND s._action = 'relabel' AND t.cluster_id <> s.cluster_id
            THEN UPDATE SET t.cluster_id = s.cluster_id, t._batch_id = s._batch_id
        WHEN NOT MATCHED AND s._action = 'upsert' THEN INSERT ({names}) VALUES ({values})
    """
    local = _commit_properties(spark, properties)
    try:
        spark.sql(statement)
    finally:
        local.remove()
        spark.catalog.dropTempView(view)


class Laps:
    """Seconds per step of a run, for the log and the job's result."""

    def __init__(self) -> None:
        self.took: dict[str, float] = {}
        self.mark = time.monotonic()

    def __call__(self, step: str) -> None:
        now = time.monotonic()
        self.took[step] = round(now - self.mark, 2)
        self.mark = now


def process(ctx: JobContext) -> dict[str, Any]:
    org = ctx.org
    lap = Laps()
    settings = get_settings()
    with session_scope() as session:
        tenant = session.get(CdcTenant, org)
        dataset = (
            session.get(Dataset, tenant.raw_dataset_id)
            if tenant and tenant.raw_dataset_id
            else None
        )
        if tenant is None or dataset is None:
            raise PermanentJobError(f"organization {org} has no CDC raw table")
        config = service.config_of(tenant)
        dataset_id, identifier = dataset.id, dataset.table_identifier
        staged_through = tenant.staged_seq
    ctx.set_stage("lock", 0.02)
    with tenant_lock(ctx, dataset_id, wait_seconds=300) as check:
        catalog = get_catalog()
        table = catalog.load_table(identifier)
        low, max_ts = lake.raw_watermark(table)
        staging = lake.ensure_staging(catalog)
        committed = lake.staged_seq(staging, org) or 0
        high = min(max(staged_through, committed), low + settings.cdc_max_events_per_run)
        if high <= low:
            _mirror(org, low, max_ts)
            return {"applied": 0, "watermark": low}
        lap("lock")
        ctx.set_stage("fold", 0.1)
        spark = get_spark()
        raw_name = quoted(identifier)
        rows, new, cached = fold_input(spark, org, raw_name, low, high)
        lap("plan")
        try:
            with warnings.catch_warnings():
                # PySpark 3.5's Arrow helpers use distutils' LooseVersion; harmless here
                warnings.simplefilter("ignore", DeprecationWarning)
                result = _apply(
                    ctx, spark, org, raw_name, rows, new, config, low, high, max_ts, check, lap
                )
        finally:
            for frame in cached:
                frame.unpersist()
    return result


def _apply(
    ctx: JobContext,
    spark: SparkSession,
    org: str,
    raw_name: str,
    rows: DataFrame,
    new: DataFrame,
    config: Any,
    low: int,
    high: int,
    max_ts: Any,
    check: Any,
    lap: Laps,
) -> dict[str, Any]:
    pushdown = [p.model_dump() for p in config.pushdown]
    partitions = max(2, spark.sparkContext.defaultParallelism)
    folded = (
        rows.repartition(partitions, "entity_id")
        .sortWithinPartitions("entity_id", "timestamp", "seq")
        .mapInArrow(folder(pushdown), output_ddl(pushdown))
        .where(F.col("_action") != "none")
        .persist()
    )
    try:
        stats = new.agg(
            F.count("*").alias("n"), F.max(F.unix_micros("timestamp")).alias("newest")
        ).first()
        assert stats is not None
        touched = [r.entity_id for r in folded.select("entity_id").collect()]
        pairs = [
            (r.entity_id, r.rid)
            for r in new.where(F.size("related_ids") > 0)
            .select("entity_id", F.explode("related_ids").alias("rid"))
            .distinct()
            .collect()
        ]
        lap("fold")
        ctx.set_stage("link", 0.5)
        with session_scope() as session:
            labels = clusters.link(session, org, pairs)
            relabel = clusters.members(session, org, labels)
            known = clusters.lookup(session, org, touched)
        known.update(relabel)
        batch_id = f"cdc-{ctx.job_id}-{high}"
        mapping = spark.createDataFrame(
            list(known.items()) or [("", "")], "entity_id string, cluster_id string"
        ).where(F.col("entity_id") != "")
        upserts = folded.join(mapping, "entity_id", "left").withColumn(
            "cluster_id", F.coalesce("cluster_id", "entity_id")
        )
        relabels = mapping.join(folded.select("entity_id"), "entity_id", "left_anti").select(
            "entity_id", F.lit("relabel").alias("_action"), "cluster_id"
        )
        source = upserts.unionByName(relabels, allowMissingColumns=True).withColumn(
            "_batch_id", F.lit(batch_id)
        )
        columns = [
            "entity_id",
            "record_type",
            "timestamp",
            "sequence",
            "related_ids",
            "cluster_id",
            *(p["name"] for p in pushdown),
            "document",
            "_batch_id",
        ]
        newest = datetime.fromtimestamp(stats["newest"] / 1e6, UTC) if stats["newest"] else None
        if max_ts is not None and (newest is None or max_ts > newest):
            newest = max_ts
        properties = {
            lake.WATERMARK: str(high),
            lake.MAX_TS: str(int(newest.timestamp() * 1_000_000)) if newest else "",
            OPERATION: lake.OPERATION,
            BATCH_ID: batch_id,
            REQUEST_ID: f"{ctx.request_id}:{ctx.job_id}:{high}",
        }
        properties = {k: v for k, v in properties.items() if v}
        lap("link")
        ctx.set_stage("merge", 0.6)
        check()
        ctx.check_lease()
        failpoint("cdc-process-before-commit")
        merge(spark, raw_name, source, columns, properties)
        lap("merge")
        identifier = raw_name.replace("`", "").split(".", 1)[1]
        if lake.raw_watermark(get_catalog().load_table(identifier))[0] != high:
            iceberg_java.commit_empty(spark, identifier, properties)  # the merge changed no row
        failpoint("cdc-process-after-commit")
        _mirror(org, high, newest)
        _compact_when_fragmented(ctx, get_catalog().load_table(identifier))
        lap("commit")
        log.info("cdc run of %s applied through %s: seconds %s", org, high, lap.took)
        return {
            "applied": int(stats["n"]),
            "entities": len(touched),
            "relabelled": len(relabel),
            "watermark": high,
            "seconds": lap.took,
        }
    finally:
        folded.unpersist()


def _mirror(org: str, seq: int, newest: Any) -> None:
    with session_scope() as session:
        tenant = session.scalar(select(CdcTenant).where(CdcTenant.org == org).with_for_update())
        if tenant is None:
            return
        if seq >= tenant.processed_seq:
            tenant.processed_seq = seq
            tenant.processed_max_ts = newest
        tenant.processed_at = clock.db_now(session)


def _compact_when_fragmented(ctx: JobContext, table: Any) -> None:
    """Queue a bin-pack compaction of the raw table when a partition holds more than
    `cdc_compact_files` data files. A copy-on-write merge rewrites the files of the entities it
    updates, but new entities land in new files: runs that mostly insert fragment it."""
    files = table.inspect.files().select(["partition"]).column("partition").to_pylist()
    per_partition: dict[str, int] = {}
    for partition in files:
        key = repr(sorted(partition.items())) if isinstance(partition, dict) else repr(partition)
        per_partition[key] = per_partition.get(key, 0) + 1
    most = max(per_partition.values(), default=0)
    if most <= get_settings().cdc_compact_files:
        return
    with session_scope() as session:
        dataset = session.get(Dataset, ctx.subject_id)
        if dataset is None:
            return
        try:
            job = maintenance.start_compaction(
                session, get_catalog(), dataset, CompactRequest(min_input_files=2)
            )
        except Conflict:
            return  # a rewrite of the raw table is already queued or running
        log.info(
            "raw table of %s: %s files in a partition; compaction job %s", ctx.org, most, job.id
        )
