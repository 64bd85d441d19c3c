"""The processor's Spark side: its MERGE into a tenant's raw table, in one snapshot that carries
the run's commit properties (the new watermark), and the session settings of a run."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from app.config import get_settings

GROUP_FILTER = "spark.sql.optimizer.runtime.rowLevelOperationGroupFilter.enabled"
# Each run plans new queries (its bounds and batch id are literals in the generated code), so
# whole-stage code generation compiles fresh classes that the JIT compiles again every run:
# without it a 100k-event run took 11 % less CPU (bench/RESULTS.md, CDC)
RUN_CONF = {"spark.sql.codegen.wholeStage": "false"}


def quoted(identifier: str) -> str:
    catalog = get_settings().catalog_name
    return ".".join(f"`{part}`" for part in [catalog, *identifier.split(".")])


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
    group_filter: bool = True,
) -> None:
    """MERGE the source into the raw table in one snapshot carrying `properties`.

    `group_filter` off skips Spark's first pass that finds the files a copy-on-write MERGE must
    rewrite (a join of the whole table with the source): with a few times more touched
    entities than data files, every file holds one of them anyway."""
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
    spark.conf.set(GROUP_FILTER, str(group_filter).lower())
    try:
        spark.sql(statement)
    finally:
        spark.conf.unset(GROUP_FILTER)
        local.remove()
        spark.catalog.dropTempView(view)


@contextmanager
def sql_conf(spark: SparkSession, conf: dict[str, str]) -> Iterator[None]:
    """Session SQL settings for the length of a block (a worker runs one job at a time)."""
    before: dict[str, str | None] = {key: spark.conf.get(key, None) for key in conf}
    for key, value in conf.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, old in before.items():
            if old is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, old)
