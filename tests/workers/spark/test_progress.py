"""`tracked`: a job's Spark work in its job group, its progress probe set inside and removed on
the way out (without a JVM: a stand-in SparkContext)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, cast

import pytest
from pyspark.sql import SparkSession

from workers.spark.progress import SparkProgress, tracked


@dataclass
class Job:
    request_id: str = "req-1"
    progress_fn: Callable[[], float] | None = None


@dataclass
class Context:
    groups: list[tuple[str, str, bool]] = field(default_factory=list)

    def setJobGroup(self, group: str, description: str, interrupt: bool) -> None:
        self.groups.append((group, description, interrupt))

    def statusTracker(self) -> Any:
        return SimpleNamespace(getJobIdsForGroup=lambda group: [])


def test_tracked_sets_the_group_and_the_probe_then_removes_it() -> None:
    job, sc = Job(), Context()
    spark = cast(SparkSession, SimpleNamespace(sparkContext=sc))
    with tracked(job, spark, "export appended of db.t") as progress:
        assert isinstance(progress, SparkProgress)
        assert sc.groups == [("req-1", "export appended of db.t", True)]
        assert job.progress_fn == progress.value
        progress.phase("exporting", 0.05, 0.98)
        assert job.progress_fn() == 0.05  # no Spark task yet
    assert job.progress_fn is None
    with pytest.raises(RuntimeError), tracked(job, spark, "again"):
        raise RuntimeError("the Spark job failed")
    assert job.progress_fn is None
