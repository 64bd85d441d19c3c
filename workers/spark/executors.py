"""A cluster with no executor left must fail the job, not hang it.

On a cluster, a Spark job whose executors are all gone (their hosts died, the master has no
free worker) waits for resources forever: Spark retries tasks on executors it has, it never
gives up for lack of any. The watch cancels every active job once the session has had no
executor for `spark_executor_wait_seconds`, with that reason in the job's error, so the
Icebatch job fails (and is retried by the job runner) instead of hanging silently. A host that
dies while others live is Spark's own business: its tasks run again on the others.
"""

from __future__ import annotations

import logging
import threading
import time

from py4j.protocol import Py4JError
from pyspark import SparkContext

log = logging.getLogger(__name__)


def executor_count(context: SparkContext) -> int:
    """The session's live executors (the driver's own entry left out)."""
    assert context._jsc is not None
    status = context._jsc.sc().getExecutorMemoryStatus()
    return max(int(status.size()) - 1, 0)


def reason(wait_seconds: float, master: str) -> str:
    return (
        f"no Spark executor for {wait_seconds:.0f} s (master {master}): every executor host is "
        f"gone or the cluster has no free cores; the job is cancelled, not left waiting"
    )


class ExecutorWatch:
    """A daemon thread cancelling the active jobs of a session left without executors."""

    def __init__(self, context: SparkContext, wait_seconds: float, every: float = 1.0) -> None:
        self.context = context
        self.wait_seconds = wait_seconds
        self.every = every
        self.cancelled = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="spark-executor-watch", daemon=True)

    def start(self) -> ExecutorWatch:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        since: float | None = None
        while not self._stop.wait(self.every):
            try:
                since = self._check(since)
            except (Py4JError, OSError, AttributeError):
                return  # the JVM is gone; session.get_spark starts a new one and a new watch

    def _check(self, since: float | None) -> float | None:
        jobs = self.context.statusTracker().getActiveJobsIds()
        if not jobs or executor_count(self.context) > 0:
            return None
        now = time.monotonic()
        if since is None:
            return now
        if now - since < self.wait_seconds:
            return since
        why = reason(self.wait_seconds, str(self.context.master))
        assert self.context._jsc is not None
        for job in jobs:
            log.error("cancelling Spark job %s: %s", job, why)
            self.context._jsc.sc().cancelJob(int(job), why)
            self.cancelled += 1
        return None
