"""Job progress from Spark's status tracker: completed tasks of the current phase's Spark jobs."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

from pyspark import SparkContext
from pyspark.sql import SparkSession


class SparkProgress:
    """Maps Spark task completion in a job group onto [start, end) of the job's progress."""

    def __init__(self, sc: SparkContext, group: str) -> None:
        self._sc = sc
        self._group = group
        self._lock = threading.Lock()
        self._seen: set[int] = set()
        self._start, self._end = 0.0, 0.0

    def phase(self, stage: str, start: float, end: float) -> None:
        """Begin the phase named `stage`, mapped onto [start, end) of the job's progress; Spark
        jobs already in the group no longer count."""
        with self._lock:
            self._seen = set(self._sc.statusTracker().getJobIdsForGroup(self._group))
            self._start, self._end = start, end

    def value(self) -> float:
        """The job's progress now: within the phase, the share of its Spark tasks completed."""
        with self._lock:
            tracker = self._sc.statusTracker()
            total = done = 0
            for job_id in tracker.getJobIdsForGroup(self._group):
                if job_id in self._seen:
                    continue
                job = tracker.getJobInfo(job_id)
                for stage_id in job.stageIds if job else []:
                    stage = tracker.getStageInfo(stage_id)
                    if stage is not None:
                        total += stage.numTasks
                        done += stage.numCompletedTasks
            fraction = done / total if total else 0.0
            return self._start + (self._end - self._start) * min(fraction, 0.99)


class Tracked(Protocol):
    """What `tracked` needs of a job (a `workers.runtime.JobContext`): its request id, which
    names its Spark job group, and the progress probe its heartbeat reads."""

    request_id: str
    progress_fn: Callable[[], float] | None


@contextmanager
def tracked(job: Tracked, spark: SparkSession, description: str) -> Iterator[SparkProgress]:
    """The job's Spark work, inside: its Spark jobs in the group named by its request id (the
    Spark UI shows `description`; a cancel interrupts them), its progress read from their tasks
    by the job's heartbeat. The probe is removed on the way out, whatever happened."""
    sc = spark.sparkContext
    sc.setJobGroup(job.request_id, description, True)
    progress = SparkProgress(sc, job.request_id)
    job.progress_fn = progress.value
    try:
        yield progress
    finally:
        job.progress_fn = None
