"""The processor: a tenant's staged events past its watermark, folded per entity and MERGEd
into its raw table, the new watermark committed in the same snapshot.

Under the tenant's lock (the raw dataset's commit lease) one run:
1. reads the watermark W from the raw table's snapshots and takes the staged events
   W < seq <= H (H: the staged watermark, at most `cdc_max_events_per_run` past W), pruned by
   the staging partition (tenant) and the files' `seq` bounds;
2. finds each touched entity's base (`workers/cdc/inputs.py`): its raw row when every new
   event sorts after the row's last applied (timestamp, seq); nothing when it never existed or
   was deleted before the new events (`cdc_deletions`); otherwise (a late event) it re-folds
   the entity from its whole staged history;
3. unions the new links into the identity clusters (SQL), folds base + events in Spark
   (`workers/cdc/fold.py`) into the MERGE's source, materialized, with a `relabel` row for
   every other record of a cluster that changed, and records the entities it deletes;
4. MERGEs one row per entity (copy-on-write), the snapshot carrying `icebatch.cdc.watermark`
   = H. A crash before the commit leaves W, so the run is redone; after it, the next run
   starts at H: no event is lost or applied twice.

The MERGE statement and a run's Spark settings are `workers/cdc/merge.py`'s; what follows a
commit (the processed mirror, the compaction trigger), `workers/cdc/upkeep.py`'s.
"""

from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyiceberg.table import Table
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from app.cdc import repository, service
from app.config import get_settings
from app.db import session_scope
from app.jobs.results import CdcProcessResult
from app.jobs.stages import Stage
from app.lake import cdc as lake
from app.lake import pipeline
from app.lake.catalog import get_catalog
from app.lake.pipeline import Committed, OperationKind, Summary
from app.models import CdcTenant, Dataset
from workers.cdc import clusters, upkeep
from workers.cdc.fold import folder, output_ddl
from workers.cdc.inputs import RunInput, run_input
from workers.cdc.merge import RUN_CONF, merge, quoted, sql_conf
from workers.cdc.tenant_lock import tenant_lock
from workers.runtime import JobContext, PermanentJobError
from workers.spark import iceberg_java
from workers.spark.session import get_spark, small_frame

log = logging.getLogger(__name__)


class Laps:
    """Seconds per step of a run, for the log and the job's result."""

    def __init__(self) -> None:
        self.took: dict[str, float] = {}
        self.mark = time.monotonic()

    def __call__(self, step: str) -> None:
        now = time.monotonic()
        self.took[step] = round(now - self.mark, 2)
        self.mark = now


def process(ctx: JobContext) -> CdcProcessResult:
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
    ctx.set_stage(Stage.LOCK, 0.02)
    with tenant_lock(ctx, dataset_id, wait_seconds=300) as token:
        catalog = get_catalog()
        table = catalog.load_table(identifier)
        low, max_ts = lake.raw_watermark(table)
        files = upkeep.data_files(table)
        staging = lake.ensure_staging(catalog)
        committed = lake.staged_seq(staging, org) or 0
        high = min(max(staged_through, committed), low + settings.cdc_max_events_per_run)
        if high <= low:
            upkeep.mirror(org, low, max_ts)
            return CdcProcessResult(applied=0, watermark=low)
        lap("lock")
        ctx.set_stage(Stage.PLAN, 0.1)
        spark = get_spark()
        raw_name = quoted(identifier)
        with warnings.catch_warnings(), sql_conf(spark, RUN_CONF):
            # PySpark 3.5's Arrow helpers use distutils' LooseVersion; harmless here
            warnings.simplefilter("ignore", DeprecationWarning)
            run = run_input(spark, org, quoted(lake.STAGING), raw_name, low, high)
            info = RunInfo(org, dataset_id, identifier, raw_name, config, high, max_ts, files, lap)
            operation = CdcMerge(ctx, spark, run, info)
            try:
                lap("plan")
                return pipeline.run(
                    operation,
                    pipeline.Tables(lambda: catalog.load_table(identifier), reuse_planned=True),
                    job=ctx,
                    lease=pipeline.Lease(dataset_id, held=token),
                    budget=pipeline.Budget(replans=1, attempts=1),
                )
            finally:
                if operation.source is not None:
                    operation.source.unpersist()  # the checkpoint's blocks
                run.release()


def _source(
    spark: SparkSession,
    run: RunInput,
    pushdown: list[dict[str, Any]],
    clusters_of: dict[str, str],
    relabel: dict[str, str],
    batch_id: str,
) -> DataFrame:
    """The MERGE's source, materialized: one row per touched entity (`upsert` or `delete`) and
    one `relabel` per other member of a cluster this run's links changed."""
    partitions = max(2, spark.sparkContext.defaultParallelism)
    folded = (
        run.rows.repartition(partitions, "entity_id")
        .sortWithinPartitions("entity_id", "timestamp", "seq")
        .mapInArrow(folder(pushdown), output_ddl(pushdown))
        .where(F.col("_action") != "none")
    )
    # only what differs from a base row's cluster (or from the entity itself) is shipped
    changed = {e: c for e, c in clusters_of.items() if c != e}
    changed.update(relabel)
    upserts = (
        folded.join(F.broadcast(_clusters_frame(spark, changed)), "entity_id", "left")
        .withColumn("cluster_id", F.coalesce("cluster", "cluster_id", "entity_id"))
        .drop("cluster")
    )
    # the other members of a changed cluster (not `folded`: that would fold a second time)
    relabels = (
        _clusters_frame(spark, relabel)
        .join(F.broadcast(run.touched), "entity_id", "left_anti")
        .select(
            "entity_id", F.lit("relabel").alias("_action"), F.col("cluster").alias("cluster_id")
        )
    )
    source = upserts.unionByName(relabels, allowMissingColumns=True).withColumn(
        "_batch_id", F.lit(batch_id)
    )
    # materialized with its lineage cut: the MERGE reads it twice (the files to rewrite, then
    # the rows) and plans a short plan
    return source.localCheckpoint(eager=True)


