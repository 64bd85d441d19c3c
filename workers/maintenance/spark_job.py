"""PURGE DATA in Spark: the rewrite tasks run as Spark tasks, one per group of files."""

from __future__ import annotations

from pyspark.sql import SparkSession

from app.failpoints import failpoint
from app.lake import rewrite_files
from app.lake.rewrite_files import RewriteOutput, RewriteTask
from workers.spark.tasks import announce


def run_tasks(spark: SparkSession, tasks: list[RewriteTask]) -> list[RewriteOutput]:
    """Run every task on the cluster; each writes at most one new file. Files the plan drops
    unread need no Spark task: they are settled in the driver."""
    dropped = [rewrite_files.run(t) for t in tasks if t.drop]
    work = [t for t in tasks if not t.drop]
    outputs: list[RewriteOutput] = []
    if work:
        sc = spark.sparkContext
        slices = max(1, min(len(work), sc.defaultParallelism * 4))
        outputs = sc.parallelize(work, slices).map(run_one).collect()
    return sorted([*dropped, *outputs], key=lambda o: o.index)


def run_one(task: RewriteTask) -> RewriteOutput:
    """One rewrite task, on an executor."""
    announce("rewrite")
    failpoint("rewrite-task")  # on the executor: its environment comes from spark.executorEnv.*
    return rewrite_files.run(task)
