"""PURGE DATA in Spark: the rewrite tasks run as Spark tasks, one per group of files."""

from __future__ import annotations

from pyspark.sql import SparkSession

from app.lake import rewrite_files
from app.lake.rewrite_files import RewriteOutput, RewriteTask


def run_tasks(spark: SparkSession, tasks: list[RewriteTask]) -> list[RewriteOutput]:
    """Run every task on the cluster; each writes at most one new file."""
    if not tasks:
        return []
    sc = spark.sparkContext
    slices = max(1, min(len(tasks), sc.defaultParallelism * 4))
    outputs: list[RewriteOutput] = sc.parallelize(tasks, slices).map(rewrite_files.run).collect()
    return sorted(outputs, key=lambda o: o.index)
