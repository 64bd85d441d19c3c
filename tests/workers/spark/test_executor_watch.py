"""A session left with no executor cancels its jobs with the reason (workers/spark/executors).

The shared test session runs `local[2]`: its tasks run in the driver, so it has no executor at
all, which is exactly what a cluster session whose hosts all died looks like to the watch."""

from __future__ import annotations

import time
from typing import Any

import pytest
from py4j.protocol import Py4JJavaError

from workers.spark.executors import ExecutorWatch, executor_count

pytestmark = pytest.mark.spark


def slow(x: int) -> int:
    time.sleep(60)
    return x


def test_a_job_with_no_executor_is_cancelled_with_the_reason(spark: Any) -> None:
    context = spark.sparkContext
    assert executor_count(context) == 0
    watch = ExecutorWatch(context, wait_seconds=2, every=0.2).start()
    started = time.monotonic()
    try:
        with pytest.raises(Py4JJavaError) as failed:
            context.parallelize([1, 2], 2).map(slow).collect()
    finally:
        watch.stop()
    waited = time.monotonic() - started
    assert "no Spark executor for 2 s" in str(failed.value)
    assert watch.cancelled >= 1
    assert 2 <= waited < 30, waited  # cancelled after the wait, not after the tasks' minute
    assert context.parallelize([1, 2, 3]).sum() == 6  # the session goes on
