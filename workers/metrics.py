"""What only a worker sees: job durations and queue waits (the waits for a dataset's commit
lease are `app.lake.lease`'s).

They live in the worker process (prometheus_client's default registry, with the process
gauges) and are served on the worker's own port, `ICEBATCH_WORKER_METRICS_PORT` (off when 0).
Labels are bounded: job kinds (`JobKind`), outcomes and lease users are fixed sets.
"""

from __future__ import annotations

from prometheus_client import Histogram, start_http_server

JOB_BUCKETS = (0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600)

JOB_DURATION = Histogram(
    "icebatch_job_duration_seconds",
    "Time a worker spent on one attempt of a job, by kind and outcome "
    "(succeeded, failed, retried, lease_lost, carried: left to a group commit)",
    ["kind", "outcome"],
    buckets=JOB_BUCKETS,
)
QUEUE_WAIT = Histogram(
    "icebatch_job_queue_wait_seconds",
    "Time from a job's creation to its first claim by a worker, by kind",
    ["kind"],
    buckets=JOB_BUCKETS,
)


def serve(port: int) -> None:
    """Serve this process's metrics on `port` (a daemon thread)."""
    start_http_server(port)