def _clusters_frame(spark: SparkSession, clusters_of: dict[str, str]) -> DataFrame:
    return small_frame(
        spark,
        pa.table(
            {"entity_id": list(clusters_of), "cluster": list(clusters_of.values())},
            schema=pa.schema([("entity_id", pa.string()), ("cluster", pa.string())]),
        ),
    )


@dataclass
class Merge:
    """What a run's MERGE needs: its source (materialized), columns and counts."""

    source: DataFrame
    columns: list[str]
    actions: dict[str, int]
    deleted: dict[str, repository.Deleted]
    newest: Any


class CdcMerge:
    """`pipeline.Operation` of a processor run: the staged events past the raw table's
    watermark, folded per entity, MERGEd in one snapshot that carries the new watermark."""

    kind = OperationKind.CDC_MERGE

    def __init__(self, ctx: JobContext, spark: SparkSession, run: RunInput, info: RunInfo) -> None:
        self.ctx, self.spark, self.run, self.info = ctx, spark, run, info
        self.request_id = f"{ctx.request_id}:{ctx.job_id}:{info.high}"
        self.batch_id = f"cdc-{ctx.job_id}-{info.high}"
        self.source: DataFrame | None = None

    def plan(self, table: Table) -> Merge:
        ctx, info, run = self.ctx, self.info, self.run
        pushdown = [p.model_dump() for p in info.config.pushdown]
        ctx.set_stage(Stage.LINK, 0.3)
        with session_scope() as session:
            labels = clusters.link(session, info.org, run.pairs)
            relabel = repository.members(session, info.org, labels)
            clusters_of = repository.clusters_of(session, info.org, run.unknown_clusters)
        info.lap("link")
        ctx.set_stage(Stage.FOLD, 0.4)
        source = self.source = _source(
            self.spark, run, pushdown, clusters_of, relabel, self.batch_id
        )
        actions = {
            r["_action"]: int(r["count"]) for r in source.groupBy("_action").count().collect()
        }
        deleted = {
            r.entity_id: repository.Deleted(r.ts, r.sequence, list(r.related_ids or []))
            for r in source.where(F.col("_action") == "delete")
            .select("entity_id", F.unix_micros("timestamp").alias("ts"), "sequence", "related_ids")
            .collect()
        }
        with session_scope() as session:  # before the commit: see CdcDeletion
            repository.record_deletions(session, info.org, deleted)
        info.lap("fold")
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
        newest = run.newest
        if info.max_ts is not None and (newest is None or info.max_ts > newest):
            newest = info.max_ts
        ctx.set_stage(Stage.MERGE, 0.6)
        return Merge(source, columns, actions, deleted, newest)

    def summary(self, plan: Merge) -> Summary:
        newest = plan.newest
        extra = {lake.WATERMARK: str(self.info.high)}
        if newest:
            extra[lake.MAX_TS] = str(int(newest.timestamp() * 1_000_000))
        return Summary(lake.OPERATION, self.request_id, self.batch_id, extra)

    def commit(self, table: Table, plan: Merge, summary: Summary) -> Committed | None:
        properties = summary.properties()
        touched = sum(plan.actions.values())
        group_filter = touched < 3 * self.info.files
        merge(self.spark, self.info.raw_name, plan.source, plan.columns, properties, group_filter)
        self.info.lap("merge")
        identifier = self.info.identifier
        if lake.raw_watermark(get_catalog().load_table(identifier))[0] != self.info.high:
            iceberg_java.commit_empty(self.spark, identifier, properties)  # no row changed
        return None  # neither says its snapshot: the pipeline finds it by request id

    def discard(self, plan: Merge) -> None:
        """Nothing: a failed MERGE's files are Spark's to remove; the source is released by
        the run."""

    def record(self, committed: Committed, plan: Merge | None) -> CdcProcessResult:
        info, run = self.info, self.run
        if plan is None:  # a retry whose MERGE landed
            upkeep.mirror(info.org, info.high, run.newest)
            return CdcProcessResult(applied=run.events, watermark=info.high)
        with session_scope() as session:  # re-created
            repository.forget_deletions(session, info.org, run.deleted - set(plan.deleted))
        upkeep.mirror(info.org, info.high, plan.newest)
        upkeep.compact_when_fragmented(self.ctx, get_catalog().load_table(info.identifier))
        info.lap("commit")
        log.info("cdc run of %s applied through %s: seconds %s", info.org, info.high, info.lap.took)
        actions = plan.actions
        return CdcProcessResult(
            applied=run.events,
            entities=actions.get("upsert", 0) + actions.get("delete", 0),
            upserted=actions.get("upsert", 0),
            deleted=actions.get("delete", 0),
            relabelled=actions.get("relabel", 0),
            refolded=run.classes.get("refolded", 0),
            watermark=info.high,
            seconds=info.lap.took,
        )

    def nothing(self) -> CdcProcessResult:
        raise AssertionError("a run past its watermark always has events to merge")


@dataclass
class RunInfo:
    org: str
    dataset_id: str
    identifier: str
    raw_name: str
    config: Any
    high: int
    max_ts: Any
    files: int
    lap: Laps
